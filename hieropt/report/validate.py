"""Text and JSON of ``hieropt validate`` and ``hieropt calibrate``: every run's predicted and
measured iteration time and error, the summary (MAPE, worst error, per file and per group: rank
correlation, measured rank of the predicted-fastest run) and the calibrations applied. Returns
lines, rich tables and dicts; never prints."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from rich.table import Table

from ..io.calibration import fit_quality
from ..studies.validate import Calibration, Validation
from ..studies.validate.checks import row_calibration_cells, runs_text
from ..studies.validate.dicts import calibration_dict, validation_dict
from ..units import plural


def _pct(x: float, sign: bool = False) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:+.1%}" if sign else f"{x:.1%}"


def _num(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.3f}"


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def short_file(path: str) -> str:
    """A runs file as its name (the folder left out)."""
    return Path(path).name


def short_files(paths: list[str]) -> dict[str, str]:
    """Each runs file of ``paths`` as the fewest of its last path parts that tell it from the
    other files: its name (``runs.csv``), or with as many folders as needed where two files
    share a name (``a/runs.csv`` and ``b/runs.csv``; ``x/a/runs.csv`` and ``y/a/runs.csv``). Two
    paths of one file (``runs.csv`` and ``./runs.csv``) are one file; a path whose parts run out
    is shown whole."""
    given = list(dict.fromkeys(paths))
    same = {p: Path(p).resolve() for p in given}
    out = {}
    for p in given:
        parts = Path(p).parts
        others = [Path(q).parts for q in given if same[q] != same[p]]

        def clash(n: int, parts: tuple[str, ...] = parts, others: list = others) -> bool:
            return any(q[-n:] == parts[-n:] for q in others)

        n = 1
        while n < len(parts) and clash(n):
            n += 1
        out[p] = p if clash(n) else str(Path(*parts[-n:]))
    return out


def _labels(v: Validation) -> dict[str, str]:
    """:func:`short_files` of every runs file of ``v``'s rows."""
    return short_files([str(x.run.path) for x in v.rows])


def rows_table(v: Validation) -> Table:
    """One line per run: file, line, run, group, measured and predicted ms, error (predicted vs
    measured); a calibration run marked ``(fit)`` (its plan measured at another time: ``(fit,
    repeat measurement)``), a repeat of an earlier row's run ``(repeat)``
    (both, ``(fit) (repeat)``, for a calibration run given twice), a plan the memory model does not
    fit ``*`` (by how much: the notes); ``NPUs``: the run's NPU count as the row resolves (tp x
    cp x pp x dp). A file is shown by its name, with as many of its folders as tell it from
    another file of the same name (:func:`short_files`)."""
    label = _labels(v)
    t = Table(
        title="Measured runs: predicted vs measured iteration time "
        "(error = predicted / measured - 1)",
        title_justify="left",
    )
    right = ("line", "NPUs", "measured ms", "predicted ms", "error")
    for col in ("file", "line", "run", "NPUs", "group", "measured ms", "predicted ms", "error"):
        t.add_column(col, justify="right" if col in right else "left")
    for x in v.rows:
        fit = " (fit, repeat measurement)" if x.repeat_measurement else " (fit)"
        mark = fit * x.in_sample + " (repeat)" * bool(x.repeats)
        t.add_row(
            label[str(x.run.path)],
            str(x.run.line),
            x.run.label + ("" if x.fits_memory else " *"),
            f"{x.run.params.plan.total_npus:,}",
            x.run.group,
            f"{x.run.measured_ms:,.1f}",
            f"{x.predicted_ms:,.1f}",
            _pct(x.error, True) + mark,
        )
    notes = ["(fit): a calibration run, left out of the summary"] * any(x.in_sample for x in v.rows)
    if any(x.repeat_measurement for x in v.rows):
        notes.append("(fit, repeat measurement): a calibration run's plan measured again, in "
                     "sample too")
    if any(x.repeats for x in v.rows):
        notes.append("(repeat): the run of an earlier row (the same file or run given twice), "
                     "counted once")
    if not all(x.fits_memory for x in v.rows):
        notes.append("*: the memory model finds that this measured plan does not fit in memory "
                     "(GB needed and available: the notes)")
    t.caption = "; ".join(notes) or None
    return t


def summary_lines(v: Validation) -> list[str]:
    """The calibrations applied (and to how many runs), then MAPE and worst error over the runs out
    of sample."""
    lines = []
    for c in v.calibrations:
        used = sum(x.calibrated == c.npu for x in v.rows)
        lines.append(
            calibration_line(c, "calibrated")
            + f"; applied to {plural(used, 'run')}"
            + ("" if used else f" (no run uses the accelerator {c.npu})")
        )
    n = sum(x.counted for x in v.rows)
    whose = ""
    if not v.calibrations:
        fitted = any(x.in_sample for x in v.rows)
        whose = " (the model files' calibration" + _own_cells(v) + (
            "; (fit): the runs a catalog default or a calibrated file was fitted on)"
            if fitted
            else ")"
        )
    repeats = sum(bool(x.repeats) and not x.in_sample for x in v.rows)
    if repeats:
        whose += f" ({plural(repeats, 'repeated run')} counted once)"
    lines.append(
        f"{plural(n, 'run')} out of sample: mean absolute error {_pct(v.mape)}, "
        f"worst {_pct(v.worst)}{whose}"
    )
    return lines


def _own_cells(v: Validation) -> str:
    """``, the rows' own matrix_efficiency in 2 of them`` (``in it`` of a single run): the counted
    runs whose rows give a calibration field (timed with it, not with the model file's), or ''."""
    own = [row_calibration_cells(x.run) for x in v.rows if x.counted]
    names = sorted({k for cells in own for k in cells})
    n = sum(bool(cells) for cells in own)
    of = "it" if len(own) == 1 else f"{n} of them"
    return f", the rows' own {', '.join(names)} in {of}" if n else ""


def calibration_line(c: Calibration, verb: str = "fitted") -> str:
    """One calibration in a line: accelerator, values, runs, quality."""
    values = ", ".join(f"{k} = {v:.4g}" for k, v in c.values.items())
    return (
        f"{c.npu} {verb} on {runs_text(c.runs, c.measurements)} of "
        f"{', '.join(short_file(f) for f in c.files)} ({c.loss}): {values}; {_quality(c)}"
    )


def _quality(c: Calibration) -> str:
    """The fit's quality (``fit: mean absolute error 1.4%, worst 3.9%``), or that it is exact by
    construction (no more runs than fitted fields: :func:`hieropt.io.calibration.fit_quality`)."""
    if 0 < c.runs <= len(c.fields):
        return fit_quality(c.runs, len(c.fields), _finite(c.mape), _finite(c.worst))
    return f"fit: mean absolute error {_pct(c.mape)}, worst {_pct(c.worst)}"


def bound_notes(c: Calibration) -> list[str]:
    """One ``note:`` line per fitted field at a bound of its range (none for an interior fit)."""
    bounds = {f.name: (f.lower, f.upper) for f in c.fields}
    out = []
    for name in c.at_bound:
        v = c.values[name]
        lo, hi = bounds.get(name, (v, v))
        side, edge = ("lower", lo) if abs(v - lo) <= abs(hi - v) else ("upper", hi)
        out.append(
            f"note: {c.npu} {name} = {v:.4g} sits at its {side} bound ({edge:g}): the runs ask "
            "for a value the bounds do not allow, so the fit is not an interior optimum; check "
            "the runs' units and plans, or fit fewer fields"
        )
    return out


def fit_notes(c: Calibration) -> list[str]:
    """The ``note:`` lines of a fit: :func:`bound_notes`, then one per pair of runs of the same
    plan measured more than 10 % apart (:attr:`Calibration.contradictions`)."""
    return bound_notes(c) + [f"note: {c.npu}: {w}" for w in c.contradictions]


def files_table(v: Validation) -> Table:
    """Per runs file (named as in :func:`rows_table`): runs out of sample, MAPE and worst
    error."""
    label = _labels(v)
    t = Table(title="Per runs file (out of sample)", title_justify="left")
    for col in ("file", "runs", "mean abs error", "worst"):
        t.add_column(col, justify="left" if col == "file" else "right")
    for f, (n, m, w) in v.by_file.items():
        t.add_row(label.get(f, short_file(f)), str(n), _pct(m), _pct(w))
    return t


def groups_table(v: Validation) -> Table | None:
    """Per group: runs, Spearman's rank correlation, measured rank of the predicted-fastest run;
    None: no groups. Files are named as in :func:`rows_table`."""
    if not v.groups:
        return None
    label = _labels(v)
    t = Table(title="Groups of runs compared with each other", title_justify="left")
    cols = (
        "file",
        "group",
        "runs",
        "Spearman",
        "predicted fastest: measured rank",
        "worst ratio error",
    )
    for col in cols:
        t.add_column(col, justify="left" if col in ("file", "group") else "right")
    for g in v.groups:
        t.add_row(
            label.get(g.file, short_file(g.file)),
            g.group,
            str(g.runs),
            _num(g.spearman),
            f"tie: {g.fastest_tied} predicted equal" if g.fastest_tied > 1
            else f"{g.fastest_rank} of {g.runs}",
            _pct(g.ratio_error),
        )
    return t


def calibration_file_parts(c: Calibration) -> tuple[dict[str, Any], dict[str, Any], str]:
    """The ``[params.npu]`` fields, the ``[calibration]`` fields and the comment of a calibrated
    accelerator file (:func:`hieropt.io.calibration.write_calibration`)."""
    meta = {
        "fields": [f.name for f in c.fields],
        "runs": c.runs,
        "files": list(c.files),
        "loss": c.loss,
        "mape": _finite(c.mape),
        "worst": _finite(c.worst),
        "at_bound": list(c.at_bound),
    }
    exact = 0 < c.runs <= len(c.fields)
    quality = (
        fit_quality(c.runs, len(c.fields), _finite(c.mape), _finite(c.worst))
        if exact
        else f"mean absolute error {_pct(c.mape)}, worst {_pct(c.worst)} on those runs"
    )
    comment = (
        f"Accelerator {c.npu} calibrated by `hieropt calibrate` on "
        f"{runs_text(c.runs, c.measurements)} of {', '.join(c.files)}:\n"
        f"{quality} (loss {c.loss}); fitted: {', '.join(c.values)}.\n"
        "Plan with it: [params.npu] calibrated = \"THIS FILE\" in a model file (relative to the "
        "model file)."
    )
    return dict(c.npu_fields), meta, comment


__all__ = [
    "rows_table",
    "summary_lines",
    "calibration_line",
    "bound_notes",
    "fit_notes",
    "files_table",
    "groups_table",
    "calibration_dict",
    "validation_dict",
    "calibration_file_parts",
    "short_file",
    "short_files",
]
