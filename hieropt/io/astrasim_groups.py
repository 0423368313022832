"""Named parallel groups (``mapping.groups``: tp, dp, ep, edp, pp, ...) as whole ASTRA-sim
dimensions, and the simulator's NPU numbering: which pipeline stage an NPU runs and which NPU its
neighbouring stage is.

ASTRA-sim's collectives span whole simulator dimensions (``involved_dim``), so every hieropt
dimension d is split into one simulator dimension per *atomic* group that spans part of it: the
groups tile the dimension (prod_X g^X_d = p_d, :mod:`hieropt.model.groups`), in the order tp, cp,
ep, edp, dp, pp, then the other names alphabetically (Megatron-LM's rank order, innermost first),
each taking a factor g^X_d. A group that is the product of others on every dimension (dp = ep x edp
for a mixture-of-experts plan, edp = dp for a dense one) is not a factor of its own: it spans its
parts' simulator dimensions. A phase group that no named group equals is a group of its own (after
the named ones); otherwise a phase group (``forward`` / ``input_grad`` / ``weight_grad``) spans the
dimensions of the named group of equal sizes (tp, then dp, ...), or of the factors whose sizes
multiply to it. Every factor of a hieropt dimension keeps its per-NPU bandwidth B, or under
``group_bandwidth = "links"`` the share its group's links carry
(:func:`hieropt.io.astrasim_network.sim_network`); a collective over a group that spans several
factors of one dimension is hierarchical on the simulator (exact with one chunk per collective:
sequential dimensions), where hieropt has the factors share one B (with several chunks the
simulator would overlap them, each at its own B: ``simulate`` picks one chunk for such a group,
:func:`hieropt.io.astrasim_network.shared_dimension`).

NPU numbering: ASTRA-sim numbers NPUs in mixed radix over its dimensions, dimension 0 fastest. The
pipeline group's factors (``pp``) give each NPU its coordinates along the pipeline; stage r sits at
the r-th coordinate tuple of a boustrophedon (snake) order, so neighbouring stages differ in one
coordinate by one: each send crosses one simulator dimension, one hop on a Ring, FullyConnected or
Switch (two hops through the switch)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InputError
from ..spec import PHASES, Instance
from ..spec.tiling import (
    ORDER,
    PIPELINE,
    derived_parts,
    factor_subset,
    group_factors,
    mapping_groups,
    ordered,
    tiling_problem,
)

PHASE_GROUP = {"forward": ("tp",), "input_grad": ("tp",), "weight_grad": ("dp", "edp")}
"""The named groups a phase group is looked up in first (equal sizes), before any factor product."""


@dataclass(frozen=True)
class GroupLayout:
    """Named groups as simulator dimensions.

    Attributes:
        factors: per hieropt dimension, ``(atomic group, NPUs)`` of each simulator dimension it
            becomes, innermost first (one ``("", p)`` entry for a dimension no group splits).
        groups: group name (named groups and the phases) -> simulator dimensions it spans (indices
            into the flattened ``factors``).
        sizes: NPUs of each simulator dimension.
        stages: coordinates along the pipeline factors of every stage, stage 0 first (snake order);
            ``((),)`` when there is no pipeline group.
        pp_dims: the simulator dimensions of the pipeline group, in the order of a stage's
            coordinates.
    """

    factors: tuple[tuple[tuple[str, int], ...], ...]
    groups: dict[str, tuple[int, ...]]
    sizes: tuple[int, ...]
    stages: tuple[tuple[int, ...], ...]
    pp_dims: tuple[int, ...]

    @property
    def npus(self) -> int:
        """Total NPUs."""
        return math.prod(self.sizes)

    def coordinates(self, npu: int) -> list[int]:
        """The simulator coordinates of ``npu`` (mixed radix, dimension 0 fastest)."""
        out = []
        for s in self.sizes:
            out.append(npu % s)
            npu //= s
        return out

    def npu(self, coordinates: Sequence[int]) -> int:
        """The NPU at ``coordinates``."""
        n, stride = 0, 1
        for c, s in zip(coordinates, self.sizes, strict=True):
            n += c * stride
            stride *= s
        return n

    def stage_of(self, npu: int) -> int:
        """The pipeline stage ``npu`` runs (0 without a pipeline group)."""
        c = self.coordinates(npu)
        return self._stage_index[tuple(c[s] for s in self.pp_dims)]

    @property
    def _stage_index(self) -> dict[tuple[int, ...], int]:
        cached = self.__dict__.get("_index")
        if cached is None:
            cached = {c: r for r, c in enumerate(self.stages)}
            object.__setattr__(self, "_index", cached)
        return cached

    def peer(self, npu: int, stage: int) -> int:
        """The NPU of ``stage`` with ``npu``'s coordinates in every other group (its pipeline
        neighbour)."""
        c = self.coordinates(npu)
        for s, x in zip(self.pp_dims, self.stages[stage], strict=True):
            c[s] = x
        return self.npu(c)

    def npus_of_stage(self, stage: int) -> list[int]:
        """Every NPU of ``stage``, ascending."""
        return [n for n in range(self.npus) if self.stage_of(n) == stage]

    def crossed(self, a: int, b: int) -> int:
        """Simulator dimensions in which stages ``a`` and ``b`` differ (1 for neighbours in the
        snake order)."""
        return sum(x != y for x, y in zip(self.stages[a], self.stages[b], strict=True))


def snake(radices: Sequence[int]) -> list[tuple[int, ...]]:
    """Every coordinate tuple of ``radices`` (first coordinate fastest) in boustrophedon order:
    consecutive tuples
    differ in one coordinate by one. Example: (2, 2) -> (0, 0), (1, 0), (1, 1), (0, 1)."""
    if not radices:
        return [()]
    inner = snake(radices[:-1])
    out = []
    for hi in range(radices[-1]):
        out += [c + (hi,) for c in (inner if hi % 2 == 0 else inner[::-1])]
    return out


def group_layout(instance: Instance, source: str = "ASTRA-sim export") -> GroupLayout:
    """The simulator dimensions of ``instance``'s named groups (module docstring).

    Raises:
        InputError: the jobs' mappings name different groups, the groups do not tile a dimension, or
            a group (or a phase group) is no product of the factors (the fix: groups that tile every
            dimension).
    """
    jobs = instance.jobs
    mapping = jobs[0].mapping
    for job in jobs[1:]:
        if job.mapping.groups != mapping.groups:
            raise InputError(
                source,
                "mapping.groups",
                "the workloads' mappings name different groups, which one "
                "set of simulator dimensions cannot hold",
                "give every workload the same groups",
            )
    sizes = tuple(d.npus for d in instance.network.dims)
    groups = mapping_groups(
        mapping.groups, {phase: tuple(mapping.group(phase)) for phase in PHASES}, sizes
    )
    if (why := tiling_problem(groups, sizes)) is not None:
        raise InputError(source, f"mapping.{why[0]}", why[1], why[2])
    atoms = group_factors(groups, sizes)
    factors, flat, where = [], [], {}
    for d, p in enumerate(sizes):
        row = [(a, groups[a][d]) for a in atoms if groups[a][d] > 1]
        for a, n in row or [("", p)]:
            where[(a, d)] = len(flat)
            flat.append(n)
        factors.append(tuple(row) or (("", p),))
    spans: dict[str, tuple[int, ...]] = {}
    for name in ordered(groups):  # (every group is a product of factors: tiling_problem)
        g = groups[name]
        sub = (
            ()
            if all(x == 1 for x in g)
            else (name,)
            if name in atoms
            else derived_parts(name, g, atoms, groups) or factor_subset(g, atoms, groups)
        )
        spans[name] = tuple(
            sorted(where[(a, d)] for a in sub for d in range(len(sizes)) if groups[a][d] > 1)
        )
    for phase in [ph for ph in PHASES if ph not in spans]:
        g = tuple(mapping.group(phase))
        named = [n for n in PHASE_GROUP[phase] + tuple(ordered(groups)) if groups.get(n) == g]
        sub = (named[0],) if named else factor_subset(g, atoms, groups)
        if sub is None:
            if all(x == 1 for x in g):
                spans[phase] = ()
                continue
            raise InputError(
                source,
                f"mapping.{phase}",
                f"{list(g)} is no product of the named groups {', '.join(atoms)}",
                "give the phase the sizes of a named group",
            )
        spans[phase] = tuple(sorted({s for n in sub for s in spans[n]}))
    pp_dims = spans.get(PIPELINE, ())
    stages = tuple(snake([flat[s] for s in pp_dims]))
    return GroupLayout(tuple(factors), spans, tuple(flat), stages, pp_dims)


__all__ = ["GroupLayout", "group_layout", "snake", "ORDER", "PIPELINE"]
