"""The dense LP backend (hieropt/solvers/dense_lp.py: DAQP while small, HiGHS behind it) against
HiGHS alone: the same status, the same optimum, duals in HiGHS's sign convention that certify it,
and the hand-over to HiGHS (infeasible and unbounded LPs, a tightened tolerance, an LP grown past
the limits)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hieropt.result import Status
from hieropt.solvers import dense_lp
from hieropt.solvers.dense_lp import DenseLP
from hieropt.solvers.highs import HighsLP

INF = float("inf")


class LP:
    """A row-wise LP in the layout both backends load."""

    def __init__(self, A, row_lower, row_upper, col_lower, col_upper, costs):
        A = np.asarray(A, dtype=float)
        self.col_lower, self.col_upper = np.asarray(col_lower, float), np.asarray(col_upper, float)
        self.row_lower, self.row_upper = np.asarray(row_lower, float), np.asarray(row_upper, float)
        self.time_costs = np.asarray(costs, float)
        rows, cols = np.nonzero(A)
        self.start = np.zeros(A.shape[0] + 1, dtype=np.int32)
        np.cumsum(np.bincount(rows, minlength=A.shape[0]), out=self.start[1:])
        self.index, self.value = cols.astype(np.int32), A[rows, cols]
        self.A = A

    n_cols = property(lambda self: self.col_lower.size)
    n_rows = property(lambda self: self.row_lower.size)


def dual_value(lp: LP, y: np.ndarray, maximize: bool) -> float:
    """The Lagrangian dual function at row duals ``y`` (HiGHS's convention), for min (or max) c x:
    the value every feasible point's objective is at least (at most) up to the duals' own
    feasibility: reduced costs within 1e-9 (the LP tolerance,
    :data:`hieropt.solvers.highs.LP_TOLERANCE`) of the size of their own sum, 1 + |c| + |A|'|y|,
    count as 0 (a free column's -6.3e-12 from DAQP's duals, |y| ~ 120, made the bound -inf; the
    solvers' bounds take duals only through safe bounds that hold for any multipliers)."""
    sign = -1.0 if maximize else 1.0
    y = sign * y
    r = sign * lp.time_costs - lp.A.T @ y
    r = np.where(
        np.abs(r) <= 1e-9 * (1 + np.abs(lp.time_costs) + np.abs(lp.A.T) @ np.abs(y)), 0.0, r
    )
    with np.errstate(invalid="ignore"):
        rows = np.where(y > 0, lp.row_lower, np.where(y < 0, lp.row_upper, 0.0)) * np.where(
            y != 0, y, 1.0
        )
        rows = np.where(y != 0, rows, 0.0)
        cols = np.where(r > 0, lp.col_lower * r, np.where(r < 0, lp.col_upper * r, 0.0))
    return sign * float(rows.sum() + cols.sum())


def both(lp: LP, maximize: bool = False, vertex: bool = True):
    dense, highs = DenseLP(lp, vertex=vertex), HighsLP(lp)
    try:
        dense.set_costs(lp.time_costs, maximize)
        highs.set_costs(lp.time_costs, maximize)
        a, b = dense.solve(), highs.solve()
        return a, b, dense.row_duals() if a.status is Status.OPTIMAL else None, dense._highs is None
    finally:
        dense.close()
        highs.close()


def test_hand_computed_lp_and_its_duals():
    # min x + 2y s.t. x + y >= 2 (row 0), x - y <= 1 (row 1), 0 <= x, y <= 10: optimum x = 1.5, y =
    # 0.5, value 2.5; duals (d value / d bound): row 0 at its lower bound 1.5, row 1 at its upper
    # bound -0.5
    lp = LP([[1, 1], [1, -1]], [2, -INF], [INF, 1], [0, 0], [10, 10], [1, 2])
    res, ref, y, dense = both(lp)
    assert dense and res.status is Status.OPTIMAL
    # (on the vertex; DAQP's own point is ~1e-12 off)
    assert res.objective == pytest.approx(2.5, rel=1e-14)
    assert res.x == pytest.approx([1.5, 0.5], rel=1e-14)
    assert y == pytest.approx([1.5, -0.5], rel=1e-12)
    assert ref.objective == pytest.approx(2.5, rel=1e-12)
    # the same LP maximised: max x + 2y: y = 10 at the upper bound, x = 10: value 30, no row binding
    res, ref, y, dense = both(lp, maximize=True)
    assert dense and res.objective == pytest.approx(30.0, rel=1e-14) == ref.objective


def test_maximised_duals_follow_highs_convention():
    # max x + y s.t. x + 2y <= 4, 3x + y <= 6, x, y >= 0: x = 1.6, y = 1.2, value 2.8, duals 0.4 and
    # 0.2
    lp = LP([[1, 2], [3, 1]], [-INF, -INF], [4, 6], [0, 0], [INF, INF], [1, 1])
    res, ref, y, dense = both(lp, maximize=True)
    assert dense and res.objective == pytest.approx(2.8, rel=1e-14)
    h = HighsLP(lp)
    h.set_costs(lp.time_costs, True)
    h.solve()
    assert y == pytest.approx(h.row_duals(), abs=1e-12)
    assert y == pytest.approx([0.4, 0.2], rel=1e-12)
    h.close()


def test_infeasible_and_unbounded_go_to_highs():
    infeasible = LP([[1, 1]], [3], [INF], [0, 0], [1, 1], [1, 1])
    res, ref, _, dense = both(infeasible)
    assert not dense and res.status is ref.status is Status.INFEASIBLE
    unbounded = LP([[1, -1]], [0], [INF], [0, 0], [INF, INF], [-1, 0])
    res, ref, _, dense = both(unbounded)
    assert not dense and res.status is ref.status is Status.UNBOUNDED


def test_tightened_tolerance_and_growth_hand_over():
    lp = LP([[1, 1]], [1], [INF], [0, 0], [10, 10], [1, 1])
    d = DenseLP(lp)
    d.set_tolerance(1e-10)
    assert d._highs is not None and d.solve().objective == pytest.approx(1.0)
    d.close()
    d = DenseLP(lp)
    # cuts x >= 1 - j / k: the LP grows past the dense limit, HiGHS takes it as it stands
    k = dense_lp.MAX_ROWS
    d.add_rows(np.full(k, 1.0) - np.arange(k) / k, np.full(k, INF), np.arange(k, dtype=np.int32),
               np.zeros(k, dtype=np.int32), np.ones(k))
    assert d._highs is not None and d.num_rows == k + 1
    res = d.solve()
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(1.0)
    d.close()


def test_rows_added_and_bounds_changed_in_place():
    lp = LP([[1, 1]], [1], [INF], [0, 0], [10, 10], [1, 3])
    d = DenseLP(lp)
    assert d.solve().objective == pytest.approx(1.0)  # x = 1
    d.add_rows(
        np.array([2.0]),
        np.array([INF]),
        np.array([0], dtype=np.int32),
        np.array([1], dtype=np.int32),
        np.array([1.0]),
    )  # y >= 2
    assert d.num_rows == 2 and d.solve().objective == pytest.approx(6.0)
    d.change_col_bounds(0, 3.0, 10.0)  # x >= 3
    assert d.solve().objective == pytest.approx(9.0)
    d.change_row_bounds(1, -INF, INF)  # y free again
    assert d.solve().objective == pytest.approx(3.0)
    assert d._highs is None
    d.close()


@st.composite
def lps(draw):
    n, m = draw(st.integers(1, 7)), draw(st.integers(1, 9))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.7)
    x0 = rng.normal(size=n)  # a feasible point (the LP is feasible; unbounded ones are drawn)
    ax = A @ x0
    kind = rng.integers(0, 4, size=m)  # >=, <=, ==, ranged
    lo = np.where(kind == 1, -INF, np.where(kind == 2, ax, ax - rng.random(m)))
    hi = np.where(kind == 0, INF, np.where(kind == 2, ax, ax + rng.random(m)))
    cl = np.where(rng.random(n) < 0.8, x0 - 3 * rng.random(n), -INF)
    cu = np.where(rng.random(n) < 0.8, x0 + 3 * rng.random(n), INF)
    return LP(A, lo, hi, cl, cu, rng.normal(size=n)), draw(st.booleans()), draw(st.booleans())


@settings(max_examples=int(os.environ.get("HIEROPT_DENSE_LP_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(lps())
def test_random_lps_agree_with_highs(case):
    """DAQP against HiGHS on random LPs (300 examples; ``HIEROPT_DENSE_LP_EXAMPLES=N`` for more)."""
    lp, maximize, vertex = case
    res, ref, y, dense = both(lp, maximize, vertex)
    assert res.status is ref.status
    if res.status is not Status.OPTIMAL:
        return
    scale = 1 + abs(ref.objective)
    assert res.objective == pytest.approx(ref.objective, abs=1e-7 * scale)
    if dense:  # DAQP's own answer: feasible to HiGHS's tolerance, and its duals certify its value
        ax = lp.A @ res.x
        assert (ax >= lp.row_lower - 1e-8 * (1 + np.abs(lp.row_lower))).all()
        assert (ax <= lp.row_upper + 1e-8 * (1 + np.abs(lp.row_upper))).all()
        value = dual_value(lp, y, maximize)
        # Duals that miss dual feasibility on an unbounded side give no bound (an infinite dual
        # function value): about 1 LP in 2,000 here (a reduced cost of ~1e-11 on a free column, |y|
        # ~ 100). The solvers take duals only through safe bounds, where such duals give a weaker or
        # no bound, never a wrong one. Finite, they must certify DAQP's value.
        if math.isfinite(value):
            assert value == pytest.approx(res.objective, abs=1e-7 * scale)
        else:
            assert value == (math.inf if maximize else -math.inf)  # (never the wrong side)


def test_hand_over_replays_bound_changes_as_highs_saw_them():
    # a cost-level column moved to 1.5e26 .. 3e26 (a time target of 1e30 in the perf-per-cost LP):
    # HiGHS reads bounds beyond 1e20 as infinite and refuses such a column when it is loaded, but
    # not as a change; the hand-over must replay the change (it once loaded the changed bounds:
    # "HiGHS rejected the LP's columns" on every candidate)
    lp = LP([[1, 1]], [1], [INF], [0, 0], [10, 10], [1, 1])
    d, h = DenseLP(lp), HighsLP(lp)
    for solver in (d, h):
        solver.change_col_bounds(1, 1.5e26, 3e26)
    d.set_tolerance(1e-10)  # (hands the LP over)
    h.set_tolerance(1e-10)
    a, b = d.solve(), h.solve()
    assert d._highs is not None and a.status is b.status
    d.close()
    h.close()
