"""``Codesign.to_dict()`` carries the best candidate's ``run`` with its error band, the same object
``hieropt codesign --json`` writes (one computation: the command writes the library's dict)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hieropt
from tests.cases import NVLINK_SCALEOUT_COST_TOML
from tests.cli.util import run

REPO = Path(__file__).resolve().parents[2]
TOKENS = 300e9
TOKENS_PER_ITERATION = 1536 * 2048  # gpt3-175b-llm.toml's global batch x its sequence length
SPACE = """
name = "gpt3-one-plan"
model = "{model}"
npus = 4096
objective = "performance"
tokens = 300e9
constraints = ["bw[0] >= 50", "bw[0] <= 900", "bw[1] >= 1", "bw[1] <= 200"]
mapping_rule = "lowest"
[plans]
tp = [8]
pp = [8]
zero_stage = [1]
recompute = ["selective"]
sequence_parallel = [true]
[network]
dims = [{{ block = "Switch", npus = 64, cost_class = "NVLink" }},
        {{ block = "Switch", npus = 64, cost_class = "ScaleOut" }}]
""" + NVLINK_SCALEOUT_COST_TOML


@pytest.fixture(scope="module")
def space(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("one-plan") / "space.toml"
    path.write_text(SPACE.format(model=REPO / "models" / "gpt3-175b-llm.toml"))
    return path


def test_to_dict_has_the_run_the_command_writes(space):
    result = hieropt.codesign(space, workers=1)
    got = result.to_dict()["run"]
    # the best's figures, by hand: iterations of the token budget, days at its iteration time
    t = result.best.iteration_time_ns
    iterations = TOKENS / TOKENS_PER_ITERATION
    assert got["tokens_per_iteration"] == TOKENS_PER_ITERATION
    assert got["iterations_per_run"] == pytest.approx(iterations, rel=1e-15)
    assert got["iteration_time_ns"] == t
    days = iterations * t / 86400e9
    assert got["time_to_train_days"] == pytest.approx(days, rel=1e-12)
    # the A100's default calibration, mostly too fast on its held-out runs: from the prediction up
    # to T / (1 - w) at its worst held-out error w
    band = got["band"]
    w = band["held_out_error"]
    assert w == pytest.approx(0.279, abs=5e-4) and band["one_sided"] is True
    assert band["time_to_train_days"] == pytest.approx([days, days / (1 - w)], rel=1e-12)
    assert got == {**result.run().to_dict(), "band": band, "no_band": None}
    r = run("codesign", space, "--workers", "1", "--json", "-")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["run"] == got
