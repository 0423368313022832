"""Output files never replace input files: the one check every output option of every command
goes through (``--json``, ``--out``, ``-o/--output``, ``--csv``, ``--plot``, ...). A path that is
the same file (:func:`os.path.samefile`: the same path, a link to it, another spelling of it) as
one of the command's input files is refused with exit 2 before any work and before any error
document is written there, and so is an empty path (``--json ""``, the current folder once parsed:
:func:`note_empty_value`) and a folder given to an option that writes a file
(:func:`output_kind`); no error document is ever written to such a path (:func:`usable_output`).
The input files are those named on its command line
(:func:`check_command_outputs`, run by :class:`hieropt.cli.common.Command` before the command
starts) and every file its readers opened since (:func:`check_not_input`, run by the writers: a
model file a runs file names, the workload file an instance names).

Output files never keep an earlier run's answer either: a run that ends without its answer (exit 2
or 3, or interrupted: 130 on Ctrl-C, 143 on SIGTERM) leaves, in every output it did not write
itself, this run's outcome (the ``--json`` file: ``{"status", "message", "exit_code"}``) or
nothing (every other output file the command declared with :func:`answer_outputs` is removed);
:class:`hieropt.cli.common.Command` applies that rule to every command (:func:`run_outputs`,
:func:`discard_stale`). Which files the run wrote is recorded by the writers
(:func:`hieropt.io.files.written`). Imports only the standard library at load time."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUTPUT_FLAGS = (
    "--json",
    "--out",
    "--output",
    "--csv",
    "--plot",
    "--astra-sim",
    "--keep",
    "--write-instances",
)
"""The options that name a file or folder a command writes; every other path-valued option and
argument is an input."""

_COMMAND_INPUTS: ContextVar[tuple[tuple[Path, str], ...]] = ContextVar(
    "hieropt_command_inputs", default=()
)
"""The input files named on the command line of the command running in the innermost
:func:`command_inputs` block, each with its option or argument name (none outside one)."""


@contextmanager
def command_inputs(params: list, values: dict[str, Any]) -> Iterator[tuple[tuple[Path, str], ...]]:
    """Within the block, the running command's input files are every path-valued parameter of
    ``params`` not in :data:`OUTPUT_FLAGS` (with parsed ``values`` by parameter name), each with its
    option or argument name (:func:`known_inputs`); yields them."""
    inputs = tuple(
        (x, _input_name(p))
        for p in params
        if not _is_output(p)
        for x in _param_paths(values.get(p.name))
    )
    token = _COMMAND_INPUTS.set(inputs)
    try:
        yield inputs
    finally:
        _COMMAND_INPUTS.reset(token)


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether ``a`` and ``b`` are one existing file (:func:`os.path.samefile`); False when either
    does not exist or cannot be examined."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def input_clash(path: Path | None, inputs: Any) -> tuple[Path, str] | None:
    """The first (input file, its name) of ``inputs`` that the output ``path`` is (None, ``-``, a
    folder or a missing path: none)."""
    if path is None or str(path) == "-" or not Path(path).is_file():
        return None
    return next(((p, name) for p, name in inputs if same_file(path, p)), None)


def known_inputs() -> list[tuple[Path, str]]:
    """The running command's input files: those of its command line, then every file its readers
    opened (:func:`hieropt.io.common.files_read`, named ``read``)."""
    from ..io.common import files_read

    return [*_COMMAND_INPUTS.get(), *((p, "read") for p in files_read())]


def check_not_input(path: Path | None, flag: str, inputs: Any = None) -> None:
    """Refuse an output ``path`` of ``flag`` that is one of ``inputs`` ((path, name) pairs; default:
    the running command's input files, :func:`known_inputs`).

    Raises:
        InputError: naming ``flag`` and the path, the input it is and the fix.
    """
    from ..errors import InputError

    hit = input_clash(path, known_inputs() if inputs is None else inputs)
    if hit is None:
        return
    what = "a file this command reads" if hit[1] == "read" else f"the command's {hit[1]}"
    raise InputError(
        f"{flag} {path}",
        None,
        f"is {what} ({hit[0]}): writing there would replace it",
        "give another output path",
    )


def _param_paths(value: Any) -> list[Path]:
    """The path values of one parsed parameter (typer gives a path parameter as a
    :class:`~pathlib.Path`, a repeatable one as a list of them; any other value: none)."""
    values = value if isinstance(value, list | tuple) else [value]
    return [Path(v) for v in values if isinstance(v, os.PathLike) and str(v) != "-"]


def _is_output(param: Any) -> bool:
    return any(o in OUTPUT_FLAGS for o in getattr(param, "opts", ()))


def _input_name(param: Any) -> str:
    opts = [o for o in getattr(param, "opts", ()) if o.startswith("--")]
    return opts[0] if opts else param.name.upper()


EMPTY_VALUES_KEY = "hieropt.empty_values"
"""Key of the click context's ``meta`` under which the names of the parameters given an empty
value (``--json ""``) are recorded (:func:`note_empty_value`): typer turns ``""`` into
``Path(".")``, the current folder, which the parsed value no longer tells from ``.``."""


def note_empty_value(value: Any, param: Any, ctx: Any) -> None:
    """Record in ``ctx.meta`` (:data:`EMPTY_VALUES_KEY`) that ``param`` was given ``value`` as an
    empty text (``""``, or a list holding one), before typer converts it; nothing for any other
    value or without a context."""
    values = value if isinstance(value, list | tuple) else [value]
    if ctx is not None and any(v == "" for v in values):
        ctx.meta.setdefault(EMPTY_VALUES_KEY, set()).add(param.name)


def empty_values(ctx: Any) -> set[str]:
    """The names of the parameters given an empty value on the command line of ``ctx``
    (:func:`note_empty_value`)."""
    return set(getattr(ctx, "meta", {}).get(EMPTY_VALUES_KEY, ()))


def output_kind(param: Any) -> str | None:
    """What an output option ``param`` names, as its ``metavar`` declares: ``"file"`` (``FILE``:
    a folder is refused), ``"folder"`` (``DIR``: the files it writes go there) or None (either, e.g.
    ``export --astra-sim``: a bundle folder or a network file)."""
    return {"FILE": "file", "DIR": "folder"}.get(getattr(param, "metavar", None) or "")


def usable_output(path: Path | None) -> bool:
    """Whether a file may be written at ``path``: ``-`` (stdout), or a path with a name that is
    not an existing folder (an empty path is the current folder: never)."""
    if path is None:
        return False
    if str(path) == "-":
        return True
    return bool(Path(path).name) and not Path(path).is_dir()


def check_command_outputs(
    params: list, values: dict[str, Any], inputs: Any, empty: Any = ()
) -> None:
    """Refuse, before the command does any work, an output option of ``params`` (with parsed
    ``values`` by parameter name) that is given an empty path (``empty``: the names of the
    parameters given ``""``, :func:`empty_values`), that names a folder where it writes a file
    (:func:`output_kind`; a folder option given a file is refused by its command, which names what
    it writes there), or that names one of the command's ``inputs`` ((path, name) pairs,
    :func:`command_inputs`; :func:`check_not_input`).

    Raises:
        InputError: ``--json '': is an empty path; fix: give a file path``, ``--json .: is a
            folder, not a file; ...``, ``--json inst.toml: is the command's INSTANCE (inst.toml):
            ...``.
    """
    from ..errors import InputError

    for p in params:
        if not _is_output(p):
            continue
        flag = next(o for o in p.opts if o in OUTPUT_FLAGS)
        kind = output_kind(p)
        if p.name in empty:
            what = {"file": "a file path", "folder": "a folder path"}.get(kind, "a path")
            stdout = ", or - for stdout" if "'-'" in (getattr(p, "help", None) or "") else ""
            raise InputError(f"{flag} ''", None, "is an empty path", f"give {what}{stdout}")
        for x in _param_paths(values.get(p.name)):
            if kind == "file" and x.is_dir():
                raise InputError(f"{flag} {x}", None, "is a folder, not a file",
                                 "give a file path")
            check_not_input(x, flag, inputs)


@dataclass
class RunOutputs:
    """The outputs of the running command (:func:`run_outputs`).

    ``json``: its ``--json`` file (``-``: stdout; None: not given), which gets this run's outcome
    when the run ends without writing it. ``answers``: (output file, how to remove an earlier run's
    output there, the suffixes it writes there: empty, any) declared by the command
    (:func:`answer_outputs`). ``where``: what the line of an interrupted run says after
    ``interrupted:``, or a function that says it when the run is interrupted (None: that the run
    has no answer). ``inputs_known``: whether every input
    file of the run is known (:func:`inputs_read`): until then an output may be a file the run
    would have read, and nothing is removed or replaced but files that cannot be one."""

    json: Path | None = None
    answers: list[tuple[Path, Callable[[Path], None] | None, tuple[str, ...]]] = field(
        default_factory=list
    )
    where: str | Callable[[], str] | None = None
    inputs_known: bool = False


_RUN: ContextVar[RunOutputs | None] = ContextVar("hieropt_run_outputs", default=None)
"""The outputs of the command running in the innermost :func:`run_outputs` block."""


@contextmanager
def run_outputs(json: Path | None) -> Iterator[RunOutputs]:
    """Within the block, the running command's outputs are ``json`` (its ``--json`` file) and
    those it declares (:func:`answer_outputs`); yields them."""
    token = _RUN.set(RunOutputs(json))
    try:
        yield _RUN.get()
    finally:
        _RUN.reset(token)


def answer_outputs(
    *paths: Path | None,
    remove: Callable[[Path], None] | None = None,
    suffixes: tuple[str, ...] = (),
) -> None:
    """Declare output files of the running command (besides ``--json``) that hold its answer: when
    the run ends without writing one of them (:func:`discard_stale`), an earlier run's file there is
    removed, by ``remove(path)`` when given (a bundle's marker file: the whole bundle), else the
    file alone (:func:`discard_outputs`). ``suffixes`` (lower case, e.g. ``(".png", ".svg")``):
    the only suffixes the command writes there; a path with another one is never removed (the
    command refuses it: the file there is not its output). None and ``-`` (stdout) are skipped;
    outside a :func:`run_outputs` block nothing is recorded."""
    run = _RUN.get()
    if run is not None:
        run.answers += [
            (Path(p), remove, suffixes) for p in paths if p is not None and str(p) != "-"
        ]


def inputs_read() -> None:
    """Mark every input file of the running command as known: its command line's and those its
    readers opened (:func:`known_inputs`), once it has read them all (an instance and the files it
    names). Until then, or when the run writes its first output, an end without an answer removes
    no output that could be an unread input (:func:`discard_stale`)."""
    run = _RUN.get()
    if run is not None:
        run.inputs_known = True


def inputs_complete() -> bool:
    """Whether the running command's input files are all known: marked (:func:`inputs_read`) or
    the run has written an output (which it does after reading every input). False outside a
    :func:`run_outputs` block (a command line that does not parse)."""
    from ..io.files import any_written

    run = _RUN.get()
    return run is not None and (run.inputs_known or any_written())


OUTPUT_ONLY_SUFFIXES = (".png", ".svg", ".pdf", ".html")
"""Suffixes of files hieropt writes and never reads (figures, pages): an earlier one at a declared
output path may be removed even before the run's inputs are known."""


def document_over(path: Path) -> bool:
    """Whether a run's error document may be written to ``path`` (its ``--json`` file) besides
    the input check (:func:`input_clash`): stdout, no file there (missing, a folder: the write
    then fails), or the inputs are all known
    (:func:`inputs_complete`); otherwise only over a JSON object (no input file hieropt reads
    through an instance is JSON), and when not even the command line parsed (no running command)
    only over a hieropt JSON document: an object with ``"status"``."""
    import json

    if str(path) == "-" or not Path(path).is_file() or inputs_complete():
        return True
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and ("status" in data or _RUN.get() is not None)


def interrupt_note(where: str | Callable[[], str]) -> None:
    """What the line of the running command, when interrupted, says after ``interrupted:`` (a
    sweep: where its rows so far are), or a function saying it at that moment."""
    run = _RUN.get()
    if run is not None:
        run.where = where


def sweep_where(out: Path | None) -> Callable[[], str]:
    """What the line of an interrupted sweep (``explore``, ``codesign``) says after
    ``interrupted:``, when it is interrupted: where its rows so far are (``out``, its ``--out``
    rows file, which is kept: rerunning resumes), that none was written yet (interrupted before
    its first row, e.g. while enumerating), or that it has no ``--out`` file."""
    def where() -> str:
        if not out:
            return "no --out file"
        if not Path(out).is_file():
            return f"no row was written to {out} yet; rerun the same command"
        return f"the rows so far are in {out}; rerun the same command to resume"

    return where


def current_outputs() -> RunOutputs:
    """The outputs of the command running in the innermost :func:`run_outputs` block (none
    outside one)."""
    return _RUN.get() or RunOutputs()


def discard_stale() -> list[Path]:
    """Remove every declared output (:func:`answer_outputs`) of the running command that this run
    did not write (:func:`hieropt.io.files.written`): the run ended without its answer. Never
    removed: an input file (:func:`known_inputs`), a path whose suffix the command does not write
    there, and, before the run's inputs are all known (:func:`inputs_complete`), any file but a
    figure or a page (:data:`OUTPUT_ONLY_SUFFIXES`). Returns the files removed."""
    from ..io.files import written

    gone = []
    known = inputs_complete()
    for path, remove, suffixes in current_outputs().answers:
        if written(path) or not path.is_file() or input_clash(path, known_inputs()):
            continue
        suffix = path.suffix.lower()
        if suffixes and suffix not in suffixes:  # (refused: not the command's output)
            continue
        if not known and suffix not in OUTPUT_ONLY_SUFFIXES:  # (may be an input not yet read)
            continue
        if remove is not None:
            remove(path)
        else:
            discard_outputs(path)
        if not path.exists():
            gone.append(path)
    return gone


def discard_outputs(*paths: Path | None) -> None:
    """Remove the output files ``paths`` an earlier run left, when this run ends without an answer
    to write there (exit 2, 3, 130 or 143), so that a script never reads the earlier run's answer.
    Only regular files are removed (not ``-``, ``None``, a device such as /dev/null, a folder, or
    one of the command's input files, :func:`known_inputs`); one that cannot be removed is left as
    it is."""
    for path in paths:
        if path is None or str(path) == "-" or not Path(path).is_file():
            continue
        if input_clash(Path(path), known_inputs()) is not None:
            continue
        try:
            Path(path).unlink()
        except OSError:
            pass


def clashing_arg(path: Path, args: list[str]) -> bool:
    """Whether the output ``path`` is the same file as another of the raw command-line words
    ``args`` (``--x=VALUE`` taken as VALUE) besides its own: an input named on a command line click
    could not parse."""
    words = [a.split("=", 1)[1] if a.startswith("--") and "=" in a else a for a in args]
    return sum(same_file(path, w) for w in words) > 1


__all__ = [
    "OUTPUT_FLAGS",
    "command_inputs",
    "same_file",
    "input_clash",
    "known_inputs",
    "check_not_input",
    "check_command_outputs",
    "EMPTY_VALUES_KEY",
    "note_empty_value",
    "empty_values",
    "output_kind",
    "usable_output",
    "clashing_arg",
    "RunOutputs",
    "run_outputs",
    "answer_outputs",
    "inputs_read",
    "inputs_complete",
    "OUTPUT_ONLY_SUFFIXES",
    "document_over",
    "interrupt_note",
    "sweep_where",
    "current_outputs",
    "discard_stale",
    "discard_outputs",
]
