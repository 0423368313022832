"""The fastest network of a single-term time model (decision record 0004): the exact LP ``max u`` in
the term's rate (:mod:`hieropt.formulation.rate`), certified by the Lagrangian bound of its duals
(:func:`hieropt.solvers.dual_bound.lagrangian_bound` with every column linear, the boxes from the
bounds, the single rows and the budget): u* <= U, so T* >= c + w / (U rate_unit), less
:data:`hieropt.solvers.cut_lp.ROUNDING`."""

from __future__ import annotations

from contextlib import closing
from types import SimpleNamespace

import numpy as np

from ..formulation.arrays import read_only
from ..formulation.rate import RateArrays, compile_rate_lp, single_term
from ..formulation.scale import choose_scale, upper_limits_gbps
from ..model.cost import cluster_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..result import Status
from ..spec import Instance
from .cut_lp import ROUNDING, OAResult
from .dense_lp import DenseLP
from .dual_bound import lagrangian_bound
from .line_search import within_budget

__all__ = ["fastest_single_term", "METHOD"]

METHOD = ("one exact LP in the rate of the single collective term (T = c + w / u: "
          "linear-fractional, Charnes-Cooper), certified by the safe bound of its duals")
"""The ``method`` of a :class:`hieropt.result.Solution` solved here."""


def fastest_single_term(instance: Instance, tm: TimeModel, rel_gap: float,
                        budget_usd: float | None = None,
                        time_limit_s: float = 60.0) -> OAResult | None:
    """The performance optimum (ns) within ``budget_usd`` ($, None: none) when ``tm`` has a single
    collective term, by one LP (in the performance LP's units, compiled once per instance, time
    model, scale, budget, rows and prices); None when ``tm`` is not of that form, the LP is not
    optimal, or its certificate misses ``rel_gap``."""
    st = instance.memo("_single_term", (tm,), lambda: single_term(tm))  # (once per time model)
    if st is None:
        return None
    m, w = st
    limits = upper_limits_gbps(instance)
    unit_cost = cluster_cost_usd_per_gbps(instance)
    target = instance.max_iteration_time_ns
    scale = instance.memo("_perf_scale", (tm, budget_usd, target, limits, unit_cost),
                          lambda: choose_scale(instance, tm, budget_usd, target, limits))
    arr = instance.memo("_rate_lp", (tm, scale, budget_usd, instance.design_matrix, unit_cost),
                        lambda: read_only(compile_rate_lp(instance, m, scale, budget_usd)))
    with closing(DenseLP(arr, time_limit_s, vertex=True)) as lp:  # (its point is the answer)
        res = lp.solve()
        if res.status is not Status.OPTIMAL:
            return None
        duals = lp.row_duals()
    D = m.size
    bw = within_budget(instance, np.maximum(res.x[:D], 0.0) * scale.bw_gbps + 0.0, budget_usd,
                       unit_cost)
    if bw is None:
        return None
    upper = tm.time_ns(bw)
    rate = _rate_bound(arr, duals,
                       upper_limits_gbps(instance, budget_usd, unit_cost) / scale.bw_gbps)
    if not (np.isfinite(upper) and np.isfinite(rate) and rate > 0):
        return None
    lower = tm.constant_ns + w / (rate * arr.rate_unit)
    lower -= ROUNDING * abs(lower)
    # (a bound above a feasible point: round-off, refused)
    if upper - lower > rel_gap * upper or lower > upper:
        return None
    slope = 0.0
    # d lower / d budget of the tangent to c + w / U(budget) (U affine in the budget)
    if budget_usd is not None:
        y_budget = min(float(duals[arr.budget_row]), 0.0)
        slope = -w * (-y_budget / scale.cost_usd) / (rate * rate * arr.rate_unit)
    return OAResult(Status.OPTIMAL, bw, upper, lower, 1,
                    "optimal within the gap target (one exact LP: a single collective term)",
                    budget_dual_ns_per_usd=slope)


def _rate_bound(arr: RateArrays, duals: np.ndarray, cap: np.ndarray) -> float:
    """U >= u* (scaled) from ``duals`` by :func:`hieropt.solvers.dual_bound.lagrangian_bound` (every
    column linear; ``cap``: (D,) limits on the scaled B columns, u's box from them); inf when a
    column the bound needs has no finite limit."""
    view = arr.cache.get("bound_view")
    if view is None:  # (the layout of an LP whose columns all enter linearly: no pairs, no terms)
        none = np.zeros(0, dtype=np.intp)
        view = arr.cache["bound_view"] = SimpleNamespace(
            n_rows=arr.n_rows, n_cols=arr.n_cols, z0=arr.n_cols, n_terms=0, n_nodes=0,
            pair_b=none, pair_t=none, budget_row=-1, col_lower=arr.col_lower,
            col_upper=arr.col_upper, start=arr.start, index=arr.index, value=arr.value, cache={})
    top = np.minimum(arr.col_upper[:arr.u_col], cap)
    loaded = np.asarray(arr.loaded, dtype=np.intp)
    u_top = float(np.min(top[loaded] / arr.dense[arr.rate, arr.u_col]))  # (a_d u <= B_d <= top_d)
    duals = np.where(np.isfinite(duals), duals, 0.0)  # (a multiplier that is no number: none)
    bound = lagrangian_bound(view, arr.time_costs, duals, arr.row_lower, arr.row_upper,
                             np.append(top, u_top))
    return -bound.value
