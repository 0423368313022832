"""An LLM stage as a hieropt workload, the placement of its groups on network dimensions, and today's instance:
hand-computed iteration times through hieropt's independent evaluator."""

from __future__ import annotations

import pytest

from hieropt.errors import InputError
from hieropt.model.groups import place_lowest, placements, spec_parts
from hieropt.model.timing import evaluate
from hieropt.spec import CostClass, CostModel, Dimension, Instance, Network
from hieropt.workloads.llm import MoE, build_step
from hieropt.workloads.llm.lower import bottleneck_stage, fold_microbatches, lower_stage

from .tiny import params


def test_lowered_layers_and_groups():
    low = lower_stage(build_step(params(sequence_parallel=True, zero_stage=1)), 0)
    names = [x.name for x in low.workload.layers]
    # ZeRO 1: every layer's weight gradient holds RS + AG over dp; attn1: forward all-gather + reduce-scatter,
    # input gradient 3 TP collectives
    assert names[:5] == ["embed", "embed+1", "attn1", "attn1+1", "attn1+2"]
    assert low.groups[2:5] == (("tp", "tp", "dp"), ("tp", "tp", "dp"), (None, "tp", None))
    a, a1 = low.workload.layers[2], low.workload.layers[3]
    assert (a.forward.compute_ns, a1.forward.compute_ns) == (pytest.approx(2.048), 0.0)
    assert (a.forward.collective.value, a1.forward.collective.value) == ("ALLGATHER", "REDUCESCATTER")
    assert low.p2p_bytes == (64.0, 0.0)  # stage 0 sends n h e / t forward only
    assert low.workload.header.model_parallel_npu_group == 2
    assert bottleneck_stage(build_step(params())) == 1  # the output layer's 3 x 2048 FLOPs


def test_fold_keeps_iteration_collectives_once():
    low = lower_stage(build_step(params(pp=1, dp=4)))
    w = fold_microbatches(low)
    assert len(w.layers) == 2 * len(low.workload.layers)
    assert w.layers[0].name == "embed@1"
    wg = [x.weight_grad.size_bytes for x in w.layers]
    assert sum(wg) == sum(x.weight_grad.size_bytes for x in low.workload.layers)


def _instance(network, parts) -> Instance:
    workload, mapping, loop, pipe = parts
    cost = CostModel(classes={"c": CostClass(link_usd_per_gbps=1.0)})
    return Instance(name="t", network=network, workload=workload, mapping=mapping, cost=cost,
                    objective="performance", training_loop=loop, pipeline=pipe)


def _net(*sizes):
    return Network(dims=tuple(Dimension(block="Ring", npus=n, cost_class="c") for n in sizes))


def test_pipeline_plan_hand_computed_time():
    """TP 2 (dim 0) x DP 2 (dim 1) x PP 2 (dim 2), 1 GB/s everywhere: the last stage (bottleneck) per slot:
    compute 36.864 ns (12288 + 13312 + 11264 FLOPs), 9 TP all-reduces of 128 B (each 128 B on dim 0: 128 ns),
    2 x p2p 128 B; (m + p - 1) = 5 slots; DP all-reduces once: 2 x (208 + 400) + 272 = 1488 ns."""
    p = params()
    place = place_lowest((2, 2, 2), [("tp", 2), ("dp", 2), ("pp", 2)])
    assert place == {"tp": (2, 1, 1), "dp": (1, 2, 1), "pp": (1, 1, 2)}
    parts = spec_parts(lower_stage(build_step(p)), place, p.plan.pp, p.plan.schedule)
    assert parts[2] == "pipeline" and parts[3].p2p_dim == 2 and parts[3].p2p_bytes == 128
    bd = evaluate(_instance(_net(2, 2, 2), parts), [1.0, 1.0, 1.0])
    assert bd.iteration_time_ns == pytest.approx(5 * (36.864 + 9 * 128 + 2 * 128) + 1488)


def test_single_stage_plan_hand_computed_time():
    """TP 2 x DP 4 on Ring 2 x Ring 4, m = 2: per micro-batch 67.584 ns of compute and 18 TP all-reduces of 128 ns;
    DP all-reduces over 4 (1.5 S bytes on dim 1) once: 384 + 4 x (312 + 600) + 408 = 4440 ns."""
    p = params(pp=1, dp=4)
    place = place_lowest((2, 4), [("tp", 2), ("dp", 4)])
    parts = spec_parts(lower_stage(build_step(p)), place, 1, "1f1b")
    assert parts[2] == "no_overlap"
    bd = evaluate(_instance(_net(2, 4), parts), [1.0, 1.0])
    assert bd.iteration_time_ns == pytest.approx(2 * (67.584 + 18 * 128) + 4440)


def test_plans_the_per_phase_mapping_cannot_express():
    low = lower_stage(build_step(params({"moe": MoE(experts=4, top_k=2, expert_ffn_size=8)}, ep=2)))
    with pytest.raises(InputError, match=r"forward collectives use the groups \['ep', 'tp'\]"):
        spec_parts(low, {"tp": (2, 1, 1), "dp": (1, 2, 1), "pp": (1, 1, 2)}, 2, "1f1b")
    low = lower_stage(build_step(params(zero_stage=3)))
    with pytest.raises(InputError, match="groups"):
        spec_parts(low, {"tp": (2, 1, 1), "dp": (1, 2, 1), "pp": (1, 1, 2)}, 2, "1f1b")
    low = lower_stage(build_step(params()))
    with pytest.raises(InputError, match="spans dimensions"):
        spec_parts(low, {"tp": (2, 1, 1), "dp": (1, 1, 2), "pp": (1, 2, 2)}, 2, "1f1b")


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
