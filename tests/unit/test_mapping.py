"""Parallel groups derived from ASTRA-sim 1.0 header policies (hieropt.model.mapping)."""

from __future__ import annotations

import pytest

from hieropt.errors import InputError
from hieropt.io.astrasim1 import parse_workload
from hieropt.model.mapping import derive_mapping, lowest_dims_group
from hieropt.spec import Dimension, Network

NET = Network(
    dims=(
        Dimension(block="Ring", npus=4, cost_class="a"),
        Dimension(block="FullyConnected", npus=8, cost_class="b"),
        Dimension(block="Ring", npus=4, cost_class="c"),
        Dimension(block="Switch", npus=32, cost_class="d"),
    )
)
LINE = "l1 -1 10 ALLREDUCE 100 10 ALLREDUCE 100 10 ALLREDUCE 100 10"


def _wl(header: str):
    return parse_workload(f"{header}\n1\n{LINE}\n")


@pytest.mark.parametrize(
    "size, group",
    [
        (1, (1, 1, 1, 1)),
        (2, (2, 1, 1, 1)),
        (4, (4, 1, 1, 1)),
        (16, (4, 4, 1, 1)),
        (32, (4, 8, 1, 1)),
        (64, (4, 8, 2, 1)),
        (4096, (4, 8, 4, 32)),
    ],
)
def test_lowest_dims_group(size, group):
    assert lowest_dims_group(NET, size, "x") == group


@pytest.mark.parametrize("size", [3, 6, 12, 8192])
def test_lowest_dims_group_rejects_sizes_that_do_not_fill(size):
    with pytest.raises(InputError, match="does not fill the lowest dimensions"):
        lowest_dims_group(NET, size, "x")


def test_transformer_policy():
    m, why = derive_mapping(_wl("HYBRID_TRANSFORMER model_parallel_NPU_group: 16"), NET, "w.txt")
    assert m.forward == m.input_grad == (4, 4, 1, 1)
    assert m.weight_grad == (1, 2, 4, 32)  # 4096 / 16 = 256 data-parallel replicas
    assert "16 NPUs" in why and "HYBRID_TRANSFORMER" in why


@pytest.mark.parametrize("policy", ["DATA", "MODEL", "MICRO", "HYBRID_DLRM 0"])
def test_whole_cluster_policies(policy):
    m, _ = derive_mapping(_wl(policy), NET, "w.txt")
    assert m.forward == m.input_grad == m.weight_grad == (4, 8, 4, 32)


def test_hybrid_policies_without_group_size():
    m, _ = derive_mapping(_wl("HYBRID_MODEL_DATA"), NET, "w.txt")
    assert m.forward == (4, 1, 1, 1) and m.weight_grad == (1, 8, 4, 32)
    m, _ = derive_mapping(_wl("HYBRID_DATA_MODEL"), NET, "w.txt")
    assert m.weight_grad == (4, 1, 1, 1) and m.forward == (1, 8, 4, 32)


def test_no_header_or_customized_needs_an_explicit_mapping():
    with pytest.raises(InputError, match="no header"):
        derive_mapping(parse_workload(LINE + "\n"), NET, "w.txt")
    with pytest.raises(InputError, match="HYBRID_CUSTOMIZED"):
        derive_mapping(parse_workload(f"HYBRID_CUSTOMIZED\n1\n{LINE} DATA\n"), NET, "w.txt")
