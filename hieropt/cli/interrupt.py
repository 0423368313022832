"""What a sweep command (``explore``, ``codesign``) leaves when it is interrupted: exit 130 (Ctrl-C)
or 143 (SIGTERM), one line on stderr saying where the rows so far are, and the
outcome in its ``--json`` file, so that a script never reads an earlier run's answer there."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from .common import write_error_json

if TYPE_CHECKING:
    from rich.console import Console


@dataclass
class Outcome:
    """``answered``: set once the command has written its answer to ``--json`` (an interrupt after
    that, while the tables print, keeps it)."""

    answered: bool = False


@contextmanager
def interrupt_outcome(err: Console, json_out: Path | None, out: Path | None) -> Iterator[Outcome]:
    """Run the body of a sweep command; a KeyboardInterrupt anywhere in it (reading the space, the
    sweep, writing the results) ends the command with exit 130, and a SIGTERM (raised as
    :class:`hieropt.errors.Terminated` while the body runs, in a pool or serial sweep) with 143,
    the line ``interrupted: WHERE`` on ``err`` and ``{"status": "interrupted", "message",
    "exit_code"}`` in ``json_out`` unless the body had written its answer there (:class:`Outcome`).
    ``out``: the ``--out`` rows file (resumable), or None."""
    import signal
    import threading

    from ..errors import Terminated, raise_terminated

    outcome = Outcome()
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, raise_terminated) if main else None
    try:
        yield outcome
    except KeyboardInterrupt as e:
        terminated = isinstance(e, Terminated)
        where = (
            f"the rows so far are in {out}; rerun the same command to resume"
            if out
            else "no --out file"
        )
        message = f"{'terminated' if terminated else 'interrupted'}: {where}"
        code = 143 if terminated else 130
        err.print(message, highlight=False, soft_wrap=True)
        if json_out is not None and not outcome.answered:
            write_error_json(json_out, "interrupted", message, code)
        raise typer.Exit(code) from None
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)


__all__ = ["interrupt_outcome", "Outcome"]
