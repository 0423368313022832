"""hieropt calibrate never gives a fit that cannot mean anything: a calibration run that does not
fit in memory, more fitted fields than runs, an empty fit and a fit far from its runs are refused
with one line naming the file, the field and the fix; a fit at a bound is reported (relative to
the parameter's scale). Measured times and bandwidths in the wrong unit: test_time_units.py and
test_bandwidth_units.py; calibrated files: test_calibrated_file_checks.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.cli import app
from hieropt.errors import InputError
from hieropt.io.run_units import peak_time_ms
from hieropt.io.runs import read_runs
from hieropt.studies.validate import CalibrationField, fit_npu, predict_ms
from hieropt.studies.validate.checks import at_bound, check_fit_quality

from .synthetic import HEADER, PLANS, synthetic
from .tiny import write_case
from .validation_files import ALL_FIVE, KORTHIKANTI, ONE_NODE, copy_of, runner


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
    # not 0.1 % of the range, which would call anything below 10 GFLOP (of [0, 1e4]) or 1 µs (of
    # [0, 1000]) "at its lower bound 0"
    ("gemm_half_gflop", 0.0, 1e4, 5.0, False),
    ("gemm_half_gflop", 0.0, 1e4, 0.09, True),  # within the search's resolution, 1e-5 x 1e4
    ("gemm_half_gflop", 0.0, 1e4, 0.11, False),
    ("kernel_overhead_us", 0.0, 1e3, 0.5, False),
    ("kernel_overhead_us", 0.0, 1e3, 0.0, True),
    ("efficiency", 0.05, 1.0, 0.9995, True),  # within 0.1 % of the bound 1
    ("efficiency", 0.05, 1.0, 0.998, False),
    ("efficiency", 0.05, 1.0, 0.05004, True),  # within 0.1 % of the fitted value, 5.004e-5
    ("efficiency", 0.05, 1.0, 0.0501, False),  # (not at the bound, though within 0.1 % of 0.95)
])
def test_at_bound_is_relative_to_the_parameter_s_scale(name, lower, upper, value, at):
    assert at_bound({name: value}, {name: (lower, upper)}) == ((name,) if at else ())


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
