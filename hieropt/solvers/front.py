"""The exact time-cost Pareto front (:func:`pareto`): budgets from the cheapest feasible network to the fastest,
each point the fastest network within its budget, all on one persistent LP, every point re-verified."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..errors import InputError, NoSolutionError, SolverError
from ..model.timing import build_time_model
from ..result import Solution
from ..spec import Instance
from ..verify import verify
from .cutting import TimeLP
from .objectives import solve
from .procurement import FrontPoint, pareto_front

__all__ = ["Front", "pareto"]


@dataclass(frozen=True)
class Front:
    """A time-cost Pareto front.

    Attributes:
        points: budget-ascending :class:`FrontPoint` s (budget $, bw GB/s, iteration time ns, cost $, bound, gap).
        fastest: the performance optimum (a :class:`Solution`), or None without an upper limit on bandwidth.
        best_per_cost: the performance-per-cost optimum, or None when it does not exist (no bandwidth floor).
        notes: how the budget range was chosen.
        solve_seconds: wall time of the whole front, s.
        lps: LPs solved for the front points.
    """

    points: tuple[FrontPoint, ...]
    fastest: Solution | None
    best_per_cost: Solution | None
    notes: tuple[str, ...]
    solve_seconds: float
    lps: int


def pareto(instance: Instance, points: int = 50, time_limit_s: float = 60.0) -> Front:
    """The exact time-cost Pareto front: ``points`` budgets from the cheapest feasible network to the fastest,
    each point the fastest network within its budget (proven to 1e-8), all on one persistent LP.

    Raises:
        InputError: ``points`` < 2.
        NoSolutionError: infeasible constraints.
    """
    if points < 2:
        raise InputError("points", None, f"{points} points", "ask for at least 2 points")
    start = time.perf_counter()
    tm = build_time_model(instance)
    core = TimeLP(instance, tm, time_limit_s)
    try:
        front, notes = pareto_front(core, points)
    finally:
        core.close()
    for p in front:
        cert = verify(instance, p.bw)
        if not cert.ok or abs(cert.breakdown.iteration_time_ns - p.iteration_time_ns) > 1e-9 * p.iteration_time_ns:
            raise SolverError("independent verification of a front point failed: " + "; ".join(cert.problems))
    lps = core.lps
    seconds = time.perf_counter() - start
    try:
        fastest = solve(instance, objective="performance", time_limit_s=time_limit_s)
    except NoSolutionError as e:  # no upper limit on bandwidth: the front has no fastest end
        if e.kind != "unbounded":
            raise
        fastest = None
    try:
        best = solve(instance, objective="performance_per_cost", time_limit_s=time_limit_s)
    except NoSolutionError as e:
        best = None
        notes.append(f"no performance-per-cost optimum: {e}")
    return Front(tuple(front), fastest, best, tuple(notes), seconds, lps)
