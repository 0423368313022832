"""The co-design page's columns on a hand-made result: equally cheap networks (network capex within
the gap target, relative 1e-8, as the search ranks them) go to the fastest; the fastest column of a
search that minimised another objective says it is the fastest of the candidates on the page; every
column shows its proven gap and the objective it is of."""

from __future__ import annotations

import pytest

from hieropt.report.committee_codesign import codesign_committee, least_of
from hieropt.report.committee_page import alternatives_html


def _row(id_: str, ms: float, usd: float, gap: float) -> dict:
    return {"id": id_, "plan": f"plan {id_}", "shape": "nvl:SW8 spine:SW1024", "npus": 8192,
            "bw_gbps": [900.0, 50.0], "iteration_time_ns": ms * 1e6, "network_cost_usd": usd,
            "gap": gap}


def _result(objective: str, dearer: float) -> dict:
    """Three ranked candidates: ``a`` (6,000 ms at $100M x ``dearer``, the best), ``b`` (6,500 ms
    at $100M) and ``c`` (4,000 ms at $200M)."""
    rows = [_row("a", 6000, 100e6 * dearer, 4.8e-12), _row("b", 6500, 100e6, 5e-8),
            _row("c", 4000, 200e6, 1e-12)]
    return {"space": "s", "objective": objective, "status": "optimal", "gap": 3e-12,
            "best": rows[0], "ranking": rows, "candidates": 3, "solved": 3}


def _alts(data: dict) -> dict:
    return {a.key: a for a in codesign_committee(data, None).alternatives}


def test_equally_cheap_networks_go_to_the_fastest():
    # a at $100,000,000.50 is 5e-9 dearer than b's $100,000,000, within the gap target 1e-8: the
    # faster a (6,000 ms) is the cheapest network; at $100,000,004 (4e-8 dearer) b (6,500 ms) is
    assert _alts(_result("min_run_cost", 1 + 5e-9))["cheapest"].plan == "plan a"
    assert _alts(_result("min_run_cost", 1 + 4e-8))["cheapest"].plan == "plan b"
    # exact float order alone would pick b for any dearer a
    rows = _result("min_run_cost", 1 + 5e-9)["ranking"]
    assert min(rows, key=lambda r: (r["network_cost_usd"], r["iteration_time_ns"]))["id"] == "b"
    # the rule: least capex within 1e-8, then the least time
    pick = least_of(rows, "network_cost_usd", lambda r: r["iteration_time_ns"])
    assert pick["id"] == "a"


def test_the_fastest_column_says_what_it_is_the_fastest_of():
    alts = _alts(_result("min_run_cost", 1.0))
    fastest = alts["fastest"]
    assert fastest.plan == "plan c" and fastest.label == "fastest of the 3 candidates on this page"
    assert fastest.how.endswith("the search ranked them by min_run_cost: a candidate it did not "
                                "rank can be faster (codesign --objective performance finds the "
                                "fastest over every candidate)")
    assert alts["cheapest"].label == "cheapest network on this page"
    # a search by time: its best is the fastest over every candidate
    alts = _alts(_result("performance", 1.0))
    assert alts["fastest"].label == "fastest" and alts["fastest"].how == (
        "the least iteration time among the 3 ranked candidates of the result")


def test_every_column_shows_its_proven_gap():
    c = codesign_committee(_result("min_run_cost", 1.0), None)
    gaps = {a.key: (a.gap, a.gap_word) for a in c.alternatives}
    assert gaps["best"] == (3e-12, "min_run_cost")  # (the search's, over every candidate)
    assert gaps["fastest"] == (1e-12, "min_run_cost")  # (c's own solve)
    assert gaps["cheapest"] == (4.8e-12, "min_run_cost")  # (a: as cheap as b, and faster)
    page = alternatives_html(c)
    assert "<th>proven gap</th>" in page
    assert "data-alt='best' data-gap='3e-12'>3.0e-12 (min_run_cost)</td>" in page
    assert "data-alt='cheapest' data-gap='4.8e-12'>4.8e-12 (min_run_cost)</td>" in page
    best = next(a for a in c.alternatives if a.key == "best").to_dict()
    assert (best["gap"], best["gap_of"]) == (3e-12, "min_run_cost")
    assert pytest.approx(best["iteration_time_ns"]) == 6e9
