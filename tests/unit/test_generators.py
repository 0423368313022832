"""DLRM and CNN workload generators: hand-computed values on tiny configurations, the model files
(models/dlrm.toml, models/resnet50.toml), the generator registry, and parameter validation."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from hieropt.errors import InputError
from hieropt.io.astrasim1 import read_workload
from hieropt.io.instance import GENERATORS, read_model
from hieropt.spec import Collective
from hieropt.workloads import cnn, dlrm, transformer

REPO = Path(__file__).resolve().parents[2]
NONE, AR, A2A = Collective.NONE, Collective.ALL_REDUCE, Collective.ALL_TO_ALL

# DLRM: b = 2, dense 4, bottom [8, 4], T = 3 tables, d = 4, top [6, 1], L = 1, 4 bytes, N = 8 NPUs,
# 1 TFLOP/s at efficiency 1 (1 FLOP = 1e-3 ns), embeddings at 1 GB/s (1 byte = 1 ns).
#   embedding: lookups 2*1*3*4*4 = 96 bytes -> 96 ns; all-to-all 2*3*4*4 = 96 bytes; update 2*96 =
# 192 ns
#   bottom1 4->8: 2*2*4*8 = 128 FLOPs -> 0.128 ns (no input gradient); (32 + 8)*4 = 160 bytes
#   bottom2 8->4: 128 FLOPs -> 0.128 ns; (32 + 4)*4 = 144 bytes
#   interaction: F = 4, P = 6: forward 2*2*6*4 = 96 FLOPs -> 0.096 ns, input gradient 0.192 ns
#   top1 (4 + 6 = 10)->6: 2*2*10*6 = 240 FLOPs -> 0.240 ns; (60 + 6)*4 = 264 bytes
#   top2 6->1: 24 FLOPs -> 0.024 ns; (6 + 1)*4 = 28 bytes
TINY_DLRM = dict(
    name="tiny-dlrm",
    dense_features=4,
    bottom_mlp=[8, 4],
    top_mlp=[6, 1],
    num_tables=3,
    embedding_dim=4,
    pooling=1,
    micro_batch=2,
    bytes_per_element=4,
    npus=8,
    npu_peak_tflops=1.0,
    efficiency=1.0,
    embedding_gbps=1.0,
)
DLRM_EXPECTED = {  # name: ((fwd ns, coll, bytes), (ig ns, coll, bytes), (wg ns, coll, bytes))
    "embedding": ((96, A2A, 96), (0, A2A, 96), (192, NONE, 0)),
    "bottom1": ((0.128, NONE, 0), (0, NONE, 0), (0.128, AR, 160)),
    "bottom2": ((0.128, NONE, 0), (0.128, NONE, 0), (0.128, AR, 144)),
    "interaction": ((0.096, NONE, 0), (0.192, NONE, 0), (0, NONE, 0)),
    "top1": ((0.240, NONE, 0), (0.240, NONE, 0), (0.240, AR, 264)),
    "top2": ((0.024, NONE, 0), (0.024, NONE, 0), (0.024, AR, 28)),
}


def _check(layer, expected) -> None:
    for phase, (ns, coll, size) in zip(
        ("forward", "input_grad", "weight_grad"), expected, strict=True
    ):
        ph = getattr(layer, phase)
        assert ph.compute_ns == pytest.approx(ns, rel=1e-12, abs=0), (layer.name, phase)
        assert (ph.collective, ph.size_bytes) == (coll, size), (layer.name, phase)


def test_dlrm_hand_computed() -> None:
    w = dlrm.generate(dlrm.DLRMParams(**TINY_DLRM))
    assert [layer.name for layer in w.layers] == list(DLRM_EXPECTED)
    for layer in w.layers:
        _check(layer, DLRM_EXPECTED[layer.name])
    # layer 0 embedding, 1-2 bottom
    assert w.header.policy == "HYBRID_DLRM" and w.header.last_bottom_layer == 2
    assert w.policy == "HYBRID_DLRM 2"


def test_dlrm_single_npu_has_no_collectives() -> None:
    w = dlrm.generate(dlrm.DLRMParams(**{**TINY_DLRM, "npus": 1}))
    assert all(getattr(layer, p).collective is NONE and getattr(layer, p).size_bytes == 0
               for layer in w.layers for p in ("forward", "input_grad", "weight_grad"))
    assert w.layers[0].forward.compute_ns == 96


def test_dlrm_validation() -> None:
    with pytest.raises(ValidationError, match="end bottom_mlp with 4"):
        dlrm.DLRMParams(**{**TINY_DLRM, "bottom_mlp": [8, 5]})
    with pytest.raises(ValidationError, match="layer widths must be > 0"):
        dlrm.DLRMParams(**{**TINY_DLRM, "top_mlp": [6, 0]})
    with pytest.raises(
        ValidationError, match=r"top_mlp: a layer width of 1e\+71 is beyond 9.01e\+15"
    ):
        dlrm.DLRMParams(**{**TINY_DLRM, "top_mlp": [10**71, 1]})
    with pytest.raises(ValidationError, match=r"top_mlp: a layer width of 1.00e\+400 is beyond"):
        dlrm.DLRMParams(**{**TINY_DLRM, "top_mlp": [6, 10**400]})  # beyond a float's range
    with pytest.raises(ValidationError, match="num_tables"):
        dlrm.DLRMParams(**{**TINY_DLRM, "num_tables": 2**53 + 1})
    # (1e20 is named as such, not "not a whole number; fix: write 100000000000000000000", a boolean
    # "write the number without quotes")
    with pytest.raises(
        ValidationError, match="1e\\+20 is written as a decimal number, and this field counts"
    ):
        dlrm.DLRMParams(**{**TINY_DLRM, "micro_batch": 1e20})
    with pytest.raises(
        ValidationError, match="true is a boolean, not a number; fix: write a number"
    ):
        dlrm.DLRMParams(**{**TINY_DLRM, "micro_batch": True})
    for field, value in (("pooling", 2**60), ("bytes_per_element", 65), ("npus", 2**60)):
        with pytest.raises(ValidationError, match=field):
            dlrm.DLRMParams(**{**TINY_DLRM, field: value})


def test_dlrm_model_file() -> None:
    w = read_model(REPO / "models" / "dlrm.toml")
    p = dlrm.DLRMParams(**tomllib.loads((REPO / "models" / "dlrm.toml").read_text())["params"])
    assert p.top_input_width == 128 + 27 * 26 // 2 == 479  # DLRM's interaction width for 26 tables
    assert [layer.name for layer in w.layers] == [
        "embedding",
        "bottom1",
        "bottom2",
        "bottom3",
        "interaction",
        "top1",
        "top2",
        "top3",
        "top4",
        "top5",
    ]
    assert w.header.last_bottom_layer == 3
    assert w.layers[0].forward.size_bytes == 16 * 26 * 128 * 4  # b T d B
    assert w.layers[5].weight_grad.size_bytes == (479 * 1024 + 1024) * 4


# CNN: conv [3, 2, 4, 5]: 2*9*2*4*25 = 3600 FLOPs per sample, 9*2*4 + 2*4 = 80 params; fc [4, 3]: 24
# FLOPs, 15 params; raw: 100 FLOPs, 7 params. b = 2, 4 bytes, dp = 4, 1 TFLOP/s at efficiency 0.5 (1
# FLOP = 2e-3 ns).
TINY_CNN = dict(
    name="tiny-cnn",
    micro_batch=2,
    bytes_per_element=4,
    dp=4,
    npu_peak_tflops=1.0,
    efficiency=0.5,
    layers=[
        {"name": "conv", "conv": [3, 2, 4, 5]},
        {"name": "fc", "fc": [4, 3]},
        {"name": "raw", "forward_flops": 100, "params": 7},
    ],
)


def test_cnn_hand_computed() -> None:
    p = cnn.CNNParams(**TINY_CNN)
    assert [layer.param_count for layer in p.layers] == [80, 15, 7]
    assert [layer.flops_per_sample for layer in p.layers] == [3600, 24, 100]
    w = cnn.generate(p)
    # first layer: no input gradient
    _check(w.layers[0], ((14.4, NONE, 0), (0, NONE, 0), (14.4, AR, 320)))
    _check(w.layers[1], ((0.096, NONE, 0), (0.096, NONE, 0), (0.096, AR, 60)))
    _check(w.layers[2], ((0.4, NONE, 0), (0.4, NONE, 0), (0.4, AR, 28)))
    assert w.header.policy == "DATA"
    single = cnn.generate(cnn.CNNParams(**{**TINY_CNN, "dp": 1}))
    assert all(layer.weight_grad.collective is NONE for layer in single.layers)


def test_cnn_validation() -> None:
    with pytest.raises(ValidationError, match="exactly one of"):
        cnn.CNNParams(**{**TINY_CNN, "layers": [{"name": "x", "conv": [1, 1, 1, 1], "fc": [1, 1]}]})
    with pytest.raises(ValidationError, match="go together"):
        cnn.CNNParams(**{**TINY_CNN, "layers": [{"name": "x", "forward_flops": 10}]})
    with pytest.raises(ValidationError, match="used twice"):
        cnn.CNNParams(
            **{**TINY_CNN, "layers": [{"name": "x", "fc": [1, 1]}, {"name": "x", "fc": [1, 1]}]}
        )


def test_resnet50_model_file(shared_data: Path) -> None:
    p = cnn.CNNParams(**tomllib.loads((REPO / "models" / "resnet50.toml").read_text())["params"])
    assert len(p.layers) == 54
    assert p.total_params == 25_557_032  # the usual ResNet-50 parameter count
    # multiply-adds; He et al. 2016 quote 3.8e9
    assert p.total_flops_per_sample / 2 == 3_857_973_248
    w = read_model(REPO / "models" / "resnet50.toml")
    assert w.layers[0].weight_grad.size_bytes == (7 * 7 * 3 * 64 + 2 * 64) * 4
    # ASTRA-sim's own ResNet-50 (weights only, 4 bytes): the same 54 weight tensors
    ref = read_workload(shared_data / "astrasim1" / "Resnet50_DataParallel.txt")
    weights = sorted(4 * (layer.conv[0] ** 2 * layer.conv[1] * layer.conv[2]) if layer.conv else
                     4 * layer.fc[0] * layer.fc[1] for layer in p.layers)
    assert weights == sorted(layer.weight_grad.size_bytes for layer in ref.layers)


def test_registry_and_model_file_errors(tmp_path: Path) -> None:
    assert GENERATORS["dlrm"] == (dlrm.DLRMParams, dlrm.generate)
    assert GENERATORS["cnn"] == (cnn.CNNParams, cnn.generate)
    assert GENERATORS["transformer"] == (transformer.TransformerParams, transformer.generate)
    bad = tmp_path / "m.toml"
    bad.write_text(
        'generator = "cnn"\n[params]\nname = "x"\nmicro_batch = 1\nbytes_per_element = 4\ndp = 2\n'
        'npu_peak_tflops = 1.0\nefficiency = 0.5\nlayers = [{ name = "c", conv = [3, 0, 4, 5] }]\n'
    )
    with pytest.raises(InputError) as e:
        read_model(bad)
    assert e.value.source == str(bad) and "conv entries must be > 0" in str(e.value)
