"""What a solve stopped at a limit says: its message and its table title state the proven gap and
never call the design optimal."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .util import run

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"
NEAR_CHEAPEST = "4096000.0000004096"
"""A budget 1e-13 of itself above the cheapest network of gpt3-4d.toml ($4,096,000): the design
meets the budget only to the round-off of a cost, and the solve stops at a limit."""


def test_a_limit_near_the_cheapest_network_states_one_gap(tmp_path):
    out = tmp_path / "r.json"
    r = run("solve", GPT3, "--budget", NEAR_CHEAPEST, "--json", out)
    assert r.exit_code == 3, r.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["status"] == "limit"
    gap = doc["gap"]
    assert 0 < gap < 1e-3
    msg = doc["message"]
    assert msg.startswith(f"stopped at proven relative gap {gap:.3g}: ")
    assert msg.endswith("which leaves the time undecided within that gap")
    # (no other share of the time than the proven gap is named undecided)
    assert not re.search(r"[0-9.e-]+ of the time", msg), msg
    assert f"status: limit ({msg})" in r.stdout


def test_a_limit_design_is_not_titled_optimal():
    r = run("solve", GPT3, "--budget", NEAR_CHEAPEST)
    assert r.exit_code == 3, r.output
    assert "Optimal per-dimension bandwidth" not in r.stdout
    title = "Best per-dimension bandwidth found (not proven optimal: within relative gap "
    assert title in r.stdout


def test_an_optimum_is_titled_optimal():
    r = run("solve", GPT3)
    assert r.exit_code == 0, r.output
    assert "Optimal per-dimension bandwidth" in r.stdout
    assert "not proven optimal" not in r.stdout
