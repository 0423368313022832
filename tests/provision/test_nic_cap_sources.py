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
        "[params.npu] nic_gbps of the model file, given in place of the catalog's")
    assert figure_source("nic_gbps", "X1", catalog="cat/mine.toml") == (
        "catalog nic_gbps of the X1 in cat/mine.toml")
    assert figure_source("nic_gbps", "X1", given=True, catalog="cat/mine.toml") == (
        "[params.npu] nic_gbps of the model file, given in place of the catalog cat/mine.toml's")
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


def _own_catalog(tmp_path: Path, nic_gbps: float) -> Path:
    """``mine.toml`` beside the model file: the shipped catalog with the H100-SXM's nic_gbps
    ``nic_gbps`` (GB/s per NPU per direction) in place of its 50."""
    from hieropt.io.npus import DEFAULT_CATALOG

    text = DEFAULT_CATALOG.read_text()
    head, entry = text.split('name = "H100-SXM"\n', 1)
    assert "nic_gbps = 50.0\n" in entry.split("[[accelerator]]")[0]
    path = tmp_path / "mine.toml"
    path.write_text(head + 'name = "H100-SXM"\n'
                    + entry.replace("nic_gbps = 50.0\n", f"nic_gbps = {nic_gbps}\n", 1))
    return path


def _h100(tmp_path: Path, npu: str = H100, catalog: Path | None = None):
    """The instance of an H100 model file (``npu``: its [params.npu]), naming ``catalog`` as its
    own npu_catalog (None: the shipped one)."""
    path = _files(tmp_path, npu)
    model = tmp_path / "model.toml"
    if catalog is not None:
        model.write_text(f'npu_catalog = "{catalog.name}"\n' + model.read_text())
    return hieropt.load_instance(path)


def _caveat(instance) -> str:
    """The caveat of a design of 100 GB/s per NPU on dimension 1 (past the 8 NPUs of the H100's
    domain)."""
    fig = hieropt.run_figures(instance, 1e9, bw_gbps=[450.0, 100.0])
    (caveat,) = [c for c in fig.caveats if "scale-up domain" in c]
    return caveat


def test_a_model_files_own_catalog_gives_the_cap_and_is_named(tmp_path):
    """A model file naming its own catalog (npu_catalog) whose H100-SXM sends at most 40 GB/s:
    dimension 1 is capped at its 40 (not the shipped 50), and the note and the design caveat say
    the figure is that catalog's, with its path (its figure is not "given in place of" the
    shipped catalog's: the model file gives none)."""
    mine = _own_catalog(tmp_path, 40.0)
    inst = _h100(tmp_path, catalog=mine)
    bounded, (note,) = nic_bounded(inst)
    assert [b.upper_gbps for b in bounded.bounds] == [450.0, 40.0]
    words = f"catalog nic_gbps of the H100-SXM in {mine}"
    assert (f"past it one H100-SXM sends at most 40 GB/s through its NIC ({words}); "
            in note)
    assert f"scale-up domain of 8 (catalog scaleup_npus of the H100-SXM in {mine})" in note
    assert f"one H100-SXM sends at most 40 GB/s through its NIC ({words}), so it" in (
        _caveat(inst))


def test_a_figure_given_in_place_of_the_catalogs_is_named_alike(tmp_path):
    """[params.npu] nic_gbps = 80 over the shipped H100-SXM's 50: the cap is 80 GB/s per NPU, and
    the note and the design caveat both name the model file's [params.npu]; over its own
    catalog's 40, that catalog is named; the domain (not given) stays the catalog's."""
    given = "[params.npu] nic_gbps of the model file, given in place of the catalog's"
    inst = _h100(tmp_path, H100 + "nic_gbps = 80\n")
    bounded, (note,) = nic_bounded(inst)
    assert [b.upper_gbps for b in bounded.bounds] == [450.0, 80.0]
    assert f"sends at most 80 GB/s through its NIC ({given}); for more" in note
    assert "scale-up domain of 8 (catalog scaleup_npus of the H100-SXM), and" in note
    caveat = _caveat(inst)
    assert f"sends at most 80 GB/s through its NIC ({given}), so it needs" in caveat
    assert "domain of 8 (catalog scaleup_npus of the H100-SXM, its baseboard or rack)" in caveat
    mine = _own_catalog(tmp_path, 40.0)
    (note,) = nic_bounded(_h100(tmp_path, H100 + "nic_gbps = 80\n", mine))[1]
    assert (f"through its NIC ([params.npu] nic_gbps of the model file, given in place of the "
            f"catalog {mine}'s); for more") in note
    # (the shipped catalog's own figure written out: the catalog's, as a written instance has it)
    (note,) = nic_bounded(_h100(tmp_path, H100 + "nic_gbps = 50\n"))[1]
    assert "through its NIC (catalog nic_gbps of the H100-SXM); for more" in note
