"""The words of the NIC cap (:mod:`hieropt.io.nic_bound`): where its figures come from, in its
notes and in the design caveat alike (:func:`hieropt.workloads.llm.links.figure_source`: an NPU the
model file describes itself, ``[params.npu]`` without ``accelerator``, is named with its model
file, not the catalog), and a catalog part left out for the cap, named as the cap's, not the
instance's bound, by the library and by ``hieropt provision``."""

from __future__ import annotations

from pathlib import Path

import pytest

import hieropt
from hieropt.io.catalog import read_catalog
from hieropt.io.nic_bound import nic_bounded, nic_checked_catalog
from hieropt.workloads.llm.links import figure_source
from tests.provision.llama70b import LLAMA70B_1024

MODEL = LLAMA70B_1024 + """\
[params.npu]
name = "X1"
peak_tflops = 989
efficiency = 0.5
hbm_gib = 80
hbm_gbps = 3350
hbm_reserve_gib = 4.0
scaleup_gbps = 450
scaleup_npus = 8
nic_gbps = 40
"""
"""Llama 3 70B on 1,024 NPUs of an accelerator the model file describes: 450 GB/s of scale-up
within 8 NPUs, at most 40 GB/s per NPU through its NIC beyond them."""

INSTANCE = """\
name = "x1-1024"
objective = "performance"
training_loop = "step"
workload = "model.toml"
constraints = []
bounds = [
  { dim = 0, lower_gbps = 50, upper_gbps = 450 },
  { dim = 1, lower_gbps = 12.5, upper_gbps = 100 },
]
[network]
dims = [{ block = "Switch", npus = 8, cost_class = "A" },
        { block = "Switch", npus = 128, cost_class = "B" }]
[cost.A]
link_usd_per_gbps = 0.01
switch_usd_per_gbps = 0.01
nic_usd_per_gbps = 0.01
[cost.B]
link_usd_per_gbps = 56.0
switch_usd_per_gbps = 93.75
nic_usd_per_gbps = 240.0
"""


H100 = """[params.npu]
accelerator = "H100-SXM"
hbm_reserve_gib = 4.0
"""
"""The [params.npu] of an H100 from the shipped catalog: domain 8 NPUs, at most 50 GB/s per NPU
through its NIC (catalog nic_gbps)."""

CATALOG = """name = "ib"
[classes.A]
nics = [ { name = "NVLink (bundled)", gbps = 450, usd = 0, watts = 0, max_per_npu = 1 } ]
[[classes.A.switches]]
name = "NVSwitch (bundled)"
radix = 64
usd_per_switch = 0
port_gbps = 450
watts = 0
[classes.B]
nics = [
  { name = "CX8 800G", gbit_per_s = 800, usd = 3000, watts = 30, max_per_npu = 1 },
  { name = "CX7 400G", gbit_per_s = 400, usd = 1500, watts = 25, max_per_npu = 2 },
]
[[classes.B.switches]]
name = "QM9700 64x400G"
radix = 64
usd_per_switch = 35000
port_gbit_per_s = 400
watts = 750
"""
"""Parts for dimension 1: an 800G NIC (100 GB/s per NPU, one per NPU: within the instance's
upper_gbps = 100, above the H100's NIC cap of 50) and a 400G NIC (50 GB/s, up to two)."""

LEFT_OUT = ("classes.B.nics[0] ('CX8 800G'): one unit gives 100 GB/s per NPU on dimension 1, above "
            "the H100-SXM's NIC cap bw[1] <= 50 (catalog nic_gbps of the H100-SXM): left out "
            "(other parts serve the network)")
"""The note on the 800G NIC, after the catalog file's name."""


def _files(tmp_path: Path, npu: str | None = None) -> Path:
    """The instance file of :data:`MODEL` (its [params.npu] replaced by ``npu``) on Switch 8 x
    Switch 128 (1,024 NPUs), dimension 1 bounded at 100 GB/s per NPU."""
    model = MODEL if npu is None else MODEL.split("[params.npu]")[0] + npu
    (tmp_path / "model.toml").write_text(model)
    (tmp_path / "inst.toml").write_text(INSTANCE)
    return tmp_path / "inst.toml"


@pytest.fixture
def instance(tmp_path: Path):
    """The instance of :data:`MODEL`."""
    return hieropt.load_instance(_files(tmp_path))


def test_the_words_of_each_source():
    assert figure_source("nic_gbps", "H100-SXM") == "catalog nic_gbps of the H100-SXM"
    assert figure_source("nic_gbps", "H100-SXM", given=True) == (
        "[params.npu] nic_gbps, given in place of the catalog's")
    assert figure_source("scaleup_npus", "X1", "model file") == (
        "[params.npu] scaleup_npus of the model file")
    assert figure_source("scaleup_npus", "H100-SXM", "calibrated file h100.toml") == (
        "[params.npu] scaleup_npus of the calibrated file h100.toml")


def test_the_cap_names_the_model_file(instance):
    """Dimension 1 reaches 8 x 128 = 1,024 NPUs, past the 8 of the domain: capped at the 40 GB/s
    of the model file's nic_gbps (below the instance's 100), the note naming the model file."""
    bounded, notes = nic_bounded(instance)
    assert [b.upper_gbps for b in bounded.bounds] == [450.0, 40.0]
    assert notes == (
        "dimension 1 (Switch 128, B) bought at most 40 GB/s per NPU (below the instance's "
        "upper_gbps = 100): it reaches 1,024 NPUs, beyond the X1's scale-up domain of 8 "
        "([params.npu] scaleup_npus of the model file), and past it one X1 sends at most 40 GB/s "
        "through its NIC ([params.npu] nic_gbps of the model file); for more, name another "
        "accelerator ([params.npu] accelerator), or give the model file's [params.npu] nic_gbps "
        "(a faster host link) or scaleup_npus (a larger scale-up domain)",)


def test_the_design_caveat_names_the_model_file(instance):
    """A design of 100 GB/s per NPU on dimension 1 (past the domain, above the 40 of the NIC)
    gets the caveat with the same sources as the cap's note."""
    fig = hieropt.run_figures(instance, 1e9, bw_gbps=[450.0, 100.0])
    (caveat,) = [c for c in fig.caveats if "scale-up domain" in c]
    assert caveat == (
        "dimension 1: 100 GB/s per NPU across 1,024 NPUs, beyond the X1's scale-up domain of 8 "
        "([params.npu] scaleup_npus of the model file, its baseboard or rack): past it one X1 "
        "sends at most 40 GB/s through its NIC ([params.npu] nic_gbps of the model file), so it "
        "needs a scale-up tier beyond that domain; bound it (bounds upper_gbps = 40) or take it "
        "as a hypothetical network")


def test_a_part_left_out_for_the_cap_names_the_cap(tmp_path):
    """Within the instance's bounds (dimension 1 at most 100 GB/s) the 800G NIC fits; within the
    H100's NIC cap (50 GB/s per NPU) one unit is too fast: left out, the note naming the cap."""
    inst = hieropt.load_instance(_files(tmp_path, H100))
    cat = tmp_path / "ib.toml"
    cat.write_text(CATALOG)
    usable, notes = nic_checked_catalog(read_catalog(cat), inst, cat)
    assert notes == (f"{cat}: {LEFT_OUT}",)
    assert [p.name for p in usable.classes["B"].nics] == ["CX7 400G"]


@pytest.mark.heavy
def test_provision_prints_the_note_of_a_part_left_out_for_the_cap(tmp_path):
    """``hieropt provision`` prints the catalog's notes of the capped instance before it solves
    (here a 1 ms target, below the compute alone: exit 3 without a MILP)."""
    from tests.cli.util import run

    path = _files(tmp_path, H100)
    cat = tmp_path / "ib.toml"
    cat.write_text(CATALOG)
    r = run("provision", path, "--catalog", cat, "--max-time", "1ms", "--no-compare")
    assert r.exit_code == 3, r.output
    assert f"note: {cat}: {LEFT_OUT}" in " ".join(r.stderr.split())
