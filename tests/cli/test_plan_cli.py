"""``hieropt workload plan MODEL.toml --set ... [--json -]``: the JSON keys and values, the table
output, exit 3 for a plan that does not fit, and one-line exit-2 errors for plans that do not fit
the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.io.llm import read_llm
from hieropt.model.memory import memory

REPO = Path(__file__).resolve().parents[2]
GPT3 = str(REPO / "models" / "gpt3-175b-llm.toml")
runner = CliRunner(
    env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1", "COLUMNS": "200"}
)


def test_plan_json_on_stdout():
    r = runner.invoke(
        app,
        [
            "workload",
            "plan",
            GPT3,
            "--set",
            "tp=8",
            "--set",
            "pp=8",
            "--set",
            "dp=64",
            "--json",
            "-",
        ],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["plan"]["tp"] == 8 and d["plan"]["npus"] == 4096 and d["plan"]["microbatches"] == 24
    peak = d["memory"]["peak"]
    assert set(peak) == {
        "stage",
        "weights_bytes",
        "gradients_bytes",
        "optimizer_bytes",
        "activations_bytes",
        "total_bytes",
        "in_flight",
    }
    rep = memory(read_llm(GPT3, ["tp=8", "pp=8", "dp=64"]))
    assert peak["total_bytes"] == rep.peak.total_bytes
    # every stage keeps a different number of micro-batches in flight
    assert len(d["memory"]["stages"]) == 8
    groups = {c["group"] for c in d["collectives"][7]["by_kind"]}
    assert groups == {"tp", "dp", "pp"}
    assert "memory per NPU: fits" in r.stderr  # the tables go to stderr with --json -


def test_plan_tables_and_exit_3_when_too_big():
    r = runner.invoke(
        app,
        [
            "workload",
            "plan",
            GPT3,
            "--set",
            "tp=16",
            "--set",
            "pp=1",
            "--set",
            "dp=256",
            "--set",
            "zero_stage=0",
            "--set",
            "recompute=none",
            "--set",
            "sequence_parallel=false",
        ],
    )
    assert r.exit_code == 3
    assert (
        "does not fit: stage 0 needs 237.00 GB per NPU, 155.40 GB more than the 81.60 GB available"
        in r.stdout
    )
    assert "Collectives of stage 0" in r.stdout and "ALLREDUCE" in r.stdout


@pytest.mark.parametrize(
    "sets, message",
    [
        (["tp=5"], "plan.npus: tp x pp x dp = 5 x 8 x 64 = 2560 is not the 4096 NPUs"),
        (["tp=7", "npus=3584"], "plan.tp: 7 does not divide the 96 attention heads"),
        (
            ["pp=128", "npus=65536"],
            "plan.pp: pp 128 chunks need at least as many layers, the model has 96",
        ),
        (
            ["global_batch_size=256", "schedule=interleaved", "virtual_stages=2"],
            "4 micro-batches per iteration are fewer than the 8 pipeline stages",
        ),
        (["tpp=8"], "--set: tpp: unknown key"),
        (["tp"], "expected KEY=VALUE"),
    ],
)
def test_plan_bad_input(sets, message):
    args = ["workload", "plan", GPT3]
    for s in sets:
        args += ["--set", s]
    r = runner.invoke(app, args)
    assert r.exit_code == 2
    assert message in r.stderr and r.stderr.count("\n") == 1 and r.stderr.startswith("error: ")


def test_plan_needs_an_llm_model():
    r = runner.invoke(app, ["workload", "plan", str(REPO / "models" / "gpt3-175b.toml")])
    assert r.exit_code == 2 and "'transformer' is not the LLM generator" in r.stderr


def test_the_plan_line_counts_every_degree_and_names_the_own_stream():
    """A context-parallel plan's line gives the degrees whose product is its NPU count (TP 4 x CP 2
    x PP 1 x DP 1 = 8, not TP 4 x PP 1 x DP 1), and says which collectives run on their own
    stream (``overlap_tp_comms``)."""
    model = str(REPO / "validation" / "models" / "llama3-8b-h100.toml")
    sets = ["tp=4", "cp=2", "pp=1", "dp=1", "npus=8", "global_batch_size=16",
            "overlap_tp_comms=true", "sequence_parallel=true", "overlap_grad_reduce=false",
            "overlap_param_gather=false"]
    r = runner.invoke(app, ["workload", "plan", model, *[x for s in sets for x in ("--set", s)]])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0] == (
        "llama3.1-8b: 8 NPUs = TP 4 x CP 2 x PP 1 x DP 1; sequence parallel, 1f1b, ZeRO 1, "
        "recompute none; "
        "micro-batch 1 x 16 per iteration, global batch 16 sequences of 8192 tokens; tp "
        "collectives on their own stream"
    )


def test_the_optimizer_step_is_named_as_the_first_stage_s(tmp_path):
    """The compute line of a pipelined plan names the stage with the most compute (stage 1 of the
    8B at PP 2: the output layer) but its optimizer step is stage 0's, whose last backward ends
    the iteration (the figure the iteration without communication adds): the label says so."""
    model = str(REPO / "validation" / "models" / "llama3-8b-h100.toml")
    sets = ["cp=1", "pp=2", "dp=4", "npus=8"]
    out = tmp_path / "plan.json"
    r = runner.invoke(app, ["workload", "plan", model, *[x for s in sets for x in ("--set", s)],
                            "--json", str(out)])
    assert r.exit_code == 0, r.output
    c = json.loads(out.read_text())["compute"]
    stage0, stage1 = (s["optimizer_ns"] for s in c["stages"])
    assert c["slowest_stage"] == 1 and round(stage0) != round(stage1)
    assert c["optimizer_ns"] == stage0
    assert (f"compute (ns per NPU, stage 1, the most compute): {c['iteration_compute_ns']:,.0f} "
            f"per iteration, pipeline bubble {c['bubble_ns']:,.0f}, optimizer step {stage0:,.0f} "
            "(stage 0's: its last backward ends the iteration);") in r.output
