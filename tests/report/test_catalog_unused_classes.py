"""``report --catalog`` on an instance takes a parts catalog with classes the instance's network
does not use as ``provision`` does: they are left out with a note (printed and in the page's
notes), and the whole-parts column is the one of the catalog without them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cases import REPO
from tests.cli.util import run

INSTANCE = REPO / "instances" / "gpt3-4d.toml"
CATALOG = REPO / "catalogs" / "example-4d.toml"
EXTRA = """
[classes.Optical]          # parts of another design: no dimension of gpt3-4d uses them
links = [{ name = "optical-800G", gbit_per_s = 800, usd = 1200, max_per_npu = 4 }]
"""


def test_report_catalog_ignores_an_unused_class_with_a_note(tmp_path: Path):
    cat = tmp_path / "cat.toml"
    cat.write_text(CATALOG.read_text(encoding="utf-8") + EXTRA, encoding="utf-8")
    out = tmp_path / "out"
    r = run("report", INSTANCE, "--catalog", cat, "--points", "3", "--within", "0", "-o", out)
    assert r.exit_code == 0, r.output
    note = (f"{cat}: class Optical not used by the instance's network (it uses InterChiplet, "
            "InterNode, InterPackage, InterPod): ignored")
    assert f"note: {note}" in " ".join(r.stdout.split())
    data = json.loads((out / "report.json").read_text())
    committee = data["committee"] if "committee" in data else data
    assert note in committee["notes"]
    whole = next(a for a in committee["alternatives"] if a["key"] == "catalog")
    # the bill of materials of the shipped catalog, as provision gives it ($19,563,520: derived in
    # tests/provision/test_cli.py's test_default_instance_report)
    assert whole["network_cost_usd"] == 19_563_520
