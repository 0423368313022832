"""The Pareto front's cheap end when the cheapest network leaves a loaded dimension without
bandwidth (infinite time there). A front that starts at the plain budget row starts 1 % of the way
to its dear end (on 12 of 14 random fronts 0.3x to 1.6e7x the cheapest cost above it). Now that
budgets a hair above the cheapest solve (hieropt/solvers/ near_cheapest.py), it starts 1e-6 above
the cheapest network, where that point is a certified optimum.

The first point is held against exact oracles: the two-dimension instance of
tests/solve/test_near_cheapest.py (the slack all goes to the starved dimension, in rational
arithmetic) and the tie in price of tests/solve/test_near_cheapest_ties.py (closed form in 40-digit
decimals)."""

from __future__ import annotations

import csv
import io
from fractions import Fraction

import numpy as np
import pytest
from typer.testing import CliRunner

import hieropt
from hieropt.cli import app
from hieropt.model.cost import cluster_cost_usd_per_gbps
from hieropt.solvers.front import CHEAPEST_SLACK
from tests.solve.near_cheapest import TWO_DIMS_TOML, exact_optimum, tied, two_dims

EPS = float(np.finfo(float).eps)


def _hand_two_dims(inst: hieropt.Instance, S: float, budget: float) -> tuple[float, np.ndarray]:
    """T and design of :func:`two_dims` within ``budget`` (exact room, the slack all on dimension
    1)."""
    p = [Fraction(float(v)) for v in cluster_cost_usd_per_gbps(inst)]
    b1 = (Fraction(budget) - p[0] * Fraction(S)) / (p[1] - p[0])
    bw = np.array([float(Fraction(S) - b1), float(b1)])
    return hieropt.evaluate(inst, bw).iteration_time_ns, bw


@pytest.mark.parametrize("prices", [(1.0, 3.0), (1e-5, 1e4), (2e3, 9e3)])
def test_front_starts_a_hair_above_the_cheapest_network(prices):
    S = 100.0
    inst = two_dims(prices, S)
    c0 = float(cluster_cost_usd_per_gbps(inst)[0]) * S
    front = hieropt.pareto(inst, points=5)
    first = front.points[0]
    assert first.budget_usd == pytest.approx(c0 * (1 + CHEAPEST_SLACK), rel=1e-12)
    hand, _ = _hand_two_dims(inst, S, first.budget_usd)
    assert first.gap <= 1e-8
    assert first.iteration_time_ns == pytest.approx(hand, rel=1e-8)
    room = first.budget_usd - c0
    assert first.lower_bound_ns <= hand * (1 + 4 * EPS * c0 / room)
    assert first.network_cost_usd <= first.budget_usd
    assert "starts 1e-06 above it" in front.notes[0]
    # the second point is an independent solve's answer too, and the times fall along the front
    alone = hieropt.solve(
        inst.model_copy(update={"max_network_cost_usd": front.points[1].budget_usd})
    )
    assert front.points[1].iteration_time_ns == pytest.approx(alone.objective_value, rel=2e-8)
    times = [p.iteration_time_ns for p in front.points]
    assert all(b <= a for a, b in zip(times, times[1:], strict=False))


@pytest.mark.parametrize("sense", ["==", ">="])
def test_front_cheap_end_with_a_tie_in_price(sense):
    S = 100.0
    inst = tied((1.0, 1e4), S, sense)
    c0 = float(cluster_cost_usd_per_gbps(inst)[0]) * S
    front = hieropt.pareto(inst, points=4, spacing="log")
    first = front.points[0]
    assert first.budget_usd == pytest.approx(c0 * (1 + CHEAPEST_SLACK), rel=1e-12)
    T, _ = exact_optimum(inst, S, first.budget_usd)
    assert first.gap <= 1e-8
    assert first.iteration_time_ns <= float(T) * (1 + 1e-8)
    assert first.lower_bound_ns <= float(T) * (1 + 4 * EPS * c0 / (first.budget_usd - c0))


def test_pareto_command_starts_at_the_cheap_end(tmp_path):
    """From the command line (the instance of :func:`two_dims` as a file): the CSV's first row is
    the certified point 1e-6 above the cheapest network."""
    (tmp_path / "wl.txt").write_text("DATA\n1\nl0 -1 0 NONE 0 0 NONE 0 1000 ALLREDUCE 1000000 0\n")
    path = tmp_path / "two.toml"
    path.write_text(TWO_DIMS_TOML)
    inst = hieropt.load_instance(path)
    csv_path = tmp_path / "front.csv"
    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(
        app, ["pareto", str(path), "--points", "4", "--csv", str(csv_path)])
    assert result.exit_code == 0, result.stderr
    assert "starts 1e-06 above it" in result.stdout
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    budget = float(rows[0]["budget_usd"])
    assert budget == pytest.approx(400.0 * (1 + CHEAPEST_SLACK), rel=1e-12)
    assert float(rows[0]["iteration_time_ns"]) == pytest.approx(
        _hand_two_dims(inst, 100.0, budget)[0], rel=1e-8
    )
