"""validate with runs whose model file names a calibrated accelerator file (``[params.npu]
calibrated``): the runs are timed with its fitted values and the runs it was fitted on are in
sample, as with ``--npu``; a calibration run's plan measured again more than 10 % from the fit's
time gets a note (the rule calibrate warns with), with the model's file or with ``--npu``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hieropt.io.runs import read_runs
from hieropt.studies.validate import validate
from hieropt.studies.validate.predict import predict_ms
from tests.cases import TINY_HEADER, TINY_PLANS, tiny_runs
from tests.cli.util import run

from .tiny import MODEL


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> Path:
    """runs.csv (the tiny model's own times at efficiency 0.37), cal.toml fitted on it and
    tinycal.toml naming cal.toml; the folder."""
    folder = tmp_path_factory.mktemp("fitted")
    r = run("calibrate", tiny_runs(folder, 0.37), "--out", folder / "cal.toml")
    assert r.exit_code == 0, r.output
    npu = MODEL.split("[params.npu]")[0] + '[params.npu]\ncalibrated = "cal.toml"\n'
    (folder / "tinycal.toml").write_text(npu)
    return folder


def again(folder: Path, model: str, slower: float, new_plan_ratio: float) -> Path:
    """again.csv: the first two calibration plans measured again (the first ``slower`` times its
    calibration time, the second at it) and a new plan (2 NPUs at 3 GB/s) measured at
    ``new_plan_ratio`` times the fit's prediction, each row naming ``model``."""
    measured = [r.measured_ms for r in read_runs(folder / "runs.csv")]
    rows = [
        f"{model},net.toml,{bw},{dp},{gbs},{mb},{t!r},g"
        for (bw, dp, gbs, mb), t in zip(TINY_PLANS[:2], (measured[0] * slower, measured[1]),
                                        strict=True)
    ]
    path = folder / "again.csv"
    path.write_text("\n".join([TINY_HEADER, *rows, f"{model},net.toml,3,2,4,1,1,g"]) + "\n")
    new = read_runs(path)[2]
    t = predict_ms(new, ("npu.efficiency=0.37",)) * new_plan_ratio
    path.write_text(path.read_text().replace(",3,2,4,1,1,g", f",3,2,4,1,{t!r},g"))
    return path


def test_runs_of_a_model_naming_the_file_are_timed_with_it_and_its_runs_in_sample(fitted):
    path = again(fitted, "tinycal.toml", 1.0, 1.1)
    v = validate([path])
    assert [x.in_sample for x in v.rows] == [True, True, False]
    assert [x.repeat_measurement for x in v.rows] == [False, False, False]
    assert [round(x.error, 6) for x in v.rows[:2]] == [0.0, 0.0]  # (the fit's own times)
    assert v.rows[2].error == pytest.approx(1 / 1.1 - 1, abs=1e-6)  # -9.09 %
    assert v.mape == pytest.approx(1 - 1 / 1.1, abs=1e-6) and v.notes == ()
    r = run("validate", path)
    assert r.exit_code == 0, r.output
    assert "1 run out of sample: mean absolute error 9.1%, worst 9.1% (the model files' " in (
        r.stdout)


@pytest.mark.parametrize("model, npu", [("tinycal.toml", ()), ("tiny.toml", ("--npu", "cal"))])
def test_a_repeat_measurement_far_from_the_fits_time_is_a_note(fitted, tmp_path, model, npu):
    path = again(fitted, model, 1.5, 1.0)
    calibration = (fitted / "cal.toml",) if npu else ()
    r = run("validate", path, *(npu[:1] + calibration), "--json", tmp_path / "v.json")
    assert r.exit_code == 0, r.output
    assert "+50.0%" not in r.stdout and "-33.3% (fit, repeat measurement)" in r.stdout
    first = read_runs(fitted / "runs.csv")[0]
    note = (
        f"note: {path}: line 2 and {first.where} are the same plan measured at "
        f"{read_runs(path)[0].measured_ms:,.10g} and {first.measured_ms:,.10g}"
        " ms (50% apart, more than 10%): the measurements disagree, so its error (-33.3%) is "
        "theirs, not the model's; the fit rests on the other time (check the rows, or calibrate "
        "again on the runs you trust)"
    )
    assert note in r.stdout + r.stderr
    assert json.loads((tmp_path / "v.json").read_text())["notes"] == [note]
    assert "1 run out of sample: mean absolute error 0.0%" in r.stdout  # (the new plan)
