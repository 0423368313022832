"""Shared formatters of every report (one home): numbers as the strings the tables, JSON and HTML
show."""

from __future__ import annotations

import math
from typing import Any


# --------------------------------------------------------------------------------------- formatting
def ms_text(ns: float, decimals: int = 4) -> str:
    """``ns`` as ms with ``decimals`` decimals and thousands separators, shifted exactly (decimal
    arithmetic on the double's exact value, as ``f"{ns:,.1f}"`` prints it): the ms and ns forms of
    one time show the same digits at any magnitude (``ns / 1e6`` rounds to another double, whose
    digits differ from the 16th on). A NaN or infinity as Python writes it."""
    from decimal import Decimal

    if not math.isfinite(ns):
        return f"{ns}"
    return f"{Decimal(ns).scaleb(-6):,.{decimals}f}"


def fmt_ms(ns: float | None) -> str:
    """ns as ms with 4 decimals and thousands separators (:func:`ms_text`)."""
    return "-" if ns is None else ms_text(ns, 4)


def fmt_time(value: float | None, relative: bool) -> str:
    """A weighted time: ns as ms (:func:`fmt_ms`), or with ``relative`` (workloads weighted by
    shares of hours, :data:`hieropt.units.RELATIVE_UNIT`) the ratio with 6 decimals."""
    if value is None or not relative:
        return fmt_ms(value)
    return f"{value:,.6f}"


def time_header(relative: bool) -> str:
    """The unit of :func:`fmt_time`'s column: ``ms``, or ``ratio`` (to the workloads' own optima,
    hour-weighted)."""
    return "ratio" if relative else "ms"


def fmt_usd(usd: float | None) -> str:
    """$ rounded to the dollar."""
    return "-" if usd is None else f"{usd:,.0f}"


def fmt_money(usd: float) -> str:
    """$ with its sign: to the cent below $1,000 (``$0.28``, so that a small amount is not
    ``$0``), else to the dollar (``$13,661,707``); both rounded to nearest."""
    return f"${usd:,.2f}" if abs(usd) < 999.995 else f"${usd:,.0f}"


def fmt_usd_per_ms(usd: float) -> str:
    """A front's slope in $ per ms of iteration time: whole dollars with separators from $1,000
    up, else four significant digits (a budget barely above the cheapest network binds at
    $0.1712 per ms: not ``0``)."""
    return f"{usd:,.0f}" if abs(usd) >= 1000 else f"{usd:.4g}"


def fmt_product(x: float | None) -> str:
    """time x cost, ns x $, 7 significant digits."""
    return "-" if x is None else f"{x:.6e}"


def fmt_gap(pct: float | None) -> str:
    """A gap in % with its sign (scientific below 0.001 %)."""
    if pct is None:
        return "-"
    return f"{pct:+.1e}%" if abs(pct) < 1e-3 else f"{pct:+,.3f}%"


def fmt_ratio(x: float | None) -> str:
    """A ratio such as a speed-up, e.g. ``1.0729x``."""
    return "-" if x is None else f"{x:,.4f}x"


def fmt_bw(x: float) -> str:
    """GB/s with 3 decimals."""
    return f"{x:,.3f}"


def fmt_util(u: float) -> str:
    """A utilisation as a percentage with 1 decimal."""
    return f"{u:.1%}"


def gap_or_none(gap: float | None) -> float | None:
    """A relative gap for JSON: None where it is not a finite number (no proven bound, e.g. a LIMIT
    stop), as in :meth:`hieropt.result.Solution.to_dict`; JSON has no infinity."""
    return None if gap is None or not math.isfinite(gap) else float(gap)


def floats(a: Any) -> list[float] | None:
    """An array (or any iterable of numbers) as a JSON-ready list of floats; None stays None."""
    return None if a is None else [float(x) for x in a]


def gap_words(gap: float | None) -> str:
    """A solve's proven relative gap (value - bound) / value as ``solve`` prints it:
    ``relative gap 1.00e-08 (proven)``; ``relative gap unknown (no proven bound)`` where it is not
    a finite number (None or infinity: a LIMIT stop before any bound)."""
    if gap is None or not math.isfinite(gap):
        return "relative gap unknown (no proven bound)"
    return f"relative gap {gap:.2e} (proven)"


def status_words(status: str | None, gap: float | None) -> str:
    """An optimum's status and proven gap in ``solve``'s words, on one line:
    ``status: optimal; relative gap 1.00e-08 (proven)`` (``status``: a
    :class:`hieropt.result.Status` value, ``optimal`` or ``limit``; None: unknown)."""
    return f"status: {status or 'unknown'}; {gap_words(gap)}"
