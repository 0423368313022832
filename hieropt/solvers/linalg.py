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

__all__ = ["solve"]
