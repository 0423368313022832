"""Problem keys and pruning: the canonical form of a candidate's optimisation problem (merged, relabelled dimensions;
see the :mod:`hieropt.studies.explore.run` docstring) and :func:`candidates`, which keeps one candidate per key."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import InputError
from ...model.cost import unit_cost_usd_per_gbps
from ...model.traffic import KINDS, step_rows, unit_rows
from ...names import PHASES
from ...spec import Instance, LinearConstraint, Mapping
from ...spec.network import Collective, Network
from ...spec.space import ShapeSpace
from .enumerate import (
    Candidate,
    Enumeration,
    enumerate_shapes,
    shape_id,
    shape_mappings,
    shape_network,
    space_constraints,
)

KEY_DIGITS = 10
"""Significant digits of the numbers in a candidate's canonical form."""


def candidates(space: ShapeSpace, prune: bool | None = None) -> Enumeration:
    """Every candidate of ``space`` (shape x mapping), exact duplicates pruned unless ``prune`` is False
    (default: ``space.prune_symmetric``).

    Raises:
        InputError: no valid shape (the message says which limits to relax).
    """
    prune = space.prune_symmetric if prune is None else prune
    shapes = enumerate_shapes(space)
    if not shapes:
        raise InputError(space.name, "levels", f"no shape of {space.min_dims} to {space.max_dims} dimensions "
                         f"multiplies to {space.npus} NPUs within the levels' sizes and limits",
                         "widen the levels' npus ranges, max_dims or limits")
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
        raise InputError(space.name, "mapping", f"the {space.mapping_rule} rule places no group on any of the "
                         f"{len(shapes)} shapes (e.g. {skipped[0][0]}: {skipped[0][1]})",
                         "change tp or the levels' sizes")
    return Enumeration(tuple(reps), {k: tuple(v) for k, v in equivalents.items()}, len(shapes), placements,
                       tuple(skipped))


# -------------------------------------------------------------------------------------------- duplicate key
_DISTINCT: dict[int, tuple[Any, list[list[tuple[Collective, str | None, float]]]]] = {}


def _distinct(workload: Any) -> list[list[tuple[Collective, str | None, float]]]:
    """Per phase, the distinct (collective, named group, size) triples of a workload that send bytes (cached per
    workload)."""
    hit = _DISTINCT.get(id(workload))
    if hit is not None and hit[0] is workload:
        return hit[1]
    table = workload.table
    out = []
    for j in range(len(PHASES)):
        triples = {(str(k), g or "", float(s)) for k, g, s in
                   zip(table.collective[:, j], table.group[:, j], table.size_bytes[:, j], strict=True)}
        out.append([(Collective(k), g or None, s) for k, g, s in sorted(triples)
                    if Collective(k) is not Collective.NONE and s > 0])
    _DISTINCT[id(workload)] = (workload, out)
    return out


def _rows(network: Network, jobs: list[tuple[Any, Mapping]]) -> tuple[np.ndarray, np.ndarray]:
    """Traffic (bytes) and latency (ns) per dimension of every distinct collective of every workload, shape
    (R, D); rows depend on the workloads only, so they align between candidates of one space. A workload's rows are
    kept per (workload, mapping) and, for the latency, per the dimensions' latency and algorithms (a space's
    candidates repeat them); the rows of one phase's collectives on one group are computed at once
    (:func:`hieropt.model.traffic.unit_rows`: the products of :func:`~hieropt.model.traffic.collective_traffic`)."""
    D = network.n_dims
    dims = (tuple(d.latency_ns for d in network.dims), tuple(d.collective_algorithm for d in network.dims))
    traffic, latency = [], []
    for workload, mapping in jobs:
        key = (id(workload), id(mapping))
        hit = _TRAFFIC_ROWS.get(key)
        if hit is None or hit[0] is not workload or hit[1] is not mapping:
            if len(_TRAFFIC_ROWS) > 1 << 14:
                _TRAFFIC_ROWS.clear()
            hit = _TRAFFIC_ROWS[key] = (workload, mapping, _job_rows(workload, mapping, D, None), {})
        lat = hit[3].get(dims)
        if lat is None:
            lat = hit[3][dims] = _job_rows(workload, mapping, D, dims)
        traffic.append(hit[2])
        latency.append(lat)
    if len(jobs) == 1:
        return traffic[0], latency[0]
    return np.concatenate(traffic).reshape(-1, D), np.concatenate(latency).reshape(-1, D)


_TRAFFIC_ROWS: dict[tuple[int, int], tuple[Any, Mapping, np.ndarray, dict[tuple, np.ndarray]]] = {}


def _job_rows(workload: Any, mapping: Mapping, D: int, dims: tuple | None) -> np.ndarray:
    """One workload's rows of :func:`_rows`: traffic (``dims`` None) or latency (``dims`` = the dimensions'
    latencies and algorithms), read-only."""
    blocks = []
    for phase, (kinds, sizes, by_group) in zip(PHASES, _distinct_arrays(workload), strict=True):
        out = np.empty((kinds.size, D))
        for name, idx in by_group:
            group = mapping.group(phase, name)
            if dims is None:
                out[idx] = sizes[idx, None] * unit_rows(group)[kinds[idx]]
            else:
                out[idx] = step_rows(group, dims[1])[kinds[idx]] * np.array(dims[0])
        blocks.append(out)
    rows = np.concatenate(blocks).reshape(-1, D)
    rows.flags.writeable = False
    return rows


_ARRAYS: dict[int, tuple[Any, list[tuple[np.ndarray, np.ndarray, list[tuple[str | None, np.ndarray]]]]]] = {}


def _distinct_arrays(workload: Any) -> list[tuple[np.ndarray, np.ndarray, list[tuple[str | None, np.ndarray]]]]:
    """:func:`_distinct` per phase as arrays: the collectives' codes (into :data:`hieropt.model.traffic.KINDS`), their
    sizes, and per named group (None: the phase's) the indices of its collectives (cached per workload)."""
    hit = _ARRAYS.get(id(workload))
    if hit is not None and hit[0] is workload:
        return hit[1]
    out = []
    for triples in _distinct(workload):
        kinds = np.array([KINDS.index(k) for k, _, _ in triples], dtype=np.int64)
        sizes = np.array([s for _, _, s in triples], dtype=float)
        groups: dict[str | None, list[int]] = {}
        for i, (_, name, _) in enumerate(triples):
            groups.setdefault(name, []).append(i)
        out.append((kinds, sizes, [(name, np.array(idx, dtype=np.int64)) for name, idx in groups.items()]))
    _ARRAYS[id(workload)] = (workload, out)
    return out


_RANK_ONE: dict[tuple[bytes, tuple[int, ...]], bool] = {}


def _rank_one(block: np.ndarray) -> bool:
    """Whether every row of ``block`` (non-negative) is a multiple of one common vector (memoised: the candidates
    of a space repeat their blocks)."""
    block = np.ascontiguousarray(block)
    memo = (block.tobytes(), block.shape)
    hit = _RANK_ONE.get(memo)
    if hit is None:
        if len(_RANK_ONE) > 1 << 16:
            _RANK_ONE.clear()
        hit = _RANK_ONE[memo] = _rank_one_of(block)
    return hit


def _rank_one_of(block: np.ndarray) -> bool:
    norms = np.linalg.norm(block, axis=1)
    if not norms.any():
        return True
    v = block[int(np.argmax(norms))] / norms.max()
    resid = block - np.outer(block @ v, v)
    return bool(np.all(np.linalg.norm(resid, axis=1) <= 1e-9 * norms))


_ROUNDED: dict[bytes, tuple[float, ...]] = {}


def _round(x: np.ndarray) -> tuple[float, ...]:
    """The values of ``x`` to :data:`KEY_DIGITS` significant digits (memoised: a space's columns repeat)."""
    x = np.asarray(x, dtype=float).ravel()
    raw = x.tobytes()
    hit = _ROUNDED.get(raw)
    if hit is None:
        if len(_ROUNDED) > 1 << 18:
            _ROUNDED.clear()
        hit = _ROUNDED[raw] = tuple(float(f"{v:.{KEY_DIGITS}g}") + 0.0 for v in x)
    return hit


def problem_key(instance: Instance) -> tuple:
    """Canonical form of a candidate's optimisation problem (module docstring): equal keys, equal optima.

    Per dimension d the column (u_d, constraint coefficients, traffic and latency of every distinct collective);
    maximal runs of adjacent mergeable dimensions (concurrent mode only) become one column with the summed traffic;
    the columns are then sorted. The key is (D, senses and right-hand sides, sorted columns).
    """
    return _key(instance.network, [(j.workload, j.mapping) for j in instance.jobs], unit_cost_usd_per_gbps(instance),
                instance.constraints, instance.dimension_mode)


def _key(network: Network, jobs: list[tuple[Any, Mapping]], u: np.ndarray,
         constraints: tuple[LinearConstraint, ...], mode: str) -> tuple:
    D = network.n_dims
    A, same_column, rhs = _constraint_parts(constraints, D)
    M, L = _rows(network, jobs)
    cols: list[tuple] = []
    has_latency = L.any(axis=0).tolist()
    i = 0
    while i < D:
        j = i + 1
        if mode == "concurrent" and not has_latency[i]:
            while (j < D and not has_latency[j] and abs(u[j] - u[i]) <= 1e-12 * abs(u[i])
                   and same_column[j][i] and _rank_one(M[:, i:j + 1])):
                j += 1
        cols.append(_round(np.concatenate((u[i:i + 1], A[:, i], M[:, i:j].sum(axis=1), L[:, i]))))
        i = j
    return D, rhs, tuple(sorted(cols))


_CONSTRAINTS: dict[tuple[int, int], tuple[tuple, tuple]] = {}


def _constraint_parts(constraints: tuple[LinearConstraint, ...], D: int) -> tuple:
    """(coefficient matrix A (rows, D), whether columns j and i of A are equal, the rounded senses and right-hand
    sides) of the constraints of ``D`` dimensions: the same for every candidate with D dimensions (kept per
    constraints object)."""
    hit = _CONSTRAINTS.get((id(constraints), D))
    if hit is not None and hit[0] is constraints:
        return hit[1]
    A = np.array([c.coefficients for c in constraints], dtype=float).reshape(-1, D)
    same = [[bool(np.array_equal(A[:, j], A[:, i])) for i in range(D)] for j in range(D)]
    rhs = tuple((c.sense, float(f"{c.rhs:.{KEY_DIGITS}g}")) for c in constraints)
    if len(_CONSTRAINTS) > 256:
        _CONSTRAINTS.clear()
    _CONSTRAINTS[id(constraints), D] = (constraints, (A, same, rhs))
    return A, same, rhs


def _unit_costs(space: ShapeSpace, shape: tuple) -> np.ndarray:
    """$ per GB/s of each dimension of ``shape`` (link, plus switch and NIC on a Switch), shape (D,)."""
    u = []
    for d in shape:
        cc = space.cost.classes[space.levels[d.level].cost_class]
        extra = (cc.switch_usd_per_gbps or 0.0) + (cc.nic_usd_per_gbps or 0.0) if d.block == "Switch" else 0.0
        u.append(cc.link_usd_per_gbps + extra)
    return np.array(u)


def _candidate_key(space: ShapeSpace, cand: Candidate, net: Network | None = None,
                   u: np.ndarray | None = None) -> tuple:
    """:func:`problem_key` of a candidate without building its Instance (``net``, ``u``: its shape's network and
    unit costs, when the caller has them)."""
    u = _unit_costs(space, cand.dims) if u is None else u
    net = shape_network(space, cand.dims) if net is None else net
    jobs = [(j.workload, m) for j, m in zip(space.jobs, cand.mappings, strict=True)]
    return _key(net, jobs, u, space_constraints(space.constraints, cand.n_dims), space.dimension_mode)
