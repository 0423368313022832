"""Time x cost within a budget a hair above the cheapest network, bounded from both sides by the
fastest design within the budget (decision record 0007, "time x cost within such a budget")."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np

from ..errors import NoSolutionError, SolverError
from ..model.cost import cluster_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..result import Status
from ..spec import Instance
from ..units import usd_cents
from .cutting import INF, TimeLP
from .linalg import round_outwards
from .near_cheapest import near_budget, reduced_budget_row, vertex_of
from .outcome import OAResult
from .procurement import SUB_GAP, Counts, fastest_design, fastest_once

__all__ = ["cheapest_cost_floor_usd", "near_cheapest_product", "NEAR_PRODUCT_METHOD"]

NEAR_PRODUCT_METHOD = (
    "within a budget a hair above the cheapest network, which the cost-share LP does not resolve: "
    "the fastest design within the budget (Kelley cutting planes on one LP), its time's bound x "
    "the cheapest network's cost (or a split of the costs in two) the bound, the cost-share LP's "
    "design kept when better"
)
"""The ``method`` of a time x cost answer :func:`near_cheapest_product` gives."""


def cheapest_cost_floor_usd(instance: Instance, budget_usd: float) -> float | None:
    """A proven lower bound ($) on the cost of every feasible design within ``budget_usd`` ($):
    ``budget_usd`` less the room of :func:`hieropt.solvers.near_cheapest.reduced_budget_row` (weak
    duality, exact); None unless :func:`~hieropt.solvers.near_cheapest.near_budget`, or without a
    price or a cheapest network."""
    try:
        if not near_budget(instance, budget_usd):
            return None
        reduced = reduced_budget_row(instance, vertex_of(instance), budget_usd)
    except (NoSolutionError, SolverError):
        return None
    if reduced is None:
        return None
    return round_outwards(Fraction(budget_usd) - Fraction(reduced.room_usd), up=False)


def near_cheapest_product(instance: Instance, tm: TimeModel, out: OAResult | None,
                          rel_gap: float, time_limit_s: float, counts: Counts,
                          fixed_usd: float = 0.0, cost_floor_usd: float | None = None,
                          ) -> OAResult | None:
    """Min T(B) x (``fixed_usd`` + cost(B)) (ns x $) within the instance's budget a hair above the
    cheapest network, from the cost-share LP's outcome ``out`` (None: no design), by decision record
    0007: T x (A + C) >= L_p x (A + C_lo), sharpened by :func:`_split_bound`; C_lo is
    :func:`cheapest_cost_floor_usd` or ``cost_floor_usd`` ($) when higher.

    Returns:
        ``out`` when OPTIMAL or not near the cheapest network; else the best design and highest
            bound (settled at ``rel_gap``), or ``out`` when the two disagree by round-off. LPs
            and cuts are added to ``counts``.

    Raises:
        NoSolutionError, SolverError: ``out`` is None and the fastest design within the budget
            fails too."""
    budget = instance.max_network_cost_usd
    if budget is None or out is not None and out.status is Status.OPTIMAL:
        return out
    c_lo = cheapest_cost_floor_usd(instance, budget)
    if c_lo is None:
        return out
    lps0 = counts.lps
    try:
        fast, _ = fastest_once(instance, tm, min(rel_gap, SUB_GAP), time_limit_s, counts)
    except (NoSolutionError, SolverError):
        if out is None:
            raise
        return out
    if fast.bw is None or not np.isfinite(fast.upper):
        return out
    c_lo = max(c_lo, cost_floor_usd or 0.0)
    value = _product(instance, tm, fast.bw, fixed_usd)
    lower = max(fast.lower, 0.0) * (fixed_usd + c_lo)
    best = replace(fast, upper=value, lower=lower, budget_dual_ns_per_usd=0.0,
                   kappa_range=(c_lo, budget))
    split, below = _split_bound(instance, tm, fast.lower, value, c_lo, rel_gap, time_limit_s,
                                counts, fixed_usd)
    best = replace(best, lower=max(lower, split), iterations=counts.lps - lps0, cuts=0)
    if out is not None and out.bw is not None and (out.upper < best.lower
                                                   or out.lower > best.upper):
        return out  # (the two disagree by round-off: see the docstring)
    if below is not None and (v := _product(instance, tm, below, fixed_usd)) < best.upper:
        best = replace(best, bw=below, upper=v)
    if out is not None and out.bw is not None and out.upper < best.upper:
        best = replace(best, bw=out.bw, upper=out.upper)
    if out is not None:
        best = replace(best, lower=max(best.lower, out.lower))
    return best.settled(rel_gap, (
        f"the budget is only {budget / c_lo - 1:.2g} above the cheapest network "
        f"(${usd_cents(c_lo, up=True)}), which the cost-share LP does not resolve; the bound is "
        f"the fastest time's bound within the budget (its gap {fast.gap:.2g}) x the cheapest "
        "network's cost, or a split of the costs in two"))


def _product(instance: Instance, tm: TimeModel, bw: np.ndarray, fixed_usd: float) -> float:
    """T(``bw``) x (``fixed_usd`` + cost(``bw``)), ns x $."""
    return float(tm.time_ns(bw)) * (fixed_usd + float(cluster_cost_usd_per_gbps(instance) @ bw))


def _split_bound(instance: Instance, tm: TimeModel, lower_ns: float, value: float, c_lo: float,
                 rel_gap: float, time_limit_s: float, counts: Counts,
                 fixed_usd: float) -> tuple[float, np.ndarray | None]:
    """(bound on min T x (A + C), ns x $; the fastest design within c_m) from splitting the costs at
    c_m (decision record 0007): min(L_U (A + c_m), L_m (A + c_lo)), c_m set for half the gap against
    ``value``; (-inf, None) when c_m is outside (c_lo, budget) or its solve fails."""
    c_m = value * (1 - 0.5 * rel_gap) / lower_ns - fixed_usd if lower_ns > 0 else 0.0
    if not c_lo < c_m < instance.max_network_cost_usd:
        return -INF, None
    core = TimeLP(instance, tm, time_limit_s)
    try:
        low = fastest_design(core, min(rel_gap, SUB_GAP), c_m, instance.max_iteration_time_ns)
    except (NoSolutionError, SolverError):
        return -INF, None
    finally:
        counts.add(core)
        core.close()
    if low.bw is None or not low.lower > 0:
        return -INF, None
    return min(low.lower * (fixed_usd + c_lo), lower_ns * (fixed_usd + c_m)), low.bw
