"""One training iteration of an LLM under a plan, per pipeline stage: layers with FLOPs, parameters
and every collective with its parallel group, phase and bytes (the generator's own representation,
lowered to hieropt workloads by :mod:`hieropt.workloads.llm.lower`).

**Layers.** Stage r holds its blocks in forward order (with the interleaved schedule its v chunks,
chunk j being model chunk j p + r); the first chunk of the model starts with ``embed``, the last
ends with ``output``; block i (1-based) gives ``attn{i}`` and ``mlp{i}`` (``moe{i}`` for an MoE
layer). FLOPs and parameters: :mod:`.counts`.

**Phases.** ``forward`` and ``input_grad`` hold what runs once per micro-batch (the forward pass;
the backward pass with any recompute); ``weight_grad`` holds the weight-gradient compute (per
micro-batch) and the collectives that run once per iteration (gradient reduction, parameter
all-gather after the optimizer step): the convention of hieropt's ``pipeline`` training loop. Sizes
follow :class:`hieropt.spec.Phase`: all-gather bytes are the per-NPU input shard; all-reduce,
reduce-scatter and all-to-all bytes the per-NPU buffer; a point-to-point (``P2P``) send its bytes.

**Groups** (NPUs a collective spans): ``tp`` (t), ``pp`` (p; point-to-point to the neighbouring
stage), ``dp`` (the dp replicas of a dense parameter shard), ``ep`` (the expert-parallel group,
inside DP), ``edp`` (dp / ep replicas of an expert shard). Per micro-batch and NPU, with e bytes per
activation, n tokens, r routed token copies:

- TP (t > 1; Shoeybi et al. 2019 §3; Korthikanti et al. 2022 §4.2.2), per attention and per FFN
  layer: without sequence parallelism an all-reduce of n h e in the forward (after the row-parallel
  matmul) and in the input gradient (before the column-parallel one); with it an all-gather of the
  shard n h e / t and a reduce-scatter of n h e in the forward, their conjugates (all-gather,
  reduce-scatter) in the input gradient, and a second all-gather of the input in the input gradient
  (the layer keeps its input split and gathers it again for the weight gradient). Under FP8
  training the attention and FFN layers' all-gathers carry 1 byte per element (Transformer Engine
  gathers the FP8 shard: :func:`.comms.tp_gather_bytes`), the reduce-scatters e. The MoE layer has
  the same pattern on its r routed tokens (in e bytes: the dispatcher's 16-bit gathers). Full
  recompute repeats the forward's collectives in the input gradient (no extra all-gather then), in
  the blocks it recomputes (all, or with
  ``recompute_layers`` the first of each chunk: :func:`layer_sources`). The embedding all-reduces
  (reduce-scatters) its output in the forward; the output layer all-reduces (reduce-scatters) its
  input gradient and, with sequence parallelism, all-gathers its input in the forward and again in
  the input gradient.
- CP (c > 1; Llama Team 2024, arXiv 2407.21783, §3.3.2): each NPU holds n / c tokens of every
  sequence, so every FLOP count above and every TP, PP and EP message is divided by c; per attention
  layer an all-gather of the local K and V, (n / c) 2 g_t d e bytes, in the forward, again in the
  input gradient with a reduce-scatter of their gradients (c times that), and again with full
  recompute. The K/V exchange is counted exposed, as in Llama 3's all-gather form (ring attention
  would hide part of it behind the attention compute). The gradients are reduced over dp x c NPUs
  (group ``dpc``), which ZeRO shards over.
- EP (ep > 1): per MoE layer an all-to-all dispatch and combine of r h e / (t with sequence
  parallelism) bytes in the forward, and both again in the input gradient (and again with full
  recompute).
- PP (p > 1; Narayanan et al. 2021 §2.2): the last layer of each chunk except the model's last sends
  its output, n h e / (t with sequence parallelism), to the next stage in the forward; the first
  layer of each chunk except the model's first sends the input gradient back in the input gradient.
  With ``scatter_gather_sends`` (Megatron-LM's default; Narayanan et al. 2021 §4.1) and t > 1
  without sequence parallelism each of the t NPUs sends its 1/t, n h e / t, and the receiving layer
  all-gathers it over TP (forward: the chunk's first layer; input gradient: its last). Tied
  embeddings with p > 1: the first and the last stage exchange the embedding gradient once per
  iteration (an all-reduce of two NPUs: one send each).
- DP (Rajbhandari et al. 2020, ZeRO), per layer with P parameters (gradient bytes G = P x
  gradient_bytes, shard S = P x weight_bytes / dp; gradient_bytes is
  :attr:`~hieropt.workloads.llm.params.LLMParams.gradient_bytes`: by default 4, an FP32 reduction,
  for bf16 and fp8 training as Megatron-LM, NeMo, FSDP and Llama 3 reduce, 2 for fp16): ZeRO 0
  all-reduces G once per iteration; ZeRO 1 reduce-scatters G once per iteration and all-gathers the
  updated shard S after the optimizer step;
  ZeRO 2 reduce-scatters G every micro-batch (in the input gradient: only the shard is kept) and
  all-gathers S after the step; ZeRO 3 all-gathers S before the forward and again before the
  backward and reduce-scatters G, every micro-batch. Expert parameters do the same over ``edp``.

**Compute** per layer: :mod:`.roofline` (each kernel timed), or FLOPs / (peak x efficiency).
**Optimizer step** (``update_ns``, once per iteration; under ZeRO >= 1 each NPU updates its
1 / (dp x cp) of the dense parameters, 1 / edp of the expert ones): :func:`.roofline.update_ns`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...cache import Same, current
from . import layout
from .comms import A2A, AG, AR, P2P, RS, Comm, cp_comms, dp_comms, tp_comms
from .counts import (
    attention_core_flops,
    attention_flops,
    attention_params,
    embedding_params,
    ffn_flops,
    ffn_params,
    moe_flops,
    moe_params,
    output_flops,
    output_params,
    routed_tokens,
    shape,
)
from .params import LLMParams
from .roofline import layer_ns, update_ns

GROUPS = ("tp", "cp", "pp", "dp", "ep", "edp", "dpc")
"""Parallel groups, innermost first in Megatron-LM's default rank order (tp, cp, ep inside dp, dp,
pp; dpc = dp x cp reduces the gradients when cp > 1)."""
STEP_PHASES = ("forward", "input_grad", "weight_grad")


@dataclass(frozen=True)
class Op:
    """One layer on one NPU of a stage, for one micro-batch.

    Attributes:
        name: ``embed``, ``attn{i}``, ``mlp{i}``, ``moe{i}`` or ``output`` (i: 1-based block).
        kind: ``embedding``, ``attention``, ``mlp``, ``moe`` or ``output``.
        block: the 0-based block, None for the embedding and output layers.
        flops: (forward, input gradient, weight gradient) FLOPs per micro-batch.
        recompute_flops: forward FLOPs repeated in the backward pass per micro-batch.
        dense_params: parameters data-parallel over ``dp`` (x ``cp``); expert_params: over ``edp``.
        comms: the layer's collectives.
        update_ns: optimizer-step time of the layer's parameters, ns per iteration.
        compute_ns: (forward, input gradient with recompute, weight gradient) ns of the roofline
            compute model (:mod:`.roofline`); None with the flat model (FLOPs / peak x efficiency).
    """

    name: str
    kind: str
    block: int | None
    flops: tuple[float, float, float]
    recompute_flops: float
    dense_params: int
    expert_params: int
    comms: tuple[Comm, ...] = ()
    update_ns: float = 0.0
    compute_ns: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class Stage:
    """The layers of pipeline stage ``index`` (0 = first) in forward order, and ``in_flight``:
    micro-batches whose activations every block of the stage holds at the peak of the schedule
    (1F1B: min(m, p - r); interleaved: min(m v, 2 (p - r - 1) + (v - 1) N + 1) chunk micro-batches /
    v with N the micro-batch group, pp by default; Narayanan et al. 2021, Megatron-LM's warm-up
    counts: :func:`in_flight`)."""

    index: int
    ops: tuple[Op, ...]
    in_flight: float

    @property
    def blocks(self) -> int:
        """Transformer blocks on this stage."""
        return sum(op.kind == "attention" for op in self.ops)


@dataclass(frozen=True)
class Step:
    """One iteration of ``params``: its stages, micro-batch count and group sizes."""

    params: LLMParams
    stages: tuple[Stage, ...]
    microbatches: int

    @property
    def group_sizes(self) -> dict[str, int]:
        """NPUs in each parallel group."""
        pl = self.params.plan
        return {
            "tp": pl.tp,
            "cp": pl.cp,
            "pp": pl.pp,
            "dp": pl.dp,
            "ep": pl.ep,
            "edp": pl.edp,
            "dpc": pl.dpc,
        }

    def compute_ns(self, stage: int) -> tuple[float, float]:
        """(forward, backward) compute of one micro-batch on ``stage``, ns; the backward includes
        recompute."""
        rate, ops = self.params.npu.flops_per_ns, self.stages[stage].ops
        if self.params.npu.roofline:
            times = [op.compute_ns for op in ops]
            return sum([t[0] for t in times]), sum([t[1] + t[2] for t in times])
        # (left to right, as sum() adds; a list is faster to sum)
        fwd = sum([op.flops[0] for op in ops])
        bwd = sum([op.flops[1] + op.flops[2] + op.recompute_flops for op in ops])
        return fwd / rate, bwd / rate

    def update_ns(self, stage: int) -> float:
        """Optimizer-step time of ``stage``, ns per iteration."""
        return sum([op.update_ns for op in self.stages[stage].ops])


def _chunks(p: LLMParams) -> list[list[range]]:
    """Blocks of every chunk of every stage (:func:`hieropt.workloads.llm.layout.stage_chunks`)."""
    return layout.stage_chunks(p)


def warmup_forwards(p: LLMParams, stage: int) -> int:
    """Chunk forwards ``stage`` runs before its first backward (the warm-up), interleaved schedule:
    min(m v, 2 (p - r - 1) + (v - 1) N) with N the micro-batch group
    (:attr:`~hieropt.workloads.llm.params.Plan.group_size`; Megatron-LM's
    ``get_pp_rank_microbatches``, PyTorch's flexible interleaved 1F1B likewise); 1F1B: min(m, p - r
    - 1)."""
    pl = p.plan
    m, pp, v = pl.microbatches, pl.pp, pl.virtual_stages
    if pl.schedule == "1f1b":
        return min(m, pp - stage - 1)
    return min(m * v, 2 * (pp - stage - 1) + (v - 1) * pl.group_size)


def peak_in_flight(p: LLMParams, stage: int, weights: tuple[float, ...]) -> float:
    """Micro-batches in flight on ``stage`` weighted by its chunks: the peak over the schedule of
    sum_j weights[j] x (chunk j's micro-batches held), divided by sum_j weights[j] (``weights``: one
    per chunk, e.g. its activation bytes per micro-batch). Equal weights give :func:`in_flight`;
    uneven chunks (a first chunk holding only the embedding) hold different counts: rank r runs its
    chunk forwards in groups of N micro-batches per chunk (chunk 0, 1, ..., v - 1, then the next
    group; the last group the remainder), its backwards in the same order with the chunks reversed,
    :func:`warmup_forwards` forwards first, then one forward and one backward in turn (Megatron-LM's
    interleaved schedule)."""
    total = sum(weights)
    if not total or len(set(weights)) <= 1:
        return in_flight(p, stage)
    pl = p.plan
    key = (pl.microbatches, pl.group_size, warmup_forwards(p, stage), weights)
    return current().memo("peak_in_flight", key, lambda: _peak(*key), 1024) / total


def _peak(m: int, n: int, warm: int, weights: tuple[float, ...]) -> float:
    v = len(weights)
    order = [c for g in range(0, m, n) for c in range(v) for _ in range(g, min(g + n, m))]
    live = peak = sum(weights[c] for c in order[:warm])
    for k in range(m * v - warm):
        live += weights[order[k + warm]]
        peak = max(peak, live)
        live -= weights[v - 1 - order[k]]
    return peak


def in_flight(p: LLMParams, stage: int) -> float:
    """Micro-batches of activations each block of ``stage`` holds at peak (see :class:`Stage`): the
    warm-up forwards and the steady state's first forward, min(m v, warm-up + 1) chunk micro-batches
    / v (v = 1 for 1F1B: min(m, p - r)): every chunk's share when the chunks weigh the same
    (uneven chunks: :func:`peak_in_flight`)."""
    pl = p.plan
    v = pl.virtual_stages
    return min(pl.microbatches * v, warmup_forwards(p, stage) + 1) / v


def _op(
    p: LLMParams,
    name: str,
    kind: str,
    block: int | None,
    flops,
    recompute: float,
    dense: int,
    expert: int,
    comms: list[Comm],
) -> Op:
    pl = p.plan
    dense_group = ("dp", pl.dp) if pl.cp == 1 else ("dpc", pl.dpc)
    comms = (
        comms + dp_comms(p, dense, *dense_group, "") + dp_comms(p, expert, "edp", pl.edp, "expert ")
    )
    # (context parallelism: every FLOP of a layer is per token of the NPU's 1/c of the sequence)
    c = pl.cp
    return Op(
        name,
        kind,
        block,
        tuple(float(f) / c for f in flops),
        float(recompute) / c,
        dense,
        expert,
        tuple(comms),
        update_ns(p, dense, expert),
        _roofline_ns(p, kind),
    )


def _roofline_ns(p: LLMParams, kind: str) -> tuple[float, float, float] | None:
    """The roofline's (forward, input gradient, weight gradient) ns of a layer of ``kind`` (None
    with the flat model); its kernels are those of the NPU's 1/cp of the tokens
    (:mod:`.kernels`)."""
    return layer_ns(p, kind) if p.npu.roofline else None


def without_recompute(p: LLMParams) -> LLMParams:
    """``p`` with ``recompute = "none"`` (and no ``recompute_layers``): the parameters the blocks
    that a partial full recompute leaves alone are built from (:func:`layer_sources`); one object
    per ``p`` in the active cache (the roofline's layer times are memoized on it)."""
    def make() -> LLMParams:
        plan = p.plan.model_copy(update={"recompute": "none", "recompute_layers": None})
        return p.model_copy(update={"plan": plan})
    return current().memo("without_recompute", Same(p), make, 64)


def layer_sources(p: LLMParams) -> dict[bool, LLMParams]:
    """The parameters a block is built from, by whether it is recomputed
    (:func:`hieropt.workloads.llm.layout.recomputed_blocks`): ``p`` itself, or for a block that a
    partial full recompute (``recompute_layers``) leaves alone, :func:`without_recompute`: its
    FLOPs, kernels and collectives those of ``recompute = "none"``."""
    return {True: p, False: without_recompute(p) if layout.partial_recompute(p) else p}


def _recomputed_count(p: LLMParams, blocks: range) -> int:
    """How many of a chunk's blocks, its first, are built as recomputed
    (:func:`layout.recomputed_blocks`; unless the recompute is partial every block is built from
    ``p`` itself, which True stands for in :func:`layer_sources`: all of them)."""
    return layout.recomputed_blocks(p, blocks) if layout.partial_recompute(p) else len(blocks)


def _recomputed(p: LLMParams, blocks: range) -> list[bool]:
    """Per block of a chunk, in order: built as recomputed (:func:`_recomputed_count`)."""
    k = _recomputed_count(p, blocks)
    return [j < k for j in range(len(blocks))]


def _block_ops(src: dict[bool, LLMParams], blocks: range, cache: dict) -> list[Op]:
    """The attention and FFN layers of ``blocks``: one template per kind (dense, MoE) and recompute
    (:func:`layer_sources`), copied as :func:`_with`."""
    out: list[Op] = []
    for i, re in zip(blocks, _recomputed(src[True], blocks), strict=True):
        pair, n = _pair(src, i, cache, re), str(i + 1)
        a, f = pair[0].__dict__.copy(), pair[1].__dict__.copy()
        a["name"], a["block"], f["name"], f["block"] = "attn" + n, i, pair[1].kind + n, i
        attn, ffn = _new(Op), _new(Op)
        _set(attn, "__dict__", a), _set(ffn, "__dict__", f)
        out += (attn, ffn)
    return out


_new, _set = object.__new__, object.__setattr__


def _pair(src: dict[bool, LLMParams], i: int, cache: dict, re: bool = True) -> list[Op]:
    """Block i's templates, recomputed (``re``) or not (:func:`layer_sources`)."""
    p = src[re]
    key = (p.model.moe is not None and p.model.is_moe(i), re)
    return cache.get(key) or cache.setdefault(key, _template(p, key[0]))


def _chunk_blocks(src: dict[bool, LLMParams], blocks: range, cache: dict) -> list[Op]:
    """The block templates of a chunk's ``blocks`` in order (``build_step(names=False)``)."""
    p = src[True]
    if p.model.moe is None:
        k, n = _recomputed_count(p, blocks), len(blocks)
        return (_pair(src, 0, cache, True) * k if k else []) + (
            _pair(src, 0, cache, False) * (n - k) if n - k else [])
    return [op for i, re in zip(blocks, _recomputed(p, blocks), strict=True)
            for op in _pair(src, i, cache, re)]


def _template(p: LLMParams, moe: bool) -> list[Op]:
    x, re = shape(p), p.plan.recompute
    i = -1
    fa = attention_flops(p)
    re_attn = fa[0] if re == "full" else attention_core_flops(p) if re == "selective" else 0
    ops = [_op(p, "attn", "attention", i, fa, re_attn, attention_params(p), 0,
               tp_comms(p, x.n / p.plan.cp) + cp_comms(p))]
    if moe:
        ff = moe_flops(p)
        dense, expert = moe_params(p)
        r = routed_tokens(p)
        comms = []
        if p.plan.ep > 1:
            size = r * x.h * p.activation_bytes / x.seq_split
            comms = [Comm("ep", A2A, size, "forward", "dispatch all-to-all"),
                     Comm("ep", A2A, size, "forward", "combine all-to-all"),
                     Comm("ep", A2A, size, "input_grad", "combine-gradient all-to-all"),
                     Comm("ep", A2A, size, "input_grad", "dispatch-gradient all-to-all")]
            if re == "full":
                comms += [Comm("ep", A2A, size, "input_grad", "recomputed dispatch all-to-all"),
                          Comm("ep", A2A, size, "input_grad", "recomputed combine all-to-all")]
        comms += tp_comms(p, r, fp8_linears=False)
        ops.append(_op(p, "moe", "moe", i, ff, ff[0] if re == "full" else 0, dense, expert, comms))
    else:
        ff = ffn_flops(p, x.f_t)
        ops.append(
            _op(
                p,
                "mlp",
                "mlp",
                i,
                ff,
                ff[0] if re == "full" else 0,
                ffn_params(p, x.f_t),
                0,
                tp_comms(p, x.n / p.plan.cp),
            )
        )
    return ops


def _embedding_op(p: LLMParams) -> Op:
    x = shape(p)
    comms = []
    if x.t > 1:
        full = x.n * x.h * p.activation_bytes / p.plan.cp
        comms = [Comm("tp", AR, full, "forward", "embedding output all-reduce")] if not x.sp else \
            [Comm("tp", RS, full, "forward", "embedding output reduce-scatter (sequence parallel)"),
             Comm("tp", AG, full / x.t, "input_grad", "embedding output-gradient all-gather")]
    return _op(p, "embed", "embedding", None, (0, 0, 0), 0, embedding_params(p), 0, comms)


def _output_op(p: LLMParams) -> Op:
    x = shape(p)
    comms = []
    if x.t > 1:
        full = x.n * x.h * p.activation_bytes / p.plan.cp
        comms = (
            [Comm("tp", AR, full, "input_grad", "output-layer input-gradient all-reduce")]
            if not x.sp
            else [
                Comm(
                    "tp",
                    AG,
                    full / x.t,
                    "forward",
                    "output-layer input all-gather (sequence parallel)",
                ),
                Comm("tp", RS, full, "input_grad", "output-layer input-gradient reduce-scatter"),
                Comm(
                    "tp",
                    AG,
                    full / x.t,
                    "input_grad",
                    "output-layer input all-gather again for the weight gradient",
                ),
            ]
        )
    return _op(p, "output", "output", None, output_flops(p), 0, output_params(p), 0, comms)


def _with(op: Op, comm: Comm, memo: dict | None = None) -> Op:
    """``op`` with one more collective (``dataclasses.replace`` as ``copy.copy`` does it); ``memo``:
    one per pair (keyed by the objects themselves, held by the key: :class:`~hieropt.cache.Same`).
    """
    key = (Same(op), Same(comm)) if memo is not None else None
    if memo is not None and (hit := memo.get(key)) is not None:
        return hit
    _set(new := _new(Op), "__dict__", {**op.__dict__, "comms": op.comms + (comm,)})
    return new if memo is None else memo.setdefault(key, new)


def build_step(p: LLMParams, names: bool = True) -> Step:
    """The iteration of ``p``: every stage's layers with FLOPs, parameters, collectives and
    optimizer time.

    Args:
        p: validated model, plan, NPU and precision.
        names: False: each block's layers are its kind's template (one object, named ``attn`` /
            ``mlp`` / ``moe``, block -1; one per send), not copies: the same values in the same
            order, for sums over a stage.

    Returns:
        a :class:`Step`; formulas and sources in the module docstring and
        :mod:`hieropt.workloads.llm.counts`.
    """
    x, pl = shape(p), p.plan
    chunks = _chunks(p)
    last_chunk = pl.pp * len(chunks[0]) - 1
    # (with SP the activation is split already)
    gather = pl.scatter_gather_sends and not x.sp and x.t > 1
    send = x.n * x.h * p.activation_bytes / (x.t if gather else x.seq_split) / pl.cp
    tied = p.model.tied_embeddings and pl.pp > 1
    # (frozen: one object, shared)
    fwd = Comm("pp", P2P, send, "forward", "activation send to the next stage")
    bwd = Comm("pp", P2P, send, "input_grad", "activation-gradient send to the previous stage")
    fwd_ag = Comm("tp", AG, send, "forward", "received activation all-gather (scatter-gather send)")
    bwd_ag = Comm(
        "tp",
        AG,
        send,
        "input_grad",
        "received activation-gradient all-gather (scatter-gather send)",
    )
    tie = Comm("pp", P2P, x.v_t * x.h * p.gradient_bytes, "weight_grad",
               "tied-embedding gradient exchange between the first and last stage")
    stages = []
    cache: dict[tuple[bool, bool], list[Op]] = {}
    src = layer_sources(p)
    sent = None if names else {}  # (without names, a template with a send is one object too)
    for r, stage_chunks in enumerate(chunks):
        ops: list[Op] = []
        edge = None  # the stage's first embedding or output layer
        for j, blocks in enumerate(stage_chunks):
            c = j * pl.pp + r  # the model chunk
            chunk = [_embedding_op(p)] if c == 0 else []
            chunk += (_block_ops(src, blocks, cache) if names
                      else _chunk_blocks(src, blocks, cache))
            if c == last_chunk:
                chunk.append(_output_op(p))
            if pl.pp > 1 and c != last_chunk:
                chunk[-1] = _with(chunk[-1], fwd, sent)
                chunk[-1] = _with(chunk[-1], bwd_ag, sent) if gather else chunk[-1]
            if pl.pp > 1 and c != 0:
                chunk[0] = _with(chunk[0], bwd, sent)
                chunk[0] = _with(chunk[0], fwd_ag, sent) if gather else chunk[0]
            if edge is None and (c == 0 or c == last_chunk):
                edge = len(ops) if c == 0 else len(ops) + len(chunk) - 1
            ops += chunk
        if tied and edge is not None:
            ops[edge] = _with(ops[edge], tie)
        stages.append(Stage(r, tuple(ops), in_flight(p, r)))
    return Step(p, tuple(stages), pl.microbatches)


def chunk_layers(p: LLMParams) -> list[list[int]]:
    """How many of each stage's layers (:func:`build_step`'s order) each of its v chunks holds,
    ``out[r][j]``: the embedding in model chunk 0, two layers per block, the output layer in the
    model's last chunk."""
    pl = p.plan
    last = pl.pp * pl.virtual_stages - 1
    return [[(j * pl.pp + r == 0) + 2 * len(blocks) + (j * pl.pp + r == last)
             for j, blocks in enumerate(chunks)] for r, chunks in enumerate(_chunks(p))]


def stage_layers(p: LLMParams) -> tuple[tuple[tuple[Op, int], ...], ...]:
    """The layers of every stage of :func:`build_step` counted, not built (for
    :func:`hieropt.model.memory.memory`): per stage, (layer, how many) in order of first appearance,
    one layer for every block of its kind (names, blocks and pipeline sends left out: they carry no
    parameters); stages with the same layers share one tuple."""
    pl, moe_model = p.plan, p.model.moe is not None
    chunks = _chunks(p)
    last_chunk = pl.pp * len(chunks[0]) - 1
    src, partial = layer_sources(p), layout.partial_recompute(p)
    # the layers built once: the embedding, the output layer, the block templates (MoE or not,
    # recomputed or not)
    made: dict = {}
    shared: dict[tuple, tuple] = {}
    out = []
    for r, stage_chunks in enumerate(chunks):
        # per chunk: (embedding?, ((MoE?, recomputed?), blocks) in order of first appearance,
        # output?)
        sig = []
        for j, blocks in enumerate(stage_chunks):
            kinds: dict[tuple[bool, bool], int] = {}
            if moe_model:
                for i, re in zip(blocks, _recomputed(p, blocks), strict=True):
                    kinds[p.model.is_moe(i), re] = kinds.get((p.model.is_moe(i), re), 0) + 1
                dense = tuple(kinds.items())
            else:
                n = len(blocks)
                k = layout.recomputed_blocks(p, blocks) if partial else n
                runs_ = (((False, True), k), ((False, False), n - k))
                dense = runs_[:1] if k == n else runs_[1:] if k == 0 else runs_
                dense = dense if n else ()
            c = j * pl.pp + r
            sig.append((c == 0, dense, c == last_chunk))
        key = tuple(sig)
        if key not in shared:
            runs: dict[int, list] = {}
            for first, kinds_, last in key:
                layers = (
                    [(made.get("e") or made.setdefault("e", _embedding_op(p)), 1)] if first else []
                )
                for kind, n in kinds_:
                    layers += [(op, n) for op in made.get(kind)
                               or made.setdefault(kind, _template(src[kind[1]], kind[0]))]
                layers += (
                    [(made.get("o") or made.setdefault("o", _output_op(p)), 1)] if last else []
                )
                for op, n in layers:
                    runs.setdefault(Same(op), [op, 0])[1] += n
            shared[key] = tuple((op, n) for op, n in runs.values())
        out.append(shared[key])
    return tuple(out)


__all__ = [
    "Comm",
    "Op",
    "Stage",
    "Step",
    "build_step",
    "chunk_layers",
    "stage_layers",
    "without_recompute",
    "layer_sources",
    "in_flight",
    "warmup_forwards",
    "peak_in_flight",
    "GROUPS",
    "STEP_PHASES",
    "AR",
    "RS",
    "AG",
    "A2A",
    "P2P",
]
