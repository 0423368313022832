"""The published runs shipped under validation/ parse, and every run is predicted with finite
metrics (their accuracy is documented in docs/validation.md, not asserted here)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.io.runs import read_runs
from hieropt.studies.validate import calibrate, validate

REPO = Path(__file__).resolve().parents[2]
FILES = sorted((REPO / "validation").glob("*.csv"))
CALIBRATION = REPO / "validation" / "calibration" / "a100-one-node.csv"
H100_CALIBRATION = REPO / "validation" / "calibration" / "h100-one-node.csv"
BRIDGE = REPO / "validation" / "megatron-bridge-2025.csv"
FP8_CALIBRATION = [
    REPO / "validation" / "calibration" / f"{system}-fp8-one-node.csv"
    for system in ("gb200", "b200", "h100")
]
runner = CliRunner(env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1",
                        "COLUMNS": "200"})


def data_rows(path: Path) -> int:
    """Rows of a runs file: its lines less comments, blank lines and the header."""
    lines = [t for t in path.read_text().splitlines() if t.strip() and not t.startswith("#")]
    return len(lines) - 1


def test_the_published_tables_are_shipped():
    names = {p.name for p in FILES}
    assert {"narayanan2021.csv", "korthikanti2022.csv", "llama3-2024.csv"} <= names
    assert CALIBRATION.is_file()


@pytest.mark.parametrize(
    "path", [*FILES, CALIBRATION, H100_CALIBRATION, *FP8_CALIBRATION], ids=lambda p: p.name
)
def test_a_shipped_runs_file_parses_with_its_sources(path: Path):
    runs = read_runs(path)
    assert len(runs) == data_rows(path) >= 1
    assert path.read_text().startswith("#")  # the sources, in comments
    for r in runs:
        assert r.source, f"{r.where}: no source"
        assert r.measured_ms > 0 and all(b > 0 for b in r.bw_gbps)
        assert r.params.plan.total_npus == math.prod(d.npus for d in r.network.dims)


@pytest.mark.heavy
def test_every_shipped_run_is_predicted_with_finite_metrics():
    v = validate(FILES, calibrate_on=[CALIBRATION])
    assert len(v.rows) == sum(data_rows(p) for p in FILES)
    assert all(math.isfinite(x.predicted_ms) and x.predicted_ms > 0 for x in v.rows)
    assert math.isfinite(v.mape) and math.isfinite(v.worst)
    assert all(math.isfinite(g.spearman) and 1 <= g.fastest_rank <= g.runs for g in v.groups)
    (fit,) = v.calibrations
    assert fit.npu == "A100-SXM-80GB" and fit.runs == 2
    assert set(fit.values) == {"matrix_efficiency"}  # the roofline's one field fitted on runs
    assert fit.values["matrix_efficiency"] == pytest.approx(0.7706, abs=1e-4)
    assert all(0.01 <= v <= 1 for v in fit.values.values())
    # the calibration runs, marked, not validated: the A100's two, and the three 8-GPU FP8 runs the
    # catalog's FP8 defaults were fitted on
    assert sum(x.in_sample for x in v.rows) == 5
    # the published numbers of docs/validation.md (calibrated on one node, predicting the other
    # models' multi-node runs): the A100 runs other than DeepSpeed's ZeRO-3 within 8.6 % on average,
    # the Megatron-LM runs (the calibration runs' software) within 6.0 %, worst 11.8 %
    a100 = [x for x in v.rows if not x.in_sample and x.run.params.npu.name == "A100-SXM-80GB"]
    ptdp = [x for x in a100 if x.run.params.plan.zero_stage < 3]
    megatron = [x for x in ptdp if x.run.path.name in ("narayanan2021.csv", "korthikanti2022.csv")]
    assert (len(a100), len(ptdp), len(megatron)) == (33, 27, 23)
    assert sum(abs(x.error) for x in ptdp) / len(ptdp) == pytest.approx(0.086, abs=0.0005)
    assert max(abs(x.error) for x in ptdp) == pytest.approx(0.279, abs=0.0005)
    assert sum(abs(x.error) for x in megatron) / len(megatron) == pytest.approx(0.060, abs=0.0005)
    assert max(abs(x.error) for x in megatron) == pytest.approx(0.118, abs=0.0005)


@pytest.mark.parametrize(
    ("npu", "fmt", "runs", "plans", "mape", "worst", "errors"),
    [
        ("H100-SXM", "bf16", H100_CALIBRATION, 2, 0.0173, 0.0419, [-0.010, -0.0, 0.042]),
        ("A100-SXM-80GB", "bf16", CALIBRATION, 2, 0.0133, 0.0267, [0.0, -0.027]),
        ("GB200", "fp8", FP8_CALIBRATION[0], 1, 0.0, 0.0, [0.0]),
        ("B200", "fp8", FP8_CALIBRATION[1], 1, 0.0, 0.0, [0.0]),
        ("H100-SXM", "fp8", FP8_CALIBRATION[2], 1, 0.0, 0.0, [0.0]),
    ],
)
@pytest.mark.heavy
def test_the_default_is_its_fit_on_one_node(npu, fmt, runs, plans, mape, worst, errors):
    """A catalog default fitted on one node (catalogs/npus.toml; in FP8 its entry's
    ``[calibration.fp8]``) is what ``hieropt calibrate`` fits on the runs file its ``runs_file``
    names, and ``validate`` with that default predicts the runs as fitted (not at a bound of the
    fit).

    H100-SXM: three measured BF16 runs of Llama 3.1 8B on one DGX H100 node (one plan, three
    software releases: 12.91, 12.78 and 12.27 s; gradients in BF16, and two distinct runs: the
    last release's optimizer keeps 12 bytes a parameter, the others' 10); the MAPE fit lands on
    the middle run (0.0 %), the others 1.0 % and 4.2 % off: the releases' spread. A100-SXM-80GB:
    the two 8-GPU runs of Korthikanti et al. 2022 Table 5 (22B, TP 8; 1.42 s with full
    recompute, 1.10 s with selective recompute and sequence parallelism); the fit lands on the
    full-recompute run (0.0 %), the other 2.7 % off. GB200, B200, H100-SXM in FP8: each system's
    one FP8 run of Llama 3 8B on 8 GPUs (NVIDIA Megatron-Bridge 25.11), fitted exactly: 0.4544,
    0.4962 and 0.6173 of the FP8 peak (the H100's run recomputes the first 5 of its 32 blocks:
    recompute_layers = 5; Transformer Engine's FP8 casts timed as kernels of their own)."""
    from hieropt.io.npus import read_npu_catalog

    entry = read_npu_catalog().find(npu).calibration.in_format(fmt)
    if fmt == "fp8":
        assert entry.matrix_efficiency == {"GB200": 0.4544, "B200": 0.4962, "H100-SXM": 0.6173}[npu]
    assert REPO / entry.runs_file == runs
    (fit,) = calibrate(read_runs(runs))
    assert fit.npu == npu and set(fit.values) == {"matrix_efficiency"}
    assert (fit.runs, fit.measurements) == (plans, len(errors))  # (H100: 3 releases, 2 plans)
    assert fit.values["matrix_efficiency"] == pytest.approx(entry.matrix_efficiency, abs=5e-5)
    assert (fit.mape, fit.worst) == pytest.approx((mape, worst), abs=5e-4)
    assert fit.at_bound == ()
    assert [round(x.error, 3) for x in validate([runs]).rows] == errors


def test_the_siblings_take_the_fit_of_their_die():
    """The 40 GB A100 takes the 80 GB A100's fit and the H200 the H100's (the same die and peaks;
    stated in their ``fitted_on``)."""
    from hieropt.io.npus import read_npu_catalog

    cat = read_npu_catalog()
    for small, big in (("A100-SXM-40GB", "A100-SXM-80GB"), ("H200-SXM", "H100-SXM")):
        a, b = cat.find(small).calibration, cat.find(big).calibration
        assert (a.matrix_efficiency, a.runs_file) == (b.matrix_efficiency, b.runs_file)


@pytest.mark.heavy
def test_validate_without_calibration_runs_marks_the_default_s_runs_in_sample():
    """``hieropt validate validation/*.csv`` with the catalog's defaults gives the out-of-sample
    summary of ``--calibrate-on validation/calibration/a100-one-node.csv`` (the A100 default is
    that fit, rounded to 4 digits): 54 runs, MAPE 12.1 %, worst 67.3 % (DeepSpeed ZeRO-3, 175B on
    1,536 GPUs), the two 22B rows of korthikanti2022.csv and the three 8-GPU FP8 rows of
    megatron-bridge-2025.csv (the defaults' runs: the A100's, and the GB200's, B200's and
    H100-SXM's [calibration.fp8]) in sample. The 5 other runs of megatron-bridge-2025.csv: 5.4 %;
    the 49 runs of the other files: 12.8 % (the 42 BF16 runs 12.7 %, NVIDIA's 7 FP8 runs of
    dgxc-h100-2024.csv, delayed scaling, 13.4 %)."""
    plain = validate(FILES)
    fitted = validate(FILES, calibrate_on=[CALIBRATION])
    fp8 = ["GB200 8B 8 GPUs", "B200 8B 8 GPUs", "H100 8B 8 GPUs"]
    assert [x.run.label for x in plain.rows if x.in_sample] == [
        "22B full", "22B selective+SP", *fp8]
    assert [x.in_sample for x in plain.rows] == [x.in_sample for x in fitted.rows]
    assert sum(not x.in_sample for x in plain.rows) == 54
    assert round(plain.mape, 3) == round(fitted.mape, 3) == 0.121
    assert round(plain.worst, 3) == round(fitted.worst, 3) == 0.673
    others = [x for x in plain.rows if not x.in_sample and x.run.path != BRIDGE]
    assert len(others) == 49
    assert round(sum(abs(x.error) for x in others) / 49, 3) == 0.128
    delayed = [x for x in others if x.run.params.npu.number_format == "fp8"]
    assert len(delayed) == 7 and all(x.run.params.npu.fp8_recipe == "delayed" for x in delayed)
    assert round(sum(abs(x.error) for x in delayed) / 7, 3) == 0.134
    bf16 = [x for x in others if x.run.params.npu.number_format != "fp8"]
    assert round(sum(abs(x.error) for x in bf16) / 42, 3) == 0.127
    bridge = [x for x in plain.rows if not x.in_sample and x.run.path == BRIDGE]
    assert len(bridge) == 5 and round(sum(abs(x.error) for x in bridge) / 5, 3) == 0.054
    for a, b in zip(plain.rows, fitted.rows, strict=True):
        assert a.predicted_ms == pytest.approx(b.predicted_ms, rel=1e-4)
    # another accelerator's fit leaves the A100 at its default: its runs still in sample; the
    # H100's BF16 fit replaces its FP8 default too (its FP8 row then out of sample)
    h100 = validate(FILES, calibrate_on=[H100_CALIBRATION])
    assert [x.run.label for x in h100.rows if x.in_sample] == [
        "22B full", "22B selective+SP", *fp8[:2]]
    # the A100 fitted on another file: the 22B rows are predicted out of sample
    other = REPO / "validation" / "calibration" / "a100-narayanan-table1.csv"
    table1 = validate(FILES, calibrate_on=[other])
    assert not any(x.in_sample and "22B" in x.run.label for x in table1.rows)


def test_hieropt_validate_prints_the_table_and_writes_json_in_file_order():
    r = runner.invoke(app, ["validate", *map(str, FILES), "--json", "-"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    expected = [(str(p), run.line) for p in FILES for run in read_runs(p)]
    assert [(x["file"], x["line"]) for x in data["rows"]] == expected
    assert all(x["predicted_ms"] > 0 for x in data["rows"])
    # the two 22B runs the A100's catalog default was fitted on are in sample, and the three
    # 8-GPU FP8 runs the GB200's, B200's and H100-SXM's FP8 defaults were fitted on
    assert sum(x["in_sample"] for x in data["rows"]) == 5
    assert data["summary"]["runs"] == len(expected) - 5 and data["summary"]["mape"] >= 0
    assert "mean absolute error" in r.stderr
    assert "(fit): the runs a catalog default or a calibrated file was fitted on" in r.stderr


@pytest.mark.heavy
def test_megatron_bridge_fp8_runs_calibrated_on_one_node_of_each_system():
    """NVIDIA's Megatron-Bridge 25.11 FP8 runs (validation/megatron-bridge-2025.csv), each
    accelerator's ``matrix_efficiency`` fitted on its own 8-GPU run of Llama 3 8B alone
    (validation/calibration/<system>-fp8-one-node.csv) and the multi-node runs predicted out of
    sample: MAPE 5.4 %, worst -14.8 % (H100, 405B on 1,024 GPUs), with the attention core and the
    logits GEMM at the 16-bit peak and Transformer Engine's FP8 casts (amax, scale, cast, transposed
    copies on the H100) timed as kernels of their own (docs/validation.md). The fits, as fractions
    of the catalog's dense FP8 peaks: GB200 0.4544, B200 0.4962, H100-SXM 0.6173 (the H100 8B run
    recomputing the first 5 of its 32 blocks, recompute_layers = 5; 0.571 when taken as no
    recompute, which leaves its held-out runs at +5.8 and -9.9 %). The catalog's FP8 defaults
    ([calibration.fp8] of each entry) are these fits rounded to 4 digits: without --calibrate-on
    the same three rows are in sample (marked (fit)) and the five others are predicted as
    calibrated."""
    v = validate([BRIDGE], calibrate_on=FP8_CALIBRATION)
    fits = {c.npu: (c.runs, round(c.values["matrix_efficiency"], 4)) for c in v.calibrations}
    assert fits == {"GB200": (1, 0.4544), "B200": (1, 0.4962), "H100-SXM": (1, 0.6173)}
    assert [(x.run.label, x.in_sample, round(x.error, 3)) for x in v.rows] == [
        ("GB200 8B 8 GPUs", True, 0.0),
        ("GB200 70B 64 GPUs", False, 0.018),
        ("GB200 405B 256 GPUs", False, 0.094),
        ("B200 8B 8 GPUs", True, 0.0),
        ("B200 405B 128 GPUs", False, -0.007),
        ("H100 8B 8 GPUs", True, 0.0),
        ("H100 70B 64 GPUs", False, 0.002),
        ("H100 405B 1024 GPUs", False, -0.149),
    ]
    assert (round(v.mape, 3), round(v.worst, 3)) == (0.054, 0.149)
    # the one plan the memory model does not fit: the GB200 70B (40 of its 80 layers' activations
    # offloaded to the CPU, not modelled); the GB200 405B fits with its GEMM inputs kept in FP8
    # (180.5 of 195.4 GB; 202.5 GB with every stored tensor in BF16)
    assert [x.run.label for x in v.rows if not x.fits_memory] == ["GB200 70B 64 GPUs"]
    plain = validate([BRIDGE])
    assert [x.in_sample for x in plain.rows] == [x.in_sample for x in v.rows]
    assert [round(x.error, 3) for x in plain.rows] == [
        0.0, 0.018, 0.094, 0.0, -0.007, 0.0, 0.002, -0.148]
    assert (round(plain.mape, 3), round(plain.worst, 3)) == (0.054, 0.148)
    r = runner.invoke(app, ["validate", str(BRIDGE)])
    assert r.exit_code == 0, r.output
    assert r.output.count("% (fit)") == 3  # (the three 8-GPU rows)
    assert "5 runs out of sample: mean absolute error 5.4%, worst 14.8%" in r.output
    assert "extrapolated" not in r.output
    # the 16-bit defaults taken to FP8 (the catalog without its FP8 fits: the B200's and GB200's
    # kernel-level figures, the H100's BF16 fit, as fractions of the FP8 peak): the B200's and
    # GB200's runs 24-29 % fast, the H100's -13.0 to +2.3 %; MAPE 18.6 %, worst -28.6 %
    from hieropt.io.npus import read_npu_catalog
    from hieropt.studies.validate.predict import predict_ms

    cat = read_npu_catalog()
    sixteen = [
        predict_ms(x, (f"npu.matrix_efficiency="
                       f"{cat.find(x.params.npu.name).calibration.matrix_efficiency}",))
        / x.measured_ms - 1
        for x in read_runs(BRIDGE)
    ]
    assert [round(e, 3) for e in sixteen] == [
        -0.254, -0.286, -0.253, -0.24, -0.282, 0.018, 0.023, -0.13]
    assert round(sum(map(abs, sixteen)) / 8, 3) == 0.186


def test_nvidia_405b_bf16_run_on_576_gpus_fits_as_counted_by_hand():
    """The 576-GPU Llama 3.1 405B row of dgxc-h100-2024.csv (TP 8, CP 2, PP 9 x 7, DP 4, the
    recipe's 16 key/value groups and GPT-2 vocabulary 50,257 padded to 51,200) fits: stage 0 by
    hand. Per layer on one GPU: QKV 16,384 x (2,048 + 2 x 256), projection 2,048 x 16,384,
    SwiGLU 3 x 16,384 x 6,656, two norms of 16,384 (replicated over TP); the first stage's 7
    chunks of 2 layers and the embedding 6,400 x 16,384. Weights 2 bytes, BF16 gradients 2 (the
    recipe's grad_sync_dtype), optimizer 10 a parameter over DP x CP = 8 (Adam's two FP32
    moments and the 16-bit remainders of the FP32 master weights; NeMo's distributed Adam shards
    over the data-parallel group with context parallelism). Activations per layer and
    micro-batch (8,192 tokens, sequence-parallel over 8, FlashAttention, no dropout): attention
    2 x 8,192 x 16,384 x 2 / 8 + Q, K, V 8,192 x 2,560 x 2 + the projection's input 8,192 x
    2,048 x 2 + the softmax statistics 8,192 x 16 x 4; FFN 2 x 8,192 x 16,384 x 2 / 8 + 3 x
    8,192 x 6,656 x 2; x 14 layers x 71 / 7 micro-batches in flight (the interleaved warm-up 2 x
    8 + 6 x 9 + 1 = 71 chunks), / CP 2."""
    from hieropt.model.memory import memory
    from hieropt.studies.validate.run import timed_params

    (run,) = [r for r in read_runs(REPO / "validation" / "dgxc-h100-2024.csv")
              if r.label == "405B 576 GPUs"]
    layer = 16_384 * (2_048 + 2 * 256) + 2_048 * 16_384 + 3 * 16_384 * 6_656 + 2 * 16_384
    params = 14 * layer + 51_200 // 8 * 16_384
    assert params == 5_742_460_928
    attention = 2 * 8_192 * 16_384 * 2 / 8 + 8_192 * 2_560 * 2 + 8_192 * 2_048 * 2 + 8_192 * 16 * 4
    ffn = 2 * 8_192 * 16_384 * 2 / 8 + 3 * 8_192 * 6_656 * 2
    activations = 14 * (attention + ffn) * 71 / 7 / 2
    rep = memory(timed_params(run, None))
    s0 = rep.stages[0]
    assert s0 is rep.peak and rep.fits
    assert (s0.weights_bytes, s0.gradients_bytes) == (2 * params, 2 * params)
    assert s0.optimizer_bytes == pytest.approx(10 * params / 8, rel=1e-12)
    assert s0.in_flight == pytest.approx(71 / 7, rel=1e-12)
    assert s0.activations_bytes == pytest.approx(activations, rel=1e-12)
    assert round(s0.total_bytes / 1e9, 2) == 68.30 and round(rep.available_bytes / 1e9, 2) == 81.6
