"""The accuracy metrics and the minimiser, against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hieropt.studies.validate.metrics import (
    mape,
    mean_log_error,
    measured_rank_of_predicted_fastest,
    ranks,
    relative_errors,
    spearman,
    worst_error,
    worst_ratio_error,
)
from hieropt.studies.validate.search import golden, minimise


def test_errors_by_hand():
    # predicted 110 and 90 against 100 and 100: +10 % and -10 %; against 50: +40 %
    assert relative_errors([110, 90, 70], [100, 100, 50]) == pytest.approx([0.1, -0.1, 0.4])
    assert mape([110, 90, 70], [100, 100, 50]) == pytest.approx(0.2)
    assert worst_error([110, 90, 70], [100, 100, 50]) == pytest.approx(0.4)
    assert mean_log_error([200, 50], [100, 100]) == pytest.approx(math.log(2))
    assert math.isnan(mape([], []))


def test_ranks_share_ties():
    assert ranks([3, 1, 3]).tolist() == [2.5, 1.0, 2.5]
    assert ranks([10, 30, 20]).tolist() == [1.0, 3.0, 2.0]


def test_spearman_by_hand():
    # no ties: rho = 1 - 6 sum d^2 / (n (n^2 - 1)) = 1 - 6 * 2 / (4 * 15) = 0.8
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    # reversed order: -1
    assert spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    # ties: ranks x = [1, 2.5, 2.5, 4], y = [1, 2, 3, 4];
    # Pearson = 4.5 / sqrt(4.5 * 5) = 3 / sqrt(10)
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(3 / math.sqrt(10))
    # undefined below two runs or with a constant sequence
    assert math.isnan(spearman([1], [2]))
    assert math.isnan(spearman([1, 1], [1, 2]))


def test_measured_rank_of_predicted_fastest_by_hand():
    # predicted fastest is run 1 (1.0), measured slowest of three (30): rank 3
    assert measured_rank_of_predicted_fastest([3, 1, 2], [10, 30, 20]) == 3
    assert measured_rank_of_predicted_fastest([1, 2, 3], [10, 30, 20]) == 1
    # a tie with the measured fastest counts as fastest
    assert measured_rank_of_predicted_fastest([2, 1], [10, 10]) == 1
    assert measured_rank_of_predicted_fastest([], []) == 0


def test_worst_ratio_error_by_hand():
    # predicted 2 : 1 against measured 1 : 1 -> ratio off by 100 % (and 50 % the other way round)
    assert worst_ratio_error([2, 1], [1, 1]) == pytest.approx(1.0)
    # a common factor cancels
    assert worst_ratio_error([2, 4, 6], [1, 2, 3]) == pytest.approx(0.0)
    assert math.isnan(worst_ratio_error([1], [1]))


def test_golden_section_finds_a_known_minimum():
    x, fx = golden(lambda v: (v - 0.3) ** 2 + 1, 0.0, 1.0, 1e-9)
    assert x == pytest.approx(0.3, abs=1e-7)  # (a flat quadratic: sqrt(eps) resolution)
    assert fx == pytest.approx(1.0)


def test_minimise_one_parameter_and_a_bound():
    x, f = minimise(lambda v: abs(1 / v[0] - 1 / 0.43), [0.05], [1.0])
    assert x[0] == pytest.approx(0.43, abs=1e-5)
    x, f = minimise(lambda v: (v[0] - 2.0) ** 2, [0.0], [1.0])  # minimum outside: the bound
    assert x[0] == pytest.approx(1.0, abs=1e-6)


def test_minimise_two_parameters_that_trade_off():
    # a narrow valley along x + y: coordinate searches alone creep; the result must reach (0.2, 0.7)
    def loss(v: np.ndarray) -> float:
        return 100 * abs(v[0] + v[1] - 0.9) + abs(v[0] - 0.2)

    x, f = minimise(loss, [0.0, 0.0], [1.0, 1.0], [0.9, 0.0])
    assert x == pytest.approx([0.2, 0.7], abs=1e-4)
    assert f == pytest.approx(0.0, abs=1e-3)
