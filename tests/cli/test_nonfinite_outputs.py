"""No writer of hieropt writes a number that is not finite (JSON has no ``Infinity``; hieropt's own
readers refuse ``inf``): a result that would hold one is refused in one line naming the input, and
nothing is written."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hieropt.io.astrasim2 import read_network_yml

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"
LLM = REPO / "models" / "gpt3-175b-llm.toml"
HUGE = "1e300,1e300,1e300,1e300"


def _open(tmp_path: Path) -> Path:
    """GPT-3 4-D with only ``bw[3] >= 10``: its own design space holds 1e300 GB/s per NPU, so
    ``--bw 1e300,...`` is exported (outside it --bw above 1e6 is refused as bytes/s)."""
    text = GPT3.read_text().replace('"../models/', f'"{REPO}/models/')
    assert 'constraints = ["sum(bw) == 500"]' in text
    p = tmp_path / "open.toml"
    p.write_text(text.replace('constraints = ["sum(bw) == 500"]', 'constraints = ["bw[3] >= 10"]'))
    return p


def test_export_of_huge_bandwidths_is_read_back(tmp_path):
    out = tmp_path / "net.yml"
    r = run("export", _open(tmp_path), "--bw", HUGE, "--astra-sim", out)
    assert r.exit_code == 0, r.output
    net = read_network_yml(out)  # (an inf bandwidth was refused here)
    assert all(math.isfinite(b) for b in net.bandwidth)
    # (Ring: link = B, in GiB/s)
    assert math.isclose(net.bandwidth[0], 1e300 * (1e9 / 2**30), rel_tol=1e-15)


def test_a_bundle_of_huge_bandwidths_is_strict_json(tmp_path):
    out = tmp_path / "bundle"
    r = run("export", _open(tmp_path), "--bw", HUGE, "--astra-sim", out)
    assert r.exit_code == 0, r.output
    manifest = json.loads((out / "bundle.json").read_text(), parse_constant=_no_constant)
    assert manifest["bw_gbps"] == [1e300] * 4
    json.loads((out / "system.json").read_text(), parse_constant=_no_constant)
    assert all(math.isfinite(b) for b in read_network_yml(out / "network.yml").bandwidth)


def _no_constant(name: str) -> None:
    raise AssertionError(f"{name} in a JSON file")


def _tiny_efficiency(tmp_path: Path) -> Path:
    """The shipped GPT-3 model with a flat-efficiency NPU of efficiency 1e-310 (a subnormal
    number)."""
    text = LLM.read_text(encoding="utf-8")
    head, sep, _ = text.partition("[params.npu]")
    assert sep
    npu = ('[params.npu]\nname = "A100"\npeak_tflops = 312.0\nefficiency = 1e-310\nhbm_gib = 80.0\n'
           'hbm_gbps = 2039.0\n')
    model = tmp_path / "tiny.toml"
    model.write_text(head + npu, encoding="utf-8")
    return model


def test_workload_plan_with_a_subnormal_efficiency_is_refused(tmp_path):
    model = _tiny_efficiency(tmp_path)
    r = run("workload", "plan", model)
    assert r.exit_code == 2
    line = error_line(r)
    assert line.startswith(f"error: {model}: compute.iteration_compute_ns: not a finite number"), (
        line
    )
    assert "inf" not in r.stdout


def test_workload_plan_json_never_holds_infinity(tmp_path):
    model = _tiny_efficiency(tmp_path)
    out = tmp_path / "plan.json"
    r = run("workload", "plan", model, "--json", out)
    assert r.exit_code == 2
    doc = json.loads(out.read_text(), parse_constant=_no_constant)
    assert doc["status"] == "bad_input" and doc["message"].startswith(
        f"{model}: compute.iteration_compute_ns"
    )


def test_a_yaml_error_is_one_line(tmp_path):
    net = tmp_path / "net.yml"
    net.write_text("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ \x00 ]\n", encoding="utf-8")
    line = error_line(run("solve", "--network", net, "--workload", net, "--cost", net))
    assert line == (
        f"error: {net}: line 3: invalid YAML: unacceptable character #x0000: special "
        "characters are "
        "not allowed; fix: fix the YAML syntax"
    )


def test_a_path_too_long_for_the_file_system_names_the_referring_field(tmp_path):
    """A workload path of 5,000 characters (found by the long fuzz setting): the instance file and
    its field, not "cannot write or read ... give a writable file path"."""
    text = GPT3.read_text(encoding="utf-8")
    inst = tmp_path / "x.toml"
    inst.write_text(
        text.replace('workload = "../models/gpt3-175b.toml"', f'workload = "{"a" * 5000}"'),
        encoding="utf-8",
    )
    assert inst.read_text() != text
    line = error_line(run("solve", inst))
    assert (
        line.startswith(f"error: {inst}: workload: 'aaaa")
        and "cannot be used as a path: File name too long" in line
        and line.endswith("fix: give the workload file's path")
    )
    line = error_line(run("solve", tmp_path / ("b" * 5000)))
    assert "cannot be used as an instance file path: File name too long" in line and len(line) < 200


def test_provision_with_a_price_of_1e308_is_refused_naming_the_catalog(tmp_path):
    """A link at $1e308 made the bill infinite: '$inf' printed, exit 0 (found by the long fuzz
    setting)."""
    text = (REPO / "catalogs" / "example-4d.toml").read_text(encoding="utf-8")
    old = '{ name = "d2d-port-25GBs", gbps = 25, usd = 60,'
    assert old in text
    catalog = tmp_path / "cat.toml"
    catalog.write_text(text.replace(old, old.replace("usd = 60", "usd = 1e308")), encoding="utf-8")
    r = run("provision", GPT3, "--catalog", catalog, "--no-compare")
    assert r.exit_code == 2
    line = error_line(r)  # (refused as a price no part has, before any bill is added up)
    assert line.startswith(f"error: {catalog}: classes.") and ".usd: " in line
    assert "1e+308 is above 1e+12; fix: use a number <= 1e+12" in line
    assert "inf" not in r.stdout
