"""The co-design search streams: candidates made as the search reaches them, rows written and dropped (CSV and
Parquet, lists and objects kept through the file), a resume that reads the rows back one at a time."""

from __future__ import annotations

import pytest

from hieropt.studies.codesign.candidates import enumerate_candidates
from hieropt.studies.codesign.rows import COLUMNS
from hieropt.studies.codesign.search import codesign
from hieropt.studies.explore.results import read_results
from hieropt.workloads.llm.space import PlanChoices

from ..workloads.test_codesign_search import space


def test_candidates_are_made_in_bound_then_id_order_from_the_pair_order():
    sp = space(mapping_rule="all_placements", plans=PlanChoices(tp=(1, 2, 4), pp=(1, 2)))
    enum = enumerate_candidates(sp)
    cands = list(enum.candidates())
    assert len(cands) == enum.count and enum.pairs < enum.count  # several placements per (plan, shape) pair
    keys = [(c.lower_bound, c.id) for c in cands]
    assert keys == sorted(keys) and len(set(c.id for c in cands)) == len(cands)
    assert enum.frontier_bytes == 8 * enum.pairs  # the one array that grows with the space
    assert list(enum.candidates(3)) == cands[sum(len(enum.pair_candidates(k)) for k in range(3)):]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_rows_stream_to_the_file_and_resume(tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    sp = space(plans=PlanChoices(tp=(1, 2), pp=(1, 2)))
    out = tmp_path / f"rows{suffix}"
    seen: list[dict] = []
    first = codesign(sp, workers=1, out=out, on_row=seen.append)
    back = read_results(out, COLUMNS)
    assert [r["id"] for r in back] == [r["id"] for r in seen] and len(back) == first.enumeration.count
    solved = [r for r in back if r["status"] == "optimal"]
    assert solved and all(isinstance(r["bw_gbps"], list) and isinstance(r["placement"], dict)
                          and isinstance(r["communication_by_group_ns"], dict) for r in solved)
    assert {r["id"]: r["bw_gbps"] for r in solved} == {r["id"]: r["bw_gbps"] for r in seen if r["status"] == "optimal"}
    again = codesign(sp, workers=1, out=out)
    assert again.solved == 0 and again.pruned == 0 and again.resumed == len(back)
    assert again.statuses == first.statuses
    assert again.best.id == first.best.id and again.best.bw_gbps == first.best.bw_gbps
    assert len(read_results(out, COLUMNS)) == len(back)
