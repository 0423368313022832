"""The figures of one LLM training plan: memory per NPU per stage, compute per stage, and the
collectives of every parallel group with their bytes (what ``hieropt workload plan`` prints).

Compute (ns, one NPU): per micro-batch forward and backward (recompute included) of each stage; for
the stage with the most compute (``slowest_stage``: the slowest when communication is free) the
iteration's compute m (F + B), the pipeline bubble: the rest of the schedule's length with free
communication (its graph, :mod:`hieropt.model.schedule_dag`, each model chunk's forward and
backward an operation; beyond the graph's size or with own-stream collectives the composition of
:mod:`hieropt.model.pipeline`, (c sum_r (F_r + B_r) - c (F + B), c = 1/v for equal chunks); with
equal stages and chunks Narayanan et al. 2021 §2.2's (p - 1) / v (F + B)) and the first stage's
optimizer step (its last backward ends the iteration);
``ideal_iteration_ns`` is their sum, the iteration time with free communication. With communication
the slowest stage depends on the bandwidths: a stage with less compute but more collectives can be
slower (``hieropt solve`` times every distinct stage and names the slowest).

Collectives: per stage, grouped by (group, kind, phase): how many per micro-batch (forward,
input_grad) or per iteration (weight_grad), and their bytes (hieropt's convention: all-gathers by
the per-NPU input shard); per group, the bytes per iteration m x per-micro-batch + per-iteration.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..workloads.llm.comms import own_stream_groups
from ..workloads.llm.flops import model_flops_per_iteration, model_parameters
from ..workloads.llm.layout import chunk_share
from ..workloads.llm.params import LLMParams
from ..workloads.llm.step import Step, build_step, chunk_layers
from .memory import MemoryReport, gemm_input_bytes, memory
from .pipeline import graph_fits
from .schedule_dag import schedule_graph, schedule_time


def _ops_ns(step: Step, ops) -> tuple[float, float]:
    """(forward, backward with recompute) compute of the layers ``ops`` for one micro-batch, ns, as
    :meth:`~hieropt.workloads.llm.step.Step.compute_ns` adds a stage's."""
    if step.params.npu.roofline:
        return sum([op.compute_ns[0] for op in ops]), sum(
            [op.compute_ns[1] + op.compute_ns[2] for op in ops])
    rate = step.params.npu.flops_per_ns
    return (sum([op.flops[0] for op in ops]) / rate,
            sum([op.flops[1] + op.flops[2] + op.recompute_flops for op in ops]) / rate)


@dataclass(frozen=True)
class PlanFigures:
    """Everything about one plan: its step, memory report and derived compute and communication
    figures."""

    params: LLMParams
    step: Step
    memory: MemoryReport

    @property
    def slowest_stage(self) -> int:
        """The stage with the most compute per micro-batch (the first of equals): the slowest when
        communication is free, not necessarily at a given bandwidth
        (:func:`hieropt.workloads.llm.lower.bottleneck_stage`)."""
        tot = [sum(self.step.compute_ns(r)) for r in range(len(self.step.stages))]
        return max(range(len(tot)), key=lambda r: (tot[r], -r))

    def compute(self) -> dict:
        """Compute figures in ns (module docstring)."""
        pl = self.params.plan
        stages = []
        for r in range(len(self.step.stages)):
            f, b = self.step.compute_ns(r)
            stages.append(
                {
                    "stage": r,
                    "forward_ns": f,
                    "backward_ns": b,
                    "optimizer_ns": self.step.update_ns(r),
                }
            )
        s = stages[self.slowest_stage]
        fb = s["forward_ns"] + s["backward_ns"]
        m = self.step.microbatches
        compute = m * fb
        # the schedule's graph, each chunk's forward and backward an operation
        v = pl.virtual_stages
        if pl.pp > 1 and graph_fits(pl.pp, m, v, pl.group_size, bool(own_stream_groups(pl))):
            fwd, bwd = [], []
            for st, counts in zip(self.step.stages, chunk_layers(self.params), strict=True):
                start = 0
                for n in counts:
                    f, b = _ops_ns(self.step, st.ops[start:start + n])
                    fwd.append(f)
                    bwd.append(b)
                    start += n
            ops = schedule_graph(pl.pp, m, v, pl.group_size)
            bubble = schedule_time(ops, fwd, bwd, v)[0] - compute
        else:
            share = chunk_share(self.params)  # (the largest chunk's share; None: 1 / v)
            bubble = (sum(x["forward_ns"] + x["backward_ns"] for x in stages) - fb) * (
                share if share is not None else 1 / pl.virtual_stages)
        tail = stages[0]["optimizer_ns"]
        return {"microbatches": self.step.microbatches, "slowest_stage": self.slowest_stage,
                "iteration_compute_ns": compute, "bubble_ns": bubble, "optimizer_ns": tail,
                "ideal_iteration_ns": compute + bubble + tail, "stages": stages}

    def collectives(self, stage: int) -> list[dict]:
        """The collectives of ``stage`` grouped by (group, kind, phase), in first-seen order."""
        acc: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0, 0.0])
        for op in self.step.stages[stage].ops:
            for c in op.comms:
                a = acc[(c.group, c.kind, c.phase)]
                a[0] += 1
                a[1] += c.size_bytes
        sizes = self.step.group_sizes
        return [
            {
                "group": g,
                "npus": sizes[g],
                "collective": k,
                "phase": ph,
                "per": "iteration" if ph == "weight_grad" else "microbatch",
                "count": int(n),
                "bytes": b,
            }
            for (g, k, ph), (n, b) in acc.items()
        ]

    def group_totals(self, stage: int) -> dict[str, float]:
        """Bytes per iteration of each group on ``stage``: m x per-micro-batch + per-iteration
        collectives."""
        m = self.step.microbatches
        out: dict[str, float] = {}
        for c in self.collectives(stage):
            out[c["group"]] = out.get(c["group"], 0.0) + c["bytes"] * (
                m if c["per"] == "microbatch" else 1
            )
        return out

    def as_dict(self) -> dict:
        """JSON-ready: the model's parameter count and model FLOPs per iteration
        (:func:`~hieropt.workloads.llm.flops.model_parameters`), plan, precision (bytes per
        element; ``gradient_bytes``,
        ``activation_bytes`` and ``weight_bytes`` as resolved, given or the number format's
        default, ``gradient_bytes_note`` saying which, ``gemm_input_bytes`` the stored inputs of
        the linear layers' GEMMs: 1 under FP8), memory (per distinct stage and the peak),
        compute, collectives per stage."""
        pl, mem, p = self.params.plan, self.memory, self.params
        return {
            "model": self.params.model.name,
            "parameters": model_parameters(p),
            "model_flops_per_iteration": model_flops_per_iteration(p),
            "plan": {
                "npus": pl.total_npus,
                "tp": pl.tp,
                "cp": pl.cp,
                "pp": pl.pp,
                "dp": pl.dp,
                "ep": pl.ep,
                "edp": pl.edp,
                "flash_attention": pl.flash_attention,
                "sequence_parallel": pl.sequence_parallel,
                "schedule": pl.schedule,
                "virtual_stages": pl.virtual_stages,
                "zero_stage": pl.zero_stage,
                "micro_batch_size": pl.micro_batch_size,
                "global_batch_size": pl.global_batch_size,
                "microbatches": pl.microbatches,
                "recompute": pl.recompute,
                "recompute_layers": pl.recompute_layers,
            },
            "precision": {
                **p.precision.model_dump(),
                "activation_bytes": p.activation_bytes,
                "weight_bytes": p.weight_bytes,
                "gemm_input_bytes": gemm_input_bytes(p),
                "number_format": p.npu.number_format,
                "gradient_bytes": p.gradient_bytes,
                "gradient_bytes_note": p.gradient_bytes_note,
            },
            "memory": {
                "fits": mem.fits,
                "message": mem.message(),
                "capacity_bytes": mem.capacity_bytes,
                "reserve_bytes": mem.reserve_bytes,
                "available_bytes": mem.available_bytes,
                "over_bytes": max(mem.over_bytes, 0.0),
                "peak": mem.peak.as_dict(),
                "stages": [m.as_dict() for m in mem.distinct()],
            },
            "compute": self.compute(),
            "collectives": [
                {
                    "stage": r,
                    "bytes_per_iteration": self.group_totals(r),
                    "by_kind": self.collectives(r),
                }
                for r in range(len(self.step.stages))
            ],
        }


def plan_figures(params: LLMParams) -> PlanFigures:
    """Build the step of ``params`` (validated model, plan, NPU and precision) and its memory
    report (see :class:`PlanFigures`: bytes per NPU, FLOPs, ns).

    Raises:
        ValueError: a plan the step cannot state (as :func:`hieropt.workloads.llm.build_step`;
            the library's ``hieropt.plan_figures`` checks ``params`` first, an InputError).
    """
    step = build_step(params)
    return PlanFigures(params, step, memory(params, step))


__all__ = ["PlanFigures", "plan_figures"]
