"""``solve --json``'s ``objective_unit`` with objective min_run_cost: ``USD per run`` with a token
budget, ``USD per iteration`` without one (as ``codesign --json`` and docs/buyer.md say)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.util import assert_ok, run

REPO = Path(__file__).resolve().parents[2]
L = REPO / "instances" / "llama3-405b-16k-cluster.toml"


def _without_tokens(tmp_path: Path) -> Path:
    text = L.read_text().replace('"../models/', f'"{REPO}/models/')
    lines = [x for x in text.splitlines() if not x.startswith("tokens = ")]
    path = tmp_path / "no-tokens.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_min_run_cost_unit_says_per_run_or_per_iteration(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    assert_ok(run("solve", L, "--no-sensitivity", "--json", out))
    d = json.loads(out.read_text())
    # 15.6e12 tokens of 2,048 x 8,192 per iteration: 929,832 iterations of 6,424.2 ms
    assert d["objective_unit"] == "USD per run"
    assert round(d["objective_value"]) == 36_722_485
    assert_ok(run("solve", _without_tokens(tmp_path), "--no-sensitivity", "--json", out))
    d = json.loads(out.read_text())
    assert d["objective_unit"] == "USD per iteration"
    # the same design's $ per run over its 15.6e12 / (2,048 x 8,192) iterations
    assert abs(d["objective_value"] - 36_722_484.97 / (15.6e12 / (2048 * 8192))) < 0.01
