"""The front of an instance with its own budget or time target, by hand: every point within both,
the budgets ascending, the times descending, the ends where the limits put them.

The two-dimension problem of tests/solve/test_procurement.py: b0 + b1 = 100 GB/s, T = 1e6 +
max(1.5 S / b0, 0.4375 S / b1) ns with S = 8e8 bytes, cost 32 (2 b0 + 56 b1) $. The fastest
network balances the two: b0 = 100 x 1.5 / 1.9375 = 77.419 GB/s, T = 1e6 + 1.2e9 / 77.419 =
16,500,000 ns, cost 32 (2 x 77.419 + 56 x 22.581) = $45,419.35. Below that cost the budget binds
and b1 is the slow dimension: cost C gives b1 = (C / 32 - 200) / 54, T = 1e6 + 3.5e8 / b1.
"""

from __future__ import annotations

import pytest

import hieropt
from tests.solve.test_procurement import _two_dim

T_FAST, C_FAST = 16_500_000.0, 32 * (2 * 7500 / 96.875 + 56 * 2187.5 / 96.875)


def _check_front(front, budget=None, target=None):
    pts = front.points
    budgets = [p.budget_usd for p in pts]
    times = [p.iteration_time_ns for p in pts]
    assert budgets == sorted(budgets)
    assert all(b <= a * (1 + 1e-9) for a, b in zip(times, times[1:], strict=False)), times
    for p in pts:
        assert p.network_cost_usd <= p.budget_usd * (1 + 1e-9)
        assert budget is None or p.network_cost_usd <= budget * (1 + 1e-9)
        assert target is None or p.iteration_time_ns <= target * (1 + 1e-9)


def test_the_front_ends_at_the_instances_budget():
    # $20,000: b1 = (625 - 200) / 54 = 425 / 54 GB/s, T = 1e6 + 3.5e8 x 54 / 425 ns
    front = hieropt.pareto(_two_dim(max_network_cost_usd=20_000.0), points=4)
    _check_front(front, budget=20_000.0)
    last = front.points[-1]
    assert last.budget_usd == 20_000.0
    assert last.network_cost_usd == pytest.approx(20_000.0, rel=1e-8)  # (the gap)
    assert last.iteration_time_ns == pytest.approx(1e6 + 3.5e8 * 54 / 425, rel=1e-8)
    assert front.fastest.iteration_time_ns == pytest.approx(last.iteration_time_ns, rel=1e-12)
    assert C_FAST == pytest.approx(45_419.355, abs=0.001)  # ($45,419.36 rounded up to the cent)
    assert ("the front ends at the instance's budget $20,000.00 (max_network_cost_usd): its last "
            "point is the fastest network within it; without the budget the fastest takes "
            "16,500,000.0 ns at $45,419.36") in front.notes
    assert not any(n.startswith("the fastest point is") for n in front.notes)


def test_the_front_starts_at_the_instances_time_target():
    # 2e7 ns: b1 = 3.5e8 / 1.9e7 GB/s costs 6,400 + 1,728 b1 = $38,231.58; the front runs from
    # there (1e-6 above) to the fastest network
    floor = 6400 + 1728 * 3.5e8 / 1.9e7
    front = hieropt.pareto(_two_dim(max_iteration_time_ns=2e7), points=4)
    _check_front(front, target=2e7)
    first, last = front.points[0], front.points[-1]
    assert first.budget_usd == pytest.approx(floor * (1 + 1e-6), rel=1e-9)
    # (1e-6 more $ buys 1e-6 x 38,231.58 / 1,728 GB/s more b1: T falls by its share)
    b1 = (floor * (1 + 1e-6) - 6400) / 1728
    assert first.iteration_time_ns == pytest.approx(1e6 + 3.5e8 / b1, rel=1e-9)
    assert last.iteration_time_ns == pytest.approx(T_FAST, rel=1e-8)
    assert last.network_cost_usd == pytest.approx(C_FAST, rel=1e-8)
    assert front.notes[0].startswith(
        "the front starts at the cheapest network that meets the instance's time target "
        f"20,000,000.0 ns (max_iteration_time_ns; ${floor:,.2f})")


def test_a_budget_below_the_cheapest_network_has_no_front():
    with pytest.raises(hieropt.NoSolutionError, match=r"below the cheapest network .* \$6,400"):
        hieropt.pareto(_two_dim(max_network_cost_usd=5000.0), points=3)


def test_without_an_upper_limit_the_budget_ends_the_front():
    # no constraint: within $20,000 the two dimensions balance, b0 = (1.5 / 0.4375) b1 = 24 / 7 b1,
    # 64 b0 + 1,792 b1 = 14,080 / 7 b1 = 20,000: b1 = 9.943 GB/s, T = 1e6 + 3.5e8 x 14,080 /
    # 140,000 = 36,200,000 ns
    front = hieropt.pareto(_two_dim(constraints=(), max_network_cost_usd=20_000.0), points=3)
    _check_front(front, budget=20_000.0)
    assert front.points[-1].budget_usd == 20_000.0
    assert front.points[-1].iteration_time_ns == pytest.approx(36_200_000.0, rel=1e-8)
    assert ("no upper limit on bandwidth: the front ends at the instance's budget $20,000.00 "
            "(max_network_cost_usd)") in front.notes
