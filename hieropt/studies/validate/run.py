"""``hieropt validate``: every measured run of one or more runs files predicted and held against its
measurement.

Per run the predicted and measured iteration time and the relative error; over the runs the mean
absolute percentage error (MAPE) and the worst error; per group of runs compared with each other (a
runs file's ``group`` column) Spearman's rank correlation of predicted and measured times and the
measured rank of the predicted-fastest run. With calibration runs, each accelerator's calibration
parameters are first fitted on them (:func:`~hieropt.studies.validate.calibrate.calibrate`) and
applied to the runs of that accelerator (a calibrated file, ``--npu``: its whole accelerator, every
figure of its ``[params.npu]``, :func:`timed_params`); a run whose plan is a calibration run's (one
that resolves to the same model, plan, NPU and precision, network and bandwidths:
:func:`~hieropt.studies.validate.checks.plan_key`, however its row is written, whatever its
measured time: a fit counts rows of one plan as one run) is marked ``in_sample`` (and
``repeat_measurement`` when its measured time is not one the fit was made on) and left out of the
MAPE, the worst error and the groups. A run given twice (the same file twice, or a row that
resolves to the run of an earlier row, :func:`run_key`) is predicted and shown each time but
counted once: the repeat is marked ``repeats`` and left out the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...cache import Cache, scoped
from ...errors import InputError
from ...io.npus import default_runs_file, read_calibrated_npu
from ...io.runs import Run, read_runs, row_params
from ...model.memory import memory
from ...names import with_flag
from ...workloads.llm.params import LLMParams
from .calibrate import (
    Calibration,
    CalibrationField,
    applied_by,
    calibrate,
    check_calibrations_used,
)
from .checks import (
    CALIBRATED,
    check_fitted_at_cells,
    check_no_fitted_cells,
    measured_apart,
    npu_cell_error,
    plan_key,
    row_npu_cells,
    run_key,
)
from .metrics import (
    mape,
    measured_rank_of_predicted_fastest,
    predicted_fastest_ties,
    spearman,
    worst_error,
    worst_ratio_error,
)
from .notes import layout_notes, memory_notes, network_notes, plan_notes, repeated_plan_notes
from .predict import predict_ms


@dataclass(frozen=True)
class ValidationRow:
    """One run's prediction.

    Attributes:
        run: the run (file, line, plan, measurement).
        predicted_ms: the predicted iteration time, ms.
        calibrated: the NPU name whose fitted values were applied, '' for the model file's values.
        in_sample: the run is one of the calibration runs (left out of the summary).
        fits_memory: whether the memory model (:func:`hieropt.model.memory.memory`) finds that
            the measured plan fits in the NPU's memory: a run that ran but "does not fit" points at
            the memory model.
        repeats: the earlier row this run repeats (``file line N``, the same :func:`run_key`), ''
            for a run's first row; a repeat is left out of the summary.
        repeat_measurement: an in-sample run whose plan is a calibration run's but whose
            measured time is none of that plan's calibration rows' (the plan measured again).
        memory: the memory model's verdict in words (GB needed per NPU against GB available,
            :meth:`hieropt.model.memory.MemoryReport.message`).
    """

    run: Run
    predicted_ms: float
    calibrated: str = ""
    in_sample: bool = False
    fits_memory: bool = True
    repeats: str = ""
    repeat_measurement: bool = False
    memory: str = ""

    @property
    def counted(self) -> bool:
        """Whether the run counts in the summary: out of sample and not a repeat."""
        return not self.in_sample and not self.repeats

    @property
    def error(self) -> float:
        """(predicted - measured) / measured: 0.1 = predicted 10 % slower than measured."""
        return (self.predicted_ms - self.run.measured_ms) / self.run.measured_ms


@dataclass(frozen=True)
class GroupResult:
    """The runs of one group of one file, compared with each other.

    Attributes:
        file, group: where the group is; ``runs``: its runs (out of sample).
        spearman: rank correlation of predicted and measured times (NaN below two runs or with all
            times equal).
        fastest_rank: the measured rank (1 = fastest) of the run predicted fastest (of several
            predicted equally fast, the first: ``fastest_tied`` says how many).
        fastest_tied: how many of its runs share the fastest prediction (1: no tie; more: the rank
            is that of an arbitrary one of them, and is reported as a tie).
        ratio_error: the largest error of a predicted time ratio between two of its runs
            (:func:`~hieropt.studies.validate.metrics.worst_ratio_error`).
    """

    file: str
    group: str
    runs: int
    spearman: float
    fastest_rank: int
    ratio_error: float = math.nan
    fastest_tied: int = 1


@dataclass(frozen=True)
class Validation:
    """The result of :func:`validate`.

    Attributes:
        rows: one per run, in the files' order (the files in the order given).
        groups: one per (file, group) with a group name.
        mape, worst: over the out-of-sample runs (fractions; NaN when there are none).
        by_file: file -> (runs, MAPE, worst) over its out-of-sample runs.
        calibrations: the fits applied (empty without calibration runs).
        notes: one line each, e.g. a calibrated file's figure that differs from the runs' model
            files (:func:`recorded_differences`).
    """

    rows: tuple[ValidationRow, ...]
    groups: tuple[GroupResult, ...]
    mape: float
    worst: float
    by_file: dict[str, tuple[int, float, float]] = field(default_factory=dict)
    calibrations: tuple[Calibration, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data, the document ``hieropt validate --json`` writes
        (:func:`~hieropt.studies.validate.dicts.validation_dict`): ``rows`` (times in ms, errors
        as fractions), ``summary``, ``files``, ``groups``, ``calibrations``, ``notes``."""
        from .dicts import validation_dict

        return validation_dict(self)


def predict_runs(
    runs: Sequence[Run], calibrations: Sequence[Calibration] = (), fitted_on: Sequence[Run] = (),
    fitted_here: bool = True,
) -> list[ValidationRow]:
    """Each run's prediction, with the calibration of its accelerator applied where there is one
    (:func:`timed_params`: a calibrated file's whole accelerator, a fit made here its values).

    A run is ``in_sample`` when its plan (:func:`~hieropt.studies.validate.checks.plan_key`,
    the measured time left out) is one of ``fitted_on``'s (the runs ``calibrations`` were fitted
    on) or, timed with the calibrated accelerator file its model names or its accelerator's
    shipped catalog default, one of the runs' that calibration was fitted on
    (:func:`fitted_runs_files`); with a
    measured time none of those rows has, it is a ``repeat_measurement`` too. A run whose
    :func:`run_key` an earlier run of ``runs`` has ``repeats`` that run (``file line N``).
    ``fitted_here``: ``calibrations`` without a file were fitted on ``calibrate_on`` (else passed
    in ``calibrations``), as messages name them (:func:`~hieropt.studies.validate.calibrate.
    applied_by`).

    Raises:
        InputError: two calibrations of one accelerator (:func:`one_per_accelerator`); a
            calibrated file's accelerator the model refuses with a run (:func:`timed_params`); a
            run whose row gives a field its accelerator's calibration fits (the fitted value
            would replace the cell's)."""
    fits = one_per_accelerator(calibrations)
    seen = _keys(fitted_on)
    defaults: dict[tuple[Path, ...], tuple[set[str], set[str]]] = {}
    first: dict[str, str] = {}
    out = []
    for r in runs:
        c = fits.get(r.params.npu.name)
        if c is not None:
            check_no_fitted_cells([r], list(c.values), applied_by(c, fitted_here))
        if c is not None and c.source:
            check_fitted_at_cells(r, dict(c.npu_fields), Path(c.source).name, applied_by(c))
        elif c is None and r.params.npu.calibrated is not None:
            cal = r.params.npu.calibrated
            check_fitted_at_cells(r, read_calibrated_npu(cal)[0], Path(cal).name,
                                  "the model file's [params.npu] calibrated")
        p = timed_params(r, c)
        t = predict_ms(r, params=p)
        report = memory(p)
        room = report.fits
        key = run_key(r)
        plan = plan_key(r)
        if plan in seen[0]:
            plans, measured = seen
        elif c is None:  # (a calibrated file's or the catalog default's: the runs it rests on)
            plans, measured = _default_keys(r, defaults)
        else:
            plans, measured = set(), set()
        fit = plan in plans
        again = fit and key not in measured
        repeats = first.get(key, "")
        first.setdefault(key, f"{r.path} line {r.line}")
        out.append(ValidationRow(r, t, c.npu if c else "", fit, room, repeats, again,
                                 report.message()))
    return out


def _keys(runs: Sequence[Run]) -> tuple[set[str], set[str]]:
    """The :func:`~hieropt.studies.validate.checks.plan_key` and the :func:`run_key` of each of
    ``runs``."""
    return {plan_key(r) for r in runs}, {run_key(r) for r in runs}


def one_per_accelerator(calibrations: Sequence[Calibration]) -> dict[str, Calibration]:
    """``calibrations`` by accelerator name (``[params.npu] name``).

    Raises:
        InputError: two of one accelerator (two ``--npu`` files of the same NPU: only one could
            apply), naming both files.
    """
    out: dict[str, Calibration] = {}
    for c in calibrations:
        if c.npu in out:
            first = out[c.npu].source or "a fit of calibrate()"
            second = c.source or "a fit of calibrate()"
            raise InputError(
                "calibrations",
                None,
                f"a second calibration of {c.npu}: {first} calibrates it too, and only one can "
                "apply to its runs",
                f"give one calibration per accelerator, one {with_flag('calibrations')} file "
                f"each ({first} or {second})",
            )
        out[c.npu] = c
    return out


def _flat(d: dict, prefix: str = "") -> dict[str, object]:
    """``d`` with nested tables as dotted keys."""
    out: dict[str, object] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def timed_params(run: Run, c: Calibration | None) -> LLMParams:
    """The parameters ``run`` is timed with under the calibration ``c`` of its accelerator: with
    none, the run's own; with a fit made here (``--calibrate-on``), the run's with the fitted
    values; with a calibrated file (``--npu``, ``c.source``), the run's model file with the file's
    ``[params.npu]`` in place of its own: every figure of the accelerator the file records, fitted
    or not (an edited ``hbm_gbps`` times the runs with it), the row's own cells applied after it
    as before.

    Raises:
        InputError: the file's accelerator with the run's model, plan or cells is refused by the
            model (naming the file, the field and the run's line).
    """
    if c is None:
        return run.params
    if not c.source:
        return run.with_values(c.overrides)
    data = dict(run.model_data)
    data["params"] = {**(data.get("params") or {}), "npu": dict(c.npu_fields)}
    try:
        return row_params(data, run.model_path, run.overrides, run.where)
    except InputError as e:
        cells = row_npu_cells(run)
        own = tuple(o for o in run.overrides if o.partition("=")[0].strip() not in
                    {column for column, _ in cells.values()})
        if own != run.overrides:
            try:  # (without the row's [params.npu] cells: then those cells are the culprit)
                row_params(data, run.model_path, own, run.where)
            except InputError:
                pass
            else:
                raise npu_cell_error(run, cells, applied_by(c), Path(c.source).name, e) from None
        raise InputError(
            c.source, e.field, f"{e.problem} (the file's accelerator for {run.where})", e.fix
        ) from None


def recorded_differences(
    calibrations: Sequence[Calibration], runs: Sequence[Run]
) -> tuple[str, ...]:
    """One note per calibrated file (``c.source``) and field of its ``[params.npu]`` that it did
    not fit (not in ``[calibration] fields``) whose value differs from a run of its accelerator
    (the first such run named): a model file's value is replaced by the file's
    (:func:`timed_params`: ``the runs of H100-SXM are timed with the file's value``); a row's own
    cell applies over the file's (``its hbm_gbps cell 1000 applies over ...: the run is timed with
    the cell's value``, once per run and field). Either way the fit was made with the value the
    file was written with. A file edited since the fit (:attr:`Calibration.edited`) that no such
    note names (a fitted value edited) gets one note saying so. The name is a label; a fit made
    here (no ``source``) has no file, so no note."""
    fits = {c.npu: c for c in calibrations if c.source}
    out: dict[tuple[str, ...], str] = {}
    for run in runs:
        c = fits.get(run.params.npu.name)
        if c is None:
            continue
        has = _flat(run.params.npu.model_dump(mode="json", exclude_none=True))
        cells = row_npu_cells(run)
        fitted = ", ".join(c.values)
        for k, v in _flat(c.npu_fields).items():
            if k in c.values or k == "name" or has.get(k) == v:
                continue
            if k in cells:
                out[c.source, k, run.where] = (
                    f"note: {run.where}: its {cells[k][0]} cell {cells[k][1]} applies over "
                    f"{c.source}'s params.npu.{k} = {v!r}: the run is timed with the cell's "
                    f"value, and the file's fit ({fitted}) was made with {v!r}"
                )
                continue
            if (c.source, k) in out:
                continue
            theirs = repr(has[k]) if k in has else "none"
            out[c.source, k] = (
                f"note: {c.source}: params.npu.{k} = {v!r} where the runs' model file gives "
                f"{theirs} ({run.where}): the runs of {c.npu} are timed with the file's value, "
                f"and its fit ({fitted}) was made with the value it was written with"
            )
    for c in fits.values():  # (an edit the notes above do not name: a fitted value's)
        if c.edited and not any(k[0] == c.source for k in out):
            out[c.source, "edited"] = (
                f"note: {c.source}: its [params.npu] was edited since the fit (it differs from "
                "what calibrate wrote): the fit's errors above are of the values calibrate "
                "wrote; the runs are timed with the file's values as they are (calibrate again)"
            )
    return tuple(out.values())


def replaced_models(calibrations: Sequence[Calibration], runs: Sequence[Run]) -> tuple[str, ...]:
    """One note per calibrated file (``--npu``, ``c.source``) and model file of a run of its
    accelerator whose own accelerator the file's replaces in a way the per-field notes of
    :func:`recorded_differences` do not say: the model file names another calibrated file
    (``[params.npu] calibrated``), or the file's compute model is not the model file's (a flat
    ``efficiency`` for a roofline, or the other way round)."""
    fits = {c.npu: c for c in calibrations if c.source}
    out: dict[tuple[str, Path], str] = {}
    for run in runs:
        c = fits.get(run.params.npu.name)
        if c is None or (c.source, run.model_path) in out:
            continue
        own = ((run.model_data.get("params") or {}).get("npu") or {}).get("calibrated")
        named = None if own is None else (run.model_path.parent / str(own)).resolve()
        flat = c.npu_fields.get("efficiency") is not None
        what = []
        if named is not None and named != Path(c.source).resolve():
            what.append(f"its calibrated = {own!r}")
        if flat != (not run.params.npu.roofline):
            models = ("roofline", "flat") if flat else ("flat", "roofline")
            what.append(f"its {models[0]} compute model (the file's is {models[1]})")
        if what:
            out[c.source, run.model_path] = (
                f"note: {c.source} replaces the accelerator of {run.model_path.name} "
                f"({run.where}): {' and '.join(what)}; the runs of {c.npu} are timed with the "
                "file's"
            )
    return tuple(out.values())


def _default_keys(
    run: Run, known: dict[tuple[Path, ...], tuple[set[str], set[str]]]
) -> tuple[set[str], set[str]]:
    """The plan and run keys (:func:`_keys`) of the runs the calibration timing ``run`` was fitted
    on: the runs files of the calibrated accelerator file its model names (``[params.npu]
    calibrated``, as ``--npu`` has them: :func:`fitted_runs_files`) or of its catalog default
    (empty for none); each set of runs files read once into ``known``."""
    paths = fitted_runs_files(run)
    if not paths:
        return set(), set()
    if paths not in known:
        known[paths] = _keys([r for p in paths for r in read_runs(p)])
    return known[paths]


def fitted_runs_files(run: Run) -> tuple[Path, ...]:
    """The runs files the calibration ``run`` is timed with was fitted on: those of the calibrated
    accelerator file its model file names (:attr:`hieropt.workloads.llm.NPU.calibrated`), else
    the shipped catalog default's ``runs_file`` (:func:`hieropt.io.npus.default_runs_file`), else
    none.

    Raises:
        InputError: a runs file of the calibrated file that is gone or changed since the fit
            (:func:`hieropt.io.calibration.read_calibration`: the runs marked in sample must be
            the fit's), or a catalog default's runs file that is missing.
    """
    from ...io.calibration import read_calibration

    calibrated = run.params.npu.calibrated
    if calibrated is not None:
        return tuple(Path(f) for f in read_calibration(calibrated)[2]["files"])
    path = default_runs_file(run.params.npu)
    return () if path is None else (path,)


def repeat_disagreements(
    rows: Sequence[ValidationRow], fitted_on: Sequence[Run] = ()
) -> tuple[str, ...]:
    """One ``note:`` per run marked ``repeat_measurement`` (a calibration run's plan measured
    again) whose time is more than :data:`~hieropt.studies.validate.checks.REPEAT_SPREAD` apart
    from every time of that plan the fit rests on (the nearest is named; the runs of
    ``fitted_on``, else of the runs files its model's calibration was fitted on,
    :func:`fitted_runs_files`): the same rule
    as ``calibrate``'s warning on two measurements of one plan
    (:func:`~hieropt.studies.validate.checks.measured_apart`). Such a run's error is the
    measurements' disagreement, not the model's, and it counts in no summary."""
    out = []
    known: dict[tuple[Path, ...], list[Run]] = {}
    for x in rows:
        if not x.repeat_measurement or x.repeats:
            continue
        plan = plan_key(x.run)
        pool = [r for r in fitted_on if plan_key(r) == plan]
        if not pool:
            paths = fitted_runs_files(x.run)
            if paths not in known:
                known[paths] = [r for p in paths for r in read_runs(p)]
            pool = [r for r in known[paths] if plan_key(r) == plan]
        if not pool:
            continue
        nearest = min(pool, key=lambda r: abs(math.log(r.measured_ms / x.run.measured_ms)))
        w = measured_apart(
            x.run, nearest, f"the measurements disagree, so its error ({x.error:+.1%}) is theirs, "
            "not the model's; the fit rests on the other time (check the rows, or calibrate "
            "again on the runs you trust)")
        if w is not None:
            out.append(f"note: {w}")
    return tuple(out)


def summarise(
    rows: Sequence[ValidationRow], calibrations: Sequence[Calibration] = ()
) -> Validation:
    """The metrics of the module docstring over ``rows``: the summary over the counted runs (a
    repeat once); a file's figures and a group's over their out-of-sample runs, each run once in
    it (a repeat of a run of another file or group is in this one too)."""
    used = [x for x in rows if x.counted]
    files: dict[str, dict[str, ValidationRow]] = {}
    groups: dict[tuple[str, str], dict[str, ValidationRow]] = {}
    for x in rows:
        if x.in_sample:
            continue
        files.setdefault(str(x.run.path), {}).setdefault(run_key(x.run), x)
        if x.run.group:
            members = groups.setdefault((str(x.run.path), x.run.group), {})
            members.setdefault(run_key(x.run), x)
    results = tuple(
        GroupResult(
            f,
            g,
            len(xs),
            spearman(*_pm(xs)),
            measured_rank_of_predicted_fastest(*_pm(xs)),
            worst_ratio_error(*_pm(xs)),
            predicted_fastest_ties(_pm(xs)[0]),
        )
        for (f, g), xs in ((k, list(v.values())) for k, v in groups.items())
    )
    by_file = {
        f: (len(xs), mape(*_pm(xs)), worst_error(*_pm(xs)))
        for f, xs in ((k, list(v.values())) for k, v in files.items())
    }
    p, m = _pm(used)
    return Validation(
        rows=tuple(rows),
        groups=results,
        mape=mape(p, m) if used else math.nan,
        worst=worst_error(p, m) if used else math.nan,
        by_file=by_file,
        calibrations=tuple(calibrations),
    )


def _pm(rows: Sequence[ValidationRow]) -> tuple[list[float], list[float]]:
    return [x.predicted_ms for x in rows], [x.run.measured_ms for x in rows]


@scoped
def validate(
    files: Sequence[str | Path],
    calibrate_on: Sequence[str | Path] = (),
    fields: Sequence[CalibrationField | str] | None = None,
    loss: str = "mape",
    calibrations: Sequence[Calibration] = (),
    *,
    cache: Cache | None = None,
) -> Validation:
    """Predict every run of the runs ``files`` and compare with the measurements (module docstring).

    Args:
        files: runs files (CSV, :mod:`hieropt.io.runs`).
        calibrate_on: runs files to fit each accelerator's calibration parameters on first (none:
            the model files' values).
        fields: the calibration parameters, or their names (``--fit``; default:
            :func:`~hieropt.studies.validate.calibrate.calibration_fields`).
        loss: ``mape`` or ``log``, the fit's loss.
        calibrations: fits made before (e.g. read from a calibrated NPU file), applied when
            ``calibrate_on`` is empty; the runs of the files each records (``files``) are its
            calibration runs, marked ``in_sample`` as with ``calibrate_on``.
        cache: the memo tables the runs' predictions share (:class:`hieropt.cache.Cache`; default: a
            new one for this call).

    Raises:
        InputError: a bad runs file, model or network, a fit that cannot be made (naming file,
            line, column), or a calibration whose accelerator no run uses
            (:func:`~hieropt.studies.validate.calibrate.check_calibrations_used`).
    """
    runs = [r for f in files for r in read_runs(f)]
    cal_runs = [r for f in calibrate_on for r in read_runs(f)]
    fitted_here = bool(cal_runs)
    if cal_runs:
        fits = calibrate(cal_runs, fields, loss)
    else:  # (a fit made before: its own runs, read from the files it records, are in sample)
        fits = tuple(calibrations)
        cal_runs = [r for c in fits for f in c.files for r in read_runs(f)]
    check_calibrations_used(fits, runs, fitted_here)
    result = summarise(predict_runs(runs, fits, cal_runs, fitted_here), fits)
    notes = (recorded_differences(fits, runs) + replaced_models(fits, runs)
             + repeat_disagreements(result.rows, cal_runs)
             + extrapolated_notes(result.rows, fits) + peak_notes(runs)
             + plan_notes(result.rows) + network_notes(result.rows) + memory_notes(result.rows)
             + repeated_plan_notes(result.rows) + layout_notes(result.rows))
    return replace(result, notes=notes)


def peak_notes(runs: Sequence[Run]) -> tuple[str, ...]:
    """One note per distinct peak below half the catalog's dense peak of the runs' NPUs
    (:attr:`hieropt.workloads.llm.NPU.peak_note`, the note every command gives), naming the first
    such run and how many: the predictions are computed at that peak."""
    found: dict[str, list[str]] = {}
    for r in runs:
        if (note := r.params.npu.peak_note) is not None:
            found.setdefault(note, []).append(r.where)
    return tuple(f"note: {where[0]}{f' (and {len(where) - 1} more)' if len(where) > 1 else ''}: "
                 f"{note}" for note, where in found.items())


def extrapolated_notes(rows: Sequence[ValidationRow],
                       calibrations: Sequence[Calibration] = ()) -> tuple[str, ...]:
    """One note per calibration and figures a row is timed with away from those it was fitted at
    (:func:`hieropt.io.npus.calibration_of`: a catalog default or a calibrated file in another
    number format, at another peak or HBM bandwidth, e.g. a ``number_format`` cell of ``fp8``),
    naming the first such row and how many: its error measures the extrapolation, not the fit."""
    from ...io.npus import EXTRAPOLATED, calibration_of, default_name

    fits = one_per_accelerator(calibrations)
    found: dict[str, list[str]] = {}
    for x in rows:
        key = calibration_of(timed_params(x.run, fits.get(x.run.params.npu.name)).npu)
        if key is not None and EXTRAPOLATED in key:
            found.setdefault(key, []).append(x.run.where)
    out = []
    for key, where in found.items():
        source, words = key.split(EXTRAPOLATED, 1)
        name = Path(source).name if Path(source).is_absolute() else default_name(source)
        more = f" (and {len(where) - 1} more)" if len(where) > 1 else ""
        out.append(f"note: {where[0]}{more}: the {name} compute calibration is {words}: the "
                   "error measures that extrapolation, not the fit")
    return tuple(out)


__all__ = [
    "ValidationRow",
    "GroupResult",
    "Validation",
    "validate",
    "extrapolated_notes",
    "peak_notes",
    "predict_runs",
    "summarise",
    "run_key",
    "one_per_accelerator",
    "timed_params",
    "recorded_differences",
    "replaced_models",
    "fitted_runs_files",
    "repeat_disagreements",
    "CALIBRATED",
]
