"""The oracle's own statement of the collective algorithms (hieropt/model/algorithms.py docstring),
written from the formulas, not from hieropt's code: per phase of a workload on a mapping, the bytes
and the latency each dimension carries and whether the dimensions' times add up. Flat direct
enumerates the peers one by one; the hierarchical forms use closed products instead of a running
chunk."""

from __future__ import annotations

import itertools
import math

import numpy as np

from hieropt.spec import PHASES, Collective, Instance

LINK_RULES = {"FullyConnected": lambda n: n - 1, "Ring": lambda n: 1, "Switch": lambda n: 1}
"""Bytes a one-byte send puts on a dimension, relative to the NPU's bandwidth (one link of a
FullyConnected dimension carries B / (n - 1))."""


PLAN_FACTORS = ("tp", "cp", "ep", "edp", "pp")
"""An LLM plan's placed groups, innermost first (Megatron-LM's rank order; a dense plan's ep is 1
NPU and its edp its dp)."""
PLAN_GROUPS = {"dp": ("ep", "edp"), "dpc": ("cp", "ep", "edp"), "forward": ("tp",),
               "input_grad": ("tp",), "weight_grad": ("ep", "edp")}
"""The plan's other groups as the placed groups they are made of."""


def _ring_share(positions: list[list[int]], n: int) -> float:
    """Bytes per byte a group's collective puts on a Ring of ``n`` NPUs, relative to the NPU's B,
    from where every copy of the group sits (``positions``: each copy's NPUs on the ring): a copy
    evenly spread around the whole ring runs its logical ring as a cycle over both directions of
    its links (the whole ring: B), any other copy along the path from its first NPU to its last,
    one direction each way (half of it); a link that c copies use gives each 1/c of it."""
    first = sorted(positions[0])
    p = len(first)
    if p == n:
        return 1.0
    gaps = {b - a for a, b in zip(first, first[1:], strict=False)}
    cycle = len(gaps) == 1 and p * gaps.pop() == n
    load = [0] * n  # (link i joins NPUs i and i + 1 mod n)
    for copy in positions:
        lo, hi = min(copy), max(copy)
        for i in range(n) if cycle else range(lo, hi):
            load[i] += 1
    return max(load) * (1.0 if cycle else 2.0)


def link_factors(instance: Instance, workload, mapping) -> dict[str, list[float]]:
    """Per group (named, or a phase's), each dimension's bytes per byte of the group's share of the
    NPU's links there (an empty dict under LIBRA's convention, ``group_bandwidth`` ``whole``, the
    default for a workload that is no LLM plan): a FullyConnected dimension of n NPUs reaches the
    group's p - 1 peers of its n - 1 links, (n - 1) / (p - 1); a Switch its port, 1; a Ring by
    :func:`_ring_share`, the groups laid out on each dimension by digits innermost first (an LLM
    plan's :data:`PLAN_FACTORS`; a mapping of phases: forward inside weight_grad, input_grad as
    forward), every group's copies the NPUs that differ from one another only in its digits."""
    rule = instance.group_bandwidth or ("links" if workload.group_algorithms else "whole")
    if rule == "whole":
        return {}
    if "tp" in mapping.groups:
        placed = {k: tuple(mapping.groups[k]) for k in PLAN_FACTORS}
        made = {k: (k,) for k in PLAN_FACTORS} | PLAN_GROUPS
    else:
        placed = {"forward": tuple(mapping.forward), "weight_grad": tuple(mapping.weight_grad)}
        made = {"forward": ("forward",), "input_grad": ("forward",),
                "weight_grad": ("weight_grad",)}
    order = list(placed)
    out: dict[str, list[float]] = {}
    for group, parts in made.items():
        row = []
        for d, dim in enumerate(instance.network.dims):
            radix = [placed[k][d] for k in order]
            p = math.prod(placed[k][d] for k in parts)
            n = dim.npus
            if p <= 1 or dim.block == "Switch":
                row.append(1.0)
                continue
            if dim.block == "FullyConnected":
                row.append((n - 1) / (p - 1))
                continue
            copies: dict[tuple, list[int]] = {}
            for digits in itertools.product(*[range(r) for r in radix]):
                x, scale = 0, 1
                for k, r in enumerate(radix):
                    x, scale = x + digits[k] * scale, scale * r
                other = tuple(v for k, v in enumerate(digits) if order[k] not in parts)
                copies.setdefault(other, []).append(x)
            row.append(_ring_share(list(copies.values()), n))
        out[group] = row
    return out


def _bytes(kind: Collective, g: list[int], algorithm: str, links: list[float]) -> list[float]:
    D = len(g)
    span = [d for d in range(D) if g[d] > 1]
    P = math.prod(g)
    out = [0.0] * D
    if kind is Collective.P2P:
        return [float(links[d]) if d in span else 0.0 for d in range(D)]
    if kind is Collective.NONE or not span:
        return out
    if algorithm in ("flat_ring", "flat_tree"):
        vol = {Collective.ALL_REDUCE: 2 * (P - 1) / P, Collective.REDUCE_SCATTER: (P - 1) / P,
               Collective.ALL_TO_ALL: (P - 1) / P, Collective.ALL_GATHER: P - 1}[kind]
        if algorithm == "flat_tree" and kind is Collective.ALL_REDUCE:
            vol = 2.0
        return [vol if d in span else 0.0 for d in range(D)]
    if algorithm == "nccl_ring" and kind is not Collective.ALL_TO_ALL:
        vol = {Collective.ALL_REDUCE: 2 * (P - 1) / P, Collective.REDUCE_SCATTER: (P - 1) / P,
               Collective.ALL_GATHER: P - 1}[kind]
        edges = _gray_cycle_edges([g[d] for d in span])
        for k, d in enumerate(span):
            out[d] = vol * edges[k] / P
        return out
    if algorithm in ("flat_direct", "nccl_ring"):
        share = {
            Collective.ALL_REDUCE: 2 / P,
            Collective.REDUCE_SCATTER: 1 / P,
            Collective.ALL_TO_ALL: 1 / P,
            Collective.ALL_GATHER: 1.0,
        }[kind]
        me = (0,) * D
        for peer in itertools.product(*[range(x) for x in g]):
            if peer != me:
                out[max(d for d in range(D) if peer[d] != me[d])] += share
        return out
    for d in span:  # hierarchical
        before = math.prod(g[e] for e in span if e < d)
        after = math.prod(g[e] for e in span if e > d)
        out[d] = {Collective.ALL_REDUCE: 2 * (g[d] - 1) / g[d] / before,
                  Collective.REDUCE_SCATTER: (g[d] - 1) / g[d] / before,
                  Collective.ALL_GATHER: (g[d] - 1) * after,
                  Collective.ALL_TO_ALL: (g[d] - 1) / g[d]}[kind]
    return out


def _gray_cycle_edges(sizes: list[int]) -> list[int]:
    """Walk a ring through every coordinate of ``sizes`` (dimension 0 fastest) in reflected
    mixed-radix Gray order, closing the cycle, and count its edges by the highest coordinate that
    differs between the two ends."""
    order = [[0] * len(sizes)]
    for _ in range(math.prod(sizes) - 1):
        nxt = list(order[-1])
        for d, size in enumerate(sizes):  # the lowest digit that can move in its direction
            upward = sum(nxt[e] for e in range(d + 1, len(sizes))) % 2 == 0
            if (upward and nxt[d] < size - 1) or (not upward and nxt[d] > 0):
                nxt[d] += 1 if upward else -1
                break
        order.append(nxt)
    edges = [0] * len(sizes)
    for a, b in zip(order, order[1:] + order[:1], strict=True):
        assert a != b
        edges[max(d for d in range(len(sizes)) if a[d] != b[d])] += 1
    return edges


def _steps(kind: Collective, g: list[int], algorithm: str, dim_algos: list[str]) -> list[float]:
    D = len(g)
    span = [d for d in range(D) if g[d] > 1]
    if kind is Collective.P2P:
        return [1.0 if d in span else 0.0 for d in range(D)]
    phases = {Collective.ALL_REDUCE: 2, Collective.REDUCE_SCATTER: 1, Collective.ALL_GATHER: 1,
              Collective.ALL_TO_ALL: 1}.get(kind, 0)
    P = math.prod(g)
    out = [0.0] * D
    for d in span:
        if algorithm == "flat_direct" or (
            algorithm == "nccl_ring" and kind is Collective.ALL_TO_ALL
        ):
            out[d] = phases
        elif algorithm == "flat_tree" and kind is Collective.ALL_REDUCE:
            out[d] = 2 * math.ceil(math.log2(P))
        elif algorithm in ("flat_ring", "flat_tree", "nccl_ring"):
            out[d] = phases * (P - 1)
        else:
            per = {"ring": g[d] - 1, "direct": 1, "halving_doubling": math.ceil(math.log2(g[d]))}[
                dim_algos[d]
            ]
            out[d] = phases * per
    return out


def restated_rows(
    instance: Instance, workload, mapping, sends: dict | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(traffic (L, 3, D) bytes, latency (L, 3, D) ns, sums (L, 3) bool) of ``workload`` on
    ``mapping``: every phase's collective by its group's algorithm (the workload's entry, else the
    instance's dimension_mode). ``sends``: (phase column, named group) -> the group sizes a
    point-to-point send of that column and group crosses (:func:`crossed_sizes`), in place of the
    group's own."""
    t = workload.table
    dims = instance.network.dims
    D = len(dims)
    links = [LINK_RULES[d.block](d.npus) for d in dims]
    alphas = [d.latency_ns * instance.chunks for d in dims]
    dim_algos = [d.collective_algorithm for d in dims]
    algos = dict(workload.group_algorithms)
    factors = link_factors(instance, workload, mapping)
    L = t.size_bytes.shape[0]
    traffic, latency, sums = np.zeros((L, 3, D)), np.zeros((L, 3, D)), np.zeros((L, 3), dtype=bool)
    for lay in range(L):
        for j, phase in enumerate(PHASES):
            kind, size, name = t.collective[lay, j], float(t.size_bytes[lay, j]), t.group[lay, j]
            g = list(mapping.groups[name] if name is not None else getattr(mapping, phase))
            if sends and kind is Collective.P2P and (j, name) in sends:
                g = list(sends[(j, name)])
            algorithm = (
                algos.get(name, instance.dimension_mode)
                if name is not None
                else instance.dimension_mode
            )
            f = factors.get(name or phase, [1.0] * D)
            if kind is Collective.P2P:
                f = [1.0] * D
            traffic[lay, j] = [size * x * y for x, y in zip(_bytes(kind, g, algorithm, links), f,
                                                               strict=True)]
            if size > 0:
                latency[lay, j] = [
                    s * a
                    for s, a in zip(_steps(kind, g, algorithm, dim_algos), alphas, strict=True)
                ]
            sums[lay, j] = algorithm == "sequential" and kind is not Collective.P2P
    return traffic, latency, sums


def crossed_sizes(sizes: tuple[int, ...], r: int, s: int) -> tuple[int, ...]:
    """A pipeline group of ``sizes`` NPUs per dimension holds its stages in mixed radix, lowest
    dimension fastest: stage r at coordinate floor(r / (p_0 ... p_(d-1))) mod p_d on dimension d.
    A send between stages ``r`` and ``s`` crosses the dimensions whose coordinates differ: the
    group's size there, 1 elsewhere."""
    out, below = [], 1
    for p in sizes:
        out.append(p if (r // below) % p != (s // below) % p else 1)
        below *= p
    return tuple(out)
