"""The committee page's whole-parts columns count their bill of materials' power in the MW, MWh,
capex and $ per run, as ``hieropt provision`` does (one mechanism:
:func:`hieropt.model.run.provisioned_run`).

instances/llama3-405b-16k-cluster.toml with catalogs/nvl72-infiniband.toml: the fastest design in
whole parts is 9 NVLink links per H100 and one ConnectX-7 400G per H100 on 768 Quantum-2 switches,
$265,676,800, drawing 16,384 x 25 + 768 x 750 + 16,384 x 9 + 24,576 x 17 = 1,550,848 W. The cluster
without its network draws 16,384 x 700 + 2,048 x 4,600 = 20,889,600 W; with it (20,889,600 +
1,550,848) x PUE 1.25 = 28,050,560 W = 28.05056 MW (26.112 MW without). Capex: 16,384 x $33,750 +
$11.7M per MW x 22.440448 MW + $265,676,800 = $1,081,190,041.60. Cost per hour: ($552,960,000 +
$265,676,800) / (5 x 8,760 h) + $262,553,241.60 / (15 x 8,760 h) + 28,050.56 kW x $0.0826 =
$18,690.3379 + $1,998.1221 + $2,316.9763 = $23,005.4362 per hour.
"""

from __future__ import annotations

import html
import json

import pytest

from tests.cases import REPO
from tests.cli.util import run
from tests.report.pages import assert_page_equals_json

INSTANCE = REPO / "instances" / "llama3-405b-16k-cluster.toml"
CATALOG = REPO / "catalogs" / "nvl72-infiniband.toml"
BOM_W = 16_384 * 25 + 768 * 750 + 16_384 * 9 + 24_576 * 17
FIXED_IT_W = 16_384 * 700 + 2_048 * 4_600
PER_HOUR = ((16_384 * 33_750 + 265_676_800) / (5 * 8760)
            + 11.7e6 * (FIXED_IT_W + BOM_W) / 1e6 / (15 * 8760)
            + (FIXED_IT_W + BOM_W) * 1.25 / 1e3 * 0.0826)


@pytest.mark.heavy
def test_whole_parts_columns_count_their_power(tmp_path):
    assert BOM_W == 1_550_848 and PER_HOUR == pytest.approx(23_005.4362, abs=1e-4)
    r = run("report", INSTANCE, "--catalog", CATALOG, "-o", tmp_path / "out", "--points", "3",
            "--json", "-")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    alts = {a["key"]: a for a in data["alternatives"]}
    for key in ("catalog", "catalog_knee"):
        a = alts[key]
        assert (a["network_cost_usd"], a["power_w"]) == (265_676_800.0, BOM_W)
        run_ = a["run"]
        assert run_["power_mw"] == pytest.approx(28.05056, rel=1e-12)
        assert run_["capex_usd"] == pytest.approx(1_081_190_041.6, rel=1e-12)
        assert run_["cost_per_hour_usd"] == pytest.approx(PER_HOUR, rel=1e-12)
        days = run_["time_to_train_days"]
        assert run_["energy_mwh"] == pytest.approx(28.05056 * 24 * days, rel=1e-12)
        assert run_["run_cost_usd"] == pytest.approx(PER_HOUR * 24 * days, rel=1e-12)
        assert not any("network power" in x for x in run_["left_out"])
        assert a["how"].endswith("network power: the bill of materials' 1,550,848 W (94.656 W "
                                 "per NPU) is counted in the cluster's MW, MWh and $")
    # (the cost model's columns leave the network's power out, and the page says which)
    assert alts["fastest"]["run"]["power_mw"] == pytest.approx(26.112, rel=1e-12)
    labels = "; ".join(alts[k]["label"] for k in ("catalog_knee", "catalog"))
    assert ("left out: network power (no network_w_per_npu): not in the MW, MWh, facility or $ "
            f"(every column but: {labels})") in data["unknown"]
    # the page recommends a design that can be bought: the least $ per run in whole parts (the
    # knee and the fastest in whole parts are one design; the page's order takes the knee), not
    # the cost model's least $ per run, 37.62 GB/s of scale-out (no part) at $36.7M, a bound
    # priced by $ per GB/s
    assert data["recommended"] == "catalog_knee"
    assert data["headline"]["run_cost_usd"] == alts["catalog"]["run_cost_usd"]
    bound = alts["min_run_cost"]
    assert bound["price_basis"] == "cost_model" and alts["catalog"]["price_basis"] == "catalog"
    assert bound["bw_gbps"][1] == pytest.approx(37.62, abs=0.01)
    assert bound["run_cost_usd"] == pytest.approx(36.72e6, rel=1e-3)
    assert bound["label"] == "least $ per run (min_run_cost) [$ per GB/s]"
    assert data["why"].startswith("the least $ per training run (run time x the whole "
                                  "cluster's cost rate) among the designs on this page that can "
                                  "be bought")
    assert data["price_basis"] == [
        "whole parts from the catalog, priced by their bill of materials (designs that can be "
        f"bought): {labels}",
        "the cost model's $ per GB/s per NPU (continuous bandwidths no catalog part need give: a "
        "bound on the network's $, not a purchase; compare their times, not their $, with the "
        "whole-parts columns'): " + "; ".join(a["label"] for a in data["alternatives"]
                                             if a["price_basis"] == "cost_model")]
    page = (tmp_path / "out" / "report.html").read_text()
    rec = page[page.index("data-recommended"):page.index("</section>")]
    assert "priced on two bases" in rec and html.escape(data["price_basis"][0]) in rec
    assert page.count("data-basis='catalog'") == 2 and page.count("data-basis='cost_model'") == 5
    assert_page_equals_json(tmp_path / "out", data)
    # the same figures as hieropt provision's
    p = run("provision", INSTANCE, "--catalog", CATALOG, "--objective", "performance",
            "--json", "-")
    assert p.exit_code == 0, p.output
    prov = json.loads(p.stdout)["run"]
    for k in ("power_mw", "energy_mwh", "capex_usd", "run_cost_usd", "time_to_train_days"):
        assert alts["catalog"]["run"][k] == pytest.approx(prov[k], rel=1e-12), k
