"""1F1B with fewer micro-batches than pipeline stages runs, as Megatron-LM's non-interleaved
schedule runs it (min(p - r - 1, m) warm-up forwards on stage r): timed by the schedule's graph,
checked here by hand for p = 3, m = 2; the interleaved schedule still needs m >= p."""

from __future__ import annotations

import pytest

import hieropt
from hieropt.model.groups import instance_for
from hieropt.spec import CostClass, CostModel, Dimension, Network
from hieropt.workloads.llm import build_step

from .tiny import params

COST = CostModel(classes={"c": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0,
                                         nic_usd_per_gbps=0.0)})


def test_1f1b_with_two_micro_batches_on_three_stages_by_hand():
    # the tiny model's 4 blocks on pp 3 (tp 1, dp 1), a global batch of 2 sequences of micro-batch
    # 1: m = 2 < p = 3
    p = params(tp=1, pp=3, dp=1, micro_batch_size=1, global_batch_size=2)
    step = build_step(p)
    # a block's forward: QKV 2 s h (q + 2 kv) = 2 x 4 x 8 x (8 + 8) = 1,024 FLOPs, scores and
    # values 2 x 2 s^2 q = 512, output 2 s q h = 512, gated FFN 3 x 2 s h f = 3,072: 5,120 FLOPs,
    # 5.12 ns at 1 TFLOP/s; the output layer 2 s h V = 2 x 4 x 8 x 32 = 2,048 FLOPs, 2.048 ns;
    # stages of 1, 2 and 1 blocks (the output layer on the last); backward 2 x forward
    f, b = [5.12, 10.24, 7.168], [10.24, 20.48, 14.336]
    for r in range(3):
        fwd = sum(op.compute_ns[0] if op.compute_ns else op.flops[0] / p.npu.flops_per_ns
                  for op in step.stages[r].ops)
        assert fwd == pytest.approx(f[r], rel=1e-12)
        assert sum(step.compute_ns(r)) - fwd == pytest.approx(b[r], rel=1e-12)
    # Megatron-LM's order: stage 0 F1 F2 B1 B2 (2 warm-up forwards), stage 1 F1 F2 B1 B2 (1), stage
    # 2 F1 B1 F2 B2 (none); each operation after the stage's previous one and its dependency:
    # S0F2 = 10.24, S1F1 = 15.36, S1F2 = 25.6, S2F1 = 22.528, S2B1 = 36.864, S2F2 = 44.032,
    # S2B2 = 58.368, S1B1 = 57.344, S1B2 = 78.848, S0B1 = 67.584, S0B2 = 78.848 + 10.24 = 89.088
    s1f1, s0f2 = f[0] + f[1], 2 * f[0]
    s1f2 = max(s1f1, s0f2) + f[1]
    s2b1 = s1f1 + f[2] + b[2]
    s2b2 = max(s2b1, s1f2) + f[2] + b[2]
    s1b1 = max(s1f2, s2b1) + b[1]
    s1b2 = max(s1b1, s2b2) + b[1]
    s0b2 = max(max(s0f2, s1b1) + b[0], s1b2) + b[0]
    assert s0b2 == pytest.approx(89.088, rel=1e-12)
    assert step.update_ns(0) == 0  # (no HBM bandwidth given: no optimizer time)
    inst = instance_for(p, Network(dims=(Dimension(block="Switch", npus=3, cost_class="c"),)),
                        COST)
    # at 1e9 GB/s per NPU the pipeline sends take fractions of a ps
    assert hieropt.evaluate(inst, [1e9]).iteration_time_ns == pytest.approx(89.088, rel=1e-8)
    # the closed composition, sum t + (m - 1) max t = 67.584 + 30.72 = 98.304 ns, is above it:
    # the middle stage is the slowest (exact only when the last one is)
    t = [x + y for x, y in zip(f, b, strict=True)]
    assert sum(t) + max(t) == pytest.approx(98.304, rel=1e-12)


def test_the_interleaved_schedule_still_needs_as_many_micro_batches_as_stages():
    with pytest.raises(ValueError) as e:
        params(arch={"layers": 8}, tp=1, pp=4, dp=1, micro_batch_size=1, global_batch_size=2,
               schedule="interleaved", virtual_stages=2)
    assert ("plan.global_batch_size: 2 micro-batches per iteration are fewer than the 4 pipeline "
            "stages (Megatron-LM's interleaved schedule needs m >= pp; 1f1b runs them); fix: "
            "lower pp or micro_batch_size, raise the global batch to >= 4, or use the 1f1b "
            "schedule") in str(e.value)
