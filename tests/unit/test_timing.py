"""No-overlap iteration time, its breakdown and LIBRA's linear cost: hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hieropt.errors import InputError
from hieropt.model.timing import build_time_model, evaluate
from hieropt.spec import (
    CostClass,
    Dimension,
    Instance,
    Layer,
    LinearConstraint,
    Network,
    Phase,
)
from tests.fuzz.strategies import divisors as _divisors
from tests.unit.timing_cases import (
    A2A,
    AG,
    AR,
    CLASSES_A,
    DIMS_A,
    NONE,
    RS,
    instance_a,
    layers_a,
    ph,
    timing_instance,
)

FAST = settings(max_examples=50, deadline=None)


def test_evaluate_instance_a_hand_values():
    b = evaluate(instance_a(), [4.0, 2.0])
    np.testing.assert_array_equal(b.bw_gbps, [4.0, 2.0])
    assert b.iteration_time_ns == pytest.approx(325.0, rel=1e-12)
    assert b.compute_ns == pytest.approx(250.0, rel=1e-12)
    assert b.communication_ns == pytest.approx(75.0, rel=1e-12)
    assert b.communication_by_phase_ns == pytest.approx(
        {"forward": 30.0, "input_grad": 14.0, "weight_grad": 31.0}
    )
    np.testing.assert_allclose(b.bytes_per_dim, [228.0, 70.0], rtol=1e-12)
    np.testing.assert_allclose(b.busy_ns_per_dim, [57.0, 35.0], rtol=1e-12)
    np.testing.assert_allclose(b.utilisation_per_dim, [57.0 / 325.0, 35.0 / 325.0], rtol=1e-12)
    np.testing.assert_allclose(b.bottleneck_ns_per_dim, [54.0, 21.0], rtol=1e-12)
    np.testing.assert_allclose(b.cost_per_dim_usd, [256.0, 576.0], rtol=1e-12)
    assert b.network_cost_usd == pytest.approx(832.0, rel=1e-12)


def test_evaluate_instance_a_other_bw_moves_the_bottleneck():
    # bw = [16, 1]: per-dimension ns
    #   l0 fwd [6, 0] -> 6 (dim0);  l0 wg [6, 28] -> 28 (dim1);  l1 fwd [1.5, 0] -> 1.5 (dim0)
    #   l1 ig [0, 28] -> 28 (dim1); l1 wg [0.75, 14] -> 14 (dim1)
    #   communication = 6 + 28 + 1.5 + 28 + 14 = 77.5; T = 250 + 77.5 = 327.5
    #   by phase: forward 6 + 1.5 = 7.5; input_grad 28; weight_grad 28 + 14 = 42
    #   busy: dim0 = 228/16 = 14.25; dim1 = 70/1 = 70
    #   bottleneck: dim0 = 6 + 1.5 = 7.5; dim1 = 28 + 28 + 14 = 70
    #   cost: 32*2*16 = 1024; 32*9*1 = 288; total 1312
    b = evaluate(instance_a(), np.array([16.0, 1.0]))
    assert b.iteration_time_ns == pytest.approx(327.5, rel=1e-12)
    assert b.communication_by_phase_ns == pytest.approx(
        {"forward": 7.5, "input_grad": 28.0, "weight_grad": 42.0}
    )
    np.testing.assert_allclose(b.busy_ns_per_dim, [14.25, 70.0], rtol=1e-12)
    np.testing.assert_allclose(b.utilisation_per_dim, [14.25 / 327.5, 70.0 / 327.5], rtol=1e-12)
    np.testing.assert_allclose(b.bottleneck_ns_per_dim, [7.5, 70.0], rtol=1e-12)
    np.testing.assert_allclose(b.cost_per_dim_usd, [1024.0, 288.0], rtol=1e-12)
    assert b.network_cost_usd == pytest.approx(1312.0, rel=1e-12)


def test_update_ns_is_not_counted():
    # same workload with update_ns 1000/500 and 0/0: identical time (325, not 325 + 1500)
    with_update = evaluate(instance_a(1000.0, 500.0), [4.0, 2.0])
    without = evaluate(instance_a(0.0, 0.0), [4.0, 2.0])
    assert with_update.iteration_time_ns == pytest.approx(325.0, rel=1e-12)
    assert without.iteration_time_ns == pytest.approx(325.0, rel=1e-12)
    assert with_update.compute_ns == pytest.approx(250.0, rel=1e-12)
    assert build_time_model(instance_a(1000.0, 500.0)).compute_ns == pytest.approx(250.0, rel=1e-12)


def test_time_model_instance_a_hand_values():
    tm = build_time_model(instance_a())
    assert tm.compute_ns == pytest.approx(250.0, rel=1e-12)
    assert tm.n_dims == 2
    # 5 collectives with traffic (the NONE one has none); directions: [96,0] and [24,0] merge (dim0
    # only); [96,28], [0,28], [12,14] stay apart -> 4 terms
    assert tm.n_collectives == 5
    assert tm.terms_bytes.shape == (4, 2)
    np.testing.assert_array_equal(tm.carries_traffic, [True, True])
    assert tm.time_ns(np.array([4.0, 2.0])) == pytest.approx(325.0, rel=1e-12)
    assert tm.time_ns(np.array([16.0, 1.0])) == pytest.approx(327.5, rel=1e-12)


def test_time_model_is_built_once_per_instance_and_read_only():
    """A copy with another objective, budget or constraint (a front's, a sensitivity re-solve's)
    shares the time model; a copy with another network or training loop builds its own, with its own
    (hand-computed) values."""
    inst = instance_a()
    tm = build_time_model(inst)
    assert build_time_model(inst) is tm
    other = inst.model_copy(
        update={
            "objective": "performance_per_cost",
            "max_network_cost_usd": 1e6,
            "constraints": (LinearConstraint(coefficients=(1.0, 1.0), sense="<=", rhs=9.0),),
        }
    )
    assert build_time_model(other) is tm
    with pytest.raises(ValueError, match="read-only"):
        tm.terms_bytes[0, 0] = 0.0
    slower = inst.model_copy(update={"network": inst.network.model_copy(update={"dims": tuple(
        d.model_copy(update={"latency_ns": 10.0}) for d in inst.network.dims)})})
    tm2 = build_time_model(slower)
    assert (
        tm2 is not tm
        and tm2.time_ns(np.array([4.0, 2.0])) > tm.time_ns(np.array([4.0, 2.0])) == 325.0
    )
    assert build_time_model(instance_a()).time_ns(np.array([16.0, 1.0])) == pytest.approx(
        327.5, rel=1e-12
    )


# --------------------------------------------------------------------------------------------------
# Instance B: FullyConnected 2 x Ring 3 x Switch 4 (N = 24), one layer, a group that skips the
# middle dimension.
#   classes: "chip" link 5; "node" link 2; "pod" link 1 + switch 2 + NIC 3 = 6.
#   mapping: forward (2, 1, 4), input_grad (1, 1, 1), weight_grad (2, 3, 4).
#   fwd: compute 7, AR 40 over (2,1,4): dim0 = 2*40/2 = 40, c = 20; dim2 = 2*20*3/4 = 30   -> [40,
# 0, 30]
#   ig:  compute 3, AR 100 over (1,1,1): nothing spanned                                    -> [0,
# 0, 0]
#   wg:  compute 5, AG 24 over (2,3,4): dim2 = 24*3 = 72, c = 96; dim1 = 96*2 = 192, c = 288; dim0 =
# 288
#                                                                                            ->
# [288, 192, 72] At bw = [8, 16, 3]:
#   fwd [5, 0, 10] -> 10 (dim2);  ig 0;  wg [36, 12, 24] -> 36 (dim0)
#   compute 15; communication 46; T = 61
#   bytes [328, 192, 102]; busy [41, 12, 34]; bottleneck [36, 0, 10]
#   cost: 24*5*8 = 960; 24*2*16 = 768; 24*6*3 = 432; total 2160
# --------------------------------------------------------------------------------------------------
def instance_b() -> Instance:
    return timing_instance(
        [
            Dimension(block="FullyConnected", npus=2, cost_class="chip"),
            Dimension(block="Ring", npus=3, cost_class="node"),
            Dimension(block="Switch", npus=4, cost_class="pod"),
        ],
        [
            Layer(
                name="only",
                forward=ph(7, AR, 40),
                input_grad=ph(3, AR, 100),
                weight_grad=ph(5, AG, 24),
            )
        ],
        (2, 1, 4),
        (1, 1, 1),
        (2, 3, 4),
        {
            "chip": CostClass(link_usd_per_gbps=5.0),
            "node": CostClass(link_usd_per_gbps=2.0),
            "pod": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=2.0, nic_usd_per_gbps=3.0),
        },
    )


def test_evaluate_instance_b_hand_values():
    b = evaluate(instance_b(), [8.0, 16.0, 3.0])
    assert b.iteration_time_ns == pytest.approx(61.0, rel=1e-12)
    assert b.compute_ns == pytest.approx(15.0, rel=1e-12)
    assert b.communication_ns == pytest.approx(46.0, rel=1e-12)
    assert b.communication_by_phase_ns == pytest.approx(
        {"forward": 10.0, "input_grad": 0.0, "weight_grad": 36.0}
    )
    np.testing.assert_allclose(b.bytes_per_dim, [328.0, 192.0, 102.0], rtol=1e-12)
    np.testing.assert_allclose(b.busy_ns_per_dim, [41.0, 12.0, 34.0], rtol=1e-12)
    np.testing.assert_allclose(b.utilisation_per_dim, [41 / 61, 12 / 61, 34 / 61], rtol=1e-12)
    np.testing.assert_allclose(b.bottleneck_ns_per_dim, [36.0, 0.0, 10.0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.cost_per_dim_usd, [960.0, 768.0, 432.0], rtol=1e-12)
    assert b.network_cost_usd == pytest.approx(2160.0, rel=1e-12)
    assert build_time_model(instance_b()).time_ns(np.array([8.0, 16.0, 3.0])) == pytest.approx(
        61.0, rel=1e-12
    )


# --------------------------------------------------------------------------------------------------
# Instance C: like A but every group is (4, 1), so dimension 1 (the Switch) carries no traffic.
#   l0: fwd 100 + AR 64 -> [96, 0]; ig 50 + NONE; wg 30 + AR 64 -> [96, 0]
#   l1: fwd 10 + AG 8 -> [24, 0]; ig 20 + RS 32 -> [24, 0]; wg 40 + A2A 16 -> [12, 0]
#   at bw = [4, 0]: comm = (96 + 96 + 24 + 24 + 12)/4 = 252/4 = 63; T = 250 + 63 = 313
#   cost: dim0 = 32*2*4 = 256; dim1 = 32*9*0 = 0
# --------------------------------------------------------------------------------------------------
def instance_c() -> Instance:
    return timing_instance(DIMS_A, layers_a(), (4, 1), (4, 1), (4, 1), CLASSES_A)


def test_zero_bw_on_a_dimension_without_traffic_is_fine():
    b = evaluate(instance_c(), [4.0, 0.0])
    assert b.iteration_time_ns == pytest.approx(313.0, rel=1e-12)
    assert b.communication_by_phase_ns == pytest.approx(
        {"forward": 30.0, "input_grad": 6.0, "weight_grad": 27.0}
    )
    np.testing.assert_allclose(b.bytes_per_dim, [252.0, 0.0], rtol=1e-12)
    np.testing.assert_allclose(b.busy_ns_per_dim, [63.0, 0.0], rtol=1e-12)
    np.testing.assert_allclose(b.bottleneck_ns_per_dim, [63.0, 0.0], rtol=1e-12)
    np.testing.assert_allclose(b.cost_per_dim_usd, [256.0, 0.0], rtol=1e-12)
    assert np.all(np.isfinite(b.utilisation_per_dim))
    tm = build_time_model(instance_c())
    np.testing.assert_array_equal(tm.carries_traffic, [True, False])
    assert tm.time_ns(np.array([4.0, 0.0])) == pytest.approx(313.0, rel=1e-12)


@pytest.mark.parametrize(
    "bw",
    [
        pytest.param([4.0], id="too-short"),
        pytest.param([4.0, 2.0, 1.0], id="too-long"),
        pytest.param([4.0, -1.0], id="negative"),
        pytest.param([-0.5, 2.0], id="negative-dim0"),
        pytest.param([0.0, 2.0], id="zero-on-loaded-dim0"),
        pytest.param([4.0, 0.0], id="zero-on-loaded-dim1"),
        pytest.param([float("nan"), 2.0], id="nan"),
        pytest.param([4.0, float("inf")], id="inf"),
    ],
)
def test_evaluate_rejects_bad_bandwidths(bw):
    with pytest.raises(InputError):
        evaluate(instance_a(), bw)


def test_zero_bw_error_names_the_dimension():
    with pytest.raises(InputError) as exc:
        evaluate(instance_a(), [4.0, 0.0])
    assert exc.value.field == "bw[1]"
    assert exc.value.exit_code == 2


def test_constraints_do_not_affect_evaluation():
    # a design constraint limits the optimiser, not the evaluator: T at [4, 2] is still 325
    inst = timing_instance(
        DIMS_A,
        layers_a(),
        (4, 1),
        (1, 8),
        (4, 8),
        CLASSES_A,
        constraints=[
            LinearConstraint(
                coefficients=(1.0, 1.0), sense="<=", rhs=1.0, text="bw[0] + bw[1] <= 1"
            )
        ],
    )
    assert evaluate(inst, [4.0, 2.0]).iteration_time_ns == pytest.approx(325.0, rel=1e-12)


# --------------------------------------------------------------------------------------------------
# build_time_model(inst).time_ns(bw) == evaluate(inst, bw).iteration_time_ns on random small
# workloads ----------------------------------------------------------------------------------------
_KINDS = [AR, RS, AG, A2A, NONE]
_CLASSES = {
    "c0": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=2.0, nic_usd_per_gbps=3.0),
    "c1": CostClass(link_usd_per_gbps=7.0, switch_usd_per_gbps=1.0, nic_usd_per_gbps=1.0),
}


@st.composite
def random_instances(draw):
    D = draw(st.integers(1, 3))
    dims = [
        Dimension(
            block=draw(st.sampled_from(["Ring", "FullyConnected", "Switch"])),
            npus=draw(st.integers(2, 6)),
            cost_class=draw(st.sampled_from(sorted(_CLASSES))),
        )
        for _ in range(D)
    ]
    groups = [tuple(draw(st.sampled_from(_divisors(dim.npus))) for dim in dims) for _ in range(3)]
    compute = st.floats(0, 1e4, allow_nan=False, allow_infinity=False)
    size = st.one_of(st.just(0.0), st.integers(1, 10**6).map(float), st.floats(1e-3, 1e9))

    def phase() -> Phase:
        return Phase(
            compute_ns=draw(compute),
            collective=draw(st.sampled_from(_KINDS)),
            size_bytes=draw(size),
        )

    n_layers = draw(st.integers(1, 60))
    layers = [
        Layer(
            name=f"l{i}",
            forward=phase(),
            input_grad=phase(),
            weight_grad=phase(),
            update_ns=draw(compute),
        )
        for i in range(n_layers)
    ]
    inst = timing_instance(dims, layers, *groups, _CLASSES)
    bw = np.array(draw(st.lists(st.floats(1e-2, 1e4), min_size=D, max_size=D)))
    return inst, bw


@FAST
@given(data=random_instances())
def test_time_model_matches_evaluate(data):
    inst, bw = data
    b = evaluate(inst, bw)
    tm = build_time_model(inst)
    assert tm.time_ns(bw) == pytest.approx(b.iteration_time_ns, rel=1e-9, abs=1e-9)
    assert tm.compute_ns == pytest.approx(b.compute_ns, rel=1e-12, abs=1e-12)
    # internal consistency of the breakdown
    assert b.iteration_time_ns == pytest.approx(
        b.compute_ns + b.communication_ns, rel=1e-12, abs=1e-12
    )
    assert sum(b.communication_by_phase_ns.values()) == pytest.approx(
        b.communication_ns, rel=1e-9, abs=1e-9
    )
    # every collective counts on its slowest dimension, and once more on each dimension tied with
    # it (a ring of 2 at 2 GB/s and one at 1 GB/s with bytes in the ratio 2:1 tie): at least the
    # communication, at most D times it
    total, D = b.bottleneck_ns_per_dim.sum(), len(bw)
    assert total >= b.communication_ns * (1 - 1e-9) - 1e-9
    assert total <= D * b.communication_ns * (1 + 1e-9) + 1e-9
    np.testing.assert_allclose(b.busy_ns_per_dim, b.bytes_per_dim / bw, rtol=1e-9, atol=1e-12)
    # compute excludes update_ns: sum of the three phases' compute, computed here from the layers
    # directly
    direct = sum(
        ly.forward.compute_ns + ly.input_grad.compute_ns + ly.weight_grad.compute_ns
        for ly in inst.workload.layers
    )
    assert b.compute_ns == pytest.approx(direct, rel=1e-12, abs=1e-12)


# --------------------------------------------------------------------------------------------------
# TimeModel.times_ns (a batch of designs at once, the min-cost line search) == time_ns row by row
# --------------------------------------------------------------------------------------------------
def test_times_ns_batch_hand_values():
    tm = build_time_model(instance_a())
    np.testing.assert_allclose(
        tm.times_ns(np.array([[4.0, 2.0], [16.0, 1.0]])), [325.0, 327.5], rtol=1e-12
    )


@pytest.mark.parametrize(
    "loop", ["no_overlap", "tp_dp_overlap", "tp_dp_overlap_cross", "recompute"]
)
def test_times_ns_matches_time_ns_with_nodes_latency_and_zero_bandwidth(loop):
    inst = instance_b()
    dims = tuple(
        d.model_copy(update={"latency_ns": 5.0 * (k + 1)}) for k, d in enumerate(inst.network.dims)
    )
    inst = inst.model_copy(update={"training_loop": loop, "network": Network(dims=dims)})
    tm = build_time_model(inst)
    if loop.startswith("tp_dp"):
        assert tm.nodes  # the overlap loops have max nodes: their batched form is exercised
    rng = np.random.default_rng(7)
    bw = rng.uniform(0.5, 50.0, size=(40, 3))
    bw[3, 1] = 0.0  # a dimension with traffic and no bandwidth: inf, as time_ns
    got = tm.times_ns(bw)
    want = np.array([tm.time_ns(b) for b in bw])
    assert np.isinf(got[3]) and np.isinf(want[3])
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=1e-13)


def test_times_ns_on_a_deep_chain_of_max_nodes_hand_values():
    """A pipeline-like chain (each node the max of its own work and the previous node plus a term),
    evaluated level by level in the batch: y_0 = max(1 + tau_0, 3), y_v = max(y_{v-1} + tau_1, 2
    tau_0) for v >= 1; T = y_V-1."""
    from hieropt.model.terms import Piece, TimeModel

    V = 60
    nodes = [(Piece(1.0, ((0, 1.0),)), Piece(3.0, ()))]
    nodes += [
        (Piece(0.0, ((1, 1.0),), ((v - 1, 1.0),)), Piece(0.0, ((0, 2.0),))) for v in range(1, V)
    ]
    weights = np.zeros(V)
    weights[-1] = 1.0
    tm = TimeModel(
        constant_ns=10.0,
        terms_bytes=np.array([[8.0, 0.0], [0.0, 6.0]]),
        terms_latency_ns=np.zeros((2, 2)),
        term_weights=np.zeros(2),
        nodes=tuple(nodes),
        node_weights=weights,
        dimension_mode="concurrent",
        n_collectives=2,
    )
    # tau = (2, 2): y_0 = 3, then +2 per node; tau = (8, 0.1): 2 tau_0 = 16
    bw = np.array([[4.0, 3.0], [1.0, 60.0]])
    got = tm.times_ns(bw)
    assert got[0] == pytest.approx(10.0 + 3.0 + 2.0 * (V - 1), rel=1e-15)
    # y_1 = 16, then +0.1 per node
    assert got[1] == pytest.approx(10.0 + 16.0 + 0.1 * (V - 1 - 1), rel=1e-13)
    np.testing.assert_allclose(got, [tm.time_ns(b) for b in bw], rtol=1e-14)


def test_breakdown_figures_on_first_access_pickle_and_compare_equal():
    """The figures beyond T and cost are computed on first access (the hand values of instance A), a
    pickled breakdown carries them (not the layer-by-layer arrays), and two breakdowns are equal
    when every figure is."""
    import pickle

    b = evaluate(instance_a(), np.array([4.0, 2.0]))
    assert b.source is not None and b.computed is None  # (nothing beyond T and cost yet)
    copy = pickle.loads(pickle.dumps(b))
    assert copy.source is None and b.source is None  # (pickling computed them)
    assert copy.busy_ns_per_dim.tolist() == pytest.approx([57.0, 35.0], rel=1e-12)
    assert copy.bottleneck_ns_per_dim.tolist() == pytest.approx([54.0, 21.0], rel=1e-12)
    assert copy.bytes_per_dim.tolist() == pytest.approx([228.0, 70.0], rel=1e-12)
    assert copy.communication_by_phase_ns == pytest.approx({"forward": 30.0, "input_grad": 14.0,
                                                             "weight_grad": 31.0})
    assert copy == b == evaluate(instance_a(), [4.0, 2.0])
    assert b != evaluate(instance_a(), [4.0, 2.5])


def test_large_workload_breakdown_keeps_no_layer_arrays():
    """Above LAZY_FIGURES entries the figures are computed at once (a front of a large workload must
    not keep gigabytes of per-layer arrays), with the same values as the lazy path."""
    from hieropt.model import timing

    layers = layers_a() * 6000  # 12,000 layers x 3 phases x 2 dims > 2**16
    inst = timing_instance(DIMS_A, layers, (4, 1), (1, 8), (4, 8), CLASSES_A)
    b = evaluate(inst, [4.0, 2.0])
    assert b.source is None and b.computed is not None
    assert b.iteration_time_ns == pytest.approx(325.0 * 6000, rel=1e-12)
    assert b.busy_ns_per_dim.tolist() == pytest.approx([57.0 * 6000, 35.0 * 6000], rel=1e-12)
    assert len(layers) * 3 * 2 > timing.LAZY_FIGURES  # (the case this test is about)


def test_breakdown_figures_do_not_follow_the_callers_array_or_a_replace():
    """The lazy figures come from the evaluation's own copies: changing the bandwidth array after
    evaluate, or a dataclasses.replace of T, leaves them as they were at evaluation (hand values of
    instance A)."""
    from dataclasses import replace

    bw = np.array([4.0, 2.0])
    b = evaluate(instance_a(), bw)
    bw[1] = 1.0
    moved = replace(b, iteration_time_ns=1.0)
    assert b.busy_ns_per_dim.tolist() == pytest.approx([57.0, 35.0], rel=1e-12)
    assert moved.communication_ns == pytest.approx(75.0, rel=1e-12)


def test_pipeline_breakdown_keeps_its_own_bandwidths():
    """The pipeline sends' busy time is computed from the evaluated bandwidths, not from the
    caller's array changed afterwards: the same figures as an evaluation that reads them at once."""
    from pathlib import Path

    from hieropt.io.instance import load_instance
    from hieropt.spec import Pipeline

    base = load_instance(Path(__file__).resolve().parents[2] / "instances" / "gpt3-4d.toml")
    inst = base.model_copy(update={"training_loop": "pipeline", "pipeline": Pipeline(
        stages=4, microbatches=8, p2p_bytes=8388608, p2p_dim=3)})
    bw = np.array([200.0, 150.0, 100.0, 50.0])
    lazy = evaluate(inst, bw)
    eager = evaluate(inst, bw.copy())
    eager.busy_ns_per_dim  # noqa: B018 (its figures now)
    bw[3] = 1.0
    np.testing.assert_array_equal(lazy.busy_ns_per_dim, eager.busy_ns_per_dim)
    np.testing.assert_array_equal(lazy.utilisation_per_dim, eager.utilisation_per_dim)
