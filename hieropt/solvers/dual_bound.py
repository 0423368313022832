"""A rigorous lower bound from an LP's row duals: the Lagrangian dual function of the true problem
(t_d = 1/B_d). For row multipliers u (cuts aside), reduced costs r = c - A'u, P_d = r_{t_d} and
g_d = r_{B_d} of each pair:

    min c'x  >=  sum_r bound_r(u_r) + min_{z >= 0} r_z' z + sum_d min_{B_d} (P_d / B_d + g_d B_d)

with bound_r(u) = u lower_r (u > 0) or u upper_r (u < 0); other columns before the epigraph enter
as min g x over their box. The multipliers of the rows defining a node or term column with r_z <
0 are scaled down until it is 0, so the middle term vanishes. Valid for any u, exact up to the
rounding of this evaluation (decision record 0001; Boyd and Vandenberghe 2004, §5.1-5.2; Neumaier
and Shcherbina 2004, "Safe bounds in linear and mixed-integer programming")."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .linalg import EPS, INF


@dataclass(frozen=True)
class DualBound:
    """A lower bound (scaled objective units), the budget row's multiplier, and the Lagrangian's
    minimiser ``point`` (per column; NaN on the pairs' t and the epigraph)."""

    value: float
    budget_multiplier: float
    point: np.ndarray


DENSE = 100_000
"""LPs with at most this many (rows x columns) are handled as dense matrices."""


def dense_matrix(arr) -> np.ndarray:
    """The base rows of ``arr`` as a dense (rows, columns) matrix, cached on ``arr``."""
    A = arr.cache.get("dense")
    if A is None:
        m = arr.n_rows
        A = np.zeros((m, arr.n_cols))
        rows = np.repeat(np.arange(m), np.diff(arr.start[:m + 1]))
        # (a row names each column at most once)
        A[rows, arr.index[:arr.start[m]]] = arr.value[:arr.start[m]]
        arr.cache["dense"] = A
    return A


def transpose_product(arr, u: np.ndarray, absolute: bool = False) -> np.ndarray:
    """A' u (|A|' u with ``absolute``) over the base rows of ``arr`` (dense or sparse; cached
    helpers)."""
    m, n = arr.n_rows, arr.n_cols
    if m * n <= DENSE:
        if not absolute:
            return u @ dense_matrix(arr)
        A = arr.cache.get("dense_abs")
        if A is None or A.shape != (m, n):
            A = arr.cache["dense_abs"] = np.abs(dense_matrix(arr))
        return u @ A
    row_of = arr.cache.get("row_of")
    if row_of is None:
        row_of = arr.cache["row_of"] = np.repeat(np.arange(m), np.diff(arr.start[:m + 1]))
    end = arr.start[m]
    value = np.abs(arr.value[:end]) if absolute else arr.value[:end]
    return np.bincount(arr.index[:end], weights=u[row_of] * value, minlength=n)


def lagrangian_bound(arr, costs: np.ndarray, duals: np.ndarray, row_lower: np.ndarray,
                     row_upper: np.ndarray, col_upper: np.ndarray | None = None) -> DualBound:
    """The bound of the module docstring for the LP ``arr``
    (:class:`~hieropt.formulation.arrays.LPArrays`) with objective ``costs`` (minimised), from the
    duals of its first ``arr.n_rows`` rows and their bounds ``row_lower``, ``row_upper``.
    ``col_upper`` (per column): limits every feasible point meets, so that a reduced cost negative
    by round-off on a column without upper bound costs round-off, not the whole bound."""
    m = arr.n_rows
    u = np.array(duals[:m], dtype=float)
    lo, hi = row_lower[:m], row_upper[:m]
    u[((u > 0) & ~np.isfinite(lo)) | ((u < 0) & ~np.isfinite(hi))] = 0.0  # (they bound nothing)
    r = costs - transpose_product(arr, u)
    _shrink_node_rows(arr, u, r)
    r = _shrink_epigraph_rows(arr, costs, u, r)
    pos, neg = u > 0, u < 0
    const = float(u[pos] @ lo[pos] + u[neg] @ hi[neg])
    budget = float(u[arr.budget_row]) if arr.budget_row >= 0 else 0.0
    # (per LP: the columns before z0 but the pairs' t, and each pair's t by its B)
    out = arr.cache.get("linear_cols")
    if out is None or out[0] is not arr.pair_t:
        ts = set(arr.pair_t.tolist())
        pair_of = dict(zip(arr.pair_b.tolist(), arr.pair_t.tolist(), strict=True))
        out = arr.cache["linear_cols"] = (arr.pair_t, [j for j in range(arr.z0) if j not in ts],
                                          pair_of)
    cols, pair_of = out[1], out[2]
    best, terms, low_bound, infinite = _box_minima(arr, r, cols, pair_of, col_upper)
    point = np.empty(arr.n_cols)
    point.fill(np.nan)
    point[cols] = best
    if low_bound:
        return DualBound(-INF, budget, point)
    if infinite:  # a loaded dimension without bandwidth: the time is infinite
        return DualBound(INF, budget, point)
    value = const + float(np.array(terms).sum())
    rounding = _rounding(arr, costs, u, lo, hi, cols, pair_of, best, terms)
    return DualBound(value - rounding, budget, point)


def _shrink_node_rows(arr, u: np.ndarray, r: np.ndarray) -> None:
    """Scale down the rows defining each node column with r < 0 until it is 0, ``u`` and ``r`` in
    place (nodes last to first: a node's rows reference earlier nodes and terms only)."""
    z0, K, V = arr.z0, arr.n_terms, arr.n_nodes
    if not V or not (r[z0 + K:] < 0).any():
        return
    node_rows = np.arange(arr.node.start, arr.node.stop)
    order = np.argsort(arr.node_of_row, kind="stable")
    bounds = np.searchsorted(arr.node_of_row[order], np.arange(V + 1))
    for v in range(V - 1, -1, -1):
        col = z0 + K + v
        if r[col] >= 0:
            continue
        rows = node_rows[order[bounds[v]:bounds[v + 1]]]
        s = u[rows].sum()
        if s <= 0:
            continue
        f = max(0.0, (s + r[col]) / s)
        for row in rows:
            delta = (f - 1.0) * u[row]
            a, b = arr.start[row], arr.start[row + 1]
            np.subtract.at(r, arr.index[a:b], delta * arr.value[a:b])
            u[row] *= f


def _shrink_epigraph_rows(arr, costs: np.ndarray, u: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Scale down each term's epigraph rows where its column's r < 0 (``u`` in place); the reduced
    costs after (``r`` when unchanged)."""
    z0, K = arr.z0, arr.n_terms
    if not K:
        return r
    rt = r[z0:z0 + K]
    if not any(v < 0 for v in rt.tolist()):
        return r
    neg = rt < 0
    epi = np.arange(arr.epi.start, arr.epi.stop)
    s = np.bincount(arr.epi_term, weights=u[epi], minlength=K)
    f = np.where(neg & (s > 0), np.maximum(0.0, (s + rt) / np.where(s > 0, s, 1.0)), 1.0)
    u[epi] *= f[arr.epi_term]
    return costs - transpose_product(arr, u)


def _box_minima(arr, r: np.ndarray, cols: list[int], pair_of: dict[int, int],
                col_upper: np.ndarray | None) -> tuple[list[float], list[float], bool, bool]:
    """Each column j of ``cols`` as min over its box (narrowed by ``col_upper``) of P/B + g B (g =
    r_j, P = max(r_t, 0) of its pair's t, else 0), in Python floats as numpy's: (the minimisers,
    the terms, a column with g < 0 unbounded above (bound -inf), a pair's minimiser B <= 0 with P
    > 0 (time inf))."""
    rl = r.tolist()
    lbl, ubl = arr.col_lower.tolist(), arr.col_upper.tolist()
    capl = None if col_upper is None else col_upper.tolist()
    best, terms = [], []
    low_bound = infinite = False
    for j in cols:
        t = pair_of.get(j)
        P = 0.0 if t is None else _maximum(rl[t], 0.0)
        g, lb, ub = rl[j], lbl[j], ubl[j]
        if capl is not None:
            ub = _minimum(ub, capl[j])
        if P == 0 and g == 0:
            b = lb
        elif P > 0 and g > 0:
            b = math.sqrt(P / g)
        else:
            b = lb if g > 0 else ub
        b = _minimum(_maximum(b, lb), ub)
        best.append(b)
        finite = math.isfinite(b)
        low_bound = low_bound or (not finite and g < 0)
        infinite = infinite or (P > 0 and b <= 0)
        if not (low_bound or infinite):
            terms.append((P / b if P > 0 else 0.0) + (g * b if finite else 0.0))
    return best, terms, low_bound, infinite


def _rounding(arr, costs: np.ndarray, u: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              cols: list[int], pair_of: dict[int, int], best: list[float],
              terms: list[float]) -> float:
    """The worst-case floating-point error of the bound's evaluation: (rows + columns + 2) x eps x
    the sum of the magnitudes it adds up."""
    pos, neg = u > 0, u < 0
    size = float(np.abs(u[pos] * lo[pos]).sum() + np.abs(u[neg] * hi[neg]).sum())
    size += sum(map(abs, terms))
    r_size = (np.abs(costs) + transpose_product(arr, np.abs(u), absolute=True)).tolist()
    for j, b in zip(cols, best, strict=True):
        if math.isfinite(b) and b != 0:
            size += r_size[j] * abs(b)
            t = pair_of.get(j)
            if t is not None:
                size += r_size[t] / abs(b)
    return (arr.n_rows + arr.n_cols + 2) * EPS * size


def _maximum(a: float, b: float) -> float:
    """``np.maximum`` on two floats (a NaN propagates)."""
    return a if a >= b or a != a else b


def _minimum(a: float, b: float) -> float:
    """``np.minimum`` on two floats (a NaN propagates)."""
    return a if a <= b or a != a else b
