"""The fastest network within a budget a hair above the cheapest network, when the cheapest leaves a
dimension that carries traffic without bandwidth (budget = cheapest x (1 + 1e-9 ... 1e-3)).
Each is solved to an optimum: neither a false "infeasible" ("the budget ... leaves a dimension ...
(almost) without bandwidth", "no design satisfies the constraints") nor LIMIT at a gap. In the
budget row the slack is the difference of two numbers that agree to 1e-9 and beyond, below HiGHS's
tolerances, and the starved dimension's 1e-13 GB/s lies outside the LP's units: the budget is held
by the reduced budget row (hieropt/solvers/near_cheapest.py).

Every answer is checked against a design computed by hand (two dimensions: the slack all goes to the
starved one) or the best of a fine scan of the slack's split (three dimensions), evaluated by the
independent evaluator.
"""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.model.cost import cluster_cost_usd_per_gbps
from tests.cases import kept
from tests.solve.near_cheapest import LAYERS, two_dims


def cost(inst, bw) -> float:
    """The network cost ($) of ``bw`` (GB/s): the cluster's $ per GB/s of each dimension, dotted
    (zero bandwidth on a loaded dimension allowed, unlike the evaluator)."""
    return float(cluster_cost_usd_per_gbps(inst) @ np.asarray(bw, dtype=float))


def time_ns(inst, bw) -> float:
    return hieropt.evaluate(inst, np.asarray(bw, dtype=float)).iteration_time_ns


def assert_certified(sol: hieropt.Solution, best: float, budget: float, c0: float) -> None:
    """Within the budget; no worse than the best design known (``best`` ns) by more than the gap;
    the bound not above it. Costs (and so the room above the cheapest network c0) are resolved only
    to round-off, eps x c0: a design met to round-off may use that much more room, so ``best`` may
    beat the bound by that share of the room, and where that share is above the gap target an honest
    LIMIT (saying so) is the answer."""
    round_off = 4 * np.finfo(float).eps * c0 / (budget - c0)
    assert sol.network_cost_usd <= budget
    assert sol.objective_bound <= sol.objective_value
    assert sol.objective_bound <= best * (1 + round_off)
    if round_off < 1e-9:
        assert sol.status == "optimal" and 0 < sol.gap <= 1e-8, sol.message
        assert sol.objective_value <= best * (1 + 1e-8)
    else:
        assert sol.status == "optimal" or "round-off" in sol.message, sol.message
        assert 0 < sol.gap <= max(1e-8, 4 * round_off), sol.message


@pytest.mark.parametrize("prices", [(1.0, 3.0), (1e-5, 1e4), (2e3, 9e3)])
@pytest.mark.parametrize("eps", [1e-9, 1e-7, 1e-5, 1e-3])
def test_two_dims_budget_a_hair_above_the_cheapest(prices, eps):
    S = 100.0
    base = two_dims(prices, S)
    # the cheapest network: everything on dimension 0, none on the loaded dimension 1
    c0 = cost(base, [S, 0.0])
    budget = c0 * (1 + eps)
    inst = base.model_copy(update={"max_network_cost_usd": budget})
    # by hand: cost = c0 + (p1 - p0) b1 along sum(bw) == S, and T falls as b1 grows (its 1/b1 term
    # dominates), so the optimum spends the whole slack on dimension 1
    r1 = cost(base, [0.0, 1.0]) - cost(base, [1.0, 0.0])
    b1 = (budget - c0) / r1
    hand = time_ns(inst, [S - b1, b1])
    sol = hieropt.solve(inst)
    assert_certified(sol, hand, budget, c0)


def test_budget_at_the_cheapest_says_why():
    """At exactly the cheapest cost the unique cheapest design leaves dimension 1 no bandwidth:
    infeasible, with that reason (never 'no design satisfies the constraints')."""
    base = two_dims((1.0, 3.0), 0.5)
    c0 = cost(base, [0.5, 0.0])
    with pytest.raises(hieropt.NoSolutionError) as e:
        hieropt.solve(base.model_copy(update={"max_network_cost_usd": c0})).raise_for_status()
    assert "no design satisfies" not in str(e.value)
    assert "bw[1]" in str(e.value) or "without bandwidth" in str(e.value)


@pytest.mark.parametrize("eps", [1e-9, 1e-7, 1e-5])
def test_floor_with_a_bounded_dimension(eps):
    """sum(bw) >= F with bw[1] >= lo (finite time there) and dimension 2 starved by the cheapest
    network: the slack splits between dimensions 1 and 2; the solve must be within its gap of the
    best split of a fine scan, and its bound must not be beaten by any scanned design."""
    F, lo = 20.0, 0.05
    base = kept([("Ring", 2), ("Ring", 2), ("Ring", 2)], [(0.5,), (0.9,), (7.6,)], LAYERS,
                ((1, 1, 1), (1, 1, 1), (2, 2, 2)), [((1.0, 1.0, 1.0), ">=", F)],
                bounds=[(0.0, None), (lo, None), (0.0, None)])
    c0 = cost(base, [F - lo, lo, 0.0])
    budget = c0 * (1 + eps)
    inst = base.model_copy(update={"max_network_cost_usd": budget})
    unit = [cost(base, np.eye(3)[d]) for d in range(3)]
    r = np.array(unit) - unit[0]
    room = budget - c0
    best = np.inf
    for f in np.concatenate([np.linspace(0.0, 1.0, 201)[1:], 1 - np.geomspace(1e-12, 1e-2, 100)]):
        b2, b1 = f * room / r[2], lo + (1 - f) * room / r[1]
        bw = np.array([F - b1 - b2, b1, b2])
        if cost(inst, bw) <= budget:
            best = min(best, time_ns(inst, bw))
    sol = hieropt.solve(inst)
    assert_certified(sol, best, budget, c0)


def test_pareto_front_near_its_cheapest_end():
    """The same path serves the front: every point certified (a budget 1e-7 above the cheapest end
    included)."""
    base = two_dims((1e-5, 1e4), 100.0)
    c0 = cost(base, [100.0, 0.0])
    for eps in (1e-7, 1e-4):
        inst = base.model_copy(update={"max_network_cost_usd": c0 * (1 + eps)})
        sol = hieropt.solve(inst)
        assert sol.status == "optimal" and sol.gap <= 1e-8
