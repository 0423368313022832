"""Per-dimension traffic of collectives and exact aggregation: hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hieropt.model.algorithms import unit_table
from hieropt.model.traffic import KINDS, aggregate, collective_traffic, unit_traffic
from hieropt.names import GROUP_ALGORITHMS
from hieropt.spec import Collective

AR = Collective.ALL_REDUCE
RS = Collective.REDUCE_SCATTER
AG = Collective.ALL_GATHER
A2A = Collective.ALL_TO_ALL
NONE = Collective.NONE

FAST = settings(max_examples=50, deadline=None)


# --------------------------------------------------------------------------------------------------
# Hand-computed cases. Each entry: (collective, S, group, expected bytes per dimension).
# --------------------------------------------------------------------------------------------------
CASES = [
    # --- 2 dimensions, full group (4, 8), S = 64 --------------------------------------------------
    # all-reduce ascending: dim0 = 2*64*3/4 = 96, c = 64/4 = 16; dim1 = 2*16*7/8 = 28   (sum 124 =
    # 2*64*(1-1/32))
    (AR, 64, (4, 8), [96, 28]),
    # reduce-scatter ascending: dim0 = 64*3/4 = 48, c = 16; dim1 = 16*7/8 = 14
    (RS, 64, (4, 8), [48, 14]),
    # all-gather descending: dim1 = 64*7 = 448, c = 64*8 = 512; dim0 = 512*3 = 1536
    (AG, 64, (4, 8), [1536, 448]),
    # all-to-all, no resize: dim0 = 64*3/4 = 48; dim1 = 64*7/8 = 56
    (A2A, 64, (4, 8), [48, 56]),
    (NONE, 64, (4, 8), [0, 0]),
    # --- 2 dimensions, only dim 1 spanned: (1, 8), S = 64 -----------------------------------------
    # AR: dim1 = 2*64*7/8 = 112 (chunk not reduced by an unspanned dim0)
    (AR, 64, (1, 8), [0, 112]),
    # RS: dim1 = 64*7/8 = 56
    (RS, 64, (1, 8), [0, 56]),
    # AG: dim1 = 64*7 = 448
    (AG, 64, (1, 8), [0, 448]),
    # A2A: dim1 = 64*7/8 = 56
    (A2A, 64, (1, 8), [0, 56]),
    # --- the all-gather's dimension order: S = 12 on (2, 3) ---------------------------------------
    # descending: dim1 = 12*(3-1) = 24, c = 12*3 = 36; dim0 = 36*(2-1) = 36.
    # (ascending would have given dim0 = 12, dim1 = 24*2 = 48 -- so this pins the order.)
    (AG, 12, (2, 3), [36, 24]),
    # --- 3 dimensions, full group (2, 3, 4), S = 24 -----------------------------------------------
    # AR: dim0 = 2*24*1/2 = 24, c = 12; dim1 = 2*12*2/3 = 16, c = 4; dim2 = 2*4*3/4 = 6   (sum 46 =
    # 48*(1-1/24))
    (AR, 24, (2, 3, 4), [24, 16, 6]),
    # RS: dim0 = 24*1/2 = 12, c = 12; dim1 = 12*2/3 = 8, c = 4; dim2 = 4*3/4 = 3
    (RS, 24, (2, 3, 4), [12, 8, 3]),
    # AG descending: dim2 = 24*3 = 72, c = 96; dim1 = 96*2 = 192, c = 288; dim0 = 288*1 = 288
    (AG, 24, (2, 3, 4), [288, 192, 72]),
    # A2A: dim0 = 24/2 = 12; dim1 = 24*2/3 = 16; dim2 = 24*3/4 = 18
    (A2A, 24, (2, 3, 4), [12, 16, 18]),
    (NONE, 24, (2, 3, 4), [0, 0, 0]),
    # --- 3 dimensions, middle dimension skipped: (2, 1, 4), S = 40 --------------------------------
    # AR: dim0 = 2*40*1/2 = 40, c = 20; dim1 skipped; dim2 = 2*20*3/4 = 30   (sum 70 = 80*(1-1/8))
    (AR, 40, (2, 1, 4), [40, 0, 30]),
    # RS: dim0 = 40/2 = 20, c = 20; dim2 = 20*3/4 = 15
    (RS, 40, (2, 1, 4), [20, 0, 15]),
    # AG descending: dim2 = 40*3 = 120, c = 160; dim0 = 160*1 = 160
    (AG, 40, (2, 1, 4), [160, 0, 120]),
    # A2A: dim0 = 40/2 = 20; dim2 = 40*3/4 = 30
    (A2A, 40, (2, 1, 4), [20, 0, 30]),
    (NONE, 40, (2, 1, 4), [0, 0, 0]),
    # --- partial group (4, 4, 1, 1) on a 4 x 8 x 4 x 32 network (uses 4 of the 8 NPUs of dim 1), S
    # = 32 AR: dim0 = 2*32*3/4 = 48, c = 8; dim1 = 2*8*3/4 = 12   (sum 60 = 64*(1-1/16))
    (AR, 32, (4, 4, 1, 1), [48, 12, 0, 0]),
    # RS: dim0 = 32*3/4 = 24, c = 8; dim1 = 8*3/4 = 6
    (RS, 32, (4, 4, 1, 1), [24, 6, 0, 0]),
    # AG descending: dim1 = 32*3 = 96, c = 128; dim0 = 128*3 = 384
    (AG, 32, (4, 4, 1, 1), [384, 96, 0, 0]),
    # A2A: dim0 = 32*3/4 = 24; dim1 = 32*3/4 = 24
    (A2A, 32, (4, 4, 1, 1), [24, 24, 0, 0]),
    (NONE, 32, (4, 4, 1, 1), [0, 0, 0, 0]),
    # --- the DP group (1, 2, 4, 32) of the same network, S = 64 -----------------------------------
    # AR: dim1 = 2*64*1/2 = 64, c = 32; dim2 = 2*32*3/4 = 48, c = 8; dim3 = 2*8*31/32 = 15.5
    #     (sum 127.5 = 128*(1-1/256) = 128 - 0.5)
    (AR, 64, (1, 2, 4, 32), [0, 64, 48, 15.5]),
    # AG descending: dim3 = 64*31 = 1984, c = 2048; dim2 = 2048*3 = 6144, c = 8192; dim1 = 8192*1 =
    # 8192
    (AG, 64, (1, 2, 4, 32), [0, 8192, 6144, 1984]),
]


def _case_id(case) -> str:
    kind, size, group, _ = case
    return f"{kind.value}-S{size}-{'x'.join(map(str, group))}"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_collective_traffic_hand_values(case):
    kind, size, group, expected = case
    got = collective_traffic(kind, size, group)
    assert got.shape == (len(group),)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_unit_traffic_is_traffic_per_byte(case):
    kind, size, group, expected = case
    np.testing.assert_allclose(
        unit_traffic(kind, group), np.array(expected, dtype=float) / size, rtol=1e-12, atol=0
    )


def test_unit_traffic_hand_values():
    # per byte on (4, 8): AR dim0 = 2*3/4 = 1.5, dim1 = 2*(1/4)*7/8 = 0.4375
    np.testing.assert_allclose(unit_traffic(AR, (4, 8)), [1.5, 0.4375], rtol=1e-15)
    # AG per byte on (4, 8): dim1 = 7, dim0 = 8*3 = 24
    np.testing.assert_allclose(unit_traffic(AG, (4, 8)), [24, 7], rtol=1e-15)


@pytest.mark.parametrize("algorithm", GROUP_ALGORITHMS)
@pytest.mark.parametrize("group", [(4, 8), (2, 1, 3), (7, 1, 1, 6), (1, 1), ()])
def test_unit_table_is_unit_traffic_of_each_kind(algorithm, group):
    links = tuple(float(d + 2) for d in range(len(group)))
    table = unit_table(KINDS, group, algorithm, links)
    assert table.shape == (len(KINDS), len(group)) and table.dtype == np.float64
    for row, kind in zip(table, KINDS, strict=True):
        assert row.tobytes() == unit_traffic(kind, group, algorithm, links).tobytes()
    with pytest.raises(ValueError, match="unknown collective algorithm"):
        unit_table(KINDS, group, "ring_of_rings")


@pytest.mark.parametrize("kind", [AR, RS, AG, A2A, NONE])
@pytest.mark.parametrize("group", [(4, 8), (2, 1, 4), (4, 4, 1, 1), (1, 1, 1)])
def test_zero_byte_collective_gives_zeros(kind, group):
    got = collective_traffic(kind, 0.0, group)
    assert got.shape == (len(group),)
    assert np.all(got == 0)


@pytest.mark.parametrize("kind", [AR, RS, AG, A2A, NONE])
def test_group_spanning_nothing_gives_zeros(kind):
    # a group of 1 NPU on every dimension sends nothing, whatever the size
    assert np.all(collective_traffic(kind, 1000.0, (1, 1, 1)) == 0)


@pytest.mark.parametrize("kind", [AR, RS, AG, A2A])
def test_traffic_is_linear_in_size(kind):
    # (2, 3, 4): AR at S = 24 is [24, 16, 6] (above), so at S = 36 = 1.5*24 it is [36, 24, 9]
    base = {AR: [24, 16, 6], RS: [12, 8, 3], AG: [288, 192, 72], A2A: [12, 16, 18]}[kind]
    np.testing.assert_allclose(
        collective_traffic(kind, 36, (2, 3, 4)), 1.5 * np.array(base), rtol=1e-12
    )


# --------------------------------------------------------------------------------------------------
# Identities (hypothesis): checked against closed forms, not against the dimension walk.
# --------------------------------------------------------------------------------------------------
groups = st.lists(st.integers(1, 9), min_size=1, max_size=5).map(tuple)
sizes = st.floats(0, 1e9, allow_nan=False, allow_infinity=False)


@FAST
@given(group=groups, size=sizes)
def test_allreduce_sum_is_flat_ring_volume(group, size):
    P = math.prod(group)
    total = collective_traffic(AR, size, group).sum()
    assert total == pytest.approx(2 * size * (1 - 1 / P), rel=1e-12, abs=1e-9)


@FAST
@given(group=groups, size=sizes)
def test_reducescatter_and_allgather_sums(group, size):
    P = math.prod(group)
    # reduce-scatter sends S (1 - 1/P) in all; all-gather of a shard S sends S (P - 1) in all
    assert collective_traffic(RS, size, group).sum() == pytest.approx(
        size * (1 - 1 / P), rel=1e-12, abs=1e-9
    )
    assert collective_traffic(AG, size, group).sum() == pytest.approx(
        size * (P - 1), rel=1e-12, abs=1e-9
    )


@FAST
@given(group=groups, size=sizes)
def test_allreduce_is_reducescatter_then_allgather_of_the_shard(group, size):
    # all-reduce = reduce-scatter (ascending) + all-gather (descending) of the S/P shard, dimension
    # by dimension
    P = math.prod(group)
    ar = collective_traffic(AR, size, group)
    rs_ag = collective_traffic(RS, size, group) + collective_traffic(AG, size / P, group)
    np.testing.assert_allclose(ar, rs_ag, rtol=1e-12, atol=1e-9)


@FAST
@given(group=groups, size=sizes)
def test_alltoall_dimensions_are_independent(group, size):
    # each spanned dimension carries S (p - 1)/p regardless of the others
    got = collective_traffic(A2A, size, group)
    expected = [size * (p - 1) / p for p in group]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-9)


# --------------------------------------------------------------------------------------------------
# aggregate
# --------------------------------------------------------------------------------------------------
def _rows(terms) -> list[tuple[tuple[float, ...], int]]:
    """(bytes row, count) pairs in a canonical order (aggregate does not promise an order)."""
    return sorted(
        (tuple(float(x) for x in b), int(c)) for b, c in zip(terms.bytes, terms.count, strict=True)
    )


def test_aggregate_merges_proportional_rows_and_drops_zeros():
    traffic = np.array(
        [
            [1.0, 2.0, 0.0],  # direction (1/2, 1, 0)
            [3.0, 0.0, 0.0],  # direction (1, 0, 0)
            [0.0, 0.0, 0.0],  # dropped
            [2.0, 4.0, 0.0],  # same direction as row 0
            [0.5, 1.0, 0.0],  # same direction as row 0
            [1.0, 2.0, 0.001],  # NOT proportional to row 0
            [0.0, 0.0, 5.0],  # direction (0, 0, 1)
            [0.0, 0.0, 0.0],  # dropped
        ]
    )
    terms = aggregate(traffic)
    assert terms.bytes.shape == (4, 3)
    got = _rows(terms)
    # rows 0, 3, 4 merge: (1 + 2 + 0.5, 2 + 4 + 1, 0) = (3.5, 7, 0), count 3
    expected = sorted(
        [
            ((3.5, 7.0, 0.0), 3),
            ((3.0, 0.0, 0.0), 1),
            ((1.0, 2.0, 0.001), 1),
            ((0.0, 0.0, 5.0), 1),
        ]
    )
    assert len(got) == len(expected)
    for (gb, gc), (eb, ec) in zip(got, expected, strict=True):
        np.testing.assert_allclose(gb, eb, rtol=1e-12, atol=0)
        assert gc == ec


def test_aggregate_keeps_collective_terms_of_real_traffic():
    # AR over (4, 8) with S = 64 is [96, 28] and with S = 32 is [48, 14]: proportional -> one term
    # [144, 42], count 2. AG over (4, 8) with S = 64 is [1536, 448] = 16 * [96, 28]: also
    # proportional -> merges too (count 3,
    #   bytes [1680, 490]).
    # A2A over (4, 8) with S = 64 is [48, 56]: a different direction -> its own term.
    traffic = np.array([[96.0, 28.0], [48.0, 14.0], [1536.0, 448.0], [48.0, 56.0]])
    got = _rows(aggregate(traffic))
    assert [c for _, c in got] == [1, 3]
    np.testing.assert_allclose(got[0][0], [48, 56], rtol=1e-12)
    np.testing.assert_allclose(got[1][0], [1680, 490], rtol=1e-12)


def test_aggregate_all_zero_and_empty():
    terms = aggregate(np.zeros((3, 2)))
    assert terms.bytes.shape == (0, 2)
    assert terms.count.shape == (0,)
    terms = aggregate(np.zeros((0, 4)))
    assert terms.bytes.shape == (0, 4)
    assert terms.count.shape == (0,)


def test_aggregate_sum_max_hand_value():
    # rows [1, 2], [2, 4], [3, 1] at bw [1, 4]:
    #   max(1/1, 2/4) = 1, max(2/1, 4/4) = 2, max(3/1, 1/4) = 3  -> 6
    # aggregated: [3, 6] -> max(3, 1.5) = 3; [3, 1] -> 3  -> 6
    terms = aggregate(np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 1.0]]))
    bw = np.array([1.0, 4.0])
    assert (terms.bytes / bw).max(axis=1).sum() == pytest.approx(6.0, rel=1e-12)
    assert sorted(terms.count.tolist()) == [1, 2]


@st.composite
def traffic_matrices(draw):
    """A few integer directions (so their normalised forms are far from any 12-digit rounding
    boundary) times random positive scales, some rows zero, plus a random positive bandwidth
    vector."""
    D = draw(st.integers(1, 4))
    direction = st.lists(st.integers(0, 9), min_size=D, max_size=D).filter(any)
    dirs = draw(st.lists(direction, min_size=1, max_size=4))
    n = draw(st.integers(1, 30))
    picks = draw(st.lists(st.integers(0, len(dirs) - 1), min_size=n, max_size=n))
    scales = draw(
        st.lists(
            st.one_of(st.just(0.0), st.floats(1e-3, 1e6, allow_nan=False, allow_infinity=False)),
            min_size=n,
            max_size=n,
        )
    )
    bw = draw(
        st.lists(
            st.floats(1e-2, 1e3, allow_nan=False, allow_infinity=False), min_size=D, max_size=D
        )
    )
    traffic = np.array(
        [[s * x for x in dirs[i]] for i, s in zip(picks, scales, strict=True)], dtype=float
    )
    return dirs, traffic, np.array(bw)


@FAST
@given(data=traffic_matrices())
def test_aggregate_preserves_sum_of_max(data):
    dirs, traffic, bw = data
    terms = aggregate(traffic)
    nonzero = int((traffic > 0).any(axis=1).sum())
    # every non-zero row lands in exactly one term; at most one term per distinct direction
    assert int(terms.count.sum()) == nonzero
    assert terms.bytes.shape[0] <= len({tuple(np.array(d) / max(d)) for d in dirs})
    assert terms.bytes.shape[0] <= nonzero
    assert np.all(terms.count >= 1)
    # sum_k max_d bytes/bw is unchanged (original computed row by row, directly)
    original = sum(max(row[d] / bw[d] for d in range(len(bw))) for row in traffic)
    merged = float((terms.bytes / bw).max(axis=1).sum()) if terms.bytes.shape[0] else 0.0
    assert merged == pytest.approx(original, rel=1e-9, abs=1e-12)
    # so is the total traffic on each dimension
    np.testing.assert_allclose(terms.bytes.sum(axis=0), traffic.sum(axis=0), rtol=1e-9, atol=1e-12)


def test_aggregate_does_not_merge_rows_with_different_small_components():
    # [1, 0] and [1, 4e-13] are not proportional (0 vs 4e-13 share no significant digit).
    # At bw = [1, 1e-15]: max(1/1, 0) + max(1/1, 4e-13/1e-15) = 1 + 400 = 401.
    traffic = np.array([[1.0, 0.0], [1.0, 4e-13]])
    terms = aggregate(traffic)
    bw = np.array([1.0, 1e-15])
    assert terms.bytes.shape[0] == 2
    assert float((terms.bytes / bw).max(axis=1).sum()) == pytest.approx(401.0, rel=1e-12)


def test_aggregate_keeps_rows_differing_in_the_seventh_significant_digit():
    # at bw = [1, 1e-7]: max(1, 1.0000001e-6/1e-7) + max(1, 1.0000002e-6/1e-7) = 10.000001 +
    # 10.000002 = 20.000003
    traffic = np.array([[1.0, 1.0000001e-6], [1.0, 1.0000002e-6]])
    terms = aggregate(traffic)
    bw = np.array([1.0, 1e-7])
    assert float((terms.bytes / bw).max(axis=1).sum()) == pytest.approx(20.000003, rel=1e-12)
