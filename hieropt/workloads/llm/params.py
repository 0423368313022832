"""Inputs of the LLM training generator: the model architecture, the parallel training plan, the NPU
and the number formats (pydantic, frozen, unknown keys rejected, units in the field names).

:class:`LLMParams` bundles them and checks the cross-field rules a real plan must meet (degrees
multiply to the NPU count; heads, KV heads, FFN widths and the vocabulary split evenly over TP; at
least one layer per PP stage and virtual chunks; experts over EP and EP inside DP; the global batch
over DP x micro-batch; interleaved: at least as many micro-batches as stages). Every violation is a
``ValueError`` of the form ``"<field>: <problem>; fix: <fix>"``, which the readers turn into a
one-line :class:`hieropt.errors.InputError` naming the file and the field.

Sources of the defaults: Megatron-LM (Shoeybi et al. 2019, arXiv 1909.08053; Narayanan et al. 2021,
arXiv 2104.04473) for TP, PP and the interleaved schedule, Korthikanti et al. 2022 (arXiv
2205.05198) for sequence parallelism and selective recompute, Rajbhandari et al. 2020 (ZeRO, arXiv
1910.02054) for the ZeRO stages and the K = 12 bytes per parameter of mixed-precision Adam.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ...names import GROUP_ALGORITHMS, LLM_DEFAULT_ALGORITHM
from ...spec.base import check_number_fields
from .npu import NPU
from .plan_rules import (
    algorithm_table_value,
    check_batch,
    check_cp,
    check_degrees,
    check_moe,
    check_pp,
    check_recompute,
    check_recompute_layers,
    divisor_list,
)

MAX_LAYERS = 10_000
"""The most transformer blocks a model may have (the largest published models have under 200; a step
of 10,000 layers takes seconds to lower, and time grows linearly beyond)."""

MAX_SIZE = 2**40
"""The largest width, head count, vocabulary or sequence length a model may state (about 1.1e12; the
largest published are below 1e6): the byte and FLOP figures are products of several of them in
floats, and a vocabulary of 60 digits overflowed one."""

SCHEDULES = ("1f1b", "interleaved")

PLAN_GROUPS = ("tp", "cp", "pp", "dp", "ep", "edp", "dpc")
"""The parallel groups of a plan (:mod:`hieropt.workloads.llm.step`), each run by a collective
algorithm."""

RECOMPUTE = ("none", "selective", "full")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _numbers_are_numbers(cls, data: Any) -> Any:
        # (a float for a count or degree, tp = 8.0, is an error)
        return check_number_fields(cls, data)


class MoE(_Frozen):
    """Mixture-of-experts feed-forward layers (GShard / Switch / Mixtral / DeepSeek style).

    Attributes:
        experts: routed experts per MoE layer E (>= 2).
        top_k: experts each token is routed to k (1 <= k <= E).
        expert_ffn_size: FFN width of one expert f_e (elements); gated like the dense FFN
            (``gated_ffn``).
        shared_experts: always-active experts of width ``expert_ffn_size`` each (DeepSeek); they run
            on every token, are data-parallel like the dense layers and need no all-to-all.
        first_dense_layers: the first layers keep a dense FFN (DeepSeek-V3: 3).
        moe_layer_interval: from ``first_dense_layers`` on, every n-th layer is MoE (1: all; GShard:
            2).
        capacity_factor: routed token copies per expert relative to a perfectly balanced load (1.0:
            balanced, no padding); scales the expert compute, the all-to-all bytes and the expert
            activations.
    """

    experts: int = Field(ge=2)
    top_k: int = Field(ge=1)
    expert_ffn_size: int = Field(gt=0, le=MAX_SIZE)
    shared_experts: int = Field(default=0, ge=0)
    first_dense_layers: int = Field(default=0, ge=0)
    moe_layer_interval: int = Field(default=1, ge=1)
    capacity_factor: float = Field(default=1.0, ge=1.0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _k(self) -> MoE:
        if self.top_k > self.experts:
            raise ValueError(
                f"top_k: {self.top_k} exceeds the {self.experts} experts; fix: use 1 .. "
                f"{self.experts}"
            )
        return self


class Architecture(_Frozen):
    """A decoder-only transformer (GPT / Llama family).

    Attributes:
        name: the model's name.
        layers: transformer blocks L.
        hidden_size: model width h.
        heads: attention (query) heads a.
        kv_heads: key/value heads g for grouped-query attention (default ``heads``: multi-head
            attention; 1: multi-query attention).
        head_dim: width of one head d (default h / a).
        ffn_size: width of the dense feed-forward layer f.
        gated_ffn: SwiGLU-style gated FFN (three h x f matrices) instead of two (GeLU).
        vocab_size: tokenizer vocabulary V (padded by the plan's ``vocab_pad_multiple`` x TP as
            Megatron-LM does).
        sequence_length: tokens per training sequence s.
        norm: ``layernorm`` (scale and shift, 2h parameters) or ``rmsnorm`` (scale only, h).
        biases: linear layers carry biases (GPT-3: yes; Llama: no).
        dropout: dropout after attention softmax and after each block (its 1-byte masks are stored
            activations).
        position_embedding: ``learned`` (s x h parameters, GPT-3) or ``rotary`` (none, Llama).
        tied_embeddings: the output layer reuses the input embedding matrix (GPT-3) or has its own
            (Llama).
        moe: mixture-of-experts layers, or None for a dense model.
    """

    name: str = Field(min_length=1)
    layers: int = Field(ge=1, le=MAX_LAYERS)
    hidden_size: int = Field(gt=0, le=MAX_SIZE)
    heads: int = Field(ge=1, le=MAX_SIZE)
    kv_heads: int | None = Field(default=None, ge=1, le=MAX_SIZE)
    head_dim: int | None = Field(default=None, gt=0, le=MAX_SIZE)
    ffn_size: int = Field(gt=0, le=MAX_SIZE)
    gated_ffn: bool = False
    vocab_size: int = Field(gt=0, le=MAX_SIZE)
    sequence_length: int = Field(gt=0, le=MAX_SIZE)
    norm: Literal["layernorm", "rmsnorm"] = "layernorm"
    biases: bool = True
    dropout: bool = True
    position_embedding: Literal["learned", "rotary"] = "learned"
    tied_embeddings: bool = True
    moe: MoE | None = None

    @model_validator(mode="after")
    def _shapes(self) -> Architecture:
        if self.kv_heads is not None and self.heads % self.kv_heads:
            raise ValueError(
                f"kv_heads: {self.kv_heads} does not divide the {self.heads} heads (grouped-query "
                f"attention shares each KV head among heads/kv_heads query heads); fix: use one of "
                f"{divisor_list(self.heads)}"
            )
        if self.head_dim is None and self.hidden_size % self.heads:
            raise ValueError(
                f"head_dim: missing, and hidden_size {self.hidden_size} is not divisible by the "
                f"{self.heads} heads; fix: give head_dim"
            )
        if self.moe is not None and self.moe.first_dense_layers >= self.layers:
            raise ValueError(
                f"moe.first_dense_layers: {self.moe.first_dense_layers} leaves no MoE layer among "
                f"{self.layers}; fix: use fewer than {self.layers}"
            )
        return self

    @property
    def kv(self) -> int:
        """KV heads g."""
        return self.kv_heads if self.kv_heads is not None else self.heads

    @property
    def d_head(self) -> int:
        """Head width d."""
        return self.head_dim if self.head_dim is not None else self.hidden_size // self.heads

    @property
    def norm_params(self) -> int:
        """Parameters of one normalisation layer: 2h (LayerNorm) or h (RMSNorm)."""
        return (2 if self.norm == "layernorm" else 1) * self.hidden_size

    def is_moe(self, layer: int) -> bool:
        """Whether block ``layer`` (0-based) has an MoE feed-forward layer."""
        m = self.moe
        return (
            m is not None
            and layer >= m.first_dense_layers
            and (layer - m.first_dense_layers) % m.moe_layer_interval == 0
        )


class Plan(_Frozen):
    """How the model is trained: parallel degrees, schedule, sharding, batch and recompute.

    Attributes:
        npus: NPUs in the job (default: tp x cp x pp x dp); when given it must equal that product.
        tp: tensor-parallel degree t (Megatron-LM, Shoeybi et al. 2019).
        cp: context-parallel degree c: each sequence split over c NPUs (Llama 3's all-gather form:
            Llama Team 2024, arXiv 2407.21783, §3.3.2; :mod:`hieropt.workloads.llm.step`); dense
            models only.
        pp: pipeline stages p.
        dp: data-parallel degree (replicas of each stage's TP shard); the expert-parallel group lies
            inside it.
        ep: expert-parallel degree (NPUs sharing one MoE layer's experts); divides dp and the expert
            count.
        sequence_parallel: Megatron sequence parallelism (Korthikanti et al. 2022): TP all-reduces
            become reduce-scatter + all-gather and norm/dropout activations are split over TP.
        schedule: ``1f1b`` (PipeDream-Flush, Narayanan et al. 2021 §2.2.1) or ``interleaved``
            (§2.2.2), in any case.
        virtual_stages: model chunks per stage v of the interleaved schedule (>= 2 there, 1 with
            1f1b).
        microbatch_group_size: the interleaved schedule's N, micro-batches each stage runs back to
            back on one model chunk before the next (Megatron-LM's
            ``microbatch_group_size_per_vp_stage``; the N that Llama 3's schedule makes tunable,
            Llama Team 2024, arXiv 2407.21783, §3.3.2). Default (None): pp, the depth-first
            schedule of Narayanan et al. 2021. From pp to m with m mod N = 0 or >= pp (Megatron-LM's
            bounds: no stalls, so equal chunks take the same time for every N); a larger N keeps
            more micro-batches in flight (:func:`hieropt.workloads.llm.step.in_flight`).
        stage_layers: blocks per stage, first stage first, e.g. Llama 3 405B's one block fewer
            on the first and the last stage; with the interleaved schedule split over each stage's v
            chunks, the first stage's first chunk and the last stage's last chunk allowed to hold no
            block (only the embedding, only the output layer: Llama 3's 405B). Default: layers / pp
            each when they divide evenly over the pp x v chunks, else balanced stages
            (:mod:`hieropt.workloads.llm.layout`).
        zero_stage: ZeRO stage (Rajbhandari et al. 2020) over the DP group: 0 none, 1 optimizer
            state, 2 + gradients, 3 + parameters (FSDP).
        micro_batch_size: sequences per micro-batch b.
        global_batch_size: sequences per iteration B (fixed); micro-batches per iteration m = B /
            (dp b).
        recompute: activation recompute ``none``, ``selective`` (attention core, Korthikanti et al.
            2022 §5) or ``full`` (every block from its input checkpoint), in any case.
        recompute_layers: with ``full`` recompute, the first min(recompute_layers, its blocks)
            blocks of each stage (of each model chunk when interleaved) are recomputed, the others
            keep their activations as without recompute (Megatron-LM's ``--recompute-method block
            --recompute-num-layers N``, counted per TransformerBlock, one per chunk); None
            (default): every block. Only with ``full``; at most the model's blocks (a chunk with
            fewer recomputes all of its own).
        vocab_pad_multiple: the vocabulary is padded to a multiple of this x tp (Megatron-LM's 128).
        overlap_grad_reduce: the per-iteration gradient reduction overlaps the last backward pass
            (Megatron-LM's overlap-grad-reduce; loop ``step``'s ``overlap_dp``); ZeRO 2/3: a note.
        overlap_param_gather: ZeRO 1/2's all-gather of the updated parameters, else exposed after
            the optimizer step, runs during the next iteration's first forward (Megatron-LM's
            overlap-param-gather; loop ``step``'s ``overlap_gather``, :mod:`hieropt.model.gathers`).
            Needs zero_stage 1/2 and ``overlap_grad_reduce``; 1F1B only (interleaved: a note).
        overlap_sharded_comms: with ZeRO stage 2 or 3, the per-micro-batch DP collectives
            (gradient reduce-scatter; ZeRO-3's parameter all-gathers) run on their own stream
            through the micro-batch, as FSDP and DeepSpeed (overlap_comm, prefetching) run them
            (loop ``step``'s ``overlap_groups``, :mod:`hieropt.model.overlap`); False (default):
            exposed, each in its pass. Refused with ZeRO stage 0 or 1 (nothing to overlap).
        overlap_tp_comms: the TP collectives run on their own stream, pipelined with the GEMMs
            they feed and follow, as Megatron-Core and Transformer Engine run them
            (``tp_comm_overlap``, userbuffers; Wang et al. 2022, "Overlap Communication with
            Dependent Computation via Decomposition in Large Deep Learning Models", ASPLOS'23):
            the micro-batch slot of :mod:`hieropt.model.overlap` with the TP group on the own
            stream; False (default): exposed in its layer. Needs ``sequence_parallel`` when tp >
            1 (as Megatron-LM). Not with ``overlap_grad_reduce`` under 1F1B (one overlap of the
            last backward per plan).
        scatter_gather_sends: without sequence parallelism, each of the t TP NPUs sends n h e / t
            of a pipeline send and the receiver all-gathers it over TP (Megatron-LM's default,
            Narayanan et al. 2021 §4.1); False: every NPU sends the whole n h e.
        flash_attention: the attention core runs fused (FlashAttention, Dao et al. 2022, arXiv
            2205.14135): not the a_t b s^2 scores and softmax, only the softmax statistics (one
            fp32 value per query head and token) are stored (:mod:`hieropt.model.memory`).
        collective_algorithms: the algorithm running each group's collectives over the dimensions
            it spans (:data:`hieropt.names.GROUP_ALGORITHMS`), e.g. ``{tp = "flat_ring"}``; else
            ``sequential`` (:data:`hieropt.names.LLM_DEFAULT_ALGORITHM`, docs/llm-training.md).
    """

    npus: int | None = Field(default=None, ge=1)
    tp: int = Field(default=1, ge=1)
    cp: int = Field(default=1, ge=1)
    pp: int = Field(default=1, ge=1)
    dp: int = Field(default=1, ge=1)
    ep: int = Field(default=1, ge=1)
    sequence_parallel: bool = False
    schedule: Literal["1f1b", "interleaved"] = "1f1b"
    virtual_stages: int = Field(default=1, ge=1)
    microbatch_group_size: int | None = Field(default=None, ge=1)
    stage_layers: tuple[int, ...] | None = None
    zero_stage: int = Field(default=0, ge=0, le=3)
    micro_batch_size: int = Field(default=1, ge=1)
    global_batch_size: int = Field(ge=1)
    recompute: Literal["none", "selective", "full"] = "none"
    recompute_layers: int | None = Field(None, ge=0, json_schema_extra={"default_text": "all"})
    vocab_pad_multiple: int = Field(default=128, ge=1)
    overlap_grad_reduce: bool = False
    overlap_param_gather: bool = False
    overlap_sharded_comms: bool = False
    overlap_tp_comms: bool = False
    flash_attention: bool = False
    scatter_gather_sends: bool = True
    collective_algorithms: tuple[tuple[Literal[PLAN_GROUPS], Literal[GROUP_ALGORITHMS]], ...] = ()

    @field_validator("schedule", "recompute", mode="before")
    @classmethod
    def _name_any_case(cls, v: Any) -> Any:
        """A schedule or recompute name in any case (``1F1B``, as the papers write it)."""
        return v.lower() if isinstance(v, str) else v

    @field_validator("collective_algorithms", mode="before")
    @classmethod
    def _algorithm_table(cls, v: Any) -> Any:
        if not isinstance(v, dict):
            return algorithm_table_value(v, PLAN_GROUPS)
        for g, a in v.items():  # (a TOML table, kept hashable as sorted pairs)
            if g not in PLAN_GROUPS:
                raise ValueError(f"{g}: no such group; fix: use one of {', '.join(PLAN_GROUPS)}")
            if a not in GROUP_ALGORITHMS:
                raise ValueError(f"{g}: unknown algorithm {a!r}; fix: use one of "
                                 f"{', '.join(GROUP_ALGORITHMS)}")
        return tuple(sorted(v.items()))

    @model_validator(mode="after")
    def _recompute_layers(self) -> Plan:
        check_recompute(self)
        return self

    def algorithm(self, group: str) -> str:
        """The algorithm of ``group``'s collectives: :attr:`collective_algorithms` or the LLM
        default."""
        return dict(self.collective_algorithms).get(group, LLM_DEFAULT_ALGORITHM)

    @property
    def recompute_note(self) -> str:
        """The recompute in words: ``none``, ``selective``, ``full``, or with
        :attr:`recompute_layers` ``full, the first 5 blocks of each stage`` (``of each model chunk``
        with the interleaved schedule; with 0, ``full of no block (recompute_layers 0)``)."""
        n = self.recompute_layers
        if self.recompute != "full" or n is None:
            return self.recompute
        if n == 0:
            return "full of no block (recompute_layers 0)"
        where = "model chunk" if self.virtual_stages > 1 else "stage"
        blocks = "block" if n == 1 else "blocks"
        return f"full, the first {n} {blocks} of each {where}"

    @property
    def microbatches(self) -> int:
        """Micro-batches per iteration per DP replica m = B / (dp b) (exact once :class:`LLMParams`
        validated)."""
        return self.global_batch_size // (self.dp * self.micro_batch_size)

    @property
    def group_size(self) -> int:
        """The interleaved schedule's micro-batch group N: :attr:`microbatch_group_size`, else
        pp."""
        return self.microbatch_group_size or self.pp

    @property
    def total_npus(self) -> int:
        """tp x cp x pp x dp."""
        return self.tp * self.cp * self.pp * self.dp

    @property
    def dpc(self) -> int:
        """dp x cp: the NPUs holding the same weights, which reduce (and with ZeRO shard) their
        gradients."""
        return self.dp * self.cp

    @property
    def edp(self) -> int:
        """Expert-data-parallel degree dp / ep: replicas of one expert shard, which all-reduce its
        gradients."""
        return self.dp // self.ep


GRADIENT_BYTES: dict[str, int] = {"bf16": 4, "fp8": 4, "tf32": 4, "fp16": 2}
"""Default bytes of a weight gradient, kept and reduced over data parallelism, per training number
format (``NPU.number_format``), when the model file gives no ``gradient_bytes``:

- bf16: 4. Megatron-LM forces FP32 gradient accumulation and all-reduce for bf16 (its
  ``arguments.py``: "bfloat16 requires gradient accumulation and all-reduce to be done in fp32";
  ``--grad-reduce-in-bf16`` is an opt-in), NeMo follows it, PyTorch FSDP's ``MixedPrecision``
  reduces in fp32 unless ``reduce_dtype`` is set, and the Llama 3 405B run accumulated and
  reduce-scattered its gradients in FP32 (Llama Team 2024, "The Llama 3 Herd of Models", arXiv
  2407.21783, §3.3.2 and §3.3.4).
- fp8: 4. FP8 recipes (Transformer Engine under Megatron-LM / NeMo) run the GEMMs in fp8 and keep
  the bf16 / fp32 master weights and FP32 main gradients of bf16 training.
- tf32: 4. Training in fp32 (tf32 only rounds the GEMM inputs): fp32 gradients.
- fp16: 2. Megatron-LM reduces fp16 gradients in 16 bits (the FP32 accumulation above is forced for
  bf16 only; Narayanan et al. 2021, arXiv 2104.04473, train in fp16 so).
"""


def default_gradient_bytes(number_format: str) -> int:
    """The gradient bytes of ``number_format`` (:data:`GRADIENT_BYTES`; its sources there).

    Raises:
        KeyError: a number format :data:`GRADIENT_BYTES` does not list (``NPU`` admits none).
    """
    return GRADIENT_BYTES[number_format]


ELEMENT_BYTES: dict[str, int] = {"bf16": 2, "fp16": 2, "fp8": 2, "tf32": 4}
"""Default bytes of a stored activation element (and the TP / PP / EP messages) and of the working
copy of a weight (and its all-gathers), per training number format (``NPU.number_format``), when
the model file gives no ``activation_bytes`` / ``weight_bytes``:

- bf16, fp16: 2. Mixed-precision training keeps activations and the working weights in 16 bits
  (Micikevicius et al. 2018, "Mixed Precision Training", arXiv 1710.03740).
- fp8: 2. FP8 recipes (Transformer Engine) cast to fp8 inside the GEMMs only; the activations
  passed between layers and the working weights stay bf16.
- tf32: 4. TF32 is a Tensor Core matmul mode on FP32 tensors: the GEMM inputs are rounded to a
  10-bit mantissa inside the Tensor Core, the tensors themselves are stored in FP32 (NVIDIA A100
  Tensor Core GPU Architecture whitepaper, 2020, "TF32"; PyTorch's
  ``torch.backends.cuda.matmul.allow_tf32`` applies to float32 tensors), so 4 bytes each.
"""


def default_element_bytes(number_format: str) -> int:
    """The activation and weight bytes of ``number_format`` (:data:`ELEMENT_BYTES`; its sources
    there).

    Raises:
        KeyError: a number format :data:`ELEMENT_BYTES` does not list (``NPU`` admits none).
    """
    return ELEMENT_BYTES[number_format]


class Precision(_Frozen):
    """Bytes per element of each kind of data (mixed-precision training by default).

    Attributes:
        activation_bytes: stored activations and the TP / PP / EP messages; None (the default):
            the NPU's number format's (:data:`ELEMENT_BYTES`: 2 for bf16, fp16 and fp8; 4 for
            tf32, an FP32 tensor), resolved by :attr:`LLMParams.activation_bytes`. A value given
            wins.
        weight_bytes: the working copy of the weights and their all-gathers; None (the default):
            the number format's, as ``activation_bytes`` (:attr:`LLMParams.weight_bytes`).
        gradient_bytes: weight gradients, as kept and reduced over data parallelism; None (the
            default): the NPU's number format's (:data:`GRADIENT_BYTES`: 4, an FP32 reduction, for
            bf16, fp8 and tf32; 2 for fp16), resolved by :attr:`LLMParams.gradient_bytes`. A value
            given wins.
        optimizer_bytes_per_param: optimizer state per parameter (12: Adam's fp32 master weight,
            momentum and variance, Rajbhandari et al.'s K = 12).
        mask_bytes: one dropout-mask element (1, Korthikanti et al. 2022).
        logits_bytes: one element of the logits kept for the cross-entropy loss (4: fp32).
    """

    activation_bytes: int | None = Field(default=None, ge=1, json_schema_extra={"default_text": (
        "the number format's: `2` for bf16, fp16 and fp8, `4` (fp32 tensors) for tf32")})
    weight_bytes: int | None = Field(default=None, ge=1, json_schema_extra={"default_text": (
        "the number format's: `2` for bf16, fp16 and fp8, `4` (fp32 tensors) for tf32")})
    gradient_bytes: int | None = Field(default=None, ge=1, json_schema_extra={"default_text": (
        "the number format's: `4` (fp32 reduce) for bf16, fp8 and tf32, `2` for fp16")})
    optimizer_bytes_per_param: int = Field(default=12, ge=0)
    mask_bytes: int = Field(default=1, ge=0)
    logits_bytes: int = Field(default=4, ge=1)


class LLMParams(_Frozen):
    """One model trained with one plan on one kind of NPU: the input of
    :func:`hieropt.workloads.llm.build_step`.

    Raises pydantic's ``ValidationError`` (messages ``"<field>: <problem>; fix: <fix>"``) when the
    plan does not fit the model (see the module docstring for the rules). Validated with the
    context ``{"plan_rules": False}`` (``LLMParams.model_validate(data, context=...)``), the
    rules between the plan and the model are left to whoever replaces the plan's varied fields
    (a co-design space's plans, each checked when enumerated); every field is still checked on
    its own.

    Attributes:
        name: the workload's name (default: the model's ``name``).
        model: the architecture (``[params.model]``, :class:`Architecture`).
        plan: the training plan (``[params.plan]``, :class:`Plan`).
        npu: the accelerator (``[params.npu]``, :class:`NPU`).
        precision: bytes per element of each kind of data (``[params.precision]``,
            :class:`Precision`).
    """

    name: str | None = None
    model: Architecture
    plan: Plan
    npu: NPU
    precision: Precision = Precision()

    _plan_rules_deferred: bool = PrivateAttr(default=False)

    @model_validator(mode="after")
    def _fits(self, info: ValidationInfo) -> LLMParams:
        if isinstance(info.context, dict) and info.context.get("plan_rules") is False:
            self._plan_rules_deferred = True  # (kept when a space holding it is validated)
        if self._plan_rules_deferred:
            return self
        m, p = self.model, self.plan
        check_degrees(p)
        _check_tp(m, p)
        check_pp(m, p)
        check_cp(m, p)
        check_moe(m, p)
        check_batch(m, p)
        check_recompute_layers(m, p)
        return self

    @property
    def workload_name(self) -> str:
        """``name``, or the model's name."""
        return self.name or self.model.name

    @property
    def gradient_bytes(self) -> int:
        """Bytes of a weight gradient, as kept and reduced over data parallelism:
        ``precision.gradient_bytes`` when given, else the default of the NPU's number format
        (:data:`GRADIENT_BYTES`: 4 for bf16, fp8 and tf32, 2 for fp16)."""
        given = self.precision.gradient_bytes
        return given if given is not None else default_gradient_bytes(self.npu.number_format)

    @property
    def activation_bytes(self) -> int:
        """Bytes of a stored activation element and of the TP / PP / EP messages:
        ``precision.activation_bytes`` when given, else the default of the NPU's number format
        (:data:`ELEMENT_BYTES`: 2 for bf16, fp16 and fp8, 4 for tf32)."""
        given = self.precision.activation_bytes
        return given if given is not None else default_element_bytes(self.npu.number_format)

    @property
    def weight_bytes(self) -> int:
        """Bytes of an element of the working weights and their all-gathers:
        ``precision.weight_bytes`` when given, else the default of the NPU's number format
        (:data:`ELEMENT_BYTES`: 2 for bf16, fp16 and fp8, 4 for tf32)."""
        given = self.precision.weight_bytes
        return given if given is not None else default_element_bytes(self.npu.number_format)

    @property
    def gradient_bytes_note(self) -> str:
        """:attr:`gradient_bytes` with where it comes from, e.g. ``"4 (fp32 reduce, the default for
        bf16)"``, ``"2 (16-bit reduce, the default for fp16)"``, ``"4 (given, as the default for
        bf16)"`` or ``"2 (given; the default for bf16 is 4)"``."""
        b, fmt = self.gradient_bytes, self.npu.number_format
        default = default_gradient_bytes(fmt)
        if self.precision.gradient_bytes is not None:
            return (f"{b} (given, as the default for {fmt})" if b == default
                    else f"{b} (given; the default for {fmt} is {default})")
        kind = "fp32 reduce" if b == 4 else f"{8 * b}-bit reduce"
        return f"{b} ({kind}, the default for {fmt})"

    @property
    def padded_vocab(self) -> int:
        """V padded up to a multiple of ``vocab_pad_multiple`` x tp (Megatron-LM)."""
        q = self.plan.vocab_pad_multiple * self.plan.tp
        return -(-self.model.vocab_size // q) * q


def _check_tp(m: Architecture, p: Plan) -> None:
    t = p.tp
    if m.heads % t:
        raise ValueError(
            f"plan.tp: {t} does not divide the {m.heads} attention heads; fix: use one of "
            f"{divisor_list(m.heads)}"
        )
    if m.kv % t and t % m.kv:
        raise ValueError(
            f"plan.tp: {t} neither divides nor is a multiple of the {m.kv} KV heads (each "
            "TP rank holds "
            f"kv_heads/tp heads, or one replicated head); fix: use a divisor or multiple of {m.kv}"
        )
    widths = [("ffn_size", m.ffn_size)]
    if m.moe is not None:
        widths.append(("moe.expert_ffn_size", m.moe.expert_ffn_size))
    for name, w in widths:
        if w % t:
            raise ValueError(
                f"plan.tp: {t} does not divide model.{name} {w}; fix: use one of "
                f"{divisor_list(w)}"
            )
    if p.sequence_parallel and m.sequence_length % t:
        raise ValueError(
            f"plan.sequence_parallel: sequence_length {m.sequence_length} is not divisible "
            f"by tp {t}; "
            "fix: use a tp that divides the sequence length or turn sequence parallelism off"
        )
    if p.sequence_parallel and t == 1:
        raise ValueError(
            "plan.sequence_parallel: needs tp > 1 (it splits activations over the TP "
            "group); fix: set "
            "tp > 1 or sequence_parallel = false"
        )


__all__ = [
    "PLAN_GROUPS",
    "MoE",
    "Architecture",
    "Plan",
    "NPU",
    "Precision",
    "GRADIENT_BYTES",
    "default_gradient_bytes",
    "ELEMENT_BYTES",
    "default_element_bytes",
    "LLMParams",
    "SCHEDULES",
    "RECOMPUTE",
]
