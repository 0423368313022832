"""The max nodes' two evaluators (hieropt/model/node_levels.py) against the definition y_v = max
over v's pieces of (const + sum a tau_k + sum b y_u), on random node graphs (every piece references
earlier nodes only)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hieropt.model.node_levels import node_levels, node_plan, node_values, node_values_batch
from hieropt.model.terms import Piece


def _definition(nodes, tau) -> np.ndarray:
    y = []
    for pieces in nodes:
        y.append(
            max(
                p.const_ns + sum(a * tau[k] for k, a in p.terms) + sum(b * y[u] for u, b in p.nodes)
                for p in pieces
            )
        )
    return np.array(y)


@st.composite
def graphs(draw):
    K = draw(st.integers(1, 4))
    V = draw(st.integers(1, 12))
    coef = st.floats(0.0, 10.0)
    nodes = []
    for v in range(V):
        pieces = []
        for _ in range(draw(st.integers(1, 3))):
            terms = tuple(
                (draw(st.integers(0, K - 1)), draw(coef)) for _ in range(draw(st.integers(0, 2)))
            )
            refs = (
                tuple(
                    (draw(st.integers(0, v - 1)), draw(coef))
                    for _ in range(draw(st.integers(0, 2)))
                )
                if v
                else ()
            )
            pieces.append(Piece(const_ns=draw(st.floats(0.0, 1e3)), terms=terms, nodes=refs))
        nodes.append(tuple(pieces))
    tau = np.array(draw(st.lists(st.floats(0.0, 1e4), min_size=3 * K, max_size=3 * K))).reshape(
        3, K
    )
    return tuple(nodes), tau


@settings(max_examples=60, deadline=None)
@given(graphs())
def test_both_evaluators_are_the_definition(case):
    nodes, tau = case
    batch = node_values_batch(node_levels(nodes), len(nodes), tau)
    for s in range(tau.shape[0]):
        want = _definition(nodes, tau[s])
        np.testing.assert_allclose(
            node_values(node_plan(nodes), tau[s]), want, rtol=1e-12, atol=1e-9
        )
        np.testing.assert_allclose(batch[:, s], want, rtol=1e-12, atol=1e-9)


def test_a_chain_by_hand():
    # y0 = max(1 + 2 tau0, 5); y1 = max(y0 + tau1, 3 y0); tau = (1, 4): y0 = 5, y1 = max(9, 15) = 15
    nodes = ((Piece(1.0, ((0, 2.0),)), Piece(5.0, ())),
             (Piece(0.0, ((1, 1.0),), ((0, 1.0),)), Piece(0.0, (), ((0, 3.0),))))
    tau = np.array([1.0, 4.0])
    np.testing.assert_array_equal(node_values(node_plan(nodes), tau), [5.0, 15.0])
    np.testing.assert_array_equal(
        node_values_batch(node_levels(nodes), 2, tau[None, :])[:, 0], [5.0, 15.0]
    )


def test_the_schedule_graph_steps_by_hand():
    # the pipeline graph's node kinds: one piece with one node reference, two such pieces, and the
    # general form (a piece without references); tau = (2, 10)
    # y0 = 1 + 3 tau0 = 7 (general); y1 = 4 + y0 = 11 (one reference, weight 1);
    # y2 = max(tau1 + 2 y0, 5 + y1) = max(24, 16) = 24 (two pieces of one reference each);
    # y3 = max(0.5 y2, y1 + tau0) = max(12, 13) = 13
    nodes = ((Piece(1.0, ((0, 3.0),)),),
             (Piece(4.0, (), ((0, 1.0),)),),
             (Piece(0.0, ((1, 1.0),), ((0, 2.0),)), Piece(5.0, (), ((1, 1.0),))),
             (Piece(0.0, (), ((2, 0.5),)), Piece(0.0, ((0, 1.0),), ((1, 1.0),))))
    tau = np.array([2.0, 10.0])
    plan = node_plan(nodes)
    assert [step[0] for step in plan[4]] == [0, 1, 2, 2]
    np.testing.assert_array_equal(node_values(plan, tau), [7.0, 11.0, 24.0, 13.0])
    # a NaN term propagates through either kind, as numpy's max does
    assert np.isnan(node_values(plan, np.array([np.nan, 10.0]))).all()


@settings(max_examples=60, deadline=None)
@given(graphs())
def test_the_batch_is_the_one_design_evaluation_bit_for_bit(case):
    # the batch takes each level's pieces in rank order (first pieces, then second ones, ...) and
    # its nodes by falling piece count: the same sums and maxima, so the same bits, as node_values
    nodes, tau = case
    batch = node_values_batch(node_levels(nodes), len(nodes), tau)
    for s in range(tau.shape[0]):
        assert batch[:, s].tobytes() == node_values(node_plan(nodes), tau[s]).tobytes()


def test_a_level_of_nodes_with_one_two_and_three_pieces_by_hand():
    # y0 = 2 tau0 = 4, y1 = tau1 = 10 (level 0); level 1: y2 = y0 + 1 = 5 (one piece),
    # y3 = max(y0 + 3, y1 - 1, 2 y1) = 20 (three), y4 = max(y1, y0 + 7) = 11 (two);
    # level 2: y5 = max(y3, y4 + y2) = max(20, 16) = 20; tau = (2, 10) and (2, 1): y1 = 1,
    # y3 = max(7, 0, 2) = 7, y4 = max(1, 11) = 11, y5 = max(7, 16) = 16
    nodes = ((Piece(0.0, ((0, 2.0),)),),
             (Piece(0.0, ((1, 1.0),)),),
             (Piece(1.0, (), ((0, 1.0),)),),
             (Piece(3.0, (), ((0, 1.0),)), Piece(-1.0, (), ((1, 1.0),)),
              Piece(0.0, (), ((1, 2.0),))),
             (Piece(0.0, (), ((1, 1.0),)), Piece(7.0, (), ((0, 1.0),))),
             (Piece(0.0, (), ((3, 1.0),)), Piece(0.0, (), ((4, 1.0), (2, 1.0)))))
    tau = np.array([[2.0, 10.0], [2.0, 1.0]])
    np.testing.assert_array_equal(
        node_values_batch(node_levels(nodes), 6, tau).T,
        [[4.0, 10.0, 5.0, 20.0, 11.0, 20.0], [4.0, 1.0, 5.0, 7.0, 11.0, 16.0]],
    )
