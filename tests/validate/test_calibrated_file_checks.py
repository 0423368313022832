"""Calibrated accelerator files are what they claim or refused: a field at its bound is reported in
the file, the JSON and stderr; runs gone, edited (by their hash) or looked up in the working
folder, an edited figure and a bad record are refused naming the file, the field and the fix;
the fit's own runs are marked in sample when its file is applied with --npu."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from hieropt.cli import app
from hieropt.errors import InputError
from hieropt.io.calibration import read_calibration
from hieropt.io.runs import read_runs
from hieropt.studies.validate import predict_ms

from .validation_files import KORTHIKANTI, ONE_NODE, copy_of, runner


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
    # a file written without hashes (no sha256 lines) is taken as it is
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
    # the file's [params.npu] is the accelerator the runs are timed on, not the fitted values
    # applied on the runs' model files (the catalog's figures), which would ignore an edited
    # figure of the file while naming the file's own accelerator
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
    # a negative run count, an error written as text or an unknown key is not taken as it is
    # (the text would show as a NaN mean error)
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
