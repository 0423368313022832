"""Problem keys and pruning: the canonical form of a candidate's optimisation problem (merged,
relabelled dimensions; see the :mod:`hieropt.studies.explore.run` docstring) and :func:`candidates`,
which keeps one candidate per key."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...cache import Same, current
from ...errors import InputError
from ...model.algorithms import p2p_links
from ...model.cost import unit_cost_usd_per_gbps
from ...model.traffic import (
    bandwidth_rule,
    collective_steps,
    collective_traffic,
    mapping_links,
    read_only,
)
from ...names import PHASES
from ...spec import Instance, LinearConstraint, Mapping
from ...spec.network import Collective, Network
from ...spec.space import ShapeSpace
from .enumerate import (
    Candidate,
    Enumeration,
    enumerate_shapes,
    no_shape,
    shape_id,
    shape_mappings,
    shape_network,
    space_constraints,
)

KEY_DIGITS = 10
"""Significant digits of the numbers in a candidate's canonical form."""


def candidates(space: ShapeSpace, prune: bool | None = None) -> Enumeration:
    """Every candidate of ``space`` (shape x mapping), exact duplicates pruned unless ``prune`` is
    False (default: ``space.prune_symmetric``).

    Raises:
        InputError: no valid shape (the message says which limits to relax).
    """
    prune = space.prune_symmetric if prune is None else prune
    shapes = enumerate_shapes(space)
    if not shapes:
        blocked = space.switch_only_at_top and bool(
            enumerate_shapes(space.model_copy(update={"switch_only_at_top": False})))
        raise no_shape(space.name, space.min_dims, space.max_dims, space.npus, blocked)
    reps: list[Candidate] = []
    equivalents: dict[str, list[str]] = {}
    by_key: dict[Any, str] = {}
    skipped: list[tuple[str, str]] = []
    placements = 0
    for shape in shapes:
        sid = shape_id(space, shape)
        net = shape_network(space, shape)  # once per shape: its mappings and keys share it
        try:
            options = shape_mappings(space, shape, sid, net)
        except InputError as e:
            skipped.append((sid, e.problem))
            continue
        u = _unit_costs(space, shape) if prune else None
        for cid, mappings in options:
            placements += 1
            cand = Candidate(cid, shape, mappings)
            if prune:
                key = _candidate_key(space, cand, net, u)
                rep = by_key.setdefault(key, cid)
                if rep != cid:
                    equivalents[rep].append(cid)
                    continue
            reps.append(cand)
            equivalents[cid] = []
    if not reps:
        raise InputError(
            space.name,
            "mapping",
            f"the {space.mapping_rule} rule places no group on any of the "
            f"{len(shapes)} shapes (e.g. {skipped[0][0]}: {skipped[0][1]})",
            "change tp or the levels' sizes",
        )
    return Enumeration(
        tuple(reps),
        {k: tuple(v) for k, v in equivalents.items()},
        len(shapes),
        placements,
        tuple(skipped),
    )


# ------------------------------------------------------------------------------------ duplicate key
def _distinct(workload: Any) -> list[list[tuple[Collective, str | None, float]]]:
    """Per phase, the distinct (collective, named group, size) triples of a workload that send bytes
    (kept per workload in the active cache)."""
    return current().memo("distinct collectives", Same(workload), lambda: _distinct_of(workload))


def _distinct_of(workload: Any) -> list[list[tuple[Collective, str | None, float]]]:
    table = workload.table
    out = []
    for j in range(len(PHASES)):
        triples = {
            (str(k), g or "", float(s))
            for k, g, s in zip(
                table.collective[:, j], table.group[:, j], table.size_bytes[:, j], strict=True
            )
        }
        out.append([(Collective(k), g or None, s) for k, g, s in sorted(triples)
                    if Collective(k) is not Collective.NONE and s > 0])
    return out


def _rows(network: Network, jobs: list[tuple[Any, Mapping, str]]) -> tuple[np.ndarray, np.ndarray]:
    """Traffic (bytes) and latency (ns) per dimension of every distinct collective of every
    (workload, mapping, rule of :func:`~hieropt.model.traffic.bandwidth_rule`), shape (R, D); a
    collective's row times its group's link factors (:func:`~hieropt.model.traffic.mapping_links`),
    a send's times the send links; rows depend on the workloads only, so they align between
    candidates of one space."""
    D = network.n_dims
    alpha = np.array([d.latency_ns for d in network.dims])
    algos = tuple(d.collective_algorithm for d in network.dims)
    traffic, latency = [], []
    # (a send over a FullyConnected dimension gets one of its links)
    links = np.array(p2p_links(network))
    for workload, mapping, rule in jobs:
        factors = mapping_links(network, mapping, rule)
        for phase, triples in zip(PHASES, _distinct(workload), strict=True):
            for kind, name, size in triples:
                group = mapping.group(phase, name)
                row = _traffic_row(kind, size, group)
                if kind is Collective.P2P:
                    row = row * links
                elif (f := factors.get(name or phase)) is not None:
                    row = row * np.array(f)
                traffic.append(row)
                latency.append(_steps_row(kind, group, algos) * alpha)
    return np.array(traffic).reshape(-1, D), np.array(latency).reshape(-1, D)


def _traffic_row(kind: Collective, size: float, group: tuple[int, ...]) -> np.ndarray:
    """:func:`~hieropt.model.traffic.collective_traffic`, kept in the active cache (the candidates
    of a space repeat its groups)."""
    return current().memo("traffic row", (kind, size, group),
                          lambda: read_only(collective_traffic(kind, size, group)), 65536)


def _steps_row(kind: Collective, group: tuple[int, ...], algos: tuple[str, ...]) -> np.ndarray:
    """:func:`~hieropt.model.traffic.collective_steps`, kept in the active cache."""
    return current().memo("steps row", (kind, group, algos),
                          lambda: read_only(collective_steps(kind, group, algos)), 65536)


def _rank_one(block: np.ndarray) -> bool:
    """Whether every row of ``block`` (non-negative) is a multiple of one common vector (memoised:
    the candidates of a space repeat their blocks)."""
    block = np.ascontiguousarray(block)
    return current().memo("rank one", (block.tobytes(), block.shape), lambda: _rank_one_of(block),
                          1 << 16)


def _rank_one_of(block: np.ndarray) -> bool:
    norms = np.linalg.norm(block, axis=1)
    if not norms.any():
        return True
    v = block[int(np.argmax(norms))] / norms.max()
    resid = block - np.outer(block @ v, v)
    return bool(np.all(np.linalg.norm(resid, axis=1) <= 1e-9 * norms))


def _round(x: np.ndarray) -> tuple[float, ...]:
    """The values of ``x`` to :data:`KEY_DIGITS` significant digits (memoised: a space's columns
    repeat)."""
    x = np.asarray(x, dtype=float).ravel()
    return current().memo("rounded", x.tobytes(),
                          lambda: tuple(float(f"{v:.{KEY_DIGITS}g}") + 0.0 for v in x), 1 << 18)


def problem_key(instance: Instance) -> tuple:
    """Canonical form of a candidate's optimisation problem (module docstring): equal keys, equal
    optima.

    Per dimension d the column (u_d, constraint coefficients, traffic and latency of every distinct
    collective); maximal runs of adjacent mergeable dimensions (concurrent mode only) become one
    column with the summed traffic; the columns are then sorted. The key is (D, senses and
    right-hand sides, sorted columns).
    """
    return _key(
        instance.network,
        [(w, j.mapping, bandwidth_rule(instance, j)) for j in instance.jobs
         for w in j.workload.stages],
        unit_cost_usd_per_gbps(instance),
        instance.constraints,
        instance.dimension_mode,
    )


def _key(network: Network, jobs: list[tuple[Any, Mapping, str]], u: np.ndarray,
         constraints: tuple[LinearConstraint, ...], mode: str) -> tuple:
    D = network.n_dims
    A = np.array([c.coefficients for c in constraints], dtype=float).reshape(-1, D)
    M, L = _rows(network, jobs)
    cols: list[tuple] = []
    has_latency = L.any(axis=0)
    i = 0
    while i < D:
        j = i + 1
        if mode == "concurrent" and not has_latency[i]:
            while (j < D and not has_latency[j] and abs(u[j] - u[i]) <= 1e-12 * abs(u[i])
                   and np.array_equal(A[:, j], A[:, i]) and _rank_one(M[:, i:j + 1])):
                j += 1
        cols.append(_round(np.concatenate((u[i:i + 1], A[:, i], M[:, i:j].sum(axis=1), L[:, i]))))
        i = j
    rhs = tuple((c.sense, float(f"{c.rhs:.{KEY_DIGITS}g}")) for c in constraints)
    return D, rhs, tuple(sorted(cols))


def _unit_costs(space: ShapeSpace, shape: tuple) -> np.ndarray:
    """$ per GB/s of each dimension of ``shape`` (link, plus switch and NIC on a Switch), shape
    (D,)."""
    u = []
    for d in shape:
        cc = space.cost.classes[space.levels[d.level].cost_class]
        extra = (
            (cc.switch_usd_per_gbps or 0.0) + (cc.nic_usd_per_gbps or 0.0)
            if d.block == "Switch"
            else 0.0
        )
        u.append(cc.link_usd_per_gbps + extra)
    return np.array(u)


def _candidate_key(space: ShapeSpace, cand: Candidate, net: Network | None = None,
                   u: np.ndarray | None = None) -> tuple:
    """:func:`problem_key` of a candidate without building its Instance (``net``, ``u``: its shape's
    network and unit costs, when the caller has them)."""
    u = _unit_costs(space, cand.dims) if u is None else u
    net = shape_network(space, cand.dims) if net is None else net
    jobs = [
        (w, m, space.group_bandwidth)
        for j, m in zip(space.jobs, cand.mappings, strict=True) for w in j.workload.stages
    ]
    return _key(
        net, jobs, u, space_constraints(space.constraints, cand.n_dims), space.dimension_mode
    )
