"""The committee page of several workloads sharing one fabric (a portfolio): the head and the plan
name every workload with its weight, every alternative carries each workload's iteration time and
its ratio to that workload's own optimum (the figures ``hieropt solve`` prints in its portfolio
table and ``hieropt evaluate`` prints per workload, for the same designs), the page shows them in
one table, and the recommendation says how much the knee slows a workload against the fastest
design."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.cases import REPO
from tests.cli.util import run
from tests.report.nvl72 import report

MIX = REPO / "instances" / "mix-gpt3-dlrm-4d.toml"
NAMES = ["gpt3-175b", "dlrm-mlperf"]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> tuple[Path, dict]:
    """(folder, committee JSON) of the report on the GPT-3 + DLRM instance as shipped."""
    out = tmp_path_factory.mktemp("mix") / "out"
    return out, report([MIX], out)


def _alt(data: dict, key: str) -> dict:
    return next(a for a in data["alternatives"] if a["key"] == key)


def _solve_json(tmp_path: Path, *args: str) -> dict:
    path = tmp_path / "solve.json"
    r = run("solve", MIX, *args, "--json", path)
    assert r.exit_code == 0, r.output
    return json.loads(path.read_text())


def _evaluated_times(bw: list[float]) -> dict[str, float]:
    """Each workload's iteration time (ns) at ``bw`` as ``hieropt evaluate`` prints it."""
    r = run("evaluate", MIX, "--bw", ",".join(repr(b) for b in bw))
    assert r.exit_code == 0, r.output
    found = re.findall(r"^\s+(\S+) \(weight [^)]+\): iteration time ([\d,.]+) ns", r.stdout, re.M)
    return {name: float(t.replace(",", "")) for name, t in found}


def test_the_head_and_the_plan_name_every_workload_with_its_weight(mixed):
    _, data = mixed
    assert data["subject"][0] == (
        "gpt3-175b (weight 0.466555) + dlrm-mlperf (weight 3263) on 4,096 NPUs"
    )
    plan = (
        "gpt3-175b (weight 0.466555): forward groups 16, weight-gradient groups 256; "
        "dlrm-mlperf (weight 3263): forward groups 4,096, weight-gradient groups 4,096"
    )
    assert {a["plan"] for a in data["alternatives"]} == {plan}
    assert data["headline"]["plan"] == plan


def test_each_alternative_carries_each_workloads_time_as_solve_and_evaluate_give_it(
    mixed, tmp_path
):
    _, data = mixed
    fastest = _solve_json(tmp_path, "--no-sensitivity")["portfolio"]
    knee = _alt(data, "knee")
    # the cheapest network at the knee's weighted time (solve's min cost there)
    at_knee = _solve_json(
        tmp_path, "--objective", "min_cost", "--max-time", f"{knee['iteration_time_ns']:.2f}"
    )["portfolio"]
    for key, ref in (("fastest", fastest), ("knee", at_knee)):
        got = _alt(data, key)["portfolio"]["workloads"]
        assert [w["name"] for w in got] == NAMES
        for g, r in zip(got, ref["workloads"], strict=True):
            assert g["own_optimum_ns"] == pytest.approx(r["own_optimum_ns"], rel=1e-9)
            assert g["time_ns"] == pytest.approx(r["time_ns"], rel=1e-6), (key, g["name"])
            assert g["ratio_to_own_optimum"] == pytest.approx(1 + r["slowdown"], abs=1e-6)
    # the knee slows DLRM by 14.0 % against its own optimum (8.0 % at the fastest design), and by
    # 5.6 % against its time at the fastest design
    k = {w["name"]: w for w in _alt(data, "knee")["portfolio"]["workloads"]}
    f = {w["name"]: w for w in _alt(data, "fastest")["portfolio"]["workloads"]}
    assert k["dlrm-mlperf"]["ratio_to_own_optimum"] == pytest.approx(1.13992, abs=1e-5)
    # (the fastest design: the cheapest within 1e-8 of the fastest weighted time; the face moves
    # time between the workloads: DLRM 1.07949 at the plain optimum's design)
    assert f["dlrm-mlperf"]["ratio_to_own_optimum"] == pytest.approx(1.07952, abs=1e-5)
    assert k["dlrm-mlperf"]["ratio_to_fastest"] == pytest.approx(
        k["dlrm-mlperf"]["time_ns"] / f["dlrm-mlperf"]["time_ns"], rel=1e-12
    )
    assert k["dlrm-mlperf"]["ratio_to_fastest"] == pytest.approx(1.05595, abs=1e-5)
    assert f["gpt3-175b"]["ratio_to_fastest"] == 1.0
    # every alternative's times are those hieropt evaluate prints for its design, and their
    # weighted sum is the alternative's iteration time
    for a in data["alternatives"]:
        times = _evaluated_times(a["bw_gbps"])
        ws = a["portfolio"]["workloads"]
        assert {w["name"]: w["time_ns"] for w in ws} == pytest.approx(times, abs=0.05)
        weighted = sum(w["weight"] * w["time_ns"] for w in ws)
        assert weighted == pytest.approx(a["iteration_time_ns"], rel=1e-9)


class _Cells(HTMLParser):
    """The portfolio table's cells: (alternative, workload) -> their data attributes."""

    def __init__(self):
        super().__init__()
        self.cells: dict[tuple[str, str], dict[str, str]] = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-workload" in a:
            self.cells[(a["data-alt"], a["data-workload"])] = a


def test_the_page_shows_the_portfolio_table_and_the_knees_largest_slowdown(mixed):
    out, data = mixed
    page = (out / "report.html").read_text()
    assert "<h2>Each workload at each design (the portfolio table)</h2>" in page
    p = _Cells()
    p.feed(page)
    for a in data["alternatives"]:
        for w in a["portfolio"]["workloads"]:
            cell = p.cells[(a["key"], w["name"])]
            assert float(cell["data-time-ns"]) == w["time_ns"]
            assert float(cell["data-ratio"]) == w["ratio_to_own_optimum"]
            assert float(cell["data-vs-fastest"]) == w["ratio_to_fastest"]
    assert data["recommended"] == "knee"
    assert data["why"].endswith(
        "; per workload, its largest slowdown against the fastest design is dlrm-mlperf +5.6 %; "
        "against each workload's own optimum its largest slowdown is dlrm-mlperf +14.0 % (the "
        "fastest design's: dlrm-mlperf +8.0 %)"
    )
    assert html.escape(data["why"]) in page
    report_json = json.loads((out / "report.json").read_text())
    assert report_json["committee"] == data
    # the comparison's optimum (the fastest design) carries solve's portfolio too
    opt = report_json["optimum"]["portfolio"]["workloads"]
    assert [w["time_ns"] for w in opt] == [
        w["time_ns"] for w in _alt(data, "fastest")["portfolio"]["workloads"]
    ]


def test_shares_of_hours_are_named_as_shares(tmp_path):
    text = MIX.read_text().replace('"../models/', f'"{REPO}/models/')
    text = text.replace("weight = 0.46655466   # 0.6 / 1.286022940 s", "hours_share = 60")
    text = text.replace("weight = 3262.9973    # 0.4 / 122.587 us", "hours_share = 40")
    path = tmp_path / "shares.toml"
    path.write_text(text)
    data = report([path], tmp_path / "out")
    assert data["subject"][0] == (
        "gpt3-175b (60 % of the hours) + dlrm-mlperf (40 % of the hours) on 4,096 NPUs"
    )
    assert data["headline"]["plan"].startswith("gpt3-175b (60 % of the hours): forward groups 16")
    fastest = _alt(data, "fastest")["portfolio"]["workloads"]
    # the times are ns (not the hour-weighted ratio), each workload's own ratio from them
    for w in fastest:
        assert w["time_ns"] > 1e4 and w["ratio_to_fastest"] == 1.0
        assert w["ratio_to_own_optimum"] == pytest.approx(w["time_ns"] / w["own_optimum_ns"])
    # the hour-weighted ratio is sum of share x time / own optimum
    ratio = 0.6 * fastest[0]["ratio_to_own_optimum"] + 0.4 * fastest[1]["ratio_to_own_optimum"]
    assert _alt(data, "fastest")["iteration_time_ns"] == pytest.approx(ratio, rel=1e-9)


def test_a_single_workload_page_has_no_portfolio(unpriced):
    out, data = unpriced
    assert all(a["portfolio"] is None for a in data["alternatives"])
    assert data["subject"][0] == "gpt3-175b-tp8 on 2,304 NPUs"
    page = (out / "report.html").read_text()
    assert "portfolio table" not in page and "data-workload" not in page
    assert "per workload" not in data["why"]


def test_shares_of_hours_under_a_budget_keep_their_own_optima(tmp_path):
    """With shares of hours the own optima are the workloads' fastest networks whatever the budget
    (the objective's definition): on the hand-computed pair (own optima 2,000 ns and 2,000,000 ns
    on the rows alone) a $560 budget leaves them, on the page as in ``hieropt solve``."""
    from tests.cases import hours_pair

    pair = hours_pair(tmp_path)
    data = report([pair, "--budget", "560"], tmp_path / "out")
    r = run("solve", pair, "--budget", "560", "--json", tmp_path / "solve.json")
    assert r.exit_code == 0, r.output
    solved = json.loads((tmp_path / "solve.json").read_text())["portfolio"]["workloads"]
    assert [w["own_optimum_ns"] for w in solved] == pytest.approx([2_000.0, 2_000_000.0],
                                                                  rel=1e-9)
    for alt in data["alternatives"]:
        if alt.get("portfolio") is None:
            continue
        got = [w["own_optimum_ns"] for w in alt["portfolio"]["workloads"]]
        assert got == pytest.approx([2_000.0, 2_000_000.0], rel=1e-9), alt["key"]
