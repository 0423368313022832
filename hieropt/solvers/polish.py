"""Newton polish of a cutting-plane optimum on its active set: accurate multipliers for the sensitivity analysis.

At the end of the cutting-plane loop the LP's point is optimal to the gap target in *value*, but where the optimum is
curved (flat directions) its bandwidths are known only to about sqrt(gap), and the slopes of the cuts it sits on (and
so the duals) to about the same relative accuracy, ~1e-4. This module takes the final LP, keeps the rows with a
non-zero dual (the active set) as equalities, replaces each loaded dimension's active cuts by the exact convex row
h_d = t_d - 1/B_d = 0, fixes
the columns at a bound with a non-zero reduced cost, and solves the KKT conditions of that smooth equality-
constrained problem by Newton's method (LU on each step; least squares when that system is singular, so degenerate
multipliers are fine):

    c_F - A_aF^T lam - sum_d nu_d grad_F h_d = 0,   A_a x = b_a,   h_d(x) = 0.

It starts from the LP's point and duals (nu_d = the sum of d's cut duals) and stops when the residual is at the
round-off level. The result is accepted only if the polished point satisfies every original row (cuts excepted) and
bound to 1e-9 and its multipliers keep the LP duals' signs; otherwise None (the caller keeps the LP duals).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .pyomo_core import PyomoTimeLP

__all__ = ["Polished", "kkt_polish"]

DUAL_TOL = 1e-12
"""Duals below this (relative to the largest) are not active."""
MAX_NEWTON = 8
LSTSQ_MAX = 400
"""Unknowns up to which a singular Newton system is solved by least squares (SVD); above, the polish gives up (the
caller keeps the LP duals). A 1,005-unknown system of a Llama 3 70B step-loop plan took 1.7 s per SVD, 40 s per
sensitivity analysis; LU solves it in 20 ms."""


def _newton_step(J: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """The Newton step J s = rhs: by LU when it solves the system to round-off, else by least squares (degenerate
    multipliers make J singular) when J has at most :data:`LSTSQ_MAX` rows; None otherwise."""
    try:
        step = np.linalg.solve(J, rhs)
        if np.isfinite(step).all() and np.abs(J @ step - rhs).max() <= 1e-10 * (1.0 + np.abs(rhs).max()):
            return step
    except np.linalg.LinAlgError:
        pass
    if J.shape[0] > LSTSQ_MAX:
        return None
    return np.linalg.lstsq(J, rhs, rcond=None)[0]


@dataclass(frozen=True)
class Polished:
    """A polished optimum of the LP's active set (model units of the LP).

    Attributes:
        x: all columns.
        row_dual: a multiplier for every row (0 off the active set and on the cut rows).
        col_dual: reduced costs c - A^T row_dual - sum nu grad h (non-zero only on fixed columns).
        nu: multiplier of h_d = t_d - 1/B_d per loaded dimension.
        residual: the KKT residual's infinity norm at the end.
    """

    x: np.ndarray
    row_dual: np.ndarray
    col_dual: np.ndarray
    nu: dict[int, float]
    residual: float


def kkt_polish(core: PyomoTimeLP) -> Polished | None:
    """Polish the last optimal LP of ``core`` (module docstring); None when the active set does not hold."""
    lp = core.solver.lp_arrays()
    A, c, x0 = lp["A"], lp["cost"], lp["x"].copy()
    y, z = lp["row_dual"], lp["col_dual"]
    m, n = A.shape
    cut = np.zeros(m, dtype=bool)
    for _, row, _ in core.cut_rows:
        cut[row] = True
    scale = max(np.abs(y).max(initial=0.0), np.abs(z).max(initial=0.0), 1e-300)
    active = (~cut) & (np.abs(y) > DUAL_TOL * scale)
    rhs = np.where(y > 0, lp["row_lower"], lp["row_upper"])  # the bound each active row sits at
    eq = lp["row_lower"] == lp["row_upper"]
    rhs = np.where(eq, lp["row_lower"], rhs)
    if not np.all(np.isfinite(rhs[active])):
        return None
    fixed = np.abs(z) > DUAL_TOL * scale
    at = np.where(z > 0, lp["col_lower"], lp["col_upper"])
    if not np.all(np.isfinite(at[fixed])):
        return None
    dims = [d for d in core.loaded if any(cut[row] and abs(y[row]) > DUAL_TOL * scale
                                          for dd, row, _ in core.cut_rows if dd == d)]
    tc = {d: core.t_col[d] for d in dims}
    bc = {d: core.b_col[d] for d in dims}
    nu0 = {d: float(sum(y[row] for dd, row, _ in core.cut_rows if dd == d)) for d in dims}
    free = np.flatnonzero(~fixed)
    rows = np.flatnonzero(active)
    x = x0.copy()
    x[fixed] = at[fixed]
    if any(x[bc[d]] <= 0 for d in dims):
        return None
    lam = y[rows].copy()
    nu = np.array([nu0[d] for d in dims])
    pos = {j: i for i, j in enumerate(free)}
    nF, nA, nD = len(free), len(rows), len(dims)
    res = np.inf
    for _ in range(MAX_NEWTON):
        g = np.zeros((nD, n))  # gradients of h_d = t_d - 1/B_d
        for i, d in enumerate(dims):
            g[i, tc[d]] = 1.0
            g[i, bc[d]] = 1.0 / x[bc[d]] ** 2
        F1 = c[free] - A[np.ix_(rows, free)].T @ lam - g[:, free].T @ nu
        F2 = A[rows] @ x - rhs[rows]
        F3 = np.array([x[tc[d]] - 1.0 / x[bc[d]] for d in dims])
        F = np.concatenate([F1, F2, F3])
        res = float(np.abs(F).max(initial=0.0))
        if res <= 1e-14 * max(1.0, np.abs(c).max(initial=0.0), np.abs(x).max(initial=0.0)):
            break
        J = np.zeros((nF + nA + nD, nF + nA + nD))
        for i, d in enumerate(dims):  # -nu_d * d2h/dB2 = -nu_d * (-2 / B^3)
            if bc[d] in pos:
                J[pos[bc[d]], pos[bc[d]]] = 2.0 * nu[i] / x[bc[d]] ** 3
        J[:nF, nF:nF + nA] = -A[np.ix_(rows, free)].T
        J[:nF, nF + nA:] = -g[:, free].T
        J[nF:nF + nA, :nF] = A[np.ix_(rows, free)]
        J[nF + nA:, :nF] = g[:, free]
        if not (np.isfinite(J).all() and np.isfinite(F).all()):  # (LAPACK's SVD on NaN never returns)
            return None
        step = _newton_step(J, -F)
        if step is None:
            return None
        x[free] += step[:nF]
        lam += step[nF:nF + nA]
        nu += step[nF + nA:]
        if any(x[bc[d]] <= 0 for d in dims):
            return None
    # accept only a point that keeps every original row (cuts aside) and bound, and the duals' signs
    tol = 1e-9 * max(1.0, float(np.abs(x).max(initial=0.0)))
    act = A @ x
    keep = ~cut
    if np.any(act[keep] < lp["row_lower"][keep] - tol) or np.any(act[keep] > lp["row_upper"][keep] + tol):
        return None
    if np.any(x < lp["col_lower"] - tol) or np.any(x > lp["col_upper"] + tol):
        return None
    if np.any(np.sign(lam) * np.sign(y[rows]) < 0) or np.any(nu < 0):
        return None
    row_dual = np.zeros(m)
    row_dual[rows] = lam
    g = np.zeros((nD, n))
    for i, d in enumerate(dims):
        g[i, tc[d]] = 1.0
        g[i, bc[d]] = 1.0 / x[bc[d]] ** 2
    col_dual = c - A.T @ row_dual - g.T @ nu
    col_dual[free] = 0.0
    return Polished(x, row_dual, col_dual, dict(zip(dims, nu.tolist(), strict=True)), res)
