"""The time model's builder on nodes whose pieces share their term references (a 1F1B graph's:
hieropt/model/terms.py, the references re-scaled and renumbered once per distinct references), the
epigraph LP's node rows of such nodes (hieropt/model/node_levels.py), and a stage's parts without
the overlapped last pass (hieropt/model/pipeline.py), by hand."""

from __future__ import annotations

import numpy as np

from hieropt.model.node_levels import node_rows
from hieropt.model.pipeline import stage_parts
from hieropt.model.terms import Piece, TermBuilder


def _builder_with_a_shared_duration() -> TermBuilder:
    # term 0: 3 bytes on the one dimension, registered and never used (dropped, renumbering term
    # 1 to 0); term 1: first met as 4 bytes (coefficient 1), then as 8 bytes (coefficient 2): its
    # largest use is 8 bytes, so build() re-scales it by r = 8 / 4 = 2 and every reference's
    # coefficient halves: (1, 1.0) -> (0, 0.5), (1, 2.0) -> (0, 1.0)
    b = TermBuilder(1)
    assert b.term(np.array([3.0]), np.array([5.0]), count=0) == (0, 1.0)
    ref = b.term(np.array([4.0]), np.zeros(1))
    big = b.term(np.array([8.0]), np.zeros(1))
    assert (ref, big) == ((1, 1.0), (1, 2.0))
    fwd = b.refs_of([ref, None])  # (a collective that takes no time: left out)
    y0 = b.node_of((Piece(10.0, fwd, ()),), 0.0)
    y1 = b.node_of((Piece(10.0, fwd, ((y0, 1.0),)),), 0.0)
    b.node([(30.0, [big], [(y0, 1.0)]), (10.0, [ref], [(y1, 1.0)])], 1.0)
    return b


def test_shared_references_are_rescaled_and_renumbered_once_each_by_hand():
    tm = _builder_with_a_shared_duration().build("concurrent")
    assert tm.nodes == (
        (Piece(10.0, ((0, 0.5),), ()),),
        (Piece(10.0, ((0, 0.5),), ((0, 1.0),)),),
        (Piece(30.0, ((0, 1.0),), ((0, 1.0),)), Piece(10.0, ((0, 0.5),), ((1, 1.0),))),
    )
    np.testing.assert_array_equal(tm.terms_bytes, [[8.0]])
    np.testing.assert_array_equal(tm.node_weights, [0.0, 0.0, 1.0])
    # T at 2 GB/s: tau = 8 / 2 = 4 ns; y0 = 10 + 2 = 12, y1 = 10 + 2 + 12 = 24,
    # y2 = max(30 + 4 + 12, 10 + 2 + 24) = max(46, 36) = 46
    assert tm.time_ns(np.array([2.0])) == 46.0


def test_node_rows_merge_repeated_and_shared_references_by_hand():
    # two pieces with equal (not identical) references, one naming term 0 twice (1 + 2 = 3), and a
    # piece naming node 0 twice (0.5 + 0.25 = 0.75); 2 terms, so node u is column 2 + u
    shared = ((0, 1.0), (1, 4.0), (0, 2.0))
    nodes = ((Piece(5.0, shared),),
             (Piece(6.0, tuple(shared), ((0, 0.5), (0, 0.25))), Piece(7.0, ())))
    node, const, lengths, idx, val = node_rows(nodes, 2)
    np.testing.assert_array_equal(node, [0, 1, 1])
    np.testing.assert_array_equal(const, [5.0, 6.0, 7.0])
    np.testing.assert_array_equal(lengths, [3, 4, 1])
    np.testing.assert_array_equal(idx, [2, 0, 1, 3, 0, 1, 2, 3])
    np.testing.assert_array_equal(val, [1.0, -3.0, -4.0, 1.0, -3.0, -4.0, -0.75, 1.0])


def test_a_stage_without_its_overlapped_last_pass_by_hand():
    # C = (1, 2, 3), T = (4, 5, 6) ns, U = 7: f = 1 + 4 = 5, b = 2 + 3 + 5 = 10, t = 15,
    # W = 6 + 7 = 13; the last pass f + X + U = 5 + 20 + 7 = 32 with X = 20, None without it
    C, T = np.array([[1.0, 2.0, 3.0]]), np.array([[4.0, 5.0, 6.0]])
    assert stage_parts(C, T, 7.0, lambda: 20.0) == (15.0, 13.0, 32.0, [5.0], [10.0], None)
    assert stage_parts(C, T, 7.0, None) == (15.0, 13.0, None, [5.0], [10.0], None)
    # the 6 an all-gather after the optimizer step: in W still, and after U in the last pass (X
    # without it: 20), 5 + 20 + 7 + 6 = 38; hidden behind the first forward (G = 9): W = 7, 32
    gather = np.array([True])
    assert stage_parts(C, T, 7.0, lambda: 20.0, None, gathers=gather) == (
        15.0, 13.0, 38.0, [5.0], [10.0], None)
    assert stage_parts(C, T, 7.0, lambda: 20.0, None, gathers=gather, gather=lambda: 9.0) == (
        15.0, 7.0, 32.0, [5.0], [10.0], 9.0)


def test_a_stage_in_chunks_by_hand():
    # two chunks of two rows each: C = (1, 2, 3), (2, 3, 4) | (3, 4, 5), (4, 5, 6), T = 0.5 C;
    # chunk 0 f = 1.5 (1 + 2) = 4.5, b = (2 + 3 + 3 + 4) + 0.5 (2 + 3) = 14.5; chunk 1 f = 1.5 (3 +
    # 4) = 10.5, b = (4 + 5 + 5 + 6) + 0.5 (4 + 5) = 24.5; t = 54, W = 0.5 (3 + 4 + 5 + 6) + 1 = 10
    C = np.array([[1.0, 2.0, 3.0], [2.0, 3.0, 4.0], [3.0, 4.0, 5.0], [4.0, 5.0, 6.0]])
    parts = stage_parts(C, 0.5 * C, 1.0, None, None, (slice(0, 2), slice(2, 4)))
    assert parts == (54.0, 10.0, None, [4.5, 10.5], [14.5, 24.5], None)
    # the last row's 3 an all-gather after the step (interleaved: never hidden): W the same 10
    gather = np.array([False, False, False, True])
    assert stage_parts(C, 0.5 * C, 1.0, None, None, (slice(0, 2), slice(2, 4)), gather) == parts
