"""The rules a training plan must meet against its model
(:class:`hieropt.workloads.llm.params.LLMParams` checks them): degrees multiply to the NPU count, at
least one layer per pipeline chunk (uneven ``stage_layers`` giving every chunk one but the first
stage's first and the last stage's last, which may hold only the embedding / the output layer),
context parallelism splitting the sequence, the global batch over DP x micro-batch, under the
interleaved schedule at least as many micro-batches as stages and its micro-batch group. Each
violation is a ``ValueError`` ``"<field>: <problem>; fix: <fix>"``."""

from __future__ import annotations

import math
from typing import Any

Architecture = Plan = Any
"""(:class:`hieropt.workloads.llm.params.Architecture` and ``Plan``, which import these rules.)"""

def divisors(n: int, limit: int = 128) -> list[int]:
    """The divisors of ``n`` up to ``limit`` (the values a fix may suggest), ascending."""
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]


def divisor_list(n: int) -> str:
    """:func:`divisors` of ``n`` as a fix names them: ``"1, 2, 4"``."""
    return ", ".join(map(str, divisors(n)))


def check_degrees(p: Plan) -> None:
    """plan.npus against the degrees' product; the interleaved schedule's chunks and stages; the
    overlap flags: ``overlap_sharded_comms`` needs ZeRO 2/3 and excludes ``overlap_grad_reduce``,
    ``overlap_tp_comms`` excludes it under 1F1B and needs sequence parallelism with tp > 1,
    ``overlap_param_gather`` needs ZeRO 1/2 and ``overlap_grad_reduce`` (:func:`check_overlap`)."""
    if p.npus is not None and p.total_npus != p.npus:
        names, values = ("tp x pp x dp", (p.tp, p.pp, p.dp)) if p.cp == 1 else \
            ("tp x cp x pp x dp", (p.tp, p.cp, p.pp, p.dp))
        rest = p.total_npus // p.dp  # (tp x cp x pp: dp = npus / rest when it divides)
        inner = names.removesuffix(" x dp")
        fix = (f"choose degrees whose product is {p.npus} (e.g. dp = {p.npus} / ({inner}) = "
               f"{p.npus // rest})" if p.npus % rest == 0 else
               f"{inner} = {rest} does not divide {p.npus}: plan a multiple of {rest} NPUs, or "
               f"choose degrees whose product is {p.npus}")
        raise ValueError(
            f"plan.npus: {names} = {' x '.join(map(str, values))} = {p.total_npus} is not "
            f"the {p.npus} NPUs; fix: {fix}"
        )
    if (p.schedule == "interleaved") != (p.virtual_stages > 1):
        raise ValueError(
            f"plan.virtual_stages: {p.virtual_stages} with schedule {p.schedule}; fix: the "
            "interleaved "
            "schedule needs virtual_stages >= 2 and 1f1b needs 1"
        )
    if p.schedule == "interleaved" and p.pp < 2:
        raise ValueError(
            "plan.schedule: the interleaved schedule needs pipeline stages; fix: set pp >= "
            "2 or use 1f1b"
        )
    if p.overlap_sharded_comms and p.zero_stage < 2:
        raise ValueError(
            f"plan.overlap_sharded_comms: with zero_stage {p.zero_stage} there are no "
            "per-micro-batch DP collectives to overlap (ZeRO 2/3's gradient reduce-scatters and "
            "parameter all-gathers), so it would change nothing; fix: set zero_stage = 2 or 3, "
            "or overlap_sharded_comms = false (overlap_grad_reduce overlaps the per-iteration DP "
            "collectives)"
        )
    if p.overlap_sharded_comms and p.overlap_grad_reduce and p.zero_stage >= 2:
        raise ValueError("plan.overlap_sharded_comms: not with overlap_grad_reduce (one overlap "
                         "of the DP collectives per plan); fix: set one of them to false")
    if p.overlap_tp_comms and p.overlap_grad_reduce and p.virtual_stages == 1:
        raise ValueError("plan.overlap_tp_comms: not with overlap_grad_reduce under the 1f1b "
                         "schedule (one overlap of the last backward per plan); fix: set one of "
                         "them to false")
    check_overlap(p)


def check_overlap(p: Plan) -> None:
    """Megatron-LM's rules on its overlap flags (``megatron/training/arguments.py``): the TP
    communication overlap only with sequence parallelism ("Tensor parallel communication/GEMM
    overlap can happen only when sequence parallelism is enabled"; with tp 1 there is no TP
    collective and the flag is free); the parameter all-gather overlap only with the distributed
    optimizer (ZeRO 1; hieropt's ZeRO 2 gathers the same way) and with ``overlap_grad_reduce``
    ("Must use --overlap-param-gather with --overlap-grad-reduce"). ZeRO 3's per-micro-batch
    gathers overlap with ``overlap_sharded_comms``."""
    if p.overlap_tp_comms and p.tp > 1 and not p.sequence_parallel:
        raise ValueError(
            f"plan.overlap_tp_comms: with tp {p.tp} it needs sequence_parallel (Megatron-LM: "
            "\"Tensor parallel communication/GEMM overlap can happen only when sequence "
            "parallelism is enabled\"; the TP all-reduces without it are never overlapped); fix: "
            "set sequence_parallel = true, or overlap_tp_comms = false")
    if p.overlap_param_gather and p.zero_stage not in (1, 2):
        fix = ("set overlap_sharded_comms = true instead (ZeRO 3 gathers the parameters every "
               "micro-batch)" if p.zero_stage == 3 else "set zero_stage = 1 (the distributed "
               "optimizer), or overlap_param_gather = false")
        raise ValueError(
            f"plan.overlap_param_gather: with zero_stage {p.zero_stage} there is no all-gather of "
            f"the updated parameters after the optimizer step to overlap; fix: {fix}")
    if p.overlap_param_gather and not p.overlap_grad_reduce:
        raise ValueError(
            "plan.overlap_param_gather: Megatron-LM overlaps the parameter all-gather only with "
            "overlap_grad_reduce; fix: set overlap_grad_reduce = true, or overlap_param_gather = "
            "false")


def check_recompute(p: Plan) -> None:
    """``recompute_layers`` only with ``full`` recompute (a rule of the plan alone)."""
    if p.recompute_layers is not None and p.recompute != "full":
        raise ValueError(
            f"recompute_layers: {p.recompute_layers} with recompute {p.recompute!r}: it "
            "counts the blocks per chunk that full recompute recomputes; fix: set recompute = "
            "\"full\", or leave recompute_layers out"
        )


def check_recompute_layers(m: Architecture, p: Plan) -> None:
    """``recompute_layers`` at most the model's blocks: more reads as a mistake (a count per stage
    or chunk above every block of the model). Between a chunk's blocks and the model's a chunk
    recomputes all of its blocks, as Megatron-LM's block method does (``layer_number <
    recompute_num_layers``), so one value serves every pipeline layout of a co-design space."""
    n = p.recompute_layers
    if n is not None and n > m.layers:
        raise ValueError(
            f"plan.recompute_layers: {n} is more than the model's {m.layers} blocks (it counts "
            f"the blocks recomputed per pipeline stage, per model chunk when interleaved); fix: "
            f"use 0 .. {m.layers}, or leave recompute_layers out to recompute every block"
        )


def check_pp(m: Architecture, p: Plan) -> None:
    """stage_layers (one count of at least v blocks per stage; with v > 1 at least v - 1 on the
    first and the last stage, whose first / last chunk may hold only the embedding / the output
    layer), or enough layers for the pp x v chunks."""
    v = p.virtual_stages
    if p.stage_layers is not None:
        ends = v - 1 if v > 1 else v  # (the first and the last stage)
        least = [ends if r in (0, p.pp - 1) else v for r in range(len(p.stage_layers))]
        if (
            len(p.stage_layers) != p.pp
            or sum(p.stage_layers) != m.layers
            or any(n < k for n, k in zip(p.stage_layers, least, strict=True))
        ):
            each = (
                "positive block counts"
                if v == 1
                else f"block counts of at least virtual_stages = {v} ({v - 1} on the first and "
                "the last stage)"
            )
            raise ValueError(
                f"plan.stage_layers: {list(p.stage_layers)} must give pp = {p.pp} {each} "
                "adding up to "
                f"the {m.layers} layers; fix: list one count per stage"
            )
        return
    if m.layers < p.pp * v:
        what = f"pp x virtual_stages = {p.pp} x {v}" if v > 1 else f"pp {p.pp}"
        raise ValueError(
            f"plan.pp: {what} chunks need at least as many layers, the model has "
            f"{m.layers}; fix: use "
            f"fewer stages or chunks"
        )


def check_cp(m: Architecture, p: Plan) -> None:
    """cp splits the sequence (x tp with sequence parallelism); dense models only."""
    if p.cp == 1:
        return
    split = p.cp * (p.tp if p.sequence_parallel else 1)
    if m.sequence_length % split:
        raise ValueError(
            f"plan.cp: sequence_length {m.sequence_length} is not divisible by cp {p.cp}"
            + (f" x tp {p.tp} (sequence parallelism)" if p.sequence_parallel else "")
            + "; fix: use a cp that divides the sequence length"
        )
    if m.moe is not None:
        raise ValueError(
            "plan.cp: context parallelism is modelled for dense models only; fix: set cp = 1"
        )


def check_batch(m: Architecture, p: Plan) -> None:
    """The global batch over dp x micro-batch; under the interleaved schedule m >= pp (a multiple
    of pp with the default micro-batch group: :func:`check_group`). 1F1B takes any m >= 1: with
    m < pp Megatron-LM's non-interleaved schedule runs min(pp - r - 1, m) warm-up forwards on
    stage r (``forward_backward_pipelining_without_interleaving``), which the schedule's graph
    states exactly (:mod:`hieropt.model.schedule_dag`) and the closed composition as for m >= pp
    (sum_r t_r + (m - 1) max_r t_r: exact when the last stage is the slowest); such a plan idles
    most of its pipeline (the bubble is (pp - 1) / (m + pp - 1) of the iteration with equal
    stages), which the time says."""
    per = p.dp * p.micro_batch_size
    if p.global_batch_size % per:
        raise ValueError(
            f"plan.global_batch_size: {p.global_batch_size} sequences are not a multiple of dp x "
            f"micro_batch_size = {p.dp} x {p.micro_batch_size} = {per}; fix: use a "
            "micro_batch_size "
            f"or dp dividing the global batch"
        )
    mb = p.global_batch_size // per
    if mb < p.pp and p.schedule == "interleaved":
        raise ValueError(
            f"plan.global_batch_size: {mb} micro-batches per iteration are fewer than the "
            f"{p.pp} pipeline stages (Megatron-LM's interleaved schedule needs m >= pp; 1f1b "
            f"runs them); fix: lower pp or micro_batch_size, raise the global batch to >= "
            f"{p.pp * per}, or use the 1f1b schedule"
        )
    if p.microbatch_group_size is not None and p.schedule != "interleaved":
        raise ValueError(
            f"plan.microbatch_group_size: {p.microbatch_group_size} with schedule {p.schedule}; "
            "fix: leave it out (it is the interleaved schedule's micro-batch group)"
        )
    if p.schedule == "interleaved":
        check_group(p, mb)


def check_group(p: Plan, mb: int) -> None:
    """The interleaved schedule's micro-batch group N (Megatron-LM's bounds): pp <= N <= m and the
    last group, m mod N, empty or at least pp (otherwise the schedule stalls on its dependencies);
    with the default N = pp: m a multiple of pp."""
    n = p.group_size
    if p.microbatch_group_size is None and mb % p.pp:
        raise ValueError(
            "plan.global_batch_size: the interleaved schedule needs the micro-batch count "
            f"({mb}) to be "
            f"a multiple of pp {p.pp} (Megatron-LM); fix: choose the batch, dp or "
            "micro_batch_size so, or set microbatch_group_size"
        )
    if not p.pp <= n <= mb or 0 < mb % n < p.pp:
        raise ValueError(
            f"plan.microbatch_group_size: {n} with pp {p.pp} and {mb} micro-batches; the "
            "interleaved schedule runs without dependency stalls only for pp <= N <= m with m mod "
            f"N = 0 or >= pp (Megatron-LM); fix: use N = {p.pp} or a divisor of {mb} of at least "
            f"{p.pp}"
        )


def check_moe(m: Architecture, p: Plan) -> None:
    """Expert parallelism only for an MoE model; ep divides the experts and dp (the expert-parallel
    group lies inside the data-parallel group)."""
    if m.moe is None:
        if p.ep > 1:
            raise ValueError(
                f"plan.ep: expert parallelism ({p.ep}) needs an MoE model; fix: set ep = 1 or add "
                "[model.moe]"
            )
        return
    if m.moe.experts % p.ep:
        raise ValueError(
            f"plan.ep: {p.ep} does not divide the {m.moe.experts} experts; fix: use one of "
            f"{divisor_list(m.moe.experts)}"
        )
    if p.dp % p.ep:
        raise ValueError(
            f"plan.ep: {p.ep} does not divide dp {p.dp} (the expert-parallel group lies inside the "
            "data-parallel group); fix: use an ep among "
            f"{divisor_list(math.gcd(p.dp, m.moe.experts))}"
        )


def algorithm_table_value(v: Any, groups: tuple[str, ...]) -> Any:
    """A plan's ``collective_algorithms`` that is not a table, unchanged (pydantic checks it),
    unless it is one word (``nccl_ring``): refused with the form it takes, a table of group =
    algorithm, the ``groups`` (:data:`hieropt.workloads.llm.params.PLAN_GROUPS`) and the
    algorithms (:data:`hieropt.names.GROUP_ALGORITHMS`).

    Raises:
        ValueError: ``"collective_algorithms: problem; fix: fix"`` for one word.
    """
    from ...names import GROUP_ALGORITHMS

    if not isinstance(v, str):
        return v
    algo = v if v in GROUP_ALGORITHMS else "nccl_ring"
    raise ValueError(
        f"collective_algorithms: {v!r} is one word, not a table of group = algorithm; fix: "
        f'write a table, e.g. {{tp = "{algo}", dp = "{algo}"}} (a group not named runs '
        f"sequential); groups: {', '.join(groups)}; algorithms: {', '.join(GROUP_ALGORITHMS)}"
    )


__all__ = ["algorithm_table_value", "divisors", "divisor_list", "check_recompute_layers",
           "check_degrees", "check_overlap", "check_recompute", "check_pp", "check_cp", "check_moe",
           "check_batch", "check_group"]


SHORTEST_SEQUENCE = 128
"""Tokens: a sequence shorter than this in a model at least :data:`WIDE` wide gets a note (8 for
8,192: thousands typed as K). GPT-2 trained on 1,024, Llama 3 on 8,192."""
WIDE = 1024
"""Hidden size from which a model is a real one (the tests' tiny models are narrower)."""
MOST_TOKENS = 1e8
"""Tokens per iteration above which the global batch gets a note: Llama 3 405B's largest was 16M
tokens (Llama Team 2024, arXiv 2407.21783, §3.4.1), DeepSeek-V3's 15,360 x 4,096 = 63M."""
MOST_LAYERS = 512
"""Blocks above which the layer count gets a note: the largest dense models have 96-126."""


def slip_notes(m, pl) -> list[str]:
    """Notes on likely wrong-unit values of architecture ``m`` and plan ``pl`` (the plan still
    runs): a sequence below :data:`SHORTEST_SEQUENCE` tokens in a model of :data:`WIDE` or more,
    more than :data:`MOST_TOKENS` tokens per iteration (tokens typed as sequences), an FFN
    narrower than the hidden size (the two swapped; not in a model whose every FFN is MoE), more
    than :data:`MOST_LAYERS` blocks."""
    out = []
    if m.sequence_length < SHORTEST_SEQUENCE and m.hidden_size >= WIDE:
        out.append(f"sequence_length = {m.sequence_length} tokens is short for a model of hidden "
                   f"size {m.hidden_size:,}: thousands typed as K (8 for 8,192)? sequence_length "
                   "is in tokens")
    tokens = pl.global_batch_size * m.sequence_length
    if tokens > MOST_TOKENS:
        out.append(f"global_batch_size = {pl.global_batch_size:,} sequences of "
                   f"{m.sequence_length:,} tokens is {tokens:.3g} tokens per iteration, more "
                   f"than {MOST_TOKENS:.0e}: a batch in tokens typed as sequences? "
                   f"global_batch_size is in sequences ({pl.global_batch_size:,} tokens = "
                   f"{pl.global_batch_size / m.sequence_length:,.0f} sequences)")
    every_moe = m.moe is not None and m.moe.first_dense_layers == 0 and \
        m.moe.moe_layer_interval == 1  # (then ffn_size is read by no layer)
    if m.ffn_size < m.hidden_size and not every_moe:
        out.append(f"ffn_size = {m.ffn_size:,} is below hidden_size = {m.hidden_size:,} (an "
                   "FFN is 2.5-4x wider than the model): the two swapped?")
    if m.layers > MOST_LAYERS:
        out.append(f"layers = {m.layers:,} blocks, more than {MOST_LAYERS}: a width typed as the "
                   "layer count? layers counts transformer blocks (Llama 3 405B: 126)")
    return out


GPT_DEFAULTS = (("gated_ffn", "false"), ("norm", '"layernorm"'), ("biases", "true"),
                ("dropout", "true"), ("position_embedding", '"learned"'),
                ("tied_embeddings", "true"))
"""The architecture fields of ``[params.model]`` and their defaults (GPT-3's), as a file writes
them."""


def defaults_note(m, pl) -> str | None:
    """The note listing the architecture defaults architecture ``m`` took when its file states
    none of :data:`GPT_DEFAULTS` (``model_fields_set``: the fields given), with the plan's
    ``flash_attention`` default when ``pl`` does not state it either; None when it states any
    (the defaults are GPT-3's; a Llama-shaped file with only the required fields would silently
    be timed as a GPT)."""
    if {k for k, _ in GPT_DEFAULTS} & m.model_fields_set:
        return None
    taken = [f"{k} = {v}" for k, v in GPT_DEFAULTS]
    if "flash_attention" not in pl.model_fields_set:
        taken.append("flash_attention = false (plan)")
    return ("the model file states none of the architecture fields and takes GPT-3's defaults: "
            f"{', '.join(taken)}; a Llama-style model gives gated_ffn = true, norm = \"rmsnorm\", "
            "biases = false, dropout = false, position_embedding = \"rotary\", tied_embeddings = "
            "false (and [params.plan] flash_attention = true); state them to silence this note")

