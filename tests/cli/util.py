"""Helpers shared by the CLI tests: run a command in-process and read its one error line."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from hieropt.cli import app

runner = CliRunner(
    env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1", "COLUMNS": "200"}
)


def run(*args: str | Path) -> Result:
    """``hieropt ARGS...`` in-process (no colour, 200 columns)."""
    return runner.invoke(app, [str(a) for a in args])


def error_line(r: Result) -> str:
    """The one ``error:`` line of a failed command (asserted to be the whole of stderr)."""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.output
    return lines[0]
