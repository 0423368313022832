"""What a sweep command (``explore``, ``codesign``) leaves when it is interrupted: exit 130 (Ctrl-C)
or 143 (SIGTERM during a pool sweep), one line on stderr saying where the rows so far are, and the
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
    sweep, writing the results) ends the command with exit 130 (143 for the pool's ``Terminated``),
    the line ``interrupted: WHERE`` on ``err`` and ``{"status": "interrupted", "message",
    "exit_code"}`` in ``json_out`` unless the body had written its answer there (:class:`Outcome`).
    ``out``: the ``--out`` rows file (resumable), or None."""
    outcome = Outcome()
    try:
        yield outcome
    except KeyboardInterrupt as e:
        terminated = type(e).__name__ == "Terminated"
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


__all__ = ["interrupt_outcome", "Outcome"]
