"""The committee page (`hieropt report --committee`) rendered by a real browser (headless Chromium, skipped when
absent): the page renders, the recommendation's headline numbers equal the JSON's, the alternatives are side by
side, and the recommendation is the cheapest run of them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hieropt.report.run import fmt_money
from tests.cli.util import run

REPO = Path(__file__).resolve().parents[2]
LLAMA = REPO / "instances" / "llama3-405b-16k-cluster.toml"
BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    out = tmp_path_factory.mktemp("committee")
    r = run("report", LLAMA, "--committee", "-o", out)
    assert r.exit_code == 0, r.output
    return out, json.loads((out / "committee.json").read_text())


def test_the_json_recommends_the_cheapest_run(page):
    _, data = page
    rec = data["recommendation"]
    assert rec["label"] == "min $ per run"
    labels = {a["label"] for a in data["alternatives"]}
    assert labels == {"fastest", "knee (1 %)", "performance per network cost"}
    for a in data["alternatives"]:
        assert a["run"]["run_cost_usd"] >= rec["run"]["run_cost_usd"] * (1 - 1e-9)
    assert rec["display"]["run_cost"] == fmt_money(rec["run"]["run_cost_usd"]) == "$78.3M"
    assert rec["display"]["days"] == f"{rec['run']['time_to_train_days']:,.1f}" == "167.6"


@pytest.mark.skipif(BROWSER is None, reason="no headless Chromium (Debian package chromium) installed")
def test_the_page_renders_in_a_browser_with_the_jsons_numbers(page):
    out, data = page
    dom = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                          (out / "committee.html").as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert "<h2>Recommendation</h2>" in dom
    shown = dict(re.findall(r"data-key=\"(\w+)\">([^<]*)<", dom))
    d = data["recommendation"]["display"]
    for key in ("npus", "fabric", "days", "run_cost", "power_mw", "mfu", "network"):
        assert shown[key].replace("&amp;", "&") == d[key], key
    assert shown["label"] == "min $ per run"
    rows = re.findall(r"<tr( class=\"chosen\")?><td>([^<]*)</td>", dom)
    assert [label for _, label in rows] == ["min $ per run", "fastest", "knee (1 %)", "performance per network cost"]
    assert rows[0][0]  # the recommendation's row is marked
    assert re.search(r"<img alt=\"time-cost front\" src=\"data:image/png;base64,[A-Za-z0-9+/]{1000,}", dom)
