"""The objective dispatch: one :func:`solve` entry for every objective (performance, min_cost,
performance_per_cost) on the cutting-plane LP, its result re-checked by the independent evaluator
(:mod:`hieropt.verify`). :mod:`hieropt.api` and the studies call this; it never calls them."""

from __future__ import annotations

import re
import time
from dataclasses import replace

import numpy as np

from ..cache import scoped
from ..errors import HieroptError, InputError, NoSolutionError, SolverError
from ..model.cost import ignored_price_notes
from ..model.cutmodel import CutModel, cut_model, prefers_cuts
from ..model.run import power_cap_problem
from ..model.timing import TimeModel, build_time_model
from ..result import Solution, Status
from ..spec import Instance
from ..spec.overrides import check_time_limit, with_targets
from ..units import implausible_bw_notes
from ..verify import verify
from .cutting import REL_GAP, OAResult, TimeLP
from .hours import hours_weighted
from .near_cheapest import NEAR_SLACK, near_budget, near_cheapest
from .procurement import PPC_GAP, Counts, against_target, cheapest_meeting, fastest_design, min_time_cost_product
from .run_cost import run_cost_terms
from .single_term import METHOD as SINGLE_TERM_METHOD
from .single_term import fastest_single_term

MIN_REL_GAP = 5e-9
"""Smallest relative gap :func:`solve` accepts (the cutting-plane loop stalls near 2.5e-9 with 1e-9 LP tolerances)."""

__all__ = ["solve", "solve_fastest_cheapest", "MIN_REL_GAP", "METHODS", "UNITS"]

METHODS = {
    "performance": "outer approximation (Kelley cutting planes) on one LP (DAQP while small, then HiGHS)",
    "min_cost": "outer approximation (Kelley cutting planes) on one LP (DAQP while small, then HiGHS), feasible "
                "points by convex combination with the fastest network",
    "performance_per_cost": "one convex LP in cost-share variables (time x cost made linear by Charnes-Cooper "
                            "homogenisation), Kelley cutting planes on one LP (DAQP while small, then HiGHS)",
    "min_max_regret": "each workload's own optimum, then min z with T_w(B) <= z T_w* for every workload by cutting "
                      "planes on one persistent HiGHS LP (every workload's epigraph on the shared t = 1/B), the bound "
                      "from the performance optimum of the mix weighted by its regret rows' duals",
    "min_run_cost": "one convex LP in cost-share variables with the cluster's fixed cost as a fixed term (run time "
                    "x (fixed + network cost), Charnes-Cooper homogenisation), Kelley cutting planes on one LP",
}
REGRET_COST_METHOD = ("each workload's own optimum and the min-max-regret optimum, then the cheapest network with "
                      "T_w(B) <= (1 + max_regret) T_w* for every workload by cutting planes, the bound from the "
                      "cheapest network under the dual-weighted sum of those rows")
"""How each objective is solved (the ``method`` of its :class:`Solution`); the keys are
:data:`hieropt.names.OBJECTIVES`."""
UNITS = {"performance": "ns", "min_cost": "USD", "performance_per_cost": "ns*USD", "min_max_regret": "ratio",
         "min_run_cost": "USD"}
"""Unit of each objective's value."""



def _fastest(core: TimeLP, instance: Instance, rel_gap: float) -> OAResult:
    """The performance optimum under the instance's budget (and its time target as a feasibility check)."""
    return fastest_design(core, rel_gap, instance.max_network_cost_usd, instance.max_iteration_time_ns)


def _min_cost(instance: Instance, tm: TimeModel, rel_gap: float, time_limit_s: float, counts: Counts) -> OAResult:
    return cheapest_meeting(instance, tm, instance.max_iteration_time_ns, rel_gap, instance.max_network_cost_usd,
                            time_limit_s, counts)


def _product(instance: Instance, tm: TimeModel, rel_gap: float, time_limit_s: float, counts: Counts,
             fixed_usd: float = 0.0):
    floor = meets = None
    target = instance.max_iteration_time_ns
    if target is not None:  # time <= target  <=>  cost >= the cheapest network meeting it
        cheapest = _min_cost(instance, tm, REL_GAP, time_limit_s, counts)
        floor, meets = cheapest.lower, cheapest.bw
    res = min_time_cost_product(instance, tm, rel_gap, budget_usd=instance.max_network_cost_usd,
                                cost_floor_usd=floor, target_ns=target, meets=meets, time_limit_s=time_limit_s,
                                fixed_usd=fixed_usd)
    counts.lps += res.evaluations
    counts.cuts += res.extra.get("cuts", 0)
    return res


@scoped
def solve(instance: Instance, objective: str | None = None, rel_gap: float | None = None,
          time_limit_s: float = 60.0, max_iteration_time_ns: float | None = None,
          max_network_cost_usd: float | None = None, *, sensitivity: bool = False,
          sensitivity_ranges: bool = False, max_regret: float | None = None, portfolio: bool = False) -> Solution:
    """Solve ``instance`` for its objective (or ``objective``) and return a verified :class:`Solution`.

    Args:
        instance: a validated instance (see :func:`load_instance`, :func:`load_libra`).
        objective: overrides the instance's: ``"performance"`` (min iteration time, ns), ``"min_cost"`` (cheapest
            network, $, with iteration time <= ``max_iteration_time_ns``), ``"performance_per_cost"`` (min time x
            cost, ns * $, global), ``"min_run_cost"`` ($ of one training run, or of one iteration without a token
            budget: run time x the cluster's cost rate, global; needs the instance's ``cluster``).
        rel_gap: target relative optimality gap, in [5e-9, 1); default 1e-8 (1e-7 for performance_per_cost).
        time_limit_s: time limit of each LP solve, s.
        max_iteration_time_ns: overrides the instance's time target (ns).
        max_network_cost_usd: overrides the instance's budget ($); with ``performance``: the fastest network within
            the budget.
        sensitivity: also compute the marginal value of every constraint, active bound, dimension's bandwidth and
            the budget or time target (:mod:`hieropt.solvers.sensitivity`; a few warm re-solves per parameter), in
            ``Solution.sensitivity``.
        sensitivity_ranges: with ``sensitivity``, also the range over which each marginal value holds (more
            re-solves).
        max_regret: with ``min_cost``: the cheapest network on which every workload is within this fraction of its
            own optimum (0.05 = 5 %), instead of a time target.
        portfolio: with several workloads, also each workload's own optimum and its time and slowdown on the chosen
            network (``Solution.portfolio``; one solve per workload). Always on for the portfolio objectives
            (``min_max_regret``, ``min_cost`` with ``max_regret``).

    Returns:
        A :class:`Solution`; ``status`` is OPTIMAL when the gap target was met, LIMIT otherwise.

    Raises:
        InputError: ``rel_gap`` outside [5e-9, 1), an unknown objective, min_cost without a time target, a target,
            budget or ``time_limit_s`` that is not a positive number.
        NoSolutionError: infeasible constraints, budget or time target ("fastest possible is ... ns"), no upper
            limit on bandwidth, or (performance_per_cost) no floor on bandwidth (exit code 3).
        SolverError: HiGHS failed, or the independent evaluator disagrees with the solver (exit code 3).
    """
    instance = with_targets(instance, objective, max_iteration_time_ns, max_network_cost_usd, max_regret=max_regret)
    time_limit_s = check_time_limit(time_limit_s)
    if (over := power_cap_problem(instance)) is not None:  # (the site's power cap: hieropt/model/run.py)
        raise NoSolutionError("infeasible", over)
    instance, hours_note = hours_weighted(instance, time_limit_s)  # (shares of hours -> weights)
    obj = instance.objective
    gap = rel_gap if rel_gap is not None else (PPC_GAP if obj in ("performance_per_cost", "min_run_cost") else REL_GAP)
    if not MIN_REL_GAP <= gap < 1:
        raise InputError("rel_gap", None, f"relative gap {gap:g} is outside [{MIN_REL_GAP:g}, 1)",
                         "ask for a gap below 1 (a fraction: 0.01 is 1 %)" if gap >= 1 else
                         f"ask for a gap of at least {MIN_REL_GAP:g}: HiGHS's 1e-9 LP tolerances put the floor there")
    start = time.perf_counter()
    plain = (obj == "performance" and instance.max_network_cost_usd is None
             and instance.max_iteration_time_ns is None)
    cuts = plain and prefers_cuts(instance)
    tm = cut_model(instance) if cuts else build_time_model(instance)
    skipped = ()
    if cuts and sensitivity:  # the re-solves of the sensitivity need the dense model, which grows with the layers
        sensitivity = False
        skipped = ("sensitivity: not computed for a large workload solved by cutting planes on T (the re-solves "
                   "need the dense model, which grows with the distinct layers)",)
    if obj == "min_max_regret" or instance.max_regret is not None:
        sol = _portfolio_solve(instance, tm, gap, time_limit_s, start)
        if sensitivity:
            sol = replace(sol, notes=sol.notes + ("sensitivity: not computed for the portfolio objectives (each "
                                                  "workload's regret is in the portfolio table)",))
        return sol
    extra: dict = {}
    counts = Counts()
    method = None
    if obj == "performance":
        res = fastest_single_term(instance, tm, gap, instance.max_network_cost_usd, time_limit_s)
        if res is not None:  # one collective term: one exact LP (hieropt/solvers/single_term.py)
            res = against_target(res, instance.max_iteration_time_ns, instance.max_network_cost_usd)
            counts.lps += res.iterations
            method = SINGLE_TERM_METHOD
        else:
            core = TimeLP(instance, tm, time_limit_s)
            try:
                res = _fastest(core, instance, gap)
            finally:
                core.close()
            counts.add(core)
            if isinstance(core.tm, CutModel):  # T of a large workload by cutting planes (hieropt/model/cutmodel.py)
                extra.update(time_model="cutting planes on T", time_pieces=len(core.tm.pieces))
    elif obj == "min_cost":
        res = _min_cost(instance, tm, gap, time_limit_s, counts)
    elif obj == "min_run_cost":  # the product with the cluster's fixed cost (hieropt/solvers/run_cost.py)
        terms = run_cost_terms(instance)
        res = _product(instance, tm, gap, time_limit_s, counts, terms.fixed_usd)
        res = replace(res, upper=res.upper * terms.usd_per_ns_usd, lower=res.lower * terms.usd_per_ns_usd)
        extra.update(run_cost_per=terms.per, fixed_cost_usd=terms.fixed_usd, kappa_evaluations=res.evaluations,
                     kappa_nodes=res.nodes, kappa_range_usd=[float(k) for k in res.kappa_range])
    else:
        res = _product(instance, tm, gap, time_limit_s, counts)
        extra.update(kappa_evaluations=res.evaluations, kappa_nodes=res.nodes,
                     kappa_range_usd=[float(k) for k in res.kappa_range])
    sol = _verified(instance, tm, counts, res, obj, start, extra, method=method)
    if skipped or hours_note:
        sol = replace(sol, notes=sol.notes + hours_note + skipped)
    if portfolio and len(instance.jobs) > 1 and sol.success:
        from .portfolio import own_optima, portfolio_of  # (Pyomo: loaded only when a portfolio is asked for)

        optima = own_optima(instance, REL_GAP, time_limit_s)
        sol = replace(sol, portfolio=portfolio_of(instance, sol.bw_gbps, optima),
                      solve_seconds=time.perf_counter() - start)
    if sensitivity and sol.success and obj == "min_run_cost":
        sol = replace(sol, notes=sol.notes + ("sensitivity: not computed for min_run_cost (the run's time and "
                                              "$ are in the run figures)",))
    elif sensitivity and sol.success:
        sol = _with_sensitivity(instance, tm, obj, sol, gap, time_limit_s, sensitivity_ranges)
        sol = replace(sol, solve_seconds=time.perf_counter() - start)
    return sol


def _with_sensitivity(instance: Instance, tm: TimeModel, obj: str, sol: Solution, gap: float, time_limit_s: float,
                      ranges: bool) -> Solution:
    """``sol`` with its sensitivity (:mod:`hieropt.solvers.sensitivity`, each binding value re-checked by
    :mod:`hieropt.solvers.sensitivity_check`), or a note saying why there is none. A budget a hair above the
    cheapest network (within 10 x :data:`hieropt.solvers.near_cheapest.NEAR_SLACK`) is differentiated by exact
    re-solves (:mod:`hieropt.solvers.sensitivity_near`) where the cheapest network starves a dimension (the LP's
    duals do not resolve that room), and wherever the LP's values fail (their +-1e-4 secants may leave the room)."""
    from .pyomo_core import PyomoTimeLP
    from .sensitivity import sensitivity as analyse
    from .sensitivity_check import check_marginals, without_sensitivity

    def again(moved: Instance) -> Solution:  # a certified solve of the instance with one parameter moved
        return solve(moved, rel_gap=gap, time_limit_s=time_limit_s, portfolio=False)

    def by_differences() -> Solution:
        from .sensitivity_near import near_sensitivity

        try:
            sens, steps, left_out = near_sensitivity(instance, tm, sol, again, ranges=ranges)
        except (SolverError, NoSolutionError) as e:
            return replace(sol, notes=sol.notes + (f"sensitivity not available: {e}",))
        out = replace(sol, sensitivity=sens, notes=sol.notes + left_out)
        reason = check_marginals(instance, out, sens, again, steps)
        return out if reason is None else without_sensitivity(out, reason)

    budget = instance.max_network_cost_usd
    near = obj == "performance" and budget is not None and near_budget(instance, budget, 10 * NEAR_SLACK)
    if near and near_cheapest(instance, tm, budget) is not None:
        return by_differences()
    try:
        core = PyomoTimeLP(instance, tm, time_limit_s)  # re-solves the optimum on a time LP of its own
        sens = analyse(instance, core, obj, sol.bw_gbps, ranges=ranges, budget_usd=budget,
                       target_ns=instance.max_iteration_time_ns)
    except (SolverError, NoSolutionError) as e:  # the optimum stands; only its sensitivity is missing
        return by_differences() if near else replace(sol, notes=sol.notes + (f"sensitivity not available: {e}",))
    out = replace(sol, sensitivity=sens)
    reason = check_marginals(instance, out, sens, again)
    if reason is None:
        return out
    return by_differences() if near else without_sensitivity(out, reason)


@scoped
def solve_fastest_cheapest(instance: Instance, time_limit_s: float = 60.0) -> tuple[Solution, Solution | str]:
    """The performance optimum of ``instance`` (as :func:`solve` with ``objective="performance"``) and the cheapest
    design whose time is within the gap target of it (as :func:`solve` with ``objective="min_cost"`` and the time
    target ``objective_value * (1 + 1e-8)``), on one time model and one cutting-plane LP: the min-cost loop starts
    from the performance solve's cuts and design instead of solving the fastest design again. Both results are
    re-checked by the independent evaluator (:mod:`hieropt.verify`). A sweep's tie-break: with the performance
    objective many designs are often equally fast and their costs differ.

    Returns:
        (performance Solution, min-cost Solution), or (performance Solution, the reason) when the min-cost solve
        failed (the performance optimum stands; its design is then the tie-break's answer).

    Raises:
        NoSolutionError, SolverError: as :func:`solve` for the performance objective.
    """
    instance = with_targets(instance, "performance", None, None)
    start = time.perf_counter()
    tm = build_time_model(instance)
    counts = Counts()
    core = TimeLP(instance, tm, time_limit_s)
    core.cut_first = False  # (the min-cost loop goes on from these cuts: see hieropt.solvers.cut_lp.Loop.cut_first)
    try:
        res = _fastest(core, instance, REL_GAP)
        counts.add(core)
        sol = _verified(instance, tm, counts, res, "performance", start, {})
        start = time.perf_counter()
        target = sol.objective_value * (1 + REL_GAP)
        try:
            design_inst = with_targets(instance, "min_cost", target, None)
            cost_counts = Counts()
            cheap = cheapest_meeting(design_inst, tm, target, REL_GAP, design_inst.max_network_cost_usd,
                                     time_limit_s, cost_counts, fastest=(core, res.bw))
            design: Solution | str = _verified(design_inst, tm, cost_counts, cheap, "min_cost", start, {})
        except HieroptError as e:
            design = str(e)
    finally:
        core.close()
    return sol, design


def _portfolio_solve(instance: Instance, tm: TimeModel, gap: float, time_limit_s: float, start: float) -> Solution:
    """min_max_regret, or min_cost with max_regret: own optima, the regret optimum, then (target form) the cost."""
    from .portfolio import min_cost_within_regret, min_max_regret, own_optima, portfolio_of

    optima = own_optima(instance, min(gap, REL_GAP), time_limit_s)
    regret = min_max_regret(instance, optima, min(gap, REL_GAP), time_limit_s)
    lps = sum(r.iterations for r in optima) + regret.iterations
    extra = {"own_optima_ns": [r.upper for r in optima],
             "own_optima_gap": max(r.gap for r in optima)}
    if instance.objective == "min_max_regret":
        res, obj = regret, "min_max_regret"
    else:
        res, obj = min_cost_within_regret(instance, optima, instance.max_regret, regret, gap, time_limit_s), "min_cost"
        lps += res.iterations
    pf = portfolio_of(instance, res.bw, optima, instance.max_regret)
    value = pf.worst_ratio if obj == "min_max_regret" else None
    if instance.max_regret is not None and pf.worst_ratio > (1 + instance.max_regret) * (1 + 1e-9):
        raise SolverError(f"independent verification failed: a workload is {pf.worst_ratio - 1:.6g} slower than its "
                          f"own optimum, above max_regret {instance.max_regret:g}")
    sol = _verified(instance, tm, Counts(lps=lps), res, obj, start, extra, value)
    if obj == "min_cost":
        sol = replace(sol, method=REGRET_COST_METHOD)
    return replace(sol, portfolio=pf, solve_seconds=time.perf_counter() - start)


_GAP_TEXT = re.compile(r"proven relative gap (?:[0-9.]+(?:e[-+]?[0-9]+)?|inf)")
"""The gap a loop's message states ("stopped after 15 LPs at proven relative gap 9.13e-08 (...)")."""


def _verified(instance: Instance, tm: TimeModel, counts: Counts, res, obj: str, start: float, extra: dict,
              value: float | None = None, method: str | None = None) -> Solution:
    """Re-check the solver's point with the independent evaluator and package the :class:`Solution` (``value``:
    the objective re-evaluated elsewhere, for the portfolio objectives; ``method``: how it was solved, when not the
    objective's usual :data:`METHODS`)."""
    cert = verify(instance, res.bw, target_ns=instance.max_iteration_time_ns,
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
        raise SolverError(f"independent verification failed: the solver reports {res.upper:.12g} {UNITS[obj]} but "
                          f"the evaluator gives {value:.12g}")
    notes = tuple(
        f"dimension {d} carries no traffic: its bandwidth ({res.bw[d]:.6g} GB/s) is whatever the constraints allow; "
        "any feasible value is equally good"
        for d in np.flatnonzero(~tm.carries_traffic)
    ) + implausible_bw_notes(res.bw, tm.carries_traffic) + ignored_price_notes(instance)
    bound = min(res.lower, value)
    gap = max(0.0, (value - bound) / value) if value > 0 else 0.0
    # a loop's message states its gap before the bound's last slack and the evaluator's value: restated, so that
    # the status line and the gap line agree
    message = _GAP_TEXT.sub(f"proven relative gap {gap:.3g}", res.message) if res.message else res.message
    extra.update(cuts=counts.cuts, terms=int(tm.terms_bytes.shape[0]), collectives=tm.n_collectives)
    return Solution(
        status=Status.OPTIMAL if res.status is Status.OPTIMAL else res.status,
        message=message,
        objective=obj,
        bw_gbps=res.bw,
        iteration_time_ns=bd.iteration_time_ns,
        network_cost_usd=bd.network_cost_usd,
        objective_value=value,
        objective_bound=bound,
        objective_unit=UNITS[obj],
        lower_bound_ns=bound if obj == "performance" else None,
        gap=gap,
        iterations=counts.lps,
        solve_seconds=time.perf_counter() - start,
        breakdown=bd,
        method=method or METHODS[obj],
        notes=notes,
        extra=extra,
        instance=instance,
    )
