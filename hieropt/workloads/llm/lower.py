"""An LLM stage as a hieropt :class:`~hieropt.spec.Workload`: layers x (forward, input-gradient, weight-gradient)
phases, each with its compute (ns) and one collective (bytes), and the parallel group of every phase's collective.

Rules (``build_step`` documents what each collective is):

- each layer of the stage (:class:`~hieropt.workloads.llm.Op`) becomes a :class:`~hieropt.spec.Layer` of the same
  name: forward compute = forward FLOPs, input-gradient compute = input-gradient + recompute FLOPs, weight-gradient
  compute = weight-gradient FLOPs, each over the NPU's peak x efficiency; ``update_ns`` is the optimizer step;
- a phase holds one collective; a layer's further collectives of a phase go, in order, to compute-free layers named
  ``"<layer>+1"``, ``"<layer>+2"``, ... right after it (under additive training loops the time is the same);
- point-to-point sends (``P2P``, group ``pp``) are not a hieropt collective kind: they are summed into
  :attr:`LoweredStage.p2p_bytes` (per micro-batch, forward and backward) and
  :attr:`LoweredStage.p2p_iteration_bytes` (tied-embedding exchange, per iteration) for the training loop;
- per-micro-batch collectives sit in the forward and input-gradient phases, per-iteration ones in the
  weight-gradient phase: the convention of the ``pipeline`` loop, whose iteration is
  (m + p - 1) x (the stage's forward, backward and per-micro-batch collectives) + its weight-gradient collectives.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ...spec import Collective, Layer, Phase, Workload, WorkloadHeader
from .step import P2P, STEP_PHASES, Op, Step

POLICY = "HYBRID_TRANSFORMER"
"""ASTRA-sim header policy written into the lowered workloads (``model_parallel_NPU_group`` = tp)."""


@dataclass(frozen=True)
class LoweredStage:
    """One pipeline stage as a workload for one micro-batch.

    Attributes:
        stage: the stage's index.
        workload: layers in forward order (see the module docstring).
        groups: per layer, the parallel group of its (forward, input-gradient, weight-gradient) collective (None
            where the phase has none).
        p2p_bytes: (forward, backward) point-to-point bytes the stage sends per micro-batch.
        p2p_iteration_bytes: point-to-point bytes sent once per iteration (tied-embedding gradient exchange).
        microbatches: micro-batches per iteration m.
    """

    stage: int
    workload: Workload
    groups: tuple[tuple[str | None, str | None, str | None], ...]
    p2p_bytes: tuple[float, float]
    p2p_iteration_bytes: float
    microbatches: int

    def groups_of(self, phase: str) -> set[str]:
        """The groups the collectives of ``phase`` (forward, input_grad, weight_grad) use."""
        j = STEP_PHASES.index(phase)
        return {g[j] for g in self.groups if g[j] is not None}


def _phase(compute_ns: float, comm) -> Phase:
    if comm is None:
        return Phase(compute_ns=compute_ns, collective=Collective.NONE, size_bytes=0.0)
    return Phase(compute_ns=compute_ns, collective=Collective(comm.kind), size_bytes=comm.size_bytes)


def _layers(op: Op, rate: float) -> tuple[list[Layer], list[tuple[str | None, ...]]]:
    by_phase = defaultdict(list)
    for c in op.comms:
        if c.kind != P2P:
            by_phase[c.phase].append(c)
    compute = (op.flops[0] / rate, (op.flops[1] + op.recompute_flops) / rate, op.flops[2] / rate)
    rows = max([1] + [len(v) for v in by_phase.values()])
    layers, groups = [], []
    for k in range(rows):
        comms = [by_phase[ph][k] if k < len(by_phase[ph]) else None for ph in STEP_PHASES]
        c = compute if k == 0 else (0.0, 0.0, 0.0)
        layers.append(Layer(name=op.name if k == 0 else f"{op.name}+{k}",
                            forward=_phase(c[0], comms[0]), input_grad=_phase(c[1], comms[1]),
                            weight_grad=_phase(c[2], comms[2]), update_ns=op.update_ns if k == 0 else 0.0))
        groups.append(tuple(x.group if x is not None else None for x in comms))
    return layers, groups


def bottleneck_stage(step: Step) -> int:
    """The stage with the most compute per micro-batch (forward + backward), the first of equals."""
    totals = [sum(step.compute_ns(r)) for r in range(len(step.stages))]
    return max(range(len(totals)), key=lambda r: (totals[r], -r))


def lower_stage(step: Step, stage: int | None = None) -> LoweredStage:
    """Stage ``stage`` (default: :func:`bottleneck_stage`) of ``step`` as a hieropt workload (module docstring).

    Raises:
        IndexError: no such stage.
    """
    r = bottleneck_stage(step) if stage is None else stage
    st = step.stages[r]
    rate = step.params.npu.flops_per_ns
    layers: list[Layer] = []
    groups: list[tuple[str | None, ...]] = []
    p2p = [0.0, 0.0]
    p2p_iter = 0.0
    for op in st.ops:
        ls, gs = _layers(op, rate)
        layers += ls
        groups += gs
        for c in op.comms:
            if c.kind == P2P:
                if c.per_iteration:
                    p2p_iter += c.size_bytes
                else:
                    p2p[0 if c.phase == "forward" else 1] += c.size_bytes
    pl = step.params.plan
    header = WorkloadHeader(policy=POLICY, model_parallel_npu_group=pl.tp, declared_layers=len(layers))
    name = step.params.workload_name + (f"-stage{r}" if pl.pp > 1 else "")
    return LoweredStage(r, Workload(name=name, layers=tuple(layers), header=header), tuple(groups),
                        (p2p[0], p2p[1]), p2p_iter, step.microbatches)


def fold_microbatches(lowered: LoweredStage) -> Workload:
    """The stage's whole iteration as one workload for additive loops without pipelining (``no_overlap``): the
    layers repeated for each of the m micro-batches (names suffixed ``@k``, k = 1 .. m), the per-iteration
    weight-gradient collectives and the optimizer step kept in the last copy only. Exact for pp = 1 (latency
    included: every collective keeps its own steps)."""
    m = lowered.microbatches
    none = Phase(compute_ns=0.0, collective=Collective.NONE, size_bytes=0.0)
    out = []
    for k in range(1, m + 1):
        for layer in lowered.workload.layers:
            update = {"name": f"{layer.name}@{k}"}
            if k < m:
                update["weight_grad"] = none.model_copy(update={"compute_ns": layer.weight_grad.compute_ns})
                update["update_ns"] = 0.0
            out.append(layer.model_copy(update=update))
    w = lowered.workload
    header = WorkloadHeader(policy=POLICY, model_parallel_npu_group=w.header.model_parallel_npu_group,
                            declared_layers=len(out))
    return Workload(name=w.name, layers=tuple(out), header=header)


__all__ = ["LoweredStage", "lower_stage", "bottleneck_stage", "fold_microbatches", "POLICY"]
