"""Log-spaced Pareto budgets (``pareto(..., spacing="log")``, ``hieropt pareto --spacing log``):
with a ceiling far above the floor the budget range spans many orders of magnitude; evenly spaced
budgets then put every point but the first at the dear end, where the performance-per-cost optimum
is not, and log spacing covers the whole range."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt import SolveOptions
from tests.cases import three_layer_instance

FAR = three_layer_instance(
    ((0.0033085,), (6858.28,), (0.0234792, 1e-5, 1e-5)),
    [((1.0, 1.0, 1.0), "<=", 3.19e12)],
    [(0.00293, 2.93e9), (0.025, 2.5e10), (0.0039, 1.6e7)],
)


def test_log_spacing_is_geometric_and_reaches_the_cheap_networks():
    linear = hieropt.pareto(FAR, points=8)
    log = hieropt.pareto(FAR, points=8, spacing="log")
    budgets = np.array([p.budget_usd for p in log.points])
    assert budgets[0] == pytest.approx(linear.points[0].budget_usd, rel=1e-12)  # the same ends
    assert budgets[-1] == pytest.approx(linear.points[-1].budget_usd, rel=1e-12)
    ratios = budgets[1:] / budgets[:-1]
    # geometric, over orders of magnitude
    assert np.allclose(ratios, ratios[0], rtol=1e-9) and ratios[0] > 10
    best = log.best_per_cost.network_cost_usd
    # even spacing: the second budget is already far above the performance-per-cost optimum; log
    # spacing has a budget within one step of it
    assert linear.points[1].budget_usd > 1e3 * best
    assert any(best / ratios[0] <= b <= best * ratios[0] for b in budgets)
    times = [p.iteration_time_ns for p in log.points]
    assert all(b <= a * (1 + 1e-8) for a, b in zip(times, times[1:], strict=False))
    # each point is the fastest design within its budget (an independent solve agrees)
    for p in log.points[1:3]:
        alone = hieropt.solve(
            FAR, objective="performance", options=SolveOptions(budget_usd=p.budget_usd)
        )
        assert p.iteration_time_ns == pytest.approx(alone.objective_value, rel=2e-8)


def test_unknown_spacing_is_an_input_error():
    with pytest.raises(hieropt.errors.InputError, match="spacing"):
        hieropt.pareto(FAR, points=4, spacing="quadratic")
