"""The per-dimension table's bytes are what each NPU's bandwidth carries, each byte weighted by its
link factor: under ``group_bandwidth = "links"`` a group reaching 1/g of the NPU's links on a
dimension counts g x its bytes: 5.1 x the bytes each NPU sends on dimension 1 of gpt3-plan-4d
(tp 2 of a FullyConnected 8: g = 7; dp 4 of it: g = 7/3). Such a column is headed "GB sent
(link-weighted)" and says so; it stays "GB sent" where every factor is 1."""

from __future__ import annotations

import json

from tests.cases import REPO
from tests.cli.util import run

PLAN = REPO / "instances" / "gpt3-plan-4d.toml"
GPT3 = REPO / "instances" / "gpt3-4d.toml"
BW = "250,125,75,50"


def _rows(out: str) -> dict[str, list[str]]:
    """The per-dimension table's rows by dimension, cells stripped."""
    rows = [[c.strip() for c in x.split("│")[1:-1]] for x in out.splitlines() if "│" in x]
    return {r[0]: r for r in rows if len(r) == 10}


def _whole(tmp_path):
    text = PLAN.read_text().replace('"../models/', f'"{REPO}/models/')
    anchor = 'name = "gpt3-plan-4d"\n'
    assert anchor in text
    p = tmp_path / "whole.toml"
    p.write_text(text.replace(anchor, anchor + 'group_bandwidth = "whole"\n'))
    return p


def test_links_weighted_bytes_are_headed_and_described_as_such(tmp_path):
    r = run("evaluate", PLAN, "--bw", BW, "--json", tmp_path / "e.json")
    assert r.exit_code == 0, r.output
    header = next(x for x in r.stdout.splitlines() if x.startswith("┃ dim"))
    assert [c.strip() for c in header.split("┃")[1:-1]][5] == "GB sent (link-weighted)"
    flat = " ".join(r.stdout.split())
    assert ("GB sent (link-weighted): bytes each NPU sends on the dimension per iteration, each "
            "multiplied by its link factor") in flat
    links = _rows(r.stdout)
    assert [links[d][5] for d in "0123"] == ["111.4343", "159.3813", "3.1473", "1.2524"]
    data = json.loads((tmp_path / "e.json").read_text())
    assert [round(b / 1e9, 4) for b in data["breakdown"]["bytes_per_dim"]] == [
        111.4343, 159.3813, 3.1473, 1.2524]

    w = run("evaluate", _whole(tmp_path), "--bw", BW)
    assert w.exit_code == 0, w.output
    assert "link-weighted" not in w.stdout
    assert "GB sent: bytes each NPU sends on the dimension per iteration;" in " ".join(
        w.stdout.split())
    whole = _rows(w.stdout)
    # factors 1 on the Rings (whole groups) and the Switch: the same bytes either way
    assert [whole[d][5] for d in "023"] == ["111.4343", "3.1473", "1.2524"]
    # on the FullyConnected 8 every group's factor is 7 (tp 2) or 7/3 (dp 4): between the two
    sent = float(whole["1"][5])
    assert sent == 31.1615
    assert 7 / 3 * sent < 159.3813 < 7 * sent


def test_a_network_whose_factors_are_all_1_keeps_gb_sent():
    r = run("evaluate", GPT3, "--bw", BW)
    assert r.exit_code == 0 and "link-weighted" not in r.stdout
