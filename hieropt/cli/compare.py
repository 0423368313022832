"""``hieropt compare`` and ``hieropt report``: the exact optimum against the rules of thumb, as a table or as a
self-contained HTML report with figures. Registered in :mod:`hieropt.cli`; loading and error handling from
:mod:`hieropt.cli.common`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from .common import (
    CostOpt,
    InstanceArg,
    MaxTimeOpt,
    NetworkOpt,
    WorkloadOpt,
    check_output_folder,
    console,
    error_console,
    error_line,
    fail,
    load_instance_args,
    to_stdout,
    write_json,
)
from .options import BudgetOpt, TokensOpt

if TYPE_CHECKING:
    from ..spec import Instance
    from ..studies.compare import Comparison

ObjectiveOpt = Annotated[str | None, typer.Option(
    "--objective", help="performance (iteration time), performance_per_cost (time x cost) or min_cost (network "
    "cost meeting --max-time): what the gap is measured on and what the heuristics are placed for. Default: the "
    "instance's.")]
CommOpt = Annotated[Path | None, typer.Option("--communicator", help="LIBRA communicator YAML (parallel mapping).")]
ConstraintOpt = Annotated[list[str] | None, typer.Option(
    "--constraint", help="Linear design constraint on bw[d] (GB/s per NPU), e.g. 'sum(bw) == 500'; repeatable.")]


def _instance(instance: Path | None, network: Path | None, workload: Path | None, communicator: Path | None,
              cost: Path | None, constraint: list[str] | None, max_time: str | None,
              budget: str | None, tokens: str | None = None) -> Instance:
    from .numbers import parse_amount, parse_time_ns

    max_time_ns, budget_usd = parse_time_ns(max_time, "--max-time"), parse_amount(budget, "--budget")
    inst = load_instance_args(instance, network, workload, communicator, cost, constraint)
    run_tokens = parse_amount(tokens, "--tokens", "tokens")
    update = {k: v for k, v in (("max_iteration_time_ns", max_time_ns), ("max_network_cost_usd", budget_usd),
                                ("tokens", run_tokens)) if v is not None}
    return inst.model_copy(update=update) if update else inst


def _print_comparison(out: Console, comp: Comparison) -> None:
    from ..report import compare as rc
    from ..report.run import run_lines

    for line in rc.headline_lines(comp) + run_lines(comp.optimum.run):
        out.print(line, highlight=False, soft_wrap=True, markup=False)
    out.print(rc.comparison_rich_table(comp))
    out.print(rc.rich_table(rc.bandwidth_table(comp), "Bandwidth per dimension (GB/s per NPU)"))
    out.print("Where each heuristic loses (and how its vector was obtained):", highlight=False)
    for label, why, how in rc.explanation_table(comp)["rows"]:
        out.print(f"  {label}: {why} ({how})", highlight=False, soft_wrap=True, markup=False)


def compare_command(
    instance: InstanceArg = None,
    objective: ObjectiveOpt = None,
    max_time_ns: MaxTimeOpt = None,
    budget_usd: BudgetOpt = None,
    tokens: TokensOpt = None,
    network: NetworkOpt = None,
    workload: WorkloadOpt = None,
    communicator: CommOpt = None,
    cost: CostOpt = None,
    constraint: ConstraintOpt = None,
    json_out: Annotated[Path | None, typer.Option(
        "--json", help="Also write the comparison as JSON to FILE ('-' for stdout, then tables go to stderr).")] = None,
) -> None:
    """Compare the exact optimum with the rules of thumb: equal split, traffic-proportional, Kleinrock's square-root
    rule, projected gradient descent (with its iterations and gap), greedy water-filling and the instance's vendor
    ratios (heuristic_ratios). Every heuristic is made feasible for the same constraints; prints iteration time,
    cost, time x cost, the gap to the optimum, the bottleneck dimension and where each heuristic loses."""
    from ..errors import HieroptError

    err = error_console()
    out = err if to_stdout(json_out) else console()
    try:
        inst = _instance(instance, network, workload, communicator, cost, constraint, max_time_ns, budget_usd,
                         tokens)
        from ..studies.compare import compare  # loaded once the input is valid (a bad input is reported fast)

        comp = compare(inst, objective=objective)
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    from ..report import compare as rc

    if json_out is not None:  # the file first: a stdout its reader closes (| head) cannot keep it from being written
        write_json(json_out, rc.comparison_dict(comp))
    _print_comparison(out, comp)
    raise typer.Exit(0 if comp.optimum.success else 3)


def report_command(
    instance: InstanceArg = None,
    out_dir: Annotated[Path, typer.Option("-o", "--out", help="Directory for the PNG figures, report.html and "
                                          "report.json (created if missing).")] = Path("report"),
    objective: ObjectiveOpt = None,
    points: Annotated[int, typer.Option("--points", help="Budgets on the Pareto front (>= 2).")] = 30,
    max_time_ns: MaxTimeOpt = None,
    budget_usd: BudgetOpt = None,
    tokens: TokensOpt = None,
    network: NetworkOpt = None,
    workload: WorkloadOpt = None,
    communicator: CommOpt = None,
    cost: CostOpt = None,
    constraint: ConstraintOpt = None,
    committee: Annotated[bool, typer.Option(
        "--committee", help="Write the committee page instead (committee.html and committee.json): the "
        "recommendation first (the cheapest run with a [cluster], else the knee) with its NPUs, fabric, days, $ per "
        "run, MW and MFU, the alternatives side by side, and $ per run against days.")] = False,
) -> None:
    """Write a visual report of the exact optimum versus the heuristics: PNG figures (bandwidth per dimension,
    utilisation, gap, the exact Pareto front with every design as a point), one self-contained HTML page with the
    tables (the same numbers as `hieropt compare`) and report.json."""
    from ..errors import HieroptError, InputError

    err = error_console()
    out = console()
    try:
        check_output_folder(out_dir, "--out", "the report")  # before the comparison: an existing file is refused
        inst = _instance(instance, network, workload, communicator, cost, constraint, max_time_ns, budget_usd,
                         tokens)
        if committee:
            raise typer.Exit(_committee(out, inst, out_dir))
        from ..studies.compare import compare  # loaded once the input is valid (a bad input is reported fast)

        comp = compare(inst, objective=objective)
    except HieroptError as e:
        raise fail(err, e) from None
    from .. import api
    from ..report import html

    front, front_error = None, None
    try:
        front = api.pareto(comp.instance, points=points)
    except HieroptError as e:
        if isinstance(e, InputError):
            raise fail(err, e) from None
        front_error = str(e)
        error_line(err, f"no Pareto front: {e}", label="note:", style="yellow")
    data = html.write_report(comp, front, out_dir, front_error)  # the files first (see compare)
    _print_comparison(out, comp)
    for name in data["files"]:
        out.print(f"wrote {out_dir / name}", highlight=False)
    raise typer.Exit(0 if comp.optimum.success else 3)


def _committee(out: Console, inst: Instance, out_dir: Path) -> int:
    """``report --committee``: the committee page (:mod:`hieropt.report.committee`); its exit code."""
    from ..report.committee import write_committee
    from ..studies.committee import committee

    data = write_committee(committee(inst), out_dir)
    d = data["recommendation"]["display"]
    out.print(f"recommendation: {data['recommendation']['label']}: {d['npus']} NPUs, {d['fabric']}, {d['days']} "
              f"days, {d['run_cost']} per run, {d['power_mw']} MW, MFU {d['mfu']}", highlight=False, markup=False)
    for name in data["files"]:
        out.print(f"wrote {out_dir / name}", highlight=False)
    return 0

