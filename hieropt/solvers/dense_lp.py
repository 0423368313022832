"""Small LPs by DAQP (Arnström, Bemporad and Axehill 2022, IEEE TAC 67(8)), handed to HiGHS for good
once DAQP fails or the LP outgrows :data:`MAX_COLS`, :data:`MAX_ROWS` (decision record 0003); the
interface :class:`hieropt.solvers.highs.LPBackend`, duals in HiGHS's sign convention."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import daqp
import numpy as np

from ..result import Status
from .highs import LP_TOLERANCE, HighsLP, LPResult
from .linalg import solve

MAX_COLS = 40
"""Columns at most for DAQP."""
MAX_ROWS = 200
"""Rows at most for DAQP (cuts included)."""
ROOM = 32
"""Rows kept free for cuts when an LP is loaded (doubling beyond)."""
DAQP_INF = 1e30
"""DAQP's infinity: a bound at or beyond it is no bound."""
SETTINGS = {"eps_prox": 0.1, "eta_prox": 1e-12, "primal_tol": LP_TOLERANCE, "iter_limit": 2000}
"""DAQP's settings: proximal-point iterations until the iterates move by at most ``eta_prox``, and
HiGHS's feasibility tolerance (on 1,500 random LPs: largest relative error against HiGHS 2e-12)."""
_OPTIMAL = 1
SEEN = "seen once"
"""The mark a compiled LP's ``cache`` holds for a state kept from its second use on (a loaded
layout, a seeded LP)."""


def _layout(arrays: Any) -> dict[str, Any]:
    """The state of a freshly loaded :class:`DenseLP`: DAQP's dense rows after the columns' unit
    rows, with :data:`ROOM` free rows, bounds clipped to :data:`DAQP_INF`, and what was given."""
    m, n = arrays.n_rows, arrays.n_cols
    cap = max(m, min(MAX_ROWS, m + ROOM))  # (room for the cuts to come)
    C = np.eye(n + cap, n)  # the columns' bounds as unit rows, then the rows (DAQP's order)
    end = arrays.start[m]
    C[np.repeat(np.arange(n, n + m), np.diff(arrays.start[:m + 1])), arrays.index[:end]] = (
        arrays.value[:end])
    upper = np.full(n + cap, DAQP_INF)  # DAQP's layout: the columns' bounds, then the rows'
    lower = np.full(n + cap, -DAQP_INF)
    np.maximum(np.concatenate([arrays.col_lower, arrays.row_lower]), -DAQP_INF, out=lower[:n + m])
    np.minimum(np.concatenate([arrays.col_upper, arrays.row_upper]), DAQP_INF, out=upper[:n + m])
    given = [(np.array(arrays.col_lower, dtype=float), np.array(arrays.col_upper, dtype=float)),
             ([np.array(arrays.row_lower, dtype=float)], [np.array(arrays.row_upper, dtype=float)])]
    return {"n_cols": n, "_m": m, "_costs": np.array(arrays.time_costs, dtype=float),
            "_maximize": False, "_duals": np.zeros(0), "_C": C, "_H": np.zeros((n, n)),
            "_upper": upper, "_lower": lower, "_given": given,
            "_changes": []}  # _changes: (a row?, index, lower, upper), in order


def _copied(state: dict[str, Any]) -> dict[str, Any]:
    """The mutable part of a :class:`DenseLP`'s state, copied."""
    (cols, (rl, ru)) = state["_given"]
    out = {k: state[k] for k in ("n_cols", "_m", "_maximize")}
    out.update({k: state[k].copy() for k in ("_costs", "_duals", "_C", "_H", "_upper", "_lower")})
    out.update(_given=[cols, (list(rl), list(ru))], _changes=list(state["_changes"]))
    return out


class DenseLP:
    """One LP (the arrays of :class:`hieropt.solvers.highs.HighsLP`), solved by DAQP while small and
    by HiGHS once not; owned by one solve call (:class:`hieropt.solvers.highs.LPBackend`).

    Args:
        arrays: the compiled LP.
        time_limit_s: limit of each HiGHS solve, s.
        vertex: move DAQP's point onto the vertex its active constraints fix
            (:meth:`_on_vertex`), for an LP whose point is the answer.

    Raises:
        SolverError: HiGHS rejects the model (after a switch)."""

    def __init__(self, arrays: Any, time_limit_s: float = 60.0, vertex: bool = False):
        self.time_limit_s = float(time_limit_s)
        self.vertex = vertex
        self._highs: HighsLP | None = None
        self.load(arrays)

    def load(self, arrays: Any) -> None:
        """See :meth:`hieropt.solvers.highs.LPBackend.load`; from the second load of the same arrays
        on, the layout is kept in ``arrays.cache`` and copied (:data:`SEEN`)."""
        cache = getattr(arrays, "cache", None)
        kept = cache.get("dense_lp") if cache is not None else None
        if kept is None or kept is SEEN:
            state = _layout(arrays)
            if cache is not None:
                cache["dense_lp"] = SEEN if kept is None else state
                state = state if kept is None else _copied(state)
        else:
            state = _copied(kept)
        self.__dict__.update(state)
        if self.n_cols > MAX_COLS or self._m > MAX_ROWS:
            self._switch()

    def copy(self, time_limit_s: float | None = None) -> DenseLP | None:
        """An independent copy of this LP as it stands (time limit ``time_limit_s``, default this
        LP's), or None once it is HiGHS's."""
        if self._highs is not None:
            return None
        new = object.__new__(DenseLP)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(_copied(self.__dict__))
        if time_limit_s is not None:
            new.time_limit_s = float(time_limit_s)
        return new

    def _bound(self, where: slice | int, lower: Any, upper: Any) -> None:
        """DAQP's bounds at ``where`` (columns, then rows), clipped to its infinity."""
        self._lower[where] = np.maximum(lower, -DAQP_INF)
        self._upper[where] = np.minimum(upper, DAQP_INF)

    def _switch(self) -> None:
        """Hand the LP to HiGHS for good: the arrays and rows as given, then every bound change in
        order (as a HighsLP used from the start would have seen them); from then on the methods are
        HiGHS's."""
        n, m = self.n_cols, self._m
        (cl, cu), (rl, ru) = self._given
        rows, cols = np.nonzero(self._C[n:n + m])  # (the rows as they stand, row-wise sparse)
        start = np.searchsorted(rows, np.arange(m + 1)).astype(np.int32)
        state = SimpleNamespace(
            n_cols=n, n_rows=m, col_lower=cl, col_upper=cu, time_costs=self._costs, start=start,
            row_lower=np.concatenate(rl), row_upper=np.concatenate(ru), index=cols.astype(np.int32),
            value=self._C[n + rows, cols])
        self._highs = HighsLP(state, self.time_limit_s)
        for row, i, lower, upper in self._changes:
            (self._highs.change_row_bounds if row else self._highs.change_col_bounds)(
                i, lower, upper
            )
        if self._maximize:
            self._highs.set_costs(self._costs, maximize=True)
        for name in ("load", "add_rows", "set_costs", "change_row_bounds", "change_col_bounds",
                     "set_tolerance", "solve", "row_duals", "close"):
            setattr(self, name, getattr(self._highs, name))

    def close(self) -> None:
        """See :meth:`hieropt.solvers.highs.LPBackend.close` (nothing before a switch)."""

    @property
    def num_rows(self) -> int:
        """Rows of the LP now (cuts included)."""
        return self._highs.num_rows if self._highs is not None else self._m

    def set_tolerance(self, tol: float) -> None:
        """See :meth:`hieropt.solvers.highs.LPBackend.set_tolerance`: HiGHS's job (a switch)."""
        self._switch()
        self.set_tolerance(tol)

    def set_costs(self, costs: np.ndarray, maximize: bool = False) -> None:
        """See :meth:`hieropt.solvers.highs.LPBackend.set_costs`."""
        self._costs = np.array(costs, dtype=float)
        self._maximize = maximize

    def add_rows(self, lower: np.ndarray, upper: np.ndarray, start: np.ndarray, index: np.ndarray,
                 value: np.ndarray) -> None:
        """See :meth:`hieropt.solvers.highs.LPBackend.add_rows`."""
        k, m, n = len(lower), self._m, self.n_cols
        if not k:
            return
        if m + k > MAX_ROWS:
            self._switch()
            return self.add_rows(lower, upper, start, index, value)
        if n + m + k > self._C.shape[0]:  # (more room)
            cap = min(MAX_ROWS, 2 * (m + k))
            self._C = np.vstack([self._C[:n + m], np.zeros((cap - m, n))])
            self._lower = np.append(self._lower[:n + m], np.full(cap - m, -DAQP_INF))
            self._upper = np.append(self._upper[:n + m], np.full(cap - m, DAQP_INF))
        start = np.asarray(start)
        rows = np.repeat(np.arange(n + m, n + m + k), np.diff(np.append(start, len(index))))
        self._C[rows, index] = value
        self._bound(slice(n + m, n + m + k), lower, upper)
        self._given[1][0].append(np.array(lower, dtype=float))
        self._given[1][1].append(np.array(upper, dtype=float))
        self._m = m + k

    def change_row_bounds(self, row: int, lower: float, upper: float) -> None:
        """See :meth:`hieropt.solvers.highs.LPBackend.change_row_bounds`."""
        self._bound(self.n_cols + row, lower, upper)
        self._changes.append((True, row, lower, upper))

    def change_col_bounds(self, col: int, lower: float, upper: float) -> None:
        """See :meth:`hieropt.solvers.highs.LPBackend.change_col_bounds`."""
        self._bound(col, lower, upper)
        self._changes.append((False, col, lower, upper))

    def row_duals(self) -> np.ndarray:
        """See :meth:`hieropt.solvers.highs.LPBackend.row_duals`."""
        return self._duals

    def solve(self) -> LPResult:
        """DAQP's optimum, else HiGHS's (which keeps the LP from then on)."""
        out = self._dense_solve()
        if out is not None:
            return out
        self._switch()
        return self.solve()

    def _dense_solve(self) -> LPResult | None:
        """DAQP's optimum, or None."""
        n, m = self.n_cols, self._m
        f = -self._costs if self._maximize else self._costs
        upper, lower = self._upper[:n + m], self._lower[:n + m]
        sense = np.where(upper == lower, 5, 0).astype(np.int32)  # (DAQP: 5 = an equality)
        try:
            x, _, flag, info = daqp.solve(self._H, f, self._C[n : n + m], upper, lower, sense,
                                          **SETTINGS)
        except (ValueError, TypeError, ArithmeticError):
            return None
        if flag != _OPTIMAL:
            return None
        x = np.asarray(x, dtype=float)
        lam = np.asarray(info["lam"], dtype=float)
        if not (np.isfinite(x).all() and np.isfinite(lam).all()):
            return None
        if self.vertex:
            x = self._on_vertex(x, lam, upper, lower, sense)
        # (DAQP's multipliers are -d objective / d bound)
        self._duals = lam[n:] if self._maximize else -lam[n:]
        return LPResult(Status.OPTIMAL, "Optimal", float(self._costs @ x), x)

    def _on_vertex(self, x: np.ndarray, lam: np.ndarray, upper: np.ndarray, lower: np.ndarray,
                   sense: np.ndarray) -> np.ndarray:
        """``x`` solved from its active constraints when they are as many as columns (DAQP stops
        ~1e-12 off them), kept when it meets every bound and row and is no worse; else ``x``."""
        n, end = self.n_cols, self.n_cols + self._m
        act = np.flatnonzero((lam != 0) | (sense == 5))
        if act.size != n:
            return x
        b = np.where(lam[act] > 0, upper[act], lower[act])  # (DAQP: > 0 at an upper bound)
        with np.errstate(all="ignore"):  # (a singular system gives NaNs: refused below)
            new = solve(self._C[act], b)
        # (the checks in Python floats: fewer numpy calls on a few values)
        vals = (self._C[:end] @ new).tolist()
        tol = LP_TOLERANCE
        if not all(lo - tol * (1 + abs(v)) <= v <= hi + tol * (1 + abs(v))  # (a NaN meets no bound)
                   for v, lo, hi in zip(vals, lower.tolist(), upper.tolist(), strict=True)):
            return x
        f = self._costs
        before, after = float(f @ x), float(f @ new)
        gain = after - before if self._maximize else before - after
        return new if gain >= -1e-12 * (1 + abs(before)) else x
