"""A design's bandwidth its NPU cannot have gets a caveat wherever the design is printed: Llama 3
405B on H100-SXM (catalog scale-up 450 GB/s per direction) solved with bounds up to 900 GB/s on
the NVLink dimension and 400 GB/s on the scale-out dimension once printed a 900/400 design and its
days with no note. ``evaluate --bw`` refuses the runs files' unit slips (2 x the scale-up
bandwidth; scale-out above 200 GB/s other than the scale-up bandwidth) with the fix, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hieropt.workloads.llm.flops import zero_pp_caveat
from tests.cases import REPO
from tests.cli.util import error_line, run

H100_DIM0 = (
    "dimension 0: 900 GB/s per NPU is above the H100-SXM's scale-up bandwidth of 450 GB/s per "
    "direction (catalog scaleup_gbps of the H100-SXM): no such NPU exists; bound it (bounds "
    "upper_gbps = 450) or name another accelerator"
)
H100_DIM1 = (
    "dimension 1 (scale-out): 400 GB/s per NPU is more scale-out per NPU than two 800 Gb/s NICs "
    "(4 such NICs per NPU; the shipped catalogs provision at most two): bound it (at most 200 "
    "GB/s per NPU) or take it as a hypothetical network"
)


def _llama(tmp_path: Path) -> Path:
    """Llama 3 405B on 8 x 2,048 H100s (instances/llama3-405b-16k-cluster.toml) at its fastest,
    bounded to 50..900 GB/s on NVLink and 12.5..400 on scale-out: the optimum sits at both upper
    bounds."""
    text = (REPO / "instances" / "llama3-405b-16k-cluster.toml").read_text(encoding="utf-8")
    text = (
        text.replace('"../models/', f'"{REPO}/models/')
        .replace("lower_gbps = 50, upper_gbps = 450", "lower_gbps = 50, upper_gbps = 900")
        .replace("lower_gbps = 12.5, upper_gbps = 50 }", "lower_gbps = 12.5, upper_gbps = 400 }")
        .replace('objective = "min_run_cost"', 'objective = "performance"')
    )
    p = tmp_path / "llama-900.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_the_caveats_in_words():
    from hieropt.workloads.llm.links import NIC_GBPS, SCALEOUT_GBPS, bandwidth_caveats

    assert (NIC_GBPS, SCALEOUT_GBPS) == (100.0, 200.0)
    assert bandwidth_caveats([900, 400], 450, "H100-SXM") == (H100_DIM0, H100_DIM1)
    # at the limits (a design bounded there), an outer NVLink tier at the scale-up bandwidth, an
    # unknown NPU: no caveat
    assert bandwidth_caveats([450, 200], 450, "H100-SXM") == ()
    assert bandwidth_caveats([450, 450], 450, "H100-SXM") == ()
    assert bandwidth_caveats([900, 400], None, "npu") == ()
    # one dimension: no scale-out; a co-design candidate's scale-out per NPU: 319.7 GB/s = 4
    # NICs of 100 GB/s, its outermost dimension's other caveat left out
    assert bandwidth_caveats([301], 300, "A100-SXM-80GB", "model file") == (
        "dimension 0: 301 GB/s per NPU is above the A100-SXM-80GB's scale-up bandwidth of 300 "
        "GB/s per direction ([params.npu] scaleup_gbps of the model file): no such NPU exists; "
        "bound it (bounds upper_gbps = 300) or name another accelerator",
    )
    (only,) = bandwidth_caveats([250, 319.7], 300, "A100-SXM-80GB", scaleout_gbps=319.7)
    assert only.startswith("scale-out: 319.7 GB/s per NPU is more scale-out per NPU than two 800 "
                           "Gb/s NICs (4 such NICs per NPU;")


def test_solve_prints_and_writes_the_caveats(tmp_path):
    p = _llama(tmp_path)
    r = run("solve", p, "--no-sensitivity", "--json", str(tmp_path / "out.json"))
    assert r.exit_code == 0, r.output
    assert "\nnote: " + H100_DIM0 + "\nnote: " + H100_DIM1 + "\n" in r.stdout
    out = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    # (the cheapest design within 1e-8 of the fastest: 399.9994 GB/s, "400" at 4 digits)
    assert out["bw_gbps_per_dim"] == pytest.approx([900.0, 400.0], rel=1e-5)
    # (the plan's ZeRO 2 with PP 16 first: zero_pp_caveat)
    assert out["run"]["caveats"] == [zero_pp_caveat(2, 16), H100_DIM0, H100_DIM1]
    assert H100_DIM0 in out["notes"] and H100_DIM1 in out["notes"]


def test_the_shipped_instance_within_its_bounds_gets_none():
    r = run("solve", REPO / "instances" / "llama3-405b-16k-cluster.toml", "--no-sensitivity")
    assert r.exit_code == 0, r.output
    assert "scale-up bandwidth" not in r.stdout and "800 Gb/s NICs" not in r.stdout


def test_evaluate_refuses_unit_slips_and_notes_the_rest(tmp_path):
    # the shipped instance (bounds 50..450 and 12.5..50): values beyond its design space that look
    # like another unit are refused
    p = tmp_path / "llama.toml"
    p.write_text((REPO / "instances" / "llama3-405b-16k-cluster.toml").read_text(encoding="utf-8")
                 .replace('"../models/', f'"{REPO}/models/'), encoding="utf-8")
    r = run("evaluate", p, "--bw", "900,40")
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --bw: dimension 0: 900 GB/s per NPU is 2 x the H100-SXM's scale-up bandwidth (450 "
        "GB/s per direction): looks like the datasheet's bidirectional figure; fix: give GB/s per "
        "NPU per direction: the datasheet's bidirectional figure / 2 = 450 (450,40)"
    )
    r = run("evaluate", p, "--bw", "450,400")
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --bw: dimension 1 (scale-out): 400 GB/s per NPU is more than 200 GB/s, two 800 "
        "Gb/s NICs per NPU: 400 looks like Gb/s: 50 GB/s; fix: give GB/s per NPU per direction "
        "(NICs per NPU x Gb/s / 8): 450,50 if it is Gb/s; an outer scale-up tier runs at the "
        "scale-up 450 GB/s"
    )
    # above the scale-up bandwidth but below twice it: evaluated, with the caveat
    r = run("evaluate", p, "--bw", "600,150")
    assert r.exit_code == 0, r.output
    assert (
        "note: dimension 0: 600 GB/s per NPU is above the H100-SXM's scale-up bandwidth of 450 "
        "GB/s per direction (catalog scaleup_gbps of the H100-SXM): no such NPU exists; bound it "
        "(bounds upper_gbps = 450) or name another accelerator"
    ) in r.stdout.splitlines()
    assert "800 Gb/s NICs" not in r.stdout
    # 1e6 GB/s per NPU (the most --bw takes) is no link's figure in another unit but the what-if
    # of free communication (docs/explanation/model.md): evaluated, with the NPU's caveats
    r = run("evaluate", p, "--bw", "1e6,1e6")
    assert r.exit_code == 0, r.output
    assert (
        "note: dimension 0: 1e+06 GB/s per NPU is above the H100-SXM's scale-up bandwidth of 450 "
        "GB/s per direction (catalog scaleup_gbps of the H100-SXM): no such NPU exists; bound it "
        "(bounds upper_gbps = 450) or name another accelerator"
    ) in r.stdout.splitlines()
    assert "implausible" not in r.stdout
    # above it: bytes/s, refused (as a design row or a bound above 1e6 GB/s is)
    r = run("evaluate", p, "--bw", "1e9,1e9")
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --bw: dimension 0: 1e+09 GB/s per NPU is above 1e+06 GB/s per NPU (a thousand "
        "times the fastest scale-up link): looks like bytes/s; fix: give GB/s per NPU (1 GB = 1e9 "
        "bytes): 1e+09 bytes/s = 1 GB/s: write --bw 1,1 (1e6 is the most --bw takes: a dimension "
        "with no limit)"
    )


def test_a_scaleup_given_in_place_of_the_catalogs_is_named_so(tmp_path):
    # the H100-SXM of the catalog (450 GB/s) with the model file's scaleup_gbps = 400: the caveat
    # names the model file's figure, as the NIC cap's words do (figure_source)
    model = tmp_path / "llama3-405b.toml"
    model.write_text((REPO / "models" / "llama3-405b.toml").read_text(encoding="utf-8").replace(
        'accelerator = "H100-SXM"', 'accelerator = "H100-SXM"\nscaleup_gbps = 400'),
        encoding="utf-8")
    p = tmp_path / "llama.toml"
    p.write_text((REPO / "instances" / "llama3-405b-16k-cluster.toml").read_text(encoding="utf-8")
                 .replace('"../models/llama3-405b.toml"', f'"{model}"'), encoding="utf-8")
    r = run("evaluate", p, "--bw", "420,50")
    assert r.exit_code == 0, r.output
    assert (
        "note: dimension 0: 420 GB/s per NPU is above the H100-SXM's scale-up bandwidth of 400 "
        "GB/s per direction ([params.npu] scaleup_gbps of the model file, given in place of the "
        "catalog's): no such NPU exists; bound it (bounds upper_gbps = 400) or name another "
        "accelerator"
    ) in r.stdout.splitlines()


def test_evaluate_takes_the_design_solve_returned(tmp_path):
    # bounds up to 900 and 400 GB/s: solve's optimum sits at both, beyond the H100; evaluated
    # again at its printed figures it is the instance's own design, not a unit slip: the caveats,
    # exit 0
    p = _llama(tmp_path)
    r = run("evaluate", p, "--bw", "900,400")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert f"note: {H100_DIM1}" in lines
    # outside the instance's bounds, the same figures are a unit slip
    r = run("evaluate", p, "--bw", "1800,400")
    assert r.exit_code == 2 and "looks like Gb/s" in error_line(r)


@pytest.mark.heavy
def test_a_codesign_space_beyond_the_a100_gets_the_caveat():
    """spaces/codesign-1t-4096.toml explores LIBRA's 500 GB/s per NPU on A100s (NVLink 300 GB/s
    per direction): its best design's 439 GB/s scale-up dimension is solved and printed, with the
    caveat (the 1T model trained in FP16: 2-byte gradients), whose fix is in the space's syntax
    (a constraint), not an instance's bounds."""
    r = run("codesign", REPO / "spaces" / "codesign-1t-4096.toml")
    assert r.exit_code == 0, r.output
    (note,) = [s for s in r.stdout.splitlines() if "scale-up bandwidth of" in s]
    assert note.startswith("note: dimension 0: 439 GB/s")
    assert note.endswith(
        "GB/s per NPU is above the A100-SXM-80GB's scale-up bandwidth of 300 GB/s per direction "
        "(catalog scaleup_gbps of the A100-SXM-80GB): no such NPU exists; bound it (the space's "
        "constraints = [\"bw[0] <= 300\"]) or name another accelerator"
    )


def test_the_caveats_fix_is_in_the_syntax_of_the_file_searched():
    """An instance bounds a dimension with [[bounds]] upper_gbps; a co-design space with a
    constraint, bw[top] for the outermost dimension (it fits every dimension count)."""
    from hieropt.workloads.llm.links import bandwidth_caveats

    def fixes(bw, space):
        return [c.split("; bound it (")[1].split(")")[0]
                for c in bandwidth_caveats(bw, 300.0, "A100", space=space, scaleout_gbps=50.0)]

    assert fixes([439.0, 61.0], False) == ["bounds upper_gbps = 300"]
    assert fixes([439.0, 61.0], True) == ['the space\'s constraints = ["bw[0] <= 300"]']
    assert fixes([100.0, 350.0, 320.0], True) == ['the space\'s constraints = ["bw[1] <= 300"]',
                                                   'the space\'s constraints = ["bw[top] <= 300"]']


def test_a_dimension_beyond_the_scale_up_domain_faster_than_the_nic():
    """The A100's scale-up domain is 8 NPUs (an HGX baseboard) and past it one A100 sends at most
    32 GB/s through its NIC (its PCIe Gen4 x16 host link): a 16-NPU dimension at 300 GB/s and a
    scale-out dimension at 61 GB/s are each flagged, their fix the bound at 32; an 8-NPU domain at
    300 and a scale-out at 32 or less are not (the A100's DGX: 300 GB/s NVLink, 25 GB/s HDR)."""
    from hieropt.workloads.llm.links import bandwidth_caveats, domain_caveats

    a100 = (8, 32.0)
    assert domain_caveats([300, 25], [8, 512], *a100, "A100") == ()
    assert domain_caveats([300, 32], [8, 512], *a100, "A100") == ()
    (inner,) = domain_caveats([300, 25], [16, 256], *a100, "A100")
    assert inner == (
        "dimension 0: 300 GB/s per NPU across 16 NPUs, beyond the A100's scale-up domain of 8 "
        "(catalog scaleup_npus of the A100, its baseboard or rack): past it one A100 sends at "
        "most 32 GB/s through its NIC (catalog nic_gbps of the A100), so it needs a scale-up tier "
        "beyond that domain; bound it (bounds upper_gbps = 32) or take it as a hypothetical "
        "network"
    )
    # several dimensions: one caveat naming each, the fix on each
    (both,) = domain_caveats([300, 61], [16, 256], *a100, "A100")
    assert both.startswith("dimensions 0, 1: 300, 61 GB/s per NPU across 16, 4,096 NPUs, beyond")
    assert "so they need a scale-up tier" in both
    assert "bound them (bounds upper_gbps = 32 on each)" in both
    (both,) = domain_caveats([300, 61], [16, 256], *a100, "A100", space=True)
    assert ('bound them (give their levels at most 8 NPUs in all ([[levels]] npus), or the '
            'space\'s constraints = ["bw[0] <= 32", "bw[top] <= 32"])') in both
    # reach multiplies innermost first: 4 x 4 = 16 NPUs at the second dimension
    (only,) = domain_caveats([300, 300, 20], [4, 4, 64], *a100, "A100", space=True)
    assert only.startswith("dimension 1: 300 GB/s per NPU across 16 NPUs")
    assert ('bound it (give its level at most 8 NPUs in all ([[levels]] npus), or the space\'s '
            'constraints = ["bw[1] <= 32"])') in only
    # through bandwidth_caveats: after the scale-up caveats; none without the domain
    both = bandwidth_caveats([439, 61], 300, "A100", domain=([16, 256], *a100))
    assert [c.split(":")[0] for c in both] == ["dimension 0", "dimensions 0, 1"]
    # the outermost dimension with the scale-out caveat (above two NICs) gets no other
    assert [c.split(":")[0] for c in bandwidth_caveats(
        [300, 250], 300, "A100", domain=([16, 256], *a100))] == [
        "dimension 1 (scale-out)", "dimension 0"]
    assert bandwidth_caveats([439, 61], 300, "A100") == bandwidth_caveats(
        [439, 61], 300, "A100", scaleout_gbps=None)[:1]


def test_shape_ids_give_their_dimensions_npus():
    from hieropt.studies.explore.enumerate import shape_npus

    assert shape_npus("nvl:SW16 spine:SW1024") == (16, 1024)
    assert shape_npus("chiplet:R4 package:FC8 node:R4 pod:SW32") == (4, 8, 4, 32)
    assert shape_npus("fixed Switch8 x Switch512") == (8, 512)
    with pytest.raises(ValueError, match="gives no NPU count"):
        shape_npus("nvl:SW")


@pytest.mark.heavy
def test_codesign_names_the_h100_domain_a_space_assumes():
    """spaces/codesign-llama3-405b.toml assumes NVLink domains of 8 to 64 H100s; its best design
    puts 16 on one at 450 GB/s, beyond the HGX H100's 8: the answer says so, with the bound."""
    r = run("codesign", REPO / "spaces" / "codesign-llama3-405b.toml", "--sizes", "8192")
    assert r.exit_code == 0, r.output
    (note,) = [s for s in r.stdout.splitlines() if "scale-up domain of 8" in s]
    assert note.startswith("note: dimension 0: 450 GB/s per NPU across 16 NPUs, beyond the "
                           "H100-SXM's scale-up domain of 8")
    assert note.endswith('bound it (give its level at most 8 NPUs in all ([[levels]] npus), or '
                         'the space\'s constraints = ["bw[0] <= 50"]) or take it as a '
                         "hypothetical network")
