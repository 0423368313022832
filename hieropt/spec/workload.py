"""The workload: layers with compute times (ns) and collectives (bytes) per training phase, and the ASTRA-sim 1.0
header."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import core_schema

from ..names import COLLECTIVE_SCOPES, DLRM_POLICIES, LAYER_POLICIES, PHASES, POLICIES, TRANSFORMER_POLICIES
from .base import Frozen, NonNegFloat
from .network import Collective


class Phase(Frozen):
    """One phase of a layer: compute time (ns), then a collective of ``size_bytes`` bytes.

    For all-gather the size is the per-NPU input shard (LIBRA and ASTRA-sim convention); for the other collectives
    it is the per-NPU buffer being reduced / exchanged.

    ``scope`` is the group suffix of SimAI's scoped collective names (``"EP"`` for ``ALLTOALL_EP``, ``"DP_EP"`` for
    ``ALLGATHER_DP_EP``; one of :data:`COLLECTIVE_SCOPES`), None for a plain name.

    ``group`` names the parallel group the collective runs on (e.g. ``"tp"``, ``"dp"``, ``"ep"``, ``"pp"``): the
    instance's mapping gives its size on each dimension in ``Mapping.groups``; None (default) uses the mapping's
    group for the phase (``forward`` / ``input_grad`` / ``weight_grad``), as LIBRA's communicators do.
    """

    compute_ns: NonNegFloat
    collective: Collective
    size_bytes: NonNegFloat
    scope: str | None = None
    group: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")

    @model_validator(mode="after")
    def _scope_known(self) -> Phase:
        if self.group is not None and self.collective is Collective.NONE:
            raise ValueError(f"group: a NONE collective runs on no group (got {self.group!r}); fix: drop the group")
        if self.scope is not None:
            if self.scope not in COLLECTIVE_SCOPES:
                raise ValueError(f"scope: unknown collective scope {self.scope!r}; fix: use one of "
                                 f"{', '.join(COLLECTIVE_SCOPES)} or none")
            if self.collective is Collective.NONE:
                raise ValueError(f"scope: a NONE collective has no scope (got {self.scope!r}); fix: drop the scope")
        return self

    @property
    def collective_name(self) -> str:
        """The collective as written in ASTRA-sim text: ``ALLREDUCE``, or with its scope ``ALLTOALL_EP``."""
        return self.collective.value if self.scope is None else f"{self.collective.value}_{self.scope}"


class Layer(Frozen):
    """A layer: forward, input-gradient and weight-gradient phases; ``update_ns`` is ASTRA-sim's weight-update time
    (field 12 of the text format), kept for round-tripping but not part of LIBRA's no_overlap loop. ``policy`` is the
    layer's own parallelism policy in a ``HYBRID_CUSTOMIZED`` workload (the 13th token of its line; one of
    :data:`LAYER_POLICIES`), None otherwise."""

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
            raise ValueError(f"unknown per-layer policy {v!r}; fix: use one of {', '.join(LAYER_POLICIES)}")
        return v


class PhaseTable(BaseModel):
    """Columnar view of a workload (numpy, shape ``(n_layers, 3)``, phases in :data:`PHASES` order)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    compute_ns: np.ndarray
    size_bytes: np.ndarray
    collective: np.ndarray  # dtype object: Collective members
    group: np.ndarray  # dtype object: the named group of each phase's collective, None for the phase's default
    update_ns: np.ndarray  # (n_layers,): ASTRA-sim's weight-update time (the optimizer step, loop ``step``)
    kinds: np.ndarray | None = None
    """The collectives as indexes into ``tuple(Collective)`` (int8), when known."""


class LayerTable(Sequence):
    """The layers of a workload as columns (a read-only sequence of :class:`Layer`, built on access): how the
    readers hold large workloads (10^5 layers and more) without a Python object per layer.

    Arrays, one row per layer: ``compute_ns`` and ``size_bytes`` (n, 3) in :data:`PHASES` order, ``kinds`` (n, 3)
    indexes into :data:`KINDS`, ``scopes`` (n, 3) into :data:`SCOPES`, ``update_ns`` (n,), ``policies`` (n,) into
    :data:`LAYER_POLICY_CODES`; ``names`` a list of n strings; ``groups`` (n, 3) object array of the named group of
    each phase's collective (:attr:`Phase.group`), None for the phase's default group.

    Raises:
        ValueError: shapes that disagree, a time or size that is negative or not finite, an unknown code, or a scope
            on a NONE collective (the message starts with the field, as the models' messages do).
    """

    KINDS: tuple[Collective, ...] = tuple(Collective)
    SCOPES: tuple[str | None, ...] = (None, *COLLECTIVE_SCOPES)
    LAYER_POLICY_CODES: tuple[str | None, ...] = (None, *LAYER_POLICIES)

    def __init__(self, names: list[str], compute_ns: np.ndarray, size_bytes: np.ndarray, kinds: np.ndarray,
                 scopes: np.ndarray | None = None, update_ns: np.ndarray | None = None,
                 policies: np.ndarray | None = None, groups: np.ndarray | None = None):
        n = len(names)
        self.names = list(names)
        self.compute_ns = _column(compute_ns, (n, 3), float, "compute_ns")
        self.size_bytes = _column(size_bytes, (n, 3), float, "size_bytes")
        self.kinds = _column(kinds, (n, 3), np.int8, "collective")
        self.scopes = _column(np.zeros((n, 3)) if scopes is None else scopes, (n, 3), np.int8, "scope")
        self.update_ns = _column(np.zeros(n) if update_ns is None else update_ns, (n,), float, "update_ns")
        self.policies = _column(np.zeros(n) if policies is None else policies, (n,), np.int8, "policy")
        for label, col in (("compute_ns", self.compute_ns), ("size_bytes", self.size_bytes),
                           ("update_ns", self.update_ns)):
            bad = ~np.isfinite(col) | (col < 0)
            if bad.any():
                i = int(np.flatnonzero(bad.reshape(n, -1).any(axis=1))[0])
                raise ValueError(f"layers[{i}].{label}: must be a finite number >= 0; fix: correct the value")
        for label, col, top in (("collective", self.kinds, len(self.KINDS)), ("scope", self.scopes,
                                len(self.SCOPES)), ("policy", self.policies, len(self.LAYER_POLICY_CODES))):
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
        return cls([layer.name for layer in layers], [[p.compute_ns for p in r] for r in ph],
                   [[p.size_bytes for p in r] for r in ph], [[kind[p.collective] for p in r] for r in ph],
                   [[scope[p.scope] for p in r] for r in ph], [layer.update_ns for layer in layers],
                   [pol[layer.policy] for layer in layers],
                   np.array([[p.group for p in r] for r in ph], dtype=object).reshape(len(ph), len(PHASES)))

    def __len__(self) -> int:
        return len(self.names)

    def layer(self, i: int) -> Layer:
        """Layer ``i`` as a :class:`Layer`."""
        phases = {p: Phase(compute_ns=float(self.compute_ns[i, j]), collective=self.KINDS[self.kinds[i, j]],
                           size_bytes=float(self.size_bytes[i, j]), scope=self.SCOPES[self.scopes[i, j]],
                           group=self.groups[i, j])
                  for j, p in enumerate(PHASES)}
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
        return LayerTable([self.names[r] for r in rows], self.compute_ns[rows], self.size_bytes[rows],
                          self.kinds[rows], self.scopes[rows], self.update_ns[rows], self.policies[rows],
                          self.groups[rows])

    def __mul__(self, k: int) -> LayerTable:
        return self._take(np.tile(np.arange(len(self)), int(k)))

    __rmul__ = __mul__

    def __add__(self, other) -> LayerTable:
        other = other if isinstance(other, LayerTable) else LayerTable.from_layers(other)
        return LayerTable(self.names + other.names, *(np.concatenate([getattr(self, f), getattr(other, f)])
                                                      for f in ("compute_ns", "size_bytes", "kinds", "scopes",
                                                                "update_ns", "policies", "groups")))

    def __eq__(self, other) -> bool:
        if isinstance(other, LayerTable):
            return self.names == other.names and all(
                np.array_equal(getattr(self, f), getattr(other, f))
                for f in ("compute_ns", "size_bytes", "kinds", "scopes", "update_ns", "policies", "groups"))
        if isinstance(other, tuple | list):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash((len(self), self.names[0] if self.names else "", self.size_bytes.tobytes()[:4096]))

    def __repr__(self) -> str:
        return f"LayerTable({len(self)} layers)"

    def phase_table(self) -> PhaseTable:
        """The columns the traffic model and the evaluator read (built once)."""
        if self._table is None:
            self._table = PhaseTable(compute_ns=self.compute_ns, size_bytes=self.size_bytes,
                                     collective=np.array(self.KINDS, dtype=object)[self.kinds], kinds=self.kinds,
                                     group=self.groups, update_ns=self.update_ns)
        return self._table

    @classmethod
    def __get_pydantic_core_schema__(cls, source, handler):
        return core_schema.is_instance_schema(cls, serialization=core_schema.plain_serializer_function_ser_schema(
            lambda t: [layer.model_dump() for layer in t]))


def _column(values, shape: tuple[int, ...], dtype, label: str) -> np.ndarray:
    out = np.array(values, dtype=dtype)
    if out.shape != shape:
        raise ValueError(f"layers.{label}: shape {out.shape}, expected {shape}; fix: one row per layer")
    out.flags.writeable = False
    return out


_GROUP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _groups_column(groups, n: int, kinds: np.ndarray) -> np.ndarray:
    """The (n, 3) object column of named groups (None: the phase's default), checked as :class:`Phase` checks one."""
    if groups is None:
        out = np.full((n, 3), None, dtype=object)
    else:
        out = np.array(groups, dtype=object).reshape(-1, 3) if n else np.full((0, 3), None, dtype=object)
        if out.shape != (n, 3):
            raise ValueError(f"layers.group: shape {out.shape}, expected {(n, 3)}; fix: one row per layer")
        named = out != None  # noqa: E711 (element-wise)
        for i, j in zip(*np.nonzero(named), strict=True):
            g = out[i, j]
            if not isinstance(g, str) or not _GROUP_NAME.match(g):
                raise ValueError(f"layers[{i}].group: {g!r} is not a group name; fix: letters, digits and _")
            if kinds[i, j] == 0:
                raise ValueError(f"layers[{i}].group: a NONE collective runs on no group (got {g!r}); fix: drop "
                                 "the group")
    out.flags.writeable = False
    return out


def _int_text(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


class WorkloadHeader(Frozen):
    """The two header lines of an ASTRA-sim 1.0 workload file (every dialect; research/peers.md §4.2).

    Line 1 is the parallelism ``policy`` (one of :data:`POLICIES`) and the tokens that policy takes; line 2 the layer
    count (``declared_layers``). Fields, each None when the file does not give it:

    - ``model_parallel_npu_group``: ``model_parallel_NPU_group: N`` of the transformer policies (NPUs per
      model-parallel group);
    - ``checkpoints``, ``checkpoint_initiates``: the layer numbers (0-based) of ``checkpoints: k l1..lk`` and
      ``checkpoint_initiates: m i1..im`` (``HYBRID_TRANSFORMER_FWD_IN_BCKWD``: activation checkpoints, and the layers
      that start a forward-in-backward recomputation);
    - ``last_bottom_layer``: the number (0-based) of the last bottom-MLP layer of the DLRM policies;
    - ``ep``, ``pp``, ``vpp``, ``ga``, ``all_gpus``: SimAI's extension of the transformer header (expert-parallel,
      pipeline-parallel and virtual-pipeline degrees, gradient-accumulation steps, total GPUs);
    - ``pp_comm_bytes``: SimAI's ``pp_comm`` (``pp_comm: B`` or ``pp_comm B``), bytes of a pipeline-stage transfer.
    """

    policy: str
    model_parallel_npu_group: int | None = Field(default=None, ge=1)
    checkpoints: tuple[int, ...] | None = None
    checkpoint_initiates: tuple[int, ...] | None = None
    last_bottom_layer: int | None = Field(default=None, ge=0)
    ep: int | None = Field(default=None, ge=1)
    pp: int | None = Field(default=None, ge=1)
    vpp: int | None = Field(default=None, ge=1)
    ga: int | None = Field(default=None, ge=1)
    all_gpus: int | None = Field(default=None, ge=1)
    pp_comm_bytes: NonNegFloat | None = None
    declared_layers: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _fits_policy(self) -> WorkloadHeader:
        if self.policy not in POLICIES:
            raise ValueError(f"policy: unknown header policy {self.policy!r}; fix: use one of {', '.join(POLICIES)}")
        for key in ("checkpoints", "checkpoint_initiates"):
            v = getattr(self, key)
            if v is not None and any(i < 0 for i in v):
                raise ValueError(f"{key}: layer numbers must be >= 0 (got {list(v)}); fix: use 0-based layer numbers")
        transformer = {"model_parallel_NPU_group": self.model_parallel_npu_group, "ep": self.ep, "pp": self.pp,
                       "vpp": self.vpp, "ga": self.ga, "all_gpus": self.all_gpus}
        rules = [(transformer, TRANSFORMER_POLICIES),
                 ({"checkpoints": self.checkpoints, "checkpoint_initiates": self.checkpoint_initiates},
                  ("HYBRID_TRANSFORMER_FWD_IN_BCKWD",)),
                 ({"last bottom layer": self.last_bottom_layer}, DLRM_POLICIES)]
        for keys, policies in rules:
            for key, v in keys.items():
                if v is not None and self.policy not in policies:
                    raise ValueError(f"{key}: not read with policy {self.policy} (only with {' or '.join(policies)}); "
                                     f"fix: remove it or change the policy")
        return self

    @property
    def line(self) -> str:
        """Line 1 as ASTRA-sim (and SimAI) read it, e.g. ``HYBRID_TRANSFORMER model_parallel_NPU_group: 4``."""
        parts = [self.policy]
        if self.last_bottom_layer is not None:
            parts.append(str(self.last_bottom_layer))
        if self.model_parallel_npu_group is not None:
            parts += ["model_parallel_NPU_group:", str(self.model_parallel_npu_group)]
        for key in ("ep", "pp", "vpp", "ga", "all_gpus"):
            v = getattr(self, key)
            if v is not None:
                parts += [f"{key}:", str(v)]
        if self.checkpoints is not None or self.checkpoint_initiates is not None:
            for key in ("checkpoints", "checkpoint_initiates"):
                v = getattr(self, key) or ()
                parts += [f"{key}:", str(len(v)), *(str(i) for i in v)]
        if self.pp_comm_bytes is not None:
            parts += ["pp_comm:", _int_text(self.pp_comm_bytes)]
        return " ".join(parts)


class Workload(Frozen):
    """A training workload: layers in forward order, and the ASTRA-sim ``header`` if the file had one.

    ``Workload(..., policy="HYBRID_TRANSFORMER")`` is accepted for a header that is a bare policy name; the
    :attr:`policy` property gives the header's policy line.
    """

    name: str
    layers: tuple[Layer, ...] | LayerTable
    header: WorkloadHeader | None = None

    @field_validator("layers", mode="wrap")
    @classmethod
    def _layers(cls, v: Any, handler) -> tuple[Layer, ...] | LayerTable:
        if isinstance(v, LayerTable):
            out = v
        else:
            out = handler(tuple(v) if isinstance(v, list) else v)
        if len(out) < 1:
            raise ValueError("must have at least 1 layer; fix: add a layer")
        return out


    @model_validator(mode="before")
    @classmethod
    def _policy_argument(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "policy" not in data:
            return data
        data = dict(data)
        policy = data.pop("policy")
        if policy is None:
            return data
        if data.get("header") is not None:
            raise ValueError("policy: both policy and header were given; fix: give the header only")
        if not isinstance(policy, str) or len(policy.split()) != 1:
            raise ValueError(f"policy: {policy!r} is not a bare policy name; fix: give header=WorkloadHeader(...) "
                             "(hieropt.io.astrasim1.parse_header parses a header line)")
        data["header"] = {"policy": policy.strip()}
        return data

    @model_validator(mode="after")
    def _header_fits_layers(self) -> Workload:
        n = len(self.layers)
        h = self.header
        if h is not None:
            if h.declared_layers is not None and h.declared_layers != n:
                raise ValueError(f"header.declared_layers: the header says {h.declared_layers} layers but there are "
                                 f"{n}; fix: set it to {n}")
            numbered = [("checkpoints", i) for i in h.checkpoints or ()]
            numbered += [("checkpoint_initiates", i) for i in h.checkpoint_initiates or ()]
            if h.last_bottom_layer is not None:
                numbered.append(("last bottom layer", h.last_bottom_layer))
            for key, i in numbered:
                if i >= n:
                    raise ValueError(f"header.{key}: layer {i} does not exist (layers are numbered 0 .. {n - 1}); "
                                     f"fix: use a layer number below {n}")
        customized = h is not None and h.policy == "HYBRID_CUSTOMIZED"
        if isinstance(self.layers, LayerTable):
            wrong = np.flatnonzero((self.layers.policies == 0) == customized)
            if wrong.size:  # the first offending layer, checked as one below
                self._check_policy(int(wrong[0]), self.layers.layer(int(wrong[0])), customized)
            return self
        for i, layer in enumerate(self.layers):
            self._check_policy(i, layer, customized)
        return self

    @staticmethod
    def _check_policy(i: int, layer: Layer, customized: bool) -> None:
        if customized and layer.policy is None:
            raise ValueError(f"layers[{i}].policy: missing; a HYBRID_CUSTOMIZED workload gives every layer its "
                             f"own policy; fix: give one of {', '.join(LAYER_POLICIES)}")
        if not customized and layer.policy is not None:
            raise ValueError(f"layers[{i}].policy: a per-layer policy ({layer.policy}) is only read under a "
                             "HYBRID_CUSTOMIZED header; fix: drop it or use policy HYBRID_CUSTOMIZED")

    @property
    def policy(self) -> str | None:
        """The header's policy line (e.g. ``"HYBRID_TRANSFORMER model_parallel_NPU_group: 4"``), None without a
        header; the policy name alone is ``header.policy``."""
        return self.header.line if self.header is not None else None

    @property
    def table(self) -> PhaseTable:
        """The layers as numpy arrays, built once per layers object (used by the traffic model and the evaluator; a
        copy with other layers, e.g. ``model_copy(update={"layers": ...})``, gets its own)."""
        if isinstance(self.layers, LayerTable):
            return self.layers.phase_table()
        cached = self.__dict__.get("_table_of")
        if cached is not None and cached[0] is self.layers:
            return cached[1]
        table = LayerTable.from_layers(self.layers).phase_table()
        self.__dict__["_table_of"] = (self.layers, table)
        return table

    @property
    def named_groups(self) -> set[str]:
        """The named groups the workload's collectives run on (:attr:`Phase.group`)."""
        g = self.table.group
        return set(g[g != None].tolist())  # noqa: E711 (element-wise)
