"""What a co-design answer says: invalid plans' reasons with their numbers on the console, grouped
and counted; equivalent shapes folded into one ranked row with their count."""

from __future__ import annotations

import pytest

from hieropt.report.codesign import invalid_lines, summary_lines
from hieropt.studies.codesign.rows import fold_equivalent
from hieropt.studies.codesign.search import codesign
from hieropt.workloads.llm.space import PlanChoices
from tests.codesign.spaces import space


def test_invalid_plans_are_printed_grouped_with_their_numbers():
    r = codesign(space(plans=PlanChoices(tp=(1, 3), pp=(1, 2))), workers=1)
    lines = summary_lines(r)
    # (one plan each)
    assert "  2 x plan.npus: tp 3 x pp 1 = 3 does not divide the 8 NPUs" not in lines
    assert "  1 x plan.npus: tp 3 x pp 1 = 3 does not divide the 8 NPUs" in lines
    assert "  1 x plan.npus: tp 3 x pp 2 = 6 does not divide the 8 NPUs" in lines
    many = {f"reason {i}": 10 - i for i in range(10)}
    shown = invalid_lines(many, 3)
    assert shown == ["  10 x reason 0", "  9 x reason 1", "  8 x reason 2",
                     "  ... 7 more reasons (28 plans; all in --json plans.invalid)"]


def test_equivalent_shapes_fold_into_one_row():
    """On the tiny space, TP 1 x DP 8 runs on 'a:FC2 a:FC4' and 'a:R2 a:R4' (and the other blocks of
    one level) at the same bandwidths, time and cost: one ranked row with their count; the rows in
    the file stay apart."""
    rows: list[dict] = []
    r = codesign(
        space(plans=PlanChoices(tp=(1,), pp=(1,))), workers=1, prune=False, on_row=rows.append
    )
    ranking = r.ranking
    assert sum(1 + x["equivalents"] for x in ranking) == len(rows) == r.solved
    top = ranking[0]
    assert top["equivalents"] >= 1 and top["shape"] not in top["equivalent_shapes"]
    same = [x for x in rows if x["shape"] in top["equivalent_shapes"]]
    assert len(same) == top["equivalents"]
    for x in same:
        assert x["objective_value"] == pytest.approx(top["objective_value"], rel=1e-10)
        assert x["network_cost_usd"] == pytest.approx(top["network_cost_usd"], rel=1e-10)
        assert x["bw_gbps"] == pytest.approx(top["bw_gbps"], rel=1e-9)
    assert r.best.equivalents == top["equivalents"]
    # rows that differ in cost (another level's price) are not folded
    a, b = (
        dict(rows[0]),
        {**rows[0], "id": rows[0]["id"] + "x", "network_cost_usd": rows[0]["network_cost_usd"] * 2},
    )
    assert len(fold_equivalent([a, b])) == 2


def test_sizes_table_says_what_each_cluster_size_gives():
    from rich.console import Console

    from hieropt.report.codesign import sizes_table

    r = codesign(space(npus=(8, 12), plans=PlanChoices(tp=(1, 2), pp=(1,))), workers=1)
    console = Console(record=True, width=200)
    console.print(sizes_table(r))
    text = console.export_text()
    lines = {line.split("│")[1].strip(): line for line in text.splitlines() if line.startswith("│")}
    assert set(lines) == {"8", "12"}
    assert "no valid plan fits" in lines["12"] and r.best.plan in lines["8"]
