"""A run is in sample when its plan is a calibration run's, however its row is written: the match is
on what the row resolves to (model, plan, NPU, precision, network, bandwidths), the calibrated NPU
fields, the labels and the measured time left out (a fit takes rows of one plan as one run: the
plan measured at another time is a repeat measurement, in sample); a run that differs in any of
those is not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.studies.validate import validate

REPO = Path(__file__).resolve().parents[2]
VALIDATION = REPO / "validation"
ONE_NODE = VALIDATION / "calibration" / "a100-one-node.csv"
runner = CliRunner(env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1",
                        "COLUMNS": "200"})


def rewritten(tmp_path: Path, name: str, *edits: tuple[str, str]) -> Path:
    """The one-node calibration runs (``validation/calibration/a100-one-node.csv``) with each (old,
    new) edit applied to every line, written to ``tmp_path/calibration/name`` beside copies of the
    model and network folders (so that its relative paths resolve as in validation/)."""
    for folder in ("models", "networks"):
        if not (tmp_path / folder).exists():
            shutil.copytree(VALIDATION / folder, tmp_path / folder)
    lines = ONE_NODE.read_text().splitlines()
    for old, new in edits:
        assert any(old in t for t in lines), old
        lines = [t.replace(old, new) for t in lines]
    (tmp_path / "calibration").mkdir(exist_ok=True)
    out = tmp_path / "calibration" / name
    out.write_text("\n".join(lines) + "\n")
    return out


def marks(path: Path, calibrate_on: tuple[Path, ...] = ()) -> list[bool]:
    """Whether each run of ``path`` is marked in sample (with ``calibrate_on`` runs fitted first;
    none: the catalog default, fitted on the one-node runs)."""
    return [x.in_sample for x in validate([path], calibrate_on=calibrate_on).rows]


@pytest.mark.heavy
def test_the_calibration_runs_without_their_model_name_column_are_in_sample(tmp_path: Path):
    # the model's name is a label: without it the rows resolve to the 1.7B model file's name, but
    # the same 22B model (layers, widths), plan, network and measurements: not predicted "out of
    # sample" ("2 runs out of sample: mean absolute error 1.3%")
    path = rewritten(tmp_path, "renamed.csv", ("model.name,", ""), (",gpt-22b,", ","))
    assert marks(path, (ONE_NODE,)) == [True, True]
    assert marks(path) == [True, True]  # the catalog default's runs_file
    r = runner.invoke(app, ["validate", str(path), "--calibrate-on", str(ONE_NODE)])
    assert r.exit_code == 0, r.output
    assert "0 runs out of sample" in r.stdout
    assert r.stdout.count("(fit)") == 3  # two rows and the note


@pytest.mark.heavy
def test_an_accelerator_column_the_model_file_names_in_another_case_is_the_same_run(
    tmp_path: Path,
):
    path = rewritten(
        tmp_path,
        "accelerator.csv",
        ("name,model,", "name,accelerator,model,"),
        ("full,../models", "full,a100-sxm-80gb,../models"),
        ("+SP,../models", "+SP,A100-80GB,../models"),  # (an alias of the catalog entry)
    )
    assert marks(path, (ONE_NODE,)) == [True, True]
    assert marks(path) == [True, True]


def test_a_calibrated_field_in_the_row_does_not_make_the_run_another(tmp_path: Path):
    # the catalog default's fitted value (0.7706) given in a column: the run is timed with that
    # default, one of its runs
    path = rewritten(
        tmp_path,
        "fitted.csv",
        ("name,model,", "name,matrix_efficiency,model,"),
        ("full,../models", "full,0.7706,../models"),
        ("+SP,../models", "+SP,0.7706,../models"),
    )
    assert marks(path) == [True, True]


@pytest.mark.heavy
def test_a_fitted_field_in_a_row_is_refused_with_a_fit_applied(tmp_path: Path):
    # --calibrate-on's fitted value does not replace the row's 0.9 without a word
    path = rewritten(
        tmp_path,
        "fitted.csv",
        ("name,model,", "name,matrix_efficiency,model,"),
        ("full,../models", "full,0.9,../models"),
        ("+SP,../models", "+SP,,../models"),
    )
    r = runner.invoke(app, ["validate", str(path), "--calibrate-on", str(ONE_NODE)])
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"error: {path}: line 7: matrix_efficiency: 0.9 given in the row, and matrix_efficiency "
        "is fitted by calibrate_on (--calibrate-on): the fitted value would replace it; fix: "
        "leave the matrix_efficiency cell empty to use the fitted value, or give the run without "
        "calibrate_on (--calibrate-on) to time it with 0.9"
    )
    r = runner.invoke(app, ["calibrate", str(path), "--out", str(tmp_path / "a.toml")])
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"error: {path}: line 7: matrix_efficiency: 0.9 given in the row, and matrix_efficiency "
        "is fitted on this run: the fitted value would replace it; fix: leave the "
        "matrix_efficiency cell empty: the fit sets matrix_efficiency"
    )
    # without a fit the row's value times the run, and the summary says so
    r = runner.invoke(app, ["validate", str(path)])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip().splitlines()[-1] == (
        "1 run out of sample: mean absolute error 7.6%, worst 7.6% (the model files' "
        "calibration, the rows' own matrix_efficiency in it; (fit): the runs a catalog "
        "default or a calibrated file was fitted on)"
    )


@pytest.mark.heavy
def test_a_calibration_plan_measured_again_is_in_sample(tmp_path: Path):
    # another measured time (1421 ms, not 1420) on the first row: the same plan, which the fit
    # counts as one run with the 1420 ms row, not out of sample
    path = rewritten(tmp_path, "slower.csv", (",1420,", ",1421,"))
    assert marks(path, (ONE_NODE,)) == [True, True]
    assert marks(path) == [True, True]
    v = validate([path], calibrate_on=(ONE_NODE,))
    assert [x.repeat_measurement for x in v.rows] == [True, False]
    assert [x.counted for x in v.rows] == [False, False]
    # both times of the plan beside the calibration's own: the 1420 ms row is the calibration
    # run, 1,900 ms the plan measured again; neither enters the summary
    lines = ONE_NODE.read_text().splitlines()
    first = next(t for t in lines if ",1420," in t)
    both = tmp_path / "calibration" / "both.csv"
    both.write_text("\n".join([*lines, first.replace(",1420,", ",1900,")]) + "\n")
    r = runner.invoke(app, ["validate", str(both), "--calibrate-on", str(ONE_NODE)])
    assert r.exit_code == 0, r.output
    assert r.stdout.count("(fit, repeat measurement)") == 2  # the row and the note
    assert "(fit, repeat measurement): a calibration run's plan measured again, in sample too" \
        in " ".join(r.stdout.split())  # (the caption wraps)
    assert "0 runs out of sample" in r.stdout


@pytest.mark.heavy
def test_a_run_that_differs_is_out_of_sample(tmp_path: Path):
    # another plan: tp 4 x dp 2, micro-batch 2, instead of tp 8 (the same GPUs, batch, time)
    plan = (",8,1,1,4,4,1f1b,1,selective", ",4,1,2,2,4,1f1b,1,selective")
    path = rewritten(tmp_path, "tp4.csv", plan)
    assert marks(path, (ONE_NODE,)) == [True, False]
    # another bandwidth of the node's NVLink on the first row
    first = ("300;25,gpt-22b,48,6144,64,24576,8,1,1,4,4,1f1b,1,full,",)
    path = rewritten(tmp_path, "nvlink.csv", (first[0], "150" + first[0][3:]))
    assert marks(path, (ONE_NODE,)) == [False, True]


@pytest.mark.heavy
def test_a_run_given_twice_counts_once():
    # the shipped runs with the calibration runs: Narayanan's Table 1 is in both narayanan2021.csv
    # and calibration/a100-narayanan-table1.csv: its ten runs count once, not twice
    shipped = sorted(VALIDATION.glob("*.csv"))
    calibration = sorted((VALIDATION / "calibration").glob("*.csv"))
    alone = validate(shipped)
    both = validate(shipped + calibration)
    table1 = [x for x in both.rows if x.run.path.name == "a100-narayanan-table1.csv"]
    assert len(table1) == 10
    first = str(VALIDATION / "narayanan2021.csv") + " line "
    assert all(x.repeats.startswith(first) for x in table1)
    assert not any(x.repeats for x in alone.rows)
    assert (both.mape, both.worst) == (alone.mape, alone.worst)
    assert sum(x.counted for x in both.rows) == sum(x.counted for x in alone.rows) == 54
    # each file's figures hold its own runs, a repeat of another file's too: the ten Table 1 runs
    table1_file = str(VALIDATION / "calibration" / "a100-narayanan-table1.csv")
    n, table1_mape, table1_worst = both.by_file[table1_file]
    errors = [abs(x.predicted_ms / x.run.measured_ms - 1) for x in table1]
    assert n == 10  # (to rounding: the errors' arithmetic and the sum's order)
    assert (table1_mape, table1_worst) == pytest.approx((sum(errors) / 10, max(errors)), rel=1e-12)
    assert both.by_file[first[:-6]] == alone.by_file[first[:-6]]
    # the same file twice: every row of the second copy repeats the first's
    path = VALIDATION / "korthikanti2022.csv"
    r = runner.invoke(app, ["validate", str(path), str(path)])
    assert r.exit_code == 0, r.output
    # seven rows and the note; the two 22B runs stay marked (fit), as the catalog default's own,
    # and are marked (repeat) as well
    assert r.stdout.count("(fit) (repeat)") == 2
    assert r.stdout.count("(repeat)") == 7 + 2 + 1
    assert r.stdout.count("(fit)") == 4 + 2  # and the note and the summary
    assert (
        "7 runs out of sample: mean absolute error 3.1%, worst 6.3% (the model files' calibration; "
        "(fit): the runs a catalog default or a calibrated file was fitted on) (7 repeated runs "
        "counted once)"
    ) in r.stdout


def test_a_schedule_and_recompute_in_another_case_are_the_same_run(tmp_path: Path):
    # "1F1B" as the papers write it: not refused, as the accelerator column ignores case
    path = rewritten(tmp_path, "upper.csv", (",1f1b,", ",1F1B,"), (",selective", ",Selective"),
                     (",full,", ",FULL,"))
    assert marks(path) == [True, True]
    r = runner.invoke(app, ["validate", str(path)])
    assert r.exit_code == 0, r.output
    assert "0 runs out of sample" in r.stdout


@pytest.mark.heavy
def test_two_npu_files_of_one_accelerator_are_refused_naming_both(tmp_path: Path):
    # not the last one applied with both reported as applied
    path = rewritten(tmp_path, "one.csv")
    a, b = tmp_path / "calibration" / "a.toml", tmp_path / "calibration" / "b.toml"
    r = runner.invoke(app, ["calibrate", str(path), "--out", str(a)])
    assert r.exit_code == 0, r.output
    shutil.copy(a, b)
    r = runner.invoke(app, ["validate", str(path), "--npu", str(a), "--npu", str(b)])
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"error: --npu: a second calibration of A100-SXM-80GB: {a} calibrates it too, and only "
        "one can apply to its runs; fix: give one calibration per accelerator, one calibrations "
        f"(--npu) file each ({a} or {b})"
    )
