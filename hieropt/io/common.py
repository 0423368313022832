"""Shared helpers of the readers: opening files and turning pydantic errors into one-line
InputErrors. Imports neither pydantic nor numpy (PyYAML when a YAML file is read), so a bad instance
file is reported before the spec models are loaded."""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, number_problem
from ..names import GROUP_BANDWIDTHS, close_name
from ..spec.base import text_for_number
from .kinds import YAML_KINDS, check_kind, file_kind

if TYPE_CHECKING:
    from pydantic import ValidationError


_READS: ContextVar[dict[str, None] | None] = ContextVar("hieropt_files_read", default=None)
"""The record of the innermost :func:`recording_reads` block (None outside one: a library caller
records nothing)."""


@contextmanager
def recording_reads() -> Iterator[None]:
    """Within the block, :func:`read_text` records the real path of every file it reads, in order
    (:func:`files_read`): the command line's record of the files a command reads, none of which an
    output may replace. Blocks nest; each starts empty and ends with its record."""
    token = _READS.set({})
    try:
        yield
    finally:
        _READS.reset(token)


def files_read() -> tuple[Path, ...]:
    """The files :func:`read_text` has read inside the innermost :func:`recording_reads` block
    (real paths; none outside a block)."""
    return tuple(map(Path, _READS.get() or ()))


def path_argument(path: Any, what: str, example: str) -> Path:
    """``path`` (a str or Path, the argument of a library reader of ``what``, e.g. "an instance
    file") as a Path.

    Raises:
        InputError: another type (None, a dict, ...), naming the argument ``path``; the fix shows
            the call ``example``.
    """
    if not isinstance(path, str | Path):
        raise InputError(
            "path",
            None,
            f"expected the path (str or Path) of {what}, got a {type(path).__name__}",
            f"pass the file's path, e.g. {example}",
        )
    return Path(path)


def read_text(path: Path, what: str) -> str:
    """Read a text file (UTF-8, CRLF tolerated; a leading UTF-8 byte-order mark, which some Windows
    editors write, is dropped: every TOML, YAML and workload reader reads through here).

    Args:
        path: the file.
        what: the kind of file, for the messages (``"instance"``, ``"parts catalog"``).

    Raises:
        InputError: a missing file, a folder, or a file that is not readable UTF-8 text.
    """
    path = Path(path)
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        pass
    # (a name too long for the file system, a loop of links, no permission on a folder)
    except OSError as e:
        raise InputError(
            short_repr(str(path)),
            None,
            f"cannot be used as {a_file(what)} path: {e.strerror or e}",
            f"give the {what} file's path",
        ) from None
    if path.is_dir():
        raise InputError(
            path, None, f"is a folder, not {a_file(what)}", f"give the {what} file's path"
        )
    if path.exists() and not path.is_file():
        raise InputError(
            path,
            None,
            f"exists but is not a regular file (a device, a pipe or a socket), so not "
            f"{a_file(what)}",
            f"give the {what} file's path",
        )
    if not path.is_file():
        raise InputError(
            path,
            None,
            f"{what} file not found",
            "check the path (a relative path is taken from the "
            "current folder, or from the folder of the file that names it)",
        )
    try:
        text = path.read_text(encoding="utf-8-sig")
        record = _READS.get()
        if record is not None:
            record[os.path.realpath(path)] = None
        return text
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(
            path, None, f"cannot read {what} file: {e}", "give a readable UTF-8 text file"
        ) from e


def a_file(what: str) -> str:
    """``what`` as a file kind with its article: ``"an instance file"``, ``"a parts catalog
    file"``."""
    return f"{'an' if what[:1].lower() in 'aeiou' else 'a'} {what} file"


_DIGITS = "a number with more digits than Python reads (4,300)"


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, safe for integers with thousands of digits
    (whose ``repr`` would raise ValueError past 4,300 digits): those are described by their digit
    count."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    try:
        text = repr(value)
    except ValueError:  # a container holding such an integer
        return f"a {type(value).__name__} holding {_DIGITS}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def positive_number(value: Any, source: str | Path, field: str, fix: str) -> float:
    """``value`` (a number read from a file) as a finite float > 0.

    Raises:
        InputError: naming ``source`` and ``field``, with ``fix``, for a boolean, text, a value <=
            0, or a number that is not finite as a float (an integer with hundreds of digits
            overflows).
    """
    if isinstance(value, str):  # ("15e12", "10M": the number it stands for)
        problem, _, text_fix = text_for_number(field, value).partition(": ")[2].partition("; fix: ")
        raise InputError(source, field, problem, text_fix)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InputError(source, field, f"{short_repr(value)} is not a positive number", fix)
    try:
        out = float(value)
    except OverflowError:
        out = math.inf
    if not math.isfinite(out):
        raise InputError(
            source, field, f"{short_repr(value)} is too large (not a finite number)", fix
        )
    return out


def parse_toml(text: str, source: str | Path) -> dict[str, Any]:
    """Parse TOML ``text`` from ``source`` (a leading byte-order mark dropped, as :func:`read_text`
    does).

    Raises:
        InputError: bad syntax (a key given twice included), or an integer Python cannot read.
    """
    try:
        return tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as e:
        raise InputError(source, None, f"invalid TOML: {e}", "fix the TOML syntax") from e
    except ValueError as e:  # tomllib's int() of a number with more than 4,300 digits
        raise InputError(source, None, f"invalid TOML: {_DIGITS} ({e.args[0].split(':')[0]})",
                         "give a number of realistic size") from e


def read_toml(path: Path, what: str, expected: str | None = None) -> dict[str, Any]:
    """The TOML table in ``path`` (``what`` names the file kind in errors, and ``expected``,
    default ``what``, the kinds accepted: :func:`hieropt.io.kinds.check_kind`).

    Raises:
        InputError: a missing file or bad TOML; a file of another kind than ``what`` (an instance
            where a co-design space is read, an ASTRA-sim workload or a runs CSV where a TOML file
            is read), named for what it is with the command it belongs to; a workload model file
            where an instance or a space is read (:func:`hieropt.io.kinds.check_not_model_file`).
    """
    text = read_text(path, what)
    try:
        data = parse_toml(text, path)
    except InputError:
        check_kind(path, expected or what, text)
        raise
    check_kind(path, expected or what, text, data)
    return data


def referenced_file(base: Path, value: Any, src: str, field: str, what: str) -> Path:
    """The file ``value`` names, relative to ``base``; a missing file, a folder or an empty name is
    an InputError naming the referring file ``src`` and its ``field`` (not only the path that was
    not found)."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(
            src,
            field,
            f"expected the name of {a_file(what)}, got {short_repr(value)}",
            "give a path",
        )
    p = Path(value)
    p = p if p.is_absolute() else base / p
    try:
        p.stat()
    except (FileNotFoundError, NotADirectoryError):
        pass
    # (a name too long for the file system, a loop of links, no permission on a folder)
    except OSError as e:
        raise InputError(
            src,
            field,
            f"{short_repr(value)} cannot be used as a path: {e.strerror or e}",
            f"give the {what} file's path",
        ) from None
    if p.is_dir():
        raise InputError(
            src,
            field,
            f"'{value}' is a folder ({p}), not {a_file(what)}",
            f"give the {what} file's path",
        )
    if not p.is_file():
        raise InputError(src, field, f"{what} file not found: '{value}' (looked for {p})",
                         "check the path; relative paths are taken from this file's folder")
    return p


def missing_key(data: dict[str, Any], key: str, src: str | Path, fix: str) -> InputError:
    """The error for a required top-level ``key`` absent from ``data`` (a parsed TOML file): when a
    table holds it, it was written after that table's header (TOML puts every key after a
    ``[table]`` header into that table)."""
    inside = [name for name, v in data.items() if isinstance(v, dict) and key in v]
    if inside:
        return InputError(
            src,
            key,
            f"missing at the top level (it is inside [{inside[0]}]: TOML puts every key after "
            "a [table] header into that table)",
            f"move '{key}' above the first [table] header",
        )
    return InputError(src, key, "missing", fix)


_EXPONENT_FLOAT = r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$"
"""A number with an exponent and at least one mantissa digit, with or without a decimal point or
an exponent sign (``1e3``, ``78e-1``, ``.5e1``; ``-e5`` stays text): a float in YAML 1.2 (and
yaml-cpp, LIBRA's and ASTRA-sim's reader), text in PyYAML's YAML 1.1, which needs both."""


def _unique_key_loader() -> type:
    """A PyYAML ``SafeLoader`` subclass whose mapping constructor refuses a key given twice in one
    mapping (PyYAML itself keeps the last one) and which reads a plain ``1e3`` as a float, as
    YAML 1.2 does (a quoted ``'1e3'`` stays text). Built when a YAML file is read, so PyYAML is
    imported only then."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, int] = {}
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        # '<<: *anchor': keys written next to it override the merged ones, by design
                        continue
                    key = self.construct_object(key_node, deep=True)
                    line = key_node.start_mark.line + 1
                    try:
                        if key in seen:
                            raise _DuplicateKeyError(key, line, seen[key])
                        seen[key] = line
                    except TypeError:  # an unhashable key: PyYAML's own constructor reports it
                        continue
            return super().construct_mapping(node, deep=deep)

    UniqueKeyLoader.add_implicit_resolver(
        "tag:yaml.org,2002:float", re.compile(_EXPONENT_FLOAT), list("-+0123456789.")
    )
    return UniqueKeyLoader


class _DuplicateKeyError(Exception):
    """Raised by the YAML loader for a key given twice in one mapping; :func:`load_yaml` turns it
    into an :class:`InputError`. ``line`` and ``first_line`` are 1-based."""

    def __init__(self, key: Any, line: int, first_line: int):
        self.key, self.line, self.first_line = key, line, first_line
        super().__init__(f"key {key!r} given twice (lines {first_line} and {line})")


def load_yaml(text: str, source: str | Path) -> Any:
    """Parse YAML ``text`` read from ``source`` (PyYAML's safe subset, a leading byte-order mark
    tolerated).

    Every YAML reader of hieropt goes through here: a key given twice in one mapping is refused
    (PyYAML would keep the last one silently, e.g. a second ``NpusCount`` or a second cost class).

    Raises:
        InputError: naming ``source`` and the line, for bad syntax, a key given twice (with the line
            of its first occurrence), or an integer with more digits than Python reads.
    """
    import yaml

    try:
        return yaml.load(text, Loader=_unique_key_loader())  # noqa: S506 - a SafeLoader subclass
    except _DuplicateKeyError as e:
        raise InputError(
            source,
            f"line {e.line}",
            f"key {short_repr(e.key)} given twice (first on line "
            f"{e.first_line}; YAML would keep the last one)",
            "keep one of them",
        ) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        position = getattr(e, "position", None)  # (a ReaderError: a character YAML does not allow)
        where = (
            f"line {mark.line + 1}"
            if mark is not None
            else f"line {text[:position].count(chr(10)) + 1}"
            if isinstance(position, int)
            else None
        )
        # (one line: not the parser's context)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(source, where, f"invalid YAML: {problem}", "fix the YAML syntax") from e
    except ValueError as e:  # PyYAML's int() of a number with more than 4,300 digits
        raise InputError(
            source, None, f"invalid YAML: {_DIGITS}", "give a number of realistic size"
        ) from e


def read_yaml_mapping(path: Path, what: str, expected: str | None = None) -> dict[str, Any]:
    """Parse a YAML file whose top level must be a mapping (``what`` names the file kind in errors;
    ``expected``, default ``what``, the kinds accepted: :func:`hieropt.io.kinds.check_kind`).

    Raises:
        InputError: a missing or unreadable file, bad YAML, a key given twice (:func:`load_yaml`),
            a top level that is not a mapping, or a file of another kind than ``what``
            (:func:`hieropt.io.kinds.check_kind`).
    """
    text = read_text(path, what)
    try:
        data = load_yaml(text, path)
    except InputError:
        # (bad YAML: its line, whatever kind of YAML it was meant as; a TOML or CSV file: its kind)
        if file_kind(text) not in YAML_KINDS:
            check_kind(path, expected or what, text)
        raise
    check_kind(path, expected or what, text, data if isinstance(data, dict) else None)
    if not isinstance(data, dict):
        raise InputError(
            path,
            None,
            f"expected a YAML mapping of keys for the {what}",
            "see the LIBRA input format",
        )
    return data


# pydantic error ctx keys of numeric bounds
_BOUND_OPS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
_BOUND_WORDS = {">=": "is below", ">": "is not above", "<=": "is above", "<": "is not below"}
"""How a value that breaks a bound is said (``tp: 0 is below 1; fix: use an integer >= 1``)."""


def field_path(prefix: str, loc: tuple[int | str, ...]) -> str:
    """``prefix`` and pydantic's ``loc`` as one field path, list positions as ``[i]``:
    ``network.dims[0].npus``."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def readable_bound(msg: str, limit: object) -> str:
    """Pydantic's bound message (``Input should be greater than or equal to 0.000000000001``) with
    the limit written as a person would (``1e-12``; a whole number as it is); any other message as
    it is."""
    words, _, last = msg.rpartition(" ")
    if not msg.startswith("Input should be ") or not isinstance(limit, int | float):
        return msg
    try:
        if float(last) != limit:  # (the message does not end in the bound)
            return msg
    except ValueError:
        return msg
    return f"{words} {limit:g}" if isinstance(limit, float) else f"{words} {limit}"


def check_network_table(source: str | Path, value: Any, keys: Iterable[str]) -> None:
    """Refuse a top-level key of ``keys`` written inside the ``[network]`` table ``value`` of file
    ``source`` (in TOML a key written below the ``[network]`` line belongs to that table): the
    message names the key as the file's top-level one and the fix moves it above that line
    (``group_bandwidth = "links"``, ``chunks = 4``). Not a table: nothing to check.

    Raises:
        InputError: ``network.KEY``, where the key belongs and the line to write.
    """
    if not isinstance(value, dict):
        return
    import json

    for k in keys:
        if k in value:
            v = value[k]
            shown = json.dumps(v) if isinstance(v, str | bool | int | float) else repr(v)
            raise InputError(
                source,
                f"network.{k}",
                f"unknown key: {k} is a top-level key of the file, not a key of [network] (a "
                "key written below the [network] line belongs to that table)",
                f"move {k} = {shown} above the [network] line (and above any other [table] "
                "line: a file's top-level keys come first)",
            )


def unknown_key_error(source: str | Path, field: str | None, key: object, known: Any,
                      fix: str | None = None, otherwise: str | None = None) -> InputError:
    """The InputError of an unknown ``key`` (at ``field``, the key's path): "unknown key (did you
    mean 'npus'?)" when a name of ``known`` is close to it (:func:`hieropt.names.close_name`), with
    the fix ``fix`` (default: rename it to that name, else ``otherwise``, else remove it or check
    its spelling)."""
    guess = close_name(key, known)
    if guess is None:
        return InputError(source, field, "unknown key",
                          fix or otherwise or "remove it or check its spelling")
    return InputError(source, field, f"unknown key (did you mean '{guess}'?)",
                      fix or f"rename '{key}' to '{guess}'")


def model_fields_at(model: Any, loc: tuple[int | str, ...]) -> list[str]:
    """The field names (and aliases) of the pydantic model found at ``loc`` inside ``model`` (a
    model class; list positions and dict keys along ``loc`` are stepped over), [] when ``model`` is
    None."""
    from typing import get_args

    def nested(annotation: Any) -> Any:
        if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
            return annotation
        return next((m for a in get_args(annotation) if (m := nested(a)) is not None), None)

    for part in loc:
        fields = getattr(model, "model_fields", {})
        if isinstance(part, str) and part in fields:
            model = nested(fields[part].annotation)
    fields = getattr(model, "model_fields", {})
    return [*fields, *(f.alias for f in fields.values() if f.alias)]


def model_named(title: str) -> Any:
    """The pydantic model class named ``title`` (a ``ValidationError``'s title: the model it
    validated), when exactly one loaded class has that name; else None. Lets an unknown key be
    matched against the fields where it was written, at any depth, when the caller did not name
    the model."""
    from pydantic import BaseModel

    found: set[type] = set()
    stack: list[type] = [BaseModel]
    while stack:
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if sub.__name__ == title:
                found.add(sub)
    return found.pop() if len(found) == 1 else None



def short_number(value: int | float) -> str:
    """``value`` as a message shows it: a float by ``:g``, an integer in full below 1e15 and by
    ``:g`` above (``1e+60``), an integer beyond every float (above about 1.8e308) by its digits
    (``1.00e+400``)."""
    if isinstance(value, int) and abs(value) < 10**15:
        return str(value)
    try:
        return f"{float(value):g}"
    except OverflowError:  # (no float holds it)
        digits = str(abs(value))
        return f"{'-' if value < 0 else ''}{digits[0]}.{digits[1:3]}e+{len(digits) - 1}"


def validation_error(e: ValidationError, source: str | Path, prefix: str = "",
                     model: Any = None) -> InputError:
    """Turn the first error of a pydantic ``ValidationError`` into an :class:`InputError` (an
    unknown key first: a misspelled required key is also reported missing, and the unknown one
    names the slip).

    The field is pydantic's ``loc`` joined with dots, list positions as ``[i]`` (prefixed by
    ``prefix``); a number that breaks a numeric bound is said in words (``0 is below 1``) and the
    bound becomes the fix (``use an integer >= 1``, ``use a number <= 1``); a choice the value
    breaks becomes the fix. Messages written as ``"<field>: <problem>; fix: <fix>"`` by hieropt's
    own validators are split into their parts. An unknown key is matched against the missing keys
    beside it and the fields of ``model`` (the validated model class; default: the one named by
    the error's title, :func:`model_named`) there: "unknown key (did you mean 'npus'?)".
    """
    errors = e.errors()
    err = next((x for x in errors if x["type"] == "extra_forbidden"), errors[0])
    field = field_path(prefix, err["loc"]) or None
    if err["type"] == "extra_forbidden":
        parent = err["loc"][:-1]
        known = [x["loc"][-1] for x in errors if x["type"] == "missing" and x["loc"][:-1] == parent]
        return unknown_key_error(source, field, err["loc"][-1],
                                 known + model_fields_at(model or model_named(e.title), parent))
    msg = str(err["msg"]).removeprefix("Value error, ")
    fix = None
    if "; fix: " in msg:
        msg, fix = msg.split("; fix: ", 1)
    ctx = err.get("ctx") or {}
    bound = next(((op, ctx[k]) for k, op in _BOUND_OPS.items() if k in ctx), None)
    if err["type"] == "missing":
        fix = fix or "add it"
    elif fix is None and bound is not None:
        limit = f"{bound[1]:g}" if isinstance(bound[1], int | float) else str(bound[1])
        msg = readable_bound(msg, bound[1])
        value = err.get("input")
        # (NaN fails every bound: say what it is)
        if isinstance(value, float) and not math.isfinite(value):
            msg = number_problem(value, "a finite number")
            fix = f"use a number {bound[0]} {limit}"
        elif isinstance(value, int | float) and not isinstance(value, bool):
            # (the project's words, not pydantic's "Input should be greater than or equal to 1")
            whole = isinstance(value, int) and isinstance(bound[1], int)
            shown = short_number(value)
            msg = f"{shown} {_BOUND_WORDS[bound[0]]} {limit}"
            fix = f"use {'an integer' if whole else 'a number'} {bound[0]} {limit}"
            if (bound[0] == "<=" and bound[1] == 1 and 2 <= value <= 100):
                # (a fraction given as a percent; 1.5 is rather a slip than 1.5 %)
                fix += f" ({value:g} %? write {value / 100:g})"
        else:
            fix = f"got {short_repr(value)}; use a number {bound[0]} {limit}"
            if (bound[0] == "<=" and bound[1] == 1 and isinstance(value, int | float)
                    and not isinstance(value, bool) and 2 <= value <= 100):
                # (a fraction given as a percent; 1.5 is rather a slip than 1.5 %)
                fix += f" ({value:g} %? write {value / 100:g})"
    elif fix is None and err["type"] == "literal_error" and "expected" in ctx:
        fix = f"got {short_repr(err.get('input'))}; use {ctx['expected']}"
    elif fix is None:
        fix = f"got {short_repr(err.get('input'))}; correct the value"
    if ": " in msg and field is None:
        field, msg = msg.split(": ", 1)
    return InputError(source, field, msg, fix)


def check_settings(path: str | Path, data: dict[str, Any]) -> None:
    """Refuse a ``collectives_in_flight`` other than 1 in the network, instance or space file
    ``path`` (parsed ``data``): the model runs one collective at a time (1, ASTRA-sim's behaviour)
    or, without the key, lets the overlapped collectives all run at once, sharing each dimension's
    bandwidth; no other number is modelled. Refuse a ``group_bandwidth`` other than ``links`` or
    ``whole`` (:data:`hieropt.names.GROUP_BANDWIDTHS`), naming what each means.

    Raises:
        InputError: naming the file, the key, the reason and the fix.
    """
    g = data.get("group_bandwidth")
    if "group_bandwidth" in data and g not in GROUP_BANDWIDTHS:
        raise InputError(
            path,
            "group_bandwidth",
            f"{short_repr(g)} is not a pricing of partial groups: \"links\" gives a group that "
            "spans part of a dimension the links it reaches there (a FullyConnected dimension's "
            "links to its peers, a Ring's shared by strided groups), \"whole\" the NPU's whole "
            "bandwidth (LIBRA's convention)",
            'set group_bandwidth = "links" or "whole", or remove it (links for an LLM plan, whole '
            "for the other workloads)",
        )
    v = data.get("collectives_in_flight")
    if "collectives_in_flight" in data and (v != 1 or isinstance(v, bool)):
        raise InputError(
            path,
            "collectives_in_flight",
            f"{v!r} is not modelled: 1 runs one collective at a time (ASTRA-sim's behaviour); "
            "without the key, the collectives that overlap all run at once, sharing each "
            "dimension's bandwidth; no other number of collectives in flight is modelled",
            "set collectives_in_flight = 1, or remove it",
        )
