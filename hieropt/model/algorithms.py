"""The algorithms that run a collective over a group spanning several dimensions: the bytes each NPU
sends on every dimension and the latency steps there, per byte of collective size
(docs/explanation/model.md).

A group spans ``p_d`` NPUs of dimension d (``p_d = 1``: not spanned), P = prod_d p_d in all. The
time of a collective of S bytes at per-NPU bandwidths B (bytes/ns) is, with m_d = S x
:func:`unit_traffic` and s_d = :func:`collective_steps`, alpha_d the dimension's latency per step
(ns):

- ``concurrent`` (hierarchical, every dimension at once; LIBRA, Won et al., arXiv 2109.11762;
  Themis, Rashidi et al., ISCA 2022; ASTRA-sim with many chunks): T = max_d (m_d / B_d + s_d
  alpha_d), with chunk c starting at S:

  - all-reduce, ascending d: m_d = 2 c (p-1)/p, then c <- c/p (sum over d: 2 S (1 - 1/P), the
    flat-ring volume);
  - reduce-scatter, ascending d: m_d = c (p-1)/p, then c <- c/p;
  - all-gather, descending d, S = per-NPU input shard: m_d = c (p-1), then c <- c p;
  - all-to-all, every spanned d: m_d = S (p-1)/p (no resize);
  - s_d per reduce-scatter or all-gather phase: ``ring`` p-1, ``direct`` 1, ``halving_doubling``
    ceil(log2 p) (the dimension's algorithm; Thakur, Rabenseifner and Gropp 2005); an all-reduce is
    two phases.
- ``sequential`` (hierarchical, one dimension after another; ASTRA-sim with one chunk, NCCL's
  hierarchical collectives): the same m_d and s_d, T = sum_d (m_d / B_d + s_d alpha_d).
- ``flat_ring`` (one NCCL ring over all P NPUs; Patarasuk and Yuan 2009): every NPU sends the flat
  ring's volume, all-reduce 2 S (P-1)/P, reduce-scatter and all-to-all S (P-1)/P, all-gather S
  (P-1), in 2 (P-1) (all-reduce) or P-1 steps of equal size; each step waits for the ring's slowest
  link, so with m_d that volume on every spanned d and s_d the step count there: T = steps x max_d
  (m_d / steps / B_d
  + alpha_d) = max_d (m_d / B_d
  + s_d alpha_d).
- ``flat_tree`` (NCCL's pipelined double binary tree; Sanders, Speck and Träff 2009): all-reduce as
  a reduce up and a broadcast down the two trees, each NPU sending 2 S in all, in 2 ceil(log2 P)
  steps, paced by the slowest link as the ring; the other collectives have no tree (NCCL) and run as
  ``flat_ring``.
- ``nccl_ring`` (one NCCL ring over all P NPUs as NCCL lays it out on nodes of several NPUs: each
  channel enters a node through a NIC, visits every NPU of the node and leaves through a NIC, NCCL's
  topology search ``src/graph/search.cc``, "NET n -> GPU a -> GPU b -> .. -> GPU x -> NET n"; so
  the ring visits dimension 0 first, only e_d of its P edges cross dimension d, and its channels
  are spread over every NPU's links): every NPU sends the flat ring's volume V in all, of which
  the share e_d / P crosses dimension d: m_d = V e_d / P, with e_d = p_d for the outermost spanned
  dimension (the ring's cycle over its blocks) and e_d = (p_d - 1) prod_(spanned e > d) p_e for an
  inner one (a path through p_d blocks inside each block); sum_d e_d = P. Steps as ``flat_ring``;
  all-to-all (which NCCL runs as direct sends) as ``flat_direct``. T = max_d (m_d / B_d + s_d
  alpha_d). Over two nodes of 8 a ring takes 2 x 15/16 S = 1.875 S off each node, the
  hierarchical forms S.
- ``flat_direct`` (every NPU to every other at once, one step per phase: a switch's one-shot
  algorithm): a message to a peer whose highest differing coordinate is d crosses dimension d; n_d =
  prod_(e <= d) p_e - prod_(e < d) p_e peers are such, so m_d = n_d x (all-reduce 2 S/P,
  reduce-scatter and all-to-all S/P, all-gather S), all dimensions at once: T = max_d (m_d / B_d +
  s_d alpha_d), s_d = 2 (all-reduce) or 1.

Point-to-point (``P2P``, a pipeline send) is no collective: each NPU sends S to its neighbour, one
step on every spanned dimension of the group it is given: T = max_d (S f_d / B_d + alpha_d), f_d the
send's share of the NPU's bandwidth on d (:func:`p2p_links`: one link of a FullyConnected dimension
of n NPUs carries B_d / (n - 1)). A pipeline's sends are given the dimensions their stage boundary
crosses (:mod:`hieropt.model.sends`). Every algorithm's T is a max or a sum of terms linear in
1/B_d: convex and piecewise linear in 1/B.

A group that spans only part of a dimension (1 < p_d < n_d) reaches only some of the NPU's links
there; its collective's bytes m_d are then multiplied by g_d >= 1 (:func:`group_links`, bytes per
byte relative to B_d, the links' share as ASTRA-sim's topologies lay them out): a FullyConnected
dimension of n NPUs gives each NPU n - 1 links of B / (n - 1), of which a group of p uses its p - 1
peers', g = (n - 1) / (p - 1); a Ring's NPU has 2 links of B / 2: a contiguous path of p < n NPUs
embeds one logical ring over its bidirectional links, g = 2; a group of stride s (the product of
the sizes there of the groups placed inside it) with s p = n is a cycle whose links its s
concurrent copies share, g = s, and with s p < n a path so shared, g = 2 s; a Switch gives every
NPU its port, g = 1. A whole dimension (p = n) has g = 1. LIBRA's convention (the instance's
``group_bandwidth = "whole"``) takes g = 1 everywhere.
"""

from __future__ import annotations

import math

import numpy as np

from ..names import GROUP_ALGORITHMS
from ..spec import Collective, Network

_P2P, _NONE = Collective.P2P, Collective.NONE
_AR, _RS, _AG, _A2A = (Collective.ALL_REDUCE, Collective.REDUCE_SCATTER, Collective.ALL_GATHER,
                       Collective.ALL_TO_ALL)

SUMMING = frozenset({"sequential"})
"""Algorithms whose dimensions' times add up (the others take the largest)."""


def unit_traffic(collective: Collective, group: tuple[int, ...], algorithm: str = "concurrent",
                 links: tuple[float, ...] | None = None,
                 factors: tuple[float, ...] | None = None) -> np.ndarray:
    """Bytes each NPU sends on every dimension per byte of collective size (module docstring).

    Args:
        collective: the collective type.
        group: group size on each dimension, length D; entries <= 1 mean "not spanned" (LIBRA's -1).
        algorithm: one of :data:`hieropt.names.GROUP_ALGORITHMS`.
        links: a point-to-point send's bytes per byte on each dimension (:func:`p2p_links`; default
            1 each).
        factors: a collective's bytes per byte of the group's share of each dimension
            (:func:`group_links`; default 1 each: the NPU's whole bandwidth), multiplying every
            collective's row (not a point-to-point send's).

    Returns:
        float array of shape (D,), bytes per byte of ``size_bytes``.

    Raises:
        ValueError: an unknown collective or algorithm name.
    """
    return unit_table((Collective(collective),), group, algorithm, links, factors)[0]


def unit_table(collectives: tuple[Collective, ...], group: tuple[int, ...],
               algorithm: str = "concurrent", links: tuple[float, ...] | None = None,
               factors: tuple[float, ...] | None = None) -> np.ndarray:
    """:func:`unit_traffic` of each of ``collectives`` (members of
    :class:`~hieropt.spec.Collective`) over one group, shape (len(collectives), D): one call for a
    table's every kind (each row computed in Python floats, one array at the end); ``factors``
    (:func:`group_links`) multiply every collective's row, ``links`` give the sends'.

    Raises:
        ValueError: an unknown algorithm name.
    """
    if algorithm not in GROUP_ALGORITHMS:
        raise ValueError(
            f"unknown collective algorithm {algorithm!r}; use one of {', '.join(GROUP_ALGORITHMS)}"
        )
    spanned = [d for d, p in enumerate(group) if p > 1]
    flat: list[float] = []  # (one flat list: numpy reads it faster than nested rows)
    scaled = factors is not None and any(f != 1.0 for f in factors)
    for c in collectives:
        row = _unit(c, group, algorithm, links, spanned)
        if scaled and c is not _P2P:
            row = [x * float(f) for x, f in zip(row, factors, strict=True)]
        flat += row
    return np.array(flat, dtype=float).reshape(len(collectives), len(group))


def _unit(collective: Collective, group: tuple[int, ...], algorithm: str,
          links: tuple[float, ...] | None, spanned: list[int]) -> list[float]:
    """One row of :func:`unit_table`, (D,) Python floats."""
    m = [0.0] * len(group)
    if collective is _P2P:
        for d in spanned:
            m[d] = float(links[d]) if links is not None else 1.0
        return m
    if collective is _NONE or not spanned:
        return m
    if algorithm in ("flat_ring", "flat_tree"):
        volume = float(_flat_volume(collective, math.prod(group[d] for d in spanned), algorithm))
        for d in spanned:
            m[d] = volume
        return m
    if algorithm == "flat_direct" or (algorithm == "nccl_ring" and collective is _A2A):
        return _direct(collective, group, spanned)
    if algorithm == "nccl_ring":
        return _spread_ring(collective, group, spanned)
    return _hierarchical(collective, group, spanned)


def ring_edges(group: tuple[int, ...]) -> list[int]:
    """Edges of a ring over the group's NPUs, laid out dimension 0 first, whose highest differing
    coordinate is d (shape (D,), summing to the group's NPU count): the outermost spanned dimension
    p_d (the cycle over its blocks), an inner spanned one (p_d - 1) x the product of the spanned
    sizes above it, an unspanned one 0.

    Example: a group of 8 NPUs on each of 2 nodes, (8, 2): [14, 2].
    """
    spanned = [d for d, p in enumerate(group) if p > 1]
    edges = [0] * len(group)
    above = 1
    for k, d in enumerate(reversed(spanned)):
        edges[d] = group[d] if k == 0 else (group[d] - 1) * above
        above *= group[d]
    return edges


def _spread_ring(collective: Collective, group: tuple[int, ...],
                 spanned: list[int]) -> list[float]:
    """NCCL's ring with its channels spread over every NPU's links: the flat ring's volume, its
    share e_d / P on dimension d (module docstring)."""
    P = math.prod(group[d] for d in spanned)
    volume = float(_flat_volume(collective, P, "flat_ring"))
    return [volume * e / P for e in ring_edges(group)]


def _hierarchical(collective: Collective, group: tuple[int, ...],
                 spanned: list[int]) -> list[float]:
    """LIBRA's per-dimension decomposition (module docstring); all-gather walks the dimensions
    downwards."""
    m = [0.0] * len(group)
    c = 1.0
    if collective is _AR:
        for d in spanned:
            p = group[d]
            m[d] = 2.0 * c * (p - 1) / p
            c /= p
    elif collective is _RS:
        for d in spanned:
            p = group[d]
            m[d] = c * (p - 1) / p
            c /= p
    elif collective is _AG:
        for d in reversed(spanned):
            p = group[d]
            m[d] = c * (p - 1)
            c *= p
    elif collective is _A2A:
        for d in spanned:
            p = group[d]
            m[d] = (p - 1) / p
    return m


def _flat_volume(collective: Collective, P: int, algorithm: str) -> float:
    """Bytes per NPU (per byte of size) of a flat ring or tree over P NPUs."""
    if collective is Collective.ALL_REDUCE:
        return 2.0 if algorithm == "flat_tree" else 2.0 * (P - 1) / P
    if collective is Collective.ALL_GATHER:
        return float(P - 1)
    return (P - 1) / P  # reduce-scatter, all-to-all


def _direct(collective: Collective, group: tuple[int, ...], spanned: list[int]) -> list[float]:
    """Flat direct: the messages to the n_d peers whose highest differing coordinate is d cross
    dimension d."""
    m = [0.0] * len(group)
    P = math.prod(group[d] for d in spanned)
    per_peer = {Collective.ALL_REDUCE: 2.0 / P, Collective.REDUCE_SCATTER: 1.0 / P,
                Collective.ALL_TO_ALL: 1.0 / P, Collective.ALL_GATHER: 1.0}[collective]
    below = 1
    for d in spanned:
        m[d] = per_peer * (below * group[d] - below)
        below *= group[d]
    return m


def collective_steps(collective: Collective, group: tuple[int, ...], algorithms: tuple[str, ...],
                     algorithm: str = "concurrent") -> np.ndarray:
    """Latency steps of one collective on each dimension (shape (D,)); the latency is steps x the
    dimension's per-step latency (ns).

    Args:
        collective: the collective type.
        group: group size on each dimension.
        algorithms: each dimension's own algorithm (``ring``, ``direct``, ``halving_doubling``),
            which gives the hierarchical algorithms' step counts.
        algorithm: the group's algorithm (:data:`hieropt.names.GROUP_ALGORITHMS`).

    Hierarchical (``concurrent``, ``sequential``), per reduce-scatter or all-gather phase on a
    dimension of p NPUs: ``ring`` p-1 steps, ``direct`` 1, ``halving_doubling`` ceil(log2 p); an
    all-reduce is two phases, an all-to-all one. Flat ring: 2 (P-1) for an all-reduce, P-1
    otherwise; flat tree: 2 ceil(log2 P) for an all-reduce, else as the ring; flat direct: 2 for an
    all-reduce, 1 otherwise; NCCL's ring as the flat ring, its all-to-all as flat direct; on every
    spanned dimension (each step waits for the slowest). A
    point-to-point send: 1 step on each spanned dimension. Dimensions the group does not span take 0
    steps.
    """
    collective = Collective(collective)
    phases = {Collective.ALL_REDUCE: 2, Collective.REDUCE_SCATTER: 1, Collective.ALL_GATHER: 1,
              Collective.ALL_TO_ALL: 1, Collective.NONE: 0, Collective.P2P: 0}[collective]
    out = np.zeros(len(group))
    spanned = [d for d, p in enumerate(group) if p > 1]
    if collective is Collective.P2P:
        out[spanned] = 1.0
        return out
    if not phases or not spanned:
        return out
    if algorithm in ("flat_ring", "flat_tree", "flat_direct", "nccl_ring"):
        P = math.prod(group[d] for d in spanned)
        if algorithm == "flat_direct" or (
            algorithm == "nccl_ring" and collective is Collective.ALL_TO_ALL
        ):
            steps = phases
        elif algorithm == "flat_tree" and collective is Collective.ALL_REDUCE:
            steps = 2 * math.ceil(math.log2(P))
        else:
            steps = phases * (P - 1)
        out[spanned] = float(steps)
        return out
    for d in spanned:
        p, algo = group[d], algorithms[d]
        out[d] = (
            phases * {"ring": p - 1, "direct": 1, "halving_doubling": math.ceil(math.log2(p))}[algo]
        )
    return out


def p2p_links(network: Network) -> tuple[float, ...]:
    """Bytes a point-to-point send of one byte puts on each dimension, relative to the NPU's
    bandwidth there: a FullyConnected dimension of n NPUs gives each peer one link of B / (n - 1),
    so n - 1; a Ring (the neighbour's link) and a Switch (the NPU's port) carry the whole B, so
    1."""
    return tuple([float(d.npus - 1) if d.block == "FullyConnected" else 1.0 for d in network.dims])


def group_links(network: Network, group: tuple[int, ...],
                strides: tuple[int, ...] | None = None) -> tuple[float, ...]:
    """Bytes a collective of one byte over ``group`` puts on each dimension per byte of its own
    traffic, relative to the NPU's bandwidth B there: the share of the NPU's links a group that
    spans part of the dimension reaches (module docstring; ASTRA-sim's topologies: a
    FullyConnected NPU's n - 1 links to its peers, a Ring NPU's 2 links to its neighbours, a Switch
    NPU's one port).

    Args:
        network: the network (each dimension's block and NPUs n).
        group: the group's size p on each dimension (<= 1: not spanned, factor 1).
        strides: the group's stride s on each dimension (the product of the sizes there of the
            groups placed inside it; :func:`hieropt.spec.tiling.group_strides`); default 1 each
            (contiguous). Only a Ring reads it.

    Returns:
        a tuple of D floats >= 1: FullyConnected (n - 1) / (p - 1); Ring 1 for p = n, else s when
        s p = n, 2 s when s p < n; Switch 1; 1 on every dimension the group does not span.

    Example: TP 4 on a FullyConnected dimension of 8: 7/3; a pair of stride 2 on a Ring of 8: 4; a
    contiguous 4 there: 2.
    """
    out = []
    for d, dim in enumerate(network.dims):
        p, n = group[d], dim.npus
        s = strides[d] if strides is not None else 1
        if p <= 1 or p >= n or dim.block == "Switch":
            out.append(1.0)
        elif dim.block == "FullyConnected":
            out.append((n - 1) / (p - 1))
        else:  # Ring
            out.append(float(s) if s * p >= n else 2.0 * s)
    return tuple(out)


def sums_dims(algorithm: str) -> bool:
    """Whether a collective run by ``algorithm`` takes the sum of its dimensions' times (else their
    maximum)."""
    return algorithm in SUMMING


__all__ = ["unit_traffic", "collective_steps", "p2p_links", "group_links", "ring_edges",
           "sums_dims", "SUMMING"]
