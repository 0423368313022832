"""Pyomo MILP of integer provisioning (docs/how-to/provision.md). Builds; never solves or opens
files.

Each dimension d has a finite list of options o (a part, a unit count and, on Switch dimensions, a
switch model; see :func:`hieropt.model.options.dimension_options`), each giving a per-NPU bandwidth
v_do (GB/s) at a cluster cost c_do ($).
With one binary z_do per option ("unary" formulation):

- ``one[d]``:      sum_o z_do = 1                          (exactly one option per dimension);
- B_d = sum_o v_do z_do and t_d = sum_o z_do / v_do        (both **linear and exact** at every
  integer point, so the convex link t = 1/B needs no cuts);
- ``epi``:         tau_k >= A_kd t_d + lat_kd for every d (dimensions working concurrently), or one
  row tau_k >= sum_d (A_kd t_d + lat_kd) (sequentially): the epigraph of collective term k of the
  aggregated :class:`hieropt.model.timing.TimeModel` (:func:`add_time_epigraph`);
- ``node``:        y_v >= c + sum a tau_k + sum b y_u, one row per piece of max node v of the
  training loop (all coefficients >= 0, so every epigraph is tight wherever the objective pushes the
  time down);
- ``design[i]``:   the instance's linear design constraints on B (exact), bounds by filtering the
  options;
- comm = sum_k w_k tau_k + sum_v omega_v y_v (ms; T = constant + comm), cost = sum c_do z_do (M$),
  power = sum p_do z_do (kW).

Scaled units: traffic in MB, bandwidth GB/s, time ms (t in ms/MB), cost in M$.

Objectives (one active at a time; the solver switches them): ``obj_time`` (min comm), ``obj_cost``
(min cost), ``obj_power`` (min power) and,
when built with ``product=True``, ``obj_product`` = (compute + comm) x cost, linearised exactly:
with w_do = z_do * comm (binary times continuous), sum_o w_do = comm for every d and ``lo z_do <=
w_do <= hi z_do`` (lo, hi: comm at the fastest and at the slowest options, as T is non-increasing in
every B_d) force w_do = comm when z_do = 1 and 0 otherwise, so comm x cost = sum_do c_do w_do at
every integer point — one exact MILP, no sweep over cost levels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from ..model.timing import TimeModel
from ..spec import Instance
from .scale import MB, MS_NS

MUSD = 1e6
"""Scale: $ per model unit of cost (M$)."""
KW = 1e3
"""Scale: W per model unit of power (kW)."""


@dataclass
class ProvisionMILP:
    """A built provisioning MILP and what is needed to read it back.

    Attributes:
        model: the Pyomo model (``z``, ``t``, ``tau``, ``one``, ``tdef``, ``epi``, ``design``,
            expressions ``comm`` (ms), ``cost`` (M$) and ``power`` (kW), objectives ``obj_time``,
            ``obj_cost``, ``obj_power`` and optionally ``obj_product``).
        bw_gbps: per dimension, the option bandwidths v_do (GB/s).
        cost_usd: per dimension, the option costs c_do ($).
        power_w: per dimension, the option power p_do (W; 0 where the catalog gives none).
        loaded: dimensions that carry traffic.
        compute_ns: constant compute time of one iteration (ns).
        comm_lo_ms, comm_hi_ms: bounds on comm over all option choices (ms).
    """

    model: pyo.ConcreteModel
    bw_gbps: list[np.ndarray]
    cost_usd: list[np.ndarray]
    power_w: list[np.ndarray]
    loaded: tuple[int, ...]
    compute_ns: float
    comm_lo_ms: float
    comm_hi_ms: float

    def comm_ms(self, choice: Sequence[int], tm: TimeModel) -> float:
        """Exact communication time (ms) of the option ``choice[d]`` on each dimension."""
        bw = np.array([self.bw_gbps[d][o] for d, o in enumerate(choice)])
        return (tm.time_ns(bw) - tm.compute_ns) / MS_NS

    def cost(self, choice: Sequence[int]) -> float:
        """Exact cost ($) of ``choice``."""
        return float(sum(self.cost_usd[d][o] for d, o in enumerate(choice)))

    def power(self, choice: Sequence[int]) -> float:
        """Exact power (W) of ``choice``."""
        return float(sum(self.power_w[d][o] for d, o in enumerate(choice)))


def build_provision_milp(instance: Instance, tm: TimeModel, bw_gbps: Sequence[Sequence[float]],
                         cost_usd: Sequence[Sequence[float]], product: bool = False,
                         power_w: Sequence[Sequence[float]] | None = None) -> ProvisionMILP:
    """Build the unary provisioning MILP.

    Args:
        instance: supplies the linear design constraints (GB/s per NPU); bounds must already be
            applied to the options.
        tm: the aggregated time model (``terms_bytes`` (K, D), bytes).
        bw_gbps: per dimension, the bandwidth of each option (GB/s, > 0).
        cost_usd: per dimension, the cluster cost of each option ($).
        product: also build the exact linearisation of (compute + comm) x cost and ``obj_product``.
        power_w: per dimension, the power of each option (W); None: 0 everywhere.
    """
    D = tm.n_dims
    v = [np.asarray(x, dtype=float) for x in bw_gbps]
    c = [np.asarray(x, dtype=float) for x in cost_usd]
    pw = (
        [np.asarray(x, dtype=float) for x in power_w]
        if power_w is not None
        else [np.zeros(len(x)) for x in v]
    )
    loaded = tuple(int(d) for d in np.flatnonzero(tm.carries_traffic))
    idx = [(d, o) for d in range(D) for o in range(len(v[d]))]
    m = pyo.ConcreteModel(name=f"{instance.name}-provision")
    m.z = pyo.Var(idx, domain=pyo.Binary)
    m.one = pyo.Constraint(
        range(D), rule=lambda _m, d: sum(_m.z[d, o] for o in range(len(v[d]))) == 1
    )
    inv = {d: 1.0 / v[d] for d in loaded}
    m.t = pyo.Var(loaded, bounds=lambda _m, d: (float(inv[d].min()), float(inv[d].max())))
    m.tdef = pyo.Constraint(loaded, rule=lambda _m, d: _m.t[d] == sum(float(inv[d][o]) * _m.z[d, o]
                                                                       for o in range(len(v[d]))))
    comm = add_time_epigraph(m, tm)  # tau, y and their rows

    def bw_expr(_m, d):
        return sum(float(v[d][o]) * _m.z[d, o] for o in range(len(v[d])))

    def design(_m, i):
        con = instance.constraints[i]
        lhs = sum(float(a) * bw_expr(_m, d) for d, a in enumerate(con.coefficients) if a != 0)
        return {"<=": lhs <= con.rhs, ">=": lhs >= con.rhs, "==": lhs == con.rhs}[con.sense]

    m.design = pyo.Constraint(range(len(instance.constraints)), rule=design)
    m.comm = pyo.Expression(expr=comm)
    m.cost = pyo.Expression(expr=sum(float(c[d][o] / MUSD) * m.z[d, o] for d, o in idx))
    zero = 0.0 * m.z[idx[0]]  # keeps objectives non-constant when nothing carries traffic
    m.obj_time = pyo.Objective(expr=m.comm + zero, sense=pyo.minimize)
    m.obj_cost = pyo.Objective(expr=m.cost, sense=pyo.minimize)
    m.obj_cost.deactivate()
    m.power = pyo.Expression(expr=sum(float(pw[d][o] / KW) * m.z[d, o] for d, o in idx))
    m.obj_power = pyo.Objective(expr=m.power + zero, sense=pyo.minimize)
    m.obj_power.deactivate()
    slowest = np.array([x.min() for x in v])
    fastest = np.array([x.max() for x in v])
    lo = (tm.time_ns(fastest) - tm.compute_ns) / MS_NS  # T is non-increasing in every B_d
    hi = (tm.time_ns(slowest) - tm.compute_ns) / MS_NS
    if product:
        compute_ms = tm.compute_ns / MS_NS
        m.w = pyo.Var(idx, bounds=(0.0, hi))
        m.wsum = pyo.Constraint(
            range(D), rule=lambda _m, d: sum(_m.w[d, o] for o in range(len(v[d]))) == _m.comm
        )
        m.wub = pyo.Constraint(idx, rule=lambda _m, d, o: _m.w[d, o] <= hi * _m.z[d, o])
        m.wlb = pyo.Constraint(idx, rule=lambda _m, d, o: _m.w[d, o] >= lo * _m.z[d, o])
        m.obj_product = pyo.Objective(
            expr=compute_ms * m.cost + sum(float(c[d][o] / MUSD) * m.w[d, o] for d, o in idx),
            sense=pyo.minimize,
        )
        m.obj_product.deactivate()
    return ProvisionMILP(
        model=m,
        bw_gbps=v,
        cost_usd=c,
        power_w=pw,
        loaded=loaded,
        compute_ns=tm.compute_ns,
        comm_lo_ms=lo,
        comm_hi_ms=hi,
    )


def add_time_epigraph(m: pyo.ConcreteModel, tm: TimeModel, bw_scale: float = 1.0):
    """Add the epigraph of T's bandwidth-dependent part to ``m`` (which already has ``m.t[d]`` for
    the loaded dimensions, in 1/(``bw_scale`` GB/s)): variables ``tau``, ``y`` and the rows ``epi``
    and ``node`` of the module docstring, in units of 1/``bw_scale`` ms (ms when the scale is 1).
    Returns sum_k w_k tau_k + sum_v omega_v y_v in those units."""
    D = tm.n_dims
    # (K, D) MB; with t and tau both scaled by s the coefficients do not change
    A = tm.terms_bytes / MB
    lat = tm.terms_latency_ns / MS_NS * bw_scale  # (K, D) model time units
    K = A.shape[0]
    m.tau = pyo.Var(range(K), domain=pyo.NonNegativeReals)
    m.y = pyo.Var(range(len(tm.nodes)), domain=pyo.NonNegativeReals)

    def part(_m, k, d):  # one dimension's share of term k: bytes x t + latency (ms)
        return (float(A[k, d]) * _m.t[d] if A[k, d] > 0 else 0.0) + float(lat[k, d])

    if tm.dimension_mode == "sequential":
        m.epi = pyo.Constraint(
            range(K), rule=lambda _m, k: _m.tau[k] >= sum(part(_m, k, d) for d in range(D))
        )
    else:
        pairs = [(k, d) for k in range(K) for d in range(D) if A[k, d] > 0 or lat[k, d] > 0]
        m.epi = pyo.Constraint(pairs, rule=lambda _m, k, d: _m.tau[k] >= part(_m, k, d))
    pieces = [(v, i) for v, node in enumerate(tm.nodes) for i in range(len(node))]
    m.node = pyo.Constraint(
        pieces, rule=lambda _m, v, i: _node_row(_m, tm.nodes[v][i], v, bw_scale)
    )
    obj = sum(float(tm.term_weights[k]) * m.tau[k] for k in range(K) if tm.term_weights[k] > 0)
    return obj + sum(
        float(tm.node_weights[v]) * m.y[v] for v in range(len(tm.nodes)) if tm.node_weights[v] > 0
    )


def _node_row(m: pyo.ConcreteModel, piece, v: int, s: float):
    rhs = piece.const_ns / MS_NS * s + sum(a * m.tau[k] for k, a in piece.terms)
    return m.y[v] >= rhs + sum(b * m.y[u] for u, b in piece.nodes)
