"""Shared pieces of the spec models (one home): the frozen, strict base model and the constrained types."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..names import BLOCKS

Block = Literal[BLOCKS]
"""A building block: one of :data:`hieropt.names.BLOCKS` (the literal is built from that tuple)."""

NonNegFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""A finite float >= 0."""


class Frozen(BaseModel):
    """Base of every input model: immutable (hashable) and strict (an unknown key is an error, never ignored)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
