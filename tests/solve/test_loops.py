"""Training loops, latency and several workloads: hand-computed times on a 2-dimension network,
closed-form or dense-search optima, and the time model agreeing with the independent evaluator."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.model.cutmodel import cut_model
from hieropt.model.timing import build_time_model
from hieropt.spec import (
    Collective,
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Job,
    Layer,
    LinearConstraint,
    Mapping,
    Network,
    Phase,
    Pipeline,
    StepSchedule,
    Workload,
)

AR = Collective.ALL_REDUCE
SF, SIG, SWG = 4e8, 6e8, 8e8  # bytes of the forward, input-gradient and weight-gradient all-reduces
# Ring 4 x Switch 8. TP all-reduces over (4, 1): dim0 carries 2 S 3/4 = 1.5 S. DP all-reduce over
# (1, 8): dim1 carries 2 S 7/8 = 1.75 S.
TF = lambda b0: 1.5 * SF / b0  # noqa: E731
TIG = lambda b0: 1.5 * SIG / b0  # noqa: E731
TWG = lambda b1: 1.75 * SWG / b1  # noqa: E731


def _layer(name="l", cf=100.0, cig=200.0, cwg=300.0, sf=SF, sig=SIG, swg=SWG) -> Layer:
    return Layer(name=name, forward=Phase(compute_ns=cf, collective=AR, size_bytes=sf),
                 input_grad=Phase(compute_ns=cig, collective=AR, size_bytes=sig),
                 weight_grad=Phase(compute_ns=cwg, collective=AR, size_bytes=swg))


def _inst(loop="no_overlap", layers=None, dims=None, total=100.0, **kw) -> Instance:
    dims = dims or (
        Dimension(block="Ring", npus=4, cost_class="a"),
        Dimension(block="Switch", npus=8, cost_class="b"),
    )
    return Instance(
        name="loops",
        objective="performance",
        training_loop=loop,
        network=Network(dims=dims),
        workload=Workload(name="w", layers=tuple(layers or [_layer()])),
        mapping=Mapping(forward=(4, 1), input_grad=(4, 1), weight_grad=(1, 8)),
        cost=CostModel(
            classes={
                "a": CostClass(link_usd_per_gbps=2.0),
                "b": CostClass(
                    link_usd_per_gbps=8.0, switch_usd_per_gbps=18.0, nic_usd_per_gbps=30.0
                ),
            }
        ),
        constraints=(
            LinearConstraint(
                coefficients=(1.0, 1.0), sense="==", rhs=total, text=f"sum(bw) == {total}"
            ),
        ),
        **kw,
    )


def _dense_opt(f, total=100.0) -> tuple[float, float]:
    """min over b0 in (0, total) of f(b0, total - b0) by nested grids (independent of hieropt's
    solver; T is convex in B, so along the line it is unimodal and each refinement keeps the
    minimiser)."""
    xs = np.linspace(0, total, 2001)[1:-1]
    for _ in range(8):
        v = np.array([f(x, total - x) for x in xs])
        i = int(np.argmin(v))
        xs = np.linspace(xs[max(i - 2, 0)], xs[min(i + 2, len(xs) - 1)], 401)
    v = np.array([f(x, total - x) for x in xs])
    return float(xs[np.argmin(v)]), float(v.min())


HAND = {
    "no_overlap": lambda b0, b1: 600 + TF(b0) + TIG(b0) + TWG(b1),
    "tp_dp_overlap": lambda b0, b1: 100 + TF(b0) + max(200 + TIG(b0), 500 + TWG(b1)),
    "recompute": lambda b0, b1: 700 + 2 * TF(b0) + TIG(b0) + TWG(b1),
    # one layer: the compute stream reaches 200 + T_ig + 300, then the weight-gradient collective
    # runs
    "tp_dp_overlap_cross": lambda b0, b1: 600 + TF(b0) + TIG(b0) + TWG(b1),
}


@pytest.mark.parametrize("loop", sorted(HAND))
@pytest.mark.parametrize("bw", [(50.0, 50.0), (90.0, 10.0), (99.0, 1.0)])
def test_loop_time_by_hand(loop, bw):
    inst = _inst(loop)
    expect = HAND[loop](*bw)
    assert hieropt.evaluate(inst, bw).iteration_time_ns == pytest.approx(expect, rel=1e-12)
    assert build_time_model(inst).time_ns(np.array(bw)) == pytest.approx(expect, rel=1e-12)


@pytest.mark.parametrize("loop", sorted(HAND))
def test_loop_optimum_matches_dense_search(loop):
    inst = _inst(loop)
    sol = hieropt.solve(inst)
    b0, best = _dense_opt(HAND[loop])
    assert sol.success and sol.gap <= 1e-8
    assert sol.iteration_time_ns == pytest.approx(best, rel=1e-8)
    assert sol.bw_gbps[0] == pytest.approx(b0, rel=1e-3)


def test_no_overlap_closed_form():
    """T = 600 + a/b0 + c/b1 with b0 + b1 = 100: a/b0^2 = c/b1^2, so b0 = 100 sqrt(a) / (sqrt(a) +
    sqrt(c))."""
    a, c = 1.5 * (SF + SIG), 1.75 * SWG
    b0 = 100 * np.sqrt(a) / (np.sqrt(a) + np.sqrt(c))
    sol = hieropt.solve(_inst("no_overlap"))
    assert sol.bw_gbps[0] == pytest.approx(b0, rel=1e-4)
    assert sol.iteration_time_ns == pytest.approx(600 + a / b0 + c / (100 - b0), rel=1e-9)


def test_tp_dp_overlap_hides_the_input_gradient_all_reduce():
    """Overlap: T = 100 + T_f + max(200 + T_ig, 500 + T_wg). At the optimum the weight-gradient
    branch is the longer one, so T_ig is hidden and T = 600 + 6e8/b0 + 1.4e9/b1: b0 = 100 sqrt(6e8)
    / (sqrt(6e8) + sqrt(1.4e9)). Faster than no_overlap, with bandwidth moved from dimension 0 to
    dimension 1."""
    no, ov = hieropt.solve(_inst("no_overlap")), hieropt.solve(_inst("tp_dp_overlap"))
    b0 = 100 * np.sqrt(6e8) / (np.sqrt(6e8) + np.sqrt(1.4e9))
    assert ov.bw_gbps[0] == pytest.approx(b0, rel=1e-4)
    assert 200 + TIG(b0) < 500 + TWG(100 - b0)  # the input-gradient branch is indeed hidden
    assert ov.iteration_time_ns == pytest.approx(600 + 6e8 / b0 + 1.4e9 / (100 - b0), rel=1e-9)
    assert ov.iteration_time_ns < no.iteration_time_ns and ov.bw_gbps[0] < no.bw_gbps[0]


def test_cross_overlap_two_layers_by_hand():
    """Two layers, backward order l1 then l0. Compute stream: r1 = 200 + T_ig + 300, r0 = r1 + 200 +
    T_ig + 300. Collective stream: y1 = r1 + T_wg1, y0 = max(y1, r0) + T_wg0. End = max(r0, y0) =
    y0."""
    inst = _inst("tp_dp_overlap_cross", layers=[_layer("l0"), _layer("l1", swg=2e8)])
    b0, b1 = 80.0, 20.0
    tig, twg0, twg1 = TIG(b0), TWG(b1), 1.75 * 2e8 / b1
    r1 = 500 + tig
    r0 = r1 + 500 + tig
    y1 = r1 + twg1
    y0 = max(y1, r0) + twg0
    expect = 2 * (100 + TF(b0)) + max(r0, y0)
    assert hieropt.evaluate(inst, [b0, b1]).iteration_time_ns == pytest.approx(expect, rel=1e-12)
    assert build_time_model(inst).time_ns(np.array([b0, b1])) == pytest.approx(expect, rel=1e-12)
    sol = hieropt.solve(inst)
    _, best = _dense_opt(lambda x, y: hieropt.evaluate(inst, [x, y]).iteration_time_ns)
    assert sol.iteration_time_ns == pytest.approx(best, rel=1e-8)


def test_pipeline_by_hand():
    """p = 4 stages, m = 8 micro-batches, 1e8 bytes of activations per micro-batch over dimension 1:
    T = (8 + 4 - 1) (600 + T_f + T_ig + 2 P / b1) + T_wg."""
    inst = _inst("pipeline", pipeline=Pipeline(stages=4, microbatches=8, p2p_bytes=1e8, p2p_dim=1))
    b0, b1 = 70.0, 30.0
    expect = 11 * (600 + TF(b0) + TIG(b0) + 2 * 1e8 / b1) + TWG(b1)
    bd = hieropt.evaluate(inst, [b0, b1])
    assert bd.iteration_time_ns == pytest.approx(expect, rel=1e-12)
    # compute m C, bubble (p - 1) C, the rest exposed communication
    assert bd.compute_ns == pytest.approx(8 * 600, rel=1e-12)
    assert bd.bubble_ns == pytest.approx(3 * 600, rel=1e-12)
    assert bd.communication_ns == pytest.approx(expect - 11 * 600, rel=1e-12)
    assert bd.communication_by_phase_ns["p2p"] == pytest.approx(16 * 1e8 / b1, rel=1e-12)
    sol = hieropt.solve(inst)
    _, best = _dense_opt(lambda x, y: 11 * (600 + TF(x) + TIG(x) + 2e8 / y) + TWG(y))
    assert sol.iteration_time_ns == pytest.approx(best, rel=1e-8)


def test_pipeline_send_over_a_fully_connected_dimension_gets_one_link():
    """The send of test_pipeline_by_hand over dimension 0, now a FullyConnected dimension of 4 NPUs:
    each peer is one of the NPU's 3 links, B0 / 3, so the send takes 3 x 1e8 / b0."""
    dims = (Dimension(block="FullyConnected", npus=4, cost_class="a"),
            Dimension(block="Switch", npus=8, cost_class="b"))
    inst = _inst(
        "pipeline", dims=dims, pipeline=Pipeline(stages=4, microbatches=8, p2p_bytes=1e8, p2p_dim=0)
    )
    b0, b1 = 70.0, 30.0
    expect = 11 * (600 + TF(b0) + TIG(b0) + 2 * 3 * 1e8 / b0) + TWG(b1)
    assert hieropt.evaluate(inst, [b0, b1]).iteration_time_ns == pytest.approx(expect, rel=1e-12)
    assert build_time_model(inst).time_ns(np.array([b0, b1])) == pytest.approx(expect, rel=1e-12)


def _lat_dims(algo1=None):
    return (Dimension(block="Ring", npus=4, cost_class="a", latency_ns=1000.0),
            Dimension(block="Switch", npus=8, cost_class="b", latency_ns=500.0, algorithm=algo1))


def test_latency_by_hand_concurrent_and_sequential():
    """Ring 4 (ring algorithm): an all-reduce takes 2 x 3 steps x 1000 ns; Switch 8 direct: 2 x 1 x
    500 ns; halving-doubling: 2 x log2(8) = 6 steps x 500 ns. Only dimensions a collective spans pay
    latency."""
    b0, b1 = 60.0, 40.0
    inst = _inst(dims=_lat_dims())
    expect = 600 + (TF(b0) + 6000) + (TIG(b0) + 6000) + (TWG(b1) + 1000)
    assert hieropt.evaluate(inst, [b0, b1]).iteration_time_ns == pytest.approx(expect, rel=1e-12)
    hd = _inst(dims=_lat_dims("halving_doubling"))
    assert hieropt.evaluate(hd, [b0, b1]).iteration_time_ns == pytest.approx(
        expect + 2000, rel=1e-12
    )
    # a collective spanning both dimensions: concurrent = max over dims, sequential = sum
    both = [Layer(name="x", forward=Phase(compute_ns=0, collective=Collective.NONE, size_bytes=0),
                  input_grad=Phase(compute_ns=0, collective=Collective.NONE, size_bytes=0),
                  weight_grad=Phase(compute_ns=10, collective=AR, size_bytes=SWG))]
    # all-reduce over (4, 8): dim0 1.5 S, then chunk S/4 on dim1
    m0, m1 = 1.5 * SWG, 2 * (SWG / 4) * 7 / 8
    conc = _inst(dims=_lat_dims(), layers=both).model_copy(
        update={"mapping": Mapping(forward=(1, 1), input_grad=(1, 1), weight_grad=(4, 8))})
    seq = conc.model_copy(update={"dimension_mode": "sequential"})
    assert hieropt.evaluate(conc, [b0, b1]).iteration_time_ns == pytest.approx(
        10 + max(m0 / b0 + 6000, m1 / b1 + 1000), rel=1e-12)
    assert hieropt.evaluate(seq, [b0, b1]).iteration_time_ns == pytest.approx(
        10 + m0 / b0 + 6000 + m1 / b1 + 1000, rel=1e-12)
    # sequential optimum in closed form: b0 = 100 sqrt(m0) / (sqrt(m0) + sqrt(m1))
    sol = hieropt.solve(seq)
    assert sol.bw_gbps[0] == pytest.approx(
        100 * np.sqrt(m0) / (np.sqrt(m0) + np.sqrt(m1)), rel=1e-4
    )
    # concurrent with latency: the dense search agrees
    sol = hieropt.solve(conc)
    _, best = _dense_opt(lambda x, y: 10 + max(m0 / x + 6000, m1 / y + 1000))
    assert sol.iteration_time_ns == pytest.approx(best, rel=1e-8)


def test_latency_makes_small_collectives_latency_bound():
    """A 1 kB all-reduce with 1 us steps: its time is almost all latency, and bandwidth barely
    changes it."""
    small = [_layer(sf=1e3, sig=1e3, swg=1e3)]
    inst = _inst(dims=_lat_dims(), layers=small)
    t1 = hieropt.evaluate(inst, [50.0, 50.0]).iteration_time_ns
    t2 = hieropt.evaluate(inst, [90.0, 10.0]).iteration_time_ns
    assert 13_000 < t1 < 13_700 and abs(t1 - t2) / t1 < 0.02


def test_two_workloads_weighted():
    """0.6 x (TP-heavy job) + 0.4 x (DP-heavy job): the evaluator's time is the weighted sum, and
    the optimal split of the mix lies between the two single-workload optima."""
    tp_heavy = _inst()
    dp_layers = [_layer(sf=1e7, sig=1e7, swg=4e9)]
    dp_heavy = _inst(layers=dp_layers)
    mix = tp_heavy.model_copy(
        update={
            "workload_weight": 0.6,
            "more_workloads": (
                Job(
                    workload=Workload(name="dp", layers=tuple(dp_layers)),
                    mapping=dp_heavy.mapping,
                    weight=0.4,
                ),
            ),
        }
    )
    bw = [64.0, 36.0]
    t_tp, t_dp = (hieropt.evaluate(i, bw).iteration_time_ns for i in (tp_heavy, dp_heavy))
    expect = 0.6 * t_tp + 0.4 * t_dp
    bd = hieropt.evaluate(mix, bw)
    assert bd.iteration_time_ns == pytest.approx(expect, rel=1e-12)
    assert set(bd.iteration_time_by_workload_ns) == {"w", "dp"}
    b_tp, b_dp, b_mix = (hieropt.solve(i).bw_gbps[0] for i in (tp_heavy, dp_heavy, mix))
    assert b_dp < b_mix < b_tp
    _, best = _dense_opt(lambda x, y: hieropt.evaluate(mix, [x, y]).iteration_time_ns)
    assert hieropt.solve(mix).iteration_time_ns == pytest.approx(best, rel=1e-8)


def test_step_interleaved_with_overlapped_last_backward_by_hand():
    """Loop ``step``, m = 9 micro-batches, p = 7 stages, v = 2 chunks, ``overlap_dp``: F = m + (p -
    1) / v = 12 micro-batch slots; the last backward runs the weight-gradient all-reduce on its own
    stream (one layer: it starts when the compute stream ends), so T = 12 (100 + T_f) + 12 (500 +
    T_ig) + T_wg. The evaluator, the dense time model and the cut model's piece agree with it; the
    piece lies below T elsewhere; the optimum matches a dense search."""
    inst = _inst("step", step=StepSchedule(microbatches=9, stages=7, virtual_stages=2,
                                           overlap_dp=True))

    def hand(b0, b1):
        return 12 * (100 + TF(b0)) + 12 * (500 + TIG(b0)) + TWG(b1)

    cm = cut_model(inst)
    for bw in ((50.0, 50.0), (90.0, 10.0), (99.0, 1.0)):
        expect = hand(*bw)
        assert hieropt.evaluate(inst, bw).iteration_time_ns == pytest.approx(expect, rel=1e-12)
        assert build_time_model(inst).time_ns(np.array(bw)) == pytest.approx(expect, rel=1e-12)
        c, g = cm.piece(np.array(bw))
        assert c + g @ (1 / np.array(bw)) == pytest.approx(expect, rel=1e-12)
        other = np.array([30.0, 70.0])
        assert c + g @ (1 / other) <= hand(*other) * (1 + 1e-12)
    sol = hieropt.solve(inst)
    _, best = _dense_opt(hand)
    assert sol.success and sol.gap <= 1e-8
    assert sol.iteration_time_ns == pytest.approx(best, rel=1e-8)
