"""SIGTERM to a serial sweep (``codesign --workers 1``, ``explore --workers 1``) ends it as Ctrl-C
does, with exit 143 and the one line saying where the rows so far are, not silently: a real SIGTERM
is sent to the command's own process once its second candidate starts (no timing involved)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = """
import os, signal, sys
import {module} as m
solve, calls = m.{name}, []
def second(*args, **kwargs):  # one candidate's solve: SIGTERM as the second one starts
    calls.append(1)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGTERM)
    return solve(*args, **kwargs)
def rows(*args, **kwargs):  # a serial loop's rows: SIGTERM once the first one is in
    for i, row in enumerate(solve(*args, **kwargs)):
        if i == 1:
            os.kill(os.getpid(), signal.SIGTERM)
        yield row
m.{name} = rows if {loop} else second
from hieropt.cli import main
sys.argv = ["hieropt", {args}]
main()
"""


@pytest.mark.parametrize(("command", "space", "module", "name"), [
    ("codesign", "codesign-gpt3-4096.toml", "hieropt.studies.codesign.search",
     "solve_codesign_candidate"),
    ("explore", "gpt3-4096.toml", "hieropt.studies.explore.run", "run_serial"),
])
@pytest.mark.heavy
def test_sigterm_to_a_serial_sweep_says_where_the_rows_are(tmp_path, command, space, module,
                                                          name):
    out = tmp_path / "rows.csv"
    args = ", ".join(repr(str(a)) for a in (command, REPO / "spaces" / space, "--workers", "1",
                                            "--out", out))
    code = SCRIPT.format(module=module, name=name, args=args, loop=name == "run_serial")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                       cwd=tmp_path)
    assert r.returncode == 143, r.stderr[-2000:]
    assert r.stderr.strip().splitlines()[-1] == (
        f"terminated: the rows so far are in {out}; rerun the same command to resume"
    )
    assert "Traceback" not in r.stderr


EARLY = """
import os, signal, sys
import hieropt.studies.codesign.search as m
def enumerate_candidates(space):  # SIGTERM while enumerating: before the first row
    os.kill(os.getpid(), signal.SIGTERM)
m.enumerate_candidates = enumerate_candidates
from hieropt.cli import main
sys.argv = ["hieropt", {args}]
main()
"""


def test_sigterm_before_the_first_row_says_none_was_written(tmp_path):
    """Interrupted while enumerating: no rows file yet, and the line says so (not that the rows so
    far are in it)."""
    out = tmp_path / "rows.csv"
    args = ", ".join(repr(str(a)) for a in ("codesign", REPO / "spaces" / "codesign-gpt3-4096.toml",
                                            "--workers", "1", "--out", out))
    r = subprocess.run([sys.executable, "-c", EARLY.format(args=args)], capture_output=True,
                       text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 143, r.stderr[-2000:]
    assert r.stderr.strip().splitlines()[-1] == (
        f"terminated: no row was written to {out} yet; rerun the same command")
    assert not out.exists() and "Traceback" not in r.stderr
