"""Dense linear algebra on the tiny systems of the solvers (a handful to a few hundred unknowns),
and exact rationals rounded to floats."""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with A x = b for a square (n, n) ``A`` and (n,) ``b`` (``np.linalg.solve``: LAPACK gesv). A
    singular ``A`` gives NaNs, not an exception: callers test ``np.isfinite`` of the result."""
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        return np.full(np.shape(b), np.nan)


def round_outwards(q: Fraction, up: bool) -> float:
    """``q`` rounded to a float upwards (``up``) or downwards."""
    f = float(q)
    if up and Fraction(f) < q:
        return float(np.nextafter(f, np.inf))
    if not up and Fraction(f) > q:
        return float(np.nextafter(f, -np.inf))
    return f


__all__ = ["solve", "round_outwards", "Work", "WORK", "LSTSQ_COST"]

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

