"""The tutorial's commands run as written, and print what the tutorial shows.

docs/tutorial.md alternates ``bash`` blocks (commands, run in order in a scratch folder that sees
the repository's models/, instances/, catalogs/ and spaces/) and ``text`` blocks (lines the commands
before it print). Each ``bash`` block must exit 0; each line of a ``text`` block must appear in that
block's output (spaces collapsed).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cases import REPO

TUTORIAL = REPO / "docs" / "tutorial.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)


def blocks(text: str) -> list[tuple[str, list[str]]]:
    """(commands, expected lines) per ``bash`` block of the page, in order."""
    out: list[tuple[str, list[str]]] = []
    for lang, body in FENCE.findall(text):
        if lang == "bash":
            out.append((body, []))
        elif lang == "text" and out:
            out[-1][1].extend(line for line in body.splitlines() if line.strip())
    return out


def squash(text: str) -> str:
    return " ".join(text.split())


def test_tutorial_has_commands_and_outputs():
    parsed = blocks(TUTORIAL.read_text())
    assert len(parsed) >= 8
    assert sum(bool(expected) for _, expected in parsed) >= 7


@pytest.mark.heavy
def test_tutorial_commands_print_what_the_page_shows(tmp_path: Path):
    for name in ("models", "instances", "catalogs", "spaces"):
        (tmp_path / name).symlink_to(REPO / name)
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "COLUMNS": "120",
        "NO_COLOR": "1",
    }
    for commands, expected in blocks(TUTORIAL.read_text()):
        r = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", commands],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, (
            f"{commands}\nexit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        )
        printed = squash(r.stdout + r.stderr)
        for line in expected:
            assert squash(line) in printed, f"{commands}\nmissing: {line}\n{r.stdout[-3000:]}"
