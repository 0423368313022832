"""Transformer Engine's FP8 casts in the roofline (hieropt/workloads/llm/kernels.py ``fp8_cast``,
roofline.py ``gemm_half_flops``): per-tensor current scaling's amax, scale and cast (with the
transposed copy where FP8 GEMMs take only the TN layout), by hand, present only under FP8; and the
ramp of an FP8 GEMM at twice the 16-bit F_half."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from hieropt.io.npus import fill_npu, read_npu_catalog
from hieropt.workloads.llm import NPU, MoE, build_step
from hieropt.workloads.llm.accelerators import Accelerator
from hieropt.workloads.llm.kernels import FWD, IN, WT, fp8_cast, layer_kernels
from hieropt.workloads.llm.roofline import gemm_half_flops, kernel_ns, launches, layer_ns

from .roofline import CAL, FP8_ROOF, ROOF, tiny

BLACKWELL = FP8_ROOF.model_copy(update={"fp8_transposes": False})
"""FP8_ROOF whose FP8 GEMMs take any layout (no transposed copies)."""


def _casts(ks):
    return {k.name: (k.phase, k.bytes, k.launches) for k in ks if " fp8 " in k.name}


def test_the_cast_of_one_tensor_by_hand():
    # 1e6 BF16 elements (e = 2) at 1000 GB/s x 0.5 = 500 bytes/ns, 2,000 ns per launch:
    # amax reads 2e6 bytes: 4,000 + 2,000 ns; scale: 2,000 ns (no bytes); cast reads 2e6 and
    # writes 1e6 FP8 bytes and 1e6 for the transposed copy: 4e6 bytes, 8,000 + 2,000 ns
    ks = fp8_cast(tiny(FP8_ROOF), "x", FWD, 1e6)
    assert [(k.name, k.phase, k.kind, k.bytes, k.launches) for k in ks] == [
        ("x fp8 amax", FWD, "elementwise", 2e6, 1),
        ("x fp8 scale", FWD, "elementwise", 0.0, 1),
        ("x fp8 cast", FWD, "elementwise", 4e6, 1),
    ]
    assert [kernel_ns(FP8_ROOF, k) for k in ks] == pytest.approx([6000, 2000, 10000], rel=1e-12)
    # no transposed copy (Blackwell): the cast writes 1e6, 3e6 bytes, 6,000 + 2,000 ns
    ks = fp8_cast(tiny(BLACKWELL), "x", FWD, 1e6)
    assert [k.bytes for k in ks] == [2e6, 0.0, 3e6]
    assert sum(kernel_ns(BLACKWELL, k) for k in ks) == pytest.approx(16000, rel=1e-12)


def test_a_gathered_tensor_is_cast_on_the_share_and_transposed_after_the_gather():
    # 1e6 elements here, TP all-gathered over 4 NPUs (sequence parallelism): cast without the copy
    # (3e6 bytes), then the 4e6 gathered elements transposed, 1 byte read and 1 written each:
    # 8e6 bytes, 16,000 + 2,000 ns in the weight-gradient phase
    ks = fp8_cast(tiny(FP8_ROOF), "x", FWD, 1e6, gathered=4)
    assert [(k.name, k.phase, k.bytes) for k in ks] == [
        ("x fp8 amax", FWD, 2e6), ("x fp8 scale", FWD, 0.0), ("x fp8 cast", FWD, 3e6),
        ("x fp8 transpose", WT, 8e6)]
    assert kernel_ns(FP8_ROOF, ks[3]) == pytest.approx(18000, rel=1e-12)
    # without transposes nothing follows the gather
    assert [k.name for k in fp8_cast(tiny(BLACKWELL), "x", FWD, 1e6, gathered=4)] == [
        "x fp8 amax", "x fp8 scale", "x fp8 cast"]


DELAYED = FP8_ROOF.model_copy(update={"fp8_recipe": "delayed"})
"""FP8_ROOF with Transformer Engine's delayed scaling."""


def test_a_delayed_scaling_cast_by_hand_against_current_scaling():
    # the same 1e6 BF16 elements at 500 bytes/ns and 2,000 ns per launch: one cast kernel that
    # takes the amax as it goes, reads 2e6 and writes 1e6 + 1e6 (transposed copy): 4e6 bytes,
    # 8,000 + 2,000 = 10,000 ns, against current scaling's 6,000 + 2,000 + 10,000 = 18,000 ns
    ks = fp8_cast(tiny(DELAYED), "x", FWD, 1e6)
    assert [(k.name, k.phase, k.kind, k.bytes, k.launches) for k in ks] == [
        ("x fp8 cast", FWD, "elementwise", 4e6, 1)]
    assert kernel_ns(DELAYED, ks[0]) == pytest.approx(10000, rel=1e-12)
    current = fp8_cast(tiny(FP8_ROOF), "x", FWD, 1e6)
    assert sum(kernel_ns(FP8_ROOF, k) for k in current) == pytest.approx(18000, rel=1e-12)
    # gathered over 4 NPUs: the cast of the share (3e6 bytes, 8,000 ns), then the transpose of
    # the 4e6 gathered elements as under current scaling (8e6 bytes, 18,000 ns)
    ks = fp8_cast(tiny(DELAYED), "x", IN, 1e6, gathered=4, transpose_phase=IN)
    assert [(k.name, k.phase, k.bytes) for k in ks] == [
        ("x fp8 cast", IN, 3e6), ("x fp8 transpose", IN, 8e6)]
    assert [kernel_ns(DELAYED, k) for k in ks] == pytest.approx([8000, 18000], rel=1e-12)
    # the recipe changes nothing outside FP8
    assert fp8_cast(tiny(ROOF.model_copy(update={"fp8_recipe": "delayed"})), "x", FWD, 1e6) == []


def test_a_delayed_scaling_attention_layer_launches_one_kernel_per_cast():
    # tiny attention layer (as below): 4 casts, each one launch of the current-scaling cast's
    # bytes (qkv input 256, qkv output grad 256, projection input 128, output grad 256)
    casts = _casts(layer_kernels(tiny(DELAYED), "attention"))
    assert casts == {
        "qkv input fp8 cast": (FWD, 256, 1), "qkv output grad fp8 cast": (IN, 256, 1),
        "projection input fp8 cast": (FWD, 128, 1),
        "projection output grad fp8 cast": (IN, 256, 1)}


def test_a_bad_fp8_recipe_is_refused_with_the_choices():
    with pytest.raises(ValidationError, match="'current' or 'delayed'"):
        NPU(**{**FP8_ROOF.model_dump(), "fp8_recipe": "delays"})


def test_casts_only_under_fp8():
    assert fp8_cast(tiny(), "x", FWD, 1e6) == []
    for kind in ("attention", "mlp", "moe", "embedding", "output"):
        arch = {"moe": {"experts": 4, "top_k": 2, "expert_ffn_size": 8}} if kind == "moe" else None
        assert not _casts(layer_kernels(tiny(arch=arch), kind)), kind
    # under FP8 the embedding and the output layer (logits in BF16) cast nothing either
    for kind in ("embedding", "output"):
        assert not _casts(layer_kernels(tiny(FP8_ROOF), kind)), kind


def test_the_casts_of_an_attention_layer_by_hand():
    # tiny: n = b s = 8 tokens, h 8, TP 2: q_t 4, kv_t 2; no sequence parallelism
    # qkv: input n h = 64 elements, output gradient n (q_t + 2 kv_t) = 64; projection: input
    # n q_t = 32, output gradient n h = 64; amax 2 bytes and cast 2 + 1 + 1 per element
    casts = _casts(layer_kernels(tiny(FP8_ROOF), "attention"))
    assert casts == {
        "qkv input fp8 amax": (FWD, 128, 1), "qkv input fp8 scale": (FWD, 0, 1),
        "qkv input fp8 cast": (FWD, 256, 1),
        "qkv output grad fp8 amax": (IN, 128, 1), "qkv output grad fp8 scale": (IN, 0, 1),
        "qkv output grad fp8 cast": (IN, 256, 1),
        "projection input fp8 amax": (FWD, 64, 1), "projection input fp8 scale": (FWD, 0, 1),
        "projection input fp8 cast": (FWD, 128, 1),
        "projection output grad fp8 amax": (IN, 128, 1),
        "projection output grad fp8 scale": (IN, 0, 1),
        "projection output grad fp8 cast": (IN, 256, 1),
    }
    # 6 more launches in the forward and in the input gradient than in BF16 (8, 9, 2)
    assert launches(tiny(FP8_ROOF), "attention") == (14, 15, 2)
    # with sequence parallelism the qkv input is cast on n / t = 4 tokens (32 elements) and its
    # 64 gathered elements transposed before the weight gradient (128 bytes); so the
    # projection's output gradient, transposed in the input-gradient phase
    sp = _casts(layer_kernels(tiny(FP8_ROOF, sequence_parallel=True), "attention"))
    assert (sp["qkv input fp8 cast"], sp["qkv input fp8 transpose"]) == ((FWD, 96, 1),
                                                                          (WT, 128, 1))
    assert (sp["projection output grad fp8 cast"], sp["projection output grad fp8 transpose"]) \
        == ((IN, 96, 1), (IN, 128, 1))
    assert "qkv output grad fp8 transpose" not in sp  # (not gathered: its copy in the cast)


def test_the_casts_of_an_ffn_and_of_the_experts():
    # tiny gated FFN, f_t = 8: up input n h = 64, output gradient n 2 f_t = 128; down input
    # n f_t = 64, output gradient n h = 64 (cast bytes 4 per element)
    casts = _casts(layer_kernels(tiny(FP8_ROOF), "mlp"))
    assert [casts[f"ffn {w} fp8 cast"][1] for w in (
        "up input", "up output grad", "down input", "down output grad")] == [256, 512, 256, 256]
    # 4 experts, top 2, expert FFN 8 (f_t 4), EP 1: the local experts' r = 16 routed tokens cast
    # at once: up input r h = 128 elements, down input r fe_t = 64; the router stays 16-bit
    moe = tiny(FP8_ROOF, arch={"moe": {"experts": 4, "top_k": 2, "expert_ffn_size": 8}})
    ks = layer_kernels(moe, "moe")
    casts = _casts(ks)
    assert (casts["experts up input fp8 cast"][1], casts["experts down input fp8 cast"][1]) == (
        512, 256)
    assert not any(n.startswith("router") for n in casts)
    assert all(k.sixteen_bit for k in ks if k.name.startswith("router"))


def test_full_recompute_casts_the_inputs_again():
    full = layer_kernels(tiny(FP8_ROOF, recompute="full"), "attention")
    again = [k for k in full if k.name.startswith("recompute ") and " fp8 " in k.name]
    assert [(k.name, k.phase, k.bytes) for k in again] == [
        ("recompute qkv input fp8 amax", IN, 128), ("recompute qkv input fp8 scale", IN, 0),
        ("recompute qkv input fp8 cast", IN, 256),
        ("recompute projection input fp8 amax", IN, 64),
        ("recompute projection input fp8 scale", IN, 0),
        ("recompute projection input fp8 cast", IN, 128)]
    none, re = layer_ns(tiny(FP8_ROOF), "attention"), layer_ns(tiny(FP8_ROOF, recompute="full"),
                                                               "attention")
    assert re[1] - none[1] == pytest.approx(none[0], rel=1e-12)


def test_an_fp8_gemm_ramps_to_twice_the_16_bit_f_half():
    # F_half 1 GFLOP (16-bit); an FP8 GEMM's 2 GFLOP (the same ramp time at twice the rate); a
    # GEMM kept in 16 bits under FP8, and any GEMM in BF16, 1 GFLOP
    assert gemm_half_flops(FP8_ROOF) == 2e9
    assert gemm_half_flops(FP8_ROOF, sixteen_bit=True) == gemm_half_flops(ROOF) == 1e9
    assert gemm_half_flops(NPU(peak_tflops=100.0, number_format="fp16", hbm_gib=1.0,
                               hbm_gbps=1000.0, **CAL)) == 1e9


def test_the_catalog_says_which_parts_write_transposed_copies():
    cat = read_npu_catalog()
    assert {a.name: a.fp8_transposes for a in cat.accelerator} == {
        "A100-SXM-80GB": None, "A100-SXM-40GB": None, "H100-SXM": None, "H200-SXM": None,
        "B200": False, "GB200": False, "MI300X": None}
    fp8 = {n: NPU(**fill_npu({"accelerator": n, "number_format": "fp8"}, "m.toml"))
           for n in ("H100-SXM", "B200", "GB200")}
    assert {n: npu.fp8_transposes for n, npu in fp8.items()} == {
        "H100-SXM": True, "B200": False, "GB200": False}
    # a value without its source is refused, naming the field
    entry = cat.find("B200").model_dump()
    entry["sources"].pop("fp8_transposes")
    with pytest.raises(ValidationError, match="sources.fp8_transposes: missing; fix: give the "
                                              "public source and date of fp8_transposes"):
        Accelerator(**entry)
    # a flag given as text is refused, not read
    with pytest.raises(ValidationError, match="fp8_transposes"):
        NPU(**{**FP8_ROOF.model_dump(), "fp8_transposes": "false"})


def _tp(p, kind):
    op = next(o for o in build_step(p).stages[0].ops if o.kind == kind)
    return [(c.kind, c.size_bytes, c.phase) for c in op.comms if c.group == "tp"]


def test_fp8_sequence_parallel_gathers_carry_one_byte_per_element():
    # tiny, tp 2 with sequence parallelism: n = 8 tokens x h = 8. In BF16 each all-gather carries
    # the shard 8 x 8 x 2 / 2 = 64 B; under FP8 Transformer Engine gathers the FP8 shard, 8 x 8 x 1
    # / 2 = 32 B (the input, the output gradient and the input again for the weight gradient); the
    # reduce-scatters keep 8 x 8 x 2 = 128 B
    bf16 = [("ALLGATHER", 64, "forward"), ("REDUCESCATTER", 128, "forward"),
            ("ALLGATHER", 64, "input_grad"), ("REDUCESCATTER", 128, "input_grad"),
            ("ALLGATHER", 64, "input_grad")]
    fp8 = [(k, 32 if k == "ALLGATHER" else s, ph) for k, s, ph in bf16]
    for kind in ("attention", "mlp"):
        assert _tp(tiny(ROOF, sequence_parallel=True), kind) == bf16
        assert _tp(tiny(FP8_ROOF, sequence_parallel=True), kind) == fp8
    # full recompute gathers the FP8 input again (32 B) and reduce-scatters 128 B
    assert _tp(tiny(FP8_ROOF, sequence_parallel=True, recompute="full"), "mlp")[4:] == [
        ("ALLGATHER", 32, "input_grad"), ("REDUCESCATTER", 128, "input_grad")]
    # without sequence parallelism the all-reduces stay 16-bit: 128 B
    assert _tp(tiny(FP8_ROOF), "attention") == [("ALLREDUCE", 128, "forward"),
                                               ("ALLREDUCE", 128, "input_grad")]


def test_moe_and_output_layer_gathers_stay_sixteen_bit_under_fp8():
    # the MoE layer's TP gathers are the token dispatcher's (16 bits): its r = 8 x 2 = 16 routed
    # tokens x 8 x 2 / 2 = 128 B, as in BF16; the output layer's input gather (the BF16 logits
    # GEMM): 8 x 8 x 2 / 2 = 64 B
    moe = {"moe": MoE(experts=4, top_k=2, expert_ffn_size=8)}
    p = tiny(FP8_ROOF, arch=moe, sequence_parallel=True)
    assert [s for k, s, _ in _tp(p, "moe") if k == "ALLGATHER"] == [128, 128, 128]
    out = next(o for o in build_step(tiny(FP8_ROOF, sequence_parallel=True)).stages[1].ops
               if o.kind == "output")
    assert [c.size_bytes for c in out.comms if c.kind == "ALLGATHER"] == [64, 64]
