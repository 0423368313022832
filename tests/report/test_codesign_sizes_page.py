"""The committee page of a co-design search over cluster sizes with a deadline (``codesign
--deadline``, a space with several ``npus``) states the question it answered: the deadline's
iteration-time target and each size searched with its outcome. It named the chosen size alone
("llama2-7b on 512 NPUs"), so a committee could not see that 256 NPUs were searched and miss the
deadline, nor that a deadline bounded every design on the page.

Llama 2 7B, 2T tokens, 1,024 sequences of 4,096 tokens per iteration (4,194,304 tokens): 7 days
are 604,800 s / 476,837.2 iterations = 1,268.4 ms per iteration; the best on 256 NPUs takes
1,675.8 ms (9.2 days), so only 512 NPUs meet it.
"""

from __future__ import annotations

import json

import pytest

from tests.cases import LLAMA2_7B_TOML
from tests.cli.util import run

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
"""
SPACE = """name = "llama7b-sizes"
model = "model.toml"
npus = [256, 512]
objective = "min_run_cost"
tokens = 2e12
constraints = ["bw[0] <= 450", "sum(bw[1:]) <= 50", "sum(bw[1:]) >= 12.5"]
dims = [2]
switch_only_at_top = false
[plans]
tp = [1, 2]
micro_batch_size = [1]
zero_stage = [1]
[[levels]]
name = "nvl"
blocks = ["Switch"]
npus = [8]
cost_class = "NVLink"
min_dims = 1
[[levels]]
name = "spine"
blocks = ["Switch"]
npus = [2, 512]
cost_class = "IB"
min_dims = 1
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
server_w = 4600
pue = 1.25
electricity_usd_per_kwh = 0.08
amortisation_years = 5
"""


def test_the_page_of_a_sized_search_with_a_deadline_states_both(tmp_path):
    (tmp_path / "model.toml").write_text(MODEL)
    (tmp_path / "space.toml").write_text(SPACE)
    result = tmp_path / "r.json"
    r = run("codesign", tmp_path / "space.toml", "--workers", "1", "--deadline", "7d",
            "--json", result)
    assert r.exit_code == 0, r.output
    data = json.loads(result.read_text())
    assert data["chosen_npus"] == 512
    assert data["target_ns"] / 1e6 == pytest.approx(604_800e3 / (2e12 / 4_194_304), rel=1e-9)
    r = run("report", result, "-o", tmp_path / "page")
    assert r.exit_code == 0, r.output
    subject = json.loads((tmp_path / "page" / "report.json").read_text())["committee"]["subject"]
    assert subject[0] == "llama2-7b on 512 NPUs"
    assert "a deadline of 7 days for 2T tokens: every design takes at most 1,268.4 ms per " \
        "iteration" in subject
    assert "cluster sizes searched: 256 NPUs (no candidate has an answer within the deadline), " \
        "512 NPUs (chosen)" in subject
    html = (tmp_path / "page" / "report.html").read_text()
    assert "cluster sizes searched: 256 NPUs" in html
