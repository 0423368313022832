"""One design provisioned from a catalog has one set of run figures: `codesign --catalog` and
`explore --catalog` count the bill of materials' power in the run's MW, MWh and $ as `hieropt
provision` does (hieropt.model.run.provisioned_run), and a written co-design instance carries the
space's token budget and [cluster], so `provision` of that file gives the same figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hieropt
from hieropt.model.run import provisioned_run
from tests.buyer.llama_space import CATALOG, llama_space_file
from tests.cli.util import error_line, run

REPO = Path(__file__).resolve().parents[2]


def test_codesign_catalog_and_provision_agree_to_the_watt_and_the_dollar(tmp_path):
    space = llama_space_file(tmp_path)
    r = run("codesign", space, "--objective", "performance", "--workers", "1", "--catalog",
            CATALOG, "--provision-top", "1", "--top", "1", "--write-instances", tmp_path / "inst",
            "--json", tmp_path / "codesign.json")
    assert r.exit_code == 0, r.output
    got = json.loads((tmp_path / "codesign.json").read_text())["provisioned"][0]
    # one 400G NIC per H100 ($12,000, 25 W, a $700 9 W optic) on 8 QM9700 ($35,000, 750 W) with
    # 128 twin-port optics ($1,250, 17 W): 256 x 12,700 + 8 x 35,000 + 128 x 1,250 = $3,691,200
    # and 256 x 34 + 8 x 750 + 128 x 17 = 16,880 W
    assert got["bom_rank"] == 1 and got["power_w"] == pytest.approx(16880, abs=0.5)
    assert got["network_cost_usd"] == pytest.approx(3691200, abs=0.5)
    assert got["bw_gbps"] == [450.0, 50.0]
    # 2e12 / (512 x 8,192) iterations of 17,536.46 ms at (256 x 33,750 + 3,691,200) / 43,800 +
    # 11.7e6 x 0.34328 MW / 131,400 + 0.34328 x 1,250 kW x 0.0826 = $347.54 per hour
    assert got["run"]["run_cost_usd"] == pytest.approx(807271, abs=1)  # (as docs/buyer.md says)
    assert got["nic_bounds"] == [
        "dimension 1 (Switch 32, ScaleOut) bought at most 50 GB/s per NPU (no upper_gbps in the "
        "instance's bounds): it reaches 256 NPUs, beyond the H100-SXM's scale-up domain of 8 "
        "(catalog scaleup_npus of the H100-SXM), and past it one H100-SXM sends at most 50 GB/s "
        "through its NIC (catalog nic_gbps of the H100-SXM); for more, name another accelerator "
        "([params.npu] accelerator), or give the model file's [params.npu] nic_gbps (a faster "
        "host link) or scaleup_npus (a larger scale-up domain)"]
    assert f"note: bom rank 1: {got['nic_bounds'][0]}" in r.stdout
    # facility MW = (256 x 700 W + 32 servers x 4,600 W + the bill's W) x PUE 1.25
    mw = (256 * 700 + 32 * 4600 + got["power_w"]) * 1.25 / 1e6
    assert got["run"]["power_mw"] == pytest.approx(mw, rel=1e-12)
    assert got["run"]["energy_mwh"] == pytest.approx(
        mw * got["run"]["time_to_train_days"] * 24, rel=1e-12)
    assert got["network_power"].startswith(
        f"network power: the bill of materials' {got['power_w']:,.0f} W")
    assert "MW, MWh and $ per run count each design's bill of materials' power" in r.stdout

    path = next((tmp_path / "inst").glob("*.toml"))
    inst = hieropt.load_instance(path)
    assert inst.cluster == hieropt.load_codesign(space).cluster and inst.tokens == 2e12
    p = run("provision", path, "--catalog", CATALOG, "--no-compare", "--json", "-")
    assert p.exit_code == 0, p.output
    want = json.loads(p.stdout)
    assert want["power_w"] == got["power_w"] and want["network_cost_usd"] == got[
        "network_cost_usd"]
    assert want["run"]["power_mw"] * 1e6 == pytest.approx(got["run"]["power_mw"] * 1e6, abs=1)
    for key in ("run_cost_usd", "cost_per_hour_usd", "capex_usd"):
        assert want["run"][key] == pytest.approx(got["run"][key], abs=1), key
    assert want["run"]["energy_mwh"] == pytest.approx(got["run"]["energy_mwh"], rel=1e-12)
    assert got["network_power"] in want["notes"]
    assert got["nic_bounds"][0] in want["notes"]


def test_explore_shortlist_runs_are_provisions(tmp_path):
    """A shape space has no [cluster] or tokens: its shortlist's run figures are those of
    provisioned_run on the shape's instance with the catalog's design, and say what is unknown."""
    from hieropt.studies.explore import build_instance, explore, load_space, provision_shortlist
    from tests.explore.util import CATALOG as SMALL
    from tests.explore.util import write_space

    result = explore(load_space(write_space(tmp_path)), workers=1)
    cat = tmp_path / "cat.toml"
    cat.write_text(SMALL, encoding="utf-8")
    cands = {c.id: c for c in result.enumeration.candidates}
    rows = [r for r in provision_shortlist(result, cat, top=2) if r["bom_rank"] is not None]
    assert rows
    for r in rows:
        inst = build_instance(result.space, cands[r["shape_id"]])
        p = hieropt.provision(inst, cat, compare=False)
        fig, line = provisioned_run(inst, p.iteration_time_ns, p.network_cost_usd, p.power_w)
        assert r["run"] == fig.to_dict() and r["network_power"] == line is None
        assert r["run"]["network_capex_usd"] == r["network_cost_usd"]
        assert r["run"]["power_mw"] is None
        assert "power, capex and $: no [cluster] section" in r["run"]["unknown"]


def _capped_codesign(tmp_path: Path, cap_mw: float, *options: str, code: int = 0) -> list[dict]:
    """The provisioned shortlist of :func:`llama_space_file` with a site power cap of ``cap_mw`` MW
    (the command's exit code asserted to be ``code``), on an H100 whose host link feeds 200 GB/s
    (a what-if: the catalog's 50 leaves one design, which no cap between its MW and the fastest's
    would bind)."""
    space = llama_space_file(tmp_path, nic_gbps=200)
    text = space.read_text()
    space.write_text(text.replace("[cluster]\n", f"[cluster]\nmax_power_mw = {cap_mw}\n"))
    r = run("codesign", space, *options, "--workers", "1", "--catalog", CATALOG,
            "--provision-top", "1", "--top", "1", "--json", tmp_path / "codesign.json")
    assert r.exit_code == code, r.output
    data = json.loads((tmp_path / "codesign.json").read_text())
    if code == 3:  # every shortlisted design failed: one error line naming the first reason
        assert data["provision_error"] == error_line(r).removeprefix("error: ")
        assert data["provision_error"].startswith(
            "no shortlisted design could be provisioned from the catalog: ")
        # (the exit's cause in status, as every exit 3; the search itself found its optimum)
        assert (data["status"], data["search_status"]) == ("infeasible", "optimal")
    return data["provisioned"]


@pytest.mark.parametrize(("cap_mw", "bom_w"), [(0.5, 51328), (0.45, 23920)])
def test_codesign_catalog_keeps_the_site_power_cap(tmp_path, cap_mw, bom_w):
    # the fastest design's parts draw 89,248 W: (326,400 + 89,248) x 1.25 = 0.51956 MW. Under a
    # cap the fastest design that fits: (256 x 700 + 32 x 4,600 + its W) x 1.25 <= the cap
    (got,) = _capped_codesign(tmp_path, cap_mw, "--objective", "performance")
    assert got["status"] == "optimal" and got["power_w"] == pytest.approx(bom_w, abs=0.5)
    assert got["run"]["power_mw"] == pytest.approx((326400 + bom_w) * 1.25 / 1e6, rel=1e-12)
    assert got["run"]["power_mw"] <= cap_mw
    assert ("past it one H100-SXM sends at most 200 GB/s through its NIC ([params.npu] "
            "nic_gbps of the model file, given in place of the catalog's)") in got["nic_bounds"][0]


def test_codesign_catalog_says_when_no_design_fits_the_site_power_cap(tmp_path):
    (got,) = _capped_codesign(tmp_path, 0.41, "--objective", "performance", code=3)
    assert got["status"] == "not provisioned" and got["bom_rank"] is None
    # the lowest-power design's parts draw 16,880 W: (326,400 + 16,880) x 1.25 = 429,100 W
    assert got["message"] == (
        "infeasible: the site's power cap of 0.41 MW: with the lowest-power design from the "
        "catalog that meets the other limits (its parts draw 16,880 W) the cluster draws 0.4291 MW "
        "with PUE; fewer NPUs, lower-power parts or a higher cap")


def test_codesign_catalog_on_a_min_run_cost_space_provisions_the_fastest(tmp_path):
    """The space's objective is min_run_cost, which integer provisioning has not: each shortlisted
    candidate gets its fastest whole-part design (as --objective performance gives it, $807,271
    per run for the best) and the rows are ranked by $ per run, which the output says."""
    space = llama_space_file(tmp_path)
    assert hieropt.load_codesign(space).objective == "min_run_cost"
    r = run("codesign", space, "--workers", "1", "--catalog", CATALOG, "--provision-top", "2",
            "--top", "2", "--json", tmp_path / "codesign.json")
    assert r.exit_code == 0, r.output
    rows = json.loads((tmp_path / "codesign.json").read_text())["provisioned"]
    assert [row["bom_rank"] for row in rows] == [1, 2]
    assert all(row["status"] == "optimal" and row["provisioned_for"] == "performance"
               and row["objective_unit"] == "ns" for row in rows)
    usd = [row["run"]["run_cost_usd"] for row in rows]
    assert usd == sorted(usd) and usd[0] == pytest.approx(807271, abs=1)
    note = ("provisioned for performance: integer provisioning has no min_run_cost objective; each "
            "row is the fastest whole-part design (the cheapest of that time), ranked by its $ per "
            "run")
    assert rows[0]["note"] == note and f"note: {note}" in r.stdout
