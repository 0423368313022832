"""The design rows' violation check in Python floats (``DesignMatrix.violation_list``, used by the
verifier and every candidate test) against numpy's ``violations`` and hand-computed values."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hieropt.spec.design import DesignMatrix


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
