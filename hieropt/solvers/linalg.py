"""Dense solves of the solvers' tiny systems, exact rational dot products and their outward
rounding, and the solvers' one ``INF`` and ``EPS``."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

INF = float("inf")
EPS = float(np.finfo(float).eps)
"""The machine epsilon of a float: the unit of every rounding margin of the solvers."""


def solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with A x = b ((n, n), (n,); LAPACK gesv); NaNs, not an exception, for a singular ``A``."""
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        return np.full(np.shape(b), np.nan)


def exact_dot(coef, x) -> Fraction:
    """sum_i coef_i x_i of two float vectors of one length (any units), in exact rationals."""
    return sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(coef, x, strict=True)),
               Fraction(0))


def round_outwards(q: Fraction, up: bool) -> float:
    """``q`` rounded to a float upwards (``up``) or downwards."""
    f = float(q)
    if up and Fraction(f) < q:
        return float(np.nextafter(f, np.inf))
    if not up and Fraction(f) > q:
        return float(np.nextafter(f, -np.inf))
    return f
