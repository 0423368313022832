"""Pipeline sends priced over the dimensions each stage boundary crosses (hieropt/model/sends.py).

The case (tests/cases.py PP2D_*): GPT 22B cut to 8 layers, tp 4 x pp 4 x dp 1 on two nodes of 8
NPUs (dimension 0 NVLink, dimension 1 InfiniBand). Placed lowest first, tp = [4, 1] and pp = [2, 2]:
stage r sits at (r mod 2, r div 2), so stages 0 and 1 are on node 0, 2 and 3 on node 1. The
boundaries 0 -> 1 and 2 -> 3 change coordinate 0 only; 1 -> 2 changes both.

One send is n h e / t = 2048 x 6144 x 2 / 4 = 6,291,456 bytes (the scatter-gather send). At
(300, 2.5) GB/s: over NVLink 6,291,456 / 300 = 20,971.52 ns; across 1 -> 2 max(6,291,456 / 300,
6,291,456 / 2.5) = 2,516,582.4 ns. So per micro-batch:

- stage 0: forward send 20,971.52 ns (no backward send);
- stage 1: forward send 2,516,582.4 ns, input-gradient send 20,971.52 ns;
- stage 2: forward send 20,971.52 ns, input-gradient send 2,516,582.4 ns;
- stage 3: input-gradient send 20,971.52 ns (no forward send).

The tied-embedding exchange (stage 0 <-> 3, once per iteration, in W_0) crosses both dimensions:
v / t x h x g = 12,800 x 6,144 x 4 = 314,572,800 bytes (g = 4: bf16 training's FP32 gradients),
125,829,120 ns at 2.5 GB/s.

Iteration: 1F1B with m = 16 and the last stage the slowest (its output layer) is T = sum_r t_r +
(m - 1) t_3 + W_0 (hieropt/model/pipeline.py). Lowering InfiniBand from 25 to 2.5 GB/s keeps
stage 3 the slowest and changes only the sends that cross it: stage 1's forward send and stage
2's input-gradient send (once each, in sum_r t_r; at 25 GB/s still InfiniBand-bound, 251,658.24
ns) and the tied exchange in W_0:

    dT = (2 x 6,291,456 + 314,572,800) x (1/2.5 - 1/25) = 327,155,712 x 0.36 = 117,776,056.32 ns.

Charging every send at the slowest dimension (a simpler rule, not hieropt's) would give 19 sends on
the critical path (m + p - 1) instead: (19 x 6,291,456 + 314,572,800) x 0.36 = 156,279,767.04 ns.
At (300, 2.5) the iteration is 552.055431 ms (488.661279 ms with 2-byte gradients, when ASTRA-sim
2.0 simulated 488.6646 ms for hieropt's own export, tests/fidelity/test_pipeline_sends.py; that
rule's 536.08 ms is 19 x (2,516,582.4 - 20,971.52) ns = 47.42 ms above that).
"""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.model.sends import boundary_dims, placed_job, stage_coordinates
from hieropt.model.timing import build_time_model
from hieropt.model.traffic import phase_times
from hieropt.spec import Collective
from tests.cases import pp2d_instance

SEND = 2048 * 6144 * 2 / 4  # bytes
TIED = 12800 * 6144 * 4  # bytes (4-byte gradients: bf16 training reduces them in FP32)
NV, IB = SEND / 300, SEND / 2.5  # ns


def test_stage_coordinates_are_mixed_radix_lowest_first():
    assert [stage_coordinates((2, 2), r) for r in range(4)] == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert [stage_coordinates((1, 2, 2), r) for r in range(4)] == [
        (0, 0, 0), (0, 1, 0), (0, 0, 1), (0, 1, 1)]
    assert boundary_dims((2, 2), 0, 1) == (0,)
    assert boundary_dims((2, 2), 1, 2) == (0, 1)
    assert boundary_dims((2, 2), 2, 3) == (0,)
    assert boundary_dims((2, 2), 3, 0) == (0, 1)  # (the interleaved schedule's wrap)
    assert boundary_dims((4, 2), 3, 4) == (0, 1)
    assert boundary_dims((4, 2), 4, 5) == (0,)


def _sends(inst, bw) -> dict[tuple[int, ...], tuple[list[float], list[float]]]:
    """Per entry of the placed workload (its pipeline stages): the forward and input-gradient send
    times (ns) at ``bw``."""
    job = placed_job(inst, inst.jobs[0])
    out = {}
    for stage, members in zip(job.workload.stages, job.workload.pipeline_stages, strict=True):
        sub = job.model_copy(update={"workload": stage})
        T = phase_times(inst, sub, np.asarray(bw, dtype=float))
        t = stage.table
        out[members] = tuple(
            [float(x) for x in T[t.collective[:, j] == Collective.P2P, j]] for j in (0, 1)
        )
    return out


def test_each_stage_sends_over_the_dimensions_its_boundaries_cross(tmp_path):
    inst = pp2d_instance(tmp_path)
    assert inst.mapping.groups["pp"] == (2, 2)
    # the middle stages (one entry of the workload) split: their sends cross other boundaries
    assert inst.workload.pipeline_stages == ((3,), (0,), (1, 2))
    sends = _sends(inst, [300.0, 2.5])
    assert set(sends) == {(3,), (0,), (1,), (2,)}
    assert sends[(0,)][0] == pytest.approx([NV], rel=1e-12) and sends[(0,)][1] == []
    assert sends[(1,)][0] == pytest.approx([IB], rel=1e-12)
    assert sends[(1,)][1] == pytest.approx([NV], rel=1e-12)
    assert sends[(2,)][0] == pytest.approx([NV], rel=1e-12)
    assert sends[(2,)][1] == pytest.approx([IB], rel=1e-12)
    assert sends[(3,)][0] == [] and sends[(3,)][1] == pytest.approx([NV], rel=1e-12)
    assert NV == pytest.approx(20_971.52) and IB == pytest.approx(2_516_582.4)


def test_iteration_time_moves_only_with_the_sends_that_cross_infiniband(tmp_path):
    inst = pp2d_instance(tmp_path)
    slow = hieropt.evaluate(inst, [300.0, 2.5])
    fast = hieropt.evaluate(inst, [300.0, 25.0])
    dT = (2 * SEND + TIED) * (1 / 2.5 - 1 / 25)
    assert dT == pytest.approx(117_776_056.32)
    assert slow.iteration_time_ns - fast.iteration_time_ns == pytest.approx(dT, rel=1e-9)
    assert slow.iteration_time_ns == pytest.approx(552_055_430.8, abs=1.0)  # (docstring)
    # stage 3's own input-gradient collectives do not depend on InfiniBand (its send stays on
    # node 1): the issued figures of the slowest stage are the same at 2.5 and 25 GB/s there
    # (NVLink at 1e6 GB/s: the what-if of no limit)
    a = hieropt.evaluate(inst, [1e6, 25.0])
    b = hieropt.evaluate(inst, [1e6, 2.5])
    assert a.slowest_stage == b.slowest_stage == "gpt-22b-stage3"
    assert a.communication_by_phase_ns["input_grad"] == pytest.approx(
        b.communication_by_phase_ns["input_grad"], rel=1e-12)


def test_the_time_model_and_the_solver_agree_with_the_evaluator(tmp_path):
    inst = pp2d_instance(tmp_path)
    tm = build_time_model(inst)
    for bw in ([300.0, 2.5], [300.0, 25.0], [40.0, 25.0], [1e6, 2.5]):
        assert tm.time_ns(np.array(bw)) == pytest.approx(
            hieropt.evaluate(inst, bw).iteration_time_ns, rel=1e-12)
    sol = hieropt.solve(inst)
    assert sol.success and sol.gap <= 1e-8
    assert sol.bw_gbps == pytest.approx([300.0, 25.0], rel=1e-9)
    assert sol.iteration_time_ns == pytest.approx(
        hieropt.evaluate(inst, [300.0, 25.0]).iteration_time_ns, rel=1e-9)
