"""The schedule graphs' length (hieropt/model/schedule_dag.py), 1F1B and interleaved: the lean
evaluation (schedule_length) against the one that also traces the critical path (schedule_time), by
hand, and the interleaved order against Megatron-LM's."""

from __future__ import annotations

import numpy as np
import pytest

from hieropt.cache import use
from hieropt.model.schedule_dag import (
    one_f_one_b,
    schedule_graph,
    schedule_length,
    schedule_time,
    stage_tasks,
)


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


def test_interleaved_two_stages_two_chunks_four_microbatches_by_hand():
    # p = 2, v = 2, m = 4, N = 2: model chunks c0 (stage 0, j 0), c1 (stage 1, j 0), c2 (stage 0,
    # j 1), c3 (stage 1, j 1). Forward table (micro-batch, j): (0,0) (1,0) (0,1) (1,1) (2,0) (3,0)
    # (2,1) (3,1); stage 0 warms up with 2 (p - 1) + (v - 1) N = 4 forwards, stage 1 with 2.
    assert stage_tasks(2, 4, 2, 0) == [
        (False, 0, 0), (False, 1, 0), (False, 0, 1), (False, 1, 1),
        (False, 2, 0), (True, 0, 1), (False, 3, 0), (True, 1, 1),
        (False, 2, 1), (True, 0, 0), (False, 3, 1), (True, 1, 0),
        (True, 2, 1), (True, 3, 1), (True, 2, 0), (True, 3, 0)]
    assert stage_tasks(2, 4, 2, 1)[:6] == [
        (False, 0, 0), (False, 1, 0), (False, 0, 1), (True, 0, 1), (False, 1, 1), (True, 1, 1)]
    # unequal chunks, (f, b): stage 0 c0 (1, 2), c2 (2, 4); stage 1 c1 (2, 4), c3 (1, 2). A
    # forward of c waits for that micro-batch's forward of c - 1, a backward for its backward of
    # c + 1. Stage 0: F0c0 1, F1c0 2, F0c2 max(2, F0c1 3) + 2 = 5, F1c2 max(5, F1c1 5) + 2 = 7,
    # F2c0 8, B0c2 max(8, B0c3 8) + 4 = 12, F3c0 13, B1c2 max(13, B1c3 11) + 4 = 17, F2c2 max(17,
    # F2c1 13) + 2 = 19, B0c0 max(19, B0c1 17) + 2 = 21, F3c2 23, B1c0 max(23, B1c1 23) + 2 = 25,
    # B2c2 max(25, B2c3 26) + 4 = 30, B3c2 max(30, B3c3 29) + 4 = 34, B2c0 max(34, B2c1 34) + 2 =
    # 36, B3c0 max(36, B3c1 38) + 2 = 40. Stage 1: F0c1 3, F1c1 5, F0c3 max(5, 5) + 1 = 6, B0c3 8,
    # F1c3 max(8, 7) + 1 = 9, B1c3 11, F2c1 max(11, 8) + 2 = 13, B0c1 max(13, 12) + 4 = 17, F3c1
    # 19, B1c1 max(19, 17) + 4 = 23, F2c3 max(23, 19) + 1 = 24, B2c3 26, F3c3 27, B3c3 29, B2c1
    # max(29, 30) + 4 = 34, B3c1 38.
    fwd, bwd = [1.0, 2.0, 2.0, 1.0], [2.0, 4.0, 4.0, 2.0]  # (stage r's chunk j at r v + j)
    with use():
        ops = schedule_graph(2, 4, 2)
        assert len(ops) == 32 and ops[-1].stage == 0 and ops[-1].backward
        assert schedule_length(ops, fwd, bwd, 2) == 40.0
        end, path = schedule_time(ops, fwd, bwd, 2)
        assert end == 40.0
        # the critical path ends B3c1 (38) -> B3c0
        assert (ops[path[1]].stage, ops[path[1]].chunk, ops[path[1]].index) == (1, 0, 3)
    # the closed composition: slots t = 9 and 9, the largest chunk 2 of a stage's 3 blocks' worth:
    # c = 2/3, c (9 + 9) + (4 - c) 9 = 42 (5 % slow); with c = 1/v, 9 + 3.5 x 9 = 40.5
    assert 2 / 3 * 18 + (4 - 2 / 3) * 9 == pytest.approx(42.0)


def _megatron_order(p: int, m: int, v: int, n: int, r: int) -> list[tuple[bool, int, int]]:
    """Rank r's order as Megatron-LM's forward_backward_pipelining_with_interleaving runs it
    (megatron/core/pipeline_parallel/schedules.py: get_schedule_table, get_pp_rank_microbatches,
    get_model_chunk_id), transcribed: virtual micro-batch k forward, then k - warm-up backward."""
    table = []
    for lo in range(0, m, n):
        hi = m if lo + n >= m else lo + n
        table += [(i, c) for c in range(v) for i in range(lo, hi)]
    total = m * v
    warm = min((p - r - 1) * 2 + (v - 1) * n, total)
    out = [(False, *table[k]) for k in range(warm)]
    for k in range(total - warm):
        out.append((False, *table[k + warm]))
        out.append((True, table[k][0], v - 1 - table[k][1]))
    for k in range(total - warm, total):
        out.append((True, table[k][0], v - 1 - table[k][1]))
    return out


def test_the_interleaved_order_is_megatrons():
    for p, m, v, n in ((2, 4, 2, 2), (4, 8, 2, 4), (4, 12, 3, 6), (4, 10, 2, 5), (8, 16, 4, 8),
                       (3, 7, 2, 4), (16, 32, 8, 16)):
        for r in range(p):
            assert stage_tasks(p, m, v, r, n) == _megatron_order(p, m, v, n, r), (p, m, v, n, r)


def test_an_order_that_deadlocks_has_no_graph():
    # m = 5, N = 4 with p = 4, v = 3: the last group of 1 < p micro-batches (outside Megatron-LM's
    # bounds) makes a chunk wait for itself through its stage's earlier operations
    with use():
        assert schedule_graph(4, 5, 3, 4) is None
        assert schedule_graph(4, 8, 3, 4) is not None


def test_the_lean_interleaved_length_is_the_traced_one():
    rng = np.random.default_rng(3)
    with use():
        for p, m, v in ((2, 4, 2), (4, 8, 3), (8, 16, 2)):
            ops = schedule_graph(p, m, v)
            assert len(ops) == 2 * p * m * v
            for _ in range(10):
                f, b = rng.uniform(0, 1e9, p * v).tolist(), rng.uniform(0, 2e9, p * v).tolist()
                assert schedule_length(ops, f, b, v) == schedule_time(ops, f, b, v)[0]
            # equal chunks: Narayanan et al.'s (m + (p - 1) / v) (f + b) per stage slot
            assert schedule_length(ops, [1.0] * (p * v), [2.0] * (p * v), v) == pytest.approx(
                (m + (p - 1) / v) * 3.0 * v)
