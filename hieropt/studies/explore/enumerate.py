"""Enumeration of a shape space: every valid shape (ordered factorisations of N into dimensions at
levels with allowed building blocks), the parallel mapping of each, and the Instance of one
candidate."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...cache import current
from ...errors import InputError
from ...model.mapping import derive_mapping, lowest_dims_group
from ...spec import Instance, Job, LinearConstraint, Mapping
from ...spec.network import Dimension, Network
from ...spec.space import ShapeSpace

ABBR = {"Ring": "R", "FullyConnected": "FC", "Switch": "SW"}
"""Building-block abbreviations used in shape ids (R4 = Ring of 4, FC8 = FullyConnected 8, SW32 =
Switch 32)."""


# -------------------------------------------------------------------------------------- enumeration
@dataclass(frozen=True)
class DimChoice:
    """One dimension of a shape: the index of its level in ``space.levels``, its building block, its
    NPU count."""

    level: int
    block: str
    npus: int


@dataclass(frozen=True)
class Candidate:
    """A shape with the parallel mapping of every workload: what one solve is about.

    Attributes:
        id: stable id, e.g. ``"chiplet:R4 package:FC8 node:R4 pod:SW32"``; under ``all_placements``
            followed by `` | tp 4x4x1x1`` (the TP group on each dimension; ``;`` between workloads).
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
        if (
            lv.max_npus_within is not None
            and math.prod(d.npus for d in shape if d.level <= k) > lv.max_npus_within
        ):
            return False
    return True


def enumerate_shapes(space: ShapeSpace) -> list[tuple[DimChoice, ...]]:
    """Every valid shape of ``space``: ordered factorisations of ``space.npus`` into ``min_dims`` ..
    ``max_dims`` factors, each factor a dimension at a level (levels non-decreasing, at most
    ``max_dims`` per level, sizes within the level's range) with one of the level's building blocks;
    a Switch only as the last dimension when ``switch_only_at_top``; the levels' ``min_dims``,
    ``max_npus`` and ``max_npus_within`` limits met.

    Returns:
        shapes ordered by dimension count, then level, size and block (the blocks in the level's
        order).
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


def no_shape(name: str, min_dims: int, max_dims: int, npus: int,
             switch_blocked: bool = False) -> InputError:
    """The error of a shape space with no shape on ``npus`` NPUs. ``switch_blocked``: the space has
    shapes with ``switch_only_at_top = false`` (a Switch level below another level, e.g. an NVLink
    Switch under a scale-out Switch): the error names that as the cause and the fix."""
    problem = (f"no shape of {min_dims} to {max_dims} dimensions multiplies to {npus} NPUs "
               "within the levels' sizes and limits")
    if switch_blocked:
        return InputError(
            name, "switch_only_at_top",
            problem + " with switch_only_at_top = true (the default: a Switch only as the last "
            "dimension), and a level below the top offers only Switch",
            "set switch_only_at_top = false to allow a Switch below the top (e.g. an NVLink "
            "Switch under a scale-out Switch), or give that level another block (Ring, "
            "FullyConnected)")
    return InputError(name, "levels", problem,
                      f"widen the space's dims (now [{min_dims}, {max_dims}]), the levels' npus "
                      "ranges or max_dims, or their limits")


def shape_id(space: ShapeSpace, shape: tuple[DimChoice, ...]) -> str:
    """The stable id of a shape, e.g. ``"chiplet:R4 package:FC8 node:R4 pod:SW32"``."""
    return " ".join(f"{space.levels[d.level].name}:{ABBR[d.block]}{d.npus}" for d in shape)


def shape_npus(sid: str) -> tuple[int, ...]:
    """The NPUs of each dimension, innermost first, of a shape id (:func:`shape_id`'s
    ``"node:SW8 pod:SW512"``, or a fixed network's ``"fixed Switch8 x Switch512"``).

    Raises:
        ValueError: a token of the id ends in no NPU count."""
    tokens = [t for t in sid.split() if t not in ("fixed", "x")]
    out = []
    for t in tokens:
        digits = t[len(t.rstrip("0123456789")):]
        if not digits:
            raise ValueError(f"shape id {sid!r}: {t!r} gives no NPU count")
        out.append(int(digits))
    return tuple(out)


def shape_network(space: ShapeSpace, shape: tuple[DimChoice, ...]) -> Network:
    """The :class:`~hieropt.spec.Network` of a shape (blocks, sizes, the levels' cost classes and
    latencies)."""
    dims = []
    made = current().table("dimensions", 4096)  # (a space's shapes repeat them: validated once)
    for d in shape:
        lv = space.levels[d.level]
        args = (d.block, d.npus, lv.cost_class, lv.latency_ns, lv.algorithm)
        dim = made.get(args)
        if dim is None:
            dim = made.put(args, Dimension(block=d.block, npus=d.npus, cost_class=lv.cost_class,
                                           latency_ns=lv.latency_ns, algorithm=lv.algorithm))
        dims.append(dim)
    return Network(dims=tuple(dims))


def _tp_dp(sizes: tuple[int, ...], tp_group: tuple[int, ...]) -> Mapping:
    def build() -> Mapping:
        dp = tuple(p // g for p, g in zip(sizes, tp_group, strict=True))
        return Mapping(forward=tp_group, input_grad=tp_group, weight_grad=dp)

    # (a space's shapes repeat their mappings: each is validated once)
    return current().memo("tp_dp mappings", (sizes, tp_group), build, 1 << 16)


def _placements(sizes: tuple[int, ...], tp: int) -> list[tuple[int, ...]]:
    """Every TP group (g_d dividing p_d, product tp), lexicographically."""
    if not sizes:
        return [()] if tp == 1 else []
    out = []
    for g in _divisors(sizes[0], 1, sizes[0]):
        if tp % g == 0:
            out += [(g,) + rest for rest in _placements(sizes[1:], tp // g)]
    return out


def shape_mappings(space: ShapeSpace, shape: tuple[DimChoice, ...], sid: str,
                   net: Network | None = None) -> list[tuple[str, tuple[Mapping, ...]]]:
    """(candidate id, mappings per workload) of one shape (``net``: its :func:`shape_network`, when
    the caller has it); raises InputError when the rule cannot place a group."""
    net = shape_network(space, shape) if net is None else net
    sizes = tuple(d.npus for d in shape)
    if space.mapping_rule == "header":
        return [(sid, tuple(derive_mapping(job.workload, net, sid)[0] for job in space.jobs))]
    if space.mapping_rule == "tp_lowest":
        return [
            (sid, tuple(_tp_dp(sizes, lowest_dims_group(net, job.tp, sid)) for job in space.jobs))
        ]
    per_job = [_placements(sizes, job.tp) for job in space.jobs]
    for job, options in zip(space.jobs, per_job, strict=True):
        if not options:
            raise InputError(sid, "tp", f"a TP group of {job.tp} NPUs cannot be placed", "")
    combos: list[tuple[tuple[int, ...], ...]] = [()]
    for options in per_job:
        combos = [c + (g,) for c in combos for g in options]
    return [(f"{sid} | tp {'; '.join('x'.join(map(str, g)) for g in combo)}",
             tuple(_tp_dp(sizes, g) for g in combo)) for combo in combos]


def space_constraints(texts: tuple[str, ...], n_dims: int) -> tuple[LinearConstraint, ...]:
    """The space's constraint texts parsed for ``n_dims`` dimensions (one tuple per texts and
    ``n_dims`` in the active cache, shared by the candidates, whose design matrices are then
    computed once)."""
    from ...spec.space import constraint_for

    return current().memo("space constraints", (texts, n_dims),
                          lambda: tuple(constraint_for(t, n_dims) for t in texts), 256)


def build_instance(space: ShapeSpace, cand: Candidate) -> Instance:
    """The :class:`~hieropt.spec.Instance` of one candidate: the space's workloads, cost model,
    constraints, objective and training loop on the candidate's network and mappings."""
    jobs = [Job(workload=j.workload, mapping=m, weight=j.weight)
            for j, m in zip(space.jobs, cand.mappings, strict=True)]
    return Instance(
        name=cand.id,
        network=shape_network(space, cand.dims),
        workload=jobs[0].workload,
        mapping=jobs[0].mapping,
        workload_weight=jobs[0].weight,
        more_workloads=tuple(jobs[1:]),
        cost=space.cost,
        constraints=space_constraints(space.constraints, cand.n_dims),
        objective=space.objective,
        training_loop=space.training_loop,
        dimension_mode=space.dimension_mode,
        group_bandwidth=space.group_bandwidth,
        max_iteration_time_ns=space.max_iteration_time_ns,
        max_network_cost_usd=space.max_network_cost_usd,
    )
