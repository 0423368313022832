"""Every candidate's row is the exact optimum of its shape: against direct hieropt.solve calls,
against a hand-written instance file, and, for every pruned duplicate, against its representative
(solved separately)."""

from __future__ import annotations

import math

import pytest

import hieropt
from hieropt import SolveOptions
from hieropt.solvers.cutting import REL_GAP
from hieropt.solvers.procurement import tie_break_target_ns
from hieropt.studies.explore import build_instance, candidates, explore, load_space

from .util import WORKLOAD, write_space

REL = 1e-7  # the optima are proven to 1e-8 (1e-7 for performance_per_cost)


def _close(a: float, b: float, rel: float = REL) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b))


@pytest.mark.parametrize(("rule", "tp", "objective"), [("tp_lowest", 2, "performance"),
                                                      ("all_placements", 4, "performance"),
                                                      ("tp_lowest", 2, "performance_per_cost")])
def test_pruned_duplicates_have_the_representatives_optimum(tmp_path, rule, tp, objective):
    space = load_space(write_space(tmp_path, tp=tp, rule=rule, objective=objective))
    full = explore(space, workers=1, prune=False)  # every candidate, duplicates included
    kept = explore(space, workers=1)
    value = {r["shape_id"]: r["objective_value"] for r in full.rows}
    assert len(full.rows) == kept.enumeration.placements
    checked = 0
    for rep in kept.rows:
        assert _close(rep["objective_value"], value[rep["shape_id"]])
        for other in kept.enumeration.equivalents[rep["shape_id"]]:
            assert _close(value[other], rep["objective_value"]), (rep["shape_id"], other)
            checked += 1
    assert checked == kept.enumeration.pruned > 0
    # ... and the distinct candidates really differ somewhere (the pruning is not vacuous)
    assert len({round(r["objective_value"], 3) for r in kept.rows}) > 1


def test_rows_equal_direct_solves(tmp_path):
    space = load_space(write_space(tmp_path, tp=4, rule="all_placements"))
    result = explore(space, workers=1)
    by_id = {c.id: c for c in result.enumeration.candidates}
    for row in result.rows:
        sol = hieropt.solve(build_instance(space, by_id[row["shape_id"]]))
        assert row["status"] == "optimal"
        # (the row's value is its design's time, the cheapest within 1e-8 of the optimum)
        assert _close(row["objective_value"], sol.objective_value, 1.01e-8)
        assert row["objective_bound"] <= row["objective_value"] and row["gap"] <= 1e-8
        # the reported design is the cheapest within the gap target of the optimal time
        assert row["iteration_time_ns"] <= sol.objective_value * (1 + 1.01e-8)
        assert row["network_cost_usd"] <= sol.network_cost_usd * (1 + 1e-7)
        bw = [float(b) for b in row["bw_gbps"].split(";")]
        assert math.isclose(sum(bw), 500, rel_tol=1e-9)
        assert _close(
            hieropt.evaluate(build_instance(space, by_id[row["shape_id"]]), bw).iteration_time_ns,
            row["iteration_time_ns"],
            1e-12,
        )


def test_row_equals_a_hand_written_instance(tmp_path):
    # The shape a:Ring 4 x b:Switch 4 under tp_lowest with TP 2: TP takes 2 of a's 4 NPUs, DP is 2 x
    # 4.
    result = explore(load_space(write_space(tmp_path)), workers=1)
    row = next(r for r in result.rows if r["shape_id"] == "a:R4 b:SW4")
    assert (row["tp_groups"], row["dp_groups"]) == ("2x1", "2x4")
    instance = tmp_path / "inst.toml"
    instance.write_text(
        """
name = "by-hand"
objective = "performance"
training_loop = "no_overlap"
constraints = ["sum(bw) == 500"]
group_bandwidth = "links"   # (a shape space's default: TP's 2 of the Ring's 4 a path, B/2)
[network]
dims = [{ block = "Ring", npus = 4, cost_class = "A" },
        { block = "Switch", npus = 4, cost_class = "B" }]
[mapping]
forward = [2, 1]
input_grad = [2, 1]
weight_grad = [2, 4]
"""
        + WORKLOAD.format(tp=2, dp=8)
        + """
[cost.A]
link_usd_per_gbps = 2.0
[cost.B]
link_usd_per_gbps = 7.8
switch_usd_per_gbps = 18.0
nic_usd_per_gbps = 31.6
""",
        encoding="utf-8",
    )
    sol = hieropt.solve(hieropt.load_instance(instance))
    assert _close(row["objective_value"], sol.objective_value, 1.01e-8)
    cheapest = hieropt.solve(
        hieropt.load_instance(instance),
        objective="min_cost",
        options=SolveOptions(max_iteration_time_ns=tie_break_target_ns(
            sol.objective_value, sol.objective_bound, REL_GAP)),
    )
    assert _close(row["network_cost_usd"], cheapest.network_cost_usd, 1e-9)
    # scale-out figures: the Switch dimension's bandwidth, NICs of 50 GB/s for 16 NPUs, its spend
    bw_top = cheapest.bw_gbps[1]
    assert _close(row["scaleout_gbps_per_npu"], bw_top, 1e-12)
    assert row["nics"] == 16 * math.ceil(bw_top / 50 - 1e-9)  # whole NICs per NPU
    assert _close(row["scaleout_usd"], 16 * 57.4 * bw_top, 1e-9)
    assert _close(row["nic_usd"], 16 * 31.6 * bw_top, 1e-9)


def test_ranking_pareto_and_summary(tmp_path):
    result = explore(load_space(write_space(tmp_path, tp=4, rule="all_placements")), workers=1)
    ranking = result.ranking
    assert [r["rank"] for r in ranking][0] == 1
    values = [r["objective_value"] for r in ranking]
    assert values == sorted(values) or all(  # equal ranks may be reordered by cost within the gap
        values[i + 1] >= values[i] * (1 - 1e-8) for i in range(len(values) - 1))
    front = result.pareto
    for r in result.ranking:  # nothing dominates a front member
        for f in front:
            assert not (r["iteration_time_ns"] < f["iteration_time_ns"] * (1 - 1e-12)
                        and r["network_cost_usd"] < f["network_cost_usd"] * (1 - 1e-12))
    summary = result.by_dims()
    assert [e["n_dims"] for e in summary] == [2, 3]
    assert sum(e["candidates"] for e in summary) == result.enumeration.placements
    for e in summary:
        assert e["best"] == next(r for r in ranking if r["n_dims"] == e["n_dims"])


def test_infeasible_shapes_are_rows_not_crashes(tmp_path):
    # bw[top] >= 600 cannot hold with sum(bw) == 500: every shape is infeasible, reported per row.
    path = write_space(tmp_path)
    path.write_text(
        path.read_text().replace('["sum(bw) == 500"]', '["sum(bw) == 500", "bw[top] >= 600"]')
    )
    result = explore(load_space(path), workers=1)
    assert not result.ranking and len(result.failed) == len(candidates(load_space(path)).candidates)
    assert all(r["status"] == "infeasible" for r in result.failed)
