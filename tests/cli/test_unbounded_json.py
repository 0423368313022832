"""A performance-per-cost answer when nothing caps bandwidth (``sum(bw) >= 500``): the costs
searched have no upper end, written as JSON ``null`` (not refused); and a JSON result that is
refused never leaves an earlier run's answer at its path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hieropt import result

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"
CHEAPEST_USD = 4.096e6
"""The cheapest network of gpt3-4d.toml at sum(bw) >= 500 GB/s per NPU, by hand: all 500 GB/s on
dimension 0 (Ring, InterChiplet, the lowest price: $2 per GB/s per NPU) x 4,096 NPUs; the lower end
of the costs the performance-per-cost search covers."""


@pytest.fixture
def uncapped(tmp_path: Path) -> Path:
    """gpt3-4d.toml with ``sum(bw) >= 500`` (no upper limit on bandwidth), its workload path made
    absolute."""
    text = GPT3.read_text(encoding="utf-8")
    for old, new in (('sum(bw) == 500', 'sum(bw) >= 500'),
                     ('"../models/gpt3-175b.toml"', f'"{(REPO / "models" / "gpt3-175b.toml")}"')):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "uncapped.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _strict(path: Path) -> dict:
    def no_constant(name: str) -> None:
        raise AssertionError(f"{name} in {path}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=no_constant)


def test_solve_json_writes_the_unbounded_cost_range_end_as_null(uncapped, tmp_path):
    out = tmp_path / "r.json"
    r = run("solve", uncapped, "--objective", "performance_per_cost", "--json", out)
    assert r.exit_code == 0, r.output
    doc = _strict(out)
    assert doc["status"] == "optimal"
    lo, hi = doc["extra"]["kappa_range_usd"]
    assert hi is None
    assert lo == pytest.approx(CHEAPEST_USD, rel=1e-12)
    assert lo <= doc["network_cost_usd"]
    assert "no upper end" in r.stdout and "$inf" not in r.stdout


def test_pareto_and_report_write_the_unbounded_end_as_null(uncapped, tmp_path):
    out = tmp_path / "front.json"
    r = run("pareto", uncapped, "--points", "3", "--json", out)
    assert r.exit_code == 0, r.output
    assert _strict(out)["best_per_cost"]["extra"]["kappa_range_usd"][1] is None
    folder = tmp_path / "rep"
    r = run("report", uncapped, "--objective", "performance_per_cost", "--points", "3",
            "-o", folder)
    assert r.exit_code == 0, r.output
    assert _strict(folder / "report.json")["optimum"]["extra"]["kappa_range_usd"][1] is None


def test_a_refused_json_result_replaces_an_earlier_answer(uncapped, tmp_path, monkeypatch):
    """A result JSON cannot hold (here: the infinite end kept, as if no field were known to be a
    range) ends with exit 2, and the --json file then holds this run's error document."""
    monkeypatch.setattr(result, "UNBOUNDED_ENDS", (), raising=False)
    out = tmp_path / "r.json"
    out.write_text('{"status": "optimal", "earlier": true}\n', encoding="utf-8")
    r = run("solve", uncapped, "--objective", "performance_per_cost", "--json", out)
    assert r.exit_code == 2
    line = error_line(r)
    assert "extra.kappa_range_usd[1]: the result is not a finite number" in line
    doc = _strict(out)
    assert doc == {"status": "bad_input", "message": line.removeprefix("error: "),
                   "exit_code": 2}


def test_a_refused_report_json_leaves_no_earlier_report(uncapped, tmp_path, monkeypatch):
    monkeypatch.setattr(result, "UNBOUNDED_ENDS", (), raising=False)
    folder = tmp_path / "rep"
    folder.mkdir()
    for name in ("report.json", "report.html"):
        (folder / name).write_text("earlier run\n", encoding="utf-8")
    side = tmp_path / "committee.json"
    side.write_text('{"earlier": true}\n', encoding="utf-8")
    r = run("report", uncapped, "--objective", "performance_per_cost", "--points", "3",
            "-o", folder, "--json", side)
    assert r.exit_code == 2
    assert "optimum.extra.kappa_range_usd[1]: the result is not a finite number" in error_line(r)
    assert not (folder / "report.json").exists() and not (folder / "report.html").exists()
    assert _strict(side)["status"] == "bad_input"
