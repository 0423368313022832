"""The ranges of numbers the LP represents (one home): design-row coefficients and levels, bounds,
workload weights, and how far a ceiling of the design may lie below a floor. The spec models check
them where the input is validated (:class:`hieropt.spec.LinearConstraint`,
:class:`hieropt.spec.Bound`, :class:`hieropt.spec.Instance`,
:func:`hieropt.spec.constraint_text.parse_constraint`), so a value outside them is a one-line input
error naming the field, the value and the range, never a solver failure, a numpy warning or a false
"infeasible".
"""

from __future__ import annotations

import re
from typing import Any

from ..cache import Same, current
from ..units import GB, MAX_PLAUSIBLE_BW_GBPS

Rows = tuple[Any, ...]
"""Design rows: :class:`hieropt.spec.LinearConstraint` values (not imported: that module imports
this one)."""
Bounds = tuple[Any, ...] | None
"""Per-dimension bounds: :class:`hieropt.spec.Bound` values, or None."""

PRICE_RANGE = (1e-12, 1e12)
"""Prices a cost class may state, $ per GB/s: far beyond any real part either way, and inside the
range where costs, their reciprocals and their products with times stay finite floating-point
numbers (a price of 1e-320 overflowed)."""


BW_RANGE_GBPS = (1e-100, 1e100)
"""Bandwidth values (GB/s per NPU) a design row or bound may state, when not 0: a bound, and a row's
level |rhs| / max_d |a_d|. The LP's units follow the data (:mod:`hieropt.formulation.scale`), so any
level inside solves alike; outside it collective times (bytes / bandwidth, bytes up to ~1e20) and
costs overflow or underflow a 64-bit float (``bw[1] <= 1e-300`` leaked numpy overflow warnings and
ended in "HiGHS rejected the LP's rows")."""

MIN_NETWORK_LEVEL_GBPS = 1e-9
"""The least bandwidth (GB/s per NPU: 1e-9 is one byte per second) to which a design row may limit
every dimension at once (``sum(bw) == 1e-50``): below it no network trains an iteration within
the age of the universe, so the row is refused as a value in the wrong unit rather than solved to
a time of 55 digits. A row that limits some dimensions only (``bw[1] <= 1e-11``) is a choice to
starve them and stays within :data:`BW_RANGE_GBPS`."""

COEFFICIENT_RANGE = (1e-100, 1e100)
"""Magnitudes a design row's non-zero coefficient may have: its products with bandwidths in
:data:`BW_RANGE_GBPS` stay finite floating-point numbers."""

MAX_FLOOR_OVER_CEILING = 1e14
"""The largest factor by which a floor of the design (a ``>=`` or ``==`` row, a lower bound) may
exceed a ceiling (a ``<=`` or ``==`` row, an upper bound), e.g. ``sum(bw) == 500`` with ``bw[1] <=
1e-20``. The LP's bandwidth unit is the tightest ceiling R
(:func:`hieropt.formulation.scale.choose_scale`; every other dimension's unit lies within
:data:`hieropt.formulation.scale.SPREAD` = 1e-6 of it), so a floor F becomes a row bound up to F /
(1e-6 R); HiGHS takes every bound of 1e20 or more as infinite (``kHighsInf``), and a row or column
whose lower bound is infinite is rejected. F / R <= 1e14 keeps every scaled bound below 1e20 (a
dimension 1e14 times slower than the design's floor trains an iteration in longer than the age of
the universe anyway)."""

WEIGHT_RANGE = (1e-100, 1e100)
"""Weights a workload may have in the objective (their ratios matter; each is multiplied into bytes
and times, which overflowed a 64-bit float at 1e300 and gave a false "infeasible")."""


def row_range_problem(coefficients: tuple[float, ...], rhs: float,
                      sense: str | None = None) -> str | None:
    """Why the design row ``coefficients . bw  (sense)  rhs`` (GB/s per NPU) cannot be represented
    in the LP, as ``"problem; fix: fix"`` (the spec's message convention), or None: a non-zero
    coefficient outside :data:`COEFFICIENT_RANGE`, a non-zero level |rhs| / max|a| outside
    :data:`BW_RANGE_GBPS`, or a ceiling on every dimension below :data:`MIN_NETWORK_LEVEL_GBPS`
    (``sense``: ``<=``, ``>=`` or ``==``; None: taken as a ceiling)."""
    lo, hi = COEFFICIENT_RANGE
    for d, a in enumerate(coefficients):
        if a != 0 and not lo <= abs(a) <= hi:
            return (
                f"the coefficient of bw[{d}] is {a:g}, outside the accepted magnitudes "
                f"{lo:g} .. {hi:g}; fix: "
                "scale the row (divide both sides by the same number)"
            )
    top = max(abs(a) for a in coefficients) if coefficients else 0.0
    if rhs != 0 and top > 0:
        level = abs(rhs) / top
        lo, hi = BW_RANGE_GBPS
        if not lo <= level <= hi:
            return (
                f"the right-hand side {rhs:g} asks for a bandwidth of {level:g} GB/s per "
                "NPU, outside the "
                f"accepted {lo:g} .. {hi:g} GB/s; fix: give the limit in GB/s per NPU (or "
                "drop the row)"
            )
        if level < MIN_NETWORK_LEVEL_GBPS and _limits_every_dimension(coefficients, rhs, sense):
            return (
                f"the right-hand side {rhs:g} limits every dimension to {level:g} GB/s per NPU, "
                f"below {MIN_NETWORK_LEVEL_GBPS:g} GB/s (one byte per second): likely the wrong "
                "unit; fix: give the limit in GB/s per NPU (500 GB/s per NPU is "
                "'sum(bw) == 500', not 500e-9)"
            )
    return None


_NUMBER_RE = re.compile(r"(?<![\w.\[:])(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?![\w.\]])")
"""A number written in a constraint's text (not an index or a slice bound: those stand in
brackets)."""


def row_level_gbps(coefficients: tuple[float, ...], rhs: float, sense: str) -> float | None:
    """The bandwidth per NPU (GB/s) the design row ``coefficients . bw  sense  rhs`` states for a
    dimension, when its coefficients share one sign and its right-hand side has that sign too: a
    floor (``>=``, ``==``) asks for at least rhs / sum|a| on some dimension, a ceiling (``<=``)
    allows up to rhs / max|a| on one; None for a row of mixed signs (``bw[0] >= bw[1]``)."""
    a = [x for x in coefficients if x != 0]
    if not a or rhs == 0 or min(a) < 0 < max(a):
        return None
    sign = 1.0 if a[0] > 0 else -1.0
    if sign * rhs <= 0:
        return None
    sense = sense if sign > 0 else {"<=": ">=", ">=": "<=", "==": "=="}[sense]
    if sense == "<=":
        return sign * rhs / max(abs(x) for x in a)
    return sign * rhs / sum(abs(x) for x in a)


def bytes_per_second_row(coefficients: tuple[float, ...], rhs: float, sense: str,
                         text: str) -> tuple[str, str] | None:
    """(problem, fix) when the design row ``text`` (``coefficients . bw  sense  rhs``) states a
    bandwidth per NPU (:func:`row_level_gbps`) above
    :data:`hieropt.units.MAX_PLAUSIBLE_BW_GBPS` (1e6 GB/s, a thousand times the fastest
    scale-up link): a limit written in bytes/s (``sum(bw) == 500e9`` meant as 500 GB/s), refused
    before solving rather than solved to an implausible optimum; the fix rewrites every number
    above that threshold / 1e9. None otherwise."""
    level = row_level_gbps(coefficients, rhs, sense)
    if level is None or level <= MAX_PLAUSIBLE_BW_GBPS:
        return None
    what = "allows up to" if sense == "<=" or (rhs < 0 and sense == ">=") else "asks for at least"
    big = [m.group() for m in _NUMBER_RE.finditer(text) if float(m.group()) > MAX_PLAUSIBLE_BW_GBPS]
    shown = (big[0] if big else f"{abs(rhs):g}")
    gbps = f"{float(shown) / GB:g}"
    rewrite = _NUMBER_RE.sub(
        lambda m: f"{float(m.group()) / GB:g}"
        if float(m.group()) > MAX_PLAUSIBLE_BW_GBPS else m.group(),
        " ".join(text.split()),
    )
    return (
        f"it {what} {level:.4g} GB/s per NPU on a dimension, above {MAX_PLAUSIBLE_BW_GBPS:g} "
        "GB/s per NPU (a thousand times the fastest scale-up link): looks like bytes/s",
        f"give bandwidths in GB/s per NPU (1 GB = 1e9 bytes): {shown} bytes/s = {gbps} GB/s: "
        f"write {rewrite}",
    )


def bytes_per_second_bound(value: float | None) -> tuple[str, str] | None:
    """(problem, fix) when a bound ``value`` (GB/s per NPU) is above
    :data:`hieropt.units.MAX_PLAUSIBLE_BW_GBPS`: a bound written in bytes/s (``upper_gbps =
    450e9`` meant as 450 GB/s), refused as :func:`bytes_per_second_row` refuses a row; None
    otherwise."""
    if value is None or value <= MAX_PLAUSIBLE_BW_GBPS:
        return None
    return (
        f"{value:g} GB/s per NPU is above {MAX_PLAUSIBLE_BW_GBPS:g} GB/s per NPU (a thousand times "
        "the fastest scale-up link): looks like bytes/s",
        f"give GB/s per NPU (1 GB = 1e9 bytes): {value:g} bytes/s = {value / GB:g} GB/s",
    )


def _limits_every_dimension(coefficients: tuple[float, ...], rhs: float,
                            sense: str | None) -> bool:
    """Whether the row ``coefficients . bw (sense) rhs`` is a ceiling on every dimension: every
    coefficient non-zero and of the sign of ``rhs``, and the sense ``<=`` or ``==`` once both
    sides are made positive (None: the sense is not known, taken as a ceiling)."""
    if not coefficients or rhs == 0:
        return False
    sign = 1.0 if rhs > 0 else -1.0
    if not all(a * sign > 0 for a in coefficients):
        return False
    if sense is None:
        return True
    return (sense if sign > 0 else {"<=": ">=", ">=": "<=", "==": "=="}.get(sense)) in ("<=", "==")


def _levels(constraints: Rows, bounds: Bounds) -> tuple[list, list]:
    """(floors, ceilings): (GB/s per NPU, what states it) of the rows whose coefficients share one
    sign and of the bounds; a floor of a row is its least bandwidth level rhs / sum|a|, a ceiling
    rhs / max|a|."""
    floors, ceilings = [], []
    for i, c in enumerate(constraints):
        a = [x for x in c.coefficients if x != 0]
        if not a or c.rhs == 0 or (min(a) < 0 < max(a)):
            continue
        sign = 1.0 if a[0] > 0 else -1.0  # (-bw[0] <= -5 is the floor bw[0] >= 5)
        rhs = sign * c.rhs
        sense = c.sense if sign > 0 else {"<=": ">=", ">=": "<=", "==": "=="}[c.sense]
        if rhs <= 0:
            continue
        label = f"constraints[{i}] '{c.text}'" if c.text else f"constraints[{i}]"
        if sense in (">=", "=="):
            floors.append((rhs / sum(abs(x) for x in a), label))
        if sense in ("<=", "=="):
            ceilings.append((rhs / max(abs(x) for x in a), label))
    for d, b in enumerate(bounds or ()):
        if b.lower_gbps > 0:
            floors.append((b.lower_gbps, f"bounds[{d}].lower_gbps"))
        if b.upper_gbps is not None:
            ceilings.append((b.upper_gbps, f"bounds[{d}].upper_gbps"))
    return floors, ceilings


def design_range_problem(constraints: Rows, bounds: Bounds) -> str | None:
    """Why the design rows and bounds together cannot be represented in the LP, as ``"field:
    problem; fix: fix"`` (the spec's message convention), or None: a floor more than
    :data:`MAX_FLOOR_OVER_CEILING` times a ceiling."""
    floors, ceilings = _levels(constraints, bounds)
    if not floors or not ceilings:
        return None
    floor, f_label = max(floors)
    ceiling, c_label = min(ceilings)
    if floor <= MAX_FLOOR_OVER_CEILING * ceiling:
        return None
    return (
        f"{c_label}: its limit of {ceiling:g} GB/s per NPU is {floor / ceiling:.3g} times "
        "below the "
        f"{floor:g} GB/s that {f_label} asks for, beyond the {MAX_FLOOR_OVER_CEILING:g} the "
        "LP represents (HiGHS "
        "takes bounds of 1e20 or more in its units as infinite); fix: give both in GB/s per "
        "NPU, or remove the "
        f"dimension the limit starves"
    )

def check_row(row: Any) -> Any:
    """``row`` itself (the validator of :class:`hieropt.spec.LinearConstraint`).

    Raises:
        ValueError: ``"problem; fix: fix"`` of :func:`row_range_problem`.
    """
    problem = row_range_problem(row.coefficients, row.rhs, row.sense)
    if problem is not None:
        raise ValueError(problem)
    return row


def check_bound(value: float | None) -> float | None:
    """``value`` (a bound in GB/s per NPU; the field validator of :class:`hieropt.spec.Bound`).

    Raises:
        ValueError: a value other than 0 and None outside :data:`BW_RANGE_GBPS`.
    """
    lo, hi = BW_RANGE_GBPS
    if value is not None and value != 0 and not lo <= value <= hi:
        raise ValueError(
            f"{value:g} GB/s per NPU is outside the accepted {lo:g} .. {hi:g}; fix: give "
            "the bound in "
            "GB/s per NPU (0, or no upper bound, for none)"
        )
    return value


def check_design(constraints: Rows, bounds: Bounds) -> None:
    """Check the design rows and bounds of an instance together (:func:`design_range_problem`), once
    per pair of objects in the active cache (frozen: they pass again; a sweep's candidates share one
    design).

    Raises:
        ValueError: ``"field: problem; fix: fix"`` of :func:`design_range_problem`.
    """
    if not constraints and not bounds:
        return
    passed = current().table("design checked", 4096)
    key = (Same(constraints), Same(bounds))
    if passed.get(key) is None:
        problem = design_range_problem(constraints, bounds)
        if problem is not None:
            raise ValueError(problem)
        passed.put(key, True)


__all__ = [
    "BW_RANGE_GBPS",
    "COEFFICIENT_RANGE",
    "MAX_FLOOR_OVER_CEILING",
    "PRICE_RANGE",
    "WEIGHT_RANGE",
    "check_bound",
    "check_design",
    "check_row",
    "design_range_problem",
    "row_range_problem",
]
