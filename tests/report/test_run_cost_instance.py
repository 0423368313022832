"""``hieropt report`` and ``hieropt compare`` on an instance whose own objective is ``min_run_cost``
(no ``--objective`` given): the page compares the rules of thumb for performance and says so, and
still recommends the least $ per run; ``compare`` names the instance file's objective and the flag
that chooses another."""

from __future__ import annotations

import json

import pytest

import hieropt
from tests.cli.util import error_line, run
from tests.report.nvl72 import with_cluster


@pytest.fixture(scope="module")
def run_cost_instance(tmp_path_factory):
    """The NVL72 instance with a [cluster], a token budget and ``objective = "min_run_cost"``."""
    path = with_cluster(tmp_path_factory.mktemp("run_cost") / "inst.toml")
    text = path.read_text().replace('objective = "performance"', 'objective = "min_run_cost"', 1)
    assert 'objective = "min_run_cost"' in text
    path.write_text(text)
    return path


def test_report_compares_for_performance_and_recommends_the_least_dollars_per_run(
    run_cost_instance, tmp_path
):
    out = tmp_path / "out"
    r = run("report", run_cost_instance, "-o", out, "--points", "4")
    assert r.exit_code == 0, r.output
    data = json.loads((out / "report.json").read_text())
    assert data["objective"] == "performance"
    assert data["notes"][0].startswith(
        "the rules of thumb are compared for performance (iteration time): the instance's "
        "objective min_run_cost has no heuristic comparison"
    )
    committee = data["committee"]
    assert committee["recommended"] == "min_run_cost"
    assert "objective of the input: min_run_cost" in committee["subject"]
    # the recommendation is the certified min_run_cost optimum of the instance
    best = hieropt.solve(hieropt.load_instance(run_cost_instance))
    assert best.objective == "min_run_cost"
    rec = next(a for a in committee["alternatives"] if a["key"] == "min_run_cost")
    assert rec["run_cost_usd"] == pytest.approx(best.objective_value, rel=1e-6)
    page = (out / "report.html").read_text()
    assert "Detail: the exact optimum for performance versus rules of thumb" in page


def test_compare_names_the_instance_objective_not_a_flag(run_cost_instance):
    r = run("compare", run_cost_instance)
    assert r.exit_code == 2
    line = error_line(r)
    assert line.startswith(f"error: {run_cost_instance}: objective: the instance's objective "
                           "'min_run_cost' has no heuristic comparison")
    assert "fix: choose one with --objective, e.g. --objective performance" in line
    assert "error: --objective" not in line


def test_compare_with_an_objective_given_runs(run_cost_instance):
    r = run("compare", run_cost_instance, "--objective", "performance")
    assert r.exit_code == 0, r.output
    assert "objective performance" in r.stdout
