"""Answers on instances drawn by the long random-instance run (``--fuzz long``), rebuilt from their
Spec code, each held against a scan of the two-dimensional design's boundary, an oracle independent
of the solver: T(B) does not increase with any bandwidth, so the fastest design for a given bw[1]
takes the largest bw[0] the rows, bounds and budget allow.

- a row ``bw[0] <= c bw[1]`` (rhs 0) met to 1.4e-14 of its terms at 1e9 GB/s counts as met: the
  verifier (hieropt/verify.py) measures a miss against the row's terms, not against a floor of 1
  GB/s;
- a dimension that carries 0.5 bytes against 7e7 on the other, its time hidden under a compute term,
  needs 1.5e-8 GB/s, below the LP's cut range of its unit: the loop shrinks that unit
  (hieropt/solvers/cutting.py ``TimeLP._starved``) and finds the finite optimum, not "infeasible".
"""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from tests.fuzz import checks
from tests.fuzz.strategies import Row, Spec, WorkloadSpec

ROW_MISSED = (
    "spec = Spec(dims=(('FullyConnected', 32, 'A', 0.0, 'halving_doubling'), ('FullyConnected', "
    "6, 'A', 0.0, 'ring')), prices={'A': (473.151, None, None)}, "
    "workloads=(WorkloadSpec(layers=(((23442300.0, 'ALLTOALL', 255564000.0), (114.815, "
    "'REDUCESCATTER', 27227.0), (0.0, 'ALLGATHER', 255564000.0)), ((4315190.0, 'ALLTOALL', "
    "13724.6), (11350100.0, 'P2P', 789769000.0), (0.0, 'P2P', 789769000.0)), ((0.0, 'NONE', "
    "35481300.0), (100000000.0, 'REDUCESCATTER', 84.0), (10964.8, 'ALLTOALL', 116145.0)), "
    "((0.0, 'P2P', 6918.31), (0.0, 'ALLREDUCE', 84139.5), (0.0, 'ALLTOALL', 5.0))), "
    "groups=((16, 1), (2, 2), (2, 2)), weight=0.154882),), loop='recompute', mode='concurrent', "
    "rows=(Row(coef=(2.5, 1.5), sense='<=', rhs=3205.37133975, text='a.bw <= S'), "
    "Row(coef=(1.0, -0.02001245242593967), sense='<=', rhs=0.0, text='bw[0] <= c bw[1]')), "
    "bounds=None, x0=(35.4813, 1778.28), pipeline=None, step=None, objective='performance', "
    "extra={}); inst = spec.instance(bw_scale=1000000.0, price_scale=0.1, "
    "max_network_cost_usd=17300968732783.008)"
)  # noqa: E501
FALSE_INFEASIBLE = [
    "spec = Spec(dims=(('Ring', 5, 'A', 0.0, 'direct'), ('Ring', 32, 'A', 2.45471, "
    "'ring')), prices={'A': (1000.0, None, None)}, "
    "workloads=(WorkloadSpec(layers=(((2238.72, 'ALLTOALL', 1000.0), (40738.0, 'P2P', "
    "70388200.0), (0.0, 'ALLTOALL', 1.0)), ((114.815, 'ALLTOALL', 1.0), (118.85, "
    "'REDUCESCATTER', 1.0), (131.826, 'NONE', 1.0)), ((110.917, 'NONE', 2.0), (9225710.0, "
    "'NONE', 1000.0), (100.0, 'NONE', 1.0))), groups=((5, 1), (5, 1), (1, 2)), "
    "weight=0.371535),), loop='tp_dp_overlap', mode='concurrent', rows=(Row(coef=(1.0, "
    "1.0), sense='==', rhs=2.09018, text='sum(bw) == S'),), bounds=None, x0=(1.09018, 1.0), "
    "pipeline=None, step=None, objective='performance', extra={}); inst = "
    "spec.instance(bw_scale=1.0, price_scale=1.0)",
    "spec = Spec(dims=(('Ring', 5, 'A', 0.0, 'direct'), ('Ring', 5, 'A', 2.45471, 'ring')), "
    "prices={'A': (1000.0, None, None)}, workloads=(WorkloadSpec(layers=(((2238.72, "
    "'ALLTOALL', 1000.0), (40738.0, 'P2P', 70388200.0), (0.0, 'ALLTOALL', 1.0)), ((114.815, "
    "'ALLTOALL', 1.0), (118.85, 'REDUCESCATTER', 1.0), (131.826, 'NONE', 1.0)), ((110.917, "
    "'NONE', 2.0), (9225710.0, 'NONE', 1000.0), (100.0, 'NONE', 1.0))), groups=((5, 1), (5, "
    "1), (1, 5)), weight=0.371535),), loop='tp_dp_overlap', mode='concurrent', "
    "rows=(Row(coef=(1.0, 1.0), sense='==', rhs=2.09018, text='sum(bw) == S'),), "
    "bounds=None, x0=(1.09018, 1.0), pipeline=None, step=None, objective='performance', "
    "extra={}); inst = spec.instance(bw_scale=1.0, price_scale=1.0)",
]  # noqa: E501


def _instance(code: str):
    ns = {"Spec": Spec, "WorkloadSpec": WorkloadSpec, "Row": Row}
    exec(code, ns)  # (the reproducer as the fuzz run printed it)
    return ns["inst"]


def _largest_bw0(inst, bw1: float) -> float:
    """The largest bw[0] (GB/s) that the rows, bounds and budget of a two-dimensional ``inst`` allow
    at ``bw1`` (every row here bounds bw[0] from above for a given bw[1])."""
    dm = inst.design_matrix
    top = [(hi - a1 * bw1) / a0 for (a0, a1), hi in zip(dm.A, dm.upper, strict=True) if a0 > 0]
    if dm.bw_upper[0] < np.inf:
        top.append(dm.bw_upper[0])
    if inst.max_network_cost_usd is not None:
        u = checks.unit_costs(inst)
        top.append((inst.max_network_cost_usd - u[1] * bw1) / u[0])
    return min(top)


def _scan_ns(inst, bw1_grid: np.ndarray) -> float:
    """The least T (ns) over the boundary points (largest bw[0], bw1) of the feasible ones among
    ``bw1_grid``."""
    best = np.inf
    for b1 in bw1_grid:
        b0 = _largest_bw0(inst, float(b1))
        x = np.array([b0, b1])
        if b0 >= 0 and checks.Polytope(inst).relative_violation(x) <= 1e-12:
            best = min(best, checks.time_ns(inst, x))
    return best


def _agrees_with_scan(inst, sol, grid: np.ndarray) -> None:
    assert sol.status.value == "optimal"
    scan = _scan_ns(inst, np.concatenate([grid, [sol.bw_gbps[1]]]))
    assert np.isfinite(scan)
    # no feasible point beats it
    assert sol.objective_bound <= scan * (1 + 1e-12), (sol.objective_bound, scan)
    # and it is as good as any
    assert sol.iteration_time_ns <= scan * (1 + 1e-8), (sol.iteration_time_ns, scan)


def test_homogeneous_row_met_at_large_bandwidth_units():
    inst = _instance(ROW_MISSED)
    sol = hieropt.solve(inst)
    assert hieropt.verify(inst, sol.bw_gbps).ok
    assert checks.Polytope(inst).relative_violation(sol.bw_gbps) <= 1e-12
    _agrees_with_scan(inst, sol, np.linspace(1e3, 2.2e9, 4001))


def test_verifier_refuses_a_real_miss_at_small_units():
    """The unit-free measure refuses at 1e-6 GB/s what the 1 GB/s floor let through: bw[0] 10 % over
    c bw[1]."""
    inst = _instance(ROW_MISSED)
    c = -inst.design_matrix.A[1, 1]
    cert = hieropt.verify(inst, np.array([1.1e-6 * c, 1e-6]))
    assert not cert.ok and "bw[0] <= c bw[1]" in cert.problems[0]
    assert cert.max_violation == pytest.approx(0.1 / 2.1, rel=1e-9)


@pytest.mark.parametrize("code", FALSE_INFEASIBLE, ids=["group-2", "group-5"])
def test_dimension_with_almost_no_traffic_gets_its_bandwidth(code):
    inst = _instance(code)
    sol = hieropt.solve(inst)
    assert 1e-9 < sol.bw_gbps[1] < 1e-6
    _agrees_with_scan(inst, sol, np.logspace(-12, 0, 4001))


def test_front_from_a_cheapest_network_of_0_usd():
    """The rows of ROW_MISSED allow B = 0 (cheapest network $0, infinite time): the front starts at
    1e-6 of the fastest end (budgets relative to $0 were all $0, a ValueError from the cost-share
    LP's unit)."""
    inst = _instance(ROW_MISSED.replace(", max_network_cost_usd=17300968732783.008", ""))
    front = hieropt.pareto(inst, points=4)
    budgets = [p.budget_usd for p in front.points]
    assert budgets[0] == pytest.approx(1e-6 * budgets[-1], rel=1e-12)
    times = [p.iteration_time_ns for p in front.points]
    assert all(a > b for a, b in zip(times, times[1:], strict=False))
    assert all(
        p.gap <= 1e-8 and p.network_cost_usd <= p.budget_usd * (1 + 1e-9) for p in front.points
    )
    assert "front starts at 1e-06 of the fastest network's cost" in front.notes[0]
    fastest = hieropt.solve(inst)
    assert fastest.objective_bound <= times[-1] <= fastest.iteration_time_ns * (1 + 2e-7)
