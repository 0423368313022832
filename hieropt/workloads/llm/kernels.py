"""The kernels of one layer on one NPU for one micro-batch: every GEMM with its m, n, k, the
attention core, every element-wise op and the tensor-parallel reduction's local work, per phase (the
roofline model's input, :mod:`hieropt.workloads.llm.roofline`).

Symbols as :mod:`hieropt.workloads.llm.counts` (n = b s tokens, n' = n / t with sequence parallelism
else n, e bytes per activation element, q_t = a_t d, kv_t = g_t d, f_t, V_t; B = b a_t attention
heads per NPU; mb bytes per dropout-mask element). A GEMM (m, n, k) does 2 m n k FLOPs and moves e
(m k + k n + m n) bytes.

Per layer, forward (Megatron-LM's kernels and fusions: bias adds in the GEMM epilogue, bias-GeLU,
scale-mask-softmax and bias-dropout-add fused):

- attention: norm (2 e n' h bytes), QKV GEMM (n, q_t + 2 kv_t, h), rotary on Q and K (2 e n (q_t +
  kv_t)), the core, the projection GEMM (n, h, q_t), dropout + residual add (e 3 n' h + mb n' h; 3 e
  n' h without dropout);
- core, unfused: scores batched GEMM (s, s, d) x B, scale-mask-softmax (2 e B s^2), dropout (2 e B
  s^2 + mb B s^2), context batched GEMM (s, d, s) x B; fused (FlashAttention, causal: half the score
  blocks computed): one kernel of 2 B s^2 d FLOPs moving e n (2 q_t + 2 kv_t) bytes (Q, K, V in, O
  out);
- FFN: norm, up GEMM (n, f_t, h) (gated: (n, 2 f_t, h), up and gate together), GeLU (2 e n f_t) or
  SwiGLU (3 e n f_t), down GEMM (n, h, f_t), dropout + residual add;
- MoE FFN: router GEMM (n', E, h), routing (e n' E), token permutation (2 e r h, dispatch and
  combine), the local experts' grouped GEMMs (r / E_l tokens each, E_l = E / ep) and activation,
  shared experts as a dense FFN;
- embedding: row gather (2 e n h), learned positions (e n h), dropout; output: norm, logits GEMM (n,
  V_t, h), cross-entropy (n V_t (e + logits_bytes)).

Backward: each GEMM (m, n, k) gives the input-gradient GEMM (m, k, n) and the weight-gradient GEMM
(k, n, m) (with biases a bias-gradient reduction, e m n bytes); the unfused core's four
input-gradient batched GEMMs; the fused core's one kernel of 2.5 x its forward FLOPs (the scores
recomputed, FlashAttention-2) and e n (4 q_t + 4 kv_t) bytes; every element-wise op reads what its
forward read plus the output gradient and writes the input gradient (norm, softmax, activation: 3/2
of the forward bytes; dropout: 2 e + mb per element; residual add 3 e). Recompute adds the forward
kernels again to the input-gradient phase: all of them (``full``), the core (``selective``).

Context parallelism (cp > 1): every kernel runs on the NPU's n / cp tokens, except that the
attention core takes its s / cp queries of each sequence against all s keys and values (Llama 3's
all-gather form): scores (s / cp, s, d) x B, softmax over B s^2 / cp scores; fused, 2 B s^2 d / cp
FLOPs.

FP8 training (``number_format = "fp8"``): Transformer Engine runs the linear layers' GEMMs (QKV,
projection, FFN, experts) in FP8; the attention core (FlashAttention or the unfused batched GEMMs,
outside Transformer Engine's FP8 linears unless FP8 attention is asked for) and the output layer's
logits GEMM (Megatron-Core's own column-parallel linear) stay in BF16 (NVIDIA Transformer Engine
documentation, "Using FP8 with Transformer Engine"; Megatron-Core ``GPTModel.output_layer``): those
kernels are marked ``sixteen_bit`` and timed at the 16-bit peak
(:func:`hieropt.workloads.llm.roofline.kernel_ns`), as is the MoE router's GEMM (Megatron-Core's
``TopKRouter``, a plain linear in 16 or 32 bits).

Each FP8 GEMM reads FP8 copies of its BF16 operands that Transformer Engine makes first, with
per-tensor current scaling (the FP8-CS recipe of NVIDIA's FP8 runs; TE's
``Float8CurrentScalingQuantizer``: an amax kernel, a scale kernel, then the cast, each launched on
its own because the scale needs the whole tensor's amax): per linear layer and micro-batch, its
input X (forward) and its output gradient dY (input-gradient phase, before the dgrad GEMM), N
elements each on this NPU (:func:`fp8_cast`):

- amax: reads e N bytes; scale from amax: no bytes, one launch;
- cast: reads e N, writes N FP8 bytes, and N more for the transposed copy the dgrad and wgrad GEMMs
  read where the part's FP8 GEMMs take only the TN layout (``NPU.fp8_transposes``: Hopper; not
  Blackwell): (e + 2) N bytes, (e + 1) N without the copy;
- with sequence parallelism (t > 1) a tensor TP all-gathers (a column-parallel layer's input, a
  row-parallel layer's output gradient) is cast on the NPU's 1 / t share and gathered in FP8, and
  the transposed copy is made after the gather: a transpose kernel reading and writing 1 byte per
  element of the gathered tensor (t N), in the weight-gradient phase for an input (the wgrad GEMM
  reads it), in the input-gradient phase for an output gradient (TE's grad_output_preprocess).

With delayed scaling (``NPU.fp8_recipe = "delayed"``, TE's ``DelayedScaling`` recipe and
``Float8Quantizer``) the cast multiplies by a scale already known, computed from the amax history
of earlier iterations, and takes the tensor's amax inside the same kernel (TE's
``cast_transpose_general_kernel``: ``amax = fmaxf(fabsf(in), amax)`` per element, one
``atomicMaxFloat`` per block): one launch, the cast's (e + 2) N bytes, (e + 1) N without the
copy, no amax or scale kernel; the gathered tensors' transpose as above. Not counted: the amax
history and scale update (``FP8GlobalStateManager.reduce_and_update_fp8_tensors``: one fused
kernel over all of a region's tensors, ``fused_amax_and_scale_update_after_reduction``, after an
all-reduce of their amaxes, run at each exit of ``fp8_autocast`` in the forward and after the
first module's backward, so per model chunk and micro-batch: a few microseconds of launches and a
small blocking all-reduce each), and the cast a normalization can fuse into its own kernel under
delayed scaling (TE's ``LayerNormLinear`` ``with_quantized_norm``: the QKV's and the FFN's
inputs, TE's ``Float8Quantizer`` taking the fully fused norm: each such cast here is one launch
and 2 e N bytes more than that, the norm's 16-bit output written and read back).

Under full recompute the forward casts run again (they are forward kernels). Not counted: the
weights' casts (the FP8 runs keep FP8 weights, ``fp8_param_gather``, cast by the optimizer step,
whose bytes count ``weight_bytes``; with BF16 weights Megatron-Core casts each once per iteration,
on the first micro-batch, TE's ``is_first_microbatch``), and the one-float all-reduce of the amax
over the TP group that a gathered tensor's cast waits for (NCCL, blocking on the compute stream; its
4 bytes are latency, and the shipped networks give none).

Tensor-parallel reduction (t > 1): each all-reduce or reduce-scatter of S bytes adds (t - 1) / t of
S element by element on the NPU (a ring reduction: two reads, one write): 3 (t - 1) / t S bytes, run
inside the collective's kernel (no launch of its own).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .counts import routed_tokens, shape
from .params import LLMParams

FWD, IN, WT = "forward", "input_grad", "weight_grad"


@dataclass(frozen=True)
class Kernel:
    """One kernel of a layer (or ``batch`` identical ones launched as one).

    Attributes:
        name: what it is (``"qkv"``, ``"qkv dgrad"``, ``"softmax"``, ``"recompute norm"``, ...).
        phase: ``forward``, ``input_grad`` or ``weight_grad``.
        kind: ``gemm`` (timed by the matrix efficiency of its size), ``attention`` (the fused
            FlashAttention kernel, by ``attention_efficiency``) or ``elementwise`` (bytes only).
        flops: FLOPs; bytes: bytes moved to and from HBM.
        launches: kernels launched (each pays the fixed overhead; 0 inside another kernel).
        sixteen_bit: runs in 16 bits even when the plan trains in FP8 (``number_format = "fp8"``):
            the attention core, the output layer's logits GEMM and the MoE router's GEMM (module
            docstring).
    """

    name: str
    phase: str
    kind: str
    flops: float
    bytes: float
    launches: int = 1
    sixteen_bit: bool = False


FP8_BYTES = 1
"""Bytes of one FP8 element (E4M3 forward, E5M2 gradients in Transformer Engine's hybrid format)."""


def fp8_cast(p: LLMParams, name: str, phase: str, elements: float, gathered: int = 1,
             transpose_phase: str = WT) -> list[Kernel]:
    """Transformer Engine's cast to FP8 of one BF16 tensor of ``elements`` elements
    on this NPU, before an FP8 GEMM (module docstring): amax (reads e N bytes), scale (a launch,
    no bytes) and cast (reads e N, writes N, and N more for the transposed copy when
    ``NPU.fp8_transposes`` and the tensor is not gathered) in ``phase``; ``gathered`` t > 1: the
    tensor is then TP all-gathered (sequence parallelism), and with ``fp8_transposes`` the gathered
    t N elements are transposed in ``transpose_phase`` (1 byte read and 1 written each). Empty
    unless the NPU trains in FP8 (``number_format = "fp8"``).

    With delayed scaling (``NPU.fp8_recipe = "delayed"``) the cast alone: its amax is taken
    inside it and its scale was computed from earlier iterations' amax history.

    Source: NVIDIA Transformer Engine, ``Float8CurrentScalingQuantizer::quantize_impl`` (csrc
    ``quantizer.cpp``: ``nvte_compute_amax_with_config``, ``nvte_compute_scale_from_amax``,
    ``nvte_quantize_v2``, three launches); ``Float8Quantizer::quantize`` (delayed scaling: one
    ``nvte_quantize_v2`` with the quantizer's scale and amax buffers, the amax reduced in the
    cast kernel, ``cast_transpose.cu``); ``is_non_tn_fp8_gemm_supported`` (compute capability
    10.x and 13.x and up: no transposed copy)."""
    if p.npu.number_format != "fp8" or elements <= 0:
        return []
    e, tr = p.activation_bytes, p.npu.fp8_transposes
    fused = FP8_BYTES if tr and gathered == 1 else 0  # (the copy written by the cast itself)
    cast = eltwise(name + " fp8 cast", phase, (e + FP8_BYTES + fused) * elements)
    if p.npu.fp8_recipe == "delayed":
        out = [cast]
    else:
        out = [eltwise(name + " fp8 amax", phase, e * elements),
               eltwise(name + " fp8 scale", phase, 0.0), cast]
    if tr and gathered > 1:
        out.append(eltwise(name + " fp8 transpose", transpose_phase,
                           2 * FP8_BYTES * gathered * elements))
    return out


def fp8_linear_casts(p: LLMParams, name: str, x: float, dy: float, x_split: int = 1,
                     dy_split: int = 1) -> list[Kernel]:
    """The FP8 casts of one linear layer (:func:`fp8_cast`): its input of ``x`` elements
    (forward; gathered over ``x_split`` NPUs with sequence parallelism, else 1) and its output
    gradient of ``dy`` elements (input-gradient phase; gathered over ``dy_split``). Empty unless the
    NPU trains in FP8."""
    return fp8_cast(p, name + " input", FWD, x, x_split, WT) + fp8_cast(
        p, name + " output grad", IN, dy, dy_split, IN)


def gemm(name: str, phase: str, m: float, n: float, k: float, e: float, batch: float = 1) -> Kernel:
    """A (batched) GEMM C[m, n] = A[m, k] B[k, n], ``batch`` times in one launch, ``e`` bytes per
    element."""
    return Kernel(name, phase, "gemm", 2.0 * m * n * k * batch, e * batch * (m * k + k * n + m * n))


def eltwise(name: str, phase: str, nbytes: float, launches: int = 1) -> Kernel:
    """An element-wise kernel moving ``nbytes`` bytes."""
    return Kernel(name, phase, "elementwise", 0.0, float(nbytes), launches)


def linear(name: str, m: float, n: float, k: float, e: float, bias: bool) -> list[Kernel]:
    """A linear layer on m tokens, k inputs, n outputs: the forward GEMM, its input-gradient GEMM
    (m, k, n) and its weight-gradient GEMM (k, n, m), with the bias-gradient reduction when
    ``bias``."""
    out = [
        gemm(name, FWD, m, n, k, e),
        gemm(name + " dgrad", IN, m, k, n, e),
        gemm(name + " wgrad", WT, k, n, m, e),
    ]
    return out + ([eltwise(name + " bias grad", WT, e * m * n)] if bias else [])


def _norm(p: LLMParams, name: str, tokens: float) -> list[Kernel]:
    e, h = p.activation_bytes, shape(p).h
    return [eltwise(name, FWD, 2 * e * tokens * h), eltwise(name + " bwd", IN, 3 * e * tokens * h)]


def _dropout_add(p: LLMParams, name: str, tokens: float) -> list[Kernel]:
    e, h, mb = p.activation_bytes, shape(p).h, p.precision.mask_bytes
    if not p.model.dropout:
        return [eltwise(name + " residual add", FWD, 3 * e * tokens * h)]
    return [
        eltwise(name + " dropout-add", FWD, (3 * e + mb) * tokens * h),
        eltwise(name + " dropout bwd", IN, (2 * e + mb) * tokens * h),
    ]


def _reduction(p: LLMParams, name: str, tokens: float) -> list[Kernel]:
    """The local adds of the layer's TP all-reduce / reduce-scatter, forward and input gradient."""
    x, e = shape(p), p.activation_bytes
    if x.t == 1:
        return []
    b = 3 * (x.t - 1) / x.t * tokens * x.h * e
    return [eltwise(name + " TP reduction", FWD, b, 0), eltwise(name + " TP reduction", IN, b, 0)]


def attention_core(p: LLMParams) -> list[Kernel]:
    """The attention core's kernels, forward and input gradient (module docstring): the NPU's s / cp
    queries of each sequence against all s keys and values (with context parallelism the others'
    keys and values arrive by the ``cp`` group's all-gather); 16-bit under FP8."""
    x, pr = shape(p), p.precision
    e, heads, s, d = p.activation_bytes, x.b * x.a_t, x.s, x.d
    sq, n_q = s / p.plan.cp, tokens(p)  # queries per sequence and per micro-batch on this NPU
    if p.plan.flash_attention:
        f = 2.0 * heads * sq * s * d  # causal: half of 4 B s_q s d
        return [
            Kernel("flash attention", FWD, "attention", f,
                   e * (n_q * 2 * x.q_t + x.n * 2 * x.kv_t), sixteen_bit=True),
            Kernel("flash attention bwd", IN, "attention", 2.5 * f,
                   e * (n_q * 4 * x.q_t + x.n * 4 * x.kv_t), sixteen_bit=True),
        ]
    scores = heads * sq * s
    out = [gemm("scores", FWD, sq, s, d, e, heads), eltwise("softmax", FWD, 2 * e * scores)]
    if p.model.dropout:
        out.append(eltwise("attention dropout", FWD, (2 * e + pr.mask_bytes) * scores))
    out.append(gemm("context", FWD, sq, d, s, e, heads))
    out += [
        gemm("context dgrad (probs)", IN, sq, s, d, e, heads),
        gemm("context dgrad (values)", IN, s, d, sq, e, heads),
    ]
    if p.model.dropout:
        out.append(eltwise("attention dropout bwd", IN, (2 * e + pr.mask_bytes) * scores))
    out += [
        eltwise("softmax bwd", IN, 3 * e * scores),
        gemm("scores dgrad (queries)", IN, sq, d, s, e, heads),
        gemm("scores dgrad (keys)", IN, s, d, sq, e, heads),
    ]
    return [replace(k, sixteen_bit=True) for k in out]


def tokens(p: LLMParams) -> float:
    """Tokens of one micro-batch on one NPU: n = b s, over cp with context parallelism (each NPU
    holds 1 / cp of every sequence)."""
    return shape(p).n / p.plan.cp


def attention_kernels(p: LLMParams) -> list[Kernel]:
    """Every kernel of one attention layer (norm to residual add), without recompute."""
    x, e, bias = shape(p), p.activation_bytes, p.model.biases
    tok, T = tokens(p) / x.seq_split, x.seq_split
    out = _norm(p, "attention norm", tok) + linear(
        "qkv", tokens(p), x.q_t + 2 * x.kv_t, x.h, e, bias
    ) + fp8_linear_casts(p, "qkv", tok * x.h, tokens(p) * (x.q_t + 2 * x.kv_t), x_split=T)
    if p.model.position_embedding == "rotary":
        rb = 2 * e * tokens(p) * (x.q_t + x.kv_t)
        out += [eltwise("rotary", FWD, rb), eltwise("rotary bwd", IN, rb)]
    out += attention_core(p) + linear("projection", tokens(p), x.h, x.q_t, e, bias)
    out += fp8_linear_casts(p, "projection", tokens(p) * x.q_t, tok * x.h, dy_split=T)
    return out + _reduction(p, "projection", tokens(p)) + _dropout_add(p, "attention", tok)


def _ffn(p: LLMParams, name: str, tokens: float, width: float, batch: int = 1,
         split: int = 1) -> list[Kernel]:
    """A dense FFN (or ``batch`` experts of ``tokens`` each) of per-NPU width ``width``: up (gate),
    activation, down, with their FP8 casts under FP8 training (the up layer's input and the down
    layer's output gradient gathered over ``split`` NPUs: t with sequence parallelism for a dense
    FFN, 1 for the experts, whose tokens the dispatcher brings)."""
    x, e, bias = shape(p), p.activation_bytes, p.model.biases
    gated = x.m == 3
    up = (2 if gated else 1) * width
    out = [
        k if batch == 1 else _batched(k, batch)
        for k in linear(name + " up", tokens, up, x.h, e, bias)
    ]
    out += fp8_linear_casts(p, name + " up", batch * tokens / split * x.h, batch * tokens * up,
                            x_split=split)
    act = e * tokens * width * batch
    out += [
        eltwise(name + (" swiglu" if gated else " gelu"), FWD, (3 if gated else 2) * act),
        eltwise(name + (" swiglu bwd" if gated else " gelu bwd"), IN, (5 if gated else 3) * act),
    ]
    out += [
        k if batch == 1 else _batched(k, batch)
        for k in linear(name + " down", tokens, x.h, width, e, bias)
    ]
    return out + fp8_linear_casts(p, name + " down", batch * tokens * width,
                                  batch * tokens / split * x.h, dy_split=split)


def _batched(k: Kernel, batch: int) -> Kernel:
    return replace(k, flops=k.flops * batch, bytes=k.bytes * batch)


def mlp_kernels(p: LLMParams) -> list[Kernel]:
    """Every kernel of one dense FFN layer, without recompute."""
    x = shape(p)
    tok = tokens(p) / x.seq_split
    return (
        _norm(p, "ffn norm", tok)
        + _ffn(p, "ffn", tokens(p), x.f_t, split=x.seq_split)
        + _reduction(p, "ffn", tokens(p))
        + _dropout_add(p, "ffn", tok)
    )


def moe_kernels(p: LLMParams) -> list[Kernel]:
    """Every kernel of one MoE FFN layer, without recompute (module docstring)."""
    moe, x, e = p.model.moe, shape(p), p.activation_bytes
    assert moe is not None
    tok, r, local = tokens(p) / x.seq_split, routed_tokens(p) / p.plan.cp, moe.experts // p.plan.ep
    fe_t = moe.expert_ffn_size // x.t
    out = _norm(p, "moe norm", tok) + [
        replace(k, sixteen_bit=True) for k in linear("router", tok, moe.experts, x.h, e, False)]
    out += [
        eltwise("routing", FWD, e * tok * moe.experts),
        eltwise("permute", FWD, 2 * e * r * x.h),
        eltwise("permute bwd", IN, 2 * e * r * x.h),
    ]
    out += _ffn(p, "experts", r / local, fe_t, local)
    if moe.shared_experts:
        out += _ffn(p, "shared experts", tokens(p), moe.shared_experts * fe_t,
                    split=x.seq_split)
    return out + _reduction(p, "moe", r) + _dropout_add(p, "moe", tok)


def embedding_kernels(p: LLMParams) -> list[Kernel]:
    """The input embedding's kernels: row gather, learned positions, dropout; the table's gradient
    scatter-add."""
    x, pr = shape(p), p.precision
    e, rows = p.activation_bytes, tokens(p) * x.h
    out = [
        eltwise("embedding gather", FWD, 2 * e * rows),
        eltwise("embedding grad", WT, 3 * e * rows),
    ]
    if p.model.position_embedding == "learned":
        out.append(eltwise("position add", FWD, 3 * e * rows))
    if p.model.dropout:
        tok = tokens(p) / x.seq_split
        out += [
            eltwise("embedding dropout", FWD, (2 * e + pr.mask_bytes) * tok * x.h),
            eltwise("embedding dropout bwd", IN, (2 * e + pr.mask_bytes) * tok * x.h),
        ]
    return out + (
        [eltwise("embedding TP reduction", FWD, 3 * (x.t - 1) / x.t * rows * e, 0)]
        if x.t > 1
        else []
    )


def output_kernels(p: LLMParams) -> list[Kernel]:
    """The output layer's kernels: final norm, logits GEMM (16-bit under FP8), cross-entropy
    (forward and its gradient)."""
    x, pr = shape(p), p.precision
    e, logits = p.activation_bytes, tokens(p) * x.v_t
    out = _norm(p, "final norm", tokens(p) / x.seq_split) + [
        replace(k, sixteen_bit=True) for k in linear("logits", tokens(p), x.v_t, x.h, e, False)
    ]
    out += [
        eltwise("cross-entropy", FWD, (e + pr.logits_bytes) * logits),
        eltwise("cross-entropy bwd", IN, (e + pr.logits_bytes) * logits),
    ]
    return out + _reduction(p, "logits", tokens(p))[1:]


_KINDS = {
    "attention": attention_kernels,
    "mlp": mlp_kernels,
    "moe": moe_kernels,
    "embedding": embedding_kernels,
    "output": output_kernels,
}


def layer_kernels(p: LLMParams, kind: str) -> list[Kernel]:
    """Every kernel of one layer of ``kind`` (``attention``, ``mlp``, ``moe``, ``embedding``,
    ``output``) on one NPU for one micro-batch, recompute included: the plan's ``full`` recompute
    repeats the layer's forward kernels, and ``selective`` the attention core's, in the
    input-gradient phase (named ``"recompute <name>"``).

    Raises:
        KeyError: an unknown kind.
    """
    out = _KINDS[kind](p)
    re = p.plan.recompute
    if re == "full" and kind in ("attention", "mlp", "moe"):
        again = [k for k in out if k.phase == FWD]
    elif re == "selective" and kind == "attention":
        again = [k for k in attention_core(p) if k.phase == FWD]
    else:
        again = []
    return out + [replace(k, name="recompute " + k.name, phase=IN) for k in again]


__all__ = [
    "Kernel",
    "gemm",
    "eltwise",
    "linear",
    "fp8_cast",
    "fp8_linear_casts",
    "FP8_BYTES",
    "attention_core",
    "attention_kernels",
    "mlp_kernels",
    "moe_kernels",
    "embedding_kernels",
    "output_kernels",
    "layer_kernels",
    "tokens",
    "FWD",
    "IN",
    "WT",
]
