"""The fastest design within a budget a hair above the cheapest network, when that network gives
every loaded dimension bandwidth (the time LP's route, not the reduced budget row's): the candidate
must hold the design rows exactly, not to HiGHS's tolerance.

Two random instances of three dimensions (prices $2,048,170, $648 and $2,048,000 per GB/s) with
``sum(bw) == 1122.97918`` and bw[1] <= 226.552872: the cheapest network is bw[0] at its floor
0.7309874936, bw[1] at its cap and bw[2] the rest; a budget eps above it buys a shift delta = room /
(p0 - p2) of bandwidth from bw[2] to bw[0] ($169.7 per GB/s), 1.08e-6 GB/s at eps = 1e-13. An LP
point 2.7e-9 GB/s short of the row (met to 2.4e-12 of its size) frees $5.6e-3, 30 times the room of
$1.8e-4; taken as the answer it was 1.9e-5 faster than the loop's (valid) bound. The hand design
(bw[0] = floor + delta, exactly on the row and within the budget) is feasible, so every valid bound
lies below its time.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import hieropt
from hieropt.model.cost import cluster_cost_usd_per_gbps
from hieropt.model.timing import evaluate
from hieropt.result import Status
from hieropt.solvers.cost_range import cheapest_vertex
from hieropt.solvers.line_search import row_leak_usd, within_budget
from hieropt.solvers.near_cheapest import cheapest_anchor, vertex_of
from tests.fuzz.strategies import Row, Spec, WorkloadSpec


def spec(last_layer: tuple[float, str, float]) -> Spec:
    """The two instances (their last phase differs): random specs of the answers corpus."""
    return Spec(
        dims=(("Switch", 16, "B", 138.038, "halving_doubling"), ("Ring", 2, "A", 0.0, "direct"),
              ("FullyConnected", 64, "B", 7943.28, "halving_doubling")),
        prices={"A": (0.316228, None, None), "B": (1000.0, 0.01, 0.0728618)},
        workloads=(WorkloadSpec(
            layers=(((0.0, "ALLGATHER", 66069.3), (0.0, "P2P", 13489600.0),
                     (473.151, "P2P", 25704000.0)),
                    ((301.995, "NONE", 0.0), (0.0, "ALLTOALL", 630957.0), last_layer)),
            groups=((1, 1, 2), (4, 1, 16), (16, 1, 16)), weight=0.0707946),),
        loop="recompute", mode="concurrent",
        rows=(Row(coef=(1.0, 1.0, 1.0), sense="==", rhs=1122.97918, text="sum(bw) == S"),),
        bounds=((0.7309874935999999, None), (8.400594719999999, 226.552872),
                (78.8290935, None)),
        x0=(1.09018, 177.828, 944.061), objective="performance_per_cost")


CASES = {"a": (100000000.0, "ALLTOALL", 32.0), "b": (0.0, "NONE", 32.0)}
S = Fraction(1122.97918)


def exact_cost(instance, bw) -> Fraction:
    """The network cost of ``bw`` ($), exact."""
    p = cluster_cost_usd_per_gbps(instance)
    return sum((Fraction(float(c)) * Fraction(float(b)) for c, b in zip(p, bw, strict=True)),
               Fraction(0))


def hand_design(instance, budget_usd: float) -> np.ndarray:
    """bw[0] = floor + delta, bw[1] at its cap, bw[2] the rest of the row (GB/s), delta the most
    that the budget buys exactly (stepped back by ulps until the exact cost is within it)."""
    dm = instance.design_matrix
    p = [Fraction(float(c)) for c in cluster_cost_usd_per_gbps(instance)]
    lo0, cap1 = Fraction(float(dm.bw_lower[0])), Fraction(float(dm.bw_upper[1]))
    base = p[0] * lo0 + p[1] * cap1 + p[2] * (S - lo0 - cap1)
    delta = (Fraction(budget_usd) - base) / (p[0] - p[2])
    for k in range(1, 100):
        b0 = lo0 + delta * (1 - Fraction(k, 10**6))
        bw = np.array([float(b0), float(cap1), float(S - b0 - cap1)])
        if exact_cost(instance, bw) <= Fraction(budget_usd):
            return bw
    raise AssertionError("no hand design within the budget")


@pytest.mark.parametrize(("case", "eps", "ulps"),
                         [("a", 1e-13, 0), ("b", 1e-9, 0), ("a", 1e-12, 1)])
def test_a_budget_a_hair_above_a_cheapest_network_without_a_starved_dimension(case, eps, ulps):
    """The answer holds the budget (exactly, in Fraction, for the two budgets whose candidates
    missed the row; at eps = 1e-12, where the loop's own candidate holds the row, to ``ulps`` units
    in the last place of the cost: the float sum of the cost is checked), the bounds and the row to
    1% of the room; its proven bound is > 0 and at most its own value and the hand design's time;
    the status is OPTIMAL within the gap target 1e-8: the cheapest network holds bw[0] at its floor
    with a reduced price, so the budget is stated by the exact reduced row (the time LP's float
    budget row stalled at a gap of 1.3e-7 .. 3.2e-7)."""
    inst = spec(CASES[case]).instance()
    lo = cheapest_vertex(inst).cost_usd
    budget = lo * (1 + eps)
    sol = hieropt.solve(inst, "performance", options=hieropt.SolveOptions(
        budget_usd=budget, sensitivity=False))
    bw = np.asarray(sol.bw_gbps)
    dm = inst.design_matrix
    assert exact_cost(inst, bw) <= Fraction(budget) + ulps * Fraction(np.spacing(budget))
    assert (bw >= dm.bw_lower).all() and (bw <= dm.bw_upper).all()
    room = budget - lo
    # the row's miss, at the dearest price, is worth at most 1% of the room
    assert abs(sum(Fraction(float(b)) for b in bw) - S) * 2_048_170 <= Fraction(room) / 100
    assert sol.status is Status.OPTIMAL
    value, bound = sol.objective_value, sol.objective_bound
    assert 0 < bound <= value
    hand = evaluate(inst, hand_design(inst, budget)).iteration_time_ns
    assert bound <= hand
    assert value <= hand * (1 + 1e-8)
    assert sol.gap <= 1e-8


def test_a_candidate_short_of_the_row_is_stated_again_on_it():
    """The LP point of instance a at eps = 1e-13 (2.7e-9 GB/s short of the row, $9.6e-4 over
    budget): the budget's old scaling towards the lower bounds made of it a candidate 3.4e-9 short,
    within budget (its miss worth $6.9e-3, 38 times the room). As a candidate it is projected onto
    the row and moved onto the budget towards the cheapest network: it holds the row to round-off
    and the budget exactly, and bw[0] gains at most the delta the budget buys. Without the cheapest
    network to move towards, no candidate that leaks the row is returned."""
    inst = spec(CASES["a"]).instance()
    budget = cheapest_vertex(inst).cost_usd * (1 + 1e-13)
    p = cluster_cost_usd_per_gbps(inst)
    lp = np.array([0.7310279839606034, 226.55287200006768, 895.6952800132444])
    scaled = np.array([0.7310279839606034, 226.55287199987413, 895.6952800127731])
    room = budget - vertex_of(inst).cost_usd
    assert row_leak_usd(inst, scaled, p) > 30 * room
    out = within_budget(inst, lp, budget, p, lambda: cheapest_anchor(inst))
    assert out is not None
    assert exact_cost(inst, out) <= Fraction(budget)
    assert row_leak_usd(inst, out, p) <= 1e-2 * room
    assert out[0] <= hand_design(inst, budget)[0] * (1 + 1e-12)
    # a candidate that holds the row and the budget is left as it is
    assert np.array_equal(within_budget(inst, out, budget, p, lambda: cheapest_anchor(inst)), out)
    bare = within_budget(inst, lp, budget, p)
    assert bare is None or row_leak_usd(inst, bare, p) <= 1e-2 * room


def step_spec() -> Spec:
    """A random instance of loop ``step`` (m = 9, p = 7, v = 2, ``overlap_dp``) with ``sum(bw) ==
    480.00736`` and equal prices per GB/s on dimensions 0-2 ($32,768,000), $1,614.6 more on
    dimension 3: the budget row is the design row scaled, but for dimension 3, whose bandwidth the
    room above the cheapest network ($3,394, 2.2e-7 of the cost) sets to 2.138 GB/s."""
    return Spec(
        dims=(("FullyConnected", 8, "A", 10.0, "halving_doubling"),
              ("FullyConnected", 8, "A", 234.423, "ring"),
              ("FullyConnected", 128, "A", 0.0, "direct"), ("Switch", 4, "A", 0.0, "ring")),
        prices={"A": (1000.0, 0.0105925, 0.0386812)},
        workloads=(
            WorkloadSpec(layers=(((110917.0, "ALLTOALL", 255564000.0), (0.0, "ALLTOALL", 8.0),
                                  (0.0, "NONE", 7542230000.0)),
                                 ((0.0, "ALLGATHER", 1557.76), (0.0, "ALLGATHER", 21379.6),
                                  (51880000.0, "NONE", 90.0))),
                         groups=((2, 8, 32, 4), (1, 2, 2, 4), (4, 2, 128, 2)), weight=0.363078),
            WorkloadSpec(layers=(((50118700.0, "ALLGATHER", 77.0), (767361.0, "P2P", 1000.0),
                                  (0.0, "ALLGATHER", 2330.77)),),
                         groups=((4, 8, 2, 2), (2, 8, 4, 1), (4, 2, 2, 4)), weight=0.416869)),
        loop="step", mode="concurrent",
        rows=(Row(coef=(1.0, 1.0, 1.0, 1.0), sense="==", rhs=480.00736, text="sum(bw) == S"),),
        bounds=((4.253581728, None), (0.0, None), (0.0, None), (0.035981866800000005, None)),
        x0=(16.9824, 226.464, 234.423, 2.13796), step=(9, 7, 2, True), objective="performance")


def test_a_budget_row_parallel_to_an_equality_row_buys_no_time_from_its_tolerance():
    """The step instance at its budget and its copy with bandwidths and prices x 1e5 (the same
    times): each answer holds the row to 1e-11 GB/s (a miss of 5.6e-11 GB/s, $1.8e-3, bought
    dimension 3 1.1e-6 GB/s more and a time 5.4e-8 below every design on the row: 871,869,790.7 ns
    under a proven bound of 871,869,837.4 ns), dimension 3 at most what the room buys exactly
    (floor + $3,393.855 / $1,614.6 per GB/s, 2.1379600 GB/s), and each is OPTIMAL within 1e-8 with
    its bound at most both answers' times (every bound is valid for both designs) to 1e-9 of them:
    the LP's own tolerance leaves 6e-11 (0.05 ns: 871,869,957.45 ns against 871,869,957.40 ns, the
    weight-gradient all-gathers after the optimizer step), the miss this guards was 5.4e-8."""
    sols, times = [], []
    for s in (1.0, 1e5):
        inst = step_spec().instance(bw_scale=s, price_scale=s,
                                    max_network_cost_usd=1.5728884624431504e10 * s * s)
        sol = hieropt.solve(inst, "performance")
        bw = np.asarray(sol.bw_gbps)
        assert abs(sum(Fraction(float(b)) for b in bw) / s - Fraction(480.00736)) <= 1e-11
        assert bw[3] / s <= 2.1379600 * (1 + 1e-9)
        assert sol.status is Status.OPTIMAL and sol.gap <= 1e-8
        assert 0 < sol.objective_bound <= sol.objective_value
        sols.append(sol)
        times.append(evaluate(inst, bw).iteration_time_ns)
    assert max(s.objective_bound for s in sols) <= min(times) * (1 + 1e-9)
