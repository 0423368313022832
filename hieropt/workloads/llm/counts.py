"""Parameters and FLOPs of one layer on one NPU for one micro-batch: the formulas of the LLM
generator.

Notation (per micro-batch, per NPU): b micro-batch sequences, s sequence length, n = b s tokens, h
hidden size, a heads, g KV heads, d head width, f FFN width, t = TP degree, a_t = a / t query heads
per NPU, g_t KV heads per NPU (g / t, or 1 replicated head when t > g), f_t = f / t, V_t = padded
vocabulary / t; for MoE: E experts, k = top_k, f_e expert width, E / ep experts per NPU, r = n k c
routed token copies per NPU (c: capacity factor); the FFN has m = 3 matrices when gated (SwiGLU) and
m = 2 otherwise.

FLOPs (a multiply-add counts 2; Narayanan et al. 2021, arXiv 2104.04473, §5.1: forward 24 b s h^2 (1
+ s / 6h) per GPT block, the logit layer 2 b s h V, backward twice the forward):

- attention forward: 2 n h (a_t d + 2 g_t d) (Q, K, V projections) + 4 b s^2 a_t d (scores and
  context) + 2 n a_t d h (output projection); input gradient: the projections' 2 n h (a_t d + 2 g_t
  d) + 2 n a_t d h plus 2 x 4 b s^2 a_t d (both operands of the two weight-less matmuls); weight
     gradient:
  the projections again.
- dense FFN: 2 m n h f_t in each of forward, input gradient and weight gradient.
- MoE FFN: the router 2 n h E in each phase (on the n / t tokens of a TP rank with sequence
  parallelism, else on all n: it is replicated over TP), the routed experts 2 m r h f_e / t and the
  shared experts 2 m n h (shared f_e) / t in each phase.
- output layer: 2 n h V_t in each phase; the embedding lookup and the element-wise work count 0.
- recompute (Korthikanti et al. 2022, arXiv 2205.05198): ``full`` repeats each block's forward in
  its backward (with ``recompute_layers`` the first blocks of each chunk only:
  :mod:`.layout`); ``selective`` repeats the attention core 4 b s^2 a_t d only.

Parameters per NPU (elements): attention h (a_t + 2 g_t) d + a_t d h (+ biases (a_t + 2 g_t) d + h)
+ one norm; dense FFN m h f_t (+ biases (m - 1) f_t + h) + one norm; MoE FFN: router h E, shared
  experts m h
(shared f_e) / t and one norm are dense (data-parallel over dp), the E / ep local experts m h f_e /
t each (+ biases) are expert parameters (data-parallel over dp / ep); input embedding V_t h (+ s h
learned positions, replicated over TP) on the first stage; final norm and, unless tied with pp = 1,
the output matrix V_t h on the last stage. Megatron-LM keeps norm weights and row-parallel biases
whole on every TP rank; so does this count.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...cache import Same, current
from .params import LLMParams


@dataclass(frozen=True)
class Shape:
    """Per-NPU sizes of one micro-batch under a plan (see the module docstring for the symbols)."""

    b: int
    s: int
    h: int
    t: int
    sp: bool
    a_t: int
    g_t: int
    d: int
    f_t: int
    m: int
    v_t: int

    @property
    def n(self) -> int:
        """Tokens per micro-batch n = b s."""
        return self.b * self.s

    @property
    def q_t(self) -> int:
        """Query width per NPU a_t d."""
        return self.a_t * self.d

    @property
    def kv_t(self) -> int:
        """Key (or value) width per NPU g_t d."""
        return self.g_t * self.d

    @property
    def seq_split(self) -> int:
        """Divisor of the activations outside the TP-split matmuls: t with sequence parallelism,
        else 1."""
        return self.t if self.sp else 1


def shape(p: LLMParams) -> Shape:
    """The per-NPU sizes of ``p`` (validated params: every division below is exact); kept in the
    active cache (build_step asks for the same params many times)."""
    return current().memo("llm_shape", Same(p), lambda: _shape(p), 8)


def _shape(p: LLMParams) -> Shape:
    m, pl = p.model, p.plan
    t = pl.tp
    x = Shape(
        b=pl.micro_batch_size,
        s=m.sequence_length,
        h=m.hidden_size,
        t=t,
        sp=pl.sequence_parallel,
        a_t=m.heads // t,
        g_t=max(m.kv // t, 1),
        d=m.d_head,
        f_t=m.ffn_size // t,
        m=3 if m.gated_ffn else 2,
        v_t=p.padded_vocab // t,
    )
    return x


# --------------------------------------------------------------------------------------- parameters
def attention_params(p: LLMParams) -> int:
    """Parameters of one attention layer on one NPU (with its norm), elements."""
    x = shape(p)
    n = x.h * (x.q_t + 2 * x.kv_t) + x.q_t * x.h + p.model.norm_params
    if p.model.biases:
        n += x.q_t + 2 * x.kv_t + x.h
    return n


def ffn_params(p: LLMParams, width_t: int, norm: bool = True) -> int:
    """Parameters of one dense FFN of per-NPU width ``width_t`` (with its norm unless ``norm`` is
    False)."""
    x = shape(p)
    n = x.m * x.h * width_t + (p.model.norm_params if norm else 0)
    if p.model.biases:
        n += (x.m - 1) * width_t + x.h
    return n


def moe_params(p: LLMParams) -> tuple[int, int]:
    """(dense, expert) parameters of one MoE FFN layer on one NPU: router, shared experts and norm;
    local experts."""
    moe = p.model.moe
    assert moe is not None
    x = shape(p)
    fe_t = moe.expert_ffn_size // x.t
    dense = x.h * moe.experts + p.model.norm_params
    if moe.shared_experts:
        dense += ffn_params(p, moe.shared_experts * fe_t, norm=False)
    experts = moe.experts // p.plan.ep * ffn_params(p, fe_t, norm=False)
    return dense, experts


def embedding_params(p: LLMParams) -> int:
    """Input embedding on one NPU of the first stage: V_t h, plus s h learned positions (not split
    over TP)."""
    x = shape(p)
    return x.v_t * x.h + (x.s * x.h if p.model.position_embedding == "learned" else 0)


def output_params(p: LLMParams) -> int:
    """Final norm and output matrix on one NPU of the last stage; a tied matrix counts only when pp
    > 1 (a copy)."""
    x = shape(p)
    copy = not p.model.tied_embeddings or p.plan.pp > 1
    return p.model.norm_params + (x.v_t * x.h if copy else 0)


# -------------------------------------------------------------------------------------------- FLOPs
Flops = tuple[int, int, int]
"""(forward, input gradient, weight gradient) FLOPs."""


def attention_flops(p: LLMParams) -> Flops:
    """FLOPs of one attention layer on one NPU for one micro-batch (module docstring)."""
    x = shape(p)
    proj = 2 * x.n * x.h * (x.q_t + 2 * x.kv_t) + 2 * x.n * x.q_t * x.h
    core = attention_core_flops(p)
    return proj + core, proj + 2 * core, proj


def attention_core_flops(p: LLMParams) -> int:
    """Forward FLOPs of the two weight-less attention matmuls (scores and context): 4 b s^2 a_t d;
    what selective recompute repeats."""
    x = shape(p)
    return 4 * x.b * x.s * x.s * x.q_t


def ffn_flops(
    p: LLMParams, width_t: int, tokens: float | None = None
) -> tuple[float, float, float]:
    """FLOPs of a dense FFN of per-NPU width ``width_t`` on ``tokens`` tokens (default n): 2 m
    tokens h width_t in each phase."""
    x = shape(p)
    tok = x.n if tokens is None else tokens
    f = 2 * x.m * tok * x.h * width_t
    return f, f, f


def routed_tokens(p: LLMParams) -> float:
    """Routed token copies an NPU's local experts process per micro-batch, r = n k c (balanced
    routing: every EP rank receives as many copies as it sends)."""
    moe = p.model.moe
    assert moe is not None
    return shape(p).n * moe.top_k * moe.capacity_factor


def moe_flops(p: LLMParams) -> tuple[float, float, float]:
    """FLOPs of one MoE FFN layer on one NPU for one micro-batch: router, routed and shared
    experts."""
    moe = p.model.moe
    assert moe is not None
    x = shape(p)
    fe_t = moe.expert_ffn_size // x.t
    router = 2 * (x.n // x.seq_split) * x.h * moe.experts
    experts = ffn_flops(p, fe_t, routed_tokens(p))[0]
    shared = ffn_flops(p, moe.shared_experts * fe_t)[0] if moe.shared_experts else 0
    f = experts + shared
    return router + f, router + f, router + f


def output_flops(p: LLMParams) -> Flops:
    """FLOPs of the output (logit) layer on one NPU: 2 n h V_t in each phase."""
    x = shape(p)
    f = 2 * x.n * x.h * x.v_t
    return f, f, f


__all__ = [
    "Shape",
    "shape",
    "attention_params",
    "ffn_params",
    "moe_params",
    "embedding_params",
    "output_params",
    "attention_flops",
    "attention_core_flops",
    "ffn_flops",
    "routed_tokens",
    "moe_flops",
    "output_flops",
    "Flops",
]
