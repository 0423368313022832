"""Units and explicit converters.

hieropt works internally in bytes, ns, GB/s per NPU per dimension and $. With 1 GB = 1e9 bytes,
1 GB/s = 1 byte/ns, so ``time_ns = bytes / bw_gbps``. Other conventions are converted only here.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

from .names import with_flag

GB = 1e9
"""Bytes in one GB (decimal, as LIBRA and hieropt use)."""
GIB = 2.0**30
"""Bytes in one GiB (the ASTRA-sim 2.0 analytical backend's 'GB')."""
NS_PER_S = 1e9


def gbit_to_gbyte(gbit_per_s: float) -> float:
    """Convert Gb/s (vendor NIC ratings, bits) to GB/s (bytes): divide by 8."""
    return gbit_per_s / 8.0


def gbps_decimal_to_binary(gbps: float) -> float:
    """Convert GB/s with 1 GB = 1e9 bytes to 'GB/s' with 1 GB = 2^30 bytes (ASTRA-sim 2.0
    analytical)."""
    return gbps * GB / GIB


def gbps_binary_to_decimal(gib_per_s: float) -> float:
    """Inverse of :func:`gbps_decimal_to_binary`."""
    return gib_per_s * GIB / GB


GBIT_RATINGS = (400.0, 800.0, 1600.0, 3200.0)
"""NIC ratings in Gb/s (400G, 800G, 1.6T, 3.2T Ethernet and InfiniBand ports): given as GB/s they
would be NICs of 3.2 to 25.6 Tb/s, 2x to 16x the fastest NIC sold, so a NIC's GB/s equal to one of
them is refused as a Gb/s rating (:func:`gbit_rating_slip`). 100 and 200 GB/s are not among them:
800 Gb/s and 1.6 Tb/s NICs exist."""


def gbit_rating_slip(gbps: float, gbps_key: str, gbit_key: str | None,
                     kind: str = "NIC") -> tuple[str, str] | None:
    """(problem, fix) when ``gbps``, a NIC's (or a link port's: ``kind`` ``"link port"``) GB/s per
    direction given as the field ``gbps_key``, is one of :data:`GBIT_RATINGS` (a rating in Gb/s
    written in the GB/s field): the problem names the part that would be, the fix the Gb/s field
    ``gbit_key`` (or the GB/s value; only the GB/s value, the rating / 8, where the file has no
    Gb/s field: ``gbit_key`` None); None otherwise. One rule for the parts catalog's NICs and
    links (``gbps`` / ``gbit_per_s``: a single link port runs at 25-100 GB/s per direction, an
    NVLink 5 link 50 GB/s, so 400 GB/s and above is a rating in Gb/s too), the spaces
    (``nic_gbps`` / ``nic_gbit_per_s``) and an NPU's ``nic_gbps`` (a model file's
    ``[params.npu]``, the accelerator catalog's entries: no Gb/s field)."""
    if gbps not in GBIT_RATINGS:
        return None
    tbps = gbps * 8 / 1000
    problem = (f"{gbps:g} GB/s per direction is a {tbps:g} Tb/s {kind}, and {gbps:g} is a "
               f"{kind}'s rating in Gb/s")
    if gbit_key is None:
        return problem, (f"write {gbps_key} = {gbps / 8:g} (GB/s per direction: the {gbps:g} Gb/s "
                         "rating / 8)")
    return (
        problem,
        f"write {gbit_key} = {gbps:g} (or {gbps_key} = {gbps / 8:g}); if a {tbps:g} Tb/s {kind} "
        f"is meant, write {gbit_key} = {gbps * 8:g}",
    )


MAX_PLAUSIBLE_BW_GBPS = 1e6
"""Per-NPU bandwidth (GB/s, 1 GB = 1e9 bytes) above which an optimum is flagged as implausible: 1e6
GB/s per NPU is about a thousand times today's fastest scale-up links (NVLink 5: 900 GB/s per GPU),
so such an optimum almost always comes from a constraint or bound written in bytes/s (``sum(bw) ==
500e9``) instead of GB/s."""

MIN_PLAUSIBLE_BW_GBPS = 1e-3
"""Per-NPU bandwidth (GB/s) below which an optimum on a dimension that carries traffic is flagged as
implausible: 1 MB/s per NPU, far below any network link; typically a constraint written in TB/s or a
scale slip (``sum(bw) == 500e-9``)."""

MAX_PLAUSIBLE_NPUS = 1_000_000
"""Cluster size (NPUs) above which every answer gets a note (not a refusal): the largest published
training clusters are about 100,000 GPUs (xAI's Colossus, 100,000 H100, 2024; Meta trained Llama 3
405B on 16,384 H100: Llama Team 2024, arXiv 2407.21783), so a cluster of millions is ten times
beyond any built, and more likely a dimension's NPU count or a plan's degree in error."""


def cluster_size_note(npus: int) -> str | None:
    """The note on a cluster of ``npus`` NPUs above :data:`MAX_PLAUSIBLE_NPUS` (the answer is
    computed as for any size; whether such a cluster can be built, powered and kept running is not
    modelled), else None. One text for every command: a plan's caveats and a design's run
    figures."""
    if npus <= MAX_PLAUSIBLE_NPUS:
        return None
    return (f"the cluster has {npus:,} NPUs, above {MAX_PLAUSIBLE_NPUS:,}: the largest published "
            "training clusters are about 100,000 GPUs; check the dimensions' NPU counts and the "
            "plan's degrees (nothing here models the failures, stragglers, power and floor space "
            "of a cluster that size)")


def implausible_bw_notes(
    bw_gbps: Sequence[float], carries_traffic: Sequence[bool], what: str = "optimum",
    example: str = "'sum(bw) == 500'",
) -> tuple[str, ...]:
    """Notes on per-NPU bandwidths ``bw_gbps`` (GB/s, one per dimension) that are implausible: one
    naming every dimension above :data:`MAX_PLAUSIBLE_BW_GBPS`, one naming every dimension that
    ``carries_traffic`` below :data:`MIN_PLAUSIBLE_BW_GBPS`, each compared as printed (to 6
    significant digits: a bound ``bw[0] <= 0.001`` met a round-off below it, printed 0.001, is at
    the threshold, not below it); each says that bandwidths are GB/s per
    NPU (1 GB = 1e9 bytes). Notes, not errors: such a network is solved (or evaluated) as stated.
    ``what``: what the bandwidths are (a solve's ``optimum``, ``evaluate``'s ``allocation``);
    ``example``: how 500 GB/s per NPU is written where they came from (a design constraint
    ``'sum(bw) == 500'``, ``--bw 500``)."""
    bw = [float(b) for b in bw_gbps]
    busy = list(carries_traffic)
    if len(busy) != len(bw):
        raise ValueError(f"{len(bw)} bandwidths but {len(busy)} traffic flags")
    shown = [float(f"{b:.6g}") for b in bw]  # (as the note prints them)
    high = [d for d, b in enumerate(shown) if b > MAX_PLAUSIBLE_BW_GBPS]
    low = [d for d, b in enumerate(shown) if busy[d] and b < MIN_PLAUSIBLE_BW_GBPS]
    unit = "bandwidths, design constraints and bounds are in GB/s per NPU (1 GB = 1e9 bytes)"
    out = []
    for dims, how, hint in (
        (
            high,
            f"above {MAX_PLAUSIBLE_BW_GBPS:g}",
            f"not bytes/s: check their units (500 GB/s per NPU is {example}, not 500e9)",
        ),
        (
            low,
            f"below {MIN_PLAUSIBLE_BW_GBPS:g}",
            f"check their units (500 GB/s per NPU is {example}, not 0.5 or 500e-9)",
        ),
    ):
        if dims:
            values = ", ".join(f"dim {d} {bw[d]:.6g}" for d in dims)
            out.append(
                f"implausible {what}: {values} GB/s per NPU, {how} GB/s per NPU; {unit}, {hint}"
            )
    return tuple(out)


TARGET = with_flag("max_iteration_time_ns")
"""The time target as a unit hint names it: the library's argument and the command line's flag."""


def time_unit_hint(target_ns: float, fastest_ns: float) -> str:
    """A hint for a time target ``target_ns`` (ns) at least 1,000 x below the fastest possible
    ``fastest_ns`` (ns); "" when the target is not that far below.

    A target under ``PLAIN_SLIP_NS`` (100 us: no training iteration is that short) is almost always
    a time written in ms or s but read as ns (``--max-time 1300`` meant 1.3 s): the hint names the
    unit that makes it feasible. A larger one was written with a unit or in ns on purpose (``1ms``
    below a 3 s optimum), so the hint states both times and asks to check the unit. The target is
    named as the library's argument and the command line's flag (:data:`TARGET`), as the caller
    may be either."""
    if not (target_ns > 0 and fastest_ns >= 1e3 * target_ns):
        return ""
    ratio = fastest_ns / target_ns
    below = (f" — the target is {ratio:,.3g}x below the fastest" if math.isfinite(ratio)
             else " — the target is more than 1e+308x below the fastest")
    if target_ns >= PLAIN_SLIP_NS:
        return (f"{below} ({target_ns / 1e6:,.6g} ms against {fastest_ns / 1e6:,.6g} ms): "
                f"check the unit of the target, {TARGET}")
    # (the smallest unit that makes it feasible)
    for unit, ns in (("us", 1e3), ("ms", 1e6), ("s", 1e9)):
        if target_ns * ns >= fastest_ns:
            return (
                f"{below}: a plain number is ns; "
                f"did you mean {target_ns:g}{unit}? (write --max-time {target_ns:g}{unit}, or "
                f"max_iteration_time_ns = {target_ns * ns:g})"
            )
    return f"{below}: times are ns (the target, {TARGET})"


def power_unit_hint(budget_w: float, least_w: float) -> str:
    """A hint for a power budget ``budget_w`` (W, of the network's parts) at least 100 x below the
    least a design draws, ``least_w`` (W); "" when it is not that far below, or when no unit up to
    MW makes it enough. A plain number given to ``--max-power-w`` is W, so ``300`` meant 300 kW
    (a cluster's network draws hundreds of kW): the hint names the smallest unit (kW, MW) that
    makes the budget enough, as :func:`time_unit_hint` does for a time target."""
    if not (budget_w > 0 and least_w >= 100 * budget_w):
        return ""
    for unit, w in (("kW", 1e3), ("MW", 1e6)):
        if budget_w * w >= least_w:
            return (f" — the budget is {least_w / budget_w:,.0f}x below it: a plain number is W; "
                    f"did you mean {budget_w:g}{unit}? (write --max-power-w {budget_w:g}{unit}, "
                    f"or max_power_w={budget_w * w:g})")
    return ""


_PLAIN_POWER_HINT = re.compile(r": a plain number is W; did you mean [^?]*\? \(write [^)]*\)")
"""The part of :func:`power_unit_hint` that reads the budget as a plain number typed without its
unit."""


def without_plain_power_hint(message: str) -> str:
    """``message`` without :func:`power_unit_hint`'s reading of the budget as a plain number (``a
    plain number is W; did you mean 1000kW? (write ...)``), for a budget given with its unit
    (``--max-power-w 1kW``): suggesting 1,000 times the value given would be wrong; the ratio to
    the least a design draws stays."""
    return _PLAIN_POWER_HINT.sub("", message)


PLAIN_SLIP_NS = 1e5
"""A time target (ns) below which :func:`time_unit_hint` reads it as a number typed without its unit
(100 us: shorter than any training iteration)."""


MIN_PLAUSIBLE_ITERATION_NS = 1e3
"""An iteration time (ns) below which a time given to the library (``hieropt.run_figures``'s
``iteration_time_ns``) is refused as written in another unit: 1 us, a thousand times shorter than
the shortest training iteration of an LLM (ms to tens of s), so ``12.5`` meant 12.5 s (1.25e10 ns)
and would give a run of a few ns per iteration, its days, $ and MFU off by 1e9
(:func:`hieropt.io.arguments.iteration_time_argument`)."""

MIN_PLAUSIBLE_DEADLINE_NS = 3600e9
"""A run's wall-time deadline (ns) below which a deadline given to the library
(``hieropt.iteration_target_ns``'s and ``hieropt.size_cluster``'s ``deadline_ns``) is refused as
written in another unit: one hour; a training run takes days to months, so ``90`` meant 90 days
(7.776e15 ns) (:func:`hieropt.io.arguments.deadline_argument`). The command line's ``--deadline``
takes its unit (``90d``) and refuses a plain number."""


MAX_PLAUSIBLE_DEADLINE_NS = 10 * 365 * 86400e9
"""Ten years (ns): the longest wall time a reading of a deadline refused as written in another unit
is offered as (:func:`hieropt.io.arguments.deadline_argument`): ``7776000`` is 90 days in seconds,
not 21,290 years in days."""


def usd_cents(usd: float, up: bool) -> str:
    """``usd`` ($) to the cent with thousands separators, without the ``$`` (``9,555,552.00``),
    rounded exactly (decimal arithmetic on the double's exact value, at any magnitude): ``up``
    (toward +inf) for a floor such as the cheapest network's cost, so that a budget of the printed
    amount is never below it; else down (toward -inf), for a limit such as a budget, never shown
    above what was given. From $1e15 up, where a double no longer holds cents, the shortest decimal
    that reads back as the same double (``1e+300``, ``1,000,000,000,000,000.2``); a NaN or infinity
    as Python writes it (``inf``). Any real number is read as a double (a numpy scalar too)."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    usd = float(usd)
    if not abs(usd) < 1e15:
        return f"{usd:,}"
    cents = Decimal(usd).quantize(Decimal("0.01"), ROUND_CEILING if up else ROUND_FLOOR)
    return f"{cents:,.2f}"


RELATIVE_UNIT = "hours_weighted_ratio"
"""Unit of the time objective of a portfolio weighted by shares of the cluster's hours
(``[[workloads]] hours_share``): sum_w h_w T_w(B) / T_w*, each workload's iteration time over its
own optimum, weighted by its share h_w (summing to 1). Dimensionless: 1 when every workload runs at
its own optimum."""

RELATIVE_WORDS = "× the workloads' own optima, weighted by hours share"
"""How the text outputs name :data:`RELATIVE_UNIT` after a value (``1.0423 × ...``)."""

OBJECTIVE_UNITS = {
    "performance": "ns",
    "min_cost": "USD",
    "performance_per_cost": "ns*USD",
    "min_max_regret": "ratio",
    "min_run_cost": "USD",
}
"""Unit of each objective's value with plain weights."""


def objective_unit(objective: str, relative: bool, per: str | None = None) -> str:
    """The unit of ``objective``'s value: :data:`OBJECTIVE_UNITS`, with ns replaced by
    :data:`RELATIVE_UNIT` when ``relative`` (the instance's weights are shares of hours,
    :attr:`hieropt.spec.Instance.relative_time`); "" for an unknown objective. ``per``: what one
    min_run_cost value pays for, ``"run"`` (with a token budget) or ``"iteration"`` (without
    one), giving ``USD per run`` / ``USD per iteration`` as ``codesign`` writes them."""
    if objective == "min_run_cost" and per is not None:
        return f"USD per {per}"
    unit = OBJECTIVE_UNITS.get(objective, "")
    return unit.replace("ns", RELATIVE_UNIT) if relative else unit


def fmt_relative(value: float, digits: int = 6) -> str:
    """A value of :data:`RELATIVE_UNIT` as text: ``1.04231 × the workloads' own optima, weighted
    by hours share`` (``digits`` significant digits)."""
    return f"{value:.{digits}g} {RELATIVE_WORDS}"


def plural(n: int, noun: str, many: str | None = None) -> str:
    """A count with its noun in the number it takes: ``1 run``, ``0 runs``, ``3 values``
    (``many``: the plural when it is not ``noun + "s"``, e.g. ``plural(2, "NPU", "NPUs")``). The
    count is written with thousands separators (``3,072 NPUs``)."""
    return f"{n:,} {noun if n == 1 else many or noun + 's'}"


PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A plain ASCII decimal number (``100``, ``2.5``, ``.5``, ``1e3``): the numbers ``--bw`` and a
runs file's cells take. Python's ``float`` also reads ``1_00`` and other scripts' digits (``１00``,
``١٠٠``) as 100, and TOML reads ``1_00`` and ``0x64`` as 100, which a typo or a pasted value
should not silently become."""

NON_FINITE = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan", "+nan", "-nan")
"""The words ``float`` reads as an infinity or a NaN: read, then refused as not finite (with that
reason)."""


def plain_number(text: str) -> float | None:
    """``text`` (spaces around it ignored) as a float when it is a plain ASCII decimal number
    (:data:`PLAIN_NUMBER`) or one of the words of :data:`NON_FINITE` (read, for the caller to refuse
    as not finite with that reason), else None: the one reading of a number typed as text
    (``--bw``, a runs file's ``bw_gbps``, ``measured_ms`` and numeric cells)."""
    t = text.strip()
    if PLAIN_NUMBER.fullmatch(t) or t.lower() in NON_FINITE:
        return float(t)
    return None


def number_text_guess(text: str) -> tuple[str, str] | None:
    """The plain number a ``text`` that :func:`plain_number` refuses most likely stands for, and
    why, or None: ``1_000`` -> (``1000``, "plain ASCII digits, no '_' separators"); full-width or
    other scripts' digits -> (``105``, "ASCII digits"); ``105 000`` -> (``105000``, "no space
    inside a number")."""
    t = text.strip()
    ascii_ = unicodedata.normalize("NFKC", t)
    ascii_ = "".join(str(unicodedata.digit(c)) if c.isdigit() and not c.isascii() else c
                     for c in ascii_)
    if ascii_ != t and plain_number(ascii_) is not None:
        return ascii_, "ASCII digits"
    if "_" in t and plain_number(t.replace("_", "")) is not None:
        return t.replace("_", ""), "plain ASCII digits, no '_' separators"
    joined = re.sub(r"\s+", "", t)
    if re.search(r"\d\s+\d", t) and plain_number(joined) is not None:
        return joined, "no space inside a number"
    return None


def number_text_fix(text: str) -> str:
    """:func:`number_text_guess` of ``text`` as a fix, ``write 1000 (plain ASCII digits, no '_'
    separators)``, or ""."""
    guess = number_text_guess(text)
    return f"write {guess[0]} ({guess[1]})" if guess else ""


def fmt_num(value: float, spec: str) -> str:
    """``value`` formatted by the format ``spec`` (``".3%"``, ``",.1f"``), with a negative zero
    written as zero: a value that rounds to zero at that precision (``-1e-9`` with ``.3%``) prints
    ``0.000%``, not ``-0.000%``. One helper for every figure printed at a fixed precision that
    may be a tiny negative (a gap or a bubble by floating-point noise)."""
    text = format(value, spec)
    if text.startswith("-") and math.isfinite(value) and not any(
        c in "123456789" for c in text.split("e")[0]
    ):
        return text[1:]
    return text


def fmt_sig(value: float, digits: int = 4) -> str:
    """``value`` in plain decimal with thousands separators and no exponent: at least ``digits``
    significant digits, the integer part never rounded, trailing zeros dropped: ``40,230``
    (40,229.7), ``102,630``, ``1,180`` (1,180.4), ``458.2``, ``0.1234``; one format for every
    magnitude, where ``:,.4g`` switches to ``4.023e+04`` from 10,000 up. Zero, a NaN or an infinity
    as ``:g`` writes it."""
    if not math.isfinite(value) or value == 0:
        return f"{value:g}"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    if decimals <= 0:
        return f"{value:,.0f}"
    return f"{round(value, decimals):,.{decimals}f}".rstrip("0").rstrip(".")


def fmt_money(usd: float | None) -> str:
    """$ with a suffix: ``$1.23B``, ``$45.6M``, ``$789k``, ``$12``, three significant digits (the
    unit chosen after rounding: $999.7M is ``$1B``, not ``$1e+03M``)."""
    if usd is None:
        return "-"
    rounded = float(f"{usd:.3g}")
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(rounded) >= size:
            return (
                f"${usd / size:,.3g}{suffix}"
                if abs(usd) < 1000 * size
                else f"${usd / size:,.0f}{suffix}"
            )
    return f"${usd:,.0f}"
