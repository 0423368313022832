"""A workload's layers: the phases of a layer (compute ns, collective bytes), the layer, and the
columnar forms the traffic model and the readers of large workloads use (:class:`PhaseTable`,
:class:`LayerTable`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import core_schema

from ..names import COLLECTIVE_SCOPES, LAYER_POLICIES, PHASES
from .base import Frozen, NonNegFloat
from .network import Collective


class Phase(Frozen):
    """One phase of a layer: compute time (ns), then a collective of ``size_bytes`` bytes.

    For all-gather the size is the per-NPU input shard (LIBRA and ASTRA-sim convention); for the
    other collectives it is the per-NPU buffer being reduced / exchanged.

    ``scope`` is the group suffix of SimAI's scoped collective names (``"EP"`` for ``ALLTOALL_EP``,
    ``"DP_EP"`` for ``ALLGATHER_DP_EP``; one of :data:`COLLECTIVE_SCOPES`), None for a plain name.

    ``group`` names the parallel group the collective runs on (e.g. ``"tp"``, ``"dp"``, ``"ep"``,
    ``"pp"``): the instance's mapping gives its size on each dimension in ``Mapping.groups``; None
    (default) uses the mapping's group for the phase (``forward`` / ``input_grad`` /
    ``weight_grad``), as LIBRA's communicators do.
    """

    compute_ns: NonNegFloat
    collective: Collective
    size_bytes: NonNegFloat
    scope: str | None = None
    group: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")

    @model_validator(mode="after")
    def _scope_known(self) -> Phase:
        if self.group is not None and self.collective is Collective.NONE:
            raise ValueError(
                f"group: a NONE collective runs on no group (got {self.group!r}); fix: drop "
                "the group"
            )
        if self.scope is not None:
            if self.scope not in COLLECTIVE_SCOPES:
                raise ValueError(f"scope: unknown collective scope {self.scope!r}; fix: use one of "
                                 f"{', '.join(COLLECTIVE_SCOPES)} or none")
            if self.collective is Collective.NONE:
                raise ValueError(
                    f"scope: a NONE collective has no scope (got {self.scope!r}); fix: drop "
                    "the scope"
                )
        return self

    @property
    def collective_name(self) -> str:
        """The collective as written in ASTRA-sim text: ``ALLREDUCE``, or with its scope
        ``ALLTOALL_EP``."""
        return (
            self.collective.value if self.scope is None else f"{self.collective.value}_{self.scope}"
        )


class Layer(Frozen):
    """A layer: forward, input-gradient and weight-gradient phases; ``update_ns`` is ASTRA-sim's
    weight-update time (field 12 of the text format), kept for round-tripping but not part of
    LIBRA's no_overlap loop. ``policy`` is the layer's own parallelism policy in a
    ``HYBRID_CUSTOMIZED`` workload (the 13th token of its line; one of :data:`LAYER_POLICIES`), None
    otherwise."""

    name: str
    forward: Phase
    input_grad: Phase
    weight_grad: Phase
    update_ns: NonNegFloat = 0.0
    policy: str | None = None

    @field_validator("policy")
    @classmethod
    def _policy_known(cls, v: str | None) -> str | None:
        if v is not None and v not in LAYER_POLICIES:
            raise ValueError(
                f"unknown per-layer policy {v!r}; fix: use one of {', '.join(LAYER_POLICIES)}"
            )
        return v


class PhaseTable(BaseModel):
    """Columnar view of a workload (numpy, shape ``(n_layers, 3)``, phases in :data:`PHASES`
    order)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    compute_ns: np.ndarray
    size_bytes: np.ndarray
    collective: np.ndarray  # dtype object: Collective members
    # dtype object: the named group of each phase's collective, None for the phase's default
    group: np.ndarray
    # (n_layers,): ASTRA-sim's weight-update time (the optimizer step, loop ``step``)
    update_ns: np.ndarray
    kinds: np.ndarray | None = None
    """The collectives as indexes into ``tuple(Collective)`` (int8), when known."""


class LayerTable(Sequence):
    """The layers of a workload as columns (a read-only sequence of :class:`Layer`, built on
    access): how the readers hold large workloads (10^5 layers and more) without a Python object per
    layer.

    Arrays, one row per layer: ``compute_ns`` and ``size_bytes`` (n, 3) in :data:`PHASES` order,
    ``kinds`` (n, 3) indexes into :data:`KINDS`, ``scopes`` (n, 3) into :data:`SCOPES`,
    ``update_ns`` (n,), ``policies`` (n,) into :data:`LAYER_POLICY_CODES`; ``names`` a list of n
    strings; ``groups`` (n, 3) object array of the named group of each phase's collective
    (:attr:`Phase.group`), None for the phase's default group.

    Raises:
        ValueError: shapes that disagree, a time or size that is negative or not finite, an unknown
            code, or a scope on a NONE collective (the message starts with the field, as the models'
            messages do).
    """

    KINDS: tuple[Collective, ...] = tuple(Collective)
    SCOPES: tuple[str | None, ...] = (None, *COLLECTIVE_SCOPES)
    LAYER_POLICY_CODES: tuple[str | None, ...] = (None, *LAYER_POLICIES)

    def __init__(
        self,
        names: list[str],
        compute_ns: np.ndarray,
        size_bytes: np.ndarray,
        kinds: np.ndarray,
        scopes: np.ndarray | None = None,
        update_ns: np.ndarray | None = None,
        policies: np.ndarray | None = None,
        groups: np.ndarray | None = None,
    ):
        n = len(names)
        self.names = list(names)
        self.compute_ns = _column(compute_ns, (n, 3), float, "compute_ns")
        self.size_bytes = _column(size_bytes, (n, 3), float, "size_bytes")
        self.kinds = _column(kinds, (n, 3), np.int8, "collective")
        self.scopes = _column(
            np.zeros((n, 3)) if scopes is None else scopes, (n, 3), np.int8, "scope"
        )
        self.update_ns = _column(
            np.zeros(n) if update_ns is None else update_ns, (n,), float, "update_ns"
        )
        self.policies = _column(
            np.zeros(n) if policies is None else policies, (n,), np.int8, "policy"
        )
        for label, col in (("compute_ns", self.compute_ns), ("size_bytes", self.size_bytes),
                           ("update_ns", self.update_ns)):
            bad = ~np.isfinite(col) | (col < 0)
            if bad.any():
                i = int(np.flatnonzero(bad.reshape(n, -1).any(axis=1))[0])
                raise ValueError(
                    f"layers[{i}].{label}: must be a finite number >= 0; fix: correct the value"
                )
        for label, col, top in (
            ("collective", self.kinds, len(self.KINDS)),
            ("scope", self.scopes, len(self.SCOPES)),
            ("policy", self.policies, len(self.LAYER_POLICY_CODES)),
        ):
            if col.size and (col.min() < 0 or col.max() >= top):
                raise ValueError(f"layers: unknown {label} code; fix: use codes 0..{top - 1}")
        if ((self.scopes > 0) & (self.kinds == 0)).any():
            raise ValueError("layers: a NONE collective has no scope; fix: drop the scope")
        self.groups = _groups_column(groups, n, self.kinds)
        self._table: PhaseTable | None = None

    @classmethod
    def from_layers(cls, layers: Sequence[Layer]) -> LayerTable:
        """The table of ``layers`` (validated :class:`Layer` objects)."""
        kind = {k: i for i, k in enumerate(cls.KINDS)}
        scope = {s: i for i, s in enumerate(cls.SCOPES)}
        pol = {p: i for i, p in enumerate(cls.LAYER_POLICY_CODES)}
        ph = [[getattr(layer, p) for p in PHASES] for layer in layers]
        return cls(
            [layer.name for layer in layers],
            [[p.compute_ns for p in r] for r in ph],
            [[p.size_bytes for p in r] for r in ph],
            [[kind[p.collective] for p in r] for r in ph],
            [[scope[p.scope] for p in r] for r in ph],
            [layer.update_ns for layer in layers],
            [pol[layer.policy] for layer in layers],
            np.array([[p.group for p in r] for r in ph], dtype=object).reshape(
                len(ph), len(PHASES)
            ),
        )

    def __len__(self) -> int:
        return len(self.names)

    def layer(self, i: int) -> Layer:
        """Layer ``i`` as a :class:`Layer`."""
        phases = {
            p: Phase(
                compute_ns=float(self.compute_ns[i, j]),
                collective=self.KINDS[self.kinds[i, j]],
                size_bytes=float(self.size_bytes[i, j]),
                scope=self.SCOPES[self.scopes[i, j]],
                group=self.groups[i, j],
            )
            for j, p in enumerate(PHASES)
        }
        return Layer(name=self.names[i], update_ns=float(self.update_ns[i]),
                     policy=self.LAYER_POLICY_CODES[self.policies[i]], **phases)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._take(np.arange(len(self))[i])
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        return self.layer(i % n)

    def __iter__(self):
        return (self.layer(i) for i in range(len(self)))

    def _take(self, rows: np.ndarray) -> LayerTable:
        return LayerTable(
            [self.names[r] for r in rows],
            self.compute_ns[rows],
            self.size_bytes[rows],
            self.kinds[rows],
            self.scopes[rows],
            self.update_ns[rows],
            self.policies[rows],
            self.groups[rows],
        )

    def __mul__(self, k: int) -> LayerTable:
        return self._take(np.tile(np.arange(len(self)), int(k)))

    __rmul__ = __mul__

    def __add__(self, other) -> LayerTable:
        other = other if isinstance(other, LayerTable) else LayerTable.from_layers(other)
        return LayerTable(
            self.names + other.names,
            *(
                np.concatenate([getattr(self, f), getattr(other, f)])
                for f in (
                    "compute_ns",
                    "size_bytes",
                    "kinds",
                    "scopes",
                    "update_ns",
                    "policies",
                    "groups",
                )
            ),
        )

    def __eq__(self, other) -> bool:
        if isinstance(other, LayerTable):
            return self.names == other.names and all(
                np.array_equal(getattr(self, f), getattr(other, f))
                for f in (
                    "compute_ns",
                    "size_bytes",
                    "kinds",
                    "scopes",
                    "update_ns",
                    "policies",
                    "groups",
                )
            )
        if isinstance(other, tuple | list):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(
            (len(self), self.names[0] if self.names else "", self.size_bytes.tobytes()[:4096])
        )

    def __repr__(self) -> str:
        return f"LayerTable({len(self)} layers)"

    def phase_table(self) -> PhaseTable:
        """The columns the traffic model and the evaluator read (built once)."""
        if self._table is None:
            self._table = PhaseTable(
                compute_ns=self.compute_ns,
                size_bytes=self.size_bytes,
                collective=np.array(self.KINDS, dtype=object)[self.kinds],
                kinds=self.kinds,
                group=self.groups,
                update_ns=self.update_ns,
            )
        return self._table

    @classmethod
    def __get_pydantic_core_schema__(cls, source, handler):
        return core_schema.is_instance_schema(
            cls,
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda t: [layer.model_dump() for layer in t]
            ),
        )


def _column(values, shape: tuple[int, ...], dtype, label: str) -> np.ndarray:
    out = np.array(values, dtype=dtype)
    if out.shape != shape:
        raise ValueError(
            f"layers.{label}: shape {out.shape}, expected {shape}; fix: one row per layer"
        )
    out.flags.writeable = False
    return out


_GROUP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _groups_column(groups, n: int, kinds: np.ndarray) -> np.ndarray:
    """The (n, 3) object column of named groups (None: the phase's default), checked as
    :class:`Phase` checks one."""
    if groups is None:
        out = np.full((n, 3), None, dtype=object)
    else:
        out = (
            np.array(groups, dtype=object).reshape(-1, 3)
            if n
            else np.full((0, 3), None, dtype=object)
        )
        if out.shape != (n, 3):
            raise ValueError(
                f"layers.group: shape {out.shape}, expected {(n, 3)}; fix: one row per layer"
            )
        named = out != None  # noqa: E711 (element-wise)
        for i, j in zip(*np.nonzero(named), strict=True):
            g = out[i, j]
            if not isinstance(g, str) or not _GROUP_NAME.match(g):
                raise ValueError(
                    f"layers[{i}].group: {g!r} is not a group name; fix: letters, digits and _"
                )
            if kinds[i, j] == 0:
                raise ValueError(
                    f"layers[{i}].group: a NONE collective runs on no group (got {g!r}); fix: drop "
                    "the group"
                )
    out.flags.writeable = False
    return out
