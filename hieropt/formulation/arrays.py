"""The performance LP on t_d = 1/B_d (docs/explanation/solving.md): its statement as a Pyomo model,
and the same LP compiled to numpy arrays for HiGHS. Builds; never solves or opens files.

Variables, in scaled units (:class:`hieropt.formulation.scale.Scale`: a bandwidth unit b_d per
dimension, a time unit and a cost unit, chosen from the instance so that the optimum is of order 1
on every axis):

- ``B[d] >= 0``: per-NPU bandwidth of dimension d in units of b_d, in the user's linear design
  constraints and bounds (exact);
- ``t[d]``: for each dimension that carries traffic, an upper estimate of 1/B[d] (= b_d /
  bandwidth);
- ``tau[k] >= 0``: epigraph of collective term k: ``tau[k] >= A[k, d] * t[d] + lat[k, d]`` for every
  d the term uses (dimensions working concurrently), or one row ``tau[k] >= sum_d (A[k, d] * t[d] +
  lat[k, d])`` (sequentially), with A = bytes / (b_d * time unit) and lat = latency / time unit;
- ``y[v] >= 0``: epigraph of max node v of the training loop, one row per piece
  ``y[v] >= c + sum a * tau[k] + sum b * y[u]`` (all coefficients >= 0, so the epigraphs are exact
  at the optimum).

Rows, in this order: the design constraints (each divided by its largest coefficient), the epigraph
rows, the node rows, the budget row ``sum_d c_d B[d] <= kappa`` and the time-target row ``sum_k w_k
tau[k] + sum_v omega_v y[v] <= target``; the last two are free (infinite bounds) until a procurement
objective sets them. Objective: ``min sum_k w_k tau[k] + sum_v omega_v y[v]``; the iteration time is
the time unit times that, plus the compute. The convex link ``t_d >= 1/B_d`` is outer-approximated
by tangent cuts ``b t_d + B_d / b >= 2`` (:func:`tangent_cut`, exact at B_d = b) that the solver
appends, so every LP optimum is a lower bound and its B is feasible.

:func:`build_statement` (Pyomo) is the readable, exportable statement; :func:`compile_perf_lp`
builds the identical matrix with numpy (tests/unit/test_formulation.py checks row by row) for the
solvers, which pay Pyomo's cost (~3 ms per model) nowhere on the hot path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..model.cost import cluster_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..spec import Instance
from .scale import Scale, choose_scale

INF = float("inf")


def tangent_cut(beta: float) -> tuple[float, float]:
    """The tangent of t >= 1/B at B = ``beta`` > 0 (scaled units), t >= 2/beta - B/beta^2,
    multiplied by beta: ``coef_t * t + coef_B * B >= 2`` with (coef_t, coef_B) = (beta, 1/beta); no
    coefficient falls below HiGHS's 1e-9 matrix tolerance for beta within 1e-9 .. 1e9 (a dropped
    coefficient would make the cut false)."""
    return beta, 1.0 / beta


# ---------------------------------------------------------------------------------- compiled arrays
@dataclass
class LPArrays:
    """The performance LP as arrays (row-wise sparse matrix), with the column and row layout the
    solvers need.

    Columns: ``b_col[d]`` (B of every dimension), ``t_col[d]`` (t of loaded dimensions, -1
    elsewhere), then ``tau`` (K) and ``y`` (V) from ``z0``. Rows: ``design`` (slice), ``epi``
    (slice; ``epi_term[i]`` is the term of row i), ``node`` (slice; ``node_of_row[i]`` the node),
    ``budget_row``, ``time_row``. ``time_costs`` is the time objective (units of ``scale.time_ns``),
    ``cost_costs`` the cost objective (units of ``scale.cost_usd``).

    ``pair_b[j]``, ``pair_t[j]``: the columns of every reciprocal link t >= 1/B the cuts approximate
    (here B and t of each loaded dimension; the procurement LP adds its cost level). Every other
    column before ``z0`` enters the LP linearly; the columns from ``z0`` on are the epigraph
    variables (>= 0, defined by the ``epi`` and ``node`` rows, which reference earlier nodes only).
    """

    scale: Scale
    loaded: tuple[int, ...]
    b_col: np.ndarray
    t_col: np.ndarray
    z0: int
    n_terms: int
    n_nodes: int
    col_lower: np.ndarray
    col_upper: np.ndarray
    time_costs: np.ndarray
    cost_costs: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    start: np.ndarray
    index: np.ndarray
    value: np.ndarray
    design: slice
    epi: slice
    node: slice
    budget_row: int
    time_row: int
    epi_term: np.ndarray
    node_of_row: np.ndarray
    row_scale: np.ndarray = field(default_factory=lambda: np.zeros(0))
    pair_b: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    pair_t: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    cache: dict = field(default_factory=dict)
    """Derived arrays the solvers compute once per LP (e.g. the dense matrix)."""

    @property
    def n_cols(self) -> int:
        """Number of columns."""
        return self.col_lower.size

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return self.row_lower.size

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Columns and values of row ``i``."""
        s, e = self.start[i], self.start[i + 1]
        return self.index[s:e], self.value[s:e]


def read_only(arrays):
    """``arrays`` (an :class:`LPArrays`, or any compiled LP dataclass) with every array field made
    read-only (in place; returned for chaining): arrays shared between solves must not be changed by
    any of them (its ``cache`` of derived values stays writable)."""
    for v in vars(arrays).values():
        if isinstance(v, np.ndarray):
            v.flags.writeable = False
    return arrays


def design_rows(instance: Instance, b: np.ndarray):
    """Design rows in scaled units, each divided by its largest coefficient: (lower, upper,
    coefficient matrix, divisors)."""
    dm = instance.design_matrix
    row = dm.A * b
    div = np.abs(row).max(axis=1, initial=0.0)
    coef = row / div[:, None]
    return dm.lower / div, dm.upper / div, coef, div


def _node_arrays(tm: TimeModel):
    """The max nodes as flat arrays: per piece its node, constant (ns) and merged term / node
    references."""
    node, const, terms, nodes = [], [], [], []
    for v, pieces in enumerate(tm.nodes):
        for p in pieces:
            node.append(v)
            const.append(p.const_ns)
            t: dict[int, float] = {}
            for k, a in p.terms:
                t[k] = t.get(k, 0.0) + a
            u: dict[int, float] = {}
            for j, bb in p.nodes:
                u[j] = u.get(j, 0.0) + bb
            terms.append(t)
            nodes.append(u)
    return node, const, terms, nodes


_NO_NODE_ROWS = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64),
                 np.zeros(0, dtype=np.int64), np.zeros(0))


def compile_perf_lp(
    instance: Instance,
    tm: TimeModel,
    scale: Scale,
    budget_usd: float | None = None,
    target_ns: float | None = None,
) -> LPArrays:
    """The LP of the module docstring as arrays (identical to :func:`build_statement`'s matrix),
    without cuts.

    Args:
        instance: design constraints, bounds and cost model.
        tm: the aggregated time model, ``terms_bytes`` (K, D) bytes.
        scale: the units (:func:`choose_scale`).
        budget_usd: the budget row's upper bound ($), None: free.
        target_ns: the time-target row's upper bound (iteration time, ns), None: free.
    """
    D, K, V = tm.n_dims, tm.terms_bytes.shape[0], len(tm.nodes)
    b = scale.bw_gbps
    loaded = tuple(int(d) for d in np.flatnonzero(tm.carries_traffic))
    nt = len(loaded)
    t_col = np.full(D, -1, dtype=np.int64)
    t_col[list(loaded)] = D + np.arange(nt)
    z0 = D + nt
    n = z0 + K + V
    dm = instance.design_matrix
    col_lower, col_upper = np.zeros(n), np.full(n, INF)
    col_lower[:D] = dm.bw_lower / b
    col_upper[:D] = dm.bw_upper / b
    capped = np.flatnonzero(np.isfinite(dm.bw_upper) & (t_col >= 0))
    col_lower[t_col[capped]] = b[capped] / dm.bw_upper[capped]
    time_costs = np.zeros(n)
    time_costs[z0:z0 + K] = tm.term_weights
    time_costs[z0 + K:] = tm.node_weights
    unit = cluster_cost_usd_per_gbps(instance)
    cost_b = unit * b / scale.cost_usd
    cost_costs = np.zeros(n)
    cost_costs[:D] = cost_b

    # (lo, hi, len, idx, val)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def block(lo, hi, lengths, idx, val) -> None:
        parts.append(
            (
                np.asarray(lo, dtype=float),
                np.asarray(hi, dtype=float),
                np.asarray(lengths, dtype=np.int64),
                np.asarray(idx, dtype=np.int64),
                np.asarray(val, dtype=float),
            )
        )

    dlo, dhi, dcoef, ddiv = design_rows(instance, b)
    r_d, c_d = np.nonzero(dcoef)
    block(dlo, dhi, np.bincount(r_d, minlength=dcoef.shape[0]), c_d, dcoef[r_d, c_d])
    n_design = dcoef.shape[0]
    A = tm.terms_bytes / b[None, :] / scale.time_ns
    lat = tm.terms_latency_ns / scale.time_ns
    if tm.dimension_mode == "sequential":
        kk, dd = np.nonzero(A > 0)
        lengths = 1 + np.bincount(kk, minlength=K)
        idx, val = [], []
        for k in range(K):
            sel = dd[kk == k]
            idx += [z0 + k, *t_col[sel]]
            val += [1.0, *(-A[k, sel])]
        block(lat.sum(axis=1), np.full(K, INF), lengths, idx, val)
        epi_term = np.arange(K)
    else:
        kk, dd = np.nonzero((A > 0) | (lat > 0))  # k-major, as the Pyomo statement's (k, d) pairs
        with_t = A[kk, dd] > 0
        lengths = 1 + with_t
        idx = np.empty(int(lengths.sum()), dtype=np.int64)
        val = np.empty(idx.size)
        first = np.cumsum(lengths) - lengths
        idx[first], val[first] = z0 + kk, 1.0
        idx[first[with_t] + 1], val[first[with_t] + 1] = (
            t_col[dd[with_t]],
            -A[kk[with_t], dd[with_t]],
        )
        block(lat[kk, dd], np.full(kk.size, INF), lengths, idx, val)
        epi_term = kk
    n_epi = len(epi_term)
    node, const, lengths, rel, val = tm.node_rows if tm.nodes else _NO_NODE_ROWS
    if node.size:
        block(const / scale.time_ns, np.full(node.size, INF), lengths, z0 + rel, val)
    n_node = node.size
    bnz = np.flatnonzero(cost_b)
    tnz = np.flatnonzero(time_costs)
    block(
        [-INF, -INF],
        [
            INF if budget_usd is None else budget_usd / scale.cost_usd,
            INF if target_ns is None else (target_ns - tm.constant_ns) / scale.time_ns,
        ],
        [bnz.size, tnz.size],
        np.concatenate([bnz, tnz]),
        np.concatenate([cost_b[bnz], time_costs[tnz]]),
    )
    lows = np.concatenate([p[0] for p in parts])
    highs = np.concatenate([p[1] for p in parts])
    starts = np.concatenate([[0], np.cumsum(np.concatenate([p[2] for p in parts]))]).astype(
        np.int32
    )
    index = np.concatenate([p[3] for p in parts]).astype(np.int32)
    value = np.concatenate([p[4] for p in parts])
    r0 = n_design
    return LPArrays(
        scale=scale,
        loaded=loaded,
        b_col=np.arange(D),
        t_col=t_col,
        z0=z0,
        n_terms=K,
        n_nodes=V,
        col_lower=col_lower,
        col_upper=col_upper,
        time_costs=time_costs,
        cost_costs=cost_costs,
        row_lower=lows,
        row_upper=highs,
        start=starts,
        index=index,
        value=value,
        design=slice(0, r0),
        epi=slice(r0, r0 + n_epi),
        node=slice(r0 + n_epi, r0 + n_epi + n_node),
        budget_row=r0 + n_epi + n_node,
        time_row=r0 + n_epi + n_node + 1,
        epi_term=np.array(epi_term, dtype=np.int64),
        node_of_row=np.array(node, dtype=np.int64),  # (a copy: the model's stays read-only)
        row_scale=ddiv,
        pair_b=np.array(loaded, dtype=np.int64),
        pair_t=t_col[list(loaded)].astype(np.int64),
    )


# ---------------------------------------------------------------------------------- Pyomo statement
@dataclass
class LPStatement:
    """A built performance LP: the Pyomo ``model`` plus what is needed to read results back in GB/s
    and ns.

    Attributes:
        model: the Pyomo ConcreteModel (components ``B``, ``t``, ``tau``, ``y``, ``design``,
            ``epi``, ``node``, ``budget``, ``time_target``, objective ``time``), in the units of
            ``scale``.
        loaded: indices of the dimensions that carry traffic (those with a ``t`` variable).
        compute_ns: constant compute time added to the LP objective (times ``scale.time_ns``) to
            give the iteration time.
        scale: the units.
    """

    model: object
    loaded: tuple[int, ...]
    compute_ns: float
    scale: Scale


def build_statement(
    instance: Instance,
    tm: TimeModel,
    scale: Scale | None = None,
    budget_usd: float | None = None,
    target_ns: float | None = None,
) -> LPStatement:
    """The performance LP of the module docstring as a Pyomo model (no cuts), in the units of
    ``scale`` (default :func:`choose_scale`); the same rows, columns and order as
    :func:`compile_perf_lp`.

    Args:
        instance: supplies the design constraints and bounds (GB/s per NPU) and the cost model.
        tm: the aggregated time model, ``terms_bytes`` of shape (K, D).
        budget_usd, target_ns: bounds of the budget and time-target rows (None: free rows).
    """
    import pyomo.environ as pyo

    scale = scale or choose_scale(instance, tm)
    # the bounds of B and t, shared
    arr = compile_perf_lp(instance, tm, scale, budget_usd, target_ns)
    D, K, V = tm.n_dims, tm.terms_bytes.shape[0], len(tm.nodes)
    b = scale.bw_gbps
    m = pyo.ConcreteModel(name=instance.name)
    m.B = pyo.Var(range(D), bounds=lambda _m, d: (arr.col_lower[d], _none(arr.col_upper[d])))
    m.t = pyo.Var(arr.loaded, bounds=lambda _m, d: (arr.col_lower[arr.t_col[d]], None))
    m.tau = pyo.Var(range(K), domain=pyo.NonNegativeReals)
    m.y = pyo.Var(range(V), domain=pyo.NonNegativeReals)
    dlo, dhi, dcoef, _ = design_rows(instance, b)
    m.design = pyo.Constraint(
        range(dcoef.shape[0]),
        rule=lambda _m, i: (
            _none(dlo[i]),
            sum(float(dcoef[i, d]) * _m.B[d] for d in range(D) if dcoef[i, d] != 0),
            _none(dhi[i]),
        ),
    )
    A = tm.terms_bytes / b[None, :] / scale.time_ns
    lat = tm.terms_latency_ns / scale.time_ns
    if tm.dimension_mode == "sequential":
        m.epi = pyo.Constraint(range(K), rule=lambda _m, k: _m.tau[k] - sum(
            float(A[k, d]) * _m.t[d] for d in range(D) if A[k, d] > 0) >= float(lat[k].sum()))
    else:
        pairs = [(k, d) for k in range(K) for d in range(D) if A[k, d] > 0 or lat[k, d] > 0]
        m.epi = pyo.Constraint(pairs, rule=lambda _m, k, d: (
            _m.tau[k] - (float(A[k, d]) * _m.t[d] if A[k, d] > 0 else 0.0) >= float(lat[k, d])))
    node, const, terms, refs = _node_arrays(tm)
    m.node = pyo.Constraint(range(len(node)), rule=lambda _m, i: (
        _m.y[node[i]] - sum(a * _m.tau[k] for k, a in terms[i].items())
        - sum(bb * _m.y[j] for j, bb in refs[i].items()) >= const[i] / scale.time_ns))
    bcols = arr.row(arr.budget_row)
    m.budget = pyo.Constraint(
        expr=(
            None,
            sum(float(v) * m.B[int(c)] for c, v in zip(*bcols, strict=True)),
            _none(arr.row_upper[arr.budget_row]),
        )
    )
    objective = sum(
        float(tm.term_weights[k]) * m.tau[k] for k in range(K) if tm.term_weights[k] > 0
    ) + sum(float(tm.node_weights[v]) * m.y[v] for v in range(V) if tm.node_weights[v] > 0)
    m.time_target = pyo.Constraint(expr=(None, objective, _none(arr.row_upper[arr.time_row])))
    m.time = pyo.Objective(expr=objective if K or V else 0.0, sense=pyo.minimize)
    return LPStatement(model=m, loaded=arr.loaded, compute_ns=tm.constant_ns, scale=scale)


def _none(x: float) -> float | None:
    return None if not math.isfinite(x) else float(x)
