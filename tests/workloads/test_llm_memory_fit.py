"""Memory everywhere: FlashAttention's stored activations by hand, and a plan that does not fit in
HBM refused by solve, evaluate, pareto and provision (exit 3, saying how many GB per NPU are
missing)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.errors import NoSolutionError
from hieropt.io.llm import read_llm
from hieropt.io.workload_file import read_model
from hieropt.model.memory import (
    FLASH_STATS_BYTES,
    attention_activation_bytes,
    memory,
    require_fit,
)

from .tiny import params

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner(
    env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1", "COLUMNS": "200"}
)


def test_flash_attention_activations_by_hand():
    """The tiny model (n = b s = 2 x 4 = 8 tokens, h = 8, tp 2: a_t = 2 query heads, g_t = 1 KV
    head, d = 2, e = 2 bytes, no dropout, no sequence parallelism) per micro-batch: norm and QKV
    inputs 2 n h e = 256 B, Q, K, V n (a_t d + 2 g_t d) e = 8 x 8 x 2 = 128 B, the output
    projection's input n a_t d e = 64 B, and the softmax output a_t b s^2 e = 2 x 2 x 16 x 2 = 128
    B: 576 B. FlashAttention keeps the log-sum-exp instead, n a_t x 4 B = 64 B: 512 B; selective
    recompute drops the softmax output: 448 B."""
    assert FLASH_STATS_BYTES == 4
    assert attention_activation_bytes(params()) == 576
    assert attention_activation_bytes(params(flash_attention=True)) == 512
    assert attention_activation_bytes(params(recompute="selective"), core=False) == 448
    plain, flash = memory(params()), memory(params(flash_attention=True))
    blocks = 2  # blocks per stage; stage 0 keeps min(m, p) = 2 micro-batches in flight
    assert plain.stages[0].activations_bytes - flash.stages[0].activations_bytes == blocks * 2 * 64


MODEL = (ROOT / "models/gpt3-175b-llm.toml").read_text(encoding="utf-8")


def _files(tmp_path: Path, hbm_gib: float) -> Path:
    """The GPT-3 model file with ``hbm_gib`` GiB of HBM per NPU (the catalog accelerator's capacity
    overridden)."""
    model = MODEL.replace("hbm_reserve_gib = 4.0", f"hbm_reserve_gib = 4.0\nhbm_gib = {hbm_gib}")
    assert model != MODEL
    (tmp_path / "model.toml").write_text(model, encoding="utf-8")
    inst = (ROOT / "instances/gpt3-plan-4d.toml").read_text(encoding="utf-8").replace(
        '"../models/gpt3-175b-llm.toml"', '"model.toml"')
    (tmp_path / "inst.toml").write_text(inst, encoding="utf-8")
    return tmp_path / "inst.toml"


def test_a_plan_that_does_not_fit_is_refused(tmp_path):
    """GPT-3 175B's plan needs 27.76 GB per NPU on its first stage (its 2.82e9 parameters per NPU
    at 2 bytes of weights, 5.65 GB, and 4 of gradients, the FP32 reduction of bf16 training, 11.29
    GB; with 2-byte gradients 22.11 GB); on 16 GiB of HBM (less the 4 GiB reserve: 12.88 GB) it is
    14.87 GB short."""
    need = memory(read_llm(ROOT / "models/gpt3-175b-llm.toml", [])).peak.total_bytes / 1e9
    assert need == pytest.approx(27.76, abs=0.005)
    two = memory(read_llm(ROOT / "models/gpt3-175b-llm.toml", ["gradient_bytes=2"])).peak
    assert need - two.total_bytes / 1e9 == pytest.approx(two.weights_bytes / 1e9)  # 5.65 GB
    inst = _files(tmp_path, 16.0)
    with pytest.raises(
        NoSolutionError,
        match=r"stage 0 needs 27.76 GB per NPU, 14.87 GB more than the 12.88 GB "
        r"available \(16 GiB HBM less 4 GiB reserve\)",
    ):
        read_model(tmp_path / "model.toml")
    for args in (["solve", inst], ["evaluate", inst, "--bw", "100,100,100,200"], ["pareto", inst],
                 ["provision", inst, "--catalog", ROOT / "catalogs/example-4d.toml"]):
        r = runner.invoke(app, [str(a) for a in args])
        assert r.exit_code == 3, (args, r.output)
        assert "14.87 GB more than the 12.88 GB available" in r.output, r.output
        assert "Traceback" not in r.output
    # the library: found when the instance is read, so every call given its path raises (solve
    # returns no Solution with status infeasible: there is no instance to solve)
    import hieropt

    for call in (lambda: hieropt.load_instance(inst), lambda: hieropt.solve(inst),
                 lambda: hieropt.evaluate(inst, [100, 100, 100, 200])):
        with pytest.raises(NoSolutionError) as e:
            call()
        assert e.value.exit_code == 3
        assert str(e.value).startswith("infeasible: ")
        assert "14.87 GB more than the 12.88 GB available" in str(e.value)


def test_the_memory_fix_lists_only_options_not_in_effect(tmp_path):
    """GPT-3's plan (selective recompute, ZeRO 1, micro-batch 1) is offered full recompute,
    flash_attention, a higher zero_stage and more tp or pp; with flash_attention, full recompute
    and ZeRO 3 already on (still short on 4 GiB of HBM) only more tp or pp and the smaller
    micro-batch of a micro_batch_size 2 plan."""
    _files(tmp_path, 16.0)
    with pytest.raises(NoSolutionError) as e:
        read_model(tmp_path / "model.toml")
    assert "fix: save memory (full recompute, flash_attention, a higher zero_stage, more tp or " \
        "pp) or use an NPU with more HBM" in str(e.value)
    _files(tmp_path, 4.5)
    p = read_llm(tmp_path / "model.toml", ["flash_attention=true", "recompute=full",
                                           "zero_stage=3", "micro_batch_size=2"])
    with pytest.raises(NoSolutionError) as e:
        require_fit(p, "model.toml")
    assert "fix: save memory (more tp or pp, a smaller micro_batch_size) or use an NPU with more " \
        "HBM" in str(e.value)


def test_a_plan_that_fits_is_solved(tmp_path):
    r = runner.invoke(app, ["evaluate", str(_files(tmp_path, 80.0)), "--bw", "100,100,100,200"])
    assert r.exit_code == 0, r.output


def test_meta_llama3_405b_plan_fits_on_80_gb():
    """Meta's 8K pre-training plan on 16,384 GPUs (models/llama3-405b.toml: TP 8, PP 16, DP 128,
    interleaved with v = 8 one-layer chunks over stages of 7, 8 x 14, 7 blocks, no recompute, ZeRO 2
    with FP32 gradients, FlashAttention) fits the H100's 80 GiB less the 4 GiB reserve: 76.33 GB on
    stage 1, whose m = 16 micro-batches are all in flight (16 per block: 16 x 8 x 533,200,896 B =
    68.25 GB of activations). Without FlashAttention the 8,192^2 scores of the 16 query heads per
    GPU do not fit."""
    p = read_llm(ROOT / "models/llama3-405b.toml", [])
    pl = p.plan
    assert (
        pl.tp,
        pl.pp,
        pl.dp,
        pl.schedule,
        pl.virtual_stages,
        pl.zero_stage,
        pl.recompute,
        pl.flash_attention,
    ) == (8, 16, 128, "interleaved", 8, 2, "none", True)
    rep = memory(p)
    assert rep.fits and rep.peak.stage == 1 and rep.peak.in_flight == 16
    assert rep.peak.activations_bytes == 16 * 8 * _llama_block_bytes()
    assert rep.peak.total_bytes / 1e9 == pytest.approx(76.33, abs=0.005)
    assert not memory(read_llm(ROOT / "models/llama3-405b.toml", ["flash_attention=false"])).fits


def _llama_block_bytes() -> int:
    """One Llama 3 405B block per micro-batch on one GPU (TP 8, sequence parallelism,
    FlashAttention; n = 8,192 tokens, h = 16,384, 16 query heads and 1 KV head of d = 128 per GPU,
    FFN 53,248 / 8 = 6,656, e = 2): attention 2 n h e / 8 (norm and QKV inputs) + n (16 + 2) 128 e
    (Q, K, V) + n 16 x 128 e (output projection's input) + n 16 x 4 (log-sum-exp); SwiGLU FFN 2 n h
    e / 8 + 3 n 6,656 e (gate and up outputs, the FC2 input)."""
    n, h, e = 8192, 16384, 2
    attention = 2 * n * h * e // 8 + n * 18 * 128 * e + n * 16 * 128 * e + n * 16 * 4
    return attention + 2 * n * h * e // 8 + 3 * n * 6656 * e


def test_meta_llama3_405b_8k_plan_in_flight_by_hand():
    """The validation plan (validation/models/llama3-405b-h100.toml: PP 16, v = 8 one-layer chunks,
    N = 16) with DP 64, m = 32: stage 1 runs 2 x 14 + 7 x 16 = 140 warm-up forwards and holds 141
    chunk micro-batches of one layer each, 141 / 8 = 17.625 per block: 141 x 533,200,896 B =
    75.19 GB of activations, 83.66 GB with its weights, gradients and optimizer state, 2.06 GB over
    the 81.60 GB of 80 GiB less 4 GiB. With DP 128 (m = 16) every forward runs first (140 >= m v =
    128): 16 per block, 128 blocks' micro-batches, 76.33 GB, which fits. Stage 0's first chunk holds
    only the embedding (no activations without dropout): its 7 blocks hold 16 micro-batches each at
    the peak, not 143 / 8 = 17.875."""
    block = _llama_block_bytes()
    assert block == 533_200_896
    path = ROOT / "validation/models/llama3-405b-h100.toml"
    p = read_llm(path, ["dp=64"])
    assert (p.plan.virtual_stages, p.plan.group_size, p.plan.microbatches) == (8, 16, 32)
    rep = memory(p)
    s1 = rep.stages[1]
    assert s1.in_flight == 141 / 8
    assert s1.activations_bytes == pytest.approx(141 * block, rel=1e-12)
    assert rep.peak.stage == 1 and not rep.fits
    assert rep.peak.total_bytes / 1e9 == pytest.approx(83.66, abs=0.005)
    assert rep.over_bytes / 1e9 == pytest.approx(2.06, abs=0.005)
    assert rep.peak.total_bytes < 80 * 2**30  # within the HBM, not within HBM less the reserve
    assert rep.stages[0].in_flight == 16.0
    assert rep.stages[0].activations_bytes == pytest.approx(7 * 16 * block, rel=1e-12)
    rep = memory(read_llm(path, ["dp=128"]))
    assert rep.fits and rep.stages[1].in_flight == 16.0
    assert rep.stages[1].activations_bytes == pytest.approx(128 * block, rel=1e-12)
    assert rep.peak.total_bytes / 1e9 == pytest.approx(76.33, abs=0.005)
    # with two virtual stages instead: 45 / 2 = 22.5 per block on stage 1
    rep = memory(read_llm(path, ["dp=64", "virtual_stages=2", "microbatch_group_size=16"]))
    assert rep.stages[1].in_flight == 22.5
    assert rep.peak.total_bytes / 1e9 == pytest.approx(104.46, abs=0.005)


def test_fp8_keeps_the_linear_layers_gemm_inputs_in_one_byte():
    """Under FP8 training the stored inputs of the QKV, projection, FC1 and FC2 GEMMs take 1 byte
    (Transformer Engine's FP8 copies), the projection's input twice with FlashAttention (O in 2
    bytes for its backward, the FP8 copy); by hand on a small Llama-style block."""
    from hieropt.model.memory import attention_activation_bytes, ffn_activation_bytes
    from hieropt.workloads.llm import NPU, Architecture, LLMParams, Plan

    arch = Architecture(name="t", layers=2, hidden_size=64, heads=4, kv_heads=2, ffn_size=128,
                        gated_ffn=True, vocab_size=100, sequence_length=16, norm="rmsnorm",
                        biases=False, dropout=False, position_embedding="rotary",
                        tied_embeddings=False)
    plan = Plan(tp=1, pp=1, dp=1, micro_batch_size=1, global_batch_size=1, flash_attention=True)
    bf16 = NPU(peak_tflops=100.0, efficiency=0.5, hbm_gib=80.0)
    fp8 = NPU(peak_tflops=200.0, efficiency=0.5, hbm_gib=80.0, number_format="fp8")
    p16, p8 = (LLMParams(model=arch, plan=plan, npu=n) for n in (bf16, fp8))
    assert p8.activation_bytes == 2  # (the other stored tensors stay in 2 bytes)
    n, h, q, kv, f = 16, 64, 64, 32, 128  # tokens, hidden, q_t = a d, kv_t = g d, ffn
    stats = n * 4 * 4  # FlashAttention's log-sum-exp: n a_t x 4 bytes
    # bf16: norm in + QKV in 2 n h e, Q K V n (q + 2 kv) e, O n q e
    qkv = n * (q + 2 * kv) * 2
    assert attention_activation_bytes(p16) == 2 * n * h * 2 + qkv + n * q * 2 + stats
    # fp8: n h (2 + 1), Q K V as bf16, O n q (2 + 1)
    assert attention_activation_bytes(p8) == n * h * 3 + qkv + n * q * 3 + stats
    # FFN (gated): norm in + FC1 in, gate and up outputs 2 n f e, FC2 in n f (e or 1)
    assert ffn_activation_bytes(p16) == 2 * n * h * 2 + 2 * n * f * 2 + n * f * 2
    assert ffn_activation_bytes(p8) == n * h * 3 + 2 * n * f * 2 + n * f * 1
    # without FlashAttention O is the projection's input only: its FP8 copy
    unfused = LLMParams(model=arch, plan=plan.model_copy(update={"flash_attention": False}),
                        npu=fp8)
    with_core = attention_activation_bytes(unfused, core=False)
    assert with_core == n * h * 3 + qkv + n * q * 1
