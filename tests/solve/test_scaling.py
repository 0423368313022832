"""One scaling rule (hieropt/formulation/scale.py): every certificate is invariant under rescaling
the instance.

Multiplying every collective size and every bandwidth limit by a (bytes and GB/s together) leaves
every time unchanged and multiplies every optimal bandwidth by a; multiplying every price by c
multiplies every cost by c. So for a and c from 1e-6 to 1e6 (where a solver with one set of units
changes the answer, ignores a budget that binds at tiny prices x bandwidth, overprices min_cost with
"gap 0" or stops at 'Unbounded'): the same optimum, scaled, each certified to its gap target, for
the performance, budget, min-cost and performance-per-cost objectives.
"""

from __future__ import annotations

import pytest

import hieropt
from hieropt import SolveOptions
from hieropt.spec import CostClass, CostModel, Instance, LinearConstraint, Workload
from tests.cases import REPO
from tests.solve.rescale import scaled

SCALES = [1e-6, 1e-3, 1.0, 1e3, 1e6]


@pytest.fixture(scope="module")
def gpt3():
    return hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")


@pytest.fixture(scope="module")
def reference(gpt3):
    fast = hieropt.solve(gpt3)
    budget = 0.8 * fast.network_cost_usd
    return {
        "fast": fast,
        "budget": budget,
        "within": hieropt.solve(gpt3, options=SolveOptions(budget_usd=budget)),
        "target": fast.iteration_time_ns * 1.2,
        "cheap": hieropt.solve(
            gpt3,
            objective="min_cost",
            options=SolveOptions(max_iteration_time_ns=fast.iteration_time_ns * 1.2),
        ),
        "ppc": hieropt.solve(gpt3, objective="performance_per_cost"),
    }


@pytest.mark.parametrize("a", SCALES)
def test_performance_invariant(gpt3, reference, a):
    sol = hieropt.solve(scaled(gpt3, a, 1.0))
    ref = reference["fast"]
    assert sol.success and sol.gap <= 1e-8, sol.message
    assert sol.iteration_time_ns == pytest.approx(ref.iteration_time_ns, rel=2e-8)
    assert sol.bw_gbps == pytest.approx(ref.bw_gbps * a, rel=1e-5)


@pytest.mark.parametrize("a", SCALES)
@pytest.mark.parametrize("c", [1e-6, 1.0, 1e6])
def test_budget_invariant(gpt3, reference, a, c):
    """The fastest network within 80 % of the fastest one's cost: the budget binds at every
    scale."""
    sol = hieropt.solve(
        scaled(gpt3, a, c), options=SolveOptions(budget_usd=reference["budget"] * a * c)
    )
    ref = reference["within"]
    assert sol.success and sol.gap <= 1e-8, sol.message
    assert sol.iteration_time_ns == pytest.approx(ref.iteration_time_ns, rel=2e-8)
    assert sol.network_cost_usd == pytest.approx(reference["budget"] * a * c, rel=1e-8)


@pytest.mark.parametrize("a", SCALES)
@pytest.mark.parametrize("c", [1e-6, 1.0, 1e6])
def test_min_cost_invariant(gpt3, reference, a, c):
    sol = hieropt.solve(
        scaled(gpt3, a, c),
        objective="min_cost",
        options=SolveOptions(max_iteration_time_ns=reference["target"]),
    )
    ref = reference["cheap"]
    assert sol.success and sol.gap <= 1e-8, sol.message
    assert sol.network_cost_usd == pytest.approx(ref.network_cost_usd * a * c, rel=2e-8)
    assert sol.iteration_time_ns <= reference["target"] * (1 + 1e-9)


@pytest.mark.parametrize("a", SCALES)
@pytest.mark.parametrize("c", [1e-6, 1.0, 1e6])
def test_performance_per_cost_invariant(gpt3, reference, a, c):
    sol = hieropt.solve(scaled(gpt3, a, c), objective="performance_per_cost")
    ref = reference["ppc"]
    assert sol.success and sol.gap <= 1e-7, sol.message
    assert sol.objective_value == pytest.approx(ref.objective_value * a * c, rel=2e-7)
    assert sol.iteration_time_ns == pytest.approx(ref.iteration_time_ns, rel=1e-5)


@pytest.mark.parametrize("row", ["bw[0] >= 499.999", "bw[1] >= 499.999", "bw[3] >= 499.999"])
def test_two_rows_that_pin_the_other_dimensions_near_zero(row):
    """'sum(bw) == 500' with 'bw[d] >= 499.999' leaves the other dimensions 0.001 GB/s, 2e-6 of the
    unit the tightest single row suggests: the cuts there had coefficients 1e6 and 1e-6 in one row,
    HiGHS stopped with 'Unknown' / 'Infeasible', and the solve said "infeasible: the design
    constraints and bounds cannot all hold" (bw[0]) or "HiGHS stopped ... on every retry" (bw[1],
    bw[3]) on a feasible problem (new-user review). The loop now re-centres on each dimension's
    reach under the rows; the answer equals the same feasible set written with one row on the others
    ('sum of the others <= 0.001')."""
    from hieropt.spec.constraint_text import parse_constraint

    base = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    d = int(row[3])
    others = " + ".join(f"bw[{k}]" for k in range(4) if k != d)

    def with_row(text):
        return base.model_copy(
            update={"constraints": base.constraints + (parse_constraint(text, 4),)}
        )

    sol = hieropt.solve(with_row(row))
    other = hieropt.solve(with_row(f"{others} <= 0.001"))
    assert str(sol.status) == "optimal" and str(other.status) == "optimal"
    assert sol.bw_gbps[d] == pytest.approx(499.999, rel=1e-9)
    assert sol.iteration_time_ns == pytest.approx(other.iteration_time_ns, rel=1e-9)
    # each certificate holds against the other's design, exactly: the bound is a difference of terms
    # 5e5 times its size here, and its rounding margin grows to match (it was beaten by 1.5e-11 with
    # a 1e-12 margin)
    assert (
        sol.objective_bound <= other.iteration_time_ns
        and other.objective_bound <= sol.iteration_time_ns
    )


def test_reduced_costs_rounded_positive_do_not_inflate_the_bound():
    """An instance the heuristics' hypothesis test draws: perf per cost on two Switch dimensions (an
    all-gather over 8 x 8, 'sum(bw) == 100') was certified at 145,534,137,356.6 with gap 0, while
    the traffic-proportional design gives 120,960,038,400. A reduced cost that is 0 in exact
    arithmetic came out a hair positive, so the Lagrangian's minimiser sqrt(P / g) ran to ~1e16 and
    its term to almost nothing: the bound was 2.4x the optimum. The bound now takes off each reduced
    cost's rounding times the value it multiplies."""
    import numpy as np

    from hieropt.spec import Dimension, Layer, Mapping, Network, Phase

    none = Phase(compute_ns=0.0, collective="NONE", size_bytes=1e6)
    gather = Phase(compute_ns=2.0, collective="ALLGATHER", size_bytes=1e7)
    inst = Instance(
        name="rand",
        objective="performance_per_cost",
        training_loop="no_overlap",
        network=Network(
            dims=(
                Dimension(block="Switch", npus=8, cost_class="c0"),
                Dimension(block="Switch", npus=8, cost_class="c1"),
            )
        ),
        workload=Workload(
            name="w", layers=(Layer(name="l0", forward=none, input_grad=none, weight_grad=gather),)
        ),
        mapping=Mapping(forward=(1, 1), input_grad=(1, 1), weight_grad=(8, 8)),
        cost=CostModel(
            classes={
                c: CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0, nic_usd_per_gbps=1.0)
                for c in ("c0", "c1")
            }
        ),
        constraints=(
            LinearConstraint(coefficients=(1.0, 1.0), sense="==", rhs=100.0, text="sum(bw) == 100"),
        ),
    )
    sol = hieropt.solve(inst)
    bd = hieropt.evaluate(inst, np.array([800 / 9, 100 / 9]))
    best = bd.iteration_time_ns * bd.network_cost_usd
    assert str(sol.status) == "optimal"
    assert sol.objective_bound <= best and sol.objective_value == pytest.approx(best, rel=1e-9)
