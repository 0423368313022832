"""Fat-tree fabrics, optics and power in provisioning, by hand.

One Switch dimension of 16 NPUs (one group) carries one all-reduce of S = 8e9 bytes: each NPU sends
2 S (16 - 1) / 16 = 1.5e10 bytes, so T = 1e6 + 1.5e10 / B ns. One NIC of 400 Gb/s (50 GB/s, $100, 10
W) per NPU; radix-8 switches ($1,000, 50 W); NIC-side modules ($5, 1 W, one port) and twin-port
switch modules ($10, 2 W, two ports); link lengths 3 m and 10 m. The leaf tier is 1:1 or 2:1 (a
choice):

- 1:1, split (4, 4): 16 / 4 = 4 leaves; spines: c | 4 with c >= ceil(4 * 4 / 8) = 2 -> 2; 6
  switches. B = 50 GB/s. Links: 16 NIC-leaf (16 NIC modules + 8 twin), 4 * 4 = 16 leaf-spine (8 + 8
  twin): 16 NIC modules, 24 twin. Cost 16 * 100 + 6 * 1,000 + 16 * 5 + 24 * 10 = 7,920 $; power 16 *
  10 + 6 * 50 + 16 * 1 + 24 * 2 = 524 W.
- 2:1, split (4, 2) (the fewest switches among (4, 2) and (2, 1)): 4 leaves; c | 2 >= ceil(4 * 2 /
  8) = 1 -> 1 spine; 5 switches. Each NPU keeps 2 / 4 of its NIC: B = 25 GB/s. Links: 16 NIC-leaf
  (16 + 8 twin), 4 * 2 = 8 leaf-spine (4 + 4 twin): 16 NIC modules, 16 twin. Cost 1,600 + 5,000 + 80
  + 160 = 6,840 $; power 160 + 250 + 16 + 32 = 458 W.

Times: T(50) = 1e6 + 3e8 = 301,000,000 ns; T(25) = 1e6 + 6e8 = 601,000,000 ns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hieropt
from hieropt.errors import InputError, NoSolutionError
from hieropt.model.run import provisioned_run
from tests.provision.fabric_power import CATALOG, T25, T50, summary

from .util import load


def test_fastest_is_non_blocking(problem):
    inst, cat = problem
    p = hieropt.provision(inst, cat, objective="performance", compare=False)
    assert summary(p) == ((1.0,), 6, 50.0, 7920.0, 524.0)
    assert p.iteration_time_ns == pytest.approx(T50, rel=1e-12)
    items = {(b.kind, b.item): (b.quantity, b.watts) for b in p.bom}
    assert items == {("nic", "nic400"): (16, 160.0), ("switch", "sw8"): (6, 300.0),
                     ("optic", "nic-module"): (16, 16.0), ("optic", "twin"): (24, 48.0)}


def test_cheapest_and_least_power_take_two_to_one(problem):
    inst, cat = problem
    p = hieropt.provision(
        inst, cat, objective="min_cost", max_iteration_time_ns=T25 * 1.001, compare=False
    )
    assert summary(p) == ((2.0,), 5, 25.0, 6840.0, 458.0)
    q = hieropt.provision(
        inst, cat, objective="min_power", max_iteration_time_ns=T25 * 1.001, compare=False
    )
    assert (
        summary(q)[-1] == 458.0
        and q.objective_value == 458.0
        and q.objective_unit == "W"
        and q.gap <= 1e-9
    )
    # a target only 50 GB/s meets: the least power is the 1:1 fabric's 524 W
    r = hieropt.provision(
        inst, cat, objective="min_power", max_iteration_time_ns=T50 * 1.001, compare=False
    )
    assert summary(r) == ((1.0,), 6, 50.0, 7920.0, 524.0)


def test_power_budget(problem):
    inst, cat = problem
    p = hieropt.provision(inst, cat, objective="performance", max_power_w=500, compare=False)
    assert summary(p)[-1] == 458.0 and p.iteration_time_ns == pytest.approx(T25, rel=1e-12)
    with pytest.raises(
        NoSolutionError, match="power budget 400 W: the lowest-power design .* draws 458 W"
    ):
        hieropt.provision(inst, cat, objective="performance", max_power_w=400, compare=False)
    # 0.4 W, 1,145 times below the 458 W the least-power design draws: the smallest unit that makes
    # it enough is named (0.4 kW is still below)
    # (a budget of 400 W has no such hint)
    with pytest.raises(NoSolutionError) as e:
        hieropt.provision(inst, cat, objective="performance", max_power_w=0.4, compare=False)
    assert str(e.value).endswith(
        "power budget 0.4 W: the lowest-power design from the catalog that meets the other limits "
        "draws 458 W — the budget is 1,145x below it: a plain number is W; did you mean 0.4MW? "
        "(write --max-power-w 0.4MW, or max_power_w=400000); raise the power budget")


def test_power_needs_every_figure(tmp_path: Path):
    inst, cat = load(
        tmp_path,
        [("Switch", 16, "Out")],
        {"forward": [1], "input_grad": [1], "weight_grad": [16]},
        [(1e6, "NONE", 0, 0, "NONE", 0, 0, "ALLREDUCE", 8e9)],
        CATALOG.replace("usd_per_switch = 1000\nwatts = 50\n", "usd_per_switch = 1000\n"),
    )
    with pytest.raises(
        InputError, match=r"classes\.Out\.switches\[0\] \('sw8'\)\.watts: no power figure"
    ):
        hieropt.provision(inst, cat, objective="min_power", max_iteration_time_ns=T25 * 2)
    # without a power objective or budget the same catalog solves, and the power is reported as
    # unknown
    p = hieropt.provision(inst, cat, compare=False)
    assert p.power_w is None and p.design[0].switches == 6


def test_time_cost_power_tradeoff(problem):
    # the grid of cost levels 6,840..7,920 $ and power levels 458..524 W has two non-dominated
    # designs: the 1:1 fabric (fastest) and the 2:1 fabric (cheapest and lowest power)
    from hieropt.solvers.provision_milp import provision_tradeoff

    inst, cat = problem
    tr = provision_tradeoff(inst, cat, levels=3)
    got = [(q.iteration_time_ns, q.network_cost_usd, q.power_w) for q in tr.points]
    assert got == [
        (pytest.approx(T50, rel=1e-12), 7920.0, 524.0),
        (pytest.approx(T25, rel=1e-12), 6840.0, 458.0),
    ]
    assert all(q.gap <= 1e-9 for q in tr.points)


def _with_site(inst, cap_mw: float, **more):
    """The instance with a cluster of 16 accelerators at 1,000 W (16,000 W of IT power without the
    network), PUE 1.25 and a site power cap of ``cap_mw`` MW."""
    from hieropt.spec.cluster import Cluster

    cluster = Cluster(accelerator_w=1000, pue=1.25, max_power_mw=cap_mw, **more)
    return inst.model_copy(update={"cluster": cluster})


def test_site_power_cap_limits_the_network(problem):
    # 1:1 fabric: (16,000 + 524) W x 1.25 = 20,655 W; 2:1: (16,000 + 458) x 1.25 = 20,572.5 W.
    # A cap of 0.0206 MW leaves 20,600 / 1.25 - 16,000 = 480 W to the network: only the 2:1 fits
    inst, cat = problem
    free = hieropt.provision(_with_site(inst, 1.0), cat, objective="performance", compare=False)
    assert summary(free)[-1] == 524.0
    p = hieropt.provision(_with_site(inst, 0.0206), cat, objective="performance", compare=False)
    assert summary(p) == ((2.0,), 5, 25.0, 6840.0, 458.0)
    assert p.iteration_time_ns == pytest.approx(T25, rel=1e-12)
    assert ("the site's power cap 0.0206 MW: the cluster draws 0.0205725 MW with PUE (the "
            "network's parts 458 W; at most 480 W fit under the cap)") in p.notes
    run, _ = provisioned_run(_with_site(inst, 0.0206), p.iteration_time_ns, p.network_cost_usd,
                             p.power_w)
    assert run.power_mw == pytest.approx(0.0205725, rel=1e-12)


def test_site_power_cap_infeasible_in_mw(problem):
    inst, cat = problem
    # 400 W left to the network, the lowest-power design draws 458 W
    with pytest.raises(NoSolutionError, match=(
            r"^infeasible: the site's power cap of 0\.0205 MW: with the lowest-power design from "
            r"the catalog that meets the other limits \(its parts draw 458 W\) the cluster draws "
            r"0\.0205725 MW with PUE; fewer NPUs, lower-power parts or a higher cap$")):
        hieropt.provision(_with_site(inst, 0.0205), cat, objective="performance", compare=False)
    # the accelerators alone draw 16,000 x 1.25 = 20,000 W, above a 0.019 MW cap: as solve says
    with pytest.raises(NoSolutionError, match=(
            r"the cluster draws 0\.02 MW \(with PUE\), above the site's power cap of 0\.02 MW")):
        hieropt.provision(_with_site(inst, 0.019), cat, compare=False)
    # a given network_w_per_npu fixes the network's power: (1,000 + 30) x 16 x 1.25 = 20,600 W
    sol = hieropt.provision(_with_site(inst, 0.0206, network_w_per_npu=30.0), cat, compare=False)
    assert summary(sol)[-1] == 524.0  # the parts' power is not the cluster's here
    with pytest.raises(NoSolutionError, match="above the site's power cap"):
        hieropt.provision(_with_site(inst, 0.0205, network_w_per_npu=30.0), cat, compare=False)


def test_site_power_cap_needs_every_power_figure(tmp_path: Path):
    inst, cat = load(
        tmp_path,
        [("Switch", 16, "Out")],
        {"forward": [1], "input_grad": [1], "weight_grad": [16]},
        [(1e6, "NONE", 0, 0, "NONE", 0, 0, "ALLREDUCE", 8e9)],
        CATALOG.replace("usd_per_switch = 1000\nwatts = 50\n", "usd_per_switch = 1000\n"),
    )
    with pytest.raises(InputError, match=(
            r"\('sw8'\)\.watts: no power figure, but the site's power cap \(\[cluster\] "
            r"max_power_mw, no network_w_per_npu\) needs one on every part")):
        hieropt.provision(_with_site(inst, 1.0), cat, compare=False)


def test_site_power_cap_in_the_tradeoff(problem):
    from hieropt.solvers.provision_milp import provision_tradeoff

    inst, cat = problem
    tr = provision_tradeoff(_with_site(inst, 0.0206), cat, levels=3)
    assert [(q.network_cost_usd, q.power_w) for q in tr.points] == [(6840.0, 458.0)]


def test_every_limit_is_a_row_of_every_tradeoff_point(problem):
    # without a limit the front has both fabrics (above); each limit below leaves one of them: a
    # budget of $7,000 (1:1 costs $7,920), a power budget of 500 W (1:1 draws 524 W), a time target
    # of 400,000,000 ns (2:1 takes T25 = 601,000,000 ns)
    from hieropt.solvers.provision_milp import provision_tradeoff

    inst, cat = problem
    cases = (({"max_cost_usd": 7000.0}, (T25, 6840.0, 458.0), "budget $7,000 on the parts"),
             ({"max_power_w": 500.0}, (T25, 6840.0, 458.0), "power budget 500 W on the parts"),
             ({"max_iteration_time_ns": 4e8}, (T50, 7920.0, 524.0),
              "time target 400,000,000.0 ns"))
    for limit, point, words in cases:
        tr = provision_tradeoff(inst, cat, levels=3, **limit)
        got = [(q.iteration_time_ns, q.network_cost_usd, q.power_w) for q in tr.points]
        assert got == [(pytest.approx(point[0], rel=1e-12), point[1], point[2])], limit
        assert tr.notes == (f"every point is within the {words} (rows of each point's MILP; the "
                            "grid's levels run between the fastest, cheapest and lowest-power "
                            "designs within them)",)
    # the file's budget is the default, as in provision
    tr = provision_tradeoff(inst.model_copy(update={"max_network_cost_usd": 7000.0}), cat, 3)
    assert [q.network_cost_usd for q in tr.points] == [6840.0]
    with pytest.raises(NoSolutionError, match=(
            r"^infeasible: budget \$6,000\.00: the cheapest design from the catalog that meets "
            r"the constraints costs \$6,840\.00")):
        provision_tradeoff(inst, cat, levels=3, max_cost_usd=6000.0)


def test_the_tradeoff_command_applies_its_limits_and_refuses_an_objective(problem):
    from tests.provision.test_cli import assert_error, run

    _, cat = problem
    inst = cat.parent / "inst.toml"
    r = run(inst, "--catalog", cat, "--tradeoff", "3", "--max-power-w", "0.5kW", "--json", "-")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert [(q["network_cost_usd"], q["power_w"]) for q in data["points"]] == [(6840.0, 458.0)]
    assert data["notes"][0].startswith("every point is within the power budget 500 W on the parts")
    assert_error(run(inst, "--catalog", cat, "--tradeoff", "3", "--objective", "min_cost",
                     "--max-time", "400ms"), 2, "--objective: has no meaning with --tradeoff",
                 "drop --objective")
    assert_error(run(inst, "--catalog", cat, "--tradeoff", "3", "--within", "2%"), 2,
                 "error: --within: has no meaning with --tradeoff: it searches the cheapest design "
                 "within a slack of one fastest design, and the trade-off already lists the "
                 "fastest design at each cost and power level; fix: drop --within, or drop "
                 "--tradeoff")
