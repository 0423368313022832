"""Presentation: rich tables and JSON-ready dicts of solutions and breakdowns. Returns values; never
prints."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from rich.table import Table
from rich.text import Text

from ..model.pipeline import composition
from ..model.run import run_figures
from ..model.timing import Breakdown
from ..result import Solution
from ..spec import Instance
from ..units import RELATIVE_UNIT, fmt_relative, usd_cents
from .common import (
    fmt_money,
    fmt_ms,
    fmt_time,
    fmt_usd_per_ms,
    gap_words,
    ms_text,
    time_header,
)


def design_title(sol: Solution) -> str:
    """The title of the table of a solve's design: "Optimal ..." only for a certified optimum
    (status optimal); a design of a solver limit is the best found, not proven optimal, within its
    proven relative gap."""
    if sol.success:
        return "Optimal per-dimension bandwidth"
    if not math.isfinite(sol.gap):
        return "Best per-dimension bandwidth found (not proven optimal)"
    return (f"Best per-dimension bandwidth found (not proven optimal: within relative gap "
            f"{sol.gap:.3g})")


def dimension_table(instance: Instance, bd: Breakdown, title: str) -> Table:
    """Per-dimension table: building block, NPUs, bandwidth, traffic, busy time, utilisation,
    cost. With workloads weighted by shares of hours the weighted bytes have no unit of their own
    (shown as -) and the busy and slowest columns are parts of the hour-weighted ratio."""
    rel = instance.relative_time
    unit = time_header(rel)
    weighted = link_weighted(instance)
    t = Table(title=title, title_justify="left")
    for col in (
        "dim",
        "block",
        "NPUs",
        "class",
        "GB/s/NPU",
        "GB sent (link-weighted)" if weighted else "GB sent",
        f"busy {unit}",
        "util",
        f"slowest {unit}",
        "cost $",
    ):
        t.add_column(col, justify="left" if col in ("block", "class") else "right")
    sent_words = (
        "GB sent (link-weighted): bytes each NPU sends on the dimension per iteration, each "
        "multiplied by its link factor (a group reaching 1/g of the NPU's links there under "
        "group_bandwidth = \"links\" counts g x its bytes, a pipeline send over one of a "
        "FullyConnected NPU's n - 1 links n - 1 x): the bytes at the NPU's whole bandwidth, "
        "busy = GB / (GB/s) plus latency"
        if weighted else "GB sent: bytes each NPU sends on the dimension per iteration"
    )
    t.caption = (
        f"GB/s/NPU: per-NPU bandwidth; {sent_words}; busy: time the dimension transmits per "
        "iteration; util: busy / iteration time; slowest: issued collective time per "
        "iteration during which it is the slowest "
        "dimension (a collective whose dimensions tie as its slowest, within 1e-6, counts on "
        "each, as compare's bottleneck; one whose dimensions work one after another counts its "
        "part on each), at most busy"
        + ("; ratio: part of the iteration times over the workloads' own optima, weighted by "
           "hours share (the weighted bytes are not shown)" if rel else "")
    )
    for d, dim in enumerate(instance.network.dims):
        sent = "-" if rel else f"{bd.bytes_per_dim[d] / 1e9:,.4f}"
        t.add_row(str(d), dim.block, str(dim.npus), dim.cost_class, f"{bd.bw_gbps[d]:,.3f}",
                  sent, fmt_time(bd.busy_ns_per_dim[d], rel),
                  f"{bd.utilisation_per_dim[d]:.1%}",
                  fmt_time(bd.bottleneck_ns_per_dim[d], rel), f"{bd.cost_per_dim_usd[d]:,.0f}")
    return t


def link_weighted(instance: Instance) -> bool:
    """Whether the per-dimension bytes of ``instance`` (:attr:`hieropt.model.breakdown.Breakdown.
    bytes_per_dim`) weight some bytes by more than 1: a group spanning part of a dimension priced by
    its links (``group_bandwidth = "links"``, a factor other than 1:
    :func:`hieropt.model.traffic.job_links`), or a pipeline send (the ``[pipeline]``'s, or a
    workload's point-to-point collective) over a FullyConnected dimension of more than 2 NPUs,
    which takes one of the NPU's n - 1 links (:func:`hieropt.model.algorithms.p2p_links`). Then
    :func:`dimension_table` heads them "GB sent (link-weighted)" and says so."""
    from ..model.traffic import job_links
    from ..spec import PHASES, Collective

    if any(job_links(instance, job) for job in instance.jobs):
        return True
    dims = instance.network.dims
    wide = {d for d, x in enumerate(dims) if x.block == "FullyConnected" and x.npus > 2}
    if not wide:
        return False
    pp = instance.pipeline
    if pp is not None and pp.p2p_bytes > 0 and pp.p2p_dim in wide:
        return True
    for job in instance.jobs:
        for stage in job.workload.stages:
            t = stage.table
            for j, phase in enumerate(PHASES):
                for g in set(t.group[:, j][t.collective[:, j] == Collective.P2P].tolist()):
                    sizes = job.mapping.groups.get(g) if g is not None else None
                    sizes = sizes if sizes is not None else job.mapping.group(phase)
                    if any(sizes[d] > 1 for d in wide):
                        return True
    return False


def time_table(bd: Breakdown, loop: str = "no_overlap", relative: bool = False) -> Table:
    """Iteration time split into compute, pipeline bubble and exposed communication (ms; the
    decomposition of :mod:`hieropt.model.breakdown`, the rows add up to the iteration time). When
    the collective time issued per phase is the exposed communication (no overlap, no pipeline), the
    per-phase rows are its parts; otherwise they follow the iteration row as what the slowest stage
    issues, not parts of the sum (overlap hides part of it, a pipeline's fill and drain add other
    stages' collectives to the exposed communication). ``relative``: workloads weighted by shares
    of hours, the parts of the hour-weighted ratio instead of ms."""
    fmt = partial(fmt_time, relative=relative)
    t = Table(title=f"Iteration time ({loop})", title_justify="left")
    t.add_column("part")
    t.add_column(f"time ({time_header(relative)})", justify="right")
    t.add_column("share", justify="right")
    T = bd.iteration_time_ns
    tol = 1e-9 * max(T, 1.0)
    issued = sum(bd.communication_by_phase_ns.values())
    parts = abs(issued - bd.communication_ns) <= tol
    bubble = abs(bd.bubble_ns) > tol
    rows = [("compute", bd.compute_ns)]
    if bubble:
        rows.append(("pipeline bubble (fill and drain)", bd.bubble_ns))
    if parts:
        rows += [(f"communication: {p}", v) for p, v in bd.communication_by_phase_ns.items()]
    else:
        rows.append(("exposed communication", bd.communication_ns))
    for name, v in rows:
        t.add_row(name, fmt(v), f"{v / T:.1%}" if T > 0 else "-")
    t.add_row(Text("iteration", style="bold"), Text(fmt(T), style="bold"), "100.0%",
              end_section=not parts)
    if not parts:
        for p, v in bd.communication_by_phase_ns.items():
            t.add_row(f"issued in {p}", fmt(v), "-")
        who = f" by {bd.slowest_stage}" if bd.slowest_stage else ""
        t.caption = (
            "bubble: fill and drain with free communication; exposed communication: iteration - "
            f"compute - bubble, what the network adds; issued: collective time{who} per "
            "iteration, not parts of the sum ("
            + ("the fill and drain add other stages' collectives to the exposed figure; "
               if bubble else "") + "overlap hides some)"
        )
    return t


def summary_lines(instance: Instance, sol: Solution) -> list[str]:
    """Headline lines: status, time with proven bound and gap, cost, solve statistics, notes."""
    lines = [
        f"instance {instance.name}: {instance.network.npus_total:,} NPUs, "
        f"{instance.network.n_dims} dimensions, "
        f"objective {sol.objective}, loop {instance.training_loop}",
        f"status: {sol.status.value} ({sol.message})",
        (
            weighted_head(instance, "; per workload below")
            if len(instance.jobs) > 1
            else "iteration time: "
        )
        + weighted_time_text(sol.iteration_time_ns, instance.relative_time)
        + (
            "; proven lower bound "
            + weighted_time_text(sol.lower_bound_ns, instance.relative_time, short=True)
            if sol.lower_bound_ns is not None
            else ""
        ),
        f"network cost: {fmt_money(sol.network_cost_usd)}",
    ]
    lines[1:1] = _mapping_lines(instance)
    # (the $ of one training run, or of one iteration without a token budget)
    if sol.objective == "min_run_cost":
        per = sol.extra.get("run_cost_per", "run")
        fixed = ("the cluster's rate alone" if "fixed_cost_usd" not in sol.extra else
                 f"fixed cost ${sol.extra['fixed_cost_usd']:,.0f} in network-capex dollars")
        lines.append(
            f"objective min_run_cost: ${sol.objective_value:,.0f} per {per}; proven lower bound "
            f"${sol.objective_bound:,.0f} ({fixed})"
        )
    elif sol.objective != "performance":
        unit = {"USD": "$", "ns*USD": "ns x $", "ratio": "(largest time / own optimum)",
                f"{RELATIVE_UNIT}*USD": "ratio x $ (the hour-weighted ratio to the workloads' "
                "own optima times the network's $)"}[
            sol.objective_unit
        ]
        if unit == "$":  # (as every $ of the output: a sign and thousands separators)
            value, bound = (f"${sol.objective_value:,.2f}",
                            f"${usd_cents(sol.objective_bound, up=False)}")
        else:
            value, bound = (f"{sol.objective_value:.10g} {unit}",
                            f"{sol.objective_bound:.10g} {unit}")
        lines.append(f"objective {sol.objective}: {value}; proven lower bound {bound}")
    lines.append(gap_words(sol.gap))
    if "kappa_evaluations" in sol.extra:
        from ..solvers.near_product import NEAR_PRODUCT_METHOD

        lo, hi = sol.extra["kappa_range_usd"]
        top = ("no upper end (nothing caps bandwidth)" if math.isinf(hi)
               else f"${usd_cents(hi, up=True)}")
        how = "one convex LP in cost shares"
        if sol.method == NEAR_PRODUCT_METHOD:
            how = "the fastest design within a budget a hair above the cheapest network"
        lines.append(
            f"global search: {how}, {sol.extra['kappa_evaluations']} "
            "LPs, costs "
            f"searched within ${usd_cents(lo, up=False)} .. {top}"
        )
    lines.append(
        f"solved in {sol.solve_seconds * 1e3:.1f} ms: {sol.iterations} LPs, "
        f"{sol.extra.get('cuts', 0)} cuts, "
        f"{sol.extra.get('collectives', 0)} collectives aggregated into "
        f"{sol.extra.get('terms', 0)} terms; "
        "verified by the independent evaluator"
    )
    lines += stage_lines(sol.breakdown, instance)
    lines += [f"note: {n}" for n in sol.notes]
    return lines


def weighted_head(instance: Instance, more: str = "") -> str:
    """The label of a portfolio's weighted time, ``more`` added inside its parentheses: the
    weighted sum of iteration times, or with shares of hours the hour-weighted relative iteration
    time sum_w h_w T_w / T_w* (:func:`hieropt.solvers.portfolio.hours_weighted`)."""
    n = len(instance.jobs)
    if instance.relative_time:
        return (f"hour-weighted relative iteration time (sum over {n} workloads of hours share x "
                f"time / own optimum{more}): ")
    return f"weighted iteration time (sum over {n} workloads of weight x time{more}): "


def weighted_time_text(value: float, relative: bool, short: bool = False) -> str:
    """The (weighted) iteration time as text: ``1,166,511,725.3 ns (1,166.511725 ms)`` (``short``:
    without the ms), or with ``relative`` (workloads weighted by shares of hours,
    :data:`hieropt.units.RELATIVE_UNIT`) the dimensionless ``1.04231 × the workloads' own optima,
    weighted by hours share``, never ns."""
    if relative:
        return f"{value:.10g}" if short else fmt_relative(value)
    return f"{value:,.1f} ns" + ("" if short else f" ({ms_text(value, 6)} ms)")


def stage_lines(bd: Breakdown, instance: Instance) -> list[str]:
    """A pipelined workload's stage times at the bandwidths (none for a workload of one stage),
    each the iteration time if every pipeline stage were that one
    (:func:`hieropt.model.timing.evaluate`).
    Under a schedule that composes the stages (:func:`hieropt.model.pipeline.composition`) the
    iteration time charges the fill and drain at each stage's own pace, so it can be below the
    slowest stage's figure; otherwise it is the slowest's. The split below (compute, bubble,
    exposed communication) is the iteration's; the issued and per-dimension figures are the
    slowest stage's."""
    if not bd.stage_times_ns:
        return []
    composed = any(composition(instance, job) is not None for job in instance.jobs)
    how = (
        "the iteration time composes the stages by the schedule, the fill and drain at each "
        "stage's own pace, so it can be below the largest of these"
        if composed
        else "the iteration time is the slowest's"
    )
    return [
        f"pipeline stages (each: the iteration time if every stage were this one; {how}; the "
        f"issued and per-dimension figures below are {bd.slowest_stage}'s): "
        + ", ".join(f"{name} {fmt_ms(t)} ms" for name, t in bd.stage_times_ns.items())
    ]


def evaluation_lines(instance: Instance, bd: Breakdown) -> list[str]:
    """Headline lines of an evaluation, including any violated design constraint; with several
    workloads the weighted sum is labelled as such and each workload's own iteration time
    follows."""
    jobs = instance.jobs
    head = (
        weighted_head(instance)
        if len(jobs) > 1
        else "iteration time: "
    )
    lines = [head + weighted_time_text(bd.iteration_time_ns, instance.relative_time)]
    what = "hours share" if instance.weights == "hours" else "weight"
    if len(jobs) > 1:
        for job, t in zip(jobs, bd.iteration_time_by_workload_ns.values(), strict=True):
            lines.append(
                f"  {job.workload.name} ({what} {job.weight:.8g}): iteration time {t:,.1f} ns "
                f"({t / 1e6:,.6f} ms)"
            )
    lines.append(f"network cost: {fmt_money(bd.network_cost_usd)}")
    lines += stage_lines(bd, instance)
    lines += [f"warning: {w}" for w in bd.violations]
    return lines


FRONT_ROWS = 200
"""The front's table shows at most this many points (evenly spaced, both ends included); ``--csv`` /
``--json`` hold every point (a terminal table of 100,000 rows took longer to draw than the front to
solve)."""


def front_table(instance: Instance, front: Any, max_rows: int = FRONT_ROWS) -> Table:
    """Table of the Pareto front: budget, cost, iteration time, gap and bandwidth per dimension; of
    a front of more than ``max_rows`` points, ``max_rows`` evenly spaced ones (the first and the
    last among them), numbered as in the full front, and a caption saying so. The title says each
    point is proven optimal, or how many stopped at a limit (status ``limit``, at its gap)."""
    n = len(front.points)
    shown = (
        range(n)
        if n <= max_rows
        else sorted({round(k * (n - 1) / (max_rows - 1)) for k in range(max_rows)})
    )
    some = f", {len(shown)} of them shown: --csv or --json has every point" if n > max_rows else ""
    limited = sum(p.status != "optimal" for p in front.points)
    proven = ("each point proven optimal" if not limited else
              f"{limited} point{'s' if limited > 1 else ''} stopped at a limit: status limit, "
              "proven to the gap shown")
    t = Table(title=f"Time-cost Pareto front ({n} budgets, {proven}{some})",
              title_justify="left")
    rel = instance.relative_time  # (shares of hours: the hour-weighted ratio, no $ per ms)
    time_col = "hour-weighted ratio" if rel else "iteration ms"
    for col in ("#", "budget $", "cost $", time_col, "gap", "$ per ms"):
        t.add_column(col, justify="right")
    for d in range(instance.network.n_dims):
        t.add_column(f"bw[{d}] GB/s", justify="right")
    runs = [run_figures(instance, p.iteration_time_ns, p.network_cost_usd, bw_gbps=p.bw)
            for p in front.points]
    days = any(r.time_to_train_days is not None for r in runs)
    dollars = any(r.run_cost_usd is not None for r in runs)
    if days:  # (with a token budget: the run's days; with a [cluster] too: its $)
        t.add_column("days", justify="right")
    if dollars:
        t.add_column("$ per run", justify="right")
    t.caption = (
        "$ per ms: the budget row's dual at that point, what one more ms of iteration time "
        "saved costs "
        "(-: the budget does not bind, or the point is a hair above the cheapest network, "
        "solved without "
        "that row)"
        + ("; hour-weighted ratio: sum over the workloads of hours share x iteration time / own "
           "optimum (no $ per ms: the time is a ratio)" if rel else "")
    )
    left = dict.fromkeys(x for r in runs for x in r.left_out) if (days or dollars) else {}
    if left:  # (as solve's "left out:" line)
        t.caption += "; left out: " + "; ".join(left)
    for i in shown:
        p = front.points[i]
        t.add_row(
            str(i + 1),
            f"{p.budget_usd:,.0f}",
            f"{p.network_cost_usd:,.0f}",
            fmt_time(p.iteration_time_ns, rel),
            f"{p.gap:.1e}",
            "-" if p.usd_per_ms is None or rel else fmt_usd_per_ms(p.usd_per_ms),
            *(f"{b:,.3f}" if b >= 1e-3 or b == 0 else f"{b:.3g}" for b in p.bw),
            *([f"{runs[i].time_to_train_days:,.2f}"] if days else []),
            *([f"{runs[i].run_cost_usd:,.0f}"] if dollars else []),
        )
    return t


def front_end_words(front: Any) -> str:
    """Why the front's last point and the performance optimum (``front.fastest``) differ in cost,
    or "" when they do not: the optimum is flat (many designs equally fast), the solve returns one
    of them and the front ends at the cheapest of those as fast
    (:data:`hieropt.solvers.procurement.FASTEST_SLACK`: "; the front's last point (#10) is the
    cheapest of the designs as fast as that time: 1,166.5117 ms at $13,661,706, $1 less")."""
    from ..solvers.procurement import FASTEST_SLACK, equally_fast

    f = front.fastest
    if f is None or not front.points:
        return ""
    last = front.points[-1]
    near = last.iteration_time_ns <= f.iteration_time_ns * (1 + 2 * FASTEST_SLACK + 1e-12)
    if not near or round(last.network_cost_usd) == round(f.network_cost_usd):
        return ""
    less = round(f.network_cost_usd) - round(last.network_cost_usd)  # (of the printed figures)
    diff = f"${less:,.0f} less" if less > 0 else f"${-less:,.0f} more"
    return (
        f"; the front's last point (#{len(front.points)}) is the cheapest of the designs "
        f"{equally_fast('that time')}: {front_time(front, last.iteration_time_ns)} at "
        f"${last.network_cost_usd:,.0f}, {diff}"
    )


def front_lines(front: Any, notes: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The marked optima, notes (the front's, then ``notes``: the plan's caveats and calibration
    note, :func:`hieropt.report.run.front_notes`) and timing of a front."""
    f = front.fastest
    lines = (
        []
        if f is None
        else [
            f"fastest (performance optimum): {front_time(front, f.iteration_time_ns)} at "
            f"${f.network_cost_usd:,.0f}" + front_end_words(front)
        ]
    )
    b = front.best_per_cost
    if b is not None:
        lines.append(
            f"best performance per cost: {front_time(front, b.iteration_time_ns)} at "
            f"${b.network_cost_usd:,.0f} (time x cost {b.objective_value:.6g} "
            f"{'ratio' if front.time_unit == RELATIVE_UNIT else 'ns'} x $, gap {b.gap:.1e})"
        )
    lines += [f"note: {n}" for n in (*front.notes, *notes)]
    lines.append(
        f"front solved in {front.solve_seconds * 1e3:.0f} ms ({front.lps} LPs on one persistent LP)"
    )
    return lines


def front_time(front: Any, value: float) -> str:
    """A front's (weighted) time as text in its ``time_unit``: ``1,166.5117 ms``, or the
    hour-weighted ratio (:data:`hieropt.units.RELATIVE_UNIT`) of workloads weighted by shares of
    hours, never ms."""
    if getattr(front, "time_unit", "ns") == RELATIVE_UNIT:
        return fmt_relative(value)
    return f"{fmt_ms(value)} ms"




def _mapping_lines(instance: Instance) -> list[str]:
    """The group sizes per dimension of each workload's phases: one line, or one per workload
    (named) when several share the fabric; the instance's mapping note after the first."""
    jobs = instance.jobs
    out = []
    for i, job in enumerate(jobs):
        mp = job.mapping
        who = f" of {job.workload.name}" if len(jobs) > 1 else ""
        note = f" — {instance.mapping_note}" if i == 0 and instance.mapping_note else ""
        out.append(f"mapping{who} (group size per dimension): forward {list(mp.forward)}, "
                   f"input_grad {list(mp.input_grad)}, weight_grad {list(mp.weight_grad)}{note}")
    return out
