"""Whole parts bought for an accelerator stay within what it can feed: a dimension reaching beyond
its scale-up domain (catalog scaleup_npus) gets at most its catalog nic_gbps per NPU, the tighter of
that and the instance's own bound (hieropt.io.nic_bound), with a note; a continuous solve keeps
its answer and its caveat.

The case: Llama 3 70B (TP 8 x PP 4 x DP 32) on 1,024 H100 = 8 NVLink x 128 InfiniBand, the scale-out
dimension bounded at 100 GB/s by the instance, a catalog of 400G ($1,500, 25 W) and 200G ($1,000,
20 W) NICs, at most 2 per NPU, on 64-port 400G switches ($35,000, 750 W). Two 400G NICs per H100
(100 GB/s) is what the instance allows, but an H100 sends at most 50 GB/s through its NIC (its
PCIe Gen5 x16 host link to the fastest NIC on it, catalogs/npus.toml).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.io.nic_bound import nic_bounded, nic_bounds
from hieropt.solvers.provision_milp import catalog_for, instance_options, provision_tradeoff
from tests.provision.llama70b import LLAMA70B_1024

REPO = Path(__file__).resolve().parents[2]

MODEL = LLAMA70B_1024 + """\
[params.npu]
accelerator = "H100-SXM"
hbm_reserve_gib = 4.0
"""

INSTANCE = """\
name = "llama70b-1024-h100"
objective = "performance"
training_loop = "step"
workload = "llama70b.toml"
tokens = 2e12
constraints = []
bounds = [
  {{ dim = 0, lower_gbps = 50, upper_gbps = 450 }},
  {{ dim = 1, lower_gbps = {lower}, upper_gbps = {upper} }},
]
[network]
dims = [
  { block = "Switch", npus = 8, cost_class = "NVLink" },
  { block = "Switch", npus = 128, cost_class = "IB" },
]
[cost.NVLink]
link_usd_per_gbps = 0.01
switch_usd_per_gbps = 0.01
nic_usd_per_gbps = 0.01
[cost.IB]
link_usd_per_gbps = 56.0
switch_usd_per_gbps = 93.75
nic_usd_per_gbps = 240.0
""".replace("{ block", "{{ block").replace('"NVLink" }', '"NVLink" }}').replace('"IB" }', '"IB" }}')

CATALOG = """\
name = "h100-ib"
[classes.NVLink]
nics = [ { name = "NVLink4 x18 (bundled)", gbps = 450, usd = 0, watts = 0, max_per_npu = 1 } ]
switches = [
  { name = "NVSwitch3 (bundled)", radix = 64, usd_per_switch = 0, port_gbps = 450, watts = 0 },
]
[classes.IB]
nics = [
  { name = "CX7 400G", gbit_per_s = 400, usd = 1500, watts = 25, max_per_npu = 2 },
  { name = "CX7 200G", gbit_per_s = 200, usd = 1000, watts = 20, max_per_npu = 2 },
]
[[classes.IB.switches]]
name = "QM9700 64x400G"
radix = 64
usd_per_switch = 35000
port_gbit_per_s = 400
watts = 750
"""

NOTE = (
    "dimension 1 (Switch 128, IB) bought at most 50 GB/s per NPU (below the instance's "
    "upper_gbps = 100): it reaches 1,024 NPUs, beyond the H100-SXM's scale-up domain of 8 "
    "(catalog scaleup_npus of the H100-SXM), and past it one H100-SXM sends at most 50 GB/s "
    "through its NIC (catalog nic_gbps of the H100-SXM); for more, name another accelerator "
    "([params.npu] accelerator), or give the model file's [params.npu] nic_gbps (a faster host "
    "link) or scaleup_npus (a larger scale-up domain)"
)


def _files(tmp_path: Path, upper: float = 100, lower: float = 12.5) -> tuple[Path, Path]:
    (tmp_path / "llama70b.toml").write_text(MODEL)
    inst = tmp_path / "buy.toml"
    inst.write_text(INSTANCE.format(lower=lower, upper=upper))
    cat = tmp_path / "parts.toml"
    cat.write_text(CATALOG)
    return inst, cat


@pytest.mark.heavy
def test_two_400g_nics_per_h100_are_not_bought(tmp_path):
    """Not 2 x 400G per H100 (100 GB/s: 2,048 NICs x $1,500 + 96 switches x $35,000 =
    $6,432,000, 5,548.24 ms) with a caveat, but one 400G NIC per H100 (50 GB/s):
    1,024 x $1,500 + 8 groups of 128 ports, each 4 leaves + 2 spines of 64 ports = 48 switches x
    $35,000, $1,536,000 + $1,680,000 = $3,216,000; 1,024 x 25 W + 48 x 750 W = 61,600 W."""
    inst_path, cat = _files(tmp_path)
    inst = hieropt.load_instance(inst_path)
    p = hieropt.provision(inst, cat)
    assert p.bw_gbps.tolist() == [450.0, 50.0]
    assert [o.part.name for o in p.design] == ["NVLink4 x18 (bundled)", "CX7 400G"]
    assert p.network_cost_usd == 3_216_000.0 and p.power_w == 61_600.0
    # the time is the evaluator's at 450, 50 GB/s (the one validate accepts for this H100)
    at_cap = hieropt.evaluate(inst, np.array([450.0, 50.0])).iteration_time_ns
    assert p.iteration_time_ns == pytest.approx(at_cap, rel=1e-12)
    assert p.iteration_time_ns / 1e6 == pytest.approx(5683.8003, abs=1e-4)
    # slower than the 100 GB/s a hypothetical network gives (5,548.24 ms)
    assert hieropt.evaluate(inst, np.array([450.0, 100.0])).iteration_time_ns / 1e6 == (
        pytest.approx(5548.2436, abs=1e-4))
    assert p.nic_bounds == (NOTE,) and p.notes[0] == NOTE
    # the continuous optimum over the catalog's ranges is bounded too: the LP's upper bound binds
    assert p.continuous is not None and p.continuous.bw_gbps[1] == pytest.approx(50.0, rel=1e-9)
    # no design keeps the caveat it had at 100 GB/s
    assert not any("scale-up domain" in c for c in p.notes[1:])


def test_the_milp_has_no_option_above_the_nic(tmp_path):
    """The bound is the MILP's: dimension 1's options within [12.5, min(100, 50)] GB/s are one
    200G (25) and two 200G or one 400G (50, the cheaper kept): 2 options, where 100 (two 400G)
    was a third."""
    inst_path, cat = _files(tmp_path)
    inst = hieropt.load_instance(inst_path)
    bounded, notes = nic_bounded(inst)
    assert notes == (NOTE,)
    assert [(b.lower_gbps, b.upper_gbps) for b in bounded.bounds] == [(50.0, 450.0), (12.5, 50.0)]
    options = instance_options(catalog_for(cat, bounded), bounded)
    assert [o.bw_gbps for o in options[1]] == [25.0, 50.0]
    assert options[1][1].part.name == "CX7 400G"
    before = instance_options(catalog_for(cat, inst), inst)
    assert [o.bw_gbps for o in before[1]] == [25.0, 50.0, 100.0]


def test_a_bound_below_the_nic_is_left_as_it_is(tmp_path):
    """upper_gbps = 25 on the scale-out dimension: within the H100's 50, so the instance and the
    answer are unchanged and there is no note: one 200G NIC per H100, 1,024 x $1,000 + 48
    switches x $35,000 = $2,704,000 (a 200G NIC takes one 400G port: 128 ports per group)."""
    inst_path, cat = _files(tmp_path, upper=25)
    inst = hieropt.load_instance(inst_path)
    assert nic_bounded(inst) == (inst, ())
    (limit,) = nic_bounds(inst)
    assert (limit.dim, limit.reach, limit.gbps, limit.upper_gbps) == (1, 1024, 50.0, 25.0)
    assert not limit.tightens
    p = hieropt.provision(inst, cat, compare=False)
    assert p.bw_gbps.tolist() == [450.0, 25.0] and p.nic_bounds == ()
    assert p.network_cost_usd == 1024 * 1000 + 48 * 35000 == 2_704_000


def test_a_lower_bound_above_the_nic_is_refused(tmp_path):
    inst_path, cat = _files(tmp_path, lower=60)
    inst = hieropt.load_instance(inst_path)
    with pytest.raises(InputError) as e:
        hieropt.provision(inst, cat, compare=False)
    assert str(e.value).startswith(
        "llama70b-1024-h100: bounds: dimension 1: lower_gbps = 60 is above the 50 GB/s per NPU "
        "one H100-SXM sends through its NIC (catalog nic_gbps of the H100-SXM)")
    assert "fix: lower lower_gbps to at most 50" in str(e.value)


def test_the_tradeoff_front_is_bounded(tmp_path):
    inst_path, cat = _files(tmp_path)
    front = provision_tradeoff(hieropt.load_instance(inst_path), cat, levels=2)
    assert front.points and all(q.design[1].bw_gbps <= 50.0 for q in front.points)
    assert front.notes == (NOTE,)


def test_the_tradeoff_to_dict_is_the_commands_json(tmp_path):
    import json

    from tests.cli.util import run

    inst_path, cat = _files(tmp_path)
    js = tmp_path / "t.json"
    r = run("provision", inst_path, "--catalog", cat, "--tradeoff", "2", "--json", js)
    assert r.exit_code == 0, r.output
    data = provision_tradeoff(hieropt.load_instance(inst_path), cat, levels=2).to_dict()
    cli = json.loads(js.read_text())
    for d in (data, cli):  # (wall times differ)
        d.pop("solve_seconds")
    assert data == cli
    assert data["notes"] == [NOTE] and data["grid"] == [2, 2]
    assert all(q["design"][1]["bw_gbps"] <= 50.0 for q in data["points"])


def test_solve_keeps_the_hypothetical_network(tmp_path):
    """solve answers for a hypothetical network: 100 GB/s (not capped), with the caveat."""
    inst_path, _ = _files(tmp_path)
    inst = hieropt.load_instance(inst_path)
    sol = hieropt.solve(inst)
    assert sol.bw_gbps[1] == pytest.approx(100.0, rel=1e-6)
    fig = hieropt.run_figures(inst, sol.iteration_time_ns, bw_gbps=sol.bw_gbps)
    assert any("beyond the H100-SXM's scale-up domain of 8" in c for c in fig.caveats)


def test_dimensions_are_bounded_by_the_npus_they_reach():
    """instances/gpt3-plan-4d.toml: A100 (domain 8, NIC limit 32 GB/s) on Ring 4 x FullyConnected
    8 x Ring 4 x Switch 32: dimension 0 reaches 4 NPUs (inside the domain), 1 reaches 32, 2 128
    and 3 4,096 (outside: each bounded at 32)."""
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-plan-4d.toml")
    assert [(b.dim, b.reach, b.gbps, b.npu) for b in nic_bounds(inst)] == [
        (1, 32, 32.0, "A100-SXM-80GB"), (2, 128, 32.0, "A100-SXM-80GB"),
        (3, 4096, 32.0, "A100-SXM-80GB")]
    bounded, notes = nic_bounded(inst)
    assert [b.upper_gbps for b in bounded.bounds] == [None, 32.0, 32.0, 32.0]
    assert len(notes) == 3 and notes[0].startswith(
        "dimension 1 (FullyConnected 8, InterPackage) bought at most 32 GB/s per NPU (no "
        "upper_gbps in the instance's bounds): it reaches 32 NPUs, beyond the A100-SXM-80GB's "
        "scale-up domain of 8")


def test_a_libra_instance_is_not_bounded(tmp_path):
    """A workload of ASTRA-sim layers (LIBRA's inputs) states no accelerator: a Ring 4 x Switch 8
    network of 32 NPUs keeps its bounds (none), whatever the catalog."""
    from .util import load

    libra, _ = load(tmp_path, [("Ring", 4, "C0"), ("Switch", 8, "C1")],
                    {"forward": [1, 1], "input_grad": [1, 1], "weight_grad": [4, 8]},
                    [(1e6, "NONE", 0, 0, "NONE", 0, 0, "ALLREDUCE", 4e9)], CATALOG)
    assert libra.workload.training is None
    assert nic_bounds(libra) == () and nic_bounded(libra) == (libra, ())


@pytest.mark.heavy
def test_the_command_prints_the_bound(tmp_path):
    from tests.cli.util import run

    inst, cat = _files(tmp_path)
    r = run("provision", inst, "--catalog", cat, "--no-compare")
    assert r.exit_code == 0, r.output
    assert "network cost (catalog): $3,216,000; power: 61,600 W" in r.stdout
    assert f"note: {NOTE}" in r.stdout


def test_a_time_target_only_a_fed_nic_could_meet_names_the_bound(tmp_path):
    """5,600 ms: two 400G NICs per H100 would meet it (5,548.24 ms), the one it can feed does not
    (5,683.80 ms): infeasible, the reason naming the bound."""
    from hieropt.errors import NoSolutionError

    inst_path, cat = _files(tmp_path)
    with pytest.raises(NoSolutionError) as e:
        hieropt.provision(hieropt.load_instance(inst_path), cat, objective="min_cost",
                          max_iteration_time_ns=5.6e9, compare=False)
    assert str(e.value).startswith(
        "infeasible: time target 5,600,000,000.0 ns: the fastest design from the catalog takes "
        "5,683,800,263.1 ns")
    assert str(e.value).endswith(
        "(with dimension 1 bought at most 50 GB/s per NPU: beyond the H100-SXM's scale-up domain "
        "of 8 (catalog scaleup_npus of the H100-SXM) one H100-SXM sends at most 50 GB/s through "
        "its NIC (catalog nic_gbps of the H100-SXM))")
