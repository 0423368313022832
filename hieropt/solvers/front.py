"""The exact time-cost Pareto front (:func:`pareto`): each point the fastest network within its
budget (:func:`hieropt.solvers.procurement.fastest_design`) on one LP, every point re-verified;
from :data:`CHEAPEST_SLACK` above the cheapest network (:func:`_starved_start` when it starves a
loaded dimension) to the cheapest of the fastest networks (:func:`_tail_budget` without an upper
limit on bandwidth)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..cache import Cache, scoped
from ..errors import InputError, LimitReached, NoSolutionError, SolverError
from ..model.run import run_figures
from ..model.timing import build_time_model
from ..result import Solution, Status, freeze_arrays, results_equal
from ..spec import Instance
from ..spec.overrides import check_time_limit
from ..units import fmt_relative, objective_unit, usd_cents
from ..verify import verify
from .cost_range import below_cheapest, cheapest_vertex, no_design_by_rows
from .cutting import INF, REL_GAP, OAResult, TimeLP
from .near_cheapest import NEAR_SLACK
from .objectives import SolveOptions, solve
from .portfolio import hours_weighted
from .procurement import SUB_GAP, equally_fast, fastest_design, tie_break_target_ns

__all__ = ["Front", "FrontPoint", "SPACINGS", "pareto", "CHEAPEST_SLACK", "MAX_POINTS"]

SPACINGS = ("linear", "log")
"""How the budgets are spaced between the ends: evenly in $, or in log($)."""
TAIL_GAIN = 0.01
"""Without an upper limit on bandwidth the front ends where 4 x the budget saves less than this
share of the time."""
CHEAPEST_SLACK = 1e-6
"""Relative room of the cheapest point above the cheapest network's cost (at that cost the designs
are one face of the rows, met by the LPs to tolerance only)."""
STARVED_SLACKS = (CHEAPEST_SLACK, 1e-5, 1e-4, 1e-3, NEAR_SLACK)
"""Relative rooms above a cheapest network that starves a loaded dimension, tried in turn."""


@dataclass(frozen=True, eq=False)
class FrontPoint:
    """One point: the fastest network within ``budget_usd`` ($): ``bw`` ((D,) GB/s), its time (ns)
    and cost ($), the proven lower bound (ns), the gap and the ``status`` of its own solve
    (``optimal``, or ``limit``: stopped by a time limit at the proven ``gap``). ``==`` compares
    every field, ``bw`` element-wise (:func:`hieropt.result.results_equal`); unhashable."""

    budget_usd: float
    bw: np.ndarray
    iteration_time_ns: float
    network_cost_usd: float
    lower_bound_ns: float
    gap: float
    status: Status
    usd_per_ms: float | None = None
    """The budget row's dual as $ per ms; None when the budget does not bind or the point was solved
    a hair above the cheapest network (no budget row)."""

    def __post_init__(self) -> None:
        freeze_arrays(self, "bw")

    __eq__ = results_equal
    __hash__ = None  # type: ignore[assignment]  # (its arrays are unhashable)


@dataclass(frozen=True, eq=False)
class Front:
    """A time-cost Pareto front: budget-ascending ``points``; ``fastest`` the performance optimum
    (None without an upper limit on bandwidth); ``best_per_cost`` the performance-per-cost
    optimum (None without a bandwidth floor); ``notes``; ``solve_seconds`` (s) and ``lps``;
    ``time_unit`` of the points' times: ``"ns"``, or :data:`hieropt.units.RELATIVE_UNIT` for
    shares of hours. ``==`` compares every field but the wall time ``solve_seconds`` (two
    computations of one front are equal), the points' and optima's arrays element-wise
    (:func:`hieropt.result.results_equal`); unhashable."""

    points: tuple[FrontPoint, ...]
    fastest: Solution | None
    best_per_cost: Solution | None
    notes: tuple[str, ...]
    solve_seconds: float = field(compare=False)
    lps: int
    time_unit: str = "ns"

    __eq__ = results_equal
    __hash__ = None  # type: ignore[assignment]  # (its points' arrays are unhashable)

    def to_dict(self, instance: Instance) -> dict[str, Any]:
        """JSON-ready front of ``instance`` as ``hieropt pareto --json`` writes it, but what the
        command adds (:func:`hieropt.report.dicts.front_dict`: each ``run``'s error band, the plan's
        caveats and the calibration note)."""
        def point(p: FrontPoint) -> dict[str, Any]:
            fig = run_figures(instance, p.iteration_time_ns, p.network_cost_usd, bw_gbps=p.bw)
            gap = float(p.gap) if p.gap is not None and math.isfinite(p.gap) else None
            return {"run": None if fig is None else fig.to_dict(), "budget_usd": p.budget_usd,
                    "network_cost_usd": p.network_cost_usd,
                    "iteration_time_ns": p.iteration_time_ns, "lower_bound_ns": p.lower_bound_ns,
                    "gap": gap, "status": p.status.value,
                    "bw_gbps_per_dim": [float(x) for x in p.bw],
                    # (shares of hours: the time is a ratio, not ms; its dual is left out)
                    "usd_per_ms": None if instance.relative_time else p.usd_per_ms}

        unit = objective_unit("performance", instance.relative_time)
        best = self.best_per_cost
        return {
            "units": {"bw": "GB/s per NPU per dimension (1 GB = 1e9 bytes)", "time": unit,
                      "cost": "USD"},
            "objective_unit": unit,
            "points": [point(p) for p in self.points],
            "fastest": self.fastest.to_dict(instance) if self.fastest else None,
            "best_per_cost": best.to_dict(instance) if best else None,
            "notes": list(self.notes), "solve_seconds": self.solve_seconds, "lps": self.lps,
            "instance": instance.summary_dict(),
        }


MAX_POINTS = 100_000
"""The most points a front may ask for (each an exact solve and a verification, about 1 ms)."""


@scoped
def pareto(instance: Instance, points: int = 50, time_limit_s: float = 60.0,
           spacing: str = "linear", progress: Callable[[int, int], None] | None = None, *,
           cache: Cache | None = None) -> Front:
    """The exact time-cost Pareto front of ``instance`` at ``points`` (>= 2) budgets, each proven to
    1e-8.

    Args:
        time_limit_s: time limit of each LP, s.
        spacing: ``"linear"`` or ``"log"`` (:data:`SPACINGS`; linear with a note when the
            cheapest network costs $0).
        progress: called as ``progress(done, points)`` after each budget.
        cache: the memo tables the solves share (default: a new one).

    Raises:
        InputError: ``points`` not a whole number from 2 to :data:`MAX_POINTS`, or an unknown
            ``spacing``.
        NoSolutionError: infeasible constraints, or rows that force zero bandwidth on a
            dimension that carries traffic (the reason :func:`hieropt.solve` gives).
        SolverError: a point failed verification (:class:`hieropt.errors.LimitReached`: an LP's
            time limit before any design or bound)."""
    if isinstance(points, bool) or not isinstance(points, int | np.integer):
        raise InputError("points", None, f"{points!r} is not a whole number",
                         "ask for a number of points >= 2")
    if points < 2:
        raise InputError("points", None, f"{points} point{'' if points == 1 else 's'} asked for "
                         "(a front has two ends)", "ask for at least 2 points")
    if points > MAX_POINTS:
        raise InputError("points", None, f"{points:,} points asked for, above {MAX_POINTS:,} "
                         "(each an exact solve and a verification, about 1 ms: minutes to hours)",
                         f"ask for at most {MAX_POINTS:,} points (a front's shape needs far fewer)")
    time_limit_s = check_time_limit(time_limit_s)
    if spacing not in SPACINGS:
        raise InputError("spacing", None, f"unknown spacing {spacing!r}",
                         f"use one of {', '.join(SPACINGS)}")
    start = time.perf_counter()
    instance, hours_note = hours_weighted(instance, time_limit_s)  # (as solve)
    tm = build_time_model(instance)
    # (as solve: rows that cannot hold, or no bandwidth where traffic goes, before any budget)
    no_design_by_rows(instance, np.flatnonzero(tm.carries_traffic), time_limit_s)
    options = SolveOptions(time_limit_s=time_limit_s)
    floor = None  # (the cheapest network that meets the instance's time target, $)
    if instance.max_iteration_time_ns is not None:
        floor = solve(instance, "min_cost", options=options).raise_for_status().network_cost_usd
    with closing(TimeLP(instance, tm, time_limit_s)) as core:
        front, notes = _points(core, points, SUB_GAP, spacing, progress, floor)
    try:  # (the design solve prints: the cheapest of the equally fast ones)
        fastest = solve(instance, "performance",
                        options=replace(options, cheapest_design=True)).raise_for_status()
    except NoSolutionError as e:  # no upper limit on bandwidth: the front has no fastest end
        if e.kind != "unbounded":
            raise
        fastest = None
    last = front[-1] if fastest is not None and front else None
    if last is not None and not fastest.network_cost_usd > last.budget_usd * (1 + 1e-6):
        # the last point is the design ``hieropt solve`` prints (else the front was cut below it)
        front[-1] = FrontPoint(max(last.budget_usd, fastest.network_cost_usd),
                               np.asarray(fastest.bw_gbps, dtype=float), fastest.iteration_time_ns,
                               fastest.network_cost_usd,
                               min(fastest.objective_bound, fastest.iteration_time_ns),
                               fastest.gap, fastest.status, last.usd_per_ms)
    for p in front:  # (as a solve's design: the rows, its budget, its time)
        cert = verify(instance, p.bw, p.iteration_time_ns, budget_usd=p.budget_usd,
                      target_ns=instance.max_iteration_time_ns)
        if not cert.ok:
            raise SolverError("independent verification of a front point failed: "
                              + "; ".join(cert.problems))
    seconds = time.perf_counter() - start
    try:
        best = solve(instance, "performance_per_cost", options=options).raise_for_status()
    except NoSolutionError as e:
        best = None
        notes.append(f"no performance-per-cost optimum: {e}")
    unit = objective_unit("performance", instance.relative_time)
    return Front(tuple(front), fastest, best, tuple(notes) + hours_note, seconds, core.lps, unit)


def _points(core: TimeLP, points: int, rel_gap: float, spacing: str,
            progress: Callable[[int, int], None] | None,
            floor: float | None = None) -> tuple[list[FrontPoint], list[str]]:
    """The front's points (budget ascending) and notes on how its ends were chosen: within the
    instance's ``max_network_cost_usd`` (the last budget at most it) and, with its time target,
    from ``floor`` ($, the cheapest network that meets the target; each point meets it)."""
    notes: list[str] = []
    core.cost_range()  # (infeasible rows are reported as such)
    vertex = cheapest_vertex(core.instance, core.solver.time_limit_s)
    k_min, cheapest = vertex.cost_usd, vertex.bw_gbps
    cap, target_ns = core.instance.max_network_cost_usd, core.instance.max_iteration_time_ns
    if cap is not None and cap < k_min * (1 - 1e-9):
        raise below_cheapest(cap, k_min)  # (as solve says)
    k_hi = _fastest_end(core, k_min, rel_gap, cap, notes)
    k_lo, first = k_min * (1 + CHEAPEST_SLACK), None
    starts_starved = not np.isfinite(core.tm.time_ns(cheapest))
    if starts_starved:
        k_lo, first = _starved_start(core, k_min, k_hi, rel_gap)
        starved = (f"the cheapest feasible network (${usd_cents(k_min, up=True)}) leaves a "
                   "dimension that carries "
                   "traffic without bandwidth")
        if first is not None:
            room = (f"{k_lo / k_min - 1:.0e} above it" if k_min > 0 else
                    f"at {k_lo / k_hi:.0e} of the fastest network's cost")
            notes.insert(0, f"{starved}: the front starts {room} (${usd_cents(k_lo, up=False)}), "
                         "where that dimension has only the bandwidth the difference buys")
        else:
            notes.insert(0, f"{starved}, and no budget up to {NEAR_SLACK:g} above it has a "
                         "certified optimum; the front starts at 1% of the way to the fastest "
                         f"network (${usd_cents(k_lo, up=False)})")
    if floor is not None and floor * (1 + CHEAPEST_SLACK) > k_lo:  # (slower points miss it)
        if starts_starved:
            notes.pop(0)  # (the starved start's note: the front no longer starts there)
        k_lo, first = min(floor * (1 + CHEAPEST_SLACK), k_hi), None
        t = (fmt_relative(target_ns) if core.instance.relative_time
             else f"{target_ns:,.1f} ns")
        notes.insert(0, f"the front starts at the cheapest network that meets the instance's "
                     f"time target {t} (max_iteration_time_ns; ${usd_cents(floor, up=True)}): "
                     f"{CHEAPEST_SLACK:.0e} above it (${usd_cents(k_lo, up=False)}); every "
                     "point meets the target")
    if cap is not None and k_lo > cap:  # (a budget a hair above the cheapest network)
        k_lo, first = cap, None
    k_hi = max(k_hi, k_lo)  # (the constraints may fix the cost: the ends differ by round-off)
    if spacing == "log" and not k_lo > 0:
        notes.append("log spacing needs a cheapest network that costs more than $0: the budgets "
                     "are spaced evenly")
        spacing = "linear"
    if spacing == "log":
        budgets = np.geomspace(k_lo, k_hi, points)
        budgets[0], budgets[-1] = k_lo, k_hi  # (the ends exactly, not as exp(log(.)))
    else:
        budgets = np.linspace(k_lo, k_hi, points)
    out = []
    for i, kappa in enumerate(budgets):
        res = first if i == 0 and first is not None else fastest_design(core, rel_gap, float(kappa))
        dual = getattr(res, "budget_dual_ns_per_usd", 0.0)  # (0: the budget row does not bind)
        out.append(FrontPoint(float(kappa), res.bw, res.upper, core.network_cost(res.bw),
                              min(res.lower, res.upper), res.gap, res.status,
                              1e6 / abs(dual) if dual < 0 else None))
        if progress is not None:
            progress(i + 1, len(budgets))
    return out, notes


def _fastest_end(core: TimeLP, k_min: float, rel_gap: float, cap: float | None,
                 notes: list[str]) -> float:
    """The front's last budget ($): the cheapest of the fastest networks, the instance's budget
    ``cap`` when lower, or without an upper limit on bandwidth ``cap`` or :func:`_tail_budget`; its
    note appended to ``notes``."""
    try:
        fastest = core.min_time(rel_gap)
    except NoSolutionError as e:
        if e.kind != "unbounded":
            raise
        if cap is not None:  # (the budget ends the front)
            k_hi = cap
            notes.append(f"no upper limit on bandwidth: the front ends at the instance's budget "
                         f"${usd_cents(cap, up=False)} (max_network_cost_usd)")
        else:
            k_hi = _tail_budget(core, k_min, rel_gap)
            notes.append(f"no upper limit on bandwidth: the front has no fastest end and is cut "
                         f"at ${usd_cents(k_hi, up=False)}, where 4 x the budget saves less than "
                         f"{TAIL_GAIN:.0%} of the iteration time (or at about 1e6 x the cheapest "
                         "network)")
    else:
        target = tie_break_target_ns(fastest.upper, fastest.lower, REL_GAP,
                                     core.instance.max_iteration_time_ns)
        k_hi = core.min_cost(target, fastest.bw, rel_gap).upper
        least = (fmt_relative(fastest.upper) if core.instance.relative_time
                 else f"{fastest.upper:,.1f} ns")
        if cap is not None and cap < k_hi:
            notes.append(f"the front ends at the instance's budget ${usd_cents(cap, up=False)} "
                         "(max_network_cost_usd): its last point is the fastest network within "
                         f"it; without the budget the fastest takes {least} at "
                         f"${usd_cents(k_hi, up=True)}")
            k_hi = cap
        else:
            notes.append(f"the fastest point is the cheapest of the networks "
                         f"{equally_fast('the minimum time ' + least)}")
    return k_hi


def _starved_start(core: TimeLP, k_min: float, k_hi: float,
                   rel_gap: float) -> tuple[float, OAResult | None]:
    """The first budget :data:`STARVED_SLACKS` above a starving cheapest network (of ``k_hi`` when
    it costs $0) with a certified fastest design, and that design; else 1 % of the way to
    ``k_hi`` and None."""
    for slack in STARVED_SLACKS:
        budget = k_min * (1 + slack) if k_min > 0 else k_hi * slack
        if budget >= k_hi:
            break
        try:
            res = fastest_design(core, rel_gap, budget)
        except LimitReached:  # (a time limit is the answer's: no design, the gap unknown)
            raise
        except (NoSolutionError, SolverError):
            continue
        if res.status is Status.OPTIMAL:
            return budget, res
    return k_min + 0.01 * (k_hi - k_min), None


def _tail_budget(core: TimeLP, k_min: float, rel_gap: float) -> float:
    """The right end without an upper limit on bandwidth: the first budget 4^j x kappa_0 (twice the
    cheapest network, or $1), j <= 10, beyond which 4 x the budget saves less than :data:`TAIL_GAIN`
    of the time."""
    kappa = 2.0 * k_min if k_min > 0 else 1.0
    prev = None
    for _ in range(11):
        try:
            t = fastest_design(core, rel_gap, kappa).upper
        except NoSolutionError:  # a loaded dimension still without bandwidth: spend more
            t = INF
        except SolverError as e:  # (the budgets have grown beyond what the LPs resolve: the end)
            if prev is None or isinstance(e, LimitReached):
                raise
            return prev[0]
        if prev is not None and prev[1] - t < TAIL_GAIN * t:
            return prev[0]
        prev = (kappa, t)
        kappa *= 4.0
    return prev[0]
