"""A cost model's prices ($ per GB/s of per-NPU bandwidth) outside the plausible range are refused
by the ``[cluster]`` figures' rule, naming the file, the class and the price: a NIC's price
written as its $ per GB/s (120,000 for 120) once priced the network of 8,192 GPUs at $12.3B."""

from __future__ import annotations

from pathlib import Path

import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.io.cluster_units import COST_PRICE_RANGE, unit_problem
from hieropt.io.libra import read_cost_model
from tests.cli.util import error_line, run

REPO = Path(__file__).resolve().parents[2]
LLAMA = REPO / "instances" / "llama3-405b-16k-cluster.toml"
"""16,384 H100; its ScaleOut class costs 56 + 93.75 + 240 $ per GB/s (link, switch, NIC)."""

HIGH_FIX = (
    "give $ per GB/s of per-NPU bandwidth, not a part's price: the part's price over the GB/s "
    "per direction it gives one NPU (an 800 Gb/s NIC, 100 GB/s, at $12,000: 12000 / 100 = 120), "
    "in $ (not thousands of $ or cents) and per GB/s (a price per Gb/s is 8 x too low)"
)


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    text = LLAMA.read_text().replace('"../models/', f'"{REPO}/models/')
    assert old in text
    path = tmp_path / "inst.toml"
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize(("old", "new", "field", "problem", "fix"), [
    ("nic_usd_per_gbps = 240.0", "nic_usd_per_gbps = 120000", "cost.ScaleOut.nic_usd_per_gbps",
     "120000 $ per GB/s of per-NPU bandwidth is above 10000", HIGH_FIX),
    ("link_usd_per_gbps = 56.0", "link_usd_per_gbps = 5.6e-8", "cost.ScaleOut.link_usd_per_gbps",
     "5.6e-08 $ per GB/s of per-NPU bandwidth looks like $ per byte/s",
     "give $ per GB/s of per-NPU bandwidth, e.g. 56"),
])
def test_an_implausible_price_is_refused(tmp_path, old, new, field, problem, fix):
    path = _variant(tmp_path, old, new)
    r = run("solve", path, "--no-sensitivity")
    assert r.exit_code == 2
    assert error_line(r) == f"error: {path}: {field}: {problem}; fix: {fix}"


def test_a_libra_cost_file_names_its_own_keys(tmp_path):
    cost = tmp_path / "cost.yml"
    cost.write_text("Pod:\n  Link: 4.0\nNet:\n  Link: 7.8\n  Switch: 18\n  nic: 31600\n")
    with pytest.raises(InputError) as e:
        read_cost_model(cost)
    assert str(e.value) == (f"{cost}: Net.nic: 31600 $ per GB/s of per-NPU bandwidth is above "
                            f"10000; fix: {HIGH_FIX}")


def test_the_shipped_prices_toys_and_zero_are_accepted():
    inst = hieropt.load_instance(LLAMA)
    assert inst.cost.classes["ScaleOut"].nic_usd_per_gbps == 240.0
    assert inst.cost.classes["NVLink"].link_usd_per_gbps == 0.01  # (a scale-up domain as free)
    for price in (0.0, 1e-6, 0.01, 240.0, 1e4):
        assert unit_problem(price, COST_PRICE_RANGE) is None, price
    assert unit_problem(1.0001e4, COST_PRICE_RANGE) is not None
