"""An LLM stage as a hieropt workload with named groups, their placement on network dimensions, and
loop ``step``: hand-computed iteration times through hieropt's independent evaluator, the step loop
against the older loops it generalises, an exact solve, and the instance's refusals of mappings that
do not fit the plan."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from hieropt.errors import InputError
from hieropt.io.astrasim1 import format_workload
from hieropt.model.groups import instance_for, mapping_for, place_lowest, placements
from hieropt.model.timing import build_time_model, evaluate
from hieropt.solvers.objectives import solve
from hieropt.spec import (
    Collective,
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Network,
    Phase,
    Pipeline,
    StepSchedule,
    Workload,
)
from hieropt.spec.constraint_text import parse_constraint
from hieropt.workloads.llm import build_step
from hieropt.workloads.llm.lower import bottleneck_stage, lower_plan, lower_stage

from .tiny import params

COST = CostModel(classes={"c": CostClass(link_usd_per_gbps=1.0)})


def _net(*sizes):
    return Network(dims=tuple(Dimension(block="Ring", npus=n, cost_class="c") for n in sizes))


def test_lowered_layers_groups_and_header():
    w = lower_stage(build_step(params(sequence_parallel=True, zero_stage=1)), 0)
    names = [x.name for x in w.layers]
    # ZeRO 1: every layer's weight gradient holds RS + AG over dp; attn1: forward all-gather +
    # reduce-scatter, input gradient 3 TP collectives
    assert names[:5] == ["embed", "embed+1", "attn1", "attn1+1", "attn1+2"]
    a, a1, a2 = w.layers[2:5]
    assert (a.forward.group, a.input_grad.group, a.weight_grad.group) == ("tp", "tp", "dp")
    assert (a.forward.collective, a1.forward.collective) == (
        Collective.ALL_GATHER,
        Collective.REDUCE_SCATTER,
    )
    assert (a.forward.compute_ns, a1.forward.compute_ns) == (pytest.approx(2.048), 0.0)
    assert (a2.forward.collective, a2.input_grad.group) == (Collective.NONE, "tp")
    sends = [(x.name, ph) for x in w.layers for ph in ("forward", "input_grad", "weight_grad")
             if getattr(x, ph).collective is Collective.P2P]
    # stage 0 sends forward only
    assert [s for s in sends if s[1] != "weight_grad"] == [("mlp2+2", "forward")]
    h = w.header
    assert (h.model_parallel_npu_group, h.pp, h.ga, h.all_gpus, h.ep, h.vpp) == (
        2,
        2,
        4,
        8,
        None,
        None,
    )
    assert bottleneck_stage(build_step(params())) == 1  # the output layer's 3 x 2048 FLOPs
    with pytest.raises(
        InputError, match=r"layers\[0\].forward: named group .tp. has no ASTRA-sim 1.0 text form"
    ):
        format_workload(w)


def test_pipeline_plan_hand_computed_time():
    """TP 2 (dim 0) x DP 2 (dim 1) x PP 2 (dim 2), 1 GB/s everywhere, m = 4. Per micro-batch, the
    last stage: compute 36.864 ns (12288 + 13312 + 11264 FLOPs), 9 TP all-reduces of 128 B (128 B on
    dim 0 each: 128 ns), the gradient send back 128 B (128 ns): t_1 = 1316.864 ns; the first stage:
    compute 30.72 ns (no output layer), 8 TP all-reduces and the embedding's, the activation send:
    t_0 = 1310.72 ns. 1F1B composes t_0 + t_1
    + (m - 1) max(t_0, t_1), then the first stage's DP all-reduces once, the gradients 4 bytes per
    parameter (bf16 training's FP32 reduction): 2 x (416 + 800) + 512 = 2944 ns."""
    p = params()
    inst = instance_for(p, _net(2, 2, 2), COST)
    assert inst.mapping.groups["tp"] == (2, 1, 1) and inst.mapping.groups["pp"] == (1, 1, 2)
    assert inst.step == StepSchedule(microbatches=4, stages=2)
    t0, t1 = 30.72 + 9 * 128 + 128, 36.864 + 9 * 128 + 128
    assert evaluate(inst, [1.0, 1.0, 1.0]).iteration_time_ns == pytest.approx(
        t0 + t1 + 3 * t1 + 2944, rel=1e-12
    )
    assert build_time_model(inst).time_ns(np.ones(3)) == pytest.approx(
        t0 + t1 + 3 * t1 + 2944, rel=1e-12
    )


def test_gradient_accumulation_and_dp_overlap_hand_computed():
    """TP 2 x DP 4 on Ring 2 x Ring 4, pp = 1, m = 2: per micro-batch forward 22.528 ns + 9
    all-reduces (1152 ns), backward 45.056 ns + 9 all-reduces (1197.056 ns in all); DP all-reduces
    over 4 (1.5 S bytes on dim 1, S = parameters x 4 gradient bytes) once: embed 128 x 4 x 1.5 =
    768, attention 104 x 6 = 624, FFN 200 x 6 = 1200, output 136 x 6 = 816 ns."""
    p = params(pp=1, dp=4)
    inst = instance_for(p, _net(2, 4), COST)
    T = 2 * (1174.528 + 1197.056) + 768 + 4 * (624 + 1200) + 816
    assert evaluate(inst, [1.0, 1.0]).iteration_time_ns == pytest.approx(T)
    # overlap: the DP stream starts with the output layer's all-reduce once its backward (132.096
    # ns) is done and, being the slower stream, ends 132.096 + 8880 = 9012.096 ns into the last
    # backward pass
    over = instance_for(
        p.model_copy(update={"plan": p.plan.model_copy(update={"overlap_grad_reduce": True})}),
        _net(2, 4),
        COST,
    )
    assert evaluate(over, [1.0, 1.0]).iteration_time_ns == pytest.approx(
        2 * 1174.528 + 1197.056 + 9012.096
    )
    for inst_ in (inst, over):  # the LP's time model states the same function
        tm = build_time_model(inst_)
        for bw in ([1.0, 1.0], [3.0, 0.5], [0.2, 7.0]):
            assert tm.time_ns(bw) == pytest.approx(evaluate(inst_, bw).iteration_time_ns, rel=1e-12)


def test_step_generalises_no_overlap_and_pipeline():
    # m = 1, p = 1: no_overlap
    p = params(pp=1, dp=4, global_batch_size=8)
    inst = instance_for(p, _net(2, 4), COST)
    assert inst.step.slots == 1
    flat = inst.model_copy(update={"training_loop": "no_overlap", "step": None})
    for bw in ([1.0, 2.0], [5.0, 0.3]):
        assert evaluate(inst, bw).iteration_time_ns == pytest.approx(
            evaluate(flat, bw).iteration_time_ns
        )
    # a middle stage (sends both ways) under 1F1B: the pipeline loop with the sends as its p2p term
    p = params({"layers": 6}, pp=3, dp=2, global_batch_size=24,  # 12 NPUs, m = 6
               scatter_gather_sends=False)  # (each send whole: the pipeline loop's p2p_bytes)
    inst = instance_for(p, _net(2, 2, 3), COST, stage=1)
    w = inst.workload
    none = Phase(compute_ns=0.0, collective=Collective.NONE, size_bytes=0.0)
    # a new Workload: its table is built anew
    stripped = Workload(
        name=w.name,
        header=w.header,
        layers=tuple(
            x.model_copy(
                update={
                    ph: none.model_copy(update={"compute_ns": getattr(x, ph).compute_ns})
                    for ph in ("forward", "input_grad")
                    if getattr(x, ph).collective is Collective.P2P
                }
            )
            for x in w.layers
        ),
    )
    pipe = inst.model_copy(
        update={
            "workload": stripped,
            "training_loop": "pipeline",
            "step": None,
            "pipeline": Pipeline(stages=3, microbatches=6, p2p_bytes=128, p2p_dim=2),
        }
    )
    for bw in ([1.0, 1.0, 1.0], [4.0, 0.5, 2.0]):
        assert evaluate(inst, bw).iteration_time_ns == pytest.approx(
            evaluate(pipe, bw).iteration_time_ns
        )


def test_exact_solve_of_a_plan():
    p = params()
    inst = instance_for(p, _net(2, 2, 2), COST, constraints=(parse_constraint("sum(bw) == 30", 3),))
    sol = solve(inst)
    assert sol.success and sol.gap <= 1e-8
    assert sol.iteration_time_ns == pytest.approx(
        evaluate(inst, sol.bw_gbps).iteration_time_ns, rel=1e-9
    )


def test_moe_plan_groups_and_evaluation():
    from hieropt.workloads.llm import MoE

    p = params({"moe": MoE(experts=4, top_k=2, expert_ffn_size=8)}, ep=2, dp=2)
    inst = instance_for(p, _net(2, 2, 2), COST)
    # tp, then ep (2) and edp (1) inside dp, then pp
    assert inst.mapping.groups["ep"] == (1, 2, 1) and inst.mapping.groups["dp"] == (1, 2, 1)
    assert {"tp", "ep", "dp", "pp"} <= inst.workload.named_groups
    assert evaluate(inst, [1.0, 1.0, 1.0]).iteration_time_ns > 0


def test_instance_refuses_mappings_that_do_not_fit_the_plan():
    inst = instance_for(params(), _net(2, 2, 2), COST)
    groups = dict(inst.mapping.groups)
    del groups["pp"]
    with pytest.raises(
        ValidationError, match="runs collectives on group 'pp', which the mapping does not name"
    ):
        Instance(**{**dict(inst), "mapping": inst.mapping.model_copy(update={"groups": groups})})
    bad = mapping_for({"tp": (1, 1, 1), "dp": (2, 2, 1), "pp": (1, 1, 2)})
    with pytest.raises(
        ValidationError,
        match="groups.tp: \\[1, 1, 1\\] has 1 NPUs but the workload's header says "
        "model_parallel_npu_group = 2",
    ):
        Instance(**{**dict(inst), "mapping": bad})
    p = params(tp=1, pp=4, dp=2)  # 4 stages over dimensions 0 and 1
    place = {"tp": (1, 1, 1), "dp": (1, 1, 2), "pp": (2, 2, 1)}
    assert (
        evaluate(instance_for(p, _net(2, 2, 2), COST, placement=place), [1.0] * 3).iteration_time_ns
        > 0
    )
    # the plan names its groups' algorithms: its sends take the slower dimension under either
    # dimension_mode
    seq = instance_for(p, _net(2, 2, 2), COST, placement=place, dimension_mode="sequential")
    assert evaluate(seq, [1.0, 2.0, 3.0]).iteration_time_ns == pytest.approx(
        evaluate(
            instance_for(p, _net(2, 2, 2), COST, placement=place), [1.0, 2.0, 3.0]
        ).iteration_time_ns
    )


def test_placements():
    assert place_lowest((4, 8, 4, 32), [("tp", 8), ("pp", 8), ("dp", 64)]) == \
        {"tp": (4, 2, 1, 1), "pp": (1, 4, 2, 1), "dp": (1, 1, 2, 32)}
    with pytest.raises(InputError, match="does not fill the lowest free dimensions"):
        place_lowest((4, 6), [("tp", 3), ("dp", 8)])
    with pytest.raises(InputError, match="do not fill"):
        place_lowest((4, 8), [("tp", 4), ("dp", 4)])
    every = list(placements((2, 4), [("tp", 2), ("dp", 4)]))
    # tp on dim 0 (dp 1 x 4) or tp on dim 1 (dp 2 x 2)
    assert every == [{"tp": (1, 2), "dp": (2, 2)}, {"tp": (2, 1), "dp": (1, 4)}]
    assert len(list(placements((4, 8, 4, 32), [("tp", 8), ("pp", 8), ("dp", 64)]))) > 10


def test_stage_workload_is_lowered_once_per_plan_and_stage():
    from hieropt.cache import use

    with use():  # (one cache, as a sweep's)
        """A co-design search builds one instance per (plan, shape): the lowered stage is shared by
        the plan's shapes, equal to lowering it afresh, and another plan or stage gets its own."""
        from hieropt.workloads.llm.lower import stage_workload

        p = params(sequence_parallel=True, zero_stage=1)
        a, b = instance_for(p, _net(2, 4), COST), instance_for(p, _net(4, 2), COST)
        assert a.workload is b.workload
        # every distinct stage, the one with the most compute first
        assert a.workload == lower_plan(build_step(p))
        first = lower_stage(build_step(p), bottleneck_stage(build_step(p)))
        assert a.workload.stages[0].layers == first.layers
        assert stage_workload(p, 0) is stage_workload(p, 0)
        assert stage_workload(p, 0) == lower_stage(build_step(p), 0)
        assert stage_workload(p, 0) != stage_workload(p, 1)
        other = instance_for(params(zero_stage=1), _net(2, 4), COST)
        assert other.workload is not a.workload and other.workload != a.workload


def test_a_plan_lowers_every_distinct_stage():
    """pp = 4 with one block per stage: the first stage holds the embedding and sends forward only,
    the last the output layer and sends backward only, the two middle stages send both ways and
    lower to the same values (one of them is kept). The workload is the stage with the most compute
    (the last: its output layer) with the first and a middle stage as further stages, each equal to
    lowering that stage alone."""
    from hieropt.workloads.llm.lower import distinct_stages, stage_key

    p = params(pp=4, dp=1, stage_layers=(1, 1, 1, 1), global_batch_size=16)
    step = build_step(p)
    assert stage_key(step, 1) == stage_key(step, 2) != stage_key(step, 0)
    assert bottleneck_stage(step) == 3 and distinct_stages(step) == (3, 0, 1)
    w = lower_plan(step)
    assert [s.name for s in w.stages] == ["tiny-stage3", "tiny-stage0", "tiny-stage1"]
    assert w.model_copy(update={"more_stages": (), "pipeline_stages": ()}) == lower_stage(step, 3)
    for s, r in zip(w.more_stages, (0, 1), strict=True):
        assert s == lower_stage(step, r)  # (the further stages as columns, the same layers)
    sends = {
        r: [(c.phase, c.kind) for op in step.stages[r].ops for c in op.comms if c.group == "pp"]
        for r in range(4)
    }
    assert sends == {0: [("forward", "P2P")], 1: [("input_grad", "P2P"), ("forward", "P2P")],
                     2: [("input_grad", "P2P"), ("forward", "P2P")], 3: [("input_grad", "P2P")]}
    # (embedding: no FLOPs)
    assert sum(step.compute_ns(3)) > sum(step.compute_ns(1)) == sum(step.compute_ns(0))
    # pp = 2: the first stage differs from the last
    assert lower_plan(build_step(params())).more_stages
    assert not lower_plan(build_step(params(pp=1, dp=4))).more_stages  # pp = 1: one stage
