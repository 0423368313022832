"""Every route of the solver against one catalogue of hand-solved cases
(tests/solve/certificates.py): which routes accept each case, the certified optimum of every route
that accepts it, the same answer through :func:`hieropt.solve`, and the status and reason of the
cases without a design."""

from __future__ import annotations

import time

import numpy as np
import pytest

import hieropt
from hieropt.model.timing import build_time_model
from hieropt.solvers.cutting import REL_GAP, TimeLP
from hieropt.solvers.procurement import BUDGET_ROUTES, PPC_GAP, BudgetCase
from hieropt.solvers.routes import ROUTES, Case
from tests.solve.certificates import (
    HAND_CASES,
    NO_DESIGN_CASES,
    HandCase,
    check_design,
    check_no_design,
    check_solution,
    check_value,
    instance,
)

OBJECTIVE_ROUTES = {r.name: r for r in ROUTES if r.name != "no_route"}
"""The objective routes but the catch-all ``no_route`` (which raises; its own test below)."""
BUDGET = {r.name: r for r in BUDGET_ROUTES}


def _gap(hc: HandCase) -> float:
    return PPC_GAP if hc.instance.objective in ("performance_per_cost", "min_run_cost") else REL_GAP


def _case(hc: HandCase) -> Case:
    return Case(hc.instance, build_time_model(hc.instance), _gap(hc), 60.0, time.perf_counter())


def _budget_case(hc: HandCase) -> BudgetCase:
    """The case on the performance LP of the instance without its budget, as a Pareto sweep builds
    it: its units follow the instance's caps, not the budget (where a budget far below them is a
    route of its own)."""
    inst = hc.instance
    sweep = inst.model_copy(update={"max_network_cost_usd": None})
    core = TimeLP(sweep, build_time_model(sweep), 60.0)
    return BudgetCase(core, inst.max_network_cost_usd, _gap(hc))


@pytest.mark.parametrize("hc", HAND_CASES, ids=[c.id for c in HAND_CASES])
def test_the_routes_that_accept_each_case(hc):
    case = _case(hc)
    names = [r.name for r in ROUTES if r.accepts(case) and r.name in OBJECTIVE_ROUTES]
    if hc.instance.objective == "performance":
        bc = _budget_case(hc)
        try:
            names += [r.name for r in BUDGET_ROUTES if r.accepts(bc)]
        finally:
            bc.core.close()
    assert tuple(names) == hc.routes


PAIRS = [pytest.param(hc, name, id=f"{hc.id}-{name}") for hc in HAND_CASES for name in hc.routes]


@pytest.mark.parametrize("hc, name", PAIRS)
def test_every_route_that_accepts_a_case_certifies_its_hand_optimum(hc, name):
    if name in OBJECTIVE_ROUTES:
        sol = OBJECTIVE_ROUTES[name].solve(_case(hc))
        assert sol is not None, f"{name} declined {hc.id}"
        check_solution(hc, sol, _gap(hc))
        return
    bc = _budget_case(hc)
    try:
        res = BUDGET[name].solve(bc)
    finally:
        bc.core.close()
    assert res.status is hieropt.Status.OPTIMAL, res.message
    check_value(hc, res.upper, res.lower, _gap(hc))
    check_design(hc, res.bw, res.upper)


def test_every_route_is_exercised_by_a_hand_case():
    taken = {name for hc in HAND_CASES for name in hc.routes}
    assert (set(OBJECTIVE_ROUTES) | set(BUDGET)) - taken == set()


def test_the_catch_all_route_names_the_objective_in_one_line():
    """An objective no route accepts (here one the spec does not know, set past its checks) reaches
    ``no_route``: one line naming it and the routed objectives, not the case's repr."""
    inst = instance().model_copy(update={"objective": "min_power"})
    assert ROUTES[-1].name == "no_route" and ROUTES[-1].accepts(_case(HAND_CASES[0]))
    with pytest.raises(hieropt.InputError) as err:
        hieropt.solve(inst)
    msg = str(err.value)
    assert "\n" not in msg and len(msg) < 200
    assert msg == ("instance: objective: no solver route for objective 'min_power'; fix: use one "
                   "of performance, min_cost, performance_per_cost, min_max_regret, min_run_cost")


@pytest.mark.parametrize("hc", HAND_CASES, ids=[c.id for c in HAND_CASES])
def test_solve_walks_the_table_to_the_hand_optimum(hc):
    check_solution(hc, hieropt.solve(hc.instance), _gap(hc))


@pytest.mark.parametrize("nd", NO_DESIGN_CASES, ids=[c.id for c in NO_DESIGN_CASES])
def test_a_case_without_a_design_is_a_status_with_its_reason(nd):
    check_no_design(nd, hieropt.solve(nd.instance))


def test_options_and_the_old_keywords_give_the_same_answer():
    inst = instance(constraints=HAND_CASES[0].instance.constraints)
    new = hieropt.solve(
        inst, "min_cost", options=hieropt.SolveOptions(max_iteration_time_ns=2e7, rel_gap=1e-6)
    )
    with pytest.warns(DeprecationWarning, match="options=SolveOptions") as caught:
        old = hieropt.solve(inst, "min_cost", max_iteration_time_ns=2e7, rel_gap=1e-6)
    assert caught[0].filename == __file__  # the caller's line, not a wrapper inside hieropt
    assert new.status is old.status is hieropt.Status.OPTIMAL
    np.testing.assert_array_equal(new.bw_gbps, old.bw_gbps)
    assert new.objective_value == old.objective_value


def test_an_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'gap'"):
        hieropt.solve(instance(), gap=1e-6)


def test_a_solution_without_a_design_has_a_short_json_dict():
    sol = hieropt.solve(NO_DESIGN_CASES[0].instance)
    d = sol.to_dict()
    assert (
        d["status"] == "infeasible" and d["message"] == sol.message and "bw_gbps_per_dim" not in d
    )


def test_a_bound_above_the_verified_answer_is_no_certificate():
    """A loop whose bound exceeds the evaluator's value of its own (feasible) answer contradicts
    itself: the answer is kept as LIMIT with the only safe bound, 0 (gap 1), never printed as
    optimal with the bound clamped to the value. The hand case "fastest-sum": its optimum
    1.65e7 ns at b = 100 m / (m0 + m1), offered with a bound 1e-6 above it."""
    from hieropt.result import Status
    from hieropt.solvers.outcome import OAResult
    from hieropt.solvers.procurement import Counts
    from hieropt.solvers.routes import verified

    hc = next(h for h in HAND_CASES if h.id == "fastest-sum")
    tm = build_time_model(hc.instance)
    bw = np.array(hc.bw_gbps)
    value = float(tm.time_ns(bw))
    assert value == pytest.approx(hc.value, rel=1e-12)
    sound = OAResult(Status.OPTIMAL, bw, value, value * (1 - 1e-12), 3, "optimal")
    sol = verified(hc.instance, tm, Counts(lps=3), sound, "performance", time.perf_counter(), {})
    assert sol.status is Status.OPTIMAL and sol.objective_bound == value * (1 - 1e-12)
    wrong = OAResult(Status.OPTIMAL, bw, value, value * (1 + 1e-6), 3, "optimal")
    sol = verified(hc.instance, tm, Counts(lps=3), wrong, "performance", time.perf_counter(), {})
    assert sol.status is Status.LIMIT and sol.objective_bound == 0.0 and sol.gap == 1.0
    assert sol.message.startswith("not certified: the loop's bound")
    assert sol.objective_value == value and list(sol.bw_gbps) == list(bw)
