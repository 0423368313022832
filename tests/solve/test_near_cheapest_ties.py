"""Budgets a hair above the cheapest network when two dimensions tie in price and the cheapest
network puts all the bandwidth on one of them (slack 3e-7 ... 1e-6 of the cost, where a solver
without the exact budget row gives status LIMIT at gaps 3.4e-6 ... 3.5e-4, with exactly feasible
designs up to 3.5e-4 faster than the one returned).

The first pass holds the budget by the reduced budget row alone (hieropt/solvers/near_cheapest.py),
not by the cost-share LP's share row: that row is of the cost's size, its tolerance (1e-9 of the
cost) is 3e-3 of a room of 3e-7 of it, and with a tie the LP would spend that tolerance on the split
between the two tied dimensions (a design row met 1e-10 above its right-hand side), i.e. out of the
room the starved dimension lives on, its duals, 1e-13 accurate, bounding the time only to 1e-13 x
cost / room.

The oracle is exact: one equality (or floor) row sum(bw) = S, dimensions 0 and 1 at the same price
and dimension 2 dearer, each dimension carrying its own all-reduce. The budget then gives dimension
2 exactly room / r2 (r2 its price less the tied one's, room the budget less the cheapest cost, both
exact rationals), and the rest of S splits between the tied dimensions in the ratio sqrt(mA) :
sqrt(mB), so T* = C + (sqrt(mA)
+ sqrt(mB))^2 / (S - B2) + mC / B2, evaluated in 40-digit decimal arithmetic
(tests/solve/near_cheapest.py exact_optimum).
"""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.model.cost import cluster_cost_usd_per_gbps
from tests.solve.near_cheapest import REPRODUCERS, exact_optimum, reproducer, tied

EPS = float(np.finfo(float).eps)


@pytest.mark.parametrize("sense", ["==", ">="])
@pytest.mark.parametrize(
    "prices", [(1.0, 7.0), (1e-5, 1e4), (2e3, 9e3), (1.0, 1e4), (3.0, 3e5), (0.0355, 5200.0)]
)
@pytest.mark.parametrize("eps", [3e-7, 1e-6, 1e-5, 1e-3, 1e-2])
def test_tie_in_price_is_certified(eps, prices, sense):
    """Certified at every slack (not LIMIT at gaps 5e-6 ... 1e-4 for the price ratios 1e4 ... 1e5 at
    slacks 3e-7 and 1e-6)."""
    S = 100.0
    base = tied(prices, S, sense)
    c0 = float(cluster_cost_usd_per_gbps(base)[0]) * S
    budget = c0 * (1 + eps)
    inst = base.model_copy(update={"max_network_cost_usd": budget})
    T, design = exact_optimum(inst, S, budget)
    # the closed form is the evaluator's time at its design (an independent check of the oracle
    # itself)
    assert hieropt.evaluate(inst, design).iteration_time_ns == pytest.approx(float(T), rel=1e-12)
    sol = hieropt.solve(inst)
    assert sol.status == "optimal" and 0 < sol.gap <= 1e-8, sol.message
    assert sol.network_cost_usd <= budget
    # designs met to round-off may use EPS x cost more of the room: the bound may sit that share
    # above T*
    round_off = 4 * EPS * c0 / (budget - c0)
    assert sol.objective_bound <= float(T) * (1 + round_off)
    assert sol.objective_value <= float(T) * (1 + 1e-8)


@pytest.mark.parametrize("key", sorted(REPRODUCERS))
def test_break_it_reproducers_are_certified(tmp_path, key):
    """Each reproducer is a certified optimum (not LIMIT at its gap). Its bound is held
    against the independent SCIP oracle of tests/solve/test_near_cheapest_scip.py."""
    inst = reproducer(tmp_path, key)
    sol = hieropt.solve(inst)
    assert sol.status == "optimal" and 0 < sol.gap <= 1e-8, sol.message
    assert sol.network_cost_usd <= inst.max_network_cost_usd
