"""The fat-tree fabric-power problem solved by hand in tests/provision/test_fabric_power.py's
docstring: its catalog, its two times, the problem written as files, and a design's summary."""

from __future__ import annotations

from pathlib import Path

from hieropt.spec import Instance

from .util import load

CATALOG = """\
name = "fabric-power"
[[classes.Out.nics]]
name = "nic400"
gbit_per_s = 400
max_per_npu = 1
usd = 100
watts = 10
[[classes.Out.switches]]
name = "sw8"
radix = 8
usd_per_switch = 1000
watts = 50
[[classes.Out.optics]]
name = "nic-module"
reach_m = 10
fits = "nic"
usd = 5
watts = 1
[[classes.Out.optics]]
name = "twin"
reach_m = 10
ports = 2
fits = "switch"
usd = 10
watts = 2
[classes.Out.fabric]
oversubscription = [[1, 2]]
link_length_m = [3, 10]
"""
"""One 400 Gb/s NIC ($100, 10 W) per NPU, radix-8 switches ($1,000, 50 W), NIC-side modules ($5,
1 W) and twin-port switch modules ($10, 2 W), a leaf tier of 1:1 or 2:1, links of 3 m and 10 m."""


T50, T25 = 301_000_000.0, 601_000_000.0
"""The iteration times (ns) at 50 GB/s (the 1:1 fabric) and at 25 GB/s (the 2:1 one)."""


def fabric_power_problem(tmp_path: Path) -> tuple[Instance, Path]:
    """The instance (one Switch dimension of 16 NPUs, one 8e9-byte all-reduce) and the path of
    :data:`CATALOG`, written to ``tmp_path``."""
    return load(
        tmp_path,
        [("Switch", 16, "Out")],
        {"forward": [1], "input_grad": [1], "weight_grad": [16]},
        [(1e6, "NONE", 0, 0, "NONE", 0, 0, "ALLREDUCE", 8e9)],
        CATALOG,
    )


def summary(p) -> tuple:
    """(oversubscription, switches, GB/s, network $, power W) of a provisioned design ``p``'s first
    dimension and whole network."""
    o = p.design[0]
    return o.oversubscription, o.switches, o.bw_gbps, p.network_cost_usd, p.power_w
