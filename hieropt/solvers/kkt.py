"""Active-set Newton polish of a cutting-plane LP's solution (decision record 0002): the LP's active
set with t_d = 1/B_d is a square KKT system, solved by Newton's method with primal-dual active-set
corrections (Nocedal and Wright 2006, §16.5, §18.1; docs/explanation/solving.md). Never trusted by
itself: the loop evaluates and bounds the polished point."""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import numpy as np

from .dual_bound import DENSE, dense_matrix
from .linalg import solve as _solve

MAX_UNKNOWNS = 400
"""Polish only LPs with at most this many unknowns (dense linear algebra)."""
ROUNDS = 6
"""Active-set corrections at most."""
MAX_DAMPED = 3
"""Newton steps cut short by the fraction to the boundary before the run counts as a run-away."""
MAX_SINGULAR = 3
"""Least-squares Newton steps (singular matrix) per run before it gives up."""
MAX_DROPS = 3
"""Tie rows tried one at a time out of a singular active set before all of them leave."""
NEWTON_STEPS = 20
"""Newton steps per run at most (a start from the previous active set's point can need 13)."""
WORK = 40 * 400 ** 3
"""Work one polish may spend, in (unknowns)^3 of its Newton systems (an LU step N^3, a least-squares
step :data:`LSTSQ_COST` N^3): about 40 LU steps of the largest system; spent, the polish gives
up."""
LSTSQ_COST = 20
"""An SVD least-squares solve costs about this many LU solves of the same size."""


def _spend(work: list[float], units: float) -> bool:
    """Take ``units`` from the work left to one polish (``work[0]``, from :data:`WORK`); False
    when there were not enough left."""
    work[0] -= units
    return work[0] >= 0


@dataclass(frozen=True)
class Polished:
    """A polished point ``x`` (scaled columns) and row multipliers ``duals`` (one per base row)."""

    x: np.ndarray
    duals: np.ndarray


def polish(arr, costs: np.ndarray, x: np.ndarray, duals: np.ndarray, row_lower: np.ndarray,
           row_upper: np.ndarray) -> Polished | None:
    """The KKT point of the true problem near the LP solution (``x``, ``duals``) of ``arr`` with
    objective ``costs`` (minimised); None when the system is too large, Newton does not converge, or
    the active set does not settle within :data:`ROUNDS` corrections."""
    with np.errstate(all="ignore"):  # a singular Newton matrix gives NaNs, handled as such
        return _polish(arr, costs, x, duals, row_lower, row_upper)


def _polish(arr, costs, x, duals, row_lower, row_upper) -> Polished | None:
    m, n = arr.n_rows, arr.n_cols
    if m * n > DENSE:
        return None
    x = np.array(x[:n], dtype=float)
    if any(map((0.0).__ge__, x[arr.pair_b].tolist())):  # (some B <= 0)
        return None
    y = np.asarray(duals[:m], dtype=float)
    lo, hi = row_lower[:m], row_upper[:m]
    A = dense_matrix(arr)
    x, active, tol, nu, ct, cb, at_bound, movable, wanted = _start(arr, A, costs, x, y, lo, hi)
    upper_side = y < 0  # an active row sits at its upper bound (else its lower)
    nonzero = _structure(arr, A)[2]
    cl, cu = arr.col_lower, arr.col_upper
    z0 = arr.z0
    tied = None
    seen = set()
    work = [float(WORK)]
    for _ in range(ROUNDS):
        key = active.tobytes()
        if key in seen:  # the corrections cycle: the LP's next cuts settle it
            return None
        seen.add(key)
        # (a singular system with tie rows: try without them)
        guessed = tied is not None and any(tied.tolist())
        system = (A, costs, x, y, nu, upper_side, lo, hi, movable, wanted, nonzero, ct, cb, work)
        sol = _attempt(active, system, max_singular=0 if guessed else MAX_SINGULAR)
        if sol is None and guessed:
            sol, active = _without_ties(active, tied, system)
        if sol is None or work[0] < 0:  # (spent: the loop keeps the LP's point)
            return None
        start = x, y, nu
        x, yE, nu, converged, E = sol
        # (a run-away iterate's t need not be near 1/B: the crossings are judged on the links)
        if not converged:
            x[ct] = 1.0 / x[cb]
        y = np.zeros(m)
        y[E] = yE
        ax = A @ x
        joins, leaves = _changes(ax, lo, hi, y, tol, active, upper_side, converged)
        # a run towards B = 0 (a row that would stop it is missing): the rows it crossed join, as
        # a primal active-set method's blocking constraints (N&W §16.5)
        if not converged:
            if not any(joins):
                return None
        elif any(v < lc - 1e-12 * (1 + abs(lc)) or v > uc + 1e-12 * (1 + abs(uc))  # (outside)
                 for v, lc, uc in zip(x[:z0].tolist(), cl[:z0].tolist(), cu[:z0].tolist(),
                                      strict=True)):
            return None
        if not any(joins) and not any(leaves):
            xz = x[:z0]  # (a view: the clip acts in place on x)
            np.maximum(xz, cl[:z0], out=xz)
            np.minimum(xz, cu[:z0], out=xz)
            return Polished(x, y)
        joins, leaves = np.array(joins, dtype=bool), np.array(leaves, dtype=bool)
        tiny = 1e-12 * (1 + np.abs(ax))
        upper_side = np.where(joins, ax > hi, upper_side)
        # an epigraph column held at its bound is free once a row of its joins
        movable[z0:] |= at_bound[z0:] & nonzero[joins].any(axis=0)[z0:]
        kept = active & ~leaves
        active = kept | joins
        if converged:
            tied = _regroup(arr, ax - lo, tiny, joins, active, kept)
        else:  # (the pieces of a max with a crossed row may not all tie: a singular system says)
            tied = kept & _same_max(arr, joins)
            x, y, nu = start  # (the next run starts where this one did)
    return None


def _start(arr, A: np.ndarray, costs: np.ndarray, x: np.ndarray, y: np.ndarray, lo: np.ndarray,
           hi: np.ndarray):
    """Newton's start from the LP's ``x`` (n,) and ``y`` (m,): (x with columns held at a bound set
    to it and t = 1/B, the active rows, the duals' tolerance, the links' multipliers, the t and B
    columns of the links with a free B, the columns held at a bound, the movable columns, the
    columns needed). In Python floats, each operation as numpy's."""
    xl, yl, lol, hil = x.tolist(), y.tolist(), lo.tolist(), hi.tolist()
    # (numpy's NaN max)
    scale = 1.0 if any(map(math.isnan, yl)) else max(1.0, max(map(abs, yl), default=0.0))
    tol, cut = 1e-9 * scale, 1e-10 * scale
    # the rows with a non-zero dual on a finite bound, and the equality rows
    active = [(abs(v) > cut and math.isfinite(low if v > 0 else high)) or low == high
              for v, low, high in zip(yl, lol, hil, strict=True)]
    # columns held at a bound by a non-zero reduced cost stay there, and so do free linear columns
    rl = (costs - A.T @ y).tolist()
    cbl, ctl = arr.pair_b.tolist(), arr.pair_t.tolist()
    rc = rl[:]
    nul = []
    for b, t in zip(cbl, ctl, strict=True):
        v = rl[t] if rl[t] >= 0.0 or rl[t] != rl[t] else 0.0  # (np.maximum)
        nul.append(v)
        rc[t] = rl[t] - v
        # (numpy's division at a zero divisor: inf or NaN, not ZeroDivisionError)
        rc[b] = rl[b] - (v / b2 if (b2 := xl[b] * xl[b]) else float(np.float64(v) / b2))
    linear, pairs = _structure(arr, A)[3]
    cl, cu, cost = arr.col_lower.tolist(), arr.col_upper.tolist(), costs.tolist()
    links = set(ctl)  # t = 1/B: a t at its LP bound (a cut that does not reach it) follows its B
    at_bound, fixed, wanted = [False] * len(xl), [], []
    for j, (xj, lj, uj, rj, cj) in enumerate(zip(xl, cl, cu, rc, cost, strict=True)):
        if j not in links:
            if abs(xj - lj) <= 1e-9 * (1 + abs(lj)) and rj > tol:
                xl[j], at_bound[j] = lj, True
            elif math.isfinite(uj) and abs(xj - uj) <= 1e-9 * (1 + abs(uj)) and rj < -tol:
                xl[j], at_bound[j] = uj, True
        fixed.append(at_bound[j] or (linear[j] and cj == 0))
        wanted.append(pairs[j] or cj != 0)
    # a link whose B is held at a bound leaves the system with its t = 1/B; Newton starts on t = 1/B
    free = []
    for i, (b, t) in enumerate(zip(cbl, ctl, strict=True)):
        xb = xl[b]
        xl[t] = 1.0 / xb if xb else float(np.float64(1.0) / xb)
        if fixed[b]:
            fixed[t] = True
        else:
            free.append(i)
    ct, cb = arr.pair_t, arr.pair_b
    if len(free) < len(cbl):
        ct, cb = ct[free], cb[free]
        nul = [nul[i] for i in free]
    return (np.array(xl, dtype=float), np.array(active, dtype=bool), tol,
            np.array(nul, dtype=float), ct, cb, np.array(at_bound, dtype=bool),
            np.array([not f for f in fixed], dtype=bool), np.array(wanted, dtype=bool))


def _changes(ax: np.ndarray, lo: np.ndarray, hi: np.ndarray, y: np.ndarray, tol: float,
             active: np.ndarray, upper_side: np.ndarray,
             converged: bool) -> tuple[list[bool], list[bool]]:
    """The active-set correction as lists over the base rows: inactive rows ``ax`` violates
    (``joins``) and, after a converged run, active inequality rows whose multiplier has the wrong
    sign (``leaves``)."""
    axl, lol, hil, actl = ax.tolist(), lo.tolist(), hi.tolist(), active.tolist()
    joins = []
    for a, low, high, on in zip(axl, lol, hil, actl, strict=True):
        t = 1e-12 * (1 + abs(a))
        joins.append(not on and (a < low - t or a > high + t))
    if not converged:
        return joins, [False] * len(joins)
    return joins, [on and low != high and (v > tol if up else v < -tol) for on, low, high, v, up
                   in zip(actl, lol, hil, y.tolist(), upper_side.tolist(), strict=True)]


def _same_max(arr, rows: np.ndarray) -> np.ndarray:
    """The epigraph and node rows of every term or node that one of ``rows`` belongs to."""
    out = np.zeros(rows.size, dtype=bool)
    for part, group in ((arr.epi, arr.epi_term), (arr.node, arr.node_of_row)):
        sel = rows[part]
        # (np.isin by a lookup table over the group numbers: a few ops instead of a sort)
        if sel.any():
            hit = np.zeros(int(group.max()) + 1, dtype=bool)
            hit[group[sel]] = True
            out[part] = hit[group]
    return out


def _without_ties(active: np.ndarray, tied: np.ndarray, system: tuple):
    """(Newton's result, active set) without one of the tie rows (at most :data:`MAX_DROPS` tries),
    else without all; (None, active) when every try fails."""
    rows = tied.nonzero()[0]
    singles = [[r] for r in rows[:MAX_DROPS]] if rows.size > 1 else []
    for drop in [*singles, rows]:
        trial = active.copy()
        trial[drop] = False
        sol = _attempt(trial, system, max_singular=0)  # (a guess: no least-squares runs)
        if sol is not None:
            return sol, trial
    return None, active


def _attempt(active, system: tuple, max_singular: int):
    """:func:`_newton` on the active rows of ``system``, with their indices ``E`` appended."""
    A, costs, x, y, nu, upper_side, lo, hi, movable, wanted, nonzero, ct, cb, work = system
    E = active.nonzero()[0]
    # (a boolean product: the columns an active row touches)
    free = movable & (wanted | (active @ nonzero))
    rhs = np.where(upper_side, hi, lo)[E]
    sol = _newton(A, costs, x, y[E], nu, E, rhs, free, ct, cb, work, max_singular=max_singular)
    return None if sol is None else (*sol, E)


def _structure(arr, A: np.ndarray) -> tuple:
    """Per LP (cached on ``arr``): the linear columns outside the pairs and epigraph, the pairs'
    columns, the base rows' non-zeros, and the first two as lists."""
    out = arr.cache.get("kkt")
    if out is None or out[0] is not A:
        n = arr.n_cols
        linear = np.zeros(n, dtype=bool)
        linear[:arr.z0] = True
        pairs = np.zeros(n, dtype=bool)
        pairs[arr.pair_t] = pairs[arr.pair_b] = True
        linear &= ~pairs
        out = arr.cache["kkt"] = (A, (linear, pairs, A != 0, (linear.tolist(), pairs.tolist())))
    return out[1]


def _regroup(arr, slack: np.ndarray, tiny: np.ndarray, joins: np.ndarray, active: np.ndarray,
             kept: np.ndarray) -> np.ndarray:
    """A term (or node) with a violated piece is a max whose argmax moved: its active rows become
    the pieces tied with the largest, plus the tight ``kept`` ones (in place on ``active``).
    Returns the rows kept only as ties (dropped by the caller when singular)."""
    tied = np.zeros(active.size, dtype=bool)
    for rows, group in ((np.arange(arr.epi.start, arr.epi.stop), arr.epi_term),
                        (np.arange(arr.node.start, arr.node.stop), arr.node_of_row)):
        if not rows.size or not joins[rows].any():
            continue
        s = slack[rows]
        lowest = np.full(int(group.max()) + 1, np.inf)
        np.minimum.at(lowest, group, s)
        moved = np.zeros(lowest.size, dtype=bool)
        moved[group[joins[rows]]] = True
        sel = moved[group]
        r = rows[sel]
        top = s[sel] <= lowest[group[sel]] + tiny[r]
        tie = kept[r] & (np.abs(s[sel]) <= tiny[r])
        active[r] = top | tie
        tied[r] = tie & ~top
    return tied


def _newton(A, costs, x, yE, nu, E, rhs, free, ct, cb, work: list[float], max_singular: int):
    """Newton's method on [grad L = 0 (free columns), A_E x = rhs, t = 1/B]: (x, y_E, nu, True) at
    convergence, (the last iterate, False) when the steps run towards B = 0, None when singular or
    not a system for this method. The matrix is built once; each step updates only the B-dependent
    diagonals (strided views), the scalar work in Python floats."""
    nl = ct.size
    fl = free.tolist()
    cbl, ctl = cb.tolist(), ct.tolist()
    if not (all(map(fl.__getitem__, cbl)) and all(map(fl.__getitem__, ctl))):
        return None  # a link's column is fixed: not a system for this method
    for j in cbl + ctl:
        fl[j] = False
    order = np.array(cbl + ctl + [j for j, f in enumerate(fl) if f], dtype=np.intp)
    nf, ne = order.size, E.size
    N = nf + ne + nl
    if N > MAX_UNKNOWNS or N == 0:
        return None
    AE = A[E]
    AEf = AE[:, order]
    L = np.zeros((N, N))
    np.negative(AEf.T, out=L[:nf, nf:nf + ne])
    L[nf:nf + ne, :nf] = AEf
    diagonals = L.reshape(-1)
    k = nf + ne
    diagonals[k * N + nl:k * N + nl + nl * (N + 1):N + 1] = 1.0  # link rows: t - 1/B
    diagonals[nl * N + k:nl * N + k + nl * (N + 1):N + 1] = -1.0  # t's stationarity: - nu
    q = np.zeros(N)
    np.negative(costs[order], out=q[:nf])
    held = x.copy()
    held[order] = 0.0
    q[nf:k] = rhs - AE @ held  # the fixed columns move to the right-hand side
    z = np.concatenate([x[order], yE, nu])
    tol = 1e-14 * (1.0 + np.abs(z).max())
    J = L.copy()  # L plus the derivative of the nonlinear part, on diagonals where L is 0
    flat = J.reshape(-1)
    step_bb = flat[0:N * nl:N + 1]  # diagonal of J[:nl, :nl] (views of J)
    step_lb = flat[k * N:k * N + nl * (N + 1):N + 1]  # diagonal of J[links, :nl]
    step_bl = flat[k:k + nl * (N + 1):N + 1]  # diagonal of J[:nl, links]
    zb, znu = z[:nl], z[k:]  # views of z
    damped = singular = 0
    for _ in range(NEWTON_STEPS):
        inv = (1.0 / zb).tolist()  # (numpy's division: inf at B = 0, no exception)
        inv2 = [v * v for v in inv]
        nul = znu.tolist()
        F = L @ z
        F -= q
        Fl = F.tolist()
        for j in range(nl):  # the links' nonlinear parts, in Python floats (the same operations)
            Fl[j] -= nul[j] * inv2[j]
            Fl[k + j] -= inv[j]
        # (as numpy's max, a NaN never passes)
        if max(map(abs, Fl)) <= tol and not math.isnan(sum(Fl)):
            return _unpack(x, order, z, nf, ne, znu, True)
        F = np.array(Fl)
        # d/dB of -nu / B^2: 2 nu / B^3
        step_bb[:] = [n * 2.0 * a2 * a for n, a2, a in zip(nul, inv2, inv, strict=True)]
        step_lb[:] = inv2
        step_bl[:] = [-a2 for a2 in inv2]
        if not _spend(work, N ** 3):
            return None
        step = _solve(J, F)
        s = step.tolist()
        if not math.isfinite(sum(s)):  # singular: a least-squares step, a few times at most
            singular += 1
            if singular > max_singular or not _spend(work, LSTSQ_COST * N ** 3):
                return None
            # (LAPACK's SVD on NaN never returns)
            if not (np.isfinite(J).all() and np.isfinite(F).all()):
                return None
            step = np.linalg.lstsq(J, F, rcond=1e-12)[0]
            s = step.tolist()
            if not math.isfinite(sum(s)):
                return None
        b = zb.tolist()  # (the links' B lead z and the step)
        if nl and min(map(operator.sub, b, s)) <= 0:  # 0.9 of the way to B = 0 (N&W §16.6)
            step *= 0.9 * min(bi / si for bi, si in zip(b, s, strict=False) if si > 0)
            damped += 1
            if damped > MAX_DAMPED:
                return _unpack(x, order, z, nf, ne, znu, False)
        z -= step
        if nl and min(zb.tolist()) <= 0:
            return None
    return None


def _unpack(x, order, z, nf, ne, znu, converged: bool):
    """(x with the free columns from ``z``, the rows' and links' multipliers, ``converged``)."""
    x = x.copy()
    x[order] = z[:nf]
    return x, z[nf:nf + ne].copy(), znu.copy(), converged
