"""Parts no design of the instance can use are left out of a catalog with a note, and the answer is
the catalog's without them; a dimension left with no part is refused, naming the file, the part (or
the class of several) and the fix.

Hand-made cases (Ring dimensions of 2 NPUs, links in GB/s):

- bounds 35 <= bw[0] <= 50: 'fast' (one unit 60 GB/s) gives more than the bound allows, 'slow'
  (2 x 4 = 8 GB/s) never reaches it, 'gap' (30 GB/s, 2 units 60) has no unit count in between;
- constraints bw[0] + bw[1] <= 100 and bw[1] >= bw[2]: with dimension 0 fixed at 60 GB/s, 'y50'
  (50 GB/s) breaks the first whatever is chosen, and once it is out dimension 1 reaches at most
  10 x 3 = 30 GB/s, so 'z40' (40 GB/s) breaks the second: left out on the second pass.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import hieropt
from hieropt.cli import app
from hieropt.io.catalog import checked_catalog, read_catalog

from .util import load

REPO = Path(__file__).resolve().parents[2]
LLAMA3 = REPO / "instances" / "llama3-405b-16k-cluster.toml"

runner = CliRunner(
    env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1", "COLUMNS": "200"}
)

TIMES = ("milp_seconds", "solve_seconds")
"""JSON fields that measure the run, not the answer."""

THREE = (
    [("Ring", 2, "X"), ("Ring", 2, "Y"), ("Ring", 2, "Z")],
    {"forward": [2, 1, 1], "input_grad": [1, 2, 1], "weight_grad": [1, 1, 2]},
    [(1e6, "ALLREDUCE", 1e9, 0, "ALLREDUCE", 1e9, 0, "ALLREDUCE", 1e9)],
)


def provision_json(instance: Path, catalog: Path, tmp_path: Path, *args: str) -> tuple[dict, str]:
    """``hieropt provision`` with ``--json``: the answer without its timings, and stderr."""
    out = tmp_path / f"{catalog.stem}.json"
    r = runner.invoke(app, ["provision", str(instance), "--catalog", str(catalog), "--json",
                            str(out), *args])
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if k not in TIMES}, r.stderr


@pytest.mark.parametrize(
    ("name", "nic"),
    [("nvl72-ethernet", "ConnectX-8 800GbE SuperNIC"), ("nvl72-infiniband", "ConnectX-8 800G XDR")],
)
def test_shipped_nvl72_catalogs_on_the_llama3_cluster(tmp_path: Path, name: str, nic: str):
    """The ConnectX-8 (800 Gb/s = 100 GB/s per unit) is above the instance's scale-out bound
    bw[1] <= 50: it is left out with a note (the whole catalog was refused), and the answer equals
    the catalog's without it (written as YAML): one 400 Gb/s ConnectX-7 per GPU, 50 GB/s."""
    path = REPO / "catalogs" / f"{name}.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    nics = data["classes"]["ScaleOut"]["nics"]
    assert nics[1]["name"] == nic and nics[1]["gbit_per_s"] == 800
    del nics[1]
    without = tmp_path / f"{name}.yaml"
    without.write_text(yaml.safe_dump(data), encoding="utf-8")
    args = ("--objective", "performance", "--no-compare")
    got, err = provision_json(LLAMA3, path, tmp_path, *args)
    assert err == (
        f"note: {path}: classes.ScaleOut.nics[1] ('{nic}'): one unit gives 100 GB/s per NPU on "
        "dimension 1, above the instance's bound bw[1] <= 50: left out (other parts serve the "
        "network)\n" + _nvlink5_note(path)
    )
    want, err = provision_json(LLAMA3, without, tmp_path, *args)
    assert err == _nvlink5_note(without)
    assert got == want
    assert got["bw_gbps_per_dim"] == [450.0, 50.0]
    assert got["design"][1]["part"].startswith("ConnectX-7 400G")


def _nvlink5_note(path: Path) -> str:
    """The note on the NVL72 catalogs' NVLink 5 parts under the llama3 cluster's H100 (NVLink 4):
    18 links of 50 GB/s = 900 GB/s per NPU, 2 x its 450 GB/s scale-up."""
    return (
        f"note: {path}: classes.NVLink.nics[0] ('NVLink 5 link (GPU side)'): 18 units per NPU "
        "give 900 GB/s per NPU, 2 x the H100-SXM's scale-up of 450 GB/s per direction (source: "
        "catalog scaleup_gbps of the H100-SXM): parts of a faster scale-up than the accelerator "
        "has; the bill of materials counts this class's parts as the catalog gives them (use a "
        "catalog of the H100-SXM's own scale-up parts, or read the bill as a what-if)\n")


def test_ethernet_bill_by_hand(tmp_path: Path):
    """nvl72-ethernet on the llama3 cluster: 16,384 ConnectX-7 at $12,000, 384 SN5600 at
    $200,000, 16,384 NIC optics at $700 and 24,576 twin-port optics at $1,250."""
    got, _ = provision_json(LLAMA3, REPO / "catalogs" / "nvl72-ethernet.toml", tmp_path,
                            "--objective", "performance", "--no-compare")
    assert got["network_cost_usd"] == (16_384 * 12_000 + 384 * 200_000 + 16_384 * 700
                                       + 24_576 * 1_250) == 315_596_800


BOUNDED = """\
[classes.X]
links = [
  { name = "fast", gbps = 60, usd = 1, max_per_npu = 2 },
  { name = "ok", gbps = 10, usd = 1, max_per_npu = 4 },
  { name = "slow", gbps = 4, usd = 1, max_per_npu = 2 },
  { name = "gap", gbps = 30, usd = 1, max_per_npu = 2 },
]
[classes.Y]
links = [{ name = "y", gbps = 10, usd = 1, max_per_npu = 1 }]
[classes.Z]
links = [{ name = "z", gbps = 10, usd = 1, max_per_npu = 1 }]
"""


def test_bounds_leave_out_parts_with_their_reason(tmp_path: Path):
    inst, path = load(tmp_path, *THREE, BOUNDED,
                      bounds=[{"dim": 0, "lower_gbps": 35, "upper_gbps": 50}])
    usable, notes = checked_catalog(read_catalog(path), inst, path)
    assert [p.name for p in usable.classes["X"].links] == ["ok"]
    assert notes == (
        f"{path}: classes.X.links[0] ('fast'): one unit gives 60 GB/s per NPU on dimension 0, "
        "above the instance's bound bw[0] <= 50: left out (other parts serve the network)",
        f"{path}: classes.X.links[2] ('slow'): reaches at most 2 x 4 GB/s = 8 GB/s per NPU on "
        "dimension 0, below the instance's bound bw[0] >= 35: left out (other parts serve the "
        "network)",
        f"{path}: classes.X.links[3] ('gap'): no unit count fits the instance's bounds 35 <= "
        "bw[0] <= 50 on dimension 0: 1 give 30 and 2 give 60 GB/s per NPU: left out (other "
        "parts serve the network)",
    )
    # the answer: 4 x 'ok' = 40 GB/s on dimension 0, the most within the bounds
    p = hieropt.provision(inst, path)
    assert [(o.part.name, o.units) for o in p.design] == [("ok", 4), ("y", 1), ("z", 1)]
    assert p.iteration_time_ns == pytest.approx(1e6 + 1e9 / 40 + 1e9 / 10 + 1e9 / 10, rel=1e-12)


def test_a_dimension_left_without_parts_is_refused(tmp_path: Path):
    """Several parts, none fits: the class is named with each part's reason; one part: its own
    field, with a fix that keeps it (not "remove it")."""
    cat = BOUNDED.replace('  { name = "ok", gbps = 10, usd = 1, max_per_npu = 4 },\n', "")
    inst, path = load(tmp_path, *THREE, cat,
                      bounds=[{"dim": 0, "lower_gbps": 35, "upper_gbps": 50}])
    r = runner.invoke(app, ["provision", str(path.parent / "inst.toml"), "--catalog", str(path)])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.strip() == (
        f"error: {path}: classes.X: no part serves dimension 0 (class X): 'fast' one unit gives "
        "60 GB/s per NPU on dimension 0, above the instance's bound bw[0] <= 50; 'slow' reaches "
        "at most 2 x 4 GB/s = 8 GB/s per NPU on dimension 0, below the instance's bound bw[0] >= "
        "35; 'gap' no unit count fits the instance's bounds 35 <= bw[0] <= 50 on dimension 0: 1 "
        "give 30 and 2 give 60 GB/s per NPU; fix: make one of them fit: 'fast': use a slower part "
        "or raise the bound; 'slow': raise max_per_npu to at least 9 or use a faster part; "
        "'gap': use a part whose unit count can fit the bounds, or widen them"
    )
    one = tmp_path / "one.toml"
    head, tail = BOUNDED.split('  { name = "ok"')[0], BOUNDED.split("[classes.Y]")[1]
    one.write_text(head + "]\n[classes.Y]" + tail, encoding="utf-8")
    assert tomllib.loads(one.read_text(encoding="utf-8"))["classes"]["X"]["links"] == [
        {"name": "fast", "gbps": 60, "usd": 1, "max_per_npu": 2}]
    with pytest.raises(hieropt.InputError) as e:
        read_catalog(one, inst)
    assert str(e.value) == (
        f"{one}: classes.X.links[0] ('fast'): one unit gives 60 GB/s per NPU on dimension 0, above "
        "the instance's bound bw[0] <= 50; fix: use a slower part or raise the bound"
    )


CASCADE = """\
[classes.X]
links = [{ name = "x60", gbps = 60, usd = 1, max_per_npu = 1 }]
[classes.Y]
links = [
  { name = "y50", gbps = 50, usd = 1, max_per_npu = 1 },
  { name = "y10", gbps = 10, usd = 1, max_per_npu = 3 },
]
[classes.Z]
links = [
  { name = "z40", gbps = 40, usd = 1, max_per_npu = 1 },
  { name = "z10", gbps = 10, usd = 1, max_per_npu = 1 },
]
"""


def test_constraints_leave_out_parts_until_nothing_changes(tmp_path: Path):
    inst, path = load(tmp_path, *THREE, CASCADE,
                      constraints=["bw[0] + bw[1] <= 100", "bw[1] - bw[2] >= 0"])
    usable, notes = checked_catalog(read_catalog(path), inst, path)
    assert [p.name for p in usable.classes["Y"].links] == ["y10"]
    assert [p.name for p in usable.classes["Z"].links] == ["z10"]
    assert notes == (
        f"{path}: classes.Y.links[0] ('y50'): with this part on dimension 1 (50 to 50 GB/s per "
        "NPU) the left-hand side of constraint 'bw[0] + bw[1] <= 100' is at least 110 whatever "
        "the other dimensions choose: left out (other parts serve the network)",
        f"{path}: classes.Z.links[0] ('z40'): with this part on dimension 2 (40 to 40 GB/s per "
        "NPU) the left-hand side of constraint 'bw[1] - bw[2] >= 0' reaches at most -10 whatever "
        "the other dimensions choose: left out (other parts serve the network)",
    )
    # the answer equals the catalog's without them: 60, 3 x 10 = 30 and 10 GB/s
    p = hieropt.provision(inst, path)
    q = hieropt.provision(inst, usable)
    assert [(o.part.name, o.units) for o in p.design] == [("x60", 1), ("y10", 3), ("z10", 1)]
    assert (p.iteration_time_ns, p.network_cost_usd) == (q.iteration_time_ns, q.network_cost_usd)
    assert p.iteration_time_ns == pytest.approx(1e6 + 1e9 / 60 + 1e9 / 30 + 1e9 / 10, rel=1e-12)


def test_constraint_tolerance_is_the_evaluators():
    """A part is left out only when every design with it breaks a constraint by more than the
    independent evaluator tolerates: a part of a design it accepts is never left out."""
    from hieropt.io.catalog_fit import CON_TOL
    from hieropt.verify import FEAS_TOL

    assert CON_TOL == FEAS_TOL
