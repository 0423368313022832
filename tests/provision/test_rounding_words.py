"""The words of a rounding that moved a dimension against its name: a Switch dimension below one
unit of a NIC part gives the NIC reason (any count of NICs), never the link-port one (one port to
each peer), and its label reads ``up to 1 unit`` whatever parts buy that bandwidth."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from hieropt.model.catalog import Part
from hieropt.model.options import Option
from hieropt.report.provision import rounding_label, rounding_lines


def _problem() -> SimpleNamespace:
    """Ring 4 at 40 GB/s (2 x 20 GB/s ports) and a Switch at 50 GB/s (2 x 100 GB/s NICs per node
    of 4 NPUs) against a continuous optimum of 30 and 27.68 GB/s per NPU: rounding down moved
    both up, dimension 0 to its 2 link ports, dimension 1 to one unit of some NIC part."""
    port = Part(name="port", gbps=20, usd=1, max_per_npu=4)
    nic = Part(name="nic-node", gbps=100, usd=1, max_per_node=4, node_npus=4)
    design = (Option(0, "link", port, 2, 40.0, 8, None, 0, 0, 0, 0, ()),
              Option(1, "nic", nic, 2, 50.0, 2, None, 0, 0, 0, 0, ()))
    r = SimpleNamespace(name="down", description="rounded down", feasible=True, design=design,
                        bw_gbps=np.array([40.0, 50.0]))
    return SimpleNamespace(roundings=(r,), continuous=SimpleNamespace(
        bw_gbps=np.array([30.0, 27.68])))


def test_a_switch_dimension_moved_up_gives_the_nic_reason():
    p = _problem()
    r = p.roundings[0]
    assert rounding_label(p, r) == "round down, dims 0, 1 up to the fewest units"
    assert rounding_lines(p) == [
        "round down: rounded down; dimension 0: 30 GB/s per NPU is below the part's fewest units, "
        "2 (one link port to each peer): raised to them, 40 GB/s; dimension 1: 27.68 GB/s per NPU "
        "is below one unit of a NIC part (rounding down keeps at least one unit of each part): "
        "raised to it (bought as 2 x nic-node per node of 4, the design's parts at that "
        "bandwidth), 50 GB/s: feasible"]
    r.design, r.bw_gbps = r.design[1:], r.bw_gbps[1:]
    p.continuous.bw_gbps = p.continuous.bw_gbps[1:]
    assert rounding_label(p, r) == "round down, dim 0 up to 1 unit"
    assert "one link port" not in rounding_lines(p)[0]
