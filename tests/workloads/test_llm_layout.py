"""Which blocks each pipeline stage and chunk holds (hieropt/workloads/llm/layout.py): interleaved
schedules with uneven stages, automatic stage balancing for any pp, and the time of an interleaved
uneven plan by hand.

The tiny model's block (tests/workloads/tiny.py, tp 2): 5,120 forward and 10,240 backward FLOPs per
micro-batch, 15.36 ns at 1 TFLOP/s; its output layer 3 x 2,048 FLOPs, 6.144 ns."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.errors import InputError
from hieropt.io.llm import read_llm
from hieropt.model.groups import instance_for
from hieropt.model.timing import evaluate
from hieropt.spec import CostClass, CostModel, Dimension, Network
from hieropt.workloads.llm import build_step
from hieropt.workloads.llm.layout import balanced_stage_layers, split_chunks, stage_chunks

from .tiny import params

MODELS = Path(__file__).resolve().parents[2] / "models"
BLOCK, OUTPUT = 15.36, 6.144  # ns per micro-batch


def _blocks(step, r: int) -> list[str]:
    return [op.name for op in step.stages[r].ops]


def test_interleaved_uneven_stages_by_hand():
    """6 blocks, pp 2, v 2, stage_layers (2, 4): stage 0's chunks hold 1 + 1 blocks, stage 1's 2 +
    2; model chunks in order: c0 = stage 0 chunk 0 (block 1), c1 = stage 1 chunk 0 (blocks 2, 3), c2
    = stage 0 chunk 1 (block 4), c3 = stage 1 chunk 1 (blocks 5, 6 and the output layer)."""
    p = params({"layers": 6}, schedule="interleaved", virtual_stages=2, stage_layers=(2, 4))
    assert stage_chunks(p) == [[range(0, 1), range(3, 4)], [range(1, 3), range(4, 6)]]
    step = build_step(p)
    assert _blocks(step, 0) == ["embed", "attn1", "mlp1", "attn4", "mlp4"]
    assert _blocks(step, 1) == [
        "attn2",
        "mlp2",
        "attn3",
        "mlp3",
        "attn5",
        "mlp5",
        "attn6",
        "mlp6",
        "output",
    ]
    sends = [
        [c.phase for op in step.stages[r].ops for c in op.comms if c.group == "pp"] for r in (0, 1)
    ]
    assert sends == [["forward", "input_grad", "forward"], ["input_grad", "forward", "input_grad"]]


def test_interleaved_uneven_time_by_hand():
    """The plan above, m = 4, v = 2: slots t_0 = 2 x 15.36 = 30.72 ns, t_1 = 4 x 15.36 + 6.144 =
    67.584 ns of compute; with every collective free the iteration is (t_0 + t_1) / 2 + (m - 1/2)
    t_1 = 49.152 + 236.544 = 285.696 ns (no optimizer time: the NPU gives no HBM bandwidth)."""
    p = params({"layers": 6}, schedule="interleaved", virtual_stages=2, stage_layers=(2, 4))
    net = Network(dims=tuple(Dimension(block="Ring", npus=2, cost_class="c") for _ in range(3)))
    inst = instance_for(p, net, CostModel(classes={"c": CostClass(link_usd_per_gbps=1.0)}))
    assert inst.step.virtual_stages == 2 and inst.step.microbatches == 4
    bd = evaluate(inst, [1.0, 1.0, 1.0])
    t0, t1 = 2 * BLOCK, 4 * BLOCK + OUTPUT
    # compute m t_1 (the stage with the most compute), bubble the rest of the free schedule
    assert bd.compute_ns == pytest.approx(4 * t1, rel=1e-12)
    assert bd.bubble_ns == pytest.approx((t0 + t1) / 2 - t1 / 2, rel=1e-12)
    assert bd.compute_ns + bd.bubble_ns == pytest.approx((t0 + t1) / 2 + 3.5 * t1, rel=1e-12)
    assert bd.communication_ns > 0


def test_chunks_split_as_evenly_as_possible():
    assert (
        split_chunks(7, 2) == [4, 3]
        and split_chunks(8, 2) == [4, 4]
        and split_chunks(9, 4) == [3, 2, 2, 2]
    )


def test_balanced_stages_of_llama3_405b():
    """126 layers on 16 stages without stage_layers: the output layer's compute takes a block off
    the last stage, and of the stages left equal the first (it keeps the most micro-batches in
    flight) gets the other one fewer: Meta's 7, 8 x 14, 7 (Llama Team 2024, §3.3.2)."""
    base = read_llm(MODELS / "llama3-405b.toml", [])
    p = base.model_copy(
        update={
            "plan": base.plan.model_copy(
                update={"stage_layers": None, "schedule": "1f1b", "virtual_stages": 1}
            )
        }
    )
    assert balanced_stage_layers(p) == (7,) + (8,) * 14 + (7,)
    assert [len(c[0]) for c in stage_chunks(p)] == [7] + [8] * 14 + [7]


def test_balanced_stages_for_any_pp():
    """4 blocks on 3 stages (4 % 3 != 0): the last stage has the output layer (0.4 of a block), so
    it keeps one block; of the first two the later gets the extra one: 1, 2, 1 -> compute 15.36,
    30.72, 21.504 ns."""
    p = params(pp=3, dp=1, global_batch_size=12)
    assert balanced_stage_layers(p) == (1, 2, 1)
    step = build_step(p)
    assert [sum(step.compute_ns(r)) for r in range(3)] == pytest.approx(
        [BLOCK, 2 * BLOCK, BLOCK + OUTPUT]
    )


def test_too_many_chunks_are_refused():
    with pytest.raises(
        InputError,
        match=r"plan.pp: pp x virtual_stages = 4 x 2 chunks need at least as many "
        "layers, the model has 4",
    ):
        read_llm(
            MODELS / "gpt3-175b-llm.toml",
            ["layers=4", "pp=4", "npus=2048", "schedule=interleaved", "virtual_stages=2"],
        )
    with pytest.raises(
        InputError, match=r"must give pp = 2 block counts of at least virtual_stages = 2 \(1 on "
        r"the first and the last stage\)"
    ):
        read_llm(
            MODELS / "gpt3-175b-llm.toml",
            [
                "pp=2",
                "npus=1024",
                "schedule=interleaved",
                "virtual_stages=2",
                "stage_layers=[0, 96]",
            ],
        )
