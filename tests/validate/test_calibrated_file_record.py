"""What a calibrated accelerator file records of its fit, and what becomes of it: options refused
before any input is read leave an earlier file in place; a ``[params.npu]`` edited since the fit is
a note wherever the fit's errors are stated; a fit on no more runs than fields says it is no check
of the model; a file that replaces a model file's own calibrated file or compute model says so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hieropt.io.calibration import fit_quality, npu_edited, npu_sha256
from hieropt.report.run import calibrated_note
from tests.cases import tiny_runs
from tests.cli.util import run


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> Path:
    """cal.toml fitted on the tiny model's own times at efficiency 0.4: the folder."""
    folder = tmp_path_factory.mktemp("fitted")
    runs = tiny_runs(folder, 0.4)
    r = run("calibrate", runs, "--out", folder / "cal.toml")
    assert r.exit_code == 0, r.output
    return folder


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (("--fit", "bogus"), "--fit: unknown calibration field bogus"),
        (("--loss", "L1"), "--loss: unknown loss 'L1'"),
        (("--json", "SAME"), "is also the --json file"),
    ],
)
def test_a_refused_option_leaves_the_earlier_file(fitted, tmp_path, extra, says):
    keep = tmp_path / "keep.toml"
    text = (fitted / "cal.toml").read_text()
    keep.write_text(text)
    extra = tuple(str(keep) if e == "SAME" else e for e in extra)
    r = run("calibrate", fitted / "runs.csv", "--out", keep, *extra)
    assert r.exit_code == 2 and says in r.output
    assert keep.read_text() == text


def test_the_file_records_the_hash_of_its_accelerator(fitted):
    import tomllib

    data = tomllib.loads((fitted / "cal.toml").read_text())
    npu, meta = data["params"]["npu"], data["calibration"]
    assert meta["npu_sha256"] == npu_sha256(npu) and not npu_edited(npu, meta)
    # layout-free: the same table in another key order has the same hash
    assert npu_sha256(dict(reversed(list(npu.items())))) == meta["npu_sha256"]
    assert npu_edited({**npu, "efficiency": 0.9}, meta)
    assert not npu_edited({**npu, "efficiency": 0.9}, {})  # (an older file: nothing to compare)


def test_an_edited_accelerator_is_a_note_where_the_fit_is_stated(fitted, tmp_path):
    text = (fitted / "cal.toml").read_text()
    line = next(x for x in text.splitlines() if x.startswith("efficiency = "))
    edited = tmp_path / "edited.toml"
    edited.write_text(text.replace(line, "efficiency = 0.9"))
    for f in ("runs.csv", "tiny.toml", "net.toml"):
        (tmp_path / f).write_text((fitted / f).read_text())
    assert "its [params.npu] was edited since the fit" in calibrated_note(edited)
    assert "edited" not in calibrated_note(fitted / "cal.toml")
    r = run("validate", tmp_path / "runs.csv", "--npu", edited)
    assert r.exit_code == 0, r.output
    assert f"note: {edited}: its [params.npu] was edited since the fit" in r.output
    # the runs are timed with the edited value, faster than measured (the fit's 0.0 % is not)
    errors = re.findall(r"(-?\d+\.\d)% \(fit\)", r.output)
    assert len(errors) == 4 and all(float(e) < -5 for e in errors)


def test_the_fit_quality_says_when_it_is_no_check_of_the_model():
    assert fit_quality(4, 1, 0.014, 0.039) == "fit MAPE 1.4 %, worst 3.9 %"
    assert fit_quality(1, 1, 0.0, 0.0) == (
        "fitted exactly: 1 run for 1 field, no check of the model")
    assert fit_quality(2, 2, 1e-9, 2e-9) == (
        "fitted exactly: 2 runs for 2 fields, no check of the model")
    assert fit_quality(1, 1, 0.017, 0.042) == (
        "fit MAPE 1.7 %, worst 4.2 %: the spread of repeated measurements of 1 run for 1 field, "
        "no check of the model")
    assert fit_quality(None, 1, None, None) == ""


def test_a_one_run_fit_is_written_and_noted_as_no_check(tmp_path):
    runs = tiny_runs(tmp_path, 0.4)
    lines = [x for x in runs.read_text().splitlines() if not x.startswith("#")]
    one = tmp_path / "one.csv"
    one.write_text("\n".join(lines[:2]) + "\n")
    r = run("calibrate", one, "--out", tmp_path / "one.toml")
    assert r.exit_code == 0, r.output
    assert "fitted exactly: 1 run for 1 field, no check of the model" in r.output
    assert "# fitted exactly: 1 run for 1 field" in (tmp_path / "one.toml").read_text()
    assert "(fitted exactly: 1 run for 1 field, no check of the model; calibrated file " in (
        calibrated_note(tmp_path / "one.toml"))


def test_a_file_replacing_the_model_files_own_calibration_says_so(fitted, tmp_path):
    for f in ("runs.csv", "net.toml", "cal.toml"):
        (tmp_path / f).write_text((fitted / f).read_text())
    model = (fitted / "tiny.toml").read_text()
    head, _, _ = model.partition("[params.npu]")
    (tmp_path / "tiny.toml").write_text(head + '[params.npu]\ncalibrated = "cal.toml"\n')
    other = tmp_path / "other.toml"
    other.write_text((fitted / "cal.toml").read_text())
    r = run("validate", tmp_path / "runs.csv", "--npu", other)
    assert r.exit_code == 0, r.output
    assert "replaces the accelerator of tiny.toml" in r.output
    assert "its calibrated = 'cal.toml'" in r.output
    r = run("validate", tmp_path / "runs.csv", "--npu", tmp_path / "cal.toml")
    assert "replaces the accelerator" not in r.output
