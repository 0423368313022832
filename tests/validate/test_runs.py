"""Runs files: a hand-computed prediction, the same prediction as hieropt evaluate's, the network
dimensions a run uses, runs in several groups or given twice, and the tables' file names. The
reader's errors: test_runs_file_errors.py; the networks a runs file names: test_runs_networks.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.errors import InputError
from hieropt.io.instance import load_instance
from hieropt.io.runs import read_runs
from hieropt.model.timing import evaluate
from hieropt.report.validate import short_files
from hieropt.studies.validate import predict_ms, validate

from .tiny import HEADER, NET3, refused, write_case

# Hand computation for the tiny model (tests/validate/tiny.py), per NPU and iteration:
# matrix parameters: 2 layers x (4 h^2 + 2 h f) + V h = 2 x (16,384 + 32,768) + 8,192 = 106,496;
# 64 tokens per NPU (2 sequences of 32): 6 x 106,496 x 64 = 40,894,464 FLOPs; attention scores
# and values: 2 x 2 s^2 h per sequence and layer forward = 262,144, x 3 (forward and backward)
# x 2 layers x 2 sequences = 3,145,728; in all 44,040,192 FLOPs at 1 TFLOP/s x 0.5 = 88,080.384 ns.
COMPUTE_NS = 44_040_192 / 500.0
# gradients: every parameter, 4 bytes each (the tiny model trains in bf16, whose gradients are
# reduced in FP32): layers 2 x (attention 12,288 + 4,096 + 128 norm + 256 biases + FFN 32,768 + 128
# norm + 320 biases) = 99,968, embedding 128 x 64 + 32 x 64 = 10,240, final norm 128: 110,336
# parameters = 441,344 bytes; an all-reduce over 2 NPUs sends 2 (n - 1) / n x 441,344 = 441,344
# bytes per NPU: at B GB/s, 441,344 / B ns.
GRADIENT_BYTES = 441_344
runner = CliRunner(env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1",
                        "COLUMNS": "200"})


def test_a_hand_computed_runs_file(tmp_path: Path):
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,0.2", "tiny.toml,net.toml,20,0.1"])
    v = validate([path])
    expected = [(COMPUTE_NS + GRADIENT_BYTES / b) / 1e6 for b in (10, 20)]
    assert [x.predicted_ms for x in v.rows] == pytest.approx(expected, rel=1e-12)
    # errors, MAPE and worst from those predictions:
    # 88,080.384 + 44,134.4 = 132,214.784 ns vs 0.2 ms, 88,080.384 + 22,067.2 = 110,147.584 ns vs
    # 0.1 ms
    assert v.rows[0].error == pytest.approx(0.132214784 / 0.2 - 1)
    assert v.mape == pytest.approx((abs(0.132214784 / 0.2 - 1) + abs(0.110147584 / 0.1 - 1)) / 2)
    assert v.worst == pytest.approx(1 - 0.132214784 / 0.2)


def test_the_communication_part_by_hand(tmp_path: Path):
    """The two runs differ only in bandwidth: the difference is the all-reduce's alone (whatever
    the compute model)."""
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,1", "tiny.toml,net.toml,20,1"])
    a, b = (predict_ms(r) for r in read_runs(path))
    assert (a - b) * 1e6 == pytest.approx(GRADIENT_BYTES / 10 - GRADIENT_BYTES / 20, rel=1e-9)


def test_a_run_is_predicted_as_hieropt_evaluate_predicts_it(tmp_path: Path):
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,1", "tiny.toml,net.toml,7.5,1"])
    (tmp_path / "inst.toml").write_text(
        'objective = "performance"\ntraining_loop = "step"\nworkload = "tiny.toml"\n'
        '[network]\ndims = [{ block = "Switch", npus = 2, cost_class = "x" }]\n'
        "[cost.x]\nlink_usd_per_gbps = 1.0\nswitch_usd_per_gbps = 1.0\nnic_usd_per_gbps = 1.0\n",
        encoding="utf-8")
    inst = load_instance(tmp_path / "inst.toml")
    for run, bw in zip(read_runs(path), (10.0, 7.5), strict=True):
        assert predict_ms(run) == pytest.approx(evaluate(inst, [bw]).iteration_time_ns / 1e6,
                                                rel=1e-12)


def test_columns_override_the_model_and_size_the_network(tmp_path: Path):
    header = "model,network,bw_gbps,dp,global_batch_size,efficiency,measured_ms,group,source"
    rows = ["tiny.toml,net.toml,10,4,8,0.25,1,g,paper", "tiny.toml,net.toml,10,,,,1,g,"]
    runs = read_runs(write_case(tmp_path, rows, header))
    assert runs[0].params.plan.dp == 4 and runs[0].params.npu.efficiency == 0.25
    assert [d.npus for d in runs[0].network.dims] == [4]  # the model's npus = 2 gave way to dp 4
    assert runs[1].params.plan.dp == 2 and runs[1].params.npu.efficiency == 0.5
    assert (runs[0].group, runs[0].source, runs[0].line) == ("g", "paper", 3)


def test_the_outer_dimension_is_dropped_when_the_inner_ones_hold_the_run(tmp_path: Path):
    path = write_case(tmp_path, ["tiny.toml,net2.toml,10;5,1"])
    (tmp_path / "net2.toml").write_text(
        '[network]\ndims = [{ block = "Switch", npus = 2, cost_class = "a" }, '
        '{ block = "Switch", npus = 4, cost_class = "b" }]\n', encoding="utf-8")
    (run,) = read_runs(path)
    assert [d.npus for d in run.network.dims] == [2] and run.bw_gbps == (10.0,)


def test_a_run_the_network_cannot_hold_is_refused(tmp_path: Path):
    header = HEADER + ",dp,global_batch_size"
    path = write_case(tmp_path, ["tiny.toml,net2.toml,10;5,1,3,6"], header)
    (tmp_path / "net2.toml").write_text(
        '[network]\ndims = [{ block = "Switch", npus = 2, cost_class = "a" }, '
        '{ block = "Switch", npus = 4, cost_class = "b" }]\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"runs.csv: line 3: network: the run's tp x pp x dp = "
                       r"3 NPUs do not fit the 2 x 4 network .*; fix: use a network whose inner"):
        read_runs(path)


def test_a_measured_plan_the_memory_model_does_not_fit_is_marked(tmp_path: Path):
    header = HEADER + ",hbm_gib"
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,1,1.0", "tiny.toml,net.toml,10,1,1e-6"],
                      header)
    v = validate([path])
    assert [x.fits_memory for x in v.rows] == [True, False]
    assert v.rows[0].predicted_ms == v.rows[1].predicted_ms  # predicted all the same


def test_a_run_in_two_groups_is_in_both_and_counted_once_in_the_summary(tmp_path: Path):
    # line 3 (group g) and line 5 (group h) are one run (same plan, bandwidth and measurement);
    # the repeat is not dropped from h, which would then hold one run
    rows = ["tiny.toml,net.toml,10,0.2,g", "tiny.toml,net.toml,20,0.1,g",
            "tiny.toml,net.toml,10,0.2,h", "tiny.toml,net.toml,5,0.2,h"]
    v = validate([write_case(tmp_path, rows, HEADER + ",group")])
    assert [x.repeats != "" for x in v.rows] == [False, False, True, False]
    p10, p20, p5 = ((COMPUTE_NS + GRADIENT_BYTES / b) / 1e6 for b in (10, 20, 5))
    assert [(g.group, g.runs) for g in v.groups] == [("g", 2), ("h", 2)]
    # h: at 10 and 5 GB/s, both measured 0.2 ms: the predicted ratio p5 / p10 against 1
    assert v.groups[1].ratio_error == pytest.approx(p5 / p10 - 1, rel=1e-9)
    assert v.groups[1].fastest_rank == 1  # (a tie in the measured times: rank 1)
    # the summary: three runs, the repeat once
    errors = [abs(p10 / 0.2 - 1), abs(p20 / 0.1 - 1), abs(p5 / 0.2 - 1)]
    assert v.mape == pytest.approx(sum(errors) / 3, rel=1e-12)


def test_a_calibration_run_given_twice_is_marked_fit_and_repeat(tmp_path: Path):
    from typer.testing import CliRunner

    from hieropt.cli import app

    rows = ["tiny.toml,net.toml,10,0.2", "tiny.toml,net.toml,10,0.2", "tiny.toml,net.toml,20,0.15"]
    path = write_case(tmp_path, rows)
    cal = tmp_path / "cal.csv"
    cal.write_text(f"{HEADER}\ntiny.toml,net.toml,10,0.2\ntiny.toml,net.toml,5,0.3\n")
    v = validate([path], calibrate_on=[cal])
    assert [(x.in_sample, x.repeats) for x in v.rows] == [
        (True, ""), (True, f"{path} line 3"), (False, "")]
    r = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(
        app, ["validate", str(path), "--calibrate-on", str(cal)])
    assert r.exit_code == 0, r.output
    marks = [t.split("│")[-2].strip().split("%")[1] for t in r.stdout.splitlines()
             if t.startswith("│ runs.csv")]
    assert marks == [" (fit)", " (fit) (repeat)", ""]


def test_two_runs_files_of_one_name_are_told_apart_in_the_tables(tmp_path: Path):
    # not "runs.csv" for both files' rows (and both lines of the per-file table)
    for folder, ms in (("a", "0.2"), ("b", "0.1")):
        (tmp_path / folder).mkdir()
        write_case(tmp_path / folder, [f"tiny.toml,net.toml,10,{ms}"])
    r = runner.invoke(app, ["validate", str(tmp_path / "a" / "runs.csv"),
                            str(tmp_path / "b" / "runs.csv")])
    assert r.exit_code == 0, r.output
    cells = [[c.strip() for c in line.split("│")[1:-1]]
             for line in r.stdout.splitlines() if "│" in line]
    # the runs table (line 3 of each file: a comment and the header above; the same predicted
    # 0.132214784 ms against each file's measured time: 0.661 and 1.322 of it), then the file table
    assert [c[:2] + c[-1:] for c in cells] == [
        ["a/runs.csv", "3", "-33.9%"],
        ["b/runs.csv", "3", "+32.2%"],
        ["a/runs.csv", "1", "33.9%"],
        ["b/runs.csv", "1", "32.2%"],
    ]


@pytest.mark.parametrize(
    ("paths", "shown"),
    [
        (["x/runs.csv", "y/runs.csv", "y/other.csv"], ["x/runs.csv", "y/runs.csv", "other.csv"]),
        (["p/a/runs.csv", "q/a/runs.csv"], ["p/a/runs.csv", "q/a/runs.csv"]),
        (["runs.csv", "a/runs.csv"], ["runs.csv", "a/runs.csv"]),
        (["runs.csv", "./runs.csv"], ["runs.csv", "runs.csv"]),  # one file, two paths
    ],
)
def test_a_runs_file_is_shown_by_as_few_folders_as_tell_it_apart(paths, shown):
    assert list(short_files(paths).values()) == shown


def test_a_run_within_the_inner_dimension_uses_it_alone(tmp_path: Path):
    # the tiny plan on 2 NPUs, on a file of 2 x 2 x 2: not refused ("do not fit the 2 x 2 x 2
    # network ... inner dimensions (4 NPUs)"), nor bandwidths asked for every dimension
    path = write_case(tmp_path, ["tiny.toml,net3.toml,10;5;1,0.2", "tiny.toml,net3.toml,10,0.2"])
    (tmp_path / "net3.toml").write_text(NET3)
    runs = read_runs(path)
    for r in runs:
        assert [d.npus for d in r.network.dims] == [2] and r.bw_gbps == (10.0,)
        # no traffic on the unused dimensions: the one-dimension hand computation
        assert predict_ms(r) == pytest.approx((COMPUTE_NS + GRADIENT_BYTES / 10) / 1e6, rel=1e-12)
    assert validate([path]).rows[1].repeats == f"{path} line 3"  # the same run, however written


@pytest.mark.parametrize(
    ("dp", "bw", "dims"),
    [
        (4, "10;5", [2, 2]),
        (4, "10;5;1", [2, 2]),
        (8, "10;5;1", [2, 2, 2]),
        (16, "10;5;1", [2, 2, 4]),
    ],
)
def test_a_run_uses_the_inner_dimensions_it_needs(tmp_path: Path, dp, bw, dims):
    rows = [f"tiny.toml,net3.toml,{bw},1,{dp},{2 * dp}"]
    path = write_case(tmp_path, rows, header=HEADER + ",dp,global_batch_size")
    (tmp_path / "net3.toml").write_text(NET3)
    (run,) = read_runs(path)
    assert [d.npus for d in run.network.dims] == dims
    assert run.bw_gbps == tuple(float(b) for b in bw.split(";"))[: len(dims)]


def test_a_recompute_layers_column_recomputes_that_many_blocks(tmp_path: Path):
    """Columns ``recompute`` and ``recompute_layers``: full recompute of the first k of the tiny
    model's 2 blocks adds k block forwards to the compute, one block's 6 x 49,152 / 3 x 64 =
    6,291,456 matrix FLOPs and 2 x 2 x 32^2 x 64 x 2 = 524,288 attention FLOPs: 6,815,744 FLOPs,
    13,631.488 ns at 500 FLOP/ns (1 TFLOP/s x 0.5); an empty cell takes the model file's (none);
    recompute_layers without full recompute is refused naming the line and the fix."""
    header = "model,network,bw_gbps,recompute,recompute_layers,measured_ms"
    rows = ["tiny.toml,net.toml,10,,,1", "tiny.toml,net.toml,10,full,1,1",
            "tiny.toml,net.toml,10,full,2,1", "tiny.toml,net.toml,10,full,,1"]
    runs = read_runs(write_case(tmp_path, rows, header))
    none, one, two, full = (predict_ms(r) * 1e6 for r in runs)
    assert one - none == pytest.approx(13_631.488, rel=1e-9)
    assert two - none == pytest.approx(2 * 13_631.488, rel=1e-9)
    assert full == pytest.approx(two, rel=1e-12)
    assert [r.label for r in runs] == ["tiny tp1 pp1 dp2 mb1 none", "tiny tp1 pp1 dp2 mb1 full1",
                                      "tiny tp1 pp1 dp2 mb1 full2", "tiny tp1 pp1 dp2 mb1 full"]
    bad = write_case(tmp_path, ["tiny.toml,net.toml,10,none,1,1"], header)
    message = refused(bad)
    assert "line 3" in message and "recompute_layers: 1 with recompute 'none'" in message
    assert 'fix: set recompute = "full", or leave recompute_layers out' in message
