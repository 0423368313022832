"""Text of ``hieropt workload plan``: one LLM training plan's memory per NPU, compute and
collectives per group. Returns lines and rich tables; never prints. The JSON form is
:meth:`hieropt.model.plan.PlanFigures.as_dict`."""

from __future__ import annotations

from rich.table import Table

from ..model.memory import gemm_input_bytes
from ..model.plan import PlanFigures
from ..units import GB
from ..workloads.llm.comms import own_stream_groups

_PHASE = {"forward": "forward", "input_grad": "input-grad", "weight_grad": "weight-grad"}


def _gb(b: float) -> str:
    return f"{b / GB:,.3f}"


def precision_line(p) -> str:
    """The bytes per element of ``p`` (:class:`~hieropt.workloads.llm.params.LLMParams`) in one
    line, the gradients' with where they come from (given, or the number format's default:
    :attr:`~hieropt.workloads.llm.params.LLMParams.gradient_bytes_note`), and under FP8 the stored
    GEMM inputs' (:func:`hieropt.model.memory.gemm_input_bytes`) and, with delayed scaling
    (``NPU.fp8_recipe``), the recipe."""
    pr, g = p.precision, gemm_input_bytes(p)
    fp8 = f" (stored GEMM inputs {g:g}: their FP8 copies)" if g != p.activation_bytes else ""
    fmt = p.npu.number_format + " training"
    if p.npu.number_format == "fp8" and p.npu.fp8_recipe == "delayed":
        fmt += ", delayed scaling"
    return (f"bytes per element ({fmt}): activations "
            f"{p.activation_bytes}{fp8}, weights {p.weight_bytes}, gradients "
            f"{p.gradient_bytes_note}, optimizer {pr.optimizer_bytes_per_param} per parameter")


def summary_lines(fig: PlanFigures) -> list[str]:
    """The plan in one line, the bytes per element (:func:`precision_line`), the memory verdict,
    and the compute figures."""
    p, pl = fig.params, fig.params.plan
    sched = pl.schedule + (f" v={pl.virtual_stages}" if pl.virtual_stages > 1 else "")
    lines = [
        f"{p.workload_name}: {pl.total_npus:,} NPUs = TP {pl.tp}"
        + (f" x CP {pl.cp}" if pl.cp > 1 else "") + f" x PP {pl.pp} x DP {pl.dp}"
        + (f" (EP {pl.ep} x expert-DP {pl.edp})" if pl.ep > 1 else "")
        + f"; {'sequence parallel, ' if pl.sequence_parallel else ''}{sched}, ZeRO "
        f"{pl.zero_stage}, recompute "
        f"{pl.recompute_note}; micro-batch {pl.micro_batch_size} x {pl.microbatches} per "
        "iteration, global batch "
        f"{pl.global_batch_size} sequences of {p.model.sequence_length} tokens"
        + (f"; {', '.join(own)} collectives on their own stream" if (own := own_stream_groups(pl))
           else ""),
        precision_line(p),
        model_line(p),
        f"memory per NPU: {fig.memory.message()}",
    ]
    c = fig.compute()
    lines.append(
        f"compute (ns per NPU, stage {c['slowest_stage']}, the most compute): "
        f"{c['iteration_compute_ns']:,.0f} per iteration, pipeline bubble {c['bubble_ns']:,.0f}, "
        f"optimizer step {c['optimizer_ns']:,.0f}"
        + (" (stage 0's: its last backward ends the iteration)" if pl.pp > 1 else "") + "; "
        f"iteration without communication {c['ideal_iteration_ns']:,.0f} ns "
        f"({c['ideal_iteration_ns'] / 1e6:,.3f} ms)"
        + (
            "; with communication a stage with less compute can be slower (hieropt solve "
            "times every stage)"
            if pl.pp > 1
            else ""
        )
    )
    return lines


def model_line(p) -> str:
    """The model's parameter count and model FLOPs per iteration
    (:func:`~hieropt.workloads.llm.flops.model_parameters`,
    :func:`~hieropt.workloads.llm.flops.model_flops_per_iteration`) and the peak MFU is taken
    against: the NPU's dense peak in its number format (under FP8 the FP8 dense peak)."""
    from ..workloads.llm.flops import model_flops_per_iteration, model_parameters

    n, fmt = model_parameters(p), p.npu.number_format
    return (f"model: {n / 1e9:,.2f}B parameters ({n:,}); {model_flops_per_iteration(p):.4g} model "
            f"FLOPs per iteration (no recompute); MFU is taken against the {fmt.upper()} dense "
            f"peak, {p.npu.peak_tflops:,.0f} TFLOP/s per NPU")


def plan_notes(fig: PlanFigures) -> list[str]:
    """The notes on a plan's figures, as solve, evaluate and compare give them for the same plan:
    its caveats (:func:`hieropt.workloads.llm.flops.plan_caveats`, the :attr:`Training.caveats
    <hieropt.spec.Training.caveats>` of its run figures: ZeRO-3, experts, a peak below half its
    catalog accelerator's) and, when its NPU
    is timed with the shipped catalog's default calibration or a calibrated accelerator file's,
    the :func:`~hieropt.report.run.calibration_note` (the compute times shown rest on it)."""
    from ..io.npus import calibration_of
    from ..workloads.llm.flops import plan_caveats
    from .run import calibration_note

    notes = [*plan_caveats(fig.params)]
    if (note := calibration_note(calibration_of(fig.params.npu))) is not None:
        notes.append(note)
    return notes


def memory_table(fig: PlanFigures) -> Table:
    """Memory per NPU of each stage whose figures differ from the previous one's, GB (1e9 bytes)."""
    t = Table(
        title="Memory per NPU (GB; stages whose figures differ from the previous one)",
        title_justify="left",
    )
    for col in ("stage", "weights", "gradients", "optimizer", "activations", "total", "in flight"):
        t.add_column(col, justify="right")
    for m in fig.memory.distinct():
        t.add_row(
            str(m.stage),
            _gb(m.weights_bytes),
            _gb(m.gradients_bytes),
            _gb(m.optimizer_bytes),
            _gb(m.activations_bytes),
            _gb(m.total_bytes),
            f"{m.in_flight:g}",
        )
    t.caption = f"available {_gb(fig.memory.available_bytes)} GB per NPU (HBM less reserve)"
    return t


def collectives_table(fig: PlanFigures, stage: int | None = None) -> Table:
    """The collectives of ``stage`` (default: the one with the most compute) by group, kind and
    phase, bytes per NPU."""
    r = fig.slowest_stage if stage is None else stage
    t = Table(title=f"Collectives of stage {r} (bytes per NPU; all-gathers by their input shard)",
              title_justify="left")
    for col in (
        "group",
        "NPUs",
        "collective",
        "phase",
        "per",
        "count",
        "bytes",
        "bytes per iteration",
    ):
        t.add_column(
            col, justify="left" if col in ("group", "collective", "phase", "per") else "right"
        )
    m = fig.step.microbatches
    for c in fig.collectives(r):
        per_it = c["bytes"] * (m if c["per"] == "microbatch" else 1)
        t.add_row(
            c["group"],
            str(c["npus"]),
            c["collective"],
            _PHASE[c["phase"]],
            c["per"].replace("microbatch", "micro-batch"),
            str(c["count"]),
            f"{c['bytes']:,.0f}",
            f"{per_it:,.0f}",
        )
    return t


__all__ = ["summary_lines", "memory_table", "collectives_table"]
