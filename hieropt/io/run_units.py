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
- a dimension beyond the accelerator's scale-up domain (``scaleup_npus``) above the most
  scale-out one NPU carries (``nic_gbps``: its PCIe x16 host link to the fastest NIC on it) is
  refused (:func:`check_nic_bandwidth`): per-GPU Gb/s or a node's GB/s written where per-GPU GB/s
  is meant. Both figures are those the run is planned with (its catalog entry's, or the model
  file's ``[params.npu]``), named with their source (:func:`nic_limit`). Every shipped run is
  within it.
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

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..units import fmt_sig, plural
from ..workloads.llm.flops import (
    model_flops_per_iteration,
    npu_figure_source,
    recompute_flops_per_iteration,
)
from ..workloads.llm.links import BANDWIDTH_FACTOR, SCALEOUT_GBPS, check_bandwidths
from .npus import DEFAULT_CATALOG, read_npu_catalog

if TYPE_CHECKING:
    from ..workloads.llm.params import LLMParams

SPEED_FACTOR = 10.0
"""A measured time this many times below the peak-FLOP/s time is refused as seconds."""
SLOW_FRACTION = 0.01
"""A measured time above the peak-FLOP/s time / this fraction (the run sustained less than 1 % of
the NPUs' peak FLOP/s) is refused as microseconds."""


def _catalog_entry(params: LLMParams, model_data: dict[str, Any], model: Path) -> Any:
    """The catalog entry (:class:`hieropt.workloads.llm.accelerators.Accelerator`) of the run's
    accelerator, looked up in the model file's catalog (``npu_catalog``, else the shipped one);
    None for an NPU given inline, or not in the catalog."""
    name = params.npu.accelerator
    if name is None:
        return None
    given = model_data.get("npu_catalog")
    path = model.parent / given if isinstance(given, str) else DEFAULT_CATALOG
    try:
        return read_npu_catalog(path).find(name)
    except (KeyError, InputError):
        return None


def scaleup_gbps(params: LLMParams, model_data: dict[str, Any], model: Path) -> float | None:
    """The scale-up bandwidth of the run's accelerator, GB/s per NPU per direction: the model file's
    ``[params.npu] scaleup_gbps`` (filled from its catalog entry when it names one), else looked up
    in the model file's catalog (``npu_catalog``, else the shipped one); None for an NPU given
    inline without it, or not in the catalog."""
    if params.npu.scaleup_gbps is not None:
        return params.npu.scaleup_gbps
    entry = _catalog_entry(params, model_data, model)
    return None if entry is None else entry.scaleup_gbps


def nic_limit(params: LLMParams) -> tuple[int, float, str, str] | None:
    """(NPUs of the scale-up domain, the most scale-out GB/s per NPU per direction, where each
    comes from) of the run's accelerator: the ``scaleup_npus`` and ``nic_gbps`` the run is planned
    with, its catalog entry's (the model file's catalog, ``npu_catalog``, else the shipped one) or
    its model file's ``[params.npu]`` (given in place of the catalog's, or without a catalog
    entry), worded by :func:`hieropt.workloads.llm.flops.npu_figure_source` as the NIC cap and
    the design caveats word them; None when the NPU lacks either."""
    npu = params.npu
    if npu.scaleup_npus is None or npu.nic_gbps is None:
        return None
    return (npu.scaleup_npus, npu.nic_gbps, npu_figure_source(npu, "scaleup_npus"),
            npu_figure_source(npu, "nic_gbps"))


def check_nic_bandwidth(
    bw_gbps: tuple[float, ...],
    dims_npus: tuple[int, ...],
    limit: tuple[int, float, str, str] | None,
    scaleup: float | None,
    npu: str,
    where: str,
) -> None:
    """Refuse the bandwidth of a dimension beyond the accelerator's scale-up domain (the NPUs of
    the dimensions up to it, ``dims_npus`` multiplied innermost first, more than ``limit[0]``)
    above ``limit[1]``, the most scale-out one NPU carries (GB/s per direction: its PCIe x16 host
    link to the fastest NIC on it, ``nic_gbps``), each figure named with where it comes from
    (``limit[2]``, ``limit[3]``: :func:`nic_limit`): such a dimension's traffic leaves the NPU
    through its NIC, over that link. A value equal to the scale-up bandwidth ``scaleup`` is not
    refused: an NVLink tier beyond the baseboard (the H100's NVLink Switch System) runs at it.
    Per-GPU Gb/s (``200`` for HDR: 25 GB/s) and a node's GB/s (``100`` for four 200 Gb/s NICs
    shared by 8 GPUs: 12.5 per GPU) are the slips this catches. No limit (None): not checked.

    Raises:
        InputError: ``where: bw_gbps``, the dimension, the value, the bound and the conversion.
    """
    if limit is None:
        return
    domain, most, domain_source, nic_source = limit
    reach = 1
    for d, (b, n) in enumerate(zip(bw_gbps, dims_npus, strict=False)):
        reach *= n
        if reach <= domain or b <= most * (1 + 1e-9):
            continue
        if scaleup is not None and abs(b - scaleup) <= 1e-9 * scaleup:
            continue
        looks = []
        if b / 8 <= most:
            node = " or GB/s per node of 8 NPUs" if domain == 8 else ""
            looks.append(f"Gb/s per NPU{node} (/ 8 = {b / 8:g} GB/s)")
        if b / domain <= most and domain != 8:
            looks.append(f"GB/s per node of {domain} NPUs (/ {domain} = {b / domain:g} GB/s)")
        cell = ";".join(f"{b / 8 if j == d else x:g}" for j, x in enumerate(bw_gbps))
        raise InputError(
            where,
            "bw_gbps",
            f"dimension {d}: {b:g} GB/s per NPU is above the {most:g} GB/s per direction one "
            f"{npu} can send through its NIC ({nic_source}: its PCIe x16 host link to the "
            f"fastest NIC on it); the dimension reaches {reach:,} NPUs, beyond the {npu}'s "
            f"scale-up domain of {domain} ({domain_source}), so its traffic runs through "
            "the NIC" + (f": looks like {' or '.join(looks)}" if looks else ""),
            "give per-NPU GB/s per direction: 200 Gb/s per GPU is 25 (Gb/s / 8), and a node's "
            "NICs are shared by its NPUs (four 200 Gb/s NICs for 8 GPUs: 100 GB/s / 8 = 12.5)"
            + (f"; {cell} if it is Gb/s per NPU" if b / 8 <= most else ""),
        )


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


TYPICAL_SEQUENCE = (2048, 131072)
"""Tokens per sequence of typical LLM training runs: GPT-3's 2,048 (Brown et al. 2020) to Llama
3's long-context 131,072 (Llama Team 2024, arXiv 2407.21783, §3.4)."""


def sequence_length_error(params: LLMParams, column: str | None, where: str,
                          problem: InputError, measured_ms: float) -> InputError | None:
    """For a ``measured_ms`` refused by :func:`check_measured` (``problem``) whose sequence length
    has a reading as another unit that makes the time plausible: the error on the sequence length
    instead, with that reading (the time's hints, seconds or µs, do not apply to it). The readings
    (:func:`_length_reading`): a count of thousands (``2`` for 2K: 2,048 tokens, within
    :data:`TYPICAL_SEQUENCE`), a batch's tokens (``1048576``, above it: the tokens of a global
    batch, global_batch_size x the sequence length). ``column`` is the row's cell that sets it
    (None: the model file's value). None when the length has no such reading, or when the time is
    implausible with the length it stands for too: the time's error stands. A length outside the
    typical range without a reading (``1024``, GPT-2's, or ``512``) is a valid length and never
    the cause named: ``measured_ms = 0.0215`` with it is refused as seconds.
    """
    reading = _length_reading(params, measured_ms)
    if reading is None:
        return None
    seq = params.model.sequence_length
    lo, hi = TYPICAL_SEQUENCE
    hint, fix = reading
    whose = "the row's" if column else "the model file's"
    said = re.split(r": (?:looks like|below)|; ", problem.problem or "", maxsplit=1)[0]
    return InputError(
        where,
        column or "model.sequence_length",
        f"{seq:,} tokens per sequence ({whose}) is outside the typical {lo:,}-{hi:,}: {hint}; "
        f"with it, the measured time is implausible (measured_ms: {said})",
        f"{fix}; a sequence length is in tokens per sequence",
    )


def _length_reading(params: LLMParams, measured_ms: float) -> tuple[str, str] | None:
    """(hint, fix) of the run's sequence length read as another unit, when that reading gives a
    length within :data:`TYPICAL_SEQUENCE` with which ``measured_ms`` is plausible
    (:func:`_plausible` against :func:`peak_time_ms` of the run at that length); else None. Below
    the range, thousands of tokens (``2`` for 2K), when x 1,024 is within it; above it, the tokens
    of a global batch, when some length within the range makes the time plausible (the
    peak-FLOP/s time grows with the length: at the range's ends it brackets every length's)."""
    seq = params.model.sequence_length
    lo, hi = TYPICAL_SEQUENCE
    if seq < lo and lo <= seq * 1024 <= hi:
        k = seq * 1024
        if not _plausible(measured_ms, peak_time_ms(_with_sequence(params, k))):
            return None
        return f"looks like thousands of tokens ({seq}K = {k:,})", f"write {k} for {seq}K"
    if seq > hi:
        shortest = peak_time_ms(_with_sequence(params, lo))
        longest = peak_time_ms(_with_sequence(params, hi))
        if measured_ms * SPEED_FACTOR < shortest or measured_ms * SLOW_FRACTION > longest:
            return None
        return ("looks like the tokens of a global batch (global_batch_size x sequence length)",
                "give the tokens per sequence (e.g. 2048, 4096, 8192), and global_batch_size in "
                "sequences")
    return None


def _with_sequence(params: LLMParams, seq: int) -> LLMParams:
    """``params`` with the sequence length ``seq`` tokens (for its FLOPs: not validated again)."""
    model = params.model.model_copy(update={"sequence_length": seq})
    return params.model_copy(update={"model": model})


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
    "nic_limit",
    "check_nic_bandwidth",
    "check_bandwidths",
    "peak_time_ms",
    "check_measured",
    "tflops_hint",
    "tokens_hint",
    "TYPICAL_SEQUENCE",
    "sequence_length_error",
]
