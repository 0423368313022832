"""What ``hieropt codesign`` says and writes about its answer: min_run_cost without a token budget
is $ per iteration (labels, JSON unit), its tables show the iteration time (and with tokens the
run's days), the JSON's ``pruned`` is the console's (the candidates infeasible by their time
bound apart), an implausibly small ``--budget`` is refused up front with a unit hint, a size the
NIC grouping cannot divide is skipped with a note, the objectives listed are codesign's, and the
plan's flags are JSON booleans (0/1 in the results file, which resumes).

The tiny space (tests/codesign/spaces.py) on 8 NPUs: its best plan is TP 2 x DP 4 on
``b:SW8`` at 3 GB/s per NPU, 1.356176 ms per iteration, a $96 network."""

from __future__ import annotations

import csv
import json

import pytest

from tests.codesign.spaces import SPACE, codesign

RUN_COST = (SPACE.replace("npus = 8\n", 'npus = 8\nobjective = "min_run_cost"\n')
            + "[cluster]\naccelerator_usd = 15000\namortisation_years = 4\n")



def test_min_run_cost_without_tokens_is_per_iteration(tmp_path):
    """(8 x $15,000 + the $96 network) / (4 x 8,760 h) = $3.42740 per hour, times 1.356176 ms =
    $1.29115e-6 per iteration, labelled so (as hieropt solve's "$ per iteration")."""
    out = tmp_path / "r.json"
    r = codesign(tmp_path, RUN_COST, "--json", str(out))
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert d["best"]["objective_value"] == pytest.approx(
        120_096 / 35_040 * 1.356176e-3 / 3600, rel=1e-5)
    assert d["objective_unit"] == d["best"]["objective_unit"] == "USD per iteration"
    assert "  $ per iteration 1.29e-06 (gap" in r.stdout and "$ per run" not in r.stdout
    head = next(line for line in r.stdout.splitlines() if line.startswith("┃ rank"))
    assert "$ per iteration" in head and "iteration ms" in head and "days" not in head


def test_min_run_cost_with_tokens_shows_days(tmp_path):
    """6.4e9 tokens at 64 per iteration: 1e8 iterations of 1.356176 ms = 1.5697 days."""
    out = tmp_path / "r.json"
    r = codesign(tmp_path, RUN_COST.replace("npus = 8\n", "npus = 8\ntokens = 6.4e9\n"),
                 "--json", str(out))
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["objective_unit"] == "USD per run"
    assert "(time ms; days of the run; memory GB per NPU)" in r.stdout
    head = next(line for line in r.stdout.splitlines() if line.startswith("┃ rank"))
    assert "$ per run" in head and "iteration ms" in head and "days" in head
    row = next(line for line in r.stdout.splitlines() if line.startswith("│    1 │"))
    assert "│          1.4 │ 1.57 │" in row


def test_json_pruned_is_the_consoles(tmp_path):
    """--max-time 2ms --top 1: 15 solved, 105 pruned by the incumbent, 60 infeasible by their time
    bound (180 candidates)."""
    out = tmp_path / "r.json"
    r = codesign(tmp_path, SPACE, "--max-time", "2ms", "--top", "1", "--json", str(out))
    assert r.exit_code == 0, r.output
    assert ("solved 15 (15 optimal), settled without a solve 165 (60 infeasible by their time "
            "bound or their rows: above the target, no bandwidth, or rows that cannot all hold; "
            "105 pruned: proven bound >= incumbent)") \
        in r.stdout
    d = json.loads(out.read_text())
    assert (d["solved"], d["pruned"], d["infeasible_by_bound"], d["settled_without_solve"]) == (
        15, 105, 60, 165)
    assert d["statuses"]["pruned"] == d["pruned"] and d["candidates"] == 180


def test_a_budget_without_its_suffix_is_refused_with_a_hint(tmp_path):
    r = codesign(tmp_path, SPACE, "--budget", "30")
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        "error: --budget: $30.00 is below $1,000, less than any cluster's network costs: a plain "
        "number is $; fix: did you mean 30M? write --budget 30M (suffixes k, M, B = 1e9)")


def test_a_size_the_nics_cannot_divide_is_skipped(tmp_path):
    space = SPACE.replace("nic_gbps = 1\n", "nic_gbps = 1\nnic_npus = 4\n")
    out = tmp_path / "r.json"
    r = codesign(tmp_path, space, "--sizes", "6,8", "--json", str(out))
    assert r.exit_code == 0, r.output
    why = ("the space's nic_npus = 4 does not divide the 6 NPUs (a node's NICs are bought "
           "together); fix: drop 6 from the cluster sizes (npus, --sizes) or give nic_npus a node "
           "size that divides it")
    assert f"  note: 6 NPUs skipped: {why}" in r.stdout
    d = json.loads(out.read_text())
    assert d["sizes_without_shape"] == [{"npus": 6, "reason": why}] and d["best"]["npus"] == 8
    r = codesign(tmp_path, space, "--sizes", "6")  # no size left: the file's error
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"error: {tmp_path / 'space.toml'}: nic_npus: 4 does not divide the 6 NPUs; fix: give the "
        "NPUs of one node (whose NICs are bought together), or 1, or cluster sizes it divides")


OBJECTIVES = "performance, performance_per_cost, min_cost, min_run_cost"


@pytest.mark.parametrize("how", ["option", "file"])
def test_the_objectives_listed_are_codesigns(tmp_path, how):
    if how == "option":
        r = codesign(tmp_path, SPACE, "--objective", "min_max_regret")
        assert r.stderr.strip().endswith(
            "objective: min_max_regret compares several workloads on one fabric and a co-design "
            "space has one model; fix: use performance, performance_per_cost, min_cost or "
            "min_run_cost")
        r = codesign(tmp_path, SPACE, "--objective", "fast")
        assert r.stderr.strip() == (
            f"error: --objective: unknown objective 'fast'; fix: use one of {OBJECTIVES}")
    else:
        r = codesign(tmp_path, SPACE.replace("npus = 8\n", 'npus = 8\nobjective = "fast"\n'))
        assert OBJECTIVES in r.stderr and "min_max_regret" not in r.stderr
    assert r.exit_code == 2


def test_plan_flags_are_json_booleans_and_the_file_resumes(tmp_path):
    rows, out = tmp_path / "rows.csv", tmp_path / "r.json"
    r = codesign(tmp_path, SPACE, "--out", str(rows), "--json", str(out))
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert d["best"]["sequence_parallel"] is False and d["ranking"][0]["sequence_parallel"] is False
    assert {x["overlap_grad_reduce"] for x in d["ranking"]} <= {True, False}
    with rows.open(encoding="utf-8") as f:
        cells = {row["sequence_parallel"] for row in csv.DictReader(f)}
    assert cells == {"0"}  # (the file keeps 0/1, as older files have them)
    r = codesign(tmp_path, SPACE, "--out", str(rows), "--json", str(out))
    assert r.exit_code == 0, r.output
    again = json.loads(out.read_text())
    assert again["resumed"] == d["candidates"] and again["solved"] == 0
    assert again["best"]["id"] == d["best"]["id"] and again["best"]["sequence_parallel"] is False
