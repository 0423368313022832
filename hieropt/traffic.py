"""Per-dimension traffic of collectives on a multi-dimensional hierarchical network (design.md §2.1).

A collective over a group that spans ``p_d`` NPUs of dimension d (``p_d = 1``: not spanned) is decomposed
hierarchically, dimension by dimension, as LIBRA (Won et al., arXiv 2109.11762, ``src/model/model.py``) and Themis
(Rashidi et al., ISCA 2022) do. With chunk c starting at the size S (bytes):

- all-reduce, ascending d:  m_d = 2 c (p-1)/p, then c <- c/p   (sum over d = 2 S (1 - 1/P), the flat-ring volume)
- reduce-scatter, ascending d: m_d = c (p-1)/p, then c <- c/p
- all-gather, descending d, S = per-NPU input shard: m_d = c (p-1), then c <- c p
- all-to-all, every spanned d: m_d = S (p-1)/p  (no resize)

Every rule is linear in S, so a collective's traffic is ``S * unit_traffic(kind, group)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .spec import PHASES, Collective, Instance


def unit_traffic(collective: Collective, group: tuple[int, ...]) -> np.ndarray:
    """Bytes each NPU sends on every dimension per byte of collective size.

    Args:
        collective: the collective type.
        group: group size on each dimension, length D; entries <= 1 mean "not spanned" (LIBRA's -1).

    Returns:
        float array of shape (D,), bytes per byte of ``size_bytes``.

    Source: LIBRA's per-dimension decomposition (design.md §2.1); all-gather walks dimensions downwards.
    """
    D = len(group)
    m = np.zeros(D)
    spanned = [d for d, p in enumerate(group) if p > 1]
    c = 1.0
    if collective is Collective.ALL_REDUCE:
        for d in spanned:
            p = group[d]
            m[d] = 2.0 * c * (p - 1) / p
            c /= p
    elif collective is Collective.REDUCE_SCATTER:
        for d in spanned:
            p = group[d]
            m[d] = c * (p - 1) / p
            c /= p
    elif collective is Collective.ALL_GATHER:
        for d in reversed(spanned):
            p = group[d]
            m[d] = c * (p - 1)
            c *= p
    elif collective is Collective.ALL_TO_ALL:
        for d in spanned:
            p = group[d]
            m[d] = (p - 1) / p
    return m


def collective_traffic(collective: Collective, size_bytes: float, group: tuple[int, ...]) -> np.ndarray:
    """Per-dimension bytes (shape (D,)) of one collective of ``size_bytes`` over ``group``; see :func:`unit_traffic`."""
    return size_bytes * unit_traffic(collective, group)


def phase_traffic(instance: Instance) -> np.ndarray:
    """Bytes per NPU on each dimension for every phase of every layer.

    Returns:
        array of shape (n_layers, 3, D), phases in :data:`hieropt.spec.PHASES` order.
    """
    table = instance.workload.table
    L, D = table.size_bytes.shape[0], instance.network.n_dims
    out = np.zeros((L, 3, D))
    for j, phase in enumerate(PHASES):
        group = instance.mapping.group(phase)
        col = table.collective[:, j]
        for kind in set(col):
            rows = col == kind
            out[rows, j, :] = table.size_bytes[rows, j, None] * unit_traffic(kind, group)[None, :]
    return out


@dataclass(frozen=True)
class AggregatedTerms:
    """Distinct collective terms after exact aggregation (design.md §2.3).

    ``bytes[k, d]`` is the summed per-dimension traffic of all collectives whose traffic vectors are proportional to
    term k's; since ``max_d(a m_d t_d) = a max_d(m_d t_d)`` for a >= 0, ``sum_k max_d bytes[k, d] / bw[d]`` equals the
    sum over the original collectives exactly. ``count[k]`` is how many collectives merged into term k.
    """

    bytes: np.ndarray  # (K, D)
    count: np.ndarray  # (K,)


def aggregate(traffic: np.ndarray) -> AggregatedTerms:
    """Merge collectives with proportional traffic vectors into one term each.

    Args:
        traffic: shape (n, D), bytes per collective and dimension; all-zero rows are dropped.

    Returns:
        :class:`AggregatedTerms` with K <= n distinct directions. Two vectors are merged when their max-normalised
        forms agree to 12 significant digits (they are exactly proportional up to floating-point rounding).
    """
    traffic = np.asarray(traffic, dtype=float)
    peak = traffic.max(axis=1) if traffic.size else np.zeros(0)
    keep = peak > 0
    traffic, peak = traffic[keep], peak[keep]
    if traffic.shape[0] == 0:
        return AggregatedTerms(bytes=np.zeros((0, traffic.shape[1])), count=np.zeros(0, dtype=int))
    direction = np.round(traffic / peak[:, None], 12)
    _, first, inverse = np.unique(direction, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    weight = np.bincount(inverse, weights=peak, minlength=len(first))
    count = np.bincount(inverse, minlength=len(first))
    exact_direction = traffic[first] / peak[first, None]  # a member's own direction, not the rounded key
    return AggregatedTerms(bytes=exact_direction * weight[:, None], count=count)
