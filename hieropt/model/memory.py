"""Memory per NPU of an LLM training plan, per pipeline stage, against the NPU's HBM.

Four parts (bytes on one NPU of stage r; P, X: the stage's dense and expert parameters on that NPU,
after TP and PP; dp x cp, edp = dp / ep the groups that replicate them; w, g: weight and gradient
bytes, g :attr:`~hieropt.workloads.llm.params.LLMParams.gradient_bytes` (by default 4, FP32 main
gradients, for bf16 and fp8 training, 2 for fp16); K optimizer bytes per parameter):

- **weights** P w + X w, divided by dp (edp) under ZeRO 3, which then also holds the gathered
  parameters of ``ZERO3_LIVE_LAYERS`` layers (the one computing and the one prefetched, FSDP's
  default) in full;
- **gradients** (P + X) g, divided by dp (edp) from ZeRO 2 on, which then also holds one layer's
  full gradient before its reduce-scatter;
- **optimizer** (P + X) K, divided by dp (edp) from ZeRO 1 on (Rajbhandari et al. 2020, arXiv
  1910.02054, §5: with mixed-precision Adam 2 + 2 + K bytes per parameter, K = 12; with FP32
  gradients 2 + 4 + K);
- **activations** (divided by cp: each NPU holds 1/cp of every sequence, its K/V shard, and scores
  for its queries only) of the in-flight micro-batches
  (:func:`hieropt.workloads.llm.step.in_flight`: 1F1B keeps min(m, p - r), the interleaved
  schedule min(m v, 2 (p - r - 1) + (v - 1) N + 1) / v with N the micro-batch group, p by default;
  Korthikanti et al. 2022, arXiv 2205.05198, §4.2.3, and Megatron-LM's warm-up counts); a stage
  whose chunks differ (the first stage's first chunk holding only the embedding) is weighted by its
  chunks' activations along the schedule (:func:`stage_in_flight`).

Activations of one block for one micro-batch (Korthikanti et al. 2022 §4.1-4.2, generalised to GQA,
gated FFNs, MoE and no dropout; e activation bytes, u mask bytes (0 without dropout), T = t with
sequence parallelism else 1):

- attention: norm input and QKV input 2 n h e / T; Q, K, V n (a_t + 2 g_t) d e; scores' softmax
  output a_t b s^2 e, with dropout its mask a_t b s^2 u and output a_t b s^2 e (the "5 a s^2 b" of
  Korthikanti et al.); output-projection input n a_t d e; residual-dropout mask n h u / T;
- dense FFN: norm input and FC1 input 2 n h e / T; FC2 input n f_t e, activation input n f_t e (x 2
  gated: gate and up outputs); dropout mask n h u / T;
- MoE FFN: norm input and router input 2 n h e / T, router output n E e / T; for the r routed copies
  expert input and output 2 r h e / T, FC2 and activation inputs as the dense FFN with width f_e /
  t; shared experts as a dense FFN; dropout mask n h u / T.

For GPT-3-style blocks (q = kv = h, f = 4h, dropout, e = 2, u = 1) this is Korthikanti et al.'s
s b h (10 + 24 / t + 5 a s / (h t)) without and s b h (34 / t + 5 a s / (h t)) with sequence
parallelism. Selective recompute drops the softmax terms (a_t b s^2 (2e + u), or a_t b s^2 e without
dropout). FlashAttention (``flash_attention``; Dao et al. 2022, arXiv 2205.14135) drops them too and
keeps the softmax statistics instead, one fp32 log-sum-exp per query head and token: n a_t x
``FLASH_STATS_BYTES``. Full recompute keeps each block's input n h e / T (a checkpoint, split over
TP with sequence parallelism as Megatron-LM stores it) per in-flight micro-batch, plus the whole
activations of the one block being recomputed. With ``recompute_layers`` only the first blocks of
each stage or chunk are recomputed (:func:`hieropt.workloads.llm.layout.recomputed_blocks`): they
keep their checkpoints, the others their activations as without recompute, and recomputing a block
adds its activations less those of its chunk's blocks that are not recomputed (back-propagated, and
freed, before it), at least 0 (:func:`_partial_parts`). The embedding stores its dropout mask
n h u / T; the output layer its input and the final norm's input 2 n h e / T and the logits n V_t x
``logits_bytes`` for the cross-entropy loss.

FP8 training (``number_format = "fp8"``): the stored inputs of the linear layers' GEMMs take
``FP8_INPUT_BYTES`` = 1 byte per element, g below e (Transformer Engine keeps the FP8 copy it cast
for the forward GEMM, and the weight-gradient GEMM reads it): the QKV and FC1 inputs (the norm
outputs), the FC2 inputs (dense, shared and expert FFNs) and the projection's input, which with
FlashAttention is kept twice (its output O in e bytes for its own backward, and the FP8 copy): n h
(e + g) / T for a norm's input and output, n a_t d (e + g) (FlashAttention) or n a_t d g; norm
inputs, Q, K, V, the activation functions' inputs, the router's and the experts' dispatch stay in e
bytes.

Not counted: activation gradients and temporary buffers of the layer being back-propagated,
communication buffers, the framework's own memory (the NPU's ``hbm_reserve_gib`` stands for these).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from ..cache import Same
from ..errors import NoSolutionError
from ..units import GB, GIB
from ..workloads.llm.counts import routed_tokens, shape
from ..workloads.llm.layout import partial_recompute, recomputed_blocks, stage_chunks
from ..workloads.llm.params import LLMParams
from ..workloads.llm.step import Op, Step, in_flight, peak_in_flight, stage_layers

FP8_INPUT_BYTES = 1
"""Bytes per element of a linear layer's stored GEMM input under FP8 training
(:func:`gemm_input_bytes`)."""

FLASH_STATS_BYTES = 4
"""Bytes of FlashAttention's saved softmax statistic (the log-sum-exp, fp32) per query head and
token."""

ZERO3_LIVE_LAYERS = 2
"""Layers whose parameters ZeRO 3 holds gathered at once (the current one and the prefetched next
one)."""


@dataclass(frozen=True)
class StageMemory:
    """Bytes per NPU of one pipeline stage, by part."""

    stage: int
    weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    in_flight: float = 0.0
    """Micro-batches whose activations the stage holds at its peak (weighted by its chunks':
    :func:`hieropt.workloads.llm.step.peak_in_flight`)."""

    @property
    def total_bytes(self) -> float:
        """Sum of the four parts."""
        return (
            self.weights_bytes
            + self.gradients_bytes
            + self.optimizer_bytes
            + self.activations_bytes
        )

    def as_dict(self) -> dict[str, float]:
        """The parts and the total, keyed ``weights_bytes`` ... ``total_bytes`` (and ``stage``,
        ``in_flight``)."""
        return {
            "stage": self.stage,
            "weights_bytes": self.weights_bytes,
            "gradients_bytes": self.gradients_bytes,
            "optimizer_bytes": self.optimizer_bytes,
            "activations_bytes": self.activations_bytes,
            "total_bytes": self.total_bytes,
            "in_flight": self.in_flight,
        }


@dataclass(frozen=True)
class MemoryReport:
    """Per-stage memory of a plan and whether the fullest stage fits in the HBM less the reserve.

    Attributes:
        stages: one :class:`StageMemory` per pipeline stage, first stage first.
        capacity_bytes: HBM per NPU; reserve_bytes: the part kept free.
    """

    stages: tuple[StageMemory, ...]
    capacity_bytes: float
    reserve_bytes: float

    @property
    def available_bytes(self) -> float:
        """HBM the plan may use: capacity less reserve."""
        return self.capacity_bytes - self.reserve_bytes

    @cached_property
    def peak(self) -> StageMemory:
        """The stage needing the most memory (the first of equals); computed once (a co-design
        search reads it for every shape a plan is placed on)."""
        return max(self.stages, key=lambda m: (m.total_bytes, -m.stage))

    @property
    def fits(self) -> bool:
        """Every stage fits in the available HBM."""
        return self.peak.total_bytes <= self.available_bytes

    @property
    def over_bytes(self) -> float:
        """How far the fullest stage exceeds the available HBM (<= 0 when it fits)."""
        return self.peak.total_bytes - self.available_bytes

    def message(self) -> str:
        """One line: the peak stage's need against the available HBM, and by how much it does not
        fit."""
        pk = self.peak
        need = f"stage {pk.stage} needs {pk.total_bytes / GB:,.2f} GB per NPU"
        have = (
            f"{self.available_bytes / GB:,.2f} GB available ({self.capacity_bytes / GIB:g} "
            "GiB HBM less "
            f"{self.reserve_bytes / GIB:g} GiB reserve)"
        )
        if self.fits:
            return f"fits: {need} of {have}"
        return f"does not fit: {need}, {self.over_bytes / GB:,.2f} GB more than the {have}"

    def distinct(self) -> list[StageMemory]:
        """The stages whose parts differ from the previous stage's (the first always): "per stage
        where they differ"."""
        out: list[StageMemory] = []
        for m in self.stages:
            parts = (m.weights_bytes, m.gradients_bytes, m.optimizer_bytes, m.activations_bytes)
            if not out or parts != (
                out[-1].weights_bytes,
                out[-1].gradients_bytes,
                out[-1].optimizer_bytes,
                out[-1].activations_bytes,
            ):
                out.append(m)
        return out


# -------------------------------------------------------------------------------------- activations
def attention_activation_bytes(p: LLMParams, core: bool = True) -> float:
    """Stored activations of one attention layer (with its norm) per micro-batch on one NPU, bytes;
    ``core=False`` leaves out the softmax terms (selective recompute); with ``flash_attention`` they
    are left out and the softmax statistics kept. Formula: module docstring."""
    x, pr, mdl = shape(p), p.precision, p.model
    e, u = p.activation_bytes, pr.mask_bytes if mdl.dropout else 0
    T = x.seq_split
    g = gemm_input_bytes(p)
    # the projection's input: FlashAttention keeps its output O, the FP8 linear its own FP8 copy
    o = e + g if p.plan.flash_attention and g != e else g
    out = (
        x.n * x.h * (e + g) / T + x.n * (x.q_t + 2 * x.kv_t) * e + x.n * x.q_t * o
        + x.n * x.h * u / T
    )
    if p.plan.flash_attention:
        return out + x.n * x.a_t * FLASH_STATS_BYTES
    if core:
        out += x.a_t * x.b * x.s * x.s * ((2 * e + u) if mdl.dropout else e)
    return out


def gemm_input_bytes(p: LLMParams) -> float:
    """Bytes per element of a stored input of a linear layer's GEMM (QKV, projection, FC1, FC2):
    ``activation_bytes``, or under FP8 training (``number_format = "fp8"``) :data:`FP8_INPUT_BYTES`
    (Transformer Engine keeps the FP8 copy of the input it cast for the forward GEMM, and the
    weight-gradient GEMM reads it), at most ``activation_bytes``."""
    e = p.activation_bytes
    return min(e, FP8_INPUT_BYTES) if p.npu.number_format == "fp8" else e


def _ffn_body(p: LLMParams, tokens: float, width_t: int) -> float:
    x, e = shape(p), p.activation_bytes
    # activation input(s) + FC2 input
    return tokens * width_t * e * (x.m - 1) + tokens * width_t * gemm_input_bytes(p)


def ffn_activation_bytes(p: LLMParams) -> float:
    """Stored activations of one dense FFN layer (with its norm) per micro-batch on one NPU,
    bytes."""
    x, pr = shape(p), p.precision
    u = pr.mask_bytes if p.model.dropout else 0
    T = x.seq_split
    e, g = p.activation_bytes, gemm_input_bytes(p)
    return x.n * x.h * (e + g) / T + _ffn_body(p, x.n, x.f_t) + x.n * x.h * u / T


def moe_activation_bytes(p: LLMParams) -> float:
    """Stored activations of one MoE FFN layer (with its norm) per micro-batch on one NPU, bytes."""
    moe = p.model.moe
    assert moe is not None
    x, pr = shape(p), p.precision
    e, u, T = p.activation_bytes, pr.mask_bytes if p.model.dropout else 0, x.seq_split
    fe_t = moe.expert_ffn_size // x.t
    r = routed_tokens(p)
    out = (
        2 * x.n * x.h * e / T
        + x.n * moe.experts * e / T
        + 2 * r * x.h * e / T
        + _ffn_body(p, r, fe_t)
    )
    if moe.shared_experts:
        out += _ffn_body(p, x.n, moe.shared_experts * fe_t)
    return out + x.n * x.h * u / T


def checkpoint_bytes(p: LLMParams) -> float:
    """A block's input kept by full recompute, per micro-batch on one NPU: n h e / T bytes."""
    x = shape(p)
    return x.n * x.h * p.activation_bytes / x.seq_split


def _op_activations(p: LLMParams, op: Op, core: bool) -> float:
    x, pr = shape(p), p.precision
    if op.kind == "attention":
        return attention_activation_bytes(p, core)
    if op.kind == "mlp":
        return ffn_activation_bytes(p)
    if op.kind == "moe":
        return moe_activation_bytes(p)
    if op.kind == "embedding":
        return x.n * x.h * (pr.mask_bytes if p.model.dropout else 0) / x.seq_split
    return 2 * x.n * x.h * p.activation_bytes / x.seq_split + x.n * x.v_t * pr.logits_bytes


def stage_activation_bytes(p: LLMParams, step: Step, stage: int) -> float:
    """Peak stored activations of ``stage`` on one NPU, bytes: per-micro-batch activations x
    in-flight micro-batches (module docstring)."""
    st = step.stages[stage]
    return _activations(_activation_parts(p, [(op, 1) for op in st.ops], {}, stage),
                        stage_in_flight(p, stage, {}))


def chunk_activation_bytes(p: LLMParams, stage: int, kind_bytes: dict[tuple[str, bool], float],
                           chunks: list[list[range]] | None = None) -> tuple[float, ...]:
    """Activations one micro-batch leaves on each of ``stage``'s chunks (its blocks' or, for the
    blocks full recompute recomputes, their checkpoints, and the embedding / output layer it holds:
    :func:`hieropt.workloads.llm.layout.recomputed_blocks`), bytes per NPU before
    the division by cp, one per chunk in order; ``kind_bytes`` as :func:`_activation_parts`,
    ``chunks`` :func:`hieropt.workloads.llm.layout.stage_chunks` if already computed."""
    pl, mode = p.plan, p.plan.recompute
    chunks = (stage_chunks(p) if chunks is None else chunks)[stage]
    last = pl.pp * len(chunks) - 1

    def act(kind: str) -> float:
        key = (kind, mode != "selective")  # (blocks full recompute leaves alone keep the core)
        if key not in kind_bytes:
            kind_bytes[key] = _op_activations(p, Op(kind, kind, 0, (0.0, 0.0, 0.0), 0.0, 0, 0),
                                              key[1])
        return kind_bytes[key]

    out = []
    for j, blocks in enumerate(chunks):
        c = j * pl.pp + stage
        w = act("embedding") if c == 0 else 0.0
        w += act("output") if c == last else 0.0
        k = recomputed_blocks(p, blocks) if mode == "full" else 0
        w += k * checkpoint_bytes(p) if k else 0.0
        for i in blocks[k:]:
            w += act("attention") + act("moe" if p.model.is_moe(i) else "mlp")
        out.append(w)
    return tuple(out)


def stage_in_flight(p: LLMParams, stage: int, kind_bytes: dict[tuple[str, bool], float],
                    chunks: list[list[range]] | None = None) -> float:
    """Micro-batches in flight on ``stage``, its chunks weighted by their activations
    (:func:`hieropt.workloads.llm.step.peak_in_flight`; :func:`in_flight` with one chunk); the
    arguments as :func:`chunk_activation_bytes`."""
    if p.plan.virtual_stages == 1:
        return in_flight(p, stage)
    return peak_in_flight(p, stage, chunk_activation_bytes(p, stage, kind_bytes, chunks))


_BLOCK_KINDS = ("attention", "mlp", "moe")


def _activation_parts(p: LLMParams, layers, kind_bytes: dict[tuple[str, bool], float],
                      stage: int | None = None, chunks: list[list[range]] | None = None) -> tuple:
    """(a, w, e) of a stage's ``layers`` ((layer, count) in forward order of first appearance): its
    activations are a x in-flight + e x in-flight (e: the embedding and output layers), with full
    recompute a x in-flight + w + e x in-flight (w: the block being recomputed;
    :func:`_activations`). ``kind_bytes`` keeps one block kind's activations per (kind, core) across
    the stages of plan ``p`` (they depend on the plan only). With ``recompute_layers`` (some blocks
    recomputed) the stage's chunks are read (:func:`_partial_parts`: ``stage`` is needed,
    ``chunks`` :func:`~hieropt.workloads.llm.layout.stage_chunks` if already computed)."""
    mode = p.plan.recompute
    kinds: Counter[str] = Counter()
    edges = []
    for op, n in layers:
        if op.kind in _BLOCK_KINDS:
            kinds[op.kind] += n
        else:
            edges += [_op_activations(p, op, True)] * n

    def act(kind: str, core: bool) -> float:
        v = kind_bytes.get((kind, core))
        if v is None:
            v = kind_bytes[kind, core] = _op_activations(
                p, Op(kind, kind, 0, (0.0, 0.0, 0.0), 0.0, 0, 0), core
            )
        return v

    if partial_recompute(p):
        if stage is None:
            raise ValueError("stage: needed with recompute_layers; fix: pass the stage index")
        chunks = (stage_chunks(p) if chunks is None else chunks)[stage]
        a, w = _partial_parts(p, chunks, act)
        return a, w, sum(edges), p.plan.cp
    if mode == "full":
        ffn = max((act(k, True) for k in kinds if k != "attention"), default=0.0)
        working = act("attention", True) + ffn if kinds else 0.0
        return kinds["attention"] * checkpoint_bytes(p), working, sum(edges), p.plan.cp
    return sum(n * act(k, mode == "none") for k, n in kinds.items()), None, sum(edges), p.plan.cp


def _partial_parts(p: LLMParams, chunks: list[range], act) -> tuple[float, float | None]:
    """(a, w) of a stage's ``chunks`` when full recompute recomputes the first k of each chunk's
    blocks (:func:`~hieropt.workloads.llm.layout.recomputed_blocks`): a = per micro-batch, k
    checkpoints and the other blocks' whole activations (as without recompute) per chunk; w = what
    recomputing one block adds at the peak: a recomputed block's activations, less those of its
    chunk's blocks that are not recomputed (later in the chunk, so back-propagated, and freed,
    before the first recomputed block is), at least 0; the largest over the chunks that recompute
    a block; None when none does."""
    a, w = 0.0, None
    for blocks in chunks:
        k = recomputed_blocks(p, blocks)
        kept = sum(act("attention", True) + act("moe" if p.model.is_moe(i) else "mlp", True)
                   for i in blocks[k:])
        a += k * checkpoint_bytes(p) + kept
        if k:
            ffn = max(act("moe" if p.model.is_moe(i) else "mlp", True) for i in blocks[:k])
            w = max(w or 0.0, act("attention", True) + ffn - kept)
    return a, w


def _activations(parts: tuple, in_flight: float) -> float:
    a, w, e, cp = parts
    return (a * in_flight + e * in_flight if w is None else a * in_flight + w + e * in_flight) / cp


# --------------------------------------------------------------------------------------- the report
def stage_memory(p: LLMParams, step: Step, stage: int) -> StageMemory:
    """Weights, gradients, optimizer state and activations of ``stage`` on one NPU (module
    docstring)."""
    st, kinds = step.stages[stage], {}
    return _stage_memory(stage, _stage_parts(p, [(op, 1) for op in st.ops], kinds, stage),
                         stage_in_flight(p, stage, kinds))


def _stage_parts(p: LLMParams, layers, kind_bytes: dict[tuple[str, bool], float],
                 stage: int | None = None, chunks: list[list[range]] | None = None) -> tuple:
    """(weights, gradients, optimizer bytes, activation parts) of a stage's ``layers``: the same for
    every stage with the same layers, whatever its in-flight micro-batches (with
    ``recompute_layers``, of stage ``stage``: :func:`_activation_parts`)."""
    pl, pr = p.plan, p.precision
    dense = expert = largest = 0
    for op, n in layers:
        dense += n * op.dense_params
        expert += n * op.expert_params
        largest = max(largest, op.dense_params + op.expert_params)

    def split(zero_from: int) -> float:
        return (
            dense / pl.dpc + expert / pl.edp
            if pl.zero_stage >= zero_from
            else float(dense + expert)
        )

    weights = split(3) * p.weight_bytes
    if pl.zero_stage >= 3:
        weights += ZERO3_LIVE_LAYERS * largest * p.weight_bytes
    grads = split(2) * p.gradient_bytes
    if pl.zero_stage >= 2:
        grads += largest * p.gradient_bytes
    optimizer = split(1) * pr.optimizer_bytes_per_param
    return weights, grads, optimizer, _activation_parts(p, layers, kind_bytes, stage, chunks)


def _stage_memory(stage: int, parts: tuple, in_flight: float) -> StageMemory:
    return StageMemory(stage, parts[0], parts[1], parts[2], _activations(parts[3], in_flight),
                       in_flight)


def memory(p: LLMParams, step: Step | None = None) -> MemoryReport:
    """Memory per NPU of every pipeline stage of plan ``p``, against the NPU's HBM less its reserve.

    Args:
        p: validated model, plan, NPU and precision.
        step: ``build_step(p)`` if already built; without it the stages' layers are counted, not
            built (:func:`hieropt.workloads.llm.step.stage_layers`: the same report).

    Returns:
        a :class:`MemoryReport` (``fits``, ``over_bytes`` and ``message()`` say whether and by how
        much the fullest stage exceeds the available HBM). Formulas and sources: module docstring.
    """
    # a block kind's activations: the same on every stage
    kind_bytes: dict[tuple[str, bool], float] = {}
    partial = partial_recompute(p)
    chunks = stage_chunks(p) if p.plan.virtual_stages > 1 or partial else None
    if step is not None:
        stages = tuple(
            _stage_memory(r, _stage_parts(p, [(op, 1) for op in st.ops], kind_bytes, r, chunks),
                          stage_in_flight(p, r, kind_bytes, chunks))
            for r, st in enumerate(step.stages)
        )
    # stages with the same layers (by kind, counted) differ only in their in-flight micro-batches
    else:
        same: dict[tuple, tuple] = {}  # (stages with the same layers share one tuple: keyed by it)
        out = []
        for r, layers in enumerate(stage_layers(p)):
            # (with recompute_layers a stage's chunks matter: its own)
            key = (Same(layers), r if partial else None)
            parts = same.get(key)
            if parts is None:
                parts = same[key] = _stage_parts(p, layers, kind_bytes, r, chunks)
            out.append(_stage_memory(r, parts, stage_in_flight(p, r, kind_bytes, chunks)))
        stages = tuple(out)
    return MemoryReport(stages, p.npu.hbm_gib * GIB, p.npu.hbm_reserve_gib * GIB)


def require_fit(p: LLMParams, source: str) -> None:
    """Refuse plan ``p`` (read from ``source``) when its fullest stage does not fit in the NPU's HBM
    less the reserve.

    Raises:
        NoSolutionError: ``infeasible``, saying how many GB per NPU are missing (exit 3).
    """
    rep = memory(p)
    if rep.fits:
        return
    pk = rep.peak
    raise NoSolutionError(
        "infeasible",
        f"{source}: the plan does not fit in memory: stage {pk.stage} needs "
        f"{pk.total_bytes / GB:,.2f} GB per NPU, {rep.over_bytes / GB:,.2f} GB more than the "
        f"{rep.available_bytes / GB:,.2f} GB available ({rep.capacity_bytes / GIB:g} GiB HBM less "
        f"{rep.reserve_bytes / GIB:g} GiB reserve); fix: save memory "
        f"({', '.join(memory_savers(p))}) or use an NPU with more HBM (hieropt workload plan "
        "shows each stage's parts)",
    )


def memory_savers(p: LLMParams) -> list[str]:
    """The plan options that would save memory and are not already in effect in plan ``p``.

    Returns:
        phrases in a fixed order: ``recompute`` (``full recompute`` after ``selective``; after
        ``full`` none, or ``a larger recompute_layers`` when it is given), ``flash_attention``
        (unless on), ``a higher zero_stage`` (below 3), ``more tp or pp`` (always) and ``a smaller
        micro_batch_size`` (above 1).
    """
    plan = p.plan
    out = []
    if plan.recompute != "full":
        out.append("recompute" if plan.recompute == "none" else "full recompute")
    elif plan.recompute_layers is not None:
        out.append("a larger recompute_layers")
    if not plan.flash_attention:
        out.append("flash_attention")
    if plan.zero_stage < 3:
        out.append("a higher zero_stage")
    out.append("more tp or pp")
    if plan.micro_batch_size > 1:
        out.append("a smaller micro_batch_size")
    return out


__all__ = [
    "gemm_input_bytes",
    "FP8_INPUT_BYTES",
    "require_fit",
    "memory_savers",
    "FLASH_STATS_BYTES",
    "StageMemory",
    "MemoryReport",
    "memory",
    "stage_memory",
    "stage_activation_bytes",
    "chunk_activation_bytes",
    "stage_in_flight",
    "attention_activation_bytes",
    "ffn_activation_bytes",
    "moe_activation_bytes",
    "checkpoint_bytes",
    "ZERO3_LIVE_LAYERS",
]
