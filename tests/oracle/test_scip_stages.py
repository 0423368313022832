"""SCIP cross-check of pipelined LLM plans (hieropt.workloads.llm: every distinct stage in the
workload, T the max over the stages): the tiny model of tests/workloads/tiny.py lowered with its
stages, placed lowest first on 2 x 2 x N NPUs, solved by hieropt and by the independent SCIP model
of tests/oracle/scip_loops.py (each stage's time straight from the loop's formula, the max as
one more epigraph variable). On the first plan the stage with the most compute (the last: its output
layer) is not the slowest at the optimum: a middle stage with two pipeline sends is, and the
single-stage answer (that stage alone) is below SCIP's global optimum, i.e. it claims a time no
design reaches."""

from __future__ import annotations

import pytest

import hieropt
from hieropt.model.groups import instance_for
from hieropt.spec import Dimension, Network
from hieropt.spec.space import constraint_for
from hieropt.workloads.llm.lower import bottleneck_stage
from hieropt.workloads.llm.step import build_step
from tests.oracle.scip import COST
from tests.oracle.scip_loops import check_against_scip, scip_min_time
from tests.workloads.tiny import params

pytest.importorskip("pyscipopt")

PLANS = [
    # four stages, three distinct
    dict(pp=4, dp=1, stage_layers=(1, 1, 1, 1), global_batch_size=16),
    dict(pp=2, dp=2, stage_layers=(1, 3)),  # uneven: the 3-block stage is the slowest
    dict(pp=2, dp=2, zero_stage=1, sequence_parallel=True, overlap_grad_reduce=True),  # overlap_dp
    # and the parameter all-gathers behind the first forward (overlap_gather)
    dict(pp=2, dp=2, zero_stage=1, sequence_parallel=True, overlap_grad_reduce=True,
         overlap_param_gather=True),
    # interleaved (v = 2, the schedule's graph of each chunk's forward and backward): neither
    # overlap modelled, the gradient reduction and the all-gathers in W_0 after the graph
    dict(arch={"layers": 8}, pp=2, dp=2, schedule="interleaved", virtual_stages=2,
         zero_stage=1, sequence_parallel=True, overlap_grad_reduce=True,
         overlap_param_gather=True, global_batch_size=16),
    # the composition (2 p m > 4,096 operations): the gathered first forward in a slot
    pytest.param(dict(pp=2, dp=2, zero_stage=2, overlap_grad_reduce=True,
                      overlap_param_gather=True, global_batch_size=4104), marks=pytest.mark.heavy),
]


def _instance(plan: dict, budget: float, stage: int | None = None):
    p = params(**plan)
    net = Network(dims=(Dimension(block="Ring", npus=2, cost_class="C"),
                        Dimension(block="FullyConnected", npus=2, cost_class="C"),
                        Dimension(block="Switch", npus=p.plan.total_npus // 4, cost_class="C")))
    return p, instance_for(
        p, net, COST, constraints=(constraint_for(f"sum(bw) == {budget}", 3),), stage=stage
    )


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("budget", [3.0, 300.0])
def test_pipelined_plans_match_scip(plan: dict, budget: float):
    _, inst = _instance(plan, budget)
    assert len(inst.workload.stages) > 1
    check_against_scip(inst, print)


def test_the_single_stage_answer_is_below_the_global_optimum():
    p, inst = _instance(PLANS[0], 3.0)
    r = bottleneck_stage(build_step(p))
    assert r == 3  # the last stage: its output layer
    sol = hieropt.solve(inst)
    # a middle stage (a send each way) at the optimum
    assert sol.breakdown.slowest_stage == "tiny-stage1"
    _, scip_obj = scip_min_time(inst)
    old = hieropt.solve(_instance(PLANS[0], 3.0, stage=r)[1])
    assert old.iteration_time_ns < scip_obj * (1 - 1e-3)  # single-stage: 5,489 vs 6,185 ns
    assert sol.iteration_time_ns == pytest.approx(scip_obj, rel=1e-6)


@pytest.mark.parametrize("m, v, overlap", [(4, 1, False), (4, 1, True), (3, 2, False)])
def test_the_1f1b_composition_matches_scip(m: int, v: int, overlap: bool):
    """The three hand-computed stages of tests/solve/stages.py (each stage's slot composed: the
    oracle's own statement of the composition, tests/oracle/loops.py compose)."""
    from tests.solve.stages import three_stages

    check_against_scip(three_stages(m=m, v=v, overlap=overlap), print)


@pytest.mark.parametrize("budget", [3.0, 300.0])
def test_interleaved_sends_across_two_dimensions_match_scip(budget: float):
    """Eight blocks, tp 2 x pp 4 with two chunks per stage: pp is [1, 2, 2] on the 2 x 2 x 2 NPUs,
    so the sends 0 -> 1 and 2 -> 3 cross dimension 1, 1 -> 2 and the chunks' wrap 3 -> 0 both
    dimensions 1 and 2 (tests/oracle/algorithms.py crossed_sizes); the composition (1/v) sum_r t_r
    + (m - 1/v) max_r t_r + W over every stage's own slot."""
    p = params(arch={"layers": 8}, pp=4, dp=1, schedule="interleaved", virtual_stages=2,
               global_batch_size=16)
    net = Network(dims=(Dimension(block="Ring", npus=2, cost_class="C"),
                        Dimension(block="FullyConnected", npus=2, cost_class="C"),
                        Dimension(block="Switch", npus=2, cost_class="C")))
    inst = instance_for(p, net, COST, constraints=(constraint_for(f"sum(bw) == {budget}", 3),))
    assert inst.mapping.groups["pp"] == (1, 2, 2) and inst.step.virtual_stages == 2
    check_against_scip(inst, print)
