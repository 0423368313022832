"""The interleaved schedule timed by its graph (hieropt/model/pipeline.py, schedule_dag.py): each
model chunk's forward and backward an operation. The tiny LLM (tests/workloads/tiny.py) with 8
blocks on 4 stages of 3, 2, 2, 1 blocks in 2 chunks each (TP 2 x PP 4 on Ring 2 x FullyConnected 2 x
Switch 2): the time model's max nodes, the evaluator and the cutting-plane model's pieces state the
same time, the solve's optimum is that time at its bandwidths, the closed composition is off by -11
% .. +17 % at m = p (why the graph times every schedule it can), and past the graph's size the
composition's error on this layout is 0.45 %."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.model import pipeline, timing
from hieropt.model.pipeline import graph_chunks
from hieropt.model.sends import placed_job
from hieropt.model.slopes import job_arrays, time_piece
from hieropt.model.timing import build_time_model, evaluate
from tests.solve.interleaved import interleaved_instance


def _closed(inst, bw, monkeypatch) -> float:
    """The closed composition's time at ``bw`` (the evaluator's graph switched off)."""
    with monkeypatch.context() as mp:
        mp.setattr(timing, "graph_chunks", lambda instance, job: None)
        return evaluate(inst.model_copy(), bw).iteration_time_ns


def test_the_models_state_the_graph():
    inst = interleaved_instance(4)
    assert inst.step.virtual_stages == 2 and inst.step.microbatches == 4
    assert graph_chunks(inst, placed_job(inst, inst.jobs[0])) is not None
    tm = build_time_model(inst)
    for bw in ([10.0, 10.0, 10.0], [25.0, 4.0, 1.0], [1.0, 1.0, 28.0]):
        t = evaluate(inst, bw).iteration_time_ns
        assert tm.time_ns(np.array(bw)) == pytest.approx(t, rel=1e-12)
        const, grad = time_piece(inst, job_arrays(inst), 1 / np.array(bw))
        assert const + float(grad @ (1 / np.array(bw))) == pytest.approx(t, rel=1e-12)
        # the piece is below T elsewhere (a subgradient cut)
        other = np.array([5.0, 20.0, 5.0])
        assert const + float(grad @ (1 / other)) <= evaluate(inst, other).iteration_time_ns * (
            1 + 1e-12)
    sol = hieropt.solve(inst)
    assert sol.success
    assert sol.iteration_time_ns == pytest.approx(
        evaluate(inst, sol.bw_gbps).iteration_time_ns, rel=1e-9)


@pytest.mark.parametrize("layers, bw, ratio", [
    ((3, 2, 2, 1), [10.0, 10.0, 10.0], 1331.8826666666669 / 1140.48),
    ((3, 2, 2, 1), [25.0, 4.0, 1.0], 1373.696 / 1436.16),
    ((2, 2, 2, 2), [25.0, 4.0, 1.0], 1272.192 / 1436.16),
])
def test_the_closed_composition_is_off_at_small_m(layers, bw, ratio, monkeypatch):
    """At m = p = 4 the closed composition is off the graph's time either way: +16.8 % on the
    uneven stages at 10 GB/s per dimension (their fill and drain charged at the largest chunk's
    pace), -4.3 % at (25, 4, 1) GB/s, -11.4 % on equal stages there (the sends across the slow
    dimensions are not on a slot's pace); the graph is exact against the simulator
    (tests/fidelity/test_interleaved_graph.py)."""
    inst = interleaved_instance(4, layers)
    closed = _closed(inst, bw, monkeypatch)
    assert closed / evaluate(inst, bw).iteration_time_ns == pytest.approx(ratio, rel=1e-9)


def test_past_the_graphs_size_the_composition(monkeypatch):
    """m = 260 (2 p m v = 4,160 > 4,096 operations): the closed composition, 0.45 % above the
    graph's time on this layout (the graph's limit raised for the comparison)."""
    inst = interleaved_instance(260)
    assert graph_chunks(inst, placed_job(inst, inst.jobs[0])) is None
    bw = [10.0, 10.0, 10.0]
    closed = evaluate(inst, bw).iteration_time_ns
    monkeypatch.setattr(pipeline, "DAG_OPS", 10_000)
    graph = evaluate(inst.model_copy(), bw).iteration_time_ns
    assert closed / graph == pytest.approx(65557.16266666667 / 65262.08, rel=1e-9)
