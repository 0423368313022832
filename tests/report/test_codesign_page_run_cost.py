"""The committee page of a co-design result searched for another objective than $ per run: its
least $ per run is the least among the designs on the page (each ranked candidate at its own
optimum of that objective, the knee's design), not over every candidate, and the page says so in
the column's label and the recommendation's why; ``codesign --objective min_run_cost`` finds a
cheaper run (Llama 2 7B on 512 H100s: $113,169 against the page's $113,209), and its page calls
its column the least $ per run."""

from __future__ import annotations

import json

import pytest

from hieropt.report.committee_codesign import PAGE_RUN_COST
from tests.cases import LLAMA2_7B_TOML
from tests.cli.util import run

SPACE = """name = "llama7b-512"
model = "{model}"
npus = 512
objective = "performance"
tokens = 2e12
constraints = ["bw[0] <= 450", "bw[1] <= 50", "bw[1] >= 12.5"]
[plans]
tp = [1, 2, 4, 8]
micro_batch_size = [1, 2]
zero_stage = [1, 2]
[network]
dims = [
  {{ block = "Switch", npus = 8, cost_class = "NVLink" }},
  {{ block = "Switch", npus = 64, cost_class = "IB" }},
]
[cost.NVLink]
link_usd_per_gbps = 4.0
switch_usd_per_gbps = 13.0
nic_usd_per_gbps = 0
[cost.IB]
link_usd_per_gbps = 50.0
switch_usd_per_gbps = 93.75
nic_usd_per_gbps = 120.0
[cluster]
accelerator_usd = 33750
accelerator_w = 700
npus_per_server = 8
server_usd = 100000
server_w = 4600
pue = 1.25
electricity_usd_per_kwh = 0.08
facility_usd_per_mw = 11.7e6
amortisation_years = 5
"""
MODEL = LLAMA2_7B_TOML + """[params.plan]
tp = 1
pp = 1
dp = 512
micro_batch_size = 1
global_batch_size = 1024
zero_stage = 1
flash_attention = true
[params.npu]
accelerator = "H100-SXM"
hbm_reserve_gib = 4.0
"""
WHY = (
    "the least $ per training run (run time x the whole cluster's cost rate) among the designs on "
    "this page, not over every candidate (the search ranked them by performance; codesign "
    "--objective min_run_cost finds the least $ per run); the accelerators are paid for every "
    "hour the training takes"
)

def _page(tmp_path, *objective: str) -> tuple[dict, dict]:
    """The co-design JSON of the space (with ``objective``: ``--objective X``) and its page's."""
    (tmp_path / "m.toml").write_text(MODEL)
    (tmp_path / "space.toml").write_text(SPACE.format(model="m.toml"))
    result = tmp_path / f"cd{len(objective)}.json"
    r = run("codesign", tmp_path / "space.toml", "--workers", "1", *objective, "--json", result)
    assert r.exit_code == 0, r.output
    r = run("report", result, "-o", tmp_path / f"out{len(objective)}", "--json", "-")
    assert r.exit_code == 0, r.output
    return json.loads(result.read_text()), json.loads(r.stdout)

def test_the_page_s_least_run_cost_is_scoped_and_the_search_finds_a_cheaper_one(tmp_path):
    _, page = _page(tmp_path)
    assert page["recommended"] == "min_run_cost" and page["why"] == WHY
    alt = next(a for a in page["alternatives"] if a["key"] == "min_run_cost")
    assert alt["label"] == PAGE_RUN_COST == "least $ per run on this page"
    assert page["headline"]["run_cost_usd"] == pytest.approx(113209.008, rel=1e-6)
    best, least = _page(tmp_path, "--objective", "min_run_cost")
    assert best["best"]["objective_value"] == pytest.approx(113168.895, rel=1e-6)
    assert best["best"]["objective_value"] < page["headline"]["run_cost_usd"]
    assert least["why"] == (
        "the least $ per training run (run time x the whole cluster's cost rate); the "
        "accelerators are paid for every hour the training takes")
    alt = next(a for a in least["alternatives"] if a["key"] == "min_run_cost")
    assert alt["label"] == "least $ per run"
    assert least["headline"]["run_cost_usd"] == pytest.approx(
        best["best"]["objective_value"], rel=1e-12)
