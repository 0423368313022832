"""The roofline compute model (hieropt/workloads/llm/roofline.py, kernels.py): hand-computed kernel
times, the kernels of a layer, recompute, FlashAttention, and GPT-3 175B against a published time
the fit never saw."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hieropt.io.npus import read_npu_catalog
from hieropt.model.memory import memory
from hieropt.workloads.llm import NPU, Architecture, LLMParams, Plan, build_step
from hieropt.workloads.llm.accelerators import CALIBRATION_FIELDS
from hieropt.workloads.llm.kernels import Kernel, eltwise, gemm, layer_kernels
from hieropt.workloads.llm.lower import lower_stage
from hieropt.workloads.llm.roofline import (
    kernel_ns,
    launches,
    layer_ns,
    matrix_efficiency,
    update_ns,
)

from .roofline import CAL, FP8_ROOF, ROOF, tiny


def test_gemm_compute_bound():
    # m = n = k = 1000: F = 2e9, eta = 0.5 x 2 / (2 + 1) = 1/3, compute 2e9 / (1e5 / 3) = 60,000 ns;
    # bytes 2 x 3e6 = 6e6 / 500 = 12,000 ns < 60,000: t = 60,000 + 2,000 overhead
    k = gemm("g", "forward", 1000, 1000, 1000, 2)
    assert (k.flops, k.bytes) == (2e9, 6e6)
    assert matrix_efficiency(ROOF, 2e9) == pytest.approx(1 / 3, rel=1e-15)
    assert kernel_ns(ROOF, k) == pytest.approx(62_000, rel=1e-12)


def test_gemm_memory_bound():
    # m = 1e6, n = k = 8: compute (1.28e8 + 1e9) / (1e5 x 0.5) = 22,560 ns; bytes 2 (8e6 + 64 + 8e6)
    # = 32,000,128 / 500 = 64,000.256 ns: memory-bound, t = 64,000.256 + 2,000
    k = gemm("skinny", "forward", 1e6, 8, 8, 2)
    assert k.flops / (1e5 * matrix_efficiency(ROOF, k.flops)) == pytest.approx(22_560, rel=1e-12)
    assert kernel_ns(ROOF, k) == pytest.approx(66_000.256, rel=1e-12)


def test_elementwise_op():
    # tiny model, attention norm (RMSNorm): 2 e n h = 2 x 2 x 8 x 8 = 256 bytes -> 0.512 ns + 2,000
    # ns
    norm = next(k for k in layer_kernels(tiny(), "attention") if k.name == "attention norm")
    assert (norm.kind, norm.flops, norm.bytes) == ("elementwise", 0.0, 256)
    assert kernel_ns(ROOF, norm) == pytest.approx(2000.512, rel=1e-15)
    # softmax over the score matrix: B = b a_t = 2 x 2 heads of s^2 = 16: 2 e B s^2 = 256 bytes
    soft = next(k for k in layer_kernels(tiny(), "attention") if k.name == "softmax")
    assert soft.bytes == 256
    # sequence parallelism splits the norm over TP: n' = n / 2
    sp = next(
        k
        for k in layer_kernels(tiny(sequence_parallel=True), "attention")
        if k.name == "attention norm"
    )
    assert sp.bytes == 128
    assert (
        kernel_ns(ROOF, eltwise("x", "forward", 1e6, 0)) == 2000.0
    )  # inside another kernel: no overhead


def test_flash_attention_vs_unfused():
    # tiny: B = 4 heads, s = 4, d = 2, n = 8, q_t = 4, kv_t = 2. Unfused forward core: scores and
    # context GEMMs (2 x 2 B s^2 d = 512 FLOPs) and the softmax's 2 e B s^2 = 256 bytes of score
    # matrix; fused: one kernel of 2 B s^2 d = 256 FLOPs (causal: half the blocks) moving e n (2 q_t
    # + 2 kv_t) = 192 bytes, no score matrix
    plain = [
        k for k in layer_kernels(tiny(), "attention") if k.name in ("scores", "softmax", "context")
    ]
    assert sum(k.flops for k in plain) == 512 and [k.name for k in plain] == [
        "scores",
        "softmax",
        "context",
    ]
    ks = layer_kernels(tiny(flash_attention=True), "attention")
    assert not [k for k in ks if k.name in ("scores", "softmax", "context")]
    fwd = next(k for k in ks if k.name == "flash attention")
    bwd = next(k for k in ks if k.name == "flash attention bwd")
    assert (fwd.kind, fwd.flops, fwd.bytes) == ("attention", 256, 192)
    assert (bwd.flops, bwd.bytes) == (
        640,
        384,
    )  # 2.5 x forward (the scores recomputed); e n (4 q_t + 4 kv_t)
    # its time: max(256 / (1e5 x 0.25), 192 / 500) + 2,000 = 2,000.384 ns
    assert kernel_ns(ROOF, fwd) == pytest.approx(2000.384, rel=1e-15)


def test_flash_attention_is_one_plan_field(tmp_path):
    # the plan's flash_attention sets the kernels (and the memory model); in [params.npu] it is
    # refused with the fix
    from hieropt.errors import InputError
    from hieropt.io.llm import read_llm

    f = tmp_path / "m.toml"
    f.write_text(
        'generator = "llm"\n[params.model]\nlayers = 2\nhidden_size = 8\nheads = 4\n'
        "ffn_size = 32\nvocab_size = 64\nsequence_length = 4\n[params.plan]\n"
        "global_batch_size = 1\n[params.npu]\npeak_tflops = 1.0\nefficiency = 0.5\n"
        "hbm_gib = 1.0\nflash_attention = true\n"
    )
    with pytest.raises(InputError, match="move flash_attention to \\[params.plan\\]"):
        read_llm(f)


def test_flash_attention_is_faster_on_gpt3():
    npu = _a100()
    p = korthikanti("175B", npu, "none", False)
    fused = korthikanti("175B", npu, "none", False, flash=True)
    assert layer_ns(fused, "attention")[0] < layer_ns(p, "attention")[0]


def test_kernel_launches_per_layer():
    # attention forward: norm, qkv, rotary, scores, softmax, context, projection, residual add (the
    # TP reduction runs inside its collective); input gradient: norm, qkv, rotary, 2 context,
    # softmax, 2 scores, projection;
    # weight gradient: qkv and projection (no biases, no dropout in the tiny model)
    assert launches(tiny(), "attention") == (8, 9, 2)
    # FFN: norm, up (gate + up), SwiGLU, down, residual add; input gradient norm, up, SwiGLU, down;
    # weights 2
    assert launches(tiny(), "mlp") == (5, 4, 2)
    # the overhead is launches x 2,000 ns
    free = tiny(ROOF.model_copy(update={"kernel_overhead_us": 0.0}))
    for kind in ("attention", "mlp"):
        diff = [a - b for a, b in zip(layer_ns(tiny(), kind), layer_ns(free, kind), strict=True)]
        assert diff == pytest.approx([2000.0 * c for c in launches(tiny(), kind)], rel=1e-12)


def test_backward_gemms_are_twice_the_forward():
    ks = [k for k in layer_kernels(tiny(), "mlp") if k.kind == "gemm"]
    by_phase = {
        ph: sum(k.flops for k in ks if k.phase == ph)
        for ph in ("forward", "input_grad", "weight_grad")
    }
    assert (
        by_phase["forward"]
        == by_phase["input_grad"]
        == by_phase["weight_grad"]
        == 2 * 8 * 8 * 8 * 3
    )  # 2 m n h f_t
    assert by_phase["forward"] == build_step(tiny()).stages[0].ops[2].flops[0]  # counts.py's FLOPs


def test_recompute_adds_the_forward_again():
    none, full, sel = tiny(), tiny(recompute="full"), tiny(recompute="selective")
    for kind in ("attention", "mlp"):
        a, b = layer_ns(none, kind), layer_ns(full, kind)
        assert b[1] - a[1] == pytest.approx(a[0], rel=1e-12) and (a[0], a[2]) == (b[0], b[2])
    core = [
        k for k in layer_kernels(none, "attention") if k.name in ("scores", "softmax", "context")
    ]
    extra = layer_ns(sel, "attention")[1] - layer_ns(none, "attention")[1]
    assert extra == pytest.approx(sum(kernel_ns(ROOF, k) for k in core), rel=1e-12)
    assert layer_ns(sel, "mlp") == layer_ns(none, "mlp")


def test_roofline_times_feed_the_workload():
    p = tiny()
    w = lower_stage(build_step(p), 0)
    attn = next(layer for layer in w.layers if layer.name == "attn1")
    f, i, wt = layer_ns(p, "attention")
    assert (attn.forward.compute_ns, attn.input_grad.compute_ns, attn.weight_grad.compute_ns) == (
        f,
        i,
        wt,
    )
    step = build_step(p)
    fwd, bwd = step.compute_ns(1)
    ops = step.stages[1].ops
    assert fwd == pytest.approx(sum(layer_ns(p, op.kind)[0] for op in ops), rel=1e-12)
    assert bwd == pytest.approx(sum(sum(layer_ns(p, op.kind)[1:]) for op in ops), rel=1e-12)


def test_optimizer_step_roofline():
    # attention: 104 parameters x 30 bytes (2 K + g + w = 24 + 4 + 2: bf16's FP32 gradients) =
    # 3,120 bytes at 500 bytes/ns = 6.24 ns, + 2,000 ns overhead
    assert update_ns(tiny(), 104, 0) == pytest.approx(2006.24, rel=1e-14)
    assert update_ns(tiny(zero_stage=1), 104, 0) == pytest.approx(
        2003.12, rel=1e-14
    )  # the half on each


def test_optimizer_step_shards_over_dp_times_cp():
    # ZeRO 1, dp 2, cp 2: the dense parameters are sharded over dp x cp = 4 NPUs (the group that
    # reduces their gradients and holds 1 / 4 of their optimizer state), 104 / 4 = 26 parameters x
    # 30 bytes = 780 bytes at 500 bytes/ns = 1.56 ns + 2,000 ns: the update time of cp 1 halved
    # (above its fixed launch); without ZeRO every NPU updates all 104 whatever cp
    assert update_ns(tiny(zero_stage=1, cp=2), 104, 0) == pytest.approx(2001.56, rel=1e-14)
    assert update_ns(tiny(zero_stage=1, cp=2), 104, 0) - 2000 == pytest.approx(
        (update_ns(tiny(zero_stage=1), 104, 0) - 2000) / 2, rel=1e-12)
    assert update_ns(tiny(cp=2), 104, 0) == pytest.approx(2006.24, rel=1e-14)


def test_optimizer_step_time_and_state_take_one_share():
    # the memory model's optimizer bytes of a stage / K = the parameters each NPU updates: stage 0
    # of tp 2, pp 2, dp 2, cp 2 under ZeRO 1 holds (embedding 128 + 2 blocks x (104 + 200)) / (dp
    # x cp) = 736 / 4 = 184 parameters' state; its update times those 184 (30 bytes each: 5,520
    # bytes, 11.04 ns) plus one launch per layer (1 + 2 x 2 = 5 layers: 10,000 ns)
    p = tiny(zero_stage=1, cp=2)
    state = memory(p).stages[0].optimizer_bytes
    assert state == pytest.approx(184 * 12, rel=1e-14)
    assert build_step(p).update_ns(0) == pytest.approx(10_011.04, rel=1e-12)


def test_calibration_fields_bound_the_npu():
    names = [f.name for f in CALIBRATION_FIELDS]
    assert names == [
        "matrix_efficiency",
        "gemm_half_gflop",
        "hbm_efficiency",
        "kernel_overhead_us",
        "attention_efficiency",
    ]
    for f in CALIBRATION_FIELDS:
        assert f.lower <= f.default <= f.upper
        with pytest.raises(ValueError, match=f.name):
            NPU(peak_tflops=1.0, hbm_gib=1.0, hbm_gbps=1.0, **{**CAL, f.name: f.upper * 2 + 1})
        with pytest.raises(ValueError, match=f.name):
            NPU(peak_tflops=1.0, hbm_gib=1.0, hbm_gbps=1.0, **{**CAL, f.name: f.lower - 1})


def test_one_compute_model_at_a_time():
    with pytest.raises(ValueError, match="efficiency: given with the roofline's matrix_efficiency"):
        NPU(peak_tflops=1.0, efficiency=0.5, hbm_gib=1.0, hbm_gbps=1.0, **CAL)
    with pytest.raises(ValueError, match="kernel_overhead_us: missing"):
        NPU(
            peak_tflops=1.0,
            hbm_gib=1.0,
            hbm_gbps=1.0,
            **{k: v for k, v in CAL.items() if k != "kernel_overhead_us"},
        )
    with pytest.raises(ValueError, match="hbm_gbps: missing"):
        NPU(peak_tflops=1.0, hbm_gib=1.0, **CAL)


# ------------------------------------------------------------------------------------ GPT-3 175B,
# held out
BUSBW_GBPS = 232.0  # all-reduce bus bandwidth of one DGX A100, nccl-tests (NVIDIA GTC 2024 S62129)


def _cal(acc) -> dict:
    return {f.name: getattr(acc.calibration, f.name) for f in CALIBRATION_FIELDS}


# Korthikanti et al. 2022, Tables 3 and 5: (hidden, heads, layers, PP, virtual stages,
# micro-batches, seconds per iteration with full recompute, with selective recompute + sequence
# parallelism)
TABLE5 = {"175B": (12288, 96, 96, 8, 3, 64, 18.13, 13.75),
          "530B": (20480, 128, 105, 35, 3, 280, 49.05, 37.83),
          "1T": (25600, 160, 128, 64, 1, 512, 94.42, 71.49)}


def korthikanti(model: str, npu: NPU, recompute: str, sp: bool, flash: bool = False) -> LLMParams:
    """A model of Korthikanti et al. 2022 as they ran it (Table 3: TP 8, micro-batch 1, no DP)."""
    h, a, layers, pp, v, m = TABLE5[model][:6]
    arch = Architecture(name=model, layers=layers, hidden_size=h, heads=a, ffn_size=4 * h,
                        vocab_size=51200, sequence_length=2048)
    plan = Plan(tp=8, pp=pp, dp=1, micro_batch_size=1, global_batch_size=m, recompute=recompute,
                sequence_parallel=sp, schedule="interleaved" if v > 1 else "1f1b",
                virtual_stages=v, flash_attention=flash)
    return LLMParams(model=arch, plan=plan, npu=npu)


def _tp_ms(p: LLMParams, phase: str) -> float:
    t, total = p.plan.tp, 0.0
    factor = {"ALLREDUCE": 2 * (t - 1) / t, "REDUCESCATTER": (t - 1) / t, "ALLGATHER": t - 1}
    for op in build_step(p).stages[1].ops[:2]:
        for c in op.comms:
            if c.group == "tp" and c.phase == phase:
                total += factor[c.kind] * c.size_bytes / BUSBW_GBPS / 1e6
    return total


def _layer_ms(p: LLMParams) -> tuple[float, float]:
    """(forward, forward + backward) of one block with its TP collectives at BUSBW_GBPS, ms."""
    a, m = layer_ns(p, "attention"), layer_ns(p, "mlp")
    fwd = (a[0] + m[0]) / 1e6 + _tp_ms(p, "forward")
    return fwd, fwd + (a[1] + a[2] + m[1] + m[2]) / 1e6 + _tp_ms(p, "input_grad")


MAMF_A100 = 271.2 / 312.0
"""The A100's kernel-level matrix efficiency: its measured maximum achievable matmul rate (271.2
of 312 TFLOP/s, ml-engineering), with which scripts/fit_compute.py fitted the catalog's
``hbm_efficiency`` on per-layer times. The catalog's default ``matrix_efficiency`` is fitted on
end-to-end iterations instead (it also carries what a layer's time leaves out: pipeline sends,
the embedding and output layers, the optimizer step), so the per-layer checks take this one."""


def _a100() -> NPU:
    """The A100 80GB with the catalog's kernel-level calibration (:data:`MAMF_A100` as its
    ``matrix_efficiency``, the rest the catalog's)."""
    acc = read_npu_catalog().find("A100-SXM-80GB")
    cal = {**_cal(acc), "matrix_efficiency": MAMF_A100}
    return NPU(peak_tflops=acc.peak("bf16"), hbm_gib=acc.hbm_gib, hbm_gbps=acc.hbm_gbps, **cal)


def test_gpt3_175b_layer_against_a_held_out_published_time():
    """The A100's kernel-level calibration was fitted on the 22B model's layer times (Korthikanti
    et al. 2022, Table 4) only. Held out: Table 5, GPT-3 175B with full recompute, 18.13 s per
    iteration = (m + (p - 1) / v) x L / p = 66.33 x 12 layer slots of 22.78 ms; with full
    recompute a slot is a forward, a recomputed forward and a backward of two forwards: forward
    5.69 ms. Predicted (the
    layer's compute plus its TP collectives at the measured DGX A100 bus bandwidth): forward 5.41 ms
    (-5 %), forward + backward 20.1 ms (-12 %: the slot also holds the pipeline sends, the output
    layer and the optimizer step the prediction leaves out). Bands: forward within 10 %, forward +
    backward within 15 %, predicted below the measurement."""
    fwd, both = _layer_ms(korthikanti("175B", _a100(), "full", False))
    slot = 18.13e3 / ((64 + 7 / 3) * 12)
    assert slot == pytest.approx(22.78, abs=0.01)
    assert 0.90 * slot / 4 <= fwd <= slot / 4
    assert 0.85 * slot <= both <= slot


@pytest.mark.parametrize("model", ["175B", "530B", "1T"])
@pytest.mark.parametrize("recompute, sp", [("full", False), ("selective", True)])
def test_held_out_layer_slots(model, recompute, sp):
    """Every model of Table 5 (held out): a block's predicted forward + backward is 12 to 18 % below
    the published layer slot (the iteration over (m + (p - 1) / v) x L / p), which also holds the
    pipeline sends, the first and last stages' embedding and output layers and the optimizer step:
    within 20 %, and below it."""
    h, a, layers, pp, v, m, full, sel = TABLE5[model]
    seconds = full if recompute == "full" else sel
    slot = seconds * 1e3 / ((m + (pp - 1) / v) * layers / pp)
    _, both = _layer_ms(korthikanti(model, _a100(), recompute, sp))
    assert 0.80 * slot <= both <= slot


@pytest.mark.parametrize("arch, plan", [
    ({}, {}),
    ({"biases": True, "dropout": True, "norm": "layernorm", "gated_ffn": False},
     {"sequence_parallel": True}),
    ({"moe": {"experts": 4, "top_k": 2, "expert_ffn_size": 8, "shared_experts": 1}}, {"ep": 2}),
])
def test_kernel_flops_are_the_counted_flops(arch, plan):
    """Unfused, the GEMMs of every layer add up to counts.py's FLOPs in each phase."""
    p = tiny(arch=arch, **plan)
    for op in build_step(p).stages[0].ops + build_step(p).stages[1].ops:
        ks = layer_kernels(p, op.kind)
        phases = ("forward", "input_grad", "weight_grad")
        by = [sum(k.flops for k in ks if k.phase == ph) for ph in phases]
        assert by == pytest.approx(list(op.flops), rel=1e-12), op.name


def test_with_calibration():
    flat = NPU(peak_tflops=100.0, efficiency=0.5, hbm_gib=1.0, hbm_gbps=1000.0)
    roof = flat.with_calibration(CAL)
    assert roof.roofline and roof.calibration == CAL and roof.flops_per_ns == 5e4
    assert roof.with_calibration({"kernel_overhead_us": 1.0}).kernel_overhead_us == 1.0
    with pytest.raises(ValueError, match="gemm_half_gflop: missing"):
        flat.with_calibration({"matrix_efficiency": 0.8})
    with pytest.raises(ValueError, match="colour: not a calibration parameter"):
        roof.with_calibration({"colour": 1.0})
    with pytest.raises(ValueError, match="hbm_efficiency"):
        roof.with_calibration({"hbm_efficiency": 2.0})


def test_context_parallel_kernels_by_hand():
    # tiny, cp 2 (dp 1): each NPU holds n / cp = 4 of the micro-batch's 8 tokens, s_q = 2 queries
    # per sequence against all s = 4 keys, B = b a_t = 4 heads, d = 2, e = 2.
    one, two = tiny(dp=1), tiny(dp=1, cp=2)
    ks = layer_kernels(two, "attention")
    by = {k.name: k for k in ks}
    # scores GEMM (2, 4, 2) x 4: 2 x 2 x 4 x 2 x 4 = 128 FLOPs (half of cp 1's 256); softmax 2 e B
    # s_q s = 128 bytes; QKV GEMM on 4 tokens (4, q_t + 2 kv_t = 8, h = 8): 512 FLOPs
    assert (by["scores"].flops, by["softmax"].bytes, by["qkv"].flops) == (128, 128, 512)
    # the keys' gradient (s, d, s_q) x B: 2 x 4 x 2 x 2 x 4 = 128 FLOPs
    assert by["scores dgrad (keys)"].flops == 128
    # every FLOP of the layer is halved (cp 1: QKV 1,024, core 4 x 256 ...)
    flops = [sum(k.flops for k in layer_kernels(q, "attention")) for q in (one, two)]
    assert flops[1] == flops[0] / 2
    # FlashAttention: 2 B s_q s d = 128 FLOPs; bytes e (n/cp 2 q_t + n 2 kv_t) = 2 (4 x 8 + 8 x 4)
    fa = next(k for k in layer_kernels(tiny(dp=1, cp=2, flash_attention=True), "attention")
              if k.name == "flash attention")
    assert (fa.flops, fa.bytes) == (128, 128)
    # the layer's time is its kernels' times (not the cp = 1 time over 2: the overheads stay)
    t1, t2 = layer_ns(one, "attention"), layer_ns(two, "attention")
    assert t2[0] == pytest.approx(sum(kernel_ns(ROOF, k) for k in ks if k.phase == "forward"))
    assert t2[0] > t1[0] / 2
    assert build_step(two).stages[0].ops[1].compute_ns == layer_ns(two, "attention")


def test_fp8_times_linear_gemms_at_the_fp8_peak():
    # the test_gemm_compute_bound GEMM in FP8: F = 2e9, F_half twice the 16-bit 1 GFLOP (the same
    # ramp time at twice the rate), eta = 0.5 x 2 / (2 + 2) = 1/4 at 2e5 FLOP/ns: 40,000 ns; bytes
    # 12,000 ns: t = 40,000 + 2,000
    assert matrix_efficiency(FP8_ROOF, 2e9) == pytest.approx(0.25, rel=1e-15)
    assert kernel_ns(FP8_ROOF, gemm("g", "forward", 1000, 1000, 1000, 2)) == pytest.approx(
        42_000, rel=1e-12)
    qkv = next(k for k in layer_kernels(tiny(FP8_ROOF), "attention") if k.name == "qkv")
    assert not qkv.sixteen_bit


def test_fp8_keeps_the_attention_core_and_the_logits_at_the_16_bit_peak():
    # the same GEMM marked 16-bit: at 1e5 FLOP/ns and F_half 1 GFLOP as on ROOF, 60,000 + 2,000 ns
    g16 = replace(gemm("g", "forward", 1000, 1000, 1000, 2), sixteen_bit=True)
    assert kernel_ns(FP8_ROOF, g16) == pytest.approx(62_000, rel=1e-12)
    assert kernel_ns(ROOF, g16) == pytest.approx(62_000, rel=1e-12)  # (bf16: its own peak)
    # an attention kernel of 1e9 FLOPs (compute-bound): 1e9 / (1e5 x 0.25) = 40,000 + 2,000 ns at
    # the 16-bit peak, 20,000 + 2,000 ns at the FP8 peak
    core = Kernel("core", "forward", "attention", 1e9, 0.0)
    assert kernel_ns(FP8_ROOF, replace(core, sixteen_bit=True)) == pytest.approx(42_000, rel=1e-12)
    assert kernel_ns(FP8_ROOF, core) == pytest.approx(22_000, rel=1e-12)
    fp8 = tiny(FP8_ROOF, flash_attention=True)
    flash = [k for k in layer_kernels(fp8, "attention") if k.kind == "attention"]
    assert len(flash) == 2 and all(k.sixteen_bit for k in flash)
    unfused = [k for k in layer_kernels(tiny(FP8_ROOF), "attention") if k.kind == "gemm"]
    assert {k.name for k in unfused if k.sixteen_bit} == {
        "scores", "context", "context dgrad (probs)", "context dgrad (values)",
        "scores dgrad (queries)", "scores dgrad (keys)"}
    logits = [k for k in layer_kernels(fp8, "output") if k.name.startswith("logits") and k.flops]
    assert len(logits) == 3 and all(k.sixteen_bit for k in logits)
    # a full recompute's copies keep the mark
    again = [k for k in layer_kernels(tiny(FP8_ROOF, recompute="full"), "attention")
             if k.name == "recompute scores"]
    assert again and again[0].sixteen_bit and again[0].phase == "input_grad"
