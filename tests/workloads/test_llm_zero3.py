"""ZeRO stage 3 (parameters sharded over the data-parallel group; Rajbhandari et al. 2020, arXiv
1910.02054) on two nodes of two NPUs, by hand: every micro-batch all-gathers each layer's
parameter shard before the forward and again before the backward and reduce-scatters its
gradients; hierarchically (the LLM default, ``sequential``), each NPU moves the gathered
parameters over the fast in-node dimension and only its node's share over the slow one (the
node's NICs carry the other node's half once, spread over its NPUs)."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.model.groups import instance_for
from hieropt.model.traffic import phase_traffic
from hieropt.spec import CostClass, CostModel, Dimension, Network

from .tiny import params

COST = CostModel(classes={"c": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0,
                                         nic_usd_per_gbps=1.0)})
NET = Network(dims=(Dimension(block="Switch", npus=2, cost_class="c"),  # in a node (NVLink)
                    Dimension(block="Switch", npus=2, cost_class="c")))  # 2 nodes (InfiniBand)
BW = [300.0, 25.0]  # GB/s per NPU and direction: DGX A100's NVLink, its NPU's share of the NICs


def _zero3(**kw):
    return params(tp=1, pp=1, dp=4, zero_stage=3, global_batch_size=8, **kw)  # m = 8 / (4 x 2)


def test_zero3_gather_bytes_and_time_by_hand():
    """An attention layer of the tiny model has 200 parameters: shard S = 200 x 2 B / 4 = 100 B,
    gradients G = 200 x 4 B = 800 B (bf16 training's FP32 reduction). All-gather (descending
    dimensions): over the nodes each NPU sends its shard once, 100 B, then inside the node the
    node's 200 B, 200 B; the reduce-scatter (ascending) 800 x 1/2 = 400 B inside the node, then
    400 x 1/2 = 200 B between the nodes. An all-gather takes 200 / 300 + 100 / 25 = 4.667 ns at
    (300, 25) GB/s one dimension after the other, the reduce-scatter twice that, 18.667 ns per
    micro-batch for the three."""
    inst = instance_for(_zero3(), NET, COST)
    assert inst.mapping.groups["dp"] == (2, 2)
    w = inst.workload.table
    t = phase_traffic(inst)
    rows = [i for i, layer in enumerate(inst.workload.layers) if layer.name.startswith("attn1")]
    got = [(str(w.collective[i, j].value), w.size_bytes[i, j], t[i, j].tolist())
           for i in rows for j in range(3) if w.group[i, j] == "dp"]
    assert [k for k, _, _ in got] == ["ALLGATHER", "ALLGATHER", "REDUCESCATTER"]
    assert [(s, m) for _, s, m in got] == [(100.0, [200.0, 100.0]), (100.0, [200.0, 100.0]),
                                         (800.0, [400.0, 200.0])]
    each = 200 / 300 + 100 / 25
    assert each == pytest.approx(4.6667, abs=1e-4)
    fast = hieropt.evaluate(inst, [1e15, 1e15]).iteration_time_ns  # (collectives take no time)
    total = hieropt.evaluate(inst, BW).iteration_time_ns
    # every layer: shards 128 B (embedding 32 x 8 params), 100 B (attention), 196 B (FFN), 128 B
    # (output layer) and its final norm (8 params: 4 B); two all-gathers of S x (2 / 300 + 1 / 25)
    # ns each per micro-batch and the reduce-scatter of G = 4 S, 2 S x (2 / 300 + 1 / 25) ns
    shards = 128 + 4 * 100 + 4 * 196 + 128 + 4
    assert total - fast == pytest.approx(4 * shards * (2 / 300 + 1 / 25), rel=1e-6)


def test_zero3_time_does_not_shrink_with_more_nodes():
    """Twice the nodes at the same micro-batch size: every NPU still gathers every parameter once
    per pass, so its bytes per micro-batch do not shrink: over the nodes they grow from (2 - 1) x
    100 B to (4 - 1) x 50 B (the shard halves, the peers triple), inside the node they stay at
    the node's 200 B."""
    two = instance_for(_zero3(), NET, COST)
    net4 = Network(dims=(NET.dims[0], Dimension(block="Switch", npus=4, cost_class="c")))
    four = instance_for(params(tp=1, pp=1, dp=8, zero_stage=3, global_batch_size=16), net4, COST)
    t2, t4 = phase_traffic(two), phase_traffic(four)
    i2 = [layer.name for layer in two.workload.layers].index("attn1")
    i4 = [layer.name for layer in four.workload.layers].index("attn1")
    # the 200 x 2 = 400 B layer's all-gather: 2 nodes: 100 B over the nodes; 4: shard 50 B, 150 B
    assert t2[i2, 0].tolist() == [200.0, 100.0] and t4[i4, 0].tolist() == [200.0, 150.0]
    assert np.all(t4[i4, 0] >= t2[i2, 0])
