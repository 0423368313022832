"""The co-design search streams: candidates made as the search reaches them, rows written and
dropped (CSV and Parquet, lists and objects kept through the file), a resume that reads the rows
back one at a time."""

from __future__ import annotations

import pytest

from hieropt.studies.codesign.candidates import enumerate_candidates
from hieropt.studies.codesign.rows import COLUMNS
from hieropt.studies.codesign.search import codesign
from hieropt.studies.explore.results import read_results
from hieropt.workloads.llm.space import PlanChoices
from tests.codesign.spaces import space


def test_candidates_are_made_in_bound_then_id_order_from_the_pair_order():
    sp = space(mapping_rule="all_placements", plans=PlanChoices(tp=(1, 2, 4), pp=(1, 2)))
    enum = enumerate_candidates(sp)
    cands = list(enum.candidates())
    # several placements per (plan, shape) pair
    assert len(cands) == enum.count and enum.pairs < enum.count
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
    assert [r["id"] for r in back] == [r["id"] for r in seen] and len(
        back
    ) == first.enumeration.count
    solved = [r for r in back if r["status"] == "optimal"]
    assert solved and all(isinstance(r["bw_gbps"], list) and isinstance(r["placement"], dict)
                          and isinstance(r["communication_by_group_ns"], dict) for r in solved)
    assert {r["id"]: r["bw_gbps"] for r in solved} == {
        r["id"]: r["bw_gbps"] for r in seen if r["status"] == "optimal"
    }
    again = codesign(sp, workers=1, out=out)
    assert again.solved == 0 and again.settled == 0 and again.resumed == len(back)
    assert again.statuses == first.statuses
    assert again.best.id == first.best.id and again.best.bw_gbps == first.best.bw_gbps
    assert len(read_results(out, COLUMNS)) == len(back)


@pytest.mark.heavy
def test_the_cluster_size_is_a_dimension_of_the_search():
    """npus = [4, 8]: every plan and shape of each size is a candidate; the pruned search gives the
    brute-force best, and the answer says how many NPUs to buy (here 8: the objective is time, more
    NPUs are faster)."""
    from tests.codesign.brute_force import check_pruned_equals_brute_force

    sp = space(npus=(4, 8), plans=PlanChoices(tp=(1, 2), pp=(1, 2)))
    pruned, brute = check_pruned_equals_brute_force(sp)
    one = {n: codesign(space(npus=n, plans=sp.plans), workers=1, prune=False) for n in (4, 8)}
    assert brute.enumeration.count == sum(r.enumeration.count for r in one.values())
    assert brute.enumeration.plans.combinations == 2 * one[8].enumeration.plans.combinations
    assert pruned.best.npus == 8 and pruned.best.objective_value == pytest.approx(
        min(r.best.objective_value for r in one.values()), rel=1e-12)
    # what each size gives (each size's own search's best)
    per_size = {e["npus"]: e for e in brute.by_npus()}
    assert sorted(per_size) == [4, 8] and all(
        per_size[n]["solved"] == one[n].solved for n in (4, 8)
    )
    assert all(
        per_size[n]["best"]["objective_value"]
        == pytest.approx(one[n].best.objective_value, rel=1e-12)
        for n in (4, 8)
    )
    assert [e["npus"] for e in brute.to_dict()["by_npus"]] == [4, 8]
    ppc = check_pruned_equals_brute_force(space(npus=(4, 8), objective="performance_per_cost",
                                                 plans=sp.plans))[0]
    assert ppc.best.npus in (4, 8)


def test_the_bandwidth_cap_and_cost_floor_come_from_every_row():
    """Per-dimension limits bound the total too: bw[0] <= 450 and sum(bw[1:]) <= 400 allow at most
    850 GB/s per NPU in all; bw[0] >= 50 and sum(bw[1:]) >= 50 force at least 100 (the cheapest: 50
    on each side); rows that contradict each other allow no bandwidth (-inf), rows without a limit
    any (inf)."""
    import math

    import numpy as np

    from hieropt.studies.codesign.bounds import bandwidth_cap, bandwidth_floor, lp_lower_bound

    # (shapes of 2 dimensions and more: sum(bw[1:]) selects no dimension of a 1-dimensional one)
    sp = space(
        min_dims=2,
        constraints=("bw[0] <= 450", "bw[0] >= 50", "sum(bw[1:]) <= 400", "sum(bw[1:]) >= 50"),
    )
    assert bandwidth_cap(sp, 3) == pytest.approx(850, rel=1e-11) and bandwidth_cap(sp, 3) >= 850
    assert bandwidth_floor(sp, 3) == pytest.approx(100, rel=1e-11) and bandwidth_floor(sp, 3) <= 100
    assert bandwidth_cap(space(constraints=("sum(bw) == 3",)), 2) == 3.0  # (exact for a total)
    assert bandwidth_cap(space(constraints=("bw[0] >= 1",)), 2) == math.inf
    assert bandwidth_cap(space(constraints=("sum(bw) <= 1", "sum(bw) >= 2")), 2) == -math.inf
    # b0 + b1 >= 3: the cheapest of 2 and 5 per GB/s is 6
    G, h = np.array([[1.0, 1.0]]), np.array([3.0])
    assert lp_lower_bound((G, h), np.array([2.0, 5.0])) == pytest.approx(6.0, rel=1e-11)
    assert lp_lower_bound((G, h), np.array([2.0, 5.0])) <= 6.0


def test_a_results_file_whose_rows_mean_something_else_is_not_resumed(tmp_path, monkeypatch):
    """The fingerprint holds the rows' meaning (``ROWS_VERSION``): a file written when a row's
    design was the performance solve's own point is refused on resume with the fix, not read back
    as if its designs were the cheapest equally fast ones."""
    import hieropt.studies.explore.results as results
    from hieropt.errors import InputError

    sp = space(plans=PlanChoices(tp=(1, 2), pp=(1,)))
    out = tmp_path / "rows.csv"
    monkeypatch.setattr(results, "ROWS_VERSION", results.ROWS_VERSION - 1)
    codesign(sp, workers=1, out=out)
    monkeypatch.undo()
    with pytest.raises(InputError, match="rows mean something else") as e:
        codesign(sp, workers=1, out=out)
    assert "delete this one to start over" in str(e.value)
