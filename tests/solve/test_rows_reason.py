"""Design rows that leave no finite-time design get one status and one reason from every objective:
the reason :func:`hieropt.solvers.cost_range.no_design_by_rows` finds before any objective's route
runs (rows that force zero bandwidth on a dimension that carries traffic, or rows that cannot all
hold)."""

from __future__ import annotations

import pytest

import hieropt
from hieropt.spec import LinearConstraint
from hieropt.spec.cluster import Cluster
from tests.cases import three_layer_instance

PRICES = [(1.0,), (2.0,), (4.0, 1.0, 1.0)]
"""$ per GB/s of each dimension of :func:`tests.cases.three_layer_instance` (all three carry
traffic)."""
TARGET_NS = 1e9
"""A time target (ns) far above the fastest time of the three-layer workload at any sensible
bandwidth: a target that is not the reason."""

ASKED = [
    ("performance", {}),
    ("performance", {"budget_usd": 1e6}),
    ("performance", {"max_iteration_time_ns": TARGET_NS}),
    ("min_cost", {"max_iteration_time_ns": TARGET_NS}),
    ("min_cost", {"max_iteration_time_ns": TARGET_NS, "budget_usd": 1e6}),
    ("performance_per_cost", {}),
    ("performance_per_cost", {"budget_usd": 1e6}),
    ("performance_per_cost", {"max_iteration_time_ns": TARGET_NS}),
    ("min_run_cost", {}),
    ("min_run_cost", {"budget_usd": 1e6}),
]
"""Every objective, alone, with a budget ($) and with a time target (ns)."""


def _row(coefficients, sense, rhs, text):
    return LinearConstraint(coefficients=coefficients, sense=sense, rhs=rhs, text=text)


def _instance(*rows):
    """The three-layer instance with ``rows`` (no rows of its own) and a cluster priced by its
    NPUs' capex (min_run_cost's fixed cost), 1e9 tokens."""
    inst = three_layer_instance(PRICES, [])
    cluster = Cluster(accelerator_usd=30000.0, amortisation_years=4.0)
    return inst.model_copy(update={"constraints": rows, "cluster": cluster, "tokens": 1e9})


ZERO = _row((1.0, 1.0, 1.0), "<=", 0.0, "sum(bw) <= 0")
ONE_ZERO = _row((0.0, 1.0, 0.0), "<=", 0.0, "bw[1] <= 0")
AT_MOST = _row((0.0, 1.0, 1.0), "<=", 100.0, "sum(bw[1:]) <= 100")
AT_LEAST = _row((0.0, 1.0, 1.0), ">=", 120.0, "sum(bw[1:]) >= 120")

CASES = [
    ((ZERO,), "the design constraints force zero bandwidth on every dimension that carries "
     "traffic"),
    ((ONE_ZERO,), "dimension 1 carries traffic but the design constraints force bw[1] = 0"),
    ((AT_MOST, AT_LEAST), "the design constraints and bounds cannot all hold: sum(bw[1:]) <= 100; "
     "sum(bw[1:]) >= 120; fix: loosen a constraint or widen a bound"),
]


@pytest.mark.parametrize("objective, limits", ASKED)
@pytest.mark.parametrize("rows, reason", CASES)
def test_every_objective_gives_the_rows_reason(objective, limits, rows, reason):
    sol = hieropt.solve(_instance(*rows), objective,
                        options=hieropt.SolveOptions(**limits))
    assert sol.status is hieropt.Status.INFEASIBLE
    assert sol.message == reason
    assert not sol.has_design


def test_the_rows_reason_comes_before_the_objective_runs():
    """performance_per_cost on rows that force zero bandwidth said "unbounded" (time x cost falls
    as every bandwidth shrinks) with a floor on a dimension the instance does not have; min_run_cost
    said HiGHS stopped. Neither route runs now: the check before them decides."""
    from hieropt.solvers.cost_range import no_design_by_rows

    inst = _instance(ZERO)
    with pytest.raises(hieropt.NoSolutionError) as err:
        no_design_by_rows(inst, [0, 1, 2])
    assert str(err.value) == "infeasible: " + CASES[0][1]
    # a dimension without traffic may have no bandwidth: only the loaded ones count
    no_design_by_rows(_instance(ONE_ZERO), [0, 2])
    # feasible rows: nothing to say
    no_design_by_rows(_instance(AT_MOST), [0, 1, 2])
    # rows with right-hand sides that leave bw[1] no room (0.3 - 0.3): zero to round-off of 0.3
    floor = _row((1.0, 0.0, 0.0), ">=", 0.3, "bw[0] >= 0.3")
    room = _row((1.0, 1.0, 0.0), "<=", 0.3, "bw[0] + bw[1] <= 0.3")
    with pytest.raises(hieropt.NoSolutionError) as err:
        no_design_by_rows(_instance(floor, room), [0, 1, 2])
    assert str(err.value) == "infeasible: " + CASES[1][1]
    # a little room (3e-6 GB/s, 1e-5 of the rows' numbers) is bandwidth
    no_design_by_rows(_instance(floor, _row((1.0, 1.0, 0.0), "<=", 0.300003, "room")), [0, 1, 2])


def test_the_example_floor_names_a_dimension_of_the_instance():
    """performance_per_cost without any row has no minimiser at positive bandwidth: the example
    floor names the last dimension that carries traffic (2 of 3), not a fourth one."""
    sol = hieropt.solve(_instance(), "performance_per_cost")
    assert sol.status is hieropt.Status.UNBOUNDED
    assert sol.message.endswith("add a floor, e.g. 'sum(bw) == 500' or 'bw[2] >= 25'")


@pytest.mark.parametrize("rows, reason", CASES)
def test_the_front_gives_the_rows_reason(rows, reason):
    """The Pareto front does not go through solve before its budgets: it makes the same check
    first (rows ``bw[1] <= 0`` said "the budget $... leaves a dimension that carries traffic
    (almost) without bandwidth")."""
    from hieropt.solvers.front import pareto

    with pytest.raises(hieropt.NoSolutionError) as err:
        pareto(_instance(*rows), points=3)
    assert (err.value.kind, str(err.value)) == ("infeasible", "infeasible: " + reason)
