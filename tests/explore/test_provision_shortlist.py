"""``explore --catalog``: the shortlisted shapes provisioned with whole parts and ranked by the
integer design."""

from __future__ import annotations

import pytest

import hieropt
from hieropt.studies.explore import build_instance, explore, load_space, provision_shortlist

from .util import CATALOG, write_space


def test_shortlist_matches_direct_provisioning(tmp_path):
    space = load_space(write_space(tmp_path))
    result = explore(space, workers=1)
    cat = tmp_path / "cat.toml"
    cat.write_text(CATALOG, encoding="utf-8")
    rows = provision_shortlist(result, cat, top=4)
    assert len(rows) == 4
    ranked = [r for r in rows if r["bom_rank"] is not None]
    assert [r["bom_rank"] for r in ranked] == list(range(1, len(ranked) + 1))
    assert [r["objective_value"] for r in ranked] == sorted(r["objective_value"] for r in ranked)
    cands = {c.id: c for c in result.enumeration.candidates}
    # each row is the exact integer design of its shape, as a direct provision() gives it
    for r in ranked:
        inst = build_instance(result.space, cands[r["shape_id"]])
        p = hieropt.provision(inst, cat, compare=False)
        assert r["objective_value"] == pytest.approx(p.objective_value, rel=1e-12)
        assert r["network_cost_usd"] == pytest.approx(p.network_cost_usd) and r["gap"] <= 1e-9
        # the integer design is never faster than the shape's continuous optimum
        assert r["iteration_time_ns"] >= r["continuous_objective"] * (1 - 1e-9)
    with pytest.raises(hieropt.InputError, match="--provision-top"):
        provision_shortlist(result, cat, top=0)


def test_explore_rejects_min_max_regret(tmp_path):
    with pytest.raises(hieropt.InputError, match="explore does not rank shapes by min_max_regret"):
        explore(load_space(write_space(tmp_path)), objective="min_max_regret", workers=1)


def test_a_shape_no_part_serves_names_every_part(tmp_path):
    """A 2-dimension shape under 'sum(bw) == 500' where every class reaches at most 200 GB/s per
    NPU: the row said 'catalog: classes.A.links[0] ('a25'): with this part on dimension 0 ...
    reaches at most 400', blaming the first part of the class where neither serves (and 'catalog',
    not the catalog file). Now it says no choice of parts serves the shape and what every part
    reaches; 3-dimension shapes (600 GB/s reachable) are provisioned."""
    space = load_space(write_space(tmp_path))
    result = explore(space, workers=1)
    cat = tmp_path / "cat.toml"
    cat.write_text(
        CATALOG.replace(
            'links = [{ name = "a25", gbps = 25, usd = 40, max_per_npu = 16 }]',
            'links = [{ name = "a25", gbps = 25, usd = 40, max_per_npu = 8 },\n'
            '         { name = "a50", gbps = 50, usd = 70, max_per_npu = 4 }]',
        ),
        encoding="utf-8",
    )
    rows = provision_shortlist(result, cat, top=len(result.ranking))
    cands = {c.id: c for c in result.enumeration.candidates}
    failed = [r for r in rows if r["status"] == "not provisioned"]
    assert failed and all(len(cands[r["shape_id"]].dims) == 2 for r in failed)
    assert all(len(cands[r["shape_id"]].dims) == 3 for r in rows if r["bom_rank"] is not None)
    assert {r["message"] for r in failed} == {
        f"{cat}: classes: no choice of parts serves this network: the left-hand side of "
        "constraint 'sum(bw) == 500' "
        "reaches at most 400 with any of them (dimension 0 (class A): at most 'a25' 8 x 25 "
        "GB/s = 200, 'a50' 4 x 50 "
        "GB/s = 200 GB/s per NPU; dimension 1 (class B): at most 'nic50' 4 x 50 GB/s = 200 "
        "GB/s per NPU); fix: raise "
        "the unit limits (max_per_npu / max_per_node) or add faster parts, or relax the constraint"
    }


def test_a_catalog_without_the_space_classes_is_refused_before_the_sweep(tmp_path):
    """explore --catalog with a catalog for other cost classes swept every shape and then ended
    with exit 3; the catalog is bad input (exit 2), told before the sweep. The small space's
    level b (class B, exactly one dimension) is in every shape; level a (class A) need not be
    (min_dims 0), so each shape's provisioning would tell it."""
    from pathlib import Path

    from tests.cli.util import error_line, run

    from .util import space_text

    space = tmp_path / "s.toml"
    space.write_text(space_text())
    catalog = Path(__file__).resolve().parents[2] / "catalogs" / "example-4d.toml"
    r = run("explore", space, "--workers", "1", "--catalog", catalog)
    assert r.exit_code == 2, r.output
    assert error_line(r) == (
        f"error: {catalog}: classes.B: missing: the space's every network uses cost class 'B' "
        "but the catalog has parts for InterChiplet, InterNode, InterPackage, InterPod only; "
        "fix: add [classes.B] with their parts, or give the catalog of this space's cost "
        "classes"
    )
