"""Unit slips in a `[cluster]` section and in a parts catalog are refused with one line naming the
file, the field and the converted value (exit 2); the shipped figures load unchanged."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.io.cluster_units import CLUSTER_RANGES, unit_problem
from hieropt.model.catalog import Catalog
from tests.cli.util import error_line, run

REPO = Path(__file__).resolve().parents[2]
LLAMA = REPO / "instances" / "llama3-405b-16k-cluster.toml"
"""16,384 H100 (8 per server on NVLink, 2,048-way scale-out) with a sourced [cluster]."""


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    text = LLAMA.read_text().replace('"../models/', f'"{REPO}/models/')
    assert old in text
    path = tmp_path / "inst.toml"
    path.write_text(text.replace(old, new))
    return path


SLIPS = [
    ('accelerator_w = { value = 700,', 'accelerator_w = { value = 0.7,', "cluster.accelerator_w",
     "0.7 W per accelerator looks like kW; fix: give watts, e.g. 700"),
    ('server_w = { value = 4600,', 'server_w = { value = 4.6,', "cluster.server_w",
     "4.6 W per server looks like kW; fix: give watts, e.g. 4600"),
    ('facility_usd_per_mw = { value = 11.7e6,', 'facility_usd_per_mw = { value = 11.7,',
     "cluster.facility_usd_per_mw",
     "11.7 $ per MW looks like $M per MW; fix: give $ per MW of IT power, e.g. 11.7e6"),
    ('facility_usd_per_mw = { value = 11.7e6,', 'facility_usd_per_mw = { value = 11700,',
     "cluster.facility_usd_per_mw",
     "11700 $ per MW looks like $ per kW; fix: give $ per MW of IT power, e.g. 11.7e6"),
    ('accelerator_usd = { value = 33750,', 'accelerator_usd = { value = 33.75,',
     "cluster.accelerator_usd",
     "33.75 $ per accelerator looks like thousands of $; fix: give dollars, e.g. 33750"),
    # (a DGX H100's $270,000 typed as the price of one of its 8 GPUs)
    ('accelerator_usd = { value = 33750,', 'accelerator_usd = { value = 270000,',
     "cluster.accelerator_usd", "270000 $ per accelerator looks like the price of an "
     "8-accelerator server; fix: give dollars, e.g. 33750"),
    ('accelerator_usd = { value = 33750,', 'accelerator_usd = { value = 5e6,',
     "cluster.accelerator_usd", "5e+06 $ per accelerator is above 150000; fix: give one "
     "accelerator's price in $ (H100: about 33750)"),
    ('electricity_usd_per_kwh = { value = 0.0826,', 'electricity_usd_per_kwh = { value = 8.26,',
     "cluster.electricity_usd_per_kwh",
     "8.26 $ per kWh looks like cents per kWh; fix: give $ per kWh, e.g. 0.0826 for 8.26 cents "
     "per kWh"),
    # ($82.6 per MWh is the example's 0.0826 $ per kWh; 82.6 cents would be 0.826)
    ('electricity_usd_per_kwh = { value = 0.0826,', 'electricity_usd_per_kwh = { value = 82.6,',
     "cluster.electricity_usd_per_kwh",
     "82.6 $ per kWh looks like $ per MWh or cents per kWh; fix: give $ per kWh, e.g. 0.0826 "
     "for $82.6 per MWh or 0.826 for 82.6 cents per kWh"),
    ('electricity_usd_per_kwh = { value = 0.0826,', 'electricity_usd_per_kwh = { value = 826,',
     "cluster.electricity_usd_per_kwh",
     "826 $ per kWh looks like $ per MWh; fix: give $ per kWh, e.g. 0.826 for $826 per MWh"),
    ('amortisation_years = { value = 5,', 'amortisation_years = { value = 48,',
     "cluster.amortisation_years", "48 years looks like months; fix: give years, e.g. 4"),
    # (above the model's cap of 50 years: the months are still named, not the cap)
    ('amortisation_years = { value = 5,', 'amortisation_years = { value = 60,',
     "cluster.amortisation_years", "60 years looks like months; fix: give years, e.g. 5"),
    ('amortisation_years = { value = 5,', 'amortisation_years = { value = 72,',
     "cluster.amortisation_years", "72 years looks like months; fix: give years, e.g. 6"),
    ("[cluster]\nrequire_sources = true\n", "[cluster]\nmax_power_mw = 25000\n",
     "cluster.max_power_mw",
     "25000 MW looks like kW; fix: give the site's power cap in MW, e.g. 25"),
    ("[cluster]\nrequire_sources = true\n", "[cluster]\nmax_power_mw = 25e6\n",
     "cluster.max_power_mw",
     "2.5e+07 MW looks like W; fix: give the site's power cap in MW, e.g. 25"),
    ("[cluster]\nrequire_sources = true\n", "[cluster]\nmax_power_mw = 25e9\n",
     "cluster.max_power_mw", "2.5e+10 MW is above 10000; fix: give the site's power cap in MW of "
     "facility power (e.g. 25)"),
    ('npus_per_server = { value = 8,', 'npus_per_server = { value = 3,', "cluster.npus_per_server",
     "3 NPUs per server do not divide the cluster's 16,384 NPUs; fix: give the NPUs of one "
     "server, a divisor of 16,384, e.g. 8 (the first dimension's NPUs)"),
]


@pytest.mark.parametrize(("old", "new", "field", "words"), SLIPS)
def test_a_unit_slip_is_refused_with_the_conversion(tmp_path, old, new, field, words):
    path = _variant(tmp_path, old, new)
    r = run("solve", path, "--no-sensitivity")
    assert r.exit_code == 2
    assert error_line(r) == f"error: {path}: {field}: {words}"


def test_an_npu_hour_rate_with_capex_figures_is_refused(tmp_path):
    """A rental rate replaces the accelerators, servers, facility and electricity: given with them,
    one of the two would be dropped silently."""
    path = _variant(tmp_path, "[cluster]\nrequire_sources = true\n",
                    "[cluster]\nusd_per_npu_hour = 2.5\n")
    r = run("solve", path, "--no-sensitivity")
    assert r.exit_code == 2
    line = error_line(r)
    assert line.startswith(f"error: {path}: cluster: usd_per_npu_hour: given with "
                           "accelerator_usd, facility_usd_per_mw, electricity_usd_per_kwh")
    assert "give either usd_per_npu_hour" in line


def test_the_shipped_figures_and_zero_are_accepted(tmp_path):
    inst = hieropt.load_instance(LLAMA)
    assert inst.cluster.accelerator_w == 700 and inst.cluster.facility_usd_per_mw == 11.7e6
    # 0 is free (bundled) or none, never a slip
    for key, rule in CLUSTER_RANGES.items():
        assert unit_problem(0.0, rule) is None, key
        assert unit_problem(rule.low, rule) is None and unit_problem(rule.high, rule) is None
    # the shipped amortisation and a 5 GW site (the largest announced) load unchanged
    assert inst.cluster.amortisation_years == 5
    assert unit_problem(5000.0, CLUSTER_RANGES["max_power_mw"]) is None
    assert unit_problem(10.0, CLUSTER_RANGES["amortisation_years"]) is None
    free = _variant(tmp_path, "accelerator_usd = { value = 33750,",
                    "accelerator_usd = { value = 0,")
    assert hieropt.load_instance(free).cluster.accelerator_usd == 0


def test_a_space_checks_every_cluster_size(tmp_path):
    """A co-design space's npus_per_server must divide each of its sizes."""
    from tests.buyer.llama_space import LLAMA_SPACE

    text = LLAMA_SPACE.format(model=REPO / "models" / "llama3-70b.toml").replace(
        "npus_per_server = 8", "npus_per_server = 512")  # 256 NPUs are half a server
    path = tmp_path / "space.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(
            "cluster.npus_per_server: 512 NPUs per server do not divide the cluster's 256 NPUs")):
        hieropt.load_codesign(path)


CATALOG = """
name = "two-part-example"
[classes.RoCE]
nics = [{ name = "nic-400G", gbit_per_s = 400, usd = 1500, max_per_npu = 1, watts = 25 }]
[[classes.RoCE.switches]]
name = "sw-64x800G"
radix = 64
usd_per_switch = 200000
port_gbit_per_s = 800
watts = 2000
"""
"""A 400G NIC at $1,500 and 25 W; a 64-port 800G switch at $200,000 and 2,000 W: $3,125 and
31.25 W per port."""


@pytest.mark.parametrize(("old", "new", "field", "words"), [
    ("usd = 1500,", "usd = 1.5,", "nics[0].usd",
     "NIC 'nic-400G' is 1.5 $, 2,083 x below a port of switch 'sw-64x800G' (3,125 $): looks like "
     "thousands of $; fix: give dollars, e.g. 1500 (if 1.5 $ is meant, write check_units = "
     "false at the top of the catalog)"),
    ("watts = 2000", "watts = 2", "switches[0].watts",
     "a port of switch 'sw-64x800G' is 0.03125 W, 800 x below NIC 'nic-400G' (25 W): looks like "
     "kW; fix: give watts in W, e.g. 2000 (if 0.03125 W is meant, write check_units = false "
     "at the top of the catalog)"),
    ("usd = 1500,", "usd = 1000e3,", "switches[0].usd_per_switch",
     "a port of switch 'sw-64x800G' is 3125 $, 320 x below NIC 'nic-400G' (1e+06 $): looks "
     "like thousands of $; fix: give usd_per_switch in $, e.g. 200e6 (if 3125 $ is meant, "
     "write check_units = false at the top of the catalog)"),
    # (a price above any part's names that part, not the one it is compared with)
    ("usd = 1500,", "usd = 1500e3,", "nics[0].usd",
     "NIC 'nic-400G' is 1.5e+06 $, above 1,000,000 $ (the dearest NIC or switch port of a "
     "training cluster costs thousands of $): a mistyped price; fix: give usd in $ per unit (a "
     "ConnectX-7 NIC about 12e3, a 64 x 400G switch about 35e3; if 1.5e+06 $ is meant, write "
     "check_units = false at the top of the catalog)"),
    # (a rating in Tb/s: 0.4 for a 400 Gb/s NIC)
    ("gbit_per_s = 400", "gbit_per_s = 0.4", "nics[0].gbit_per_s",
     "NIC 'nic-400G' gives 0.4 Gb/s per unit, slower than 8 Gb/s (less than one 10 Gb/s port): "
     "looks like Tb/s; fix: give gbit_per_s in Gb/s: 0.4 Tb/s = 400 Gb/s (if 0.4 Gb/s is meant, "
     "write check_units = false at the top of the catalog)"),
    ("usd_per_switch = 200000", "usd_per_switch = 35e9", "switches[0].usd_per_switch",
     "a port of switch 'sw-64x800G' is 5.469e+08 $, above 1,000,000 $ (the dearest NIC or "
     "switch port of a training cluster costs thousands of $): a mistyped price; fix: give "
     "usd_per_switch in $ per unit (a ConnectX-7 NIC about 12e3, a 64 x 400G switch about 35e3; "
     "if 5.469e+08 $ is meant, write check_units = false at the top of the catalog)"),
])
def test_a_catalog_part_in_the_wrong_unit_is_refused(tmp_path, old, new, field, words):
    """A NIC and a port of the switch it plugs into cost and draw alike (within 2-4 x in the
    shipped catalogs); one of them 300 x below the other is in $k or kW."""
    path = tmp_path / "cat.toml"
    path.write_text(CATALOG)
    assert hieropt.load_catalog(path).classes["RoCE"].nics[0].usd == 1500
    path.write_text(CATALOG.replace(old, new))
    with pytest.raises(InputError) as e:
        hieropt.load_catalog(path)
    assert e.value.one_line() == f"{path}: classes.RoCE.{field}: {words}"
    # the figure as meant: the catalog says so, and it loads with it
    text = "check_units = false\n" + CATALOG.replace(old, new)
    path.write_text(text)
    assert hieropt.load_catalog(path) == Catalog(**tomllib.loads(text))


TOY = """\
check_units = false
[classes.In]
links = [{ name = "l", gbps = 50, usd = 10, max_per_npu = 1 }]
[classes.Out]
nics = [{ name = "nic100", gbit_per_s = 100, usd = 1, max_per_npu = 2 }]
switches = [{ name = "sw8", radix = 8, usd_per_port = 500 }]
"""
"""Toy prices: a $1 NIC and a $500 switch port, 500 x apart, meant that way."""


def test_toy_prices_meant_far_apart_are_provisioned_as_given(tmp_path: Path):
    """Ring 2 x Switch 8 (16 NPUs, 2 switch groups of 8), bw[1] >= 25: 2 NICs of 100 Gb/s per
    NPU (32 NICs, 16 ports per group, radix 8: 4 leaves + 2 spines per group, 12 switches) and one
    50 GB/s link port per NPU: 16 x $10 + 32 x $1 + 12 x 8 ports x $500 = $48,192. Without
    ``check_units = false`` the catalog is refused, the fix naming the key."""
    from tests.provision.util import load

    dims = [("Ring", 2, "In"), ("Switch", 8, "Out")]
    mapping = {"forward": [2, 1], "input_grad": [1, 1], "weight_grad": [1, 8]}
    layers = [(1e6, "ALLREDUCE", 1e9, 0, "NONE", 0, 0, "ALLREDUCE", 1e9)]
    inst, path = load(tmp_path, dims, mapping, layers, TOY, constraints=["bw[1] >= 25"])
    p = hieropt.provision(inst, path)
    assert [(o.part.name, o.units_total) for o in p.design] == [("l", 16), ("nic100", 32)]
    assert p.design[1].switches == 12
    assert p.network_cost_usd == 16 * 10 + 32 * 1 + 12 * 8 * 500 == 48_192
    path.write_text(TOY.replace("check_units = false\n", ""))
    with pytest.raises(InputError) as e:
        hieropt.provision(inst, path)
    assert e.value.one_line() == (
        f"{path}: classes.Out.nics[0].usd: NIC 'nic100' is 1 $, 500 x below a port of switch "
        "'sw8' (500 $): looks like thousands of $; fix: give dollars, e.g. 1000 (if 1 $ is "
        "meant, write check_units = false at the top of the catalog)"
    )


@pytest.mark.parametrize(("rate", "words"), [
    (0.002, "0.002 $ per NPU-hour looks like thousands of $; fix: give dollars, e.g. 2"),
    (2000, "2000 $ per NPU-hour is above 100; fix: give the all-in rate of one NPU for one hour in "
           "$ (H100 rented: about 2-4)"),
])
def test_an_npu_hour_rate_in_the_wrong_unit_is_refused(tmp_path, rate, words):
    """An all-in rental rate far outside $0.05-$100 per NPU-hour is a unit slip: it would set the $
    per run and move the min_run_cost design."""
    text = LLAMA.read_text().replace('"../models/', f'"{REPO}/models/')
    capex = ("require_sources", "accelerator_usd", "server_usd", "rack_usd",
             "facility_usd_per_mw", "electricity_usd_per_kwh")
    kept = [x for x in text.splitlines() if not x.startswith(capex)]
    text = "\n".join(kept).replace("\n[cluster]\n", f"\n[cluster]\nusd_per_npu_hour = {rate}\n")
    path = tmp_path / "inst.toml"
    path.write_text(text + "\n")
    r = run("solve", path, "--no-sensitivity")
    assert r.exit_code == 2
    assert error_line(r) == f"error: {path}: cluster.usd_per_npu_hour: {words}"
    ok = tmp_path / "ok.toml"
    ok.write_text(text.replace(f"usd_per_npu_hour = {rate}", "usd_per_npu_hour = 2.5") + "\n")
    assert run("solve", ok, "--no-sensitivity").exit_code == 0


@pytest.mark.parametrize(("old", "new", "field", "words"), [
    # a $2 NIC beside a $3,125 port is 1,563 x below it: the ratio rule names it; beside a switch
    # priced in $k too ($200 a switch: $3.125 a port) the ratio holds and the floor names it
    ("usd_per_switch = 200000", "usd_per_switch = 200", "nics[0].usd",
     "NIC 'nic-400G' is 2 $, below 50 $ (the cheapest NIC of a training cluster costs hundreds "
     "of $): looks like thousands of $; fix: give usd in $, e.g. 2000 (if 2 $ is meant, write "
     "check_units = false at the top of the catalog)"),
    # a NIC alone in its class (no switch to compare it with)
    ("[[classes.RoCE.switches]]", "[[classes.Other.switches]]", "nics[0].usd",
     "NIC 'nic-400G' is 2 $, below 50 $"),
    # a switch port of $40 (2,560 / 64) beside a $60 NIC: alike, the port below the floor
    ("usd_per_switch = 200000", "usd_per_switch = 2560", "switches[0].usd_per_switch",
     "a port of switch 'sw-64x800G' is 40 $, below 50 $ (the cheapest switch port of a training "
     "cluster costs hundreds of $): looks like thousands of $; fix: give usd_per_switch in $, "
     "e.g. 2.56e6 (if 40 $ is meant, write check_units = false at the top of the catalog)"),
])
def test_a_nic_or_port_below_the_floor_is_refused(tmp_path, old, new, field, words):
    """A NIC or a switch port under $50 is a price in $k (the 300 x ratio between a NIC and a
    port misses a catalog whose every part is in $k, or a NIC without a switch)."""
    nic = "usd = 60," if "2560" in new else "usd = 2,"
    text = CATALOG.replace("usd = 1500,", nic).replace(old, new)
    cls = "Other" if "Other" in new else "RoCE"
    path = tmp_path / "cat.toml"
    path.write_text(text)
    with pytest.raises(InputError) as e:
        hieropt.load_catalog(path)
    one = e.value.one_line()
    assert one.startswith(f"{path}: classes.RoCE.{field}: {words}"), one
    assert cls in text
    path.write_text("check_units = false\n" + text)
    hieropt.load_catalog(path)  # (meant: loads)
    # 0 is bundled or free, and $50 itself is accepted (a $50 NIC, a 64-port switch at $3,200)
    for nic_usd, switch_usd in (("0", "200000"), ("50", "3200")):
        path.write_text(CATALOG.replace("usd = 1500,", f"usd = {nic_usd},").replace(
            "usd_per_switch = 200000", f"usd_per_switch = {switch_usd}"))
        hieropt.load_catalog(path)


def test_the_shipped_catalogs_pass_the_floor():
    for name in ("example-4d", "nvl72-ethernet", "nvl72-infiniband"):
        hieropt.load_catalog(REPO / "catalogs" / f"{name}.toml")


@pytest.mark.parametrize(("old", "new", "field", "words"), [
    ("gbit_per_s = 400,", "gbit_per_s = 400e9,", "nics[0].gbit_per_s",
     "NIC 'nic-400G' gives 4e+11 Gb/s (5e+10 GB/s) per unit, above 1e+06 GB/s (a thousand times "
     "the fastest scale-up link): looks like bit/s; fix: give gbit_per_s in Gb/s: 4e+11 bit/s = "
     "400 Gb/s"),
    ("gbit_per_s = 400,", "gbps = 50e9,", "nics[0].gbps",
     "NIC 'nic-400G' gives 5e+10 GB/s per unit, above 1e+06 GB/s (a thousand times the fastest "
     "scale-up link): looks like bytes/s; fix: give gbps in GB/s: 5e+10 bytes/s = 50 GB/s"),
    ("port_gbit_per_s = 800", "port_gbit_per_s = 800e9", "switches[0].port_gbit_per_s",
     "a port of switch 'sw-64x800G' gives 8e+11 Gb/s (1e+11 GB/s) per unit, above 1e+06 GB/s (a "
     "thousand times the fastest scale-up link): looks like bit/s; fix: give port_gbit_per_s in "
     "Gb/s: 8e+11 bit/s = 800 Gb/s"),
])
def test_a_part_bandwidth_in_bits_or_bytes_per_second_is_refused(tmp_path, old, new, field,
                                                                  words):
    """A 400G NIC written gbit_per_s = 400e9 was read as 5e10 GB/s per unit: loaded, then left
    out of every design with a note on the constraints. Refused with the conversion, even in a
    catalog of toy prices (check_units = false): no bandwidth that far out is meant."""
    path = tmp_path / "cat.toml"
    for text in (CATALOG.replace(old, new), "check_units = false\n" + CATALOG.replace(old, new)):
        path.write_text(text)
        with pytest.raises(InputError) as e:
            hieropt.load_catalog(path)
        assert e.value.one_line() == f"{path}: classes.RoCE.{field}: {words}"
    # 1e6 GB/s per unit itself loads
    path.write_text(CATALOG.replace(old, new.replace("400e9", "8e6").replace("50e9", "1e6")
                                    .replace("800e9", "8e6")))
    hieropt.load_catalog(path)
