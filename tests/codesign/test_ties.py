"""The ranked table folds the rows of one plan that share a rank into its first (the cheapest
network of that time with the performance objective): "+k as fast and as dear" counts the other
networks of the same time and cost, "+k of the same rank" the ones ranked after it by the
tie-break; the JSON keeps the rows (``tie_of`` naming the row shown) and the instance files are the
table's rows.

Hand-computed on the tiny space (``sum(bw) == 3`` GB/s per NPU on 8 NPUs): TP 1 x DP 8 on one
dimension takes the same time on ``a:FC8`` ($1 per GB/s: 8 x 3 x 1 = $24) and on ``b:SW8`` (link
$2 + switch $1 + NIC $1 per GB/s: 8 x 3 x 4 = $96); both rank 2, the Switch folded into the
FullyConnected row."""

from __future__ import annotations

import pytest
from rich.console import Console

from hieropt.report.codesign import ranking_table
from hieropt.studies.codesign.export import write_instances
from hieropt.studies.codesign.rows import fold_ties, tied_counts
from hieropt.studies.codesign.search import codesign
from hieropt.workloads.llm.space import PlanChoices
from tests.codesign.spaces import space

PLANS = PlanChoices(tp=(1, 2), pp=(1,), zero_stage=(0,), recompute=("none",))


def _row(i: int, plan: str, rank: int, t: float, usd: float, eq: int = 0) -> dict:
    return {"id": f"r{i}", "plan": plan, "rank": rank, "iteration_time_ns": t,
            "network_cost_usd": usd, "equivalents": eq}


def test_rows_of_one_plan_and_rank_fold_into_the_first():
    rows = [_row(0, "p", 1, 100.0, 10.0), _row(1, "p", 1, 100.0 * (1 + 5e-9), 10.0, eq=2),
            _row(2, "q", 1, 100.0, 10.0), _row(3, "p", 1, 100.0, 11.0), _row(4, "p", 2, 101.0, 9.0)]
    shown = fold_ties(rows)
    assert [(h["id"], [r["id"] for r in f]) for h, f in shown] == [
        ("r0", ["r1", "r3"]), ("r2", []), ("r4", [])]
    # r1 (with its 2 equivalent shapes) is as fast and as dear within 1e-8; r3 is dearer
    assert tied_counts(*shown[0]) == (3, 1)
    assert tied_counts(*shown[1]) == (0, 0)


def test_the_table_json_and_instances_show_one_row_per_plan_and_rank(tmp_path):
    r = codesign(space(plans=PLANS), workers=1, prune=False)
    shown = fold_ties(r.ranking)
    assert sum(1 + len(f) for _, f in shown) == len(r.ranking)
    assert len({(h["plan"], h["rank"]) for h, _ in shown}) == len(shown)
    head, folded = next((h, f) for h, f in shown if h["rank"] == 2)
    assert (head["plan"], head["shape"], [x["shape"] for x in folded]) == (
        "tp1 cp1 pp1 dp8 ep1 z0 nore nosp v1 mb1", "a:FC8", ["b:SW8"])
    assert head["network_cost_usd"] == pytest.approx(24.0, rel=1e-9)
    assert folded[0]["network_cost_usd"] == pytest.approx(96.0, rel=1e-9)
    assert folded[0]["iteration_time_ns"] == pytest.approx(head["iteration_time_ns"], rel=1e-12)
    assert tied_counts(head, folded) == (0, 1)
    console = Console(width=300, record=True)
    console.print(ranking_table(r, top=3))
    text = console.export_text()
    assert "a:FC8 (+1 equivalent) (+1 of the same rank)" in text
    assert f"Best 3 of {r.solved} solved candidates" in text
    d = r.to_dict(top=3)
    ids = [x["id"] for x in d["ranking"]]
    assert [x["id"] for x in r.ranking[:3]] == ids[:3]  # (the best rows, in their order)
    assert {h["id"] for h, _ in shown[:3]} <= set(ids)  # (and every row the table shows)
    assert {x["id"]: x["tie_of"] for x in d["ranking"]}[folded[0]["id"]] == head["id"]
    paths = write_instances(r, tmp_path, top=3)
    written = [p.read_text().splitlines()[0] for p in paths]
    assert written == [f"# co-design candidate {h['id']}" for h, _ in shown[:3]]
