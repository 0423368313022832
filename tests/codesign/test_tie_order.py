"""Which row of a tie a ranking shows first (the row a co-design table, its best and its instance
files show): among rows whose objective values are within the gap target (one rank), an objective
that weighs time against cost (performance_per_cost, min_run_cost) puts the lower value first, even
within the gap target; then the other figure (network cost with performance, else time, within
1e-8); then the simpler network, fewer dimensions, then fewer NICs; then the id. The knee of a
co-design page picks the simplest of the equally cheap knees. Rows here are hand-made: their
values are the figures of ``codesign-llama3-405b`` at 8,192 NPUs."""

from __future__ import annotations

from types import SimpleNamespace

from rich.console import Console

from hieropt.report.codesign import ranking_table
from hieropt.studies.codesign import export
from hieropt.studies.explore.run import rank_rows


def _row(i: str, value: float, t: float, usd: float, dims: int, nics: int | None,
         plan: str = "p") -> dict:
    return {"id": i, "plan": plan, "objective_value": value, "iteration_time_ns": t,
            "network_cost_usd": usd, "n_dims": dims, "nics": nics}


def test_performance_per_cost_ties_show_the_lower_value_first():
    # a 4-level network of 9,216 NICs, 1.1 ms faster and $12,797 dearer, 2.9e-8 above the 2-level
    # network of 8,192 NICs: one rank (within 1e-7), the lower time x cost first (not the
    # faster)
    four = _row("a-four", 1.666133907e18, 11_983.2713e6, 139_038_320.0, 4, 9216)
    two = _row("b-two", 1.666133858e18, 11_984.3739e6, 139_025_523.0, 2, 8192)
    out = rank_rows([four, two], "performance_per_cost", key="id")
    assert [(r["id"], r["rank"]) for r in out] == [("b-two", 1), ("a-four", 1)]


def test_equal_values_show_the_fewest_dimensions_then_nics_first():
    # the same value to round-off (4e-16 apart) on 3, 2 and 2 dimensions of 9,216, 8,192 and
    # 9,216 NICs: fewer dimensions, then fewer NICs, whatever the ids and the last digits say
    v, t, usd = 1.6661338575223165e18, 11_984_373_936.942602, 139_025_523.25961325
    rows = [_row("a", v * (1 - 4e-16), t, usd, 3, 9216), _row("b", v, t, usd, 2, 9216),
            _row("c", v * (1 + 4e-16), t, usd, 2, 8192)]
    for objective in ("performance_per_cost", "min_run_cost"):
        assert [r["id"] for r in rank_rows(rows, objective, key="id")] == ["c", "b", "a"]
    # performance: equally fast (to round-off) and equally dear: the same order
    perf = [{**r, "objective_value": t * (1 + d)} for r, d in zip(rows, (-4e-16, 0, 4e-16),
                                                                   strict=True)]
    assert [r["id"] for r in rank_rows(perf, "performance", key="id")] == ["c", "b", "a"]


def test_performance_still_puts_the_cheapest_of_equally_fast_first():
    # 5e-9 faster (within the 1e-8 gap target) but $1M dearer on 2 dimensions: the cheaper
    # 3-dimension network first, as explore and hieropt solve's knee define the equally fast
    fast = _row("a", 5_317_109_155.0 * (1 - 5e-9), 0.0, 342_475_318.0, 2, 16384)
    cheap = _row("b", 5_317_109_155.0, 0.0, 341_475_318.0, 3, 18432)
    for r in (fast, cheap):
        r["iteration_time_ns"] = r["objective_value"]
    out = rank_rows([fast, cheap], "performance", key="id")
    assert [(r["id"], r["rank"]) for r in out] == [("b", 1), ("a", 1)]
    # rows without dimension or NIC counts (a catalog shortlist's) keep the id order
    bare = [{k: v for k, v in r.items() if k not in ("n_dims", "nics")} for r in (cheap, fast)]
    bare[1]["network_cost_usd"] = bare[0]["network_cost_usd"]
    assert [r["id"] for r in rank_rows(bare, "performance", key="id")] == ["a", "b"]


def test_the_knee_of_equally_cheap_networks_is_the_simplest(monkeypatch):
    # 3 rows reach the knee's time for $332,128,803 to round-off (1e-15 apart): the 3-level
    # network's knee is a hair cheaper, the 2-level one is shown (fewest dimensions), not
    # the 3-level row (the first of the least cost)
    rows = [_row("three", 5.317e9, 5.317e9, 341_475_318.0, 3, 18432),
            _row("two-b", 5.317e9, 5.317e9, 341_475_318.0, 2, 16384),
            _row("two-a", 5.317e9, 5.317e9, 341_475_318.0, 2, 16384),
            _row("dear", 5.317e9, 5.317e9, 341_475_318.0, 2, 8192)]
    for r in rows:
        r["objective_bound"] = r["iteration_time_ns"]
    usd = {"three": 332_128_803.09979844, "two-b": 332_128_803.0997985,
           "two-a": 332_128_803.0997988, "dear": 332_128_803.1 * (1 + 2e-8)}
    monkeypatch.setattr(export, "space_row_network", lambda space, row: None)
    monkeypatch.setattr(export, "row_instance", lambda space, row, net: row["id"])
    monkeypatch.setattr(export, "knee_after",
                        lambda inst, t, c, within, bound_ns: SimpleNamespace(knee_usd=usd[inst]))
    space = SimpleNamespace(objective="performance")
    row, k = export.codesign_knee(space, rows, 0.01)
    # (two-b and two-a alike: the first in the rows' order; dear is 2e-8 dearer, not a tie)
    assert row["id"] == "two-b" and k.knee_usd == usd["two-b"]


def test_plus_k_counts_ranked_rows_like_the_ranks():
    # rank 1: a (2 equivalent shapes) with b (as fast and as dear, 1 equivalent) and c (dearer)
    # folded; the next rank is 1 + 3 rows = 4, and the table says +1 and +1 (rows), not +2 and +1
    base = dict(plan="p", rank=1, iteration_time_ns=5.0e9, network_cost_usd=3.0e8,
                objective_value=5.0e9, compute_ns=4.0e9, bubble_ns=0.0, communication_ns=1.0e9,
                memory_bytes=7.0e10, bw_gbps=[450.0, 50.0], placement={"tp": [8, 1]})
    ranking = [{**base, "id": "a", "shape": "nvl:SW16 spine:SW1024", "equivalents": 2},
               {**base, "id": "b", "shape": "nvl:SW32 spine:SW512", "equivalents": 1},
               {**base, "id": "c", "shape": "nvl:SW64 spine:SW256", "network_cost_usd": 3.1e8},
               {**base, "id": "d", "plan": "q", "rank": 4, "shape": "nvl:SW16 spine:SW1024",
                "objective_value": 6.0e9, "iteration_time_ns": 6.0e9}]
    result = SimpleNamespace(space=SimpleNamespace(objective="performance"),
                             statuses={"optimal": 4}, ranking=ranking)
    console = Console(width=300, record=True)
    console.print(ranking_table(result))
    text = console.export_text()
    assert ("nvl:SW16 spine:SW1024 (+2 equivalent) (+1 as fast and as dear; +1 of the same rank)"
            in text)
    assert "│    4 │ q " in text
    assert "Ranks count ranked rows" in text
