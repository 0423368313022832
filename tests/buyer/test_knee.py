"""The knee beside a procurement optimum: the cheapest design within x % of the fastest time and
what the last x % costs, against the min-cost solve it is, the Pareto front, and the catalog example
of the NVL72 fabric."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hieropt
from hieropt import SolveOptions
from hieropt.errors import InputError
from hieropt.studies.knee import EQUAL_TIME, Knee, knee, provision_knee
from tests.cli.util import error_line, run

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"
NVL = REPO / "instances" / "gpt3-nvl72-2304.toml"


def test_knee_is_the_cheapest_design_within_the_slack():
    inst = hieropt.load_instance(GPT3)
    k = knee(inst, 0.01)
    fast = hieropt.solve(inst, options=SolveOptions(sensitivity=False))
    # the knee's reference: the cheapest of the designs within EQUAL_TIME of the fastest time
    assert fast.lower_bound_ns <= k.fastest_ns <= fast.iteration_time_ns * (1 + EQUAL_TIME)
    assert k.knee_ns <= k.fastest_ns * 1.01 * (1 + 1e-9)
    assert k.knee_ns == pytest.approx(k.fastest_ns * 1.01, rel=1e-7)  # the slack is used up
    cheap = hieropt.solve(
        inst,
        objective="min_cost",
        options=SolveOptions(max_iteration_time_ns=fast.iteration_time_ns * 1.01),
    )
    assert k.knee_usd == pytest.approx(cheap.network_cost_usd, rel=1e-9)
    assert k.last_usd == pytest.approx(k.fastest_usd - k.knee_usd, rel=1e-12) and k.last_usd > 0
    # no design of the front within 1 % of the fastest time is cheaper
    front = hieropt.pareto(inst, points=12)
    for p in front.points:
        if p.iteration_time_ns <= k.fastest_ns * 1.01:
            assert p.network_cost_usd >= k.knee_usd * (1 - 1e-7)


def test_the_nvl72_catalog_knee():
    inst = hieropt.load_instance(NVL)
    cat = REPO / "catalogs" / "nvl72-infiniband.toml"
    fastest = hieropt.provision(inst, cat, objective="performance", compare=False)
    k = provision_knee(inst, cat, fastest, 0.02)
    assert k.fastest_usd == pytest.approx(94_147_200, rel=1e-9)
    assert k.knee_usd == pytest.approx(36_273_600, rel=1e-9)
    assert k.knee_ns / k.fastest_ns - 1 == pytest.approx(0.0194, abs=5e-4)
    assert "the last 2 % of speed costs $57,873,600 (61.5% of the fastest network)" in k.line()


def test_solve_prints_and_writes_the_knee():
    r = run("solve", GPT3, "--no-sensitivity", "--json", "-")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["knee"]["within"] == 0.01 and out["knee"]["knee_usd"] < out["knee"]["fastest_usd"]
    assert "knee (the cheapest design within 1 % of the fastest time)" in r.stderr
    off = json.loads(run("solve", GPT3, "--no-sensitivity", "--within", "0", "--json", "-").stdout)
    assert off["knee"] is None


@pytest.mark.parametrize("text", ["0.5", "150%", "abc"])
def test_a_bad_slack_is_one_line(text):
    assert "--within" in error_line(run("solve", GPT3, "--within", text))


def test_the_slack_is_a_fraction():
    with pytest.raises(InputError, match="fraction"):
        knee(hieropt.load_instance(GPT3), 1.0)


def test_the_knee_line_names_its_reference_when_the_printed_design_is_dearer():
    # by hand: the reference $1,000 (cheapest of the equally fast), the printed design $1,500.4
    k = Knee(0.01, 100.0, 1000.0, 101.0, 900.0, None, design_usd=1500.4)
    assert k.line().endswith(
        "; $1,000 is the cheapest of the designs as fast as the optimum (within 1e-08 of its "
        "time), $500 less than the fastest design printed ($1,500)"
    )
    assert Knee(0.01, 100.0, 1000.0, 101.0, 900.0, None, design_usd=1000.2).reference_words() == ""
    assert Knee(0.01, 100.0, 1000.0, 101.0, 900.0, None).reference_words() == ""


def test_solve_tells_one_story_of_the_fastest_network():
    # the optimum is flat: solve prints the cheapest of the equally fast designs, the knee's
    # reference ($13,659,960.54; the plain solve's design costs $13,661,706.67)
    r = run("solve", GPT3, "--no-sensitivity", "--json", "-")
    out = json.loads(r.stdout)
    printed, ref = out["network_cost_usd"], out["knee"]["fastest_usd"]
    assert printed == ref == out["knee"]["design_usd"]
    assert printed == pytest.approx(13_659_960.54, abs=0.01)
    inst = hieropt.load_instance(GPT3)
    plain = hieropt.solve(inst, "performance")
    assert printed < plain.network_cost_usd - 1_000
    assert out["iteration_time_ns"] <= plain.iteration_time_ns * (1 + EQUAL_TIME)
    assert out["gap"] <= 1e-8 and out["status"] == "optimal"
    # the reference is the cheapest design within EQUAL_TIME of the fastest time (and within the
    # gap target of the proven bound, a hair tighter: 6e-9 of the cost)
    cheap = hieropt.solve(inst, objective="min_cost", options=SolveOptions(
        max_iteration_time_ns=plain.iteration_time_ns * (1 + EQUAL_TIME)))
    assert ref == pytest.approx(cheap.network_cost_usd, rel=1e-8)
    assert f"network cost: ${printed:,.0f}" in r.stderr
    assert "design: the cheapest of the designs within 1e-08 of the fastest one found" in r.stderr
    assert "less than the fastest design printed" not in r.stderr


def test_pareto_ends_at_the_design_solve_prints():
    """The front's fastest end and its `fastest` are the design `hieropt solve` prints, the
    cheapest of the designs within 1e-8 of the fastest found ($13,659,960.54), not the design a
    plain performance solve returns ($13,661,706.67)."""
    r = run("pareto", GPT3, "--points", "10", "--json", "-")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    last, fast = out["points"][-1], out["fastest"]
    solved = json.loads(run("solve", GPT3, "--no-sensitivity", "--json", "-").stdout)
    assert fast["network_cost_usd"] == last["network_cost_usd"] == solved["network_cost_usd"]
    assert fast["bw_gbps_per_dim"] == solved["bw_gbps_per_dim"]
    assert last["iteration_time_ns"] == fast["iteration_time_ns"] == solved["iteration_time_ns"]
    assert fast["network_cost_usd"] == pytest.approx(13_659_960.54, abs=0.01)
    line = next(s for s in r.stderr.splitlines() if s.startswith("fastest (performance optimum)"))
    assert line == "fastest (performance optimum): 1,166.5117 ms at $13,659,961"


def test_no_knee_when_the_last_of_speed_costs_less_than_a_cent():
    # a budget 1e-11 above the cheapest network ($4,096,000): every design within 1 % of the
    # fastest time spends the budget to a fraction of a cent (the figures of gpt3-4d at a budget
    # of $4,096,000.04096); the fastest costs $4,096,000.0409599994, up to the cent $.05
    k = Knee(0.01, 100.0, 4096000.0409599994, 101.0, 4096000.0405582036, None)
    assert k.line() == (
        "knee (the cheapest design within 1 % of the fastest time): none: no design within 1 % of "
        "the fastest time costs a cent less than the fastest ($4,096,000.05): buy the fastest")
    # round-off may put the knee a hair above the fastest: still no knee
    assert ": none: no design" in Knee(0.01, 100.0, 1e6, 101.0, 1e6 + 1e-9, None).line()
    # costs that differ by less than a cent up to the cent: no knee either
    assert ": none: no design" in Knee(0.01, 100.0, 1e6, 101.0, 1e6 - 0.005, None).line()
    # two cents saved is a knee: $999,999.98 against $1,000,000.00
    assert Knee(0.01, 100.0, 1e6, 101.0, 1e6 - 0.02, None).line().endswith(
        "1.00% slower, network $999,999.98 instead of $1,000,000.00: the last 1 % of speed costs "
        "$0.02 (2e-06 % of the fastest network)")


def test_a_knee_within_a_dollar_is_printed_to_the_cent():
    # $4,096,040.554448 -> $4,096,040.56 and $4,096,040.959999 -> $4,096,040.96 (up: the budget
    # that buys each); the saving, of the printed figures, $0.40: 9.9e-8 of the fastest network
    k = Knee(0.01, 100.0, 4096040.95999959, 101.0, 4096040.554448021, None)
    assert k.line() == (
        "knee (the cheapest design within 1 % of the fastest time): 1.00% slower, network "
        "$4,096,040.56 instead of $4,096,040.96: the last 1 % of speed costs $0.40 (1e-05 % of "
        "the fastest network)")
    # a knee a hair slower than the fastest keeps its digits (not "0.00%")
    tiny = Knee(1e-6, 100.0, 2000.0, 100.00002, 1000.0, None)
    assert tiny.line().startswith("knee (the cheapest design within 0.0001 % of the fastest "
                                  "time): 2e-05% slower, network $1,000 instead of $2,000")


def test_solve_says_there_is_no_knee_a_hair_above_the_cheapest_network():
    r = run("solve", GPT3, "--no-sensitivity", "--budget", "4096000.04096")
    assert r.exit_code == 0, r.output
    assert ("knee (the cheapest design within 1 % of the fastest time): none: no design within "
            "1 % of the fastest time costs a cent less than the fastest ($4,096,000.05): buy the "
            "fastest") in " ".join(r.stdout.split())


@pytest.mark.heavy
def test_solve_report_and_pareto_name_one_fastest_design_and_one_knee(tmp_path):
    """gpt3-4d: solve's fastest design, the cheapest of the designs within 1e-8 of the fastest
    time, 1,166,511,737.01 ns at $13,659,960.54 (lower bound 1,166,511,725.34 ns), is the report's
    fastest, the knee's reference and the front's last point (the front's fastest, the plain
    optimum, costs $13,661,706.67); the knee, the same in solve and report, is at most 1.01 x the
    proven lower bound."""
    solved = json.loads(run("solve", GPT3, "--no-sensitivity", "--json", "-").stdout)
    rep = run("report", GPT3, "-o", tmp_path / "rep", "--json", tmp_path / "rep.json")
    assert rep.exit_code == 0, rep.output
    alts = {a["key"]: a for a in json.loads((tmp_path / "rep.json").read_text())["alternatives"]}
    front = json.loads(run("pareto", GPT3, "--points", "10", "--json", "-").stdout)
    t, usd = solved["iteration_time_ns"], solved["network_cost_usd"]
    assert (t, usd) == pytest.approx((1_166_511_737.01, 13_659_960.54), abs=0.01)
    assert alts["fastest"]["iteration_time_ns"] == t
    assert alts["fastest"]["network_cost_usd"] == usd
    assert front["fastest"]["iteration_time_ns"] <= t
    k = solved["knee"]
    assert k["equal_time_rel"] == EQUAL_TIME == 1e-8
    assert k["fastest_bound_ns"] == solved["lower_bound_ns"]
    assert k["knee_ns"] <= 1.01 * solved["lower_bound_ns"] * (1 + 1e-12) < 1.01 * t
    assert alts["knee"]["iteration_time_ns"] == pytest.approx(k["knee_ns"], rel=1e-12)
    assert alts["knee"]["network_cost_usd"] == pytest.approx(k["knee_usd"], rel=1e-9)
    assert k["knee_usd"] == pytest.approx(11_915_638.70, abs=0.01)
    last = front["points"][-1]
    assert last["network_cost_usd"] == pytest.approx(k["fastest_usd"], rel=1e-9)
    assert k["fastest_usd"] == usd
    assert last["iteration_time_ns"] <= front["fastest"]["iteration_time_ns"] * (1 + EQUAL_TIME)
