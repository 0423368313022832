"""What a user types into runs files and calibrations is read as written or refused with the fix:
a calibration no run uses, runs of one accelerator in two settings, numbers in another form than
plain ASCII decimals (one reader with ``--bw``), a row's cell the ``--npu`` file refuses, and the
hints of a percentage, a unit, a space and a Windows path."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.errors import InputError
from hieropt.io.calibration import write_calibration
from hieropt.io.runs import read_runs
from hieropt.studies.validate import fit_npu, predict_ms, read_calibrated, validate

from .tiny import MODEL, refused, write_case

runner = CliRunner(env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1",
                        "COLUMNS": "200"})
HEADER = "model,network,bw_gbps,dp,global_batch_size,micro_batch_size,measured_ms"
PLANS = [("10", 2, 4, 1), ("20", 2, 8, 2)]


def synthetic(folder: Path, model: str = MODEL, cells: tuple[str, ...] = ("", ""),
              header: str = HEADER) -> Path:
    """A runs file of the tiny model on :data:`PLANS` whose measured times are the model's own
    predictions at efficiency 0.4; ``cells``: each row's extra cell (``header`` names its
    column)."""
    folder.mkdir(exist_ok=True)

    def rows(times: list[float]) -> list[str]:
        extra = header != HEADER  # (a column after measured_ms)
        return [f"tiny.toml,net.toml,{bw},{dp},{gbs},{mb},{t!r}" + f",{c}" * extra
                for (bw, dp, gbs, mb), t, c in zip(PLANS, times, cells, strict=True)]

    path = write_case(folder, rows([1.0, 1.0]), header, model)
    times = [predict_ms(r, ("npu.efficiency=0.4",)) for r in read_runs(path)]
    return write_case(folder, rows(times), header, model)


@pytest.mark.heavy
def test_a_calibrated_file_no_run_uses_is_refused(tmp_path: Path):
    # before: exit 0, "applied to 0 runs" in the summary, which lost its "(the model files'
    # calibration)" tag and read as the fit's
    cal = synthetic(tmp_path / "cal")
    out = tmp_path / "toy.toml"
    assert runner.invoke(app, ["calibrate", str(cal), "--out", str(out)]).exit_code == 0
    other = synthetic(tmp_path / "other", MODEL.replace('name = "toy"', 'name = "big"'))
    r = runner.invoke(app, ["validate", str(other), "--npu", str(out)])
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"error: {out}: given as calibrations (--npu), it calibrates toy, and no run uses that "
        f"accelerator: the runs are of big ({other}), so it would change no prediction; fix: give "
        "a calibration of the runs' accelerator (big: hieropt calibrate on runs of it), or leave "
        "this one out of calibrations (--npu) to time the runs with the model files' calibration")
    # a fit of --calibrate-on alike, and the library names its argument with the flag
    with pytest.raises(InputError) as e:
        validate([other], calibrate_on=[cal])
    assert e.value.one_line().startswith(
        f"{cal}: given as calibrate_on (--calibrate-on), it calibrates toy, and no run uses")
    with pytest.raises(InputError) as e:
        validate([other], calibrations=[read_calibrated(str(out))])
    assert e.value.one_line().startswith(f"{out}: given as calibrations (--npu), it calibrates toy")
    # the runs of its accelerator: applied
    assert validate([cal], calibrations=[read_calibrated(str(out))]).rows[0].calibrated == "toy"


def test_a_fitted_cell_names_the_library_argument_with_its_flag(tmp_path: Path):
    cal = synthetic(tmp_path / "cal")
    cells = synthetic(tmp_path / "cells", cells=("0.3", ""), header=HEADER + ",efficiency")
    with pytest.raises(InputError) as e:
        validate([cells], calibrate_on=[cal])
    assert e.value.one_line() == (
        f"{cells}: line 3: efficiency: 0.3 given in the row, and efficiency is fitted by "
        "calibrate_on (--calibrate-on): the fitted value would replace it; fix: leave the "
        "efficiency cell empty to use the fitted value, or give the run without calibrate_on "
        "(--calibrate-on) to time it with 0.3")


def test_runs_of_one_accelerator_in_two_settings_are_refused(tmp_path: Path):
    # before: the first row's hbm_reserve_gib (and number format) written, the other's dropped
    path = synthetic(tmp_path, cells=("0.25", ""), header=HEADER + ",hbm_reserve_gib")
    with pytest.raises(InputError) as e:
        fit_npu(read_runs(path))
    assert e.value.one_line() == (
        f"calibration: hbm_reserve_gib: the runs of toy differ in hbm_reserve_gib 0.25 ({path}: "
        f"line 3) and 0.0 ({path}: line 4): a calibration records one accelerator table, so one "
        "value would be kept for the others without a word; fix: calibrate each setting on its "
        "own runs: split the rows into one runs file per value (of hbm_reserve_gib) and run "
        "hieropt calibrate on each")
    same = synthetic(tmp_path / "same", cells=("0.25", "0.25"), header=HEADER + ",hbm_reserve_gib")
    fit = fit_npu(read_runs(same))
    assert fit.npu_fields["hbm_reserve_gib"] == 0.25
    assert fit.values["efficiency"] == pytest.approx(0.4, abs=1e-5)


@pytest.mark.parametrize(("cell", "column", "said"), [
    ("1_000", "measured_ms", "'1_000' is not a plain decimal number; fix: give the measured "
     "iteration time in ms: write 1000 (plain ASCII digits, no '_' separators)"),
    ("１０００", "measured_ms", "'１０００' is not a plain decimal number; fix: give the measured "
     "iteration time in ms: write 1000 (ASCII digits)"),
    ("1 000", "measured_ms", "'1 000' is not a plain decimal number; fix: give the measured "
     "iteration time in ms: write 1000 (no space inside a number)"),
])
def test_a_measured_time_is_a_plain_decimal_number(tmp_path: Path, cell: str, column: str,
                                                   said: str):
    # before: 1_000 and １０００ were read as 1000 (Python's float), 1 000 had no hint
    path = write_case(tmp_path, [f"tiny.toml,net.toml,10,{cell}"])
    assert refused(path) == f"{path}: line 3: {column}: {said}"


@pytest.mark.parametrize(("cell", "said"), [
    ("1_0", "'1_0' is not a plain decimal number; fix: write 10 (plain ASCII digits, no '_' "
     "separators)"),
    ("80Gb/s", "'80Gb/s' is not a number (it has the unit 'Gb/s'); fix: 80 Gb/s = 10 GB/s per "
     "direction: write 10 (the column takes plain GB/s per NPU per direction, without a unit)"),
    ("10GB/s", "'10GB/s' is not a number (it has the unit 'GB/s'); fix: write 10 (the column "
     "takes plain GB/s per NPU per direction, without a unit)"),
])
def test_a_bandwidth_is_a_plain_decimal_number(tmp_path: Path, cell: str, said: str):
    path = write_case(tmp_path, [f"tiny.toml,net.toml,{cell},1000"])
    assert refused(path) == f"{path}: line 3: bw_gbps: {said}"


def test_bw_and_the_runs_file_read_numbers_alike():
    from hieropt.cli.numbers import parse_bw

    with pytest.raises(InputError) as e:
        parse_bw("1_0,５", 2)
    assert e.value.one_line() == (
        "--bw: bw[0]: '1_0,５' is not a comma-separated list of numbers ('1_0' is not a plain "
        "decimal number); fix: write --bw 10,5 (plain ASCII digits, no '_' separators)")


@pytest.mark.parametrize(("cell", "fix"), [
    ("1_6", "write 16 (plain ASCII digits, no '_' separators)"),
    ("0x10", "write the number in plain ASCII decimal digits (TOML reads it as 16; no '_' "
     "separators, no 0x / 0o / 0b)"),
])
def test_a_plan_cell_is_a_plain_decimal_number(tmp_path: Path, cell: str, fix: str):
    # before: TOML read both as 16, a global batch of 16 sequences timed unseen
    path = write_case(tmp_path, [f"tiny.toml,net.toml,10,{cell},1000"],
                      "model,network,bw_gbps,global_batch_size,measured_ms")
    assert refused(path) == (
        f"{path}: line 3: global_batch_size: '{cell}' is not a plain decimal number; fix: {fix}")


def test_a_full_width_digit_in_a_plan_cell_gets_the_ascii_number(tmp_path: Path):
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,２,1000"],
                      "model,network,bw_gbps,dp,measured_ms")
    assert refused(path).endswith(
        "dp=２: '２' is text, not a plain decimal number; fix: write 2 (ASCII digits)")


def test_a_fraction_given_as_a_percentage_gets_the_fraction(tmp_path: Path):
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,45,1000"],
                      "model,network,bw_gbps,efficiency,measured_ms")
    assert refused(path) == (
        f"{path}: line 3: efficiency=45: 45 is above 1; fix: use a number <= 1 (45 %? write "
        "0.45)")


def test_a_windows_path_is_told_to_use_slashes(tmp_path: Path):
    path = write_case(tmp_path, ["models\\tiny.toml,net.toml,10,1000"])
    assert refused(path) == (
        f"{path}: line 3: model: {tmp_path}/models\\tiny.toml: model file not found; fix: write "
        "the path with '/' between folders: models/tiny.toml (a runs file's paths take '/' on "
        "every system)")


def test_a_row_cell_the_npu_file_refuses_is_named_as_the_row_s(tmp_path: Path):
    # before: "toy.toml: params.npu: efficiency: given with the roofline's matrix_efficiency ..."
    # blamed the calibrated file for the runs file's efficiency cell
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,0.45,1"],
                      "model,network,bw_gbps,efficiency,measured_ms")
    roofline = {"name": "toy", "peak_tflops": 1.0, "hbm_gib": 1.0, "hbm_gbps": 100.0,
                "matrix_efficiency": 0.5, "gemm_half_gflop": 1e-6, "hbm_efficiency": 0.5,
                "kernel_overhead_us": 0.0, "attention_efficiency": 0.5}
    npu = tmp_path / "toy.toml"
    write_calibration(npu, roofline, {"fields": ["matrix_efficiency"], "runs": 1,
                                      "files": [str(path)], "loss": "mape", "mape": 0.0,
                                      "worst": 0.0})
    r = runner.invoke(app, ["validate", str(path), "--npu", str(npu)])
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"error: {path}: line 3: efficiency: 0.45 given in the row, which the accelerator of "
        f"calibrations (--npu) {npu} refuses: params.npu: efficiency: given with the roofline's "
        "matrix_efficiency (two compute models); fix: leave the efficiency cell empty to time the "
        f"run with toy.toml's accelerator, or give the run without calibrations (--npu) {npu} to "
        "time it with efficiency = 0.45")


def test_a_fit_s_worst_run_is_named_in_ms_without_an_exponent():
    # before: "predicted 1.111e+04 ms"
    from hieropt.studies.validate.checks import check_fit_quality

    one_node = Path(__file__).resolve().parents[2] / "validation/calibration/a100-one-node.csv"
    runs = read_runs(one_node)[:1]
    predicted = runs[0].measured_ms * 1.74 + 10_000  # (above 10,000 ms: :,.4g wrote 1.x e+04)
    with pytest.raises(InputError) as e:
        check_fit_quality(runs, [predicted], predicted / runs[0].measured_ms - 1,
                          {"matrix_efficiency": 1.0})
    assert f"predicted {predicted:,.0f} ms for a measured" in e.value.one_line()
    assert "e+0" not in e.value.one_line()


def test_the_bound_note_is_printed_once(tmp_path: Path):
    cal = synthetic(tmp_path / "cal")
    out = tmp_path / "toy.toml"
    r = runner.invoke(app, ["calibrate", str(cal), "--out", str(out), "--fit", "efficiency"])
    assert r.exit_code == 0, r.output
    text = out.read_text().replace("at_bound = []", "").replace(
        "[calibration]\n", '[calibration]\nat_bound = ["efficiency"]\n')
    out.write_text(text)
    r = runner.invoke(app, ["validate", str(cal), "--npu", str(out)])
    assert r.exit_code == 0, r.output
    assert r.stderr.count("sits at its") == 1
