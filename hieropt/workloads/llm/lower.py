"""An LLM stage as a hieropt :class:`~hieropt.spec.Workload`: layers x (forward, input-gradient, weight-gradient)
phases, each with its compute (ns), one collective (bytes) and the parallel group it runs on; the plan goes into
the ASTRA-sim header (SimAI's dialect) and into the :class:`~hieropt.spec.StepSchedule` of loop ``step``.

Rules (``build_step`` documents what each collective is):

- each layer of the stage (:class:`~hieropt.workloads.llm.Op`) becomes a :class:`~hieropt.spec.Layer` of the same
  name: forward compute = forward FLOPs, input-gradient compute = input-gradient + recompute FLOPs, weight-gradient
  compute = weight-gradient FLOPs, each over the NPU's peak x efficiency; ``update_ns`` is the optimizer step;
- a phase holds one collective, with :attr:`~hieropt.spec.Phase.group` = its group (``tp``, ``pp``, ``dp``, ``ep``,
  ``edp``); a layer's further collectives of a phase go, in order, to compute-free layers named ``"<layer>+1"``,
  ``"<layer>+2"``, ... right after it;
- pipeline sends are ``P2P`` collectives of group ``pp`` (forward: activation to the next stage; input gradient:
  its gradient to the previous one; weight gradient: the tied-embedding exchange once per iteration);
- per-micro-batch collectives sit in the forward and input-gradient phases, per-iteration ones in the
  weight-gradient phase: the convention of loops ``step`` and ``pipeline``.

Header: ``HYBRID_TRANSFORMER model_parallel_NPU_group: tp`` with ``pp``, ``vpp`` (v > 1), ``ep`` (> 1), ``ga`` (the
micro-batch count m) and ``all_gpus`` (N); an instance checks its mapping's named groups against it.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

from ...spec import Collective, Layer, Phase, StepSchedule, Workload, WorkloadHeader
from .params import LLMParams
from .step import STEP_PHASES, Op, Step, build_step

POLICY = "HYBRID_TRANSFORMER"
"""ASTRA-sim header policy written into the lowered workloads (``model_parallel_NPU_group`` = tp)."""


def _phase(compute_ns: float, comm) -> Phase:
    if comm is None:
        return Phase(compute_ns=compute_ns, collective=Collective.NONE, size_bytes=0.0)
    return Phase(compute_ns=compute_ns, collective=Collective(comm.kind), size_bytes=comm.size_bytes,
                 group=comm.group)


def _layers(op: Op, rate: float) -> list[Layer]:
    by_phase = defaultdict(list)
    for c in op.comms:
        by_phase[c.phase].append(c)
    compute = (op.flops[0] / rate, (op.flops[1] + op.recompute_flops) / rate, op.flops[2] / rate)
    rows = max([1] + [len(v) for v in by_phase.values()])
    out = []
    for k in range(rows):
        comms = [by_phase[ph][k] if k < len(by_phase[ph]) else None for ph in STEP_PHASES]
        c = compute if k == 0 else (0.0, 0.0, 0.0)
        out.append(Layer(name=op.name if k == 0 else f"{op.name}+{k}", forward=_phase(c[0], comms[0]),
                         input_grad=_phase(c[1], comms[1]), weight_grad=_phase(c[2], comms[2]),
                         update_ns=op.update_ns if k == 0 else 0.0))
    return out


def bottleneck_stage(step: Step) -> int:
    """The stage with the most compute per micro-batch (forward + backward), the first of equals (the last few
    steps' are kept: a co-design search asks for it for the time bound and for the communication volume)."""
    for s, r in _BOTTLENECK:
        if s is step:
            return r
    totals = [sum(step.compute_ns(r)) for r in range(len(step.stages))]
    r = max(range(len(totals)), key=lambda r: (totals[r], -r))
    _BOTTLENECK.insert(0, (step, r))
    del _BOTTLENECK[4:]
    return r


_BOTTLENECK: list[tuple[Step, int]] = []


def header(p: LLMParams, layers: int) -> WorkloadHeader:
    """The ASTRA-sim header (SimAI's dialect) stating the plan of ``p`` for a workload of ``layers`` layers."""
    pl = p.plan
    return WorkloadHeader(policy=POLICY, model_parallel_npu_group=pl.tp, pp=pl.pp, ga=pl.microbatches,
                          all_gpus=pl.total_npus, ep=pl.ep if pl.ep > 1 else None,
                          vpp=pl.virtual_stages if pl.virtual_stages > 1 else None, declared_layers=layers)


def lower_stage(step: Step, stage: int | None = None) -> Workload:
    """Stage ``stage`` (default: :func:`bottleneck_stage`) of ``step`` as a hieropt workload for one micro-batch
    (module docstring); its ``group_npus`` states the plan's dp and edp degrees (of the groups its collectives run on).

    Raises:
        IndexError: no such stage.
    """
    r = bottleneck_stage(step) if stage is None else stage
    rate = step.params.npu.flops_per_ns
    layers = [layer for op in step.stages[r].ops for layer in _layers(op, rate)]
    name = step.params.workload_name + (f"-stage{r}" if step.params.plan.pp > 1 else "")
    pl = step.params.plan
    used = {ph.group for layer in layers for ph in (layer.forward, layer.input_grad, layer.weight_grad)}
    degrees = (("dp", pl.dp), ("edp", pl.edp))  # (tp, pp and ep: the header states them, the instance checks it)
    return Workload(name=name, layers=tuple(layers), header=header(step.params, len(layers)),
                    group_npus=tuple((g, g, n) for g, n in degrees if g in used))


STAGE_WORKLOADS = 256
"""Lowered stages :func:`stage_workload` keeps (about 130 kB each for a 1T-parameter model's stage)."""


@lru_cache(maxsize=STAGE_WORKLOADS)
def stage_workload(p: LLMParams, stage: int | None = None) -> Workload:
    """``lower_stage(build_step(p), stage)``, kept for the last :data:`STAGE_WORKLOADS` (plan, stage) pairs: a
    co-design search places each plan on every shape of its space (178 candidates per plan in
    ``spaces/codesign-1t-4096.toml``), and the workload depends on the plan only. The result is shared, frozen like
    every spec model (its derived tables are computed once too).

    Raises:
        IndexError: no such stage.
    """
    return lower_stage(build_step(p), stage)


def schedule(p: LLMParams) -> StepSchedule:
    """The :class:`~hieropt.spec.StepSchedule` of plan ``p``: m micro-batches, p stages, v chunks, DP overlap (one
    frozen object per (m, p, v, overlap), shared)."""
    pl = p.plan
    return _schedule(pl.microbatches, pl.pp, pl.virtual_stages, pl.overlap_grad_reduce)


@lru_cache(maxsize=1024)
def _schedule(microbatches: int, stages: int, virtual_stages: int, overlap_dp: bool) -> StepSchedule:
    return StepSchedule(microbatches=microbatches, stages=stages, virtual_stages=virtual_stages, overlap_dp=overlap_dp)


def generate(p: LLMParams) -> Workload:
    """The workload of a model file (``generator = "llm"``): the bottleneck stage of ``p`` for one micro-batch."""
    return lower_stage(build_step(p))


__all__ = ["lower_stage", "stage_workload", "bottleneck_stage", "header", "schedule", "generate", "POLICY"]
