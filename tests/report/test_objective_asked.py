"""The committee page answers the question asked: with ``hieropt report --objective X`` (and
``--max-time``, ``--budget``) its recommendation is the certified optimum of X under those targets,
the design ``hieropt solve`` gives with the same file and flags; every column's label names its
objective and the targets it was solved under; the page's head, ``report.json``'s ``objective`` and
the committee's ``asked`` name the objective asked. Without ``--objective`` the page's own rule
recommends (least $ per run, else the knee), and the column that answers the input's objective is
named in the head.

Reference figures (``instances/gpt3-4d-compare.toml``, GPT-3 175B on 4,096 NPUs, 500 GB/s per NPU
in total): the cheapest network meeting 1.3 s is $8,755,833 at 1,300 ms (also the
performance-per-cost optimum capped at 1.3 s, which lies on the cap); the uncapped
performance-per-cost optimum is $7,108,243 at 1,527.4 ms; the fastest network within $10M runs
1,223.1 ms; the fastest network overall costs $13.66M at 1,166.5 ms, and the knee (1 %) $11.9M at
1,178.2 ms.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

import hieropt
from hieropt.report.committee_answers import asked_of
from tests.cases import REPO
from tests.cli.util import run
from tests.report.nvl72 import report, with_cluster

COMPARE = REPO / "instances" / "gpt3-4d-compare.toml"
MIX = REPO / "instances" / "mix-gpt3-dlrm-4d.toml"


def _solve(path: Path, tmp_path: Path, *flags: str) -> dict:
    """``hieropt solve PATH FLAGS --json``: the document it wrote."""
    out = tmp_path / "solve.json"
    r = run("solve", path, *flags, "--no-sensitivity", "--json", out)
    assert r.exit_code == 0, r.output
    return json.loads(out.read_text())


def _page(path: Path, tmp_path: Path, *flags: str) -> tuple[dict, dict, str]:
    """(committee JSON, report.json, report.html) of ``hieropt report PATH FLAGS``."""
    out = tmp_path / "rep"
    committee = report([path, *flags], out)
    doc = json.loads((out / "report.json").read_text())
    assert doc["committee"] == committee
    return committee, doc, html.unescape((out / "report.html").read_text())


def _alt(data: dict, key: str) -> dict:
    return next(a for a in data["alternatives"] if a["key"] == key)


def _same_design(alt: dict, sol: dict) -> None:
    """``alt`` (a column of the page) is the design ``sol`` (solve's JSON): its time, cost and
    bandwidths."""
    assert alt["iteration_time_ns"] == pytest.approx(sol["iteration_time_ns"], rel=1e-7)
    assert alt["network_cost_usd"] == pytest.approx(sol["network_cost_usd"], rel=1e-7)
    assert alt["bw_gbps"] == pytest.approx(sol["bw_gbps_per_dim"], rel=1e-5, abs=1e-6)


def _head(data: dict, page: str) -> None:
    """Every subject line is in the page's head."""
    for line in data["subject"]:
        assert f"<li>{line}</li>" in page


def test_min_cost_at_a_time_target_recommends_the_cheapest_network_meeting_it(tmp_path):
    """``report gpt3-4d-compare.toml --objective min_cost --max-time
    1.3s`` recommends the cheapest network meeting 1.3 s, as ``solve`` gives it, not the knee."""
    flags = ("--objective", "min_cost", "--max-time", "1.3s")
    data, doc, page = _page(COMPARE, tmp_path, *flags)
    sol = _solve(COMPARE, tmp_path, *flags)
    assert sol["objective"] == "min_cost"
    assert sol["network_cost_usd"] == pytest.approx(8_755_833, abs=1)
    assert sol["iteration_time_ns"] == pytest.approx(1.3e9, rel=1e-9)
    label = "cheapest network meeting the time target (min_cost; iteration time <= 1,300.0 ms)"
    assert data["recommended"] == "min_cost"
    rec = _alt(data, "min_cost")
    assert rec["label"] == label and rec["objective"] == "min_cost"
    assert rec["targets"] == {"max_iteration_time_ns": 1.3e9, "max_network_cost_usd": None}
    _same_design(rec, sol)
    assert data["headline"]["network_cost_usd"] == rec["network_cost_usd"]
    assert data["why"].startswith(
        "the certified optimum of the objective asked (min_cost, iteration time <= 1,300.0 ms), "
        "the design hieropt solve gives with the same --objective and targets")
    # the head, the committee's question and report.json's objective say min_cost
    assert data["subject"][2:] == [
        "objective asked: min_cost (--objective)",
        "targets: iteration time <= 1,300.0 ms (every column meets them)",
        f"its certified optimum: the column '{label}' (the recommendation), the design hieropt "
        "solve gives for it",
    ]
    assert "objective of the input" not in " ".join(data["subject"])
    assert data["asked"] == {"objective": "min_cost", "given": True,
                             "max_iteration_time_ns": 1.3e9, "max_network_cost_usd": None,
                             "answer": "min_cost", "why_not": None}
    assert doc["objective"] == data["asked"]["objective"] == "min_cost"
    _head(data, page)
    assert f"<h2>Recommendation: {label}</h2>" in page
    # every column names its objective and the cap it was solved under; the performance-per-cost
    # column is the capped optimum (on the cap: the same design), the knee is min_cost at 1.01 x
    # the fastest time's bound
    labels = {a["key"]: a["label"] for a in data["alternatives"]}
    assert labels == {
        "min_cost": label,
        "knee": "knee, cheapest within 1 % (min_cost; iteration time <= 1,178.2 ms)",
        "fastest": "fastest (performance; iteration time <= 1,300.0 ms)",
        "performance_per_cost":
            "performance per network $ (performance_per_cost; iteration time <= 1,300.0 ms)",
    }
    assert [a["key"] for a in data["alternatives"]] == list(labels)
    _same_design(_alt(data, "performance_per_cost"), sol)
    assert _alt(data, "knee")["network_cost_usd"] == pytest.approx(11_915_639, abs=1)
    assert _alt(data, "knee")["iteration_time_ns"] == pytest.approx(1_178_176_843, abs=1)


@pytest.mark.heavy
def test_performance_per_cost_is_answered_capped_and_uncapped(tmp_path):
    """``--objective performance_per_cost``: with ``--max-time 1.3s`` the capped optimum ($8.76M at
    1,300 ms), without it the uncapped one ($7.11M at 1,527 ms), each recommended and equal to
    ``solve`` with the same flags."""
    capped = ("--objective", "performance_per_cost", "--max-time", "1.3s")
    data, doc, page = _page(COMPARE, tmp_path / "capped", *capped)
    sol = _solve(COMPARE, tmp_path, *capped)
    assert data["recommended"] == "performance_per_cost" and doc["objective"] == sol["objective"]
    rec = _alt(data, "performance_per_cost")
    _same_design(rec, sol)
    assert rec["network_cost_usd"] == pytest.approx(8_755_833, abs=1)
    assert rec["label"] == (
        "performance per network $ (performance_per_cost; iteration time <= 1,300.0 ms)")
    assert data["subject"][2] == "objective asked: performance_per_cost (--objective)"
    _head(data, page)
    # (the cheapest network meeting the cap is its own column: the same design here)
    _same_design(_alt(data, "min_cost"), sol)

    data, doc, _ = _page(COMPARE, tmp_path / "uncapped", "--objective", "performance_per_cost")
    sol = _solve(COMPARE, tmp_path, "--objective", "performance_per_cost")
    rec = _alt(data, "performance_per_cost")
    assert data["recommended"] == "performance_per_cost"
    _same_design(rec, sol)
    assert rec["network_cost_usd"] == pytest.approx(7_108_243, abs=1)
    assert rec["iteration_time_ns"] == pytest.approx(1_527_400_984, abs=1)
    assert rec["label"] == "performance per network $ (performance_per_cost)"
    assert rec["targets"] == {"max_iteration_time_ns": None, "max_network_cost_usd": None}
    assert "min_cost" not in {a["key"] for a in data["alternatives"]}  # (no time target)
    assert len(data["subject"]) == 4  # (no targets line)


def test_performance_within_a_budget_recommends_the_fastest_within_it(tmp_path):
    flags = ("--objective", "performance", "--budget", "10M")
    data, doc, _ = _page(COMPARE, tmp_path, *flags)
    sol = _solve(COMPARE, tmp_path, *flags)
    # (the cheapest of the equally fast designs: within 1e-8 of the budget and the time)
    assert sol["network_cost_usd"] == pytest.approx(10e6, rel=1e-7)
    assert sol["iteration_time_ns"] == pytest.approx(1_223_128_140, rel=1.01e-8)
    assert data["recommended"] == "fastest" and doc["objective"] == "performance"
    rec = _alt(data, "fastest")
    _same_design(rec, sol)
    assert rec["label"] == "fastest (performance; network capex <= $10M)"
    assert rec["targets"] == {"max_iteration_time_ns": None, "max_network_cost_usd": 10e6}
    assert data["subject"][2:4] == ["objective asked: performance (--objective)",
                                    "targets: network capex <= $10M (every column meets them)"]
    # every column is within the budget, and says so
    for a in data["alternatives"]:
        assert a["network_cost_usd"] <= 10e6 * (1 + 1e-9), a["key"]
        assert "network capex <= $10M" in a["label"], a["key"]


@pytest.mark.heavy
def test_without_objective_the_page_rule_recommends_and_names_the_inputs_answer(tmp_path):
    """``--budget 10M`` alone: the caps bind every column, the knee is still recommended (no $ per
    run), and the head names the column that answers the input's objective (performance): the
    fastest within $10M, as ``solve --budget 10M`` gives it."""
    data, doc, page = _page(COMPARE, tmp_path, "--budget", "10M")
    sol = _solve(COMPARE, tmp_path, "--budget", "10M")
    assert data["recommended"] == "knee" and doc["objective"] == "performance"
    assert data["asked"]["objective"] == "performance" and not data["asked"]["given"]
    assert data["asked"]["answer"] == "fastest"
    _same_design(_alt(data, "fastest"), sol)
    assert data["subject"][2:] == [
        "objective of the input: performance",
        "targets: network capex <= $10M (every column meets them)",
        "its certified optimum: the column 'fastest (performance; network capex <= $10M)', the "
        "design hieropt solve gives for it",
    ]
    _head(data, page)


def test_the_inputs_min_cost_is_a_column(tmp_path):
    """An instance whose own objective is min_cost at 1.3 s (no flags): its cheapest network
    meeting 1.3 s is a column, named in the head; the knee stays the recommendation."""
    text = COMPARE.read_text().replace('objective = "performance"',
                                       'objective = "min_cost"\nmax_iteration_time_ns = 1.3e9')
    path = tmp_path / "min-cost.toml"
    path.write_text(text.replace('workload = "../models/', f'workload = "{REPO}/models/'))
    data, doc, _ = _page(path, tmp_path)
    assert doc["objective"] == "min_cost" and data["recommended"] == "knee"
    assert data["asked"]["answer"] == "min_cost" and not data["asked"]["given"]
    assert data["subject"][2] == "objective of the input: min_cost"
    _same_design(_alt(data, "min_cost"), _solve(path, tmp_path))


def test_several_workloads_answer_min_cost_at_the_weighted_time_target(tmp_path):
    """The GPT-3 + DLRM mix, ``--objective min_cost --max-time 780500913.99`` (the knee's weighted
    time): the recommendation is solve's cheapest network there, each workload's time as solve's
    portfolio table gives it."""
    flags = ("--objective", "min_cost", "--max-time", "780500913.99")
    data, doc, _ = _page(MIX, tmp_path, *flags)
    sol = _solve(MIX, tmp_path, *flags)
    assert data["recommended"] == "min_cost" and doc["objective"] == "min_cost"
    rec = _alt(data, "min_cost")
    _same_design(rec, sol)
    assert rec["network_cost_usd"] == pytest.approx(11_626_719, abs=1)
    assert rec["label"] == (
        "cheapest network meeting the time target (min_cost; iteration time <= 780.5 ms)")
    got = {w["name"]: w["time_ns"] for w in rec["portfolio"]["workloads"]}
    want = {w["name"]: w["time_ns"] for w in sol["portfolio"]["workloads"]}
    assert got == pytest.approx(want, rel=1e-6)
    assert data["why"].startswith("the certified optimum of the objective asked (min_cost, ")
    assert "; per workload, " in data["why"]


def test_a_priced_page_asked_for_performance_recommends_the_fastest(tmp_path):
    """With a [cluster] and tokens the page's rule recommends the least $ per run; ``--objective
    performance`` asks for the fastest network, which is then recommended, and the least $ per
    run stays a column."""
    data, _, _ = _page(with_cluster(tmp_path / "inst.toml"), tmp_path, "--objective",
                       "performance")
    sol = _solve(tmp_path / "inst.toml", tmp_path)
    assert data["recommended"] == "fastest"
    _same_design(_alt(data, "fastest"), sol)
    assert "the least $ per run is its own column" in data["why"]
    assert _alt(data, "min_run_cost")["label"] == "least $ per run (min_run_cost)"


def test_an_objective_the_page_has_no_column_for_says_where_it_is_answered():
    """min_cost within a max_regret bound and min_max_regret are answered by ``hieropt solve``;
    the page's question says so (no column is taken for their optimum)."""
    inst = hieropt.load_instance(MIX)
    regret = asked_of(inst.model_copy(update={"objective": "min_cost", "max_regret": 0.1}), None)
    assert (regret.objective, regret.given, regret.answer) == (
        "min_cost with max_regret 0.1", False, None)
    assert regret.why_not == ("'hieropt solve INSTANCE' gives the cheapest network with every "
                              "workload within 10 % of its own optimum")
    even = asked_of(inst.model_copy(update={"objective": "min_max_regret"}), None)
    assert even.answer is None and "--objective min_max_regret" in (even.why_not or "")
    asked = asked_of(inst, "performance_per_cost")
    assert (asked.objective, asked.given) == ("performance_per_cost", True)
