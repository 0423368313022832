"""Every shipped instance loads, solves to a certified optimum, and re-evaluates to the same
time."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from tests.cases import REPO

INSTANCES = sorted((REPO / "instances").glob("*.toml"))


@pytest.mark.parametrize("path", INSTANCES, ids=lambda p: p.name)
def test_instance_solves(path):
    inst = hieropt.load_instance(path)
    sol = hieropt.solve(inst)
    assert sol.status is hieropt.Status.OPTIMAL
    assert 0 <= sol.gap <= 1e-8
    assert sol.objective_bound <= sol.objective_value
    assert sol.lower_bound_ns is None or sol.lower_bound_ns <= sol.iteration_time_ns
    assert hieropt.evaluate(inst, sol.bw_gbps).iteration_time_ns == sol.iteration_time_ns
    assert hieropt.verify(inst, sol.bw_gbps, sol.iteration_time_ns).ok


def test_default_instance_values():
    """GPT-3 175B on 4x8x4x32 with sum(bw) == 500: the budget is used fully, and the optimum beats
    equal split."""
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    sol = hieropt.solve(inst)
    assert sol.bw_gbps.sum() == pytest.approx(500, rel=1e-9)
    assert inst.network.npus_total == 4096
    # compute is fixed by the workload model: 96 blocks x (attention + MLP) x 3 phases
    assert sol.breakdown.compute_ns == pytest.approx(880.1379135803e6, rel=1e-9)
    equal = hieropt.evaluate(inst, [125.0] * 4).iteration_time_ns
    assert sol.iteration_time_ns < equal
    # each solve is independent: a second solve in the same process gives the same certified optimum
    again = hieropt.solve(inst)
    assert again.iteration_time_ns == pytest.approx(sol.iteration_time_ns, rel=1e-8)
    np.testing.assert_allclose(again.bw_gbps, sol.bw_gbps, rtol=1e-3)


def test_perturbing_the_optimum_never_helps():
    """Moving bandwidth between any two dimensions (keeping the budget) does not reduce the time
    below the bound."""
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    sol = hieropt.solve(inst)
    rng = np.random.default_rng(0)
    for _ in range(200):
        i, j = rng.choice(4, size=2, replace=False)
        delta = rng.uniform(-1, 1) * min(sol.bw_gbps[i], sol.bw_gbps[j]) * 0.5
        bw = sol.bw_gbps.copy()
        bw[i] += delta
        bw[j] -= delta
        assert hieropt.evaluate(inst, bw).iteration_time_ns >= sol.lower_bound_ns
