"""A cluster of more than a million NPUs gets a note, not a refusal: the largest published training
clusters are about 100,000 GPUs, so millions is more likely a dimension's NPU count or a plan's
degree in error (GPT-3 175B's 4 x 8 x 4 x 32 network with the Switch at 32,000: 4,096,000 NPUs)."""

from __future__ import annotations

import json

from hieropt.units import MAX_PLAUSIBLE_NPUS, cluster_size_note
from tests.cases import REPO
from tests.cli.util import run

NOTE = ("the cluster has 4,096,000 NPUs, above 1,000,000: the largest published training clusters "
        "are about 100,000 GPUs; check the dimensions' NPU counts and the plan's degrees (nothing "
        "here models the failures, stragglers, power and floor space of a cluster that size)")


def big(tmp_path):
    """GPT-3 175B (dp 256,000) on Ring 4 x FullyConnected 8 x Ring 4 x Switch 32,000."""
    model = (REPO / "models" / "gpt3-175b.toml").read_text()
    assert "\ndp = 256 " in model
    (tmp_path / "m.toml").write_text(model.replace("\ndp = 256 ", "\ndp = 256000 "))
    text = (REPO / "instances" / "gpt3-4d.toml").read_text()
    for old, new in (('"../models/gpt3-175b.toml"', '"m.toml"'),
                     ('{ block = "Switch", npus = 32,', '{ block = "Switch", npus = 32000,'),
                     ("weight_grad = [1, 2, 4, 32]", "weight_grad = [1, 2, 4, 32000]")):
        assert old in text
        text = text.replace(old, new)
    p = tmp_path / "big.toml"
    p.write_text(text)
    return p


def test_the_threshold():
    assert MAX_PLAUSIBLE_NPUS == 1_000_000
    assert cluster_size_note(16_384) is None and cluster_size_note(1_000_000) is None
    assert cluster_size_note(4_096_000) == NOTE


def test_solve_evaluate_and_workload_plan_note_millions_of_npus(tmp_path):
    p = big(tmp_path)
    r = run("solve", p, "--json", tmp_path / "s.json")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines().count(f"note: {NOTE}") == 1  # (the plan's and the network's: once)
    assert NOTE in json.loads((tmp_path / "s.json").read_text())["notes"]
    r = run("evaluate", p, "--bw", "250,125,75,50")
    assert r.exit_code == 0, r.output
    assert f"note: {NOTE}" in r.stdout.splitlines()
    # an LLM plan of 2,048,000 NPUs (TP 8 x PP 8 x DP 32,000), without a network
    r = run("workload", "plan", REPO / "models" / "gpt3-175b-llm.toml", "--set", "dp=32000",
            "--set", "npus=2048000", "--set", "global_batch_size=384000")
    assert r.exit_code == 0, r.output
    assert f"note: {NOTE.replace('4,096,000', '2,048,000')}" in r.stdout.splitlines()
    # the shipped 4,096 NPUs: no such note
    r = run("evaluate", REPO / "instances" / "gpt3-4d.toml", "--bw", "250,125,75,50")
    assert r.exit_code == 0 and "the cluster has" not in r.stdout
