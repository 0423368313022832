"""The network: dimensions (building block, NPUs, cost class, latency, collective algorithm) and the
collective kinds."""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Literal

from pydantic import Field, model_validator

from ..names import DEFAULT_ALGORITHM
from .base import MAX_EXACT_INT, MAX_NPUS, Block, Frozen, NonNegFloat


class Collective(StrEnum):
    """Collective communication types (ASTRA-sim 1.0 / LIBRA names), and ``P2P``: a point-to-point
    send of the phase's bytes to the neighbouring NPU of its group (pipeline stages; not an
    ASTRA-sim 1.0 name)."""

    NONE = "NONE"
    ALL_REDUCE = "ALLREDUCE"
    REDUCE_SCATTER = "REDUCESCATTER"
    ALL_GATHER = "ALLGATHER"
    ALL_TO_ALL = "ALLTOALL"
    P2P = "P2P"


TEXT_COLLECTIVES = tuple(c for c in Collective if c is not Collective.P2P)
"""The collectives ASTRA-sim 1.0 text names (every kind but ``P2P``)."""


class Dimension(Frozen):
    """One network dimension: building block, NPUs along it (>= 2), the cost class of its parts, and
    optionally the per-step link latency (ns) and the collective algorithm whose step count
    multiplies it (see :func:`hieropt.model.traffic.collective_steps`; default: ``ring`` on Ring,
    ``direct`` on FullyConnected and Switch)."""

    block: Block
    npus: int = Field(ge=2, le=MAX_NPUS)
    cost_class: str = Field(min_length=1)
    latency_ns: NonNegFloat = 0.0
    algorithm: Literal["ring", "direct", "halving_doubling"] | None = None

    @property
    def collective_algorithm(self) -> str:
        """The algorithm used for step counts: the explicit one or the building block's default."""
        return self.algorithm or DEFAULT_ALGORITHM[self.block]


class Network(Frozen):
    """A multi-dimensional hierarchical network, dimension 0 first (innermost, e.g. chiplet)."""

    dims: tuple[Dimension, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _countable(self) -> Network:
        if self.npus_total > MAX_EXACT_INT:
            raise ValueError(
                f"dims: {self.npus_total:.3g} NPUs in total; fix: use at most 2^53 (about "
                "9e15) NPUs, so "
                "that counts and costs stay exact"
            )
        return self

    @property
    def n_dims(self) -> int:
        """Number of dimensions D."""
        return len(self.dims)

    @property
    def npus_total(self) -> int:
        """N = product of the dimensions' NPU counts."""
        return math.prod(d.npus for d in self.dims)
