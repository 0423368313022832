"""The committee page's numbers (``hieropt report``): the recommendation and the alternatives of a
procurement answer and of a co-design result, against hand-computed figures, the definitions of the
alternatives, the JSON and the page.
"""

from __future__ import annotations

import json
import re

import pytest

import hieropt
from tests.cases import REPO
from tests.cli.util import error_line, run
from tests.report.nvl72 import NVL, SPACE, TOKENS
from tests.report.pages import assert_page_equals_json

HOURS = 5 * 8760.0  # amortisation_years = 5


def alt(data: dict, key: str) -> dict:
    return next(a for a in data["alternatives"] if a["key"] == key)


def test_run_cost_of_the_recommendation_by_hand(priced):
    """$ per run = (capex / amortisation + facility / amortisation + electricity) per hour x hours
    of the run, from the [cluster] figures; days = tokens / tokens per iteration x T."""
    _, data = priced
    assert data["recommended"] == "min_run_cost"
    h = data["headline"]
    inst = hieropt.load_instance(NVL)
    n = inst.network.npus_total
    assert h["npus"] == n == 2304
    tokens_per_iteration = 2304 * 2048 / 8  # global batch 288 x 2048 tokens: gpt3-175b-nvl72.toml
    assert h["tokens_per_s"] == pytest.approx(
        tokens_per_iteration / (h["iteration_time_ns"] * 1e-9), rel=1e-12
    )
    days = TOKENS / tokens_per_iteration * h["iteration_time_ns"] * 1e-9 / 86400
    assert h["time_to_train_days"] == pytest.approx(days, rel=1e-12)
    it_w = n * 1200.0
    assert h["power_mw"] == pytest.approx(it_w * 1.25 / 1e6, rel=1e-12)
    per_hour = ((n * 43000 + h["network_cost_usd"]) / HOURS + 11.7e6 * it_w / 1e6 / HOURS
                + it_w * 1.25 / 1e3 * 0.0826)
    assert h["run_cost_usd"] == pytest.approx(per_hour * days * 24, rel=1e-12)


def test_alternatives_keep_their_definitions(priced):
    """The least $ per run is no dearer than any other design; the fastest is no slower; the knee is
    within 1 % of the fastest time and no dearer; the plot's front holds no run cheaper than the
    optimum."""
    _, data = priced
    alts = {a["key"]: a for a in data["alternatives"]}
    assert set(alts) == {"min_run_cost", "knee", "fastest", "performance_per_cost", "cheapest"}
    best_run = alts["min_run_cost"]["run_cost_usd"]
    for a in alts.values():
        assert a["run_cost_usd"] >= best_run * (1 - 1e-7), a["key"]
        assert a["iteration_time_ns"] >= alts["fastest"]["iteration_time_ns"] * (1 - 1e-8), a["key"]
    assert alts["knee"]["iteration_time_ns"] <= alts["fastest"]["iteration_time_ns"] * 1.01 * (
        1 + 1e-9
    )
    assert alts["knee"]["network_cost_usd"] < alts["fastest"]["network_cost_usd"]
    assert alts["cheapest"]["network_cost_usd"] <= min(
        a["network_cost_usd"] for a in alts.values()
    ) * (1 + 1e-9)
    p = data["pareto"]
    assert p["axes"] == "run" and len(p["curve"]) == 8
    assert min(y for _, y in p["front"]) >= best_run * (1 - 1e-7)
    xs = [x for x, _ in p["front"]]
    ys = [y for _, y in p["front"]]
    # non-dominated: faster runs cost more
    assert xs == sorted(xs) and ys == sorted(ys, reverse=True)


def test_page_and_json_agree(priced, unpriced, codesigned):
    for out, data in (priced, unpriced, codesigned):
        assert_page_equals_json(out, data)
        report = json.loads((out / "report.json").read_text())
        assert report["committee"] == data


def test_without_a_cluster_the_knee_is_recommended_and_dollars_are_unknown(unpriced):
    out, data = unpriced
    assert data["recommended"] == "knee"
    h = data["headline"]
    assert h["run_cost_usd"] is None and h["time_to_train_days"] is None and h["power_mw"] is None
    flops = hieropt.load_instance(NVL).workload.training.model_flops_per_iteration
    assert h["mfu"] == pytest.approx(
        flops / (2304 * 2.5e15 * h["iteration_time_ns"] * 1e-9), rel=1e-12
    )
    missing = {m["key"]: m["why"] for m in data["missing"]}
    assert "[cluster]" in missing["min_run_cost"]
    assert data["pareto"]["axes"] == "network"
    page = (out / "report.html").read_text()
    assert "network capex ($) against iteration time (ms): no $ per run known" in page
    assert any("no [cluster] section" in u for u in data["unknown"])


def test_codesign_page(codesign_json, codesigned):
    """The co-design alternatives are the ranked rows they name; the search's best has the figures
    `codesign` printed for it (another code path: the search's own run figures)."""
    _, data = codesigned
    result = json.loads(codesign_json.read_text())
    rows = result["ranking"]
    alts = {a["key"]: a for a in data["alternatives"]}
    assert alts["fastest"]["iteration_time_ns"] == min(r["iteration_time_ns"] for r in rows)
    # the cheapest of the designs the page considers: the ranked rows and the knee's design
    # (solved for its least cost, cheaper than every row): never dearer than the knee
    assert alts["cheapest"]["network_cost_usd"] == min(
        alts["knee"]["network_cost_usd"], min(r["network_cost_usd"] for r in rows))
    assert alts["cheapest"]["network_cost_usd"] == pytest.approx(47_754_129, abs=1)
    assert "and the knee's network solved for its least cost" in alts["cheapest"]["how"]
    within = [
        r for r in rows if r["iteration_time_ns"] <= alts["fastest"]["iteration_time_ns"] * 1.01
    ]
    # the knee: each candidate within 1 % solved for its cheapest network at 1.01 x the fastest
    # time's bound, hieropt solve's knee of the fastest candidate: $47.8M at 1 % slower, where the
    # rows' own designs (each at its optimum) offer no less than $156.8M
    assert min(r["network_cost_usd"] for r in within) == pytest.approx(156_806_874, abs=1)
    assert alts["knee"]["network_cost_usd"] == pytest.approx(47_754_129, abs=1)
    assert alts["knee"]["iteration_time_ns"] <= alts["fastest"]["iteration_time_ns"] * 1.01
    best = alts["best"]
    for key in ("mfu", "tokens_per_s", "time_to_train_days"):
        assert best[key] == pytest.approx(result["run"][key], rel=1e-12)
    assert best["plan"] == result["best"]["plan"] and best["npus"] == 2304
    assert data["recommended"] == "knee"  # no [cluster] in the space
    assert data["pareto"]["axes"] == "network"
    assert {m["key"] for m in data["missing"]} == {"min_run_cost", "fixed_plan", "catalog"}


def test_codesign_json_alone_and_a_fixed_plan(tmp_path, codesign_json):
    """A result without its space (``space_definition``, written by an older version) and no
    --space: only the best row's figures are known (from the JSON); a second result is the
    fixed-plan column (its best row). (Every ranked row of this space has the same network at
    the bandwidth caps, so the fastest, cheapest and knee are the best; a shortlist of another plan
    is the column that differs.)"""
    result = json.loads(codesign_json.read_text())
    del result["space_definition"]
    other = next(r for r in result["ranking"] if r["plan"] != result["best"]["plan"])
    path = tmp_path / "with-catalog.json"
    path.write_text(json.dumps({**result, "provisioned": [
        {"id": other["id"], "bom_rank": 1, "iteration_time_ns": other["iteration_time_ns"],
         "network_cost_usd": other["network_cost_usd"], "power_w": 2e5, "bw_gbps": other["bw_gbps"],
         "parts": ["part A"]}]}))
    out = tmp_path / "out"
    r = run("report", path, "--fixed-plan", codesign_json, "-o", out, "--json", "-")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    alts = {a["key"]: a for a in data["alternatives"]}
    assert alts["best"]["mfu"] == result["run"]["mfu"]
    assert alts["fixed_plan"]["iteration_time_ns"] == result["best"]["iteration_time_ns"]
    others = [
        a
        for k, a in alts.items()
        if a["plan"] != result["best"]["plan"] or a["fabric"] != alts["best"]["fabric"]
    ]
    assert others and all(a["mfu"] is None for a in others)
    assert_page_equals_json(out, data)


@pytest.mark.heavy
def test_codesign_space_is_searched(tmp_path, codesign_json):
    """A space file is searched here: the same best as `codesign` (58.1 % MFU with the A100's
    catalog default fitted on one node of measured runs), the same figures."""
    out = tmp_path / "out"
    r = run("report", SPACE, "--tokens", "300e9", "-o", out, "--json", "-")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    run_figures = json.loads(codesign_json.read_text())["run"]
    assert data["kind"] == "codesign" and alt(data, "best")["mfu"] == pytest.approx(
        run_figures["mfu"], rel=1e-12
    )
    # (TP 8 x PP 2 x DP 144, ZeRO 1, with bf16's FP32 gradients and its all-gather after the
    # optimizer step; 0.583 with that on the overlapped gradient stream; 0.593 for TP 8 x DP 288,
    # ZeRO 2, with 2-byte ones)
    assert run_figures["mfu"] == pytest.approx(0.581, abs=5e-4)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["--within", "100"],
            "--within: '100' is not between 0 and 100 %; fix: write e.g. --within 1% or --within "
            "1 (both 1 %; 0 turns it off)",
        ),
        (
            ["--within", "0.05"],
            "--within: 0.05 looks like a fraction (a plain number is a percentage); fix: write "
            "--within 5 for 5 % or --within 0.05% for 0.05 %",
        ),
        (["--within", "x%"], "--within: 'x%' is not a percentage"),
    ],
)
def test_bad_within(tmp_path, args, words):
    r = run("report", NVL, "-o", tmp_path / "out", *args)
    assert r.exit_code == 2
    assert words in error_line(r)


def test_a_json_that_is_not_a_codesign_result(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"a": 1}')
    r = run("report", bad, "-o", tmp_path / "out")
    assert r.exit_code == 2
    assert re.search(
        r"x\.json: not a co-design result .*; fix: give the JSON that 'hieropt codesign",
        error_line(r),
    )


def test_catalog_column_of_an_instance(tmp_path):
    """--catalog: the fastest design in whole parts, priced by its bill of materials, is no faster
    than the continuous fastest (to the gap target 1e-8) and carries its power."""
    r = run(
        "report",
        NVL,
        "--catalog",
        REPO / "catalogs" / "nvl72-ethernet.toml",
        "-o",
        tmp_path / "out",
        "--points",
        "4",
        "--json",
        "-",
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    cat, fast = alt(data, "catalog"), alt(data, "fastest")
    assert cat["iteration_time_ns"] >= fast["iteration_time_ns"] * (1 - 1e-8)
    assert cat["power_w"] > 0 and "nvl72-ethernet" in cat["how"]
    assert "kW" in (tmp_path / "out" / "report.html").read_text()


def _plan_4d_with_domain(tmp_path, scaleup_npus: int):
    """instances/gpt3-plan-4d.toml with its A100's scale-up domain given as ``scaleup_npus`` NPUs
    (the model file's [params.npu] scaleup_npus, in place of the catalog's 8)."""
    model = (REPO / "models" / "gpt3-175b-llm.toml").read_text()
    line = 'accelerator = "A100-SXM-80GB"'
    assert line in model
    model = model.replace(line, f"{line}\nscaleup_npus = {scaleup_npus}")
    (tmp_path / "model.toml").write_text(model)
    text = (REPO / "instances" / "gpt3-plan-4d.toml").read_text()
    assert '"../models/gpt3-175b-llm.toml"' in text
    plan = tmp_path / "plan.toml"
    plan.write_text(text.replace('"../models/gpt3-175b-llm.toml"', '"model.toml"'))
    return plan


@pytest.mark.heavy
def test_with_a_catalog_the_recommendation_is_a_design_the_catalog_can_build(tmp_path):
    """--catalog on gpt3-plan-4d, its A100 taken as one scale-up domain of all 4,096 NPUs (a
    what-if: LIBRA's 4-D network of chiplets and packages): the continuous knee (7.7 GB/s
    scale-out, $8.0M) is no catalog design (the smallest scale-out part is 25 GB/s per NPU); the
    page recommends the knee in whole parts, the design `hieropt provision --within 1%` prints.
    With link ports one per peer (pairs on the rings, sevens on the FullyConnected 8) 38 designs
    meet sum(bw) == 500; by the evaluator the fastest of them is also the cheapest: 10 x d2d-25
    (250), 7 x serdes-200G (175), 2 x node-link-200G (50) and one 800G NIC per node of 4 (25),
    4,096 x (10 x 60 + 7 x 160 + 2 x 350) + 1,024 x 2,600 + 128 x 45,000 = $18,334,720: the knee
    in whole parts is the catalog's fastest."""
    plan = _plan_4d_with_domain(tmp_path, 4096)
    catalog = REPO / "catalogs" / "example-4d.toml"
    r = run("report", plan, "--catalog", catalog, "-o", tmp_path / "out", "--points", "3",
            "--json", "-")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["recommended"] == "catalog_knee"
    assert data["why"].startswith("the cheapest design in the catalog's whole parts within 1 %")
    knee, fastest = alt(data, "catalog_knee"), alt(data, "catalog")
    assert knee["network_cost_usd"] == pytest.approx(18_334_720, abs=1)
    assert knee["iteration_time_ns"] == pytest.approx(fastest["iteration_time_ns"], rel=1e-9)
    assert fastest["network_cost_usd"] == pytest.approx(18_334_720, abs=1)
    p = run("provision", plan, "--catalog", catalog, "--within", "1%", "--json", "-")
    assert p.exit_code == 0, p.output
    assert json.loads(p.stdout)["knee"]["knee_usd"] == pytest.approx(knee["network_cost_usd"],
                                                                     rel=1e-12)


@pytest.mark.heavy
def test_a_catalog_buys_no_more_than_the_accelerator_feeds(tmp_path):
    """The shipped gpt3-plan-4d as it is: an A100 sends at most 32 GB/s through its NIC past its
    8-NPU domain, so dimensions 1-3 (32, 128 and 4,096 NPUs) get at most 32 GB/s of whole parts;
    the FullyConnected 8 of dimension 1 takes its SerDes one per peer, 7 at least, 7 x 12.5 = 87.5
    GB/s and more: no part serves it, so no whole-parts column, its reason naming the bound; the
    continuous knee is recommended."""
    r = run("report", REPO / "instances" / "gpt3-plan-4d.toml", "--catalog",
            REPO / "catalogs" / "example-4d.toml", "-o", tmp_path / "out", "--points", "3",
            "--json", "-")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["recommended"] == "knee"
    why = next(m["why"] for m in data["missing"] if m["key"] == "catalog")
    assert ("'pkg-serdes-100G' 7 units (one per peer) give 87.5 GB/s per NPU on dimension 1, "
            "above the instance's bound bw[1] <= 32") in why
    assert ("(with dimensions 1, 2, 3 bought at most 32 GB/s per NPU: beyond the "
            "A100-SXM-80GB's scale-up domain of 8 (catalog scaleup_npus of the A100-SXM-80GB) one "
            "A100-SXM-80GB sends at most 32 GB/s through its NIC (catalog nic_gbps of the "
            "A100-SXM-80GB))") in why


def test_codesign_catalog_shortlist_is_the_catalog_column(tmp_path, codesign_json):
    """The first of a `codesign --catalog` shortlist is the whole-parts column: its catalog cost,
    time and power, with its row's plan (and so its row's MFU at the shortlist's time)."""
    data = json.loads(codesign_json.read_text())
    best_plan = data["best"]["plan"]  # another placement of the best plan: MFU scales as 1 / time
    row = next(r for r in data["ranking"][1:]
               if r["plan"] == best_plan and r["id"] != data["best"]["id"])
    data["provisioned"] = [
        {
            "id": row["id"],
            "bom_rank": 1,
            "iteration_time_ns": row["iteration_time_ns"] * 1.5,
            "network_cost_usd": 1e6,
            "power_w": 2e5,
            "bw_gbps": [100.0, 50.0],
            "parts": ["part A", "part B"],
        }
    ]
    path = tmp_path / "with-catalog.json"
    path.write_text(json.dumps(data))
    r = run("report", path, "--space", SPACE, "-o", tmp_path / "out", "--json", "-")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    cat = alt(out, "catalog")
    assert (cat["iteration_time_ns"], cat["network_cost_usd"], cat["power_w"]) == (
        row["iteration_time_ns"] * 1.5,
        1e6,
        2e5,
    )
    assert (
        cat["plan"] == row["plan"]
        and cat["bw_gbps"] == [100.0, 50.0]
        and "part A; part B" in cat["how"]
    )
    best = alt(out, "best")
    assert cat["mfu"] == pytest.approx(
        best["mfu"] * best["iteration_time_ns"] / cat["iteration_time_ns"], rel=1e-12
    )


def test_without_an_upper_limit_the_fastest_and_the_knee_are_missing(tmp_path):
    """No upper limit on bandwidth: no fastest design and no knee (each listed with the solver's
    reason); the performance-per-cost optimum is recommended."""
    from hieropt.report.committee_answers import procurement_committee

    inst = hieropt.load_instance(NVL)
    inst = inst.model_copy(
        update={"bounds": tuple(b.model_copy(update={"upper_gbps": None}) for b in inst.bounds)}
    )
    c = procurement_committee(inst, hieropt.pareto(inst, points=4), 0.01)
    missing = {m.key: m.why for m in c.missing}
    assert missing["fastest"].startswith("unbounded: ") and "no fastest design" in missing["knee"]
    assert c.recommended == "performance_per_cost" and "nor the fastest design" in c.why
    ppc = hieropt.solve(inst, "performance_per_cost")
    assert c.recommendation.iteration_time_ns == pytest.approx(ppc.iteration_time_ns, rel=1e-12)
