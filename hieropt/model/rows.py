"""Distinct rows of float arrays, found fast (a dict for a few rows, one sort for thousands, hashing
above), and the direction keys under which proportional collectives merge into one term of the time
model (:mod:`hieropt.model.terms`)."""

from __future__ import annotations

import numpy as np


def direction_key(rows: np.ndarray) -> list[bytes]:
    """A key per row of ``rows`` (n, 2D: bytes then latency, divided by the row's peak) that is
    equal for rows that agree to 12 significant digits (exactly proportional collectives differ only
    by floating-point rounding): the mantissas rounded to 11 decimals and the decimal exponents, as
    bytes (:func:`direction_rows`)."""
    return [r.tobytes() for r in direction_rows(rows)]


def direction_rows(rows: np.ndarray) -> np.ndarray:
    """The keys of :func:`direction_key` as an (n, 4D) float array (row i's bytes are key i)."""
    a = np.abs(rows)
    e = np.where(a > 0, np.floor(np.log10(np.where(a > 0, a, 1.0))), 0.0)
    mant = np.round(rows / 10.0**e, 11)
    over = np.abs(mant) >= 10.0  # 9.99999999999995 rounds up to 10: renormalise
    if over.any():
        e = np.where(over, e + 1, e)
        mant = np.round(rows / 10.0**e, 11)
    return np.ascontiguousarray(np.concatenate([mant + 0.0, e], axis=1))  # + 0.0: -0.0 == 0.0


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of the float64 array ``rows`` (n, w) by their bytes: (index of one occurrence
    of each, the distinct row of every row, the count of each), as ``np.unique(..., axis=0)`` gives
    them but in another order. Sorts a 64-bit hash of each row (far faster than sorting the rows),
    then checks every row against its representative and falls back to sorting the rows' bytes on a
    collision."""
    bits = np.ascontiguousarray(rows).view(np.uint64)
    h = np.zeros(bits.shape[0], dtype=np.uint64)
    for c in range(bits.shape[1]):  # FNV-style mixing; uint64 arithmetic wraps
        h = (h ^ bits[:, c]) * np.uint64(0x100000001B3)
        h ^= h >> np.uint64(29)
    _, first, inverse, counts = np.unique(
        h, return_index=True, return_inverse=True, return_counts=True
    )
    inverse = inverse.reshape(-1)
    if not (bits == bits[first[inverse]]).all():  # a hash collision: sort the rows themselves
        view = np.ascontiguousarray(rows).view(
            np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))
        )[:, 0]
        _, first, inverse, counts = np.unique(
            view, return_index=True, return_inverse=True, return_counts=True
        )
        inverse = inverse.reshape(-1)
    return first, inverse, counts


def _distinct_sorted(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`unique_rows` by one stable lexicographic sort of the (n, w) float rows (faster for a
    few thousand rows): rows are the same when every entry compares equal (so 0.0 and -0.0 are one
    row); the first occurrence of each distinct row is its smallest index (the sort is stable)."""
    n = rows.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.lexsort(rows.T[::-1])  # column 0 the primary key
    ranked = rows[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.any(ranked[1:] != ranked[:-1], axis=1, out=new[1:])
    starts = new.nonzero()[0]
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return order[starts], inverse, np.diff(np.append(starts, n))


SMALL_ROWS = 96
"""Up to this many phase rows (32 layers), distinct rows are found in one pass over a dict of their
bytes, already in order of first appearance (measured faster than a sort below ~100 rows); above it
by sorting (:func:`_distinct_sorted`, then :func:`unique_rows`)."""


def _distinct_small(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_distinct_sorted` for a few rows, with the distinct rows in order of first appearance:
    a dict of each row's bytes (``rows`` must hold no -0.0: callers add 0.0 first)."""
    n, width = rows.shape[0], rows.shape[1] * rows.itemsize
    buf = rows.tobytes()
    seen: dict[bytes, int] = {}
    first: list[int] = []
    inverse: list[int] = []
    for i in range(n):
        key = buf[i * width:(i + 1) * width]
        j = seen.get(key)
        if j is None:
            j = seen[key] = len(first)
            first.append(i)
        inverse.append(j)
    inv = np.array(inverse, dtype=np.int64)
    return np.array(first, dtype=np.int64), inv, np.bincount(inv, minlength=len(first))


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of the float64 array ``rows`` (n, w), rows with equal entries being one
    (``rows`` must hold no -0.0: add 0.0 first), in order of first appearance: (index of the first
    occurrence of each, the distinct row of every row, the count of each). A dict of the rows' bytes
    for a few rows, one lexicographic sort up to 4096, :func:`unique_rows` (hashing) above."""
    if rows.shape[0] <= SMALL_ROWS:  # distinct rows already in order of first appearance
        return _distinct_small(rows)
    if rows.shape[0] <= 4096:  # one lexicographic sort (no hashing pass)
        first, inverse, counts = _distinct_sorted(rows)
    else:
        first, inverse, counts = unique_rows(rows)
    # distinct rows in order of first appearance (terms numbered as the layers go)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[inverse.reshape(-1)], counts[order]


__all__ = ["direction_key", "direction_rows", "distinct_rows", "unique_rows", "SMALL_ROWS"]
