"""The results file of an exploration: its columns, the CSV / Parquet sink that streams one row per candidate, and the
reader that resumes from it (checked against the space's fingerprint)."""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Any

from ...errors import InputError

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


def typed_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row read back from a results file with every column converted to its type of :data:`COLUMNS`."""
    out = {}
    for name, kind in COLUMNS:
        v = row.get(name)
        if v is None or v == "" or (isinstance(v, float) and math.isnan(v)):
            out[name] = None if kind is not str else ("" if name in ("equivalent_ids", "message") else None)
        else:
            out[name] = kind(float(v)) if kind is int else kind(v)
    return out


def _read_csv(path: Path, space_hash: str, repair: bool) -> list[dict[str, Any]]:
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
    if tuple(header) != COLUMN_NAMES:
        raise InputError(path, "header", "not a results file of this hieropt explore (other columns)",
                         "give another --out file, or delete this one to start over")
    rows = []
    for i, values in enumerate(reader, start=2):
        if len(values) != len(COLUMN_NAMES):
            raise InputError(path, f"line {i}", f"{len(values)} fields, expected {len(COLUMN_NAMES)}",
                             "delete the damaged line (it is solved again) or the file")
        rows.append(_check_hash(typed_row(dict(zip(COLUMN_NAMES, values, strict=True))), path, i, space_hash))
    return rows


def _check_hash(row: dict[str, Any], path: Path, where: Any, space_hash: str) -> dict[str, Any]:
    if row["space_hash"] != space_hash:
        raise InputError(path, f"line {where} space_hash", f"written for another space or objective "
                         f"({row['space_hash']}, this sweep is {space_hash})",
                         "give another --out file, or delete this one to start over")
    return row


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a results file written by :func:`explore` (CSV, or Parquet with pyarrow), typed per
    :data:`COLUMNS`, without checking which space wrote them."""
    path = Path(path)
    if path.suffix == ".parquet":
        pq = _pyarrow(path)
        return [typed_row(r) for r in pq.read_table(path).to_pylist()]
    raw = path.read_text(encoding="utf-8")
    lines = raw.splitlines() if raw.endswith("\n") else raw.splitlines()[:-1]  # drop a line cut off mid-write
    return [typed_row(r) for r in csv.DictReader(lines)]


def _pyarrow(path: Path):
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(path, None, "writing or reading Parquet needs pyarrow, which is not installed",
                         "pip install pyarrow, or give a .csv file") from None
    return pq


def _arrow_schema():
    import pyarrow as pa

    types = {str: pa.string(), int: pa.int64(), float: pa.float64()}
    return pa.schema([(n, types[k]) for n, k in COLUMNS])


class ResultSink:
    """Streams rows to ``out`` as they arrive: CSV directly; Parquet through a CSV journal beside it
    (``OUT.partial.csv``), rewritten into the Parquet file when the sweep completes."""

    def __init__(self, out: Path, space_hash: str):
        self.out = out
        self.hash = space_hash
        self.parquet = out.suffix == ".parquet"
        self.journal = out.with_name(out.name + ".partial.csv") if self.parquet else out
        self.previous: list[dict[str, Any]] = []
        if self.parquet:
            pq = _pyarrow(out)
            if out.exists():
                table = pq.read_table(out)
                if tuple(table.column_names) != COLUMN_NAMES:
                    raise InputError(out, "columns", "not a results file of this hieropt explore (other columns)",
                                     "give another --out file, or delete this one to start over")
                self.previous = [_check_hash(typed_row(r), out, i, self.hash)
                                 for i, r in enumerate(table.to_pylist(), start=1)]
        self.previous += _read_csv(self.journal, self.hash, repair=True)
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.journal.exists() or self.journal.stat().st_size == 0
        self.file = self.journal.open("a", encoding="utf-8", newline="")
        self.writer = csv.writer(self.file, lineterminator="\n")
        if fresh:
            self.writer.writerow(COLUMN_NAMES)
            self.file.flush()
        self.new: list[dict[str, Any]] = []

    def write(self, row: dict[str, Any]) -> None:
        self.writer.writerow([_text(row[n]) for n in COLUMN_NAMES])
        self.file.flush()
        self.new.append(row)

    def close(self, complete: bool) -> None:
        self.file.close()
        if not (complete and self.parquet):
            return
        import pyarrow as pa

        pq = _pyarrow(self.out)
        rows = self.previous + self.new
        tmp = self.out.with_name(self.out.name + ".tmp")
        pq.write_table(pa.Table.from_pylist([{n: r[n] for n in COLUMN_NAMES} for r in rows], schema=_arrow_schema()),
        tmp)
        os.replace(tmp, self.out)
        self.journal.unlink(missing_ok=True)
