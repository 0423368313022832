"""Runs files: a hand-computed prediction, the same prediction as hieropt evaluate's, and the
reader's one-line errors (file, line, column, fix)."""

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


BAD = [
    # (header, row, the words the one-line error must hold)
    ("model,network,bw_gbps", "tiny.toml,net.toml,10", ["line 2", "measured_ms", "missing column"]),
    (HEADER + ",colour", "tiny.toml,net.toml,10,1,red", ["line 2", "colour", "unknown column"]),
    (HEADER, "tiny.toml,net.toml,10,fast", ["line 3", "measured_ms", "not a number"]),
    (HEADER, "tiny.toml,net.toml,10,-1", ["line 3", "measured_ms", "positive"]),
    (HEADER, "tiny.toml,net.toml,10,14.72s",
     ["line 3", "measured_ms", "not a number", "write 14720 (14.72 s = 14720 ms)"]),
    (HEADER, "tiny.toml,net.toml,10,1420ms",
     ["line 3", "measured_ms", "write 1420 (without 'ms')"]),
    (HEADER, "tiny.toml,net.toml,10;20,1", ["line 3", "bw_gbps", "2 values", "1 dimension;"]),
    (HEADER, "tiny.toml,net.toml,0,1", ["line 3", "bw_gbps", "positive"]),
    (HEADER, "nope.toml,net.toml,10,1", ["line 3", "model", "nope.toml", "not found"]),
    (HEADER, "tiny.toml,nonet.toml,10,1", ["line 3", "network", "nonet.toml", "not found"]),
    (HEADER, "tiny.toml,net.toml,10", ["line 3", "3 cells for 4 columns"]),
    (HEADER, ",net.toml,10,1", ["line 3", "model", "empty cell"]),
    (HEADER + ",tp", "tiny.toml,net.toml,10,1,3", ["line 3", "tp=3", "heads"]),
    (HEADER + ",recompute", "tiny.toml,net.toml,10,1,some", ["line 3", "recompute=some"]),
]


@pytest.mark.parametrize("header, row, words", BAD, ids=[w[-1] for _, _, w in BAD])
def test_a_bad_runs_file_is_one_line_naming_file_line_column_and_fix(tmp_path, header, row, words):
    path = write_case(tmp_path, [row], header)
    with pytest.raises(InputError) as e:
        read_runs(path)
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg and "fix:" in msg, msg
    for w in words:
        assert w in msg, msg


@pytest.mark.parametrize("column, row", [
    ("model", "nope.toml,net.toml,10,1"), ("network", "tiny.toml,nonet.toml,10,1")
])
def test_a_file_not_found_says_which_folder_was_searched(tmp_path: Path, column, row):
    # before: "a relative path is taken from the current folder, or from the folder of the file
    # that names it", though only the runs file's folder is searched
    path = write_case(tmp_path, [row])
    missing = row.split(",")[0 if column == "model" else 1]
    what = "model" if column == "model" else "network"
    assert refused(path) == (
        f"{path}: line 3: {column}: {tmp_path / missing}: {what} file not found; fix: check the "
        "path: a relative path in a runs file's cell is looked for in the runs file's folder "
        f"alone ({tmp_path.resolve()}), not in the current folder"
    )


def test_an_empty_runs_file_is_refused(tmp_path: Path):
    path = tmp_path / "runs.csv"
    path.write_text("# only a comment\n", encoding="utf-8")
    with pytest.raises(InputError, match="no header row"):
        read_runs(path)
    path.write_text(HEADER + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="no runs"):
        read_runs(path)


INSTANCE = """objective = "performance"
training_loop = "step"
workload = "tiny.toml"
dimension_mode = "sequential"
[network]
dims = [{ block = "Switch", npus = 2, cost_class = "x" }]
[mapping.groups]
tp = [1]
dp = [2]
pp = [1]
[cost.x]
link_usd_per_gbps = 1.0
switch_usd_per_gbps = 1.0
nic_usd_per_gbps = 1.0
"""


def test_a_libra_network_and_an_instance_file_serve_as_networks(tmp_path: Path):
    rows = ["tiny.toml,inst.toml,10,1", "tiny.toml,net.yml,10,1", "tiny.toml,net.toml,10,1"]
    path = write_case(tmp_path, rows)
    (tmp_path / "inst.toml").write_text(INSTANCE, encoding="utf-8")
    (tmp_path / "net.yml").write_text("Topology: [Switch]\nNpusCount: [2]\nCostDimension: [x]\n",
                                      encoding="utf-8")
    inst, yml, toml = read_runs(path)
    assert inst.net.placement == {"tp": (1,), "dp": (2,), "pp": (1,)}
    assert inst.net.settings == {"dimension_mode": "sequential"}
    assert yml.net.placement is None and yml.net.settings == {}
    times = [predict_ms(r) for r in (inst, yml, toml)]
    assert times == pytest.approx([times[2]] * 3, rel=1e-12)  # one dimension: every mode agrees


def test_an_instance_file_whose_groups_do_not_fit_the_plan_is_one_line(tmp_path: Path):
    path = write_case(tmp_path, ["tiny.toml,inst.toml,10,1,2,1"], HEADER + ",tp,dp")
    (tmp_path / "inst.toml").write_text(INSTANCE, encoding="utf-8")
    assert refused(path) == (
        f"{path}: line 3: network: {tmp_path / 'inst.toml'}: mapping.groups.tp: [1] has 1 NPU but "
        "the row's plan has tp = 2; fix: give the tp group 2 NPUs in [mapping.groups] of "
        f"{tmp_path / 'inst.toml'} (its sizes on the dimensions multiply to them), or give a "
        "network file without [mapping.groups] (the groups placed lowest-first)"
    )


INSTANCE_2X4 = """objective = "performance"
training_loop = "step"
workload = "tiny.toml"
[network]
dims = [{ block = "Switch", npus = 2, cost_class = "x" },
        { block = "Switch", npus = 4, cost_class = "y" }]
[mapping.groups]
tp = [2, 1]
dp = [1, 4]
pp = [1, 1]
[cost.x]
link_usd_per_gbps = 1.0
switch_usd_per_gbps = 1.0
nic_usd_per_gbps = 1.0
[cost.y]
link_usd_per_gbps = 5.0
switch_usd_per_gbps = 5.0
nic_usd_per_gbps = 5.0
"""
"""An instance of 2 x 4 NPUs whose workload (tiny.toml: dp 2 on 2 NPUs) its mapping (tp 2 on
dimension 0, dp 4 on dimension 1) does not fit: a runs file takes its network, cost and groups,
not its workload."""

NET_2X4 = """[network]
dims = [{ block = "Switch", npus = 2, cost_class = "x" },
        { block = "Switch", npus = 4, cost_class = "y" }]
"""


def test_an_instance_files_groups_are_checked_against_the_rows_plan(tmp_path: Path):
    # before, the groups were checked against the instance's own workload (dp 2): "mapping.groups
    # .dp: [1, 4] has 4 NPUs but the workload tiny was generated for dp = 2", for a row of dp 4
    header = HEADER + ",tp,dp,npus"
    rows = ["tiny.toml,inst.toml,10;5,1,2,4,8", "tiny.toml,net.toml,10;5,1,2,4,8"]
    path = write_case(tmp_path, rows, header)
    (tmp_path / "inst.toml").write_text(INSTANCE_2X4, encoding="utf-8")
    (tmp_path / "net.toml").write_text(NET_2X4, encoding="utf-8")
    inst, lowest = read_runs(path)
    assert inst.placement == {"tp": (2, 1), "dp": (1, 4), "pp": (1, 1)}
    assert lowest.placement is None and inst.network == lowest.network
    # tp 2 on dimension 0 and dp 4 on dimension 1 is the lowest-first placement: the same time
    assert predict_ms(inst) == pytest.approx(predict_ms(lowest), rel=1e-12)


def test_a_run_smaller_than_an_instance_files_network_is_sized_as_for_network_files(
        tmp_path: Path):
    # before: "the run's tp x pp x dp = 4 NPUs do not fit the 2 x 4 network (which maps the
    # groups); fix: use a network whose inner dimensions (2 NPUs) divide the run's NPUs", though
    # 2 divides 4
    inst = INSTANCE_2X4.replace("dp = [1, 4]", "dp = [1, 2]")
    header = HEADER + ",tp,dp,npus"
    rows = ["tiny.toml,inst.toml,10;5,1,2,2,4", "tiny.toml,net.toml,10;5,1,2,2,4"]
    path = write_case(tmp_path, rows, header)
    (tmp_path / "inst.toml").write_text(inst, encoding="utf-8")
    (tmp_path / "net.toml").write_text(NET_2X4, encoding="utf-8")
    small, lowest = read_runs(path)
    assert [d.npus for d in small.network.dims] == [2, 2]  # (the 2 x 4 file sized to 4 NPUs)
    assert small.placement == {"tp": (2, 1), "dp": (1, 2), "pp": (1, 1)}
    assert predict_ms(small) == pytest.approx(predict_ms(lowest), rel=1e-12)
    # groups that do not tile the run's network (tp and dp both on dimension 0): the fix names
    # its sizes
    (tmp_path / "inst.toml").write_text(inst.replace("dp = [1, 2]", "dp = [2, 1]"),
                                        encoding="utf-8")
    assert refused(path) == (
        f"{path}: line 3: network: {tmp_path / 'inst.toml'}: mapping.groups: the plan's groups "
        "take tp 2 x dp 2 x pp 1 = 4 NPUs of dimension 0, which has 2 NPUs in the run's network "
        "(2 x 2: the file's 2 x 4 sized to its 4 NPUs); fix: give groups whose sizes on each "
        "dimension multiply to its NPUs in the run's network (2 x 2), or give a network file "
        "without [mapping.groups] (the groups placed lowest-first)"
    )


@pytest.mark.parametrize("text, want", [
    ("[network]\nchunks = 4\ndims = [{ block = \"Switch\", npus = 2, cost_class = \"x\" }]\n",
     "network.chunks: unknown key: chunks is a top-level key of the file, not a key of [network] "
     "(a key written below the [network] line belongs to that table); fix: move chunks = 4 above "
     "the [network] line (and above any other [table] line: a file's top-level keys come first)"),
    ("collectives_in_flight = 2\n[network]\n"
     "dims = [{ block = \"Switch\", npus = 2, cost_class = \"x\" }]\n",
     "collectives_in_flight: 2 is not modelled: 1 runs one collective at a time (ASTRA-sim's "
     "behaviour); without the key, the collectives that overlap all run at once, sharing each "
     "dimension's bandwidth; no other number of collectives in flight is modelled; fix: set "
     "collectives_in_flight = 1, or remove it"),
])
def test_a_network_files_top_level_keys_are_refused_with_the_reason(tmp_path: Path, text, want):
    # before: "network.chunks: unknown key; fix: remove it or check its spelling", and
    # "collectives_in_flight: Input should be 1; fix: got 2; use 1"
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,1"])
    (tmp_path / "net.toml").write_text(text, encoding="utf-8")
    assert refused(path) == f"{path}: line 3: network: {tmp_path / 'net.toml'}: {want}"
    # the same in an instance file
    inst = INSTANCE.replace("[network]\n", "[network]\nchunks = 4\n") if "chunks" in want else (
        "collectives_in_flight = 2\n" + INSTANCE)
    (tmp_path / "net.toml").write_text(inst, encoding="utf-8")
    assert refused(path) == f"{path}: line 3: network: {tmp_path / 'net.toml'}: {want}"


def test_a_measured_plan_the_memory_model_does_not_fit_is_marked(tmp_path: Path):
    header = HEADER + ",hbm_gib"
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,1,1.0", "tiny.toml,net.toml,10,1,1e-6"],
                      header)
    v = validate([path])
    assert [x.fits_memory for x in v.rows] == [True, False]
    assert v.rows[0].predicted_ms == v.rows[1].predicted_ms  # predicted all the same


@pytest.mark.parametrize("first, second, field", [
    ("tp", "plan.tp", "plan.tp"),
    ("plan.dp", "dp", "plan.dp"),
    ("efficiency", "npu.efficiency", "npu.efficiency"),
])
def test_two_columns_of_one_field_are_refused(tmp_path: Path, first, second, field):
    # before, the later column silently won: tp=2 with plan.tp=4 was a TP-4 run
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,1,1,1"], f"{HEADER},{first},{second}")
    assert refused(path) == (
        f"{path}: line 2: {second}: repeated column: the field {field} of column '{first}'; "
        "fix: give each field in one column"
    )


def test_a_run_in_two_groups_is_in_both_and_counted_once_in_the_summary(tmp_path: Path):
    # line 3 (group g) and line 5 (group h) are one run (same plan, bandwidth and measurement);
    # before, the repeat was dropped from h, which then held one run
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


@pytest.mark.parametrize("header, row, message", [
    # before: "line 2: model: missing column" for each
    ("model;network;bw_gbps;measured_ms", "tiny.toml;net.toml;10;1",
     "line 2: the header is one column: separated by ';'?; fix: separate the columns with ',' "
     "(a bw_gbps cell keeps ';' between its values)"),
    ("model\tnetwork\tbw_gbps\tmeasured_ms", "tiny.toml\tnet.toml\t10\t1",
     "line 2: the header is one column: separated by tabs?; fix: separate the columns with ',' "
     "(a bw_gbps cell keeps ';' between its values)"),
    ("Model,network,bw_gbps,measured_ms", "tiny.toml,net.toml,10,1",
     "line 2: model: missing column (did you mean 'model'? found 'Model'); fix: rename the "
     "column 'Model' to 'model' (column names are lower case)"),
    (HEADER + ",DP", "tiny.toml,net.toml,10,1,2",
     "line 2: DP: unknown column (did you mean 'dp'? found 'DP'); fix: rename the column 'DP' "
     "to 'dp' (column names are lower case)"),
    (HEADER + ",Group", "tiny.toml,net.toml,10,1,g",
     "line 2: Group: unknown column (did you mean 'group'? found 'Group'); fix: rename the "
     "column 'Group' to 'group' (column names are lower case)"),
    # before: "unknown column: not a model, plan, NPU or precision field" and the list of keys
    (HEADER + ",mbs", "tiny.toml,net.toml,10,1,1",
     "line 2: mbs: unknown column (did you mean 'micro_batch_size'? found 'mbs'); fix: rename "
     "the column 'mbs' to 'micro_batch_size' (the model field's key)"),
    (HEADER + ",GBS", "tiny.toml,net.toml,10,1,4",
     "line 2: GBS: unknown column (did you mean 'global_batch_size'? found 'GBS'); fix: rename "
     "the column 'GBS' to 'global_batch_size' (the model field's key)"),
    (HEADER + ",gpus", "tiny.toml,net.toml,10,1,2",
     "line 2: gpus: unknown column (did you mean 'npus'? found 'gpus'); fix: rename the column "
     "'gpus' to 'npus' (the model field's key)"),
    (HEADER + ",seq_len", "tiny.toml,net.toml,10,1,32",
     "line 2: seq_len: unknown column (did you mean 'sequence_length'? found 'seq_len'); fix: "
     "rename the column 'seq_len' to 'sequence_length' (the model field's key)"),
    # a one-letter slip in a field's column, and the time column in another unit
    (HEADER + ",sequence_paralel", "tiny.toml,net.toml,10,1,true",
     "line 2: sequence_paralel: unknown column (did you mean 'sequence_parallel'? found "
     "'sequence_paralel'); fix: rename the column 'sequence_paralel' to 'sequence_parallel'"),
    (HEADER + ",plan.tpp", "tiny.toml,net.toml,10,1,1",
     "line 2: plan.tpp: unknown column: plan has no field 'tpp' (did you mean 'plan.tp'?); "
     "fix: use one of plan's fields: "),
    ("model,network,bw_gbps,measured_s", "tiny.toml,net.toml,10,0.001",
     "line 2: measured_ms: missing column (the column 'measured_s' looks like 'measured_ms', but "
     "in seconds: the wrong unit; the time is in milliseconds); fix: rename the column "
     "'measured_s' to 'measured_ms' and give each time in milliseconds (seconds x 1,000)"),
    ("model,network,bw_gbps,measured_msec", "tiny.toml,net.toml,10,1",
     "line 2: measured_ms: missing column (the column 'measured_msec' looks like "
     "'measured_ms'); fix: rename the column 'measured_msec' to 'measured_ms'"),
])
def test_another_separator_or_case_in_the_header_is_named(tmp_path: Path, header, row, message):
    path = write_case(tmp_path, [row], header)
    line = refused(path)
    assert line == f"{path}: {message}" or (message.endswith(": ")
                                             and line.startswith(f"{path}: {message}"))


def test_a_quoted_cell_may_hold_line_breaks_and_lines_are_counted_by_the_reader(tmp_path: Path):
    # before: a traceback (the file was split into lines before the CSV parser saw it), and the
    # error of the row after a two-line cell named the line before it
    header = HEADER + ",note"
    rows = ['tiny.toml,net.toml,10,0.2,"measured twice\n# not a comment, second value dropped"',
            "# a comment between rows",
            "tiny.toml,net.toml,10,-1,"]
    path = write_case(tmp_path, rows, header)
    assert refused(path) == (
        f"{path}: line 6: measured_ms: -1 is not a positive, finite number; fix: give the "
        "measured iteration time in ms")
    path.write_text(path.read_text().replace("-1", "0.1"))
    a, b = read_runs(path)
    assert (a.line, b.line) == (3, 6)
    assert a.note == "measured twice\n# not a comment, second value dropped"


def test_a_quote_left_open_is_named_with_the_line_it_opens_on(tmp_path: Path):
    # an open quote would otherwise swallow the rows after it into one cell
    path = write_case(tmp_path, ['tiny.toml,net.toml,10,0.2,"open', "tiny.toml,net.toml,10,0.1,"],
                      HEADER + ",note")
    assert refused(path) == (
        f"{path}: line 3: not CSV: unexpected end of data (a quoted cell's quote left open runs "
        "to the end of the file); fix: close each quoted cell with '\"' right before the next ',' "
        'or the end of the line (a quote inside a quoted cell is written twice: "")')


def test_dimension_mode_in_a_network_file_is_refused_for_the_plan_s_algorithm(tmp_path: Path):
    # before: accepted and without effect (each group runs by the plan's algorithm, default
    # sequential): a 22B TP-16 run predicted 9,791.9 ms with and without dimension_mode
    path = write_case(tmp_path, ["tiny.toml,net2.toml,10;5,1,2"], HEADER + ",dp")
    two = '[network]\ndims = [{ block = "Switch", npus = 2, cost_class = "a" }, ' \
        '{ block = "Switch", npus = 2, cost_class = "b" }]\n'
    (tmp_path / "net2.toml").write_text('dimension_mode = "concurrent"\n' + two)
    assert refused(path) == (
        f"{path}: line 3: network: {tmp_path / 'net2.toml'}: dimension_mode: has no effect on a "
        "run: each group of the LLM plan runs its collectives over its dimensions by the plan's "
        "algorithm (collective_algorithms; default sequential); fix: remove it, and give the runs "
        'file a collective_algorithms column (e.g. {tp = "concurrent"}) for a group whose '
        "dimensions work concurrently")
    # the column does change the time: dp over both dimensions, concurrently (the all-reduce's
    # slower dimension alone) against one after the other (the sum)
    (tmp_path / "net2.toml").write_text(two)
    path = write_case(tmp_path, ["tiny.toml,net2.toml,10;5,1,4,", "tiny.toml,net2.toml,10;5,1,4,"
                                 '"{dp = ""concurrent""}"'], HEADER + ",dp,collective_algorithms")
    seq, conc = (predict_ms(r) for r in read_runs(path))
    assert conc < seq


def test_a_spreadsheet_s_trailing_commas_and_rows_of_commas_are_read(tmp_path: Path):
    # before: "empty or repeated column name" for the header's trailing commas, and "model:
    # empty cell" for a row of only commas
    rows = ["tiny.toml,net.toml,10,0.2,,", ",,,,,", "tiny.toml,net.toml,20,0.1,,"]
    runs = read_runs(write_case(tmp_path, rows, HEADER + ",,"))
    assert [(r.line, r.bw_gbps, r.measured_ms) for r in runs] == [(3, (10.0,), 0.2),
                                                                 (5, (20.0,), 0.1)]
    # a cell past the last named column is not empty: refused
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,0.2,,x"], HEADER + ",,")
    assert refused(path) == (
        f"{path}: line 3: 6 cells for 4 columns; fix: give one cell per column (quote a cell "
        "holding a comma)")
    # an empty column name before a named one: refused
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,0.2,,g"], HEADER + ",,group")
    with pytest.raises(InputError, match=r"line 2: \(empty\): empty or repeated column name"):
        read_runs(path)


@pytest.mark.parametrize("header, row, message", [
    # before: "fix: write 50 (in the unit of 'efficiency')", which is then refused as above 1
    (HEADER + ",efficiency", "tiny.toml,net.toml,10,1,50%",
     "efficiency=50%: '50%' is text, not a number: a percentage is a fraction; fix: write 0.5 for "
     "50 %"),
    # before: "fix: write the number without quotes" (there are none)
    (HEADER + ",dp", "tiny.toml,net.toml,10,1,02",
     "dp=02: '02' is text, not a number: a number has no leading zeros; fix: write 2"),
    # before: "1 values for the network's 1 dimensions" without a word of the comma; then
    # "separate the values with ';'": two values for the one dimension of the network
    (HEADER, 'tiny.toml,net.toml,"10,5",1',
     "bw_gbps: '10,5': a ',' inside a value (a decimal comma?); fix: write a decimal point: 10.5 "
     "(values separated by ';', dimension 0 first)"),
    # a decimal comma with ';' present: never a separator of values
    (HEADER, 'tiny.toml,net.toml,"10;2,5",1',
     "bw_gbps: '10;2,5': a ',' inside a value (a decimal comma?); fix: write a decimal point: "
     "10;2.5 (values separated by ';', dimension 0 first)"),
    # before: "'27000,5' is not a number; fix: give the measured iteration time in ms"
    (HEADER, 'tiny.toml,net.toml,10,"0,5"',
     "measured_ms: '0,5' is not a number; fix: give the measured iteration time in ms: write 0.5: "
     "a decimal point, not a comma"),
    (HEADER, 'tiny.toml,net.toml,10,"1,500"',
     "measured_ms: '1,500' is not a number; fix: give the measured iteration time in ms: write "
     "1500 if ',' separates thousands, or 1.500 if it is a decimal comma (a number takes a "
     "decimal point, and no thousands separator)"),
    # before: "write the number without quotes" (there are none)
    (HEADER + ",zero_stage", "tiny.toml,net.toml,10,1,zero1",
     "zero_stage=zero1: 'zero1' is text, not a number; fix: write the number alone, 1 (no words, "
     "no quotes)"),
    # before: "Input should be a valid tuple; fix: got 'nccl_ring'; correct the value"
    (HEADER + ",collective_algorithms", "tiny.toml,net.toml,10,1,nccl_ring",
     "collective_algorithms=nccl_ring: 'nccl_ring' is one word, not a table of group = "
     'algorithm; fix: write a table, e.g. {tp = "nccl_ring", dp = "nccl_ring"} (a group not '
     "named runs sequential); groups: tp, cp, pp, dp, ep, edp, dpc; algorithms: concurrent, "
     "sequential, flat_ring, flat_tree, flat_direct, nccl_ring"),
])
def test_a_cell_s_fix_is_what_the_cell_needs(tmp_path: Path, header, row, message):
    path = write_case(tmp_path, [row], header)
    assert refused(path) == f"{path}: line 3: {message}"


def test_a_toml_file_given_as_the_runs_file_is_named_as_such(tmp_path: Path):
    # before: "line 2: model: missing column"
    write_case(tmp_path, ["tiny.toml,net.toml,10,1"])
    path = tmp_path / "tiny.toml"
    assert refused(path) == (
        f"{path} is an LLM model file, not a runs CSV; fix: run `hieropt workload plan {path}`, "
        "or name it as a co-design space's model or an instance's workload; a runs file names "
        "its model and network files in each row's model and network cells")
    net = tmp_path / "net.toml"
    assert refused(net) == (
        f"{net} is a network file (a runs file's network), not a runs CSV; fix: name it in a "
        "runs file's network column (`hieropt validate RUNS.csv`); a runs file names its model "
        "and network files in each row's model and network cells")


def test_a_dotted_column_naming_no_field_is_refused_at_the_header(tmp_path: Path):
    # before: "line 3: model.seq_len=32: unknown key", at the first row
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,1,32"], HEADER + ",model.seq_len")
    assert refused(path) == (
        f"{path}: line 2: model.seq_len: unknown column: model has no field 'seq_len' (did you "
        "mean 'model.sequence_length'?); fix: use one of model's fields: biases, dropout, "
        "ffn_size, gated_ffn, head_dim, heads, hidden_size, kv_heads, layers, moe, name, norm, "
        "position_embedding, sequence_length, tied_embeddings, vocab_size")
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,1,4"], HEADER + ",plan.global_batchsize")
    with pytest.raises(InputError, match=r"line 2: plan.global_batchsize: unknown column: plan has "
                       r"no field 'global_batchsize' \(did you mean 'plan.global_batch_size'\?\)"):
        read_runs(path)


def test_two_runs_files_of_one_name_are_told_apart_in_the_tables(tmp_path: Path):
    # before, both files' rows (and both lines of the per-file table) read "runs.csv"
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
    # the tiny plan on 2 NPUs, on a file of 2 x 2 x 2: before, refused ("do not fit the 2 x 2 x 2
    # network ... inner dimensions (4 NPUs)"), and bandwidths were asked for every dimension
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


def test_a_bandwidth_cell_of_neither_count_names_both(tmp_path: Path):
    path = write_case(tmp_path, ["tiny.toml,net3.toml,10;5,0.2"])
    (tmp_path / "net3.toml").write_text(NET3)
    assert refused(path) == (
        f"{path}: line 3: bw_gbps: 2 values for the network's 3 dimensions (the run uses "
        "dimension 0 only); fix: give 3 values separated by ';', dimension 0 first (e.g. "
        "300;100;25), or dimension 0 only (e.g. 300)"
    )


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
