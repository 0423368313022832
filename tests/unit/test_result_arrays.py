"""The arrays of the library's frozen results are read-only: a result cannot pair bandwidths
changed after the fact with the times computed for the old ones."""

from __future__ import annotations

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
