"""``report --within 0`` turns the knee off, as its help, its error text and docs/buyer.md say: it
silently became 1 %. Without the knee the page has no knee column and, without a $ per run,
recommends the fastest design (the committee's rule: the least $ per run, else the knee, else the
fastest)."""

from __future__ import annotations

import json

import pytest

import hieropt
from hieropt.solvers.objectives import solve_fastest_cheapest
from tests.report.nvl72 import NVL, SPACE, TOKENS, report


@pytest.mark.heavy
def test_within_zero_has_no_knee_and_recommends_the_fastest(tmp_path):
    """The NVL72 instance (2,304 NPUs, no [cluster]): with the default 1 % the knee is recommended;
    with 0 the page's alternatives are the fastest design and the best performance per cost, and
    the recommendation is the design hieropt solve's performance optimum."""
    data = report([NVL, "--within", "0"], tmp_path / "off")
    keys = [a["key"] for a in data["alternatives"]]
    assert "knee" not in keys and "fastest" in keys
    assert "knee" not in {m["key"] for m in data["missing"]}
    assert data["within"] == 0
    assert data["recommended"] == "fastest"
    assert data["why"] == ("the fastest design (the $ per run is unknown, and --within 0 turns "
                           "the knee off)")
    fast, _ = solve_fastest_cheapest(hieropt.load_instance(NVL))
    head = data["headline"]
    assert head["iteration_time_ns"] == pytest.approx(fast.iteration_time_ns, rel=1e-9)
    assert head["network_cost_usd"] == pytest.approx(fast.network_cost_usd, rel=1e-9)
    page = (tmp_path / "off" / "report.html").read_text()
    assert "knee, cheapest within" not in page
    on = report([NVL, "--within", "1%"], tmp_path / "on")
    assert on["within"] == 0.01 and on["recommended"] == "knee"


def test_codesign_page_without_the_knee(tmp_path, codesign_json):
    """A co-design result's page with ``--within 0``: the ranked rows' alternatives without the
    knee column; the recommendation (no [cluster] in the space) is the fastest row."""
    result = json.loads(codesign_json.read_text())
    data = report([codesign_json, "--space", SPACE, "--tokens", f"{TOKENS:g}", "--within", "0"],
                  tmp_path / "off")
    alts = {a["key"]: a for a in data["alternatives"]}
    assert "knee" not in alts and data["within"] == 0
    assert data["recommended"] == "fastest"
    fastest = min(r["iteration_time_ns"] for r in result["ranking"])
    assert alts["fastest"]["iteration_time_ns"] == fastest
    assert data["headline"]["iteration_time_ns"] == fastest
