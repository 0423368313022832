"""Pyomo formulation of the procurement problems (time x cost, fastest within a budget) in
homogeneous variables: one convex LP for both, with the same tangent cuts as the performance LP.

For a design B (GB/s per NPU) with network cost C = sum_d p_d B_d ($; p_d = N u_d, LIBRA's counting)
the variables are

- ``x[d] = p_d B_d / C``: dimension d's share of the cost (``share`` row: sum_d x_d = 1, or <= 1
  when u is fixed by a budget, since the network may then cost less than it), so B_d = x_d C / p_d;
- ``u = K / C`` and ``kap >= 1/u`` (= C / K; tangent cuts ``kap >= 2/v - u/v^2``), K the cost unit
  ($);
- ``r[d] >= 1/x_d`` for every dimension that carries traffic (tangent cuts; ``r_d = C t_d / p_d``
  with t_d = 1/B_d);
- ``tau[k]``, ``y[v]``: the epigraph of C x T (the time model's terms and max nodes, multiplied by
  the cost), each in its own unit (P0 ms x $ times the largest coefficient of its row, so that every
  row's largest coefficient is 1).

Multiplying T by C makes every row linear (Charnes and Cooper 1962, "Programming with linear
fractional functionals", applied to the product): a collective term's C x bytes / B_d is bytes x p_d
/ x_d = bytes x p_d r_d, a constant c (compute, latency, a node's constant) becomes c x C = c K kap,
and a design row sum_d a_d B_d <= h becomes sum_d a_d (K / p_d) x_d <= h u. The objective ``C x T =
K compute kap + sum_k w_k tau_k + sum_v omega_v y_v`` is then minimised over a convex set: C x T is
jointly convex in (x, r, u, kap) although T x C is not convex in B. So:

- time x cost: minimise the objective, u free within the budget range; the relaxation kap >= 1/u is
  exact at the optimum because every coefficient of kap in the objective and the rows is >= 0
  (compute, latency, constants);
- fastest within a budget kappa: fix u = K / kappa and kap = kappa / K; the objective is kappa x
  f(kappa).

(The cheapest design for a time target is not exact in these variables: its target row would push
kap above 1/u.)

Dividing by C normalises every bandwidth by the network's own scale, dimension by dimension (x_d is
in [0, 1] whatever the instance's GB/s or $ magnitudes), which keeps the cut coefficients inside
HiGHS's tolerances. Each share column then holds g_d x_d with g_d = K / (p_d s) (and each reciprocal
r_d / g_d), so that it is of order 1 at the typical bandwidth s however cheap dimension d is: an
unscaled share of a dimension priced 1e6 below the others is below 1e-6, where no tangent cut can
reach it (their points stay within 1e-6 .. 1e6: a cut's coefficients must stay inside HiGHS's matrix
range), and the LP would give that dimension no bandwidth. In the scaled columns the share row is
sum_d x_d / g_d = 1 and a design row sum_d a_d x_d <= h u. Builds; never solves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from ..model.cost import unit_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..spec import Instance
from .scale import MB, MS_NS


@dataclass
class RatioLP:
    """A built procurement LP (see the module docstring) and what is needed to read results back.

    Attributes:
        model: the Pyomo model (components ``x``, ``u``, ``kap``, ``r``, ``tau``, ``y``, ``share``,
            ``design``, ``bound_lo``, ``bound_hi``, ``r_floor``, ``epi``, ``node``; objective
            ``product``); the solver adds the cuts.
        loaded: dimensions that carry traffic (those with an ``r``).
        price_usd_per_gbps: (D,) p_d = N u_d, $ per GB/s of per-NPU bandwidth.
        cost_unit_usd: K ($): C = K / u.
        product_unit: P0, ms x $ per model unit of ``tau``, ``y`` and the objective.
        bw_unit_gbps: s (GB/s), the typical bandwidth the units were chosen at.
        compute_coef: the objective's coefficient of ``kap`` (K x compute / P0).
    """

    model: pyo.ConcreteModel
    loaded: tuple[int, ...]
    price_usd_per_gbps: np.ndarray
    cost_unit_usd: float
    product_unit: float
    bw_unit_gbps: float
    compute_coef: float
    share_scale: np.ndarray

    def bandwidth(self, x: np.ndarray, cost_usd: float) -> np.ndarray:
        """B (GB/s) of the scaled shares ``x`` at network cost ``cost_usd``: B_d = x_d C / (p_d g_d)
        (clipped at 0; ``x`` holds g_d x each share)."""
        return np.maximum(x, 0.0) * cost_usd / (self.price_usd_per_gbps * self.share_scale) + 0.0


def build_ratio_lp(instance: Instance, tm: TimeModel, bw_unit_gbps: float) -> RatioLP:
    """Build the procurement LP of ``instance`` with its aggregated time model (no cuts yet; see
    module docstring).

    Args:
        instance: design constraints, bounds and cost model (every price is positive:
            spec.CostClass).
        tm: the aggregated time model.
        bw_unit_gbps: the typical bandwidth s (GB/s) that fixes the units K = sum_d p_d s and P0 = K
            T(s) (ms $).
    """
    D = tm.n_dims
    p = instance.network.npus_total * unit_cost_usd_per_gbps(instance)  # $ per GB/s, > 0
    s = float(bw_unit_gbps)
    K = float(p.sum() * s)
    g = K / (p * s)  # B_d / s = g_d x_d / u
    t_typ_ms = tm.time_ns(np.full(D, s)) / MS_NS
    P0 = K * t_typ_ms if t_typ_ms > 0 else K
    loaded = tuple(int(d) for d in np.flatnonzero(tm.carries_traffic))
    # coefficient of r_d in tau_k (MB x $/(GB/s) = ms x $)
    A = tm.terms_bytes / MB * (p * g)[None, :] / P0
    lat = tm.terms_latency_ns / MS_NS * K / P0  # coefficient of kap
    node_scale = K / MS_NS / P0

    m = pyo.ConcreteModel(name=f"{instance.name}-ratio")
    m.x = pyo.Var(range(D), domain=pyo.NonNegativeReals, bounds=lambda _m, d: (0.0, float(g[d])))
    m.u = pyo.Var(domain=pyo.NonNegativeReals)
    m.kap = pyo.Var(domain=pyo.NonNegativeReals)
    m.r = pyo.Var(loaded, bounds=lambda _m, d: (float(1.0 / g[d]), None))
    K_terms = A.shape[0]
    m.tau = pyo.Var(range(K_terms), domain=pyo.NonNegativeReals)
    m.y = pyo.Var(range(len(tm.nodes)), domain=pyo.NonNegativeReals)
    m.share = pyo.Constraint(expr=sum(float(1.0 / g[d]) * m.x[d] for d in range(D)) == 1.0)

    def design(_m, i):
        c = instance.constraints[i]
        lhs = sum(float(a) * _m.x[d] for d, a in enumerate(c.coefficients) if a != 0)
        rhs = float(c.rhs / s) * _m.u
        return {"<=": lhs <= rhs, ">=": lhs >= rhs, "==": lhs == rhs}[c.sense]

    m.design = pyo.Constraint(range(len(instance.constraints)), rule=design)
    bounds = instance.bounds_or_default
    lo = [d for d in range(D) if bounds[d].lower_gbps > 0]
    hi = [
        d
        for d in range(D)
        if bounds[d].upper_gbps is not None and math.isfinite(bounds[d].upper_gbps)
    ]
    m.bound_lo = pyo.Constraint(lo, rule=lambda _m, d: _m.x[d] >= bounds[d].lower_gbps / s * _m.u)
    m.bound_hi = pyo.Constraint(hi, rule=lambda _m, d: _m.x[d] <= bounds[d].upper_gbps / s * _m.u)
    # B_d <= hi_d gives t_d >= 1/hi_d, i.e. r_d >= C / (p_d hi_d) = (K / (p_d hi_d)) kap (valid
    # wherever kap <= C/K)
    m.r_floor = pyo.Constraint(
        [d for d in hi if d in loaded],
        rule=lambda _m, d: _m.r[d] >= float(K / (p[d] * g[d] * bounds[d].upper_gbps)) * _m.kap,
    )

    # each term and node in its own unit (tau_k = sig_k x tau[k]) so that its row's largest
    # coefficient is 1: a term of a few hundred bytes next to the cost unit would otherwise get
    # coefficients below HiGHS's 1e-9 matrix tolerance, which drops them (the LP then misses that
    # term's time: a gap that never closes)
    sig = np.maximum(A, lat).max(axis=1) if K_terms else np.zeros(0)
    sig = np.where(sig > 0, sig, 1.0)
    sig_y = np.ones(len(tm.nodes))
    for v, node in enumerate(tm.nodes):  # nodes refer to earlier nodes only
        top = max(
            [pc.const_ns * node_scale for pc in node]
            + [a * sig[k] for pc in node for k, a in pc.terms]
            + [b * sig_y[w] for pc in node for w, b in pc.nodes]
        )
        sig_y[v] = top if top > 0 else 1.0

    def part(_m, k, d):
        return ((float(A[k, d] / sig[k]) * _m.r[d] if A[k, d] > 0 else 0.0)
                + (float(lat[k, d] / sig[k]) * _m.kap if lat[k, d] > 0 else 0.0))

    if tm.dimension_mode == "sequential":
        m.epi = pyo.Constraint(
            range(K_terms), rule=lambda _m, k: _m.tau[k] >= sum(part(_m, k, d) for d in range(D))
        )
    else:
        pairs = [(k, d) for k in range(K_terms) for d in range(D) if A[k, d] > 0 or lat[k, d] > 0]
        m.epi = pyo.Constraint(pairs, rule=lambda _m, k, d: _m.tau[k] >= part(_m, k, d))
    pieces = [(v, i) for v, node in enumerate(tm.nodes) for i in range(len(node))]

    def node(_m, v, i):
        pc, sv = tm.nodes[v][i], sig_y[v]
        rhs = float(pc.const_ns * node_scale / sv) * _m.kap + sum(float(a * sig[k] / sv) * _m.tau[k]
                                                                  for k, a in pc.terms)
        return _m.y[v] >= rhs + sum(float(b * sig_y[w] / sv) * _m.y[w] for w, b in pc.nodes)

    m.node = pyo.Constraint(pieces, rule=node)
    compute_coef = float(tm.compute_ns * node_scale)
    obj = compute_coef * m.kap
    obj += sum(
        float(tm.term_weights[k] * sig[k]) * m.tau[k]
        for k in range(K_terms)
        if tm.term_weights[k] > 0
    )
    obj += sum(
        float(tm.node_weights[v] * sig_y[v]) * m.y[v]
        for v in range(len(tm.nodes))
        if tm.node_weights[v] > 0
    )
    m.product = pyo.Objective(expr=obj, sense=pyo.minimize)
    return RatioLP(model=m, loaded=loaded, price_usd_per_gbps=p, cost_unit_usd=K, product_unit=P0,
                   bw_unit_gbps=s, compute_coef=compute_coef, share_scale=g)
