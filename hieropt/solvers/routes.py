"""The routes of :func:`hieropt.solvers.objectives.solve` (:data:`ROUTES`; decision record 0009),
each ending in the same certificate, :func:`verified`."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InputError, NoSolutionError, SolverError
from ..formulation.rate import single_term
from ..model.cost import cluster_cost_usd_per_gbps, ignored_price_notes
from ..model.cutmodel import CutModel
from ..model.run_cost import run_cost_terms
from ..model.timing import TimeModel
from ..result import Solution, Status
from ..spec import Instance
from ..units import OBJECTIVE_UNITS, implausible_bw_notes, objective_unit
from ..verify import verify
from .cutting import REL_GAP
from .near_product import NEAR_PRODUCT_METHOD, near_cheapest_product
from .outcome import OAResult, relative_gap
from .procurement import (
    Counts,
    against_target,
    cheapest_meeting,
    fastest_once,
    fastest_then_cheapest,
    min_time_cost_product,
    tie_break_target_ns,
)
from .ratio import BOUND_SLACK
from .routing import Route
from .single_term import METHOD as SINGLE_TERM_METHOD
from .single_term import fastest_single_term

__all__ = ["Case", "ROUTES", "ROUTED_OBJECTIVES", "verified", "METHODS", "UNITS",
           "REGRET_COST_METHOD"]

METHODS = {
    "performance": "outer approximation (Kelley cutting planes) on one LP (DAQP while small, then "
    "HiGHS)",
    "min_cost": "outer approximation (Kelley cutting planes) on one LP (DAQP while small, then "
    "HiGHS), feasible points by convex combination with the fastest network",
    "performance_per_cost": "one convex LP in cost-share variables (time x cost made linear by "
    "Charnes-Cooper homogenisation), Kelley cutting planes on one LP (DAQP while small, then "
    "HiGHS)",
    "min_max_regret": "each workload's own optimum, then min z with T_w(B) <= z T_w* for every "
    "workload by cutting planes on one persistent HiGHS LP (every workload's epigraph on the "
    "shared t = 1/B), the bound from the performance optimum of the mix weighted by its regret "
    "rows' duals",
    "min_run_cost": "one convex LP in cost-share variables with the cluster's fixed cost as a "
    "fixed term (run time x (fixed + network cost), Charnes-Cooper homogenisation), Kelley cutting "
    "planes on one LP",
}
"""How each objective is solved (a :class:`Solution`'s ``method``), by the names of
:data:`hieropt.names.OBJECTIVES`."""
REGRET_COST_METHOD = (
    "each workload's own optimum and the min-max-regret optimum, then the cheapest network with "
    "T_w(B) <= (1 + max_regret) T_w* for every workload by cutting planes, the bound from the "
    "cheapest network under the dual-weighted sum of those rows"
)
"""The ``method`` of min_cost with ``max_regret``."""
UNITS = OBJECTIVE_UNITS
"""Unit of each objective's value with plain weights (:func:`hieropt.units.objective_unit`)."""


_GAP_TEXT = re.compile(r"proven relative gap (?:[0-9.]+(?:e[-+]?[0-9]+)?|inf)")
"""The gap a loop's message states ("... at proven relative gap 9.13e-08 (...)")."""


def verified(instance: Instance, tm: TimeModel, counts: Counts, res, obj: str, start: float,
             extra: dict, value: float | None = None, method: str | None = None) -> Solution:
    """Re-check the solver's point ``res`` (with ``bw``, ``upper``, ``lower``, ``status``,
    ``message``) by the independent evaluator and package the :class:`Solution` of objective
    ``obj``; a bandwidth within 1e-12 of the value the rows fix is that value
    (:meth:`hieropt.spec.design.DesignMatrix.on_fixed`).

    Args:
        instance, tm: the problem and its time model; counts: LPs and cuts; start:
            ``time.perf_counter()`` at the start; extra: statistics (updated in place).
        value: the objective re-evaluated elsewhere (portfolios); method: when not
            :data:`METHODS`'s.

    Raises:
        SolverError: the evaluator finds the point infeasible or its value more than 1e-9
            (relative) from the solver's. A bound above the value by more than
            :data:`BOUND_SLACK` is no certificate: the Solution is then LIMIT with the safe
            bound 0."""
    bw = instance.design_matrix.on_fixed(res.bw)  # (round-off off a bandwidth the rows fix)
    cert = verify(instance, bw, target_ns=instance.max_iteration_time_ns,
                  budget_usd=instance.max_network_cost_usd)
    if not cert.ok:
        raise SolverError("independent verification failed: " + "; ".join(cert.problems))
    bd = cert.breakdown
    if value is None and obj == "min_run_cost":
        value = run_cost_terms(instance).value(bd.iteration_time_ns, bd.network_cost_usd)
    elif value is None:
        value = {"performance": bd.iteration_time_ns, "min_cost": bd.network_cost_usd,
                 "performance_per_cost": bd.iteration_time_ns * bd.network_cost_usd}[obj]
    if abs(value - res.upper) > 1e-9 * abs(value):
        raise SolverError(
            f"independent verification failed: the solver reports {res.upper:.12g} {UNITS[obj]} "
            f"but the evaluator gives {value:.12g}"
        )
    notes = tuple(
        f"dimension {d} carries no traffic: its bandwidth ({bw[d]:.6g} GB/s) is whatever "
        "the constraints allow; any feasible value is equally good"
        for d in np.flatnonzero(~tm.carries_traffic)
    ) + implausible_bw_notes(bw, tm.carries_traffic) + ignored_price_notes(instance)
    status, message = res.status, res.message
    if res.lower > value * (1 + BOUND_SLACK):  # the bound contradicts the verified answer
        status, bound = Status.LIMIT, 0.0
        message = (
            f"not certified: the loop's bound {res.lower:.12g} {UNITS[obj]} is above the "
            f"verified value of its answer, {value:.12g}; the design is feasible, its optimality "
            "is not proven (the only safe bound is 0)"
        )
    else:
        bound = min(res.lower, value)
    gap = relative_gap(value, bound)
    # (a loop's message states its gap before the evaluator's value: restated)
    message = message and _GAP_TEXT.sub(f"proven relative gap {gap:.3g}", message)
    extra.update(cuts=counts.cuts, terms=int(tm.terms_bytes.shape[0]), collectives=tm.n_collectives)
    return Solution(
        status=status, message=message, objective=obj, bw_gbps=bw,
        iteration_time_ns=bd.iteration_time_ns, network_cost_usd=bd.network_cost_usd,
        objective_value=value, objective_bound=bound,
        objective_unit=objective_unit(obj, instance.relative_time, extra.get("run_cost_per")),
        lower_bound_ns=bound if obj == "performance" else None, gap=gap, iterations=counts.lps,
        solve_seconds=time.perf_counter() - start, breakdown=bd, method=method or METHODS[obj],
        notes=notes, extra=extra, instance=instance)


@dataclass(frozen=True)
class Case:
    """One solve after the overrides: ``instance`` (objective, targets, plain weights), its time
    model ``tm`` (dense, or :class:`hieropt.model.cutmodel.CutModel` for a large plain
    performance solve), ``rel_gap``, ``time_limit_s`` (s, of each LP), ``start``
    (``time.perf_counter()``) and whether ``sensitivity`` was asked."""

    instance: Instance
    tm: TimeModel
    rel_gap: float
    time_limit_s: float = 60.0
    start: float = 0.0
    sensitivity: bool = False

    @property
    def objective(self) -> str:
        """The instance's objective (a name of :data:`hieropt.names.OBJECTIVES`)."""
        return self.instance.objective


def portfolio_objectives(case: Case) -> Solution:
    """Route ``portfolio`` (:mod:`hieropt.solvers.portfolio`): own optima, min-max regret, then
    (target form) the cheapest network within the regret; the Solution carries the portfolio
    table.

    Raises:
        NoSolutionError: no fabric keeps every workload within ``max_regret``; infeasible or
            unbounded.
        SolverError: a workload's slowdown exceeds ``max_regret`` on the answer."""
    from .portfolio import min_cost_within_regret, min_max_regret, own_optima, portfolio_of

    instance, gap, limit = case.instance, case.rel_gap, case.time_limit_s
    optima = own_optima(instance, min(gap, REL_GAP), limit)
    regret = min_max_regret(instance, optima, min(gap, REL_GAP), limit)
    lps = sum(r.iterations for r in optima) + regret.iterations
    extra = {"own_optima_ns": [r.upper for r in optima],
             "own_optima_gap": max(r.gap for r in optima)}
    if instance.objective == "min_max_regret":
        res, obj = regret, "min_max_regret"
    else:
        res = min_cost_within_regret(instance, optima, instance.max_regret, regret, gap, limit)
        obj = "min_cost"
        lps += res.iterations
    pf = portfolio_of(instance, res.bw, optima, instance.max_regret)
    value = pf.worst_ratio if obj == "min_max_regret" else None
    cap = instance.max_regret
    if cap is not None and pf.worst_ratio > (1 + cap) * (1 + 1e-9):
        raise SolverError(
            f"independent verification failed: a workload is {pf.worst_ratio - 1:.6g} slower "
            f"than its own optimum, above max_regret {instance.max_regret:g}"
        )
    method = REGRET_COST_METHOD if obj == "min_cost" else None
    sol = verified(instance, case.tm, Counts(lps=lps), res, obj, case.start, extra, value, method)
    notes = ("sensitivity: not computed for the portfolio objectives (each workload's regret "
             "is in the portfolio table)",) if case.sensitivity else ()
    return replace(sol, portfolio=pf, solve_seconds=time.perf_counter() - case.start,
                   notes=sol.notes + notes)


def is_single_term(case: Case) -> bool:
    """Whether ``case`` is ``performance`` on a time model of one collective term."""
    tm = case.tm
    return case.objective == "performance" and case.instance.memo(
        "_single_term", (tm,), lambda: single_term(tm)) is not None


def single_term_rate(case: Case) -> Solution | None:
    """Route ``single_term_rate`` (decision record 0004); None (declines) when the LP is not optimal
    or misses the gap target.

    Raises:
        NoSolutionError: the time target is below the optimum (or within its gap)."""
    inst = case.instance
    budget, target = inst.max_network_cost_usd, inst.max_iteration_time_ns
    res = fastest_single_term(inst, case.tm, case.rel_gap, budget, case.time_limit_s)
    if res is None:
        return None
    res = against_target(res, target, budget)
    return verified(inst, case.tm, Counts(lps=res.iterations), res, "performance", case.start,
                    {}, method=SINGLE_TERM_METHOD)


def fastest_by_cutting_planes(case: Case) -> Solution:
    """Route ``fastest_cutting_planes`` (decision records 0001, 0008):
    :func:`hieropt.solvers.procurement.fastest_once`.

    Raises:
        NoSolutionError: infeasible, unbounded, or a time target below (or within the gap of)
            the optimum."""
    inst, counts, extra = case.instance, Counts(), {}
    res, tm = fastest_once(inst, case.tm, case.rel_gap, case.time_limit_s, counts)
    if isinstance(tm, CutModel):
        extra.update(time_model="cutting planes on T", time_pieces=len(tm.pieces))
    return verified(inst, case.tm, counts, res, "performance", case.start, extra)


def cheapest_meeting_target(case: Case) -> Solution:
    """Route ``cheapest_meeting_target`` (decision record 0006):
    :func:`hieropt.solvers.procurement.cheapest_meeting`.

    Raises:
        NoSolutionError: infeasible constraints, budget or target."""
    inst, counts = case.instance, Counts()
    res = cheapest_meeting(inst, case.tm, inst.max_iteration_time_ns, case.rel_gap,
                           inst.max_network_cost_usd, case.time_limit_s, counts)
    return verified(inst, case.tm, counts, res, "min_cost", case.start, {})


def time_cost_product(case: Case) -> Solution:
    """Routes ``time_cost_product`` (A = 0) and ``run_cost`` (A and the factor of
    :class:`~hieropt.model.run_cost.RunCostTerms`): min T(B) x (A + cost(B)) (decision records 0005,
    0007); a time target's cheapest network is solved first as a cost floor.

    Raises:
        InputError: min_run_cost without a cost rate in ``[cluster]``, or with several
            workloads.
        NoSolutionError: infeasible; or unbounded (no floor on bandwidth, or no compute and no
            cap)."""
    inst, counts, obj, extra = case.instance, Counts(), case.objective, {}
    terms = run_cost_terms(inst) if obj == "min_run_cost" else None
    floor = meets = None
    target = inst.max_iteration_time_ns
    if target is not None:  # time <= target  <=>  cost >= the cheapest network meeting it
        cheapest = cheapest_meeting(inst, case.tm, target, REL_GAP, inst.max_network_cost_usd,
                                    case.time_limit_s, counts)
        floor, meets = cheapest.lower, cheapest.bw
    res, near = _product_or_near(case, counts, terms.fixed_usd if terms else 0.0, floor, meets)
    if terms is not None:
        rate = terms.usd_per_ns_usd
        res = replace(res, upper=res.upper * rate, lower=res.lower * rate)
        extra = {"run_cost_per": terms.per, "fixed_cost_usd": terms.fixed_usd}
    extra.update(kappa_evaluations=res.iterations, kappa_nodes=0,
                 kappa_range_usd=[float(k) for k in res.kappa_range])
    return verified(inst, case.tm, counts, res, obj, case.start, extra,
                    method=NEAR_PRODUCT_METHOD if near else None)


def _product_or_near(case: Case, counts: Counts, fixed_usd: float, floor: float | None,
                     meets: np.ndarray | None) -> tuple[OAResult, bool]:
    """(outcome, whether the near-cheapest step gave it) of
    :func:`hieropt.solvers.procurement.min_time_cost_product` (ns x $) then
    :func:`hieropt.solvers.near_product.near_cheapest_product`; LPs and cuts added to ``counts``."""
    inst = case.instance
    try:
        res = min_time_cost_product(inst, case.tm, case.rel_gap, inst.max_network_cost_usd, floor,
                                    inst.max_iteration_time_ns, meets, case.time_limit_s, fixed_usd)
    except (NoSolutionError, SolverError) as e:
        if isinstance(e, NoSolutionError) and e.kind != "infeasible":
            raise
        near = near_cheapest_product(inst, case.tm, None, case.rel_gap, case.time_limit_s, counts,
                                     fixed_usd, floor)
        if near is None:  # (not a near-cheapest budget: the cost-share LP's answer stands)
            raise
        return near, True
    counts.lps += res.iterations
    counts.cuts += res.cuts
    near = near_cheapest_product(inst, case.tm, res, case.rel_gap, case.time_limit_s, counts,
                                 fixed_usd, floor)
    return near, near is not res


RENTED_NOTE = ("the cluster is priced by usd_per_npu_hour alone (no amortisation_years): the "
               "network comes with the hours, its price does not enter the $ per run, so the "
               "cheapest run is the fastest time, and of the equally fast designs this is the "
               "cheapest network (give amortisation_years to pay off the network's capex on "
               "top)")
"""The note of a min_run_cost answer on a rented cluster."""


def is_rented_run_cost(case: Case) -> bool:
    """Whether ``case`` is ``min_run_cost`` on a cluster priced by ``usd_per_npu_hour`` alone."""
    c = case.instance.cluster
    return (case.objective == "min_run_cost" and c is not None
            and c.usd_per_npu_hour is not None and c.amortisation_years is None)


def rented_run_cost(case: Case) -> Solution:
    """Route ``rented_run_cost`` (:attr:`hieropt.model.run_cost.RunCostTerms.rented`): the run costs
    a constant times T(B), so the answer is the fastest time on the cheapest of the equally fast
    networks (:func:`hieropt.solvers.procurement.fastest_then_cheapest` to
    :func:`~hieropt.solvers.procurement.tie_break_target_ns`; the fastest design, with a note, when
    that fails), value and bound times that constant.

    Raises:
        InputError: several workloads, or a rate of $0.
        NoSolutionError: infeasible; unbounded (no upper limit on bandwidth)."""
    inst, tm, counts = case.instance, case.tm, Counts()
    terms = run_cost_terms(inst)

    def target_of(res: OAResult) -> float | None:
        if res.bw is None or res.status is not Status.OPTIMAL:
            return None
        return tie_break_target_ns(float(tm.time_ns(res.bw)), res.lower, case.rel_gap,
                                   inst.max_iteration_time_ns)

    res, fast_counts, cheap, cost_counts = fastest_then_cheapest(
        inst, tm, case.time_limit_s, min(case.rel_gap, REL_GAP), target_of)
    counts.add(fast_counts)
    counts.add(cost_counts)
    bw, note, unit = res.bw, (), cluster_cost_usd_per_gbps(inst)
    if isinstance(cheap, str):
        note = (f"the cheapest of the equally fast designs was not found ({cheap}): the design is "
                "the fastest one found, its network maybe dearer",)
    elif cheap is not None and cheap.bw is not None and float(unit @ cheap.bw) < float(unit @ bw):
        bw = cheap.bw
    rate = terms.usd_per_ns
    upper = float(tm.time_ns(bw)) if bw is not res.bw else res.upper
    res = replace(res, bw=bw, upper=upper * rate, lower=min(res.lower, upper) * rate)
    sol = verified(inst, tm, counts, res, "min_run_cost", case.start,
                   {"run_cost_per": terms.per, "usd_per_ns": rate},
                   method="the fastest time (cutting planes), priced by the cluster's rate; "
                   "among equally fast designs the cheapest network")
    return replace(sol, notes=sol.notes + (RENTED_NOTE,) + note)


ROUTED_OBJECTIVES = ("performance", "min_cost", "performance_per_cost", "min_max_regret",
                     "min_run_cost")
"""The objectives the routes of :data:`ROUTES` before its catch-all accept."""


def no_route(case: Case) -> Solution:
    """Route ``no_route``, the catch-all that ends :data:`ROUTES`.

    Raises:
        InputError: always, naming the objective and the objectives that have routes."""
    raise InputError("instance", "objective", f"no solver route for objective "
                     f"{case.objective!r}", f"use one of {', '.join(ROUTED_OBJECTIVES)}")


ROUTES: tuple[Route, ...] = (
    Route("portfolio", lambda c: c.objective == "min_max_regret" or c.instance.max_regret
          is not None, portfolio_objectives, complete=True),
    Route("single_term_rate", is_single_term, single_term_rate),
    Route("fastest_cutting_planes", lambda c: c.objective == "performance",
          fastest_by_cutting_planes),
    Route("cheapest_meeting_target", lambda c: c.objective == "min_cost"
          and c.instance.max_regret is None, cheapest_meeting_target),
    Route("time_cost_product", lambda c: c.objective == "performance_per_cost", time_cost_product),
    Route("rented_run_cost", is_rented_run_cost, rented_run_cost),
    Route("run_cost", lambda c: c.objective == "min_run_cost" and not is_rented_run_cost(c),
          time_cost_product),
    Route("no_route", lambda c: True, no_route))
"""The objective routes, most special first (decision record 0009); the last accepts every case."""
