"""The LP's units: one bandwidth unit per dimension, a time unit and a cost unit, chosen from the
instance by one rule (docs/explanation/solving.md, "Scaling").

HiGHS drops matrix entries below 1e-9 and its feasibility and optimality tolerances (1e-9) are
absolute. In bytes and bytes/s a tangent cut's coefficient is ~1e-22; with one bandwidth unit for
every dimension, a dimension whose optimum is 1e-7 of another's (a small collective inside a max
node) gets cuts far outside the matrix range, and with fixed $ or ms units a tiny budget or time
target falls below the tolerances. The rule here is homogeneous in the data: rescaling every byte,
bandwidth limit and price by constants rescales the units by the same constants and leaves the
scaled LP, and so every certificate, unchanged. The solvers re-centre the bandwidth units on their
incumbent when the optimum lies far from them (:meth:`Scale.rescaled`), by the same rule. Builds;
never solves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..cache import Same, current
from ..model.cost import cluster_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..spec import Instance

MB = 1e6
"""Scale: bytes per model unit of traffic (MB) of the Pyomo statements."""
MS_NS = 1e6
"""Scale: ns per model unit of time (ms) of the Pyomo statements."""
MUSD = 1e6
"""Scale: $ per model unit of cost (M$) of the Pyomo statements."""
INF = float("inf")

__all__ = [
    "Scale", "bytes_per_dim", "choose_scale", "cost_bounds_usd", "product_bandwidth",
    "share_units_gbps", "typical_bandwidth", "upper_limits_gbps",
]


@dataclass(frozen=True)
class Scale:
    """The LP's units: bandwidth of dimension d in units of ``bw_gbps[d]`` GB/s, time in units of
    ``time_ns`` ns, cost in units of ``cost_usd`` $. All positive and finite."""

    bw_gbps: np.ndarray
    time_ns: float
    cost_usd: float

    def rescaled(self, tm: TimeModel, cost_usd_per_gbps: np.ndarray, bw_gbps: np.ndarray) -> Scale:
        """The scale centred on ``bw_gbps`` (GB/s): b_d = bw_gbps[d] where it is positive, unchanged
        elsewhere, and never below :data:`SPREAD` of the largest unit (a design row's coefficients
        a_d b_d must stay within HiGHS's matrix range: a dropped coefficient would free that
        dimension from the row)."""
        b = np.where(np.asarray(bw_gbps) > 0, bw_gbps, self.bw_gbps).astype(float)
        return _finish(tm, cost_usd_per_gbps, b)


SPREAD = 1e-6
"""The smallest ratio of one dimension's bandwidth unit to the largest's."""


def _finish(tm: TimeModel, cost_usd_per_gbps: np.ndarray, b: np.ndarray) -> Scale:
    b = np.maximum(b, SPREAD * b.max())
    comm = tm.time_ns(b) - tm.constant_ns
    if not (math.isfinite(comm) and comm > 0):
        comm = float(
            np.max(tm.terms_bytes / b, initial=0.0) + np.max(tm.terms_latency_ns, initial=0.0)
        )
    cost = float(np.dot(cost_usd_per_gbps, b))
    return Scale(bw_gbps=b, time_ns=comm if comm > 0 else 1.0, cost_usd=cost if cost > 0 else 1.0)


def upper_limits_gbps(instance: Instance, budget_usd: float | None = None,
                      unit_cost_usd_per_gbps_: np.ndarray | None = None) -> np.ndarray:
    """Per dimension, the smallest upper limit on B_d (GB/s) that one design row, bound or the
    budget states alone (inf when none does): rows with non-negative coefficients and sense <= or
    ==, upper bounds, budget / price (``unit_cost_usd_per_gbps_``: the cluster's $ per GB/s of each
    dimension, N u_d, if known). Shape (D,); without a budget the array is read-only and computed
    once per design matrix (copy it before changing it)."""
    dm = instance.design_matrix
    # (read-only; once per instance)
    lim = instance.memo("_upper_limits", (dm,), lambda: _row_limits(dm))
    if budget_usd is not None:
        unit = (unit_cost_usd_per_gbps_ if unit_cost_usd_per_gbps_ is not None
                else cluster_cost_usd_per_gbps(instance))
        lim = np.minimum(lim, budget_usd / unit)
    return lim


def _row_limits(dm) -> np.ndarray:
    A = dm.A
    # <= or ==, non-negative coefficients
    rows = (dm.sense != 1) & (A.min(axis=1, initial=0.0) >= 0)
    with np.errstate(divide="ignore", invalid="ignore"):  # (0 / 0 where A is 0: replaced by INF)
        per_row = np.where(A[rows] > 0, np.maximum(dm.rhs[rows], 0.0)[:, None] / A[rows], INF)
    lim = np.minimum(per_row.min(axis=0, initial=INF), dm.bw_upper)
    lim.flags.writeable = False
    return lim


def cost_bounds_usd(instance: Instance) -> tuple[float, float]:
    """(L, U) in $ with L <= the cheapest and U >= the dearest network the design rows and bounds
    allow, from single rows and bounds alone (no LP): a row ``sum_d a_d B_d >= r`` (or ``==``) with
    every a_d >= 0 and r > 0 gives cost = sum_d p_d B_d >= r min_{a_d > 0} p_d / a_d (B >= 0), the
    lower bounds give sum_d p_d lower_d, and :func:`upper_limits_gbps` gives U = sum_d p_d limit_d
    (p: the cluster's $ per GB/s, N u_d). (0, inf) where no row or bound says more; L may be 0 and U
    infinite. Computed once per design matrix and prices."""
    dm = instance.design_matrix
    p = cluster_cost_usd_per_gbps(instance)
    return instance.memo("_cost_bounds", (dm, p), lambda: _cost_bounds(instance, dm, p))


def _cost_bounds(instance: Instance, dm, p: np.ndarray) -> tuple[float, float]:
    lower = float(p @ dm.bw_lower)
    A = dm.A
    rows = ((dm.sense >= 1) & (A.min(axis=1, initial=0.0) >= 0) & (A.max(axis=1, initial=0.0) > 0)
            & (dm.rhs > 0))  # >= or ==, coefficients >= 0, one of them > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if rows.any():
            # $ per unit of the row
            cheapest_per_unit = np.where(A[rows] > 0, p / A[rows], INF).min(axis=1)
            lower = max(lower, float((dm.rhs[rows] * cheapest_per_unit).max()))
        upper = float(np.where(p > 0, p * upper_limits_gbps(instance), 0.0).sum())
    return lower, upper


def bytes_per_dim(tm: TimeModel) -> np.ndarray:
    """(D,) bytes the aggregated terms put on each dimension per iteration (terms weighted, a weight
    of 0 counted as 1): the M_d of the square-root rule."""
    w = np.where(tm.term_weights > 0, tm.term_weights, 1.0)
    return (tm.terms_bytes * w[:, None]).sum(axis=0) if tm.terms_bytes.size else np.zeros(tm.n_dims)


def share_units_gbps(instance: Instance, tm: TimeModel, unit_gbps: float) -> np.ndarray:
    """(D,) GB/s: the bandwidth unit of each share column of the cost-share LP, the square-root
    rule's split of the uniform design's cost (B_d proportional to sqrt(M_d / p_d), the minimiser of
    sum_d M_d / B_d at a fixed cost sum_d p_d B_d; M_d: :func:`bytes_per_dim`, p_d the dimension's
    price; Kleinrock's square-root capacity assignment), so that a dimension far cheaper than the
    others, which takes most of the bandwidth, and one far dearer, which takes almost none, both
    have shares of order 1; ``unit_gbps`` where a dimension carries no traffic or has no price.
    Units only: the LP's answer does not depend on them. Computed once per time model, prices and
    unit (read-only)."""
    p = cluster_cost_usd_per_gbps(instance)
    return instance.memo_by_value("_share_units", (tm, p), float(unit_gbps),
                                  lambda: _share_units(tm, p, unit_gbps))


def _share_units(tm: TimeModel, p: np.ndarray, unit_gbps: float) -> np.ndarray:
    M = bytes_per_dim(tm)
    ok = (M > 0) & (p > 0)
    out = np.full(tm.n_dims, float(unit_gbps))
    if ok.any():
        root = np.sqrt(M[ok] / p[ok])
        # (the same cost as the uniform design)
        out[ok] = root * (float(p @ out) / float(p[ok] @ root))
        out = np.maximum(out, 1e-12 * out.max())
    out.flags.writeable = False
    return out


def choose_scale(instance: Instance, tm: TimeModel, budget_usd: float | None = None,
                 target_ns: float | None = None, limits_gbps: np.ndarray | None = None) -> Scale:
    """The initial scale (one rule for every instance): R = the tightest per-dimension upper limit
    among the loaded dimensions (:func:`upper_limits_gbps`; without one, the bandwidth that carries
    all bytes within the time target; else 1 GB/s); b_d = R sqrt(M_d) / max_e sqrt(M_e) on loaded
    dimensions (M_d: bytes on d; the square-root rule is the optimum of sum_d M_d / B_d under sum_d
    B_d fixed), clipped to d's own limit; R elsewhere. The solver re-centres it on its incumbent
    (:meth:`Scale.rescaled`) when the optimum lies far from it. ``limits_gbps``:
    :func:`upper_limits_gbps` without the budget, if known."""
    cost = cluster_cost_usd_per_gbps(instance)
    lim = upper_limits_gbps(instance) if limits_gbps is None else limits_gbps
    dm = instance.design_matrix
    if budget_usd is not None:  # (the budget brings in the prices)
        return _choose(instance, tm, budget_usd, target_ns, cost, lim)
    # the units of a sweep's shapes that share a time model and rows: only the cost unit is the
    # candidate's own
    scales = current().table("scale", 64)
    key = (Same(tm), Same(dm), Same(lim), target_ns)
    hit = scales.get(key)
    if hit is not None:
        b, comm = hit
        cost_unit = float(np.dot(cost, b))
        return Scale(bw_gbps=b.copy(), time_ns=comm, cost_usd=cost_unit if cost_unit > 0 else 1.0)
    out = _choose(instance, tm, budget_usd, target_ns, cost, lim)
    scales.put(key, (out.bw_gbps.copy(), out.time_ns))
    return out


def _choose(instance: Instance, tm: TimeModel, budget_usd: float | None, target_ns: float | None,
            cost: np.ndarray, lim: np.ndarray) -> Scale:
    D = tm.n_dims
    M = bytes_per_dim(tm)
    if budget_usd is not None:
        lim = np.minimum(lim, budget_usd / cost)
    loaded = M > 0
    finite = lim[loaded & np.isfinite(lim)]
    if finite.size and finite.min() > 0:
        R = float(finite.min())
    elif target_ns is not None and target_ns > tm.constant_ns and M.sum() > 0:
        R = float(M.sum() / (target_ns - tm.constant_ns))
    else:
        R = float(lim[np.isfinite(lim) & (lim > 0)].min(initial=1.0)) if not loaded.any() else 1.0
    b = np.full(D, R)
    if loaded.any():
        root = np.sqrt(M)
        b[loaded] = R * root[loaded] / root.max()
    b = np.where(np.isfinite(lim) & (lim > 0), np.minimum(b, lim), b)
    b = np.maximum(b, instance.design_matrix.bw_lower)
    b = np.where(b > 0, b, R if R > 0 else 1.0)
    return _finish(tm, cost, b)


def typical_bandwidth(instance: Instance, tm: TimeModel, target_ns: float | None = None) -> float:
    """A power of ten near the bandwidths (GB/s) the problem is about: the bandwidth that meets
    ``target_ns`` when every dimension has it (if given), else the median size of the design rows'
    and bounds' limits, else 1. Only the units of the LP depend on it (u and kap are then of order
    1), never its answer."""
    if target_ns is not None and tm.carries_traffic.any():
        ones = np.ones(tm.n_dims)
        # comm time at 1 GB/s everywhere; it scales as 1/B without latency
        comm = tm.time_ns(ones) - tm.compute_ns
        room = target_ns - tm.compute_ns
        if comm > 0 and room > 0:
            return _pow10(comm / room)
    sizes = [abs(c.rhs) / max(abs(a) for a in c.coefficients) for c in instance.constraints
             if c.rhs != 0 and max(abs(a) for a in c.coefficients) > 0]
    for b in instance.bounds_or_default:
        sizes += [v for v in (b.lower_gbps, b.upper_gbps) if v is not None and 0 < v < math.inf]
    return _pow10(float(np.median(sizes))) if sizes else 1.0


def product_bandwidth(instance: Instance, tm: TimeModel, target_ns: float | None = None,
                      cost_bounds: tuple[float, float] | None = None) -> float:
    """The bandwidth unit (GB/s, a power of ten) of the time x cost LP: with a time target, the
    bandwidth that meets it (:func:`typical_bandwidth`); else the uniform bandwidth that costs the
    rows' cost floor (:func:`cost_bounds_usd`), when there is one. Without a time target min T x
    cost sits at or near the cheapest networks (T x cost = (compute + latency) x cost + a scale-free
    communication part), so the floor, not the median of the rows' sizes (which a loose ceiling row
    drags orders of magnitude away), is where the LP's cost level u must be of order 1. Only the
    LP's units depend on it, never its answer. ``cost_bounds``: the result of
    :func:`cost_bounds_usd`, if known. A target so loose that its bandwidth is below the cost
    floor's does not bind there: the floor's unit (a unit of 1e-6 GB/s for a 1e17 ns target left
    the LPs at their tolerance floor: LIMIT, or a false "infeasible" at 9e17 ns)."""
    floor, _ = cost_bounds if cost_bounds is not None else cost_bounds_usd(instance)
    price = float(cluster_cost_usd_per_gbps(instance).sum())
    at_floor = (_pow10(floor / price) if floor > 0 and price > 0 and math.isfinite(floor)
                else None)
    if target_ns is None and at_floor is not None:
        return at_floor
    unit = typical_bandwidth(instance, tm, target_ns)
    return unit if target_ns is None or at_floor is None else max(unit, at_floor)


def _pow10(v: float) -> float:
    return float(10.0 ** round(math.log10(v))) if v > 0 and math.isfinite(v) else 1.0
