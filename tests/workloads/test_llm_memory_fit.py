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
from hieropt.model.memory import FLASH_STATS_BYTES, attention_activation_bytes, memory

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
    """GPT-3 175B's plan needs 22.11 GB per NPU on its first stage; on 16 GiB of HBM (less the 4 GiB
    reserve: 12.88 GB) it is 9.23 GB short."""
    need = memory(read_llm(ROOT / "models/gpt3-175b-llm.toml", [])).peak.total_bytes / 1e9
    assert need == pytest.approx(22.11, abs=0.005)
    inst = _files(tmp_path, 16.0)
    with pytest.raises(
        NoSolutionError,
        match=r"stage 0 needs 22.11 GB per NPU, 9.23 GB more than the 12.88 GB "
        r"available \(16 GiB HBM less 4 GiB reserve\)",
    ):
        read_model(tmp_path / "model.toml")
    for args in (["solve", inst], ["evaluate", inst, "--bw", "100,100,100,200"], ["pareto", inst],
                 ["provision", inst, "--catalog", ROOT / "catalogs/example-4d.toml"]):
        r = runner.invoke(app, [str(a) for a in args])
        assert r.exit_code == 3, (args, r.output)
        assert "9.23 GB more than the 12.88 GB available" in r.output, r.output
        assert "Traceback" not in r.output


def test_a_plan_that_fits_is_solved(tmp_path):
    r = runner.invoke(app, ["evaluate", str(_files(tmp_path, 80.0)), "--bw", "100,100,100,200"])
    assert r.exit_code == 0, r.output


def test_meta_llama3_405b_plan_fits_on_80_gb():
    """Meta's 8K pre-training plan (models/llama3-405b.toml: TP 8, PP 16, DP 128, interleaved with v
    = 2 over stages of 7, 8 x 14, 7 blocks, no recompute, ZeRO 2, FlashAttention) fits the H100's 80
    GiB less the 4 GiB reserve: 75.63 GB on stage 1 (16 micro-batches in flight). Without
    FlashAttention the 8,192^2 scores of the 16 query heads per GPU do not fit."""
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
    ) == (8, 16, 128, "interleaved", 2, 2, "none", True)
    rep = memory(p)
    assert rep.fits and rep.peak.stage == 1
    assert rep.peak.total_bytes / 1e9 == pytest.approx(75.63, abs=0.005)
    assert not memory(read_llm(ROOT / "models/llama3-405b.toml", ["flash_attention=false"])).fits
