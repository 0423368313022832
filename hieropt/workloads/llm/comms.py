"""The collectives of one layer of an LLM plan, by group (the formulas of
:mod:`hieropt.workloads.llm.step`'s docstring): tensor parallelism, context parallelism, data
parallelism under each ZeRO stage, and the optimizer step's time."""

from __future__ import annotations

from dataclasses import dataclass

from .counts import shape
from .params import LLMParams

AR, RS, AG, A2A, P2P = "ALLREDUCE", "REDUCESCATTER", "ALLGATHER", "ALLTOALL", "P2P"


@dataclass(frozen=True)
class Comm:
    """One collective of a layer: its group, kind, bytes (hieropt's size convention), phase and what
    it is."""

    group: str
    kind: str
    size_bytes: float
    phase: str
    what: str

    @property
    def per_iteration(self) -> bool:
        """Runs once per iteration (weight_grad phase), not once per micro-batch."""
        return self.phase == "weight_grad"


FP8_GATHER_BYTES = 1
"""Bytes per element of a tensor Transformer Engine all-gathers in FP8 (E4M3 or E5M2)."""


def tp_gather_bytes(p: LLMParams, fp8_linears: bool = True) -> float:
    """Bytes per element of the sequence-parallel all-gathers of a layer: :data:`FP8_GATHER_BYTES`
    when the NPU trains in FP8 (``number_format = "fp8"``) and ``fp8_linears`` (the gathered
    tensors feed Transformer Engine's FP8 linears: the attention and dense FFN layers), else
    ``activation_bytes``.

    Transformer Engine quantizes the NPU's shard first and all-gathers the FP8 bytes (its
    ``transformer_engine/pytorch/module/linear.py`` and ``layernorm_linear.py``: the forward's
    ``gather_along_first_dim(inputmat, tp_group, quantizer=input_quantizer)`` and the backward's
    re-gather of the input for the weight gradient with the same quantizer;
    ``module/base.py`` ``grad_output_preprocess``: a row-parallel layer's output gradient gathered
    with ``quantizer=grad_output_quantizer``; ``distributed.py`` ``_all_gather_fp8``). The
    reduce-scatters stay in 16 bits (their sums are BF16). The MoE layer's TP gathers are the
    token dispatcher's (Megatron-Core's own, in 16 bits), so ``fp8_linears`` is False for it.
    """
    if fp8_linears and p.npu.number_format == "fp8":
        return float(FP8_GATHER_BYTES)
    return float(p.activation_bytes)


def tp_comms(p: LLMParams, tokens: float, fp8_linears: bool = True) -> list[Comm]:
    """The tensor-parallel collectives of one attention or FFN layer over ``tokens`` tokens of the
    NPU (module docstring of :mod:`hieropt.workloads.llm.step`); none for tp = 1. Reductions carry
    ``activation_bytes`` per element; with sequence parallelism the all-gathers carry
    :func:`tp_gather_bytes` (1 byte under FP8 training for a layer of Transformer Engine FP8
    linears, ``fp8_linears``; the MoE layer passes False)."""
    x = shape(p)
    if x.t == 1:
        return []
    full = tokens * x.h * p.activation_bytes
    full_re = p.plan.recompute == "full"
    if not x.sp:
        out = [Comm("tp", AR, full, "forward", "output all-reduce"),
               Comm("tp", AR, full, "input_grad", "input-gradient all-reduce")]
        if full_re:
            out.append(Comm("tp", AR, full, "input_grad", "recomputed output all-reduce"))
        return out
    shard = tokens * x.h * tp_gather_bytes(p, fp8_linears) / x.t
    out = [Comm("tp", AG, shard, "forward", "input all-gather (sequence parallel)"),
           Comm("tp", RS, full, "forward", "output reduce-scatter (sequence parallel)"),
           Comm("tp", AG, shard, "input_grad", "output-gradient all-gather"),
           Comm("tp", RS, full, "input_grad", "input-gradient reduce-scatter")]
    if full_re:
        out += [Comm("tp", AG, shard, "input_grad", "recomputed input all-gather"),
                Comm("tp", RS, full, "input_grad", "recomputed output reduce-scatter")]
    else:
        out.append(
            Comm("tp", AG, shard, "input_grad", "input all-gather again for the weight gradient")
        )
    return out


def cp_kv_bytes(p: LLMParams) -> float:
    """K and V of the NPU's share of the sequence for one micro-batch, bytes: (b s / c) x 2 g_t d x
    e."""
    x = shape(p)
    return x.n / p.plan.cp * 2 * x.g_t * x.d * p.activation_bytes


def cp_comms(p: LLMParams) -> list[Comm]:
    """The context-parallel collectives of one attention layer (Llama 3's all-gather form, Llama
    Team 2024, arXiv 2407.21783, §3.3.2; none for cp = 1): the forward all-gathers K and V (shard
    :func:`cp_kv_bytes`: each NPU sends (c - 1) x that, as many bytes as ring attention passes
    around), the backward gathers them again and reduce-scatters their gradients (c x the shard; (c
    - 1) x the shard sent); full recompute gathers once more."""
    if p.plan.cp == 1:
        return []
    kv = cp_kv_bytes(p)
    out = [
        Comm("cp", AG, kv, "forward", "K/V all-gather (context parallel)"),
        Comm("cp", AG, kv, "input_grad", "K/V all-gather again for the backward"),
        Comm(
            "cp", RS, kv * p.plan.cp, "input_grad", "K/V-gradient reduce-scatter (context parallel)"
        ),
    ]
    if p.plan.recompute == "full":
        out.append(Comm("cp", AG, kv, "input_grad", "recomputed K/V all-gather"))
    return out


def dp_comms(p: LLMParams, params: int, group: str, size: int, what: str) -> list[Comm]:
    """The gradient (and ZeRO parameter) collectives of a layer's ``params`` parameters over
    ``group`` of ``size`` NPUs (module docstring of :mod:`hieropt.workloads.llm.step`); none when
    size is 1 or there are no parameters."""
    if size == 1 or params == 0:
        return []
    grads, shard = params * p.gradient_bytes, params * p.weight_bytes / size
    zero = p.plan.zero_stage
    if zero == 0:
        return [Comm(group, AR, grads, "weight_grad", f"{what}gradient all-reduce")]
    after_step = Comm(
        group,
        AG,
        shard,
        "weight_grad",
        f"{what}updated-parameter all-gather after the optimizer step",
    )
    if zero == 1:
        return [Comm(group, RS, grads, "weight_grad", f"{what}gradient reduce-scatter"), after_step]
    if zero == 2:
        return [
            Comm(
                group, RS, grads, "input_grad", f"{what}gradient reduce-scatter (every micro-batch)"
            ),
            after_step,
        ]
    return [Comm(group, AG, shard, "forward", f"{what}parameter all-gather before the forward"),
            Comm(group, AG, shard, "input_grad", f"{what}parameter all-gather before the backward"),
            Comm(group, RS, grads, "input_grad", f"{what}gradient reduce-scatter")]


def own_stream_groups(plan) -> tuple[str, ...]:
    """The groups whose per-micro-batch collectives run on their own stream under ``plan`` (a
    :class:`~hieropt.workloads.llm.params.Plan`): ``tp`` with ``overlap_tp_comms`` and tp > 1
    (:func:`tp_comms` run on it), the data-parallel groups of ZeRO stage 2 or 3 with
    ``overlap_sharded_comms`` (:func:`dp_comms`' per-micro-batch collectives run on them); none
    without either."""
    tp = ("tp",) if plan.overlap_tp_comms and plan.tp > 1 else ()
    dp = ("dp", "edp", "dpc") if plan.overlap_sharded_comms and plan.zero_stage >= 2 else ()
    return tp + dp


__all__ = ["own_stream_groups", "Comm", "AR", "RS", "AG", "A2A", "P2P", "tp_comms", "cp_comms",
           "cp_kv_bytes", "dp_comms", "tp_gather_bytes", "FP8_GATHER_BYTES"]
