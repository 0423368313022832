"""A small derivative-free minimiser over a box, for fitting a few calibration parameters (numpy
only; each loss evaluation predicts every calibration run, so evaluations are counted in tens to
hundreds).

:func:`minimise`: each parameter in turn is scanned on a grid of :data:`GRID` points across its
bounds, and the best bracket is narrowed by golden-section search (Kiefer 1953) to
:data:`TOLERANCE` of the range. With one parameter that is the answer: with the time affine in
1 / efficiency, the MAPE is convex in 1 / efficiency, hence unimodal on the grid's bracket. With
several, the sweep repeats (at most :data:`ROUNDS`) and Nelder-Mead (Nelder and Mead 1965,
standard coefficients, in the box scaled to the unit cube, points clipped to it) polishes the
result along directions the sweeps cannot follow (two parameters that trade off).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

GRID = 13
"""Grid points per parameter before the golden-section search."""
TOLERANCE = 1e-6
"""Golden-section stopping width, and Nelder-Mead's simplex size, as fractions of the range."""
ROUNDS = 3
"""Grid-and-golden sweeps over the parameters before Nelder-Mead (one for one parameter)."""
SIMPLEX_STEPS = 400
"""Nelder-Mead iterations per parameter at most."""

Loss = Callable[[np.ndarray], float]


def golden(f: Callable[[float], float], a: float, b: float, tol: float) -> tuple[float, float]:
    """The minimiser of a unimodal ``f`` on [a, b] to width ``tol``, and its value."""
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    while b - a > tol:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return (c, fc) if fc <= fd else (d, fd)


def sweep(loss: Loss, x: np.ndarray, best: float, lo: np.ndarray, hi: np.ndarray) -> float:
    """One grid + golden-section line search along each coordinate in turn; updates ``x`` in place
    and returns its loss."""
    for i in range(lo.size):

        def along(v: float, i: int = i) -> float:
            y = x.copy()
            y[i] = v
            return loss(y)

        grid = np.linspace(lo[i], hi[i], GRID)
        values = [along(float(v)) for v in grid]
        j = int(np.argmin(values))
        a, b = float(grid[max(j - 1, 0)]), float(grid[min(j + 1, GRID - 1)])
        v, fv = golden(along, a, b, TOLERANCE * (hi[i] - lo[i]))
        if min(fv, values[j]) < best:
            x[i] = v if fv <= values[j] else float(grid[j])
            best = min(fv, values[j])
    return best


def nelder_mead(
    loss: Loss, x: np.ndarray, best: float, step: float = 0.05
) -> tuple[np.ndarray, float]:
    """Nelder-Mead in the unit cube from ``x`` (loss ``best``): reflection 1, expansion 2,
    contraction 1/2, shrink 1/2; points clipped to [0, 1]; stops when the simplex is smaller than
    :data:`TOLERANCE` or after :data:`SIMPLEX_STEPS` x k iterations."""
    k = x.size
    pts = [x.copy()] + [
        np.clip(x + step * np.eye(k)[i] * (1 if x[i] < 0.5 else -1), 0, 1) for i in range(k)
    ]
    vals = [best] + [loss(p) for p in pts[1:]]
    for _ in range(SIMPLEX_STEPS * k):
        order = np.argsort(vals)
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        if max(np.abs(p - pts[0]).max() for p in pts[1:]) < TOLERANCE:
            break
        centre = np.mean(pts[:-1], axis=0)
        r = np.clip(2 * centre - pts[-1], 0, 1)
        fr = loss(r)
        if fr < vals[0]:
            e = np.clip(3 * centre - 2 * pts[-1], 0, 1)
            fe = loss(e)
            pts[-1], vals[-1] = (e, fe) if fe < fr else (r, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = r, fr
        else:
            c = (centre + pts[-1]) / 2
            fc = loss(c)
            if fc < vals[-1]:
                pts[-1], vals[-1] = c, fc
            else:
                pts = [pts[0]] + [(pts[0] + p) / 2 for p in pts[1:]]
                vals = [vals[0]] + [loss(p) for p in pts[1:]]
    i = int(np.argmin(vals))
    return pts[i], vals[i]


def minimise(
    loss: Loss, lower: Sequence[float], upper: Sequence[float], start: Sequence[float] | None = None
) -> tuple[np.ndarray, float]:
    """Minimise ``loss`` over the box [lower, upper] (shape (k,), lower < upper) by the method of
    the module docstring; returns the best point and its loss. ``start``: the first point (default:
    the middle of the box)."""
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    x = np.clip(np.asarray(start, dtype=float), lo, hi) if start is not None else (lo + hi) / 2
    best = loss(x)
    for _ in range(ROUNDS if lo.size > 1 else 1):
        before = best
        best = sweep(loss, x, best, lo, hi)
        if before - best < 1e-12:
            break
    if lo.size > 1:
        u, fu = nelder_mead(lambda v: loss(lo + v * (hi - lo)), (x - lo) / (hi - lo), best)
        if fu < best:
            x, best = lo + u * (hi - lo), fu
    return x, best


__all__ = [
    "minimise",
    "golden",
    "sweep",
    "nelder_mead",
    "GRID",
    "TOLERANCE",
    "ROUNDS",
    "SIMPLEX_STEPS",
]
