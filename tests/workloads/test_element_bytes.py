"""Activation and weight bytes follow the training number format unless given: 2 for bf16, fp16
and fp8, 4 for tf32 (a Tensor Core matmul mode on FP32 tensors: the tensors are stored in FP32).
Hand-computed on the tiny model of test_llm_block.py (TP 2, PP 2; stage 1 holds 744 parameters per
NPU; the attention block stores 576 bytes of activations per micro-batch at 2 bytes an element,
the SwiGLU FFN 640, every term proportional to the element size without dropout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hieropt.io.llm import read_llm
from hieropt.model.memory import attention_activation_bytes, ffn_activation_bytes, memory
from hieropt.model.plan import plan_figures
from hieropt.report.plan import precision_line
from hieropt.workloads.llm import NPU, Precision, build_step
from hieropt.workloads.llm.params import ELEMENT_BYTES, default_element_bytes

from .model_files import MODEL
from .tiny import params

STAGE1_PARAMS = 744


def tiny(number_format: str = "bf16", **precision):
    """The tiny model on an NPU training in ``number_format``, ``precision`` fields given."""
    return params().model_copy(update={
        "npu": NPU(peak_tflops=1.0, efficiency=1.0, hbm_gib=1.0, hbm_gbps=1.0,
                   number_format=number_format),
        "precision": Precision(**precision),
    })


def test_default_per_number_format():
    assert ELEMENT_BYTES == {"bf16": 2, "fp16": 2, "fp8": 2, "tf32": 4}
    assert [default_element_bytes(f) for f in ("bf16", "fp16", "fp8", "tf32")] == [2, 2, 2, 4]
    assert [(tiny(f).activation_bytes, tiny(f).weight_bytes)
            for f in ("bf16", "fp16", "fp8", "tf32")] == [(2, 2), (2, 2), (2, 2), (4, 4)]
    assert tiny("tf32").precision.activation_bytes is None  # (not given: resolved, not stored)


def test_tf32_memory_holds_fp32_weights_and_activations():
    # weights (ZeRO 0): 744 parameters x 4 bytes = 2,976 (bf16: 1,488)
    assert memory(tiny("bf16")).stages[1].weights_bytes == STAGE1_PARAMS * 2 == 1488
    assert memory(tiny("tf32")).stages[1].weights_bytes == STAGE1_PARAMS * 4 == 2976
    # activations: attention 576 -> 1,152 and FFN 640 -> 1,280 bytes per micro-batch
    assert attention_activation_bytes(tiny("tf32")) == 2 * 576 == 1152
    assert ffn_activation_bytes(tiny("tf32")) == 2 * 640 == 1280
    # stage 1 (one micro-batch in flight): two blocks, the output layer's input 2 n h e = 2 x 8 x 8
    # x e and its fp32 logits n V_t x 4 = 8 x 16 x 4 = 512 (logits_bytes: 4 in any format)
    assert memory(tiny("bf16")).stages[1].activations_bytes == 2 * 1216 + 256 + 512 == 3200
    assert memory(tiny("tf32")).stages[1].activations_bytes == 2 * 2432 + 512 + 512 == 5888


def test_tf32_messages_and_optimizer_step():
    # TP all-reduce after the attention block: n h e = 8 x 8 x 4 = 256 bytes (bf16: 128)
    attn = next(o for o in build_step(tiny("tf32")).stages[0].ops if o.name == "attn1")
    assert [(c.group, c.kind, c.size_bytes) for c in attn.comms if c.phase == "forward"] == [
        ("tp", "ALLREDUCE", 256)]
    # optimizer step at 1 GB/s: (2 K + g + w) = 24 + 4 + 4 = 32 bytes per parameter
    assert plan_figures(tiny("tf32")).step.update_ns(1) == pytest.approx(STAGE1_PARAMS * 32)


def test_given_values_win():
    p = tiny("tf32", activation_bytes=2, weight_bytes=2)
    assert (p.activation_bytes, p.weight_bytes) == (2, 2)
    assert memory(p).stages[1].weights_bytes == 1488
    assert tiny("bf16", weight_bytes=4).weight_bytes == 4


def test_shown_resolved(tmp_path: Path):
    assert precision_line(tiny("tf32")) == (
        "bytes per element (tf32 training): activations 4, weights 4, gradients 4 (fp32 reduce, "
        "the default for tf32), optimizer 12 per parameter")
    assert precision_line(tiny("fp8")) == (
        "bytes per element (fp8 training): activations 2 (stored GEMM inputs 1: their FP8 "
        "copies), weights 2, gradients 4 (fp32 reduce, the default for fp8), optimizer 12 per "
        "parameter")
    delayed = tiny("fp8")
    delayed = delayed.model_copy(update={
        "npu": delayed.npu.model_copy(update={"fp8_recipe": "delayed"})})
    assert precision_line(delayed).startswith(
        "bytes per element (fp8 training, delayed scaling): activations 2 (stored GEMM")
    d = json.loads(json.dumps(plan_figures(tiny("tf32")).as_dict()))
    assert (d["precision"]["activation_bytes"], d["precision"]["weight_bytes"]) == (4, 4)
    assert d["precision"]["gemm_input_bytes"] == 4
    fp8 = plan_figures(tiny("fp8")).as_dict()["precision"]
    assert (fp8["activation_bytes"], fp8["gemm_input_bytes"]) == (2, 1)
    f = tmp_path / "m.toml"
    f.write_text(MODEL.format(npu="", precision=""))
    assert read_llm(f).activation_bytes == 2
    assert read_llm(f, ["number_format=tf32"]).activation_bytes == 4
    assert read_llm(f, ["number_format=tf32", "activation_bytes=2"]).activation_bytes == 2
