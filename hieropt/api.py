"""The library facade: load, solve, evaluate, verify, pareto. Each call runs the one-way flow
read -> validate -> traffic/time model -> formulate -> solve -> verify, with no state kept between calls."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .catalog import Catalog
from .errors import InputError, NoSolutionError, SolverError
from .io.catalog import read_catalog as load_catalog
from .io.instance import load_instance, load_libra
from .result import Solution, Status
from .solvers.cutting import REL_GAP, OAResult, TimeLP
from .solvers.procurement import PPC_GAP, FrontPoint, min_time_cost_product, pareto_front
from .solvers.provision import Provisioning, provision
from .spec import OBJECTIVES, Instance
from .timing import Breakdown, TimeModel, build_time_model, evaluate
from .verify import Certificate, verify

MIN_REL_GAP = 5e-9
"""Smallest relative gap :func:`solve` accepts (the cutting-plane loop stalls near 2.5e-9 with 1e-9 LP tolerances)."""

__all__ = ["load_instance", "load_libra", "solve", "evaluate", "verify", "pareto", "Solution", "Breakdown",
           "Certificate", "Front"]
__all__ += ["provision", "load_catalog", "Catalog", "Provisioning"]

_METHOD = {
    "performance": "outer approximation (Kelley cutting planes) on a persistent HiGHS LP",
    "min_cost": "outer approximation (Kelley cutting planes) on a persistent HiGHS LP, feasible points by "
                "convex combination with the fastest network",
    "performance_per_cost": "branch and bound on the cost level kappa with LP-dual tangent bounds; each f(kappa) "
                            "by cutting planes on one persistent HiGHS LP",
}
_UNIT = {"performance": "ns", "min_cost": "USD", "performance_per_cost": "ns*USD"}


def _with_overrides(instance: Instance, objective: str | None, max_iteration_time_ns: float | None,
                    max_network_cost_usd: float | None) -> Instance:
    update = {k: v for k, v in (("objective", objective), ("max_iteration_time_ns", max_iteration_time_ns),
                                ("max_network_cost_usd", max_network_cost_usd)) if v is not None}
    if not update:
        return instance
    for name, v in (("max_iteration_time_ns", max_iteration_time_ns), ("max_network_cost_usd", max_network_cost_usd)):
        if v is not None and not (v > 0 and v < float("inf")):
            raise InputError(name, None, f"{v!r} is not a positive number", "give a positive, finite value")
    if objective is not None and objective not in OBJECTIVES:
        raise InputError("objective", None, f"unknown objective {objective!r}", f"use one of {', '.join(OBJECTIVES)}")
    out = instance.model_copy(update=update)
    if out.objective == "min_cost" and out.max_iteration_time_ns is None:
        raise InputError("max_iteration_time_ns", None, "missing for objective min_cost",
                         "give the iteration-time target in ns (--max-time-ns)")
    return out


def _fastest(core: TimeLP, instance: Instance, rel_gap: float) -> OAResult:
    """The performance optimum under the instance's budget (and its time target as a feasibility check)."""
    res = core.min_time(rel_gap, budget_usd=instance.max_network_cost_usd)
    target = instance.max_iteration_time_ns
    if target is not None and res.lower > target:
        raise NoSolutionError("infeasible", f"time target {target:,.1f} ns: fastest possible is {res.upper:,.1f} ns"
                              + (f" within the budget ${instance.max_network_cost_usd:,.0f}"
                                 if instance.max_network_cost_usd is not None else ""))
    if target is not None and res.upper > target:
        raise NoSolutionError("infeasible", f"time target {target:,.1f} ns is within the optimality gap of the "
                              f"fastest possible time {res.upper:,.1f} ns (proven >= {res.lower:,.1f} ns)")
    return res


def _min_cost(core: TimeLP, instance: Instance, rel_gap: float) -> OAResult:
    fastest = _fastest(core, instance, min(rel_gap, REL_GAP))
    return core.min_cost(instance.max_iteration_time_ns, fastest.bw, rel_gap, instance.max_network_cost_usd)


def _product(core: TimeLP, instance: Instance, rel_gap: float):
    floor = None
    if instance.max_iteration_time_ns is not None:  # time <= target  <=>  cost >= the cheapest network meeting it
        floor = _min_cost(core, instance, REL_GAP).lower
    return min_time_cost_product(core, rel_gap, budget_usd=instance.max_network_cost_usd, kappa_floor=floor)


def solve(instance: Instance, objective: str | None = None, rel_gap: float | None = None,
          time_limit_s: float = 60.0, max_iteration_time_ns: float | None = None,
          max_network_cost_usd: float | None = None) -> Solution:
    """Solve ``instance`` for its objective (or ``objective``) and return a verified :class:`Solution`.

    Args:
        instance: a validated instance (see :func:`load_instance`, :func:`load_libra`).
        objective: overrides the instance's: ``"performance"`` (min iteration time, ns), ``"min_cost"`` (cheapest
            network, $, with iteration time <= ``max_iteration_time_ns``), ``"performance_per_cost"`` (min time x
            cost, ns * $, global).
        rel_gap: target relative optimality gap, in [5e-9, 1); default 1e-8 (1e-7 for performance_per_cost).
        time_limit_s: time limit of each LP solve, s.
        max_iteration_time_ns: overrides the instance's time target (ns).
        max_network_cost_usd: overrides the instance's budget ($); with ``performance``: the fastest network within
            the budget.

    Returns:
        A :class:`Solution`; ``status`` is OPTIMAL when the gap target was met, LIMIT otherwise.

    Raises:
        InputError: ``rel_gap`` outside [5e-9, 1), an unknown objective, or min_cost without a time target.
        NoSolutionError: infeasible constraints, budget or time target ("fastest possible is ... ns"), no upper
            limit on bandwidth, or (performance_per_cost) no floor on bandwidth (exit code 3).
        SolverError: HiGHS failed, or the independent evaluator disagrees with the solver (exit code 3).
    """
    instance = _with_overrides(instance, objective, max_iteration_time_ns, max_network_cost_usd)
    obj = instance.objective
    gap = rel_gap if rel_gap is not None else (PPC_GAP if obj == "performance_per_cost" else REL_GAP)
    if not MIN_REL_GAP <= gap < 1:
        raise InputError("rel_gap", None, f"relative gap {gap:g} is outside [{MIN_REL_GAP:g}, 1)",
                         f"ask for a gap of at least {MIN_REL_GAP:g}: HiGHS's 1e-9 LP tolerances put the floor there")
    start = time.perf_counter()
    tm = build_time_model(instance)
    core = TimeLP(instance, tm, time_limit_s)
    extra: dict = {}
    try:
        if obj == "performance":
            res = _fastest(core, instance, gap)
        elif obj == "min_cost":
            res = _min_cost(core, instance, gap)
        else:
            res = _product(core, instance, gap)
            extra.update(kappa_evaluations=res.evaluations, kappa_nodes=res.nodes,
                         kappa_range_usd=[float(k) for k in res.kappa_range])
    finally:
        core.close()
    return _verified(instance, tm, core, res, obj, start, extra)


def _verified(instance: Instance, tm: TimeModel, core: TimeLP, res, obj: str, start: float, extra: dict) -> Solution:
    """Re-check the solver's point with the independent evaluator and package the :class:`Solution`."""
    cert = verify(instance, res.bw)
    if not cert.ok:
        raise SolverError("independent verification failed: " + "; ".join(cert.problems))
    bd = cert.breakdown
    value = {"performance": bd.iteration_time_ns, "min_cost": bd.network_cost_usd,
             "performance_per_cost": bd.iteration_time_ns * bd.network_cost_usd}[obj]
    if abs(value - res.upper) > 1e-9 * abs(value):
        raise SolverError(f"independent verification failed: the solver reports {res.upper:.12g} {_UNIT[obj]} but "
                          f"the evaluator gives {value:.12g}")
    problems = []
    target = instance.max_iteration_time_ns
    if target is not None and bd.iteration_time_ns > target * (1 + 1e-9):
        problems.append(f"iteration time {bd.iteration_time_ns:.12g} ns exceeds the target")
    if instance.max_network_cost_usd is not None and bd.network_cost_usd > instance.max_network_cost_usd * (1 + 1e-9):
        problems.append(f"network cost ${bd.network_cost_usd:.12g} exceeds the budget")
    if problems:
        raise SolverError("independent verification failed: " + "; ".join(problems))
    notes = tuple(
        f"dimension {d} carries no traffic: its bandwidth ({res.bw[d]:.6g} GB/s) is whatever the constraints allow; "
        "any feasible value is equally good"
        for d in np.flatnonzero(~tm.carries_traffic)
    )
    bound = min(res.lower, value)
    extra.update(cuts=core.cuts, terms=int(tm.terms_bytes.shape[0]), collectives=tm.n_collectives)
    return Solution(
        status=Status.OPTIMAL if res.status is Status.OPTIMAL else res.status,
        message=res.message,
        objective=obj,
        bw_gbps=res.bw,
        iteration_time_ns=bd.iteration_time_ns,
        network_cost_usd=bd.network_cost_usd,
        objective_value=value,
        objective_bound=bound,
        objective_unit=_UNIT[obj],
        lower_bound_ns=bound if obj == "performance" else None,
        gap=max(0.0, (value - bound) / value) if value > 0 else 0.0,
        iterations=core.lps,
        solve_seconds=time.perf_counter() - start,
        breakdown=bd,
        method=_METHOD[obj],
        notes=notes,
        extra=extra,
    )


@dataclass(frozen=True)
class Front:
    """A time-cost Pareto front.

    Attributes:
        points: budget-ascending :class:`FrontPoint` s (budget $, bw GB/s, iteration time ns, cost $, bound, gap).
        fastest: the performance optimum (a :class:`Solution`).
        best_per_cost: the performance-per-cost optimum, or None when it does not exist (no bandwidth floor).
        notes: how the budget range was chosen.
        solve_seconds: wall time of the whole front, s.
        lps: LPs solved for the front points.
    """

    points: tuple[FrontPoint, ...]
    fastest: Solution
    best_per_cost: Solution | None
    notes: tuple[str, ...]
    solve_seconds: float
    lps: int


def pareto(instance: Instance, points: int = 50, time_limit_s: float = 60.0) -> Front:
    """The exact time-cost Pareto front: ``points`` budgets from the cheapest feasible network to the fastest,
    each point the fastest network within its budget (proven to 1e-8), all on one persistent LP.

    Raises:
        InputError: ``points`` < 2.
        NoSolutionError: infeasible or unbounded constraints.
    """
    if points < 2:
        raise InputError("--points", None, f"{points} points", "ask for at least 2 points")
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
    fastest = solve(instance, objective="performance", time_limit_s=time_limit_s)
    try:
        best = solve(instance, objective="performance_per_cost", time_limit_s=time_limit_s)
    except NoSolutionError as e:
        best = None
        notes.append(f"no performance-per-cost optimum: {e}")
    return Front(tuple(front), fastest, best, tuple(notes), seconds, lps)
