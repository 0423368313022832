"""validate gives the note every command gives on an NPU peak below half the catalog's dense peak
of the accelerator it names (the predictions are computed at that peak)."""

from __future__ import annotations

import json

from tests.cli.util import run
from tests.validate.tiny import MODEL, write_case

NOTE = (
    "peak_tflops = 1 is 0.0032 x the A100-SXM-80GB's dense bf16 peak of 312 TFLOP/s (catalog), "
    "below 0.5 x: compute times, MFU, days and $ are computed at this peak; if the part is not "
    "derated, give its dense peak in TFLOP/s or leave peak_tflops out (the catalog's)"
)


def test_validate_notes_a_peak_below_half_the_catalogs(tmp_path):
    # the tiny model on an A100 named from the catalog, its peak written as 1 TFLOP/s (1 / 312)
    model = MODEL.replace('name = "toy"\n', 'accelerator = "A100-SXM-80GB"\n')
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,0.1", "tiny.toml,net.toml,20,0.09"],
                      model=model)
    r = run("validate", path, "--json", tmp_path / "v.json")
    assert r.exit_code == 0, r.output
    line = f"note: {path}: line 3 (and 1 more): {NOTE}"
    assert line in r.stderr.splitlines()
    assert line in json.loads((tmp_path / "v.json").read_text())["notes"]
    # and workload plan, of the same model file
    r = run("workload", "plan", tmp_path / "tiny.toml")
    assert r.exit_code == 0, r.output
    assert f"note: {NOTE}" in r.stdout.splitlines()
    # the inline NPU of the same peak (no catalog entry): no note
    path = write_case(tmp_path, ["tiny.toml,net.toml,10,0.1"])
    r = run("validate", path)
    assert r.exit_code == 0 and "peak_tflops =" not in r.output


def test_a_calibrated_file_keeps_the_catalog_reference_out_and_the_note_in(tmp_path):
    # the calibrated file holds no catalog_peak_tflops (the reader's, not a figure of the fit);
    # a model naming it gets the shipped catalog's H100 peak back, so a peak set below half of it
    # (--set peak_tflops=400: 0.4 x 989.4) is noted as for a catalog entry
    from tests.cases import REPO

    cal = tmp_path / "h100.toml"
    r = run("calibrate", REPO / "validation" / "calibration" / "h100-one-node.csv", "--out", cal)
    assert r.exit_code == 0, r.output
    assert "catalog_peak_tflops" not in cal.read_text()
    text = (REPO / "models" / "llama3-70b.toml").read_text()
    assert 'accelerator = "H100-SXM"' in text
    m = tmp_path / "m.toml"
    m.write_text(text.replace('accelerator = "H100-SXM"', 'calibrated = "h100.toml"'))
    r = run("workload", "plan", m)
    assert r.exit_code == 0 and "peak_tflops =" not in r.stdout
    r = run("workload", "plan", m, "--set", "peak_tflops=400")
    assert r.exit_code == 0, r.output
    assert ("note: peak_tflops = 400 is 0.4 x the H100-SXM's dense bf16 peak of 989.4 TFLOP/s "
            "(catalog), below 0.5 x") in r.stdout
