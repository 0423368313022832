"""The arrays of the library's frozen results are read-only: a result cannot pair bandwidths
changed after the fact with the times computed for the old ones."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import hieropt
from tests.cases import REPO

INSTANCE = REPO / "instances" / "gpt3-4d.toml"


def test_solution_bandwidths_are_read_only():
    sol = hieropt.solve(INSTANCE)
    before = sol.bw_gbps.copy()
    with pytest.raises(ValueError, match="read-only"):
        sol.bw_gbps[0] = 1.0
    assert np.array_equal(sol.bw_gbps, before)
    assert sol.to_dict()["bw_gbps_per_dim"] == before.tolist()


def test_front_points_bandwidths_are_read_only():
    front = hieropt.pareto(INSTANCE, 3)
    for point in front.points:
        with pytest.raises(ValueError, match="read-only"):
            point.bw[0] = 1.0


def test_freezing_copies_the_given_array():
    given = np.array([250.0, 125.0, 75.0, 50.0])
    point = hieropt.FrontPoint(budget_usd=1e7, bw=given, iteration_time_ns=1e9,
                               network_cost_usd=1e7, lower_bound_ns=1e9, gap=0.0,
                               status=hieropt.Status.OPTIMAL)
    given[0] = 1.0  # (the caller's array stays the caller's)
    assert point.bw.tolist() == [250.0, 125.0, 75.0, 50.0]
    assert given.flags.writeable


def test_certificate_to_dict():
    inst = hieropt.load_instance(INSTANCE)
    sol = hieropt.solve(inst)
    cert = hieropt.verify(inst, sol.bw_gbps, sol.iteration_time_ns)
    data = cert.to_dict()
    assert (data["ok"], data["max_violation"], data["problems"]) == (True, 0.0, [])
    assert data["breakdown"] == sol.breakdown.to_dict()
    bad = hieropt.verify(inst, sol.bw_gbps, sol.iteration_time_ns * 1.5).to_dict()
    assert bad["ok"] is False and len(bad["problems"]) == 1


def _point(bw, budget=1e7):
    return hieropt.FrontPoint(budget_usd=budget, bw=np.array(bw), iteration_time_ns=1e9,
                              network_cost_usd=1e7, lower_bound_ns=1e9, gap=0.0,
                              status=hieropt.Status.OPTIMAL)


def test_results_compare_by_value_with_their_arrays_element_wise():
    # (the dataclasses' own == raised ValueError on an array of 4 elements, and so did `in`)
    a, b = _point([250.0, 125.0, 75.0, 50.0]), _point([250.0, 125.0, 75.0, 50.0])
    c = _point([250.0, 125.0, 75.0, 49.0])
    assert a == b and a != c and not (a == c)
    assert [c, b].index(a) == 1 and c not in [a, b]
    assert a != _point([250.0, 125.0, 75.0]) and a != _point([250.0, 125.0, 75.0, 50.0], 2e7)
    assert (a == "a point") is False
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)
    front = hieropt.Front(points=(a, c), fastest=None, best_per_cost=None, notes=(),
                          solve_seconds=1.0, lps=2)
    assert front == dataclasses.replace(front, points=(b, c))
    assert front != dataclasses.replace(front, points=(b, b))


def test_solutions_compare_by_value():
    sol = hieropt.solve(INSTANCE)
    same = dataclasses.replace(sol)
    assert sol == same and sol in [same]
    moved = dataclasses.replace(sol, bw_gbps=sol.bw_gbps * 2)
    assert sol != moved and [moved, same].index(sol) == 1
    # two solves differ in their wall time only, which == does not compare: equal
    again = hieropt.solve(INSTANCE)
    assert np.array_equal(again.bw_gbps, sol.bw_gbps) and again == sol and sol in [again]
    assert dataclasses.replace(sol, solve_seconds=sol.solve_seconds + 1.0) == sol
    assert dataclasses.replace(sol, iterations=sol.iterations + 1) != sol


def test_two_fronts_and_provisionings_of_one_instance_are_equal():
    """Their wall times (``solve_seconds``, ``milp_seconds``; a sensitivity's ``seconds``) are
    not compared; another field is."""
    inst = hieropt.load_instance(INSTANCE)
    front = hieropt.pareto(inst, 3)
    assert front == hieropt.pareto(inst, 3)
    assert dataclasses.replace(front, solve_seconds=front.solve_seconds + 1.0) == front
    assert dataclasses.replace(front, lps=front.lps + 1) != front
    catalog = REPO / "catalogs" / "example-4d.toml"
    bought = hieropt.provision(inst, catalog)
    assert bought == hieropt.provision(inst, catalog)
    assert dataclasses.replace(bought, milp_seconds=bought.milp_seconds + 1.0,
                               solve_seconds=bought.solve_seconds + 1.0) == bought
    assert dataclasses.replace(bought, milp_solves=bought.milp_solves + 1) != bought
    assert [f.name for f in dataclasses.fields(hieropt.Sensitivity) if not f.compare] == [
        "seconds"]
