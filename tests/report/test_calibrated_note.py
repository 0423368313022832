"""A model file naming a calibrated accelerator file (``[params.npu] calibrated = "FILE"``, written
by ``hieropt calibrate``) plans with its fitted accelerator, and the note on days, MFU and $ states
that fit: the runs it rests on, its mean and worst error, a fitted value at its bound or a worst
error above 10 % (predictions unreliable), a runs file changed since the fit. One note mechanism
(:func:`hieropt.report.run.calibration_note`) for solve, evaluate, pareto, codesign, report and
workload plan."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hieropt.io.llm import read_llm
from hieropt.io.npus import calibration_of
from hieropt.report.run import calibration_note
from tests.cases import REPO, tiny_runs
from tests.cli.util import run
from tests.validate.tiny import MODEL

H100_RUNS = REPO / "validation" / "calibration" / "h100-one-node.csv"

# a 13B Llama-like model on 16 H100s (8 NVLink x 2 nodes), its NPU the calibrated file's
LLAMA13B = """generator = "llm"
[params.model]
name = "llama-13b"
layers = 40
hidden_size = 5120
heads = 40
ffn_size = 13824
gated_ffn = true
vocab_size = 32000
sequence_length = 4096
norm = "rmsnorm"
biases = false
position_embedding = "rotary"
tied_embeddings = false
[params.plan]
npus = 16
tp = 8
dp = 2
global_batch_size = 256
micro_batch_size = 1
[params.npu]
calibrated = "h100-mine.toml"
"""
INSTANCE = """objective = "performance"
training_loop = "step"
workload = "{model}"
constraints = ["sum(bw) == {total}"]
[network]
dims = [{dims}]
[cost.A]
link_usd_per_gbps = 4.0
switch_usd_per_gbps = 13.0
nic_usd_per_gbps = 31.6
"""
H100_NOTE = (
    "the H100-SXM compute calibration is fitted on 2 runs of h100-one-node.csv (fit MAPE 1.7 %, "
    "worst 4.2 %; calibrated file h100-mine.toml)"
)
NO_BAND = (
    "no error band: a calibration of your own (h100-mine.toml) has no held-out error here (its "
    "fit's errors are on the runs it was fitted to); 'hieropt validate RUNS.csv --npu "
    "h100-mine.toml' measures it on runs it was not fitted to"
)
TINY_NOTE = (
    "the toy compute calibration is fitted on 4 runs of runs.csv (fit MAPE 17.6 %, worst 17.6 %; "
    "calibrated file cal.toml); efficiency at its bound 1.0: the runs ask for more than the model "
    "allows; its worst error on its own runs, 17.6 %, is above 10 %: the model does not match "
    "those runs; predictions are unreliable"
)


def tiny_plan(folder: Path, npu: str = 'calibrated = "cal.toml"\n') -> Path:
    """``plan.toml``: the tiny model of ``tests/validate/tiny.py`` with ``npu`` as its
    ``[params.npu]``, and ``inst.toml``: it on 2 NPUs behind one switch, sum(bw) = 10 GB/s."""
    (folder / "plan.toml").write_text(MODEL.split("[params.npu]")[0] + "[params.npu]\n" + npu)
    dims = '{ block = "Switch", npus = 2, cost_class = "A" }'
    (folder / "inst.toml").write_text(INSTANCE.format(model="plan.toml", total=10, dims=dims))
    return folder / "inst.toml"


@pytest.fixture(scope="module")
def h100(tmp_path_factory) -> Path:
    """h100-mine.toml calibrated on the shipped one-node H100 runs, a 13B model naming it and an
    instance of it on 8 NVLink x 2 nodes; the folder."""
    folder = tmp_path_factory.mktemp("h100")
    r = run("calibrate", H100_RUNS, "--out", folder / "h100-mine.toml")
    assert r.exit_code == 0, r.output
    (folder / "llama13b.toml").write_text(LLAMA13B)
    dims = ('{ block = "FullyConnected", npus = 8, cost_class = "A" }, '
            '{ block = "Switch", npus = 2, cost_class = "A" }')
    (folder / "inst.toml").write_text(INSTANCE.format(model="llama13b.toml", total=500, dims=dims))
    return folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """cal.toml calibrated on runs 15 % faster than the tiny model can time them at efficiency 1:
    the fit sits at its bound 1.0 with every run 1 / 0.85 - 1 = 17.6 % too slow; the folder."""
    folder = tmp_path_factory.mktemp("tiny")
    runs = tiny_runs(folder, 1.0, 0.85)
    r = run("calibrate", runs, "--out", folder / "cal.toml")
    assert r.exit_code == 0, r.output
    tiny_plan(folder)
    return folder


def test_the_plan_takes_the_whole_fitted_accelerator(h100):
    fitted = read_llm(h100 / "llama13b.toml").npu
    table = (h100 / "h100-mine.toml").read_text()
    assert f"matrix_efficiency = {fitted.matrix_efficiency!r}" in table
    assert round(fitted.matrix_efficiency, 4) == 0.5993  # (the catalog's fit: the same runs)
    assert (fitted.name, fitted.accelerator, fitted.peak_tflops, fitted.hbm_gbps) == (
        "H100-SXM", "H100-SXM", 989.4, 3350.0)
    assert fitted.calibrated == str((h100 / "h100-mine.toml").resolve())
    assert calibration_of(fitted) == fitted.calibrated
    assert calibration_note(fitted.calibrated) == H100_NOTE


def test_solve_and_evaluate_print_the_calibrated_note(h100, tmp_path):
    inst = h100 / "inst.toml"
    r = run("solve", inst, "--tokens", "100e9", "--json", tmp_path / "s.json")
    assert r.exit_code == 0, r.output
    assert f"note: {H100_NOTE}" in r.stdout and "catalog's default" not in r.stdout
    solved = json.loads((tmp_path / "s.json").read_text())
    assert H100_NOTE in solved["notes"]
    # no error band (the fit's errors are on its own runs), and the run line says so in its place
    assert solved["run"]["band"] is None and solved["run"]["no_band"] == NO_BAND
    assert re.search(r"run of 100B tokens: [0-9.]+ days; " + re.escape(NO_BAND) + "\n", r.stdout)
    r = run("evaluate", inst, "--tokens", "100e9", "--bw", "450,50", "--json", tmp_path / "e.json")
    assert r.exit_code == 0, r.output
    assert f"note: {H100_NOTE}" in r.stdout
    assert json.loads((tmp_path / "e.json").read_text())["notes"][-1] == H100_NOTE
    r = run("workload", "plan", h100 / "llama13b.toml")
    assert r.exit_code == 0, r.output
    assert f"note: {H100_NOTE}" in r.stdout


def test_a_fit_at_its_bound_says_predictions_are_unreliable(tiny):
    inst = tiny / "inst.toml"
    assert read_llm(tiny / "plan.toml").npu.efficiency == 1.0
    for args in (("solve", inst, "--tokens", "1e6"), ("evaluate", inst, "--tokens", "1e6",
                                                       "--bw", "10"),
                 ("pareto", inst, "--tokens", "1e6"), ("workload", "plan", tiny / "plan.toml")):
        r = run(*args)
        assert r.exit_code == 0, r.output
        assert f"note: {TINY_NOTE}" in r.output, args


def test_a_runs_file_changed_or_gone_is_a_note_not_a_refusal(tiny, tmp_path):
    for f in ("cal.toml", "runs.csv", "tiny.toml", "net.toml"):
        (tmp_path / f).write_text((tiny / f).read_text())
    inst = tiny_plan(tmp_path)
    with (tmp_path / "runs.csv").open("a") as f:
        f.write("tiny.toml,net.toml,8,2,4,1,0.5,g\n")
    r = run("solve", inst, "--tokens", "1e6")
    assert r.exit_code == 0, r.output
    assert (
        f"{TINY_NOTE}; its runs file runs.csv changed since the fit (its sha256 differs): the fit "
        "is of the runs as they were (calibrate again to fit the file as it is)"
    ) in r.stdout
    (tmp_path / "runs.csv").unlink()
    r = run("solve", inst, "--tokens", "1e6")
    assert r.exit_code == 0, r.output
    assert "; its runs file runs.csv is not found beside the calibrated file: the fit" in r.stdout
    r = run("validate", tiny / "runs.csv", "--npu", tmp_path / "cal.toml")
    assert r.exit_code == 2 and "runs file runs.csv not found" in r.stderr  # (validate needs them)


@pytest.mark.parametrize(
    "npu, field, problem",
    [
        ('calibrated = "cal.toml"\naccelerator = "H100"\n', "params.npu.accelerator",
         "given with calibrated: cal.toml gives the whole accelerator (toy), fitted on measured "
         "runs; fix: remove accelerator to plan with the calibrated file, or remove calibrated "
         "to plan with the catalog's default"),
        ('calibrated = "cal.toml"\nefficiency = 0.5\n', "params.npu.efficiency",
         "0.5 where the calibrated file cal.toml gives 1.0 (fitted on its runs); fix: remove "
         "efficiency to plan with the calibration, or calibrate again with it (hieropt calibrate)"),
        ('calibrated = "cal.toml"\npeak_tflops = 2.0\n', "params.npu.peak_tflops",
         "2.0 where the calibrated file cal.toml gives 1.0 (its fitted efficiencies are "
         "fractions of that peak)"),
        ('calibrated = "mine.toml"\n', "params.npu.calibrated",
         "calibrated accelerator file not found: 'mine.toml'"),
    ],
)
def test_bad_calibrated_references_are_refused(tiny, tmp_path, npu, field, problem):
    for f in ("cal.toml", "runs.csv"):
        (tmp_path / f).write_text((tiny / f).read_text())
    inst = tiny_plan(tmp_path, npu)
    r = run("solve", inst)
    assert r.exit_code == 2, r.output
    assert f"plan.toml: {field}: {problem}" in r.stderr


def test_a_file_of_another_kind_is_named(tiny, tmp_path):
    inst = tiny_plan(tmp_path, 'calibrated = "runs.csv"\n')
    (tmp_path / "runs.csv").write_text((tiny / "runs.csv").read_text())
    r = run("solve", inst)
    assert r.exit_code == 2, r.output
    assert "runs.csv is a runs CSV, not a calibrated accelerator file (params.npu.calibrated)" in (
        r.stderr)
    (tmp_path / "model.toml").write_text(LLAMA13B)
    tiny_plan(tmp_path, 'calibrated = "model.toml"\n')
    r = run("solve", inst)
    assert r.exit_code == 2 and "model.toml is an LLM model file, not a calibrated" in r.stderr
    r = run("solve", tiny / "cal.toml")  # (and the file itself given to solve says where it goes)
    assert r.exit_code == 2, r.output
    assert 'name it in an LLM model file ([params.npu] calibrated = "' in r.stderr


def test_the_same_value_is_taken_and_an_override_plans_without_the_note(tiny, tmp_path):
    (tmp_path / "cal.toml").write_text((tiny / "cal.toml").read_text())
    (tmp_path / "runs.csv").write_text((tiny / "runs.csv").read_text())
    tiny_plan(tmp_path, 'calibrated = "cal.toml"\nefficiency = 1.0\nhbm_gib = 2.0\n')
    npu = read_llm(tmp_path / "plan.toml").npu
    assert (npu.efficiency, npu.hbm_gib) == (1.0, 2.0)  # (a figure not fitted: the file's own)
    assert calibration_of(npu) == npu.calibrated
    npu = read_llm(tmp_path / "plan.toml", ["npu.efficiency=0.5"]).npu
    assert npu.efficiency == 0.5 and calibration_of(npu) is None  # (as a catalog default's)
