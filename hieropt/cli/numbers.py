"""Numbers typed on the command line: ``--bw`` lists, the positive limits (``--budget 10M``,
``--max-time 1.3s``, ``--max-power-w 500kW``), each refused with a one-line InputError naming the
flag. Imports only the standard library (and :mod:`hieropt.units`) at load time."""

from __future__ import annotations

import math
import re

from ..units import NON_FINITE, PLAIN_NUMBER, number_text_guess, plain_number


def parse_bw(text: str, n_dims: int) -> list[float]:
    """``--bw`` text (comma-separated GB/s per NPU, plain ASCII decimal numbers) as one float per
    dimension.

    Raises:
        InputError: (exit 2) when empty, a value that is not a plain decimal number, the wrong
            count, or a value that is negative, not a number or not finite (``1e400`` overflows).
    """
    from ..errors import InputError, number_problem

    if not text.strip():
        raise InputError(
            "--bw", None, "no bandwidths given", f"give {n_dims} comma-separated GB/s values"
        )
    words = [w.strip() for w in text.split(",")]
    for d, w in enumerate(words):
        if plain_number(w) is None:
            where = f"bw[{d}]" if len(words) > 1 else None
            from ..spec.constraint_parser import number_with_unit

            if (unit := number_with_unit(w)) is not None:
                raise bw_unit_error(words, where, *unit)
            raise InputError(
                "--bw",
                where,
                f"'{text}' is not a comma-separated list of numbers ({w!r} is not a "
                "plain decimal number)",
                _plain_list_fix(words),
            )
    values = [float(w) for w in words]
    if len(values) != n_dims:
        raise InputError(
            "--bw",
            None,
            f"{len(values)} value{'s' if len(values) != 1 else ''} given but the network "
            f"has {n_dims} dimensions",
            f"give {n_dims} comma-separated GB/s values, one per dimension",
        )
    for d, v in enumerate(values):
        if not math.isfinite(v) or v < 0:
            raise InputError("--bw", f"bw[{d}]", number_problem(v, "a finite number >= 0"),
                             "give a bandwidth >= 0 GB/s (> 0 on a dimension that carries traffic)")
    return values


def _plain_list_fix(words: list[str]) -> str:
    """The fix of a ``--bw`` list with a word :func:`hieropt.units.plain_number` refuses: the
    whole list in plain numbers when every such word has one (:func:`hieropt.units.
    number_text_guess`: ``1_00`` -> 100), else an example."""
    guesses = [(w, "") if plain_number(w) is not None else number_text_guess(w) for w in words]
    if all(guesses):
        why = next(g[1] for g in guesses if g and g[1])
        return f"write --bw {','.join(g[0] for g in guesses if g)} ({why})"
    return "write e.g. --bw 250,125,75,50 (plain ASCII digits, no '_' separators)"


def read_bw(text: str, inst) -> list[float]:
    """``--bw`` text of instance ``inst`` as GB/s per NPU, one per dimension: :func:`parse_bw`,
    then a value above :data:`hieropt.units.MAX_PLAUSIBLE_BW_GBPS` (1e6 GB/s per NPU) refused as
    bytes/s (:func:`check_bw_bytes_per_second`) unless the values meet the instance's own design
    rows and bounds (a design ``solve`` could answer: evaluated with a note). The one reading of
    every command taking ``--bw`` (``evaluate``, ``export``, ``simulate``), so they refuse the same
    values.

    Raises:
        InputError: (exit 2) as :func:`parse_bw` and :func:`check_bw_bytes_per_second`.
    """
    values = parse_bw(text, inst.network.n_dims)
    check_bw_bytes_per_second(inst, values)
    return values


def check_bw_units(inst, values: list[float]) -> None:
    """Refuse ``--bw`` ``values`` (GB/s per NPU, one per dimension of ``inst``) that look like a
    unit slip for a workload's NPU whose scale-up bandwidth is known: the datasheet's
    bidirectional figure or Gb/s (2 x the scale-up bandwidth or more), or Gb/s on the outermost
    (scale-out) dimension of two or more (above 200 GB/s per NPU and other than the scale-up
    bandwidth): the checks of a runs file's ``bw_gbps``
    (:func:`hieropt.workloads.llm.links.check_bandwidths`). ``evaluate`` is a what-if at given
    numbers, so a slip there is bad input; a solved design above the NPU's limits gets a caveat
    instead, and so do ``values`` that meet the instance's design rows and bounds to 1e-3 of their
    size (the instance's own design space: ``solve``'s answer, printed to a few digits, evaluated
    again; a unit slip misses them by a factor of 8). Outside that design space, a value above
    :data:`hieropt.units.MAX_PLAUSIBLE_BW_GBPS` (1e6 GB/s per NPU, a thousand times the fastest
    scale-up link) is refused as bytes/s (``--bw 300e9`` for 300 GB/s:
    :func:`check_bw_bytes_per_second`, as :func:`read_bw` does for every command taking
    ``--bw``), as a design row or a bound above it is; 1e6 itself is the what-if of a dimension
    with no limit (``--bw 1e6,1e6``: communication all but free), not
    checked against the NPU's scale-up bandwidth (a solved design above it gets the caveats).

    Raises:
        InputError: (exit 2) ``--bw``, the dimension, the conversion and the values to write.
    """
    from ..model.bandwidths import check_bw_for_npus

    check_bw_bytes_per_second(inst, values)
    check_bw_for_npus(inst, values, "--bw", ",")


def check_bw_bytes_per_second(inst, values: list[float]) -> None:
    """Refuse ``--bw`` ``values`` (GB/s per NPU, one per dimension of ``inst``) of which one is
    above :data:`hieropt.units.MAX_PLAUSIBLE_BW_GBPS` (1e6 GB/s per NPU) as bytes/s written for
    GB/s (``--bw 300e9,50`` for 300 GB/s) unless they meet the instance's design rows and bounds:
    :func:`hieropt.model.bandwidths.check_bw_in_gbps`, the library's check of ``bw_gbps``.

    Raises:
        InputError: (exit 2) ``--bw``, the first such dimension, its value in GB/s and
            the whole list to write (every value above 1e6 divided by 1e9).
    """
    from ..model.bandwidths import check_bw_in_gbps

    check_bw_in_gbps(inst, values, "--bw", lambda v: "--bw " + ",".join(f"{x:g}" for x in v))


def bw_unit_error(words: list[str], where: str | None, number: str, unit: str,
                  gbps: float) -> Exception:
    """The InputError of a ``--bw`` word ``number`` written with ``unit`` (``2000Gb/s``; ``where``:
    its ``bw[d]``), in the words of a constraint's (:func:`hieropt.spec.constraint_parser.
    unit_problem`): ``--bw`` takes plain GB/s per NPU; the fix is the whole list in GB/s when every
    word of ``words`` converts."""
    from ..errors import InputError
    from ..spec.constraint_parser import in_gbps_words, number_with_unit, unit_problem

    def plain(w: str) -> str | None:
        if PLAIN_NUMBER.fullmatch(w):
            return w
        u = number_with_unit(w)
        return None if u is None else f"{u[2]:.10g}"

    alone = [plain(w) for w in words]
    fix = (f"write --bw {','.join(alone)}" if all(alone)
           else f"write the number alone: {gbps:.10g}")
    return InputError("--bw", where, unit_problem(number, unit, "--bw values"),
                      f"{fix} ({in_gbps_words(number, unit, gbps)})")


def check_positive(value: float | None, flag: str) -> None:
    """Refuse a limit ``value`` given to ``flag`` that is not a finite number > 0 (``None``: not
    given, passes).

    Raises:
        InputError: naming ``flag``, saying whether the value is negative or zero, not a number or
            not finite.
    """
    from ..errors import InputError, number_problem

    if value is not None and not (math.isfinite(value) and value > 0):
        raise InputError(flag, None, number_problem(value), "give a finite value > 0")


TIME_UNITS_NS = {
    "": 1.0,
    "ns": 1.0,
    "us": 1e3,
    "µs": 1e3,
    "ms": 1e6,
    "s": 1e9,
    "min": 60e9,
    "h": 3600e9,
    "d": 86400e9,
}
"""Suffixes a time on the command line may carry, and ns per unit (``1.3s``, ``1300ms``, ``90d``;
none: ns)."""
MONEY_SUFFIXES = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
"""Suffixes of money and counts (``10M`` = 1e7, ``2.5B`` = 2.5e9, ``15T`` = 1.5e13); a leading ``$``
is allowed."""
POWER_UNITS_W = {"": 1.0, "W": 1.0, "kW": 1e3, "MW": 1e6}
"""Suffixes a power on the command line may carry, and W per unit (``500kW``, ``1.2MW``; none:
W)."""
_SUFFIXED = re.compile(r"\s*\$?\s*(" + PLAIN_NUMBER.pattern + r")\s*([A-Za-zµ]*)\s*")


def _split(text: str, flag: str, fix: str) -> tuple[float, str]:
    """(number, suffix) of ``text``; InputError naming ``flag`` when it is no plain number with a
    suffix."""
    from ..errors import InputError

    if text.strip().lower() in NON_FINITE:
        return float(text), ""  # (refused as not finite by the caller, with that reason)
    m = _SUFFIXED.fullmatch(text)
    if m is None:
        raise InputError(flag, None, f"{text!r} is not a number with an optional unit", fix)
    return float(m[1]), m[2]


def _scaled(text: str, flag: str, units: dict[str, float], kind: str, fix: str) -> float:
    """``text`` (a number with one of ``units``' suffixes) times that suffix's factor.

    Raises:
        InputError: a suffix not in ``units`` (named as ``kind``), or a value that is not a finite
            number > 0 (said in the words typed: ``-1s is negative``, not in ns); ``fix`` is the
            error's hint.
    """
    from ..errors import InputError

    value, unit = _split(text, flag, fix)
    if unit not in units:
        raise InputError(flag, None, f"unknown {kind} {unit!r} in {text!r}", fix)
    if value <= 0:  # (in the words typed, '-1s', not in the base unit, '-1e+09')
        raise InputError(flag, None, f"{text.strip()!r} is {'zero' if value == 0 else 'negative'} "
                         "(want a value > 0)", fix)
    out = value * units[unit]
    check_positive(out, flag)
    return out


def parse_time_ns(text: str | None, flag: str, fix: str | None = None) -> float | None:
    """A time given to ``flag`` as ns: ``1.3s``, ``1300ms``, ``90d``, ``2h``; a plain number is ns.
    ``fix``: the error's hint (None: an iteration-time target, ``1.3s``, which must be below a day,
    :data:`ITERATION_DAY_NS`).

    Raises:
        InputError: an unknown unit, a value that is not a finite number > 0, or an iteration-time
            target of a day or more (a run's wall time: use ``--deadline``).
    """
    if text is None:
        return None
    if fix is not None:
        return _scaled(text, flag, TIME_UNITS_NS, "time unit", fix)
    fix = (
        f"write e.g. {flag} 1.3s (units: {', '.join(u for u in TIME_UNITS_NS if u)}; a plain "
        "number is ns)"
    )
    out = _scaled(text, flag, TIME_UNITS_NS, "time unit", fix)
    if out >= ITERATION_DAY_NS:  # (a run's wall time typed as the iteration's: '--max-time 20d')
        from ..errors import InputError

        days = out / ITERATION_DAY_NS
        raise InputError(
            flag, None,
            f"{text.strip()!r} is {days:,.4g} day{'' if days == 1 else 's'} per iteration, and no "
            "training iteration takes a day: it looks like the run's wall time",
            f"give the time of one iteration (e.g. {flag} 1.3s), or the run's deadline as "
            "--deadline with its token budget (solve, codesign)",
        )
    return out


ITERATION_DAY_NS = 86400e9
"""An iteration-time target of a day (ns) or more is refused by :func:`parse_time_ns`: no
training iteration takes one (Llama 3 405B's takes 6.7 s on 16,384 H100), so it is a run's wall
time typed as the iteration's (``--max-time 20d``)."""


def check_deadline_target(text: str, deadline_ns: float, target_ns: float) -> None:
    """Refuse a ``--deadline`` (``text``, ``deadline_ns`` ns of wall time) whose iteration-time
    target for the run's tokens, ``target_ns``, is a day or more (:data:`ITERATION_DAY_NS`), as
    ``--max-time`` refuses such a target: no training iteration takes a day, so the deadline is a
    slip (``1e8d``), and a target that loose says nothing about the design.

    Raises:
        InputError: ``--deadline``, its days per iteration and the largest deadline that makes
            sense (one day per iteration).
    """
    from ..errors import InputError

    if target_ns < ITERATION_DAY_NS:
        return
    iterations, days = deadline_ns / target_ns, target_ns / ITERATION_DAY_NS
    raise InputError(
        "--deadline", None,
        f"{text.strip()!r} for {iterations:,.0f} iterations is {days:,.4g} "
        f"day{'' if days == 1 else 's'} per iteration, and no training iteration takes a day",
        f"check the deadline's unit (d, h, min, s): give less than {iterations:,.0f} days "
        f"(one day per iteration), e.g. --deadline 90d")


TIMEOUT_UNITS_S = {"": 1.0, "s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
"""Suffixes a wall-clock time limit may carry (``--timeout 2h``), and seconds per unit (none: s)."""


def parse_seconds(text: str, flag: str, least: float = 1.0) -> float:
    """A wall-clock time limit given to ``flag`` as seconds: ``2h``, ``90min``, ``3600s``; a plain
    number is seconds (the unit such a limit has always taken), at least ``least`` s.

    Raises:
        InputError: an unknown unit, a value that is not a finite number > 0 (in the words typed),
            or one below ``least`` s.
    """
    from ..errors import InputError

    fix = (f"write e.g. {flag} 2h or {flag} 7200 (units: "
           f"{', '.join(u for u in TIMEOUT_UNITS_S if u)}; a plain number is s)")
    out = _scaled(text, flag, TIMEOUT_UNITS_S, "time unit", fix)
    if out < least:
        raise InputError(flag, None, f"{text.strip()!r} is {out:g} s, below {least:g} s", fix)
    return out


def parse_deadline_ns(text: str | None, flag: str = "--deadline") -> float | None:
    """A run's wall-time deadline given to ``flag`` as ns: ``90d``, ``2160h``. Unlike an iteration
    time it needs its unit: a plain ``150`` would be 150 ns for a whole run, which is always a
    slip for days.

    Raises:
        InputError: a plain number ("did you mean 150d?"), an unknown unit, or a value that is not
            a finite number > 0.
    """
    if text is None:
        return None
    from ..errors import InputError

    t = text.strip()
    units = "units: d, h, min, s; the unit is required"
    if PLAIN_NUMBER.fullmatch(t):
        raise InputError(
            flag, None, f"{t} has no unit (a run's wall time, not ns)",
            f"did you mean {t}d? write e.g. {flag} 90d or {flag} 2160h ({units})",
        )
    m = _SUFFIXED.fullmatch(t)
    if m is not None and m[2] in ("w", "wk", "week", "weeks"):  # (weeks: the likeliest other unit)
        days = f"{float(m[1]) * 7:g}d"
        return parse_time_ns(
            t, flag, f"for {m[1]} weeks write {flag} {days} ({units})")
    return parse_time_ns(text, flag, f"write e.g. {flag} 90d or {flag} 2160h ({units})")


def parse_amount(text: str | None, flag: str, what: str = "$") -> float | None:
    """Money (or a count) given to ``flag``: ``10M``, ``$2.5B``, ``15T``, ``1e7``, ``750k``.

    Raises:
        InputError: an unknown suffix, or a value that is not a finite number > 0.
    """
    if text is None:
        return None
    fix = f"write e.g. {flag} 10M ({what}; suffixes k, M, B = 1e9, T = 1e12)"
    return _scaled(text, flag, MONEY_SUFFIXES, "suffix", fix)


def parse_power_w(text: str | None, flag: str) -> float | None:
    """A power given to ``flag`` as W: ``500kW``, ``1.2MW``, ``5e5W``; a plain number is W.

    Raises:
        InputError: an unknown unit (``500kw`` or ``500mW`` are named: the units are W, kW, MW), or
            a value that is not a finite number > 0.
    """
    if text is None:
        return None
    fix = f"write e.g. {flag} 500kW (units: W, kW, MW; a plain number is W)"
    return _scaled(text, flag, POWER_UNITS_W, "power unit", fix)


def parse_tokens(text: str | None, flag: str = "--tokens") -> float | None:
    """A run's token budget given to ``flag``: ``15T``, ``300B``, ``15e12`` (:func:`parse_amount`).

    Raises:
        InputError: an unknown suffix, not a finite number > 0, or a budget below
            :data:`hieropt.io.cluster.MIN_RUN_TOKENS` (a unit slip: ``--tokens 15`` for 15T) or
            above :data:`hieropt.io.cluster.MAX_RUN_TOKENS` (absurd: ``--tokens 1e30``).
    """
    value = parse_amount(text, flag, "tokens")
    if value is None:
        return None
    from ..errors import InputError
    from ..io.cluster import tokens_excess_problem, tokens_unit_problem

    problem = tokens_unit_problem(value)
    if problem is not None:
        t = text.strip()
        guess = f"did you mean {t}B or {t}T? " if PLAIN_NUMBER.fullmatch(t) else ""
        raise InputError(
            flag, None, problem,
            f"{guess}write e.g. {flag} 15T (suffixes k, M, B = 1e9, T = 1e12)",
        )
    problem = tokens_excess_problem(value)
    if problem is not None:
        raise InputError(flag, None, problem,
                         f"give the run's token budget, at most 1000T, e.g. {flag} 15T")
    return value


def with_run_tokens(inst, tokens: float | None, flag: str = "--tokens"):
    """``inst`` (a :class:`hieropt.spec.Instance`) with the run's token budget ``tokens`` (from
    :func:`parse_tokens`; None: ``inst`` as it is), checked against one iteration's tokens as the
    instance file's ``tokens`` is (:func:`hieropt.spec.training.tokens_problem`).

    Raises:
        InputError: a budget below one iteration's tokens, naming ``flag`` and them.
    """
    if tokens is None:
        return inst
    from ..errors import InputError
    from ..spec.training import tokens_problem

    training = None if inst.more_workloads else inst.workload.training
    if (problem := tokens_problem(tokens, training)) is not None:
        raise InputError(flag, None, problem,
                         "give the run's token budget, at least one iteration's, e.g. "
                         f"{flag} 15T")
    return inst.model_copy(update={"tokens": tokens})


def parse_percent(text: str | None, flag: str) -> float | None:
    """A slack given to ``flag`` in percent, ``5%`` or ``5`` alike: the fraction (0.05), or None
    for ``0`` (off) or None.

    Raises:
        InputError: not a number (with an optional %); not below 100 %; or a plain number between
            0 and 1 (``0.5``: a fraction or half a percent?), which must be written ``50`` or
            ``0.5%``.
    """
    if text is None:
        return None
    from ..errors import InputError

    fix = f"write e.g. {flag} 1% or {flag} 1 (both 1 %; 0 turns it off)"
    t = text.strip()
    pct = t.endswith("%")
    t = t.removesuffix("%").strip()
    if not PLAIN_NUMBER.fullmatch(t):
        raise InputError(flag, None, f"{text!r} is not a percentage", fix)
    number = float(t)
    if number == 0:
        return None
    if not 0 < number < 100:
        raise InputError(flag, None, f"{text!r} is not between 0 and 100 %", fix)
    if not pct and number < 1:
        as_pct = f"{number * 100:g}" + ("%" if number < 0.01 else "")
        raise InputError(
            flag, None, f"{t} looks like a fraction (a plain number is a percentage)",
            f"write {flag} {as_pct} for {number * 100:g} % or {flag} {t}% for {t} %")
    return number / 100


def parse_within(text: str | None, flag: str = "--within") -> float | None:
    """The knee's slack given to ``flag`` (``1%`` or ``1``; :func:`parse_percent`): the fraction,
    or None for ``0`` (off) or None, checked by :func:`hieropt.studies.knee.check_within` before
    any solve.

    Raises:
        InputError: as :func:`parse_percent`, or a slack below
            :data:`hieropt.studies.knee.MIN_WITHIN` (the fastest time's proven gap), naming ``flag``
            and the least slack accepted.
    """
    value = parse_percent(text, flag)
    if value is None:
        return None
    from ..errors import InputError
    from ..studies.knee import MIN_WITHIN, check_within

    if value < MIN_WITHIN:  # (in percent, as the flag takes it)
        raise InputError(
            flag, None,
            f"{value * 100:g} % is below {MIN_WITHIN * 100:g} %, the relative gap to which the "
            "fastest time is proven: the knee within it is undecided",
            f"give a slack of at least {MIN_WITHIN * 100:g}% (or 0 to turn the knee off)")
    try:
        return check_within(value)
    except InputError as e:
        raise e.with_source(flag) from None
