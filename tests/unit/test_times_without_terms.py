"""A time model without collective terms (every group of one NPU) evaluated for a batch of designs:
one time per design, the same as one design at a time (the batch had shape (0,) instead of (S, 0)
and the portfolio's line search raised an IndexError)."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.model.terms import collective_times
from hieropt.model.timing import build_time_model
from tests.fuzz.strategies import Row, Spec, WorkloadSpec


def test_no_rows_give_one_empty_row_set_per_design():
    traffic, latency = np.zeros((0, 3)), np.zeros((0, 3))
    assert collective_times(traffic, latency, np.ones(3), "max").shape == (0,)
    batch = np.ones((4, 1, 3))
    assert collective_times(traffic, latency, batch, "sequential").shape == (4, 0)


def test_a_pipeline_step_without_collectives_times_a_batch_of_designs():
    # the step loop (6 stages, 7 micro-batches) of three layers whose groups all hold one NPU:
    # a constant and max nodes only, no collective term
    spec = Spec(dims=(("Ring", 5, "A", 0.0, "ring"),), prices={"A": (17.7828, None, None)},
                workloads=(WorkloadSpec(layers=(((42169.7, "ALLTOALL", 13182.6),
                                                 (0.0, "ALLGATHER", 2290870.0),
                                                 (562341.0, "ALLGATHER", 1504870000.0)),),
                                        groups=((1,), (1,), (1,)), weight=1.0),),
                loop="step", mode="sequential",
                rows=(Row(coef=(1.0,), sense="<=", rhs=103.6, text="sum(bw) <= S"),),
                bounds=None, x0=(98.8553,), pipeline=None, step=(6, 7, 1, True),
                objective="performance", extra={})
    inst = spec.instance(bw_scale=1.0, price_scale=1.0)
    tm = build_time_model(inst)
    assert tm.terms_bytes.shape == (0, 1)
    designs = np.array([[1.0], [50.0], [100.0]])
    one = [tm.time_ns(b) for b in designs]
    assert one[0] == one[1] == one[2] > 0  # (no collective: no bandwidth matters)
    assert tm.times_ns(designs) == pytest.approx(one, rel=1e-15)
    assert hieropt.evaluate(inst, [1.0]).iteration_time_ns == pytest.approx(one[0], rel=1e-12)
