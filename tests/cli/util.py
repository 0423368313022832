"""Helpers shared by the CLI tests: run a command in-process, check its exit and its one error line,
a small instance file with its ASTRA-sim 1.0 workload, and the ASTRA-sim 2.0 binary's path."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner, Result

from hieropt.cli import app
from tests.cases import REPO

runner = CliRunner(
    env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1", "COLUMNS": "200"}
)
"""In-process runner of the ``hieropt`` command (no colour, 200 columns)."""

WORKLOAD_TXT = """\
DATA
2
L1 -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 2000000 10
L2 -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 2000000 10
"""
"""An ASTRA-sim 1.0 workload of two layers, each with a 2 MB weight-gradient all-reduce (1000 ns of
compute per phase); :data:`INSTANCE_TOML` reads it as ``wl.txt``."""
INSTANCE_TOML = """\
name = "small"
objective = "performance"
training_loop = "no_overlap"
workload = "wl.txt"
constraints = ["sum(bw) == 100"]

[network]
dims = [
  { block = "Ring", npus = 4, cost_class = "Inner" },
  { block = "FullyConnected", npus = 4, cost_class = "Inner" },
  { block = "Switch", npus = 8, cost_class = "Outer" },
]
[mapping]
forward = [1, 1, 1]
input_grad = [1, 1, 1]
weight_grad = [4, 4, 8]

[cost.Inner]
link_usd_per_gbps = 2.0
[cost.Outer]
link_usd_per_gbps = 8.0
switch_usd_per_gbps = 18.0
nic_usd_per_gbps = 30.0
"""
"""A performance instance on Ring 4 x FullyConnected 4 x Switch 8 with ``sum(bw) == 100`` GB/s and
the data-parallel all-reduces of :data:`WORKLOAD_TXT` over all 128 NPUs."""

BINARY = Path(os.environ.get("ASTRA_SIM") or REPO.parent / "shared" / "tools" / "astra-sim" /
              "AstraSim_Analytical_Congestion_Unaware")
"""The ASTRA-sim 2.0 analytical binary: $ASTRA_SIM, else ../shared/tools/astra-sim beside the
repository (it may be absent; the tests that run it skip then)."""


def run(*args: str | Path) -> Result:
    """``hieropt ARGS...`` in-process (no colour, 200 columns)."""
    return runner.invoke(app, [str(a) for a in args])


def assert_ok(result: Result) -> None:
    """The command exited 0 without an exception (the output is shown otherwise)."""
    assert result.exit_code == 0, result.output
    assert result.exception is None, result.exc_info


def assert_error(result: Result, code: int, *parts: str) -> None:
    """The command exited with ``code``, nothing on stdout and one ``error: ...`` line on stderr
    that contains every one of ``parts`` (no traceback)."""
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    msg = result.stderr.strip()
    assert msg.startswith("error: ") and "\n" not in msg, msg
    for p in parts:
        assert p in msg, f"{p!r} not in {msg!r}"


def error_line(r: Result) -> str:
    """The one ``error:`` line of a failed command (asserted to be the whole of stderr)."""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.output
    return lines[0]


def astrasim_instance_file(tmp_path: Path, loop: str = "no_overlap") -> Path:
    """:data:`INSTANCE_TOML` under training ``loop`` written to ``tmp_path`` (inst.toml, with its
    wl.txt); returns its path."""
    (tmp_path / "wl.txt").write_text(WORKLOAD_TXT)
    inst = tmp_path / "inst.toml"
    inst.write_text(
        INSTANCE_TOML.replace('training_loop = "no_overlap"', f'training_loop = "{loop}"')
    )
    return inst
