"""hieropt calibrate / validate never give a silent wrong answer: runs files in the wrong unit, fits
that cannot mean anything and calibrated files that are not what they claim are refused with one
line naming the file, the field and the fix; a fit at a bound is reported; a fit's own runs are
marked in sample when its file is applied with --npu."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.errors import InputError
from hieropt.io.calibration import read_calibration
from hieropt.io.run_units import (
    BANDWIDTH_FACTOR,
    SCALEOUT_GBPS,
    SLOW_FRACTION,
    SPEED_FACTOR,
    peak_time_ms,
    scaleup_gbps,
)
from hieropt.io.runs import read_runs
from hieropt.studies.validate import CalibrationField, fit_npu, predict_ms
from hieropt.studies.validate.checks import at_bound, check_fit_quality

from .synthetic import HEADER, PLANS, synthetic
from .tiny import refused, write_case

REPO = Path(__file__).resolve().parents[2]
VALIDATION = REPO / "validation"
ONE_NODE = VALIDATION / "calibration" / "a100-one-node.csv"
KORTHIKANTI = VALIDATION / "korthikanti2022.csv"
ALL_FIVE = (
    "matrix_efficiency,gemm_half_gflop,hbm_efficiency,kernel_overhead_us,attention_efficiency"
)
runner = CliRunner(env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1",
                        "COLUMNS": "200"})


def copy_of(tmp_path: Path, source: Path, *edits: tuple[str, str]) -> Path:
    """``source`` copied into ``tmp_path/calibration`` (its model and network files beside, as in
    validation/) with each (old, new) text edit applied once."""
    for folder in ("models", "networks"):
        if not (tmp_path / folder).exists():
            shutil.copytree(VALIDATION / folder, tmp_path / folder)
    text = source.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    (tmp_path / "calibration").mkdir(exist_ok=True)
    out = tmp_path / "calibration" / source.name
    out.write_text(text.replace(",models/", ",../models/").replace(",networks/", ",../networks/"))
    return out


def test_measured_times_in_seconds_are_refused_with_the_conversion(tmp_path: Path):
    # the one-node calibration runs with measured_ms in seconds (1.42 s, not 1420 ms): before, a
    # calibration at matrix_efficiency = 1 with a mean error of 86590 %, exit 0
    path = copy_of(tmp_path, ONE_NODE, (",1420,", ",1.42,"), (",1100,", ",1.1,"))
    r = runner.invoke(app, ["calibrate", str(path), "--out", str(tmp_path / "x.toml")])
    assert r.exit_code == 2
    line = r.stderr.strip()
    assert line.startswith(f"error: {path}: line 7: measured_ms: 1.42 ms is ")
    assert "looks like seconds; fix: give the iteration time in ms: 1420 for 1.42 s" in line
    assert not (tmp_path / "x.toml").exists()
    # the lower bound by hand: 22B (h 6144, 48 layers, s 2048, V 51200), batch 4: 3 x 4 x (48 x
    # (24 s h^2 + 4 s^2 h) + 2 s h V) = 1.1436e15 FLOPs at 8 x 312 TFLOP/s = 458.2 ms; 1420 ms is
    # 3.10 x that, 1.42 "ms" 1/323 of it
    run = read_runs(ONE_NODE)[0]
    assert peak_time_ms(run.params) == pytest.approx(458.15, abs=0.01)
    assert run.measured_ms / peak_time_ms(run.params) == pytest.approx(3.0994, abs=1e-4)
    assert "1.42 ms is 323 x less than" in line
    assert SPEED_FACTOR == 10.0


def test_a_time_faster_than_the_peak_flops_is_refused_naming_the_plan(tmp_path: Path):
    # 1,420 ms measured (458.15 ms at the peak, by hand above) written as 400: 87 % of the way
    # down to the peak time, past it; before, only a time below 1/10 of it was refused
    path = copy_of(tmp_path, ONE_NODE, (",1420,", ",400,"))
    assert refused(path) == (
        f"{path}: line 7: measured_ms: 400 ms is faster than physically possible: 1.15 x less "
        "than the model's FLOPs take at the peak FLOP/s of its 8 NPUs (458.2 ms at 312 TFLOP/s "
        "each); fix: "
        "check the plan the row resolves to against the run measured: tp 8 x pp 1 x dp 1 = 8 NPUs "
        "(too few?), global_batch_size 4 sequences (too many? in sequences, not tokens), an empty "
        "cell taking the model file's value; and that measured_ms is ms per iteration")
    # 458.15 ms is allowed (100 % of the peak), 458.1 is not
    for ms, ok in (("458.16", True), ("458.1", False)):
        path = copy_of(tmp_path, ONE_NODE, (",1420,", f",{ms},"))
        if ok:
            assert read_runs(path)[0].measured_ms == float(ms)
        else:
            with pytest.raises(InputError, match="faster than physically possible"):
                read_runs(path)


def test_a_multi_gpu_step_of_half_a_millisecond_is_refused(tmp_path: Path):
    path = copy_of(tmp_path, KORTHIKANTI, (",18130,", ",0.5,"))
    with pytest.raises(InputError, match=r"line 12: measured_ms: 0\.5 ms is .* its 64 NPUs "):
        read_runs(path)


def test_bandwidths_in_gbit_are_refused_with_the_conversion(tmp_path: Path):
    # 2400;200 Gb/s is NVLink's 300 GB/s and 8 x 200 Gb/s HDR per node = 25 GB/s per GPU
    path = copy_of(tmp_path, KORTHIKANTI, ("300;25,gpt-530b,105", "2400;200,gpt-530b,105"))
    assert refused(path) == (
        f"{path}: line 14: bw_gbps: dimension 0: 2400 GB/s per NPU is more than 2 x the "
        "A100-SXM-80GB's scale-up bandwidth (300 GB/s per direction): looks like Gb/s "
        "(/ 8 = 300 GB/s); fix: give GB/s per NPU per direction (a Gb/s link rate / 8, the "
        "datasheet's bidirectional figure / 2): 300;25 if every value is Gb/s"
    )
    assert BANDWIDTH_FACTOR == 2.0


@pytest.mark.parametrize("bw, want", [
    # the A100 datasheet's 600 GB/s is NVLink's 300 per direction both ways: refused at exactly
    # 2 x (before, only above 2 x: 600 passed and 601 was refused)
    ("600;25", "dimension 0: 600 GB/s per NPU is 2 x the A100-SXM-80GB's scale-up bandwidth "
     "(300 GB/s per direction): looks like the datasheet's bidirectional figure; fix: give GB/s "
     "per NPU per direction: the datasheet's bidirectional figure / 2 = 300 (300;25)"),
    ("601;25", "dimension 0: 601 GB/s per NPU is more than 2 x the A100-SXM-80GB's scale-up "
     "bandwidth (300 GB/s per direction): looks like Gb/s (/ 8 = 75.125 GB/s); fix: give GB/s "
     "per NPU per direction (a Gb/s link rate / 8, the datasheet's bidirectional figure / 2): "
     "75.125;3.125 if every value is Gb/s"),
    ("599.9;25", None),
])
def test_a_bidirectional_scale_up_figure_is_refused_at_twice_the_scale_up(tmp_path: Path, bw,
                                                                         want):
    path = copy_of(tmp_path, KORTHIKANTI, ("300;25,gpt-530b,105", f"{bw},gpt-530b,105"))
    if want is None:
        (run,) = [r for r in read_runs(path) if r.line == 14]
        assert run.bw_gbps == (599.9, 25.0)
        return
    assert refused(path) == f"{path}: line 14: bw_gbps: {want}"


@pytest.mark.parametrize("dp, mbs, gbs, ms", [(32, 4, 512, 3600), (4096, 1, 4096, 500)])
def test_the_scale_out_dimension_is_the_network_files_whatever_the_runs_size(
        tmp_path: Path, shared_data: Path, dp, mbs, gbs, ms):
    # LIBRA's 4-dimension network: 4 x 8 x 4 x 32 NPUs (InterChiplet, InterPackage, InterNode,
    # InterPod)
    libra = shared_data / "libra" / "network" / "4d_network.yml"
    # before, the outermost dimension a run used was judged scale-out: on 32 NPUs (dimensions 0
    # and 1) the InterPackage 250 GB/s was refused as Gb/s, on 4,096 NPUs it passed
    # an A100-like NPU given inline (no catalog entry, so no scale-up domain or NIC bound: the
    # LIBRA network's hypothetical 250 GB/s beyond 8 NPUs is not refused as more than a NIC)
    model = tmp_path / "a100-inline.toml"
    model.write_text(
        (VALIDATION / "models" / "megatron-gpt-a100.toml").read_text(encoding="utf-8").replace(
            'accelerator = "A100-SXM-80GB"', 'name = "A100-like"\npeak_tflops = 312.0\n'
            "hbm_gib = 80.0\nscaleup_gbps = 300.0\nefficiency = 0.5"),
        encoding="utf-8")
    path = tmp_path / "runs.csv"
    path.write_text(
        "name,model,network,bw_gbps,tp,pp,dp,micro_batch_size,global_batch_size,recompute,"
        f"measured_ms\nr,{model},{libra},225;250;103.5;33.4,1,1,{dp},{mbs},{gbs},full,{ms}\n",
        encoding="utf-8",
    )
    (run,) = read_runs(path)
    assert run.bw_gbps == (225.0, 250.0, 103.5, 33.4)[: run.network.n_dims]
    assert run.network.n_dims == (2 if dp == 32 else 4)
    # the file's outermost dimension at 250 is refused as Gb/s, whatever the run's size
    path.write_text(path.read_text().replace("103.5;33.4", "103.5;250"), encoding="utf-8")
    if dp == 32:
        assert read_runs(path)[0].bw_gbps == (225.0, 250.0)  # (dimension 3 not used)
    else:
        assert refused(path).startswith(
            f"{path}: line 2: bw_gbps: dimension 3 (scale-out): 250 GB/s per NPU is more than "
            "200 GB/s"
        )


A100_NIC = (
    "GB/s per direction one A100-SXM-80GB can send through its NIC (catalog nic_gbps: its PCIe "
    "x16 host link to the fastest NIC on it); the dimension reaches 64 NPUs, beyond the "
    "A100-SXM-80GB's scale-up domain of 8 (catalog scaleup_npus), so its traffic runs through "
    "the NIC")
NIC_FIX = (
    "give per-NPU GB/s per direction: 200 Gb/s per GPU is 25 (Gb/s / 8), and a node's NICs are "
    "shared by its NPUs (four 200 Gb/s NICs for 8 GPUs: 100 GB/s / 8 = 12.5)")


@pytest.mark.parametrize("bw, want", [
    # 250 Gb/s written as GB/s: above the A100's 32 GB/s PCIe Gen4 x16 host link
    ("300;250", f"250 GB/s per NPU is above the 32 {A100_NIC}: looks like Gb/s per NPU or GB/s "
     f"per node of 8 NPUs (/ 8 = 31.25 GB/s); fix: {NIC_FIX}; 300;31.25 if it is Gb/s per NPU"),
    # 200 Gb/s HDR per GPU written as 200 (before: accepted, two 800 Gb/s NICs per NPU)
    ("300;200", f"200 GB/s per NPU is above the 32 {A100_NIC}: looks like Gb/s per NPU or GB/s "
     f"per node of 8 NPUs (/ 8 = 25 GB/s); fix: {NIC_FIX}; 300;25 if it is Gb/s per NPU"),
    # a node's four 200 Gb/s NICs as GB/s (100) shared by its 8 GPUs: 12.5 each
    ("300;100", f"100 GB/s per NPU is above the 32 {A100_NIC}: looks like Gb/s per NPU or GB/s "
     f"per node of 8 NPUs (/ 8 = 12.5 GB/s); fix: {NIC_FIX}; 300;12.5 if it is Gb/s per NPU"),
    ("300;32", None),  # the bound itself: PCIe Gen4 x16, 64 GB/s bidirectional
    ("300;300", None),  # an outer tier at the scale-up bandwidth (an NVLink domain)
])
def test_a_scale_out_bandwidth_above_the_nic_bound_is_refused(tmp_path: Path, bw, want):
    # line 14: the 530B model on 8 x 35 x 1 = 280 A100s: dimension 1 reaches 280 NPUs, beyond the
    # DGX A100's 8; before, only the global 200 GB/s bound applied: 300;200 and 300;100 passed
    path = copy_of(tmp_path, KORTHIKANTI, ("300;25,gpt-530b,105", f"{bw},gpt-530b,105"))
    if want is None:
        (run,) = [r for r in read_runs(path) if r.line == 14]
        assert run.bw_gbps == tuple(map(float, bw.split(";")))
        return
    assert refused(path) == (f"{path}: line 14: bw_gbps: dimension 1: {want}".replace(
        "reaches 64 NPUs", "reaches 280 NPUs"))
    assert SCALEOUT_GBPS == 2 * 800 / 8


DGXC = VALIDATION / "dgxc-h100-2024.csv"
"""NVIDIA DGX Cloud H100 runs (NVLink 4 at 450 GB/s; 8 x 400 Gb/s NDR per node = 50 GB/s per
GPU)."""


@pytest.mark.parametrize("source, old, bw, line, want", [
    # an H100's 400 Gb/s written as 400: above its 50 GB/s bound (one 400 Gb/s ConnectX-7 on
    # its PCIe Gen5 x16 link), below its 450 GB/s NVLink
    (DGXC, "70B 64 GPUs,models/llama3-8b-h100.toml,networks/dgx-h100-ndr.toml,450;50",
     "450;400", 64, "400 GB/s per NPU is above the 50 GB/s per direction one H100-SXM can send "
     "through its NIC (catalog nic_gbps: its PCIe x16 host link to the fastest NIC on it); the "
     "dimension reaches 64 NPUs, beyond the H100-SXM's scale-up domain of 8 (catalog "
     "scaleup_npus), so its traffic runs through the NIC: looks like Gb/s per NPU or GB/s per "
     f"node of 8 NPUs (/ 8 = 50 GB/s); fix: {NIC_FIX}; 450;50 if it is Gb/s per NPU"),
    # an A100's 400 Gb/s written as 400: 50 GB/s would still be above its 32
    (KORTHIKANTI, "300;25,gpt-530b,105", "300;400", 14, f"400 GB/s per NPU is above the 32 "
     f"{A100_NIC.replace('64 NPUs', '280 NPUs')}; fix: {NIC_FIX}"),
    (DGXC, "70B 64 GPUs,models/llama3-8b-h100.toml,networks/dgx-h100-ndr.toml,450;50",
     "450;450", 64, None),  # an outer NVLink tier at the scale-up bandwidth
])
def test_a_scale_out_in_gbit_is_refused_at_the_nic_bound(tmp_path: Path, source, old, bw, line,
                                                           want):
    path = copy_of(tmp_path, source, (old, old.replace("450;50" if source == DGXC else "300;25",
                                                       bw)))
    if want is None:
        (run,) = [r for r in read_runs(path) if r.line == line]
        assert run.bw_gbps == tuple(map(float, bw.split(";")))
        return
    assert refused(path) == f"{path}: line {line}: bw_gbps: dimension 1: {want}"


def test_every_shipped_runs_file_is_far_from_the_unit_thresholds():
    for path in [*VALIDATION.glob("*.csv"), *VALIDATION.glob("calibration/*.csv")]:
        for r in read_runs(path):
            assert r.measured_ms > 1.59 * peak_time_ms(r.params)  # threshold: 0.1 x
            # at most the accelerator's own NVLink (300, 450, 900 GB/s); threshold: 2 x that
            scaleup = scaleup_gbps(r.params, r.model_data, r.model_path)
            assert max(r.bw_gbps) <= scaleup and scaleup in (300.0, 450.0, 900.0)
            assert len(r.bw_gbps) < 2 or r.bw_gbps[-1] <= 50.0  # scale-out: 6.25-50 GB/s


def test_a_calibration_run_that_does_not_fit_in_memory_is_refused(tmp_path: Path):
    # the 22B model on 8 GPUs without tensor parallelism: 367 GB per GPU on an 80 GiB A100
    # (batch 32: 8 x the FLOPs, so 8 x the measured time, above the peak-FLOP/s time)
    path = copy_of(tmp_path, ONE_NODE, ("8,1,1,4,4,1f1b,1,full", "1,1,8,4,32,1f1b,1,full"),
                   (",1420,", ",11360,"))
    for args in (["calibrate", str(path), "--out", str(tmp_path / "x.toml")],
                 ["validate", str(KORTHIKANTI), "--calibrate-on", str(path)]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2
        assert r.stderr.startswith(
            f"error: {path}: line 7: plan: calibration run 22B full: the memory model finds the "
            "plan does not fit: stage 0 needs 367.03 GB per NPU"
        )
        assert "fix: check the row's tp, pp, dp" in r.stderr


def test_more_fitted_fields_than_runs_are_refused(tmp_path: Path):
    out = tmp_path / "x.toml"
    r = runner.invoke(app, ["calibrate", str(ONE_NODE), "--out", str(out), "--fit", ALL_FIVE])
    assert r.exit_code == 2 and not out.exists()
    assert r.stderr.startswith(
        "error: --fit: 5 fields to fit (matrix_efficiency, gemm_half_gflop, hbm_efficiency, "
        f"kernel_overhead_us, attention_efficiency) on 2 runs of {ONE_NODE}"
    )
    assert "fix: fit at most 2 fields, or add runs" in r.stderr


def test_an_empty_fit_is_refused(tmp_path: Path):
    out = tmp_path / "x.toml"
    for fit in ("", ","):
        r = runner.invoke(app, ["calibrate", str(ONE_NODE), "--out", str(out), "--fit", fit])
        assert r.exit_code == 2 and not out.exists()
        assert r.stderr.strip() == (
            "error: --fit: no field for A100-SXM-80GB's roofline compute model; fix: name one or "
            "more of matrix_efficiency, gemm_half_gflop, hbm_efficiency, kernel_overhead_us, "
            "attention_efficiency"
        )
    with pytest.raises(InputError, match="^fields: no field"):
        fit_npu(read_runs(ONE_NODE), [])


def test_a_fit_far_from_its_runs_is_refused_with_what_it_points_at(tmp_path: Path):
    # measured 1 % above the time the FLOPs take at the peak (so the runs file loads), at 1 GB/s
    # where the all-reduce alone takes 220.7 µs: no efficiency <= 1 explains it
    rows = [f"tiny.toml,net.toml,1,{dp},{gbs},{mb},1,g" for _, dp, gbs, mb in PLANS]
    path = write_case(tmp_path, rows, HEADER)
    bounds = [peak_time_ms(r.params) * 1.01 for r in read_runs(path)]
    path = write_case(tmp_path, [r.replace(",1,g", f",{t!r},g") for r, t in zip(
        rows, bounds, strict=True)], HEADER)
    with pytest.raises(InputError) as e:
        fit_npu(read_runs(path))
    line = e.value.one_line()
    assert line.startswith(f"{path}: measured_ms: the best fit (efficiency = 1) leaves a mean ")
    at_one = ("npu.efficiency=1.0",)
    worst = max(read_runs(path), key=lambda r: predict_ms(r, at_one) / r.measured_ms)
    p = predict_ms(worst, at_one)
    assert (
        f"the predictions are too slow; the worst: {path}: line {worst.line}, predicted "
        f"{p:,.4g} ms for a measured {worst.measured_ms:,.10g} ms "
        f"({p / worst.measured_ms - 1:+.0%}); fix: check measured_ms is ms per iteration"
    ) in line
    # the diagnosis by the median ratio of predicted to measured times
    runs = read_runs(synthetic(tmp_path, ("npu.efficiency=0.37",)))
    m = [r.measured_ms for r in runs]
    values = {"efficiency": 1.0}
    with pytest.raises(InputError, match="measured_ms looks like seconds; fix: give measured_ms"):
        check_fit_quality(runs, [1000 * x for x in m], 999.0, values)
    with pytest.raises(InputError, match="measured_ms looks like microseconds"):
        check_fit_quality(runs, [x / 1000 for x in m], 0.999, values)
    with pytest.raises(InputError,
                       match=r"bw_gbps: .*too fast; the worst: .*line .*; fix: .*Gb/s figure "):
        check_fit_quality(runs, [x / 5 for x in m], 0.8, values)
    check_fit_quality(runs, [x * 1.5 for x in m], 0.5, values)  # 50 %: accepted


def test_a_fit_at_its_bound_is_reported(tmp_path: Path):
    runs = read_runs(synthetic(tmp_path, ("npu.efficiency=0.9",)))
    fit = fit_npu(runs, [CalibrationField("efficiency", 0.1, 0.6)])
    assert fit.at_bound == ("efficiency",)
    assert fit_npu(runs).at_bound == ()  # 0.9 recovered inside [0.05, 1]


@pytest.mark.parametrize("name, lower, upper, value, at", [
    # before, 0.1 % of the range: anything below 10 GFLOP (of [0, 1e4]) or 1 µs (of [0, 1000])
    # was "at its lower bound 0"
    ("gemm_half_gflop", 0.0, 1e4, 5.0, False),
    ("gemm_half_gflop", 0.0, 1e4, 0.09, True),  # within the search's resolution, 1e-5 x 1e4
    ("gemm_half_gflop", 0.0, 1e4, 0.11, False),
    ("kernel_overhead_us", 0.0, 1e3, 0.5, False),
    ("kernel_overhead_us", 0.0, 1e3, 0.0, True),
    ("efficiency", 0.05, 1.0, 0.9995, True),  # within 0.1 % of the bound 1
    ("efficiency", 0.05, 1.0, 0.998, False),
    ("efficiency", 0.05, 1.0, 0.05004, True),  # within 0.1 % of the fitted value, 5.004e-5
    ("efficiency", 0.05, 1.0, 0.0501, False),  # (before: within 0.1 % of 0.95, at the bound)
])
def test_at_bound_is_relative_to_the_parameter_s_scale(name, lower, upper, value, at):
    assert at_bound({name: value}, {name: (lower, upper)}) == ((name,) if at else ())


@pytest.mark.heavy
def test_calibrate_reports_a_field_at_its_bound_in_the_file_json_and_stderr(tmp_path: Path):
    # the GEMM and HBM efficiencies on the two one-node runs: the HBM one goes to 1.0 (its bound)
    out, js = tmp_path / "x.toml", tmp_path / "x.json"
    args = ["calibrate", str(ONE_NODE), "--out", str(out), "--json", str(js)]
    r = runner.invoke(app, [*args, "--fit", "matrix_efficiency,hbm_efficiency"])
    assert r.exit_code == 0, r.output
    assert r.stderr.strip() == (
        "note: A100-SXM-80GB hbm_efficiency = 1 sits at its upper bound (1): the runs ask for a "
        "value the bounds do not allow, so the fit is not an interior optimum; check the runs' "
        "units and plans, or fit fewer fields"
    )
    cal = tomllib.loads(out.read_text())["calibration"]
    assert cal["at_bound"] == ["hbm_efficiency"]
    assert (out.parent / cal["files"][0]).resolve() == ONE_NODE
    data = json.loads(js.read_text())
    assert data["at_bound"] == ["hbm_efficiency"]
    assert data["values"]["matrix_efficiency"] == pytest.approx(0.628, abs=1e-3)
    r = runner.invoke(app, ["calibrate", str(ONE_NODE), "--out", str(out)])
    assert r.exit_code == 0 and r.stderr == ""
    assert tomllib.loads(out.read_text())["calibration"]["at_bound"] == []


@pytest.mark.heavy
def test_validate_with_a_calibrated_file_marks_its_own_runs_in_sample(tmp_path: Path):
    out = tmp_path / "npu" / "a100.toml"
    out.parent.mkdir()
    r = runner.invoke(app, ["calibrate", str(ONE_NODE), "--out", str(out)])
    assert r.exit_code == 0, r.output
    # written relative to the calibrated file, found from any working folder
    entry = tomllib.loads(out.read_text())["calibration"]["files"][0]
    assert not Path(entry).is_absolute() and (out.parent / entry).resolve() == ONE_NODE
    by: dict[str, dict] = {}
    for how in (["--npu", str(out)], ["--calibrate-on", str(ONE_NODE)]):
        js = tmp_path / f"{how[0][2:]}.json"
        r = runner.invoke(app, ["validate", str(KORTHIKANTI), *how, "--json", str(js)])
        assert r.exit_code == 0, r.output
        assert "7 runs out of sample: mean absolute error 3.1%, worst 6.3%" in r.stdout
        assert "(fit)" in r.stdout
        by[how[0]] = json.loads(js.read_text())
    rows = by["--npu"]["rows"]
    assert [x["line"] for x in rows if x["in_sample"]] == [10, 11]  # the 22B one-node runs
    assert by["--npu"]["summary"] == by["--calibrate-on"]["summary"]
    assert by["--npu"]["summary"]["runs"] == 7
    assert by["--npu"]["summary"]["mape"] == pytest.approx(0.031, abs=5e-4)


@pytest.mark.heavy
def test_a_calibrated_file_whose_runs_are_gone_is_refused(tmp_path: Path):
    path = copy_of(tmp_path, ONE_NODE)
    out = tmp_path / "a100.toml"
    assert runner.invoke(app, ["calibrate", str(path), "--out", str(out)]).exit_code == 0
    path.unlink()
    r = runner.invoke(app, ["validate", str(KORTHIKANTI), "--npu", str(out)])
    assert r.exit_code == 2
    assert r.stderr.startswith(
        f"error: {out}: calibration.files: runs file calibration/a100-one-node.csv not found"
    )


@pytest.mark.heavy
def test_a_runs_file_entry_is_never_found_in_the_working_folder(tmp_path: Path, monkeypatch):
    # the NPU file moved away from its runs; a file of the same name in the working folder holds
    # other runs, which must not be read: they would be marked (fit) and the out-of-sample summary
    # would be wrong
    path = copy_of(tmp_path, ONE_NODE)
    out = tmp_path / "a100.toml"
    assert runner.invoke(app, ["calibrate", str(path), "--out", str(out)]).exit_code == 0
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "a100.toml").write_text(out.read_text())
    monkeypatch.chdir(tmp_path)  # calibration/a100-one-node.csv exists relative to here
    r = runner.invoke(app, ["validate", str(KORTHIKANTI), "--npu", "moved/a100.toml"])
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        "error: moved/a100.toml: calibration.files: runs file calibration/a100-one-node.csv not "
        "found at moved/calibration/a100-one-node.csv (the runs the accelerator was fitted on are "
        "marked in sample from it; entries are relative to this file); fix: keep the runs file at "
        "that path relative to this file, or correct the entry"
    )


@pytest.mark.heavy
def test_a_runs_file_edited_after_the_fit_is_refused_by_its_hash(tmp_path: Path):
    import hashlib

    path = copy_of(tmp_path, ONE_NODE)
    out = tmp_path / "a100.toml"
    assert runner.invoke(app, ["calibrate", str(path), "--out", str(out)]).exit_code == 0
    meta = tomllib.loads(out.read_text())["calibration"]
    assert meta["sha256"] == [hashlib.sha256(path.read_bytes()).hexdigest()]
    assert read_calibration(out)[2]["files"] == [str(path)]
    path.write_text(path.read_text().replace(",1420,", ",1520,"))
    r = runner.invoke(app, ["validate", str(KORTHIKANTI), "--npu", str(out)])
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"error: {out}: calibration.sha256: runs file {path} is not the file the accelerator was "
        "fitted on (its sha256 differs); fix: restore that runs file, or calibrate again on it"
    )
    # a file written without hashes (before they were recorded) is taken as it is
    out.write_text("\n".join(t for t in out.read_text().splitlines() if "sha256" not in t))
    assert read_calibration(out)[2]["files"] == [str(path)]


@pytest.mark.heavy
def test_a_percentage_in_a_calibrated_file_names_the_file_and_the_field(tmp_path: Path):
    out = tmp_path / "a100.toml"
    assert runner.invoke(app, ["calibrate", str(ONE_NODE), "--out", str(out)]).exit_code == 0
    text = out.read_text()
    fitted = tomllib.loads(text)["params"]["npu"]["matrix_efficiency"]
    pct = tmp_path / "pct.toml"
    pct.write_text(text.replace(f"matrix_efficiency = {fitted!r}", "matrix_efficiency = 87"))
    r = runner.invoke(app, ["validate", str(KORTHIKANTI), "--npu", str(pct)])
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"error: {pct}: params.npu.matrix_efficiency: 87 is not a fraction (a percentage?); "
        "fix: a fraction in (0, 1]: 0.87?"
    )
    pct.write_text(text.replace(f"matrix_efficiency = {fitted!r}", "matrix_efficiency = 870"))
    with pytest.raises(InputError) as e:
        read_calibration(pct)
    assert e.value.one_line() == (
        f"{pct}: params.npu.matrix_efficiency: 870 is outside [0.01, 1]; fix: give a value in "
        "[0.01, 1]"
    )


def test_measured_times_in_microseconds_are_refused_with_the_conversion(tmp_path: Path):
    # 1420000 for the 1.42 s of the 22B full-recompute run: before, validate reported -99.9 % and
    # calibrate fitted it (mean error 49.9 %, just under the 50 % refusal)
    path = copy_of(tmp_path, ONE_NODE, (",1420,", ",1420000,"))
    for args in (["calibrate", str(path), "--out", str(tmp_path / "x.toml")],
                 ["validate", str(path)],
                 ["validate", str(KORTHIKANTI), "--calibrate-on", str(path)]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2
        # 1420000 / 458.15 ms (the peak-FLOP/s time, by hand above) = 3099
        assert r.stderr.strip() == (
            f"error: {path}: line 7: measured_ms: 1,420,000 ms is 3,099 x what the model's FLOPs "
            "take at the peak FLOP/s of its 8 NPUs (458.2 ms): below 1% of the peak: looks like "
            "µs; fix: give the iteration time in ms: 1420 for 1420000 µs"
        )
    assert not (tmp_path / "x.toml").exists()
    assert SLOW_FRACTION == 0.01


def test_an_implausibly_slow_time_that_is_not_microseconds_names_the_plan(tmp_path: Path):
    # 1e9 ms (11.6 days) = 2,182,656 x 458.157 ms; / 1000 still below 1 % of the peak: no
    # conversion offered
    path = copy_of(tmp_path, ONE_NODE, (",1100,", ",1e9,"))
    with pytest.raises(InputError) as e:
        read_runs(path)
    line = e.value.one_line()
    assert line.startswith(f"{path}: line 8: measured_ms: 1,000,000,000 ms is 2,182,656 x what")
    assert "looks like" not in line and "check the row's model fields" in line


def test_every_shipped_run_sustains_ten_times_the_slow_threshold():
    # the slowest: Narayanan et al. 2021's ZeRO-3 run of the 175B model on 1,536 GPUs, 10.6 % of
    # the peak FLOP/s; the threshold 1 %
    slowest = min(
        peak_time_ms(r.params) / r.measured_ms
        for path in [*VALIDATION.glob("*.csv"), *VALIDATION.glob("calibration/*.csv")]
        for r in read_runs(path)
    )
    assert round(slowest, 3) == 0.106
    assert slowest > 10 * SLOW_FRACTION


def test_one_calibration_run_in_another_unit_is_named_by_its_line(tmp_path: Path):
    # one of the runs predicted 1000 x faster than measured at the fit (a time in µs), the others
    # exact: the median ratio is 1, so only the per-run check names it
    runs = read_runs(synthetic(tmp_path, ("npu.efficiency=0.37",)))
    predicted = [r.measured_ms for r in runs]
    predicted[1] /= 1000
    with pytest.raises(InputError) as e:
        check_fit_quality(runs, predicted, 0.999 / len(runs), {"efficiency": 0.37})
    assert e.value.one_line() == (
        f"{runs[1].where}: measured_ms: predicted / measured 0.001 at the best fit (efficiency = "
        f"0.37): measured_ms {runs[1].measured_ms:.10g} looks like microseconds; fix: give "
        f"measured_ms in milliseconds: {runs[1].measured_ms / 1000:.10g}"
    )


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        ("hbm_gbps = 2039.0", 'hbm_gbps = "fast"', "params.npu.hbm_gbps: 'fast' is text, not a "
         "number; fix: write the number without quotes"),
        ("hbm_gbps = 2039.0", "hbm_gbs = 2039.0", "params.npu.hbm_gbs: unknown key (did you mean "
         "'hbm_gbps'?); fix: rename 'hbm_gbs' to 'hbm_gbps'"),
        ("hbm_reserve_gib = 4.0", "hbm_reserve_gib = 90.0", "params.npu.hbm_reserve_gib: 90 GiB "
         "leaves nothing of the 80 GiB HBM; fix: use a reserve below 80"),
    ],
)
@pytest.mark.heavy
def test_a_calibrated_file_s_bad_accelerator_figure_names_the_file_and_the_field(
    tmp_path: Path, old: str, new: str, error: str
):
    out = tmp_path / "a100.toml"
    assert runner.invoke(app, ["calibrate", str(ONE_NODE), "--out", str(out)]).exit_code == 0
    text = out.read_text()
    assert old in text
    edited = tmp_path / "edited.toml"
    edited.write_text(text.replace(old, new))
    r = runner.invoke(app, ["validate", str(KORTHIKANTI), "--npu", str(edited)])
    assert r.exit_code == 2
    assert r.stderr.strip() == f"error: {edited}: {error}"


@pytest.mark.parametrize(
    ("old", "new", "sets"),
    [
        ("hbm_gbps = 2039.0", "hbm_gbps = 1000.0", "npu.hbm_gbps=1000.0"),
        ("hbm_efficiency = 0.65", "hbm_efficiency = 0.1", "npu.hbm_efficiency=0.1"),
    ],
)
@pytest.mark.heavy
def test_a_calibrated_file_s_edited_figure_times_the_runs_as_fitting_on_them_would(
    tmp_path: Path, old: str, new: str, sets: str
):
    # --npu applied the fitted values on the runs' model files (the catalog's figures), so an
    # edited figure of the file was refused (before: ignored) while the file's own accelerator
    # was the one named; now the file's [params.npu] is the accelerator the runs are timed on
    out = tmp_path / "a100.toml"
    assert runner.invoke(app, ["calibrate", str(ONE_NODE), "--out", str(out)]).exit_code == 0
    text = out.read_text()
    fitted = tomllib.loads(text)["params"]["npu"]["matrix_efficiency"]
    assert fitted == pytest.approx(0.7706, abs=1e-4)
    edited = tmp_path / "edited.toml"
    edited.write_text(text.replace(old, new))
    by: dict[str, list[float]] = {}
    for how in (["--npu", str(out)], ["--calibrate-on", str(ONE_NODE)], ["--npu", str(edited)]):
        js = tmp_path / "v.json"
        r = runner.invoke(app, ["validate", str(KORTHIKANTI), *how, "--json", str(js)])
        assert r.exit_code == 0, r.output
        by[how[1]] = [x["predicted_ms"] for x in json.loads(js.read_text())["rows"]]
    # the file as written and the fit made here time every run alike
    assert by[str(out)] == pytest.approx(by[str(ONE_NODE)], rel=1e-12)
    assert by[str(out)][0] == pytest.approx(1420.0, rel=1e-6)  # the 22B full run, fitted on
    # the edited file times each run as the model file with the fitted value and the edit
    expected = [predict_ms(run, (f"npu.matrix_efficiency={fitted!r}", sets))
                for run in read_runs(KORTHIKANTI)]
    assert by[str(edited)] == pytest.approx(expected, rel=1e-12)
    assert all(e > u for e, u in zip(by[str(edited)], by[str(out)], strict=True))  # slower HBM
    field, value = new.split(" = ")
    assert r.stderr.strip() == (
        f"note: {edited}: params.npu.{field} = {float(value)!r} where the runs' model file gives "
        f"{float(old.split(' = ')[1])!r} ({KORTHIKANTI}: line 10): the runs of A100-SXM-80GB are "
        "timed with the file's value, and its fit (matrix_efficiency) was made with the value it "
        "was written with"
    )


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        ("runs = 2", "runs = -2", "calibration.runs: -2 is not a number of runs (a whole number, "
         "at least 1); fix: give the number of measured runs the fit rests on, or calibrate again"),
        ("runs = 2", "runs = 2.5", "calibration.runs: 2.5 is not a number of runs (a whole "
         "number, at least 1); fix: give the number of measured runs the fit rests on, or "
         "calibrate again"),
        ("mape = 0.0133", 'mape = "1.3%"', "calibration.mape: '1.3%' is not a fraction of at "
         "least 0 (the fit's mean |predicted - measured| / measured); fix: write the fraction as "
         "a number: 0.013"),
        ("worst = 0.0267", "worst = -0.0267", "calibration.worst: -0.0267 is not a fraction of at "
         "least 0 (the fit's largest |predicted - measured| / measured); fix: write the fraction "
         "as a number (0.013 for 1.3 %), or calibrate again"),
        ("worst = 0.0267", "worst = 0.001", "calibration.worst: 0.001 is below the mean error "
         "(mape 0.0133); fix: give the fit's largest error, at least its mean, or calibrate again"),
        ('loss = "mape"', 'loss = "l2"', "calibration.loss: unknown loss 'l2'; fix: use one of "
         "mape, log"),
        ("at_bound = []", 'at_bound = ["hbm_efficiency"]', "calibration.at_bound: "
         "['hbm_efficiency'] is not a list of fitted fields (calibration.fields); fix: write "
         'at_bound = [] or a list of names from fields, e.g. ["matrix_efficiency"]'),
        ('loss = "mape"', 'loss = "mape"\nsource = "Korthikanti"', "calibration.source: unknown "
         "key; fix: remove it: [calibration] holds fields, runs, files, loss, mape, worst, "
         "at_bound, sha256, npu_sha256"),
        ('loss = "mape"', 'loss = "mape"\nrun = 2', "calibration.run: unknown key (did you mean "
         "'runs'?); fix: remove it: [calibration] holds fields, runs, files, loss, mape, worst, "
         "at_bound, sha256, npu_sha256"),
    ],
)
@pytest.mark.heavy
def test_a_bad_calibration_record_names_the_file_the_field_and_the_fix(
    tmp_path: Path, old: str, new: str, error: str
):
    # before, a negative run count, an error written as text or an unknown key was taken as it
    # was (and the text shown as a NaN mean error)
    out = tmp_path / "a100.toml"
    assert runner.invoke(app, ["calibrate", str(ONE_NODE), "--out", str(out)]).exit_code == 0
    text = "\n".join(
        f"{k} = {float(v):.3g}" if k in ("mape", "worst") else line
        for line in out.read_text().splitlines()
        for k, _, v in [line.partition(" = ")]
    )
    assert old in text
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace(old, new, 1))
    r = runner.invoke(app, ["validate", str(KORTHIKANTI), "--npu", str(bad)])
    assert r.exit_code == 2
    assert r.stderr.strip() == f"error: {bad}: {error}"
    # the file as rounded here is taken
    out.write_text(text)
    assert runner.invoke(app, ["validate", str(KORTHIKANTI), "--npu", str(out)]).exit_code == 0
