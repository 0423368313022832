"""Accuracy metrics of predicted against measured iteration times: signed relative error, mean
absolute percentage error, Spearman's rank correlation (average ranks for ties) and the measured
rank of the predicted-fastest run.

All take plain sequences of floats (ms or any one unit) and return floats; NaN where a metric is
undefined (fewer than two runs, or a sequence of equal values for a rank correlation).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def relative_errors(predicted: Sequence[float], measured: Sequence[float]) -> np.ndarray:
    """(predicted - measured) / measured of each run, shape (n,): 0.1 = predicted 10 % too slow.

    Raises:
        ValueError: sequences of different lengths, or a measured value that is not positive.
    """
    p, m = np.asarray(predicted, dtype=float), np.asarray(measured, dtype=float)
    if p.shape != m.shape:
        raise ValueError(f"{p.size} predictions for {m.size} measurements")
    if (m <= 0).any():
        raise ValueError("measured times must be positive")
    return (p - m) / m


def mape(predicted: Sequence[float], measured: Sequence[float]) -> float:
    """Mean absolute percentage error as a fraction: mean |p - m| / m (0.05 = 5 %); NaN for no
    runs."""
    e = relative_errors(predicted, measured)
    return float(np.abs(e).mean()) if e.size else math.nan


def worst_error(predicted: Sequence[float], measured: Sequence[float]) -> float:
    """The largest |p - m| / m as a fraction; NaN for no runs."""
    e = relative_errors(predicted, measured)
    return float(np.abs(e).max()) if e.size else math.nan


def mean_log_error(predicted: Sequence[float], measured: Sequence[float]) -> float:
    """Mean |ln(p / m)|: the symmetric error (a factor 2 too fast or too slow counts the same); NaN
    for no runs."""
    p, m = np.asarray(predicted, dtype=float), np.asarray(measured, dtype=float)
    return float(np.abs(np.log(p / m)).mean()) if p.size else math.nan


def ranks(values: Sequence[float]) -> np.ndarray:
    """1-based ranks of ``values`` in ascending order, tied values sharing their average rank ([3,
    1, 3] -> [2.5, 1, 2.5])."""
    v = np.asarray(values, dtype=float)
    order = np.argsort(v, kind="stable")
    r = np.empty(v.size)
    r[order] = np.arange(1, v.size + 1)
    for x in np.unique(v):
        tied = v == x
        r[tied] = r[tied].mean()
    return r


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation: Pearson's correlation of the average ranks (Spearman 1904); NaN
    with fewer than two values or when either sequence is constant.

    Raises:
        ValueError: sequences of different lengths.
    """
    if len(x) != len(y):
        raise ValueError(f"{len(x)} values against {len(y)}")
    if len(x) < 2:
        return math.nan
    rx, ry = ranks(x), ranks(y)
    dx, dy = rx - rx.mean(), ry - ry.mean()
    den = math.sqrt(float((dx * dx).sum() * (dy * dy).sum()))
    return float((dx * dy).sum() / den) if den > 0 else math.nan


def measured_rank_of_predicted_fastest(
    predicted: Sequence[float], measured: Sequence[float]
) -> int:
    """Where the run predicted fastest (the first of equals) stands among the measured times: 1 = it
    is the measured fastest, k = k - 1 runs were measured faster. 0 for no runs."""
    if not len(predicted):
        return 0
    best = int(np.argmin(np.asarray(predicted, dtype=float)))
    m = np.asarray(measured, dtype=float)
    return int((m < m[best]).sum()) + 1


TIE = 1e-9
"""Predictions within this relative difference of the fastest are tied with it."""


def predicted_fastest_ties(predicted: Sequence[float]) -> int:
    """How many runs share the fastest prediction (within :data:`TIE`, relative): 1 when one run is
    predicted fastest; more when the predicted-fastest run, and so its measured rank
    (:func:`measured_rank_of_predicted_fastest`), is an arbitrary one of them. 0 for no runs."""
    p = np.asarray(predicted, dtype=float)
    if not p.size:
        return 0
    return int((p <= p.min() * (1 + TIE)).sum())


def worst_ratio_error(predicted: Sequence[float], measured: Sequence[float]) -> float:
    """The largest |(p_i / p_j) / (m_i / m_j) - 1| over pairs of runs: how far a predicted speed-up
    between two runs is from the measured one (a factor common to all predictions, such as the
    compute efficiency, cancels). NaN with fewer than two runs."""
    p, m = np.asarray(predicted, dtype=float), np.asarray(measured, dtype=float)
    if p.size < 2:
        return math.nan
    r = (p[:, None] / p[None, :]) / (m[:, None] / m[None, :])
    return float(np.abs(r - 1).max())


__all__ = [
    "worst_ratio_error",
    "relative_errors",
    "mape",
    "worst_error",
    "mean_log_error",
    "ranks",
    "spearman",
    "measured_rank_of_predicted_fastest",
    "predicted_fastest_ties",
    "TIE",
]
