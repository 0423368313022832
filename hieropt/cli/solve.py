"""``hieropt solve``, ``hieropt evaluate`` and ``hieropt pareto`` (registered in
:mod:`hieropt.cli.commands`).

Exit codes: 0 certified optimum (or evaluation done); 1 a bug; 2 bad input or usage; 3 no certified
answer (infeasible, unbounded, limit reached, solver failure, failed verification).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import (
    CostOpt,
    InstanceArg,
    NetworkOpt,
    WorkloadOpt,
    check_output_file,
    console,
    error_console,
    fail,
    load_instance_args,
    to_stdout,
    write_json,
    write_output,
)
from .numbers import (
    check_bw_units,
    parse_amount,
    parse_deadline_ns,
    parse_time_ns,
    parse_tokens,
    parse_within,
    read_bw,
    with_run_tokens,
)
from .options import (
    BudgetOpt,
    DeadlineOpt,
    GivenWithinOpt,
    MaxTimeOpt,
    TokensOpt,
    TotalBudgetOpt,
)
from .outputs import answer_outputs

CommOpt = Annotated[
    Path | None,
    typer.Option(
        "--communicator",
        help="LIBRA communicator YAML (parallel mapping); omitted: derived from the workload's "
        "ASTRA-sim header policy (model parallel on the lowest dimensions, data parallel on "
        "the rest).",
    ),
]
ConstraintOpt = Annotated[list[str] | None, typer.Option(
    "--constraint", help="Linear design constraint on bw[d] (GB/s per NPU), e.g. 'sum(bw) == 500', "
    "'bw[0] >= bw[1]'; repeatable. With an INSTANCE, added to its constraints. One stating more "
    "than 1e6 GB/s per NPU is refused as bytes/s ('sum(bw) == 500e9': write 500).")]
ObjectiveOpt = Annotated[
    str | None,
    typer.Option(
        "--objective",
        help="performance (minimum iteration time), performance_per_cost (minimum time x cost, "
        "global), "
        "min_cost (cheapest network meeting --max-time, or with every workload within "
        "--max-regret of its own "
        "optimum), min_max_regret (several workloads: minimise the largest slowdown against "
        "each one's own "
        "optimum), or min_run_cost (the $ of one training run: run time x the [cluster]'s "
        "cost rate). Default: the "
        "instance's; performance with LIBRA flags.",
    ),
]
PROGRESS_POINTS = 1000
"""A Pareto front of at least this many points shows a progress bar on stderr (about 1.7 ms per
point)."""
PLOT_SUFFIXES = (".png", ".svg", ".pdf")
"""The files ``pareto --plot`` draws to (any other suffix is refused, and the file there kept)."""
JsonOpt = Annotated[
    Path | None,
    typer.Option(
        "--json",
        metavar="FILE",
        help="Also write the full result as JSON to FILE "
        "('-' for stdout, then tables go to stderr).",
    ),
]


def solve_command(
    instance: InstanceArg = None,
    network: NetworkOpt = None,
    workload: WorkloadOpt = None,
    communicator: CommOpt = None,
    cost: CostOpt = None,
    constraint: ConstraintOpt = None,
    objective: ObjectiveOpt = None,
    max_time: MaxTimeOpt = None,
    budget: BudgetOpt = None,
    tokens: TokensOpt = None,
    deadline: DeadlineOpt = None,
    total_budget: TotalBudgetOpt = None,
    within: GivenWithinOpt = None,
    json_out: JsonOpt = None,
    gap: Annotated[
        float | None,
        typer.Option(
            "--gap",
            help="Target relative optimality gap, in [5e-9, 1). Default 1e-8 (1e-7 for "
            "performance_per_cost).",
            show_default=False,
        ),
    ] = None,
    sensitivity: Annotated[
        bool,
        typer.Option(
            "--sensitivity/--no-sensitivity",
            help="Marginal values at the optimum: ms (or $) per GB/s on each "
            "dimension, per unit of each constraint and bound, per $ of budget, and the $ "
            "per ms of the time-cost "
            "front (the multipliers of a few certified re-solves).",
        ),
    ] = True,
    max_regret: Annotated[
        float | None,
        typer.Option(
            "--max-regret",
            help="With --objective min_cost: the cheapest network on which every workload is "
            "within "
            "this fraction of its own optimum (0.05 = 5 %; below 1), instead of --max-time.",
        ),
    ] = None,
    ranges: Annotated[
        bool,
        typer.Option(
            "--ranges",
            help="With --sensitivity: also the range over which each marginal value holds within "
            "10 % "
            "(more re-solves).",
        ),
    ] = False,
) -> None:
    """Find the optimal per-NPU bandwidth of every dimension, with a proven optimality gap.

    Objectives: the fastest network (performance), the most training per dollar
    (performance_per_cost), the cheapest network meeting a time target (min_cost --max-time 1.3s),
    the fastest within a budget (performance --budget 10M), the cheapest training run (min_run_cost,
    with a [cluster] section). Prints the bandwidth table, iteration time with its compute /
    communication split, per-dimension utilisation, network cost, the proven gap and the solve time;
    for a pipelined LLM plan every distinct stage's time as if every stage were it (the schedule
    composes the stages, each at its own pace: the iteration time can be below the largest); the
    training run's figures (tokens/s, MFU, days, MWh, $ per run) and, for performance,
    the knee. Exit 3 without a certified answer: infeasible (e.g. a time target below the fastest
    possible time), unbounded, undecided (a time target within the fastest time's gap), or a limit
    reached before the gap target (the best design found is printed, with its proven gap; a time
    limit of 60 s per LP reached before any design or bound prints "error: limit: ...", the gap
    unknown) or a failed verification.
    """
    from ..errors import HieroptError

    err = error_console()
    out = err if to_stdout(json_out) else console()
    try:
        check_output_file(json_out, "--json")
        max_time_ns, budget_usd = (
            parse_time_ns(max_time, "--max-time"),
            parse_amount(budget, "--budget"),
        )
        inst = with_tokens(
            load_instance_args(instance, network, workload, communicator, cost, constraint), tokens
        )
        max_time_ns, budget_usd = buyer_limits(
            inst, max_time_ns, budget_usd, deadline, total_budget
        )
        # loaded once the input is valid: a bad input never imports the solvers or reports
        from .. import api

        slack = parse_within("1%" if within is None else within)
        from ..solvers.objectives import recommended_options

        options = recommended_options(
            rel_gap=gap, max_iteration_time_ns=max_time_ns, budget_usd=budget_usd,
            sensitivity=sensitivity, sensitivity_ranges=ranges, max_regret=max_regret,
            portfolio=True)
        sol = api.solve(inst, objective, options=options)
        sol = missed_deadline(inst, sol, deadline, max_time_ns, budget_usd)
        sol = missed_total_budget(inst, sol, total_budget, budget_usd)
        sol.raise_for_status()  # (no design: exit 3)
        sol = with_total_budget_note(inst, sol, total_budget)
        knee = _knee(sol, slack)
        sol = _without_knee_note(sol, slack, within is not None)
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    from ..report import dicts, text
    from ..report.portfolio import portfolio_table
    from ..report.run import instance_calibration, run_lines
    from ..report.sensitivity import sensitivity_lines

    # the file first: a stdout its reader closes (| head) cannot keep it from being written
    if json_out is not None:
        write_json(
            json_out,
            {**dicts.solution_dict(inst, sol), "knee": knee if knee is None else knee.to_dict()},
        )
    knee_line = [] if knee is None else [knee.line()]
    run = run_lines(sol.run, instance_calibration(inst))
    for line in text.summary_lines(inst, sol) + run + knee_line:
        out.print(line, highlight=False, soft_wrap=True, markup=False)
    out.print(text.dimension_table(inst, sol.breakdown, text.design_title(sol)))
    out.print(text.time_table(sol.breakdown, inst.training_loop, inst.relative_time))
    table = portfolio_table(sol.portfolio, sol.objective)
    if table is not None:
        out.print(table)
    from ..report.sensitivity import buyer_scale

    for line in sensitivity_lines(sol.sensitivity, buyer_scale(inst, sol), sol.bw_gbps):
        out.print(line, highlight=False, soft_wrap=True, markup=False)
    raise typer.Exit(0 if sol.success else 3)


def with_tokens(inst, tokens: str | None):
    """``inst`` with the run's token budget ``--tokens`` (``15e12``, ``15T``) when given."""
    return with_run_tokens(inst, parse_tokens(tokens))


def _knee(sol, within: float | None):
    """The knee beside a performance optimum (:func:`hieropt.studies.knee.knee`, the knee ``hieropt
    report`` recommends: one workload's iteration time or several workloads' weighted objective),
    or None: not asked for, another objective or no certified optimum."""
    if within is None or sol.objective != "performance" or not sol.success:
        return None
    from ..studies.knee import knee

    return knee(sol.instance, within, design_usd=sol.network_cost_usd)


def _without_knee_note(sol, within: float | None, given: bool):
    """``sol`` with a note saying why no knee is printed when ``--within`` was ``given`` (and not
    0) for an objective other than performance: the knee is measured from the fastest time, which
    only the performance objective's answer is. Else ``sol`` as it is."""
    if not given or within is None or sol.objective == "performance" or not sol.success:
        return sol
    from dataclasses import replace

    note = (f"--within: no knee beside objective {sol.objective}: the knee is the cheapest "
            "design within the slack of the fastest time, measured from the performance "
            "optimum; give --objective performance (or run hieropt report) for it")
    return replace(sol, notes=(*sol.notes, note))


def missed_deadline(inst, sol, deadline: str | None, max_time_ns: float | None,
                    budget_usd: float | None):
    """``sol``, its message followed by the deadline in the buyer's units when ``sol`` is
    infeasible because of ``--deadline`` (its iteration-time target is ``max_time_ns``, ns): one
    performance solve within ``budget_usd`` ($) gives the fastest design
    (:func:`hieropt.report.run.deadline_words`). Any other ``sol`` is returned as it is."""
    from dataclasses import replace

    from .. import api
    from ..errors import HieroptError
    from ..model.run import iteration_target_ns
    from ..report.run import deadline_words

    if deadline is None or sol.status.value != "infeasible" or max_time_ns is None:
        return sol
    deadline_ns = parse_deadline_ns(deadline)
    target = iteration_target_ns(inst, deadline_ns)
    if max_time_ns < target * (1 - 1e-12):  # (--max-time is the tighter target)
        return sol
    options = api.SolveOptions(budget_usd=budget_usd, sensitivity=False)
    try:
        fast = api.solve(inst, "performance", options=options)
    except HieroptError:  # (the answer stays the infeasible one, in its own words)
        return sol
    if not fast.has_design:
        return sol
    words = deadline_words(deadline_ns, target, fast.iteration_time_ns)
    return replace(sol, message=f"{sol.message}; {words}")


def missed_total_budget(inst, sol, total_budget: str | None, budget_usd: float | None):
    """``sol``, its message followed by the total budget in the buyer's words when ``sol`` is
    infeasible because ``--total-budget`` leaves the network (``budget_usd``, $, the network
    budget it gave when no ``--budget`` is tighter) less than the cheapest network the design
    rows allow (:func:`hieropt.solvers.cost_range.cheapest_vertex`): what the cluster costs
    without its network and the least total budget that buys the cheapest one. Any other ``sol``
    is returned as it is."""
    from dataclasses import replace

    from ..errors import HieroptError
    from ..model.run import network_budget_usd
    from ..report.run import fmt_money
    from ..solvers.cost_range import cheapest_vertex
    from ..units import usd_cents

    if total_budget is None or sol.status.value != "infeasible" or budget_usd is None:
        return sol
    total = parse_amount(total_budget, "--total-budget")
    left = network_budget_usd(inst, total)
    if budget_usd < left * (1 - 1e-12):  # (--budget is the tighter)
        return sol
    try:
        cheapest = cheapest_vertex(inst).cost_usd
    except HieroptError:  # (the answer stays the infeasible one, in its own words)
        return sol
    if cheapest <= left:  # (infeasible for another reason: a time target)
        return sol
    fixed = total - left
    words = (f"--total-budget {fmt_money(total)} leaves {fmt_money(left)} for the network after "
             f"the cluster's {fmt_money(fixed)} (accelerators, servers, racks, facility), and "
             f"the cheapest network costs {fmt_money(cheapest)}: a total budget of at least "
             f"${usd_cents(fixed + cheapest, up=True)} buys it")
    return replace(sol, message=f"{sol.message}; {words}")


def with_total_budget_note(inst, sol, total_budget: str | None):
    """``sol`` with a note on ``--total-budget`` when it was given and ``sol`` has a design: the
    network budget it leaves ($, :func:`hieropt.model.run.network_budget_usd`) and whether it binds:
    the design's network spends it (within 1e-6) or costs less (the objective's own design fits, and
    a larger total budget would not change it). The budget constrains the objective solved, as
    ``--budget`` does; with performance that is the fastest design within it."""
    from dataclasses import replace

    from ..model.run import network_budget_usd
    from ..report.run import fmt_money

    if total_budget is None or not sol.has_design:
        return sol
    total = parse_amount(total_budget, "--total-budget")
    left = network_budget_usd(inst, total)
    cost = sol.network_cost_usd
    head = (f"--total-budget {fmt_money(total)} leaves {fmt_money(left)} for the network after "
            f"the cluster's {fmt_money(total - left)} (accelerators, servers, racks, facility); ")
    if cost >= left * (1 - 1e-6):
        tail = (f"it binds: the {sol.objective} design's network spends it "
                f"({fmt_money(cost)})")
    else:
        tail = (f"it does not bind: the {sol.objective} design's network costs "
                f"{fmt_money(cost)}, {fmt_money(left - cost)} under it (a larger total budget "
                "gives the same design)")
    return replace(sol, notes=(*sol.notes, head + tail))


def buyer_limits(inst, max_time_ns: float | None, budget_usd: float | None, deadline: str | None,
                 total_budget: str | None) -> tuple[float | None, float | None]:
    """(time target ns, network budget $) with ``--deadline`` (as an iteration-time target for the
    run's tokens) and ``--total-budget`` (the cluster's capex less [cluster]'s fixed part) folded
    in: the tighter of each pair.

    Raises:
        InputError: a bad ``--deadline`` or ``--total-budget``, or a deadline of a day or more per
            iteration (:func:`hieropt.cli.numbers.check_deadline_target`).
    """
    from ..model.run import iteration_target_ns, network_budget_usd
    from .numbers import check_deadline_target

    deadline_ns, total = (
        parse_deadline_ns(deadline),
        parse_amount(total_budget, "--total-budget"),
    )
    if deadline_ns is not None:
        target = iteration_target_ns(inst, deadline_ns)
        check_deadline_target(str(deadline), deadline_ns, target)
        max_time_ns = target if max_time_ns is None else min(max_time_ns, target)
    if total is not None:
        left = network_budget_usd(inst, total)
        budget_usd = left if budget_usd is None else min(budget_usd, left)
    return max_time_ns, budget_usd


def evaluate_command(
    instance: InstanceArg = None,
    bw: Annotated[str, typer.Option("--bw", help="Comma-separated GB/s per NPU, one per dimension, "
                                    "e.g. 250,125,75,50. For a known accelerator, 2 x its "
                                    "scale-up bandwidth or more (the datasheet's bidirectional "
                                    "figure, or Gb/s) and scale-out (the last of two or more "
                                    "dimensions) above 200 GB/s are refused as unit slips; "
                                    "above its scale-up bandwidth gets a note. Above 1e6 "
                                    "(bytes/s) is refused; 1e6 is a dimension with no "
                                    "limit.")] = "",
    network: NetworkOpt = None,
    workload: WorkloadOpt = None,
    communicator: CommOpt = None,
    cost: CostOpt = None,
    constraint: ConstraintOpt = None,
    tokens: TokensOpt = None,
    json_out: JsonOpt = None,
) -> None:
    """Evaluate a given bandwidth allocation: iteration time, breakdown, utilisation and cost (no
    solver).

    A pipelined LLM plan: every distinct stage's time as if every stage were it, the iteration time
    (the schedule's composition of the stages) and the breakdown of the slowest stage. A warning
    (and a --json note) for every limit of the instance the design breaks: a design constraint or
    bound, the network budget (max_network_cost_usd, $ over) and the time target
    (max_iteration_time_ns, ns over).
    """
    from ..errors import HieroptError

    err = error_console()
    out = err if to_stdout(json_out) else console()
    try:
        inst = with_tokens(
            load_instance_args(instance, network, workload, communicator, cost, constraint), tokens
        )
        # loaded once the input is valid: a bad input never imports the solvers or reports
        from .. import api

        values = read_bw(bw, inst)
        check_bw_units(inst, values)
        bd = api.evaluate(inst, values)
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    from ..model.run import power_cap_problem, run_figures
    from ..report import dicts, text
    from ..report.run import instance_calibration, run_lines, run_notes
    from ..units import implausible_bw_notes

    run = run_figures(inst, bd.iteration_time_ns, bd.network_cost_usd, bw_gbps=values)
    calibration = instance_calibration(inst)
    over = power_cap_problem(inst)  # (solve and provision call such a design infeasible)
    cap = [] if over is None else [f"infeasible at this site (solve exits 3): {over}"]
    # (bandwidths in bytes/s or B/ns: solve's unit note on its optimum, here on the given values)
    units = list(implausible_bw_notes(values, [b > 0 for b in bd.bytes_per_dim], "allocation",
                                      "--bw 500"))
    if json_out is not None:  # the file first (see solve)
        notes = list(bd.violations) + run_notes(run, calibration) + cap + units
        write_json(json_out, dicts.evaluation_dict(inst, bd, run, notes))
    for line in text.evaluation_lines(inst, bd) + run_lines(run, calibration):
        out.print(line, highlight=False, soft_wrap=True)
    for note in cap:
        out.print(f"warning: {note}", highlight=False, soft_wrap=True)
    for note in units:
        out.print(f"note: {note}", highlight=False, soft_wrap=True)
    out.print(text.dimension_table(inst, bd, "Given per-dimension bandwidth"))
    out.print(text.time_table(bd, inst.training_loop, inst.relative_time))


def pareto_command(
    instance: InstanceArg = None,
    points: Annotated[
        int,
        typer.Option(
            "--points",
            help="Number of budgets on the front (2 to 100,000; from 1,000 a progress bar on "
            "stderr).",
        ),
    ] = 50,
    spacing: Annotated[
        str,
        typer.Option(
            "--spacing",
            help="How the budgets are spaced: 'linear' (even steps in $) "
            "or 'log' (even steps in log $: for a cost range of several orders of "
            "magnitude).",
        ),
    ] = "linear",
    csv_out: Annotated[
        Path | None,
        typer.Option(
            "--csv", metavar="FILE",
            help="Write the points as CSV to FILE ('-' for stdout): budget, cost, time, gap, "
            "status (as the JSON's) and bandwidths, then the JSON's usd_per_ms, "
            "time_to_train_days and run_cost_usd (units in the header; empty where a point has "
            "no such figure).",
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            metavar="FILE",
            help="Draw the front to FILE: a .png, .svg or .pdf file (matplotlib).",
        ),
    ] = None,
    tokens: TokensOpt = None,
    network: NetworkOpt = None,
    workload: WorkloadOpt = None,
    communicator: CommOpt = None,
    cost: CostOpt = None,
    constraint: ConstraintOpt = None,
    json_out: JsonOpt = None,
) -> None:
    """The exact time-cost Pareto front: from the cheapest feasible network to the fastest, each
    point the fastest network within its budget (proven to 1e-8), with the performance and
    performance-per-cost optima marked.

    The file's max_network_cost_usd ends the front at that budget and its max_iteration_time_ns
    starts it at the cheapest network that meets the target: every point is within both (a note
    says where each end is and why)."""
    from ..errors import HieroptError, InputError

    err = error_console()
    out = err if to_stdout(json_out, csv_out) else console()
    # (a run without its answer leaves no earlier one there; a --plot it cannot draw to is not its)
    answer_outputs(csv_out)
    answer_outputs(plot, suffixes=PLOT_SUFFIXES)
    try:
        if plot is not None and plot.suffix.lower() not in PLOT_SUFFIXES:
            raise InputError(
                "--plot", None, f"cannot draw to '{plot.name}'", "name a .png, .svg or .pdf file"
            )
        # (the CSV and the JSON one after the other: neither parses)
        if str(csv_out) == "-" and str(json_out) == "-":
            raise InputError(
                "--csv -", None, "--json - writes to stdout too", "send one of them to a file"
            )
        for path, flag in ((csv_out, "--csv"), (plot, "--plot"), (json_out, "--json")):
            # before solving: a missing folder is reported at once, in one line
            check_output_file(path, flag)
        inst = with_tokens(
            load_instance_args(instance, network, workload, communicator, cost, constraint), tokens
        )
        # loaded once the input is valid: a bad input never imports the solvers or reports
        from .. import api
        from ..progress import ProgressBar

        bar = ProgressBar(points >= PROGRESS_POINTS, f"pareto {inst.name}", points)
        bar.start()
        try:
            front = api.pareto(inst, points=points, spacing=spacing, progress=bar.update)
        finally:
            bar.stop()
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    from ..report import dicts, plots, text

    # the files first (see solve); the CSV on stdout (--csv -) is this run's stdout, the tables then
    # go to stderr
    if csv_out is not None:
        write_output(csv_out, dicts.front_csv(inst, front), "--csv")
    if plot is not None:
        try:
            plots.plot_front(inst, front, plot)
        except OSError as e:
            raise OSError(e.errno, e.strerror, f"--plot {plot}") from None
    if json_out is not None:
        write_json(json_out, dicts.front_dict(inst, front))
    out.print(text.front_table(inst, front))
    from ..report.run import front_notes

    for line in text.front_lines(front, front_notes(inst, front)):
        out.print(line, highlight=False, soft_wrap=True)
    for path in (csv_out, plot):
        if path is not None and str(path) != "-":
            out.print(f"wrote {path}", highlight=False)
