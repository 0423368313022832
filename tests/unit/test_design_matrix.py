"""The design rows' violation check in Python floats (``DesignMatrix.violation_list``, used by the
verifier and every candidate test) against numpy's ``violations`` and hand-computed values; the
bandwidths the rows fix (``fixed_gbps``, ``on_fixed``)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hieropt.io.instance import load_instance
from hieropt.spec.design import DesignMatrix
from hieropt.spec.instance import Bound, LinearConstraint

ROOT = Path(__file__).resolve().parents[2]


def _matrix(A, rhs, sense) -> DesignMatrix:
    A, rhs, sense = np.array(A, dtype=float), np.array(rhs, dtype=float), np.array(sense)
    lower, upper = np.where(sense >= 1, rhs, -np.inf), np.where(sense != 1, rhs, np.inf)
    D = A.shape[1]
    return DesignMatrix(A, lower, upper, rhs, sense, np.zeros(D), np.full(D, np.inf))


def test_hand_computed_violations():
    # rows: b0 + b1 <= 100, b0 - 2 b1 >= 10, 3 b1 == 30 at bw = (80, 30): lhs 110, 20, 90
    dm = _matrix([[1, 1], [1, -2], [0, 3]], [100, 10, 30], [0, 1, 2])
    v = dm.violation_list(np.array([80.0, 30.0]))
    # miss / max(|rhs|, sum |a_d b_d|): 10 / 110, 0 (met), 60 / 90
    assert v == [10 / 110, 0.0, 60 / 90]
    assert dm.max_violation(np.array([80.0, 30.0])) == 60 / 90
    assert math.isnan(dm.max_violation(np.array([math.nan, 1.0])))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 7), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_python_floats_match_numpy(n, D, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, D)) * (rng.random((n, D)) < 0.7)
    dm = _matrix(A, rng.normal(size=n) * 100, rng.integers(0, 3, size=n))
    bw = np.abs(rng.normal(size=D)) * 10 ** rng.uniform(-3, 6)
    if rng.random() < 0.1:
        bw[rng.integers(D)] = np.nan
    ref, got = dm.violations(bw), np.array(dm.violation_list(bw))
    assert np.array_equal(np.isnan(ref), np.isnan(got))
    # (the two sums round differently: at most D eps of the row's size, so of the relative
    # violation)
    assert np.allclose(ref[~np.isnan(ref)], got[~np.isnan(got)], rtol=1e-12, atol=1e-14)


def test_a_copy_with_other_rows_or_bounds_gets_its_own_matrix():
    """The matrix follows the instance's constraints and bounds, in copies too (its look-up by the
    fields' identities never returns another field's matrix)."""
    inst = load_instance(ROOT / "instances" / "gpt3-4d.toml")
    dm = inst.design_matrix
    assert inst.design_matrix is dm
    D = dm.A.shape[1]
    cap = LinearConstraint(coefficients=(1.0,) + (0.0,) * (D - 1), sense="<=", rhs=7.0)
    more = inst.model_copy(update={"constraints": (*inst.constraints, cap)})
    assert more.design_matrix.A.shape == (dm.A.shape[0] + 1, D)
    assert more.design_matrix.upper[-1] == 7.0
    bounded = inst.model_copy(update={"bounds": (Bound(lower_gbps=3.0),) * D})
    np.testing.assert_array_equal(bounded.design_matrix.bw_lower, np.full(D, 3.0))
    np.testing.assert_array_equal(inst.design_matrix.bw_lower, dm.bw_lower)
    renamed = inst.model_copy(update={"name": "another"})
    assert renamed.design_matrix is dm


def test_units_per_coefficient_by_hand():
    """1 / |a_rd| where a_rd != 0, else 0: a row missed by m units frees at most m x max_d p_d /
    |a_rd| of cost (the budget candidates' row leak)."""
    from hieropt.solvers.line_search import row_leak_usd

    dm = _matrix([[1, 1], [4, -2], [0, 0.5]], [100, 10, 30], [0, 1, 2])
    assert dm.units_per_coefficient.tolist() == [[1.0, 1.0], [0.25, 0.5], [0.0, 2.0]]
    assert not dm.units_per_coefficient.flags.writeable

    class Inst:  # row_leak_usd reads only the design matrix
        design_matrix = dm

    # at (80, 30): row 0 lhs 110 misses 100 by 10 units, row 1 lhs 260 holds, row 2 lhs 15 misses
    # 30 by 15 units; prices (3, 2) $ per GB/s: 10 x max(3, 2) + 0 + 15 x max(0, 2 x 2) = 90 $
    assert row_leak_usd(Inst(), np.array([80.0, 30.0]), np.array([3.0, 2.0])) == 90.0


def test_fixed_bandwidths_and_round_off_put_back_on_them():
    # rows: b0 + b1 <= 100 (not a fix), 3 b1 == 30 (b1 = 10), and bounds 5 <= b2 <= 5
    A = np.array([[1, 1, 0, 0], [0, 3, 0, 0]], dtype=float)
    rhs, sense = np.array([100.0, 30.0]), np.array([0, 2])
    lower, upper = np.where(sense >= 1, rhs, -np.inf), np.where(sense != 1, rhs, np.inf)
    dm = DesignMatrix(A, lower, upper, rhs, sense, np.array([0.0, 0.0, 5.0, 1.0]),
                      np.array([np.inf, np.inf, 5.0, 2.0]))
    fixed = dm.fixed_gbps
    assert np.isnan(fixed[0]) and np.isnan(fixed[3]) and fixed[1:3].tolist() == [10.0, 5.0]
    off = np.array([7.0, np.nextafter(10.0, 0.0), np.nextafter(5.0, 9.0), 1.5])
    assert dm.on_fixed(off).tolist() == [7.0, 10.0, 5.0, 1.5]
    far = np.array([7.0, 10.001, 5.0, 1.5])  # (not round-off: left for the verifier to judge)
    assert dm.on_fixed(far) is far
