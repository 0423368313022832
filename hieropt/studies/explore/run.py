"""Which network to build: enumerate every shape of a :class:`~hieropt.spec.space.ShapeSpace` and solve each exactly
(issue 7).

Flow: :func:`enumerate_shapes` lists every valid shape (ordered factorisations of N into ``min_dims`` ..
``max_dims`` factors, each a dimension at some level with a building block the level allows, levels never decreasing,
sizes within the levels' ranges and limits); :func:`candidates` attaches the parallel mapping (one candidate per shape
under ``tp_lowest`` and ``header``, one per placement under ``all_placements``) and removes exact duplicates
(below); :func:`explore` solves every remaining candidate with :func:`hieropt.solvers.objectives.solve` (the space's
objective,
proven gap), in a process pool or on a Dask cluster, streams one row per candidate to a CSV / Parquet file as results
arrive, resumes from that file, and ranks the candidates by their proven optimum.

**Duplicates pruned (exact).** Two candidates are duplicates when their optimisation problems are the same after
(a) *merging* runs of adjacent dimensions the model cannot tell apart and (b) *relabelling* dimensions:

- A run of adjacent dimensions i..j merges into one when, in concurrent-dimension mode, all of them have the same
  unit price ($/GB/s per NPU), the same coefficient in every design constraint, no latency, and every collective's
  traffic restricted to the run is proportional to one common vector v (e.g. every collective spans all of them or
  none, as with identical adjacent levels fully inside the TP group or fully inside the DP group). Then for a fixed
  total beta = B_i + ... + B_j the split B ∝ v minimises every collective's time max_d(m_d / B_d) at once, giving
  (sum_d m_d) / beta, while cost and constraints see beta only; so the problem equals the one with a single
  dimension of traffic sum_d m_d. E.g. Ring 4 x Ring 2 and Ring 2 x Ring 4 (or FullyConnected 8) at one level,
  both all-reduced by DP, have the same optimum.
- Relabelling: permuting dimensions together with all their data (price, constraint coefficients, traffic and
  latency of every collective) does not change the problem; the canonical form sorts the (merged) dimensions.

The key of a candidate is its dimension count and its canonical form (numbers rounded to 10 significant digits,
below the solver's 1e-8 gap). Candidates with the same key have the same optimal objective value (all three
objectives: time, cost and their product are unchanged); the first in enumeration order is solved and the others
are listed as its ``equivalent_ids``. The test suite solves every pruned candidate and checks this.

**Scale-out figures** per candidate: the dimensions at the space's scale-out level (default: the top level) carry
the NIC traffic; ``scaleout_gbps_per_npu`` is their bandwidth per NPU, ``scaleout_usd`` their cost, ``nic_usd`` the
NIC part of it (cost class NIC price x N x bandwidth), and ``nics`` = ceil(N x scale-out GB/s per NPU / ``nic_gbps``)
when the space gives ``nic_gbps``: a derived figure from the continuous optimum, not an integer provisioning
(:func:`hieropt.provision` needs a parts catalog per cost class; run it on the shapes you shortlist).
"""

from __future__ import annotations

import bisect
import csv
import hashlib
import itertools
import json
import math
import os
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import HieroptError, InputError, NoSolutionError
from ...model.cost import unit_cost_usd_per_gbps
from ...model.mapping import derive_mapping, lowest_dims_group
from ...model.traffic import collective_steps, collective_traffic
from ...solvers.cutting import REL_GAP
from ...solvers.procurement import PPC_GAP
from ...spec import OBJECTIVES, PHASES, Collective, Dimension, Instance, Job, LinearConstraint, Mapping, Network
from ...spec.space import ShapeSpace

__all__ = ["explore", "Exploration", "Candidate", "DimChoice", "Enumeration", "enumerate_shapes", "candidates",
           "build_instance", "problem_key", "solve_candidate", "COLUMNS", "read_results", "load_space"]

ABBR = {"Ring": "R", "FullyConnected": "FC", "Switch": "SW"}
"""Building-block abbreviations used in shape ids (R4 = Ring of 4, FC8 = FullyConnected 8, SW32 = Switch 32)."""
KEY_DIGITS = 10
"""Significant digits of the numbers in a candidate's canonical form."""
SOLVED = ("optimal", "limit")
"""Row statuses that carry an objective value (``limit``: the gap target was not reached)."""


def load_space(path: str | Path) -> ShapeSpace:
    """Read a shape-space TOML file (see :mod:`hieropt.io.space`)."""
    from ...io.space import load_space as _load

    return _load(path)


# ------------------------------------------------------------------------------------------------ enumeration
@dataclass(frozen=True)
class DimChoice:
    """One dimension of a shape: the index of its level in ``space.levels``, its building block, its NPU count."""

    level: int
    block: str
    npus: int


@dataclass(frozen=True)
class Candidate:
    """A shape with the parallel mapping of every workload: what one solve is about.

    Attributes:
        id: stable id, e.g. ``"chiplet:R4 package:FC8 node:R4 pod:SW32"``; under ``all_placements`` followed by
            `` | tp 4x4x1x1`` (the TP group on each dimension; ``;`` between workloads).
        dims: the dimensions, innermost first.
        mappings: one :class:`~hieropt.spec.Mapping` per workload of the space.
    """

    id: str
    dims: tuple[DimChoice, ...]
    mappings: tuple[Mapping, ...]

    @property
    def n_dims(self) -> int:
        """Number of dimensions."""
        return len(self.dims)

    @property
    def sizes(self) -> tuple[int, ...]:
        """NPUs along each dimension."""
        return tuple(d.npus for d in self.dims)


@dataclass(frozen=True)
class Enumeration:
    """Every candidate of a space, after duplicate pruning.

    Attributes:
        candidates: the candidates to solve (one per class of duplicates), in enumeration order.
        equivalents: candidate id -> ids of the pruned candidates with the same optimum.
        shapes: valid shapes (before mapping).
        placements: candidates before pruning (shapes x placements, less the skipped ones).
        skipped: (shape id, reason) of shapes the mapping rule could not place its groups on.
    """

    candidates: tuple[Candidate, ...]
    equivalents: dict[str, tuple[str, ...]]
    shapes: int
    placements: int
    skipped: tuple[tuple[str, str], ...] = ()

    @property
    def pruned(self) -> int:
        """Candidates removed as duplicates."""
        return self.placements - len(self.candidates)


def _divisors(n: int, lo: int, hi: int) -> list[int]:
    return [d for d in range(lo, min(hi, n) + 1) if n % d == 0]


def _limits_ok(space: ShapeSpace, shape: tuple[DimChoice, ...]) -> bool:
    """Levels' min_dims, max_npus and max_npus_within on a complete shape."""
    for k, lv in enumerate(space.levels):
        here = [d.npus for d in shape if d.level == k]
        if len(here) < lv.min_dims:
            return False
        if lv.max_npus is not None and math.prod(here) > lv.max_npus:
            return False
        if lv.max_npus_within is not None and math.prod(d.npus for d in shape if d.level <= k) > lv.max_npus_within:
            return False
    return True


def enumerate_shapes(space: ShapeSpace) -> list[tuple[DimChoice, ...]]:
    """Every valid shape of ``space``: ordered factorisations of ``space.npus`` into ``min_dims`` .. ``max_dims``
    factors, each factor a dimension at a level (levels non-decreasing, at most ``max_dims`` per level, sizes within
    the level's range) with one of the level's building blocks; a Switch only as the last dimension when
    ``switch_only_at_top``; the levels' ``min_dims``, ``max_npus`` and ``max_npus_within`` limits met.

    Returns:
        shapes ordered by dimension count, then level, size and block (the blocks in the level's order).
    """
    levels = space.levels
    out: list[tuple[DimChoice, ...]] = []

    def rec(prefix: list[DimChoice], remaining: int, first_level: int, counts: list[int]) -> None:
        if remaining == 1:
            shape = tuple(prefix)
            if len(shape) >= space.min_dims and _limits_ok(space, shape):
                out.append(shape)
            return
        if len(prefix) == space.max_dims:
            return
        below = math.prod(d.npus for d in prefix)
        for li in range(first_level, len(levels)):
            if li > first_level and counts[li - 1] < levels[li - 1].min_dims:
                break  # a level below still needs dimensions; later levels cannot come first
            lv = levels[li]
            if counts[li] >= lv.max_dims:
                continue
            at_level = math.prod(d.npus for d in prefix if d.level == li)
            for size in _divisors(remaining, *lv.npus):
                if lv.max_npus is not None and at_level * size > lv.max_npus:
                    continue
                if lv.max_npus_within is not None and below * size > lv.max_npus_within:
                    continue
                for block in lv.blocks:
                    if block == "Switch" and space.switch_only_at_top and size != remaining:
                        continue
                    counts[li] += 1
                    rec(prefix + [DimChoice(li, block, size)], remaining // size, li, counts)
                    counts[li] -= 1

    rec([], space.npus, 0, [0] * len(levels))
    return sorted(out, key=len)  # stable: keeps the recursion's order within one dimension count


def shape_id(space: ShapeSpace, shape: tuple[DimChoice, ...]) -> str:
    """The stable id of a shape, e.g. ``"chiplet:R4 package:FC8 node:R4 pod:SW32"``."""
    return " ".join(f"{space.levels[d.level].name}:{ABBR[d.block]}{d.npus}" for d in shape)


def _network(space: ShapeSpace, shape: tuple[DimChoice, ...]) -> Network:
    dims = []
    for d in shape:
        lv = space.levels[d.level]
        dims.append(Dimension(block=d.block, npus=d.npus, cost_class=lv.cost_class, latency_ns=lv.latency_ns,
                              algorithm=lv.algorithm))
    return Network(dims=tuple(dims))


def _tp_dp(sizes: tuple[int, ...], tp_group: tuple[int, ...]) -> Mapping:
    dp = tuple(p // g for p, g in zip(sizes, tp_group, strict=True))
    return Mapping(forward=tp_group, input_grad=tp_group, weight_grad=dp)


def _placements(sizes: tuple[int, ...], tp: int) -> list[tuple[int, ...]]:
    """Every TP group (g_d dividing p_d, product tp), lexicographically."""
    if not sizes:
        return [()] if tp == 1 else []
    out = []
    for g in _divisors(sizes[0], 1, sizes[0]):
        if tp % g == 0:
            out += [(g,) + rest for rest in _placements(sizes[1:], tp // g)]
    return out


def _mappings(space: ShapeSpace, shape: tuple[DimChoice, ...], sid: str) -> list[tuple[str, tuple[Mapping, ...]]]:
    """(candidate id, mappings per workload) of one shape; raises InputError when the rule cannot place a group."""
    net = _network(space, shape)
    sizes = tuple(d.npus for d in shape)
    if space.mapping_rule == "header":
        return [(sid, tuple(derive_mapping(job.workload, net, sid)[0] for job in space.jobs))]
    if space.mapping_rule == "tp_lowest":
        return [(sid, tuple(_tp_dp(sizes, lowest_dims_group(net, job.tp, sid)) for job in space.jobs))]
    per_job = [_placements(sizes, job.tp) for job in space.jobs]
    for job, options in zip(space.jobs, per_job, strict=True):
        if not options:
            raise InputError(sid, "tp", f"a TP group of {job.tp} NPUs cannot be placed", "")
    combos: list[tuple[tuple[int, ...], ...]] = [()]
    for options in per_job:
        combos = [c + (g,) for c in combos for g in options]
    return [(f"{sid} | tp {'; '.join('x'.join(map(str, g)) for g in combo)}",
             tuple(_tp_dp(sizes, g) for g in combo)) for combo in combos]


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
        try:
            options = _mappings(space, shape, sid)
        except InputError as e:
            skipped.append((sid, e.problem))
            continue
        for cid, mappings in options:
            placements += 1
            cand = Candidate(cid, shape, mappings)
            if prune:
                key = _candidate_key(space, cand)
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


@lru_cache(maxsize=256)
def _constraints(texts: tuple[str, ...], n_dims: int) -> tuple[LinearConstraint, ...]:
    from ...spec.space import constraint_for

    return tuple(constraint_for(t, n_dims) for t in texts)


def build_instance(space: ShapeSpace, cand: Candidate) -> Instance:
    """The :class:`~hieropt.spec.Instance` of one candidate: the space's workloads, cost model, constraints,
    objective and training loop on the candidate's network and mappings."""
    jobs = [Job(workload=j.workload, mapping=m, weight=j.weight)
            for j, m in zip(space.jobs, cand.mappings, strict=True)]
    return Instance(name=cand.id, network=_network(space, cand.dims), workload=jobs[0].workload,
                    mapping=jobs[0].mapping, workload_weight=jobs[0].weight, more_workloads=tuple(jobs[1:]),
                    cost=space.cost, constraints=_constraints(space.constraints, cand.n_dims),
                    objective=space.objective, training_loop=space.training_loop,
                    dimension_mode=space.dimension_mode, max_iteration_time_ns=space.max_iteration_time_ns,
                    max_network_cost_usd=space.max_network_cost_usd)


# -------------------------------------------------------------------------------------------- duplicate key
_DISTINCT: dict[int, tuple[Any, list[list[tuple[Collective, float]]]]] = {}


def _distinct(workload: Any) -> list[list[tuple[Collective, float]]]:
    """Per phase, the distinct (collective, size) pairs of a workload that send bytes (cached per workload)."""
    hit = _DISTINCT.get(id(workload))
    if hit is not None and hit[0] is workload:
        return hit[1]
    table = workload.table
    out = []
    for j in range(len(PHASES)):
        pairs = {(str(k), float(s)) for k, s in zip(table.collective[:, j], table.size_bytes[:, j], strict=True)}
        out.append([(Collective(k), s) for k, s in sorted(pairs) if Collective(k) is not Collective.NONE and s > 0])
    _DISTINCT[id(workload)] = (workload, out)
    return out


def _rows(network: Network, jobs: list[tuple[Any, Mapping]]) -> tuple[np.ndarray, np.ndarray]:
    """Traffic (bytes) and latency (ns) per dimension of every distinct collective of every workload, shape
    (R, D); rows depend on the workloads only, so they align between candidates of one space."""
    D = network.n_dims
    alpha = np.array([d.latency_ns for d in network.dims])
    algos = tuple(d.collective_algorithm for d in network.dims)
    traffic, latency = [], []
    for workload, mapping in jobs:
        for phase, pairs in zip(PHASES, _distinct(workload), strict=True):
            group = mapping.group(phase)
            for kind, size in pairs:
                traffic.append(collective_traffic(kind, size, group))
                latency.append(collective_steps(kind, group, algos) * alpha)
    return np.array(traffic).reshape(-1, D), np.array(latency).reshape(-1, D)


def _rank_one(block: np.ndarray) -> bool:
    """Whether every row of ``block`` (non-negative) is a multiple of one common vector."""
    norms = np.linalg.norm(block, axis=1)
    if not norms.any():
        return True
    v = block[int(np.argmax(norms))] / norms.max()
    resid = block - np.outer(block @ v, v)
    return bool(np.all(np.linalg.norm(resid, axis=1) <= 1e-9 * norms))


def _round(x: np.ndarray) -> tuple[float, ...]:
    return tuple(float(f"{v:.{KEY_DIGITS}g}") + 0.0 for v in np.asarray(x, dtype=float).ravel())


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
    A = np.array([c.coefficients for c in constraints], dtype=float).reshape(-1, D)
    M, L = _rows(network, jobs)
    cols: list[tuple] = []
    i = 0
    while i < D:
        j = i + 1
        if mode == "concurrent" and not L[:, i].any():
            while (j < D and not L[:, j].any() and abs(u[j] - u[i]) <= 1e-12 * abs(u[i])
                   and np.array_equal(A[:, j], A[:, i]) and _rank_one(M[:, i:j + 1])):
                j += 1
        cols.append(_round(u[i:i + 1]) + _round(A[:, i]) + _round(M[:, i:j].sum(axis=1)) + _round(L[:, i]))
        i = j
    rhs = tuple((c.sense, float(f"{c.rhs:.{KEY_DIGITS}g}")) for c in constraints)
    return D, rhs, tuple(sorted(cols))


def _candidate_key(space: ShapeSpace, cand: Candidate) -> tuple:
    """:func:`problem_key` of a candidate without building its Instance."""
    u = []
    for d in cand.dims:
        cc = space.cost.classes[space.levels[d.level].cost_class]
        extra = (cc.switch_usd_per_gbps or 0.0) + (cc.nic_usd_per_gbps or 0.0) if d.block == "Switch" else 0.0
        u.append(cc.link_usd_per_gbps + extra)
    jobs = [(j.workload, m) for j, m in zip(space.jobs, cand.mappings, strict=True)]
    return _key(_network(space, cand.dims), jobs, np.array(u), _constraints(space.constraints, cand.n_dims),
                space.dimension_mode)


# ---------------------------------------------------------------------------------------------- one solve
COLUMNS: tuple[tuple[str, type], ...] = (
    ("shape_id", str), ("space_hash", str), ("n_dims", int), ("levels", str), ("blocks", str), ("npus", str),
    ("tp_groups", str), ("dp_groups", str), ("equivalents", int), ("equivalent_ids", str),
    ("status", str), ("message", str), ("objective", str), ("objective_value", float), ("objective_bound", float),
    ("objective_unit", str), ("gap", float), ("iteration_time_ns", float), ("network_cost_usd", float),
    ("bw_gbps", str), ("scaleout_gbps_per_npu", float), ("scaleout_usd", float), ("nic_usd", float), ("nics", int),
    ("solve_seconds", float), ("worker", str),
)
"""Columns of the results file, with their types (``None`` / empty: not applicable)."""
_NAMES = tuple(n for n, _ in COLUMNS)


def _group_text(mappings: tuple[Mapping, ...], phase: str) -> str:
    return "; ".join("x".join(map(str, m.group(phase))) for m in mappings)


def solve_candidate(space: ShapeSpace, cand: Candidate) -> dict[str, Any]:
    """Solve one candidate with the space's objective (:func:`hieropt.solvers.objectives.solve`, proven gap) and return
    its row
    (see :data:`COLUMNS`; ``space_hash`` and the equivalents are filled in by :func:`explore`). A shape without a
    certified answer gets its status (``infeasible``, ``unbounded``, ``error``) and the message.

    With the performance objective many designs of a shape are often equally fast (the optimum is not unique), and
    their costs differ; the row then reports the cheapest design whose time is within the gap target (1e-8) of the
    optimum (a second, min_cost solve), so cost, bandwidths and scale-out figures are well defined. The objective
    value, bound and gap are those of the performance solve."""
    from ...solvers.objectives import solve

    row: dict[str, Any] = dict.fromkeys(_NAMES)
    row.update(shape_id=cand.id, n_dims=cand.n_dims, levels=",".join(space.levels[d.level].name for d in cand.dims),
               blocks=",".join(d.block for d in cand.dims), npus="x".join(str(d.npus) for d in cand.dims),
               tp_groups=_group_text(cand.mappings, "forward"), dp_groups=_group_text(cand.mappings, "weight_grad"),
               objective=space.objective, worker=f"{socket.gethostname()}:{os.getpid()}")
    start = time.perf_counter()
    inst = build_instance(space, cand)
    try:
        sol = solve(inst)
    except NoSolutionError as e:
        row.update(status=e.kind, message=str(e))
    except HieroptError as e:
        row.update(status="error", message=str(e))
    else:
        message = sol.message
        if space.objective == "performance":  # tie-break: the cheapest design within the gap target of the optimum
            try:
                target = sol.objective_value * (1 + REL_GAP)
                sol_design = solve(inst, objective="min_cost", max_iteration_time_ns=target)
                message += f"; design: the cheapest within {REL_GAP:g} of the optimal time"
            except HieroptError as e:
                sol_design = sol
                message += f"; design: the solver's (no cheaper tie found: {e})"
        else:
            sol_design = sol
        row.update(status=str(sol.status), message=message, objective_value=sol.objective_value,
                   objective_bound=sol.objective_bound, objective_unit=sol.objective_unit, gap=sol.gap)
        sol = sol_design
        bd = sol.breakdown
        top = [d for d, dim in enumerate(cand.dims) if dim.level == space.scale_out_index]
        scale_bw = float(sum(sol.bw_gbps[d] for d in top))
        nic_usd = 0.0
        for d in top:
            cc = space.cost.classes[space.levels[cand.dims[d].level].cost_class]
            if cand.dims[d].block == "Switch" and cc.nic_usd_per_gbps is not None:
                nic_usd += space.npus * cc.nic_usd_per_gbps * float(sol.bw_gbps[d])
        nics = None
        if space.nic_gbps is not None:
            nics = math.ceil(space.npus * scale_bw / space.nic_gbps * (1 - 1e-12))
        row.update(iteration_time_ns=sol.iteration_time_ns, network_cost_usd=sol.network_cost_usd,
                   bw_gbps=";".join(repr(float(b)) for b in sol.bw_gbps), scaleout_gbps_per_npu=scale_bw,
                   scaleout_usd=float(sum(bd.cost_per_dim_usd[d] for d in top)), nic_usd=nic_usd, nics=nics)
    row["solve_seconds"] = time.perf_counter() - start
    return row


_WORKER_SPACE: ShapeSpace | None = None


def _init_worker(space: ShapeSpace) -> None:
    global _WORKER_SPACE
    _WORKER_SPACE = space


def _pool_task(cand: Candidate) -> dict[str, Any]:
    assert _WORKER_SPACE is not None
    return solve_candidate(_WORKER_SPACE, cand)


# --------------------------------------------------------------------------------------------- results file
def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _typed(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for name, kind in COLUMNS:
        v = row.get(name)
        if v is None or v == "" or (isinstance(v, float) and math.isnan(v)):
            out[name] = None if kind is not str else ("" if name in ("equivalent_ids", "message") else None)
        else:
            out[name] = kind(float(v)) if kind is int else kind(v)
    return out


def _read_csv(path: Path, space_hash: str, repair: bool) -> list[dict[str, Any]]:
    """Rows of a results CSV; a last line cut off by an interruption is dropped (and removed when ``repair``)."""
    if not path.exists() or path.stat().st_size == 0:
        return []
    raw = path.read_bytes()
    if not raw.endswith(b"\n"):
        cut = raw.rfind(b"\n") + 1
        if repair:
            with path.open("r+b") as f:
                f.truncate(cut)
        raw = raw[:cut]
    lines = raw.decode("utf-8").splitlines()
    if not lines:
        return []
    reader = csv.reader(lines)
    header = next(reader)
    if tuple(header) != _NAMES:
        raise InputError(path, "header", "not a results file of this hieropt explore (other columns)",
                         "give another --out file, or delete this one to start over")
    rows = []
    for i, values in enumerate(reader, start=2):
        if len(values) != len(_NAMES):
            raise InputError(path, f"line {i}", f"{len(values)} fields, expected {len(_NAMES)}",
                             "delete the damaged line (it is solved again) or the file")
        rows.append(_check_hash(_typed(dict(zip(_NAMES, values, strict=True))), path, i, space_hash))
    return rows


def _check_hash(row: dict[str, Any], path: Path, where: Any, space_hash: str) -> dict[str, Any]:
    if row["space_hash"] != space_hash:
        raise InputError(path, f"line {where} space_hash", f"written for another space or objective "
                         f"({row['space_hash']}, this sweep is {space_hash})",
                         "give another --out file, or delete this one to start over")
    return row


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a results file written by :func:`explore` (CSV, or Parquet with pyarrow), typed per
    :data:`COLUMNS`, without checking which space wrote them."""
    path = Path(path)
    if path.suffix == ".parquet":
        pq = _pyarrow(path)
        return [_typed(r) for r in pq.read_table(path).to_pylist()]
    raw = path.read_text(encoding="utf-8")
    lines = raw.splitlines() if raw.endswith("\n") else raw.splitlines()[:-1]  # drop a line cut off mid-write
    return [_typed(r) for r in csv.DictReader(lines)]


def _pyarrow(path: Path):
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(path, None, "writing or reading Parquet needs pyarrow, which is not installed",
                         "pip install pyarrow, or give a .csv file") from None
    return pq


def _arrow_schema():
    import pyarrow as pa

    types = {str: pa.string(), int: pa.int64(), float: pa.float64()}
    return pa.schema([(n, types[k]) for n, k in COLUMNS])


class _Sink:
    """Streams rows to ``out`` as they arrive: CSV directly; Parquet through a CSV journal beside it
    (``OUT.partial.csv``), rewritten into the Parquet file when the sweep completes."""

    def __init__(self, out: Path, space_hash: str):
        self.out = out
        self.hash = space_hash
        self.parquet = out.suffix == ".parquet"
        self.journal = out.with_name(out.name + ".partial.csv") if self.parquet else out
        self.previous: list[dict[str, Any]] = []
        if self.parquet:
            pq = _pyarrow(out)
            if out.exists():
                table = pq.read_table(out)
                if tuple(table.column_names) != _NAMES:
                    raise InputError(out, "columns", "not a results file of this hieropt explore (other columns)",
                                     "give another --out file, or delete this one to start over")
                self.previous = [_check_hash(_typed(r), out, i, self.hash)
                                 for i, r in enumerate(table.to_pylist(), start=1)]
        self.previous += _read_csv(self.journal, self.hash, repair=True)
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.journal.exists() or self.journal.stat().st_size == 0
        self.file = self.journal.open("a", encoding="utf-8", newline="")
        self.writer = csv.writer(self.file, lineterminator="\n")
        if fresh:
            self.writer.writerow(_NAMES)
            self.file.flush()
        self.new: list[dict[str, Any]] = []

    def write(self, row: dict[str, Any]) -> None:
        self.writer.writerow([_text(row[n]) for n in _NAMES])
        self.file.flush()
        self.new.append(row)

    def close(self, complete: bool) -> None:
        self.file.close()
        if not (complete and self.parquet):
            return
        import pyarrow as pa

        pq = _pyarrow(self.out)
        rows = self.previous + self.new
        tmp = self.out.with_name(self.out.name + ".tmp")
        pq.write_table(pa.Table.from_pylist([{n: r[n] for n in _NAMES} for r in rows], schema=_arrow_schema()), tmp)
        os.replace(tmp, self.out)
        self.journal.unlink(missing_ok=True)


# ----------------------------------------------------------------------------------------------- the sweep
@dataclass(frozen=True)
class Exploration:
    """The outcome of :func:`explore`.

    Attributes:
        space: the space as solved (objective overrides applied).
        space_hash: fingerprint of ``space`` written into every row (a resume checks it).
        enumeration: the candidates, their duplicates and the skipped shapes.
        rows: one row per candidate (see :data:`COLUMNS`), in enumeration order, this run's and resumed ones.
        solved_ids: candidates solved by this call, in completion order.
        resumed_ids: candidates read back from ``out`` and not solved again.
        backend: ``"serial"``, ``"pool(n)"`` or ``"dask(address)"``.
        seconds: wall time of the sweep (enumeration included).
        out: the results file, or None.
    """

    space: ShapeSpace
    space_hash: str
    enumeration: Enumeration
    rows: tuple[dict[str, Any], ...]
    solved_ids: tuple[str, ...]
    resumed_ids: tuple[str, ...]
    backend: str
    seconds: float
    out: Path | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def ranking(self) -> list[dict[str, Any]]:
        """Rows with an objective value, best first, each with its ``rank``.

        Optima within the solver's gap target of each other (1e-8 relative; 1e-7 for performance_per_cost) are not
        told apart: they share a rank and are ordered by the other figure (network cost for performance, iteration
        time otherwise), then by id.
        """
        if "ranking" not in self._cache:
            self._cache["ranking"] = _rank([r for r in self.rows if r["status"] in SOLVED], self.space.objective)
        return self._cache["ranking"]

    @property
    def failed(self) -> list[dict[str, Any]]:
        """Rows without a certified answer (infeasible, unbounded, error)."""
        return [r for r in self.rows if r["status"] not in SOLVED]

    @property
    def pareto(self) -> list[dict[str, Any]]:
        """Candidates on the (iteration time, network cost) Pareto front of their optima, fastest first.

        A candidate is dominated when another is cheaper and not slower; times within the gap target (1e-8) of each
        other count as equal (the optima are proven to that gap only), and so do costs: of equally fast candidates
        only the cheapest is on the front, and of ties in both the first in (time, cost, id) order.
        """
        ok = sorted((r for r in self.rows if r["status"] in SOLVED),
                    key=lambda r: (r["iteration_time_ns"], r["network_cost_usd"], r["shape_id"]))
        times = [r["iteration_time_ns"] for r in ok]
        prefix_min = list(itertools.accumulate((r["network_cost_usd"] for r in ok), min))
        front = []
        for i, r in enumerate(ok):
            j = bisect.bisect_right(times, r["iteration_time_ns"] * (1 + REL_GAP)) - 1
            cost = r["network_cost_usd"]
            cheaper = prefix_min[j] < cost * (1 - REL_GAP)  # a cheaper one, at most as slow
            tied = i > 0 and prefix_min[i - 1] <= cost * (1 + REL_GAP)  # an earlier one as fast and as cheap
            if not (cheaper or tied):
                front.append(r)
        return front

    def by_dims(self) -> list[dict[str, Any]]:
        """Per dimension count: candidates (with duplicates), solved, the best one and its scale-out figures, and the
        least scale-out spend and NIC count among that count's solved candidates."""
        out = []
        ranking = self.ranking
        for D in range(self.space.min_dims, self.space.max_dims + 1):
            rows = [r for r in self.rows if r["n_dims"] == D]
            solved = [r for r in ranking if r["n_dims"] == D]
            entry: dict[str, Any] = {"n_dims": D, "candidates": sum(1 + (r["equivalents"] or 0) for r in rows),
                                     "solved": len(solved), "best": solved[0] if solved else None}
            entry["min_scaleout_usd"] = min((r["scaleout_usd"] for r in solved), default=None)
            nics = [r["nics"] for r in solved if r["nics"] is not None]
            entry["min_nics"] = min(nics, default=None)
            out.append(entry)
        return out


def _rank(rows: list[dict[str, Any]], objective: str) -> list[dict[str, Any]]:
    tol = PPC_GAP if objective == "performance_per_cost" else REL_GAP
    second = "network_cost_usd" if objective == "performance" else "iteration_time_ns"
    rows = sorted(rows, key=lambda r: (r["objective_value"], r["shape_id"]))
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(rows):
        lead = rows[i]["objective_value"]
        j = i
        while j < len(rows) and rows[j]["objective_value"] <= lead + tol * abs(lead):
            j += 1
        tied = sorted(rows[i:j], key=lambda r: (r[second], r["shape_id"]))
        out += [{**r, "rank": i + 1} for r in tied]
        i = j
    return out


def space_fingerprint(space: ShapeSpace) -> str:
    """Short sha256 of the space (objective and targets included): a results file belongs to one fingerprint."""
    text = json.dumps(space.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _with_overrides(space: ShapeSpace, objective: str | None, max_iteration_time_ns: float | None,
                    max_network_cost_usd: float | None) -> ShapeSpace:
    update = {k: v for k, v in (("objective", objective), ("max_iteration_time_ns", max_iteration_time_ns),
                                ("max_network_cost_usd", max_network_cost_usd)) if v is not None}
    if not update:
        return space
    if objective is not None and objective not in OBJECTIVES:
        raise InputError("--objective", None, f"unknown objective {objective!r}", f"use one of {', '.join(OBJECTIVES)}")
    for k in ("max_iteration_time_ns", "max_network_cost_usd"):
        v = update.get(k)
        if v is not None and not (math.isfinite(v) and v > 0):
            raise InputError(f"--{k}", None, f"{v:g} is not a positive number", "give a finite value > 0")
    out = space.model_copy(update=update)
    if out.objective == "min_cost" and out.max_iteration_time_ns is None:
        raise InputError("max_iteration_time_ns", None, "missing for objective min_cost",
                         "give the iteration-time target in ns (--max-time-ns)")
    return out


def _serial(space: ShapeSpace, todo: list[Candidate]) -> Iterator[dict[str, Any]]:
    for cand in todo:
        yield solve_candidate(space, cand)


def _pool(space: ShapeSpace, todo: list[Candidate], workers: int, started: Callable[[], None]):
    ex = ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(space,))
    try:
        futures = [ex.submit(_pool_task, cand) for cand in todo]  # workers start here, before any progress thread
        started()
        for f in as_completed(futures):
            yield f.result()
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


def _client_address(client: Any) -> str:
    try:
        return str(client.scheduler.address)
    except AttributeError:
        return "client"


def _dask(space: ShapeSpace, todo: list[Candidate], address: Any, started: Callable[[], None]):
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError:
        raise InputError("--dask", None, "Dask is not installed",
                         "pip install 'hieropt[explore]' (dask[distributed]), or run without --dask") from None
    own = not isinstance(address, Client)
    try:
        client = Client(address, timeout="20s") if own else address
    except (OSError, TimeoutError) as e:
        raise InputError("--dask", str(address), f"cannot reach the Dask scheduler: {e}",
                         "start one (dask scheduler; dask worker ADDRESS) or check the address") from None
    try:
        space_f = client.scatter(space, broadcast=True)
        futures = [client.submit(solve_candidate, space_f, cand, pure=False) for cand in todo]
        started()
        for f in dask_completed(futures):
            yield f.result()
    finally:
        if own:
            client.close()


def explore(space: ShapeSpace | str | Path, objective: str | None = None, *,
            max_iteration_time_ns: float | None = None, max_network_cost_usd: float | None = None,
            out: str | Path | None = None, workers: int | None = None, dask: Any = None, prune: bool | None = None,
            progress: bool = False, on_row: Callable[[dict[str, Any]], None] | None = None) -> Exploration:
    """Enumerate every shape of ``space``, solve each candidate exactly and rank them by their proven optimum.

    Args:
        space: a :class:`~hieropt.spec.space.ShapeSpace` or the path of a space TOML file.
        objective, max_iteration_time_ns, max_network_cost_usd: override the space's (as :func:`hieropt.solve`).
        out: results file, ``.csv`` (or ``.parquet``, needs pyarrow): one row per candidate, written as results
            arrive; when it exists, its rows are kept and their candidates not solved again (resume).
        workers: processes of the local pool (default: CPU count); 1 solves in this process.
        dask: a Dask scheduler address (``"tcp://host:8786"``) or a ``distributed.Client``: the same tasks run on
            that cluster (``workers`` is then ignored); hieropt must be importable on its workers.
        prune: remove exact duplicates (default: the space's ``prune_symmetric``).
        progress: show a progress bar on stderr (rich).
        on_row: called in this process with every new row once it is written.

    Returns:
        An :class:`Exploration` (rows, ranking, Pareto set of (time, cost), per-dimension-count summary).

    Raises:
        InputError: bad space, overrides, results file (another space or version), Parquet without pyarrow, Dask
            not installed or not reachable.
    """
    start = time.perf_counter()
    if not isinstance(space, ShapeSpace):
        space = load_space(space)
    space = _with_overrides(space, objective, max_iteration_time_ns, max_network_cost_usd)
    if prune is not None and prune != space.prune_symmetric:
        space = space.model_copy(update={"prune_symmetric": prune})
    if workers is not None and workers < 1:
        raise InputError("--workers", None, f"{workers} workers", "give at least 1")
    digest = space_fingerprint(space)
    enum = candidates(space)
    sink = _Sink(Path(out), digest) if out is not None else None
    done = {r["shape_id"]: r for r in (sink.previous if sink else [])}
    todo = [c for c in enum.candidates if c.id not in done]
    resumed = tuple(c.id for c in enum.candidates if c.id in done)
    n = workers or os.cpu_count() or 1
    if dask is not None:
        backend = f"dask({dask if isinstance(dask, str) else _client_address(dask)})"
    else:
        backend = "serial" if n == 1 or len(todo) <= 1 else f"pool({min(n, len(todo))})"
    bar = _Progress(progress, space.name, backend, len(todo))
    if dask is not None:
        results = _dask(space, todo, dask, bar.start)
    elif backend == "serial":
        bar.start()
        results = _serial(space, todo)
    else:
        results = _pool(space, todo, min(n, len(todo)), bar.start)
    solved: list[str] = []
    complete = False
    try:
        for row in results:
            row["space_hash"] = digest
            eq = enum.equivalents.get(row["shape_id"], ())
            row["equivalents"], row["equivalent_ids"] = len(eq), ";".join(eq)
            row = _typed(row)
            done[row["shape_id"]] = row
            solved.append(row["shape_id"])
            if sink is not None:
                sink.write(row)
            bar.advance()
            if on_row is not None:
                on_row(row)
        complete = True
    finally:
        bar.stop()
        if sink is not None:
            sink.close(complete)
    rows = tuple(done[c.id] for c in enum.candidates if c.id in done)
    return Exploration(space, digest, enum, rows, tuple(solved), resumed, backend, time.perf_counter() - start,
                       Path(out) if out is not None else None)


class _Progress:
    """A rich progress bar on stderr (or nothing)."""

    def __init__(self, enabled: bool, name: str, backend: str, total: int):
        self.bar = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

            self.bar = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True))
            self.task = self.bar.add_task(f"explore {name} [{backend}]", total=total)

    def start(self) -> None:
        if self.bar is not None:
            self.bar.start()

    def advance(self) -> None:
        if self.bar is not None:
            self.bar.advance(self.task)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
