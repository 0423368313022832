"""Provisioning designs the fat trees only of the unit counts its MILP can choose (those whose
bandwidth may lie within the instance's bounds), and finds the same design as the full enumeration.

The shipped NVL72 InfiniBand catalog with the ConnectX-8's ``max_per_npu`` raised (32 here; 1,024
took 59 s of CPU designing 8,000 fabrics for a 40 ms MILP): the instance bounds the scale-out
dimension to 12.5 .. 200 GB/s, and a fabric keeps between half (the leaf tier's 2:1 choice) and all
of a NIC's 100 GB/s per unit, so only 1 .. 4 units can fit. Fabric designs are counted, not timed.
"""

from __future__ import annotations

import re

import pytest

import hieropt
from hieropt.model import options as options_module
from hieropt.solvers import provision_milp
from tests.cases import REPO

NVL = REPO / "instances" / "gpt3-nvl72-2304.toml"
IB = REPO / "catalogs" / "nvl72-infiniband.toml"


@pytest.fixture
def many_units(tmp_path):
    text = IB.read_text()
    text, n = re.subn(
        r'(name = "ConnectX-8 800G XDR"\ngbit_per_s = 800\s*# q3400-spec\nmax_per_npu = )2',
        r"\g<1>32",
        text,
    )
    assert n == 1
    path = tmp_path / "cx8.toml"
    path.write_text(text)
    return path


@pytest.mark.heavy
def test_only_choosable_unit_counts_get_a_fabric(monkeypatch, many_units):
    inst = hieropt.load_instance(NVL)
    designed = []
    real = options_module.switch_fabric

    def counted(*args, **kwargs):
        designed.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(options_module, "switch_fabric", counted)
    lazy = hieropt.provision(inst, many_units, compare=False)
    # 2 NICs x 2 switches x 2 placements x 2 ratio choices per unit count; within the bounds:
    # 1 .. 4 units of the ConnectX-8 (of 32) and 1 .. 2 of the ConnectX-7 (of 2), plus the NVLink
    # dimension's 18 x 1 x 1 x 1
    assert len(designed) <= 4 * 2 * 2 * 2 + 2 * 2 * 2 * 2 + 18
    lazy_designs = len(designed)

    def everything(catalog, network, d, within=None):
        return real_options(catalog, network, d)

    real_options = options_module.dimension_options
    monkeypatch.setattr(provision_milp, "dimension_options", everything)
    designed.clear()
    full = hieropt.provision(inst, many_units, compare=False)
    assert len(designed) > 4 * lazy_designs  # (the full enumeration designs every unit count)
    assert lazy.objective_value == full.objective_value
    assert [o.bw_gbps for o in lazy.design] == [o.bw_gbps for o in full.design]
    assert lazy.network_cost_usd == full.network_cost_usd
