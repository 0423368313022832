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
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

BLOCKS = ("Ring", "FullyConnected", "Switch")
Block = Literal["Ring", "FullyConnected", "Switch"]
PHASES = ("forward", "input_grad", "weight_grad")
OBJECTIVES = ("performance", "performance_per_cost", "min_cost")
TRAINING_LOOPS = ("no_overlap", "tp_dp_overlap", "tp_dp_overlap_cross", "recompute", "pipeline")
ALGORITHMS = ("ring", "direct", "halving_doubling")
DEFAULT_ALGORITHM = {"Ring": "ring", "FullyConnected": "direct", "Switch": "direct"}
"""Collective algorithm of each building block unless a dimension names another (latency step counts)."""
SENSES = ("<=", ">=", "==")
POLICIES = ("DATA", "MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA", "HYBRID_TRANSFORMER",
            "HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED", "HYBRID_CUSTOMIZED", "MICRO",
            "DISTRIBUTED_INFERENCE")
"""ASTRA-sim 1.0 header parallelism policies (line 1 of a workload file; research/peers.md §4.2)."""
TRANSFORMER_POLICIES = ("HYBRID_TRANSFORMER", "HYBRID_TRANSFORMER_FWD_IN_BCKWD")
"""Policies whose header gives ``model_parallel_NPU_group: N`` (and, in SimAI's dialect, ep/pp/vpp/ga/all_gpus)."""
DLRM_POLICIES = ("HYBRID_DLRM", "HYBRID_DLRM_ENHANCED")
"""Policies whose header gives the number of the last bottom-MLP layer."""
LAYER_POLICIES = tuple(p for p in POLICIES if p != "HYBRID_CUSTOMIZED")
"""Per-layer policies of a ``HYBRID_CUSTOMIZED`` workload (the 13th token of each layer line)."""
COLLECTIVE_SCOPES = ("EP", "DP_EP")
"""Collective scopes of SimAI's dialect, written as a suffix of the collective name (``ALLTOALL_EP``,
``ALLGATHER_DP_EP``): the expert-parallel group, and the data-parallel x expert-parallel group."""

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
    """One network dimension: building block, NPUs along it (>= 2), the cost class of its parts, and optionally the
    per-step link latency (ns) and the collective algorithm whose step count multiplies it (see
    :func:`hieropt.model.traffic.collective_steps`; default: ``ring`` on Ring, ``direct`` on FullyConnected and
    Switch)."""

    block: Block
    npus: int = Field(ge=2)
    cost_class: str = Field(min_length=1)
    latency_ns: NonNegFloat = 0.0
    algorithm: Literal["ring", "direct", "halving_doubling"] | None = None

    @property
    def collective_algorithm(self) -> str:
        """The algorithm used for step counts: the explicit one or the building block's default."""
        return self.algorithm or DEFAULT_ALGORITHM[self.block]


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

    ``scope`` is the group suffix of SimAI's scoped collective names (``"EP"`` for ``ALLTOALL_EP``, ``"DP_EP"`` for
    ``ALLGATHER_DP_EP``; one of :data:`COLLECTIVE_SCOPES`), None for a plain name.
    """

    compute_ns: NonNegFloat
    collective: Collective
    size_bytes: NonNegFloat
    scope: str | None = None

    @model_validator(mode="after")
    def _scope_known(self) -> Phase:
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


class Layer(_Frozen):
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


def _int_text(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


class WorkloadHeader(_Frozen):
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


class Workload(_Frozen):
    """A training workload: layers in forward order, and the ASTRA-sim ``header`` if the file had one.

    ``Workload(..., policy="HYBRID_TRANSFORMER")`` is accepted for a header that is a bare policy name; the
    :attr:`policy` property gives the header's policy line.
    """

    name: str
    layers: tuple[Layer, ...] = Field(min_length=1)
    header: WorkloadHeader | None = None

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
        for i, layer in enumerate(self.layers):
            if customized and layer.policy is None:
                raise ValueError(f"layers[{i}].policy: missing; a HYBRID_CUSTOMIZED workload gives every layer its "
                                 f"own policy; fix: give one of {', '.join(LAYER_POLICIES)}")
            if not customized and layer.policy is not None:
                raise ValueError(f"layers[{i}].policy: a per-layer policy ({layer.policy}) is only read under a "
                                 "HYBRID_CUSTOMIZED header; fix: drop it or use policy HYBRID_CUSTOMIZED")
        return self

    @property
    def policy(self) -> str | None:
        """The header's policy line (e.g. ``"HYBRID_TRANSFORMER model_parallel_NPU_group: 4"``), None without a
        header; the policy name alone is ``header.policy``."""
        return self.header.line if self.header is not None else None

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


class Pipeline(_Frozen):
    """Pipeline parallelism for the ``pipeline`` training loop: the workload is ONE stage's layers for one
    micro-batch; ``p2p_bytes`` of activations go to the next stage (and as many gradient bytes come back) per
    micro-batch over dimension ``p2p_dim``."""

    stages: int = Field(ge=2)
    microbatches: int = Field(ge=1)
    p2p_bytes: NonNegFloat
    p2p_dim: int = Field(ge=0)


class Job(_Frozen):
    """A further workload sharing the fabric: its mapping and its weight in the objective (e.g. share of hours)."""

    workload: Workload
    mapping: Mapping
    weight: float = Field(gt=0, allow_inf_nan=False)


def _check_mapping(mapping: Mapping, network: Network, label: str) -> None:
    D = network.n_dims
    for phase in PHASES:
        g = mapping.group(phase)
        if len(g) != D:
            raise ValueError(
                f"{label}.{phase}: has {len(g)} entries but the network has {D} dimensions; "
                f"fix: give one group size per dimension"
            )
        for d, (p, dim) in enumerate(zip(g, network.dims, strict=True)):
            if p > dim.npus:
                raise ValueError(
                    f"{label}.{phase}[{d}]: group of {p} NPUs exceeds dimension {d}'s {dim.npus} NPUs; "
                    f"fix: use a group size between 1 and {dim.npus}"
                )


class Instance(_Frozen):
    """A complete problem: network, workload, mapping, cost model, design constraints, objective, training loop.

    ``bounds`` has one entry per dimension (default: ``0 <= bw[d]``, no upper bound). Objectives:
    ``performance`` (min iteration time), ``performance_per_cost`` (min iteration time x network cost, LIBRA's
    PerfPerCostOpt), ``min_cost`` (cheapest network with iteration time <= ``max_iteration_time_ns``).
    ``max_network_cost_usd`` caps the network cost ($) under any objective; ``max_iteration_time_ns`` caps the
    iteration time (ns). Raises pydantic's ``ValidationError`` (turned into :class:`hieropt.errors.InputError` by
    the readers) when the parts disagree.

    Training loops (formulas in :mod:`hieropt.model.timing`): ``no_overlap`` (LIBRA), ``tp_dp_overlap``,
    ``tp_dp_overlap_cross``, ``recompute``, ``pipeline`` (needs ``pipeline``). ``dimension_mode``: dimensions of a
    collective work ``concurrent`` ly (max over dimensions, LIBRA) or ``sequential`` ly (sum). Several workloads:
    ``workload``/``mapping`` with ``workload_weight`` plus ``more_workloads``; the time objective is the weighted sum
    of their iteration times.
    """

    name: str
    network: Network
    workload: Workload
    mapping: Mapping
    cost: CostModel
    constraints: tuple[LinearConstraint, ...] = ()
    bounds: tuple[Bound, ...] | None = None
    objective: Literal["performance", "performance_per_cost", "min_cost"]
    training_loop: Literal["no_overlap", "tp_dp_overlap", "tp_dp_overlap_cross", "recompute", "pipeline"]
    pipeline: Pipeline | None = None
    dimension_mode: Literal["concurrent", "sequential"] = "concurrent"
    workload_weight: float = Field(default=1.0, gt=0, allow_inf_nan=False)
    more_workloads: tuple[Job, ...] = ()
    mapping_note: str | None = None
    max_iteration_time_ns: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_network_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    heuristic_ratios: dict[str, tuple[float, ...]] | None = None
    """Named vendor-style bandwidth ratios, one per dimension, for ``hieropt compare`` (see
    hieropt.studies.heuristics)."""

    @model_validator(mode="after")
    def _consistent(self) -> Instance:
        D = self.network.n_dims
        _check_mapping(self.mapping, self.network, "mapping")
        for j, job in enumerate(self.more_workloads):
            _check_mapping(job.mapping, self.network, f"more_workloads[{j}].mapping")
        if (self.training_loop == "pipeline") != (self.pipeline is not None):
            raise ValueError("pipeline: the pipeline loop needs [pipeline] (stages, microbatches, p2p_bytes, "
                             "p2p_dim) and only it uses them; fix: set both or neither")
        if self.pipeline is not None and self.pipeline.p2p_dim >= D:
            raise ValueError(f"pipeline.p2p_dim: dimension {self.pipeline.p2p_dim} does not exist; fix: use 0.."
                             f"{D - 1}")
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
        if self.objective == "min_cost" and self.max_iteration_time_ns is None:
            raise ValueError("max_iteration_time_ns: missing for objective min_cost (the cheapest network that trains "
                             "an iteration within the target); fix: give the time target in ns")
        if self.bounds is not None and len(self.bounds) != D:
            raise ValueError(f"bounds: {len(self.bounds)} entries for {D} dimensions; fix: give one per dimension")
        return self

    @property
    def jobs(self) -> tuple[Job, ...]:
        """Every workload on the fabric with its mapping and weight, the primary one first."""
        return (Job(workload=self.workload, mapping=self.mapping, weight=self.workload_weight),) + self.more_workloads

    @property
    def bounds_or_default(self) -> tuple[Bound, ...]:
        """Per-dimension bounds, defaulting to ``0 <= bw[d]`` with no upper bound."""
        return self.bounds if self.bounds is not None else tuple(Bound() for _ in self.network.dims)
