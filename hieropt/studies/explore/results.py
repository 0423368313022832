"""The results file of an exploration: its columns, the CSV / Parquet sink that streams one row per candidate, and the
reader that resumes from it (checked against the space's fingerprint)."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...io.files import OutputError, replacing

# ---------------------------------------------------------------------------------------------- one solve
COLUMNS: tuple[tuple[str, type], ...] = (
    ("shape_id", str), ("space_hash", str), ("n_dims", int), ("levels", str), ("blocks", str), ("npus", str),
    ("tp_groups", str), ("dp_groups", str), ("equivalents", int), ("equivalent_ids", str),
    ("status", str), ("message", str), ("objective", str), ("objective_value", float), ("objective_bound", float),
    ("objective_unit", str), ("gap", float), ("iteration_time_ns", float), ("network_cost_usd", float),
    ("bw_gbps", str), ("scaleout_gbps_per_npu", float), ("scaleout_usd", float), ("nic_usd", float), ("nics", int),
    ("solve_seconds", float), ("worker", str),
)
"""Columns of the results file, with their types (``None`` / empty: not applicable)."""


COLUMN_NAMES = tuple(n for n, _ in COLUMNS)


# --------------------------------------------------------------------------------------------- results file
def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v)


def typed_row(row: dict[str, Any], columns: tuple[tuple[str, type], ...] = COLUMNS) -> dict[str, Any]:
    """A row read back from a results file with every column converted to its type of ``columns``
    (default :data:`COLUMNS`)."""
    out = {}
    for name, kind in columns:
        v = row.get(name)
        if v is None or v == "" or (isinstance(v, float) and math.isnan(v)):
            out[name] = None if kind is not str else ("" if name in ("equivalent_ids", "message") else None)
        else:
            out[name] = kind(float(v)) if kind is int else kind(v)
    return out


def _read_csv(path: Path, space_hash: str, repair: bool,
              columns: tuple[tuple[str, type], ...] = COLUMNS) -> list[dict[str, Any]]:
    """Rows of a results CSV; a last line cut off by an interruption is dropped (and removed when ``repair``)."""
    if not path.exists() or path.stat().st_size == 0:
        return []
    raw = path.read_bytes()
    if not raw.endswith(b"\n"):
        cut = raw.rfind(b"\n") + 1
        if repair:
            with path.open("r+b") as f:
                f.truncate(cut)
        raw = raw[:cut]
    lines = raw.decode("utf-8").splitlines()
    if not lines:
        return []
    reader = csv.reader(lines)
    header = next(reader)
    names = tuple(n for n, _ in columns)
    if tuple(header) != names:
        raise InputError(path, "header", "not a results file of this hieropt explore (other columns)",
                         "give another --out file, or delete this one to start over")
    rows = []
    for i, values in enumerate(reader, start=2):
        if len(values) != len(names):
            raise InputError(path, f"line {i}", f"{len(values)} fields, expected {len(names)}",
                             "delete the damaged line (it is solved again) or the file")
        rows.append(_check_hash(typed_row(dict(zip(names, values, strict=True)), columns), path, i, space_hash))
    return rows


def _check_hash(row: dict[str, Any], path: Path, where: Any, space_hash: str) -> dict[str, Any]:
    if row["space_hash"] != space_hash:
        raise InputError(path, f"line {where} space_hash", f"written for another space or objective "
                         f"({row['space_hash']}, this sweep is {space_hash})",
                         "give another --out file, or delete this one to start over")
    return row


def read_results(path: str | Path, columns: tuple[tuple[str, type], ...] = COLUMNS) -> list[dict[str, Any]]:
    """The rows of a results file written by :func:`explore` (or a study with its own ``columns``; CSV, or Parquet
    with pyarrow), typed per ``columns``, without checking which space wrote them."""
    path = Path(path)
    if path.suffix == ".parquet":
        pq = _pyarrow(path)
        return [typed_row(r, columns) for r in pq.read_table(path).to_pylist()]
    raw = path.read_text(encoding="utf-8")
    lines = raw.splitlines() if raw.endswith("\n") else raw.splitlines()[:-1]  # drop a line cut off mid-write
    return [typed_row(r, columns) for r in csv.DictReader(lines)]


def _pyarrow(path: Path):
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(path, None, "writing or reading Parquet needs pyarrow, which is not installed",
                         "pip install pyarrow, or give a .csv file") from None
    return pq


def _arrow_schema(columns: tuple[tuple[str, type], ...] = COLUMNS):
    import pyarrow as pa

    types = {str: pa.string(), int: pa.int64(), float: pa.float64()}
    return pa.schema([(n, types[k]) for n, k in columns])


class ResultSink:
    """Streams rows to ``out`` as they arrive: CSV directly; Parquet through a CSV journal beside it
    (``OUT.partial.csv``), rewritten into the Parquet file when the sweep completes."""

    def __init__(self, out: Path, space_hash: str, columns: tuple[tuple[str, type], ...] = COLUMNS):
        if out.suffix.lower() not in (".csv", ".parquet"):
            raise InputError("out", str(out), f"unknown results format '{out.suffix or '(no suffix)'}'",
                             "name a .csv file (or .parquet with pyarrow installed)")
        if not out.parent.is_dir():
            raise InputError("out", str(out), f"folder '{out.parent}' does not exist",
                             "create it first, or name a file in an existing folder")
        self.out = out
        self.hash = space_hash
        self.columns = columns
        self.names = tuple(n for n, _ in columns)
        self.parquet = out.suffix.lower() == ".parquet"
        self.journal = out.with_name(out.name + ".partial.csv") if self.parquet else out
        self.previous: list[dict[str, Any]] = []
        if self.parquet:
            pq = _pyarrow(out)
            if out.exists():
                table = pq.read_table(out)
                if tuple(table.column_names) != self.names:
                    raise InputError(out, "columns", "not a results file of this hieropt explore (other columns)",
                                     "give another --out file, or delete this one to start over")
                self.previous = [_check_hash(typed_row(r, columns), out, i, self.hash)
                                 for i, r in enumerate(table.to_pylist(), start=1)]
        self.previous += _read_csv(self.journal, self.hash, repair=True, columns=columns)
        fresh = not self.journal.exists() or self.journal.stat().st_size == 0
        self.file = self.journal.open("a", encoding="utf-8", newline="")
        self.writer = csv.writer(self.file, lineterminator="\n")
        if fresh:
            self._append(self.names)
        self.new: list[dict[str, Any]] = []

    def _append(self, values: Any) -> None:
        """One CSV line appended and flushed; OutputError naming ``--out`` when it cannot be (a full disk)."""
        try:
            self.writer.writerow(values)
            self.file.flush()
        except OSError as e:
            raise OutputError(e.errno, f"{e.strerror or e} (the rows written before are kept; a rerun resumes)",
                              f"--out {self.journal}") from None

    def write(self, row: dict[str, Any]) -> None:
        """Append ``row`` to the file and flush it. Raises OutputError naming ``--out`` (a full disk): the rows
        written before stay, and a rerun resumes from them."""
        self._append([_text(row[n]) for n in self.names])
        self.new.append(row)

    def close(self, complete: bool) -> None:
        """Close the file; a complete Parquet sweep is written to ``out`` atomically and its journal removed."""
        try:
            self.file.close()
        except OSError as e:
            raise OutputError(e.errno, e.strerror or str(e), f"--out {self.journal}") from None
        if not (complete and self.parquet):
            return
        import pyarrow as pa

        pq = _pyarrow(self.out)
        rows = self.previous + self.new
        with replacing(self.out, f"--out {self.out}") as tmp:
            pq.write_table(pa.Table.from_pylist([{n: r[n] for n in self.names} for r in rows],
                                                schema=_arrow_schema(self.columns)), tmp)
        self.journal.unlink(missing_ok=True)
