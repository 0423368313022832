"""Helpers shared by every command module (one home): consoles, the one-line error exit, JSON
output, the instance from an INSTANCE file or LIBRA's flags, and the option declarations several
commands share. Imports only typer, rich and the standard library at load time (the library is
imported when a helper runs)."""

from __future__ import annotations

import os
import sys
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from ..names import FLAGS  # (library argument -> its flag: the one table, in hieropt.names)
from .outputs import (
    check_command_outputs,
    check_not_input,
    clashing_arg,
    command_inputs,
    current_outputs,
    discard_stale,
    document_over,
    empty_values,
    input_clash,
    inputs_read,
    known_inputs,
    note_empty_value,
    run_outputs,
    usable_output,
)
from .signals import terminated_as_interrupt
from .usage import json_option, usage_error_line

if TYPE_CHECKING:
    from ..errors import HieroptError
    from ..spec import Instance

UNITS = (
    "Units: bandwidth in GB/s per NPU per dimension (1 GB = 1e9 bytes, so 1 GB/s = 1 "
    "byte/ns); sizes in bytes; "
    "times in ns (ASTRA-sim 1.0 cycles at 1 GHz); cost in $ (cost models in $ per GB/s)."
)

InstanceArg = Annotated[
    Path | None,
    typer.Argument(help="Instance TOML file (or use the LIBRA flags).", show_default=False),
]
NetworkOpt = Annotated[
    Path | None, typer.Option("--network", help="LIBRA network YAML (instead of INSTANCE).")
]
WorkloadOpt = Annotated[
    Path | None, typer.Option("--workload", help="ASTRA-sim 1.0 / LIBRA workload text.")
]
CostOpt = Annotated[Path | None, typer.Option("--cost", help="LIBRA cost-model YAML ($ per GB/s).")]
from .options import MaxTimeOpt  # noqa: E402,F401  (one name per quantity: hieropt.cli.options)


class MissingValueFirst:
    """typer's value coercion of one parameter, with its pydantic adapter built only when a value is
    given.

    typer coerces every parameter through a pydantic TypeAdapter that it builds on first use, also
    for a parameter the command line leaves out, whose value (None) it then maps to None (or to
    ``()`` for a list) without using the adapter. The first adapter imports pydantic (~0.2 s), so
    ``hieropt solve --help`` (the group's own ``--help`` is left out there) would pay for it. This
    coercion maps None the same way itself and asks typer for the adapter's coercion only for a
    given value. tests/cli/test_startup.py checks that every command gets the same values as with
    typer's own parameters, and that ``hieropt solve --help`` loads no pydantic (it would again if
    typer stopped asking ``get_runtime_param`` for the coercion). An empty value (``--json ""``,
    which typer turns into the current folder) is recorded on the way
    (:func:`hieropt.cli.outputs.note_empty_value`), for :class:`Command` to refuse."""

    def __init__(self, build: Any) -> None:
        self.build = build

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        """``value`` of ``param`` coerced as typer does (None: None, or ``()`` for a multi-value
        parameter)."""
        note_empty_value(value, param, ctx)
        if value is None:
            return () if param.multiple or param.nargs == -1 else None
        return self.build().coerce(value, param=param, ctx=ctx)


class LazyOption(TyperOption):
    """typer's option, coerced by :class:`MissingValueFirst`."""

    def get_runtime_param(self) -> Any:  # noqa: D102 - typer's
        return MissingValueFirst(super().get_runtime_param)


class LazyArgument(TyperArgument):
    """typer's argument, coerced by :class:`MissingValueFirst`."""

    def get_runtime_param(self) -> Any:  # noqa: D102 - typer's
        return MissingValueFirst(super().get_runtime_param)


_LAZY = {TyperOption: LazyOption, TyperArgument: LazyArgument}


def _prepared(params: list) -> list:
    """The parameters of a command as shown and parsed: flags take no value, so no value type is
    shown for them (``--help``, ``--compare/--no-compare``, not ``<bool>``), and every typer
    parameter is coerced by :class:`MissingValueFirst` (its class switched to :class:`LazyOption` /
    :class:`LazyArgument`, which add only that)."""
    for p in params:
        if getattr(p, "is_flag", False) and p.metavar is None:
            p.metavar = ""
        if type(p) in _LAZY:
            p.__class__ = _LAZY[type(p)]
    return params


UsageError: type = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
"""click's ``UsageError`` (exit 2: an unknown option or command, a value that does not convert, a
missing argument) as typer raises it: typer >= 0.23 carries its own copy of click
(``typer._click``), older typer uses click itself; ``typer.BadParameter`` is a subclass of it in
both."""


def usage_error_json(args: list[str], e: Any, command: str | None = None) -> None:
    """Write the ``bad_input`` document of :func:`fail` for the usage error ``e`` (an unknown option
    or command, a value click or typer cannot convert, a missing argument) to the ``--json`` file
    named in ``args`` (nothing when none is), so a script never reads an earlier run's answer there
    after exit 2; its message is :func:`usage_error_line`."""
    path = json_option(args)
    if path is not None and not clashing_arg(path, args):  # (never over an input file)
        write_error_json(path, "bad_input", usage_error_line(e, args, command), e.exit_code)


def usage_exit(e: Any, args: list[str], json: bool, command: str | None = None) -> typer.Exit:
    """Report click's usage error ``e`` (raw command-line ``args``) as one ``error:`` line on stderr
    (:func:`usage_error_line`), write its document to the ``--json`` file when ``json``
    (:func:`usage_error_json`), and return the :class:`typer.Exit` of exit 2."""
    error_line(error_console(), usage_error_line(e, args, command))
    if json:
        usage_error_json(args, e, command)
    return typer.Exit(e.exit_code)


NO_ANSWER_EXITS = (2, 3, 130, 143)
"""Exit statuses of a run that may end without its answer: bad input (2), no certified answer (3),
interrupted by Ctrl-C (130) or SIGTERM (143). Every output the run did not write is then left with
this run's outcome or removed (:func:`hieropt.cli.outputs.discard_stale`)."""


def interrupted(err: Console, e: KeyboardInterrupt) -> typer.Exit:
    """End the running command interrupted by ``e`` (Ctrl-C: exit 130; SIGTERM,
    :class:`hieropt.errors.Terminated`: 143): one line ``interrupted: WHERE`` (``terminated:``) on
    ``err``, WHERE a sweep's note on its rows (:func:`hieropt.cli.outputs.interrupt_note`), the
    files of its answer when the run had written every output, or that the run has no answer;
    ``{"status": "interrupted", "message", "exit_code"}`` in the ``--json``
    file unless this run wrote its answer there; its other outputs not written by this run are
    removed by :class:`Command` (:func:`hieropt.cli.outputs.discard_stale`). Returns the
    :class:`typer.Exit`."""
    from ..errors import Terminated
    from ..io.files import written

    terminated = isinstance(e, Terminated)
    run = current_outputs()
    outputs = [p for p in [run.json, *(a[0] for a in run.answers)] if p is not None]
    done = bool(outputs) and all(written(p) for p in outputs)
    where = (run.where() if callable(run.where) else run.where) or (
        f"after writing its answer to {', '.join(map(str, outputs))}" if done
        else "the run ended before its answer; rerun the same command"
    )
    message = f"{'terminated' if terminated else 'interrupted'}: {where}"
    code = 143 if terminated else 130
    err.print(message, highlight=False, soft_wrap=True)
    if run.json is not None and not written(run.json):
        write_error_json(run.json, "interrupted", message, code)
    return typer.Exit(code)


class Command(TyperCommand):
    """typer's command with flags shown without a value type in ``--help`` and lazily built value
    coercions; a command line it cannot parse still writes the error document to its ``--json`` file
    (:func:`usage_error_json`), and so does an error raised by a writer after the command's own
    checks (a result that is not JSON, :func:`write_json`): :func:`fail`, so that an earlier run's
    answer there never survives an exit 2. Ctrl-C or SIGTERM end it with :func:`interrupted`; a run
    that ends without its answer (:data:`NO_ANSWER_EXITS`) leaves none of an earlier run's in the
    outputs it did not write (:func:`hieropt.cli.outputs.discard_stale`), and neither does one that
    ends with its answer (a report without one of the figures an earlier report had)."""

    def get_params(self, ctx):  # noqa: D102 - click's
        return _prepared(super().get_params(ctx))

    def make_context(self, info_name, args, parent=None, **extra):  # noqa: D102 - click's
        from ..errors import InputError
        from .usage import aliases_given_together, json_option

        raw = list(args)  # (click's parser consumes the list it is given)
        try:  # (an option under two names, before the rest of the command line is parsed)
            aliases_given_together(self.params, raw)
        except InputError as e:
            has_json = any("--json" in getattr(p, "opts", ()) for p in self.params)
            raise fail(error_console(), e, json_option(raw) if has_json else None) from None
        try:
            return super().make_context(info_name, args, parent, **extra)
        except UsageError as e:
            # (the help is shown)
            if extra.get("resilient_parsing") or type(e).__name__ == "NoArgsIsHelpError":
                raise
            self.raw = raw
            where = f"{parent.command_path} {info_name}" if parent is not None else info_name
            raise usage_exit(
                e, raw, any("--json" in getattr(p, "opts", ()) for p in self.params), where
            ) from None

    def invoke(self, ctx):  # noqa: D102 - click's
        from ..io.common import recording_reads
        from ..io.files import recording_writes

        # (the files it is given and those it reads: no output may replace one; the files it
        # writes: no output it did not write may keep an earlier run's answer)
        with recording_reads(), recording_writes(), run_outputs(self.json_file(ctx)), \
                command_inputs(self.params, ctx.params) as inputs, terminated_as_interrupt():
            try:
                answer = self._invoke(ctx, inputs)
            except typer.Exit as e:
                # (this run's outcome or its answer: never an earlier answer beside it)
                if e.exit_code in (0, *NO_ANSWER_EXITS):
                    discard_stale()
                raise
            discard_stale()  # (an answer: none of an earlier run's files of its names beside it)
            return answer

    def _invoke(self, ctx, inputs):
        from ..errors import HieroptError

        INSTANCE_FILE.set(ctx.params.get("instance"))  # (named by fail: a [cluster] error)
        try:
            # (before any work)
            check_command_outputs(self.params, ctx.params, inputs, empty_values(ctx))
            return super().invoke(ctx)
        except UsageError as e:  # (a typer.BadParameter raised by the command itself)
            raw = getattr(self, "raw", None) or sys.argv[1:]
            raise usage_exit(
                e, raw, any("--json" in getattr(p, "opts", ()) for p in self.params)
            ) from None
        except HieroptError as e:  # (raised by a writer after the command's own checks)
            raise fail(error_console(), e, self.json_file(ctx)) from None
        except KeyboardInterrupt as e:  # (Ctrl-C, or SIGTERM: Terminated)
            raise interrupted(error_console(), e) from None

    def json_file(self, ctx) -> Path | None:
        """The command's ``--json`` file as given (``-``: stdout), None when it has none or
        it cannot be written (an empty path, a folder: :func:`hieropt.cli.outputs.usable_output`).
        """
        for p in self.params:
            if "--json" in getattr(p, "opts", ()):
                value = ctx.params.get(p.name)
                if value is None or p.name in empty_values(ctx):
                    return None
                return Path(value) if usable_output(Path(value)) else None
        return None


class Group(TyperGroup):
    """typer's command group with flags shown without a value type in ``--help`` and lazily built
    value coercions; an unknown command, or an option of the group it cannot parse, writes the error
    document to a ``--json`` file named on the command line (:func:`usage_error_json`)."""

    def get_params(self, ctx):  # noqa: D102 - click's
        return _prepared(super().get_params(ctx))

    def make_context(self, info_name, args, parent=None, **extra):  # noqa: D102 - click's
        raw = list(args)
        try:
            return super().make_context(info_name, args, parent, **extra)
        except UsageError as e:
            # (the help is shown)
            if extra.get("resilient_parsing") or type(e).__name__ == "NoArgsIsHelpError":
                raise
            raise usage_exit(e, raw, True, info_name) from None

    def resolve_command(self, ctx, args):  # noqa: D102 - click's
        try:
            return super().resolve_command(ctx, args)
        except UsageError as e:
            if ctx.resilient_parsing:
                raise
            raise usage_exit(e, list(args[1:]), True) from None


STDOUT_CLOSED = 141
"""Exit status of a run whose stdout was closed by its reader (``hieropt solve ... | head -1``): 128
+ SIGPIPE, what a shell reports for a Unix tool that the closed pipe ends. Every output file of the
  run is
written before its first line goes to stdout, so the files are complete; only the rest of stdout is
dropped."""


def stdout_closed() -> NoReturn:
    """End the run because its reader closed stdout (EPIPE): quietly, with :data:`STDOUT_CLOSED`."""
    stream_closed(sys.stdout)


def stream_closed(stream: Any) -> NoReturn:
    """End the run because the reader of ``stream`` (stdout, or stderr sent into the same pipe with
    ``2>&1``) closed it: quietly, with :data:`STDOUT_CLOSED`. The stream's file descriptor is
    pointed at the null device first, so the interpreter's last flush of what is still buffered
    prints nothing either."""
    try:
        fd = stream.fileno()
    # (a stream without a file descriptor, e.g. a test's capture)
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    raise SystemExit(STDOUT_CLOSED)


def on_broken_pipe(self: Console) -> None:
    """rich's reaction to a closed pipe under its console ``self``, as hieropt's: the console goes
    quiet and the run ends with :func:`stream_closed` (rich's own reaction is exit 1, hieropt's
    status for a bug)."""
    self.quiet = True
    stream_closed(self.file)


class PipeConsole(Console):
    """rich's console, which ends a run whose stream was closed by its reader with
    :data:`STDOUT_CLOSED` (:func:`on_broken_pipe`)."""

    on_broken_pipe = on_broken_pipe


def write_stdout(text: str) -> None:
    """Write ``text`` to stdout and flush it; a stdout closed by its reader ends the run
    (:func:`stdout_closed`)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        stdout_closed()


def console(width: int = 120) -> Console:
    """The stdout console. Markup is off: every text (file names, instance names, constraints such
    as ``bw[top] <= 20``, collective names) prints literally, in lines and in table cells. When
    stdout is not a terminal (a file, a pipe, a CI log) the console is as wide as the widest line,
    so no table is cut with "…". A stdout closed by its reader ends the run with
    :data:`STDOUT_CLOSED` (:class:`PipeConsole`)."""
    c = PipeConsole(markup=False)
    return (
        c
        if c.is_terminal
        else PipeConsole(markup=False, width=max(c.width, width, NOT_A_TERMINAL_WIDTH))
    )


NOT_A_TERMINAL_WIDTH = 400
"""Columns of the stdout console when stdout is not a terminal (wider than any table hieropt
prints)."""


def error_console() -> Console:
    """The stderr console: errors, notes and progress (stdout carries results only); markup off as
    :func:`console`."""
    return PipeConsole(stderr=True, markup=False)


_LINE_BREAKS = str.maketrans({c: repr(c)[1:-1] for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})
"""Every character that ends a line (str.splitlines), as its escape: a value echoed from a file
keeps the message on one line."""


def error_line(err: Console, message: str, label: str = "error:", style: str = "bold red") -> None:
    """Print ``label message`` as one line on ``err``; ``message`` is printed literally (no markup),
    with any line break in it (from a value quoted out of an input file) shown escaped (``\\n``)."""
    err.print(
        Text.assemble((label, style), " ", message.translate(_LINE_BREAKS)),
        highlight=False,
        soft_wrap=True,
    )


INSTANCE_FILE: ContextVar[Path | None] = ContextVar("instance_file", default=None)
"""The running command's INSTANCE file (None: none given, or a command without one)."""


def fail(err: Console, e: HieroptError, json_out: Path | None = None) -> typer.Exit:
    """Print ``e`` as one ``error: ...`` line on ``err`` and return the :class:`typer.Exit` of its
    exit code. An InputError about a library argument (``bw_gbps``) is shown with the flag that sets
    it (``--bw``); one about the instance's ``[cluster]`` without a source (``cluster.
    amortisation_years``: :func:`hieropt.model.run_cost.terms_of`) with the command's INSTANCE
    file (:data:`INSTANCE_FILE`).

    ``json_out``: the command's ``--json`` file (``-``: stdout), which then gets ``{"status",
    "message", "exit_code"}`` (status ``infeasible`` / ``unbounded`` / ``bad_input`` / ``error``),
    so that a script reading it finds this run's outcome, not an earlier run's answer; a file that
    cannot be written is left as it is. The command's other output files (``--csv``, ``--plot``, a
    report, a network file), which have no error document, are removed when this run did not write
    them, as after every exit 2 or 3 (:class:`Command`, :func:`hieropt.cli.outputs.answer_outputs`).
    """
    from ..errors import InputError

    if isinstance(e, InputError) and e.source in FLAGS:
        e = e.with_source(FLAGS[e.source])
    file = INSTANCE_FILE.get()
    if (isinstance(e, InputError) and e.source is None and file is not None
            and (e.field or "").split(".")[0] == "cluster"):
        e = e.with_source(file)  # (the library names the instance's [cluster] field, not its file)
    error_line(err, str(e))
    if json_out is not None:
        status = getattr(e, "kind", None) or ("bad_input" if isinstance(e, InputError) else "error")
        write_error_json(json_out, status, str(e), e.exit_code)
    return typer.Exit(e.exit_code)


def write_error_json(path: Path, status: str, message: str, exit_code: int) -> None:
    """Write the error document ``{"status", "message", "exit_code"}`` of a failed run to ``path``
    (``-``: stdout); a file that cannot be written (an empty path, a folder:
    :func:`hieropt.cli.outputs.usable_output`), or that is one of the command's input files
    (:func:`hieropt.cli.outputs.known_inputs`), is left as it is (the run's own error is the one
    to report). Before the inputs are all known (a command line that does not parse, a run that
    failed before reading them), an existing file is replaced only when it may not be an input
    (:func:`hieropt.cli.outputs.document_over`); else it is left and a note on stderr says so."""
    if not usable_output(path) or input_clash(path, known_inputs()) is not None:
        return
    if not document_over(path):
        error_line(
            error_console(),
            f"--json {path}: not replaced by the error document: it is not a hieropt JSON "
            "document and may be a file this command reads",
            label="note:",
            style="yellow",
        )
        return
    try:
        write_json(path, {"status": status, "message": message, "exit_code": exit_code})
    except OSError:
        pass


def write_json(path: Path, data: dict) -> None:
    """Write ``data`` as indented, strict JSON to ``path`` (``-``: stdout).

    Raises:
        InputError: ``data`` holds a NaN or an infinity (not JSON), naming the field
            (:func:`hieropt.io.files.json_text`); ``path`` is not written (the command's
            :class:`Command` then writes the error document of :func:`fail` there).
    """
    from ..io.files import json_text

    write_output(path, json_text(data, f"--json {path}"), "--json")


def write_output(path: Path, text: str, flag: str) -> None:
    """Write ``text`` to the output file ``path`` of ``flag`` (``-``: stdout, :func:`write_stdout`)
    atomically (:func:`hieropt.io.files.write_atomic`: an earlier file there stays intact when the
    write fails). A file that cannot be written raises an OSError named ``FLAG PATH`` (the one-line
    message of :func:`hieropt.cli.main`); one that is an input file of the command is refused
    (:func:`hieropt.cli.outputs.check_not_input`: an InputError)."""
    check_not_input(path, flag)
    if str(path) == "-":
        from ..io.files import record_written

        write_stdout(text)
        record_written(path)
        return
    from ..io.files import write_atomic

    write_atomic(path, text, f"{flag} {path}")


def check_output_file(path: Path | None, flag: str) -> None:
    """Refuse, before any work, an output file ``path`` given to ``flag`` that cannot be written: a
    folder, or a file in a folder that does not exist. ``None`` and ``-`` (stdout) pass; an existing
    file is overwritten, as by every file option of the command line.

    Raises:
        InputError: naming ``flag`` and the path, with the fix.
    """
    from ..errors import InputError

    if path is None or str(path) == "-":
        return
    if path.is_dir():
        raise InputError(f"{flag} {path}", None, "is a folder, not a file", "give a file path")
    folder = path.parent
    if not folder.is_dir():
        if folder.exists():
            raise InputError(f"{flag} {path}", None, f"{folder} is a file, not a folder",
                             "give a path in an existing folder")
        raise InputError(f"{flag} {path}", None, f"the folder {folder} does not exist",
                         "create the folder first, or give a path in an existing folder")


def check_output_folder(path: Path, flag: str, what: str) -> None:
    """Refuse, before any work, an output folder ``path`` (``flag``; created if missing) that is an
    existing file, or that lies under one. ``what`` names the contents, e.g. ``"the report"``.

    Raises:
        InputError: naming ``flag`` and the path, with the fix.
    """
    from ..errors import InputError

    for p in (path, *path.parents):
        if p.exists() and not p.is_dir():
            where = (
                "exists and is not a folder"
                if p == path
                else f"lies inside {p}, which is a file, not a folder"
            )
            raise InputError(
                f"{flag} {path}", None, where, f"give a folder path for {what} (created if missing)"
            )
        if p.exists():
            return


def to_stdout(*files: Path | None) -> bool:
    """Whether any of ``files`` is ``-`` (stdout): the tables then go to stderr."""
    return any(f is not None and str(f) == "-" for f in files)


def load_instance_args(
    instance: Path | None,
    network: Path | None,
    workload: Path | None,
    communicator: Path | None,
    cost: Path | None,
    constraint: list[str] | None,
) -> Instance:
    """The instance from an instance file or from LIBRA's files (objective performance; solve's
    flags override)."""
    from ..errors import InputError

    libra = {
        "--network": network,
        "--workload": workload,
        "--communicator": communicator,
        "--cost": cost,
    }
    given = [k for k, v in libra.items() if v is not None]
    if instance is not None:
        if given:
            raise InputError(
                given[0],
                None,
                "both an INSTANCE file and LIBRA flags were given",
                "give either an instance file or --network, --workload, --communicator and --cost",
            )
        from ..io.instance import load_instance

        inst = load_instance(instance)
        if constraint:
            from ..spec.constraint_text import parse_constraint
            from ..spec.ranges import design_range_problem

            extra = tuple(parse_constraint(t, inst.network.n_dims) for t in constraint)
            problem = design_range_problem(inst.constraints + extra, inst.bounds)
            # (the instance file's rows alone passed: a --constraint takes part)
            if problem is not None:
                field, rest = problem.split(": ", 1)
                raise InputError("--constraint", field, *rest.split("; fix: ", 1))
            inst = inst.model_copy(update={"constraints": inst.constraints + extra})
        inputs_read()  # (the instance and every file it names)
        return inst
    # optional: header-derived
    missing = [k for k, v in libra.items() if v is None and k != "--communicator"]
    if not given:
        raise InputError(
            "command line",
            None,
            "no instance given",
            "pass an instance TOML file, or --network, --workload, --communicator and --cost",
        )
    if missing:
        raise InputError(
            "command line",
            missing[0],
            "missing LIBRA flag",
            "give all of --network, --workload and --cost, and --communicator unless the "
            "workload's "
            f"header implies the mapping (missing: {', '.join(missing)})",
        )
    from ..io.libra_instance import load_libra

    inst = load_libra(network, workload, communicator, cost, constraint or [])
    inputs_read()
    return inst
