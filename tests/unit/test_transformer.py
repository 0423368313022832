"""Transformer workload generator: hand-computed values on a tiny configuration."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from hieropt.spec import Collective
from hieropt.workloads.transformer import TransformerParams, generate

REPO = Path(__file__).resolve().parents[2]

# b = 2, s = 4, h = 8, tp = 2, dp = 4, 2 bytes, 1 TFLOP/s at efficiency 1 (1 FLOP = 1e-3 ns)
#   b s h^2   = 2*4*64 = 512
#   b s^2 h   = 2*16*8 = 256
#   attention forward  (8*512 + 4*256)/2 = 2560 FLOPs -> 2.560 ns
#   attention in-grad  (8*512 + 8*256)/2 = 3072 FLOPs -> 3.072 ns
#   attention w-grad   (8*512)/2         = 2048 FLOPs -> 2.048 ns
#   MLP (ffn 4), all three phases  16*512/2 = 4096 FLOPs -> 4.096 ns
#   TP all-reduce      b s h * 2 bytes   = 128 bytes
#   attention params   (4*64 + 4*8)/2 = 144 -> 288 bytes
#   MLP params         (2*4*64 + 4*8 + 8)/2 = 276 -> 552 bytes
TINY = dict(
    name="tiny",
    layers=2,
    hidden_size=8,
    sequence_length=4,
    micro_batch=2,
    bytes_per_element=2,
    tp=2,
    dp=4,
    npu_peak_tflops=1.0,
    efficiency=1.0,
)


def _params(**overrides) -> TransformerParams:
    return TransformerParams(**{**TINY, **overrides})


def test_layer_names_count_and_header():
    w = generate(_params())
    assert [layer.name for layer in w.layers] == ["attn1", "mlp1", "attn2", "mlp2"]
    assert w.name == "tiny"
    assert w.header.policy == "HYBRID_TRANSFORMER"
    assert w.header.model_parallel_npu_group == 2  # tp: the model-parallel group the header implies
    assert w.policy == "HYBRID_TRANSFORMER model_parallel_NPU_group: 2"
    assert all(layer.update_ns == 0 for layer in w.layers)


def test_attention_phases():
    attn = generate(_params()).layers[0]
    assert attn.forward.compute_ns == pytest.approx(2.560, rel=1e-12)
    assert attn.input_grad.compute_ns == pytest.approx(3.072, rel=1e-12)
    assert attn.weight_grad.compute_ns == pytest.approx(2.048, rel=1e-12)
    assert attn.forward.collective is Collective.ALL_REDUCE
    assert attn.forward.size_bytes == 128
    assert attn.input_grad.collective is Collective.ALL_REDUCE
    assert attn.input_grad.size_bytes == 128
    assert attn.weight_grad.collective is Collective.ALL_REDUCE
    assert attn.weight_grad.size_bytes == 288


def test_mlp_phases():
    mlp = generate(_params()).layers[1]
    for phase in (mlp.forward, mlp.input_grad, mlp.weight_grad):
        assert phase.compute_ns == pytest.approx(4.096, rel=1e-12)
    assert mlp.forward.collective is Collective.ALL_REDUCE
    assert mlp.forward.size_bytes == 128
    assert mlp.input_grad.collective is Collective.ALL_REDUCE
    assert mlp.input_grad.size_bytes == 128
    assert mlp.weight_grad.collective is Collective.ALL_REDUCE
    assert mlp.weight_grad.size_bytes == 552


def test_blocks_are_identical():
    w = generate(_params())
    assert w.layers[0].model_dump(exclude={"name"}) == w.layers[2].model_dump(exclude={"name"})
    assert w.layers[1].model_dump(exclude={"name"}) == w.layers[3].model_dump(exclude={"name"})


def test_block_forward_flops_match_narayanan():
    # 24 b s h^2 + 4 b s^2 h = 24*512 + 4*256 = 13312 FLOPs per block, / tp = 6656 -> 6.656 ns at 1
    # TFLOP/s
    attn, mlp = generate(_params()).layers[:2]
    assert attn.forward.compute_ns + mlp.forward.compute_ns == pytest.approx(6.656, rel=1e-12)
    # backward = 2 x forward: 13312 FLOPs per block / tp -> 13.312 ns
    backward = sum(
        layer.input_grad.compute_ns + layer.weight_grad.compute_ns for layer in (attn, mlp)
    )
    assert backward == pytest.approx(13.312, rel=1e-12)


def test_peak_efficiency_and_ffn_scaling():
    # 0.5 TFLOP/s effective: every time doubles; ffn 2 halves the MLP: 8*512/2 = 2048 FLOPs -> 4.096
    # ns at 0.5
    w = generate(_params(npu_peak_tflops=2.0, efficiency=0.25, ffn_multiplier=2))
    attn, mlp = w.layers[:2]
    assert attn.forward.compute_ns == pytest.approx(5.120, rel=1e-12)
    assert mlp.forward.compute_ns == pytest.approx(4.096, rel=1e-12)
    # MLP params with ffn 2: (2*2*64 + 2*8 + 8)/2 = 140 -> 280 bytes
    assert mlp.weight_grad.size_bytes == 280


def test_no_tp_means_no_tp_collective():
    w = generate(_params(tp=1))
    attn, mlp = w.layers[:2]
    for layer in (attn, mlp):
        assert layer.forward.collective is Collective.NONE and layer.forward.size_bytes == 0
        assert layer.input_grad.collective is Collective.NONE and layer.input_grad.size_bytes == 0
        assert layer.weight_grad.collective is Collective.ALL_REDUCE
    # unsharded: attention 5120 FLOPs -> 5.12 ns; params 288 -> 576 bytes; MLP 552 -> 1104 bytes
    assert attn.forward.compute_ns == pytest.approx(5.120, rel=1e-12)
    assert attn.weight_grad.size_bytes == 576
    assert mlp.weight_grad.size_bytes == 1104


def test_no_dp_means_no_weight_grad_collective():
    w = generate(_params(dp=1))
    for layer in w.layers:
        assert layer.weight_grad.collective is Collective.NONE
        assert layer.weight_grad.size_bytes == 0
        assert layer.forward.collective is Collective.ALL_REDUCE
    assert w.layers[0].weight_grad.compute_ns == pytest.approx(2.048, rel=1e-12)


def test_hidden_not_divisible_by_tp():
    with pytest.raises(ValidationError, match=r"hidden_size 8 is not divisible by tp 3.*fix:"):
        _params(tp=3)


@pytest.mark.parametrize(
    "field, value",
    [
        ("layers", 0),
        ("hidden_size", 0),
        ("sequence_length", -1),
        ("micro_batch", 0),
        ("bytes_per_element", 0),
        ("tp", 0),
        ("dp", 0),
        ("npu_peak_tflops", 0.0),
        ("npu_peak_tflops", float("inf")),
        ("efficiency", 0.0),
        ("efficiency", 1.5),
        ("ffn_multiplier", 0),
    ],
)
def test_invalid_values_rejected(field, value):
    with pytest.raises(ValidationError):
        _params(**{field: value})


def test_unknown_field_rejected():
    with pytest.raises(ValidationError):
        TransformerParams(**TINY, hiden_size=8)


def test_gpt3_model_file():
    data = tomllib.loads((REPO / "models" / "gpt3-175b.toml").read_text())
    assert data["generator"] == "transformer"
    p = TransformerParams(**data["params"])
    w = generate(p)
    assert len(w.layers) == 192
    attn, mlp = w.layers[:2]
    # b s h^2 = 2048 * 12288^2 = 309237645312, b s^2 h = 2048^2 * 12288 = 51539607552, tp 16,
    # 312e12 * 0.5 = 1.56e14 FLOP/s
    assert attn.forward.compute_ns == pytest.approx(
        (8 * 309237645312 + 4 * 51539607552) / 16 / 1.56e14 * 1e9
    )
    assert mlp.forward.compute_ns == pytest.approx(16 * 309237645312 / 16 / 1.56e14 * 1e9)
    assert attn.forward.size_bytes == 2048 * 12288 * 2 == 50331648
    assert attn.weight_grad.size_bytes == (4 * 12288**2 + 4 * 12288) // 16 * 2
    assert mlp.weight_grad.size_bytes == (8 * 12288**2 + 5 * 12288) // 16 * 2
    # 12 h^2 + 13 h parameters per block, 96 blocks: about 174.0e9 (GPT-3's 175B includes the
    # embeddings)
    per_block = (attn.weight_grad.size_bytes + mlp.weight_grad.size_bytes) / 2 * 16
    assert 96 * per_block == pytest.approx(173.95e9, rel=1e-3)
