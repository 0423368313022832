"""Sensitivity of the fastest network within a budget a hair above the cheapest network
(``near_sensitivity`` in hieropt/solvers/sensitivity.py). Taken on the performance LP's path
instead it is "not available": that path's duals disagree with the exact re-solves by 40x, or its
+-1e-4 secants leave the room ("moving it by +0.01 is infeasible").

Every value is held against an exact oracle: the derivatives of the closed-form optimum.
- :func:`tests.solve.test_near_cheapest.two_dims` (one all-reduce over both dimensions, sum(bw) ==
  S, dimension 1 starved): T = C + M1 / b1 with b1 = (budget - p0 S) / r1, r1 = p1 - p0, M1 = 5e5
  bytes, so dT/dbudget = -M1 / (b1^2 r1), dT/dS = M1 p0 / (b1^2 r1), and a free GB/s on dimension 1
  (budget and row on the rest) gives dT/d delta = -M1 / b1^2; dimension 0 is not the slowest: its
  value is 0.
- the tie in price of tests/solve/test_near_cheapest_ties.py (closed form there), differentiated by
  hand: dT/dbudget = (Q / S'^2 - mC / b2^2) / r2 and dT/dS = mC p0 / (b2^2 r2) - Q (1 + p0 / r2) /
  S'^2 with Q = (sqrt(mA) + sqrt(mB))^2, S' = S - b2.
"""

from __future__ import annotations

from decimal import Decimal, getcontext
from fractions import Fraction

import pytest
from typer.testing import CliRunner

import hieropt
from hieropt import SolveOptions
from hieropt.cli import app
from hieropt.model.cost import cluster_cost_usd_per_gbps
from tests.solve.near_cheapest import MA, MB, MC, TWO_DIMS_TOML, tied, two_dims

M1 = 5e5
REL = 1e-5
"""The differences are Richardson-extrapolated over steps of 1e-3 of the room: O(1e-6) off."""


def _by_name(sol: hieropt.Solution) -> dict[str, hieropt.result.Marginal]:
    assert sol.sensitivity is not None, sol.notes
    assert not any("not available" in n for n in sol.notes), sol.notes
    return {m.name: m for m in sol.sensitivity.marginals}


@pytest.mark.parametrize("prices", [(1.0, 3.0), (2e3, 9e3)])
@pytest.mark.parametrize("eps", [1e-6, 1e-4, 1e-2])
def test_two_dims_marginals_match_the_closed_form(eps, prices):
    S = 100.0
    base = two_dims(prices, S)
    p0, p1 = (float(v) for v in cluster_cost_usd_per_gbps(base))
    budget = p0 * S * (1 + eps)
    inst = base.model_copy(update={"max_network_cost_usd": budget})
    sol = hieropt.solve(inst, options=SolveOptions(sensitivity=True))
    assert sol.status == "optimal"
    r1 = p1 - p0
    b1 = float((Fraction(budget) - Fraction(p0) * Fraction(S)) / Fraction(r1))
    m = _by_name(sol)
    assert m["budget"].value == pytest.approx(-M1 / (b1**2 * r1), rel=REL)
    assert m["constraint '(1.0, 1.0) == 100.0'"].value == pytest.approx(
        M1 * p0 / (b1**2 * r1), rel=REL
    )
    assert m["bandwidth of dimension 1"].value == pytest.approx(-M1 / b1**2, rel=REL)
    # dimension 0 is not the slowest of the all-reduce: it is worth nothing, which is either shown
    # as not binding or said to be below what the re-solves resolve
    if "bandwidth of dimension 0" in m:
        assert not m["bandwidth of dimension 0"].binding
    else:
        assert any(
            n.startswith("bandwidth of dimension 0: its marginal value is below") for n in sol.notes
        )
    assert sol.sensitivity.usd_per_ms == pytest.approx(1e6 * b1**2 * r1 / M1, rel=REL)


@pytest.mark.parametrize("eps", [1e-6, 1e-3])
def test_tie_in_price_marginals_match_the_closed_form(eps):
    S = 100.0
    base = tied((1.0, 1e4), S)
    p = [Fraction(float(v)) for v in cluster_cost_usd_per_gbps(base)]
    budget = float(p[0]) * S * (1 + eps)
    inst = base.model_copy(update={"max_network_cost_usd": budget})
    sol = hieropt.solve(inst, options=SolveOptions(sensitivity=True))
    getcontext().prec = 40
    r2 = p[2] - p[0]
    b2 = (Fraction(budget) - p[0] * Fraction(S)) / r2
    rest = Fraction(S) - b2

    def dec(q: Fraction) -> Decimal:
        return Decimal(q.numerator) / Decimal(q.denominator)

    Q = (Decimal(MA).sqrt() + Decimal(MB).sqrt()) ** 2
    b2d, restd, r2d, p0d = dec(b2), dec(rest), dec(r2), dec(p[0])
    d_budget = (Q / restd**2 - Decimal(MC) / b2d**2) / r2d
    d_rhs = Decimal(MC) * p0d / (b2d**2 * r2d) - Q * (1 + p0d / r2d) / restd**2
    m = _by_name(sol)
    assert m["budget"].value == pytest.approx(float(d_budget), rel=REL)
    assert m["constraint '(1.0, 1.0, 1.0) == 100.0'"].value == pytest.approx(float(d_rhs), rel=REL)
    assert m["bandwidth of dimension 2"].value == pytest.approx(-MC / float(b2d) ** 2, rel=REL)


def test_solve_command_prints_confirmed_sensitivity(tmp_path):
    """``hieropt solve X --budget-usd B`` a hair above the cheapest network prints the values, not
    "not available"."""
    (tmp_path / "wl.txt").write_text("DATA\n1\nl0 -1 0 NONE 0 0 NONE 0 1000 ALLREDUCE 1000000 0\n")
    path = tmp_path / "two.toml"
    path.write_text(TWO_DIMS_TOML)
    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(
        app, ["solve", str(path), "--budget-usd", repr(400.0 * (1 + 1e-5))])
    assert result.exit_code == 0, result.stderr
    assert "sensitivity not available" not in result.stdout
    assert "differences of exact re-solves (steps 1e-3 of the room" in result.stdout
    b1 = 400.0 * 1e-5 / 8.0
    assert f"budget: $1 more saves {M1 / (b1**2 * 8.0) / 1e6:.4g} ms per iteration" in result.stdout


def test_price_tie_where_the_lp_values_fail():
    """Two dimensions of one price (no dimension starved: the performance LP's path solves it),
    budget 1e-6 above the cheapest network. The LP's values were withheld (its +-1e-4 secant on the
    row left the room: "moving it by +0.01 is infeasible"); the differences of exact re-solves now
    give them. Closed form: the all-reduce's time is max(2 M1 / b0, M1 / b1) with b0 + b1 = S, least
    at b0 = 2 b1: T = C + 3 M1 / S, so dT/dS = -3 M1 / S^2, a free GB/s on either dimension is worth
    the same, and the budget (every design costs p S) does not bind."""
    S = 100.0
    base = two_dims((1.0, 1.0), S)
    budget = float(cluster_cost_usd_per_gbps(base)[0]) * S * (1 + 1e-6)
    sol = hieropt.solve(
        base.model_copy(update={"max_network_cost_usd": budget}),
        options=SolveOptions(sensitivity=True),
    )
    m = _by_name(sol)
    assert m["constraint '(1.0, 1.0) == 100.0'"].value == pytest.approx(-3 * M1 / S**2, rel=REL)
    assert m["bandwidth of dimension 0"].value == pytest.approx(-3 * M1 / S**2, rel=REL)
    assert m["bandwidth of dimension 1"].value == pytest.approx(-3 * M1 / S**2, rel=REL)
    assert not m["budget"].binding and m["budget"].value == 0.0
