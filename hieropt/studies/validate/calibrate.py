"""Calibrating an accelerator on measured runs: the values of its calibration parameters (named
numeric NPU fields, each within bounds) that minimise the mean absolute percentage error (or the
mean |log error|) of the predicted iteration times, by a derivative-free bounded search (numpy
only).

The parameters follow the NPU's compute model (:func:`calibration_fields`): the flat model's
``[params.npu] efficiency`` (:data:`CALIBRATION_FIELDS` here), or the roofline's list
(:data:`hieropt.workloads.llm.accelerators.CALIBRATION_FIELDS`).

The search is :func:`~hieropt.studies.validate.search.minimise` (grid and golden-section line
searches, then Nelder-Mead for several parameters), started at the runs' current values.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...cache import scoped
from ...errors import InputError
from ...io.runs import Run
from ...names import with_flag
from ...units import plural
from ...workloads.llm import NPU
from ...workloads.llm.accelerators import CALIBRATION_FIELDS as ROOFLINE_FIELDS
from .checks import (
    at_bound,
    check_fit_inputs,
    check_fit_quality,
    check_no_fitted_cells,
    contradictions,
    distinct_plans,
    distinct_runs,
)
from .identify import check_identifiable, scaled_jacobian
from .metrics import mape, mean_log_error, worst_error
from .predict import predict_ms
from .search import minimise

LOSSES = ("mape", "log")
"""``mape``: mean |p - m| / m; ``log``: mean |ln(p / m)|."""


@dataclass(frozen=True)
class CalibrationField:
    """One calibration parameter of the accelerator: a numeric field of ``[params.npu]``.

    Attributes:
        name: the field (dotted below ``params.npu`` for a nested one).
        lower, upper: the bounds the fit stays within (lower < upper).
        default: the value used when a model file gives none (information only here).
    """

    name: str
    lower: float
    upper: float
    default: float | None = None


CALIBRATION_FIELDS: tuple[CalibrationField, ...] = (CalibrationField("efficiency", 0.05, 1.0, 0.5),)
"""The flat compute model's calibration parameter: the fraction of peak FLOP/s all compute
sustains (``[params.npu] efficiency``)."""


def as_fields(entries: Iterable[Any]) -> tuple[CalibrationField, ...]:
    """Calibration fields from a published list: :class:`CalibrationField` s, objects or dicts with
    ``name``, ``lower``, ``upper`` (and ``default``), or tuples ``(name, lower, upper[, default])``.

    Raises:
        ValueError: an entry of another form, or bounds that are not finite with lower < upper.
    """
    out = []
    for e in entries:
        if isinstance(e, CalibrationField):
            f = e
        elif isinstance(e, tuple | list):
            f = CalibrationField(*e)
        elif isinstance(e, dict):
            f = CalibrationField(e["name"], e["lower"], e["upper"], e.get("default"))
        else:
            f = CalibrationField(e.name, e.lower, e.upper, getattr(e, "default", None))
        if not (math.isfinite(f.lower) and math.isfinite(f.upper) and f.lower < f.upper):
            raise ValueError(
                f"calibration field {f.name}: bounds {f.lower} .. {f.upper} are not finite with "
                "lower < upper"
            )
        out.append(CalibrationField(str(f.name), float(f.lower), float(f.upper), f.default))
    return tuple(out)


def calibration_fields(npu: NPU) -> tuple[CalibrationField, ...]:
    """The calibration parameters of ``npu``'s compute model fitted on measured runs by default:
    the flat model's ``efficiency`` (:data:`CALIBRATION_FIELDS`) when the NPU gives one, else the
    roofline's fields marked ``from_runs``
    (:data:`hieropt.workloads.llm.accelerators.CALIBRATION_FIELDS`: the GEMMs' asymptotic
    efficiency; the HBM efficiency, the GEMM size ramp, the kernel overhead and the FlashAttention
    rate stay at the catalog's kernel-level values, which iteration times do not separate from
    it)."""
    if not npu.roofline:
        return CALIBRATION_FIELDS
    return as_fields([f for f in ROOFLINE_FIELDS if f.from_runs])


def model_fields(npu: NPU) -> tuple[CalibrationField, ...]:
    """Every calibration parameter ``npu``'s compute model has (those ``--fit`` may name): the flat
    model's ``efficiency``, or all five roofline fields."""
    return CALIBRATION_FIELDS if not npu.roofline else as_fields(ROOFLINE_FIELDS)


def fields_named(npu: NPU, names: Sequence[str]) -> tuple[CalibrationField, ...]:
    """The calibration fields of ``npu``'s compute model called ``names`` (``--fit``), in the
    model's order.

    Raises:
        InputError: no name, or a name the NPU's compute model does not calibrate (the error names
            the argument ``fields``, the command line ``--fit``, and lists the names it does).
    """
    known = model_fields(npu)
    unknown = sorted(set(names) - {f.name for f in known})
    if unknown or not names:
        what = f"unknown calibration field {', '.join(unknown)}" if unknown else "no field"
        model = "roofline" if npu.roofline else "flat"
        raise InputError(
            "fields",
            None,
            f"{what} for {npu.name}'s {model} compute model",
            f"name one or more of {', '.join(f.name for f in known)}",
        )
    return tuple(f for f in known if f.name in names)


@dataclass(frozen=True)
class Calibration:
    """An accelerator's fitted calibration parameters.

    Attributes:
        npu: the accelerator's name (``[params.npu] name`` of the runs' model files).
        values: fitted value of each calibration field.
        fields: the fields fitted, with their bounds.
        mape, worst: the fit's mean and largest |p - m| / m on the runs it rests on (fractions).
        runs: the number of distinct runs it rests on
            (:func:`~hieropt.studies.validate.checks.distinct_plans`: a plan measured several
            times once); ``files``: their runs files.
        loss: ``mape`` or ``log``; ``evaluations``: loss evaluations of the search.
        npu_fields: every field of the fitted accelerator (the runs' NPU with ``values``), for
            writing; read from a calibrated file, its ``[params.npu]``.
        at_bound: the fitted fields whose value sits at a bound of their range
            (:func:`~hieropt.studies.validate.checks.at_bound`: the runs ask for more than the
            bounds allow).
        source: the calibrated file it was read from ('' for a fit made here).
        contradictions: one warning per pair of runs of the same plan measured more than 10 %
            apart (:func:`~hieropt.studies.validate.checks.contradictions`).
        measurements: the measured times the fit weighs (a row repeating a run, or a file given
            twice, once; two times of one plan twice): ``runs`` or more; 0 when not recorded (a
            fit read from a file).
        edited: read from a file whose ``[params.npu]`` was edited since the fit
            (:func:`hieropt.io.calibration.npu_edited`): ``mape`` and ``worst`` are of the values
            calibrate wrote, not of ``npu_fields``.
    """

    npu: str
    values: dict[str, float]
    fields: tuple[CalibrationField, ...]
    mape: float
    worst: float
    runs: int
    files: tuple[str, ...]
    loss: str
    evaluations: int
    npu_fields: dict[str, Any]
    at_bound: tuple[str, ...] = ()
    source: str = ""
    contradictions: tuple[str, ...] = ()
    measurements: int = 0
    edited: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The fit as JSON-ready data, the document ``hieropt calibrate --json`` writes
        (:func:`~hieropt.studies.validate.dicts.calibration_dict`): accelerator, fitted values,
        bounds, quality (fractions; null when undefined), runs, files, loss."""
        from .dicts import calibration_dict

        return calibration_dict(self)

    @property
    def overrides(self) -> tuple[str, ...]:
        """The fitted values as ``KEY=VALUE`` overrides (``npu.efficiency=0.43``)."""
        return tuple(f"npu.{k}={v!r}" for k, v in self.values.items())


def accelerators_of(runs: Sequence[Run]) -> str:
    """Each accelerator of ``runs`` with its runs files, names sorted: ``A100-SXM-80GB
    (a100-one-node.csv), H100-SXM (h100-one-node.csv)``; a file that holds runs of several gives
    the lines of each one's rows (``mix.csv lines 2, 3``, the first 5 then ``...``)."""
    files: dict[str, dict[str, list[int]]] = {}
    owners: dict[str, set[str]] = {}
    for r in runs:
        name, path = r.params.npu.name, str(r.path)
        files.setdefault(name, {}).setdefault(path, []).append(r.line)
        owners.setdefault(path, set()).add(name)

    def where(path: str, lines: list[int]) -> str:
        if len(owners[path]) == 1:
            return path
        shown = ", ".join(map(str, lines[:5])) + (", ..." if len(lines) > 5 else "")
        return f"{path} line{'s' if len(lines) > 1 else ''} {shown}"

    return ", ".join(
        f"{name} ({', '.join(where(p, lines) for p, lines in files[name].items())})"
        for name in sorted(files)
    )


def applied_by(c: Calibration, fitted_here: bool = True) -> str:
    """How the calibration ``c`` was given to ``validate``, as its messages name it (the library
    argument with the flag that sets it, :func:`hieropt.names.with_flag`): ``calibrations (--npu)
    mine.toml`` for a calibrated file; ``calibrate_on (--calibrate-on)`` for a fit made on runs
    given for it (``fitted_here``); ``calibrations`` for a fit passed to the library."""
    if c.source:
        return f"{with_flag('calibrations')} {c.source}"
    return with_flag("calibrate_on") if fitted_here else "calibrations"


def check_calibrations_used(calibrations: Sequence[Calibration], runs: Sequence[Run],
                            fitted_here: bool = True) -> None:
    """Refuse a calibration whose accelerator no run of ``runs`` uses (``[params.npu] name``): it
    would change no prediction, and the summary would read as the fit's while every run is timed
    with its model file's calibration (a calibrated file of the A100 80 GB given with runs of the
    A100 40 GB). ``fitted_here``: the calibrations were fitted on ``calibrate_on``'s runs.

    Raises:
        InputError: (exit 2) the calibrated file (or the runs files of the fit), the accelerator
            it calibrates and those the runs use, with their files (:func:`accelerators_of`).
    """
    used = {r.params.npu.name for r in runs}
    for c in calibrations:
        if c.npu in used:
            continue
        by = with_flag("calibrations") if c.source else applied_by(c, fitted_here)
        names = ", ".join(sorted(used))
        raise InputError(
            c.source or ", ".join(c.files) or by,
            None,
            f"given as {by}, it calibrates {c.npu}, and no run uses that accelerator: the runs "
            f"are of {accelerators_of(runs)}, so it would change no prediction",
            f"give a calibration of the runs' accelerator ({names}: hieropt calibrate on runs "
            f"of it), or leave this one out of {by} to time the runs with the model files' "
            "calibration",
        )


NOT_WRITTEN = frozenset({"calibrated", "catalog_peak_tflops", "fp8_recipe"})
"""The NPU fields a fit does not record (:attr:`Calibration.npu_fields`): the calibrated file a
model file names, the catalog's peak (the reader's, filled in again when the file is read) and the
FP8 recipe (the training software's, stated by each model file or run that uses it)."""


def check_one_table(runs: Sequence[Run], fitted: Sequence[str]) -> None:
    """Refuse runs of one accelerator whose ``[params.npu]`` differ in a field other than the
    ``fitted`` ones (a row's ``number_format`` of fp16 beside bf16, an ``hbm_reserve_gib`` cell):
    the fit records one accelerator table (:attr:`Calibration.npu_fields`, the file calibrate
    writes), which would silently keep the first run's value, and a model file of the other
    value could not use the file. The fit is not split by format: its efficiencies are fractions
    of one peak, and a fit per format needs that format's runs.

    Raises:
        InputError: each differing field with its values and the lines giving each, and the fix
            (one runs file, and one calibration, per setting).
    """
    def table(r: Run) -> dict[str, Any]:
        return {k: v for k, v in r.params.npu.model_dump(exclude=set(NOT_WRITTEN)).items()
                if k not in fitted}

    first = table(runs[0])
    tables = [(r, table(r)) for r in runs]
    differ = [k for k in first if any(t.get(k) != first[k] for _, t in tables)]
    if not differ:
        return
    parts = []
    for k in differ:
        seen: dict[str, list[str]] = {}
        for r, t in tables:
            seen.setdefault(repr(t.get(k)), []).append(r.where)
        parts.append(f"{k} " + " and ".join(f"{v} ({', '.join(w[:3])}"
                                           f"{', ...' if len(w) > 3 else ''})"
                                           for v, w in seen.items()))
    raise InputError(
        "calibration",
        differ[0],
        f"the runs of {runs[0].params.npu.name} differ in {'; '.join(parts)}: a calibration "
        "records one accelerator table, so one value would be kept for the others without a word",
        "calibrate each setting on its own runs: split the rows into one runs file per value "
        f"(of {', '.join(differ)}) and run hieropt calibrate on each",
    )


def fit_npu(
    runs: Sequence[Run],
    fields: Sequence[CalibrationField | str] | None = None,
    loss: str = "mape",
) -> Calibration:
    """Fit the calibration ``fields`` (default :func:`calibration_fields` of the runs' NPU: the flat
    or the roofline model's; names are looked up with :func:`fields_named`) of the one accelerator
    of ``runs``, each run once (:func:`~hieropt.studies.validate.checks.distinct_runs`: a row
    repeating an earlier run, or a file given twice, neither counts nor weighs twice; two
    measurements of one plan both weigh, and count as one run:
    :func:`~hieropt.studies.validate.checks.distinct_plans`).

    Raises:
        InputError: no runs, runs of several accelerators, an unknown loss, no field or a field the
            NPU does not have, a run whose row gives a fitted field (the fit would replace its
            value), and what :mod:`~hieropt.studies.validate.checks` refuses: more
            fields than distinct runs, a run whose plan does not fit in memory, a best fit whose
            mean absolute error exceeds 50 % (with the unit it points at); and, at the fit, a
            field no run depends on or fields the runs do not separate
            (:func:`~hieropt.studies.validate.identify.check_identifiable`).
    """
    if loss not in LOSSES:
        raise InputError(
            "loss", None, f"unknown loss {loss!r}", f"use one of {', '.join(LOSSES)}"
        )
    if not runs:
        raise InputError(
            "calibration", None, "no runs to fit on", "give a runs file with measured runs"
        )
    runs = distinct_runs(runs)  # (a run given twice counts, and weighs in the fit, once)
    names = sorted({r.params.npu.name for r in runs})
    if len(names) > 1:
        raise InputError(
            "calibration",
            "npu",
            f"runs of {plural(len(names), 'accelerator')}: {accelerators_of(runs)}",
            "calibrate each accelerator on its own runs: one calibrate per accelerator, given "
            "its files (a file that holds several: split its rows by accelerator)",
        )
    fields = resolve_fields(runs[0].params.npu, fields)
    check_one_table(runs, [f.name for f in fields])
    check_no_fitted_cells(runs, [f.name for f in fields])
    check_fit_inputs(runs, [f.name for f in fields])
    measured = [r.measured_ms for r in runs]
    metric = mape if loss == "mape" else mean_log_error
    count = 0

    def predicted(x: np.ndarray) -> list[float]:
        sets = tuple(f"npu.{f.name}={float(v)!r}" for f, v in zip(fields, x, strict=True))
        return [predict_ms(r, sets) for r in runs]

    def objective(x: np.ndarray) -> float:
        nonlocal count
        count += 1
        return metric(predicted(x), measured)

    start = [_start(runs[0], f) for f in fields]
    x, _ = minimise(objective, [f.lower for f in fields], [f.upper for f in fields], start)
    best = predicted(x)
    values = {f.name: float(v) for f, v in zip(fields, x, strict=True)}
    check_fit_quality(runs, best, mape(best, measured), values)
    lower, upper = [f.lower for f in fields], [f.upper for f in fields]
    jacobian = scaled_jacobian(predicted, np.asarray(x, dtype=float), lower, upper)
    check_identifiable(runs, [f.name for f in fields], jacobian, values, distinct_plans(runs))
    npu = runs[0].with_values(tuple(f"npu.{k}={v!r}" for k, v in values.items())).npu
    return Calibration(
        npu=names[0],
        values=values,
        fields=fields,
        mape=mape(best, measured),
        worst=worst_error(best, measured),
        runs=distinct_plans(runs),
        measurements=len(runs),
        files=tuple(dict.fromkeys(str(r.path) for r in runs)),
        loss=loss,
        evaluations=count,
        npu_fields=npu.model_dump(exclude_none=True, exclude=set(NOT_WRITTEN)),
        at_bound=at_bound(values, {f.name: (f.lower, f.upper) for f in fields}),
        contradictions=contradictions(runs),
    )


def resolve_fields(
    npu: NPU, fields: Sequence[CalibrationField | str] | None
) -> tuple[CalibrationField, ...]:
    """``fields`` for ``npu``: the default :func:`calibration_fields` when None, names looked up
    with :func:`fields_named`, :class:`CalibrationField` s as given.

    Raises:
        InputError: no field (an empty ``--fit``), or a name the NPU's compute model does not
            calibrate.
    """
    if fields is None:
        return calibration_fields(npu)
    names = [f for f in fields if isinstance(f, str)]
    if not fields:
        fields_named(npu, ())
    if not names:
        return tuple(f for f in fields if isinstance(f, CalibrationField))
    return fields_named(npu, names)


def _start(run: Run, f: CalibrationField) -> float:
    """The run's current value of field ``f`` (the search starts there), or mid-range."""
    v: Any = run.params.npu
    for part in f.name.split("."):
        v = getattr(v, part, None)
    return (
        float(v)
        if isinstance(v, int | float) and not isinstance(v, bool)
        else (f.lower + f.upper) / 2
    )


@scoped
def calibrate(
    runs: Sequence[Run],
    fields: Sequence[CalibrationField | str] | None = None,
    loss: str = "mape",
) -> tuple[Calibration, ...]:
    """One :func:`fit_npu` per accelerator among ``runs`` (by NPU name, in order of first
    appearance): each accelerator's ``fields`` (default: its compute model's) fitted to its runs'
    measured times (ms) under ``loss`` (``mape`` or ``log``).

    Raises:
        InputError: as :func:`fit_npu`, for the first accelerator whose fit it refuses.
    """
    by_npu: dict[str, list[Run]] = {}
    for r in runs:
        by_npu.setdefault(r.params.npu.name, []).append(r)
    return tuple(fit_npu(rs, fields, loss) for rs in by_npu.values())


def read_calibrated(path: str) -> Calibration:
    """A calibrated accelerator file written by ``hieropt calibrate``
    (:mod:`hieropt.io.calibration`) as the :class:`Calibration` it records (its fields' bounds those
    of either compute model, or the value itself for a field of neither). Its ``npu_fields`` are the
    file's ``[params.npu]``: the whole accelerator the runs of its name are timed on, fitted fields
    and others (:func:`~hieropt.studies.validate.run.timed_params`).

    Raises:
        InputError: a missing or bad file.
    """
    from ...io.calibration import npu_edited, read_calibration, read_npu_table

    npu, values, meta = read_calibration(path)
    table = read_npu_table(path)
    known = {f.name: f for f in CALIBRATION_FIELDS + as_fields(ROOFLINE_FIELDS)}
    fields = tuple(known.get(k, CalibrationField(k, v, v)) for k, v in values.items())

    def number(key: str) -> float:
        v = meta.get(key)
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else math.nan

    runs = meta.get("runs")
    bound = meta.get("at_bound", [])
    return Calibration(
        npu=npu,
        values=values,
        fields=fields,
        mape=number("mape"),
        worst=number("worst"),
        runs=runs if isinstance(runs, int) else 0,
        files=tuple(map(str, meta.get("files", []))),
        loss=str(meta.get("loss", "mape")),
        evaluations=0,
        npu_fields=table,
        at_bound=tuple(map(str, bound)) if isinstance(bound, list) else (),
        source=str(path),
        edited=npu_edited(table, meta),
    )


__all__ = [
    "read_calibrated",
    "CalibrationField",
    "CALIBRATION_FIELDS",
    "Calibration",
    "as_fields",
    "calibration_fields",
    "model_fields",
    "fields_named",
    "resolve_fields",
    "accelerators_of",
    "applied_by",
    "check_one_table",
    "NOT_WRITTEN",
    "check_calibrations_used",
    "fit_npu",
    "calibrate",
    "LOSSES",
]
