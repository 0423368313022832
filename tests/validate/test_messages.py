"""The messages of validate and calibrate for a mistyped cell or file: the ``bw_gbps`` examples
and counts, a TFLOP/s per GPU figure typed as ``measured_ms``, runs of several accelerators, and an
instance file in the ``model`` column."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.errors import InputError
from hieropt.io.runs import bw_example, read_runs
from hieropt.studies.validate import fit_npu
from hieropt.studies.validate.calibrate import accelerators_of
from hieropt.units import fmt_sig, plural

from .tiny import HEADER, MODEL, NET3, refused, write_case

VALIDATION = Path(__file__).resolve().parents[2] / "validation"
CALIBRATION = VALIDATION / "calibration"
runner = CliRunner(env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1",
                        "COLUMNS": "200"})


def test_counts_and_numbers_in_words():
    counts = [plural(n, "run") for n in (0, 1, 2, 3072)]
    assert counts == ["0 runs", "1 run", "2 runs", "3,072 runs"]
    assert plural(1, "repeated run") == "1 repeated run"
    # one format at every magnitude: 4 significant digits, the integer part whole, no exponent
    # (":,.4g" wrote 40,226 ms as 4.023e+04 and 1,180 ms as 1,180)
    values = (40_226.09, 102_630.4, 1_180.4, 458.16, 0.123449, 999.97, 1.42)
    assert [fmt_sig(v) for v in values] == [
        "40,226", "102,630", "1,180", "458.2", "0.1234", "1,000", "1.42"
    ]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_a_bandwidth_example_has_as_many_values_as_it_asks_for(n):
    values = bw_example(n).split(";")
    assert len(values) == n and values[0] == "300" and (n == 1 or values[-1] == "25")


def test_the_bandwidth_count_message_s_examples_match_its_counts(tmp_path: Path):
    # a run of 4 NPUs on a 2 x 2 x 2 network uses its first 2 dimensions; not "1 values for
    # the network's 3 dimensions ...; fix: give 3 values ... (e.g. 300;25), or the first 2"
    path = write_case(tmp_path, ["tiny.toml,net3.toml,10,1,4,8"], HEADER + ",dp,global_batch_size")
    (tmp_path / "net3.toml").write_text(NET3)
    assert refused(path) == (
        f"{path}: line 3: bw_gbps: 1 value for the network's 3 dimensions (the run uses the first "
        "2); fix: give 3 values separated by ';', dimension 0 first (e.g. 300;100;25), or the "
        "first 2 (e.g. 300;100)"
    )
    # a one-dimension network: one value, nothing to separate
    path = write_case(tmp_path, ["tiny.toml,net.toml,10;5;1,1"])
    assert refused(path) == (
        f"{path}: line 3: bw_gbps: 3 values for the network's 1 dimension; fix: give 1 value "
        "(e.g. 300)"
    )


def test_a_trailing_semicolon_is_refused_as_such(tmp_path: Path):
    # not "'10;5;' 3 values for the network's 2 dimensions" (the empty value counted)
    header = HEADER + ",dp,global_batch_size"
    (tmp_path / "net3.toml").write_text(NET3)
    path = write_case(tmp_path, ["tiny.toml,net3.toml,10;5;,1,4,8"], header)
    assert refused(path) == (
        f"{path}: line 3: bw_gbps: '10;5;': a trailing ';' with no value after it; fix: drop the "
        "trailing ';': 10;5"
    )
    # without it the count is still wrong: the fix gives the counts (8 NPUs use all 3 dimensions)
    path = write_case(tmp_path, ["tiny.toml,net3.toml,10;5;,1,8,16"], header)
    assert refused(path) == (
        f"{path}: line 3: bw_gbps: '10;5;': a trailing ';' with no value after it; fix: give 3 "
        "values separated by ';', dimension 0 first (e.g. 300;100;25)"
    )
    path = write_case(tmp_path, ["tiny.toml,net3.toml,;5;1,1,8,16"], header)
    assert refused(path) == (
        f"{path}: line 3: bw_gbps: ';5;1': an empty value (dimension 0); fix: give 3 values "
        "separated by ';', dimension 0 first (e.g. 300;100;25)"
    )
    # the cell without it is read
    path = write_case(tmp_path, ["tiny.toml,net3.toml,10;5,1,4,8"], header)
    assert read_runs(path)[0].bw_gbps == (10.0, 5.0)


NARAYANAN_HEADER = (
    "name,model,network,bw_gbps,model.layers,model.hidden_size,model.heads,model.ffn_size,tp,pp,dp,"
    "micro_batch_size,global_batch_size,recompute,measured_ms"
)


def narayanan_row(folder: Path, row: str) -> Path:
    """A runs file of one row of Narayanan et al. 2021's Table 1 on the shipped model and
    network."""
    model = VALIDATION / "models" / "megatron-gpt-a100.toml"
    network = VALIDATION / "networks" / "dgx-a100-hdr.toml"
    path = folder / "runs.csv"
    path.write_text(f"{NARAYANAN_HEADER}\nx,{model},{network},300;25,{row}\n", encoding="utf-8")
    return path


def narayanan_ms(B: int, s: int, L: int, h: int, V: int, tflops: float, gpus: int, k: int):
    """Narayanan et al.'s FLOPs per iteration, k B s L h^2 (1 + s / 6h + V / (k/6 L h)) (L layers;
    k = 96 with full recompute, 72 without), at ``tflops`` per GPU on ``gpus``, ms."""
    return k * B * s * L * h**2 * (1 + s / (6 * h) + V / (k / 6 * L * h)) / (tflops * gpus) / 1e9


def test_a_tflops_figure_typed_as_the_time_gets_the_time_it_implies(tmp_path: Path):
    # the 1T row of Narayanan et al. 2021 Table 1 with its 163 TFLOP/s per GPU as measured_ms;
    # not "looks like seconds; fix: give ... 163000 for 163 s" alone, nor "(4.023e+04 ms)"
    s, V = 2048, 51200
    assert narayanan_ms(3072, s, 128, 25600, V, 312, 3072, 72) == pytest.approx(40_226.1, abs=0.1)
    assert narayanan_ms(3072, s, 128, 25600, V, 163, 3072, 72) == pytest.approx(76_997, abs=1)
    # with full recompute: the 102,630 ms of validation/narayanan2021.csv's row
    assert narayanan_ms(3072, s, 128, 25600, V, 163, 3072, 96) == pytest.approx(102_630, abs=1)
    path = narayanan_row(tmp_path, "128,25600,160,102400,8,64,6,1,3072,full,163")
    assert refused(path) == (
        f"{path}: line 2: measured_ms: 163 ms is 247 x less than the model's FLOPs take at the "
        "peak FLOP/s of its 3,072 NPUs (40,226 ms): looks like seconds, or a TFLOP/s per NPU "
        "figure (not a time); fix: give the iteration time in ms: 163000 for 163 s; 163 TFLOP/s "
        "per NPU is 76,997 ms (the model's FLOPs per iteration / (TFLOP/s x NPUs): 38,555 PFLOP "
        "/ (163 TFLOP/s x 3,072 NPUs)), or 102,630 ms if the figure counts the full recompute's "
        "FLOPs too (51,391 PFLOP)"
    )
    # the 1.7B row with 137: faster than possible, not 10 x (not seconds); with a word of the
    # TFLOP/s figure. 1,180 ms at the peak; 2,688 ms, 3,528 ms with recompute (the shipped row's)
    assert narayanan_ms(512, s, 24, 2304, V, 312, 32, 72) == pytest.approx(1_180.4, abs=0.1)
    assert narayanan_ms(512, s, 24, 2304, V, 137, 32, 72) == pytest.approx(2_688.3, abs=0.1)
    assert narayanan_ms(512, s, 24, 2304, V, 137, 32, 96) == pytest.approx(3_528.0, abs=0.1)
    path = narayanan_row(tmp_path, "24,2304,24,9216,1,1,32,16,512,full,137")
    assert refused(path) == (
        f"{path}: line 2: measured_ms: 137 ms is faster than physically possible: 8.62 x less "
        "than the model's FLOPs take at the peak FLOP/s of its 32 NPUs (1,180 ms at 312 TFLOP/s "
        "each); 137 looks like a TFLOP/s per NPU figure (not a time); fix: give the iteration "
        "time in ms: 137 TFLOP/s per NPU is 2,688 ms (the model's FLOPs per iteration / (TFLOP/s "
        "x NPUs): 11.79 PFLOP / (137 TFLOP/s x 32 NPUs)), or 3,528 ms if the figure counts the "
        "full recompute's FLOPs too (15.47 PFLOP); else check the plan the row resolves to "
        "against the run measured: tp 1 x pp 1 x dp 32 = 32 NPUs (too few?), global_batch_size "
        "512 sequences (too many? in sequences, not tokens), an empty cell taking the model "
        "file's value; and that measured_ms is ms per iteration"
    )
    # no recompute: the model FLOPs' time alone
    path = narayanan_row(tmp_path, "24,2304,24,9216,1,1,32,16,512,none,137")
    assert refused(path).endswith("11.79 PFLOP / (137 TFLOP/s x 32 NPUs)); else check the plan "
                                  "the row resolves to against the run measured: tp 1 x pp 1 x "
                                  "dp 32 = 32 NPUs (too few?), global_batch_size 512 sequences "
                                  "(too many? in sequences, not tokens), an empty cell taking "
                                  "the model file's value; and that measured_ms is ms per "
                                  "iteration")
    # above the A100's 312 TFLOP/s peak a figure cannot be one: no such hint
    path = narayanan_row(tmp_path, "24,2304,24,9216,1,1,32,16,512,full,400")
    assert "TFLOP/s per NPU" not in refused(path)


def test_a_global_batch_in_tokens_is_hinted_first_beside_seconds(tmp_path: Path):
    # the 22B one-node run with its 4 sequences written as 8,192 tokens: 2,048 x the FLOPs, 938 s
    # at the peak, so 1,420 ms "looked like seconds" alone (fix: 1420000)
    path = narayanan_row(tmp_path, "48,6144,64,24576,8,1,1,4,8192,full,1420")
    assert refused(path) == (
        f"{path}: line 2: measured_ms: 1,420 ms is 661 x less than the model's FLOPs take at the "
        "peak FLOP/s of its 8 NPUs (938,306 ms): looks like seconds, or a global_batch_size in "
        "tokens; fix: global_batch_size may be in tokens (it is ≥ the sequence length, 2,048): "
        "give it in sequences, 8,192 tokens / 2,048 = 4; else give the iteration time in ms: "
        "1420000 for 1420 s"
    )
    # 458.2 ms at the peak with 4 sequences (test_checks): 400 ms is too fast for those too, so
    # no such hint
    path = narayanan_row(tmp_path, "48,6144,64,24576,8,1,1,4,8192,full,400")
    assert "tokens;" not in refused(path) and "may be in tokens" not in refused(path)
    # faster than possible but not 10 x: the hint first, then the plan to check
    path = narayanan_row(tmp_path, "48,6144,64,24576,8,1,1,4,8192,full,200000")
    assert refused(path).startswith(
        f"{path}: line 2: measured_ms: 200,000 ms is faster than physically possible: 4.69 x less "
        "than the model's FLOPs take at the peak FLOP/s of its 8 NPUs (938,306 ms at 312 TFLOP/s "
        "each); fix: global_batch_size may be in tokens (it is ≥ the sequence length, 2,048): "
        "give it in sequences, 8,192 tokens / 2,048 = 4; else check the plan the row resolves to"
    )


def test_runs_of_several_accelerators_name_each_with_its_files(tmp_path: Path):
    # not "a100-one-node.csv: npu: runs of several accelerators (A100-SXM-80GB, H100-SXM)",
    # naming the A100's file alone
    a100, h100 = CALIBRATION / "a100-one-node.csv", CALIBRATION / "h100-one-node.csv"
    r = runner.invoke(app, ["calibrate", str(a100), str(h100), "--out", str(tmp_path / "c.toml")])
    assert r.exit_code == 2 and not (tmp_path / "c.toml").exists()
    assert r.stderr.strip() == (
        f"error: calibration: npu: runs of 2 accelerators: A100-SXM-80GB ({a100}), H100-SXM "
        f"({h100}); fix: calibrate each accelerator on its own runs: one calibrate per "
        "accelerator, given its files (a file that holds several: split its rows by accelerator)"
    )
    # one file of both: the lines of each one's rows (the H100 file's first two runs on lines 2
    # and 4, Narayanan et al.'s 1.7B run on 32 A100s, the model file's own plan, on line 3)
    h_rows = [x for x in h100.read_text().splitlines() if x and not x.startswith("#")][:3]
    a_row = "1.7B,../models/megatron-gpt-a100.toml,../networks/dgx-a100-hdr.toml,300;25,,3528,g,x"
    (tmp_path / "calibration").mkdir()
    mixed = tmp_path / "calibration" / "mixed.csv"
    text = "\n".join([h_rows[0], h_rows[1], a_row, h_rows[2]]) + "\n"
    mixed.write_text(text.replace("../", f"{VALIDATION}/"))
    runs = read_runs(mixed) + read_runs(a100)
    assert accelerators_of(runs) == (
        f"A100-SXM-80GB ({mixed} line 3, {a100}), H100-SXM ({mixed} lines 2, 4)"
    )
    with pytest.raises(InputError, match="runs of 2 accelerators: A100-SXM-80GB"):
        fit_npu(runs)


INSTANCE = """objective = "performance"
training_loop = "step"
WORKLOAD
[network]
dims = [{ block = "Switch", npus = 2, cost_class = "x" }]
"""


def test_an_instance_file_in_the_model_column_says_what_the_column_takes(tmp_path: Path):
    # not "generator: None is not the LLM generator (model inst.toml)"
    inline = MODEL.replace("[params", "[workload.params").replace(
        'generator = "llm"', '[workload]\ngenerator = "llm"'
    )
    (tmp_path / "inline.toml").write_text(INSTANCE.replace("WORKLOAD", "") + inline)
    path = write_case(tmp_path, ["inline.toml,net.toml,10,1"])
    column = (
        "not an LLM model file: the model column takes a model file (generator = \"llm\" with "
        "[params.model], [params.plan] and [params.npu], e.g. models/gpt3-175b-llm.toml); fix: "
    )
    network = "; an instance file goes in the network column (its network and mapping)"
    assert refused(path) == (
        f"{path}: line 3: model: inline.toml is an instance file (it has [workload] and "
        f"[network]), {column}write its [workload] table as a model file (generator = \"llm\", "
        "its [workload.params.*] tables as [params.*]) and give that file in the model column"
        + network
    )
    # an instance naming its workload file: that file, relative to the runs file
    (tmp_path / "sub").mkdir()
    named = INSTANCE.replace("WORKLOAD", 'workload = "../tiny.toml"')
    (tmp_path / "sub" / "named.toml").write_text(named)
    path = write_case(tmp_path, ["sub/named.toml,net.toml,10,1"])
    assert refused(path) == (
        f"{path}: line 3: model: sub/named.toml is an instance file (it has [workload] and "
        f"[network]), {column}give its workload file tiny.toml in the model column (if it has "
        'generator = "llm")' + network
    )
    r = runner.invoke(app, ["validate", str(path)])
    assert r.exit_code == 2 and r.stderr.startswith(f"error: {path}: line 3: model: sub/")
    # that file works
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,1"])
    assert [r.model_path.name for r in read_runs(path)] == ["tiny.toml"]
