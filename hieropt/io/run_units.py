"""Plausibility of a measured run's units: a runs file's ``bw_gbps`` and ``measured_ms`` cells that
look like the wrong unit are refused with the conversion (:mod:`hieropt.io.runs` calls these on
every row).

Both thresholds are far from any real run, so that a correct row is never refused. The bandwidth
checks and their thresholds are :mod:`hieropt.workloads.llm.links`'s (shared with ``evaluate --bw``
and the caveats on a design's bandwidths), re-exported here:

- a dimension's bandwidth of :data:`BANDWIDTH_FACTOR` x the accelerator's scale-up bandwidth or
  more (``scaleup_gbps`` of its catalog entry: NVLink, Infinity Fabric; GB/s per NPU per
  direction; a scale-out NIC is slower still) is refused: exactly that factor is the datasheet's
  bidirectional figure (600 GB/s for an A100's NVLink of 300 GB/s per direction, 900 for an
  H100's 450), to be halved; more looks like Gb/s: ``2400`` for an A100's NVLink is
  ``2400 / 8 = 300`` GB/s. Checked only for an NPU named by a catalog entry (``accelerator``).
- the network file's outermost dimension (of two or more) is its scale-out network, whatever
  the run's size (a run within the inner dimensions does not use it, and is not checked there;
  a run of the 4-dimension LIBRA file of 4 x 8 x 4 x 32 NPUs on 32 NPUs uses dimensions 0 and 1,
  which are not): a bandwidth there above :data:`SCALEOUT_GBPS` (two of the fastest NICs the
  project's catalogs know per NPU) and other than the accelerator's scale-up bandwidth (an outer
  NVLink tier runs at that; no network beyond it is faster than the NPU's own scale-up links)
  looks like Gb/s: ``400`` for a 400 Gb/s NIC per GPU is ``400 / 8 = 50`` GB/s, and ``800`` for
  an H100's 800 Gb/s (above its 450 GB/s NVLink) is ``100`` GB/s.
- a measured iteration time below the time the model's FLOPs take at the NPUs' peak
  (:func:`peak_time_ms`: :func:`hieropt.workloads.llm.flops.model_flops_per_iteration` / (NPUs x
  ``peak_tflops``)) is faster than physically possible: no run sustains more than the peak (real
  runs sustain 30-60 % of it; the fastest shipped run, ``validation/calibration/h100-one-node.csv``
  line 17, 62.5 %). Below 1 / :data:`SPEED_FACTOR` of it, and plausible x 1000, it looks like
  seconds: a run measured in seconds and written as ms is 1000 x too small, caught unless it
  sustained below 1 % of the peak. Otherwise the row's plan is not the run's: too few NPUs (a
  ``dp`` or ``npus`` cell left empty takes the model file's value) or too large a global batch
  (one written in tokens rather than sequences). Either way, a value between :data:`SLOW_FRACTION`
  of the NPU's peak TFLOP/s and the peak may be a TFLOP/s per NPU figure typed as the time: the
  message says so, with the time it implies (:func:`tflops_hint`).
- a measured iteration time above the time the model's FLOPs take at :data:`SLOW_FRACTION` (1 %)
  of the NPUs' peak looks like microseconds: a run measured in µs and written as ms is 1000 x too
  large, so it would have sustained below 0.1 % of the peak (always caught). The slowest shipped
  runs (Narayanan et al. 2021's ZeRO-3 runs, ``validation/narayanan2021.csv``) sustain 10.6 % of
  the peak, 10.6 x above the threshold.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..units import fmt_sig, plural
from ..workloads.llm.flops import model_flops_per_iteration, recompute_flops_per_iteration
from ..workloads.llm.links import BANDWIDTH_FACTOR, SCALEOUT_GBPS, check_bandwidths
from .npus import DEFAULT_CATALOG, read_npu_catalog

if TYPE_CHECKING:
    from ..workloads.llm.params import LLMParams

SPEED_FACTOR = 10.0
"""A measured time this many times below the peak-FLOP/s time is refused as seconds."""
SLOW_FRACTION = 0.01
"""A measured time above the peak-FLOP/s time / this fraction (the run sustained less than 1 % of
the NPUs' peak FLOP/s) is refused as microseconds."""


def scaleup_gbps(params: LLMParams, model_data: dict[str, Any], model: Path) -> float | None:
    """The scale-up bandwidth of the run's accelerator, GB/s per NPU per direction: the model file's
    ``[params.npu] scaleup_gbps`` (filled from its catalog entry when it names one), else looked up
    in the model file's catalog (``npu_catalog``, else the shipped one); None for an NPU given
    inline without it, or not in the catalog."""
    if params.npu.scaleup_gbps is not None:
        return params.npu.scaleup_gbps
    name = params.npu.accelerator
    if name is None:
        return None
    given = model_data.get("npu_catalog")
    path = model.parent / given if isinstance(given, str) else DEFAULT_CATALOG
    try:
        return read_npu_catalog(path).find(name).scaleup_gbps
    except (KeyError, InputError):
        return None


def peak_time_ms(params: LLMParams) -> float:
    """The iteration's model FLOPs at the peak FLOP/s of all its NPUs, ms: a lower bound on any
    measured iteration time (recompute, communication and bubbles only add to it)."""
    flops = model_flops_per_iteration(params)
    return flops / (params.plan.total_npus * params.npu.peak_tflops * 1e12) * 1e3


def check_measured(measured_ms: float, params: LLMParams, where: str) -> None:
    """Refuse a measured time below :func:`peak_time_ms` (faster than the NPUs' peak FLOP/s: below
    1 / :data:`SPEED_FACTOR` of it, seconds written as ms; else a plan that is not the run's) or
    above :func:`peak_time_ms` / :data:`SLOW_FRACTION` (µs written as ms).

    Raises:
        InputError: ``where: measured_ms``, the bound, and the value x 1000 (or / 1000) as the fix
            when that is plausible in ms (else: check the plan).
    """
    bound = peak_time_ms(params)
    if measured_ms < bound:
        _refuse_fast(measured_ms, bound, params, where)
    if measured_ms * SLOW_FRACTION > bound:
        _refuse_slow(measured_ms, bound, params.plan.total_npus, where)


def _plausible(measured_ms: float, bound: float) -> bool:
    """Whether ``measured_ms`` is within both thresholds of the peak-FLOP/s time ``bound``."""
    return measured_ms * SPEED_FACTOR >= bound and measured_ms * SLOW_FRACTION <= bound


def _refuse_fast(measured_ms: float, bound: float, params: LLMParams, where: str) -> None:
    npus = params.plan.total_npus
    per_npu = tflops_hint(measured_ms, bound, params)
    typed = fmt_sig(measured_ms, 10)
    tokens = tokens_hint(measured_ms, bound, params)
    if measured_ms * SPEED_FACTOR < bound and _plausible(measured_ms * 1000, bound):
        raise InputError(
            where,
            "measured_ms",
            f"{typed} ms is {bound / measured_ms:,.0f} x less than the model's "
            f"FLOPs take at the peak FLOP/s of its {plural(npus, 'NPU')} ({fmt_sig(bound)} ms): "
            "looks like seconds" + (per_npu and ", or a TFLOP/s per NPU figure (not a time)")
            + (tokens and ", or a global_batch_size in tokens"),
            (f"{tokens}; else " if tokens else "")
            + f"give the iteration time in ms: {measured_ms * 1000:.10g} for {measured_ms:.10g} s"
            + (per_npu and f"; {per_npu}"),
        )
    p = params.plan
    ratio = bound / measured_ms
    times = f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.3g}"
    raise InputError(
        where,
        "measured_ms",
        f"{typed} ms is faster than physically possible: {times} x less than the "
        f"model's FLOPs take at the peak FLOP/s of its {plural(npus, 'NPU')} ({fmt_sig(bound)} ms "
        f"at {params.npu.peak_tflops:g} TFLOP/s each)"
        + (per_npu and f"; {typed} looks like a TFLOP/s per NPU figure (not a time)"),
        (f"{tokens}; else " if tokens else "")
        + (f"give the iteration time in ms: {per_npu}; else " if per_npu else "")
        + "check the plan the row resolves to against the run measured: tp "
        f"{p.tp} x pp {p.pp} x dp {p.dp} = {plural(npus, 'NPU')} (too few?), global_batch_size "
        f"{p.global_batch_size} sequences (too many? in sequences, not tokens), an empty cell "
        "taking the model file's value; and that measured_ms is ms per iteration",
    )


def tokens_hint(measured_ms: float, bound: float, params: LLMParams) -> str:
    """For a ``measured_ms`` below the peak-FLOP/s time ``bound`` (ms) whose plan's
    ``global_batch_size`` may be in tokens (Megatron-LM counts sequences; papers often quote
    tokens): the hint, with the sequences those tokens are; "" when it does not apply. It applies
    when the global batch is at least the sequence length, a whole number of sequences that the
    plan's micro_batch_size x dp divides, and the time is possible with that batch (the bound
    scales with the batch: at least ``bound`` x sequences / global_batch_size)."""
    p, seq = params.plan, params.model.sequence_length
    gbs = p.global_batch_size
    if gbs < seq or gbs % seq:
        return ""
    n = gbs // seq
    if n % (p.micro_batch_size * p.dp) or measured_ms < bound * n / gbs:
        return ""
    return (
        f"global_batch_size may be in tokens (it is ≥ the sequence length, {seq:,}): give it in "
        f"sequences, {gbs:,} tokens / {seq:,} = {n:,}"
    )


def tflops_hint(measured_ms: float, bound: float, params: LLMParams) -> str:
    """For a ``measured_ms`` below the peak-FLOP/s time ``bound`` (ms) that could be a TFLOP/s per
    NPU figure typed as the time (published runs quote both: Narayanan et al. 2021's Table 1 gives
    163 TFLOP/s per GPU for the 1T model's 102.6 s iteration): the time that figure implies, in
    words: model FLOPs per iteration / (TFLOP/s x NPUs), ms, and for a plan that recomputes also
    with the recompute's FLOPs (the hardware FLOPs such tables count); "" when it could not be one.

    It could be one when the figure is at most the NPU's peak (``peak_tflops``, which no run
    sustains more than) and at least :data:`SLOW_FRACTION` of it: exactly when the time it implies,
    ``bound`` x peak / figure, is between ``bound`` and ``bound`` / :data:`SLOW_FRACTION`, the times
    :func:`check_measured` accepts.
    """
    peak = params.npu.peak_tflops
    if not (measured_ms < bound and SLOW_FRACTION * peak <= measured_ms <= peak):
        return ""
    npus = params.plan.total_npus
    figure = fmt_sig(measured_ms, 10)

    def ms(flops: float) -> str:
        return fmt_sig(flops / (measured_ms * 1e12 * npus) * 1e3)

    flops = model_flops_per_iteration(params)
    text = (
        f"{figure} TFLOP/s per NPU is {ms(flops)} ms (the model's FLOPs per iteration / (TFLOP/s x "
        f"NPUs): {fmt_sig(flops / 1e15)} PFLOP / ({figure} TFLOP/s x {plural(npus, 'NPU')}))"
    )
    extra = recompute_flops_per_iteration(params)
    if extra:
        text += (
            f", or {ms(flops + extra)} ms if the figure counts the {params.plan.recompute} "
            f"recompute's FLOPs too ({fmt_sig((flops + extra) / 1e15)} PFLOP)"
        )
    return text


def _refuse_slow(measured_ms: float, bound: float, npus: int, where: str) -> None:
    head = (
        f"{fmt_sig(measured_ms, 10)} ms is {measured_ms / bound:,.0f} x what the model's FLOPs "
        f"take at the peak FLOP/s of its {plural(npus, 'NPU')} ({fmt_sig(bound)} ms): below "
        f"{SLOW_FRACTION:.0%} of the peak"
    )
    if _plausible(measured_ms / 1000, bound):
        raise InputError(
            where,
            "measured_ms",
            f"{head}: looks like µs",
            f"give the iteration time in ms: {measured_ms / 1000:.10g} for {measured_ms:.10g} µs",
        )
    raise InputError(
        where,
        "measured_ms",
        head,
        "give the iteration time in ms, and check the row's model fields and global_batch_size",
    )


__all__ = [
    "BANDWIDTH_FACTOR",
    "SCALEOUT_GBPS",
    "SPEED_FACTOR",
    "SLOW_FRACTION",
    "scaleup_gbps",
    "check_bandwidths",
    "peak_time_ms",
    "check_measured",
    "tflops_hint",
    "tokens_hint",
]
