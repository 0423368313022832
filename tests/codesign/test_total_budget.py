"""``codesign --total-budget`` (a space's ``max_total_capex_usd``): each cluster size's network gets
what its accelerators, servers, racks and facility leave. On Llama 3 405B's space with Meta's
cluster figures (instances/llama3-405b-16k-cluster.toml: $33,750 per H100 with its server share,
700 W per H100 and 4,600 W per 8-GPU server, $11.7M per MW of critical load), 8,192 H100s cost
8,192 x $33,750 = $276,480,000 plus (8,192 x 700 + 1,024 x 4,600) W = 10.4448 MW x $11.7M =
$122,204,160: $398,684,160 without their network; 16,384 twice that."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cases import REPO
from tests.cli.util import error_line, run

CLUSTER = """
[cluster]
accelerator_usd = 33750
accelerator_w = 700
npus_per_server = 8
server_w = 4600
facility_usd_per_mw = 11.7e6
pue = 1.25
electricity_usd_per_kwh = 0.0826
amortisation_years = 5
facility_amortisation_years = 15
"""
CAPEX_8192 = 8192 * 33750 + (8192 * 700 + 1024 * 4600) / 1e6 * 11.7e6


def _space(tmp_path: Path, cluster: bool = True) -> Path:
    """spaces/codesign-llama3-405b.toml (8,192, 16,384 and 32,768 H100s) with a token budget and
    (``cluster``) the cluster's figures."""
    text = (REPO / "spaces" / "codesign-llama3-405b.toml").read_text(encoding="utf-8")
    text = text.replace('"../models/', f'"{REPO}/models/')
    at = text.index("[plans]")
    text = text[:at] + "tokens = 15.6e12\n\n" + text[at:] + (CLUSTER if cluster else "")
    p = tmp_path / "space.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_each_size_gets_what_its_cluster_leaves(tmp_path):
    from hieropt.errors import NoSolutionError
    from hieropt.io.codesign import load_codesign
    from hieropt.studies.codesign.solve import cluster_capex_usd, network_cap
    from hieropt.workloads.llm.space import CodesignSpace

    space = load_codesign(_space(tmp_path))
    assert CAPEX_8192 == pytest.approx(398_684_160)
    assert cluster_capex_usd(space, 8192) == pytest.approx(CAPEX_8192, rel=1e-12)
    assert cluster_capex_usd(space, 16384) == pytest.approx(2 * CAPEX_8192, rel=1e-12)
    capped = CodesignSpace(**{**dict(space), "max_total_capex_usd": 700e6})
    assert network_cap(capped, 8192) == pytest.approx(700e6 - CAPEX_8192, rel=1e-12)
    both = CodesignSpace(**{**dict(capped), "max_network_cost_usd": 100e6})
    assert network_cap(both, 8192) == 100e6  # (the tighter)
    with pytest.raises(NoSolutionError, match="16,384 NPUs cost \\$797,368,320 without their"):
        network_cap(capped, 16384)
    assert network_cap(space, 16384) is None


@pytest.mark.heavy
def test_codesign_buys_the_size_the_total_budget_affords(tmp_path):
    """$700M affords 8,192 H100s and a $301M network (their best needs $171M: it does not bind),
    not 16,384 ($797M without a network): the answer buys 8,192, its notes say so per size."""
    out = tmp_path / "o.json"
    r = run("codesign", _space(tmp_path), "--total-budget", "700M", "--json", out)
    assert r.exit_code == 0, r.output
    assert "(buy 8,192 NPUs)" in r.stdout
    notes = [
        "total budget $700M: 8,192 NPUs cost $399M without their network, which gets $301M",
        "total budget $700M: 16,384 NPUs cost $797M without their network, all of it or more: "
        "that size is infeasible",
        "total budget $700M: 32,768 NPUs cost $1.59B without their network, all of it or more: "
        "that size is infeasible",
    ]
    for n in notes:
        assert f"note: {n}" in r.stdout
    d = json.loads(out.read_text())
    assert d["notes"][:3] == notes
    assert d["best"]["npus"] == 8192 and d["best"]["network_cost_usd"] < 700e6 - CAPEX_8192


def test_a_total_budget_needs_the_clusters_capex_and_covers_a_size(tmp_path):
    r = run("codesign", _space(tmp_path, cluster=False), "--total-budget", "700M")
    assert r.exit_code == 2
    assert error_line(r).startswith("error: --total-budget: ")
    assert "has no [cluster]" in error_line(r)
    rented = tmp_path / "rented.toml"  # (an NPU-hour rate: no capex to cap)
    text = _space(tmp_path).read_text(encoding="utf-8")
    rented.write_text(text[:text.index("[cluster]")] + "[cluster]\nusd_per_npu_hour = 2.5\n")
    r = run("codesign", rented, "--total-budget", "700M")
    assert r.exit_code == 2
    assert error_line(r).startswith(f"error: {rented}: max_total_capex_usd: a cap on the whole "
                                    "cluster's capex needs the cluster's capex; fix: give")
    r = run("codesign", _space(tmp_path), "--total-budget", "300M")
    assert r.exit_code == 3
    assert "8,192 NPUs cost $398,684,160 (accelerators, servers, racks and facility)" in r.output
    r = run("codesign", _space(tmp_path), "--total-budget", "5")
    assert r.exit_code == 2
    assert "did you mean 5M? write --total-budget 5M" in error_line(r)
