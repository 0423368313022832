"""Measured times in the wrong unit are refused: seconds, microseconds, a step faster than the
peak FLOP/s allows or implausibly slow, each naming the run and the conversion; the shipped runs
are far from both thresholds."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.cli import app
from hieropt.errors import InputError
from hieropt.io.run_units import (
    SLOW_FRACTION,
    SPEED_FACTOR,
    peak_time_ms,
)
from hieropt.io.runs import read_runs

from .tiny import refused
from .validation_files import KORTHIKANTI, ONE_NODE, VALIDATION, copy_of, runner


def test_measured_times_in_seconds_are_refused_with_the_conversion(tmp_path: Path):
    # the one-node calibration runs with measured_ms in seconds (1.42 s, not 1420 ms): not a
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
    # down to the peak time, past it; not only a time below 1/10 of it
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


def test_measured_times_in_microseconds_are_refused_with_the_conversion(tmp_path: Path):
    # 1420000 for the 1.42 s of the 22B full-recompute run: not -99.9 % from validate nor a fit
    # from calibrate (mean error 49.9 %, just under the 50 % refusal)
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
