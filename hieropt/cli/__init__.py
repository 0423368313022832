"""Command line: ``hieropt solve`` and ``hieropt evaluate`` (typer + rich). The only module that prints.

Exit codes: 0 certified optimum (or evaluation done); 1 a bug; 2 bad input or usage; 3 no certified answer
(infeasible, unbounded, limit reached, solver failure, failed verification).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .. import api
from ..errors import HieroptError, InputError
from ..report import text as report
from ..spec import Instance
from .compare import compare_command, report_command
from .explore import explore_command
from .provision import provision_command
from .workload import export_command, workload_app

UNITS = ("Units: bandwidth in GB/s per NPU per dimension (1 GB = 1e9 bytes, so 1 GB/s = 1 byte/ns); sizes in bytes; "
         "times in ns (ASTRA-sim 1.0 cycles at 1 GHz); cost in $ (cost models in $ per GB/s).")

app = typer.Typer(
    rich_markup_mode="markdown",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="hieropt: exact per-dimension bandwidth design of multi-dimensional hierarchical training networks "
    "(LIBRA's problem on Pyomo + HiGHS, with proven optimality gaps). " + UNITS + " Exit codes: 0 success, "
    "2 bad input, 3 infeasible / unbounded / not certified.",
)

InstanceArg = Annotated[Path | None, typer.Argument(help="Instance TOML file (or use the LIBRA flags).",
                                                    show_default=False)]
NetworkOpt = Annotated[Path | None, typer.Option("--network", help="LIBRA network YAML (instead of INSTANCE).")]
WorkloadOpt = Annotated[Path | None, typer.Option("--workload", help="ASTRA-sim 1.0 / LIBRA workload text.")]
CommOpt = Annotated[Path | None, typer.Option(
    "--communicator", help="LIBRA communicator YAML (parallel mapping); omitted: derived from the workload's "
    "ASTRA-sim header policy (model parallel on the lowest dimensions, data parallel on the rest).")]
CostOpt = Annotated[Path | None, typer.Option("--cost", help="LIBRA cost-model YAML ($ per GB/s).")]
ConstraintOpt = Annotated[list[str] | None, typer.Option(
    "--constraint", help="Linear design constraint on bw[d] (GB/s per NPU), e.g. 'sum(bw) == 500', "
    "'bw[0] >= bw[1]'; repeatable. With an INSTANCE, added to its constraints.")]
ObjectiveOpt = Annotated[str | None, typer.Option(
    "--objective", help="performance (minimum iteration time), performance_per_cost (minimum time x cost, global), "
    "or min_cost (cheapest network meeting --max-time-ns). Default: the instance's; performance with LIBRA flags.")]
MaxTimeOpt = Annotated[float | None, typer.Option(
    "--max-time-ns", help="Iteration-time target, ns (required by min_cost; a cap otherwise).")]
BudgetOpt = Annotated[float | None, typer.Option(
    "--budget-usd", help="Network-cost cap, $ (with performance: the fastest network within the budget).")]
JsonOpt = Annotated[Path | None, typer.Option("--json", help="Also write the full result as JSON to FILE "
                                              "('-' for stdout, then tables go to stderr).")]


def _load(instance: Path | None, network: Path | None, workload: Path | None, communicator: Path | None,
          cost: Path | None, constraint: list[str] | None) -> Instance:
    """The instance from an instance file or from LIBRA's files (objective performance; solve's flags override)."""
    libra = {"--network": network, "--workload": workload, "--communicator": communicator, "--cost": cost}
    given = [k for k, v in libra.items() if v is not None]
    if instance is not None:
        if given:
            raise InputError(given[0], None, "both an INSTANCE file and LIBRA flags were given",
                             "give either an instance file or --network, --workload, --communicator and --cost")
        inst = api.load_instance(instance)
        if constraint:
            from ..spec.constraint_text import parse_constraint

            extra = tuple(parse_constraint(t, inst.network.n_dims) for t in constraint)
            inst = inst.model_copy(update={"constraints": inst.constraints + extra})
        return inst
    missing = [k for k, v in libra.items() if v is None and k != "--communicator"]  # optional: header-derived
    if not given:
        raise InputError("command line", None, "no instance given",
                         "pass an instance TOML file, or --network, --workload, --communicator and --cost")
    if missing:
        raise InputError("command line", missing[0], "missing LIBRA flag",
                         "give all of --network, --workload and --cost, and --communicator unless the workload's "
                         f"header implies the mapping (missing: {', '.join(missing)})")
    return api.load_libra(network, workload, communicator, cost, constraint or [])


def _console() -> Console:
    """stdout console, at least 120 columns wide when not a terminal (files, pipes) so tables are not truncated."""
    c = Console()
    return c if c.is_terminal else Console(width=max(c.width, 120))


def _write_json(path: Path, data: dict) -> None:
    text = json.dumps(data, indent=2)
    if str(path) == "-":
        sys.stdout.write(text + "\n")
    else:
        path.write_text(text + "\n", encoding="utf-8")


def _fail(err: Console, e: HieroptError) -> typer.Exit:
    err.print(f"[bold red]error:[/] {e}", highlight=False, soft_wrap=True)
    return typer.Exit(e.exit_code)


@app.command()
def solve(
    instance: InstanceArg = None,
    network: NetworkOpt = None,
    workload: WorkloadOpt = None,
    communicator: CommOpt = None,
    cost: CostOpt = None,
    constraint: ConstraintOpt = None,
    objective: ObjectiveOpt = None,
    max_time_ns: MaxTimeOpt = None,
    budget_usd: BudgetOpt = None,
    json_out: JsonOpt = None,
    gap: Annotated[float | None, typer.Option(
        "--gap", help="Target relative optimality gap, in [5e-9, 1). Default 1e-8 (1e-7 for performance_per_cost).",
        show_default=False)] = None,
) -> None:
    """Find the optimal per-NPU bandwidth of every dimension, with a proven optimality gap.

    Objectives: the fastest network (performance), the most training per dollar (performance_per_cost), the
    cheapest network meeting a time target (min_cost --max-time-ns T), the fastest within a budget (performance
    --budget-usd X). Prints the bandwidth table, iteration time with its compute / communication split,
    per-dimension utilisation, network cost, the proven gap and the solve time. Exit 3 when the problem is
    infeasible (e.g. a time target below the fastest possible time) or unbounded.
    """
    err = Console(stderr=True)
    to_stdout = json_out is not None and str(json_out) == "-"
    out = err if to_stdout else _console()
    try:
        inst = _load(instance, network, workload, communicator, cost, constraint)
        sol = api.solve(inst, objective=objective, rel_gap=gap, max_iteration_time_ns=max_time_ns,
                        max_network_cost_usd=budget_usd)
    except HieroptError as e:
        raise _fail(err, e) from None
    for line in report.summary_lines(inst, sol):
        out.print(line, highlight=False, soft_wrap=True)
    out.print(report.dimension_table(inst, sol.breakdown, "Optimal per-dimension bandwidth"))
    out.print(report.time_table(sol.breakdown))
    if json_out is not None:
        _write_json(json_out, report.solution_dict(inst, sol))
    raise typer.Exit(0 if sol.success else 3)


@app.command()
def evaluate(
    instance: InstanceArg = None,
    bw: Annotated[str, typer.Option("--bw", help="Comma-separated GB/s per NPU, one per dimension, "
                                    "e.g. 250,125,75,50.")] = "",
    network: NetworkOpt = None,
    workload: WorkloadOpt = None,
    communicator: CommOpt = None,
    cost: CostOpt = None,
    constraint: ConstraintOpt = None,
    json_out: JsonOpt = None,
) -> None:
    """Evaluate a given bandwidth allocation: iteration time, breakdown, utilisation and cost (no solver)."""
    err = Console(stderr=True)
    to_stdout = json_out is not None and str(json_out) == "-"
    out = err if to_stdout else _console()
    try:
        inst = _load(instance, network, workload, communicator, cost, constraint)
        values = _parse_bw(bw, inst.network.n_dims)
        bd = api.evaluate(inst, values)
    except HieroptError as e:
        raise _fail(err, e) from None
    for line in report.evaluation_lines(inst, bd):
        out.print(line, highlight=False, soft_wrap=True)
    out.print(report.dimension_table(inst, bd, "Given per-dimension bandwidth"))
    out.print(report.time_table(bd))
    if json_out is not None:
        _write_json(json_out, {"breakdown": report.breakdown_dict(bd), "instance": report.instance_dict(inst)})


@app.command()
def pareto(
    instance: InstanceArg = None,
    points: Annotated[int, typer.Option("--points", help="Number of budgets on the front (>= 2).")] = 50,
    csv_out: Annotated[Path | None, typer.Option(
        "--csv", help="Write the points as CSV to FILE ('-' for stdout).")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Draw the front to FILE.png (matplotlib).")] = None,
    network: NetworkOpt = None,
    workload: WorkloadOpt = None,
    communicator: CommOpt = None,
    cost: CostOpt = None,
    constraint: ConstraintOpt = None,
    json_out: JsonOpt = None,
) -> None:
    """The exact time-cost Pareto front: from the cheapest feasible network to the fastest, each point the fastest
    network within its budget (proven to 1e-8), with the performance and performance-per-cost optima marked."""
    err = Console(stderr=True)
    to_stdout = any(f is not None and str(f) == "-" for f in (json_out, csv_out))
    out = err if to_stdout else _console()
    try:
        if plot is not None and plot.suffix.lower() not in (".png", ".svg", ".pdf"):
            raise InputError("--plot", None, f"cannot draw to '{plot.name}'", "name a .png, .svg or .pdf file")
        inst = _load(instance, network, workload, communicator, cost, constraint)
        front = api.pareto(inst, points=points)
    except HieroptError as e:
        raise _fail(err, e) from None
    out.print(report.front_table(inst, front))
    for line in report.front_lines(front):
        out.print(line, highlight=False, soft_wrap=True)
    if csv_out is not None:
        if str(csv_out) == "-":
            sys.stdout.write(report.front_csv(inst, front))
        else:
            csv_out.write_text(report.front_csv(inst, front), encoding="utf-8")
            out.print(f"wrote {csv_out}", highlight=False)
    if plot is not None:
        report.plot_front(inst, front, plot)
        out.print(f"wrote {plot}", highlight=False)
    if json_out is not None:
        _write_json(json_out, report.front_dict(inst, front))


def _parse_bw(text: str, n_dims: int) -> list[float]:
    if not text.strip():
        raise InputError("--bw", None, "no bandwidths given", f"give {n_dims} comma-separated GB/s values")
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        raise InputError("--bw", None, f"'{text}' is not a comma-separated list of numbers",
                         "write e.g. --bw 250,125,75,50") from None
    if len(values) != n_dims:
        raise InputError("--bw", None, f"{len(values)} value{'s' if len(values) != 1 else ''} given but the network "
                         f"has {n_dims} dimensions", f"give {n_dims} comma-separated GB/s values, one per dimension")
    for d, v in enumerate(values):
        if not math.isfinite(v) or v < 0:
            raise InputError("--bw", f"bw[{d}]", f"{v:g} is not a finite number >= 0",
                             "give a bandwidth >= 0 GB/s (> 0 on a dimension that carries traffic)")
    return values


def main() -> None:
    """Entry point of the ``hieropt`` console script. A file that cannot be written (a folder, a missing folder,
    no permission) ends with a one-line message and exit 2, not a traceback."""
    try:
        app()
    except OSError as e:
        Console(stderr=True).print(f"[bold red]error:[/] {e.filename or ''}: cannot write or read: {e.strerror or e}; "
                                   "fix: give a writable file path (its folder must exist)", highlight=False,
                                   soft_wrap=True)
        raise SystemExit(2) from None


app.command("provision")(provision_command)
app.add_typer(workload_app, name="workload")
app.command("export")(export_command)
app.command("compare")(compare_command)
app.command("report")(report_command)
app.command("explore")(explore_command)
