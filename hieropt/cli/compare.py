"""``hieropt compare`` and ``hieropt report``: the exact optimum against the rules of thumb, as a
table or as a self-contained HTML report with figures. Registered in :mod:`hieropt.cli`; loading and
error handling from :mod:`hieropt.cli.common`."""

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
from .outputs import answer_outputs, check_not_input, inputs_read
from .usage import input_error

if TYPE_CHECKING:
    from ..spec import Instance
    from ..studies.compare import Comparison

ObjectiveOpt = Annotated[
    str | None,
    typer.Option(
        "--objective",
        help="performance (iteration time), performance_per_cost (time x cost) or min_cost "
        "(network "
        "cost meeting --max-time): what the gap is measured on and what the heuristics are "
        "placed for. Default: the instance's; when that is min_run_cost or min_max_regret, "
        "report compares for performance (and says so) and compare asks for this option.",
    ),
]
ReportObjectiveOpt = Annotated[
    str | None,
    typer.Option(
        "--objective",
        help="performance, performance_per_cost, min_cost (with --max-time) or min_run_cost "
        "(with [cluster]): the question an "
        "instance's page answers. Its optimum under --max-time and --budget (the design "
        "'hieropt solve' gives with the same flags) is the recommendation, and the detail "
        "places the rules of thumb for it (for min_run_cost: for performance, with a note). "
        "Default: the instance's objective, answered by a "
        "column named in the page's head (the detail compares performance, and says so, when "
        "that is min_run_cost or min_max_regret); the recommendation is then the least $ per "
        "run (with --catalog, among the designs in whole parts: the other columns' $ per GB/s "
        "are bounds, not purchases), else the knee.",
    ),
]
CommOpt = Annotated[
    Path | None, typer.Option("--communicator", help="LIBRA communicator YAML (parallel mapping).")
]
ConstraintOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--constraint",
        help="Linear design constraint on bw[d] (GB/s per NPU), e.g. 'sum(bw) == 500'; repeatable.",
    ),
]


def _instance(
    instance: Path | None,
    network: Path | None,
    workload: Path | None,
    communicator: Path | None,
    cost: Path | None,
    constraint: list[str] | None,
    max_time: str | None,
    budget: str | None,
    tokens: str | None = None,
) -> Instance:
    from .numbers import parse_amount, parse_time_ns, parse_tokens, with_run_tokens

    max_time_ns, budget_usd = (
        parse_time_ns(max_time, "--max-time"),
        parse_amount(budget, "--budget"),
    )
    inst = load_instance_args(instance, network, workload, communicator, cost, constraint)
    inst = with_run_tokens(inst, parse_tokens(tokens))
    update = {
        k: v
        for k, v in (
            ("max_iteration_time_ns", max_time_ns),
            ("max_network_cost_usd", budget_usd),
        )
        if v is not None
    }
    return inst.model_copy(update=update) if update else inst


def check_compared_objective(inst: Instance, objective: str | None, path: Path | None) -> None:
    """Raise an InputError naming the instance file's ``objective`` when no ``--objective`` was
    given and the instance's objective has no heuristic comparison (``min_run_cost``,
    ``min_max_regret``): the fix is to choose one with ``--objective``."""
    from ..errors import InputError
    from ..studies.compare import comparison_objective
    from ..studies.placement import OBJECTIVES_PLACED

    if comparison_objective(inst, objective)[1] is None:
        return
    regret = inst.objective == "min_cost" and inst.max_regret is not None
    what = f"min_cost with max_regret {inst.max_regret:g}" if regret else repr(inst.objective)
    why = ("min_cost at a time target in ns, not within max_regret of each workload's own "
           "optimum" if regret else ", ".join(OBJECTIVES_PLACED))
    # (workloads weighted by hours_share take no time target in ns: min_cost is not comparable)
    also = "" if inst.relative_time else " (min_cost also needs --max-time)"
    raise InputError(
        path or "instance",
        "objective",
        f"the instance's objective {what} has no heuristic comparison (compare places "
        f"the rules of thumb for {why})",
        f"choose one with --objective, e.g. --objective performance{also}; "
        f"'hieropt solve {path or 'INSTANCE'}' answers {what}",
    )


def check_report_objective(objective: str | None, path: Path | None = None,
                           inst: Instance | None = None) -> None:
    """Raise an InputError naming ``report`` when ``objective`` (its ``--objective``) is
    ``min_max_regret`` (a page of one design for several workloads' regret is 'hieropt solve''s
    answer), or ``min_run_cost`` for an instance ``inst`` without ``[cluster]`` (the $ of a run
    needs the cluster's cost rate), with what to do instead (``path``: the instance file, named in
    the ``solve`` to run; None: ``INSTANCE``). ``min_run_cost`` with a ``[cluster]`` passes: the
    page answers it as it does an instance whose own objective it is (the recommendation is the
    least $ per run; the detail compares the rules of thumb for performance, and says so). None or
    any other objective passes (an unknown one is refused by the comparison)."""
    from ..errors import InputError
    from ..studies.placement import OBJECTIVES_PLACED

    placed = ", ".join(OBJECTIVES_PLACED)
    if objective == "min_run_cost" and inst is not None and inst.cluster is None:
        raise InputError(
            "--objective", None, "min_run_cost prices a training run and the instance has no "
            "[cluster] section (its cost rate)",
            "add [cluster] with usd_per_npu_hour, or accelerator_usd with amortisation_years "
            f"(docs/buyer.md), or give one of {placed}")
    if objective != "min_max_regret":
        return
    raise InputError(
        "--objective", None,
        f"report does not compare the rules of thumb for objective {objective!r} (its detail "
        f"places them for {placed} only)",
        f"leave out --objective (report then compares for the instance's objective, or for "
        f"performance with a note) or give one of {placed}; 'hieropt solve {path or 'INSTANCE'} "
        "--objective min_max_regret' gives the min_max_regret design",
    )


def check_codesign_question(path: Path | None, objective: str | None, max_time: str | None,
                            budget: str | None, catalog: Path | None = None) -> None:
    """Refuse ``report``'s ``--objective``, ``--max-time``, ``--budget`` or ``--catalog`` (the
    first given is named) on a co-design input (``path``: its JSON or space): its page shows the
    ranked candidates of a search already run for its space's objective and targets (and its
    catalog shortlist), so it cannot answer another question; the fix is the search for it
    (``hieropt codesign --objective ...``, ``--catalog``), then its report. Passes when none is
    given. (``--tokens`` and ``--within`` apply to a co-design page: every candidate's days and $
    are figured for the token budget, the knee for the slack.)

    Raises:
        InputError: one of them given.
    """
    from ..errors import InputError

    given = [(f, v) for f, v in (("--objective", objective), ("--max-time", max_time),
                                 ("--budget", budget), ("--catalog", catalog)) if v is not None]
    if not given:
        return
    flags = " ".join(f"{f} {v}" for f, v in given)
    space = "SPACE" if path is None or path.suffix.lower() == ".json" else str(path)
    raise InputError(
        given[0][0],
        None,
        f"the committee page of a co-design input ({path}) shows the candidates of a search "
        "for its space's objective and targets, so it cannot answer another question "
        "(--objective, --max-time and --budget apply to an instance; a catalog's shortlist is "
        "provisioned by the search: codesign --catalog)",
        f"search for it: 'hieropt codesign {space} {flags} --json result.json', then "
        f"'hieropt report result.json'",
    )


def _print_comparison(out: Console, comp: Comparison) -> None:
    from ..report import compare as rc
    from ..report.run import instance_calibration, run_lines

    run = run_lines(comp.optimum.run, instance_calibration(comp.instance))
    for line in rc.headline_lines(comp) + run:
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
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            metavar="FILE",
            help="Also write the comparison as JSON to FILE ('-' for stdout, then tables go to "
            "stderr).",
        ),
    ] = None,
) -> None:
    """Compare the exact optimum with the rules of thumb: equal split, traffic-proportional,
    Kleinrock's square-root rule, projected gradient descent (with its iterations and gap), greedy
    water-filling and the instance's vendor ratios (heuristic_ratios). Every heuristic is made
    feasible for the same constraints; prints iteration time, cost, time x cost, the gap to the
    optimum, the bottleneck dimension and where each heuristic loses."""
    from ..errors import HieroptError

    err = error_console()
    out = err if to_stdout(json_out) else console()
    try:
        inst = _instance(
            instance,
            network,
            workload,
            communicator,
            cost,
            constraint,
            max_time_ns,
            budget_usd,
            tokens,
        )
        check_compared_objective(inst, objective, instance)
        # loaded once the input is valid (a bad input is reported fast)
        from ..studies.compare import check_min_cost_target, compare

        check_min_cost_target(inst, objective, instance)

        comp = compare(inst, objective=objective)
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    from ..report import compare as rc

    # the file first: a stdout its reader closes (| head) cannot keep it from being written
    if json_out is not None:
        write_json(json_out, rc.comparison_dict(comp))
    _print_comparison(out, comp)
    raise typer.Exit(0 if comp.optimum.success else 3)


WithinOpt = Annotated[
    str,
    typer.Option(
        "--within",
        help="The knee's slack: the cheapest design within this percentage of the fastest time "
        "(1% or 1; 0.5% for half a percent: a plain 0.5 is refused as a likely fraction; 0 turns "
        "the knee off).",
    ),
]
CatalogOpt = Annotated[
    Path | None,
    typer.Option(
        "--catalog",
        help="Parts catalog: also the fastest design in whole parts, its bill of materials' cost "
        "and power (an instance; classes its network does not use are left out with a note). A "
        "co-design result's shortlist comes from 'codesign --catalog'.",
    ),
]
SpaceOpt = Annotated[
    Path | None,
    typer.Option(
        "--space",
        help="With a co-design JSON: its space TOML, read instead of the space the JSON holds "
        "(the plans' tokens, FLOPs and cost: MFU, days, $); needed only for a JSON written "
        "without one.",
    ),
]
FixedOpt = Annotated[
    Path | None,
    typer.Option(
        "--fixed-plan",
        help="With a co-design result: the JSON (or space TOML) of a search with one fixed plan "
        "(LIBRA-style), shown as the fixed-plan alternative.",
    ),
]


def _codesign_input(path: Path, space: Path | None) -> tuple[dict, object | None]:
    """A co-design result and its space: ``path`` a JSON of ``codesign --json`` (``space`` its space
    file; without it the space the JSON holds, :func:`hieropt.io.codesign.result_space`, None for
    a JSON without one) or a co-design space TOML (searched here)."""
    import json

    from ..errors import InputError
    from ..io.codesign import load_codesign
    from ..io.common import read_text
    from ..studies.codesign.rows import result_with_added_columns

    if path.suffix.lower() != ".json":
        from ..studies.codesign import codesign

        result = codesign(load_codesign(path))
        return result.to_dict(50), result.space
    try:
        data = json.loads(read_text(path, "co-design result"))
    except json.JSONDecodeError as e:
        raise InputError(
            path, f"line {e.lineno}", f"not JSON: {e.msg}", "give the file codesign --json wrote"
        ) from None
    if isinstance(data, dict) and data.get("status") == "interrupted":
        raise InputError(
            path, "status", "an interrupted co-design search, not its result: "
            + str(data.get("message") or "it was stopped before it finished"),
            "rerun the same 'hieropt codesign SPACE --out ROWS --json FILE' command (the rows "
            "in its --out file are resumed, not solved again) and give the JSON it writes",
        )
    if not isinstance(data, dict) or "ranking" not in data or "best" not in data:
        raise InputError(
            path, None,
            "not a co-design result (no 'best' and 'ranking')",
            "give the JSON that 'hieropt codesign SPACE --json FILE' wrote, or an instance TOML",
        )
    result_with_added_columns(data)  # (an older result's rows: cp and plan ids as now)
    if space is not None:
        return data, load_codesign(space)
    from ..io.codesign import result_space

    return data, result_space(data, path)


def _is_codesign(path: Path | None) -> bool:
    """Whether ``path`` is a co-design result (``.json``) or space (a TOML with ``[plans]`` or
    ``model``)."""
    if path is None:
        return False
    if path.suffix.lower() == ".json":
        return True
    from ..io.common import read_toml

    doc = read_toml(path, "instance or co-design space")
    return "plans" in doc or ("model" in doc and "workload" not in doc)


def _codesign_report(
    path: Path,
    out_dir: Path,
    space: Path | None,
    fixed: Path | None,
    tokens: float | None,
    within: float,
) -> tuple[object, dict, object | None]:
    """The committee page of the co-design input ``path`` (its JSON or space) written into
    ``out_dir``: (the committee, the page's data, the space used: ``space``, else the one the JSON
    holds; None when neither is known).

    Raises:
        InputError: a bad input, or ``tokens`` fewer than one iteration's of the space.
    """
    from ..report.committee_codesign import codesign_committee
    from ..report.html import write_codesign_report

    data, sp = _codesign_input(path, space)
    if sp is not None and (problem := sp.tokens_problem(tokens)) is not None:
        from ..errors import InputError

        raise InputError("--tokens", None, problem,
                         "give the run's token budget, at least one iteration's, e.g. --tokens 15T")
    fixed_data, fixed_sp = _codesign_input(fixed, None) if fixed is not None else (None, None)
    check_report_files(out_dir)  # (a file the space reads, too)
    inputs_read()
    committee = codesign_committee(data, sp, tokens, within, fixed_data, fixed_sp)
    return committee, write_codesign_report(committee, data, out_dir), sp


REPORT_FILES = (
    "report.html", "report.json", "bandwidth.png", "utilisation.png", "front.png", "gap.png"
)
"""The files ``report`` writes into its folder: the page, its JSON and the figures
(:data:`hieropt.report.plots.FIGURES`); a run removes an earlier run's that it did not write
(without its report: all of them), and never any other file of the folder."""


def check_report_files(out_dir: Path) -> None:
    """Refuse a report folder ``out_dir`` in which one of the files the report writes
    (:data:`REPORT_FILES`) is an input file of the command (its co-design result
    ``DIR/report.json``, a file its instance reads):
    :func:`hieropt.cli.outputs.check_not_input`, before anything is written.

    Raises:
        InputError: ``--out report/report.json: is the command's INSTANCE (...): ...``.
    """
    for name in REPORT_FILES:
        check_not_input(out_dir / name, "--out")


def report_command(
    instance: Annotated[
        Path | None,
        typer.Argument(
            help="Instance TOML (or use the LIBRA flags), a co-design space TOML, or the JSON "
            "'codesign --json' wrote.",
            show_default=False,
        ),
    ] = None,
    out_dir: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            metavar="DIR",
            help="Directory for report.html, report.json and (an "
            "instance) the PNG figures (created if missing).",
        ),
    ] = Path("report"),
    objective: ReportObjectiveOpt = None,
    points: Annotated[
        int, typer.Option("--points", help="Budgets on the Pareto front (>= 2).")
    ] = 30,
    max_time_ns: MaxTimeOpt = None,
    budget_usd: BudgetOpt = None,
    tokens: TokensOpt = None,
    within: WithinOpt = "1%",
    catalog: CatalogOpt = None,
    space: SpaceOpt = None,
    fixed_plan: FixedOpt = None,
    network: NetworkOpt = None,
    workload: WorkloadOpt = None,
    communicator: CommOpt = None,
    cost: CostOpt = None,
    constraint: ConstraintOpt = None,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            metavar="FILE",
            help="Also write the committee's figures (recommendation, alternatives, plot points) "
            "as JSON to "
            "FILE ('-' for stdout).",
        ),
    ] = None,
) -> None:
    """Write the committee page of an instance or a co-design result: one self-contained HTML page
    with the recommendation (plan, fabric, cluster size, days, $ per run, MW, MFU), the alternatives
    side by side (fastest, knee, least $ per run, ...), the trade-off plot and the detail, and
    report.json."""
    from ..errors import HieroptError, InputError

    err = error_console()
    out = err if to_stdout(json_out) else console()
    # a run without its report leaves none of an earlier run in the folder
    answer_outputs(*(out_dir / name for name in REPORT_FILES))
    try:
        # before the work: an existing file is refused
        check_output_folder(out_dir, "--out", "the report")
        check_report_files(out_dir)  # (the files named on the command line)
        from .numbers import parse_tokens, parse_within

        slack = parse_within(within) or 0.0  # (0: the knee turned off)

        if _is_codesign(instance):
            check_codesign_question(instance, objective, max_time_ns, budget_usd, catalog)
            committee, data, sp = _codesign_report(instance, out_dir, space, fixed_plan,
                                                   parse_tokens(tokens), slack)
            from ..report.committee import caveat_notes

            notes = caveat_notes(committee.alternatives) + _space_notes(sp)
            return _finish(out, json_out, committee, out_dir, data["files"], 0, notes)
        inst = _instance(
            instance,
            network,
            workload,
            communicator,
            cost,
            constraint,
            max_time_ns,
            budget_usd,
            tokens,
        )
        check_report_files(out_dir)  # (the files the instance reads, too)
        check_report_objective(objective, instance, inst)
        # loaded once the input is valid (a bad input is reported fast)
        from ..studies.compare import check_min_cost_target, compare, comparison_objective

        # (min_run_cost asked: compared as for an instance whose own objective it is)
        run_cost = objective == "min_run_cost"
        compared, compared_note = comparison_objective(
            inst.model_copy(update={"objective": objective}) if run_cost else inst,
            None if run_cost else objective)
        if run_cost and compared_note is not None:
            compared_note = compared_note.replace("the instance's objective",
                                                  "the objective asked (--objective)")
        check_min_cost_target(inst, compared, instance)
        comp = compare(inst, objective=compared)
    except Exception as e:  # (a model's ValidationError too: the input's error, no traceback)
        raise fail(err, input_error(e, instance), json_out) from None
    from .. import api
    from ..report import html
    from ..report.committee_answers import procurement_committee

    front, front_error = None, None
    try:
        front = api.pareto(comp.instance, points=points)
    except HieroptError as e:
        if isinstance(e, InputError):
            raise fail(err, e, json_out) from None
        front_error = str(e)
        error_line(err, f"no Pareto front: {e}", label="note:", style="yellow")
    # (the page answers the objective asked, its optimum under the targets given; the regret bound
    # of min_cost is left to 'hieropt solve', and the page says so)
    try:
        committee = procurement_committee(inst, front, slack, catalog, objective=objective)
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    catalog_notes = _catalog_notes(catalog, inst)
    if catalog_notes:
        import dataclasses

        committee = dataclasses.replace(committee, notes=(*committee.notes, *catalog_notes))
    # the files first (see compare)
    data = html.write_report(comp, front, out_dir, front_error, committee, compared_note)
    _print_comparison(out, comp)
    _finish(out, json_out, committee, out_dir, data["files"], 0 if comp.optimum.success else 3,
            catalog_notes)


def _catalog_notes(catalog: Path | None, inst) -> tuple[str, ...]:
    """The notes of ``report --catalog`` on an instance: the catalog's classes its network does
    not use (left out, :func:`hieropt.io.catalog.without_unused_classes`) and its parts no design
    within the accelerator's NIC cap can use (:func:`hieropt.io.nic_bound.nic_checked_catalog`,
    as ``provision``); none without a catalog, or when the catalog cannot serve the instance (the
    page's catalog column then says why)."""
    if catalog is None:
        return ()
    from ..errors import HieroptError
    from ..io.catalog import read_catalog
    from ..io.nic_bound import nic_checked_catalog

    try:
        return nic_checked_catalog(read_catalog(catalog), inst, catalog)[1]
    except HieroptError:
        return ()


def _space_notes(space) -> list[str]:
    """The note on a co-design report's days, MFU and $ when its space's accelerator is timed with
    the catalog's default calibration or a calibrated accelerator file's
    (:func:`hieropt.report.run.calibration_note`); none without a space (``space``: the co-design
    space the report used, or None)."""
    from ..io.npus import calibration_of
    from ..report.run import calibration_note

    if space is None:
        return []
    note = calibration_note(calibration_of(space.base.npu))
    return [] if note is None else [note]


def _finish(
    out: Console, json_out: Path | None, committee, out_dir: Path, files: list[str], code: int,
    notes: tuple[str, ...] | list[str] = (),
) -> None:
    """Write the committee's JSON, print the recommendation (its status and proven gap in
    ``solve``'s words, :func:`~hieropt.report.common.status_words`; the columns' price bases when
    they differ), its figures, its ``notes`` and the files written, exit with ``code``."""
    from ..report.committee import HEADLINE, LABELS, fmt_figure
    from ..report.common import status_words

    if json_out is not None:
        write_json(json_out, committee.to_dict())
    rec = committee.recommendation
    lines = [f"recommendation: {rec.label} - {committee.why}",
             f"  {status_words(rec.status, rec.gap)}",
             *(f"price basis: {line}" for line in committee.price_basis),
             *(f"  {LABELS[k]}: {fmt_figure(k, rec.figures()[k], rec.time_unit)}"
               for k in HEADLINE),
             *(f"note: {note}" for note in notes)]
    for line in lines:
        out.print(line, highlight=False, soft_wrap=True, markup=False)
    for name in files:
        out.print(f"wrote {out_dir / name}", highlight=False)
    raise typer.Exit(code)
