"""Hand-solvable provisioning problems with asserted integer answers.

One dimension, three link options: a Ring of 4 NPUs carries one all-reduce of 4 GB per iteration
(6e9 bytes per NPU: 2 S (p-1)/p), so T = 1e6 + 6e9 / B ns. Each NPU has 2 ring neighbours and a
link port goes to one of them, so ports come in pairs (2, 4, ...). Parts: A = 10 GB/s at $1 (<= 6
per NPU: 2, 4 or 6, 20, 40 or 60 GB/s), B = 25 GB/s at $3 (<= 2: 2, 50 GB/s), C = 20 GB/s at $5
(<= 2: 2, 40 GB/s); the cluster has 4 NPUs, so n parts per NPU cost 4 n x price; constraint
bw[0] <= 45 (which B's 50 GB/s and 6 x A break).

Two dimensions: Ring 2 x Ring 2; the forward all-reduce (4e9 bytes per NPU) uses dimension 0 only,
the weight-gradient all-reduce (1e9 bytes) dimension 1 only, so T = 1e6 + 4e9 / B0 + 1e9 / B1 ns.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hieropt
from hieropt.model.catalog import Part, Switch
from hieropt.model.options import fabric
from hieropt.result import Status

from .util import load

ONE_DIM_CATALOG = """\
name = "three-options"
[classes.C0]
links = [
  { name = "A", gbps = 10, usd = 1, max_per_npu = 6 },
  { name = "B", gbps = 25, usd = 3, max_per_npu = 2 },
  { name = "C", gbit_per_s = 160, usd = 5, max_per_npu = 2 },
]
"""


@pytest.fixture
def one_dim(tmp_path: Path):
    return load(
        tmp_path,
        [("Ring", 4, "C0")],
        {"forward": [1], "input_grad": [1], "weight_grad": [4]},
        [(1e6, "NONE", 0, 0, "NONE", 0, 0, "ALLREDUCE", 4e9)],
        ONE_DIM_CATALOG,
        constraints=["bw[0] <= 45"],
    )


def test_one_dimension_performance(one_dim):
    """Fastest within bw[0] <= 45 is 40 GB/s: 4 x A ($16) or 2 x C ($40); the tie goes to the
    cheaper 4 x A."""
    inst, cat = one_dim
    p = hieropt.provision(inst, cat, objective="performance")
    assert p.status is Status.OPTIMAL
    o = p.design[0]
    assert (o.part.name, o.units, o.units_total, o.bw_gbps) == ("A", 4, 16, 40.0)
    assert p.network_cost_usd == 16.0
    assert p.iteration_time_ns == pytest.approx(1e6 + 6e9 / 40, rel=1e-12)
    assert p.gap <= 1e-8
    # the continuous optimum (bw <= 45, within the catalog's 10..50 GB/s) is the bound; the integer
    # design is slower
    assert p.continuous.bw_gbps[0] == pytest.approx(45, rel=1e-6)
    assert p.continuous.iteration_time_ns <= p.iteration_time_ns


def test_one_dimension_min_cost(one_dim):
    """Time <= 1e6 + 6e9/20 ns needs B >= 20: 2 x A ($8, the fewest a ring of 4 takes) beats 4 x A
    ($16) and 2 x C ($40)."""
    inst, cat = one_dim
    p = hieropt.provision(inst, cat, objective="min_cost", max_iteration_time_ns=1e6 + 6e9 / 20)
    o = p.design[0]
    assert (o.part.name, o.units, o.bw_gbps, p.network_cost_usd) == ("A", 2, 20.0, 8.0)
    assert p.objective_value == 8.0 and p.objective_unit == "USD"


def test_one_dimension_performance_per_cost(one_dim):
    """T x C for n x A (n = 2, 4) is (1e6 + 6e9 / 10n) 4n = 4e6 n + 2.4e9: n = 2 (2.408e9) beats n =
    4 (2.416e9) and 2 x C ((1e6 + 1.5e8) x 40 = 6.04e9)."""
    inst, cat = one_dim
    p = hieropt.provision(inst, cat, objective="performance_per_cost")
    o = p.design[0]
    assert (o.part.name, o.units, o.bw_gbps, p.network_cost_usd) == ("A", 2, 20.0, 8.0)
    assert p.objective_value == pytest.approx((1e6 + 3e8) * 8.0, rel=1e-12)
    others = {"4 x A": (1e6 + 6e9 / 40) * 16.0, "2 x C": (1e6 + 6e9 / 40) * 40.0}
    assert all(p.objective_value < v for v in others.values())


def test_link_ports_come_one_per_peer(tmp_path: Path):
    """A link port is a point-to-point link to one peer: on a FullyConnected 4 (3 peers) a part of
    <= 7 ports per NPU is bought as 3 or 6, on a Ring 4 (2 neighbours) as 2, 4 or 6, on a Ring 2
    (1 neighbour) as 1 to 7; a part of <= 2 ports cannot serve the FullyConnected 4 at all."""
    from hieropt.model.options import dimension_options

    cat = """\
[classes.F]
links = [{ name = "f", gbps = 10, usd = 1, max_per_npu = 7 }]
[classes.R]
links = [{ name = "r", gbps = 10, usd = 1, max_per_npu = 7 }]
[classes.T]
links = [{ name = "t", gbps = 10, usd = 1, max_per_npu = 7 }]
"""
    dims = [("FullyConnected", 4, "F"), ("Ring", 4, "R"), ("Ring", 2, "T")]
    mapping = {"forward": [4, 1, 1], "input_grad": [1, 4, 1], "weight_grad": [1, 1, 2]}
    layers = [(1e6, "ALLREDUCE", 1e9, 0, "ALLREDUCE", 1e9, 0, "ALLREDUCE", 1e9)]
    inst, path = load(tmp_path, dims, mapping, layers, cat)
    catalog = hieropt.load_catalog(path, inst)
    units = [[o.units for o in dimension_options(catalog, inst.network, d)] for d in range(3)]
    assert units == [[3, 6], [2, 4, 6], [1, 2, 3, 4, 5, 6, 7]]
    p = hieropt.provision(inst, path, compare=False)  # (the fastest: the most ports on each)
    assert [o.units for o in p.design] == [6, 6, 7]
    assert ("dimension 0 (FullyConnected 4): link ports are bought in multiples of 3 per NPU (3 x "
            "s per node of s NPUs), one to each of its 3 peers (a port is a point-to-point link to "
            "one peer)") in p.notes
    _, path = load(tmp_path, dims, mapping, layers, cat.replace("max_per_npu = 7 }]\n[classes.R]",
                                                              "max_per_npu = 2 }]\n[classes.R]"),
                   name="q")
    with pytest.raises(hieropt.InputError, match=(
            r"classes\.F\.links\[0\] \('f'\): at most 2 link ports per NPU cannot reach the 3 "
            r"peers each NPU has on dimension 0 \(FullyConnected 4\).*fix: raise max_per_npu to "
            r"at least 3")):
        hieropt.load_catalog(path, inst)


def test_one_dimension_unreachable_time_target(one_dim):
    inst, cat = one_dim
    with pytest.raises(
        hieropt.NoSolutionError, match="fastest design from the catalog takes 151,000,000.0 ns"
    ):
        hieropt.provision(inst, cat, objective="min_cost", max_iteration_time_ns=1.2e8)


def test_a_time_target_in_ms_read_as_ns_names_the_unit(one_dim):
    # 1.5 meant 1.5 ms: below the 1e6 ns of compute alone, 666,667 x; 1.5 us is still below it,
    # 1.5 ms is not (the answer said only "raise the target")
    inst, cat = one_dim
    with pytest.raises(hieropt.NoSolutionError) as e:
        hieropt.provision(inst, cat, objective="min_cost", max_iteration_time_ns=1.5)
    assert str(e.value) == (
        "infeasible: time target 1.5 ns: the compute alone takes 1,000,000.0 ns — the target is "
        "6.67e+05x below the fastest: a plain number is ns; did you mean 1.5ms? (write --max-time "
        "1.5ms, or max_iteration_time_ns = 1.5e+06); raise the target"
    )


TWO_DIMS = (
    [("Ring", 2, "X"), ("Ring", 2, "Y")],
    {"forward": [2, 1], "input_grad": [1, 1], "weight_grad": [1, 2]},
    [(1e6, "ALLREDUCE", 4e9, 0, "NONE", 0, 0, "ALLREDUCE", 1e9)],
)


def test_two_dimensions_rounding_is_25_percent_slower(tmp_path: Path):
    """2 bw[0] + bw[1] <= 200; X = 40 GB/s (<= 2 per NPU), Y = 25 GB/s (<= 2).

    Continuous optimum (75, 50) (T = 1e6 + 4e9/75 + 1e9/50). Its roundings: bw[0] to 40 or 80, bw[1]
    = 50; (80, 50) breaks the budget (210), so the best rounding is (40, 50): 1e6 + 1e8 + 2e7 ns.
    The exact design (80, 25) takes 1e6 + 5e7 + 4e7 ns: 24.8 % less.
    """
    cat = """\
[classes.X]
links = [{ name = "x40", gbps = 40, usd = 5, max_per_npu = 2 }]
[classes.Y]
links = [{ name = "y25", gbps = 25, usd = 5, max_per_npu = 2 }]
"""
    inst, path = load(tmp_path, *TWO_DIMS, cat, constraints=["2*bw[0] + bw[1] <= 200"])
    p = hieropt.provision(inst, path, objective="performance")
    assert [(o.part.name, o.units) for o in p.design] == [("x40", 2), ("y25", 1)]
    np.testing.assert_array_equal(p.bw_gbps, [80.0, 25.0])
    assert p.iteration_time_ns == pytest.approx(1e6 + 5e7 + 4e7, rel=1e-12)
    np.testing.assert_allclose(p.continuous.bw_gbps, [75.0, 50.0], rtol=1e-4)
    r = {x.name: x for x in p.roundings}
    assert not r["up"].feasible
    assert r["down"].feasible and r["best"].feasible
    np.testing.assert_array_equal(r["best"].bw_gbps, [40.0, 50.0])
    assert r["best"].iteration_time_ns == pytest.approx(1e6 + 1e8 + 2e7, rel=1e-12)
    assert r["best"].saving >= 0.10
    assert r["best"].saving == pytest.approx(1 - 9.1e7 / 1.21e8, rel=1e-9)


def test_two_dimensions_no_rounding_is_feasible(tmp_path: Path):
    """bw[0] + bw[1] == 120 with X = 30 GB/s (<= 4) and Y = 45 GB/s (<= 2): the continuous optimum
    (60, 60) rounds to (60, 45) or (60, 90), neither sums to 120; the only integer design is (30,
    90)."""
    cat = """\
[classes.X]
links = [{ name = "x30", gbps = 30, usd = 1, max_per_npu = 4 }]
[classes.Y]
links = [{ name = "y45", gbit_per_s = 360, usd = 1, max_per_npu = 2 }]
"""
    dims, mapping, _ = TWO_DIMS
    layers = [(1e6, "ALLREDUCE", 1e9, 0, "NONE", 0, 0, "ALLREDUCE", 1e9)]
    inst, path = load(tmp_path, dims, mapping, layers, cat, constraints=["sum(bw) == 120"])
    p = hieropt.provision(inst, path)
    np.testing.assert_array_equal(p.bw_gbps, [30.0, 90.0])
    assert [(o.part.name, o.units) for o in p.design] == [("x30", 1), ("y45", 2)]
    np.testing.assert_allclose(p.continuous.bw_gbps, [60.0, 60.0], rtol=1e-4)
    assert all(not r.feasible for r in p.roundings)


def test_switch_dimension_counts_nics_and_switches(tmp_path: Path):
    """Ring 2 x Switch 8 (16 NPUs, 2 switch groups of 8). 2 NICs of 100 Gb/s per NPU -> 32 NICs, 16
    ports per group; radix 8 -> two tiers: ceil(2*16/8) = 4 leaves + ceil(16/8) = 2 spines = 6
    switches per group, 12 in all."""
    cat = """\
[classes.In]
links = [{ name = "l", gbps = 50, usd = 10, max_per_npu = 1 }]
[classes.Out]
nics = [{ name = "nic100", gbit_per_s = 100, usd = 100, max_per_npu = 2 }]
switches = [{ name = "sw8", radix = 8, usd_per_port = 50 }]
"""
    dims = [("Ring", 2, "In"), ("Switch", 8, "Out")]
    mapping = {"forward": [2, 1], "input_grad": [1, 1], "weight_grad": [1, 8]}
    layers = [(1e6, "ALLREDUCE", 1e9, 0, "NONE", 0, 0, "ALLREDUCE", 1e9)]
    inst, path = load(tmp_path, dims, mapping, layers, cat, constraints=["bw[1] >= 25"])
    p = hieropt.provision(inst, path)
    o = p.design[1]
    assert (
        o.units,
        o.units_total,
        o.bw_gbps,
        o.groups,
        o.ports_per_group,
        o.tiers,
        o.switches,
    ) == (2, 32, 25.0, 2, 16, 2, 12)
    assert [(b.item, b.quantity, b.unit_usd) for b in p.bom] == [
        ("l", 16, 10.0),
        ("nic100", 32, 100.0),
        ("sw8", 12, 400.0),
    ]
    assert p.network_cost_usd == 16 * 10 + 32 * 100 + 12 * 400


def test_fabric_counts():
    assert fabric(64, 64) == (1, 1)
    assert fabric(65, 64) == (5, 2)  # 3 leaves + 2 spines
    assert fabric(128, 64) == (6, 2)
    assert fabric(2048, 64) == (96, 2)  # the two-tier maximum R^2/2: 64 leaves + 32 spines
    assert fabric(2049, 64)[1] == 3


def test_units_and_sharing():
    nic = Part(name="n", gbit_per_s=800, usd=1, max_per_node=4, node_npus=8)
    assert nic.unit_gbps == 100.0 and nic.bw_gbps(2) == 25.0 and nic.per == "node"
    sw = Switch(name="s", radix=64, usd_per_port=10, port_gbit_per_s=400)
    assert sw.price_usd == 640 and sw.ports_per_nic(100.0) == 2 and sw.ports_per_nic(25.0) == 1


def test_too_few_link_ports_name_the_next_multiple_of_the_peers(tmp_path: Path):
    """A part of <= 7 ports per NPU on a Ring 4 (ports in pairs) reaches 6 x 50 = 300 GB/s; the
    constraint bw[0] >= 320 needs 7 ports, bought as 8 (8 x 50 = 400): the fix names 8, not 7 (the
    limit it already has); a part of <= 1 port says "1 link port" and names 2."""
    cat = """\
[classes.R]
links = [{ name = "one", gbps = 25, usd = 1, max_per_npu = 1 },
         { name = "fifty", gbps = 50, usd = 1, max_per_npu = 7 }]
"""
    dims = [("Ring", 4, "R")]
    mapping = {"forward": [4], "input_grad": [4], "weight_grad": [4]}
    layers = [(1e6, "ALLREDUCE", 1e9, 0, "ALLREDUCE", 1e9, 0, "ALLREDUCE", 1e9)]
    inst, path = load(tmp_path, dims, mapping, layers, cat, constraints=["bw[0] >= 320"])
    with pytest.raises(hieropt.InputError) as e:
        hieropt.load_catalog(path, inst)
    msg = str(e.value)
    assert ("'one' at most 1 link port per NPU cannot reach the 2 peers each NPU has on "
            "dimension 0 (Ring 4)") in msg
    assert "'fifty' reaches at most 6 x 50 GB/s = 300 GB/s per NPU" in msg
    assert ("'one': raise max_per_npu to at least 2, or use a part with enough ports; 'fifty': "
            "raise max_per_npu to at least 8 (a multiple of 2, one port to each peer) or use a "
            "faster part") in msg


def test_link_parts_per_node_come_one_per_npu_and_peer(tmp_path: Path):
    """A link part fitted per node of 2 NPUs on a FullyConnected 4 (3 peers): each NPU needs one
    port to each peer, so a node buys 2 x 3 = 6 ports (3 per NPU, 3 x 10 = 30 GB/s) or 12 (60
    GB/s), never 3 (1.5 per NPU); a limit of 5 per node cannot serve it."""
    from hieropt.model.options import dimension_options

    cat = ('[classes.F]\nlinks = [{ name = "f", gbps = 10, usd = 1, max_per_node = 13, '
           'node_npus = 2 }]\n')
    dims = [("FullyConnected", 4, "F")]
    mapping = {"forward": [4], "input_grad": [4], "weight_grad": [4]}
    layers = [(1e6, "ALLREDUCE", 1e9, 0, "ALLREDUCE", 1e9, 0, "ALLREDUCE", 1e9)]
    inst, path = load(tmp_path, dims, mapping, layers, cat)
    catalog = hieropt.load_catalog(path, inst)
    opts = dimension_options(catalog, inst.network, 0)
    assert [(o.units, o.bw_gbps, o.units_total) for o in opts] == [(6, 30.0, 12), (12, 60.0, 24)]
    p = hieropt.provision(inst, path, compare=False)
    assert (p.design[0].units, p.design[0].bw_gbps) == (12, 60.0)
    _, path = load(tmp_path, dims, mapping, layers, cat.replace("13", "5"), name="q")
    with pytest.raises(hieropt.InputError, match=(
            r"at most 5 link ports per node cannot reach the 3 peers each NPU has on dimension 0 "
            r"\(FullyConnected 4\): a link port goes to one peer, so a node of 2 NPUs needs its "
            r"units in multiples of 2 x 3 = 6; fix: raise max_per_node to at least 6")):
        hieropt.load_catalog(path, inst)
