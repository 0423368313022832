"""Every optimum printed from the Pareto front carries the status and proven gap of its own solve:
the committee page's "cheapest network" column (the front's first point), the front in
``report.json`` and ``pareto --json``, and the pareto table's title."""

from __future__ import annotations

import html
import io
import json
from dataclasses import replace

import pytest
import typer
from rich.console import Console

import hieropt
from hieropt.report.committee_answers import procurement_committee
from hieropt.report.committee_page import recommendation_html
from hieropt.report.text import front_table
from tests.cases import REPO
from tests.report.nvl72 import NVL

INSTANCE = REPO / "instances" / "gpt3-4d.toml"


def test_the_report_json_gives_every_column_and_front_point_its_status(unpriced):
    """report.json: each front point and each committee column has ``status`` (solve --json's
    key and values) beside its ``gap``; the cheapest column is the front's first point, with its
    status and gap; the page's recommendation block says its status in solve's words."""
    out, committee = unpriced
    doc = json.loads((out / "report.json").read_text())
    assert [p["status"] for p in doc["front"]] == ["optimal"] * 8  # (--points 8)
    assert all(0 <= p["gap"] <= 1e-8 for p in doc["front"])
    cheapest = next(a for a in committee["alternatives"] if a["key"] == "cheapest")
    assert cheapest["network_cost_usd"] == doc["front"][0]["network_cost_usd"]
    assert (cheapest["status"], cheapest["gap"]) == ("optimal", doc["front"][0]["gap"])
    assert {a["status"] for a in committee["alternatives"]} == {"optimal"}
    rec = next(a for a in committee["alternatives"] if a["key"] == committee["recommended"])
    page = html.unescape((out / "report.html").read_text())
    assert (f"<p class='status'>status: optimal; relative gap {rec['gap']:.2e} (proven)</p>"
            in page)


def test_a_recommended_cheapest_network_says_its_status_and_gap(tmp_path):
    """The cheapest column recommended: the terminal's line and the page's block give the front
    point's status and proven gap, not "status: unknown"."""
    from hieropt.cli.compare import _finish

    inst = hieropt.load_instance(NVL)
    front = hieropt.pareto(inst, points=3)
    first = front.points[0]
    assert first.status == "optimal" and 0 <= first.gap <= 1e-8
    c = replace(procurement_committee(inst, front, 0.01), recommended="cheapest")
    assert (c.recommendation.status, c.recommendation.gap) == ("optimal", first.gap)
    words = f"status: optimal; relative gap {first.gap:.2e} (proven)"
    assert words in html.unescape(recommendation_html(c))
    console = Console(file=io.StringIO(), width=300)
    with pytest.raises(typer.Exit):
        _finish(console, None, c, tmp_path, [], 0)
    text = console.file.getvalue()
    assert f"\n  {words}\n" in text and "status: unknown" not in text


def test_a_point_stopped_at_a_limit_says_so():
    """A front point whose solve stopped at a time limit: ``limit`` in pareto --json's point and
    the table's title counts it (the others' title: each point proven optimal)."""
    inst = hieropt.load_instance(INSTANCE)
    front = hieropt.pareto(inst, 3)
    assert [p.status for p in front.points] == ["optimal"] * 3
    assert [p["status"] for p in front.to_dict(inst)["points"]] == ["optimal"] * 3
    assert "each point proven optimal" in str(front_table(inst, front).title)
    stopped = replace(front.points[1], status=hieropt.Status.LIMIT, gap=0.02)
    front = replace(front, points=(front.points[0], stopped, front.points[2]))
    assert [p["status"] for p in front.to_dict(inst)["points"]] == ["optimal", "limit", "optimal"]
    assert front.to_dict(inst)["points"][1]["gap"] == 0.02
    assert str(front_table(inst, front).title) == (
        "Time-cost Pareto front (3 budgets, 1 point stopped at a limit: status limit, proven to "
        "the gap shown)")
