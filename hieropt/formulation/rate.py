"""The single-term performance LP: when the iteration time has one collective term, it is linear in
that term's rate, and the fastest network is one LP with no cuts. Its statement as a Pyomo model and
the same LP compiled to numpy arrays for HiGHS. Builds; never solves.

A time model with one collective term, no latency, no max nodes and concurrent dimensions (LIBRA's
form with a single class of collectives after exact aggregation, e.g. a data-parallel-only workload,
or every collective on the same groups) is ``T(B) = c + w max_d m_d / B_d`` (ns; m_d bytes on
dimension d, B_d GB/s = bytes/ns). With the term's rate ``u = min_{d: m_d > 0} B_d / m_d`` (1/ns),
``T = c + w / u``, so

    min T(B) s.t. design rows, bounds, cost(B) <= budget   <=>   max u s.t. m_d u <= B_d (m_d > 0),
    the same rows

(a linear-fractional program whose denominator is the rate itself; Charnes and Cooper 1962,
"Programming with linear fractional functionals"): any feasible B gives the feasible (B, u(B)) of
the same time, and any feasible (B, u) has u <= u(B). The LP is exact; its optimum is the
performance optimum, and the safe bound of its duals (:mod:`hieropt.solvers.single_term`) certifies
it without the LP's tolerances.

Variables, in scaled units (:class:`hieropt.formulation.scale.Scale` ``bw_gbps`` for B;
``rate_unit`` for u): ``B[d]`` (every dimension, the design rows' bounds), ``u >= 0``. Rows, in this
order: the design constraints (each divided by its largest coefficient, as
:mod:`hieropt.formulation.arrays`), the rate rows ``a_d u - B[d] <= 0`` of the loaded dimensions
(a_d = m_d rate_unit / b_d, at most 1), the budget row ``sum_d c_d B[d] <= kappa`` (free without a
budget). Objective: ``min -u``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model.cost import cluster_cost_usd_per_gbps
from ..model.cutmodel import CutModel
from ..model.timing import TimeModel
from ..spec import Instance
from .arrays import design_rows
from .scale import Scale

INF = float("inf")

__all__ = ["RateArrays", "single_term", "compile_rate_lp", "build_rate_statement"]


def single_term(tm: TimeModel) -> tuple[np.ndarray, float] | None:
    """``(m, w)`` when ``T(B) = tm.constant_ns + w max_d m[d] / B[d]`` (m: (D,) bytes, w > 0): one
    collective term, no latency, no max nodes, concurrent dimensions, traffic on some dimension;
    else None (a model stated by cutting planes, :class:`hieropt.model.cutmodel.CutModel`, is never
    single-term here)."""
    if isinstance(tm, CutModel) or tm.nodes or tm.dimension_mode != "concurrent":
        return None
    if tm.terms_bytes.shape[0] != 1 or tm.terms_latency_ns.any():
        return None
    w = float(tm.term_weights[0])
    m = tm.terms_bytes[0]
    if not (w > 0 and (m > 0).any()):
        return None
    return m, w


@dataclass
class RateArrays:
    """The single-term LP as arrays (row-wise sparse matrix, the layout
    :class:`hieropt.solvers.highs.HighsLP` loads): columns ``B`` (0 .. D-1) then ``u`` (``u_col``);
    rows ``design`` (slice), ``rate`` (slice, one per loaded dimension, in ``loaded`` order),
    ``budget_row``. ``time_costs`` is the objective (min -u).

    Attributes:
        scale: the bandwidth units (``scale.bw_gbps``) and the cost unit of the budget row.
        rate_unit: 1/ns per unit of u (the rate at which the loaded dimension with the largest m_d /
            b_d runs at its unit); the iteration time is ``c + w / (u rate_unit)``.
        loaded: the dimensions with m_d > 0.
        dense: (rows, columns) the same matrix, dense (for the bound: a few rows and columns).
    """

    scale: Scale
    rate_unit: float
    loaded: tuple[int, ...]
    u_col: int
    col_lower: np.ndarray
    col_upper: np.ndarray
    time_costs: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    start: np.ndarray
    index: np.ndarray
    value: np.ndarray
    dense: np.ndarray
    design: slice
    rate: slice
    budget_row: int
    cache: dict = field(default_factory=dict)

    @property
    def n_cols(self) -> int:
        """Number of columns (D + 1)."""
        return self.col_lower.size

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return self.row_lower.size


def compile_rate_lp(
    instance: Instance, m: np.ndarray, scale: Scale, budget_usd: float | None = None
) -> RateArrays:
    """The LP of the module docstring as arrays (identical to :func:`build_rate_statement`'s
    matrix).

    Args:
        instance: design constraints, bounds and cost model.
        m: (D,) bytes of the single term per dimension (:func:`single_term`).
        scale: the units (:func:`hieropt.formulation.scale.choose_scale`).
        budget_usd: the budget row's upper bound ($), None: free.
    """
    D = m.size
    b = scale.bw_gbps
    loaded = np.flatnonzero(m > 0)
    rate_unit = float(np.min(b[loaded] / m[loaded]))
    dm = instance.design_matrix
    n = D + 1
    col_lower, col_upper = np.zeros(n), np.full(n, INF)
    col_lower[:D] = dm.bw_lower / b
    col_upper[:D] = dm.bw_upper / b
    dlo, dhi, dcoef, _ = design_rows(instance, b)
    nd, nl = dcoef.shape[0], loaded.size
    A = np.zeros((nd + nl + 1, n))
    A[:nd, :D] = dcoef
    A[nd + np.arange(nl), loaded] = -1.0
    A[nd:nd + nl, D] = m[loaded] * rate_unit / b[loaded]
    A[nd + nl, :D] = cluster_cost_usd_per_gbps(instance) * b / scale.cost_usd
    lower = np.concatenate([dlo, np.full(nl + 1, -INF)])
    upper = np.concatenate(
        [dhi, np.zeros(nl), [INF if budget_usd is None else budget_usd / scale.cost_usd]]
    )
    rows, cols = np.nonzero(A)
    start = np.zeros(A.shape[0] + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=A.shape[0]), out=start[1:])
    costs = np.zeros(n)
    costs[D] = -1.0
    return RateArrays(
        scale=scale,
        rate_unit=rate_unit,
        loaded=tuple(loaded.tolist()),
        u_col=D,
        col_lower=col_lower,
        col_upper=col_upper,
        time_costs=costs,
        row_lower=lower,
        row_upper=upper,
        start=start,
        index=cols.astype(np.int32),
        value=A[rows, cols],
        dense=A,
        design=slice(0, nd),
        rate=slice(nd, nd + nl),
        budget_row=nd + nl,
    )


def build_rate_statement(
    instance: Instance, m: np.ndarray, scale: Scale, budget_usd: float | None = None
):
    """The LP of the module docstring as a Pyomo ConcreteModel (components ``B``, ``u``, ``design``,
    ``rate``, ``budget``, objective ``rate_objective``), in the units of ``scale``; the same rows,
    columns and order as :func:`compile_rate_lp` (tests/unit/test_formulation.py checks row by
    row)."""
    import pyomo.environ as pyo

    arr = compile_rate_lp(instance, m, scale, budget_usd)  # (the bounds and units, shared)
    D = m.size
    b = scale.bw_gbps
    model = pyo.ConcreteModel(name=instance.name)
    model.B = pyo.Var(range(D), bounds=lambda _m, d: (arr.col_lower[d], _none(arr.col_upper[d])))
    model.u = pyo.Var(domain=pyo.NonNegativeReals)
    dlo, dhi, dcoef, _ = design_rows(instance, b)
    model.design = pyo.Constraint(
        range(dcoef.shape[0]),
        rule=lambda _m, i: (
            _none(dlo[i]),
            sum(float(dcoef[i, d]) * _m.B[d] for d in range(D) if dcoef[i, d] != 0),
            _none(dhi[i]),
        ),
    )
    model.rate = pyo.Constraint(arr.loaded, rule=lambda _m, d: (
        float(m[d] * arr.rate_unit / b[d]) * _m.u - _m.B[d] <= 0.0))
    price = cluster_cost_usd_per_gbps(instance) * b / scale.cost_usd
    model.budget = pyo.Constraint(
        expr=(
            None,
            sum(float(price[d]) * model.B[d] for d in range(D) if price[d] != 0),
            # (free without a budget: inf)
            float(arr.row_upper[arr.budget_row]),
        )
    )
    model.rate_objective = pyo.Objective(expr=-model.u, sense=pyo.minimize)
    return model


def _none(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)
