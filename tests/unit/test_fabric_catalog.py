"""Sourced parts catalogs: the shipped files load, and every bad input is one line naming file,
field and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.errors import InputError
from hieropt.io.catalog import read_catalog as read_sourced_catalog
from hieropt.io.instance import load_instance

ROOT = Path(__file__).resolve().parents[2]
INSTANCE = ROOT / "instances" / "gpt3-nvl72-2304.toml"

GOOD = """
name = "t"
require_sources = true
[sources.s]
ref = "test figure"
date = "2026-12-01"
kind = "estimate"
[[classes.NVLink.nics]]
name = "nvl"
gbps = 50
max_per_npu = 18
usd = 0
watts = 0
source = "s"
[[classes.NVLink.switches]]
name = "chip"
radix = 72
usd_per_switch = 0
watts = 0
source = "s"
[[classes.ScaleOut.nics]]
name = "cx7"
gbit_per_s = 400
max_per_npu = 1
usd = 2000
watts = 25
source = "s"
[[classes.ScaleOut.switches]]
name = "qm"
radix = 64
usd_per_switch = 35000
watts = 750
source = "s"
[[classes.ScaleOut.optics]]
name = "twin"
reach_m = 100
ports = 2
usd = 1250
watts = 17
source = "s"
[classes.ScaleOut.fabric]
placement = "rail_optimized"
oversubscription = [[1, 2]]
link_length_m = [30, 100, 500]
"""


def write(tmp_path, text):
    p = tmp_path / "cat.toml"
    p.write_text(text)
    return p


@pytest.fixture(scope="module")
def instance():
    return load_instance(INSTANCE)


@pytest.mark.parametrize("name", ["nvl72-infiniband.toml", "nvl72-ethernet.toml"])
def test_shipped_catalogs_load_with_sources_and_power(name, instance):
    cat = read_sourced_catalog(ROOT / "catalogs" / name, instance)
    assert cat.require_sources and cat.missing_power() == []
    kinds = {s.kind for s in cat.sources.values()}
    assert {"estimate", "spec", "assumption"} <= kinds and "invented" not in kinds
    fabric = cat.classes["ScaleOut"].fabric
    assert fabric.ratio_choices() == [(1.0,), (2.0,)] and fabric.placement == (
        "per_group",
        "rail_optimized",
    )
    assert cat.classes["NVLink"].fabric.placement == ("multi_plane",)


def test_good_catalog(tmp_path, instance):
    cat = read_sourced_catalog(write(tmp_path, GOOD), instance)
    assert cat.classes["ScaleOut"].optics[0].to_optic().ports == 2


BAD = [
    ("watts = 25\n", "watts = -25\n", "classes.ScaleOut.nics[0] ('cx7').watts", "negative"),
    ("radix = 64\n", "radix = 3\n", "classes.ScaleOut.switches[0] ('qm').radix", "below 4"),
    # (a 60-digit radix overflowed a float in the $ per port check: a traceback)
    ("radix = 64\n", f"radix = {10**60}\n", "classes.ScaleOut.switches[0] ('qm').radix",
     "61-digit number is above 65,536"),
    ("oversubscription = [[1, 2]]", "oversubscription = [[1, 0.5]]", "oversubscription", "below 1"),
    (
        'usd = 2000\nwatts = 25\nsource = "s"\n',
        "usd = 2000\nwatts = 25\n",
        "classes.ScaleOut.nics[0] ('cx7').source",
        "require_sources",
    ),
    (
        'name = "twin"\nreach_m = 100\nports = 2\nusd = 1250\nwatts = 17\nsource = "s"',
        'name = "twin"\nreach_m = 100\nports = 2\nusd = 1250\nwatts = 17\nsource = "nope"',
        "classes.ScaleOut.optics[0] ('twin').source",
        "unknown source 'nope'",
    ),
    ('date = "2026-12-01"', 'date = "1 Dec 2026"', "sources.s.date", "YYYY-MM-DD"),
    ('kind = "estimate"', 'kind = "rumour"', "sources.s.kind", "rumour"),
    ("link_length_m = [30, 100, 500]\n", "", "classes.ScaleOut.fabric.link_length_m", "missing"),
    (
        'placement = "rail_optimized"',
        'placement = "ring"',
        "classes.ScaleOut.fabric.placement",
        "ring",
    ),
    # a number beyond a float's range, and a price in the wrong unit, are named, not solved
    (
        "ports = 2\n",
        f"ports = {10**60}\n",
        "classes.ScaleOut.optics[0] ('twin').ports",
        "1e+60 is above",
    ),
    (
        "usd = 2000\n",
        "usd = 2e15\n",
        "classes.ScaleOut.nics[0] ('cx7').usd",
        "2e+15 is above 1e+12",
    ),
    ("usd_per_switch = 35000", "usd_per_switch = 3.5e13", "usd_per_switch", "3.5e+13 is above"),
]


@pytest.mark.parametrize(("old", "new", "field", "problem"), BAD, ids=[b[3] for b in BAD])
def test_bad_catalog_one_line(tmp_path, instance, old, new, field, problem):
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(InputError) as e:
        read_sourced_catalog(path, instance)
    msg = e.value.one_line()
    assert "\n" not in msg and msg.startswith(str(path))
    assert field in msg and problem in msg and "fix:" in msg


def test_optics_on_a_link_class(tmp_path):
    inst = load_instance(ROOT / "instances" / "gpt3-4d.toml")
    text = """check_units = false  # (toy $1 parts, meant)
[classes.InterChiplet]
links = [{ name = "l", gbps = 25, usd = 1, max_per_npu = 16 }]
optics = [{ name = "o", reach_m = 2, usd = 1 }]
[classes.InterPackage]
links = [{ name = "l", gbps = 25, usd = 1, max_per_npu = 16 }]
[classes.InterNode]
links = [{ name = "l", gbps = 25, usd = 1, max_per_npu = 16 }]
[classes.InterPod]
nics = [{ name = "n", gbps = 50, usd = 1, max_per_npu = 2 }]
switches = [{ name = "s", radix = 64, usd_per_switch = 1 }]
"""
    with pytest.raises(
        InputError, match=r"classes\.InterChiplet\.optics: class 'InterChiplet' has no Switch"
    ):
        read_sourced_catalog(write(tmp_path, text), inst)
    # without require_sources and sources the same file (minus the optics) is a valid sourced
    # catalog
    assert (
        read_sourced_catalog(
            write(tmp_path, text.replace('optics = [{ name = "o", reach_m = 2, usd = 1 }]\n', "")),
            inst,
        ).require_sources
        is False
    )
