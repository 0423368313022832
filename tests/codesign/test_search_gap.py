"""The search's best carries its proven gap over the whole search: a candidate stopped at a solver
limit with a bound below the best makes the answer a LIMIT with the honest gap (exit 3, JSON
``status`` and ``gap``), one whose bound is above the best does not. A huge time target is no
longer a false LIMIT or "infeasible" (the time x cost LP's unit), and ``--deadline`` refuses a
deadline whose iterations would each take a day or more.

The tiny space (TP 1 or 2 on one dimension of 8 NPUs, performance) has six candidates; solved
exactly its best is ``tp2 ... | b:SW8`` at 1,354,696 ns, then TP 1 on ``a:FC8`` at
1,355,049.33 ns. The solver limit is simulated on TP 1 on ``a:FC8`` by replacing its certified
answer by a LIMIT with the bound given."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

import hieropt.studies.codesign.solve as solve_module
from hieropt import api
from hieropt.cli import app
from hieropt.io.instance import load_instance
from hieropt.result import Status
from hieropt.studies.codesign.search import codesign
from hieropt.workloads.llm.space import PlanChoices
from tests.cli.util import runner
from tests.codesign.spaces import SPACE, space, write_space_files

from ..cases import REPO

PLANS = PlanChoices(tp=(1, 2), pp=(1,), zero_stage=(0,), recompute=("none",))
BEST_NS = 1_354_696.0


def limit_on(monkeypatch, bound: float, target: str = "| a:FC8 |", plan: str = "tp1 ") -> None:
    """Candidates whose id holds ``plan`` and ``target`` stop at a "solver limit" with proven
    bound ``bound`` (their value kept)."""
    real = solve_module._fastest_design

    def fake(inst, objective):
        sol, design = real(inst, objective)
        if plan in inst.name and target in inst.name:
            sol = replace(sol, status=Status.LIMIT, objective_bound=bound,
                          gap=(sol.objective_value - bound) / sol.objective_value)
        return sol, design

    monkeypatch.setattr(solve_module, "_fastest_design", fake)


def test_a_certified_search_is_optimal_with_its_best_gap():
    r = codesign(space(plans=PLANS, max_dims=1), workers=1, prune=False)
    assert r.best.objective_value == pytest.approx(BEST_NS, rel=1e-9)
    assert r.status == "optimal" and r.gap == r.best.gap <= 1e-8
    d = r.to_dict()
    assert (d["status"], d["gap"], d["lower_bound"]) == ("optimal", r.best.gap,
                                                          r.best.objective_bound)
    assert r.best.objective_bound == pytest.approx(BEST_NS * (1 - r.best.gap), rel=1e-15)


def test_a_limit_row_with_a_bound_below_the_best_makes_a_limit(monkeypatch):
    limit_on(monkeypatch, 1_354_000.0)
    r = codesign(space(plans=PLANS, max_dims=1), workers=1, prune=False)
    assert r.statuses == {"optimal": 5, "limit": 1}
    # (1,354,696 - 1,354,000) / 1,354,696 = 5.1377e-4: the best is not proven within 1e-8
    assert r.best.objective_value == pytest.approx(BEST_NS, rel=1e-9)
    assert r.status == "limit" and r.gap == pytest.approx(696 / 1_354_696, rel=1e-6)
    assert r.to_dict()["lower_bound"] == 1_354_000.0


def test_a_limit_row_with_a_bound_above_the_best_keeps_it_optimal(monkeypatch):
    limit_on(monkeypatch, 1_355_000.0)  # (above the best's 1,354,696: it cannot beat it)
    r = codesign(space(plans=PLANS, max_dims=1), workers=1, prune=False)
    assert r.statuses == {"optimal": 5, "limit": 1}
    assert r.status == "optimal" and r.gap == r.best.gap


def test_the_best_itself_at_a_limit_is_a_limit(monkeypatch):
    limit_on(monkeypatch, 0.0, "| b:SW8 |", "tp2 ")  # (no bound: gap 1)
    r = codesign(space(plans=PLANS, max_dims=1), workers=1, prune=False)
    assert r.best.id.startswith("tp2") and r.best.status == "limit"
    assert r.status == "limit" and r.gap == 1.0


def test_the_command_says_limit_and_exits_3(monkeypatch, tmp_path):
    limit_on(monkeypatch, 0.0, "", "tp1 ")  # every TP 1 candidate: bound 0, gap 1 over the search
    out = tmp_path / "r.json"
    r = runner.invoke(app,
                      ["codesign", str(write_space_files(tmp_path, SPACE)), "--workers", "1",
                       "--no-prune", "--json", str(out)])
    assert r.exit_code == 3, r.output
    assert "LIMIT: the best found, not proven optimal: gap 1 over the search" in r.stdout
    assert ("error: limit: the best found is not proven optimal: its gap over the search is 1, "
            "above the gap target 1e-08") in r.stderr
    d = json.loads(out.read_text())
    assert (d["status"], d["gap"], d["lower_bound"]) == ("limit", 1.0, 0.0)
    assert d["best"] is not None


def test_a_deadline_of_a_day_per_iteration_is_refused(tmp_path):
    """6.4e9 tokens at 16 x 4 = 64 tokens per iteration: 1e8 iterations, so 1e8 days is one day
    per iteration (refused, as --max-time 1d is) and 9e7 days 0.9 day (searched)."""
    path = write_space_files(tmp_path, SPACE.replace("npus = 8\n", "npus = 8\ntokens = 6.4e9\n"))
    r = runner.invoke(app, ["codesign", str(path), "--workers", "1", "--deadline", "1e8d"])
    assert r.exit_code == 2
    assert ("error: --deadline: '1e8d' for 100,000,000 iterations is 1 day per iteration, and no "
            "training iteration takes a day; fix: check the deadline's unit (d, h, min, s): give "
            "less than 100,000,000 days (one day per iteration), e.g. --deadline 90d") in r.stderr
    r = runner.invoke(app, ["codesign", str(path), "--workers", "1", "--deadline", "9e7d"])
    assert r.exit_code == 0, r.output
    assert "best: tp2 cp1 pp1 dp4" in r.stdout


@pytest.mark.parametrize("objective", ["min_run_cost", "performance_per_cost"])
def test_a_huge_time_target_gives_the_answer_without_one(objective):
    """T x (A + C) with a target of 1e17 or 9e17 ns (far above any design's time) is the answer
    without a target: the LP's bandwidth unit was the target's (1e-6 GB/s), which left it at a
    LIMIT (gap 0.83) or "infeasible"."""
    from hieropt.spec.cluster import Cluster

    inst = load_instance(REPO / "instances" / "gpt3-nvl72-2304.toml").model_copy(
        update={"cluster": Cluster(accelerator_usd=15000, amortisation_years=4)})
    free = api.solve(inst, objective, options=api.SolveOptions(sensitivity=False))
    for target in (1e17, 9e17):
        sol = api.solve(inst, objective, options=api.SolveOptions(
            max_iteration_time_ns=target, sensitivity=False))
        assert sol.status == "optimal" and sol.gap <= 1e-7
        assert sol.objective_value == pytest.approx(free.objective_value, rel=1e-7)


def test_the_committee_page_says_limit_and_the_settled_counts(monkeypatch):
    from hieropt.report.committee_codesign import codesign_committee

    limit_on(monkeypatch, 1_354_000.0)
    data = codesign(space(plans=PLANS, max_dims=1), workers=1, prune=False).to_dict()
    first = codesign_committee(data, None).notes[0]
    assert "; LIMIT: the search's best is not proven (gap 5.14e-04, least lower bound " \
        "1.354e+06: some candidates stopped at a solver limit)" in first
    assert "0 pruned by a proven bound;" in first  # (none infeasible by its bound: not said)
    proven = codesign_committee({**data, "status": "optimal", "infeasible_by_bound": 3}, None)
    assert "LIMIT" not in proven.notes[0]
    assert "0 pruned by a proven bound, 3 infeasible by their bounds;" in proven.notes[0]
