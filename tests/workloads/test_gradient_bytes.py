"""Gradient bytes follow the training number format unless given: 4 (an FP32 reduction) for bf16,
fp8 and tf32, 2 for fp16 (Megatron-LM's arguments.py forces FP32 gradient accumulation and
all-reduce for bf16 only; Llama Team 2024, arXiv 2407.21783, §3.3.2: gradients reduce-scattered in
FP32). Hand-computed on the tiny model of test_llm_block.py: stage 1 (of PP 2, TP 2) holds two
blocks of 104 attention + 200 FFN parameters per NPU and the output layer's 136, 744 in all, its
largest layer the FFN's 200."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hieropt.io.llm import read_llm
from hieropt.model.memory import memory
from hieropt.model.plan import plan_figures
from hieropt.model.traffic import collective_traffic
from hieropt.report.plan import precision_line
from hieropt.spec import Collective
from hieropt.workloads.llm import NPU, Precision
from hieropt.workloads.llm.params import GRADIENT_BYTES, default_gradient_bytes

from .model_files import MODEL
from .tiny import params

STAGE1_PARAMS = 2 * (104 + 200) + 136  # 744 parameters per NPU on stage 1
LARGEST_LAYER = 200  # the FFN's parameters per NPU


def tiny(number_format: str = "bf16", gradient_bytes: int | None = None, **plan):
    """The tiny model with DP 4 (global batch 16 = 4 x micro-batch 2 x 2 micro-batches) on an NPU
    training in ``number_format``, ``gradient_bytes`` given or not."""
    p = params(dp=4, **plan)
    return p.model_copy(update={
        "npu": NPU(peak_tflops=1.0, efficiency=1.0, hbm_gib=1.0, hbm_gbps=1.0,
                   number_format=number_format),
        "precision": Precision(gradient_bytes=gradient_bytes),
    })


def dp_allreduce_bytes(p) -> float:
    """Stage 1's DP gradient all-reduce bytes per iteration (the collectives' sizes summed)."""
    fig = plan_figures(p)
    return sum(c["bytes"] for c in fig.collectives(1)
               if (c["group"], c["collective"]) == ("dp", "ALLREDUCE"))


def test_default_per_number_format():
    assert GRADIENT_BYTES == {"bf16": 4, "fp8": 4, "tf32": 4, "fp16": 2}
    assert [default_gradient_bytes(f) for f in ("bf16", "fp8", "tf32", "fp16")] == [4, 4, 4, 2]
    assert [tiny(f).gradient_bytes for f in ("bf16", "fp8", "tf32", "fp16")] == [4, 4, 4, 2]
    assert tiny().precision.gradient_bytes is None  # (not given: resolved, not stored)


def test_bf16_plan_all_reduces_fp32_gradients():
    p = tiny("bf16")
    # the all-reduce of stage 1: 744 parameters x 4 bytes = 2,976 bytes
    assert dp_allreduce_bytes(p) == STAGE1_PARAMS * 4 == 2976
    # each of the 4 DP NPUs sends 2 (n - 1) / n of it: 2 x 3/4 x 744 x 4 = 4,464 bytes
    sent = collective_traffic(Collective.ALL_REDUCE, dp_allreduce_bytes(p), (4,))
    assert sent.tolist() == [pytest.approx(2 * 3 / 4 * 744 * 4)] == [pytest.approx(4464.0)]


def test_fp16_plan_all_reduces_16_bit_gradients():
    p = tiny("fp16")
    # 744 parameters x 2 bytes = 1,488 bytes; per NPU 2 x 3/4 x 1,488 = 2,232 bytes
    assert dp_allreduce_bytes(p) == STAGE1_PARAMS * 2 == 1488
    sent = collective_traffic(Collective.ALL_REDUCE, dp_allreduce_bytes(p), (4,))
    assert sent.tolist() == [pytest.approx(2232.0)]


def test_fp8_plan_reduces_fp32_gradients():
    assert dp_allreduce_bytes(tiny("fp8")) == 744 * 4


def test_explicit_gradient_bytes_win():
    # given: 2 on a bf16 NPU (Megatron-LM's --grad-reduce-in-bf16), 4 on an fp16 one
    assert dp_allreduce_bytes(tiny("bf16", gradient_bytes=2)) == 744 * 2
    assert dp_allreduce_bytes(tiny("fp16", gradient_bytes=4)) == 744 * 4
    assert tiny("bf16", gradient_bytes=2).gradient_bytes == 2


def test_memory_gradients_follow_the_same_default():
    # ZeRO 0: every parameter's gradient, 744 x 4 (bf16) or 744 x 2 (fp16) bytes
    for fmt, g in (("bf16", 4), ("fp16", 2), ("fp8", 4)):
        p = tiny(fmt)
        assert memory(p).stages[1].gradients_bytes == STAGE1_PARAMS * g
    assert memory(tiny("bf16", gradient_bytes=2)).stages[1].gradients_bytes == 744 * 2
    # ZeRO 2: the 1/4 shard plus the largest layer's whole gradient, (744 / 4 + 200) x 4 = 1,544
    z2 = tiny("bf16", zero_stage=2)
    assert memory(z2).stages[1].gradients_bytes == (744 / 4 + LARGEST_LAYER) * 4 == 1544
    assert memory(tiny("fp16", zero_stage=2)).stages[1].gradients_bytes == 772


def test_optimizer_step_reads_the_gradients_at_their_bytes():
    # flat model at 1 GB/s: (2 K + g + w) bytes per parameter, K = 12, w = 2: stage 1's 744
    # parameters take 744 x 30 = 22,320 ns with fp32 gradients, 744 x 28 = 20,832 ns with fp16
    assert plan_figures(tiny("bf16")).step.update_ns(1) == pytest.approx(744 * 30)
    assert plan_figures(tiny("fp16")).step.update_ns(1) == pytest.approx(744 * 28)


def test_the_resolved_value_is_shown():
    assert tiny("bf16").gradient_bytes_note == "4 (fp32 reduce, the default for bf16)"
    assert tiny("fp8").gradient_bytes_note == "4 (fp32 reduce, the default for fp8)"
    assert tiny("fp16").gradient_bytes_note == "2 (16-bit reduce, the default for fp16)"
    assert tiny("bf16", 4).gradient_bytes_note == "4 (given, as the default for bf16)"
    assert tiny("bf16", 2).gradient_bytes_note == "2 (given; the default for bf16 is 4)"
    assert precision_line(tiny()) == (
        "bytes per element (bf16 training): activations 2, weights 2, gradients 4 (fp32 reduce, "
        "the default for bf16), optimizer 12 per parameter")
    d = json.loads(json.dumps(plan_figures(tiny("fp16")).as_dict()))
    assert (d["precision"]["gradient_bytes"], d["precision"]["number_format"],
            d["precision"]["gradient_bytes_note"]) == (
        2, "fp16", "2 (16-bit reduce, the default for fp16)")


def test_model_file_and_set(tmp_path: Path):
    f = tmp_path / "m.toml"
    f.write_text(MODEL.format(npu="", precision=""))
    assert read_llm(f).gradient_bytes == 4  # bf16 by default
    assert read_llm(f, ["number_format=fp16"]).gradient_bytes == 2
    assert read_llm(f, ["gradient_bytes=2"]).gradient_bytes == 2  # a --set wins
    f.write_text(MODEL.format(npu='number_format = "fp16"',
                              precision="[params.precision]\ngradient_bytes = 4"))
    assert read_llm(f).gradient_bytes == 4  # the file's wins over fp16's 2
