"""A co-design space whose model names a calibrated accelerator file (``[params.npu] calibrated``,
written by ``hieropt calibrate``): ``codesign --write-instances`` writes each candidate's NPU as
that file (its path relative to the written file, with the model file's own NPU fields), so that
``solve`` and ``provision`` take the written file, time it as the search did, and state the same
calibration note."""

from __future__ import annotations

import json
import tomllib

import pytest

from tests.cases import LLAMA2_7B_TOML, REPO
from tests.cli.util import run

H100_RUNS = REPO / "validation" / "calibration" / "h100-one-node.csv"
MODEL = LLAMA2_7B_TOML + """[params.plan]
tp = 1
pp = 1
dp = 16
micro_batch_size = 1
global_batch_size = 64
zero_stage = 1
flash_attention = true
[params.npu]
calibrated = "cal/h100-mine.toml"
hbm_reserve_gib = 5.0
"""
SPACE = """name = "llama7b-16"
model = "model.toml"
npus = 16
objective = "performance"
tokens = 1e11
constraints = ["bw[0] <= 450", "bw[1] <= 50"]
[plans]
tp = [1, 2]
[network]
dims = [
  { block = "Switch", npus = 8, cost_class = "NVLink" },
  { block = "Switch", npus = 2, cost_class = "IB" },
]
[cost.NVLink]
link_usd_per_gbps = 4.0
switch_usd_per_gbps = 13.0
nic_usd_per_gbps = 0
[cost.IB]
link_usd_per_gbps = 50.0
switch_usd_per_gbps = 93.75
nic_usd_per_gbps = 120.0
"""
CATALOG = (
    'name = "cat"\n[classes.NVLink]\n'
    'nics = [ { name = "nvlink4", gbps = 25, usd = 0, max_per_npu = 18, watts = 0 } ]\n'
    'switches = [ { name = "nvswitch", radix = 64, usd_per_switch = 0, '
    'port_gbit_per_s = 200, watts = 0 } ]\n'
    '[classes.IB]\n'
    'nics = [ { name = "cx7-400", gbit_per_s = 400, usd = 2000, max_per_npu = 1, watts = 25 } ]\n'
    'switches = [ { name = "qm9700", radix = 64, usd_per_switch = 35000, '
    'port_gbit_per_s = 400, watts = 750 } ]\n'
)
NOTE = (
    "the H100-SXM compute calibration is fitted on 2 runs of h100-one-node.csv (fit MAPE 1.7 %, "
    "worst 4.2 %; calibrated file h100-mine.toml)"
)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """calibrate -> codesign --write-instances: the folder, the search's JSON, the written file."""
    folder = tmp_path_factory.mktemp("cal-codesign")
    (folder / "cal").mkdir()
    r = run("calibrate", H100_RUNS, "--out", folder / "cal" / "h100-mine.toml")
    assert r.exit_code == 0, r.output
    (folder / "model.toml").write_text(MODEL)
    (folder / "space.toml").write_text(SPACE)
    (folder / "cat.toml").write_text(CATALOG)
    r = run("codesign", folder / "space.toml", "--workers", "1", "--top", "1",
            "--write-instances", folder / "ans", "--json", folder / "cd.json")
    assert r.exit_code == 0, r.output
    (path,) = (folder / "ans").glob("*.toml")
    return folder, json.loads((folder / "cd.json").read_text()), path


def test_the_written_npu_names_the_calibrated_file_relative_to_it(written):
    folder, _, path = written
    npu = tomllib.loads(path.read_text())["workload"]["params"]["npu"]
    # (the file's whole accelerator; the model file's own reserve, not the file's 4 GiB)
    assert npu == {"calibrated": "../cal/h100-mine.toml", "hbm_reserve_gib": 5.0}


def test_solve_and_provision_retime_it_with_the_same_note(written, tmp_path):
    folder, cd, path = written
    best = cd["ranking"][0]
    assert NOTE in cd["notes"]
    r = run("solve", path, "--json", tmp_path / "s.json")
    assert r.exit_code == 0, r.output
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["iteration_time_ns"] == pytest.approx(best["iteration_time_ns"], rel=1e-7)
    assert NOTE in s["notes"] and f"note: {NOTE}" in r.stdout
    r = run("provision", path, "--catalog", folder / "cat.toml", "--json", tmp_path / "p.json")
    assert r.exit_code == 0, r.output
    p = json.loads((tmp_path / "p.json").read_text())
    assert p["continuous"]["iteration_time_ns"] == pytest.approx(
        best["iteration_time_ns"], rel=1e-7)
    assert NOTE in p["notes"]
