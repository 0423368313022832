"""Workload of a GPT-style transformer trained with Megatron-LM tensor parallelism and data
parallelism.

Each transformer block becomes two :class:`~hieropt.spec.Layer` objects, ``attn{i}`` and ``mlp{i}``
(i = 1 .. ``layers``), in forward order. Tensor parallelism follows Megatron-LM (Shoeybi et al.
2019, arXiv 1909.08053, §3): the attention block and the MLP block each split their weights over
``tp`` NPUs and end with one all-reduce of the activations in the forward pass (operator ``g``) and
one in the backward pass (operator ``f``). Data parallelism all-reduces every weight gradient over
the ``dp`` replicas.

Notation: b = ``micro_batch`` (sequences), s = ``sequence_length`` (tokens), h = ``hidden_size``,
f = ``ffn_multiplier`` (MLP width f·h), t = ``tp``, B = ``bytes_per_element``.

FLOPs (a multiply-add counts 2), per NPU, following the FLOP accounting of Narayanan et al. 2021,
"Efficient Large-Scale Language Model Training on GPU Clusters", arXiv 2104.04473: 24·b·s·h²·(1 +
s/(6h)) per block forward (f = 4), and a backward pass of twice the forward FLOPs (gradients with
respect to both operands of every matmul):

- attention: forward (8·b·s·h² + 4·b·s²·h)/t, input gradient (8·b·s·h² + 8·b·s²·h)/t, weight
  gradient 8·b·s·h²/t;
- MLP: forward, input gradient and weight gradient 4·f·b·s·h²/t each (16·b·s·h²/t for f = 4).

Attention forward: Q, K, V projections 3·2bsh², output projection 2bsh², scores Q·Kᵀ 2bs²h, context
softmax(·)·V 2bs²h. A weight matmul costs the same again for its input gradient and again for its
weight gradient. The two attention-core matmuls (scores, context) have no weights: their backward
pass computes the gradients of both activation operands, 2·4bs²h, and all of it belongs to the input
gradient. Hence forward + backward = 3 × forward, as in Narayanan et al. (the total per block is
72·b·s·h²·(1 + s/(6h)) / t for f = 4).

Compute time: ``compute_ns = FLOPs / (npu_peak_tflops · 1e12 · efficiency) · 1e9``.

Collectives (sizes in bytes, the per-NPU buffer as in :class:`hieropt.spec.Phase`):

- forward and input gradient: ALLREDUCE of b·s·h·B bytes (the Megatron TP all-reduce of the block's
  output / input gradient) when t > 1, else NONE with 0 bytes;
- weight gradient: ALLREDUCE of the layer's parameters per TP shard times B when ``dp`` > 1, else
  NONE with 0 bytes. Parameters (Narayanan et al.: 12h² + 13h per block): attention 4h² + 4h (Q, K,
  V, output weights and biases), MLP 2·f·h² + f·h + h (two weights, two biases); each divided by t.
  In Megatron the biases of the two row-parallel matmuls (h each) and the two layer norms (4h per
  block) are replicated on every TP rank; here the former count as split and the latter are left
  out, an undercount of at most 6h elements per block per NPU (0.07 % of the (12h² + 13h)/t elements
  per NPU for GPT-3 175B).

Not modelled: embeddings and the output (logits) layer, pipeline parallelism, activation
recomputation, the optimizer step (``update_ns = 0``), sparse attention variants.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..spec import Collective, Layer, Phase, Workload, WorkloadHeader
from ..spec.base import check_number_fields
from ..spec.training import Training

POLICY = "HYBRID_TRANSFORMER"
"""ASTRA-sim header policy written into generated workloads (TP inside a block, DP across
replicas)."""


class TransformerParams(BaseModel):
    """Parameters of a GPT-style transformer and of the NPUs that train it.

    Attributes:
        name: workload name.
        layers: number of transformer blocks (each gives two workload layers), 1 to 100,000.
        hidden_size: model width h (elements); must be divisible by ``tp``.
        sequence_length: tokens per sequence s.
        micro_batch: sequences per data-parallel replica per iteration b.
        bytes_per_element: bytes of one activation / gradient element (2 for fp16 or bf16).
        tp: tensor-parallel degree (NPUs sharing one block's weights).
        dp: data-parallel degree (replicas all-reducing weight gradients).
        npu_peak_tflops: peak throughput of one NPU in TFLOP/s (1e12 FLOP/s).
        efficiency: fraction of peak achieved, 0 < efficiency <= 1.
        ffn_multiplier: MLP width as a multiple of h (4 in GPT-3).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _numbers_are_numbers(cls, data: Any) -> Any:
        # (a float for a count or degree, tp = 8.0, is an error)
        return check_number_fields(cls, data)

    name: str = Field(min_length=1)
    layers: int = Field(ge=1, le=100_000)
    hidden_size: int = Field(gt=0)
    sequence_length: int = Field(gt=0)
    micro_batch: int = Field(gt=0)
    bytes_per_element: int = Field(gt=0)
    tp: int = Field(gt=0)
    dp: int = Field(gt=0)
    npu_peak_tflops: float = Field(gt=0, allow_inf_nan=False)
    efficiency: float = Field(gt=0, le=1, allow_inf_nan=False)
    ffn_multiplier: int = Field(default=4, gt=0)

    @model_validator(mode="after")
    def _tp_divides_hidden(self) -> TransformerParams:
        if self.hidden_size % self.tp != 0:
            divisors = [
                d for d in range(1, min(self.hidden_size, 64) + 1) if self.hidden_size % d == 0
            ]
            raise ValueError(
                f"hidden_size {self.hidden_size} is not divisible by tp {self.tp}: Megatron "
                "tensor parallelism splits "
                "the hidden dimension evenly over the tp NPUs; fix: use a tp that divides "
                "hidden_size "
                f"(e.g. one of {divisors}) or a hidden_size that is a multiple of {self.tp}"
            )
        return self


def _ns(flops: int, p: TransformerParams) -> float:
    """Time in ns to run ``flops`` FLOPs on one NPU at ``efficiency`` × ``npu_peak_tflops``."""
    return flops / (p.npu_peak_tflops * 1e12 * p.efficiency) * 1e9


def attention_flops(p: TransformerParams) -> tuple[int, int, int]:
    """FLOPs per NPU of one attention layer: (forward, input gradient, weight gradient).

    forward = (8bsh² + 4bs²h)/tp, input gradient = (8bsh² + 8bs²h)/tp, weight gradient = 8bsh²/tp
    (module docstring; Narayanan et al. 2021, arXiv 2104.04473). Exact integers: h is a multiple of
    tp.
    """
    b, s, h, t = p.micro_batch, p.sequence_length, p.hidden_size, p.tp
    weights = 8 * b * s * h * h // t
    core = 4 * b * s * s * h // t
    return weights + core, weights + 2 * core, weights


def mlp_flops(p: TransformerParams) -> tuple[int, int, int]:
    """FLOPs per NPU of one MLP layer: (forward, input gradient, weight gradient), each
    4·f·b·s·h²/tp."""
    b, s, h, t, f = p.micro_batch, p.sequence_length, p.hidden_size, p.tp, p.ffn_multiplier
    fwd = 4 * f * b * s * h * h // t
    return fwd, fwd, fwd


def attention_params_per_npu(p: TransformerParams) -> int:
    """Parameters of one attention layer held by one NPU: (4h² + 4h)/tp."""
    h = p.hidden_size
    return (4 * h * h + 4 * h) // p.tp


def mlp_params_per_npu(p: TransformerParams) -> int:
    """Parameters of one MLP layer held by one NPU: (2·f·h² + f·h + h)/tp."""
    h, f = p.hidden_size, p.ffn_multiplier
    return (2 * f * h * h + f * h + h) // p.tp


def _layer(
    name: str, flops: tuple[int, int, int], params_per_npu: int, p: TransformerParams
) -> Layer:
    if p.tp > 1:
        tp_coll = Collective.ALL_REDUCE
        tp_bytes = float(p.micro_batch * p.sequence_length * p.hidden_size * p.bytes_per_element)
    else:
        tp_coll, tp_bytes = Collective.NONE, 0.0
    if p.dp > 1:
        dp_coll, dp_bytes = Collective.ALL_REDUCE, float(params_per_npu * p.bytes_per_element)
    else:
        dp_coll, dp_bytes = Collective.NONE, 0.0
    fwd, ig, wg = flops
    return Layer(
        name=name,
        forward=Phase(compute_ns=_ns(fwd, p), collective=tp_coll, size_bytes=tp_bytes),
        input_grad=Phase(compute_ns=_ns(ig, p), collective=tp_coll, size_bytes=tp_bytes),
        weight_grad=Phase(compute_ns=_ns(wg, p), collective=dp_coll, size_bytes=dp_bytes),
        update_ns=0.0,
    )


def generate(params: TransformerParams) -> Workload:
    """Build the training workload of a Megatron-LM TP × DP transformer.

    Args:
        params: model and NPU parameters (validated on construction).

    Returns:
        a :class:`~hieropt.spec.Workload` named ``params.name`` with policy ``"HYBRID_TRANSFORMER"``
        and 2 · ``params.layers`` layers ``attn1, mlp1, attn2, mlp2, ...``; compute in ns per NPU,
        collective sizes in bytes per NPU; ``group_npus`` states the data-parallel group (``dp``
        NPUs). Formulas and sources: module docstring.
    """
    attn_f, mlp_f = attention_flops(params), mlp_flops(params)
    attn_w, mlp_w = attention_params_per_npu(params), mlp_params_per_npu(params)
    layers: list[Layer] = []
    for i in range(1, params.layers + 1):
        layers.append(_layer(f"attn{i}", attn_f, attn_w, params))
        layers.append(_layer(f"mlp{i}", mlp_f, mlp_w, params))
    header = WorkloadHeader(
        policy=POLICY, model_parallel_npu_group=params.tp, declared_layers=len(layers)
    )
    return Workload(name=params.name, layers=tuple(layers), header=header,
                    group_npus=(("weight_grad", "dp", params.dp),), training=training(params))


def training(p: TransformerParams) -> Training:
    """The run facts of the workload (:class:`~hieropt.spec.training.Training`): dp x micro_batch
    sequences of s tokens per iteration; model FLOPs = the blocks' FLOPs of every NPU (layers x
    (attention + MLP) per NPU x tp x dp; no embedding or logit layer, as the workload); no
    recompute."""
    flops = p.layers * (sum(attention_flops(p)) + sum(mlp_flops(p))) * p.tp * p.dp
    return Training(
        model=p.name,
        tokens_per_iteration=float(p.dp * p.micro_batch * p.sequence_length),
        model_flops_per_iteration=float(flops),
        hardware_flops_per_iteration=float(flops),
        npus=p.tp * p.dp,
        peak_flops_per_npu=p.npu_peak_tflops * 1e12,
    )
