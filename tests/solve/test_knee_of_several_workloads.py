"""``hieropt solve --within`` gives the knee of several workloads sharing a fabric (their weighted
objective), the knee ``hieropt report`` recommends; for an objective other than performance a
``--within`` given on the command line gets a note saying why no knee is printed.

The pair below is computed by hand. Two Ring dimensions of 2 NPUs, bw[0] + bw[1] == 100, each
>= 10, loop no_overlap, weights 1 and 1. A 2-NPU ring all-reduce of S bytes sends S bytes per NPU:

- workload a: 1,000 ns of compute and an all-reduce of 9e4 bytes on dimension 0:
  T_a = 1,000 + 9e4 / b0 ns;
- workload b: 1,000 ns of compute and an all-reduce of 1e4 bytes on dimension 1:
  T_b = 1,000 + 1e4 / b1 ns.

The objective F = T_a + T_b = 2,000 + 9e4 / b0 + 1e4 / b1 with b0 + b1 = 100 is least at
b0 / b1 = sqrt(9e4 / 1e4) = 3: B* = (75, 25), F* = 2,000 + 1,200 + 400 = 3,600 ns. The network
costs 4 NPUs x ($1 b0 + $3 b1) = $600 there. Within 5 %: F <= 3,780 ns; the cost 4 (b0 + 3 (100 -
b0)) falls as b0 grows, so the knee is the larger root of 9e4 / b0 + 1e4 / (100 - b0) = 1,780,
i.e. of 1,780 b0^2 - 258,000 b0 + 9e6 = 0: b0 = 86.4718..., b1 = 13.5281..., cost
4 (b0 + 3 b1) = $508.2253.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tests.cases import HOURS_PAIR_TOML, REPO
from tests.cli.util import run

INSTANCE = (HOURS_PAIR_TOML.replace('name = "hours-pair"', 'name = "weighted-pair"')
            .replace("hours_share = 90", "weight = 1").replace("hours_share = 10", "weight = 1"))
"""The two-workload pair of :data:`tests.cases.HOURS_PAIR_TOML` with plain weights 1 and 1."""

B0 = (258_000 + math.sqrt(258_000**2 - 4 * 1_780 * 9e6)) / (2 * 1_780)
"""The knee's bandwidth on dimension 0 (module docstring), GB/s per NPU: 86.4718..."""
KNEE_USD = 4 * (B0 + 3 * (100 - B0))
"""The knee's network cost, $: 508.2253..."""
MIX = REPO / "instances" / "mix-gpt3-dlrm-4d.toml"


def _pair(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("a -1 1000 NONE 0 0 NONE 0 0 ALLREDUCE 90000 0\n")
    (tmp_path / "b.txt").write_text("b -1 1000 NONE 0 0 NONE 0 0 ALLREDUCE 10000 0\n")
    path = tmp_path / "pair.toml"
    path.write_text(INSTANCE)
    return path


def _solved(*args) -> tuple[str, dict]:
    r = run("solve", *args, "--no-sensitivity", "--json", "-")
    assert r.exit_code == 0, r.output
    return r.stderr, json.loads(r.stdout)


def test_the_knee_of_two_workloads_is_the_hand_computed_one(tmp_path):
    text, out = _solved(_pair(tmp_path), "--within", "5%")
    assert B0 == pytest.approx(86.47183797, rel=1e-9) and KNEE_USD == pytest.approx(508.2253, 1e-7)
    # (the cheapest design within 1e-8 of the fastest time, 3,600 by hand)
    assert out["iteration_time_ns"] == pytest.approx(3_600.0, rel=1.01e-8)
    k = out["knee"]
    assert k is not None and k["within"] == 0.05
    assert k["fastest_ns"] == out["iteration_time_ns"]
    assert k["knee_ns"] == pytest.approx(3_780.0, rel=1e-9)
    np.testing.assert_allclose(k["knee_bw_gbps"], [B0, 100 - B0], rtol=1e-6)
    assert k["knee_usd"] == pytest.approx(KNEE_USD, rel=1e-7)
    assert k["design_usd"] == k["fastest_usd"] == pytest.approx(600.0, rel=1e-4)
    line = next(x for x in text.splitlines() if x.startswith("knee "))
    assert "5.00% slower, network $508 instead of $600" in line


def test_solve_prints_the_knee_report_recommends_for_several_workloads(tmp_path):
    """The shipped mix instance: GPT-3 and DLRM weighted on one fabric; the knee of ``solve --within
    5%`` is the design and cost of the committee page's knee, to the last digit (one function)."""
    text, out = _solved(MIX, "--within", "5%")
    r = run("report", MIX, "--within", "5%", "--points", "2", "-o", tmp_path / "rep",
            "--json", tmp_path / "c.json")
    assert r.exit_code == 0, r.output
    committee = json.loads((tmp_path / "c.json").read_text())
    knee = next(a for a in committee["alternatives"] if a["key"] == "knee")
    k = out["knee"]
    assert k["knee_bw_gbps"] == knee["bw_gbps"]
    assert k["knee_usd"] == knee["network_cost_usd"]
    assert k["knee_ns"] == knee["iteration_time_ns"]
    # within 5 % of the proven bound on the weighted time, and cheaper than the fastest
    assert k["knee_ns"] <= k["fastest_bound_ns"] * 1.05 * (1 + 1e-12)
    assert k["knee_usd"] < k["fastest_usd"]
    assert any(x.startswith("knee (the cheapest design within 5 % of the fastest time): ")
               for x in text.splitlines())


def test_within_given_for_another_objective_is_noted_not_ignored(tmp_path):
    pair = _pair(tmp_path)
    text, out = _solved(pair, "--objective", "min_max_regret", "--within", "5%")
    assert out["knee"] is None
    note = ("--within: no knee beside objective min_max_regret: the knee is the cheapest design "
            "within the slack of the fastest time, measured from the performance optimum; give "
            "--objective performance (or run hieropt report) for it")
    assert note in out["notes"] and f"note: {note}" in text.splitlines()
    # not given: the default 1 % says nothing beside another objective
    text, out = _solved(pair, "--objective", "min_max_regret")
    assert out["knee"] is None and not any("--within" in n for n in out["notes"])
    # 0 turns the knee off, with nothing to note
    text, out = _solved(pair, "--within", "0")
    assert out["knee"] is None and not any("--within" in n for n in out["notes"])


def test_solve_prints_each_workloads_mapping(tmp_path):
    """Each workload's phases have their own groups: a on dimension 0 (weight_grad [2, 1]), b on
    dimension 1 ([1, 2]); solve names both, not the first twice."""
    from tests.cases import hours_pair

    r = run("solve", hours_pair(tmp_path, INSTANCE))
    assert r.exit_code == 0, r.output
    lines = [x for x in r.stdout.splitlines() if x.startswith("mapping")]
    assert lines == [
        "mapping of a (group size per dimension): forward [1, 1], input_grad [1, 1], "
        "weight_grad [2, 1]",
        "mapping of b (group size per dimension): forward [1, 1], input_grad [1, 1], "
        "weight_grad [1, 2]",
    ]
