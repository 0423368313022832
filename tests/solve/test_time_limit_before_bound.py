"""A time limit reached before any design or proven bound (the first LPs: the bandwidths' reach,
the cheapest network, the first cutting-plane LP) is the answer LIMIT with an unknown gap, never a
solver failure nor "infeasible". instances/gpt3-plan-4d.toml's pipeline LP is solved by HiGHS
from its first LP (too large for the dense solver, which has no time limit), so a limit of 1e-9 s
stops the first HiGHS solve."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

import hieropt
from hieropt import api
from hieropt.errors import LimitReached, SolverError
from hieropt.solvers import objectives

from ..cli.util import run

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "instances" / "gpt3-plan-4d.toml"
CATALOG = REPO / "catalogs" / "example-4d.toml"
BOUGHT = REPO / "instances" / "gpt3-4d.toml"  # (whole parts the A100's NIC can feed: PLAN's
# sum(bw) == 500 is out of their reach past its scale-up domain)
TINY = 1e-9
"""A time limit per solve (s) that stops the first HiGHS solve."""
HEAD = "the time limit of 1e-09 s per solve was reached on "
TAIL = (" before any design or proven bound: no design, gap unknown (inf); fix: allow more time "
        "(time_limit_s)")


@pytest.fixture(scope="module")
def plan():
    return hieropt.load_instance(PLAN)


@pytest.mark.parametrize("objective, target, stopped", [
    ("performance", None, "the largest bandwidth of dimension 0"),
    ("min_cost", 1e10, "the largest bandwidth of dimension 0"),
    # (the cost-share LP's first cut, not "infeasible", a claim nothing proves)
    ("performance_per_cost", None, "cutting-plane LP 1"),
])
def test_a_time_limit_before_any_bound_is_limit_with_an_unknown_gap(plan, objective, target,
                                                                     stopped):
    options = hieropt.SolveOptions(time_limit_s=TINY, max_iteration_time_ns=target)
    sol = hieropt.solve(plan, objective, options=options)
    assert sol.status is hieropt.Status.LIMIT
    assert sol.message == HEAD + stopped + TAIL
    assert not sol.has_design and sol.bw_gbps.size == 0
    assert math.isinf(sol.gap) and math.isnan(sol.objective_bound)
    assert sol.to_dict()["status"] == "limit"
    with pytest.raises(LimitReached) as err:
        sol.raise_for_status()
    assert str(err.value) == "limit: " + sol.message
    assert err.value.exit_code == 3 and err.value.kind == "limit"


JOINT = ["bw[0] - bw[1] <= 0", "bw[1] - bw[2] <= 0", "bw[2] - bw[3] <= 0", "bw[3] <= 100"]
"""Rows that limit dimensions 0-2 only together (the LP of the bandwidths' reach decides it)."""


def test_a_limit_on_the_reach_of_jointly_limited_rows_is_not_infeasible(tmp_path):
    # (not "infeasible: the design constraints and bounds cannot all hold", which the same
    # rows solved without the limit refute: bw = 100 on every dimension)
    text = PLAN.read_text(encoding="utf-8").replace('"../models/', f'"{REPO / "models"}/')
    rows = 'constraints = ["sum(bw) == 500"]'
    assert rows in text
    path = tmp_path / "joint.toml"
    path.write_text(text.replace(rows, "constraints = " + json.dumps(JOINT)), encoding="utf-8")
    joint = hieropt.load_instance(path)
    sol = hieropt.solve(joint, options=hieropt.SolveOptions(time_limit_s=TINY))
    assert sol.status is hieropt.Status.LIMIT
    assert sol.message == HEAD + "the bandwidths' reach" + TAIL
    assert hieropt.solve(joint).bw_gbps == pytest.approx([100.0] * 4, rel=1e-12)


def test_a_budget_solve_stopped_on_the_cheapest_network_is_limit(plan):
    options = hieropt.SolveOptions(time_limit_s=TINY, budget_usd=1e7)
    sol = hieropt.solve(plan, options=options)
    assert sol.status is hieropt.Status.LIMIT
    assert sol.message == HEAD + "the cheapest network's LP" + TAIL


def test_pareto_and_provision_stopped_before_any_design_say_limit(plan):
    with pytest.raises(LimitReached) as front:
        hieropt.pareto(plan, points=3, time_limit_s=TINY)
    assert str(front.value) == "limit: " + HEAD + "the cheapest network's LP" + TAIL
    with pytest.raises(LimitReached) as bom:
        hieropt.provision(BOUGHT, CATALOG, time_limit_s=TINY)
    assert str(bom.value) == "limit: " + HEAD + "the catalog's MILP" + TAIL
    assert isinstance(bom.value, SolverError)  # (still a solver's outcome for except SolverError)


def test_the_command_line_prints_limit_and_exits_3(tmp_path, monkeypatch):
    recommended = objectives.recommended_options
    monkeypatch.setattr(objectives, "recommended_options",
                        lambda **f: replace(recommended(**f), time_limit_s=TINY))
    out = tmp_path / "r.json"
    r = run("solve", PLAN, "--json", out)
    assert r.exit_code == 3, r.output
    line = "error: limit: " + HEAD + "the largest bandwidth of dimension 0" + TAIL
    assert r.stderr.strip() == line
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc == {"status": "limit", "message": line.removeprefix("error: "), "exit_code": 3}


def test_the_front_command_prints_limit_and_exits_3(monkeypatch):
    monkeypatch.setattr(api, "pareto", partial(hieropt.pareto, time_limit_s=TINY))
    r = run("pareto", PLAN, "--points", "3")
    assert r.exit_code == 3, r.output
    assert r.stderr.strip() == ("error: limit: " + HEAD + "the cheapest network's LP" + TAIL)
