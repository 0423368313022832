"""The cutting-plane time model of large workloads (hieropt/model/cutmodel.py,
hieropt/model/slopes.py) against the dense model and the layer-by-layer evaluator, on small
instances of every training loop (the large ones are measured by scripts/bench_layers.py, not here).

- every piece equals T at its point (the evaluator's T, to 1e-12) and lies below T everywhere (a
  valid cut), also for workloads of several pipeline stages (the piece of the slowest stage at the
  point);
- the optimum found on the cut model equals the dense model's (both certified to 1e-8) on random
  instances of every loop (the oracle strategy of tests/oracle/loop_instances.py: latency, both
  dimension modes, several workloads), and on 16-layer workloads of distinct layers whose input- and
  weight-gradient collectives share a dimension (the max-plus recursions of the cross-layer overlap
  over many layers);
- :func:`prefers_cuts` picks the cut model exactly when the dense one would grow with the layer
  count.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hieropt
from hieropt import SolveOptions
from hieropt.model import cutmodel
from hieropt.model.cutmodel import cut_model, prefers_cuts
from hieropt.model.slopes import supported
from hieropt.solvers import objectives
from hieropt.spec import (
    TRAINING_LOOPS,
    Collective,
    Dimension,
    Instance,
    LayerTable,
    LinearConstraint,
    Mapping,
    Network,
    Pipeline,
    StepSchedule,
    Workload,
)
from tests.oracle.loop_instances import loop_instances
from tests.oracle.scip import COST

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def solve_with_cuts(monkeypatch, inst: Instance):
    """``hieropt.solve`` with the cut model whatever the size (where the loop has one)."""
    with monkeypatch.context() as m:
        m.setattr(objectives, "prefers_cuts", supported)
        return hieropt.solve(inst)


# True: several pipeline stages (T the max over them)
@pytest.mark.parametrize("stages", [False, True])
@pytest.mark.parametrize("loop", TRAINING_LOOPS)
@settings(max_examples=6, **SETTINGS)
@given(data=st.data())
def test_pieces_are_exact_at_their_point_and_below_everywhere(loop: str, stages: bool, data):
    inst = data.draw(loop_instances(loop, stages=stages))
    if not supported(inst):
        with pytest.raises(ValueError, match="dense"):
            cut_model(inst)
        return
    cm = cut_model(inst)
    D = inst.network.n_dims
    points = [
        np.array(data.draw(st.lists(st.floats(1.0, 1000.0), min_size=D, max_size=D)))
        for _ in range(4)
    ]
    truth = [hieropt.evaluate(inst, p).iteration_time_ns for p in points]
    for p, T in zip(points, truth, strict=True):
        assert cm.time_ns(p) == pytest.approx(T, rel=1e-12)
        c, g = cm.piece(p)
        for q, Tq in zip(points, truth, strict=True):
            t = np.where(cm.carries_traffic, 1.0 / q, 0.0)
            assert c + g @ t <= Tq * (1 + 1e-12)
    assert cm.constant_ns <= min(truth) * (1 + 1e-12)  # T0 = T at infinite bandwidth is below T


@pytest.mark.parametrize("stages", [False, True])
@pytest.mark.parametrize("loop", TRAINING_LOOPS)
@settings(max_examples=5, **SETTINGS)
@given(data=st.data())
def test_cut_model_optimum_equals_the_dense_one(monkeypatch, loop: str, stages: bool, data):
    inst = data.draw(loop_instances(loop, stages=stages))
    dense = hieropt.solve(inst)
    cut = solve_with_cuts(monkeypatch, inst)
    assert dense.success and cut.success, cut.message
    assert cut.gap <= 1e-8
    # each optimum is within its gap of the other's proven bound
    assert cut.iteration_time_ns >= dense.lower_bound_ns * (1 - 1e-12)
    assert dense.iteration_time_ns >= cut.lower_bound_ns * (1 - 1e-12)


def distinct_layers(
    n: int, loop: str, latency: bool, seed: int, mode: str = "concurrent"
) -> Instance:
    """``n`` layers of random compute and sizes on 3 dimensions; TP (input gradients, forward) on
    dimensions 0-1, DP (weight gradients) on 1-2, so both gradient collectives share dimension 1;
    ``sum(bw) == 300``."""
    rng = np.random.default_rng(seed)
    kinds = np.tile(
        [
            LayerTable.KINDS.index(c)
            for c in (Collective.ALL_GATHER, Collective.ALL_REDUCE, Collective.ALL_REDUCE)
        ],
        (n, 1),
    )
    # some layers without gradients
    kinds[rng.random(n) < 0.2, 2] = LayerTable.KINDS.index(Collective.NONE)
    sizes = 10.0 ** rng.uniform(5, 8.5, (n, 3))
    sizes[kinds == 0] = 0.0
    table = LayerTable([f"l{i}" for i in range(n)], 10.0 ** rng.uniform(3, 6, (n, 3)), sizes, kinds,
                       update_ns=rng.uniform(0, 1000, n))
    dims = tuple(Dimension(block=b, npus=p, cost_class="C", latency_ns=(700.0 if latency else 0.0))
                 for b, p in (("Ring", 4), ("FullyConnected", 4), ("Switch", 8)))
    return Instance(
        name="distinct",
        objective="performance",
        training_loop=loop,
        dimension_mode=mode,
        pipeline=Pipeline(stages=4, microbatches=8, p2p_bytes=3e7, p2p_dim=2)
        if loop == "pipeline"
        else None,
        step=StepSchedule(microbatches=4, stages=2, overlap_dp=bool(seed % 2))
        if loop == "step"
        else None,
        network=Network(dims=dims),
        workload=Workload(name="w", layers=table),
        mapping=Mapping(forward=(4, 2, 1), input_grad=(4, 2, 1), weight_grad=(1, 2, 8)),
        cost=COST,
        constraints=(
            LinearConstraint(
                coefficients=(1.0, 1.0, 1.0), sense="==", rhs=300.0, text="sum(bw) == 300"
            ),
        ),
    )


@pytest.mark.parametrize("loop", TRAINING_LOOPS)
@pytest.mark.parametrize("latency", [False, True])
def test_distinct_layers_match_the_dense_model(monkeypatch, loop: str, latency: bool):
    for seed in range(2):
        inst = distinct_layers(
            16,
            loop,
            latency,
            seed,
            mode="sequential" if seed and loop == "no_overlap" else "concurrent",
        )
        dense = hieropt.solve(inst)
        cut = solve_with_cuts(monkeypatch, inst)
        assert dense.success and cut.success and cut.gap <= 1e-8
        assert cut.iteration_time_ns == pytest.approx(dense.iteration_time_ns, rel=2e-8)
        assert cut.iteration_time_ns >= dense.lower_bound_ns * (1 - 1e-12)
        assert dense.iteration_time_ns >= cut.lower_bound_ns * (1 - 1e-12)


def test_prefers_cuts_when_the_dense_model_would_grow(monkeypatch):
    monkeypatch.setattr(cutmodel, "DENSE_LAYERS", 30)
    assert not prefers_cuts(distinct_layers(20, "tp_dp_overlap_cross", False, 0))  # small: dense
    assert prefers_cuts(distinct_layers(40, "tp_dp_overlap_cross", False, 0))  # a node per layer
    assert prefers_cuts(distinct_layers(40, "tp_dp_overlap", False, 0))
    # aggregates exactly without latency
    assert not prefers_cuts(distinct_layers(40, "no_overlap", False, 0))
    assert prefers_cuts(distinct_layers(40, "no_overlap", True, 0))  # one term per distinct size
    t = distinct_layers(4, "tp_dp_overlap", True, 0).workload.layers
    idx = np.arange(40) % 4
    copies = LayerTable(
        [f"c{i}" for i in range(40)],
        t.compute_ns[idx],
        t.size_bytes[idx],
        t.kinds[idx],
        update_ns=t.update_ns[idx],
    )
    replicated = distinct_layers(4, "tp_dp_overlap", True, 0).model_copy(
        update={"workload": Workload(name="r", layers=copies)})
    assert not prefers_cuts(replicated)  # 40 layers but 4 distinct ones: they merge exactly
    serial = distinct_layers(40, "tp_dp_overlap_cross", False, 0).model_copy(
        update={"collectives_in_flight": 1}
    )
    assert not prefers_cuts(serial)  # no vectorised piece: dense


def test_solve_uses_the_cut_model_only_for_the_plain_performance_objective(monkeypatch):
    monkeypatch.setattr(cutmodel, "DENSE_LAYERS", 30)
    inst = distinct_layers(40, "tp_dp_overlap_cross", True, 1)
    sol = hieropt.solve(inst)
    assert sol.success and sol.extra["terms"] == 3  # one unit term per loaded dimension
    assert sol.extra["time_model"] == "cutting planes on T" and sol.extra["time_pieces"] >= 3
    budget = hieropt.solve(inst, options=SolveOptions(budget_usd=sol.network_cost_usd * 0.9))
    assert budget.success and budget.extra["terms"] > 3  # the dense model
    assert budget.iteration_time_ns >= sol.iteration_time_ns


def test_sensitivity_of_a_large_workload_is_skipped_with_a_note(monkeypatch):
    """Asked for sensitivity (the CLI's default), a large workload still gets the cut model's
    certified optimum, and the note says why no marginal values are given (the re-solves need the
    dense model)."""
    monkeypatch.setattr(cutmodel, "DENSE_LAYERS", 30)
    inst = distinct_layers(40, "tp_dp_overlap", True, 2)
    plain = hieropt.solve(inst)
    asked = hieropt.solve(inst, options=SolveOptions(sensitivity=True))
    assert asked.success and asked.extra["time_model"] == "cutting planes on T"
    assert asked.sensitivity is None and any(
        n.startswith("sensitivity: not computed") for n in asked.notes
    )
    assert asked.iteration_time_ns == pytest.approx(plain.iteration_time_ns, rel=1e-12)
