"""Per-micro-batch collectives on their own stream (plan ``overlap_sharded_comms``, loop
``step``'s ``overlap_groups``; hieropt/model/overlap.py): each micro-batch slot takes the largest
of its compute with the blocking collectives, the own-stream collectives, and every dimension's
busy time; by hand, in the LP (TimeModel) and in the evaluator alike, with and without a
pipeline."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.io.astrasim_bundle import write_bundle
from hieropt.model.groups import instance_for
from hieropt.model.overlap import slot_time
from hieropt.model.timing import build_time_model
from hieropt.spec import Collective, CostClass, CostModel, Dimension, Network, StepSchedule
from hieropt.spec.space import constraint_for
from hieropt.studies.codesign.bounds import plan_volume_bytes
from hieropt.workloads.llm import build_step
from hieropt.workloads.llm.lower import schedule

from .tiny import params

COST = CostModel(classes={"c": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0,
                                         nic_usd_per_gbps=1.0)})
ZERO2 = dict(tp=1, pp=1, dp=4, zero_stage=2, global_batch_size=16)  # m = 16 / (4 x 2) = 2


def _net(*sizes):
    return Network(dims=tuple(Dimension(block="Switch", npus=n, cost_class="c") for n in sizes))


def test_slot_time_by_hand():
    """Three layers, one dimension. Compute 7 + 3 + 0 = 10 with a TP collective of 2 (main
    stream): 12; DP collectives of 5 and 6 (layer 2, forward and input gradient) and 4 (layer 3,
    forward) on the own stream: 15; the one dimension carries both streams' 2 + 15 = 17: the slot
    is 17. The 7 of the weight-gradient column runs once per iteration, not in the slot."""
    C = np.array([[3.0, 2.0, 2.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    T = np.array([[2.0, 0.0, 7.0], [5.0, 6.0, 0.0], [4.0, 0.0, 0.0]])
    own = np.array([[False, False, False], [True, True, False], [True, False, False]])
    assert slot_time(C, T, T[:, :, None], own, serial=False) == 17.0
    assert slot_time(C, T, T[:, :, None], own, serial=True) == 17.0  # (one at a time: 2 + 15)
    # the own stream on a second dimension: max(12, 15, 2, 15) = 15, the compute hidden; one
    # collective at a time still 17
    two = np.zeros((3, 3, 2))
    two[:, :, 0], two[:, :, 1] = np.where(own, 0.0, T), np.where(own, T, 0.0)
    assert slot_time(C, T, two, own, serial=False) == 15.0
    assert slot_time(C, T, two, own, serial=True) == 17.0
    # little on the own stream: the compute with the main stream, 12
    small = np.where(own, T / 10, T)
    assert slot_time(C, small, np.where(own, 0.0, small)[:, :, None], own, serial=False) == 12.0


def test_zero2_overlap_hides_the_reduce_scatter_by_hand():
    """The tiny model, tp 1, pp 1, dp 4 on 2 x 2 NPUs, ZeRO-2, m = 2: every micro-batch's
    backward reduce-scatters each layer's gradients. Overlapped, the iteration is 2 max(forward +
    backward compute, the reduce-scatters) + the per-iteration all-gather after the step: at high
    bandwidth the compute alone, at low bandwidth the reduce-scatters (the evaluator, the LP and
    this formula agree)."""
    p, q = params(**ZERO2, overlap_sharded_comms=True), params(**ZERO2)
    assert schedule(p).overlap_groups == ("dp", "edp", "dpc")
    assert schedule(q).overlap_groups == ()
    net = _net(2, 2)
    on, off = instance_for(p, net, COST), instance_for(q, net, COST)
    step = build_step(p)
    ops = step.stages[0].ops
    fwd = sum(op.compute_ns[0] if op.compute_ns else op.flops[0] / p.npu.flops_per_ns for op in ops)
    bwd = sum(step.compute_ns(0)) - fwd
    w = on.workload.table
    L = w.size_bytes.shape[0]
    for bw in ([1e9, 1e9], [300.0, 25.0], [0.3, 0.01]):
        t_on = hieropt.evaluate(on, bw).iteration_time_ns
        t_off = hieropt.evaluate(off, bw).iteration_time_ns
        assert build_time_model(on).time_ns(np.array(bw)) == pytest.approx(t_on, rel=1e-9)
        assert t_on <= t_off + 1e-9
        # reduce-scatter over 2 x 2 ascending: S/2 on dim 0, S/4 on dim 1 (sequential: they add)
        stream = sum(w.size_bytes[i, 1] * (1 / 2 / bw[0] + 1 / 4 / bw[1]) for i in range(L)
                     if w.group[i, 1] == "dp")
        # after the step, the shard's all-gather: over the nodes, then the node's 2 shards
        ag = sum(w.size_bytes[i, 2] * (1 / bw[1] + 2 / bw[0]) for i in range(L)
                 if w.group[i, 2] == "dp")
        by_hand = 2 * max(fwd + bwd, stream) + ag + step.update_ns(0)
        assert t_on == pytest.approx(by_hand, rel=1e-9)
    fastest = hieropt.evaluate(on, [1e9, 1e9]).iteration_time_ns
    assert fastest == pytest.approx(2 * (fwd + bwd) + step.update_ns(0), rel=1e-6)


def test_pipelined_overlap_lp_and_evaluator_agree_and_solve():
    """pp 2 (the composed pipeline: the schedule's graph is not used with own-stream
    collectives), tp 1, dp 2, ZeRO-3 overlapped: the LP's time equals the evaluator's at several
    bandwidths, and a solve's optimum is confirmed by the evaluator."""
    p = params(tp=1, pp=2, dp=2, zero_stage=3, overlap_sharded_comms=True)
    inst = instance_for(p, _net(2, 2), COST, constraints=(constraint_for("sum(bw) == 100", 2),))
    tm = build_time_model(inst)
    for bw in ([1e6, 1e6], [10.0, 1.0], [0.01, 0.5], [3.0, 0.001]):
        truth = hieropt.evaluate(inst, bw).iteration_time_ns
        assert tm.time_ns(np.array(bw)) == pytest.approx(truth, rel=1e-9)
    sol = hieropt.solve(inst)
    assert sol.success
    truth = hieropt.evaluate(inst, sol.bw_gbps).iteration_time_ns
    assert truth == pytest.approx(sol.iteration_time_ns, rel=1e-6)


def test_overlap_options_that_conflict_are_refused():
    with pytest.raises(ValueError, match="plan.overlap_sharded_comms: not with overlap_grad_red"):
        params(**ZERO2, overlap_sharded_comms=True, overlap_grad_reduce=True)
    with pytest.raises(ValueError, match="step.overlap_groups: not with overlap_dp"):
        StepSchedule(microbatches=2, overlap_dp=True, overlap_groups=("dp",))
    # below ZeRO-2 there is no per-micro-batch DP collective: the option would change nothing
    # (not accepted silently), so it is refused as the other conflicts are
    for z in (0, 1):
        with pytest.raises(ValueError) as e:
            params(**{**ZERO2, "zero_stage": z}, overlap_sharded_comms=True)
        assert (
            f"plan.overlap_sharded_comms: with zero_stage {z} there are no per-micro-batch DP "
            "collectives to overlap (ZeRO 2/3's gradient reduce-scatters and parameter "
            "all-gathers), so it would change nothing; fix: set zero_stage = 2 or 3, or "
            "overlap_sharded_comms = false (overlap_grad_reduce overlaps the per-iteration DP "
            "collectives)"
        ) in str(e.value)


def test_overlap_grad_reduce_with_zero_2_or_3_is_noted_as_changing_nothing():
    from hieropt.workloads.llm.flops import plan_caveats

    net = _net(2, 2)
    for z in (2, 3):
        base = params(**{**ZERO2, "zero_stage": z})
        ovl = params(**{**ZERO2, "zero_stage": z}, overlap_grad_reduce=True)
        # the gradients are reduce-scattered every micro-batch: the same iteration time
        for bw in ([300.0, 25.0], [0.3, 0.01]):
            t = [hieropt.evaluate(instance_for(q, net, COST), bw).iteration_time_ns
                 for q in (base, ovl)]
            assert t[1] == pytest.approx(t[0], rel=1e-12) and t[0] > 0
        note = (f"overlap_grad_reduce with zero_stage {z} changes nothing: ZeRO {z} "
                "reduce-scatters the gradients every micro-batch, so there is no per-iteration "
                "gradient reduction to overlap with the last backward (Megatron-LM's "
                "overlap_grad_reduce over its distributed optimizer, ZeRO 1); the overlap of "
                f"ZeRO {z}'s per-micro-batch collectives (Megatron-FSDP's overlap_grad_reduce, "
                "PyTorch FSDP's) is overlap_sharded_comms: set overlap_sharded_comms = true and "
                "overlap_grad_reduce = false to model it")
        assert note in plan_caveats(ovl) and note not in plan_caveats(base)
    # ZeRO 2's overlap_param_gather needs it (Megatron-LM's rule): no note there, nor with ZeRO 1
    gather = params(**ZERO2, overlap_grad_reduce=True, overlap_param_gather=True)
    one = params(**{**ZERO2, "zero_stage": 1}, overlap_grad_reduce=True)
    assert not any("changes nothing" in c for c in plan_caveats(gather) + plan_caveats(one))


def test_sharded_overlap_below_zero_2_is_refused_in_a_model_file(tmp_path):
    from hieropt.io.llm import read_llm
    from tests.validate.tiny import MODEL

    path = tmp_path / "m.toml"
    path.write_text(MODEL.replace("global_batch_size = 4\n", "global_batch_size = 4\n"
                                  "zero_stage = 1\noverlap_sharded_comms = true\n"))
    with pytest.raises(InputError) as e:
        read_llm(path)
    assert e.value.one_line().startswith(
        f"{path}: params: plan.overlap_sharded_comms: with zero_stage 1 there are no "
        "per-micro-batch DP collectives to overlap")
    assert e.value.one_line().endswith(
        "fix: set zero_stage = 2 or 3, or overlap_sharded_comms = false (overlap_grad_reduce "
        "overlaps the per-iteration DP collectives)")
    assert read_llm(path, ["zero_stage=2"]).plan.overlap_sharded_comms


def test_a_space_keeps_the_sharded_overlap_for_its_zero_2_and_3_plans():
    # a co-design base with the flag (models/llama3-405b.toml, zero_stage = [0, 1, 2, 3]): its
    # ZeRO 0/1 choices are plans without it, not invalid ones
    from hieropt.studies.codesign.plans import plan_params

    base = params(**ZERO2, overlap_sharded_comms=True)
    choice = {"tp": 1, "pp": 1, "virtual_stages": 1, "micro_batch_size": 2}
    flags = [plan_params(base, 4, {**choice, "zero_stage": z}).plan.overlap_sharded_comms
             for z in (0, 1, 2, 3)]
    assert flags == [False, False, True, True]


def test_codesign_bound_leaves_the_hidden_collectives_out():
    """The co-design lower bound counts the own-stream collectives with weight 0 (the compute may
    hide them), the per-iteration ones as before."""
    p, q = params(**ZERO2, overlap_sharded_comms=True), params(**ZERO2)
    v_on, v_off = plan_volume_bytes(p, build_step(p)), plan_volume_bytes(q, build_step(q))
    step = build_step(q)
    per_mb = sum(c.size_bytes * 3 / 4 for op in step.stages[0].ops for c in op.comms
                 if c.group == "dp" and not c.per_iteration)  # reduce-scatter over 4: S (1 - 1/4)
    assert v_off - v_on == pytest.approx(2 * per_mb)  # F = m = 2 slots


def test_the_simulator_export_refuses_own_stream_collectives(tmp_path):
    """The ASTRA-sim traces run every collective in its layer's place: a plan with own-stream
    collectives is refused with the fix, not written with a time the simulator would not
    reproduce."""
    inst = instance_for(params(**ZERO2, overlap_sharded_comms=True), _net(2, 2), COST)
    with pytest.raises(InputError, match="step.overlap_groups.*overlap_sharded_comms = false"):
        write_bundle(inst, [300.0, 25.0], tmp_path / "b")
    plain = instance_for(params(**ZERO2), _net(2, 2), COST)
    assert write_bundle(plain, [300.0, 25.0], tmp_path / "c").workloads


TP4 = dict(tp=4, pp=1, dp=1, global_batch_size=4)  # m = 4 / (1 x 2) = 2


def test_tp_overlap_hides_the_tp_collectives_by_hand():
    """The tiny model, tp 4 on 2 x 2 NPUs with sequence parallelism, pp 1, dp 1, m = 2,
    ``overlap_tp_comms``: every layer's forward and input-gradient all-gathers and reduce-scatters
    run on their own stream, so the iteration is 2 max(the compute, the TP collectives) + the
    optimizer step. Over 2 x 2 ascending (sequential): a reduce-scatter of S sends S/2 on dim 0,
    then S/4 on dim 1: S (1 / (2 B_0) + 1 / (4 B_1)); an all-gather of shard s goes the other way,
    s on dim 1, then 2s on dim 0: s (2 / B_0 + 1 / B_1). Exposed, they add to the compute instead;
    the evaluator, the LP and this formula agree."""
    p, q = params(**TP4, overlap_tp_comms=True, sequence_parallel=True), \
        params(**TP4, sequence_parallel=True)
    assert schedule(p).overlap_groups == ("tp",) and schedule(q).overlap_groups == ()
    net = _net(2, 2)
    on, off = instance_for(p, net, COST), instance_for(q, net, COST)
    step = build_step(p)
    compute, update = sum(step.compute_ns(0)), step.update_ns(0)
    w = on.workload.table
    L = w.size_bytes.shape[0]
    for bw in ([1e9, 1e9], [300.0, 25.0], [0.3, 0.01]):
        per_byte = {Collective.REDUCE_SCATTER: 1 / 2 / bw[0] + 1 / 4 / bw[1],
                    Collective.ALL_GATHER: 2 / bw[0] + 1 / bw[1]}
        stream = sum(w.size_bytes[i, c] * per_byte[w.collective[i, c]]
                     for i in range(L) for c in (0, 1) if w.group[i, c] == "tp")
        assert stream > 0
        t_on = hieropt.evaluate(on, bw).iteration_time_ns
        t_off = hieropt.evaluate(off, bw).iteration_time_ns
        assert build_time_model(on).time_ns(np.array(bw)) == pytest.approx(t_on, rel=1e-9)
        assert t_on == pytest.approx(2 * max(compute, stream) + update, rel=1e-9)
        assert t_off == pytest.approx(2 * (compute + stream) + update, rel=1e-9)


def test_tp_overlap_with_sharded_comms_shares_one_stream_and_names_its_flags():
    """Both overlaps: TP and the DP groups on one own stream; the 1F1B plan's last-backward
    overlap cannot be combined with it (refused, naming the flag), the interleaved schedule's
    can (it has no last-backward overlap to lose)."""
    both = params(**{**ZERO2, "tp": 2, "dp": 2}, overlap_sharded_comms=True,
                  overlap_tp_comms=True, sequence_parallel=True)
    assert schedule(both).overlap_groups == ("tp", "dp", "edp", "dpc")
    with pytest.raises(ValueError, match="plan.overlap_tp_comms: not with overlap_grad_reduce"):
        params(**TP4, overlap_tp_comms=True, overlap_grad_reduce=True, sequence_parallel=True)
    inter = params(tp=2, pp=2, dp=1, global_batch_size=8, schedule="interleaved",
                   virtual_stages=2, overlap_tp_comms=True, overlap_grad_reduce=True,
                   sequence_parallel=True)
    assert schedule(inter).overlap_groups == ("tp",)


def test_the_tp_overlap_flag_is_named_where_it_cannot_run(tmp_path):
    """The simulator export refuses a plan with the TP collectives on their own stream, naming
    ``overlap_tp_comms``; with TP 1 the flag has nothing to overlap
    and changes nothing (the plan's schedule has no own stream)."""
    inst = instance_for(params(**TP4, overlap_tp_comms=True, sequence_parallel=True), _net(2, 2),
                        COST)
    with pytest.raises(InputError, match="export the plan with overlap_tp_comms = false"):
        write_bundle(inst, [300.0, 25.0], tmp_path / "b")
    assert schedule(params(**{**TP4, "tp": 1, "dp": 4, "global_batch_size": 16},
                           overlap_tp_comms=True)).overlap_groups == ()
