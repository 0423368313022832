"""ASTRA-sim 2.0 analytical network YAML: unit conversion (per-NPU GB/s with 1e9 bytes <-> per-link
GB/s with 2^30 bytes; Ring 2 links, FullyConnected p-1, Switch 1), the exact four keys, round trip,
the shared example files, and the reader's errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hieropt.errors import InputError
from hieropt.io.astrasim2 import (
    format_network_yml,
    links_per_npu,
    per_link_gib,
    per_npu_gbps,
    read_network_yml,
    write_network_yml,
)
from hieropt.spec import Dimension, Network

GIB = 2.0**30
NET = Network(dims=(Dimension(block="Ring", npus=4, cost_class="a"),
                    Dimension(block="FullyConnected", npus=8, cost_class="b"),
                    Dimension(block="Ring", npus=4, cost_class="c"),
                    Dimension(block="Switch", npus=32, cost_class="d")))
BW = [224.98630352337895, 138.0460907804215, 103.53456808531618, 33.433037610883346]


def test_links_and_conversion_by_hand() -> None:
    assert [links_per_npu(d.block, d.npus) for d in NET.dims] == [2, 7, 2, 1]
    # 93.132... GiB/s
    assert per_link_gib("Ring", 4, 200.0) == pytest.approx(100e9 / GIB, rel=1e-15)
    assert per_link_gib("FullyConnected", 8, 140.0) == pytest.approx(20e9 / GIB, rel=1e-15)
    assert per_link_gib("Switch", 32, 50.0) == pytest.approx(50e9 / GIB, rel=1e-15)
    # 107.3741824
    assert per_npu_gbps("Ring", 8, 50.0) == pytest.approx(2 * 50 * GIB / 1e9, rel=1e-15)


def test_write_has_exactly_four_keys_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "net.yml"
    written = write_network_yml(NET, BW, path)
    data = yaml.safe_load(path.read_text())
    assert list(data) == ["topology", "npus_count", "bandwidth", "latency"]
    assert data["topology"] == ["Ring", "FullyConnected", "Ring", "Switch"]
    assert data["npus_count"] == [4, 8, 4, 32]
    assert data["latency"] == [0.0, 0.0, 0.0, 0.0]
    assert data["bandwidth"][1] == pytest.approx(BW[1] / 7 * 1e9 / GIB, rel=1e-15)
    assert tuple(data["bandwidth"]) == written.bandwidth
    back = read_network_yml(path)
    for got, want in zip(back.bw_gbps, BW, strict=True):
        assert got == pytest.approx(want, rel=1e-12)
    text = path.read_text()
    assert "2^30" in text and "1e9" in text and "no link latency" in text
    assert "dim 1: FullyConnected, 8 NPUs" in text


def test_latency_given(tmp_path: Path) -> None:
    text = format_network_yml(NET, BW, latency_ns=[10, 20, 30, 40])
    assert yaml.safe_load(text)["latency"] == [10.0, 20.0, 30.0, 40.0]


def test_zero_bandwidth_cannot_be_exported(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="bandwidth > 0") as e:
        write_network_yml(NET, [100, 0, 50, 50], tmp_path / "x.yml")
    assert e.value.field == "bw[1]"
    assert not (tmp_path / "x.yml").exists()
    with pytest.raises(InputError, match="3 values for 4 dimensions"):
        write_network_yml(NET, [1, 2, 3], tmp_path / "x.yml")


def test_shared_astrasim2_files(shared_data: Path) -> None:
    d = shared_data / "astrasim2"
    ring = read_network_yml(d / "Ring_8npus.yml")
    assert (ring.topology, ring.npus_count, ring.bandwidth, ring.latency) == (
        ("Ring",),
        (8,),
        (50.0,),
        (500.0,),
    )
    assert ring.bw_gbps[0] == pytest.approx(107.3741824, rel=1e-15)
    hgx = read_network_yml(d / "HGX-H100-validated.yml")
    assert hgx.bw_gbps[0] == pytest.approx(400 * GIB / 1e9, rel=1e-15)  # Switch: one link
    two = read_network_yml(d / "hgx_h100_16gpu.yml")  # comments, commented-out keys
    assert (
        two.topology == ("Switch", "Ring")
        and two.npus_count == (8, 2)
        and two.latency == (936.25, 1000.0)
    )


@pytest.mark.parametrize(
    "text, field, problem",
    [
        ("topology: [Ring]\nnpus_count: [4]\nbandwidth: [1]\n", "latency", "missing"),
        (
            "topology: [Ring]\nnpus_count: [4]\nbandwidth: [1]\nlatency: [0]\nlinks: [2]\n",
            "links",
            "unknown key",
        ),
        (
            "topology: [Ring, Switch]\nnpus_count: [4]\nbandwidth: [1, 2]\nlatency: [0, 0]\n",
            "npus_count",
            "has 1 entries",
        ),
        (
            "topology: [ring]\nnpus_count: [4]\nbandwidth: [1]\nlatency: [0]\n",
            "topology[0]",
            "Ring",
        ),
        (
            "topology: [Ring]\nnpus_count: [1]\nbandwidth: [1]\nlatency: [0]\n",
            "npus_count[0]",
            "1 NPUs",
        ),
        (
            "topology: [Ring]\nnpus_count: [4]\nbandwidth: [0]\nlatency: [0]\n",
            "bandwidth[0]",
            "0.0 GB/s",
        ),
        (
            "topology: [Ring]\nnpus_count: [4]\nbandwidth: [1]\nlatency: [-1]\n",
            "latency[0]",
            "-1.0 ns",
        ),
        (
            "topology: Ring\nnpus_count: [4]\nbandwidth: [1]\nlatency: [0]\n",
            "topology",
            "expected a list",
        ),
    ],
)
def test_reader_errors(tmp_path: Path, text: str, field: str, problem: str) -> None:
    path = tmp_path / "n.yml"
    path.write_text(text)
    with pytest.raises(InputError) as e:
        read_network_yml(path)
    assert e.value.source == str(path)
    assert field in (e.value.field or "") and problem in e.value.problem + (e.value.fix or ""), (
        e.value
    )
