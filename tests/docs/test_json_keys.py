"""docs/reference/json.md lists exactly the keys ``solve``, ``evaluate``, ``pareto``, ``validate``,
``calibrate`` and ``workload plan`` write to ``--json``, and the ``[calibration]`` keys of the file
written by ``calibrate --out``: each table's keys against the file the command writes (the run
figures and breakdown of a plain instance; the pipeline-only breakdown keys against a pipeline
plan)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from tests.cases import REPO
from tests.cli.util import run

PAGE = REPO / "docs" / "reference" / "json.md"
GPT3 = REPO / "instances" / "gpt3-4d.toml"
PLAN = REPO / "instances" / "gpt3-plan-4d.toml"
LLAMA = REPO / "instances" / "llama3-405b-16k-cluster.toml"
ONLY_PIPELINES = {"stage_times_ns", "slowest_stage"}
KORTHIKANTI = REPO / "validation" / "korthikanti2022.csv"
PLAN_TABLES = ("workload plan --json", "plan", "precision", "memory", "memory stages",
               "compute", "compute stages", "collectives", "by_kind")
"""The tables of ``workload plan --json``: the file's keys, then each part's."""
ONE_NODE = REPO / "validation" / "calibration" / "a100-one-node.csv"


def tables() -> dict[str, list[str]]:
    """Each heading's table keys, in order (the first column's `key`)."""
    out: dict[str, list[str]] = {}
    heading = None
    for line in PAGE.read_text().splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif heading and (m := re.match(r"\| `([a-z0-9_]+)` \|", line)):
            out.setdefault(heading, []).append(m.group(1))
    return out


def written(*args) -> dict:
    r = run(*args, "--json", "-")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_the_documented_keys_are_those_written():
    doc = tables()
    assert set(doc) == {"solve --json", "knee", "breakdown", "run", "band", "evaluate --json",
                        "pareto --json", "points", "validate --json", "rows", "summary", "files",
                        "groups", "calibrate --json", "fields", "calibrate --out", *PLAN_TABLES}
    solved = written("solve", GPT3, "--no-sensitivity")
    assert list(solved) == doc["solve --json"]
    assert list(solved["knee"]) == doc["knee"]
    assert list(solved["run"]) == doc["run"]
    assert list(solved["breakdown"]) == [k for k in doc["breakdown"] if k not in ONLY_PIPELINES]
    evaluated = written("evaluate", GPT3, "--bw", "250,125,75,50")
    assert list(evaluated) == doc["evaluate --json"]
    assert evaluated["iteration_time_ns"] == evaluated["breakdown"]["iteration_time_ns"]
    assert list(evaluated["breakdown"]) == list(solved["breakdown"])
    assert list(evaluated["run"]) == doc["run"]
    front = written("pareto", GPT3, "--points", "3")
    assert list(front) == doc["pareto --json"]
    assert list(front["points"][0]) == doc["points"]
    assert list(front["fastest"]) == [k for k in doc["solve --json"] if k != "knee"]
    plan = written("evaluate", PLAN, "--bw", "250,125,75,50")
    assert list(plan["breakdown"]) == doc["breakdown"]
    assert solved["run"]["band"] is None  # (no token budget: no days)


def test_the_documented_band_keys_are_those_written():
    """A run with days on the H100's default calibration: its band's keys and ends (the run
    line's 6.3 % either way: T / 1.063 to T / 0.937)."""
    doc = tables()
    days = written("evaluate", LLAMA, "--bw", "450,50")["run"]
    band = days["band"]
    assert list(band) == doc["band"]
    t = days["time_to_train_days"]
    assert band["time_to_train_days"] == pytest.approx([t / 1.063, t / 0.937])
    assert band["run_cost_usd"] == pytest.approx([days["run_cost_usd"] / 1.063,
                                                  days["run_cost_usd"] / 0.937])
    assert band["held_out_error"] == pytest.approx(0.063) and band["one_sided"] is False


@pytest.mark.heavy
def test_the_documented_validate_and_calibrate_keys_are_those_written(tmp_path: Path):
    doc = tables()
    # fitted on the one-node runs and applied to Korthikanti et al.'s: every table has an entry
    checked = written("validate", KORTHIKANTI, "--calibrate-on", ONE_NODE)
    assert list(checked) == doc["validate --json"]
    assert list(checked["rows"][0]) == doc["rows"]
    assert list(checked["summary"]) == doc["summary"]
    assert list(checked["files"][0]) == doc["files"]
    assert list(checked["groups"][0]) == doc["groups"]
    assert list(checked["calibrations"][0]) == doc["calibrate --json"]
    assert checked["summary"]["runs"] == 7  # the two 22B runs are the fit's own
    out = tmp_path / "a100.toml"
    fit = written("calibrate", ONE_NODE, "--out", out)
    assert list(fit) == doc["calibrate --json"]
    assert list(fit["fields"][0]) == doc["fields"]
    assert fit["runs"] == 2 and fit["fields"][0]["name"] == "matrix_efficiency"
    assert list(tomllib.loads(out.read_text())["calibration"]) == doc["calibrate --out"]


@pytest.mark.parametrize("args", [("models/llama3-405b.toml",),
                                  ("models/gpt3-175b-llm.toml", "--set", "tp=16", "--set", "pp=1",
                                   "--set", "dp=256", "--set", "zero_stage=0")])
def test_the_documented_workload_plan_keys_are_those_written(args):
    """A plan that fits (exit 0) and one that does not (exit 3) write the same keys."""
    doc = tables()
    r = run("workload", "plan", REPO / args[0], *args[1:], "--json", "-")
    assert r.exit_code in (0, 3), r.output
    plan = json.loads(r.stdout)
    assert (r.exit_code == 0) == plan["memory"]["fits"]
    assert list(plan) == doc["workload plan --json"]
    for part in ("plan", "precision", "memory", "compute"):
        assert list(plan[part]) == doc[part], part
    assert list(plan["memory"]["peak"]) == doc["memory stages"]
    assert all(list(m) == doc["memory stages"] for m in plan["memory"]["stages"])
    assert all(list(c) == doc["compute stages"] for c in plan["compute"]["stages"])
    assert all(list(c) == doc["collectives"] for c in plan["collectives"])
    assert all(list(k) == doc["by_kind"] for c in plan["collectives"] for k in c["by_kind"])
