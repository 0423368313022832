"""Frozen, validated statement of a problem instance (pydantic v2 models).

Units are in the field names: ``*_ns`` nanoseconds, ``*_bytes`` bytes, ``*_gbps`` GB/s per NPU per dimension with
1 GB = 1e9 bytes (so 1 GB/s = 1 byte/ns), ``*_usd_per_gbps`` dollars per GB/s of per-NPU bandwidth.

Every model forbids unknown keys (a typo is an error, never a silent default) and is immutable. Cross-field rules
(group sizes fit the dimensions, cost classes exist, constraint widths match) live on :class:`Instance`; their
messages start with the field path and end with the fix, so readers can turn them into one-line
:class:`hieropt.errors.InputError` messages.
"""

from __future__ import annotations

import math
from enum import StrEnum
from functools import cached_property
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

BLOCKS = ("Ring", "FullyConnected", "Switch")
Block = Literal["Ring", "FullyConnected", "Switch"]
PHASES = ("forward", "input_grad", "weight_grad")
OBJECTIVES = ("performance",)
TRAINING_LOOPS = ("no_overlap",)
SENSES = ("<=", ">=", "==")

NonNegFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Collective(StrEnum):
    """Collective communication types (ASTRA-sim 1.0 / LIBRA names)."""

    NONE = "NONE"
    ALL_REDUCE = "ALLREDUCE"
    REDUCE_SCATTER = "REDUCESCATTER"
    ALL_GATHER = "ALLGATHER"
    ALL_TO_ALL = "ALLTOALL"


class Dimension(_Frozen):
    """One network dimension: building block, NPUs along it (>= 2), and the cost class of its parts."""

    block: Block
    npus: int = Field(ge=2)
    cost_class: str = Field(min_length=1)


class Network(_Frozen):
    """A multi-dimensional hierarchical network, dimension 0 first (innermost, e.g. chiplet)."""

    dims: tuple[Dimension, ...] = Field(min_length=1)

    @property
    def n_dims(self) -> int:
        """Number of dimensions D."""
        return len(self.dims)

    @property
    def npus_total(self) -> int:
        """N = product of the dimensions' NPU counts."""
        return math.prod(d.npus for d in self.dims)


class Phase(_Frozen):
    """One phase of a layer: compute time (ns), then a collective of ``size_bytes`` bytes.

    For all-gather the size is the per-NPU input shard (LIBRA and ASTRA-sim convention); for the other collectives
    it is the per-NPU buffer being reduced / exchanged.
    """

    compute_ns: NonNegFloat
    collective: Collective
    size_bytes: NonNegFloat


class Layer(_Frozen):
    """A layer: forward, input-gradient and weight-gradient phases; ``update_ns`` is ASTRA-sim's weight-update time
    (field 12 of the text format), kept for round-tripping but not part of LIBRA's no_overlap loop."""

    name: str
    forward: Phase
    input_grad: Phase
    weight_grad: Phase
    update_ns: NonNegFloat = 0.0


class PhaseTable(BaseModel):
    """Columnar view of a workload (numpy, shape ``(n_layers, 3)``, phases in :data:`PHASES` order)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    compute_ns: np.ndarray
    size_bytes: np.ndarray
    collective: np.ndarray  # dtype object: Collective members


class Workload(_Frozen):
    """A training workload: layers in forward order. ``policy`` is the ASTRA-sim header policy, if one was given."""

    name: str
    layers: tuple[Layer, ...] = Field(min_length=1)
    policy: str | None = None

    @cached_property
    def table(self) -> PhaseTable:
        """The layers as numpy arrays, built once (used by the traffic model and the evaluator)."""
        rows = [[getattr(layer, p) for p in PHASES] for layer in self.layers]
        return PhaseTable(
            compute_ns=np.array([[p.compute_ns for p in r] for r in rows], dtype=float),
            size_bytes=np.array([[p.size_bytes for p in r] for r in rows], dtype=float),
            collective=np.array([[p.collective for p in r] for r in rows], dtype=object),
        )


class Mapping(_Frozen):
    """Parallel mapping (LIBRA's 'communicator'): per phase, the group size on each dimension (1 = not spanned).

    Readers turn LIBRA's -1 into 1. Example for TP-16 / DP-256 on 4 x 8 x 4 x 32:
    ``forward = input_grad = (4, 4, 1, 1)``, ``weight_grad = (1, 2, 4, 32)``.
    """

    forward: tuple[int, ...]
    input_grad: tuple[int, ...]
    weight_grad: tuple[int, ...]

    @field_validator("forward", "input_grad", "weight_grad")
    @classmethod
    def _positive(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        for i, g in enumerate(v):
            if g < 1:
                raise ValueError(
                    f"entry [{i}] is {g}: a group spans at least 1 NPU of a dimension; "
                    "fix: use 1 (or -1 in LIBRA files) for a dimension the group does not span"
                )
        return v

    def group(self, phase: str) -> tuple[int, ...]:
        """The group sizes of ``phase`` (one of :data:`PHASES`)."""
        return getattr(self, phase)


class CostClass(_Frozen):
    """Prices of one cost class in $ per GB/s of per-NPU bandwidth (LIBRA cost model). Switch dimensions also pay
    for the switch and the NIC."""

    link_usd_per_gbps: float = Field(gt=0, allow_inf_nan=False)
    switch_usd_per_gbps: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    nic_usd_per_gbps: float | None = Field(default=None, gt=0, allow_inf_nan=False)


class CostModel(_Frozen):
    """Cost classes by name (e.g. ``InterChiplet``, ``InterPod``)."""

    classes: dict[str, CostClass] = Field(min_length=1)


class LinearConstraint(_Frozen):
    """``sum_d coefficients[d] * bw[d]  sense  rhs`` with bw in GB/s per NPU. ``text`` is what the user wrote."""

    coefficients: tuple[float, ...]
    sense: Literal["<=", ">=", "=="]
    rhs: float = Field(allow_inf_nan=False)
    text: str = ""

    @field_validator("coefficients")
    @classmethod
    def _finite(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if not all(math.isfinite(c) for c in v):
            raise ValueError("coefficients must be finite numbers")
        if not any(c != 0 for c in v):
            raise ValueError("the constraint has no bandwidth term; fix: name at least one bw[d]")
        return v


class Bound(_Frozen):
    """Per-dimension bandwidth bounds in GB/s per NPU (``upper_gbps = None``: no upper bound)."""

    lower_gbps: NonNegFloat = 0.0
    upper_gbps: float | None = Field(default=None, gt=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _ordered(self) -> Bound:
        if self.upper_gbps is not None and self.upper_gbps < self.lower_gbps:
            raise ValueError(
                f"lower_gbps {self.lower_gbps} exceeds upper_gbps {self.upper_gbps}; fix: swap or widen the bounds"
            )
        return self


class Instance(_Frozen):
    """A complete problem: network, workload, mapping, cost model, design constraints, objective, training loop.

    ``bounds`` has one entry per dimension (default: ``0 <= bw[d]``, no upper bound). Raises pydantic's
    ``ValidationError`` (turned into :class:`hieropt.errors.InputError` by the readers) when the parts disagree.
    """

    name: str
    network: Network
    workload: Workload
    mapping: Mapping
    cost: CostModel
    constraints: tuple[LinearConstraint, ...] = ()
    bounds: tuple[Bound, ...] | None = None
    objective: Literal["performance"]
    training_loop: Literal["no_overlap"]

    @model_validator(mode="after")
    def _consistent(self) -> Instance:
        D = self.network.n_dims
        for phase in PHASES:
            g = self.mapping.group(phase)
            if len(g) != D:
                raise ValueError(
                    f"mapping.{phase}: has {len(g)} entries but the network has {D} dimensions; "
                    f"fix: give one group size per dimension"
                )
            for d, (p, dim) in enumerate(zip(g, self.network.dims, strict=True)):
                if p > dim.npus:
                    raise ValueError(
                        f"mapping.{phase}[{d}]: group of {p} NPUs exceeds dimension {d}'s {dim.npus} NPUs; "
                        f"fix: use a group size between 1 and {dim.npus}"
                    )
        for d, dim in enumerate(self.network.dims):
            cc = self.cost.classes.get(dim.cost_class)
            if cc is None:
                raise ValueError(
                    f"network.dims[{d}].cost_class: unknown cost class '{dim.cost_class}'; "
                    f"fix: use one of {sorted(self.cost.classes)} or add it to the cost model"
                )
            if dim.block == "Switch" and (cc.switch_usd_per_gbps is None or cc.nic_usd_per_gbps is None):
                prices = (("Switch", cc.switch_usd_per_gbps), ("Nic", cc.nic_usd_per_gbps))
                missing = [n for n, v in prices if v is None]
                raise ValueError(
                    f"cost.{dim.cost_class}: dimension {d} is a Switch but its cost class has no "
                    f"{' or '.join(missing)} price; fix: add {', '.join(missing)} ($ per GB/s) to cost class "
                    f"'{dim.cost_class}'"
                )
        for i, c in enumerate(self.constraints):
            if len(c.coefficients) != D:
                raise ValueError(
                    f"constraints[{i}] '{c.text}': has {len(c.coefficients)} coefficients for {D} dimensions; "
                    f"fix: name only bw[0] .. bw[{D - 1}]"
                )
        if self.bounds is not None and len(self.bounds) != D:
            raise ValueError(f"bounds: {len(self.bounds)} entries for {D} dimensions; fix: give one per dimension")
        return self

    @property
    def bounds_or_default(self) -> tuple[Bound, ...]:
        """Per-dimension bounds, defaulting to ``0 <= bw[d]`` with no upper bound."""
        return self.bounds if self.bounds is not None else tuple(Bound() for _ in self.network.dims)
