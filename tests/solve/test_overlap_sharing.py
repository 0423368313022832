"""Overlap loops on shared links and with one collective in flight (hieropt/model/timing.py
docstring): hand-computed times where the TP and DP collectives share a dimension, the time model
agreeing with the evaluator, and optima against a dense search.

Network Ring 4 x Switch 8. Forward / input-gradient all-reduces over (4, 2): dim 0 carries 2 S 3/4 =
1.5 S, dim 1 (chunk S/4 over 2 NPUs) 2 (S/4) 1/2 = 0.25 S. Weight-gradient all-reduce over (1, 4):
dim 1 carries 2 S 3/4 = 1.5 S. So dimension 1 is shared by the input-gradient and the
weight-gradient collectives.
"""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.model.timing import build_time_model
from hieropt.spec import (
    Collective,
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Layer,
    LinearConstraint,
    Mapping,
    Network,
    Phase,
    StepSchedule,
    Workload,
)

AR = Collective.ALL_REDUCE
SF, SIG, SWG = 4e8, 6e8, 8e8
CF, CIG, CWG = 100.0, 200.0, 300.0


def _layer(name: str) -> Layer:
    return Layer(name=name, forward=Phase(compute_ns=CF, collective=AR, size_bytes=SF),
                 input_grad=Phase(compute_ns=CIG, collective=AR, size_bytes=SIG),
                 weight_grad=Phase(compute_ns=CWG, collective=AR, size_bytes=SWG))


def _inst(loop: str, layers: int = 1, in_flight=None, mode: str = "concurrent") -> Instance:
    return Instance(
        name="shared",
        objective="performance",
        training_loop=loop,
        dimension_mode=mode,
        collectives_in_flight=in_flight,
        network=Network(
            dims=(
                Dimension(block="Ring", npus=4, cost_class="a"),
                Dimension(block="Switch", npus=8, cost_class="b"),
            )
        ),
        workload=Workload(name="w", layers=tuple(_layer(f"l{i}") for i in range(layers))),
        mapping=Mapping(forward=(4, 2), input_grad=(4, 2), weight_grad=(1, 4)),
        cost=CostModel(
            classes={
                "a": CostClass(link_usd_per_gbps=2.0),
                "b": CostClass(
                    link_usd_per_gbps=8.0, switch_usd_per_gbps=18.0, nic_usd_per_gbps=30.0
                ),
            }
        ),
        constraints=(
            LinearConstraint(coefficients=(1.0, 1.0), sense="==", rhs=100.0, text="sum(bw) == 100"),
        ),
    )


def _parts(b0: float, b1: float, mode: str = "concurrent"):
    """Per-dimension busy times (ns) of the f, ig, wg all-reduces and their collective times."""
    sf = (1.5 * SF / b0, 0.25 * SF / b1)
    sig = (1.5 * SIG / b0, 0.25 * SIG / b1)
    swg = (0.0, 1.5 * SWG / b1)
    agg = sum if mode == "sequential" else max
    return sf, sig, swg, agg(sf), agg(sig), agg(swg)


def hand(
    loop: str, in_flight, layers: int, b0: float, b1: float, mode: str = "concurrent"
) -> float:
    sf, sig, swg, tf, tig, twg = _parts(b0, b1, mode)
    fwd = layers * (CF + tf)
    if loop == "tp_dp_overlap":
        if in_flight == 1:  # the weight-gradient collective waits for the input-gradient one
            return fwd + layers * (CIG + max(tig, CWG) + twg)
        # both collectives push their bytes through dimension 1 at once
        return fwd + layers * max(CIG + tig, CIG + CWG + twg, CIG + sig[1] + swg[1])
    assert loop == "tp_dp_overlap_cross" and layers == 2
    if in_flight == 1:
        # layer 1: ig1 [200, 200 + tig], compute to r = 500 + tig; wg1 [r, r + twg]; layer 0: ig0
        # waits for the slot
        r = CIG + tig + CWG
        s = r + twg
        e0 = max(r + CIG, s) + tig
        r0 = e0 + CWG
        s0 = r0 + twg
        return fwd + max(r0, s0)
    # TP priority on dimension 1: ig0 (at r1 + 200) delays the backlog of wg1 there by sig[1]
    r1 = CIG + tig + CWG
    y1 = r1 + twg
    z1 = r1 + swg[1]
    r0 = r1 + CIG + tig + CWG
    z0 = max(r0, z1 + sig[1]) + swg[1]
    y0 = max(max(y1, r0) + twg, z0)
    return fwd + max(r0, y0, z0)


CASES = [("tp_dp_overlap", None, 1), ("tp_dp_overlap", 1, 1), ("tp_dp_overlap_cross", None, 2),
         ("tp_dp_overlap_cross", 1, 2)]


@pytest.mark.parametrize("mode", ["concurrent", "sequential"])
@pytest.mark.parametrize("loop,in_flight,layers", CASES)
@pytest.mark.parametrize("bw", [(50.0, 50.0), (90.0, 10.0), (10.0, 90.0), (99.0, 1.0)])
def test_by_hand(loop, in_flight, layers, bw, mode):
    inst = _inst(loop, layers, in_flight, mode)
    want = hand(loop, in_flight, layers, *bw, mode=mode)
    assert hieropt.evaluate(inst, list(bw)).iteration_time_ns == pytest.approx(want, rel=1e-12)
    assert build_time_model(inst).time_ns(np.array(bw)) == pytest.approx(want, rel=1e-12)


def test_sharing_binds():
    """At (50, 50) the shared dimension decides: independent streams (sharing no link) < shared
    links < serial."""
    sf, sig, swg, tf, tig, twg = _parts(50.0, 50.0)
    independent = CF + tf + max(CIG + tig, CIG + CWG + twg)
    shared = hand("tp_dp_overlap", None, 1, 50.0, 50.0)
    serial = hand("tp_dp_overlap", 1, 1, 50.0, 50.0)
    assert independent < shared < serial
    assert shared - independent == pytest.approx(CIG + sig[1] + swg[1] - (CIG + CWG + twg))


@pytest.mark.parametrize("loop,in_flight,layers", CASES)
def test_optimum_against_dense_search(loop, in_flight, layers):
    inst = _inst(loop, layers, in_flight)
    sol = hieropt.solve(inst)
    assert sol.success and sol.gap <= 1e-8
    xs = np.linspace(0.05, 99.95, 2000)
    for _ in range(6):
        v = np.array([hand(loop, in_flight, layers, x, 100 - x) for x in xs])
        i = int(np.argmin(v))
        xs = np.linspace(xs[max(i - 2, 0)], xs[min(i + 2, len(xs) - 1)], 400)
    best = min(hand(loop, in_flight, layers, x, 100 - x) for x in xs)
    assert sol.iteration_time_ns == pytest.approx(best, rel=1e-7)
    assert sol.iteration_time_ns <= best * (1 + 1e-8)


def test_chunks_pay_latency_per_chunk():
    """chunks = n: every chunk of a collective pays its steps' latency (n x); bandwidth terms
    unchanged."""
    dims = (Dimension(block="Ring", npus=4, cost_class="a", latency_ns=1000.0),
            Dimension(block="Switch", npus=8, cost_class="b", latency_ns=500.0))
    one = _inst("no_overlap").model_copy(update={"network": Network(dims=dims)})
    three = one.model_copy(update={"chunks": 3})
    bw = [50.0, 50.0]
    # per layer: f over (4, 2): ring 3 steps x 2 phases x 1000 on dim 0, direct 1 x 2 x 500 on dim 1
    # (concurrent: each dimension's own latency inside the max); ig the same; wg over (1, 4): 2 x
    # 500 on dim 1
    t1 = CF + CIG + CWG + max(1.5 * SF / 50 + 6000, 0.25 * SF / 50 + 1000) + \
        max(1.5 * SIG / 50 + 6000, 0.25 * SIG / 50 + 1000) + 1.5 * SWG / 50 + 1000
    t3 = CF + CIG + CWG + max(1.5 * SF / 50 + 18000, 0.25 * SF / 50 + 3000) + \
        max(1.5 * SIG / 50 + 18000, 0.25 * SIG / 50 + 3000) + 1.5 * SWG / 50 + 3000
    assert hieropt.evaluate(one, bw).iteration_time_ns == pytest.approx(t1, rel=1e-12)
    assert hieropt.evaluate(three, bw).iteration_time_ns == pytest.approx(t3, rel=1e-12)
    assert build_time_model(three).time_ns(np.array(bw)) == pytest.approx(t3, rel=1e-12)


# ------------------------------------------------------------------- loop step: the same DP overlap
# F = 4 + 2/2 = 5 slots
STEP = StepSchedule(microbatches=4, stages=3, virtual_stages=2, overlap_dp=True)
UPDATE_NS = 700.0  # optimizer step, on layer l0


def _step_inst(in_flight, mode: str = "concurrent", step: StepSchedule = STEP) -> Instance:
    base = _inst("tp_dp_overlap_cross", 2, in_flight, mode)
    layers = (
        base.workload.layers[0].model_copy(update={"update_ns": UPDATE_NS}),
        base.workload.layers[1],
    )
    return base.model_copy(update={"training_loop": "step", "step": step,
                                   "workload": Workload(name="w", layers=layers)})


def hand_step(in_flight, b0: float, b1: float, mode: str = "concurrent") -> float:
    """F forward passes, F - 1 plain backward passes, the last backward as tp_dp_overlap_cross
    (shared dimension 1, or one collective in flight), the optimizer step once."""
    sf, sig, swg, tf, tig, twg = _parts(b0, b1, mode)
    F = STEP.slots
    cross_backward = hand("tp_dp_overlap_cross", in_flight, 2, b0, b1, mode) - 2 * (CF + tf)
    return F * 2 * (CF + tf) + (F - 1) * 2 * (CIG + tig + CWG) + cross_backward + UPDATE_NS


@pytest.mark.parametrize("mode", ["concurrent", "sequential"])
@pytest.mark.parametrize("in_flight", [None, 1])
@pytest.mark.parametrize("bw", [(50.0, 50.0), (90.0, 10.0), (10.0, 90.0)])
def test_step_overlap_dp_by_hand(in_flight, bw, mode):
    inst = _step_inst(in_flight, mode)
    want = hand_step(in_flight, *bw, mode=mode)
    assert hieropt.evaluate(inst, list(bw)).iteration_time_ns == pytest.approx(want, rel=1e-12)
    assert build_time_model(inst).time_ns(np.array(bw)) == pytest.approx(want, rel=1e-12)


def test_step_sharing_binds():
    """At (50, 50) loop step's last backward is slower with shared links than with independent
    streams (the model before shared links), and slower still with one collective in flight."""
    sf, sig, swg, tf, tig, twg = _parts(50.0, 50.0)
    F = STEP.slots
    r1 = CIG + tig + CWG
    r0 = 2 * r1
    independent = max(r0, max(r1 + twg, r0) + twg)
    old = F * 2 * (CF + tf) + (F - 1) * 2 * (CIG + tig + CWG) + independent + UPDATE_NS
    assert old < hand_step(None, 50.0, 50.0) < hand_step(1, 50.0, 50.0)
    assert hieropt.evaluate(_step_inst(None), [50.0, 50.0]).iteration_time_ns > old * (1 + 1e-6)


@pytest.mark.parametrize("in_flight", [None, 1])
def test_step_optimum_against_dense_search(in_flight):
    sol = hieropt.solve(_step_inst(in_flight))
    assert sol.success and sol.gap <= 1e-8
    xs = np.linspace(0.05, 99.95, 2000)
    for _ in range(6):
        v = np.array([hand_step(in_flight, x, 100 - x) for x in xs])
        i = int(np.argmin(v))
        xs = np.linspace(xs[max(i - 2, 0)], xs[min(i + 2, len(xs) - 1)], 400)
    best = min(hand_step(in_flight, x, 100 - x) for x in xs)
    assert sol.iteration_time_ns == pytest.approx(best, rel=1e-7)


@pytest.mark.parametrize("overlap_dp", [False, True])
def test_step_chunks_pay_latency_per_chunk(overlap_dp):
    """chunks = 3 on loop step is the same as three times every dimension's latency."""
    lat = (Dimension(block="Ring", npus=4, cost_class="a", latency_ns=1000.0),
           Dimension(block="Switch", npus=8, cost_class="b", latency_ns=500.0))
    lat3 = tuple(d.model_copy(update={"latency_ns": 3 * d.latency_ns}) for d in lat)
    step = STEP.model_copy(update={"overlap_dp": overlap_dp})
    one = _step_inst(None, step=step).model_copy(update={"network": Network(dims=lat)})
    three_chunks = one.model_copy(update={"chunks": 3})
    three_latency = one.model_copy(update={"network": Network(dims=lat3)})
    bw = [70.0, 30.0]
    want = hieropt.evaluate(three_latency, bw).iteration_time_ns
    assert want > hieropt.evaluate(one, bw).iteration_time_ns
    assert hieropt.evaluate(three_chunks, bw).iteration_time_ns == pytest.approx(want, rel=1e-12)
    assert build_time_model(three_chunks).time_ns(np.array(bw)) == pytest.approx(want, rel=1e-12)
