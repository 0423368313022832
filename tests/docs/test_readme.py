"""The README stays a one-page introduction whose quick start is true.

It is at most 300 lines; its quick start is exactly two commands, ``scripts/run`` and
``scripts/test``, both executable scripts of the repository; the output it shows is what
``scripts/run`` prints (the lines and table rows that do not depend on the machine); every
relative link points to a file of the repository.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.cases import REPO

README = REPO / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def quick_start() -> tuple[list[str], list[str]]:
    """(commands, shown output lines) of the README's quick start section."""
    text = README.read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = FENCE.findall(section)
    commands = [line.split("#")[0].strip() for line in blocks[0][1].splitlines() if line.strip()]
    output = [line for line in blocks[1][1].splitlines() if line.strip()]
    return commands, output


def test_readme_is_at_most_300_lines():
    assert len(README.read_text().splitlines()) <= 300


def test_quick_start_is_scripts_run_and_scripts_test():
    commands, _ = quick_start()
    assert commands == ["scripts/run", "scripts/test"]
    for c in commands:
        assert os.access(REPO / c, os.X_OK), c
    assert "hieropt solve instances/gpt3-4d.toml" in (REPO / "scripts" / "run").read_text()
    assert "bash scripts/test" in (REPO / ".ci" / "run").read_text()


def test_quick_start_output_is_what_the_solve_prints():
    _, shown = quick_start()
    hieropt = Path(sys.executable).with_name("hieropt")
    r = subprocess.run([str(hieropt), "solve", str(REPO / "instances" / "gpt3-4d.toml")],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "COLUMNS": "120", "NO_COLOR": "1"})
    assert r.returncode == 0, r.stderr
    printed = " ".join(r.stdout.split())
    heads = ("status:", "iteration time:", "network cost:", "relative gap", "instance ", "mapping ")
    heads += ("training:", "unknown ", "knee ", "│")  # the buyer's lines, the knee, table rows
    stable = [line for line in shown if line.startswith(heads)]
    assert len(stable) == 10 + 4 + 5  # those lines, the bandwidth table's rows, the time split's
    header = next(line for line in shown if line.startswith("sensitivity of"))
    assert header.split(";")[0] in printed  # (without the time it took)
    assert header.split(";", 2)[2] in printed  # (the design the multipliers are taken at)
    for line in stable:
        assert " ".join(line.split()) in printed, line


def test_relative_links_point_to_files():
    for target in re.findall(r"\]\(([^)#\s]+)", README.read_text()):
        if "://" not in target:
            assert (REPO / target).exists(), target
