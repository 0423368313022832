"""The results file of an exploration: its columns, the CSV / Parquet sink that streams one row per
candidate, and the reader that resumes from it (checked against the space's fingerprint)."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...io.files import OutputError, replacing

ROWS_VERSION = 2
"""What a results row's design is: version 2, with the performance objective, the cheapest design
within 1e-8 of the optimal time (version 1: the performance solve's own point, which may cost more
for the same time). Part of every results file's fingerprint (:func:`fingerprint`), so that a file
whose rows mean something else is not resumed."""


def fingerprint(space: dict) -> str:
    """Short sha256 (12 hex digits) of a space's fields ``space`` (its JSON dump: objective and
    targets included) and :data:`ROWS_VERSION`: a results file belongs to one fingerprint."""
    text = json.dumps({"space": space, "rows": ROWS_VERSION}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# ---------------------------------------------------------------------------------------- one solve
COLUMNS: tuple[tuple[str, type], ...] = (
    ("shape_id", str),
    ("space_hash", str),
    ("n_dims", int),
    ("levels", str),
    ("blocks", str),
    ("npus", str),
    ("tp_groups", str),
    ("dp_groups", str),
    ("equivalents", int),
    ("equivalent_ids", str),
    ("status", str),
    ("message", str),
    ("objective", str),
    ("objective_value", float),
    ("objective_bound", float),
    ("objective_unit", str),
    ("gap", float),
    ("iteration_time_ns", float),
    ("network_cost_usd", float),
    ("bw_gbps", str),
    ("scaleout_gbps_per_npu", float),
    ("scaleout_usd", float),
    ("nic_usd", float),
    ("nics", int),
    ("solve_seconds", float),
    ("worker", str),
)
"""Columns of the results file, with their types (``None`` / empty: not applicable)."""


COLUMN_NAMES = tuple(n for n, _ in COLUMNS)


# ------------------------------------------------------------------------------------- results file
def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, dict)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def typed_row(
    row: dict[str, Any], columns: tuple[tuple[str, type], ...] = COLUMNS
) -> dict[str, Any]:
    """A row read back from a results file with every column converted to its type of ``columns``
    (default :data:`COLUMNS`). A ``list`` or ``dict`` column is held as JSON text in a file (a CSV
    cell, a Parquet string) and read back as the list or object."""
    out = {}
    for name, kind in columns:
        v = row.get(name)
        if v is None or v == "" or (isinstance(v, float) and math.isnan(v)):
            out[name] = (
                None if kind is not str else ("" if name in ("equivalent_ids", "message") else None)
            )
        elif kind is list or kind is dict:
            out[name] = json.loads(v) if isinstance(v, str) else kind(v)
        else:
            out[name] = kind(float(v)) if kind is int else kind(v)
    return out


def _read_csv(path: Path, space_hash: str, repair: bool,
              columns: tuple[tuple[str, type], ...] = COLUMNS) -> list[dict[str, Any]]:
    """Rows of a results CSV; a last line cut off by an interruption is dropped (and removed when
    ``repair``)."""
    return list(_iter_csv(path, space_hash, repair, columns))


def older_header(header: tuple[str, ...], names: tuple[str, ...],
                 added: tuple[str, ...] = ()) -> bool:
    """Whether ``header`` is ``names`` without some of the columns ``added`` (a results file written
    before they were added: its rows read back with those columns empty)."""
    have = set(header)
    return have < set(names) and header == tuple(n for n in names if n in have or n not in added)


def _iter_csv(
    path: Path, space_hash: str, repair: bool, columns: tuple[tuple[str, type], ...] = COLUMNS,
    added: tuple[str, ...] = (),
):
    """:func:`_read_csv` one row at a time (the file is read line by line); a file without some of
    the columns ``added`` (:func:`older_header`) reads back with them empty."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as f:
        f.seek(-1, os.SEEK_END)
        whole = f.read(1) == b"\n"
    if not whole:
        _cut_last_line(path, repair)
    names = tuple(n for n, _ in columns)
    with path.open(encoding="utf-8", newline="") as f:
        # (without repair: a last line cut off is dropped)
        lines = (line for line in f if line.endswith("\n"))
        reader = csv.reader(lines)
        header = next(reader, None)
        if header is None:
            return
        header = tuple(header)
        if header != names and not older_header(header, names, added):
            raise InputError(
                path,
                "header",
                "not a results file of this hieropt explore (other columns)",
                "give another --out file, or delete this one to start over",
            )
        for i, values in enumerate(reader, start=2):
            if len(values) != len(header):
                raise InputError(path, f"line {i}", f"{len(values)} fields, expected {len(header)}",
                                 "delete the damaged line (it is solved again) or the file")
            yield _check_hash(
                typed_row(dict(zip(header, values, strict=True)), columns), path, i, space_hash
            )


def _upgrade_csv(path: Path, columns: tuple[tuple[str, type], ...], added: tuple[str, ...],
                 space_hash: str, upgrade: Callable[[dict[str, Any]], dict[str, Any]] | None = None
                 ) -> None:
    """Rewrite the results CSV ``path`` whose header lacks some of the columns ``added``
    (:func:`older_header`) with every column of ``columns``, so that rows appended after it have
    the file's columns: each row as ``upgrade`` gives it (its typed row in, the row as this
    hieropt writes it out: the cells it changes written anew, the others copied as they are);
    without ``upgrade`` the added cells empty. A file with another header, or whose first row is
    of another ``space_hash``, is left as it is (the reader refuses it)."""
    from ...io.files import replacing

    names = tuple(n for n, _ in columns)
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = tuple(next(reader, ()))
        first = dict(zip(header, next(reader, ()), strict=False))
    if not older_header(header, names, added) or first.get("space_hash", space_hash) != space_hash:
        return
    with (replacing(path, f"--out {path}") as tmp, path.open(encoding="utf-8", newline="") as f,
          tmp.open("w", encoding="utf-8", newline="") as g):
        reader = csv.reader(line for line in f if line.endswith("\n"))
        writer = csv.writer(g, lineterminator="\n")
        next(reader)
        writer.writerow(names)
        for values in reader:
            cells = dict(zip(header, values, strict=False))
            if upgrade is not None:
                was = typed_row(cells, columns)
                now = upgrade(dict(was))
                cells.update((n, _text(now[n])) for n in names if now[n] != was[n])
            writer.writerow([cells.get(n, "") for n in names])


def _cut_last_line(path: Path, repair: bool) -> None:
    """Remove a last line cut off mid-write (when ``repair``), reading the file's end only."""
    if not repair:
        return
    size = path.stat().st_size
    with path.open("r+b") as f:
        pos = size
        while pos > 0:
            step = min(1 << 16, pos)
            f.seek(pos - step)
            chunk = f.read(step)
            k = chunk.rfind(b"\n")
            if k >= 0:
                f.truncate(pos - step + k + 1)
                return
            pos -= step
        f.truncate(0)


def _check_hash(row: dict[str, Any], path: Path, where: Any, space_hash: str) -> dict[str, Any]:
    if row["space_hash"] != space_hash:
        raise InputError(
            path,
            f"line {where} space_hash",
            f"written for another space or objective, or by a hieropt whose rows mean something "
            f"else ({row['space_hash']}, this sweep is {space_hash})",
            "give another --out file, or delete this one to start over",
        )
    return row


def read_results(
    path: str | Path, columns: tuple[tuple[str, type], ...] = COLUMNS
) -> list[dict[str, Any]]:
    """The rows of a results file written by :func:`explore` (or a study with its own ``columns``;
    CSV, or Parquet with pyarrow), typed per ``columns``, without checking which space wrote
    them."""
    path = Path(path)
    if path.suffix == ".parquet":
        pq = _pyarrow(path)
        return [typed_row(r, columns) for r in pq.read_table(path).to_pylist()]
    raw = path.read_text(encoding="utf-8")
    # drop a line cut off mid-write
    lines = raw.splitlines() if raw.endswith("\n") else raw.splitlines()[:-1]
    return [typed_row(r, columns) for r in csv.DictReader(lines)]


def _pyarrow(path: Path):
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            path,
            None,
            "writing or reading Parquet needs pyarrow, which is not installed",
            "pip install pyarrow, or give a .csv file",
        ) from None
    return pq


def _arrow_schema(columns: tuple[tuple[str, type], ...] = COLUMNS):
    import pyarrow as pa

    types = {
        str: pa.string(),
        int: pa.int64(),
        float: pa.float64(),
        list: pa.string(),
        dict: pa.string(),
    }
    return pa.schema([(n, types[k]) for n, k in columns])


class ResultSink:
    """Streams rows to ``out`` as they arrive: CSV directly; Parquet through a CSV journal beside it
    (``OUT.partial.csv``), rewritten into the Parquet file (batch by batch) when the sweep
    completes. Rows written are not kept.

    ``previous`` holds the rows of an earlier run (a resume); with ``keep_previous=False`` it stays
    empty and :meth:`read_previous` yields them one at a time instead (a sweep of millions of
    rows). ``added``: columns a file written by an older hieropt may lack (:func:`older_header`):
    its rows read back with them empty, or as ``upgrade`` fills them in (a typed row in, the row
    as this hieropt writes it out), and a CSV is rewritten with them, its rows as read back
    (:func:`_upgrade_csv`), before rows are appended."""

    def __init__(self, out: Path, space_hash: str, columns: tuple[tuple[str, type], ...] = COLUMNS,
                 keep_previous: bool = True, added: tuple[str, ...] = (),
                 upgrade: Callable[[dict[str, Any]], dict[str, Any]] | None = None):
        if out.suffix.lower() not in (".csv", ".parquet"):
            raise InputError(
                "out",
                str(out),
                f"unknown results format '{out.suffix or '(no suffix)'}'",
                "name a .csv file (or .parquet with pyarrow installed)",
            )
        if not out.parent.is_dir():
            raise InputError("out", str(out), f"folder '{out.parent}' does not exist",
                             "create it first, or name a file in an existing folder")
        self.out = out
        self.hash = space_hash
        self.columns, self.added, self.upgrade = columns, added, upgrade
        self.names = tuple(n for n, _ in columns)
        self.parquet = out.suffix.lower() == ".parquet"
        self.journal = out.with_name(out.name + ".partial.csv") if self.parquet else out
        if self.parquet:
            pq = _pyarrow(out)
            have = tuple(pq.ParquetFile(out).schema_arrow.names) if out.exists() else self.names
            if have != self.names and not older_header(have, self.names, added):
                raise InputError(
                    out,
                    "columns",
                    "not a results file of this hieropt explore (other columns)",
                    "give another --out file, or delete this one to start over",
                )
        if self.journal.exists() and self.journal.stat().st_size:
            _cut_last_line(self.journal, True)  # (a line cut off by an interruption)
            if added:  # (an older file's rows get the columns added since, empty)
                _upgrade_csv(self.journal, columns, added, space_hash, upgrade)
        self.previous: list[dict[str, Any]] = list(self.read_previous()) if keep_previous else []
        fresh = not self.journal.exists() or self.journal.stat().st_size == 0
        self.file = self.journal.open("a", encoding="utf-8", newline="")
        self.writer = csv.writer(self.file, lineterminator="\n")
        if fresh:
            self._append(self.names)

    def read_previous(self):
        """The rows of the earlier run, typed (and as ``upgrade`` gives them), one at a time
        (Parquet file first, then the journal)."""
        fill = self.upgrade or (lambda row: row)
        if self.parquet and self.out.exists():
            pq = _pyarrow(self.out)
            i = 0
            for batch in pq.ParquetFile(self.out).iter_batches(batch_size=4096):
                for r in batch.to_pylist():
                    i += 1
                    yield fill(_check_hash(typed_row(r, self.columns), self.out, i, self.hash))
        for row in _iter_csv(self.journal, self.hash, False, self.columns, self.added):
            yield fill(row)

    def _append(self, values: Any) -> None:
        """One CSV line appended and flushed; OutputError naming ``--out`` when it cannot be (a full
        disk)."""
        try:
            self.writer.writerow(values)
            self.file.flush()
        except OSError as e:
            raise OutputError(
                e.errno,
                f"{e.strerror or e} (the rows written before are kept; a rerun resumes)",
                f"--out {self.journal}",
            ) from None

    def write(self, row: dict[str, Any]) -> None:
        """Append ``row`` (its values as text; lists and objects as JSON) and flush. Raises
        OutputError naming ``--out`` (a full disk): the rows written before stay, and a rerun
        resumes from them."""
        self._append([_text(row[n]) for n in self.names])

    def close(self, complete: bool) -> None:
        """Close the file; a complete Parquet sweep is written to ``out`` atomically and its journal
        removed."""
        try:
            self.file.close()
        except OSError as e:
            raise OutputError(e.errno, e.strerror or str(e), f"--out {self.journal}") from None
        if not (complete and self.parquet):
            return
        pq = _pyarrow(self.out)
        import pyarrow as pa

        schema = _arrow_schema(self.columns)
        with replacing(self.out, f"--out {self.out}") as tmp, pq.ParquetWriter(tmp, schema) as w:
            batch: list[dict[str, Any]] = []
            for r in self.read_previous():
                batch.append({n: _cell(r[n]) for n in self.names})
                if len(batch) == 4096:
                    w.write_table(pa.Table.from_pylist(batch, schema=schema))
                    batch = []
            w.write_table(pa.Table.from_pylist(batch, schema=schema))
        self.journal.unlink(missing_ok=True)


def _cell(v: Any) -> Any:
    """A Parquet cell: lists and objects as JSON text."""
    return json.dumps(v, separators=(",", ":")) if isinstance(v, (list, dict)) else v
