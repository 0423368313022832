"""The committee page of a co-design result whose space's ``set`` makes the model file's own plan
invalid (a global batch its DP does not divide) while the plans the space searches are valid: the
space accepts it (``set`` is checked against the plans searched), so the JSON ``codesign --json``
writes is read back with its ``space_definition`` by ``hieropt report`` too, not refused as "not a
co-design space"."""

from __future__ import annotations

import json

from tests.cases import NVLINK_SCALEOUT_COST_TOML, REPO
from tests.cli.util import run

SPACE = f"""name = "set-batch"
model = "{REPO}/models/gpt3-175b-llm.toml"
set = ["global_batch_size=72"]   # the model file's own DP 64 does not divide 72; DP 9 does
npus = 288
objective = "performance"
constraints = ["bw[0] <= 900", "bw[0] >= 50", "bw[1] <= 200", "bw[1] >= 12.5"]
[plans]
tp = [8]
pp = [4]
[network]
dims = [
  {{ block = "Switch", npus = 72, cost_class = "NVLink" }},
  {{ block = "Switch", npus = 4, cost_class = "ScaleOut" }},
]
""" + NVLINK_SCALEOUT_COST_TOML


def test_a_result_of_a_space_whose_set_invalidates_the_model_files_plan(tmp_path):
    space = tmp_path / "space.toml"
    space.write_text(SPACE)
    result = tmp_path / "result.json"
    r = run("codesign", space, "--workers", "1", "--json", result)
    assert r.exit_code == 0, r.output
    best = json.loads(result.read_text())["best"]
    assert best["plan"] == "tp8 cp1 pp4 dp9 ep1 z1 sel sp v1 mb1"
    r = run("report", result, "-o", tmp_path / "out", "--json", "-")
    assert r.exit_code == 0, r.output
    page = json.loads(r.stdout)
    # the page's "best" column is the search's best, on its 288 NPUs
    alts = {a["key"]: a for a in page["alternatives"]}
    assert alts["best"]["iteration_time_ns"] == best["iteration_time_ns"]
    assert alts["best"]["plan"] == best["plan"] and page["headline"]["npus"] == 288
