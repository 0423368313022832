"""Arrays compiled once and shared between solves: each solve's own copy of what it changes, the
rest read-only, and values memoised by value as well as identity."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.formulation.ratio_arrays import compile_ratio_lp, shared_ratio_lp
from hieropt.model.timing import build_time_model
from hieropt.spec import LinearConstraint
from tests.unit.timing_cases import CLASSES_A, DIMS_A, instance_a, layers_a, timing_instance


def test_shared_ratio_lp_gives_each_core_its_own_column_bounds():
    inst = instance_a()
    tm = build_time_model(inst)
    a, b = shared_ratio_lp(inst, tm, 3.0), shared_ratio_lp(inst, tm, 3.0)
    assert a.arr.start is b.arr.start  # (the matrix is shared ...)
    # (... not the bounds)
    assert a.arr.col_lower is not b.arr.col_lower and a.arr.col_upper is not b.arr.col_upper
    a.arr.col_upper[a.u_col] = 7.0
    assert b.arr.col_upper[b.u_col] != 7.0
    with pytest.raises(ValueError):
        a.arr.row_lower[0] = 1.0  # (read-only: a solve that changed it would change every other)
    fresh = compile_ratio_lp(inst, tm, 3.0)
    np.testing.assert_array_equal(b.arr.col_upper, fresh.arr.col_upper)
    np.testing.assert_array_equal(b.arr.value, fresh.arr.value)
    assert shared_ratio_lp(inst, tm, 3.5).arr.value is not a.arr.value  # (another unit: another LP)


def test_memo_by_value_compares_values_and_keeps_the_last_few():
    inst = instance_a()
    calls = []

    def build(v):
        calls.append(v)
        return [v]

    key = (inst.design_matrix,)
    first = inst.memo_by_value("_test_values", key, 1.5, lambda: build(1.5), size=2)
    assert inst.memo_by_value("_test_values", key, float("1.5"), lambda: build(-1)) is first
    inst.memo_by_value("_test_values", key, 2.5, lambda: build(2.5), size=2)
    # (1.5 is the oldest: dropped)
    inst.memo_by_value("_test_values", key, 3.5, lambda: build(3.5), size=2)
    inst.memo_by_value("_test_values", key, 1.5, lambda: build(1.5), size=2)
    assert calls == [1.5, 2.5, 3.5, 1.5]


def test_repeated_perf_per_cost_solves_agree_bit_for_bit():
    """Each kappa point of a perf-per-cost solve changes its core's column bounds (u and kappa): on
    its own copy, so the next solve of the same instance starts from the compiled bounds again and
    certifies the same optimum, bit for bit."""
    total = LinearConstraint(coefficients=(1.0, 1.0), sense="==", rhs=10.0, text="sum(bw) == 10")
    inst = timing_instance(DIMS_A, layers_a(), (4, 1), (1, 8), (4, 8), CLASSES_A,
                           constraints=(total,))
    first = hieropt.solve(inst, objective="performance_per_cost")
    again = hieropt.solve(inst, objective="performance_per_cost")
    assert first.status.value == again.status.value == "optimal"
    assert again.objective_value == first.objective_value
    np.testing.assert_array_equal(again.bw_gbps, first.bw_gbps)
    assert first.objective_value == pytest.approx(
        first.iteration_time_ns * first.network_cost_usd, rel=1e-12
    )


def _key(sol) -> tuple:
    """What a solve reports, and how it got there (its LPs and cuts: an LP that started from another
    solve's cuts could reach the same exact optimum by another path)."""
    return (
        sol.status.value,
        sol.objective_value,
        sol.gap,
        tuple(sol.bw_gbps.tolist()),
        sol.iterations,
        sol.extra.get("cuts"),
    )


def test_the_seeded_cut_lp_does_not_carry_one_solve_into_the_next():
    """A repeated solve copies the LP with its seed cuts kept on the compiled arrays (CutLP._start):
    whatever ran before on the same instance (budgets and time targets that change row bounds, other
    objectives, a Pareto front that adds cuts), each solve gives, bit for bit, what it gives on a
    freshly loaded copy."""
    path = "instances/gpt3-4d.toml"
    calls = [
        dict(objective="performance"),
        dict(objective="performance", options=hieropt.SolveOptions(budget_usd=1.2e7)),
        dict(objective="min_cost", options=hieropt.SolveOptions(max_iteration_time_ns=1.3e9)),
        dict(objective="performance_per_cost"),
        dict(objective="performance", options=hieropt.SolveOptions(budget_usd=9e6)),
        dict(objective="performance"),
    ]
    fresh = [_key(hieropt.solve(hieropt.load_instance(path), **kw)) for kw in calls]
    shared = hieropt.load_instance(path)
    # (cuts and budget rows on its own LP, before any of the solves)
    hieropt.pareto(shared, points=6)
    for order in (range(len(calls)), reversed(range(len(calls)))):
        for i in order:
            assert _key(hieropt.solve(shared, **calls[i])) == fresh[i], calls[i]
    assert all(k[0] == "optimal" for k in fresh)
    # the kept seeded LP itself is as it was made: the compiled rows and the seed cuts, nothing a
    # solve added
    arr = shared.__dict__["_perf_lp"][1]
    seeds, kept, cut_j = arr.cache["seeded"][:3]
    assert kept.num_rows == arr.n_rows + len(cut_j) == arr.n_rows + len(seeds) and not kept._changes
