"""The runs file reader: a bad file is one line naming the file, the line, the column and the fix
(a missing or empty file, a column given twice, another separator or case, an open quote, a TOML
file, a dotted column naming no field, a cell's own fix); quoted line breaks and a
spreadsheet's trailing commas are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.errors import InputError
from hieropt.io.runs import read_runs

from .tiny import HEADER, NET3, refused, write_case

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
    # not "a relative path is taken from the current folder, or from the folder of the file that
    # names it": only the runs file's folder is searched
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


@pytest.mark.parametrize("first, second, field", [
    ("tp", "plan.tp", "plan.tp"),
    ("plan.dp", "dp", "plan.dp"),
    ("efficiency", "npu.efficiency", "npu.efficiency"),
])
def test_two_columns_of_one_field_are_refused(tmp_path: Path, first, second, field):
    # the later column does not silently win (tp=2 with plan.tp=4 taken as a TP-4 run)
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,1,1,1"], f"{HEADER},{first},{second}")
    assert refused(path) == (
        f"{path}: line 2: {second}: repeated column: the field {field} of column '{first}'; "
        "fix: give each field in one column"
    )


@pytest.mark.parametrize("header, row, message", [
    # not "line 2: model: missing column" for each
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
    # not "unknown column: not a model, plan, NPU or precision field" and the list of keys
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
    # no traceback (the CSV parser reads the file whole, not split into lines first), and the
    # error of the row after a two-line cell names its own line, not the line before it
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


def test_a_spreadsheet_s_trailing_commas_and_rows_of_commas_are_read(tmp_path: Path):
    # not "empty or repeated column name" for the header's trailing commas, nor "model: empty
    # cell" for a row of only commas
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
    # not "fix: write 50 (in the unit of 'efficiency')", which is then refused as above 1
    (HEADER + ",efficiency", "tiny.toml,net.toml,10,1,50%",
     "efficiency=50%: '50%' is text, not a number: a percentage is a fraction; fix: write 0.5 for "
     "50 %"),
    # not "fix: write the number without quotes" (there are none)
    (HEADER + ",dp", "tiny.toml,net.toml,10,1,02",
     "dp=02: '02' is text, not a number: a number has no leading zeros; fix: write 2"),
    # not "1 values for the network's 1 dimensions" without a word of the comma, nor
    # "separate the values with ';'": two values for the one dimension of the network
    (HEADER, 'tiny.toml,net.toml,"10,5",1',
     "bw_gbps: '10,5': a ',' inside a value (a decimal comma?); fix: write a decimal point: 10.5 "
     "(values separated by ';', dimension 0 first)"),
    # a decimal comma with ';' present: never a separator of values
    (HEADER, 'tiny.toml,net.toml,"10;2,5",1',
     "bw_gbps: '10;2,5': a ',' inside a value (a decimal comma?); fix: write a decimal point: "
     "10;2.5 (values separated by ';', dimension 0 first)"),
    # not "'27000,5' is not a number; fix: give the measured iteration time in ms" alone
    (HEADER, 'tiny.toml,net.toml,10,"0,5"',
     "measured_ms: '0,5' is not a number; fix: give the measured iteration time in ms: write 0.5: "
     "a decimal point, not a comma"),
    (HEADER, 'tiny.toml,net.toml,10,"1,500"',
     "measured_ms: '1,500' is not a number; fix: give the measured iteration time in ms: write "
     "1500 if ',' separates thousands, or 1.500 if it is a decimal comma (a number takes a "
     "decimal point, and no thousands separator)"),
    # not "write the number without quotes" (there are none)
    (HEADER + ",zero_stage", "tiny.toml,net.toml,10,1,zero1",
     "zero_stage=zero1: 'zero1' is text, not a number; fix: write the number alone, 1 (no words, "
     "no quotes)"),
    # not "Input should be a valid tuple; fix: got 'nccl_ring'; correct the value"
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
    # not "line 2: model: missing column"
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
    # not "line 3: model.seq_len=32: unknown key", at the first row
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


def test_a_bandwidth_cell_of_neither_count_names_both(tmp_path: Path):
    path = write_case(tmp_path, ["tiny.toml,net3.toml,10;5,0.2"])
    (tmp_path / "net3.toml").write_text(NET3)
    assert refused(path) == (
        f"{path}: line 3: bw_gbps: 2 values for the network's 3 dimensions (the run uses "
        "dimension 0 only); fix: give 3 values separated by ';', dimension 0 first (e.g. "
        "300;100;25), or dimension 0 only (e.g. 300)"
    )
