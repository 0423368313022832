"""The workload: layers with compute times (ns) and collectives (bytes) per training phase, and the
ASTRA-sim 1.0 header."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pydantic import Field, PositiveInt, field_validator, model_validator

from ..names import (
    DLRM_POLICIES,
    GROUP_ALGORITHMS,
    LAYER_POLICIES,
    PHASES,
    POLICIES,
    TRANSFORMER_POLICIES,
)
from .base import Frozen, NonNegFloat
from .layers import Layer, LayerTable, Phase, PhaseTable
from .training import Training

__all__ = ["Layer", "LayerTable", "Phase", "PhaseTable", "StepSchedule", "Workload",
           "WorkloadHeader"]

def _int_text(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


class WorkloadHeader(Frozen):
    """The two header lines of an ASTRA-sim 1.0 workload file (every dialect;
    docs/reference/workloads.md).

    Line 1 is the parallelism ``policy`` (one of :data:`POLICIES`) and the tokens that policy takes;
    line 2 the layer count (``declared_layers``). Fields, each None when the file does not give it:

    - ``model_parallel_npu_group``: ``model_parallel_NPU_group: N`` of the transformer policies
      (NPUs per model-parallel group);
    - ``checkpoints``, ``checkpoint_initiates``: the layer numbers (0-based) of ``checkpoints: k
      l1..lk`` and ``checkpoint_initiates: m i1..im`` (``HYBRID_TRANSFORMER_FWD_IN_BCKWD``:
      activation checkpoints, and the layers that start a forward-in-backward recomputation);
    - ``last_bottom_layer``: the number (0-based) of the last bottom-MLP layer of the DLRM policies;
    - ``ep``, ``pp``, ``vpp``, ``ga``, ``all_gpus``: SimAI's extension of the transformer header
      (expert-parallel, pipeline-parallel and virtual-pipeline degrees, gradient-accumulation steps,
      total GPUs);
    - ``pp_comm_bytes``: SimAI's ``pp_comm`` (``pp_comm: B`` or ``pp_comm B``), bytes of a
      pipeline-stage transfer.
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
            raise ValueError(
                f"policy: unknown header policy {self.policy!r}; fix: use one of "
                f"{', '.join(POLICIES)}"
            )
        for key in ("checkpoints", "checkpoint_initiates"):
            v = getattr(self, key)
            if v is not None and any(i < 0 for i in v):
                raise ValueError(
                    f"{key}: layer numbers must be >= 0 (got {list(v)}); fix: use 0-based "
                    "layer numbers"
                )
        transformer = {
            "model_parallel_NPU_group": self.model_parallel_npu_group,
            "ep": self.ep,
            "pp": self.pp,
            "vpp": self.vpp,
            "ga": self.ga,
            "all_gpus": self.all_gpus,
        }
        rules = [
            (transformer, TRANSFORMER_POLICIES),
            (
                {
                    "checkpoints": self.checkpoints,
                    "checkpoint_initiates": self.checkpoint_initiates,
                },
                ("HYBRID_TRANSFORMER_FWD_IN_BCKWD",),
            ),
            ({"last bottom layer": self.last_bottom_layer}, DLRM_POLICIES),
        ]
        for keys, policies in rules:
            for key, v in keys.items():
                if v is not None and self.policy not in policies:
                    raise ValueError(
                        f"{key}: not read with policy {self.policy} (only with "
                        f"{' or '.join(policies)}); "
                        f"fix: remove it or change the policy"
                    )
        return self

    @property
    def line(self) -> str:
        """Line 1 as ASTRA-sim (and SimAI) read it, e.g. ``HYBRID_TRANSFORMER
        model_parallel_NPU_group: 4``."""
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


class StepSchedule(Frozen):
    """The composed training step of loop ``step`` (formula in :mod:`hieropt.model.timing`): the
    workload is ONE pipeline stage for one micro-batch, its forward and input-gradient collectives
    (point-to-point sends included) run every micro-batch, its weight-gradient collectives and its
    optimizer step (``update_ns``) once per iteration.

    Attributes:
        microbatches: m per iteration.
        stages: pipeline stages p (1: no pipeline).
        virtual_stages: model chunks per stage v of the interleaved schedule (1: 1F1B); the bubble
            is (p - 1) c micro-batch slots, c = :attr:`fill_share`.
        chunk_share: the largest model chunk's share of the slowest stage's micro-batch slot,
            when the chunks are not equal (None: equal chunks, 1 / v): the closed composition's
            fill and drain run at that chunk's pace (a stage of 5 layers in chunks of 2, 1, 1, 1:
            2 / 5, not 1 / 4); a schedule timed by its graph (:mod:`hieropt.model.pipeline`)
            times every chunk itself.
        microbatch_group: the interleaved schedule's N, micro-batches a stage runs back to back on
            one chunk (default: ``stages``; Megatron-LM's ``microbatch_group_size_per_vp_stage``):
            the order the ASTRA-sim traces and the schedule's graph run
            (:mod:`hieropt.model.schedule_dag`). Within its bounds, stages <= N <= microbatches
            with microbatches mod N = 0 or >= stages, the schedule has no dependency stalls: with
            equal chunks the iteration time does not depend on it.
        overlap_dp: the per-iteration collectives run on their own stream during the last
            micro-batch's backward pass (in backward order, as loop ``tp_dp_overlap_cross``) instead
            of after it, except the weight-gradient all-gathers: they send the parameters the
            optimizer step updates and run after it, exposed (:mod:`hieropt.model.gathers`).
        overlap_gather: the weight-gradient all-gathers (ZeRO 1/2's updated-parameter all-gather)
            run on their own stream during the next iteration's first forward pass, each layer's
            forward waiting for its gather (Megatron-LM's overlap-param-gather,
            :mod:`hieropt.model.gathers`), instead of after the optimizer step; modelled with
            virtual_stages 1 (else exposed after the step). Not with ``overlap_groups``.
        overlap_groups: named groups whose per-micro-batch (forward and input-gradient)
            collectives run on their own stream, concurrently with the rest of the micro-batch
            (ZeRO-2/3's gradient reduce-scatters and parameter all-gathers as FSDP and DeepSpeed
            run them): a micro-batch slot takes the largest of its compute with the other
            collectives, its own-stream collectives, and on every dimension both streams' busy
            time (:mod:`hieropt.model.overlap`). Not with ``overlap_dp``.
    """

    microbatches: int = Field(ge=1)
    stages: int = Field(default=1, ge=1)
    virtual_stages: int = Field(default=1, ge=1)
    microbatch_group: int | None = Field(default=None, ge=1)
    chunk_share: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)
    overlap_dp: bool = False
    overlap_gather: bool = False
    overlap_groups: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _one_overlap(self) -> StepSchedule:
        if self.overlap_dp and self.overlap_groups:
            raise ValueError("step.overlap_groups: not with overlap_dp (the last backward's "
                             "per-iteration overlap); fix: set one of them")
        if self.overlap_gather and self.overlap_groups:
            raise ValueError("step.overlap_groups: not with overlap_gather (the all-gathers after "
                             "the optimizer step hidden behind the first forward); fix: set one "
                             "of them")
        n, p, m = self.microbatch_group, self.stages, self.microbatches
        c = self.chunk_share
        if c is not None and not 1 / self.virtual_stages <= c <= 1:
            raise ValueError(
                f"step.chunk_share: {c:g} with {self.virtual_stages} virtual stages; fix: the "
                "largest chunk's share of a stage, between 1 / virtual_stages and 1")
        if n is not None and (self.virtual_stages == 1 or not p <= n <= m or 0 < m % n < p):
            raise ValueError(
                f"step.microbatch_group: {n} with {p} stages, {self.virtual_stages} virtual "
                f"stages and {m} micro-batches; fix: leave it out, or with virtual_stages >= 2 use "
                "stages <= N <= microbatches with microbatches mod N = 0 or >= stages")
        return self

    @property
    def group(self) -> int:
        """The interleaved schedule's micro-batch group N: :attr:`microbatch_group`, else p."""
        return self.microbatch_group or self.stages

    @property
    def fill_share(self) -> float:
        """c, the share of a stage's micro-batch slot at whose pace the fill and drain run: the
        largest chunk's (:attr:`chunk_share`), else 1 / v."""
        return self.chunk_share if self.chunk_share is not None else 1 / self.virtual_stages

    @property
    def slots(self) -> float:
        """Micro-batch slots of the stage per iteration: m + (p - 1) c (c = :attr:`fill_share`:
        1 / v for equal chunks)."""
        return self.microbatches + (self.stages - 1) * self.fill_share


class Workload(Frozen):
    """A training workload: layers in forward order, and the ASTRA-sim ``header`` if the file had
    one.

    ``Workload(..., policy="HYBRID_TRANSFORMER")`` is accepted for a header that is a bare policy
    name; the :attr:`policy` property gives the header's policy line.

    ``more_stages``: the other distinct stages of a pipelined workload (an LLM plan with pp > 1,
    each one stage for one micro-batch, as this workload's own layers are), on the same mapping.
    With :attr:`pipeline_stages` under loop ``step`` the schedule composes them (below); otherwise
    the iteration time is the slowest stage's: T = max over :attr:`stages` of each stage's T under
    the training loop, as if every stage were it (Narayanan et al. 2021 §2.2, Calculon's time of its
    fullest stage). Empty (the default): one stage. A further stage has no further stages of its
    own.

    ``group_npus``: ``(phase or named group, parameter, NPUs)`` entries a workload generator states
    for the parallel degrees it sized the collectives for, e.g. ``("weight_grad", "dp", 256)`` for a
    transformer with dp = 256 (its weight-gradient all-reduce runs over 256 replicas), ``("dp",
    "dp", 64)`` for an LLM plan's named group; an instance's mapping must give that phase or group
    that many NPUs (:class:`hieropt.spec.Instance` checks it). Empty for workloads read from files,
    whose degrees are not known.

    ``training``: tokens and FLOPs per iteration and the NPU's peak
    (:class:`hieropt.spec.training.Training`), set by the LLM generator; None for workloads whose
    model is not known (ASTRA-sim text, LIBRA, the other generators).

    ``group_algorithms``: ``(named group, algorithm)`` entries, the algorithm (one of
    :data:`GROUP_ALGORITHMS`) that runs that group's collectives over the dimensions it spans
    (:func:`hieropt.model.traffic.unit_traffic`); a group without an entry, and every phase's own
    group, runs by the instance's ``dimension_mode``. An LLM plan states one for each of its groups.

    ``pipeline_stages``: for each entry of :attr:`stages`, the pipeline stages (0 = the first) it
    stands for, e.g. ``((15,), (0,), (1, 2, ..., 14))`` for a plan of 16 stages whose middle ones
    are equal; loop ``step`` then composes the exact 1F1B time from every stage's slot
    (:mod:`hieropt.model.pipeline`). Empty: not known (the slowest stage's time then, as if every
    stage were it).

    ``schedule``: the step schedule the workload's plan runs (micro-batches, stages, virtual
    stages, and which collectives run on their own stream: ``overlap_dp``, ``overlap_groups``), set
    by the LLM generator; an instance of loop ``step`` takes every field its ``[step]`` table leaves
    out from it (:func:`hieropt.io.instance.step_entry`). None: not known (ASTRA-sim text, LIBRA,
    the other generators).
    """

    name: str
    layers: tuple[Layer, ...] | LayerTable
    header: WorkloadHeader | None = None
    group_npus: tuple[tuple[str, str, PositiveInt], ...] = ()
    more_stages: tuple[Workload, ...] = ()
    training: Training | None = None
    group_algorithms: tuple[tuple[str, Literal[GROUP_ALGORITHMS]], ...] = ()
    pipeline_stages: tuple[tuple[int, ...], ...] = ()
    schedule: StepSchedule | None = None

    def algorithm(self, group: str | None) -> str | None:
        """The algorithm :attr:`group_algorithms` gives the named ``group``, or None (the instance's
        ``dimension_mode`` then)."""
        if group is None or not self.group_algorithms:
            return None
        return dict(self.group_algorithms).get(group)

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
            raise ValueError(
                f"policy: {policy!r} is not a bare policy name; fix: give "
                "header=WorkloadHeader(...) "
                "(hieropt.io.astrasim1.parse_header parses a header line)"
            )
        data["header"] = {"policy": policy.strip()}
        return data

    @field_validator("more_stages")
    @classmethod
    def _flat_stages(cls, v: tuple[Workload, ...]) -> tuple[Workload, ...]:
        for i, w in enumerate(v):
            if w.more_stages:
                raise ValueError(
                    f"more_stages[{i}].more_stages: a further stage has stages of its own; "
                    "fix: list "
                    "every stage once in the first stage's more_stages"
                )
        return v

    @property
    def stages(self) -> tuple[Workload, ...]:
        """This workload and its :attr:`more_stages`: every distinct pipeline stage (one for most
        workloads)."""
        return (self,) + self.more_stages if self.more_stages else (self,)

    @model_validator(mode="after")
    def _header_fits_layers(self) -> Workload:
        # pydantic runs this again for a validated workload placed into an instance (a sweep's
        # instances share one workload): checked once per (layers, header)
        self.memo("_fits_layers", (self.layers, self.header), self._check_fits_layers)
        return self

    def _check_fits_layers(self) -> bool:
        n = len(self.layers)
        h = self.header
        if h is not None:
            if h.declared_layers is not None and h.declared_layers != n:
                raise ValueError(
                    f"header.declared_layers: the header says {h.declared_layers} layers "
                    "but there are "
                    f"{n}; fix: set it to {n}"
                )
            numbered = [("checkpoints", i) for i in h.checkpoints or ()]
            numbered += [("checkpoint_initiates", i) for i in h.checkpoint_initiates or ()]
            if h.last_bottom_layer is not None:
                numbered.append(("last bottom layer", h.last_bottom_layer))
            for key, i in numbered:
                if i >= n:
                    raise ValueError(
                        f"header.{key}: layer {i} does not exist (layers are numbered 0 .. "
                        f"{n - 1}); "
                        f"fix: use a layer number below {n}"
                    )
        customized = h is not None and h.policy == "HYBRID_CUSTOMIZED"
        if isinstance(self.layers, LayerTable):
            wrong = np.flatnonzero((self.layers.policies == 0) == customized)
            if wrong.size:  # the first offending layer, checked as one below
                self._check_policy(int(wrong[0]), self.layers.layer(int(wrong[0])), customized)
            return True
        for i, layer in enumerate(self.layers):
            self._check_policy(i, layer, customized)
        return True

    @staticmethod
    def _check_policy(i: int, layer: Layer, customized: bool) -> None:
        if customized and layer.policy is None:
            raise ValueError(
                f"layers[{i}].policy: missing; a HYBRID_CUSTOMIZED workload gives every layer its "
                f"own policy; fix: give one of {', '.join(LAYER_POLICIES)}"
            )
        if not customized and layer.policy is not None:
            raise ValueError(
                f"layers[{i}].policy: a per-layer policy ({layer.policy}) is only read under a "
                "HYBRID_CUSTOMIZED header; fix: drop it or use policy HYBRID_CUSTOMIZED"
            )

    @property
    def policy(self) -> str | None:
        """The header's policy line (e.g. ``"HYBRID_TRANSFORMER model_parallel_NPU_group: 4"``),
        None without a header; the policy name alone is ``header.policy``."""
        return self.header.line if self.header is not None else None

    @property
    def table(self) -> PhaseTable:
        """The layers as numpy arrays, built once per layers object (used by the traffic model and
        the evaluator; a copy with other layers, e.g. ``model_copy(update={"layers": ...})``, gets
        its own)."""
        cached = self.__dict__.get("_table_of")
        if cached is not None and cached[0] is self.layers:
            return cached[1]
        if isinstance(self.layers, LayerTable):
            table = self.layers.phase_table()
            self.__dict__["_table_of"] = (self.layers, table)
            return table
        table = LayerTable.from_layers(self.layers).phase_table()
        self.__dict__["_table_of"] = (self.layers, table)
        return table

    def mapping_mismatch(
        self, sizes: dict[str, tuple[int, ...]], how: str = "", npus: int | None = None
    ) -> tuple[str, str] | None:
        """The first reason the group sizes ``sizes`` (phase or named group -> NPUs on each
        dimension, e.g. a mapping's ``weight_grad = (1, 2, 4, 16)``) cannot state this workload, as
        (problem, fix), None when they can:

        - a phase whose collectives run on several groups (SimAI's scoped names: ``ALLTOALL_EP`` on
          the expert-parallel group next to plain ones on the phase's group), which one group per
          phase cannot hold;
        - an entry of :attr:`group_npus` whose phase or named group ``sizes`` gives another NPU
          count: ``("weight_grad: [1, 2, 4, 16] has 128 NPUs but ...", "give the weight_grad group
          256 NPUs, ...")`` (``how``: how to give it, added to the fix).

        ``npus``: the NPUs the stated degrees (:attr:`stated_degrees`) must multiply to (the
        network's, or one pipeline stage's; None: not known). The fix then offers only what meets
        it too (:meth:`_degree_fix`), so that following it does not trade this error for the
        network's or the stages' check, whose fix would point back here.
        """
        # (not the method's name)
        mixed = self.memo("_mixed_scopes_of", (self.layers,), self._mixed_scopes)
        if mixed is not None:
            return mixed
        for key, param, want in self.group_npus:
            got = sizes.get(key)  # (a named group the mapping lacks is reported by the instance)
            if got is not None and (n := math.prod(got)) != want:
                where = key if key in PHASES else f"groups.{key}"
                return (
                    f"{where}: {list(got)} has {n} NPUs but the workload {self.name} was "
                    "generated for "
                    f"{param} = {want} (its {key} collectives run over {want} NPUs)",
                    self._degree_fix(key, param, want, n, how, npus),
                )
        return None

    def _degree_fix(self, key: str, param: str, want: int, got: int, how: str,
                    npus: int | None) -> str:
        """The fix of a group of ``got`` NPUs for the degree ``param`` = ``want``: give the group
        ``want`` NPUs, or set ``param`` = ``got``; only the one that keeps the stated degrees'
        product at ``npus`` when exactly one does (both when ``npus`` or the degree is not
        known)."""
        give = f"give the {key} group {want} NPUs{how}"
        change = f"set {param} = {got} in the workload model"
        stated = dict(self.stated_degrees)
        if npus is None or param not in stated:
            return f"{give}, or {change}"
        keeps = math.prod(stated.values()) == npus
        changed = math.prod({**stated, param: got}.values()) == npus
        if keeps != changed:
            return give if keeps else change
        return f"{give}, or {change}"

    def _mixed_scopes(self) -> tuple[str, str] | None:
        if not isinstance(self.layers, LayerTable) and not any(
            ph.scope
            for layer in self.layers
            for ph in (layer.forward, layer.input_grad, layer.weight_grad)
        ):
            return None
        t = (
            self.layers
            if isinstance(self.layers, LayerTable)
            else LayerTable.from_layers(self.layers)
        )
        live = (t.kinds != 0) & (t.size_bytes > 0)
        for j, phase in enumerate(PHASES):
            codes = np.unique(t.scopes[live[:, j], j])
            if len(codes) > 1:
                i = int(np.flatnonzero(live[:, j] & (t.scopes[:, j] == codes[-1]))[0])
                names = ", ".join(f"_{LayerTable.SCOPES[c]}" if c else "none" for c in codes)
                return (
                    f"{phase}: the workload {self.name} runs its {phase} collectives on "
                    f"{len(codes)} groups "
                    f"(name suffixes {names}, e.g. layer {i} {t.names[i]!r}: SimAI's _EP is the "
                    "expert-parallel group, _DP_EP the expert-data-parallel one), but a "
                    "mapping gives each phase "
                    "one group",
                    "keep one scope per phase (a workload file per group), or use an LLM "
                    "plan (generator "
                    "'llm'), whose collectives name their groups",
                )
        return None

    @property
    def named_groups(self) -> frozenset[str]:
        """The named groups the workload's collectives run on (:attr:`Phase.group`; computed once
        per layers)."""
        def build() -> frozenset[str]:
            g = self.table.group
            return frozenset(g[g != None].tolist())  # noqa: E711 (element-wise)

        return self.memo("_named_groups", (self.layers,), build)

    @property
    def stated_degrees(self) -> tuple[tuple[str, int], ...]:
        """The parallel degrees whose product is the NPUs of one replica of this workload (one
        pipeline stage), as its generator states them: a transformer header's model-parallel group
        (``("tp", 16)``) and the degree of each :attr:`group_npus` entry on a phase, once per
        parameter (``("dp", 256)``; DLRM's ``("npus", 4096)``). Empty when the workload states no
        degree of its phases (a workload read from a file; an LLM plan, whose named groups the
        instance checks against its header). Example: GPT-3 TP 16 x DP 256 -> 4,096 NPUs."""
        out: dict[str, int] = {}
        for key, param, npus in self.group_npus:
            if key in PHASES:
                out.setdefault(param, npus)
        if not out:
            return ()
        h = self.header
        if (
            h is not None
            and h.policy in TRANSFORMER_POLICIES
            and h.model_parallel_npu_group
            and "tp" not in out
        ):
            out = {"tp": h.model_parallel_npu_group, **out}
        return tuple(out.items())
