"""The committee page of a cluster whose [cluster] gives no ``pue``: its MW are the IT power alone
(no PUE is guessed), the page's unknowns say to set ``pue`` and no figure is labelled "with PUE"."""

from __future__ import annotations

import json

from tests.cli.util import run
from tests.report.nvl72 import with_cluster


def test_a_page_without_a_pue_says_its_power_is_the_it_power(tmp_path):
    path = with_cluster(tmp_path / "inst.toml")
    text = path.read_text()
    assert "pue = 1.25\n" in text
    path.write_text(text.replace("pue = 1.25\n", ""))
    out = tmp_path / "out"
    r = run("report", path, "-o", out, "--points", "4", "--json", "-")
    assert r.exit_code == 0, r.output
    page = (out / "report.html").read_text()
    assert "with PUE" not in page
    assert "PUE (no pue): the MW, MWh and electricity $ are IT power only" in page
    # 2,304 GB200 at 1,200 W and no servers: 2.7648 MW of IT power, the headline's MW
    assert json.loads(r.stdout)["headline"]["power_mw"] == 2304 * 1200 / 1e6
