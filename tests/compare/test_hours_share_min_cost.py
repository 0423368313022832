"""``compare`` and ``report`` on workloads weighted by ``hours_share`` asked for min_cost: the rules
of thumb are placed at a time target in ns, which such a portfolio does not take (its time is a
ratio to the workloads' own optima), and not within a ``max_regret``. compare refuses with a fix
that works (compare for performance; ``hieropt solve`` for the cheapest network within the
regret); report on a file whose objective is min_cost with max_regret compares for performance
and says so.

The pair (:data:`tests.cases.HOURS_PAIR_TOML`): the hour-weighted ratio 0.5 + 40.5 / b0 + 4.5 / b1
on b0 + b1 = 100 is least at (75, 25) with 1.22; within max_regret 0.5 (each workload within 1.5 x
its own optimum: b0, b1 >= 45) the cheapest network, of cost 4 b0 + 12 b1, is (55, 45) at $760."""

from __future__ import annotations

import json
import shlex

import pytest

from tests.cases import HOURS_PAIR_TOML, hours_pair
from tests.cli.util import error_line, run

REGRET_FILE = HOURS_PAIR_TOML.replace('objective = "performance"',
                                      'objective = "min_cost"\nmax_regret = 0.5')


def test_compare_min_cost_gives_a_fix_that_works(tmp_path):
    inst = hours_pair(tmp_path, REGRET_FILE)
    for args in ((), ("--objective", "min_cost")):
        r = run("compare", inst, *args)
        assert r.exit_code == 2, r.output
        line = error_line(r)
        assert "--objective performance" in line
        assert "--max-time" not in line and "missing" not in line
    # the fix's solve command runs as written: the cheapest network within the regret
    line = error_line(run("compare", inst, "--objective", "min_cost"))
    command = shlex.split(line.split("'hieropt ")[1].split("'")[0])
    assert command == ["solve", str(inst), "--objective", "min_cost", "--max-regret", "0.5"]
    r = run(*command, "--json", tmp_path / "s.json")
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "s.json").read_text())["objective_value"] == pytest.approx(
        760.0, rel=1e-7)
    # and the comparison for performance leaves the regret bound (min_cost's) out
    r = run("compare", inst, "--objective", "performance", "--json", tmp_path / "c.json")
    assert r.exit_code == 0, r.output
    rows = json.loads((tmp_path / "c.json").read_text())["rows"]
    assert rows[0]["objective_value"] == pytest.approx(1.22, rel=1e-8)


def test_report_of_a_regret_file_compares_for_performance_and_says_so(tmp_path):
    inst = hours_pair(tmp_path, REGRET_FILE)
    r = run("report", inst, "-o", tmp_path / "out", "--points", "3")
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["rows"][0]["objective_value"] == pytest.approx(1.22, rel=1e-8)
    assert report["objective_unit"] == "hours_weighted_ratio"
    assert any("min_cost with max_regret 0.5" in n and "hieropt solve" in n
               for n in report["notes"])


def test_a_time_target_is_still_the_fix_for_plain_weights(tmp_path):
    plain = HOURS_PAIR_TOML.replace("hours_share = 90", "weight = 1").replace(
        "hours_share = 10", "weight = 1")
    r = run("compare", hours_pair(tmp_path, plain), "--objective", "min_cost")
    assert r.exit_code == 2, r.output
    assert "--max-time" in error_line(r)
