"""Pipeline sends of a pipeline group spanning two dimensions against ASTRA-sim 2.0: GPT 22B cut to
8 layers, tp 4 x pp 4 on two nodes of 8 NPUs (tests/cases.py PP2D_*; hand numbers in
tests/solve/test_pipeline_sends.py). Only the send between stages 1 and 2 crosses InfiniBand; the
simulator runs hieropt's own export (every send on the link it crosses) and agrees with the model,
which prices each stage boundary over the dimensions it crosses (hieropt/model/sends.py): 552.0554
ms against the simulator's 552.0588 ms at (300, 2.5) GB/s (bf16, gradients reduced in FP32)."""

from __future__ import annotations

import pytest

from hieropt.studies.simulate import simulate
from tests.cases import pp2d_instance


@pytest.mark.parametrize("bw", [(300.0, 2.5), (300.0, 25.0)])
def test_sends_inside_a_node_at_nvlink_speed(bw, astra_sim, tmp_path):
    inst = pp2d_instance(tmp_path)
    r = simulate(inst, bw, astra_sim, folder=tmp_path / "bundle")
    assert r.relative_error < 1e-4, (r.predicted_iteration_time_ns, r.simulated_iteration_time_ns)
    if bw == (300.0, 2.5):
        assert r.simulated_iteration_time_ns == pytest.approx(552.0588e6, rel=1e-5)
        assert r.predicted_iteration_time_ns == pytest.approx(552.055431e6, rel=1e-8)
