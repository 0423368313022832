"""``hieropt compare`` and ``hieropt report``: exit codes, JSON, and a report whose numbers equal
the JSON's."""

from __future__ import annotations

import base64
import html
import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

import hieropt
from hieropt.cli import app
from hieropt.report import common as rc
from hieropt.report.plots import FIGURES
from hieropt.studies.compare import compare
from tests.cases import REPO

runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"})
INSTANCE = str(REPO / "instances" / "gpt3-4d-compare.toml")
PNG = b"\x89PNG\r\n\x1a\n"


def test_compare_command_json_on_stdout():
    result = runner.invoke(app, ["compare", INSTANCE, "--json", "-"])
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["objective"] == "performance" and out["objective_unit"] == "ns"
    names = [r["name"] for r in out["rows"]]
    assert names == [
        "optimum",
        "equal",
        "traffic",
        "sqrt",
        "gradient",
        "waterfill",
        "vendor:halving per level",
        "vendor:scale-up 9:1",
    ]
    opt = out["rows"][0]
    # the optimum balances the data-parallel all-reduce's dimensions
    assert opt["bottleneck_tied_dims"] == [1, 2, 3]
    assert opt["gap_pct"] == 0 and opt["iteration_time_ns"] == out["optimum"]["iteration_time_ns"]
    for r in out["rows"][1:]:
        assert r["feasible"] and r["gap_pct"] >= 0
        assert r["iteration_time_ns"] >= out["optimum"]["objective_bound"]
        assert r["gap_pct"] == pytest.approx(
            100 * (r["iteration_time_ns"] / opt["iteration_time_ns"] - 1), rel=1e-9
        )
        assert r["time_x_cost_ns_usd"] == pytest.approx(
            r["iteration_time_ns"] * r["network_cost_usd"], rel=1e-12
        )
        assert sum(r["bw_gbps_per_dim"]) == pytest.approx(500, rel=1e-9)
        # the evaluator gives a tied collective to one of the tied dimensions
        assert r["bottleneck_dim"] in r["bottleneck_tied_dims"]
        assert int(np.argmax(r["bottleneck_ns_per_dim"])) in r["bottleneck_tied_dims"]
        assert r["explanation"]
    eq = out["rows"][1]
    assert eq["explanation"].startswith("starves dim 0 (Ring): 125.0 vs 225.0 GB/s")
    assert "over-provisions dim 3 (Switch, 57.4 $/GB/s): +91.6 GB/s vs optimum" in eq["explanation"]
    gd = out["rows"][4]
    assert gd["heuristic"]["reported_gap"] > 0
    assert gd["heuristic"]["reported_gap"] * 100 == pytest.approx(gd["gap_pct"], rel=1e-9)


def test_compare_command_tables_and_json_file(tmp_path):
    path = tmp_path / "cmp.json"
    result = runner.invoke(
        app, ["compare", INSTANCE, "--objective", "performance_per_cost", "--json", str(path)]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(path.read_text())
    assert out["objective"] == "performance_per_cost"
    # the terminal shows the same strings as the JSON's display tables
    for row in out["display"]["summary"]["rows"]:
        assert row[0] in result.stdout and row[1] in result.stdout and row[4] in result.stdout
    for r in out["rows"][1:]:
        assert r["objective_value"] == pytest.approx(r["time_x_cost_ns_usd"], rel=1e-12)
        assert r["objective_value"] >= out["optimum"]["objective_bound"]


def test_compare_command_bad_ratios_exit_2(tmp_path):
    text = (REPO / "instances" / "gpt3-4d-compare.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(
        text.replace(
            '"../models/gpt3-175b.toml"', json.dumps(str(REPO / "models" / "gpt3-175b.toml"))
        ).replace("[8, 4, 2, 1]", "[8, 4, 2]")
    )
    result = runner.invoke(app, ["compare", str(bad)])
    assert result.exit_code == 2
    assert (
        f"{bad}: heuristic_ratios.halving per level: 3 ratios for 4 dimensions" in result.stderr
    )


def test_compare_command_libra_flags(shared_data):
    libra = shared_data / "libra"
    result = runner.invoke(app, ["compare", "--network", str(libra / "network" / "3d_network.yml"),
                                 "--workload", str(libra / "workload" / "GPT_3.txt"),
                                 "--communicator", str(libra / "communicator" / "GPT_3_3d.yml"),
                                 "--cost", str(libra / "cost_model" / "3d_cost_model.yml"),
                                 "--constraint", "sum(bw) == 500", "--json", "-"])
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    # LIBRA reference
    assert out["optimum"]["iteration_time_ns"] == pytest.approx(727439975.6785489, rel=2e-8)


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    result = runner.invoke(app, ["report", INSTANCE, "-o", str(out), "--points", "12"])
    assert result.exit_code == 0, result.output
    return out


def test_report_writes_nonempty_pngs(report_dir):
    data = json.loads((report_dir / "report.json").read_text())
    assert sorted(data["files"]) == sorted([*FIGURES, "report.html", "report.json"])
    for name in FIGURES:
        png = (report_dir / name).read_bytes()
        assert png.startswith(PNG) and len(png) > 10_000, name


def test_report_html_is_self_contained_with_the_figures(report_dir):
    page = (report_dir / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)=['"]?(https?:|//)""", page)  # nothing fetched from outside
    embedded = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)
    assert len(embedded) == len(FIGURES)
    files = {(report_dir / n).read_bytes() for n in FIGURES}
    assert {base64.b64decode(b) for b in embedded} == files


def test_report_numbers_equal_the_json(report_dir):
    page = (report_dir / "report.html").read_text()
    data = json.loads((report_dir / "report.json").read_text())
    text = html.unescape(page)
    disp = data["display"]
    for key in ("summary", "bandwidth", "utilisation", "explanations"):
        for row in disp[key]["rows"]:
            for cell in row:
                assert cell in text, (key, cell)
    for line in disp["headline"]:
        assert line in text
    # the raw numbers of report.json, formatted by the same functions, are on the page
    for r in data["rows"]:
        assert rc.fmt_ms(r["iteration_time_ns"]) in text
        assert rc.fmt_usd(r["network_cost_usd"]) in text
        assert rc.fmt_product(r["time_x_cost_ns_usd"]) in text
        for b in r["bw_gbps_per_dim"]:
            assert rc.fmt_bw(b) in text
        for u in r["utilisation_per_dim"]:
            assert rc.fmt_util(u) in text
        if r["kind"] == "heuristic":
            assert rc.fmt_gap(r["gap_pct"]) in text
    # the figures plot exactly the rows' numbers
    figs = data["figures"]
    rows = {r["label"]: r for r in data["rows"]}
    for s in figs["bandwidth.png"]["series"]:
        assert s["values"] == rows[s["label"]]["bw_gbps_per_dim"]
    for s in figs["utilisation.png"]["series"]:
        assert s["values"] == [100 * u for u in rows[s["label"]]["utilisation_per_dim"]]
    assert figs["gap.png"]["gap_pct"] == [r["gap_pct"] for r in data["rows"][1:]]
    pts = {p["label"]: p for p in figs["front.png"]["points"]}
    for label, r in rows.items():
        assert (
            pts[label]["time_ns"] == r["iteration_time_ns"]
            and pts[label]["cost_usd"] == r["network_cost_usd"]
        )
    assert len(figs["front.png"]["front_time_ns"]) == 12 == len(data["front"])


def test_report_matches_a_fresh_comparison(report_dir):
    """The report's optimum is the library's, and every design on the front figure lies on or above
    the front."""
    data = json.loads((report_dir / "report.json").read_text())
    comp = compare(hieropt.load_instance(INSTANCE))
    assert data["rows"][0]["iteration_time_ns"] == pytest.approx(
        comp.optimum.iteration_time_ns, rel=1e-8
    )
    front = sorted(
        zip(
            data["figures"]["front.png"]["front_cost_usd"],
            data["figures"]["front.png"]["front_time_ns"],
            strict=True,
        )
    )
    for p in data["figures"]["front.png"]["points"]:
        within = [t for c, t in front if c <= p["cost_usd"] * (1 + 1e-9)]
        # the fastest network within this design's cost is at least as fast as the design
        if within:
            # the front's fastest point is the cheapest network within FASTEST_SLACK (1e-8) of the
            # minimum time
            assert min(within) <= p["time_ns"] * (1 + 2e-8)
