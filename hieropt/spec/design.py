"""The design constraints and per-dimension bounds of an instance as arrays
(:attr:`hieropt.spec.Instance.design_matrix`), for the solvers' and the verifier's vectorised
checks."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

SMALL = 256
"""Matrix entries (rows x dimensions) up to which :meth:`DesignMatrix.violation_list` works in
Python floats."""


@dataclass(frozen=True)
class DesignMatrix:
    """The design constraints ``lower <= A @ bw <= upper`` (GB/s per NPU) and the per-dimension
    bounds as arrays.

    Attributes:
        A: (n, D) coefficients, one row per constraint (instance order).
        lower, upper: (n,) row bounds (-inf / inf where a sense does not bound that side).
        rhs: (n,) right-hand sides; ``sense``: (n,) 0 for ``<=``, 1 for ``>=``, 2 for ``==``.
        bw_lower, bw_upper: (D,) bounds on bw (GB/s; inf where there is no upper bound).

    The arrays are read-only (one instance's matrix is shared by every solve of it).
    """

    A: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    rhs: np.ndarray
    sense: np.ndarray
    bw_lower: np.ndarray
    bw_upper: np.ndarray

    @classmethod
    def of(cls, constraints: tuple[Any, ...], bounds: tuple[Any, ...]) -> DesignMatrix:
        """The arrays of ``constraints`` (:class:`hieropt.spec.LinearConstraint`) and ``bounds``
        (:class:`hieropt.spec.Bound`, one per dimension)."""
        D = len(bounds)
        A = np.array([c.coefficients for c in constraints], dtype=float).reshape(
            len(constraints), D
        )
        rhs = np.array([c.rhs for c in constraints], dtype=float)
        sense = np.array([("<=", ">=", "==").index(c.sense) for c in constraints], dtype=np.int64)
        lower = np.where(sense >= 1, rhs, -np.inf)
        upper = np.where(sense != 1, rhs, np.inf)
        bw_lower = np.array([b.lower_gbps for b in bounds], dtype=float)
        bw_upper = np.array(
            [np.inf if b.upper_gbps is None else b.upper_gbps for b in bounds], dtype=float
        )
        for a in (A, lower, upper, rhs, sense, bw_lower, bw_upper):
            a.flags.writeable = False
        return cls(A, lower, upper, rhs, sense, bw_lower, bw_upper)

    def violations(self, bw: np.ndarray) -> np.ndarray:
        """(n,) by how much each row is violated at ``bw`` (GB/s, shape (D,)), relative to
        max(|rhs|, sum_d |a_d bw_d|) (0 where it holds)."""
        lhs = self.A @ bw
        scale = np.maximum(np.maximum(self.abs_rhs, np.abs(self.A * bw).sum(axis=1)), 1e-300)
        over = np.maximum(lhs - self.upper, self.lower - lhs)
        return np.maximum(over, 0.0) / scale

    def violation_list(self, bw: np.ndarray) -> list[float]:
        """:meth:`violations` at ``bw`` (GB/s per NPU, D values) as a list of n Python floats
        (relative, 0 where a row holds; NaN for a row whose left side is NaN), computed in Python
        floats while the matrix is small (:data:`SMALL`: fewer numpy calls on a few values), else by
        :meth:`violations`.

        Raises:
            ValueError: ``bw`` does not hold one value per dimension.
        """
        if self.A.size > SMALL:
            return self.violations(np.asarray(bw, dtype=float)).tolist()
        b = bw.tolist() if isinstance(bw, np.ndarray) else [float(v) for v in bw]
        if len(b) != self.A.shape[1]:
            raise ValueError(f"{len(b)} bandwidths for {self.A.shape[1]} dimensions")
        out = []
        for a, lo, hi, size in self._rows:
            lhs = mag = 0.0
            for x, y in zip(a, b, strict=False):  # (lengths checked above)
                t = x * y
                lhs += t
                mag += abs(t)
            if lhs != lhs:  # (NaN)
                out.append(lhs)
                continue
            over = max(lhs - hi, lo - lhs, 0.0)
            out.append(over / max(size, mag, 1e-300) if over else 0.0)
        return out

    def max_violation(self, bw: np.ndarray) -> float:
        """The largest of :meth:`violations` (0.0 without rows; NaN when ``bw`` holds a NaN)."""
        if not self.A.size:
            return 0.0
        v = self.violation_list(bw)
        return math.nan if any(x != x for x in v) else max(v)

    @cached_property
    def fixed_gbps(self) -> np.ndarray:
        """(D,) the bandwidth (GB/s per NPU) each dimension must equal: its bounds where they meet,
        or r / a for an equality row ``a bw[d] == r`` on that dimension alone; NaN where nothing
        fixes it. Read-only."""
        out = np.where(self.bw_lower == self.bw_upper, self.bw_lower, np.nan)
        nz = self.A != 0
        for r in np.flatnonzero((self.sense == 2) & (nz.sum(axis=1) == 1)):
            d = int(np.flatnonzero(nz[r])[0])
            out[d] = self.rhs[r] / self.A[r, d]
        out.flags.writeable = False
        return out

    def on_fixed(self, bw: np.ndarray, rel: float = 1e-12) -> np.ndarray:
        """``bw`` (D,) GB/s with each bandwidth within ``rel`` (relative) of the value its rows fix
        (:attr:`fixed_gbps`) set to that value: an LP's round-off (2 x (1 / 2) scaled back to
        1.9999999999999998) off a bandwidth the user fixed. ``bw`` itself when nothing moves."""
        fixed = self.fixed_gbps
        near = np.abs(bw - fixed) <= rel * np.abs(fixed)  # (False where fixed is NaN)
        if not near.any() or np.array_equal(bw[near], fixed[near]):
            return bw
        return np.where(near, fixed, bw)

    @cached_property
    def units_per_coefficient(self) -> np.ndarray:
        """(n, D) 1 / |a_rd| where a_rd != 0, else 0: GB/s of dimension d per unit of row r (a row
        missed by m units frees at most m x max_d price_d / |a_rd| of cost), read-only."""
        out = np.zeros_like(self.A)
        nz = self.A != 0
        out[nz] = 1.0 / np.abs(self.A[nz])
        out.flags.writeable = False
        return out

    @cached_property
    def bw_lower_list(self) -> list[float]:
        """:attr:`bw_lower` as Python floats (GB/s)."""
        return self.bw_lower.tolist()

    @cached_property
    def bw_upper_list(self) -> list[float]:
        """:attr:`bw_upper` as Python floats (GB/s; inf where there is no upper bound)."""
        return self.bw_upper.tolist()

    @cached_property
    def _rows(self) -> list[tuple[list[float], float, float, float]]:
        """Each row's coefficients, bounds and |rhs| as Python floats."""
        return list(
            zip(
                self.A.tolist(),
                self.lower.tolist(),
                self.upper.tolist(),
                self.abs_rhs.tolist(),
                strict=True,
            )
        )

    @cached_property
    def abs_rhs(self) -> np.ndarray:
        """(n,) |rhs|."""
        return np.abs(self.rhs)
