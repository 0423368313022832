"""Command line (typer + rich): the ``hieropt`` app and its entry point :func:`main`. One module per
command group (:mod:`.solve`: solve, evaluate, pareto; :mod:`.compare`: compare, report;
:mod:`.explore`; :mod:`.provision`; :mod:`.workload`: workload, export), shared helpers in
:mod:`.common`. The only package that prints.

Command modules import only typer, rich and the standard library at load time; each command imports
the library when it runs, so ``hieropt --help`` does not load Pyomo, numpy or pydantic.

Exit codes: 0 certified optimum (or evaluation done); 1 a bug; 2 bad input or usage; 3 no certified
answer (infeasible, unbounded, limit reached, solver failure, failed verification); 130 interrupted;
141 stdout closed by its reader (``| head``: the output files are written first, the rest of stdout
is dropped).
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["app", "main"]


_INTERRUPTED: list[bool] = []


def _interrupted_while_loading(signum: int, frame: Any) -> None:
    raise SystemExit(130)


def _interrupt(signum: int, frame: Any) -> None:
    """Python's own Ctrl-C (KeyboardInterrupt), remembered: an extension module that is starting up
    when it lands turns it into an ImportError, which main() then still reports as the interrupt it
    was."""
    _INTERRUPTED.append(True)
    raise KeyboardInterrupt


# Ctrl-C while the ``hieropt`` console script is still importing this package ends with exit 130 and
# no traceback; main() then installs Python's own behaviour (KeyboardInterrupt), remembered. Only
# the console script installs it: a program or test that imports hieropt.cli keeps its own handler.
_CONSOLE = (os.path.basename(sys.argv[0] if sys.argv else "").removesuffix(".exe") == "hieropt"
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
if _CONSOLE:
    signal.signal(signal.SIGINT, _interrupted_while_loading)

from typing import Any  # noqa: E402 (after the handler: Ctrl-C during this import is covered too)

FLOAT_WARNINGS = r"(overflow|underflow|invalid value|divide by zero) encountered in"
"""The start of numpy's floating-point RuntimeWarnings (``overflow encountered in divide``), which
the command line never prints: inputs outside the ranges the LP represents are refused before they
reach numpy (:data:`hieropt.spec.ranges.BW_RANGE_GBPS` and its neighbours), and every answer is
re-checked by the independent evaluator, so such a warning would add a Python source line to stderr
and nothing a user can act on."""


INTERRUPTED_EXITS = (130, 143)
"""Exit statuses of an interrupted run: Ctrl-C (130) and SIGTERM during a sweep (143)."""


def main() -> None:
    """Entry point of the ``hieropt`` console script. A file that cannot be written (a folder, a
    missing folder, no permission) ends with a one-line message and exit 2, not a traceback; Ctrl-C
    (also while the command line is still loading) ends with exit 130; numpy's floating-point
    warnings (:data:`FLOAT_WARNINGS`) are not printed.

    An interrupted console run (:data:`INTERRUPTED_EXITS`) ends at once after its own clean-up (the
    commands stop their worker pools and close their files before they exit): the interpreter's exit
    hooks are skipped, because ``concurrent.futures``' hook would write to the wake-up pipe of a
    pool whose workers the signal has already killed, and print a traceback after the one-line
    message."""
    try:
        _run_app()
    except SystemExit as e:
        if _CONSOLE and e.code in INTERRUPTED_EXITS:
            _exit_now(int(e.code))
        if e.code == 1 and type(sys.stdout).__name__ == "PacifyFlushWrapper":
            # click's (typer's) own reaction to a closed stdout (EPIPE) outside hieropt's writers:
            # exit 1, with stdout wrapped to drop what is left; hieropt's status for it is 141, as
            # everywhere else
            from .common import stdout_closed

            stdout_closed()
        raise


def file_error_line(e: OSError) -> str:
    """The one-line message of a file that could not be written or read: the file (with its option),
    the system's reason, and the fix (for a full disk: room, or another file system)."""
    import errno

    where = f"{e.filename}: " if e.filename else "a file of this run: "
    if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        fix = "free space on that file system, or give a path on another one"
    else:
        fix = "give a writable file path (its folder must exist)"
    return f"{where}cannot write or read: {e.strerror or e}; fix: {fix}"


def _exit_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said on it
            pass
    os._exit(code)


def _run_app() -> None:
    import warnings

    from ..errors import HieroptError

    warnings.filterwarnings("ignore", message=FLOAT_WARNINGS, category=RuntimeWarning)
    if _CONSOLE:
        signal.signal(signal.SIGINT, _interrupt)
    try:  # (the imports too: a Ctrl-C while they load is an interrupt like any other, exit 130)
        from rich.console import Console

        from .common import on_broken_pipe

        # typer's own consoles too (--help | head -1): exit 141, not 1
        Console.on_broken_pipe = on_broken_pipe
        from .commands import app

        app()
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except BrokenPipeError:  # stdout closed by its reader where no writer of hieropt's caught it
        from .common import stdout_closed

        stdout_closed()
    # (raised by a writer after the command's own checks: a non-finite result)
    except HieroptError as e:
        from .common import error_console, error_line

        error_line(error_console(), str(e))
        raise SystemExit(e.exit_code) from None
    except OSError as e:
        from .common import error_console, error_line

        error_line(error_console(), file_error_line(e))
        raise SystemExit(2) from None
    # a Ctrl-C inside a C extension's start-up surfaces as its ImportError: still exit 130
    except BaseException:
        if _INTERRUPTED:
            raise SystemExit(130) from None
        raise
    finally:
        if _CONSOLE:
            # the work is done: a Ctrl-C during interpreter shutdown (whose SIGINT action is the
            # default, death by signal) does not change the exit status
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def __getattr__(name: str) -> Any:
    """``hieropt.cli.app`` (the typer app), loaded on first use."""
    if name == "app":
        from .commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
