"""Certified optima kept by their inputs (hieropt/solvers/procurement.py, ``recall_outcome``): an
instance that differs from an earlier one only where the loop does not read (its name) gets the
earlier certified optimum without a solve, to the last bit, with the same LP and cut counts; one
whose rows differ is solved. Both users: the performance optimum (``fastest_once``) and a sweep's
pair of the fastest design and the cheapest equally fast one (``solve_fastest_cheapest``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import hieropt.solvers.objectives as objectives
import hieropt.solvers.procurement as procurement
from hieropt.cache import Cache, use
from hieropt.io.instance import load_instance
from hieropt.model.timing import build_time_model
from hieropt.solvers.cutting import REL_GAP
from hieropt.solvers.procurement import Counts, fastest_once
from hieropt.spec.instance import LinearConstraint

ROOT = Path(__file__).resolve().parents[2]


def _solve(inst, cache: Cache):
    counts = Counts()
    with use(cache):
        res, _ = fastest_once(inst, build_time_model(inst), REL_GAP, 60.0, counts)
    return res, counts


def test_an_equal_instance_gets_the_kept_optimum_and_other_rows_are_solved(monkeypatch):
    inst = load_instance(ROOT / "instances" / "gpt3-4d.toml").model_copy(
        update={"objective": "performance"})
    fresh, fresh_counts = _solve(inst, Cache())  # (its own cache: a solve)
    made = []
    real = procurement.TimeLP
    monkeypatch.setattr(procurement, "TimeLP", lambda *a, **k: made.append(1) or real(*a, **k))
    shared = Cache()
    first, _ = _solve(inst, shared)
    twin = inst.model_copy(update={"name": "another name"})
    again, counts = _solve(twin, shared)
    assert len(made) == 1  # the twin was not solved
    assert again.upper == first.upper == fresh.upper
    assert again.lower == fresh.lower
    np.testing.assert_array_equal(again.bw, fresh.bw)
    assert (counts.lps, counts.cuts) == (fresh_counts.lps, fresh_counts.cuts)
    again.bw[0] = -1.0  # a copy: the kept optimum is not changed by its user
    assert _solve(twin, shared)[0].bw[0] == fresh.bw[0]
    # another row: solved, and slower (half the optimum's bandwidth on the first dimension)
    cap = LinearConstraint(coefficients=(1.0,) + (0.0,) * (fresh.bw.size - 1), sense="<=",
                           rhs=0.5 * float(fresh.bw[0]))
    capped = inst.model_copy(update={"constraints": (*inst.constraints, cap)})
    other, _ = _solve(capped, shared)
    assert len(made) == 2
    assert other.upper > fresh.upper


def test_a_lone_solve_makes_no_full_key_and_a_twin_compares_one(monkeypatch):
    """The time model's fingerprint and the rows' bytes are made only when a kept optimum shares
    the bucket (budget, target, gap, time limit, shapes): none for one solve, one per side for a
    twin."""
    made = []
    real = procurement._inputs_key
    monkeypatch.setattr(procurement, "_inputs_key", lambda *a: made.append(1) or real(*a))
    inst = load_instance(ROOT / "instances" / "gpt3-4d.toml").model_copy(
        update={"objective": "performance"})
    shared = Cache()
    _solve(inst, shared)
    assert made == []
    _solve(inst.model_copy(update={"name": "another name"}), shared)
    assert len(made) == 2  # the twin's key and the kept optimum's
    budgeted = inst.model_copy(update={"max_network_cost_usd": 1e12})
    _solve(budgeted, shared)  # another bucket: no key made
    assert len(made) == 2


def test_a_twin_gets_the_kept_fastest_and_cheapest_pair_re_checked(monkeypatch):
    """The pair of a sweep's row: the twin's performance and tie-break Solutions equal the first's
    (values, designs, LP counts) without an LP made, and both are still re-checked by the
    evaluator; another budget is solved."""
    inst = load_instance(ROOT / "instances" / "gpt3-4d.toml").model_copy(
        update={"objective": "performance"})
    made, checked = [], []
    real_lp, real_verified = procurement.TimeLP, objectives.verified
    monkeypatch.setattr(procurement, "TimeLP", lambda *a, **k: made.append(1) or real_lp(*a, **k))
    monkeypatch.setattr(objectives, "verified",
                        lambda *a, **k: checked.append(a[4]) or real_verified(*a, **k))
    shared = Cache()
    with use(shared):
        fast, cheap = objectives.solve_fastest_cheapest(inst)
        twin_fast, twin_cheap = objectives.solve_fastest_cheapest(
            inst.model_copy(update={"name": "another name"}))
    assert len(made) == 1
    assert checked == ["performance", "min_cost", "performance", "min_cost"]
    assert twin_fast.objective_value == fast.objective_value
    assert twin_cheap.objective_value == cheap.objective_value  # its network's $
    np.testing.assert_array_equal(twin_cheap.bw_gbps, cheap.bw_gbps)
    np.testing.assert_array_equal(twin_fast.bw_gbps, fast.bw_gbps)
    assert (twin_cheap.iterations, twin_fast.iterations) == (cheap.iterations, fast.iterations)
    # the tie-break: no dearer than the fastest design, and within 1e-8 of its time
    assert cheap.network_cost_usd <= fast.network_cost_usd
    assert cheap.iteration_time_ns <= fast.objective_value * (1 + 1e-8)
    budgeted = inst.model_copy(update={"max_network_cost_usd": 0.5 * fast.network_cost_usd})
    with use(shared):
        slow, _ = objectives.solve_fastest_cheapest(budgeted)
    assert len(made) == 2
    assert slow.objective_value > fast.objective_value
