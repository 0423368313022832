"""ZeRO 1/2's all-gather of the updated parameters (hieropt/model/gathers.py): after the optimizer
step, exposed, under ``overlap_grad_reduce`` (which overlaps the gradient reduction only), or with
``overlap_param_gather`` on its own stream through the next iteration's first forward; by hand, in
the LP (TimeModel) and in the evaluator alike; the plan rules Megatron-LM's flags follow; the
simulator traces' order; the co-design bound."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.io.astrasim_network import sim_network
from hieropt.io.astrasim_stages import stage_workloads
from hieropt.io.astrasim_step import stage_trace
from hieropt.model.gathers import gates
from hieropt.model.groups import instance_for
from hieropt.model.loops import gather_time
from hieropt.model.timing import build_time_model
from hieropt.spec import CostClass, CostModel, Dimension, Network
from hieropt.studies.codesign.bounds import plan_time_bounds, plan_volume_bytes
from hieropt.studies.codesign.plans import enumerate_plans, plan_params
from hieropt.workloads.llm import build_step
from hieropt.workloads.llm.flops import plan_caveats
from hieropt.workloads.llm.lower import schedule
from hieropt.workloads.llm.space import PlanChoices

from .tiny import params

COST = CostModel(classes={"c": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0,
                                         nic_usd_per_gbps=1.0)})
# m = 16 / (4 x 2) = 2 micro-batches, ZeRO 1: a reduce-scatter and an all-gather per layer
ZERO1 = dict(tp=1, pp=1, dp=4, zero_stage=1, global_batch_size=16, overlap_grad_reduce=True)
NET = Network(dims=tuple(Dimension(block="Switch", npus=2, cost_class="c") for _ in range(2)))


def test_the_gathered_forward_by_hand():
    """Three layers of forward compute 2, 3, 1 on one dimension, gathers of 4, 1, 1 in forward
    order on their own stream: layer 0 starts at 4 (its gather), ends at 6; layer 1's gather ends
    at 5, so it runs 6-9; layer 2's ends at 6: 9-10. Gathers of 1, 5, 5: layer 0 at 1-3, layer 1
    waits for 1 + 5 = 6: 6-9, layer 2 for 11: 11-12. A gather on a compute-free row after its
    layer (the lowering's "<layer>+1") gates that layer."""
    C = np.array([[2.0, 9.0, 9.0], [3.0, 9.0, 9.0], [1.0, 9.0, 9.0]])
    every = np.ones(3, dtype=bool)
    for ag, end in (([4.0, 1.0, 1.0], 10.0), ([1.0, 5.0, 5.0], 12.0)):
        T = np.zeros((3, 3))
        T[:, 2] = ag
        for serial in (False, True):
            assert gather_time(C, T, T[:, :, None], every, serial) == end
    # layer 0, its gather on the compute-free row 1, layer 2 with its own gather on row 2
    C = np.array([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [3.0, 0.0, 0.0]])
    rows = np.array([False, True, True])
    assert [x.tolist() for x in gates(C, rows)] == [[1, 2], [0, 2]]
    T = np.zeros((3, 3))
    T[1, 2], T[2, 2] = 4.0, 2.0  # layer 0 at 4-6, layer 2's gather ends at 6: 6-9
    assert gather_time(C, T, T[:, :, None], rows, False) == 9.0


def _by_hand(p, bw):
    """The tiny ZeRO-1 plan's iteration by hand at a bandwidth where every reduce-scatter but the
    last two and every all-gather but the first two hide: the embedding has no compute, so the
    backward ends with attn1's compute and the stream still owes attn1's and the embedding's
    reduce-scatters; over 2 x 2 ascending a reduce-scatter of S takes S (1 / (2 B_0) + 1 / (4
    B_1)), an all-gather of shard s goes the other way, s on dim 1 then 2 s on dim 0: s (2 / B_0 +
    1 / B_1). Without ``overlap_param_gather`` every all-gather runs after the optimizer step
    (0 ns here: the flat compute model has no HBM figure); with it only the embedding's and
    attn1's gathers, which the first forward waits for before any compute, show."""
    inst = instance_for(p, NET, COST)
    t = inst.workload.table
    names = [x.name for x in inst.workload.layers]
    rs = {n: t.size_bytes[i, 2] * (1 / 2 / bw[0] + 1 / 4 / bw[1])
          for i, n in enumerate(names) if t.collective[i, 2].value == "REDUCESCATTER"}
    ag = {n: t.size_bytes[i, 2] * (2 / bw[0] + 1 / bw[1])
          for i, n in enumerate(names) if t.collective[i, 2].value == "ALLGATHER"}
    f, b = float(t.compute_ns[:, 0].sum()), float(t.compute_ns[:, 1:].sum())
    assert (f, b) == pytest.approx((45.056, 90.112))  # (tests/workloads/test_llm_block.py)
    shown = ag["embed+1"] + ag["attn1+1"] if p.plan.overlap_param_gather else sum(ag.values())
    return inst, 2 * f + 2 * b + rs["attn1"] + rs["embed"] + shown


@pytest.mark.parametrize("gather", [False, True])
def test_the_all_gather_runs_after_the_optimizer_step_by_hand(gather):
    """``overlap_grad_reduce`` overlaps the reduce-scatters only; the all-gathers (5.776 ns at
    1000, 500 GB/s) follow the step unless ``overlap_param_gather``: 277.936 ns against 273.072
    ns. The evaluator, the LP and the formula agree."""
    p = params(**ZERO1, overlap_param_gather=gather)
    assert schedule(p).overlap_dp and schedule(p).overlap_gather == gather
    for bw in ([1000.0, 500.0], [400.0, 200.0]):
        inst, hand = _by_hand(p, bw)
        t = hieropt.evaluate(inst, bw).iteration_time_ns
        assert t == pytest.approx(hand, rel=1e-12)
        assert build_time_model(inst).time_ns(np.array(bw)) == pytest.approx(t, rel=1e-12)
    assert hieropt.evaluate(inst, [1000.0, 500.0]).iteration_time_ns == pytest.approx(
        273.072 if gather else 277.936, rel=1e-12)


@pytest.mark.parametrize("pp,batch", [(2, 16), (2, 2048)])
def test_pipelined_gathers_lp_and_evaluator_agree(pp, batch):
    """pp 2 timed by the schedule's graph (m = 4) and by the composition (m = 512): with the gathers
    hidden the iteration is the exposed one less stage 0's all-gathers plus its gathered first
    forward's excess (G_0 - f_0: here the embedding's and attn1's gathers); DP 2 on dimension 0,
    an all-gather of shard s takes s / B_0, 0.001 ns per byte at 1000 GB/s: the 1,440 shard bytes
    of stage 0 less the 256 + 200 of the embedding and attn1, 0.984 ns. The LP agrees with the
    evaluator at every bandwidth."""
    base = dict(ZERO1, pp=pp, dp=2, global_batch_size=batch)
    on, off = (instance_for(params(**base, overlap_param_gather=g), NET, COST) for g in (1, 0))
    for bw in ([1000.0, 500.0], [10.0, 0.5], [0.2, 3.0]):
        for inst in (on, off):
            truth = hieropt.evaluate(inst, bw).iteration_time_ns
            assert build_time_model(inst).time_ns(np.array(bw)) == pytest.approx(truth, rel=1e-9)
    bw = [1000.0, 500.0]
    st = build_step(params(**base))
    shard = sum(c.size_bytes for op in st.stages[0].ops for c in op.comms
                if c.kind == "ALLGATHER" and c.per_iteration)
    assert shard == 256 + 200 + 392 + 200 + 392  # (embed, attn1, mlp1, attn2, mlp2)
    assert on.jobs[0].mapping.groups["dp"] == (2, 1)
    gap = hieropt.evaluate(off, bw).iteration_time_ns - hieropt.evaluate(on, bw).iteration_time_ns
    assert gap == pytest.approx((1440 - 256 - 200) * 0.001, rel=1e-9)


def test_the_plan_rules_of_the_overlap_flags():
    """As Megatron-LM: the parameter all-gather overlap needs the distributed optimizer (ZeRO 1;
    hieropt's ZeRO 2 gathers after the step too) and ``overlap_grad_reduce``; ZeRO 3 points to
    ``overlap_sharded_comms``. The TP overlap needs sequence parallelism with tp > 1."""
    with pytest.raises(ValueError, match=r"overlap_param_gather: with zero_stage 0 .*fix: set "
                       r"zero_stage = 1"):
        params(**{**ZERO1, "zero_stage": 0}, overlap_param_gather=True)
    with pytest.raises(ValueError, match="zero_stage 3 .*fix: set overlap_sharded_comms = true"):
        params(**{**ZERO1, "zero_stage": 3}, overlap_param_gather=True)
    with pytest.raises(ValueError, match="fix: set overlap_grad_reduce = true"):
        params(**{**ZERO1, "overlap_grad_reduce": False}, overlap_param_gather=True)
    assert schedule(params(**{**ZERO1, "zero_stage": 2}, overlap_param_gather=True)).overlap_gather
    with pytest.raises(ValueError, match=r"plan.overlap_tp_comms: with tp 2 it needs "
                       r"sequence_parallel .*fix: set sequence_parallel = true"):
        params(tp=2, pp=1, dp=4, global_batch_size=16, overlap_tp_comms=True)
    params(tp=1, pp=1, dp=8, global_batch_size=16, overlap_tp_comms=True)  # (nothing to overlap)


def test_codesign_counts_the_tp_overlap_without_sp_invalid_and_drops_the_gather_flag():
    """A base plan with ``overlap_tp_comms``: the candidates without sequence parallelism at tp 2
    are invalid for the plan rule's reason (tp 1 with it is invalid for sequence parallelism's
    own); tp 1 without it and tp 2 with it stay. The base's ``overlap_param_gather``
    goes only to ZeRO 1/2 candidates (as ``overlap_sharded_comms`` to ZeRO 2/3 ones)."""
    base = params(tp=1, pp=1, dp=8, global_batch_size=16, overlap_tp_comms=True)
    e = enumerate_plans(base, 8, PlanChoices(tp=(1, 2), sequence_parallel=(False, True)))
    reason = ('plan.overlap_tp_comms: with tp 2 it needs sequence_parallel (Megatron-LM: "Tensor '
              'parallel communication/GEMM overlap can happen only when sequence parallelism is '
              'enabled"; the TP all-reduces without it are never overlapped)')
    assert e.invalid == {reason: 1, "plan.sequence_parallel: needs tp > 1 (it splits activations "
                         "over the TP group)": 1}
    assert len(e.fitting) == 2
    gathering = params(**ZERO1, overlap_param_gather=True)
    for z, kept in ((0, False), (1, True), (2, True), (3, False)):
        p = plan_params(gathering, 4, dict(tp=1, pp=1, virtual_stages=1, zero_stage=z))
        assert p.plan.overlap_param_gather is kept


def test_the_bound_counts_the_gathers_after_the_step():
    """The co-design volume bound: with ``overlap_grad_reduce`` the reduce-scatters may hide (weight
    0) but the all-gathers after the step count once (s (P - 1) each: the 1,444 shard bytes over 4
    NPUs, 4,332), unless ``overlap_param_gather``; the bound stays below the evaluated time."""
    off, on = params(**ZERO1), params(**ZERO1, overlap_param_gather=True)
    assert plan_volume_bytes(off, build_step(off)) == pytest.approx(1444 * 3)
    assert plan_volume_bytes(on, build_step(on)) == 0.0
    for p in (off, on):
        (t0, vol), = plan_time_bounds(p, build_step(p))
        bw = [300.0, 100.0]  # (sum 400 GB/s)
        assert t0 + vol / 400.0 <= hieropt.evaluate(instance_for(p, NET, COST), bw) \
            .iteration_time_ns


@pytest.mark.parametrize("gather", [False, True])
def test_the_traces_order_the_gathers_as_the_model(gather):
    """Stage 0's trace of a pp 2 plan: the all-gathers follow the optimizer step (its last compute
    node), or with ``overlap_param_gather`` come first, on their own stream, the first forward's
    compute of each layer waiting for its own."""
    inst = instance_for(params(**dict(ZERO1, pp=2, dp=2), overlap_param_gather=gather), NET, COST)
    job = inst.jobs[0]
    nodes = stage_trace(inst, job, sim_network(inst, [100.0, 100.0]), stage_workloads(inst, job),
                        0)
    ag = [n.id for n in nodes if n.kind == "coll" and n.comm_type == "ALL_GATHER"]
    assert len(ag) == 5  # (embed, attn1, mlp1, attn2, mlp2)
    last_comp = max(n.id for n in nodes if n.kind == "comp")
    if not gather:
        assert min(ag) > last_comp and ag == list(range(len(nodes) - 5, len(nodes)))
        return
    assert ag == [0, 1, 2, 3, 4] and nodes[1].deps == [0]
    first = next(n for n in nodes if n.kind == "comp")  # (attn1's forward: after two gathers)
    assert 1 in first.deps


def test_the_notes_of_plans_megatron_refuses_or_ignores():
    """Interleaved chunks that do not divide the layers (6 layers in pp 2 x v 2 = 4 chunks; 8 do)
    get the layout note; a delayed FP8 recipe under bf16 training gets a no-effect note."""
    p = params({"layers": 6}, tp=1, pp=2, dp=4, global_batch_size=16, schedule="interleaved",
               virtual_stages=2)
    assert any(n.startswith("pp 2 x virtual_stages 2 = 4 chunks do not divide the 6 layers")
               for n in plan_caveats(p))
    even = params({"layers": 8}, tp=1, pp=2, dp=4, global_batch_size=16, schedule="interleaved",
                  virtual_stages=2)
    assert not any("chunks do not divide" in n for n in plan_caveats(even))
    delayed = params().model_copy(update={"npu": params().npu.model_copy(
        update={"fp8_recipe": "delayed"})})
    assert any(n.startswith('fp8_recipe = "delayed" has no effect under bf16 training')
               for n in plan_caveats(delayed))
    assert not any("fp8_recipe" in n for n in plan_caveats(params()))
