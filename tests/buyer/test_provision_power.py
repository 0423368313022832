"""`hieropt provision` counts the bill of materials' power in the run's MW, MWh and $ when the
`[cluster]` section gives no network_w_per_npu, says which network power it counts, and keeps a
given network_w_per_npu."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hieropt
from hieropt.model.run import provisioned_run

REPO = Path(__file__).resolve().parents[2]
LLAMA = REPO / "instances" / "llama3-405b-16k-cluster.toml"
"""16,384 H100 at 700 W, 2,048 servers of 8 at 4,600 W, PUE 1.25, $11.7M per MW over 15 years,
8.26 cents per kWh, 15.6T tokens."""
T_NS, NET_USD, BOM_W = 6.74e9, 300e6, 16384 * 50.0  # a 819,200 W network: 50 W per NPU


def _facility_mw(network_w_per_npu: float) -> float:
    it_w = 16384 * (700 + network_w_per_npu) + 2048 * 4600
    return it_w * 1.25 / 1e6


def test_the_bills_power_is_counted_without_network_w_per_npu():
    inst = hieropt.load_instance(LLAMA)
    assert inst.cluster.network_w_per_npu is None
    plain = hieropt.run_figures(inst, T_NS, NET_USD)
    run, line = provisioned_run(inst, T_NS, NET_USD, BOM_W)
    # 16,384 x 750 W + 2,048 x 4,600 W = 21,708,800 W of IT power; x 1.25 = 27.136 MW
    assert run.power_mw == pytest.approx(27.136, rel=1e-12) == pytest.approx(_facility_mw(50))
    assert plain.power_mw == pytest.approx(26.112, rel=1e-12)
    assert run.energy_mwh == pytest.approx(27.136 * run.time_to_train_days * 24, rel=1e-12)
    # the extra 1.024 MW: its facility share and its electricity, per hour of the run
    extra = 11.7e6 * (21.7088 - 20.8896) / (15 * 8760) + 1.024 * 1000 * 0.0826
    assert run.cost_per_hour_usd - plain.cost_per_hour_usd == pytest.approx(extra, rel=1e-9)
    assert run.left_out == ()
    assert line == ("network power: the bill of materials' 819,200 W (50 W per NPU) is counted "
                    "in the cluster's MW, MWh and $")


def test_a_given_network_w_per_npu_is_kept_and_named():
    inst = hieropt.load_instance(LLAMA)
    inst = inst.model_copy(
        update={"cluster": inst.cluster.model_copy(update={"network_w_per_npu": 30.0})})
    run, line = provisioned_run(inst, T_NS, NET_USD, BOM_W)
    assert run.power_mw == pytest.approx(_facility_mw(30), rel=1e-12)  # 26.7264 MW
    assert line == ("network power: [cluster] network_w_per_npu = 30 W per NPU is counted in the "
                    "cluster's MW, MWh and $; the bill of materials says 819,200 W (50 W per NPU)")
    unknown, none = provisioned_run(hieropt.load_instance(LLAMA), T_NS, NET_USD, None)
    assert none is None
    assert unknown.left_out == (
        "the network's power (a part of the bill of materials has no watts)",)


@pytest.mark.heavy
def test_provision_command_counts_the_bills_power(tmp_path):
    """End to end on the NVL72 instance (2,304 GPUs at 1,200 W, PUE 1.25) and the InfiniBand
    catalog: the run's MW is (2,304 x 1,200 + the bill's W) x 1.25."""
    from tests.cli.util import run
    from tests.report.nvl72 import with_cluster

    inst = with_cluster(tmp_path / "inst.toml")
    r = run("provision", inst, "--catalog", REPO / "catalogs" / "nvl72-infiniband.toml",
            "--within", "0", "--json", "-")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    bom_w = out["power_w"]
    assert bom_w > 0
    assert out["run"]["power_mw"] == pytest.approx((2304 * 1200 + bom_w) * 1.25 / 1e6, rel=1e-12)
    assert any(n.startswith(f"network power: the bill of materials' {bom_w:,.0f} W")
               for n in out["notes"])
