"""Context parallelism (plan field ``cp``, group ``cp``; Llama 3's all-gather form): the K/V volume
per micro-batch and attention layer by hand, compute and TP messages split over the sequence,
gradients reduced over dp x cp, activations divided by cp, and a CP plan placed, timed and
solved."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.io.llm import read_llm
from hieropt.model.groups import instance_for, plan_groups
from hieropt.model.memory import memory
from hieropt.model.traffic import phase_traffic
from hieropt.spec import CostClass, CostModel, Dimension, Network
from hieropt.spec.space import constraint_for
from hieropt.workloads.llm import build_step
from hieropt.workloads.llm.comms import cp_kv_bytes

from .tiny import params

COST = CostModel(classes={"c": CostClass(link_usd_per_gbps=1.0)})


def _cp(**kw):
    return params(cp=2, dp=1, **kw)


def test_cp_volume_by_hand():
    """The tiny model, cp 2: each NPU holds 8 / 2 = 4 of the micro-batch's 8 tokens; its K and V are
    4 tokens x 2 (K and V) x 1 KV head (2 over tp 2) x head width 2 x 2 bytes = 32 B. Forward: an
    all-gather of that shard (each NPU sends (2 - 1) x 32 = 32 B); backward: the all-gather again
    and the reduce-scatter of the gradients (64 B, each NPU sending 32 B): 96 B sent per attention
    layer and micro-batch, as ring attention passes around."""
    p = _cp()
    assert cp_kv_bytes(p) == 32
    step = build_step(p)
    attn = next(op for op in step.stages[0].ops if op.kind == "attention")
    cp = [(c.kind, c.size_bytes, c.phase) for c in attn.comms if c.group == "cp"]
    assert cp == [
        ("ALLGATHER", 32, "forward"),
        ("ALLGATHER", 32, "input_grad"),
        ("REDUCESCATTER", 64, "input_grad"),
    ]
    sent = sum((2 - 1) * s if k == "ALLGATHER" else s * (2 - 1) / 2 for k, s, _ in cp)
    assert sent == 96
    # the TP all-reduces carry the NPU's 4 tokens (4 x 8 x 2 = 64 B, not 128 B), FLOPs are halved,
    # the gradients go over dp x cp = 2 NPUs
    assert [c.size_bytes for c in attn.comms if c.group == "tp"] == [64, 64]
    base = build_step(params(dp=2))
    assert step.compute_ns(0) == pytest.approx(tuple(x / 2 for x in base.compute_ns(0)))
    assert {c.group for op in step.stages[0].ops for c in op.comms if c.phase == "weight_grad"} == {
        "dpc"
    }
    assert step.group_sizes["dpc"] == 2


def test_cp_memory_is_split():
    """Activations per NPU halve with cp 2 (every sequence split); ZeRO 1 shards the optimizer state
    over dp x cp."""
    one, two = memory(params(dp=2)), memory(_cp())
    assert two.stages[0].activations_bytes == pytest.approx(one.stages[0].activations_bytes / 2)
    z1, z1cp = memory(params(dp=2, zero_stage=1)), memory(_cp(zero_stage=1))
    # dp 2 vs dp 1 x cp 2
    assert z1cp.stages[0].optimizer_bytes == pytest.approx(z1.stages[0].optimizer_bytes)


def test_cp_plan_is_placed_timed_and_solved():
    """tp 2 (dim 0), cp 2 (dim 1), pp 2 (dim 2) on Ring 2 x 2 x 2; the CP all-gather of 32 B puts 32
    B on dim 1."""
    p = _cp()
    assert plan_groups(p) == [("tp", 2), ("cp", 2), ("dp", 1), ("pp", 2)]
    net = Network(dims=tuple(Dimension(block="Ring", npus=2, cost_class="c") for _ in range(3)))
    inst = instance_for(p, net, COST, constraints=(constraint_for("sum(bw) == 3", 3),))
    assert inst.mapping.groups["cp"] == (1, 2, 1) and inst.mapping.groups["dpc"] == (1, 2, 1)
    t = phase_traffic(inst)
    w = inst.workload.table
    rows = [i for i in range(w.group.shape[0]) if w.group[i, 0] == "cp"]
    assert rows and all(t[i, 0].tolist() == [0.0, 32.0, 0.0] for i in rows)
    sol = hieropt.solve(inst)
    assert sol.success and sol.bw_gbps[1] > 0
    assert hieropt.evaluate(inst, sol.bw_gbps).iteration_time_ns == pytest.approx(
        sol.iteration_time_ns, rel=1e-9
    )
    assert np.isfinite(sol.iteration_time_ns)


def test_cp_must_split_the_sequence():
    with pytest.raises(ValueError, match="plan.cp: sequence_length 4 is not divisible by cp 3"):
        params(cp=3, dp=1)
    with pytest.raises(
        InputError, match=r"plan.npus: tp x cp x pp x dp = 8 x 2 x 8 x 64 = 8192 is not the 4096"
    ):
        read_llm("models/gpt3-175b-llm.toml", ["cp=2"])
