"""The header row and records of a runs file (CSV): the columns every runs file has, the columns
that describe a run, the names papers use for a model field, and the one-line refusals of a header
that is not a runs file's (:func:`check_header`), read by :mod:`hieropt.io.runs`."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..names import close_name
from .llm import SECTIONS, override_path

REQUIRED = ("model", "network", "bw_gbps", "measured_ms")
"""Columns every runs file has."""
OPTIONAL = ("group", "source", "name", "note")
"""Columns that describe a run but are not model fields."""
ALIASES = {
    "mbs": "micro_batch_size",
    "micro_batch": "micro_batch_size",
    "gbs": "global_batch_size",
    "global_batch": "global_batch_size",
    "gpus": "npus",
    "num_gpus": "npus",
    "n_gpus": "npus",
    "world_size": "npus",
    "seq_len": "sequence_length",
    "seq_length": "sequence_length",
    "seqlen": "sequence_length",
}
"""Column names papers and training scripts use for a model field (Megatron-LM's ``mbs``,
``gbs``, ``seq_len``; ``gpus``), in lower case: such a column is refused naming the field's
key."""


def without_trailing_empty(header: list[str]) -> list[str]:
    """``header`` without the empty names after its last named column: a spreadsheet's export of
    a sheet whose empty columns were once used (Excel writes ``a,b,c,,``); an empty name before a
    named column stays, to be refused."""
    n = len(header)
    while n and not header[n - 1]:
        n -= 1
    return header[:n]


def csv_records(path: Path, text: str) -> Iterator[tuple[int, int, list[str]]]:
    """The records of the CSV ``text`` of file ``path``, parsed by :mod:`csv` over the whole text
    (a quoted cell may hold commas and line breaks): ``(first line, last line, cells)``, lines
    1-based as a :func:`csv.reader`'s ``line_num`` counts them. A line starting with ``#`` where a
    record starts is a comment (a ``#`` inside a quoted cell is text), and a blank line is skipped.

    Raises:
        InputError: text the CSV parser refuses (strict: a quote left open to the end of the file,
            text after a closing quote, a NUL byte), naming the line where the row starts.
    """
    starting = [True]

    def lines() -> Iterator[str]:
        for t in io.StringIO(text, newline=""):
            comment = starting[0] and t.lstrip().startswith("#")
            starting[0] = False
            yield "\n" if comment else t

    reader = csv.reader(lines(), strict=True)
    while True:
        first = reader.line_num + 1
        starting[0] = True
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise InputError(
                f"{path}: line {first}",
                None,
                f"not CSV: {e} (a quoted cell's quote left open runs to the end of the file)"
                if "end of data" in str(e)
                else f"not CSV: {e}",
                "close each quoted cell with '\"' right before the next ',' or the end of the "
                "line (a quote inside a quoted cell is written twice: \"\")",
            ) from None
        if any(c.strip() for c in cells):
            yield first, reader.line_num, cells


def check_header(path: Path, line: int, header: list[str]) -> None:
    """Refuse the header row ``header`` (column names, stripped) of the runs file ``path`` at
    ``line`` unless it is a runs file's: comma-separated, every column of :data:`REQUIRED`
    (a near name or a time in another unit named as such), and every other column a run's
    description (:data:`OPTIONAL`) or a model, plan, NPU or precision field (a paper's name for one,
    :data:`ALIASES`, named with the field's key).

    Raises:
        InputError: one line naming the file, the line, the column and the fix.
    """
    where = f"{path}: line {line}"
    _check_separator(where, header)
    for col in REQUIRED:
        if col not in header:
            found = next((h for h in header if h.lower() == col), None)
            if found is not None:
                raise InputError(
                    where, col, f"missing column (did you mean '{col}'? found '{found}')",
                    f"rename the column '{found}' to '{col}' (column names are lower case)",
                )
            found = close_name(col, [h for h in header if h not in REQUIRED + OPTIONAL])
            if found is not None:
                raise InputError(where, col, *_near_column(col, found))
            raise InputError(
                where,
                col,
                "missing column",
                f"add a '{col}' column (columns: {', '.join(REQUIRED)}, "
                "model fields as --set keys, optional group, source)",
            )
    seen = set()
    fields: dict[tuple[str, ...], str] = {}
    for col in header:
        if not col or col in seen:
            raise InputError(
                where, col or "(empty)", "empty or repeated column name", "name every column once"
            )
        seen.add(col)
        if col not in REQUIRED + OPTIONAL:
            _check_field_column(col, where, fields)


def _near_column(col: str, found: str) -> tuple[str, str]:
    """The problem and fix of the required column ``col`` missing where the header has ``found``,
    a name close to it (:func:`hieropt.names.close_name`); a unit other than the column's
    (``measured_s`` for ``measured_ms``) is named as the wrong unit."""
    problem = f"missing column (the column '{found}' looks like '{col}'"
    unit = col.rsplit("_", 1)[-1]
    other = found.rsplit("_", 1)[-1] if "_" in found else ""
    if col.rsplit("_", 1)[0] == found.rsplit("_", 1)[0] and other in UNIT_WORDS:
        return (f"{problem}, but in {UNIT_WORDS[other]}: the wrong unit; the time is in "
                f"{UNIT_WORDS[unit]})",
                f"rename the column '{found}' to '{col}' and give each time in "
                f"{UNIT_WORDS[unit]}" + (" (seconds x 1,000)" if other == "s" else ""))
    return f"{problem})", f"rename the column '{found}' to '{col}'"


UNIT_WORDS = {"ms": "milliseconds", "s": "seconds", "us": "microseconds", "ns": "nanoseconds",
              "sec": "seconds", "secs": "seconds", "min": "minutes", "h": "hours"}
"""Unit suffixes of a column name, in words (a ``measured_s`` column is named as seconds)."""


def _check_separator(where: str, header: list[str]) -> None:
    """Refuse a header of one column that holds ``;`` or tabs: a file separated by them (a
    spreadsheet's export in a locale whose decimal mark is a comma, or a TSV file); and a first
    line that is a TOML key or table (``generator = "llm"``, ``[network]``): a model or network
    file given as the runs file."""
    if len(header) != 1:
        return
    if "=" in header[0] or header[0].startswith("["):
        raise InputError(
            where,
            None,
            f"the header is '{header[0]}': a TOML file (a model or network file?), not a runs file",
            f"give a runs file: CSV whose header row is {','.join(REQUIRED)},tp,pp,dp,...; a "
            "model or network file is named in a row's model or network cell",
        )
    for sep, name in ((";", "';'"), ("\t", "tabs")):
        if sep in header[0]:
            raise InputError(
                where,
                None,
                f"the header is one column: separated by {name}?",
                "separate the columns with ',' (a bw_gbps cell keeps ';' between its values)",
            )


def _check_field_column(col: str, where: str, fields: dict[tuple[str, ...], str]) -> None:
    """Refuse a column that names no model field, or the field of an earlier column ``fields``
    holds (``tp`` and ``plan.tp``: which cell the run was measured with is not known); record
    its field in ``fields``."""
    try:
        key = tuple(override_path(col, where))
    except InputError as e:
        low = col.lower()
        alias = ALIASES.get(low.replace("-", "_").replace(" ", "_"))
        if alias is not None:
            raise InputError(
                where, col, f"unknown column (did you mean '{alias}'? found '{col}')",
                f"rename the column '{col}' to '{alias}' (the model field's key)",
            ) from None
        if low in OPTIONAL or (low != col and _is_field(low, where)):
            raise InputError(
                where, col, f"unknown column (did you mean '{low}'? found '{col}')",
                f"rename the column '{col}' to '{low}' (column names are lower case)",
            ) from None
        near = close_name(col, [*REQUIRED, *OPTIONAL, *ALIASES.values(),
                                *(f for _, cls in SECTIONS for f in cls.model_fields)])
        if near is not None:
            raise InputError(
                where, col, f"unknown column (did you mean '{near}'? found '{col}')",
                f"rename the column '{col}' to '{near}'",
            ) from None
        raise InputError(
            where,
            col,
            "unknown column: not a model, plan, NPU or precision field",
            f"{e.fix}; or one of {', '.join(REQUIRED + OPTIONAL)}",
        ) from None
    _check_dotted(col, key, where)
    if key in fields:
        raise InputError(
            where,
            col,
            f"repeated column: the field {'.'.join(key)} of column '{fields[key]}'",
            "give each field in one column",
        )
    fields[key] = col


def _check_dotted(col: str, key: tuple[str, ...], where: str) -> None:
    """Refuse, at the header, a dotted column whose last section (``model``, ``plan``, ``npu``,
    ``precision``, ``model.moe``) has no field of the next name (``model.seq_len``), with the
    nearest field's name when one is near."""
    sections = dict(SECTIONS)
    for i in range(len(key) - 1, 0, -1):
        section, cls = ".".join(key[:i]), sections.get(".".join(key[:i]))
        if cls is None:
            continue
        names = list(cls.model_fields)
        if key[i] in names:
            return
        alias = ALIASES.get(key[i])
        near = alias if alias in names else close_name(key[i], names)
        raise InputError(
            where,
            col,
            f"unknown column: {section} has no field '{key[i]}'"
            + (f" (did you mean '{section}.{near}'?)" if near else ""),
            f"use one of {section}'s fields: {', '.join(sorted(names))}",
        )


def _is_field(col: str, where: str) -> bool:
    """Whether ``col`` names a model, plan, NPU or precision field."""
    try:
        override_path(col, where)
    except InputError:
        return False
    return True


__all__ = ["REQUIRED", "OPTIONAL", "ALIASES", "check_header", "csv_records",
           "without_trailing_empty"]
