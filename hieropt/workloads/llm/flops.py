"""Model FLOPs of an LLM training iteration (Megatron's definition) and the
:class:`~hieropt.spec.Training` facts a workload carries for the buyer's figures
(:mod:`hieropt.model.run`: MFU, tokens/s, days, MWh, $ per run).

Whole-model forward FLOPs of one sequence (a multiply-add counts 2; s sequence length, h hidden
size, a heads, g KV heads, d head width, f FFN width, m = 3 matrices when gated else 2, V the
vocabulary; for MoE layers E experts, k top-k, f_e expert width, S shared experts):

- attention: 2 s h (a d + 2 g d) (Q, K, V) + 2 s a d h (output projection) + 4 s^2 a d (scores and
  context);
- dense FFN: 2 m s h f; MoE FFN: 2 s h E (router) + 2 m s k h f_e (routed, balanced, no capacity
  padding)
  + 2 m s h S f_e (shared experts);
- output layer: 2 s h V (the model's vocabulary, not the padded one).

Model FLOPs per iteration = 3 x B x that (backward = twice the forward; B the global batch in
sequences): for GPT (a d = h, g = a, f = 4h) it is Narayanan et al. 2021 (arXiv 2104.04473) eq. 3
without the recompute's extra forward, 72 B s L h^2 (1 + s / 6h + V / 12 L h) (the logit layer is
not recomputed; Korthikanti et al. 2022, arXiv 2205.05198 §6, write MFU with this count). Recompute
adds B x the blocks' forward (``full``; with ``recompute_layers`` only the recomputed blocks', the
first of each chunk: :func:`hieropt.workloads.llm.layout.recomputed_blocks`) or B L 4 s^2 a d
(``selective``, the attention core; Korthikanti et al. 2022, arXiv 2205.05198): the hardware FLOPs
of HFU.
"""

from __future__ import annotations

from pathlib import Path

from ...spec.training import Training
from ...units import cluster_size_note
from .layout import partial_recompute, recomputed_blocks, stage_chunks, unequal_chunks_note
from .links import figure_source
from .params import LLMParams
from .plan_rules import defaults_note, slip_notes


def attention_forward_flops(p: LLMParams) -> int:
    """Forward FLOPs of one attention layer for one sequence, whole model (module docstring)."""
    m = p.model
    s, h, q, kv = m.sequence_length, m.hidden_size, m.heads * m.d_head, m.kv * m.d_head
    return 2 * s * h * (q + 2 * kv) + 2 * s * q * h + 4 * s * s * q


def ffn_forward_flops(p: LLMParams, layer: int) -> int:
    """Forward FLOPs of the feed-forward layer of block ``layer`` (0-based) for one sequence, whole
    model."""
    m = p.model
    s, h, mats = m.sequence_length, m.hidden_size, 3 if m.gated_ffn else 2
    moe = m.moe
    if moe is None or not m.is_moe(layer):
        return 2 * mats * s * h * m.ffn_size
    return 2 * s * h * moe.experts + 2 * mats * s * h * moe.expert_ffn_size * (
        moe.top_k + moe.shared_experts
    )


def blocks_forward_flops(p: LLMParams) -> int:
    """Forward FLOPs of every transformer block for one sequence (attention and FFN), whole
    model."""
    return sum(attention_forward_flops(p) + ffn_forward_flops(p, i) for i in range(p.model.layers))


def model_flops_per_iteration(p: LLMParams) -> int:
    """Model FLOPs of one iteration (no recompute): 3 B (blocks + output layer) per sequence (module
    docstring)."""
    m = p.model
    logits = 2 * m.sequence_length * m.hidden_size * m.vocab_size
    return 3 * p.plan.global_batch_size * (blocks_forward_flops(p) + logits)


def model_parameters(p: LLMParams) -> int:
    """Parameters of the whole model (not per NPU; the vocabulary unpadded), elements: per block
    the attention h (q + 2 kv) + q h (q = heads d_head, kv = kv_heads d_head) and its norm, the FFN
    M h f (M = 3 gated, 2 not) and its norm, or an MoE layer's router h E, shared experts and E
    experts of width f_e; biases q + 2 kv + h and (M - 1) f + h; the input embedding V h (+ s h
    learned positions); the final norm and, untied, the output matrix V h (the per-NPU counts of
    :mod:`hieropt.workloads.llm.counts` with t = ep = 1)."""
    m = p.model
    h, q, kv, mats = m.hidden_size, m.heads * m.d_head, m.kv * m.d_head, 3 if m.gated_ffn else 2

    def ffn(width: int, norm: bool = True) -> int:
        return (mats * h * width + (m.norm_params if norm else 0)
                + ((mats - 1) * width + h if m.biases else 0))

    attn = h * (q + 2 * kv) + q * h + m.norm_params + (q + 2 * kv + h if m.biases else 0)
    total = 0
    for i in range(m.layers):
        total += attn
        if m.moe is None or not m.is_moe(i):
            total += ffn(m.ffn_size)
        else:
            e = m.moe
            total += h * e.experts + m.norm_params + e.experts * ffn(e.expert_ffn_size, False)
            total += ffn(e.shared_experts * e.expert_ffn_size, False) if e.shared_experts else 0
    total += m.vocab_size * h + (m.sequence_length * h if m.position_embedding == "learned" else 0)
    return total + m.norm_params + (0 if m.tied_embeddings else m.vocab_size * h)


def recompute_flops_per_iteration(p: LLMParams) -> int:
    """FLOPs the plan's recompute adds per iteration: 0 (``none``), the attention cores' forward
    (``selective``), every block's forward (``full``), the recomputed blocks' (``full`` with
    ``recompute_layers``: the first of each chunk)."""
    m, pl = p.model, p.plan
    if partial_recompute(p):
        blocks = [i for chunks in stage_chunks(p) for b in chunks
                  for i in b[:recomputed_blocks(p, b)]]
        return pl.global_batch_size * sum(
            attention_forward_flops(p) + ffn_forward_flops(p, i) for i in blocks)
    if pl.recompute == "full":
        return pl.global_batch_size * blocks_forward_flops(p)
    if pl.recompute == "selective":
        return pl.global_batch_size * m.layers * 4 * m.sequence_length ** 2 * m.heads * m.d_head
    return 0


ZERO3_CAVEAT = (
    "ZeRO stage 3 (parameters sharded over DP) is the model's least validated plan feature: the "
    "measured DeepSpeed ZeRO-3 runs in docs/validation.md (Narayanan et al. 2021 Table 2, "
    "175B and 530B on 384-2,240 A100; Megatron-FSDP's one ZeRO-3 run there, 64 GB200 without "
    "pipeline parallelism, is not among them) took 1.3-3.1x the time this model predicts, more "
    "on more GPUs; take this plan's iteration time, days and MFU as optimistic until runs of "
    "your software stack calibrate it"
)
"""The caveat :func:`training_of` gives a plan with ``zero_stage = 3``: measured / predicted is
81,579 / 62,274 = 1.31 (174.6B, 384 GPUs) to 66,746 / 21,809 = 3.06 (1,536 GPUs) in
``validation/narayanan2021.csv`` with the A100's default calibration."""
MOE_CAVEAT = (
    "expert parallelism (MoE) is not validated: docs/validation.md holds no measured MoE run, so "
    "its all-to-all and expert compute times are the model's alone"
)
"""The caveat :func:`training_of` gives a plan with experts (``ep`` > 1 or a MoE model)."""


def zero_pp_caveat(zero_stage: int, pp: int) -> str:
    """The caveat :func:`plan_caveats` gives a plan with ZeRO stage ``zero_stage`` (2 or 3) and
    ``pp`` > 1 pipeline stages: DeepSpeed's pipeline engine refuses ZeRO stages 2 and 3 with
    pipeline parallelism (``PipelineEngine`` asserts a stage below 2) and Megatron-LM runs ZeRO-3
    through Megatron-FSDP (the runs of ``validation/megatron-bridge-2025.csv`` have no pipeline
    parallelism), so the plan needs software that runs the combination (Llama 3's FSDP with PP
    does ZeRO 2: Llama Team 2024, arXiv 2407.21783, §3.3.2)."""
    known = (" and Megatron-LM runs ZeRO-3 through Megatron-FSDP, whose measured runs here have "
             "no pipeline parallelism; check that your training software runs this combination"
             if zero_stage == 3 else "; check that your training software runs "
             "this combination (Llama 3's FSDP-based stack does)")
    return (
        f"ZeRO stage {zero_stage} with pipeline parallelism (pp {pp}): DeepSpeed's pipeline engine "
        f"refuses ZeRO stages 2 and 3 with pipeline parallelism{known}"
    )


def interleaved_overlap_note(v: int, param_gather: bool = False) -> str:
    """The note on ``overlap_grad_reduce`` under the interleaved schedule (``v`` > 1 chunks per
    stage): Megatron-LM issues each chunk's DP gradient reduce-scatter as that chunk's last
    backward ends, overlapping the backward left; the model overlaps the per-iteration
    collectives with the first stage's last backward under 1F1B only
    (:func:`hieropt.model.pipeline.overlapped`) and counts them exposed after the last backward
    with v > 1, so the time is an upper bound on that part; with ``param_gather``
    (``overlap_param_gather``) the same of the parameter all-gather
    (:func:`hieropt.model.gathers.gathered`)."""
    gather = (" and, for overlap_param_gather, the all-gather of the updated parameters after the "
              "optimizer step (Megatron-LM overlaps it with the next forward)" if param_gather
              else "")
    return (f"overlap_grad_reduce with the interleaved schedule (v = {v}): the model does not "
            "overlap the DP gradient reduction under interleaving (Megatron-LM issues each "
            "chunk's as its last backward ends); it counts the per-iteration DP collectives "
            f"exposed after the last backward{gather}, an upper bound on their part of the "
            "iteration time (under 1F1B the overlap is modelled)")


def sharded_overlap_note(zero_stage: int) -> str:
    """The note on ``overlap_grad_reduce`` with ZeRO stage ``zero_stage`` 2 or 3 (without
    ``overlap_param_gather``, which needs it under ZeRO 2): it changes nothing, as the gradients
    are reduce-scattered every micro-batch (:func:`hieropt.workloads.llm.comms.dp_comms`) and
    there is no per-iteration gradient reduction left for it to overlap with the last backward
    (Megatron-LM's ``--overlap-grad-reduce`` over its distributed optimizer, ZeRO 1).
    Megatron-FSDP's ``--overlap-grad-reduce`` (sharding ``optim_grads`` / ``optim_grads_params``,
    ZeRO 2 / 3) and PyTorch FSDP overlap those per-micro-batch collectives with the compute:
    hieropt's ``overlap_sharded_comms``. A note, not a refusal as the mirror flags get
    (:func:`hieropt.workloads.llm.plan_rules.check_degrees`): ZeRO 2's ``overlap_param_gather``
    needs ``overlap_grad_reduce`` (Megatron-LM's rule), and co-design spaces cross
    ``overlap_grad_reduce`` with every ZeRO stage."""
    return (f"overlap_grad_reduce with zero_stage {zero_stage} changes nothing: ZeRO "
            f"{zero_stage} reduce-scatters the gradients every micro-batch, so there is no "
            "per-iteration gradient reduction to overlap with the last backward (Megatron-LM's "
            "overlap_grad_reduce over its distributed optimizer, ZeRO 1); the overlap of ZeRO "
            f"{zero_stage}'s per-micro-batch collectives (Megatron-FSDP's overlap_grad_reduce, "
            "PyTorch FSDP's) is overlap_sharded_comms: set overlap_sharded_comms = true and "
            "overlap_grad_reduce = false to model it")


def plan_caveats(p: LLMParams) -> tuple[str, ...]:
    """What the validation says of plan ``p``'s features it does not cover or predicts worst
    (:data:`ZERO3_CAVEAT`, :data:`MOE_CAVEAT`), and what common training software does not run
    (ZeRO 2 or 3 with pipeline parallelism: :func:`zero_pp_caveat`), in the order ZeRO-3, ZeRO
    with PP, experts, then the note on a peak below half the catalog's (:attr:`NPU.peak_note
    <hieropt.workloads.llm.NPU.peak_note>`) and on more NPUs than any cluster built
    (:func:`hieropt.units.cluster_size_note`), on ``overlap_grad_reduce`` with ZeRO 2/3, where it
    changes nothing (:func:`sharded_overlap_note`), and not modelled under interleaving
    (:func:`interleaved_overlap_note`), on interleaved chunks that do not divide the
    layers (:func:`~hieropt.workloads.llm.layout.unequal_chunks_note`), on values in a likely wrong
    unit (:func:`~hieropt.workloads.llm.plan_rules.slip_notes`), on the GPT-3 architecture
    defaults a file stating none of them takes
    (:func:`~hieropt.workloads.llm.plan_rules.defaults_note`), on a ``weight_bytes`` of 1 and on a
    delayed ``fp8_recipe`` outside FP8 training (no effect); empty for the features the measured
    runs cover (TP, PP, DP, CP, interleaving, recompute, ZeRO 1-2) in the combinations common
    software runs, on an NPU at its catalog peak."""
    out = []
    if p.plan.zero_stage == 3:
        out.append(ZERO3_CAVEAT)
    if p.plan.zero_stage >= 2 and p.plan.pp > 1:
        out.append(zero_pp_caveat(p.plan.zero_stage, p.plan.pp))
    if p.plan.ep > 1 or p.model.moe is not None:
        out.append(MOE_CAVEAT)
    if (note := p.npu.peak_note) is not None:
        out.append(note)
    if (p.plan.overlap_grad_reduce and p.plan.zero_stage >= 2
            and not p.plan.overlap_param_gather):
        out.append(sharded_overlap_note(p.plan.zero_stage))
    if p.plan.overlap_grad_reduce and p.plan.virtual_stages > 1:
        out.append(interleaved_overlap_note(p.plan.virtual_stages, p.plan.overlap_param_gather))
    if (note := unequal_chunks_note(p)) is not None:
        out.append(note)
    out += slip_notes(p.model, p.plan)
    if (note := defaults_note(p.model, p.plan)) is not None:
        out.append(note)
    if p.precision.weight_bytes == 1 and p.npu.number_format != "fp8":
        out.append(f"weight_bytes = 1 (FP8 weights) under {p.npu.number_format} training: the "
                   f"working weights and their all-gathers are {p.npu.number_format} elements; "
                   "give weight_bytes = 2 (or leave it out: the number format's default), or "
                   'number_format = "fp8"')
    if p.npu.fp8_recipe != "current" and p.npu.number_format != "fp8":
        out.append(f'fp8_recipe = "{p.npu.fp8_recipe}" has no effect under '
                   f"{p.npu.number_format} training (it chooses how Transformer Engine scales the "
                   'tensors it casts to FP8); give number_format = "fp8", or leave fp8_recipe out')
    if (note := cluster_size_note(p.plan.total_npus)) is not None:
        out.append(note)
    return tuple(out)


def training_of(p: LLMParams) -> Training:
    """The :class:`~hieropt.spec.Training` facts of plan ``p``: tokens B s, model and hardware FLOPs
    per iteration, NPUs, the NPU's peak (``peak_tflops`` x 1e12 FLOP/s), the interleaved
    schedule's micro-batch group if the plan sets one, its :func:`plan_caveats`, and the NPU's name,
    scale-up bandwidth and domain and NIC limit and where they come from (for the caveats on a
    design's bandwidths)."""
    model = model_flops_per_iteration(p)
    return Training(
        model=p.model.name,
        tokens_per_iteration=float(p.plan.global_batch_size * p.model.sequence_length),
        model_flops_per_iteration=float(model),
        hardware_flops_per_iteration=float(model + recompute_flops_per_iteration(p)),
        npus=p.plan.total_npus,
        peak_flops_per_npu=p.npu.peak_tflops * 1e12,
        microbatch_group=p.plan.microbatch_group_size,
        caveats=plan_caveats(p),
        npu=p.npu.name,
        scaleup_gbps=p.npu.scaleup_gbps,
        scaleup_npus=p.npu.scaleup_npus,
        nic_gbps=p.npu.nic_gbps,
        scaleup_source=_scaleup_source(p.npu),
        npu_catalog=p.npu.catalog_file,
        given_figures=p.npu.given_figures,
    )


def _scaleup_source(npu) -> str:
    """Where an NPU's ``scaleup_gbps`` comes from: its calibrated accelerator file (by name), the
    catalog (an ``accelerator`` named), or the model file."""
    if getattr(npu, "calibrated", None) is not None:
        return f"calibrated file {Path(npu.calibrated).name}"
    return "catalog" if npu.accelerator is not None else "model file"


def npu_figure_source(npu, field: str) -> str:
    """Where the figure ``field`` (``scaleup_npus``, ``nic_gbps``) of ``npu`` (an
    :class:`~hieropt.workloads.llm.NPU`) comes from, in the words of the design caveat and the NIC
    cap (:func:`hieropt.workloads.llm.links.figure_source`): its catalog entry's (the catalog
    file's path when the model file names its own), the model file's ``[params.npu]`` (in place
    of the catalog's), or the calibrated file's."""
    return figure_source(field, npu.name, _scaleup_source(npu), field in npu.given_figures,
                         npu.catalog_file)


__all__ = [
    "zero_pp_caveat",
    "attention_forward_flops",
    "ffn_forward_flops",
    "blocks_forward_flops",
    "model_flops_per_iteration",
    "recompute_flops_per_iteration",
    "training_of",
    "npu_figure_source",
    "plan_caveats",
    "ZERO3_CAVEAT",
    "sharded_overlap_note",
    "MOE_CAVEAT",
]
