"""The training plans of a co-design space: every combination of the plan choices for a model on N
NPUs, the ones that are valid for the model, and of those the ones that fit in memory.

A combination fixes tp, pp (dp = N / (tp cp pp), cp the model file's), ep, ZeRO stage, recompute,
sequence parallelism, schedule with its virtual stages, and micro-batch size; everything else
(global batch, stage_layers, vocabulary padding) comes from the model file's plan.
It is **invalid** when :class:`hieropt.workloads.llm.LLMParams` rejects it
(degrees that do not divide N, heads or layers not divisible, experts not divisible by ep,
an interleaved plan with fewer micro-batches than
stages, ...), its 1F1B pipeline has fewer micro-batches than stages (valid, but not searched:
:func:`idle_pipeline_reason`) or its pipeline
needs a custom layout the space does not allow (:func:`custom_layout_reason`), and **too big**
when :func:`hieropt.model.memory.memory` says its fullest stage exceeds the HBM less the reserve.
Both are counted by reason; the fitting plans go on to the network search.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import ValidationError

from ...model.memory import MemoryReport, memory
from ...workloads.llm.layout import stage_layer_counts
from ...workloads.llm.params import LLMParams
from ...workloads.llm.space import PlanChoices
from ...workloads.llm.step import Step, build_step


@dataclass(frozen=True)
class PlanCandidate:
    """A valid plan that fits: its parameters and memory report, and a stable id; :attr:`step` is
    built on first use (a search needs only a stage's sums: ``build_step(params, names=False)``)."""

    id: str
    params: LLMParams
    memory: MemoryReport

    @cached_property
    def step(self) -> Step:
        """``build_step(params)``: every stage's layers."""
        return build_step(self.params)


@dataclass(frozen=True)
class PlanEnumeration:
    """Every combination of the choices, classified.

    Attributes:
        fitting: valid plans that fit in memory, in enumeration order.
        combinations: combinations enumerated.
        invalid: reason -> count of combinations the model rejects (first clause of the message).
        too_big: ids and memory reports of valid plans that do not fit.
    """

    fitting: tuple[PlanCandidate, ...]
    combinations: int
    invalid: dict[str, int] = field(default_factory=dict)
    too_big: tuple[tuple[str, MemoryReport], ...] = ()

    @classmethod
    def merged(cls, parts: Sequence[PlanEnumeration]) -> PlanEnumeration:
        """One enumeration of several (one per cluster size): their plans, counts and reasons
        together."""
        invalid: Counter[str] = Counter()
        for e in parts:
            invalid.update(e.invalid)
        return cls(
            tuple(c for e in parts for c in e.fitting),
            sum(e.combinations for e in parts),
            dict(invalid),
            tuple(t for e in parts for t in e.too_big),
        )

    def too_big_plans(self) -> list[dict[str, Any]]:
        """The valid plans that do not fit, the nearest miss first (least GB over, then id): per
        plan ``plan`` (its id), ``stage`` (the fullest pipeline stage, 0 first), ``memory_gb`` (that
        stage's need per NPU), ``available_gb`` (HBM less reserve) and ``over_gb`` (need less
        available), all in GB (1e9 bytes) from :func:`hieropt.model.memory.memory`."""
        return [
            {"plan": pid, "stage": m.peak.stage, "memory_gb": m.peak.total_bytes / 1e9,
             "available_gb": m.available_bytes / 1e9, "over_gb": m.over_bytes / 1e9}
            for pid, m in sorted(self.too_big, key=lambda t: (t[1].over_bytes, t[0]))
        ]

    @property
    def smallest_need_bytes(self) -> float | None:
        """The least per-NPU memory any valid plan needs (None without valid plans)."""
        needs = [m.peak.total_bytes for _, m in self.too_big] + [
            c.memory.peak.total_bytes for c in self.fitting
        ]
        return min(needs) if needs else None


def plan_id(p: LLMParams) -> str:
    """e.g. ``tp8 cp1 pp8 dp64 ep1 z1 sel sp v1 mb1``: every degree, tp x cp x pp x dp = the NPUs,
    (``full5``: full recompute of 5 blocks per chunk, ``recompute_layers``; ``ovl``: overlapped
    gradient reduction)."""
    pl = p.plan
    re = {"none": "nore", "selective": "sel", "full": "full"}[pl.recompute]
    re += "" if pl.recompute_layers is None else str(pl.recompute_layers)
    return (
        f"tp{pl.tp} cp{pl.cp} pp{pl.pp} dp{pl.dp} ep{pl.ep} z{pl.zero_stage} {re} "
        f"{'sp' if pl.sequence_parallel else 'nosp'}"
        f" v{pl.virtual_stages} mb{pl.micro_batch_size}"
        + (" ovl" if pl.overlap_grad_reduce else "")
    )


def _reason(e: ValidationError) -> str:
    """The first error of an invalid plan: 'field: why' before its fix, numbers kept ("plan.pp: 3
    does not divide the 96 layers"); plans invalid for the same reason with the same numbers count
    together."""
    msg = str(e.errors()[0]["msg"]).removeprefix("Value error, ")
    field_, _, rest = msg.partition(": ")
    return f"{field_}: {rest.split('; fix')[0].strip()}" if rest else msg


def balanced_stage_layers(layers: int, pp: int) -> tuple[int, ...] | None:
    """Layers per pipeline stage when ``pp`` does not divide ``layers``: ceil(L / pp) each, less one
    on the first and last stages, then the second and second-to-last, ... until they add up to L
    (Llama 3 405B's 7, 8, ..., 8, 7 for 126 layers on 16 stages: the end stages also hold the
    embedding and the output layer). None when pp divides L (even stages) or a stage would get no
    layer."""
    if pp <= 1 or layers % pp == 0 or layers < 2 * pp:
        return None
    per = -(-layers // pp)
    out = [per] * pp
    ends = [i for k in range((pp + 1) // 2) for i in dict.fromkeys((k, pp - 1 - k))]
    for i in ends[:per * pp - layers]:
        out[i] -= 1
    return tuple(out)


def plan_params(base: LLMParams, npus: int, choice: dict[str, Any]) -> LLMParams:
    """The plan of one combination of choices: ``base`` with the fields of ``choice`` (the
    :class:`PlanChoices` fields), dp = N / (tp cp pp) (cp: the base's), the schedule
    ``interleaved`` for v > 1 (else ``1f1b``), the base's ``overlap_sharded_comms`` only for a
    ZeRO 2/3 choice (ZeRO 0/1 have no per-micro-batch DP collectives to overlap), the base's
    ``overlap_param_gather`` only for a ZeRO 1/2 choice with ``overlap_grad_reduce`` (Megatron-LM
    overlaps the all-gather after the optimizer step only with both), the base's
    ``recompute_layers`` only for a ``full`` recompute choice (it counts the blocks full recompute
    recomputes per chunk; a plan whose largest chunk holds fewer is invalid), and the base's
    stage_layers kept for the base's own pp and v (Llama 3 405B's 7, 8, ..., 8, 7 on 16 stages of
    8 chunks), replaced when pp or v differ from it: by :func:`balanced_stage_layers` for a 1f1b
    plan whose pp does not divide the layers, else none (even stages).

    Raises:
        pydantic.ValidationError: the model rejects the plan (module docstring).
    """
    upd = dict(choice)
    cp = upd.get("cp", base.plan.cp)  # (context parallelism: the model file's, fixed)
    upd["dp"] = npus // (upd["tp"] * cp * upd["pp"])
    upd["npus"] = npus
    upd.setdefault("schedule", "interleaved" if upd["virtual_stages"] > 1 else "1f1b")
    plan = base.plan.model_dump() | upd
    if plan["zero_stage"] < 2:  # (the base's own-stream ZeRO 2/3 collectives: none to overlap)
        plan["overlap_sharded_comms"] = False
    if plan["zero_stage"] not in (1, 2) or not plan["overlap_grad_reduce"]:
        plan["overlap_param_gather"] = False  # (the base's: no gather after the step to overlap)
    if plan["recompute"] != "full":  # (the base's recompute_layers: for its full recompute only)
        plan["recompute_layers"] = None
    same = (upd["pp"], upd["virtual_stages"]) == (base.plan.pp, base.plan.virtual_stages)
    if not same and (upd["virtual_stages"] > 1 or upd["pp"] != base.plan.pp):
        plan["stage_layers"] = None
        if upd["virtual_stages"] == 1:
            plan["stage_layers"] = balanced_stage_layers(base.model.layers, upd["pp"])
    return LLMParams(
        name=base.name, model=base.model, plan=plan, npu=base.npu, precision=base.precision
    )


def idle_pipeline_reason(p: LLMParams) -> str | None:
    """Why a co-design space does not search plan ``p``: a 1F1B pipeline with fewer micro-batches
    m than its pp stages, or None. Such a plan is valid (Megatron-LM runs it, and hieropt times it
    from a model file: :func:`hieropt.workloads.llm.plan_rules.check_batch`), but its pipeline
    idles (pp - 1) / (m + pp - 1) of the iteration with equal stages, at least half; a search by
    time alone would trade that for a few more NPUs (the Llama 3 405B space's 32,768 H100s with pp
    2 and m = 1: 0.01 % faster than 16,384 without a pipeline, on a network ten times as dear), so
    the spaces leave such plans out, counted invalid with this reason."""
    pl = p.plan
    m = pl.microbatches
    if pl.virtual_stages > 1 or m >= pl.pp:
        return None
    idle = (pl.pp - 1) / (m + pl.pp - 1)
    return (f"plan.global_batch_size: {m} micro-batches per iteration are fewer than the {pl.pp} "
            f"pipeline stages: not searched (the pipeline would idle {idle:.0%} of the iteration; "
            "a model file with the plan times it)")


def custom_layout_reason(p: LLMParams) -> str | None:
    """Why plan ``p``'s pipeline needs a custom layout, or None when the standard flags state it.

    Megatron-LM splits an interleaved pipeline's L layers into pp x v chunks of L / (pp v) layers
    (``--num-layers-per-virtual-pipeline-stage``, NeMo's ``virtual_pipeline_model_parallel_size``),
    and a 1F1B pipeline into equal stages but for the first and the last
    (``--decoder-first-pipeline-num-layers``, ``--decoder-last-pipeline-num-layers``). Any other
    split (chunks of 3, 3 and 2 layers; three or more stage sizes) needs a layout written per chunk
    (Megatron-core's ``--pipeline-model-parallel-layout``), which not every framework states.
    """
    pl, L = p.plan, p.model.layers
    if pl.pp == 1:
        return None
    if pl.virtual_stages > 1:
        chunks = pl.pp * pl.virtual_stages
        if L % chunks == 0:
            return None
        return (f"plan.virtual_stages: pp {pl.pp} x v {pl.virtual_stages} = {chunks} chunks of "
                f"unequal layer counts ({L} layers): a custom pipeline layout "
                "(custom_layouts = true searches it)")
    middle = set(stage_layer_counts(p)[1:-1])
    if len(middle) <= 1:
        return None
    return (f"plan.pp: {pl.pp} stages of {len(middle)} layer counts besides the first and the "
            f"last ({L} layers): a custom pipeline layout (custom_layouts = true searches it)")


def enumerate_plans(base: LLMParams, npus: int, choices: PlanChoices,
                    custom_layouts: bool = False) -> PlanEnumeration:
    """Classify every combination of ``choices`` for ``base``'s model on ``npus`` NPUs (module
    docstring).

    Args:
        base: the model, NPU, precision and the plan fields the choices do not set (global batch,
            ...).
        npus: N; dp = N / (tp cp pp) (combinations where tp cp pp does not divide N are invalid).
        choices: the values of the varied plan fields.
        custom_layouts: keep plans that need a custom pipeline layout
            (:func:`custom_layout_reason`); False counts them invalid, with the reason.

    Returns:
        a :class:`PlanEnumeration`.
    """
    fitting: list[PlanCandidate] = []
    invalid: Counter[str] = Counter()
    too_big: list[tuple[str, MemoryReport]] = []
    n = 0
    keys: Sequence[str] = tuple(k for k in PlanChoices.model_fields if k != "schedule")
    for values in itertools.product(*(getattr(choices, k) for k in keys)):
        upd = dict(zip(keys, values, strict=True))
        # (the schedule follows from v: a listed schedule keeps its plans)
        if not choices.consistent(upd):
            continue
        n += 1
        cp = base.plan.cp  # (the model file's: dp = N / (tp cp pp))
        if npus % (deg := upd["tp"] * cp * upd["pp"]):
            with_cp = f" x cp {cp}" if cp > 1 else ""
            invalid[f"plan.npus: tp {upd['tp']}{with_cp} x pp {upd['pp']} = {deg} does not divide "
                    f"the {npus} NPUs"] += 1
            continue
        try:
            p = plan_params(base, npus, upd)
        except ValidationError as e:
            invalid[_reason(e)] += 1
            continue
        if (why := idle_pipeline_reason(p)) is not None:
            invalid[why] += 1
            continue
        if not custom_layouts and (why := custom_layout_reason(p)) is not None:
            invalid[why] += 1
            continue
        rep = memory(p)  # (from the stages' counted layers: a plan too big needs no step)
        pid = plan_id(p)
        if rep.fits:
            fitting.append(PlanCandidate(pid, p, rep))
        else:
            too_big.append((pid, rep))
    return PlanEnumeration(tuple(fitting), n, dict(invalid), tuple(too_big))


__all__ = ["PlanCandidate", "PlanEnumeration", "enumerate_plans", "plan_id", "plan_params",
           "balanced_stage_layers", "custom_layout_reason"]
