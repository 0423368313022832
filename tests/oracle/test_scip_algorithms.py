"""Collective algorithms per group against the oracle: its own statement of each algorithm's bytes,
latency steps and sum-or-max (tests/oracle/algorithms.py) equals hieropt's on LLM plans of every
algorithm, and SCIP's global optimum equals hieropt's on plans whose groups run different algorithms
(a sum and a max in one time model)."""

from __future__ import annotations

import numpy as np
import pytest

from hieropt.model.groups import instance_for
from hieropt.model.stages import stage_jobs
from hieropt.model.traffic import phase_latency, phase_sums, phase_traffic
from hieropt.names import GROUP_ALGORITHMS
from hieropt.spec import Dimension, Network
from hieropt.spec.space import constraint_for
from tests.oracle.algorithms import restated_rows
from tests.workloads.tiny import params

COST_NET = dict(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0, nic_usd_per_gbps=1.0)


def _instance(algorithms: dict, budget: float = 30.0, **plan):
    from hieropt.spec import CostClass, CostModel

    p = params(collective_algorithms=algorithms, **plan)
    net = Network(
        dims=(
            Dimension(block="FullyConnected", npus=2, cost_class="C", latency_ns=300.0),
            Dimension(block="Ring", npus=2, cost_class="C", latency_ns=700.0),
            Dimension(
                block="Switch", npus=p.plan.total_npus // 4, cost_class="C", latency_ns=900.0
            ),
        )
    )
    cost = CostModel(classes={"C": CostClass(**COST_NET)})
    return instance_for(p, net, cost, constraints=(constraint_for(f"sum(bw) == {budget}", 3),))


def _partial(blocks: tuple[str, str], algorithms: dict, budget: float = 30.0, **plan):
    """A plan on a Ring or FullyConnected dimension of 4 NPUs under the other block of the rest:
    groups that span part of a dimension (priced by the links they reach)."""
    from hieropt.spec import CostClass, CostModel

    p = params(collective_algorithms=algorithms, **plan)
    net = Network(dims=(
        Dimension(block=blocks[0], npus=4, cost_class="C", latency_ns=300.0),
        Dimension(block=blocks[1], npus=p.plan.total_npus // 4, cost_class="C", latency_ns=700.0),
    ))
    cost = CostModel(classes={"C": CostClass(**COST_NET)})
    return instance_for(p, net, cost, constraints=(constraint_for(f"sum(bw) == {budget}", 2),))


PLANS = [dict(tp=4, pp=1, dp=2), dict(tp=2, pp=2, dp=2, sequence_parallel=True, zero_stage=1),
         dict(tp=1, pp=2, dp=4, zero_stage=3), dict(tp=2, cp=2, pp=2, dp=2, zero_stage=1)]


@pytest.mark.parametrize("algorithm", GROUP_ALGORITHMS)
@pytest.mark.parametrize("plan", PLANS)
def test_the_oracle_states_the_same_bytes_steps_and_sums(algorithm, plan):
    inst = _instance({g: algorithm for g in ("tp", "cp", "dp", "dpc", "pp")}, **plan)
    for job in stage_jobs(inst.jobs[0]):
        traffic, latency, sums = restated_rows(inst, job.workload, job.mapping)
        np.testing.assert_allclose(phase_traffic(inst, job), traffic, rtol=1e-14, atol=0)
        np.testing.assert_allclose(phase_latency(inst, job), latency, rtol=1e-14, atol=0)
        assert (phase_sums(inst, job) == sums).all()


@pytest.mark.parametrize("algorithm", ["concurrent", "sequential", "flat_ring", "nccl_ring"])
@pytest.mark.parametrize("blocks", [("Ring", "FullyConnected"), ("FullyConnected", "Ring")])
@pytest.mark.parametrize("plan", PLANS)
def test_partial_groups_by_their_links(algorithm, blocks, plan):
    """Groups spanning part of a dimension (tp 2 of a Ring of 4: a path; dp of stride 2 there: a
    cycle its two copies share; any part of a FullyConnected dimension: its peers' links): the
    oracle's own layout of the groups and count of the links they use gives hieropt's bytes."""
    inst = _partial(blocks, {g: algorithm for g in ("tp", "cp", "dp", "dpc", "pp")}, **plan)
    for job in stage_jobs(inst.jobs[0]):
        traffic, _, _ = restated_rows(inst, job.workload, job.mapping)
        np.testing.assert_allclose(phase_traffic(inst, job), traffic, rtol=1e-14, atol=0)
    # (tp 2 x pp 2 x dp 2 and the cp plan span part of the first dimension; the others fill it)
    whole = inst.model_copy(update={"group_bandwidth": "whole"})
    less = restated_rows(whole, job.workload, job.mapping)[0].sum() < traffic.sum()
    assert less == (plan in (PLANS[1], PLANS[3]))


def test_a_partial_plan_matches_scip():
    """tp 2 x cp 2 x pp 2 x dp 2 on a Ring of 4 under a FullyConnected dimension of 4: every group
    spans part of its dimension."""
    pytest.importorskip("pyscipopt")
    from tests.oracle.scip_loops import check_against_scip

    check_against_scip(_partial(("Ring", "FullyConnected"), {"cp": "flat_ring"}, **PLANS[3]),
                       print)


@pytest.mark.parametrize(
    "algorithms",
    [
        {"tp": "sequential", "dp": "flat_ring"},
        {"tp": "flat_direct", "dp": "sequential", "pp": "sequential"},
        {"tp": "concurrent", "dp": "flat_tree"},
        {"tp": "nccl_ring", "dp": "sequential"},
    ],
)
@pytest.mark.parametrize("plan", PLANS[:2])
def test_mixed_algorithms_match_scip(algorithms, plan):
    pytest.importorskip("pyscipopt")
    from tests.oracle.scip_loops import check_against_scip

    check_against_scip(_instance(algorithms, **plan), print)


def test_a_context_parallel_plan_matches_scip():
    """tp 2 x cp 2 x pp 2 x dp 2 (the K/V all-gathers on cp, the gradients over dp x cp on dpc)."""
    pytest.importorskip("pyscipopt")
    from tests.oracle.scip_loops import check_against_scip

    check_against_scip(_instance({"cp": "flat_ring", "dpc": "sequential"}, **PLANS[3]), print)
