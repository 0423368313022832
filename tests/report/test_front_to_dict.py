"""``Front.to_dict(instance)`` is the document ``hieropt pareto --json`` writes but what the command
adds (each run's error band, the plan's caveats and the calibration note), built by one function:
the command's dict is made from it."""

from __future__ import annotations

import json

import hieropt
from tests.cases import REPO
from tests.cli.util import run

INSTANCE = REPO / "instances" / "gpt3-4d.toml"


def _without_bands(data: dict) -> dict:
    for p in data["points"]:
        if p["run"] is not None:
            p["run"].pop("band"), p["run"].pop("no_band")
    return data


def test_front_to_dict_is_the_commands_json_but_what_it_adds(tmp_path):
    js = tmp_path / "f.json"
    r = run("pareto", INSTANCE, "--points", "3", "--json", js)
    assert r.exit_code == 0, r.output
    cli = _without_bands(json.loads(js.read_text()))
    inst = hieropt.load_instance(INSTANCE)
    data = hieropt.pareto(inst, 3).to_dict(inst)
    assert cli["notes"][:len(data["notes"])] == data["notes"]
    for d in (data, cli):  # (wall times and what the command adds)
        for key in ("solve_seconds", "notes", "fastest", "best_per_cost"):
            d.pop(key)
    assert data == cli
    assert len(data["points"]) == 3 and data["objective_unit"] == "ns"
    assert data["points"][0]["run"]["iteration_time_ns"] == data["points"][0]["iteration_time_ns"]


def test_the_optima_are_their_solutions_dicts():
    inst = hieropt.load_instance(INSTANCE)
    front = hieropt.pareto(inst, 3)
    data = front.to_dict(inst)
    assert data["fastest"] == front.fastest.to_dict(inst)
    assert data["fastest"]["bw_gbps_per_dim"] == front.fastest.bw_gbps.tolist()
