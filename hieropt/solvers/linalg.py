"""Dense linear algebra on the tiny systems of the solvers (a handful to a few hundred unknowns)."""

from __future__ import annotations

import numpy as np

try:  # numpy's own LAPACK gufunc: np.linalg.solve without its ~20 us of checks and error-state set-up per call
    from numpy.linalg import _umath_linalg

    solve = _umath_linalg.solve1
    """``solve(A, b)``: x with A x = b for a square (n, n) ``A`` and (n,) ``b`` (LAPACK gesv); a singular ``A``
    gives NaNs (no exception: callers test ``np.isfinite``; call inside ``np.errstate(all="ignore")``)."""
except (ImportError, AttributeError):  # pragma: no cover - other numpy builds
    solve = np.linalg.solve

__all__ = ["solve", "Work", "WORK", "LSTSQ_COST"]

WORK = 40 * 400 ** 3
"""Work one polish may spend, in (unknowns)^3 of the Newton systems it solves: an LU step costs N^3,
a least-squares step (SVD) :data:`LSTSQ_COST` N^3. Spent, the polish gives up (None: the loop keeps
the LP's point and cuts on). About 40 LU steps of the largest system the polish takes (400
unknowns), a fraction of a second: a 3-workload, 50-layer LP (340 unknowns, singular active sets)
spent 2-4 s per polish in failing least-squares runs without it."""
LSTSQ_COST = 20
"""An SVD least-squares solve costs about this many LU solves of the same size."""


class Work:
    """The work left to one polish (:data:`WORK`)."""

    def __init__(self, units: float = WORK):
        self.left = float(units)

    def spend(self, units: float) -> bool:
        """Take ``units``; False when there were not enough left."""
        self.left -= units
        return self.left >= 0

