"""A shape space: the networks an architect could build for N NPUs, stated once and explored
exactly.

A :class:`ShapeSpace` gives the total number of NPUs; the **levels** of the packaging hierarchy,
innermost first (e.g. chiplet, package, node, pod), each with the building blocks it allows, the
size range of one of its dimensions, its cost class and per-step latency, and how many dimensions it
may contribute; limits (NPUs per level, NPUs inside one unit of a level, Switch only at the top, the
number of dimensions); the workload(s) with their tensor-parallel degree; how parallel groups are
mapped onto a shape; the cost model; the design constraints (text, as in instance files, parsed for
every dimension count); and the objective. :mod:`hieropt.studies.explore` enumerates every
valid shape and solves each one exactly.

A **shape** is a sequence of dimensions, innermost first, each a (level, building block, NPU count);
the levels never decrease along the sequence and the NPU counts multiply to N.

Mapping rules (``mapping_rule``), for every workload (``tp``: its tensor-parallel degree):

- ``tp_lowest``: the TP group fills the lowest dimensions
  (:func:`hieropt.model.mapping.lowest_dims_group`: whole dimensions, then a divisor of the next
  one); the data-parallel (DP) group is the rest. Forward and input-gradient collectives run on the
  TP group, weight-gradient collectives on the DP group (Megatron-LM TP x DP, as hieropt derives
  from a ``HYBRID_TRANSFORMER`` header). A shape on which the TP group does not fill the lowest
  dimensions that way is skipped (and reported).
- ``all_placements``: every way to place the TP group's factors on the dimensions (a group size g_d
  dividing p_d on every dimension with product tp); DP is p_d / g_d. Each placement is a separate
  candidate.
- ``header``: the mapping the workload's ASTRA-sim header implies
  (:func:`hieropt.model.mapping.derive_mapping`), e.g. for
  DLRM or data-parallel workloads.

Constraint texts may write ``top`` for the index of the last dimension (``bw[top] <= 100``,
``sum(bw[:top]) >= 300``), so one text fits every dimension count. Units as everywhere in hieropt:
GB/s per NPU per dimension, ns, $.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Literal

from pydantic import Field, model_validator

from ..cache import current
from ..errors import InputError
from ..names import GROUP_BANDWIDTHS
from . import BLOCKS, Block, CostModel, LinearConstraint, NonNegFloat, Workload
from .base import Frozen

MAPPING_RULES = ("tp_lowest", "all_placements", "header")
MAX_DIMS = 8
"""Largest dimension count a space may ask for (the enumeration grows quickly with it)."""

_TOP_RE = re.compile(r"\btop\b")



class Level(Frozen):
    """One level of the packaging hierarchy (innermost first).

    Attributes:
        name: e.g. ``"chiplet"``, ``"package"``, ``"node"``, ``"pod"``; used in shape ids.
        blocks: building blocks a dimension at this level may use (Ring, FullyConnected, Switch).
        npus: (min, max) NPUs along one dimension at this level, inclusive, min >= 2.
        cost_class: the cost class of the cost model pricing this level's parts.
        latency_ns: per-step latency of a dimension at this level, ns (0: LIBRA's model).
        algorithm: collective algorithm for the latency step count (default: the building block's).
        min_dims, max_dims: how many dimensions this level contributes to a shape (default 0 to 1).
        max_npus: most NPUs along this level's dimensions together (the product of their sizes), or
            None.
        max_npus_within: most NPUs inside one unit of this level (the product of the sizes of every
            dimension at this level and below, e.g. 8 NPUs per package), or None.
    """

    name: str = Field(min_length=1)
    blocks: tuple[Block, ...] = Field(min_length=1)
    npus: tuple[int, int]
    cost_class: str = Field(min_length=1)
    latency_ns: NonNegFloat = 0.0
    algorithm: Literal["ring", "direct", "halving_doubling"] | None = None
    min_dims: int = Field(default=0, ge=0)
    max_dims: int = Field(default=1, ge=1)
    max_npus: int | None = Field(default=None, ge=2)
    max_npus_within: int | None = Field(default=None, ge=2)

    @model_validator(mode="after")
    def _ranges(self) -> Level:
        lo, hi = self.npus
        if lo < 2 or hi < lo:
            raise ValueError(
                f"npus: range [{lo}, {hi}] is empty or below 2; fix: give [min, max] with 2 "
                "<= min <= max"
            )
        if len(set(self.blocks)) != len(self.blocks):
            raise ValueError("blocks: a building block is listed twice; fix: list each block once")
        if self.min_dims > self.max_dims:
            raise ValueError(
                f"min_dims: {self.min_dims} exceeds max_dims {self.max_dims}; fix: lower min_dims"
            )
        return self


class SpaceJob(Frozen):
    """A workload of the space, its weight in the objective, and its tensor-parallel degree (None
    under the ``header`` rule, which takes the groups from the workload's header)."""

    workload: Workload
    weight: float = Field(default=1.0, gt=0, allow_inf_nan=False)
    tp: int | None = Field(default=None, ge=1)


class ShapeSpace(Frozen):
    """Every network shape worth considering for ``npus`` NPUs, with the problem each shape is
    solved for.

    See the module docstring for the meaning of shapes, levels and mapping rules. Raises pydantic's
    ``ValidationError`` with ``"<field>: <problem>; fix: <fix>"`` messages (the reader turns them
    into :class:`hieropt.errors.InputError`).
    """

    name: str = Field(min_length=1)
    npus: int = Field(ge=2)
    min_dims: int = Field(default=2, ge=1)
    max_dims: int = Field(default=4, ge=1, le=MAX_DIMS)
    levels: tuple[Level, ...] = Field(min_length=1)
    switch_only_at_top: bool = True
    scale_out_level: str | None = None
    jobs: tuple[SpaceJob, ...] = Field(min_length=1)
    mapping_rule: Literal["tp_lowest", "all_placements", "header"] = "tp_lowest"
    cost: CostModel
    constraints: tuple[str, ...] = ()
    objective: Literal["performance", "performance_per_cost", "min_cost"]
    training_loop: Literal["no_overlap", "tp_dp_overlap", "tp_dp_overlap_cross", "recompute"]
    dimension_mode: Literal["concurrent", "sequential"] = "concurrent"
    group_bandwidth: Literal[GROUP_BANDWIDTHS] = "links"
    """How a group spanning part of a dimension is priced (as in instance files; ``links``: the
    links it reaches there, :func:`hieropt.model.algorithms.group_links`)."""
    max_iteration_time_ns: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_network_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    nic_gbps: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    nic_npus: int = Field(default=1, ge=1)
    prune_symmetric: bool = True

    @model_validator(mode="after")
    def _consistent(self) -> ShapeSpace:
        if self.min_dims > self.max_dims:
            raise ValueError(
                f"dims: min {self.min_dims} exceeds max {self.max_dims}; fix: give [min, max]"
            )
        if self.npus % self.nic_npus:
            raise ValueError(
                f"nic_npus: {self.nic_npus} does not divide the {self.npus} NPUs; fix: give "
                "the NPUs "
                "of one node (whose NICs are bought together), or 1"
            )
        self._check_levels()
        self._check_jobs()
        if self.objective == "min_cost" and self.max_iteration_time_ns is None:
            raise ValueError("max_iteration_time_ns: missing for objective min_cost; "
                             "fix: give the time target in ns")
        self._check_constraints()
        return self

    def _check_levels(self) -> None:
        """Refuse two levels of one name, an unknown ``scale_out_level``, a level whose cost class
        is unknown or (allowing a Switch) has no switch or NIC price, and levels whose
        ``min_dims`` add up to more than ``max_dims`` (in that order)."""
        names = [lv.name for lv in self.levels]
        if len(set(names)) != len(names):
            raise ValueError("levels: two levels share a name; fix: give every level its own name")
        if self.scale_out_level is not None and self.scale_out_level not in names:
            raise ValueError(
                f"scale_out_level: unknown level {self.scale_out_level!r}; fix: use one of {names}"
            )
        for i, lv in enumerate(self.levels):
            cc = self.cost.classes.get(lv.cost_class)
            if cc is None:
                raise ValueError(
                    f"levels[{i}].cost_class: unknown cost class {lv.cost_class!r}; fix: "
                    "use one of "
                    f"{', '.join(sorted(self.cost.classes))} or add it to the cost model"
                )
            if "Switch" in lv.blocks and (
                cc.switch_usd_per_gbps is None or cc.nic_usd_per_gbps is None
            ):
                raise ValueError(
                    f"cost.{lv.cost_class}: level {lv.name!r} allows a Switch but its cost "
                    "class has no "
                    "switch or NIC price; fix: add switch_usd_per_gbps and nic_usd_per_gbps"
                )
        if sum(lv.min_dims for lv in self.levels) > self.max_dims:
            raise ValueError(
                "levels: the levels' min_dims add up to more than max_dims "
                f"{self.max_dims}; fix: raise "
                "the dimension count or lower min_dims"
            )

    def _check_jobs(self) -> None:
        """Refuse a job whose ``tp`` does not suit the mapping rule: given with the header rule;
        missing, not dividing ``npus`` or giving groups its workload's header contradicts with the
        other rules."""
        for j, job in enumerate(self.jobs):
            if self.mapping_rule == "header":
                if job.tp is not None:
                    raise ValueError(
                        f"workloads[{j}].tp: the header rule takes the groups from the workload's "
                        "header; fix: remove tp or use mapping rule tp_lowest / all_placements"
                    )
                continue
            if job.tp is None:
                raise ValueError(
                    f"workloads[{j}].tp: missing: the {self.mapping_rule} rule needs the "
                    "tensor-parallel "
                    "degree; fix: give tp (1 for a purely data-parallel workload)"
                )
            if self.npus % job.tp:
                raise ValueError(
                    f"workloads[{j}].tp: {job.tp} does not divide {self.npus} NPUs; fix: "
                    "use a divisor "
                    f"of {self.npus}"
                )
            groups = {
                "forward": (job.tp,),
                "input_grad": (job.tp,),
                "weight_grad": (self.npus // job.tp,),
            }
            if wrong := job.workload.mapping_mismatch(
                groups, f" (the {self.mapping_rule} rule gives it npus / tp)"
            ):
                raise ValueError(
                    f"workloads[{j}]: the {self.mapping_rule} rule on {self.npus} NPUs with tp "
                    f"{job.tp} gives {wrong[0]}; fix: {wrong[1]}"
                )

    def _check_constraints(self) -> None:
        """Refuse a constraint text that does not parse for every dimension count from ``min_dims``
        to ``max_dims`` (:func:`constraints_problem`)."""
        problem = constraints_problem(self.constraints, range(self.min_dims, self.max_dims + 1))
        if problem is not None:
            raise ValueError(problem)

    @property
    def scale_out_index(self) -> int:
        """Index of the scale-out level (``scale_out_level``, default: the last level)."""
        if self.scale_out_level is None:
            return len(self.levels) - 1
        return [lv.name for lv in self.levels].index(self.scale_out_level)

    def constraints_for(self, n_dims: int) -> tuple[LinearConstraint, ...]:
        """The design constraints parsed for a shape of ``n_dims`` dimensions (``top`` = ``n_dims -
        1``)."""
        return tuple(constraint_for(t, n_dims) for t in self.constraints)


def resolve_top(text: str, n_dims: int) -> str:
    """A space's constraint text for ``n_dims`` dimensions with ``top`` written as ``n_dims - 1``
    (the text an instance file takes)."""
    return _TOP_RE.sub(str(n_dims - 1), text)


def nic_count(npus: int, scale_out_gbps: list[float], nic_gbps: float, nic_npus: int = 1) -> int:
    """The scale-out NICs of a cluster: whole NICs per group of ``nic_npus`` NPUs (1: per NPU; a
    node's NPU count when a node's NICs serve all its NPUs), on every scale-out dimension:
    NICs = (N / s) sum_d ceil(s B_d / nic_gbps), s = ``nic_npus``, B_d each scale-out dimension's
    GB/s per NPU (a dimension has its own ports; a NIC is bought whole). A relative 1e-12 below a
    whole number counts as it (the solver's round-off).

    Raises:
        ValueError: ``nic_npus`` does not divide ``npus``.
    """
    if npus % nic_npus:
        raise ValueError(
            f"nic_npus: {nic_npus} does not divide the {npus} NPUs; fix: give the NPUs per node"
        )
    per_group = sum(math.ceil(nic_npus * float(b) / nic_gbps * (1 - 1e-12)) for b in scale_out_gbps)
    return npus // nic_npus * per_group


def constraints_problem(texts: Sequence[str], counts: Sequence[int]) -> str | None:
    """Why a space's constraint ``texts`` (``top`` = the last dimension) cannot be parsed for every
    dimension count in ``counts`` (a fixed network's one, or a shape space's ``min_dims`` to
    ``max_dims``), as ``"constraints[i]: '<text as written>': <problem>; fix: <fix>"`` for the
    first text that fails, at the smallest count it fails on; None when all parse. A text that
    parses for another of the counts ``does not fit`` the one it fails on (the fix then also names
    ``sum(bw)`` and ``bw[top]``, which fit every count); the problem and fix are
    :func:`hieropt.spec.constraint_text.parse_constraint`'s, its columns the text's."""
    for i, text in enumerate(texts):
        for n in counts:
            try:
                constraint_for(text, n)
            except InputError as e:
                shown = e.field.removeprefix("constraint ") if e.field else repr(text)
                fix = e.fix or "write it for every dimension count"
                if any(_parses(text, m) for m in counts if m != n):
                    dims = f"{n} dimension{'s' if n != 1 else ''}"
                    return (f"constraints[{i}]: {shown} does not fit {dims}: {e.problem}; "
                            f"fix: {fix} (sum(bw), or bw[top] for the last dimension)")
                return f"constraints[{i}]: {shown}: {e.problem}; fix: {fix}"
    return None


def _parses(text: str, n_dims: int) -> bool:
    try:
        constraint_for(text, n_dims)
    except InputError:
        return False
    return True


def constraint_for(text: str, n_dims: int) -> LinearConstraint:
    """Parse one constraint text for ``n_dims`` dimensions, ``top`` standing for ``n_dims - 1``. The
    last 256 (text, n_dims) pairs are kept in the active cache (the result is frozen; a sweep asks
    for the same few for each candidate).

    Raises:
        InputError: the text is not a linear constraint on ``n_dims`` dimensions.
    """
    return current().memo("constraint_for", (text, n_dims), lambda: _parsed(text, n_dims), 256)


def _parsed(text: str, n_dims: int) -> LinearConstraint:
    from .constraint_text import parse_constraint

    c = parse_constraint(text, n_dims, "constraints", top=True)
    return c.model_copy(update={"text": text})


__all__ = [
    "Level",
    "SpaceJob",
    "ShapeSpace",
    "MAPPING_RULES",
    "MAX_DIMS",
    "BLOCKS",
    "constraint_for",
    "constraints_problem",
    "resolve_top",
    "nic_count",
]
