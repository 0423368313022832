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

Warned (:func:`at_bound`): a fitted value within :data:`BOUND_TOLERANCE` of a bound's value (or
of the fitted value), or within the search's resolution of it —
the runs ask for a value the bounds do not allow, so the fit is not an interior optimum. Warned
(:func:`contradictions`): two runs of the same plan on the same network and bandwidths
(:func:`plan_key`) whose measured times differ by more than :data:`REPEAT_SPREAD`, which no model
can both predict (a mislabelled row, or a run measured under other conditions).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ...errors import InputError
from ...io.llm import override_path
from ...io.runs import Run
from ...model.memory import memory
from ...units import fmt_sig, plural
from ...workloads.llm.accelerators import CALIBRATION_NAMES
from .search import TOLERANCE as SEARCH_TOLERANCE

ABSURD_MAPE = 0.5
"""A best fit with a larger mean absolute error (fraction) is refused: a calibrated model is within
a few per cent of the runs it rests on (the shipped fits: 1.3 % and 2.4 %)."""
BOUND_TOLERANCE = 1e-3
"""A fitted value this close to a bound, as a fraction of the bound's value or of the fitted value
(the larger), is reported at the bound: 0.999 and 1 for a bound of 1, but not 5 GFLOP for a bound
of 0."""
SEARCH_RESOLUTION = 10 * SEARCH_TOLERANCE
"""A fitted value this close to a bound, as a fraction of the field's range, is reported at the
bound whatever the bound's value: 10 x the search's resolution
(:data:`~hieropt.studies.validate.search.TOLERANCE`), within which it cannot tell a value from the
bound (0.1 GFLOP for ``gemm_half_gflop`` in [0, 10,000])."""
SECONDS_RATIO = 100.0
"""A median predicted / measured time above this: the measured times look like seconds."""
MICROSECONDS_RATIO = 1.0 / 100.0
"""A median predicted / measured time below this: the measured times look like microseconds."""
REPEAT_SPREAD = 0.10
"""Two runs of one plan whose measured times differ by more than this fraction of the smaller one
are warned about: repeated measurements of one training step agree within a few per cent."""
CALIBRATED = ("efficiency", *CALIBRATION_NAMES)
"""The NPU fields a calibration sets (the flat model's and the roofline's): left out of
:func:`plan_key`, so that a run timed with other calibration values is still the same run."""


def plan_key(run: Run) -> str:
    """What makes two rows the same plan where it ran: what they resolve to, not how they are
    written.

    The run's parameters after the model file and the row's cells are applied (model, plan, NPU,
    precision; the labels ``name`` and ``model.name``, the NPU's :data:`CALIBRATED` fields and the
    calibrated file it names left out, ``plan.npus`` as the run's NPU count whether the row gives
    it or not, the gradient, activation and weight bytes of ``precision`` as resolved, given or
    the number format's default), its network sized to the run (each dimension's building
    block, NPUs, latency and algorithm; the cost class plays no part in a time), the network
    file's settings and mapped groups, and the bandwidths (GB/s per NPU per dimension), as one
    JSON text; the measured time is not part of it."""
    p = run.params.model_dump(mode="json")
    p.pop("name", None)
    p["model"].pop("name", None)
    p["plan"]["npus"] = run.params.plan.total_npus
    for f in ("gradient_bytes", "activation_bytes", "weight_bytes"):  # (the defaults resolved)
        p["precision"][f] = getattr(run.params, f)
    for f in (*CALIBRATED, "calibrated"):  # (the calibrated file a model names: its values count)
        p["npu"].pop(f, None)
    dims = [d.model_dump(mode="json", exclude={"cost_class"}) for d in run.network.dims]
    where = [dims, run.net.settings, run.placement, list(run.bw_gbps)]
    return json.dumps([p, where], sort_keys=True, default=str)


def run_key(run: Run) -> str:
    """What makes two rows the same run: the same plan where it ran
    (:func:`plan_key`: what the row resolves to, not how it is
    written) and the same measured time (ms), as one JSON text."""
    return json.dumps([plan_key(run), run.measured_ms])


def distinct_runs(runs: Sequence[Run]) -> list[Run]:
    """``runs`` without the repeats: a run whose :func:`run_key` an earlier one has (the same file
    given twice, or a row that resolves to the run of an earlier row, however it is written) is
    left out, so that a fit counts and weighs each run once, as ``validate``'s summary does."""
    first: dict[str, Run] = {}
    for r in runs:
        first.setdefault(run_key(r), r)
    return list(first.values())


def distinct_plans(runs: Sequence[Run]) -> int:
    """How many distinct runs ``runs`` holds: rows of the same plan where it ran (:func:`plan_key`:
    the same model, network, bandwidths, plan and every field a row or ``--set`` gives) count once
    however many times it was measured, since repeated measurements of one plan determine one
    time, not one more field of a fit."""
    return len({plan_key(r) for r in runs})


def runs_text(runs: int, measurements: int) -> str:
    """``runs`` distinct runs in words, with the ``measurements`` behind them when there are more:
    ``"3 runs"``, ``"2 distinct runs (3 measurements)"``."""
    if measurements <= runs:
        return plural(runs, "run")
    return f"{plural(runs, 'distinct run')} ({plural(measurements, 'measurement')})"


def row_calibration_cells(run: Run) -> dict[str, tuple[str, str]]:
    """The :data:`CALIBRATED` NPU fields ``run``'s row gives a value (field -> (column, value):
    ``matrix_efficiency`` -> (``npu.matrix_efficiency``, ``0.9``)): cells that time the run
    with their own calibration rather than the model file's."""
    out = {}
    for o in run.overrides:
        column, _, value = o.partition("=")
        path = override_path(column.strip(), run.where)
        if len(path) == 2 and path[0] == "npu" and path[1] in CALIBRATED:
            out[path[1]] = (column.strip(), value)
    return out


def row_npu_cells(run: Run) -> dict[str, tuple[str, str]]:
    """Every ``[params.npu]`` field ``run``'s row gives a value (field -> (column, value):
    ``hbm_gbps`` -> (``hbm_gbps``, ``1000``)), fitted or not."""
    out = {}
    for o in run.overrides:
        column, _, value = o.partition("=")
        path = override_path(column.strip(), run.where)
        if len(path) == 2 and path[0] == "npu":
            out[path[1]] = (column.strip(), value)
    return out


FITTED_AT = ("number_format", "peak_tflops")
"""The figures a calibrated file's fit was made at that a runs row's cell may not change under it
(:func:`check_fitted_at_cells`): its fitted efficiencies are fractions of that peak in that format
(the model file may not change them either: :data:`hieropt.io.npus.PINNED`)."""


def check_fitted_at_cells(run: Run, timed: dict[str, object], file: str, by: str) -> None:
    """Refuse a row cell of :data:`FITTED_AT` whose value is not the calibrated file's (``timed``:
    the file's ``[params.npu]``, ``file``: its name, ``by``: how it applies, ``--npu FILE`` or
    the model file's ``calibrated``): the row would time the run in another format or at another
    peak than the fit, and the file's peak would stay (a ``number_format`` cell alone changes no
    time).

    Raises:
        InputError: naming the run's line, the column, the values and the fix.
    """
    cells = row_npu_cells(run)
    for name in FITTED_AT:
        if name not in cells or name not in timed:
            continue
        column, value = cells[name]
        mine = getattr(run.params.npu, name, None)
        if mine == timed[name]:
            continue
        raise InputError(
            run.where, column,
            f"{value} given in the row, and {by} times the run with {file}'s "
            f"{name} = {timed[name]!r}: its fit is of {timed.get('number_format', 'bf16')} at "
            f"{timed.get('peak_tflops')!r} TFLOP/s (the fitted efficiencies are fractions of that "
            "peak)",
            f"leave the {column} cell empty to validate the fit as made, or give the run without "
            f"{by} to time it with {value} (calibrate on runs at that figure to validate one)",
        )


def npu_cell_error(run: Run, cells: dict[str, tuple[str, str]], by: str, file: str,
                   e: InputError) -> InputError:
    """The error of ``run``'s row ``[params.npu]`` cells (``cells``: field -> (column, value),
    :func:`row_npu_cells`) that the accelerator of the calibrated file ``file`` refuses (``e``,
    the model's words; ``by``: how the file was given, ``calibrations (--npu) FILE``): the cell is
    the culprit, named with the runs file's line and column (an ``efficiency`` cell, the flat
    compute model's, with a roofline file)."""
    said = re.sub(r" \(model [^()]*\)$", "", f"{e.field}: {e.problem}" if e.field else e.problem)
    field, (column, value) = next(((k, v) for k, v in cells.items() if k in said),
                                  next(iter(cells.items())))
    return InputError(
        run.where, column,
        f"{value} given in the row, which the accelerator of {by} refuses: {said}",
        f"leave the {column} cell empty to time the run with {file}'s accelerator, or give the "
        f"run without {by} to time it with {field} = {value}",
    )


def check_no_fitted_cells(runs: Sequence[Run], fitted: Sequence[str], by: str = "") -> None:
    """Refuse a run whose row gives a field that a fit sets: the row states what the run was timed
    with, and the fit would replace the cell's value without a word. ``by``: the option whose fit
    is applied to the runs (``--npu FILE``, ``--calibrate-on``); '' for the runs being fitted.

    Raises:
        InputError: naming the run's line, the column, the value and the fix.
    """
    for run in runs:
        cells = row_calibration_cells(run)
        for name in fitted:
            if name in cells:
                column, value = cells[name]
                fix = (
                    f"leave the {column} cell empty to use the fitted value, or give the run "
                    f"without {by} to time it with {value}"
                    if by
                    else f"leave the {column} cell empty: the fit sets {name}"
                )
                raise InputError(
                    run.where,
                    column,
                    f"{value} given in the row, and {name} is fitted "
                    f"{f'by {by}' if by else 'on this run'}: the fitted value would replace it",
                    fix,
                )


def measured_apart(run: Run, other: Run, consequence: str) -> str | None:
    """The one rule for two measurements of one plan: ``run`` and ``other`` measured more than
    :data:`REPEAT_SPREAD` apart (relative to the smaller time) as a warning naming both lines and
    ending with ``consequence`` (``"runs.csv: line 3 and runs.csv: line 2 are the same plan measured
    at 16,000 and 11,000 ms (45% apart, more than 10%): the fit cannot match both; ..."``); None
    when they agree within it. Whether they are one plan is the caller's (:func:`plan_key`)."""
    lo, hi = sorted((other.measured_ms, run.measured_ms))
    if not hi > lo * (1 + REPEAT_SPREAD):
        return None
    return (
        f"{run.where} and {other.where} are the same plan measured at {run.measured_ms:,.10g} and "
        f"{other.measured_ms:,.10g} ms ({hi / lo - 1:.0%} apart, more than "
        f"{REPEAT_SPREAD:.0%}): {consequence}"
    )


def contradictions(runs: Sequence[Run]) -> tuple[str, ...]:
    """One warning per run whose plan (:func:`plan_key`) an earlier run of ``runs`` has, with a
    measured time more than :data:`REPEAT_SPREAD` apart (:func:`measured_apart`), naming both
    lines: ``"runs.csv: line 3 and runs.csv: line 2 are the same plan measured at 16,000 and 11,000
    ms (45% apart, more than 10%): the fit cannot match both; check the rows, or leave one
    out"``."""
    first: dict[str, Run] = {}
    out = []
    for r in runs:
        a = first.setdefault(plan_key(r), r)
        w = None if a is r else measured_apart(
            r, a, "the fit cannot match both; check the rows, or leave one out")
        if w is not None:
            out.append(w)
    return tuple(out)


def check_fit_inputs(runs: Sequence[Run], names: Sequence[str]) -> None:
    """Refuse a fit of the fields ``names`` on ``runs`` that cannot be meaningful.

    Raises:
        InputError: more fields than distinct runs (the argument ``fields``, ``--fit``;
            :func:`distinct_plans`: a plan measured several times counts once), or a run whose
            plan does not fit in its NPU's memory (naming the run's file and line, and the memory
            model's figures).
    """
    files = ", ".join(dict.fromkeys(str(r.path) for r in runs))
    distinct = distinct_plans(runs)
    if len(names) > distinct:
        raise InputError(
            "fields",
            None,
            f"{plural(len(names), 'field')} to fit ({', '.join(names)}) on "
            f"{runs_text(distinct, len(runs))} of {files}: "
            "more fields than distinct runs do not determine them (any values fit; repeated "
            "measurements of one plan count once)",
            f"fit at most {plural(distinct, 'field')}, or add runs of other plans that separate "
            "them (several micro-batch sizes, models and recompute strategies)",
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
        InputError: naming the runs files, the column most likely wrong and the fix; when the
            predictions are too slow or too fast, also the run farthest off (its line, predicted
            and measured times).
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
    if column == "bw_gbps" or hint.endswith("slow"):
        pairs = zip(predicted, runs, strict=True)
        p, r = max(pairs, key=lambda x: abs(x[0] / x[1].measured_ms - 1))
        hint += (
            f"; the worst: {r.where}, predicted {fmt_sig(p)} ms for a measured "
            f"{r.measured_ms:,.10g} ms ({p / r.measured_ms - 1:+.0%})"
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
    """The fields of ``values`` whose fitted value lies at a bound (``bounds``: field -> (lower,
    upper)), in ``values``' order: within :data:`BOUND_TOLERANCE` of the bound's value or of the
    fitted value (the larger: relative to the parameter's scale, not to its range), or within
    :data:`SEARCH_RESOLUTION` of the range."""
    out = []
    for name, v in values.items():
        lo, hi = bounds[name]
        floor = SEARCH_RESOLUTION * (hi - lo)
        if any(abs(v - b) <= max(BOUND_TOLERANCE * max(abs(b), abs(v)), floor) for b in (lo, hi)):
            out.append(name)
    return tuple(out)


__all__ = [
    "ABSURD_MAPE",
    "BOUND_TOLERANCE",
    "SEARCH_RESOLUTION",
    "SECONDS_RATIO",
    "MICROSECONDS_RATIO",
    "REPEAT_SPREAD",
    "CALIBRATED",
    "plan_key",
    "run_key",
    "measured_apart",
    "distinct_runs",
    "distinct_plans",
    "runs_text",
    "row_calibration_cells",
    "row_npu_cells",
    "FITTED_AT",
    "check_fitted_at_cells",
    "check_no_fitted_cells",
    "npu_cell_error",
    "contradictions",
    "check_fit_inputs",
    "check_fit_quality",
    "at_bound",
]
