"""Shared helpers of the readers: opening files and turning pydantic errors into one-line InputErrors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import InputError


def read_text(path: Path, what: str) -> str:
    """Read a text file (UTF-8, CRLF tolerated); missing or unreadable files raise :class:`InputError`."""
    path = Path(path)
    if path.is_dir():
        raise InputError(path, None, f"is a folder, not a {what} file", f"give the {what} file's path")
    if not path.is_file():
        raise InputError(path, None, f"{what} file not found", "check the path (relative paths in an instance file "
                         "are taken from the instance file's folder)")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(path, None, f"cannot read {what} file: {e}", "give a readable UTF-8 text file") from e


def read_yaml_mapping(path: Path, what: str) -> dict[str, Any]:
    """Parse a YAML file whose top level must be a mapping."""
    text = read_text(path, what)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else None
        raise InputError(path, where, f"invalid YAML: {getattr(e, 'problem', e)}", "fix the YAML syntax") from e
    if not isinstance(data, dict):
        raise InputError(path, None, f"expected a YAML mapping of keys for the {what}", "see the LIBRA input format")
    return data


_BOUND_OPS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}  # pydantic error ctx keys of numeric bounds


def field_path(prefix: str, loc: tuple[int | str, ...]) -> str:
    """``prefix`` and pydantic's ``loc`` as one field path, list positions as ``[i]``: ``network.dims[0].npus``."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def validation_error(e: ValidationError, source: str | Path, prefix: str = "") -> InputError:
    """Turn the first error of a pydantic ``ValidationError`` into an :class:`InputError`.

    The field is pydantic's ``loc`` joined with dots, list positions as ``[i]`` (prefixed by ``prefix``); a numeric
    bound or a choice the value breaks becomes the fix (``use a number >= 2``). Messages written as
    ``"<field>: <problem>; fix: <fix>"`` by hieropt's own validators are split into their parts.
    """
    err = e.errors()[0]
    field = field_path(prefix, err["loc"]) or None
    msg = str(err["msg"]).removeprefix("Value error, ")
    fix = None
    if "; fix: " in msg:
        msg, fix = msg.split("; fix: ", 1)
    ctx = err.get("ctx") or {}
    bound = next(((op, ctx[k]) for k, op in _BOUND_OPS.items() if k in ctx), None)
    if err["type"] == "missing":
        fix = fix or "add it"
    elif err["type"] == "extra_forbidden":
        msg, fix = "unknown key", fix or "remove it or check its spelling"
    elif fix is None and bound is not None:
        limit = f"{bound[1]:g}" if isinstance(bound[1], int | float) else str(bound[1])
        fix = f"got {err.get('input')!r}; use a number {bound[0]} {limit}"
    elif fix is None and err["type"] == "literal_error" and "expected" in ctx:
        fix = f"got {err.get('input')!r}; use {ctx['expected']}"
    elif fix is None:
        fix = f"got {err.get('input')!r}; correct the value"
    if ": " in msg and field is None:
        field, msg = msg.split(": ", 1)
    return InputError(source, field, msg, fix)
