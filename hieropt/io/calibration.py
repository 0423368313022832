"""Calibrated accelerator files (TOML), written by ``hieropt calibrate`` and read by ``hieropt
validate --npu`` and by every command that reads a model file naming one (``[params.npu]
calibrated = "FILE"``, :func:`hieropt.io.npus.fill_calibrated`)::

    # comment: the accelerator, the runs it was fitted on, the fit's quality
    [params.npu]            # every field of the fitted accelerator, as in a model file
    name = "A100-SXM-80GB"
    matrix_efficiency = 0.7706
    ...
    [calibration]
    fields = ["matrix_efficiency"]   # the fitted fields (their values are in [params.npu])
    runs = 2                         # the number of measured runs the fit rests on
    files = ["../validation/calibration/a100-one-node.csv"]  # relative to this file
    sha256 = ["9f86d0..."]           # each runs file's content hash when the fit was written
    loss = "mape"                    # mape (mean |p - m| / m) or log (mean |ln(p / m)|)
    mape = 0.0131                    # the fit's mean and worst |p - m| / m on those runs
    worst = 0.0265
    at_bound = []                    # fitted fields whose value sits at a bound of its range
    npu_sha256 = "5e1a..."           # the content hash of [params.npu] as written (edits: a note)

A model file names the file with ``[params.npu] calibrated`` (pasting its ``[params.npu]`` works
too, but loses the record the notes on days, MFU and $ state). Reading refuses a ``[calibration]``
record that is not what ``calibrate`` writes (a key not listed above, a run count that is not a
whole number of at least 1, a loss, mean or worst error that is not one, :func:`check_meta`), a
fitted value outside its field's range (a fraction written as a percentage: with the fraction as the
fix) and finds the runs files relative to this file only (``validate`` marks their runs in sample):
a runs file that is gone, or whose content differs from the ``sha256`` recorded, is refused, so the
runs marked in sample are the runs the fit rests on. Planning with the file does not read the runs
(``runs_files`` False): what became of them is a note (:func:`runs_file_changes`). A
``[params.npu]`` edited since the fit (its ``npu_sha256`` differs, :func:`npu_edited`) is a note
wherever the fit's quality is stated: that quality is of the values ``calibrate`` wrote.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..workloads.llm.accelerators import CALIBRATION_FIELDS
from ..workloads.llm.npu import NPU
from .common import read_toml, unknown_key_error, validation_error

FRACTIONS = ("efficiency",) + tuple(f.name for f in CALIBRATION_FIELDS if f.upper == 1.0)
"""The calibration fields that are fractions in (0, 1] (of peak FLOP/s or HBM bandwidth): a value
in (1, 100] is a percentage, refused with the fraction as the fix."""


def _value(v: Any) -> str:
    """A TOML value for a str, bool, int, float or list of them (json's quoting is valid TOML for
    strings)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        if isinstance(v, float) and not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return repr(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return json.dumps(str(v))


def calibration_text(npu: dict[str, Any], meta: dict[str, Any], comment: str = "") -> str:
    """The text of a calibrated accelerator file: ``npu`` (field -> value; None values left out) as
    ``[params.npu]`` and ``meta`` (fields, runs, files, loss, mape, worst) as ``[calibration]``."""
    lines = [f"# {c}" for c in comment.splitlines()]
    lines += _table("params.npu", npu) + _table("calibration", meta)
    return "\n".join(lines) + "\n"


def _table(name: str, d: dict[str, Any]) -> list[str]:
    """``[name]`` with the scalar and list entries of ``d``, then each nested table as
    ``[name.key]``."""
    out = ["", f"[{name}]"] + [
        f"{k} = {_value(v)}" for k, v in d.items() if v is not None and not isinstance(v, dict)
    ]
    for k, v in d.items():
        if isinstance(v, dict):
            out += _table(f"{name}.{k}", v)
    return out


def npu_sha256(npu: dict[str, Any]) -> str:
    """The SHA-256 (64 hex digits) of an accelerator table ``npu`` (field -> value, None values
    left out, as :func:`calibration_text` writes them): of its JSON with sorted keys, so a file
    read back gives the hash it was written with whatever its layout and comments."""
    kept = {k: v for k, v in npu.items() if v is not None}
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"), default=list)
    return hashlib.sha256(text.encode()).hexdigest()


def npu_edited(npu: dict[str, Any], meta: dict[str, Any]) -> bool:
    """Whether the ``[params.npu]`` table ``npu`` of a calibrated file differs from the one
    ``hieropt calibrate`` wrote: its hash against ``meta["npu_sha256"]`` (a file without one:
    False, nothing to compare)."""
    recorded = meta.get("npu_sha256")
    return isinstance(recorded, str) and npu_sha256(npu) != recorded


def fit_quality(runs: Any, fields: int, mape: Any, worst: Any) -> str:
    """The fit's quality in words: ``"fit MAPE 1.4 %, worst 3.9 %"``; when it rests on no more
    distinct runs than it fits fields (``runs`` <= ``fields``), that this is no check of the
    model: ``"fitted exactly: 1 run for 1 field, no check of the model"`` (its error is 0 by
    construction), or with repeated measurements of those runs ``"fit MAPE 1.7 %, worst 4.2 %:
    the spread of repeated measurements of 1 run for 1 field, no check of the model"``; ``""``
    when the figures are missing."""
    numbers = _number(mape) and _number(worst)
    figures = f"fit MAPE {mape * 100:.1f} %, worst {worst * 100:.1f} %" if numbers else ""
    if not (isinstance(runs, int) and 0 < runs <= fields):
        return figures
    count = f"{runs} run{'' if runs == 1 else 's'} for {fields} field{'' if fields == 1 else 's'}"
    if numbers and worst > 1e-6:
        return f"{figures}: the spread of repeated measurements of {count}, no check of the model"
    return f"fitted exactly: {count}, no check of the model"


def write_calibration(
    path: str | Path, npu: dict[str, Any], meta: dict[str, Any], comment: str = ""
) -> None:
    """Write :func:`calibration_text` to ``path``, the runs files of ``meta["files"]`` written
relative to the folder of ``path`` (:func:`read_calibration` finds them from there) with their
content hashes (``sha256``, hex, one per file, when every file can be read), and the hash of
``npu`` (``npu_sha256``, :func:`npu_sha256`).

    Raises:
        InputError: the file cannot be written (naming it and the fix).
    """
    if isinstance(meta.get("files"), list):
        files = [str(f) for f in meta["files"]]
        meta = {**meta, "files": [_relative_to(f, Path(path)) for f in files]}
        try:
            meta["sha256"] = [file_sha256(f) for f in files]
        except OSError:
            pass
    meta = {**meta, "npu_sha256": npu_sha256(npu)}
    try:
        from .files import write_atomic

        write_atomic(path, calibration_text(npu, meta, comment))  # (recorded: files.written)
    except OSError as e:
        raise InputError(
            path,
            None,
            f"cannot write the accelerator file: {e}",
            "check the folder exists and is writable",
        ) from None


def _relative_to(runs_file: str, toml: Path) -> str:
    """``runs_file`` relative to the folder of ``toml`` (as given when there is no such path)."""
    try:
        return os.path.relpath(Path(runs_file).resolve(), toml.resolve().parent)
    except ValueError:  # (another drive)
        return str(runs_file)


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of the bytes of the file at ``path``, as 64 hex digits.

    Raises:
        OSError: the file cannot be read.
    """
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _runs_file(entry: Any, path: Path) -> str:
    """A ``[calibration] files`` entry as a path that exists, relative to the calibrated file's
    folder only (never the working folder: a file of the same name there holds other runs).

    Raises:
        InputError: it does not exist there (the validation could not tell the fit's own runs),
            naming the path looked for.
    """
    p = path.parent / str(entry)
    if p.is_file():
        return str(p)
    raise InputError(
        path,
        "calibration.files",
        f"runs file {entry} not found at {p} (the runs the accelerator was fitted on are marked "
        "in sample from it; entries are relative to this file)",
        "keep the runs file at that path relative to this file, or correct the entry",
    )


def _check_hashes(files: list[str], hashes: Any, path: Path) -> None:
    """Refuse a runs file whose content differs from its recorded ``[calibration] sha256``
    (files written without hashes are taken as they are)."""
    if hashes is None:
        return
    if not isinstance(hashes, list) or len(hashes) != len(files):
        raise InputError(
            path,
            "calibration.sha256",
            f"expected one hash per runs file ({len(files)})",
            "give a file written by hieropt calibrate",
        )
    for f, h in zip(files, hashes, strict=True):
        if file_sha256(f) != h:
            raise InputError(
                path,
                "calibration.sha256",
                f"runs file {f} is not the file the accelerator was fitted on (its sha256 "
                "differs)",
                "restore that runs file, or calibrate again on it",
            )


def _check_fractions(npu: dict[str, Any], path: Path) -> None:
    """Refuse a fraction field (:data:`FRACTIONS`) given as a percentage."""
    for name in FRACTIONS:
        v = npu.get(name)
        if isinstance(v, int | float) and not isinstance(v, bool) and 1 < v <= 100:
            raise InputError(
                path,
                f"params.npu.{name}",
                f"{v:g} is not a fraction (a percentage?)",
                f"a fraction in (0, 1]: {v / 100:g}?",
            )


BOUNDS: dict[str, tuple[float, bool, float]] = {
    "efficiency": (0.0, True, 1.0),
    **{f.name: (f.lower, f.lower_open, f.upper) for f in CALIBRATION_FIELDS},
}
"""The range of each known fitted field: (lower, lower bound excluded, upper): the flat model's
``efficiency`` in (0, 1] and the roofline's fields
(:data:`hieropt.workloads.llm.accelerators.CALIBRATION_FIELDS`)."""


def _check_bounds(values: dict[str, float], path: Path) -> None:
    """Refuse a fitted value of a known field outside its range (:data:`BOUNDS`)."""
    for name, v in values.items():
        if name not in BOUNDS:
            continue
        lo, open_, hi = BOUNDS[name]
        if not (v > lo if open_ else v >= lo) or not v <= hi:
            span = f"{'(' if open_ else '['}{lo:g}, {hi:g}]"
            raise InputError(
                path, f"params.npu.{name}", f"{v:g} is outside {span}", f"give a value in {span}"
            )


META_KEYS = (
    "fields", "runs", "files", "loss", "mape", "worst", "at_bound", "sha256", "npu_sha256"
)
"""The keys of a ``[calibration]`` table, in the order ``hieropt calibrate`` writes them."""
LOSSES = ("mape", "log")
"""The losses a fit minimises (``[calibration] loss``)."""


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _fraction_fix(v: Any) -> str:
    """The fix for a fit-quality figure that is not a fraction: the fraction of a percentage
    written as text (``"1.3%"`` -> 0.013), else how to write one."""
    text = str(v).strip()
    if isinstance(v, str) and text.endswith("%"):
        try:
            return f"write the fraction as a number: {float(text[:-1]) / 100:g}"
        except ValueError:
            pass
    return "write the fraction as a number (0.013 for 1.3 %), or calibrate again"


def check_meta(meta: dict[str, Any], path: str | Path) -> None:
    """Refuse a ``[calibration]`` table whose record of the fit is not what ``hieropt calibrate``
    writes: a key other than :data:`META_KEYS`, a ``runs`` that is not a whole number of at least
    1, a ``loss`` other than :data:`LOSSES`, a ``mape`` or ``worst`` that is not a number of at
    least 0 (text such as ``"1.3%"``: the fraction is the fix) or a ``worst`` below ``mape``, an
    ``at_bound`` that is not a list of fitted field names, or ``files`` / ``sha256`` entries that
    are not text. ``fields`` is checked by :func:`read_calibration`.

    Raises:
        InputError: naming ``path``, ``calibration.KEY`` and the fix.
    """
    for key in meta:
        if key not in META_KEYS:
            raise unknown_key_error(
                path, f"calibration.{key}", key, META_KEYS,
                f"remove it: [calibration] holds {', '.join(META_KEYS)}",
            )
    runs = meta.get("runs")
    if "runs" in meta and not (isinstance(runs, int) and not isinstance(runs, bool) and runs >= 1):
        raise InputError(
            path, "calibration.runs",
            f"{runs!r} is not a number of runs (a whole number, at least 1)",
            "give the number of measured runs the fit rests on, or calibrate again",
        )
    if "loss" in meta and meta["loss"] not in LOSSES:
        raise InputError(
            path, "calibration.loss", f"unknown loss {meta['loss']!r}",
            f"use one of {', '.join(LOSSES)}",
        )
    for key in ("mape", "worst"):
        v = meta.get(key)
        if key in meta and not (_number(v) and (math.isnan(v) or v >= 0)):
            raise InputError(
                path, f"calibration.{key}",
                f"{v!r} is not a fraction of at least 0 (the fit's "
                f"{'mean' if key == 'mape' else 'largest'} |predicted - measured| / measured)",
                _fraction_fix(v),
            )
    mape, worst = meta.get("mape"), meta.get("worst")
    if _number(mape) and _number(worst) and worst < mape:
        raise InputError(
            path, "calibration.worst", f"{worst!r} is below the mean error (mape {mape!r})",
            "give the fit's largest error, at least its mean, or calibrate again",
        )
    fields = meta.get("fields")
    bound = meta.get("at_bound", [])
    if not isinstance(bound, list) or not all(
        isinstance(b, str) and isinstance(fields, list) and b in fields for b in bound
    ):
        raise InputError(
            path, "calibration.at_bound",
            f"{bound!r} is not a list of fitted fields (calibration.fields)",
            'write at_bound = [] or a list of names from fields, e.g. ["matrix_efficiency"]',
        )
    digest = meta.get("npu_sha256")
    if "npu_sha256" in meta and not isinstance(digest, str):
        raise InputError(
            path, "calibration.npu_sha256", f"{digest!r} is not text (a SHA-256 in hex)",
            "remove it (no check of edits), or calibrate again",
        )
    for key in ("files", "sha256"):
        v = meta.get(key)
        if isinstance(v, list) and not all(isinstance(x, str) for x in v):
            raise InputError(
                path, f"calibration.{key}", f"{v!r} is not a list of text entries",
                "quote each entry, or calibrate again",
            )


def read_calibration(
    path: str | Path, runs_files: bool = True, what: str = "calibrated accelerator"
) -> tuple[str, dict[str, float], dict[str, Any]]:
    """A calibrated accelerator file: the NPU's name, its fitted values (field -> value) and
    ``[calibration]`` (its ``files`` as paths that exist, relative to the file's folder;
    ``runs_files`` False: as written, the runs files neither looked for nor hashed, for planning
    with the file, :func:`runs_file_changes`). ``what``: the kind of file the reader expects
    (:data:`hieropt.io.kinds.EXPECTED`).

    Raises:
        InputError: a missing or bad file, a missing table or name, a fitted field without a
            numeric value, a ``[calibration]`` record that is not what calibrate writes
            (:func:`check_meta`: an unknown key, a bad run count, loss or error), a
            ``[params.npu]`` that is not a whole accelerator (a figure missing, of the wrong
            kind or out of its range, as in a model file), a fraction
            given as a percentage (``matrix_efficiency = 87``: the fix
            says 0.87) or another value outside its field's range, a runs file of ``files``
            that is not found beside the file, or whose content differs from its recorded
            ``sha256``.
    """
    path = Path(path)
    data = read_toml(path, what)
    npu = (data.get("params") or {}).get("npu")
    meta = data.get("calibration")
    if not isinstance(npu, dict) or not isinstance(meta, dict):
        raise InputError(
            path,
            "params.npu" if not isinstance(npu, dict) else "calibration",
            "missing table",
            "give a file written by hieropt calibrate",
        )
    if not isinstance(npu.get("name"), str):
        raise InputError(
            path, "params.npu.name", "missing", "name the accelerator the runs' model files use"
        )
    fields = meta.get("fields")
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise InputError(
            path,
            "calibration.fields",
            "expected a list of field names",
            'write fields = ["efficiency"]',
        )
    values = {}
    for f in fields:
        v: Any = npu
        for part in f.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise InputError(
                path,
                f"params.npu.{f}",
                "a fitted field without a numeric value",
                "give its value in [params.npu]",
            )
        values[f] = float(v)
    check_meta(meta, path)
    _check_fractions(npu, path)
    _check_bounds(values, path)
    try:  # (the accelerator the runs are timed on: every figure, as a model file would give it)
        NPU.model_validate(npu)
    except ValidationError as e:
        err = validation_error(e, path, "params.npu", NPU)
        head, sep, rest = err.problem.partition(": ")  # ("hbm_gbps: 'fast' is text": the field)
        if err.field == "params.npu" and sep and head.isidentifier():
            raise InputError(path, f"params.npu.{head}", rest, err.fix) from None
        raise err from None
    files = meta.get("files", [])
    if not isinstance(files, list):
        raise InputError(
            path, "calibration.files", "expected a list of runs files", 'write files = ["runs.csv"]'
        )
    if not runs_files:
        return npu["name"], values, meta
    found = [_runs_file(f, path) for f in files]
    _check_hashes(found, meta.get("sha256"), path)
    return npu["name"], values, {**meta, "files": found}


def runs_file_changes(path: str | Path, meta: dict[str, Any]) -> tuple[str, ...]:
    """What became of the runs files a calibrated file at ``path`` was fitted on (``meta``: its
    ``[calibration]``, files as written, relative to the file's folder), one phrase per file that
    is gone (``"h100.csv is not found beside the calibrated file"``) or whose content differs
    from its recorded ``sha256`` (``"h100.csv changed since the fit (its sha256 differs)"``);
    empty when all are as they were. Planning with the file needs none of them (the fitted values
    are in it): what ``validate`` refuses (:func:`read_calibration`) is a note there."""
    base = Path(path).parent
    files = [str(f) for f in meta.get("files", [])]
    hashes = meta.get("sha256")
    hashes = hashes if isinstance(hashes, list) and len(hashes) == len(files) else [None] * len(
        files)
    out = []
    for f, h in zip(files, hashes, strict=True):
        p = base / f
        if not p.is_file():
            out.append(f"{Path(f).name} is not found beside the calibrated file")
        elif h is not None and file_sha256(p) != h:
            out.append(f"{Path(f).name} changed since the fit (its sha256 differs)")
    return tuple(out)


def read_npu_table(path: str | Path, what: str = "calibrated accelerator") -> dict[str, Any]:
    """The ``[params.npu]`` table of a calibrated accelerator file (checked by
    :func:`read_calibration`), every field as written.

    Raises:
        InputError: a missing or bad file.
    """
    return dict(read_toml(Path(path), what)["params"]["npu"])


__all__ = [
    "calibration_text",
    "write_calibration",
    "read_calibration",
    "read_npu_table",
    "runs_file_changes",
    "file_sha256",
    "npu_sha256",
    "npu_edited",
    "fit_quality",
    "check_meta",
    "META_KEYS",
    "LOSSES",
]
