"""Procurement objectives on inputs that broke them: every
answer is checked by hand or by a budget sweep (the fastest design within a budget just below a
claimed bound must not beat the claim), never by hieropt's own bound alone.

What is specified, class by class:
- a budget that binds is held and min-cost certificates are true: the LP's cost row has its largest
  coefficient 1 (in M$, tiny prices x bandwidth would fall below HiGHS's 1e-9 tolerances);
- performance per cost ends in a few LPs with 1 dimension under a floor (T x cost is almost flat in
  the cost level, where a kappa branch and bound's tangent-line bounds need ~1e4 nodes): one convex
  LP in cost-share variables;
- min_cost is solved without a bandwidth cap (a design meeting the target caps the cost).
"""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt import SolveOptions
from hieropt.spec import (
    Collective,
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Layer,
    LinearConstraint,
    Mapping,
    Network,
    Phase,
    Workload,
)
from tests.cases import REPO, kept, three_layer_instance


def assert_min_cost_certified(inst: Instance, target_ns: float, sol: hieropt.Solution) -> None:
    """The claimed cheapest design meets the target, and no design costing 1e-7 below the claimed
    bound does: the fastest design within that budget is slower than the target (or the budget is
    below every network)."""
    assert sol.iteration_time_ns <= target_ns * (1 + 1e-9)
    assert 0 < sol.gap <= 1e-8, sol.message  # a bound always, never a claim of gap 0
    budget = sol.objective_bound * (1 - 1e-7)
    try:
        fast = hieropt.solve(inst, objective="performance", options=SolveOptions(budget_usd=budget))
        fast.raise_for_status()
    except hieropt.NoSolutionError:
        return
    assert fast.iteration_time_ns > target_ns, (
        f"${fast.network_cost_usd!r} meets the target, below the claimed "
        f"bound ${sol.objective_bound!r}"
    )


# 2 Ring-2 dimensions, $1 and $3 per GB/s, one 1 MB all-reduce, sum(bw) <= 0.01. Traffic: dim 0
# carries 2 S (1/2) = S, dim 1 2 (S/2)(1/2) = S/2, so the fastest split within a budget has b1 = b0
# / 2 and costs 4 NPUs x (1 b0 + 3 b1) = 10 b0.
TINY = kept(
    [("Ring", 2), ("Ring", 2)],
    [(1.0,), (3.0,)],
    [((0.0, "NONE", 0.0), (0.0, "NONE", 0.0), (1e3, "ALLREDUCE", 1e6))],
    ((1, 1), (1, 1), (2, 2)),
    [((1.0, 1.0), "<=", 0.01)],
)


@pytest.mark.parametrize("budget", [0.02, 0.01, 0.005])
def test_budget_binds_at_tiny_prices(budget):
    sol = hieropt.solve(TINY, options=SolveOptions(budget_usd=budget))
    assert sol.network_cost_usd <= budget * (1 + 1e-9)
    assert sol.bw_gbps == pytest.approx([budget / 10, budget / 20], rel=1e-6)
    assert sol.iteration_time_ns == pytest.approx(1e3 + 1e6 / (budget / 10), rel=1e-8)


@pytest.mark.parametrize("factor", [1e-6, 1e-3, 1e3, 1e6])
def test_procurement_answers_scale_with_prices(factor):
    """Scaling every price by ``factor`` scales min cost and time x cost by ``factor`` and changes
    no design."""
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    scaled = inst.model_copy(
        update={
            "cost": CostModel(
                classes={
                    k: CostClass(
                        **{
                            f: (v * factor if v is not None else None)
                            for f, v in c.model_dump().items()
                        }
                    )
                    for k, c in inst.cost.classes.items()
                }
            )
        }
    )
    for objective, options in (
        ("min_cost", SolveOptions(max_iteration_time_ns=1.3e9)),
        ("performance_per_cost", SolveOptions()),
    ):
        a, b = (
            hieropt.solve(inst, objective=objective, options=options),
            hieropt.solve(scaled, objective=objective, options=options),
        )
        assert b.objective_value == pytest.approx(a.objective_value * factor, rel=2e-7)
        assert b.bw_gbps == pytest.approx(a.bw_gbps, rel=1e-3)


# A random sweep's instance, on which min_cost once claimed $100,594.1155 "optimal, gap 1e-16" while
# the fastest design within $100,594.1055 met the target (the min-cost LP in M$, far below HiGHS's
# tolerances at these prices).
FALSE_MIN_COST = kept(
    [("Switch", 4), ("Switch", 3), ("Ring", 3)],
    [
        (2.705573414914286, 1.3349868823590227, 0.7831923043172934),
        (2.3317770878537596, 1.4773854831439852, 0.19579807607932334),
        (1.9579807607932334,),
    ],
    [
        (
            (1e6, "ALLGATHER", 95896.23961831938),
            (1e6, "REDUCESCATTER", 631979.6071326571),
            (1e6, "ALLREDUCE", 60464.28420781693),
        )
    ],
    ((1, 3, 3), (4, 3, 3), (1, 3, 2)),
    [((1.0, 1.0, 1.0), ">=", 995.7292660914422)],
    [(0.0, 909.106793671153), (0.0, 839.7937516930025), (0.0, 583.122727806419)],
)


@pytest.mark.parametrize("factor", [1.01, 3.0, 1e4])
def test_min_cost_certificate_holds(factor):
    target = hieropt.solve(FALSE_MIN_COST).iteration_time_ns * factor
    sol = hieropt.solve(
        FALSE_MIN_COST, objective="min_cost", options=SolveOptions(max_iteration_time_ns=target)
    )
    assert_min_cost_certified(FALSE_MIN_COST, target, sol)


@pytest.mark.parametrize("target", [1.3e9, 1e12, 2e16])
def test_min_cost_gpt3_certificate_holds(target):
    """Including a target between 8e15 and 6e16 ns, where min_cost is not 'Unbounded'."""
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    sol = hieropt.solve(
        inst, objective="min_cost", options=SolveOptions(max_iteration_time_ns=target)
    )
    assert_min_cost_certified(inst, target, sol)


def test_min_cost_without_cap_closed_form():
    """Ring 4 x Switch 8, one all-reduce of S (dim 0 carries 1.5 S, dim 1 0.4375 S), no constraint
    at all. The cheapest design for T has the cost-weighted split of the balanced form max(1.5 S/b0,
    0.4375 S/b1) = T - C: both terms equal T - C (lowering either bandwidth alone breaks the
    target), so b0 = 1.5 S/(T - C), b1 = 0.4375 S/(T - C)."""
    ph = Phase(compute_ns=1e6 / 3, collective=Collective.NONE, size_bytes=0)
    wg = Phase(compute_ns=1e6 / 3, collective=Collective.ALL_REDUCE, size_bytes=8e8)
    inst = Instance(
        name="nocap",
        objective="min_cost",
        training_loop="no_overlap",
        max_iteration_time_ns=5e6,
        network=Network(
            dims=(
                Dimension(block="Ring", npus=4, cost_class="in"),
                Dimension(block="Switch", npus=8, cost_class="out"),
            )
        ),
        workload=Workload(
            name="w", layers=(Layer(name="l", forward=ph, input_grad=ph, weight_grad=wg),)
        ),
        mapping=Mapping(forward=(1, 1), input_grad=(1, 1), weight_grad=(4, 8)),
        cost=CostModel(
            classes={
                "in": CostClass(link_usd_per_gbps=2.0),
                "out": CostClass(
                    link_usd_per_gbps=8.0, switch_usd_per_gbps=18.0, nic_usd_per_gbps=30.0
                ),
            }
        ),
    )
    with pytest.raises(hieropt.NoSolutionError, match="unbounded"):
        # (the fastest network does not exist without a cap)
        hieropt.solve(inst, objective="performance").raise_for_status()
    sol = hieropt.solve(inst)
    comm = 5e6 - 1e6
    assert sol.success
    assert sol.bw_gbps == pytest.approx([1.5 * 8e8 / comm, 0.4375 * 8e8 / comm], rel=1e-6)
    assert sol.network_cost_usd == pytest.approx(
        32 * (2 * 1.5 * 8e8 / comm + 56 * 0.4375 * 8e8 / comm), rel=1e-7
    )
    assert_min_cost_certified(inst.model_copy(update={"constraints": (LinearConstraint(
        coefficients=(1.0, 1.0), sense="<=", rhs=1e9, text="sum(bw) <= 1e9"),)}), 5e6, sol)


def test_min_cost_gpt3_without_cap_equals_a_meaningless_cap():
    """`--objective min_cost --max-time-ns 1.3e9` on GPT-3 4D without any bandwidth cap solves, and
    gives what a cap far above the answer gives."""
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml").model_copy(
        update={"constraints": ()}
    )
    free = hieropt.solve(
        inst, objective="min_cost", options=SolveOptions(max_iteration_time_ns=1.3e9)
    )
    capped = inst.model_copy(update={"constraints": (LinearConstraint(
        coefficients=(1.0,) * 4, sense="<=", rhs=1e6, text="sum(bw) <= 1e6"),)})
    ref = hieropt.solve(
        capped, objective="min_cost", options=SolveOptions(max_iteration_time_ns=1.3e9)
    )
    assert free.success and ref.success
    assert free.network_cost_usd == pytest.approx(ref.network_cost_usd, rel=2e-8)
    assert_min_cost_certified(capped, 1.3e9, free)
    # cheaper than with sum(bw) == 500 ($8.76 M), which forces more bandwidth than the target needs
    assert free.network_cost_usd < 8.76e6


# One Ring-2 dimension under a floor bw >= 0.0654 and nothing else (> 600 s before): T x cost = N p
# B (compute + M / B) = N p (compute B + M) grows with B, so the optimum is the floor.
FLOOR_1D = kept(
    [("Ring", 2)],
    [(0.37759675799137704,)],
    [
        (
            (1000.0, "ALLGATHER", 12399072697.660717),
            (1e6, "REDUCESCATTER", 333023945.98552465),
            (0.0, "ALLTOALL", 9703737378.753918),
        )
    ],
    ((2,), (2,), (2,)),
    [((1.0,), ">=", 0.06544067631398508)],
)


def test_performance_per_cost_one_dimension_floor_closed_form():
    sol = hieropt.solve(FLOOR_1D, objective="performance_per_cost")
    b = 0.06544067631398508
    # AG S(p-1), RS S/2, A2A S/2
    m = 12399072697.660717 * 1 + 333023945.98552465 / 2 + 9703737378.753918 / 2
    expected = (1001000.0 + m / b) * 2 * 0.37759675799137704 * b
    assert sol.success and 0 < sol.gap <= 1e-7
    assert sol.bw_gbps[0] == pytest.approx(b, rel=1e-9)
    assert sol.objective_value == pytest.approx(expected, rel=1e-9)
    # LPs of the convex search (the kappa bisection never ended)
    assert sol.extra["kappa_evaluations"] <= 20


# Two dimensions, floor and cap on the total (> 600 s before; a dense grid of the feasible triangle
# checks it).
SLOW_2D = kept(
    [("Switch", 5), ("Ring", 6)],
    [(9.375378350400673, 0.6159007675445698, 0.6843341861606331), (2.668903326026469,)],
    [
        (
            (0.0, "REDUCESCATTER", 1242507840.95613),
            (0.0, "REDUCESCATTER", 842270537.1779721),
            (9531356.0, "ALLTOALL", 14375624492.712849),
        ),
        (
            (1e6, "ALLGATHER", 75098521054.42719),
            (0.0, "ALLTOALL", 18526229480.116985),
            (1e6, "ALLGATHER", 3417816920.648733),
        ),
    ],
    ((4, 6), (5, 4), (2, 2)),
    [((1.0, 1.0), ">=", 0.019296050678770535), ((1.0, 1.0), "<=", 0.0556625538956853)],
)


def test_performance_per_cost_two_dimensions_dense_grid():
    sol = hieropt.solve(SLOW_2D, objective="performance_per_cost")
    assert sol.success and 0 < sol.gap <= 1e-7
    lo, hi = 0.019296050678770535, 0.0556625538956853
    best = np.inf
    for total in np.linspace(lo, hi, 41):
        for share in np.linspace(1e-4, 1 - 1e-4, 401):
            bd = hieropt.evaluate(SLOW_2D, [total * share, total * (1 - share)])
            best = min(best, bd.iteration_time_ns * bd.network_cost_usd)
    assert sol.objective_bound <= best
    assert sol.objective_value <= best * (1 + 1e-7)


def test_pareto_without_cap_ends():
    """The time-cost front without an upper limit on bandwidth: exact points from the cheapest
    network on."""
    front = hieropt.pareto(FLOOR_1D.model_copy(update={"objective": "performance"}), points=5)
    times = [p.iteration_time_ns for p in front.points]
    assert len(times) == 5 and all(b < a for a, b in zip(times, times[1:], strict=False))
    assert all(p.gap <= 1e-8 for p in front.points)
    assert any("no upper limit" in n for n in front.notes)


# A floor of 300 GB/s and no ceiling: a budget far above every design must not turn it into "no
# floor" (a budget of 1e18 $ and up must not say "unbounded: no constraint keeps bandwidth away from
# zero").
FLOOR_NO_CAP = kept(
    [("Ring", 4), ("FullyConnected", 8)],
    [(2.0,), (4.0,)],
    [
        ((1000.0, "ALLREDUCE", 1e6), (1000.0, "ALLGATHER", 5e5), (2000.0, "ALLREDUCE", 2e6)),
        ((2000.0, "NONE", 0.0), (1000.0, "REDUCESCATTER", 8e5), (1000.0, "ALLREDUCE", 3e6)),
    ],
    ((4, 8), (4, 2), (4, 8)),
    [((1.0, 1.0), ">=", 300.0)],
)


@pytest.mark.parametrize("budget", [1e18, 1e30])
def test_performance_per_cost_huge_budget_equals_no_budget(budget):
    free = hieropt.solve(FLOOR_NO_CAP, objective="performance_per_cost")
    capped = hieropt.solve(
        FLOOR_NO_CAP, objective="performance_per_cost", options=SolveOptions(budget_usd=budget)
    )
    assert free.success and capped.success
    assert capped.objective_value == pytest.approx(free.objective_value, rel=1e-7)
    assert capped.objective_bound <= free.objective_value * (1 + 1e-12)


def test_performance_per_cost_floor_far_below_the_ceiling():
    """A floor 1e-12 of the ceiling (sum(bw) >= 0.001 <= 1e9): the optimum sits near the floor, the
    ceiling is far from binding, and the answer is the one without the ceiling (not an error,
    "too wide a range")."""
    floor = LinearConstraint(coefficients=(1.0, 1.0), sense=">=", rhs=1e-3, text="sum(bw) >= 0.001")
    ceiling = LinearConstraint(coefficients=(1.0, 1.0), sense="<=", rhs=1e9, text="sum(bw) <= 1e9")
    both = hieropt.solve(FLOOR_NO_CAP.model_copy(update={"constraints": (floor, ceiling)}),
                         objective="performance_per_cost")
    alone = hieropt.solve(
        FLOOR_NO_CAP.model_copy(update={"constraints": (floor,)}), objective="performance_per_cost"
    )
    assert both.status.value == alone.status.value == "optimal"
    assert both.objective_value == pytest.approx(alone.objective_value, rel=1e-9)
    assert both.gap <= 1e-7


# Prices 7.5 / 0.015 / 1e-5 $/GB/s and a total of 2.7e-4 GB/s: the cheap dimension's cost share at
# the optimum is below 1e-6, where no tangent cut reaches an unscaled share (found by a break-it
# run: LIMIT at gap 1.8e-2 without a budget, "infeasible" with one); the share columns are now
# scaled by their typical share.
CHEAP_DIM = kept(
    [("Ring", 4), ("FullyConnected", 8), ("Switch", 16)],
    [(7.5,), (0.015,), (1e-5, 1e-6, 1e-6)],
    [
        ((1000.0, "ALLREDUCE", 1e6), (1000.0, "ALLGATHER", 5e5), (2000.0, "ALLREDUCE", 2e6)),
        ((2000.0, "NONE", 0.0), (1000.0, "REDUCESCATTER", 8e5), (1000.0, "ALLREDUCE", 3e6)),
        ((500.0, "ALLTOALL", 4e5), (500.0, "NONE", 0.0), (800.0, "ALLREDUCE", 1e6)),
    ],
    ((4, 8, 1), (4, 2, 1), (4, 8, 16)),
    [((1.0, 1.0, 1.0), "==", 0.000272051)],
)


@pytest.mark.parametrize("budget", [None, 10.0])
def test_performance_per_cost_with_a_dimension_a_million_times_cheaper(budget):
    sol = hieropt.solve(
        CHEAP_DIM, objective="performance_per_cost", options=SolveOptions(budget_usd=budget)
    )
    assert sol.status.value == "optimal" and sol.gap <= 1e-7, (sol.status, sol.gap, sol.message)
    assert sol.bw_gbps.min() > 0
    rng = np.random.default_rng(0)
    total = 0.000272051
    # feasible designs on the simplex of the total
    for w in rng.dirichlet(np.ones(3) * 0.3, size=400):
        bd = hieropt.evaluate(CHEAP_DIM, total * w)
        assert bd.iteration_time_ns * bd.network_cost_usd >= sol.objective_bound * (1 - 1e-12)


# A total fixed at 13,528.6 GB/s next to a ceiling a million times above it (found by a break-it
# run: LIMIT at a proven gap of 0.63): the median of the rows' sizes put the LP's cost level u near
# 1e-6, at the edge of its cuts; the procurement LP's unit now comes from the rows' cost floor
# (formulation.scale.product_bandwidth).
LOOSE_CEILING = kept(
    [("Ring", 4), ("FullyConnected", 8), ("Switch", 16)],
    [(0.00034165,), (1.66935,), (77.1988, 7.0438e-05, 1.5347e-05)],
    [
        ((1000.0, "ALLREDUCE", 1e6), (1000.0, "ALLGATHER", 5e5), (2000.0, "ALLREDUCE", 2e6)),
        ((2000.0, "NONE", 0.0), (1000.0, "REDUCESCATTER", 8e5), (1000.0, "ALLREDUCE", 3e6)),
        ((500.0, "ALLTOALL", 4e5), (500.0, "NONE", 0.0), (800.0, "ALLREDUCE", 1e6)),
    ],
    ((4, 8, 1), (4, 2, 1), (4, 8, 16)),
    [((1.0, 1.0, 1.0), "==", 13528.6), ((1.0, 1.0, 1.0), "<=", 1.35286e10)],
)


@pytest.mark.parametrize("ceiling", [1.35286e10, 1.35286e14])
def test_performance_per_cost_with_a_loose_ceiling_row(ceiling):
    inst = LOOSE_CEILING.model_copy(
        update={
            "constraints": (
                LOOSE_CEILING.constraints[0],
                LinearConstraint(
                    coefficients=(1.0, 1.0, 1.0), sense="<=", rhs=ceiling, text="sum(bw) <= ceiling"
                ),
            )
        }
    )
    sol = hieropt.solve(inst, objective="performance_per_cost")
    without = hieropt.solve(inst.model_copy(update={"constraints": inst.constraints[:1]}),
                            # the ceiling is redundant: the same optimum
                            objective="performance_per_cost")
    assert sol.status.value == "optimal" and sol.gap <= 1e-7, (sol.status, sol.gap, sol.message)
    assert sol.objective_value == pytest.approx(without.objective_value, rel=1e-7)
    rng = np.random.default_rng(1)
    # feasible designs on the simplex of the total
    for w in rng.dirichlet(np.ones(3) * 0.3, size=300):
        bd = hieropt.evaluate(inst, 13528.6 * w)
        assert bd.iteration_time_ns * bd.network_cost_usd >= sol.objective_bound * (1 - 1e-12)


# A floor of 1.004 GB/s in total, a time target met far below the fastest design, and a ceiling 1e6
# .. 1e11 above the floor (found by a break-it run: the min-cost LP took its units from the fastest
# design at the ceiling, lost the floor to its tolerances and returned a design that violates it --
# caught by the independent check -- or stopped at LIMIT).
MIN_COST_FLOOR = ((10.22425, ), (0.000771065,), (0.0321838, 0.00383454, 181.541))


@pytest.mark.parametrize("ceiling", [1e6, 1e8, 1e11])
def test_min_cost_with_a_ceiling_far_above_the_floor(ceiling):
    floor = ((1.0, 1.0, 1.0), ">=", 1.0042890162387015)
    common = {"objective": "min_cost", "max_iteration_time_ns": 133809275452.42336}
    far = hieropt.solve(
        three_layer_instance(
            MIN_COST_FLOOR, [floor, ((1.0, 1.0, 1.0), "<=", 1.0042890162387015 * ceiling)], **common
        )
    )
    alone = hieropt.solve(three_layer_instance(MIN_COST_FLOOR, [floor], **common))
    assert far.status.value == alone.status.value == "optimal", (far.message, alone.message)
    assert far.objective_value == pytest.approx(alone.objective_value, rel=1e-8)
    assert far.bw_gbps.sum() >= 1.0042890162387015 * (1 - 1e-9)
    assert_min_cost_certified(
        three_layer_instance(MIN_COST_FLOOR, [floor], **common), common["max_iteration_time_ns"],
        far
    )


# A total floor with a ceiling 1e3 above it and a tiny floor on dimension 1 (found by a break-it
# run: pareto said "infeasible: no bandwidth vector with a finite iteration time"), and floors on
# every dimension, where the cheapest network is the floors themselves (pareto said "the budget is
# below the cheapest network" at its own first budget).
@pytest.mark.parametrize(
    "rows,bounds",
    [
        (
            [((1.0, 1.0, 1.0), ">=", 2137.857), ((1.0, 1.0, 1.0), "<=", 2137857.4)],
            [(0.0, None), (0.005025, None), (0.0, None)],
        ),
        ([((1.0, 1.0, 1.0), "<=", 3.19e12)], [(0.00293, 2.93e9), (0.025, 2.5e10), (0.0039, 1.6e7)]),
    ],
    ids=["floor-and-far-ceiling", "floors-on-every-dimension"],
)
def test_pareto_front_with_far_apart_rows(rows, bounds):
    inst = three_layer_instance(((0.0033085,), (6858.28,), (0.0234792, 1e-5, 1e-5)), rows, bounds)
    front = hieropt.pareto(inst, points=6)
    times = [p.iteration_time_ns for p in front.points]
    assert len(times) == 6 and all(
        b <= a * (1 + 1e-8) for a, b in zip(times, times[1:], strict=False)
    )
    assert all(p.network_cost_usd <= p.budget_usd * (1 + 1e-9) for p in front.points)
    cheapest = front.points[0]
    floor_cost = hieropt.solve(
        inst.model_copy(
            update={"objective": "min_cost", "max_iteration_time_ns": cheapest.iteration_time_ns}
        )
    )
    assert floor_cost.network_cost_usd <= cheapest.budget_usd * (1 + 1e-8)


@pytest.mark.parametrize("ceiling", [5e10, 5e13])
def test_min_cost_on_gpt3_with_an_equality_and_a_far_ceiling(ceiling):
    """GPT-3 on 4 dimensions, bw[0] == 200 and 50 <= sum(bw[1:]) <= ceiling, 1,300 ms (found by a
    break-it run: LIMIT at gaps 1.5e-7 .. 1.7e-5 and a dearer design: the line search walked the
    segment from the fastest design at the ceiling, whose parameter near the answer has a spacing of
    1e-16 x 5e13 GB/s)."""
    from pathlib import Path

    base = hieropt.load_instance(Path(__file__).resolve().parents[2] / "instances" / "gpt3-4d.toml")
    fixed = LinearConstraint(
        coefficients=(1.0, 0.0, 0.0, 0.0), sense="==", rhs=200.0, text="bw[0] == 200"
    )
    floor = LinearConstraint(
        coefficients=(0.0, 1.0, 1.0, 1.0), sense=">=", rhs=50.0, text="sum(bw[1:]) >= 50"
    )
    cap = LinearConstraint(
        coefficients=(0.0, 1.0, 1.0, 1.0), sense="<=", rhs=ceiling, text="sum(bw[1:]) <= cap"
    )
    far = hieropt.solve(
        base.model_copy(update={"constraints": (fixed, floor, cap)}),
        objective="min_cost",
        options=SolveOptions(max_iteration_time_ns=1.3e9),
    )
    # (without the ceiling: no fastest design, but min cost is)
    with pytest.raises(hieropt.errors.NoSolutionError):
        hieropt.solve(base.model_copy(update={"constraints": (fixed, floor)})).raise_for_status()
    alone = hieropt.solve(
        base.model_copy(update={"constraints": (fixed, floor)}),
        objective="min_cost",
        options=SolveOptions(max_iteration_time_ns=1.3e9),
    )
    assert far.status.value == alone.status.value == "optimal", (far.message, alone.message)
    assert far.objective_value == pytest.approx(alone.objective_value, rel=1e-8)


def test_performance_per_cost_on_gpt3_with_prices_1e9_apart():
    """GPT-3 on 4 dimensions, sum(bw) == 500, the chiplet link at 1e-5 $/GB/s and the pod link at
    1e4 (found by a break-it run: LIMIT at gap 0.43, point 4.0e17 against 2.27e17: one bandwidth
    unit for every share column put the cheap dimension's share at 5e8; the share columns now take
    the square-root split of the floor's cost)."""
    from pathlib import Path

    base = hieropt.load_instance(Path(__file__).resolve().parents[2] / "instances" / "gpt3-4d.toml")
    classes = dict(base.cost.classes)
    classes["InterChiplet"] = classes["InterChiplet"].model_copy(update={"link_usd_per_gbps": 1e-5})
    classes["InterPod"] = classes["InterPod"].model_copy(update={"link_usd_per_gbps": 1e4})
    inst = base.model_copy(update={"cost": base.cost.model_copy(update={"classes": classes})})
    sol = hieropt.solve(inst, objective="performance_per_cost")
    assert sol.status.value == "optimal" and sol.gap <= 1e-7, (sol.status, sol.gap, sol.message)
    rng = np.random.default_rng(2)
    for w in rng.dirichlet(np.ones(4) * 0.2, size=300):  # designs on the simplex of the total
        bd = hieropt.evaluate(inst, 500.0 * w)
        assert bd.iteration_time_ns * bd.network_cost_usd >= sol.objective_bound * (1 - 1e-12)
    assert sol.objective_value == pytest.approx(2.2744378416e17, rel=1e-7)
