"""What the committee page of a co-design result takes its columns from: a search over cluster
sizes offers each size's best as a candidate for "fastest" and the knee (the ranking's few rows
may all be of the cheapest size); the "best in whole parts" column is the catalog design's own run
figures (the bill of materials' power counted, as ``hieropt provision`` gives them); an
interrupted search's JSON and a results CSV are named for what they are."""

from __future__ import annotations

import json

import pytest

from hieropt.report.committee_codesign import codesign_committee
from tests.buyer.llama_space import CATALOG, LLAMA_SPACE
from tests.buyer.llama_space import llama_space_file as small_space
from tests.cases import REPO
from tests.cli.util import error_line, run


def _alt(committee, key):
    return next(a for a in committee.alternatives if a.key == key)


@pytest.mark.heavy
def test_fastest_and_knee_include_each_sizes_best(tmp_path):
    # Llama 3 70B over 256 / 512 / 1,024 H100 by $ per run, the 2 best rows kept: both are of
    # 256 NPUs (18,326.3 and 18,907.8 ms); the fastest on the page is the 1,024-NPU size's best,
    # tp8 pp8 dp16 at 6,354.2 ms and $971,526 per run (tests/buyer/test_sizing.py), not 18,326.3 ms
    space = tmp_path / "space.toml"
    space.write_text(LLAMA_SPACE.format(model=REPO / "models" / "llama3-70b.toml"))
    r = run("codesign", space, "--workers", "1", "--top", "2", "--json", tmp_path / "c.json")
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "c.json").read_text())
    assert {row["npus"] for row in data["ranking"]} == {256}
    committee = codesign_committee(data, None)  # (the JSON's own figures, no space)
    fastest = _alt(committee, "fastest")
    assert fastest.npus == 1024 and fastest.plan == "tp8 cp1 pp8 dp16 ep1 z1 sel sp v1 mb1"
    assert fastest.iteration_time_ns / 1e6 == pytest.approx(6354.2401, abs=1e-3)
    assert fastest.run.run_cost_usd == pytest.approx(971_526, abs=1)
    assert "the best of each of the 3 cluster sizes searched (2 not ranked)" in fastest.how
    # the knee (without the space: the cheapest design within 1 % of the fastest) is that design
    assert _alt(committee, "knee").iteration_time_ns == fastest.iteration_time_ns
    # the best and the least $ per run stay the 256-NPU optimum, $700,494 per run
    assert _alt(committee, "min_run_cost").npus == 256
    assert _alt(committee, "min_run_cost").run.run_cost_usd == pytest.approx(700_494, abs=1)
    assert committee.pareto.source.startswith("the 4 ranked candidates of the co-design result "
                                              "(with each cluster size's best)")


@pytest.mark.heavy
def test_the_whole_parts_column_counts_the_parts_power(tmp_path):
    # Llama 3 70B on 256 H100, the InfiniBand catalog, one 400G NIC per H100 (its catalog
    # nic_gbps, 50 GB/s): (256 x 700 + 32 x 4,600 + 16,880 W of the bill of materials) x PUE 1.25
    # = 0.4291 MW and $807,271 per run, as hieropt provision of the written instance
    # (tests/buyer/test_provisioned_run_agrees.py); not the continuous row's figures at the
    # catalog's time and cost, which count no network power
    r = run("codesign", small_space(tmp_path), "--objective", "performance", "--workers", "1",
            "--catalog", CATALOG, "--provision-top", "1", "--top", "1", "--json",
            tmp_path / "c.json")
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "c.json").read_text())
    catalog = _alt(codesign_committee(data, None), "catalog")
    assert catalog.power_w == pytest.approx(16_880, abs=0.5)
    assert catalog.run.power_mw == pytest.approx((256 * 700 + 32 * 4600 + 16_880) * 1.25 / 1e6,
                                                 abs=1e-6)
    assert catalog.run.run_cost_usd == pytest.approx(807_271, abs=1)
    assert catalog.run.left_out == ()
    # (16,880 / 256 = 65.9375 W per NPU, printed to 5 significant digits: 65.938)
    assert catalog.how.endswith("; network power: the bill of materials' 16,880 W (65.938 W per "
                                "NPU) is counted in the cluster's MW, MWh and $")
    assert ("; dimension 1 (Switch 32, ScaleOut) bought at most 50 GB/s per NPU (no upper_gbps "
            "in the instance's bounds): it reaches 256 NPUs") in catalog.how
    # the page recommends the design in whole parts, $807,271 per run: the cost model's columns
    # price the same 200 GB/s of scale-out at its $ per GB/s, $1,643,701 per run, a bound on
    # another price basis (not recommended as the page's least $ per run)
    committee = codesign_committee(data, None)
    assert committee.recommended == "catalog" and committee.headline()["run_cost_usd"] == (
        catalog.run.run_cost_usd)
    bound = _alt(committee, "min_run_cost")
    assert bound.run.run_cost_usd == pytest.approx(1_643_701, abs=1)
    assert bound.label == "least $ per run of the continuous designs [$ per GB/s]"
    assert _alt(committee, "cheapest").label == ("cheapest network of the continuous designs "
                                                 "[$ per GB/s]")
    assert len(committee.price_basis) == 2 and committee.price_basis[0].endswith(
        "(designs that can be bought): best in whole parts")
    # a budget of half the tokens: half the days, MWh and $ of the same design
    half = _alt(codesign_committee(data, None, tokens=1e12), "catalog")
    assert half.run.run_cost_usd == pytest.approx(807_271 / 2, abs=1)
    assert half.run.power_mw == catalog.run.power_mw


def test_an_interrupted_search_is_named(tmp_path):
    path = tmp_path / "term.json"
    path.write_text(json.dumps({
        "status": "interrupted", "exit_code": 143,
        "message": "terminated: the rows so far are in rows.csv; rerun the same command to "
                   "resume"}))
    r = run("report", path, "-o", tmp_path / "out")
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {path}: status: an interrupted co-design search, not its result: terminated: "
        "the rows so far are in rows.csv; rerun the same command to resume; fix: rerun the same "
        "'hieropt codesign SPACE --out ROWS --json FILE' command (the rows in its --out file are "
        "resumed, not solved again) and give the JSON it writes")


def test_a_results_csv_is_named(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("id,space_hash,plan,shape,placement,n_dims,npus\n"
                    "x,277eb94153ae,tp4,nvl:SW64 spine:SW8,{},2,512\n")
    r = run("report", path, "-o", tmp_path / "out")
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {path} is a search's results file (one row per candidate: codesign or explore "
        f"--out), not an instance or a co-design space; fix: rerun the search's command with "
        f"--json FILE (the rows in {path} are resumed, not solved again) and give a co-design "
        "JSON to `hieropt report FILE.json`")
