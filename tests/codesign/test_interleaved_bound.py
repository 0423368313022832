"""The co-design time bound of an interleaved plan timed by its schedule graph
(hieropt/studies/codesign/bounds.py: the path through stage s's 2 m v operations and the first
chunks of the stages before it) holds at every bandwidth and is tight with free communication on
equal stages. The tiny LLM (tests/workloads/tiny.py) on 4 stages of 2 chunks, m = 4: a block's
forward and backward take 15.36 ns (1 TFLOP/s), the embedding none."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hieropt.model.timing import evaluate
from hieropt.studies.codesign.bounds import plan_time_bounds, time_bound_ns
from hieropt.workloads.llm.step import build_step
from tests.solve.interleaved import interleaved_instance
from tests.workloads.tiny import params


def _bounds(layers, m):
    p = params(arch={"layers": sum(layers)}, pp=4, dp=1, schedule="interleaved",
               virtual_stages=2, stage_layers=layers, global_batch_size=2 * m)
    return plan_time_bounds(p, build_step(p, names=False))


@pytest.mark.parametrize("layers", [(3, 2, 2, 1), (2, 2, 2, 2)])
def test_the_bound_holds_at_every_bandwidth(layers):
    bounds, inst = _bounds(layers, 4), interleaved_instance(4, layers)
    rng = np.random.default_rng(0)
    for _ in range(30):
        bw = rng.uniform(0.1, 50.0, 3)
        assert time_bound_ns(bounds, float(bw.sum())) < evaluate(inst, bw).iteration_time_ns


def test_the_bound_with_free_communication_by_hand():
    # 3, 2, 2, 1 blocks: the fullest stage 0 (3 blocks, 46.08 ns per micro-batch) m = 4 times,
    # 184.32 ns (the other paths are shorter), below the schedule's 204.8 ns with free
    # communication. Equal stages of 2 blocks: the path through the last stage (2 blocks and the
    # output layer's 6.144 ns: 36.864 ns) m = 4 times after the first chunks of stages 0 .. 2 (one
    # block each, 15.36 ns), 3 x 15.36 + 4 x 36.864 = 193.536 ns: the schedule's own time with
    # free communication (the bound is tight there)
    uneven = _bounds((3, 2, 2, 1), 4)
    assert time_bound_ns(uneven, math.inf) == pytest.approx(4 * 46.08, rel=1e-12)
    free = evaluate(interleaved_instance(4, (3, 2, 2, 1)), [1e9] * 3)
    assert free.compute_ns + free.bubble_ns == pytest.approx(204.8, rel=1e-12)
    equal = _bounds((2, 2, 2, 2), 4)
    assert time_bound_ns(equal, math.inf) == pytest.approx(3 * 15.36 + 4 * 36.864, rel=1e-12)
    free = evaluate(interleaved_instance(4, (2, 2, 2, 2)), [1e9] * 3)
    assert free.compute_ns + free.bubble_ns == pytest.approx(193.536, rel=1e-12)
