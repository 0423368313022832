"""Pyomo formulation of the performance problem on t_d = 1/B_d (docs/explanation/solving.md).
Builds; never solves or opens files.

Variables (scaled units: MB, GB/s, ms, so t_d in ms/MB equals 1/B_d exactly):

- ``B[d] >= 0``: per-NPU bandwidth of dimension d (GB/s), in the user's linear design constraints and bounds (exact);
- ``t[d]``: for each dimension that carries traffic, an upper estimate of 1/B_d;
- ``tau[k] >= 0``: epigraph of collective term k: ``tau[k] >= A[k, d] * t[d] + lat[k, d]`` for every d the term
  uses (dimensions working concurrently), or one row ``tau[k] >= sum_d (A[k, d] * t[d] + lat[k, d])`` (sequentially);
- ``y[v] >= 0``: epigraph of max node v of the training loop, one row per piece
  ``y[v] >= c + sum a * tau[k] + sum b * y[u]`` (all coefficients >= 0, so the epigraphs are exact at the optimum).

Objective: ``min sum_k w_k tau[k] + sum_v omega_v y[v]`` (ms); the iteration time adds the constant part.
The convex link ``t_d >= 1/B_d`` is outer-approximated by tangent cuts ``t_d >= 2/b - B_d/b^2`` (exact at B_d = b),
so every LP optimum is a lower bound and its B is feasible (an upper bound once T(B) is evaluated exactly).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from ..model.cost import unit_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..spec import Instance
from .scale import MB, MS_NS, MUSD


@dataclass
class PerfLP:
    """A built performance LP: the Pyomo ``model`` plus what is needed to read results back in GB/s and ns.

    Attributes:
        model: the Pyomo ConcreteModel (components ``B``, ``t``, ``tau``, ``epi``, ``design``, ``time``);
            the solver adds the tangent cuts (:meth:`tangent_cut`) to its HiGHS copy of the model.
        loaded: indices of the dimensions that carry traffic (those with a ``t`` variable).
        compute_ns: constant compute time added to the LP objective to give the iteration time.
        cost_musd_per_gbps: (D,) network cost per GB/s of each dimension's per-NPU bandwidth, M$ (N * u_d / 1e6):
            the coefficients of the budget row ``sum_d c_d B_d <= kappa`` and of the min-cost objective.

    The procurement solvers add two rows of their own, with bounds they change between solves: the budget row above
    (M$) and the time-target row ``sum_k tau[k] <= (target - compute) / 1e6`` (ms).
    """

    model: pyo.ConcreteModel
    loaded: tuple[int, ...]
    compute_ns: float
    cost_musd_per_gbps: np.ndarray
    bw_scale: float = 1.0

    @staticmethod
    def tangent_cut(b_gbps: float) -> tuple[float, float, float]:
        """The tangent of t >= 1/B at B = ``b_gbps`` (> 0) as ``coef_t * t + coef_B * B >= lower``:
        (lower, coef_t, coef_B) = (2, b, 1/b), i.e. t >= 2/b - B/b^2 multiplied by b. In that form no coefficient
        falls below HiGHS's 1e-9 matrix tolerance for b in 1e-9 .. 1e9 model units (1/b^2 did beyond b = 3e4, and a
        dropped coefficient turns the cut into a false, too strong one)."""
        return 2.0, b_gbps, 1.0 / b_gbps


def build_perf_lp(instance: Instance, tm: TimeModel, bw_scale: float | None = None) -> PerfLP:
    """Build the performance LP (no cuts yet) for ``instance`` with its aggregated time model ``tm``.

    Args:
        instance: supplies the design constraints and bounds (GB/s per NPU).
        tm: the aggregated time model, ``terms_bytes`` of shape (K, D).
        bw_scale: the LP's unit of bandwidth (GB/s); default :func:`bandwidth_scale` of the instance. The cheapest
            design for a time target can need bandwidths far below the instance's limits, and its own unit.

    Returns:
        :class:`PerfLP`; the solver adds tangent cuts and solves.
    """
    D = tm.n_dims
    s = bandwidth_scale(instance) if bw_scale is None else float(bw_scale)
    loaded = tuple(int(d) for d in np.flatnonzero(tm.carries_traffic))
    bounds = instance.bounds_or_default
    m = pyo.ConcreteModel(name=instance.name)
    m.B = pyo.Var(range(D), bounds=lambda _m, d: (bounds[d].lower_gbps / s,
                                                  None if bounds[d].upper_gbps is None else bounds[d].upper_gbps / s))
    m.t = pyo.Var(loaded, bounds=lambda _m, d: (_t_floor(bounds[d].upper_gbps) * s, None))
    obj = add_time_epigraph(m, tm, s)
    m.design = pyo.Constraint(range(len(instance.constraints)), rule=lambda _m, i: _design_row(_m, instance, i, s))
    m.time = pyo.Objective(expr=obj if len(m.tau) or len(m.y) else 0.0, sense=pyo.minimize)
    cost = instance.network.npus_total * unit_cost_usd_per_gbps(instance) / MUSD
    return PerfLP(model=m, loaded=loaded, compute_ns=tm.compute_ns, cost_musd_per_gbps=cost, bw_scale=s)


def bandwidth_scale(instance: Instance) -> float:
    """The LP's unit of bandwidth, s GB/s (a power of ten), chosen so that the bandwidths the constraints speak of are
    of order 100 model units: tangent-cut coefficients 1/b^2 then stay far inside HiGHS's matrix range (values below
    1e-9 are dropped, which would turn a cut into a false, too strong one). Times are
    scaled with it (model time = s x ms), so the epigraph coefficients do not change. s = 1 for 10..10,000 GB/s."""
    # the tightest upper limit (a "<=" or "==" row with non-negative coefficients, or an upper bound) sets the scale
    sizes = [c.rhs / max(c.coefficients) for c in instance.constraints
             if c.sense != ">=" and c.rhs > 0 and min(c.coefficients) >= 0]
    sizes += [b.upper_gbps for b in instance.bounds_or_default if b.upper_gbps is not None]
    if not sizes:
        return 1.0
    sizes = [min(sizes)]
    return float(10.0 ** (math.floor(math.log10(max(sizes))) - 2)) if not 10 <= max(sizes) < 10_000 else 1.0


def add_time_epigraph(m: pyo.ConcreteModel, tm: TimeModel, bw_scale: float = 1.0):
    """Add the epigraph of T's bandwidth-dependent part to ``m`` (which already has ``m.t[d]`` for the loaded
    dimensions, in 1/(``bw_scale`` GB/s)): variables ``tau``, ``y`` and the rows ``epi`` and ``node`` of the module
    docstring, in units of 1/``bw_scale`` ms (ms when the scale is 1). Shared by the LP here and the provisioning
    MILP. Returns sum_k w_k tau_k + sum_v omega_v y_v in those units."""
    D = tm.n_dims
    A = tm.terms_bytes / MB  # (K, D) MB; with t and tau both scaled by s the coefficients do not change
    lat = tm.terms_latency_ns / MS_NS * bw_scale  # (K, D) model time units
    K = A.shape[0]
    m.tau = pyo.Var(range(K), domain=pyo.NonNegativeReals)
    m.y = pyo.Var(range(len(tm.nodes)), domain=pyo.NonNegativeReals)

    def part(_m, k, d):  # one dimension's share of term k: bytes x t + latency (ms)
        return (float(A[k, d]) * _m.t[d] if A[k, d] > 0 else 0.0) + float(lat[k, d])

    if tm.dimension_mode == "sequential":
        m.epi = pyo.Constraint(range(K), rule=lambda _m, k: _m.tau[k] >= sum(part(_m, k, d) for d in range(D)))
    else:
        pairs = [(k, d) for k in range(K) for d in range(D) if A[k, d] > 0 or lat[k, d] > 0]
        m.epi = pyo.Constraint(pairs, rule=lambda _m, k, d: _m.tau[k] >= part(_m, k, d))
    pieces = [(v, i) for v, node in enumerate(tm.nodes) for i in range(len(node))]
    m.node = pyo.Constraint(pieces, rule=lambda _m, v, i: _node_row(_m, tm.nodes[v][i], v, bw_scale))
    obj = sum(float(tm.term_weights[k]) * m.tau[k] for k in range(K) if tm.term_weights[k] > 0)
    return obj + sum(float(tm.node_weights[v]) * m.y[v] for v in range(len(tm.nodes)) if tm.node_weights[v] > 0)


def _node_row(m: pyo.ConcreteModel, piece, v: int, s: float):
    rhs = piece.const_ns / MS_NS * s + sum(a * m.tau[k] for k, a in piece.terms)
    return m.y[v] >= rhs + sum(b * m.y[u] for u, b in piece.nodes)


def _t_floor(upper_gbps: float | None) -> float:
    return 1.0 / upper_gbps if upper_gbps is not None and math.isfinite(upper_gbps) else 0.0


def _design_row(m: pyo.ConcreteModel, instance: Instance, i: int, s: float):
    c = instance.constraints[i]
    lhs = sum(float(a) * m.B[d] for d, a in enumerate(c.coefficients) if a != 0)
    rhs = c.rhs / s
    if c.sense == "<=":
        return lhs <= rhs
    if c.sense == ">=":
        return lhs >= rhs
    return lhs == rhs
