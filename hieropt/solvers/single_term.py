"""The fastest network of a single-term time model (decision record 0004): the exact LP ``max u``
in the term's rate (:mod:`hieropt.formulation.rate`), certified by the safe bound of its duals: for
any row multipliers y (0 on an infinite bound), weak duality gives, for every feasible (B, u),

    -u  >=  sum_r bound_r(y_r) + sum_j min over column j's box of (c - A'y)_j x_j

with bound_r(y) = y lower_r (y > 0) or y upper_r (y < 0), the boxes those that every feasible point
meets (the bounds, the limits a single design row or the budget implies, and u <= their rate;
Neumaier and Shcherbina 2004, "Safe bounds in linear and mixed-integer programming"). So u* <= U and
T* >= c + w / (U rate_unit), exact up to the rounding of this evaluation
(:data:`hieropt.solvers.cut_lp.ROUNDING` is taken off).
"""

from __future__ import annotations

import math
from contextlib import closing

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
from .linalg import EPS
from .line_search import within_budget

__all__ = ["fastest_single_term", "METHOD"]

METHOD = ("one exact LP in the rate of the single collective term (T = c + w / u: "
          "linear-fractional, Charnes-Cooper), certified by the safe bound of its duals")
"""The ``method`` of a :class:`hieropt.result.Solution` solved here."""


def fastest_single_term(instance: Instance, tm: TimeModel, rel_gap: float,
                        budget_usd: float | None = None,
                        time_limit_s: float = 60.0) -> OAResult | None:
    """The performance optimum (ns) of ``instance`` within ``budget_usd`` ($, None: none) when
    ``tm`` has a single collective term (:func:`hieropt.formulation.rate.single_term`), by one LP;
    None when ``tm`` is not of that form, the LP is not optimal, or its certificate does not meet
    ``rel_gap`` (the caller then solves by cutting planes).

    The LP's units are the performance LP's (one :class:`hieropt.formulation.scale.Scale` per
    instance, budget and limits, shared with :class:`hieropt.solvers.cutting.TimeLP`) and its arrays
    are compiled once per instance, time model, scale, budget, design rows and prices (read-only,
    shared by repeated solves and copies)."""
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
    """U >= u* (scaled) from the row multipliers ``duals`` (module docstring); ``cap``: (D,) upper
    limits on the scaled B columns that every feasible point meets. inf when a column the bound
    needs has no finite limit.

    U includes the worst-case floating-point error of its own evaluation: (rows + columns + 2) x eps
    x the sum of the magnitudes of every product it adds up (a dual-weighted sum whose terms cancel
    to a small rate, as near the cheapest network, then gets a margin to match, and the caller's gap
    test refuses it). In Python floats (a few rows and columns: fewer numpy calls), the sums by
    ``math.fsum``."""
    lo, hi, lo_finite, hi_finite, rows, costs, abs_c, col_lower, loaded, a_rate = _bound_arrays(arr)
    r, r_size = list(costs), list(abs_c)  # reduced costs c - A'y and the size of each one's sum
    row_terms = []
    for i, y in enumerate(duals[:arr.n_rows].tolist()):
        up = y > 0
        # a multiplier on an infinite bound (or not finite itself) counts as 0: each row's term is y
        # x its bound
        if y == 0 or not math.isfinite(y) or not (lo_finite[i] if up else hi_finite[i]):
            continue
        row_terms.append(y * (lo[i] if up else hi[i]))
        for j, a in rows[i]:
            r[j] -= y * a
            r_size[j] += abs(y * a)
    D = arr.u_col
    top = [min(u, c) for u, c in zip(arr.col_upper[:D].tolist(), cap.tolist(), strict=True)]
    # rate rows: a_d u <= B_d <= top_d
    box_hi = top + [min(top[j] / a for j, a in zip(loaded, a_rate, strict=True))]
    at = []  # the box corner each column's term is at
    for j, rj in enumerate(r):
        if rj < 0 and not math.isfinite(box_hi[j]):
            return math.inf
        at.append(box_hi[j] if rj < 0 else (col_lower[j] if rj > 0 else 0.0))
    col_terms = [rj * a for rj, a in zip(r, at, strict=True)]
    value = math.fsum(row_terms) + math.fsum(col_terms)
    magnitude = math.fsum(abs(t) for t in row_terms)
    magnitude += math.fsum(z * abs(a) for z, a in zip(r_size, at, strict=True))
    return -value + (arr.n_rows + arr.n_cols + 2) * EPS * magnitude


def _bound_arrays(arr: RateArrays) -> tuple:
    """What :func:`_rate_bound` reads of ``arr`` alone, once per LP (kept in ``arr.cache``), as
    Python floats: the row bounds with the infinite ones as 0 and their finiteness, each row's
    nonzero (column, coefficient) pairs, the costs and their magnitudes, the column lower bounds,
    the loaded columns and their rate-row coefficients."""
    out = arr.cache.get("rate_bound")
    if out is None:
        lo, hi = arr.row_lower, arr.row_upper
        lo_finite, hi_finite = np.isfinite(lo), np.isfinite(hi)
        A = arr.dense
        rows = [[(j, a) for j, a in enumerate(row) if a] for row in A.tolist()]
        loaded = np.array(arr.loaded, dtype=np.intp)
        out = arr.cache["rate_bound"] = (np.where(lo_finite, lo, 0.0).tolist(),
                                         np.where(hi_finite, hi, 0.0).tolist(), lo_finite.tolist(),
                                         hi_finite.tolist(), rows, arr.time_costs.tolist(),
                                         np.abs(arr.time_costs).tolist(), arr.col_lower.tolist(),
                                         loaded.tolist(), A[arr.rate, arr.u_col].tolist())
    return out
