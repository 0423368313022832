"""An LLM stage as a hieropt :class:`~hieropt.spec.Workload`: layers x (forward, input-gradient,
weight-gradient) phases, each with its compute (ns), one collective (bytes) and the parallel group
it runs on; the plan goes into the ASTRA-sim header (SimAI's dialect) and into the
:class:`~hieropt.spec.StepSchedule` of loop ``step``. A plan (:func:`lower_plan`, the generator's
workload) is its stage with the most compute, with every other stage whose layers differ as
:attr:`~hieropt.spec.Workload.more_stages` (the first stage has the embedding and sends forward
only, the last the output layer and sends backward only, a middle stage sends both ways; uneven
``stage_layers`` and interleaved chunks differ further), and the pipeline positions each stands for
(:attr:`~hieropt.spec.Workload.pipeline_stages`), so that loop ``step`` composes the iteration from
every stage's own forwards and backwards at every bandwidth (:mod:`hieropt.model.pipeline`).

Rules (``build_step`` documents what each collective is):

- each layer of the stage (:class:`~hieropt.workloads.llm.Op`) becomes a
  :class:`~hieropt.spec.Layer` of the same name: forward compute = forward FLOPs, input-gradient
  compute = input-gradient + recompute FLOPs, weight-gradient compute = weight-gradient FLOPs, each
  over the NPU's peak x efficiency (the roofline model: the layer's ``compute_ns``); ``update_ns``
  is the optimizer step;
- a phase holds one collective, with :attr:`~hieropt.spec.Phase.group` = its group (``tp``, ``pp``,
  ``dp``, ``ep``, ``edp``); a layer's further collectives of a phase go, in order, to compute-free
  layers named ``"<layer>+1"``, ``"<layer>+2"``, ... right after it;
- pipeline sends are ``P2P`` collectives of group ``pp`` (forward: activation to the next stage;
  input gradient: its gradient to the previous one; weight gradient: the tied-embedding exchange
  once per iteration);
- per-micro-batch collectives sit in the forward and input-gradient phases, per-iteration ones in
  the weight-gradient phase: the convention of loops ``step`` and ``pipeline``.

Header: ``HYBRID_TRANSFORMER model_parallel_NPU_group: tp`` with ``pp``, ``vpp`` (v > 1), ``ep`` (>
1), ``ga`` (the micro-batch count m) and ``all_gpus`` (N); an instance checks its mapping's named
groups against it.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ...cache import Same, current
from ...spec import Collective, Layer, LayerTable, Phase, StepSchedule, Workload, WorkloadHeader
from .comms import own_stream_groups
from .flops import training_of
from .layout import chunk_share
from .params import PLAN_GROUPS, LLMParams
from .step import STEP_PHASES, Op, Step, build_step

POLICY = "HYBRID_TRANSFORMER"
"""ASTRA-sim header policy written into the lowered workloads (``model_parallel_NPU_group`` =
tp)."""


def _phase(compute_ns: float, comm) -> Phase:
    if comm is None:
        return Phase(compute_ns=compute_ns, collective=Collective.NONE, size_bytes=0.0)
    return Phase(
        compute_ns=compute_ns,
        collective=Collective(comm.kind),
        size_bytes=comm.size_bytes,
        group=comm.group,
    )


def _rows(op: Op, rate: float) -> list[tuple[str, tuple[float, float, float], list, float]]:
    """The layers of ``op``: (name, compute ns per phase, collective per phase or None, optimizer
    ns) each."""
    by_phase = defaultdict(list)
    for c in op.comms:
        by_phase[c.phase].append(c)
    compute = op.compute_ns or (op.flops[0] / rate, (op.flops[1] + op.recompute_flops) / rate,
                                op.flops[2] / rate)
    rows = max([1] + [len(v) for v in by_phase.values()])
    return [(op.name if k == 0 else f"{op.name}+{k}", compute if k == 0 else (0.0, 0.0, 0.0),
             [by_phase[ph][k] if k < len(by_phase[ph]) else None for ph in STEP_PHASES],
             op.update_ns if k == 0 else 0.0) for k in range(rows)]


def _layers(op: Op, rate: float) -> list[Layer]:
    return [
        Layer(
            name=name,
            forward=_phase(c[0], comms[0]),
            input_grad=_phase(c[1], comms[1]),
            weight_grad=_phase(c[2], comms[2]),
            update_ns=u,
        )
        for name, c, comms, u in _rows(op, rate)
    ]


_KIND = {k.value: i for i, k in enumerate(LayerTable.KINDS)}


def _table(ops, rate: float) -> LayerTable:
    """The layers of ``ops`` as columns (:class:`~hieropt.spec.LayerTable`): the values of
    :func:`_layers`, without a model object per layer."""
    rows = [row for op in ops for row in _rows(op, rate)]
    comms = [r[2] for r in rows]
    return LayerTable(
        [r[0] for r in rows],
        [r[1] for r in rows],
        [[0.0 if c is None else c.size_bytes for c in cs] for cs in comms],
        [[0 if c is None else _KIND[c.kind] for c in cs] for cs in comms],
        update_ns=[r[3] for r in rows],
        groups=np.array(
            [[None if c is None else c.group for c in cs] for cs in comms], dtype=object
        ),
    )


def bottleneck_stage(step: Step) -> int:
    """The stage with the most compute per micro-batch (forward + backward), the first of equals
    (the last few steps' are kept: a co-design search asks for it for the time bound and for the
    communication volume). It is the first stage of a plan's workload (:func:`lower_plan`), not
    necessarily the slowest: a stage with less compute but more communication (the first stage's
    embedding collectives, a middle stage's two pipeline sends and one more block's tensor-parallel
    collectives against the last stage's output layer) is slower at low bandwidth, which is why the
    workload carries every distinct stage."""
    def build() -> int:
        totals = [sum(step.compute_ns(r)) for r in range(len(step.stages))]
        return max(range(len(totals)), key=lambda r: (totals[r], -r))

    return current().memo("bottleneck_stage", Same(step), build, 4)


def stage_key(step: Step, stage: int) -> tuple:
    """What the lowered workload of ``stage`` is made of, without names: per layer its kind, FLOPs,
    recompute, optimizer time and collectives (group, kind, bytes, phase). Stages with equal keys
    lower to workloads of equal values (the middle stages of an evenly split plan), so their times
    are equal at every bandwidth."""
    return tuple(
        (
            op.kind,
            op.flops,
            op.recompute_flops,
            op.update_ns,
            tuple((c.group, c.kind, c.size_bytes, c.phase) for c in op.comms),
        )
        for op in step.stages[stage].ops
    )


def distinct_stages(step: Step) -> tuple[int, ...]:
    """The stages whose lowered workloads differ (:func:`stage_key`), :func:`bottleneck_stage` first
    and then the others in stage order, each the first of its equals: the stages whose maximum is
    the iteration time. One stage for pp = 1; three for an evenly split plan (the first, a middle
    and the last stage)."""
    first = bottleneck_stage(step)
    seen = {stage_key(step, first)}
    out = [first]
    for r in range(len(step.stages)):
        key = stage_key(step, r)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return tuple(out)


def stage_members(step: Step) -> tuple[tuple[int, ...], ...]:
    """For each stage of :func:`distinct_stages` (in its order), every stage whose lowered workload
    equals it (:func:`stage_key`): :attr:`hieropt.spec.Workload.pipeline_stages` of the plan's
    workload."""
    reps = distinct_stages(step)
    index = {stage_key(step, r): i for i, r in enumerate(reps)}
    out: list[list[int]] = [[] for _ in reps]
    for r in range(len(step.stages)):
        out[index[stage_key(step, r)]].append(r)
    return tuple(tuple(m) for m in out)


def header(p: LLMParams, layers: int) -> WorkloadHeader:
    """The ASTRA-sim header (SimAI's dialect) stating the plan of ``p`` for a workload of ``layers``
    layers."""
    pl = p.plan
    return WorkloadHeader(
        policy=POLICY,
        model_parallel_npu_group=pl.tp,
        pp=pl.pp,
        ga=pl.microbatches,
        all_gpus=pl.total_npus,
        ep=pl.ep if pl.ep > 1 else None,
        vpp=pl.virtual_stages if pl.virtual_stages > 1 else None,
        declared_layers=layers,
    )


def lower_stage(step: Step, stage: int | None = None) -> Workload:
    """Stage ``stage`` (default: :func:`bottleneck_stage`) of ``step`` as a hieropt workload for one
    micro-batch (module docstring); its ``group_npus`` states the plan's dp and edp degrees (of the
    groups its collectives run on).

    Raises:
        IndexError: no such stage.
    """
    r = bottleneck_stage(step) if stage is None else stage
    rate = step.params.npu.flops_per_ns
    layers = [layer for op in step.stages[r].ops for layer in _layers(op, rate)]
    name = step.params.workload_name + (f"-stage{r}" if step.params.plan.pp > 1 else "")
    used = {
        ph.group for layer in layers for ph in (layer.forward, layer.input_grad, layer.weight_grad)
    }
    return Workload(
        name=name,
        layers=tuple(layers),
        header=header(step.params, len(layers)),
        group_npus=_group_npus(step.params, used),
        group_algorithms=group_algorithms(step.params),
        training=training_of(step.params),
    )


def group_algorithms(p: LLMParams) -> tuple[tuple[str, str], ...]:
    """Every group of plan ``p`` with the algorithm that runs its collectives
    (:meth:`Plan.algorithm`), for :attr:`hieropt.spec.Workload.group_algorithms`."""
    return tuple((g, p.plan.algorithm(g)) for g in PLAN_GROUPS)


def _group_npus(p: LLMParams, used: set) -> tuple[tuple[str, str, int], ...]:
    pl = p.plan
    # (tp, pp, ep: the header's)
    degrees = (("dp", pl.dp), ("edp", pl.edp), ("cp", pl.cp), ("dpc", pl.dpc))
    return tuple((g, g, n) for g, n in degrees if g in used)


def lower_plan(step: Step) -> Workload:
    """The plan of ``step`` as a hieropt workload: :func:`bottleneck_stage` lowered
    (:func:`lower_stage`), with the other :func:`distinct_stages` as its
    :attr:`~hieropt.spec.Workload.more_stages` (none for pp = 1; their layers, those of
    :func:`lower_stage`, held as columns) and the pipeline positions of each, so that loop ``step``
    composes the plan's stages by its schedule (:mod:`hieropt.model.pipeline`)."""
    first, *rest = distinct_stages(step)
    w = lower_stage(step, first)
    if not rest:
        return w
    rate, name = step.params.npu.flops_per_ns, step.params.workload_name
    more = []
    for r in rest:  # (as columns: the same layers as lower_stage's)
        table = _table(step.stages[r].ops, rate)
        more.append(
            Workload(
                name=f"{name}-stage{r}",
                layers=table,
                header=header(step.params, len(table)),
                group_npus=_group_npus(step.params, set(table.groups.ravel().tolist())),
                group_algorithms=w.group_algorithms,
                training=w.training,
            )
        )
    return Workload(
        name=w.name,
        layers=w.layers,
        header=w.header,
        group_npus=w.group_npus,
        more_stages=tuple(more),
        group_algorithms=w.group_algorithms,
        pipeline_stages=stage_members(step),
        training=w.training,
    )


STAGE_WORKLOADS = 256
"""Lowered stages :func:`stage_workload` keeps in the active cache (about 130 kB each for a
1T-parameter model's stage)."""


def stage_workload(p: LLMParams, stage: int | None = None) -> Workload:
    """``lower_stage(build_step(p), stage)``, or for ``stage = None`` the whole plan
    (:func:`lower_plan`: every distinct stage), kept in the active cache (:mod:`hieropt.cache`) for
    the last :data:`STAGE_WORKLOADS` (plan, stage) pairs: a co-design search places each plan on
    every shape of its space (178 candidates per plan in ``spaces/codesign-1t-4096.toml``), and the
    workload depends on the plan only. The result is shared, frozen like every spec model (its
    derived tables are computed once too).

    Raises:
        IndexError: no such stage.
    """
    return current().memo("stage_workload", (p, stage), lambda: _lowered(p, stage), STAGE_WORKLOADS)


def _lowered(p: LLMParams, stage: int | None) -> Workload:
    step = build_step(p)
    return lower_plan(step) if stage is None else lower_stage(step, stage)


def schedule(p: LLMParams) -> StepSchedule:
    """The :class:`~hieropt.spec.StepSchedule` of plan ``p``: m micro-batches, p stages, v chunks,
    DP overlap and parameter-gather overlap (one frozen object per (m, p, v, overlaps) within a
    call, shared), and the groups
    whose per-micro-batch collectives run on their own stream
    (:func:`~hieropt.workloads.llm.comms.own_stream_groups`)."""
    pl = p.plan
    own = own_stream_groups(pl)
    share = chunk_share(p)
    if own:
        return StepSchedule(microbatches=pl.microbatches, stages=pl.pp,
                            virtual_stages=pl.virtual_stages, chunk_share=share,
                            microbatch_group=pl.microbatch_group_size, overlap_groups=own)
    key = (pl.microbatches, pl.pp, pl.virtual_stages, pl.overlap_grad_reduce,
           pl.microbatch_group_size, share, pl.overlap_param_gather)
    return current().memo("schedule", key, lambda: _schedule(*key), 1024)


def _schedule(
    microbatches: int, stages: int, virtual_stages: int, overlap_dp: bool, group: int | None,
    share: float | None, overlap_gather: bool,
) -> StepSchedule:
    return StepSchedule(
        microbatches=microbatches,
        stages=stages,
        virtual_stages=virtual_stages,
        microbatch_group=group,
        chunk_share=share,
        overlap_dp=overlap_dp,
        overlap_gather=overlap_gather,
    )


def generate(p: LLMParams) -> Workload:
    """The workload of a model file (``generator = "llm"``): every distinct stage of ``p`` for one
    micro-batch, the stage with the most compute first (:func:`lower_plan`), with the plan's step
    :func:`schedule` (an instance of loop ``step`` runs it, own-stream collectives included)."""
    w = lower_plan(build_step(p))
    return w.model_copy(update={"schedule": schedule(p)})


__all__ = [
    "group_algorithms",
    "stage_members",
    "lower_stage",
    "lower_plan",
    "stage_workload",
    "bottleneck_stage",
    "distinct_stages",
    "stage_key",
    "header",
    "schedule",
    "generate",
    "POLICY",
]
