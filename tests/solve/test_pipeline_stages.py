"""A pipelined workload's stages (hieropt.spec.Workload.more_stages): without their pipeline
positions the iteration time is the slowest stage's (each as if every stage were it), with them the
1F1B schedule composes them (hieropt.model.pipeline). Hand-computed answers for two stages where the
stage with less compute is the bottleneck at low bandwidth and the one with more compute at high
bandwidth, the single-stage answer (the stage with the most compute alone) shown wrong there, and
a shipped model's plan (Llama 3 70B with uneven stages) where the stage with the most compute is
not the slowest at the optimum.

The two stages (loop ``step``, m = 3 micro-batches, p = 2 stages: F = m + p - 1 = 4 slots; 2 x
FullyConnected 2, tp on dimension 0, pp on dimension 1; 1 GB/s = 1 byte/ns; every size x 1e6):

- H (heavy): forward compute 60 ms, a tp all-reduce of 20 MB (2 c (p - 1)/p = 20 MB on dimension 0),
  one pipeline send of 10 MB (dimension 1): T_H = F (60 + 20/B0 + 10/B1) ms with B in GB/s and sizes
  in MB;
- L (light, a middle stage): forward compute 40 ms, the same all-reduce and two sends of 10 MB:
  T_L = F (40 + 20/B0 + 20/B1).

T_L > T_H exactly when 10/B1 > 20, i.e. B1 < 0.5 GB/s. Under sum(bw) == S:

- H alone is minimised at B0/B1 = sqrt(20/10): T_H* = F (60 + (sqrt 20 + sqrt 10)^2 / S), where B1 =
  S/(1 + sqrt 2), below 0.5 for S < 1.207: counting the stage with the most compute only is wrong
  there;
- L alone at B0 = B1 = S/2: T_L* = F (40 + 80/S), where T_L > T_H for S < 1;
- so for S <= 1 the optimum is L's (S = 0.5: B = (0.25, 0.25), T = 4 x 200 = 800 ms), for S >= 1.207
  H's (S = 10: T = 4 (60 + 5.8284) ms), and in between on the tie B1 = 0.5 (S = 1.1: B = (0.6, 0.5),
  T = 4 (60 + 20/0.6
  + 20) = 453.33 ms).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import hieropt
from hieropt import SolveOptions
from hieropt.io.llm import read_llm
from hieropt.model.groups import instance_for
from hieropt.model.timing import build_time_model
from hieropt.spec import (
    Dimension,
    Network,
    StepSchedule,
)
from hieropt.spec.space import constraint_for
from hieropt.workloads.llm.lower import bottleneck_stage, distinct_stages
from hieropt.workloads.llm.step import build_step
from tests.solve.stages import (
    AR,
    COST,
    LIGHT,
    MB,
    MS,
    SEND,
    parts,
    schedule_graph_ns,
    slots,
    stage_layer,
    three_stages,
    two_stages,
)

ROOT = Path(__file__).resolve().parents[2]
F = 4


def test_the_evaluator_takes_the_slowest_stage_by_hand():
    inst = two_stages(10.0)
    # B1 < 0.5: the light stage with its two sends is the slowest
    low = hieropt.evaluate(inst, [1.0, 0.25])
    assert low.stage_times_ns == {
        "H": pytest.approx(F * 120 * MS, rel=1e-14),
        "L": pytest.approx(F * 140 * MS, rel=1e-14),
    }
    assert low.iteration_time_ns == pytest.approx(560 * MS, rel=1e-14) and low.slowest_stage == "L"
    # with free communication H is the slowest (F x 60 ms): compute m x 60 ms, bubble (F - m) x 60
    # ms, the rest exposed communication
    assert low.compute_ns == pytest.approx(3 * 60 * MS, rel=1e-14)
    assert low.bubble_ns == pytest.approx((F - 3) * 60 * MS, rel=1e-14)
    assert low.communication_ns == pytest.approx((560 - 240) * MS, rel=1e-14)
    # m = 3 x (20, 2 x 10)
    assert low.bytes_per_dim.tolist() == pytest.approx([3 * 20 * MB, 3 * 20 * MB], rel=1e-14)
    high = hieropt.evaluate(inst, [1.0, 1.0])  # B1 > 0.5: the heavy stage
    assert (
        high.iteration_time_ns == pytest.approx(F * 90 * MS, rel=1e-14)
        and high.slowest_stage == "H"
    )
    assert high.stage_times_ns["L"] == pytest.approx(F * 80 * MS, rel=1e-14)
    assert high.to_dict()["slowest_stage"] == "H" and set(high.to_dict()["stage_times_ns"]) == {
        "H",
        "L",
    }
    alone = hieropt.evaluate(two_stages(10.0, ()), [1.0, 0.25])
    assert (
        alone.iteration_time_ns == pytest.approx(480 * MS, rel=1e-14) and alone.stage_times_ns == {}
    )


def test_the_light_stage_is_the_bottleneck_at_low_bandwidth():
    sol = hieropt.solve(two_stages(0.5))
    assert sol.success and sol.gap <= 1e-8
    # L's own optimum, T_L* = F (40 + 80/S)
    assert sol.iteration_time_ns == pytest.approx(F * 200 * MS, rel=1e-9)
    assert sol.bw_gbps.tolist() == pytest.approx([0.25, 0.25], rel=1e-6)
    assert sol.breakdown.slowest_stage == "L"
    # the stage with the most compute alone claims far less ...
    old = hieropt.solve(two_stages(0.5, ()))
    r2 = 1 + math.sqrt(2)
    assert old.iteration_time_ns == pytest.approx(
        F * (60 + (math.sqrt(20) + math.sqrt(10)) ** 2 / 0.5) * MS, rel=1e-9
    )
    assert old.bw_gbps.tolist() == pytest.approx([0.5 * math.sqrt(2) / r2, 0.5 / r2], rel=1e-6)
    # ... than its bandwidths give
    truth = hieropt.evaluate(two_stages(0.5), old.bw_gbps).iteration_time_ns
    assert truth == pytest.approx(
        F * (40 + 20 / (0.5 * math.sqrt(2) / r2) + 20 / (0.5 / r2)) * MS, rel=1e-9
    )
    assert old.iteration_time_ns < sol.iteration_time_ns < truth  # 706.27 < 800 < 819.41 ms


def test_the_heavy_stage_is_the_bottleneck_at_high_bandwidth():
    sol = hieropt.solve(two_stages(10.0))
    r2 = 1 + math.sqrt(2)
    assert sol.success and sol.gap <= 1e-8
    assert sol.iteration_time_ns == pytest.approx(
        F * (60 + (math.sqrt(20) + math.sqrt(10)) ** 2 / 10) * MS, rel=1e-9
    )
    assert sol.bw_gbps.tolist() == pytest.approx([10 * math.sqrt(2) / r2, 10 / r2], rel=1e-6)
    assert sol.breakdown.slowest_stage == "H"
    assert sol.iteration_time_ns == pytest.approx(
        hieropt.solve(two_stages(10.0, ())).iteration_time_ns, rel=1e-9
    )


def test_between_the_two_the_optimum_is_on_the_tie():
    sol = hieropt.solve(two_stages(1.1))
    assert sol.success and sol.gap <= 1e-8
    assert sol.bw_gbps.tolist() == pytest.approx([0.6, 0.5], rel=1e-6)  # T_H = T_L where 10/B1 = 20
    assert sol.iteration_time_ns == pytest.approx(F * (60 + 20 / 0.6 + 20) * MS, rel=1e-9)
    times = sol.breakdown.stage_times_ns
    assert times["H"] == pytest.approx(times["L"], rel=1e-6)


def test_every_objective_sees_the_slowest_stage():
    inst = two_stages(10.0, sense="<=")
    bound = hieropt.solve(
        inst, objective="min_cost", options=SolveOptions(max_iteration_time_ns=900 * MS)
    )
    # the cheapest network with T <= 900 ms: min B0 + B1 s.t. 20/B0 + 20/B1 <= 900/F - 40 (L binds),
    # so B0 = B1 = b = 40/185; H then takes F (60 + 30/b) = 4 x 198.75 = 795 ms < 900
    b = 40 / (900 / F - 40)
    assert bound.success and bound.iteration_time_ns == pytest.approx(900 * MS, rel=1e-8)
    # 4 NPUs x $1 per GB/s x (b + b)
    assert bound.network_cost_usd == pytest.approx(4 * 2 * b, rel=1e-7)
    assert hieropt.verify(inst, bound.bw_gbps, bound.iteration_time_ns).ok


def test_the_time_model_is_one_max_node_over_the_stages():
    tm = build_time_model(two_stages(1.0))
    # T = F (40 + 20/B0 + 10/B1) + max(F 20, F 10/B1) ms: what both stages share is linear, the max
    # node holds what differs (H: 20 ms more compute; L: one send more)
    assert tm.constant_ns == pytest.approx(F * 40 * MS, rel=1e-15)
    assert len(tm.nodes) == 1 and tm.node_weights.tolist() == [1.0]
    (h, lt), = [sorted(tm.nodes[0], key=lambda p: -p.const_ns)]
    assert (
        h.const_ns == pytest.approx(F * 20 * MS, rel=1e-15) and h.terms == () and lt.const_ns == 0.0
    )
    (k, a), = lt.terms
    assert (a * tm.terms_bytes[k]).tolist() == pytest.approx([0.0, F * 10 * MB], rel=1e-15)
    for bw in ([1.0, 0.25], [1.0, 1.0], [0.3, 0.7]):
        assert tm.time_ns(np.array(bw)) == pytest.approx(
            hieropt.evaluate(two_stages(1.0), bw).iteration_time_ns, rel=1e-14
        )
    single = build_time_model(two_stages(1.0, ()))
    assert not single.nodes  # one stage: the single-stage model, unchanged
    # a stage at least another in every entry (L' = H and one more send) is the slowest at every
    # bandwidth: H drops out of the max and the model is linear
    slow = LIGHT.model_copy(
        update={"layers": (stage_layer("l0", 60 * MS, AR, SEND), stage_layer("l1", 0.0, SEND))}
    )
    dominated = build_time_model(two_stages(1.0, (slow,)))
    assert not dominated.nodes
    assert dominated.time_ns(np.array([1.0, 0.25])) == pytest.approx(
        F * (60 + 20 + 80) * MS, rel=1e-14
    )


# --------------------------------------------------------------------------- a shipped model's plan
def _llama_uneven():
    """Llama 3 70B (models/llama3-70b.toml: TP 8 x PP 4 x DP 128, 4,096 H100s) with stages of 18,
    21, 21 and 20 blocks, on FullyConnected 8 x Ring 8 x Switch 64 with 500 GB/s per NPU and LIBRA's
    4-D prices: the last stage (20 blocks and the 128,256-token output layer, 1.06 blocks of
    compute) has the most compute; a middle stage (21 blocks, a send each way) has 0.1 % less but
    one block's tensor-parallel collectives and a send more."""
    # the flat compute model (989 TFLOP/s at efficiency 0.40) the numbers below were computed with
    flat = ["peak_tflops=989.0", "efficiency=0.40", "flash_attention=false"]
    p = read_llm(ROOT / "models/llama3-70b.toml", ["stage_layers=[18,21,21,20]", *flat])
    cost = hieropt.load_instance(ROOT / "instances/gpt3-plan-4d.toml").cost
    net = Network(dims=(Dimension(block="FullyConnected", npus=8, cost_class="InterPackage"),
                        Dimension(block="Ring", npus=8, cost_class="InterNode"),
                        Dimension(block="Switch", npus=64, cost_class="InterPod")))
    cons = (constraint_for("sum(bw) == 500", 3),)
    return (
        p,
        instance_for(p, net, cost, constraints=cons),
        instance_for(p, net, cost, constraints=cons, stage=3),
    )


@pytest.mark.heavy
def test_a_shipped_plan_whose_slowest_stage_has_less_compute():
    p, inst, heavy = _llama_uneven()
    step = build_step(p)
    assert bottleneck_stage(step) == 3 and distinct_stages(step) == (3, 0, 1)
    assert [w.name for w in inst.workload.stages] == [
        "llama3-70b-stage3",
        "llama3-70b-stage0",
        "llama3-70b-stage1",
    ]
    compute = [sum(step.compute_ns(r)) for r in range(4)]
    assert compute[3] > compute[1] > compute[0]  # 337.78 > 337.43 > 289.23 ms per micro-batch
    sol, old = hieropt.solve(inst), hieropt.solve(heavy)
    assert sol.success and old.success and sol.gap <= 1e-8
    assert sol.breakdown.slowest_stage == "llama3-70b-stage1"
    truth = hieropt.evaluate(inst, old.bw_gbps)  # single-stage bandwidths, every stage counted
    assert truth.slowest_stage == "llama3-70b-stage1"
    # the single-stage optimum (stage 3 alone, every stage as it: (m + p - 1) slots of it) claims
    # 7,782.51 ms; its bandwidths give 7,742.08 ms by the schedule's graph (fill and drain at each
    # stage's pace); the optimum is 7,741.47 ms (with bf16's FP32 gradients; 7,695.98, 7,661.05 and
    # 7,660.43 ms with 2-byte ones)
    assert old.iteration_time_ns == pytest.approx(7782.512e6, rel=1e-6)
    assert truth.iteration_time_ns == pytest.approx(7742.081e6, rel=1e-6)
    assert sol.iteration_time_ns == pytest.approx(7741.472e6, rel=1e-6)
    assert sol.iteration_time_ns < truth.iteration_time_ns < old.iteration_time_ns
    # at the optimum each stage as if every stage were it (docs/how-to/llm-plans.md): the middle
    # stage 1 above the last stage 3, both above the composed iteration time
    stages = sol.breakdown.stage_times_ns
    assert stages["llama3-70b-stage3"] == pytest.approx(7783.141e6, rel=1e-6)
    assert stages["llama3-70b-stage1"] == pytest.approx(7823.587e6, rel=1e-6)
    # no random design on the budget beats the certified optimum
    rng = np.random.default_rng(0)
    designs = np.vstack([rng.dirichlet(np.ones(3), 2000) * 500,
                         sol.bw_gbps + rng.normal(0.0, 0.5, (2000, 3)) * np.array([1.0, 1.0, 0.0])])
    designs[2000:, 2] = 500 - designs[2000:, 0] - designs[2000:, 1]
    designs = designs[(designs > 0).all(axis=1)]
    best = min(hieropt.evaluate(inst, b).iteration_time_ns for b in designs)
    assert best >= sol.lower_bound_ns * (1 - 1e-12)


def test_a_copy_with_other_layers_is_checked_afresh():
    """Found here (merging main): ``Workload.mapping_mismatch`` kept its memo under the name of the
    method it calls (``_mixed_scopes``), and a copy with other layers (``model_copy`` keeps the
    instance dict) then called the kept tuple ("'tuple' object is not callable"); the test above
    builds such a copy of a checked stage."""
    sizes = {"tp": (2, 1), "pp": (1, 2)}
    assert LIGHT.mapping_mismatch(sizes) is None
    other = LIGHT.model_copy(update={"layers": (stage_layer("l0", 1.0, AR, SEND),)})
    assert other.mapping_mismatch(sizes) is None


# --------------------------------------------------------------- the exact 1F1B composition by hand
def test_1f1b_schedule_of_three_stages_by_hand():
    """At B = (100, 50) GB/s: f = (6,000,100, 3,000,150, 12,000,050) ns, b = (6,000,500, 3,000,600,
    130) ns, W_0 = 16,000,000 ns, m = 4. Stage 2 is the slowest (t_2 = 12,000,180 ns), so the
    critical path carries the first micro-batch forward through stages 0 and 1, then all of stage
    2's 8 operations back to back, then the last micro-batch's backward through stages 1 and 0: T =
    f_0 + f_1 + m t_2
    + b_1 + b_0 + W_0 = 9,000,250 + 48,000,720 + 9,001,100 + 16,000,000 = 82,002,070 ns. The
      composition
    sum_r t_r + (m
    - 1) max t_r
    + W_0 gives 82,003,330 ns (the last stage's slot counted once too often: its forward and
      backward of the
    first micro-batch are in its 8 operations), the former (m + p - 1) x the slowest slot 6 x
    12,000,600 + 16,000,000 = 88,003,600 ns (the fill and drain at stage 0's pace)."""
    inst = three_stages()
    assert hieropt.evaluate(inst, [100.0, 50.0]).iteration_time_ns == pytest.approx(
        82_002_070.0, rel=1e-14
    )
    assert build_time_model(inst).time_ns(np.array([100.0, 50.0])) == pytest.approx(
        82_002_070.0, rel=1e-14
    )
    f, b = parts(100.0)
    assert schedule_graph_ns(f, b, 4) + 16e6 == pytest.approx(82_002_070.0, rel=1e-14)
    old = inst.model_copy(
        update={"workload": inst.workload.model_copy(update={"pipeline_stages": ()})}
    )
    assert hieropt.evaluate(old, [100.0, 50.0]).iteration_time_ns == pytest.approx(
        88_003_600.0, rel=1e-14
    )


@pytest.mark.parametrize("m, v", [(4, 1), (6, 1), (3, 2)])
def test_schedule_time_and_its_optimum(m: int, v: int):
    """1F1B: the schedule's graph (:func:`schedule_graph_ns`) + W_0; interleaved (v = 2): (1/v)
    sum_r t_r + (m - 1/v) max_r t_r + W_0; at several points, and the certified optimum under
    sum(bw) == 150 equals a ternary search along the budget line (T is convex)."""
    inst = three_stages(m=m, v=v)
    tm = build_time_model(inst)

    def f(b0: float) -> float:
        t, w = slots(b0, 150.0 - b0)
        if v == 1:
            return schedule_graph_ns(*parts(b0), m) + w
        return sum(t) / v + (m - 1 / v) * max(t) + w

    for b0 in (5.0, 75.0, 140.0):
        assert hieropt.evaluate(inst, [b0, 150 - b0]).iteration_time_ns == pytest.approx(
            f(b0), rel=1e-13
        )
        assert tm.time_ns(np.array([b0, 150 - b0])) == pytest.approx(f(b0), rel=1e-13)
    lo, hi = 1e-9, 150.0 - 1e-9
    for _ in range(300):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        lo, hi = (lo, b) if f(a) <= f(b) else (a, hi)
    sol = hieropt.solve(inst)
    assert sol.success and sol.iteration_time_ns == pytest.approx(f((lo + hi) / 2), rel=1e-8)


def test_equal_stages_give_narayanan():
    """Four stages whose middle two are one entry, all with equal forward and backward: the schedule
    takes Narayanan et al.'s (m + p - 1) (f + b), and with W_0 the tail."""
    inst = three_stages(ids=((0,), (1, 2), (3,)))
    inst = inst.model_copy(update={"step": StepSchedule(microbatches=4, stages=4)})
    f, b = parts(100.0)
    want = schedule_graph_ns([f[0], f[1], f[1], f[2]], [b[0], b[1], b[1], b[2]], 4) + 8e8 / 50.0
    assert hieropt.evaluate(inst, [100.0, 50.0]).iteration_time_ns == pytest.approx(want, rel=1e-14)
    assert schedule_graph_ns([3.0] * 4, [5.0] * 4, 6) == pytest.approx((6 + 4 - 1) * 8.0)


@pytest.mark.parametrize("case", ["three", "three-overlap", "three-v2", "plan-overlap", "plan"])
def test_the_cut_model_composes_the_same(monkeypatch, case: str):
    """The cutting-plane model of large workloads (hieropt/model/slopes.py) states the composition
    too: each piece equals T at its point and lies below it elsewhere, and its optimum is the dense
    model's."""
    from hieropt.model.cutmodel import cut_model
    from hieropt.model.slopes import supported
    from hieropt.solvers import objectives
    from tests.workloads.tiny import params

    if case.startswith("three"):
        inst = three_stages(m=4, v=2 if case == "three-v2" else 1, overlap=case == "three-overlap")
    else:
        p = params(pp=4, dp=1, stage_layers=(1, 1, 1, 1), global_batch_size=16,
                   overlap_grad_reduce=case == "plan-overlap")
        net = Network(dims=(Dimension(block="FullyConnected", npus=2, cost_class="C"),
                            Dimension(block="Ring", npus=4, cost_class="C")))
        inst = instance_for(p, net, COST, constraints=(constraint_for("sum(bw) == 30", 2),))
    cm = cut_model(inst)
    rng = np.random.default_rng(1)
    points = rng.uniform(0.5, 100.0, (6, inst.network.n_dims))
    for b in points:
        c, g = cm.piece(b)
        assert c + float(g @ (1.0 / b)) == pytest.approx(
            hieropt.evaluate(inst, b).iteration_time_ns, rel=1e-12
        )
        for other in points:
            assert c + float(g @ (1.0 / other)) <= hieropt.evaluate(
                inst, other
            ).iteration_time_ns * (1 + 1e-12)
    dense = hieropt.solve(inst)
    with monkeypatch.context() as m:
        m.setattr(objectives, "prefers_cuts", supported)
        cuts = hieropt.solve(inst)
    assert dense.success and cuts.success
    assert cuts.iteration_time_ns == pytest.approx(dense.iteration_time_ns, rel=1e-7)
