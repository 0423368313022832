"""What a calibration refuses and what it warns about, so that ``hieropt calibrate`` (and ``validate
--calibrate-on``) never writes a fit that is silently wrong.

Refused (:class:`~hieropt.errors.InputError`, exit 2), before the search: more fitted fields than
runs (:func:`check_fit_inputs`: such a fit matches anything and drives the fields to their bounds),
and a calibration run whose plan the memory model finds does not fit in the NPU's memory (a row
whose plan is not the plan that ran). After the search (:func:`check_fit_quality`): a best fit whose
mean absolute error exceeds :data:`ABSURD_MAPE` (no value of the fields within their bounds explains
the runs: a unit or a plan is wrong), with what the ratio of predicted to measured times points at,
and a single run whose predicted / measured time is off by a unit (:data:`SECONDS_RATIO`,
:data:`MICROSECONDS_RATIO`) while the median is not, named by its line.

Warned (:func:`at_bound`): a fitted value within :data:`BOUND_TOLERANCE` of the range of a bound —
the runs ask for a value the bounds do not allow, so the fit is not an interior optimum.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import InputError
from ...io.runs import Run
from ...model.memory import memory

ABSURD_MAPE = 0.5
"""A best fit with a larger mean absolute error (fraction) is refused: a calibrated model is within
a few per cent of the runs it rests on (the shipped fits: 1.3 % and 2.4 %)."""
BOUND_TOLERANCE = 1e-3
"""A fitted value this close to a bound (fraction of the field's range) is reported at the bound."""
SECONDS_RATIO = 100.0
"""A median predicted / measured time above this: the measured times look like seconds."""
MICROSECONDS_RATIO = 1.0 / 100.0
"""A median predicted / measured time below this: the measured times look like microseconds."""


def check_fit_inputs(runs: Sequence[Run], names: Sequence[str]) -> None:
    """Refuse a fit of the fields ``names`` on ``runs`` that cannot be meaningful.

    Raises:
        InputError: more fields than runs (``--fit``), or a run whose plan does not fit in its
            NPU's memory (naming the run's file and line, and the memory model's figures).
    """
    files = ", ".join(dict.fromkeys(str(r.path) for r in runs))
    if len(names) > len(runs):
        raise InputError(
            "--fit",
            None,
            f"{len(names)} fields to fit ({', '.join(names)}) on {len(runs)} runs of {files}: "
            "more fields than runs do not determine them (any values fit)",
            f"fit at most {len(runs)} field(s), or add runs that separate them (several "
            "micro-batch sizes, models and recompute strategies)",
        )
    for r in runs:
        room = memory(r.params)
        if not room.fits:
            raise InputError(
                r.where,
                "plan",
                f"calibration run {r.label}: the memory model finds the plan {room.message()}, "
                "so it is not the plan that ran",
                "check the row's tp, pp, dp, micro_batch_size, recompute and zero_stage against "
                "the measured run, or leave the run out of the calibration",
            )


def check_fit_quality(
    runs: Sequence[Run], predicted: Sequence[float], mape: float, values: dict[str, float]
) -> None:
    """Refuse a best fit whose mean absolute error ``mape`` (fraction) exceeds
    :data:`ABSURD_MAPE`, saying what the median predicted / measured ratio points at.

    Args:
        runs: the calibration runs; ``predicted``: their predicted times at the fit, ms.
        values: the fitted values (named in the message).

    Raises:
        InputError: naming the runs files, the column most likely wrong and the fix.
    """
    ratios = sorted(p / r.measured_ms for p, r in zip(predicted, runs, strict=True))
    median = ratios[len(ratios) // 2]
    if MICROSECONDS_RATIO <= median <= SECONDS_RATIO:
        _check_each_run(runs, predicted, values)
    if not mape > ABSURD_MAPE:
        return
    files = ", ".join(dict.fromkeys(str(r.path) for r in runs))
    fitted = ", ".join(f"{k} = {v:.4g}" for k, v in values.items())
    head = (
        f"the best fit ({fitted}) leaves a mean absolute error of {mape:.0%} (over "
        f"{ABSURD_MAPE:.0%}), predicted / measured {median:.3g} (median)"
    )
    if median > SECONDS_RATIO:
        column, hint, fix = "measured_ms", "measured_ms looks like seconds", (
            "give measured_ms in milliseconds (seconds x 1000)"
        )
    elif median < MICROSECONDS_RATIO:
        column, hint, fix = "measured_ms", "measured_ms looks like microseconds", (
            "give measured_ms in milliseconds (microseconds / 1000)"
        )
    elif median < 1:
        column, hint, fix = "bw_gbps", "the predictions are too fast", (
            "check bw_gbps is GB/s per NPU per direction (a Gb/s figure is 8 x too large), "
            "measured_ms is ms, and each row's plan is the plan measured"
        )
    else:
        column, hint, fix = "measured_ms", "the predictions are too slow", (
            "check measured_ms is ms per iteration, bw_gbps is GB/s per NPU per direction, and "
            "each row's plan is the plan measured"
        )
    raise InputError(files, column, f"{head}: {hint}", fix)


def _check_each_run(
    runs: Sequence[Run], predicted: Sequence[float], values: dict[str, float]
) -> None:
    """Refuse a run whose predicted / measured time at the fit is above :data:`SECONDS_RATIO` or
    below :data:`MICROSECONDS_RATIO`: its measured_ms is in the wrong unit, whatever the others
    (one such run among several leaves the median, and possibly the mean error, unremarkable)."""
    fitted = ", ".join(f"{k} = {v:.4g}" for k, v in values.items())
    for p, r in zip(predicted, runs, strict=True):
        ratio = p / r.measured_ms
        if MICROSECONDS_RATIO <= ratio <= SECONDS_RATIO:
            continue
        slow = ratio < 1
        unit, fixed = ("microseconds", r.measured_ms / 1000) if slow else (
            "seconds", r.measured_ms * 1000
        )
        raise InputError(
            r.where,
            "measured_ms",
            f"predicted / measured {ratio:.3g} at the best fit ({fitted}): measured_ms "
            f"{r.measured_ms:.10g} looks like {unit}",
            f"give measured_ms in milliseconds: {fixed:.10g}",
        )


def at_bound(values: dict[str, float], bounds: dict[str, tuple[float, float]]) -> tuple[str, ...]:
    """The fields of ``values`` whose fitted value lies within :data:`BOUND_TOLERANCE` of the
    range of a bound (``bounds``: field -> (lower, upper)), in ``values``' order."""
    out = []
    for name, v in values.items():
        lo, hi = bounds[name]
        tol = BOUND_TOLERANCE * (hi - lo)
        if v - lo <= tol or hi - v <= tol:
            out.append(name)
    return tuple(out)


__all__ = [
    "ABSURD_MAPE",
    "BOUND_TOLERANCE",
    "SECONDS_RATIO",
    "MICROSECONDS_RATIO",
    "check_fit_inputs",
    "check_fit_quality",
    "at_bound",
]
