"""The procurement LP of :mod:`hieropt.formulation.ratio` (time x cost in cost-share variables)
compiled to numpy arrays for HiGHS: the same columns, rows and coefficients as
:func:`hieropt.formulation.ratio.build_ratio_lp`'s Pyomo model (tests/unit/test_formulation.py
checks row by row), built without Pyomo. Builds; never solves.

Layout (:class:`hieropt.formulation.arrays.LPArrays`): columns ``x`` (D shares, each scaled by g_d:
x_d in [0, g_d]), ``u`` and ``kap``, ``r`` (one per loaded dimension, r_d >= 1 / g_d), then ``tau``
(K) and ``y`` (V); the reciprocal links are (x_d, r_d) and (u, kap). Rows: ``share``, the design
    rows,
``bound_lo``, ``bound_hi`` (together the ``design`` slice), ``epi``, ``node``. The ``r_floor`` rows
of the Pyomo model (r_d >= K / (p_d hi_d) kap: ``bound_hi`` restated on the reciprocals, a help to
its cuts) are returned separately and not used by :class:`hieropt.solvers.ratio.RatioCore`: its
Lagrangian bound needs every reciprocal to enter the rows with a non- positive coefficient, and an
LP that can put the bound's dual on either copy of the row gives duals the bound cannot use. The
bounds of ``u`` and ``kap`` are column bounds (the Pyomo model's solver sets them as rows).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..model.cost import cluster_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..spec import Instance
from .arrays import LPArrays, read_only
from .ratio_time_rows import (
    Rows,
    concurrent_epigraphs,
    node_rows,
    node_scales,
    sequential_epigraphs,
)
from .scale import MB, MS_NS

INF = float("inf")

__all__ = [
    "CostRangeLP",
    "RatioArrays",
    "compile_cost_range_lp",
    "compile_ratio_lp",
    "redundant_rows",
    "shared_ratio_lp",
]


@dataclass
class RatioArrays:
    """The compiled procurement LP and what is needed to read it back.

    Attributes:
        arr: the LP (objective: ``arr.time_costs``, the product C x T in units of ``product_unit``).
        x_col, r_col: (D,) columns of the shares and of their reciprocals (-1 where d carries no
            traffic).
        u_col, kap_col: the cost level's columns (u = K / C, kap >= 1/u).
        share_row: the row sum_d x_d = 1.
        floor_rows: (lower, upper, start, index, value) of the Pyomo model's r_floor rows (module
            docstring).
        price_usd_per_gbps: (D,) p_d = N u_d.
        cost_unit_usd: K ($): C = K / u.
        product_unit: P0, ms x $ per model unit of the objective.
        compute_coef: the objective's coefficient of ``kap``.
    """

    arr: LPArrays
    x_col: np.ndarray
    r_col: np.ndarray
    u_col: int
    kap_col: int
    share_row: int
    floor_rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    price_usd_per_gbps: np.ndarray
    cost_unit_usd: float
    product_unit: float
    compute_coef: float
    share_scale: np.ndarray = field(default_factory=lambda: np.ones(0))
    """(D,) g_d: each share column holds g_d x its share (of order 1 at the typical bandwidth,
    however cheap d)."""
    unit_gbps: np.ndarray = field(default_factory=lambda: np.ones(0))
    """(D,) s_d, GB/s: the bandwidth units (B_d = x_d s_d / u, with g_d = K / (p_d s_d))."""
    slack_col: dict = field(default_factory=dict)
    """Column of each slack asked for (``compile_ratio_lp``'s ``slacks``), by its key."""
    slack_factor: dict = field(default_factory=dict)
    """By key: u x (the row's distance from its bound, in the row's units: GB/s for a bound) =
    factor x the slack column's value (the slack's coefficient in its row is -1 for a floor, +1 for
    a ceiling)."""
    slack_row: dict = field(default_factory=dict)
    """The row of each slack, by its key."""

    def bandwidth(self, x: np.ndarray, cost_usd: float) -> np.ndarray:
        """B (GB/s) of the LP solution ``x`` (all columns) at network cost ``cost_usd``: B_d = x_d C
        / (p_d g_d) (the share columns are g_d x the shares)."""
        return (
            np.maximum(x[self.x_col], 0.0) * cost_usd / (self.price_usd_per_gbps * self.share_scale)
            + 0.0
        )


def shared_ratio_lp(
    instance: Instance,
    tm: TimeModel,
    bw_unit_gbps: float | np.ndarray,
    cost_cap_usd: float = INF,
    exact_rows: bool = False,
    slacks: tuple[tuple[str, int], ...] = (),
    fixed_usd: float = 0.0,
) -> RatioArrays:
    """:func:`compile_ratio_lp` with the same arguments, compiled once per instance, time model,
    design rows and prices and the values of the other arguments (the last 16 of them): a repeated
    solve, each kappa search and a sweep's copies of one instance share the arrays. Each call gets
    its own column bounds (the solver changes them in place); every other array is shared and must
    not be changed (the ``cache`` of derived values is shared too: it holds only what the matrix and
    the row layout determine)."""
    def build() -> RatioArrays:
        out = compile_ratio_lp(
            instance, tm, bw_unit_gbps, cost_cap_usd, exact_rows, slacks, fixed_usd
        )
        read_only(out)
        read_only(out.arr)
        return out

    values = (
        np.asarray(bw_unit_gbps, dtype=float).tobytes(),
        float(cost_cap_usd),
        bool(exact_rows),
        tuple(slacks),
        float(fixed_usd),
    )
    lp = instance.memo_by_value(
        "_ratio_lps",
        (tm, instance.design_matrix, cluster_cost_usd_per_gbps(instance)),
        values,
        build,
    )
    arr = replace(lp.arr, col_lower=lp.arr.col_lower.copy(), col_upper=lp.arr.col_upper.copy())
    return replace(lp, arr=arr)


def compile_ratio_lp(
    instance: Instance,
    tm: TimeModel,
    bw_unit_gbps: float,
    cost_cap_usd: float = INF,
    exact_rows: bool = False,
    slacks: tuple[tuple[str, int], ...] = (),
    fixed_usd: float = 0.0,
) -> RatioArrays:
    """The procurement LP of ``instance`` at the typical bandwidth ``bw_unit_gbps`` (GB/s), as
    arrays (no cuts).

    ``bw_unit_gbps`` may also be one unit per dimension ((D,) GB/s, e.g. a square-root split of the
    floor's cost): the share column of dimension d then holds g_d x its share with g_d = K / (p_d
    s_d) and K = sum_d p_d s_d, so that a dimension 1e9 cheaper than another still has a share of
    order 1 (the same LP in other units; the Pyomo statement,
    :func:`hieropt.formulation.ratio.build_ratio_lp`, takes the one-unit form, which tests compare).

    ``cost_cap_usd``: a proven upper limit on the cost of the designs the LP is searched over (the
    dearest feasible network, or a budget). A design row or upper bound that no design within it can
    reach (:func:`redundant_rows`) is kept as a free, empty row (same row numbers, no effect): in
    cost-share variables its coefficient on u is its right-hand side over the unit, which a ceiling
    1e10 above the floor makes one HiGHS rejects (above 1e15) or whose other coefficients it drops
    as negligible. ``exact_rows``: the units rounded down to powers of two and each design and bound
    row divided by a power of two, so that every coefficient of those rows is the exact product of
    the instance's data (the exact image B_d = x_d s_d / u of a design that meets a row exactly
    meets the float row exactly; for a bound that must hold for exactly feasible designs, e.g.
    :mod:`hieropt.solvers.near_cheapest`).

    ``slacks``: rows that get a slack column s >= 0 of their own, ``("row", i)`` for the instance's
    inequality constraint i, ``("lower", d)`` / ``("upper", d)`` for a positive lower / a finite
    upper bound of dimension d: the row becomes an equality with s (columns after the reciprocals,
    before the epigraph variables), and s u_level is its distance from its bound (A_i B - b_i, B_d -
    lo_d, hi_d
    - B_d, >= 0) times ``slack_factor`` (module notes in :attr:`RatioArrays.slack_factor`).

    ``fixed_usd``: a fixed cost A ($) added to the network's in the product, T x (A + C) (objective
    ``min_run_cost``: the cluster's fixed cost rate as network-capex dollars,
    :attr:`hieropt.model.run.CostRate.fixed_usd`). The homogenisation divides by the whole A + C =
    K / u: the share row becomes sum_d x_d / g_d + (A / K) u = 1 and every other row is unchanged,
    so the program stays one convex LP with the same cuts; K = A + sum_d p_d s_d keeps u of order 1
    at the typical bandwidth (0: performance per cost)."""
    D, K_terms, V = tm.n_dims, tm.terms_bytes.shape[0], len(tm.nodes)
    p = cluster_cost_usd_per_gbps(instance)
    sv = np.broadcast_to(np.asarray(bw_unit_gbps, dtype=float), (D,)).copy()
    if exact_rows:
        sv = np.exp2(np.floor(np.log2(sv)))
    K = float(p @ sv) + float(fixed_usd)
    g = K / (p * sv)
    t_typ_ms = tm.time_ns(sv) / MS_NS
    P0 = K * t_typ_ms if t_typ_ms > 0 else K
    loaded = tuple(int(d) for d in np.flatnonzero(tm.carries_traffic))
    A = tm.terms_bytes / MB * (p * g)[None, :] / P0  # (coefficient of r'_d = r_d / g_d)
    lat = tm.terms_latency_ns / MS_NS * K / P0
    node_scale = K / MS_NS / P0
    u_col, kap_col = D, D + 1
    r_col = np.full(D, -1, dtype=np.int64)
    r_col[list(loaded)] = D + 2 + np.arange(len(loaded))
    slack_col = {key: D + 2 + len(loaded) + k for k, key in enumerate(slacks)}
    z0 = D + 2 + len(loaded) + len(slacks)
    n = z0 + K_terms + V
    col_lower, col_upper = np.zeros(n), np.full(n, INF)
    col_upper[:D] = g  # shares <= 1
    col_lower[r_col[list(loaded)]] = 1.0 / g[list(loaded)]  # r >= 1

    sig = np.maximum(A, lat).max(axis=1) if K_terms else np.zeros(0)
    sig = np.where(sig > 0, sig, 1.0)
    sig_y = node_scales(tm, sig, node_scale)
    compute_coef = float(tm.compute_ns * node_scale)
    costs = np.zeros(n)
    costs[kap_col] = compute_coef
    costs[z0:z0 + K_terms] = tm.term_weights * sig
    costs[z0 + K_terms:] = tm.node_weights * sig_y

    rows = _DesignRows(slack_col, exact_rows)
    if fixed_usd > 0:  # share, with the fixed cost's part A / (A + C) = (A / K) u
        rows.add(1.0, 1.0, [*range(D), u_col], [*(1.0 / g), float(fixed_usd) / K])
    else:
        rows.add(1.0, 1.0, range(D), 1.0 / g)  # share
    idle_rows, idle_hi = redundant_rows(instance, cost_cap_usd)
    _constraint_rows(instance, rows, idle_rows, sv, u_col)
    bounds = instance.bounds_or_default
    hi_dims = _bound_rows(bounds, rows, idle_hi, sv, u_col)
    if set(rows.slack_factor) != set(slack_col):
        missing = sorted(set(slack_col) - set(rows.slack_factor))
        raise ValueError(f"slack asked for rows without one: {missing}")
    n_design = rows.count
    epi_rows = sequential_epigraphs if tm.dimension_mode == "sequential" else concurrent_epigraphs
    epi_term = epi_rows(rows, A, lat, sig, r_col, z0, kap_col)
    n_epi = len(epi_term)
    node_of_row = node_rows(tm, rows, sig, sig_y, node_scale, z0, kap_col)
    floors = Rows()
    for d in hi_dims:
        if d in loaded:
            floors.add(
                0.0, INF, [r_col[d], kap_col], [1.0, -K / (p[d] * g[d] * bounds[d].upper_gbps)]
            )
    lo_, hi_, start, index, value = rows.arrays()
    arr = LPArrays(
        scale=None,
        loaded=loaded,
        b_col=np.arange(D),
        t_col=r_col,
        z0=z0,
        n_terms=K_terms,
        n_nodes=V,
        col_lower=col_lower,
        col_upper=col_upper,
        time_costs=costs,
        cost_costs=np.zeros(n),
        row_lower=lo_,
        row_upper=hi_,
        start=start,
        index=index,
        value=value,
        design=slice(0, n_design),
        epi=slice(n_design, n_design + n_epi),
        node=slice(n_design + n_epi, n_design + n_epi + len(node_of_row)),
        budget_row=-1,
        time_row=-1,
        epi_term=np.array(epi_term, dtype=np.int64),
        node_of_row=np.array(node_of_row, dtype=np.int64),
        pair_b=np.array([*loaded, u_col], dtype=np.int64),
        pair_t=np.array([*r_col[list(loaded)], kap_col], dtype=np.int64),
    )
    return RatioArrays(
        arr=arr,
        x_col=np.arange(D),
        r_col=r_col,
        u_col=u_col,
        kap_col=kap_col,
        share_row=0,
        floor_rows=floors.arrays(),
        price_usd_per_gbps=p,
        cost_unit_usd=K,
        product_unit=P0,
        compute_coef=compute_coef,
        share_scale=g,
        unit_gbps=sv,
        slack_col=slack_col,
        slack_factor=rows.slack_factor,
        slack_row=rows.slack_row,
    )


def _constraint_rows(instance: Instance, rows: _DesignRows, idle: np.ndarray, sv: np.ndarray,
                     u_col: int) -> None:
    """Add the instance's design rows, homogenised (A_i (x s) - b_i u, in the units ``sv``, GB/s);
    a row in ``idle`` (:func:`redundant_rows`) without a slack as a free, empty row."""
    for i, (c, idle_row) in enumerate(zip(instance.constraints, idle, strict=True)):
        if idle_row and ("row", i) not in rows.slack_col:
            rows.add(-INF, INF, [], [])
            continue
        a = np.asarray(c.coefficients, dtype=float)
        nz = np.flatnonzero(a)
        lo = 0.0 if c.sense != "<=" else -INF
        hi = 0.0 if c.sense != ">=" else INF
        rows.add_unit(("row", i), lo, hi, [*nz, u_col], [*(a[nz] * sv[nz]), -c.rhs], 1.0)


def _bound_rows(bounds, rows: _DesignRows, idle_hi: np.ndarray, sv: np.ndarray,
                u_col: int) -> list[int]:
    """Add the ``bound_lo`` rows (each positive lower bound of ``bounds``) and the ``bound_hi``
    rows (each finite upper bound; one in ``idle_hi`` without a slack as a free, empty row).
    Returns the dimensions with a finite upper bound."""
    for d in range(sv.size):
        if bounds[d].lower_gbps > 0:
            rows.add_unit(("lower", d), 0.0, INF, [d, u_col], [1.0, -bounds[d].lower_gbps / sv[d]],
                          float(sv[d]))
    hi_dims = [d for d in range(sv.size)
               if bounds[d].upper_gbps is not None and math.isfinite(bounds[d].upper_gbps)]
    for d in hi_dims:
        if idle_hi[d] and ("upper", d) not in rows.slack_col:
            rows.add(-INF, INF, [], [])
        else:
            rows.add_unit(("upper", d), -INF, 0.0, [d, u_col], [1.0, -bounds[d].upper_gbps / sv[d]],
                          float(sv[d]))
    return hi_dims




def _unit_row(values: list[float], exact: bool = False) -> tuple[list[float], float]:
    """A homogenised design row (right-hand side 0 or +-inf) divided by its largest coefficient: the
    right-hand side of a row enters as its coefficient on u, so a ceiling far above the LP's unit
    would otherwise give one HiGHS rejects (above 1e15), and a floor far below it one HiGHS drops
    (below 1e-9); scaled, each row holds to HiGHS's tolerance relative to its own size. ``exact``:
    by the power of two at or above it (no rounding). Returns the row and the divisor."""
    top = max(abs(v) for v in values)
    if exact and top > 0:
        top = math.ldexp(1.0, math.frexp(top)[1])
    return ([v / top for v in values], top) if top > 0 else (values, 1.0)


def redundant_rows(instance: Instance, cost_cap_usd: float = INF) -> tuple[np.ndarray, np.ndarray]:
    """Which design rows (mask, instance order) and which upper bounds (mask, per dimension) hold
    for every design B with bw_lower <= B <= bw_upper and network cost sum_d p_d B_d <=
    ``cost_cap_usd``: over the box bw_lower_d <= B_d <= min(bw_upper_d, cap / p_d) a row's activity
    lies within [sum_d min(a_d l_d, a_d h_d), sum_d max(a_d l_d, a_d h_d)] (interval arithmetic); a
    ``<=`` row whose largest activity is at most its right- hand side (a ``>=`` row whose smallest
    is at least it) cannot bind. ``==`` rows never count as redundant."""
    dm = instance.design_matrix
    p = cluster_cost_usd_per_gbps(instance)
    with np.errstate(divide="ignore", invalid="ignore"):
        by_cost = np.where(p > 0, cost_cap_usd / p, INF)
        high = np.minimum(dm.bw_upper, by_cost)
        A = dm.A
        lo_b = np.where(A != 0, A * dm.bw_lower, 0.0)
        hi_b = np.where(A != 0, A * high, 0.0)
        act_max = np.maximum(lo_b, hi_b).sum(axis=1)
        act_min = np.minimum(lo_b, hi_b).sum(axis=1)
    rows = ((dm.sense == 0) & (act_max <= dm.rhs)) | ((dm.sense == 1) & (act_min >= dm.rhs))
    return rows, np.isfinite(dm.bw_upper) & (dm.bw_upper >= by_cost)


class _DesignRows(Rows):
    """The design rows of :func:`compile_ratio_lp`: each homogenised row divided by its largest
    coefficient (:func:`_unit_row`), and a row with a slack column in ``slack_col`` (by its key)
    an equality with it, its row and factor kept in ``slack_row`` and ``slack_factor``."""

    def __init__(self, slack_col: dict, exact: bool) -> None:
        super().__init__()
        self.slack_col, self.exact = slack_col, exact
        self.slack_factor: dict[tuple[str, int], float] = {}
        self.slack_row: dict[tuple[str, int], int] = {}

    def add_unit(self, key: tuple[str, int], lo: float, hi: float, cols: list, values: list[float],
                 unit: float) -> None:
        """Add the row ``key`` (``values`` on ``cols``, ``lo`` <= row <= ``hi``, right-hand side
        0 or +-inf) divided by its largest coefficient; with a slack: (row) = s for a floor, -s
        for a ceiling, and its factor the divisor x ``unit`` (the row's units)."""
        vals, top = _unit_row(values, self.exact)
        if key in self.slack_col:
            self.slack_row[key] = self.count
            self.add(0.0, 0.0, [*cols, self.slack_col[key]], [*vals, -1.0 if hi == INF else 1.0])
            self.slack_factor[key] = top * unit
        else:
            self.add(lo, hi, cols, vals)


@dataclass(frozen=True)
class CostRangeLP:
    """min / max of the network cost sum_d p_d B_d over the design rows and bounds alone, as arrays
    for :class:`hieropt.solvers.highs.HighsLP`: columns y_d = B_d / ``unit_gbps`` (D), rows the
    design rows divided by their largest coefficient (well scaled whatever the spread of the rows'
    sizes, unlike the homogenised procurement LP, whose cost level u = K / C spans the whole cost
    range in one column). The objective ``time_costs`` is the cost in units of ``unit_usd`` = sum_d
    p_d x ``unit_gbps``_d."""

    n_cols: int
    col_lower: np.ndarray
    col_upper: np.ndarray
    time_costs: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    start: np.ndarray
    index: np.ndarray
    value: np.ndarray
    unit_usd: float
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """(n_rows,) the design row (instance order) of each LP row (rows without a coefficient are left
    out)."""
    row_scale: np.ndarray = field(default_factory=lambda: np.ones(0))
    """(n_rows,) what each design row was divided by (its largest coefficient in the columns'
    units)."""

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return self.row_lower.size


def compile_cost_range_lp(instance: Instance, unit_gbps: float | np.ndarray) -> CostRangeLP:
    """The cost-range LP of ``instance`` (:class:`CostRangeLP`) with its columns in units of
    ``unit_gbps`` (GB/s; or one unit per dimension, (D,)).

    Raises:
        ValueError: ``unit_gbps`` is not positive and finite."""
    p = cluster_cost_usd_per_gbps(instance)
    unit = np.broadcast_to(np.asarray(unit_gbps, dtype=float), p.shape)
    if not (np.all(unit > 0) and np.all(np.isfinite(unit))):
        raise ValueError(f"unit_gbps must be positive and finite, got {unit_gbps!r}")
    unit_gbps = unit
    dm = instance.design_matrix
    A = dm.A * unit_gbps
    div = np.abs(A).max(axis=1, initial=0.0)
    keep = div > 0
    A, div = A[keep], div[keep]
    coef = A / div[:, None]
    nz = coef != 0
    unit_usd = float(p @ unit_gbps) or 1.0
    return CostRangeLP(
        n_cols=p.size,
        col_lower=dm.bw_lower / unit_gbps,
        col_upper=dm.bw_upper / unit_gbps,
        time_costs=p * unit_gbps / unit_usd,
        row_lower=dm.lower[keep] / div,
        row_upper=dm.upper[keep] / div,
        start=np.concatenate([[0], np.cumsum(nz.sum(axis=1))]).astype(np.int32),
        index=np.nonzero(nz)[1].astype(np.int32),
        value=coef[nz],
        unit_usd=unit_usd,
        rows=np.flatnonzero(keep),
        row_scale=div,
    )

