"""Figures of one plan (what `hieropt workload plan` prints): hand-computed on the tiny model of
test_llm_block."""

from __future__ import annotations

import json

import pytest

from hieropt.model.plan import plan_figures

from .tiny import params


def test_collectives_per_group_on_the_last_stage():
    fig = plan_figures(params())
    got = {
        (c["group"], c["collective"], c["phase"]): (c["count"], c["bytes"])
        for c in fig.collectives(1)
    }
    # 2 blocks x (attention, FFN) all-reduce 128 B forward and input gradient; the output layer's
    # input gradient
    assert got[("tp", "ALLREDUCE", "forward")] == (4, 512)
    assert got[("tp", "ALLREDUCE", "input_grad")] == (5, 640)
    # DP all-reduce per iteration: 2 x (104 + 200) params + output 136 = 744 params x 4 bytes (bf16
    # training's FP32 reduction)
    assert got[("dp", "ALLREDUCE", "weight_grad")] == (5, 2976)
    # the pipeline send scatter-gathered over tp 2: n h e / t = 64 B each, the received 64 B shard
    # all-gathered over TP in the forward
    assert got[("pp", "P2P", "input_grad")] == (1, 64)
    assert got[("tp", "ALLGATHER", "forward")] == (1, 64)
    # per iteration: m = 4 micro-batches x per-micro-batch bytes + per-iteration bytes
    assert fig.group_totals(1) == {"tp": 4 * (512 + 640 + 64), "dp": 2976, "pp": 4 * 64}


def test_compute_figures():
    c = plan_figures(params()).compute()
    assert c["slowest_stage"] == 1
    # stage 1 per micro-batch: 12288 forward, 13312 + 11264 backward FLOPs at 1 FLOP/ps
    fb = 12.288 + 24.576
    assert c["iteration_compute_ns"] == pytest.approx(4 * fb)
    # the fill and drain at each stage's pace: (sum of the stages' slots - the slowest) / v, here
    # stage 0's 30.72 ns (no output layer: 10240 forward, 20480 backward FLOPs)
    assert c["bubble_ns"] == pytest.approx(10.24 + 20.48)
    v2 = plan_figures(params(schedule="interleaved", virtual_stages=2)).compute()
    assert v2["bubble_ns"] == pytest.approx((10.24 + 20.48) / 2)


def test_json_keys():
    d = json.loads(json.dumps(plan_figures(params()).as_dict()))
    assert set(d) == {"model", "parameters", "model_flops_per_iteration", "plan", "precision",
                      "memory", "compute", "collectives"}
    assert set(d["memory"]["peak"]) == {
        "stage",
        "weights_bytes",
        "gradients_bytes",
        "optimizer_bytes",
        "activations_bytes",
        "total_bytes",
        "in_flight",
    }
    assert [s["stage"] for s in d["memory"]["stages"]] == [0, 1]
    assert d["plan"]["microbatches"] == 4
