"""``validate --npu FILE`` with rows that give the accelerator's own cells: every cell applies over
the file's ``[params.npu]`` as over a model file's, and the note says the run is timed with the
cell's value (an HBM bandwidth cell times the run with it); a ``number_format`` or ``peak_tflops``
cell other than the file's is refused, since the fit is of that format at that peak and the file's
peak would stay (a format cell alone changed no time, and was said to be the file's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hieropt.io.runs import read_runs
from hieropt.studies.validate.predict import predict_ms
from tests.cases import REPO
from tests.cli.util import error_line, run

ONE_NODE = REPO / "validation" / "calibration" / "a100-one-node.csv"


@pytest.fixture(scope="module")
def a100(tmp_path_factory) -> Path:
    """a100.toml: the A100 calibrated on its two one-node runs (matrix_efficiency 0.7706)."""
    out = tmp_path_factory.mktemp("a100") / "a100.toml"
    r = run("calibrate", ONE_NODE, "--out", out)
    assert r.exit_code == 0, r.output
    return out


def runs_with(folder: Path, column: str, values: list[str]) -> Path:
    """The 22B full-recompute run of ONE_NODE once per value of ``column`` (its model and network
    by absolute path), in ``folder / cells.csv``."""
    lines = [x for x in ONE_NODE.read_text().splitlines() if x and not x.startswith("#")]
    header, row = lines[0], lines[1]
    row = row.replace("../models/", f"{ONE_NODE.parent.parent}/models/").replace(
        "../networks/", f"{ONE_NODE.parent.parent}/networks/")
    path = folder / "cells.csv"
    path.write_text("\n".join([f"{header},{column}", *(f"{row},{v}" for v in values)]) + "\n")
    return path


@pytest.mark.heavy
def test_an_hbm_cell_applies_and_the_note_says_so(a100, tmp_path):
    path = runs_with(tmp_path, "hbm_gbps", ["1000", ""])
    r = run("validate", path, "--npu", a100, "--json", tmp_path / "v.json")
    assert r.exit_code == 0, r.output
    rows = json.loads((tmp_path / "v.json").read_text())["rows"]
    fitted = float(a100.read_text().split("matrix_efficiency = ")[1].split()[0])
    runs = read_runs(path)
    # (the file's accelerator is the catalog's A100 with the fitted value: the cell on top of it)
    expected = [predict_ms(x, (f"npu.matrix_efficiency={fitted!r}",)) for x in runs]
    assert [x["predicted_ms"] for x in rows] == pytest.approx(expected, rel=1e-12)
    assert rows[1]["predicted_ms"] == pytest.approx(1420.0, rel=1e-6)  # (the run fitted on)
    assert rows[0]["predicted_ms"] > rows[1]["predicted_ms"]  # (1,000 GB/s of HBM: slower)
    assert r.stderr.strip() == (
        f"note: {path}: line 2: its hbm_gbps cell 1000 applies over {a100}'s params.npu.hbm_gbps "
        "= 2039.0: the run is timed with the cell's value, and the file's fit "
        "(matrix_efficiency) was made with 2039.0"
    )


@pytest.mark.parametrize(("column", "value"), [("number_format", "tf32"),
                                               ("peak_tflops", "400")])
def test_a_format_or_peak_cell_other_than_the_fit_s_is_refused(a100, tmp_path, column, value):
    path = runs_with(tmp_path, column, [value])
    r = run("validate", path, "--npu", a100)
    assert r.exit_code == 2
    now = {"number_format": "'fp16'", "peak_tflops": "312.0"}[column]
    assert error_line(r) == (
        f"error: {path}: line 2: {column}: {value} given in the row, and calibrations (--npu) "
        f"{a100} times the run with a100.toml's {column} = {now}: its fit is of fp16 at 312.0 "
        f"TFLOP/s (the fitted efficiencies are fractions of that peak); fix: leave the {column} "
        "cell empty to validate the fit as made, or give the run without calibrations (--npu) "
        f"{a100} to time it with {value} "
        "(calibrate on runs at that figure to validate one)"
    )
    same = runs_with(tmp_path, column, ["fp16" if column == "number_format" else "312"])
    assert run("validate", same, "--npu", a100).exit_code == 0  # (the fit's own: taken)


def test_a_row_timed_away_from_the_default_s_figures_says_the_error_is_the_extrapolation(
        tmp_path):
    """Without --npu a ``number_format`` cell applies (the A100's TF32 peak, 156 TFLOP/s, with the
    default fitted on BF16 runs at 312): the note names the row and says so; in BF16 none."""
    path = runs_with(tmp_path, "number_format", ["tf32", "tf32", "bf16"])
    r = run("validate", path, "--json", tmp_path / "v.json")
    assert r.exit_code == 0, r.output
    note = (f"note: {path}: line 2 (and 1 more): the A100-SXM-80GB compute calibration is fitted "
            "in bf16 at 312 TFLOP/s and extrapolated to tf32 at 156 TFLOP/s: the error measures "
            "that extrapolation, not the fit")
    assert json.loads((tmp_path / "v.json").read_text())["notes"] == [note]
    assert note in r.stderr
