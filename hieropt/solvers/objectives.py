"""The one entry for every objective: :func:`solve` walks :data:`hieropt.solvers.routes.ROUTES` and
returns a :class:`Solution` re-checked by :mod:`hieropt.verify`, its status infeasible, unbounded
or undecided when there is no design. :mod:`hieropt.api` and the studies call this, never the
reverse."""

from __future__ import annotations

import inspect
import math
import os
import time
import warnings
from dataclasses import dataclass, fields, replace
from functools import partial

import numpy as np

from ..cache import scoped
from ..errors import HieroptError, InputError, LimitReached, NoSolutionError, SolverError
from ..model.cutmodel import cut_model, prefers_cuts
from ..model.run import power_cap_problem
from ..model.timing import build_time_model, evaluate
from ..result import Solution, Status
from ..spec import Instance
from ..spec.overrides import check_time_limit, with_targets
from ..units import objective_unit
from .cost_range import no_design_by_rows
from .cutting import REL_GAP
from .outcome import relative_gap
from .portfolio import hours_weighted, own_optima, portfolio_of
from .procurement import (
    PPC_GAP,
    TIE_BREAK_LPS,
    equally_fast,
    fastest_then_cheapest,
    keep_outcome,
    recall_outcome,
    tie_break_target_ns,
)
from .routes import BOUND_SLACK, METHODS, ROUTES, UNITS, Case, verified
from .routing import first_route

MIN_REL_GAP = 5e-9
"""Smallest relative gap :func:`solve` accepts (the loop stalls near 2.5e-9 with 1e-9 LP
tolerances)."""

__all__ = ["solve", "SolveOptions", "recommended_options", "solve_fastest_cheapest", "MIN_REL_GAP",
           "METHODS", "UNITS", "TIE_BREAK_LPS"]


@dataclass(frozen=True)
class SolveOptions:
    """How :func:`solve` solves, and the limits that override the instance's (checked by
    :func:`solve`: an :class:`InputError` naming the field).

    Attributes:
        rel_gap: target relative gap in [5e-9, 1); None: 1e-8 (1e-7 for performance_per_cost
            and min_run_cost).
        time_limit_s: time limit of each LP solve, s (> 0).
        max_iteration_time_ns: overrides the instance's time target (ns).
        budget_usd: overrides the instance's network budget ($).
        max_regret: with ``min_cost``: the cheapest network on which every workload is within
            this fraction of its own optimum, instead of a time target (with one: an
            InputError). None: the instance's, which another objective leaves out (with a
            note).
        sensitivity: also the marginal values of every constraint, active bound, bandwidth
            and the budget or time target (:mod:`hieropt.solvers.sensitivity`), in
            ``Solution.sensitivity``.
        sensitivity_ranges: with ``sensitivity``, also the range over which each holds.
        portfolio: with several workloads, also each workload's own optimum and its time on
            the chosen network (``Solution.portfolio``); always on for the portfolio
            objectives.
        cheapest_design: with ``performance``, the cheapest of the designs proven within the
            gap target of the fastest time (:func:`solve_fastest_cheapest`), so that equally
            fast networks are never told apart by the solver's pick."""

    rel_gap: float | None = None
    time_limit_s: float = 60.0
    max_iteration_time_ns: float | None = None
    budget_usd: float | None = None
    max_regret: float | None = None
    sensitivity: bool = False
    sensitivity_ranges: bool = False
    portfolio: bool = False
    cheapest_design: bool = False


def recommended_options(**fields) -> SolveOptions:
    """The :class:`SolveOptions` of the design ``hieropt solve`` recommends (``cheapest_design``
    on), with ``fields`` set as given; every command that re-solves for that design (``export``,
    ``simulate``, ``compare``, ``report``) uses them.

    Raises:
        TypeError: a field :class:`SolveOptions` does not have."""
    return replace(SolveOptions(cheapest_design=True), **fields)


_OLD_NAMES = {"max_network_cost_usd": "budget_usd"}
"""Keyword arguments of :func:`solve` before :class:`SolveOptions` whose field has another name."""


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside the hieropt package."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = inspect.currentframe().f_back, 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(root):
        frame, level = frame.f_back, level + 1
    return level


def _with_old_keywords(options: SolveOptions, old: dict) -> SolveOptions:
    """``options`` updated by the deprecated keyword arguments of ``solve`` (with a warning)."""
    if not old:
        return options
    names = {f.name for f in fields(SolveOptions)} | set(_OLD_NAMES)
    unknown = sorted(set(old) - names)
    if unknown:
        raise TypeError(f"solve() got an unexpected keyword argument {unknown[0]!r}")
    warnings.warn("solve(..., " + ", ".join(f"{k}=" for k in old) + ") is deprecated: pass "
                  "options=SolveOptions(...)", DeprecationWarning, stacklevel=_caller_level())
    update = {_OLD_NAMES.get(k, k): v for k, v in old.items()}
    if "budget_usd" in old and "max_network_cost_usd" in old:
        raise InputError("budget_usd", None,
                         "given together with max_network_cost_usd (its old name)",
                         "give one of them")
    return replace(options, **update)


@scoped
def solve(instance: Instance, objective: str | None = None, *,
          options: SolveOptions = SolveOptions(), **old_keywords) -> Solution:
    """Solve ``instance`` for its objective (or ``objective``) and return a verified
    :class:`Solution`.

    Args:
        instance: a validated instance (see :func:`load_instance`, :func:`load_libra`).
        objective: overrides the instance's: ``"performance"`` (min iteration time, ns),
            ``"min_cost"`` (cheapest network, $, with time <= the target),
            ``"performance_per_cost"`` (min time x cost, ns * $), ``"min_max_regret"``
            (several workloads: min of the worst slowdown against each one's own optimum),
            ``"min_run_cost"`` ($ of one training run, or of one iteration without a token
            budget; needs the instance's ``cluster``).
        options: see :class:`SolveOptions`. The old keyword arguments (``rel_gap=``,
            ``time_limit_s=``, ``max_network_cost_usd=``, ...) still work and warn
            (DeprecationWarning).

    Returns:
        A :class:`Solution`: OPTIMAL when the gap target was met, LIMIT (with the proven gap)
            otherwise, also without a design when an LP's time limit came first (gap inf);
            or, without a design, INFEASIBLE ("fastest possible is ... ns"), UNBOUNDED (no
            upper limit on bandwidth, or no floor for the time-cost product) or UNDECIDED (a
            time target within the optimality gap), the reason in ``message``.

    Raises:
        InputError: ``rel_gap`` outside [5e-9, 1), an unknown objective, min_cost without a
            time target, a target, budget or ``time_limit_s`` that is not a positive number
            (exit code 2).
        SolverError: HiGHS failed, or the independent evaluator disagrees with the solver
            (exit code 3)."""
    options = _with_old_keywords(options, old_keywords)
    start = time.perf_counter()
    instance, dropped = _without_own_regret(instance, objective, options)
    try:
        sol = _solve(instance, objective, options, start)
    except (NoSolutionError, LimitReached) as e:
        obj = objective or instance.objective
        reason = str(e).removeprefix(f"{e.kind}: ")
        unit = objective_unit(obj, instance.relative_time)
        sol = Solution.without_design(Status(e.kind), reason, obj, unit,
                                      time.perf_counter() - start, instance)
    return replace(sol, notes=sol.notes + dropped) if dropped else sol


def _check_budget_floor(instance: Instance, time_limit_s: float = 60.0) -> None:
    """Refuse a budget below the cost floor of the design rows and bounds alone
    (:func:`hieropt.formulation.scale.cost_bounds_usd`), before any LP takes its units from it,
    naming the cheapest network to the cent (:func:`hieropt.solvers.cost_range.cheapest_vertex`).

    Raises:
        NoSolutionError: infeasible, "the budget $B is below the cheapest network ..., $C"."""
    from ..formulation.scale import cost_bounds_usd
    from .cost_range import below_cheapest, cheapest_vertex

    budget = instance.max_network_cost_usd
    if budget is None:
        return
    floor = cost_bounds_usd(instance)[0]
    if budget < floor * (1 - 1e-9):
        cheapest = cheapest_vertex(instance, time_limit_s).cost_usd
        # (a floor the LP's vertex attains to within its tolerance is the cheapest network)
        raise below_cheapest(budget, floor if cheapest <= floor * (1 + 1e-9) else cheapest)


def _without_own_regret(instance: Instance, objective: str | None,
                        options: SolveOptions) -> tuple[Instance, tuple[str, ...]]:
    """``instance`` without its own ``max_regret`` (and a note) when another objective than min_cost
    is asked and ``options`` give no regret bound; else ``instance`` and no note."""
    regret = instance.max_regret
    if (regret is None or objective is None or objective == "min_cost"
            or options.max_regret is not None):
        return instance, ()
    note = (f"the instance's max_regret {regret:g} is left out: it bounds objective min_cost (the "
            f"cheapest network within it), and objective {objective} was asked")
    return instance.model_copy(update={"max_regret": None}), (note,)


def _solve(instance: Instance, objective: str | None, options: SolveOptions,
           start: float) -> Solution:
    """:func:`solve`, raising NoSolutionError where there is no design."""
    o = options
    instance = with_targets(instance, objective, o.max_iteration_time_ns, o.budget_usd,
                            max_regret=o.max_regret)
    time_limit_s = check_time_limit(o.time_limit_s)
    if (over := power_cap_problem(instance)) is not None:  # (the site's power cap)
        raise NoSolutionError("infeasible", over)
    _check_budget_floor(instance, time_limit_s)
    instance, hours_note = hours_weighted(instance, time_limit_s)  # (shares of hours -> weights)
    obj = instance.objective
    gap = _gap(o.rel_gap, obj)
    plain = instance.max_network_cost_usd is None and instance.max_iteration_time_ns is None
    cuts = obj == "performance" and plain and prefers_cuts(instance)  # (a large plain solve)
    tm = cut_model(instance) if cuts else build_time_model(instance)
    sensitivity, skipped = o.sensitivity, ()
    if cuts and sensitivity:  # (its re-solves need the dense model, which grows with the layers)
        sensitivity = False
        skipped = ("sensitivity: not computed for a large workload solved by cutting planes on T "
                   "(the re-solves need the dense model, which grows with the distinct layers)",)
    try:
        route, sol = first_route(ROUTES, Case(instance, tm, gap, time_limit_s, start, sensitivity))
    except (NoSolutionError, SolverError):
        # (one reason for every objective: rows that cannot hold, or no bandwidth where traffic
        # goes; asked only when a route found no design, so a solve that finds one never pays it)
        no_design_by_rows(instance, np.flatnonzero(tm.carries_traffic), time_limit_s)
        raise
    if route.complete:
        return sol
    routed = sol.notes
    if sensitivity and sol.success and obj == "min_run_cost":
        sol = replace(sol, notes=sol.notes + ("sensitivity: not computed for min_run_cost (the "
                                              "run's time and $ are in the run figures)",))
    elif sensitivity and sol.success:
        from .sensitivity import with_sensitivity

        again = partial(solve, options=SolveOptions(rel_gap=gap, time_limit_s=time_limit_s))
        sol = with_sensitivity(instance, tm, sol, again, time_limit_s, o.sensitivity_ranges)
    if o.cheapest_design and obj == "performance" and sol.success:
        # the cheapest of the equally fast designs, with the optimal time's sensitivity and notes
        shown, _ = solve_fastest_cheapest(instance, time_limit_s)
        sol = replace(shown, sensitivity=sol.sensitivity,
                      notes=shown.notes + sol.notes[len(routed):])
    if skipped or hours_note:
        sol = replace(sol, notes=sol.notes + hours_note + skipped)
    if o.portfolio and len(instance.jobs) > 1 and sol.success:
        # (with shares of hours, the optima of the weights: without the budget)
        within = not instance.relative_time
        optima = own_optima(instance, REL_GAP, time_limit_s, within_budget=within)
        sol = replace(sol, portfolio=portfolio_of(instance, sol.bw_gbps, optima,
                                                  within_budget=within))
    return replace(sol, solve_seconds=time.perf_counter() - start)


def _gap(rel_gap: float | None, obj: str) -> float:
    """The gap target: ``rel_gap``, or the objective's default.

    Raises:
        InputError: outside [:data:`MIN_REL_GAP`, 1)."""
    default = PPC_GAP if obj in ("performance_per_cost", "min_run_cost") else REL_GAP
    gap = rel_gap if rel_gap is not None else default
    if not MIN_REL_GAP <= gap < 1:
        fix = (f"give a number in [{MIN_REL_GAP:g}, 1), e.g. 1e-08" if math.isnan(gap) else
               "ask for a gap below 1 (a fraction: 0.01 is 1 %)" if gap >= 1 else
               f"ask for a gap of at least {MIN_REL_GAP:g}: HiGHS's 1e-9 LP tolerances put the "
               "floor there")
        what = "is not a number" if math.isnan(gap) else f"is outside [{MIN_REL_GAP:g}, 1)"
        raise InputError("rel_gap", None, f"relative gap {gap:g} {what}", fix)
    return gap


@scoped
def solve_fastest_cheapest(instance: Instance,
                           time_limit_s: float = 60.0) -> tuple[Solution, Solution | str]:
    """The performance optimum of ``instance`` (as :func:`solve`) at the cheapest of the designs
    proven within the gap target of the fastest time, and that min-cost answer: a min-cost solve
    (time target :func:`~hieropt.solvers.procurement.tie_break_target_ns`, at most
    :data:`TIE_BREAK_LPS` LPs) on the performance solve's LP. Both are re-checked by
    :mod:`hieropt.verify`; the first is the performance Solution of the design shown (its time,
    the performance solve's bound, their gap).

    Returns:
        (performance Solution, min-cost Solution), or (performance Solution, the reason) when
            the min-cost solve failed (the optimum's own design then stands).

    Raises:
        NoSolutionError: no fastest design (where :func:`solve` returns infeasible, unbounded
            or undecided).
        SolverError: as :func:`solve`."""
    instance = with_targets(instance, "performance", None, None)
    if (over := power_cap_problem(instance)) is not None:  # (as solve: the site's power cap)
        raise NoSolutionError("infeasible", over)
    instance, _ = hours_weighted(instance, time_limit_s)  # (as solve: shares of hours -> weights)
    start = time.perf_counter()
    tm = build_time_model(instance)
    extra = (time_limit_s, TIE_BREAK_LPS)
    kept = recall_outcome("fastest and cheapest", instance, tm, extra)

    def target_of(res) -> float | None:  # (of the evaluator's time of the fastest design)
        if res.bw is None:
            return None
        fast = evaluate(instance, res.bw).iteration_time_ns
        cap = instance.max_iteration_time_ns
        return tie_break_target_ns(fast, res.lower, REL_GAP, cap) if fast > 0 else None

    res, counts, cheap, cost_counts = kept or fastest_then_cheapest(
        instance, tm, time_limit_s, REL_GAP, target_of)
    sol = verified(instance, tm, counts, res, "performance", start, {})
    start = time.perf_counter()
    target = tie_break_target_ns(sol.objective_value, sol.objective_bound, REL_GAP,
                                 instance.max_iteration_time_ns)
    try:
        if isinstance(cheap, str):
            raise HieroptError(cheap)
        if not target > 0:  # (a design that takes no time: every design is as fast)
            raise HieroptError("the fastest time is 0: no time target to meet")
        design_inst = with_targets(instance, "min_cost", target, None)
        design: Solution | str = verified(design_inst, tm, cost_counts, cheap, "min_cost", start,
                                          {})
    except HieroptError as e:
        design = str(e)
    if kept is None and res.status is Status.OPTIMAL and not isinstance(design, str):
        keep_outcome("fastest and cheapest", instance, tm, extra, (res, counts, cheap, cost_counts))
    return _shown(sol, design, counts.lps + cost_counts.lps), design


def _shown(sol: Solution, design: Solution | str, lps: int) -> Solution:
    """``sol`` at the tie-break's cheaper ``design`` (its evaluated time, ``sol``'s bound, the gap
    between, ``lps`` of both solves); else ``sol``."""
    if isinstance(design, str) or not design.network_cost_usd < sol.network_cost_usd:
        return sol
    value = design.iteration_time_ns  # (the evaluator's; the performance objective's value)
    if sol.objective_bound > value * (1 + BOUND_SLACK):  # (no certificate: the optimum's design)
        return sol
    bound = min(sol.objective_bound, value)
    gap = relative_gap(value, bound)
    ok = sol.status is Status.OPTIMAL and gap <= REL_GAP * (1 + 1e-6)
    ties = f"the designs {equally_fast('the fastest one found')}"
    cost = (f"the cheapest of {ties}" if design.status is Status.OPTIMAL else
            f"the cheapest found of {ties}, its cost proven within {design.gap:.2g} of the "
            "cheapest")
    return replace(
        design, status=Status.OPTIMAL if ok else Status.LIMIT,
        message=f"proven relative gap {gap:.3g}; design: {cost}", objective="performance",
        objective_value=value, objective_bound=bound, objective_unit=sol.objective_unit,
        lower_bound_ns=bound, gap=gap, iterations=lps,
        solve_seconds=sol.solve_seconds + design.solve_seconds, extra=dict(sol.extra),
        method=sol.method + "; among equally fast designs the cheapest network (a min-cost "
        "solve with the time target on the same LP)", instance=sol.instance)
