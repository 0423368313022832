"""The library's arguments of the wrong type or value: an InputError naming the argument (never
bare TypeErrors, a time limit of 0 read as HiGHS's failure, NaN taken as no limit, text and booleans
converted to bandwidths)."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt import SolveOptions
from tests.cases import REPO

INSTANCE = REPO / "instances" / "gpt3-4d.toml"


@pytest.fixture(scope="module")
def inst():
    return hieropt.load_instance(INSTANCE)


@pytest.mark.parametrize("limit", [0, -1, float("nan"), "10", True])
def test_time_limit_must_be_a_positive_number(inst, limit):
    for call in (
        lambda: hieropt.solve(inst, options=SolveOptions(time_limit_s=limit)),
        lambda: hieropt.pareto(inst, 3, time_limit_s=limit),
    ):
        with pytest.raises(hieropt.InputError, match="time_limit_s") as e:
            call()
        assert "positive number of seconds" in str(e.value)


def test_time_limit_inf_and_numpy_scalars_are_accepted(inst):
    a = hieropt.solve(inst, options=SolveOptions(time_limit_s=float("inf")))
    b = hieropt.solve(inst, options=SolveOptions(time_limit_s=np.float64(30)))
    assert a.iteration_time_ns == b.iteration_time_ns and a.status.value == "optimal"


@pytest.mark.parametrize("target", ["1e9", [1e9], True])
def test_time_target_must_be_a_number(inst, target):
    with pytest.raises(hieropt.InputError, match="max_iteration_time_ns: .* is not a number"):
        hieropt.solve(
            inst, objective="min_cost", options=SolveOptions(max_iteration_time_ns=target)
        )


@pytest.mark.parametrize("points", [3.5, "4", True])
def test_pareto_points_must_be_whole(inst, points):
    with pytest.raises(hieropt.InputError, match="points: .* is not a whole number"):
        hieropt.pareto(inst, points=points)


@pytest.mark.parametrize(
    "bw, kind",
    [
        (np.array(["250", "125", "75", "50"]), "str"),
        ([True, 125, 75, 50], "bool"),
        ([250, "125", 75, 50], "str"),
        (np.array([1, 0, 1, 1], dtype=bool), "bool"),
    ],
)
def test_bandwidths_must_be_numbers(inst, bw, kind):
    for call in (hieropt.evaluate, hieropt.verify):
        with pytest.raises(
            hieropt.InputError, match=f"bw_gbps: bandwidths must be numbers, got {kind}"
        ):
            call(inst, bw)


def test_integer_and_numpy_bandwidths_evaluate_alike(inst):
    ref = hieropt.evaluate(inst, [250.0, 125.0, 75.0, 50.0]).iteration_time_ns
    for bw in ([250, 125, 75, 50], (250, 125, 75, 50), np.array([250, 125, 75, 50], dtype=np.int32),
               [np.float32(250), np.int64(125), 75, 50]):
        assert hieropt.evaluate(inst, bw).iteration_time_ns == ref
