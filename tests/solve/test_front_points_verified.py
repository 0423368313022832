"""Every Pareto front point is verified as a solve's design: its bounds and budget met exactly, its
time never below the proven bound of a budget solve at the same budget.

Random fronts with lower bounds on most dimensions (the cheapest network sits on them): the front's
first point lies 1e-6 above the cheapest network, where the budget's room is a sliver of the cost,
so a design a hair below its floors or a hair over budget spends room the budget does not give (a
point 1e-6 above the cheapest network reported a time 3e-7 below the proven bound with its design
8e-11 below three lower bounds). Scaling the points' designs onto the budget as a whole would take
the floors down with them (1e-16 .. 3e-16 below them here); the tests below hold each point's design
to its floors and its budget.
"""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt import SolveOptions
from hieropt.model.cost import cluster_cost_usd_per_gbps
from hieropt.spec import Bound, Instance, LinearConstraint
from hieropt.verify import verify
from tests.cases import REPO
from tests.solve.portfolios import random_portfolio


def floored(seed: int) -> Instance:
    """One workload on 2-4 dimensions, most with a lower bound, under sum(bw) <= floors + up to 1000
    GB/s (and, for some seeds, a >= row)."""
    rng = np.random.default_rng(seed)
    inst = random_portfolio(rng, 1, D=int(rng.integers(2, 5)))
    D = inst.network.n_dims
    lows = [float(10 ** rng.uniform(-1, 2)) if rng.random() < 0.7 else 0.0 for _ in range(D)]
    rows = (
        LinearConstraint(
            coefficients=(1.0,) * D,
            sense="<=",
            rhs=float(sum(lows) + 10 ** rng.uniform(0, 3)),
            text="sum",
        ),
    )
    if rng.random() < 0.5:
        rows += (
            LinearConstraint(
                coefficients=tuple(float(rng.integers(1, 3)) for _ in range(D)),
                sense=">=",
                rhs=float(sum(lows) * 0.5),
                text="mix",
            ),
        )
    return Instance(
        **inst.model_copy(
            update={"bounds": tuple(Bound(lower_gbps=v) for v in lows), "constraints": rows}
        ).model_dump()
    )


@pytest.mark.parametrize("seed", [2, 5, 14, 20])
def test_front_points_meet_bounds_and_budget_exactly(seed):
    inst = floored(seed)
    lower = inst.design_matrix.bw_lower
    price = cluster_cost_usd_per_gbps(inst)
    front = hieropt.pareto(inst, points=3)
    for p in front.points[:2]:
        assert (p.bw >= lower).all(), (p.bw - lower).tolist()
        assert float(np.dot(price, p.bw)) <= p.budget_usd
        assert verify(inst, p.bw, p.iteration_time_ns, budget_usd=p.budget_usd).ok
        bound = hieropt.solve(inst, options=SolveOptions(budget_usd=p.budget_usd)).objective_bound
        assert p.iteration_time_ns >= bound * (1 - 1e-12)


def test_a_front_of_more_than_the_most_points_is_refused_before_solving():
    """A million points (about an hour of exact solves) is refused with the limit, at once."""
    from hieropt.solvers.front import MAX_POINTS

    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    with pytest.raises(hieropt.InputError) as e:
        hieropt.pareto(inst, points=1_000_000)
    assert MAX_POINTS == 100_000
    assert str(e.value) == (
        "points: 1,000,000 points asked for, above 100,000 (each an exact solve and a "
        "verification, about 1 ms: minutes to hours); fix: ask for at most 100,000 points (a "
        "front's shape needs far fewer)")
