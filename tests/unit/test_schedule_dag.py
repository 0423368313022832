"""The 1F1B schedule graph's length (hieropt/model/schedule_dag.py): the lean evaluation
(schedule_length) against the one that also traces the critical path (schedule_time), and by
hand."""

from __future__ import annotations

import numpy as np

from hieropt.cache import use
from hieropt.model.schedule_dag import one_f_one_b, schedule_length, schedule_time


def test_two_stages_two_microbatches_by_hand():
    # stage 0: F0 F1 B0 B1 (one warm-up forward); stage 1: F0 B0 F1 B1. f = (1, 2), b = (3, 4):
    # s0F0 ends 1, s0F1 2, s1F0 max(0, 1) + 2 = 3, s1B0 3 + 4 = 7, s1F1 max(7, 2) + 2 = 9,
    # s1B1 13, s0B0 max(2, 7) + 3 = 10, s0B1 max(10, 13) + 3 = 16
    with use():
        ops = one_f_one_b(2, 2)
        assert schedule_length(ops, [1.0, 2.0], [3.0, 4.0]) == 16.0
        assert schedule_time(ops, [1.0, 2.0], [3.0, 4.0])[0] == 16.0


def test_the_lean_length_is_the_traced_one_bit_for_bit():
    rng = np.random.default_rng(7)
    with use():
        for p, m in ((1, 1), (2, 5), (4, 3), (8, 96), (16, 8)):
            ops = one_f_one_b(p, m)
            for _ in range(20):
                f, b = rng.uniform(0, 1e9, p).tolist(), rng.uniform(0, 2e9, p).tolist()
                assert schedule_length(ops, f, b) == schedule_time(ops, f, b)[0]
