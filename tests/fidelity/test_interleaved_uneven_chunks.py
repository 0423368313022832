"""The interleaved schedule with unequal chunks through ASTRA-sim 2.0: GPT-3's architecture cut to
20 layers, TP 2 x PP 4 x DP 8 on FullyConnected 8 x Switch 8, v = 4, m = 4. Each stage's 5 blocks
split over 4 chunks as 2, 1, 1, 1 (the first stage's 1, 1, 1, 2). The simulator runs the exported
per-chunk traces: 1,874.997 ms at (300, 200) GB/s; hieropt's schedule graph, each chunk's forward
and backward an operation (hieropt/model/schedule_dag.py), 1,874.967 ms (0.002 % fast: the compute
rounded to whole ns per trace node). The closed composition hieropt keeps for schedules past the
graph's size, c Σ_r t_r + (m - c) max_r t_r + W_0 with c = 2 / 5 (the fill and drain at the pace of
a 2-block chunk), is 0.45 % fast, the equal-chunk 1 / v = 1 / 4 7.8 %."""

from __future__ import annotations

import json
import subprocess

import pytest

import hieropt
from hieropt.model.timing import evaluate
from tests.cases import gpt3_step_instance
from tests.cli.util import run
from tests.fidelity.bundles import CYCLES, stage_slots


def _instance(folder):
    return gpt3_step_instance(folder, (
        ("layers = 96", "layers = 20"), ("npus = 4096", "npus = 64"), ("tp = 8", "tp = 2"),
        ("pp = 8", "pp = 4"), ("dp = 64", "dp = 8"),
        ("global_batch_size = 1536", "global_batch_size = 32"),
        ('schedule = "1f1b"', 'schedule = "interleaved"\nvirtual_stages = 4')))


def test_unequal_chunks_are_timed_by_the_graph(tmp_path, astra_sim):
    path = _instance(tmp_path)
    inst = hieropt.load_instance(path)
    st = inst.step
    assert (st.stages, st.virtual_stages, st.microbatches) == (4, 4, 4)
    assert st.chunk_share == pytest.approx(2 / 5, rel=1e-15) and st.fill_share == st.chunk_share
    bundle = tmp_path / "bundle"
    r = run("export", path, "--astra-sim", bundle, "--bw", "300,200")
    assert r.exit_code == 0, r.output
    bw = json.loads((bundle / "bundle.json").read_text())["bw_gbps"]
    predicted = float(evaluate(inst, bw).iteration_time_ns)
    out = subprocess.run([str(bundle / "run.sh"), str(astra_sim)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-500:]
    simulated = float(max(int(x[2]) for x in CYCLES.finditer(out.stdout)))
    assert simulated / 1e6 == pytest.approx(1874.997, abs=5e-4)
    assert abs(simulated - predicted) <= 5e-5 * simulated, (simulated, predicted)
    slots = stage_slots(inst, bw)
    t, w0, m = [x for x, _ in slots], slots[0][1], st.microbatches
    closed = 2 / 5 * sum(t) + (m - 2 / 5) * max(t) + w0
    assert 0.004 < 1 - closed / simulated < 0.005, closed / simulated
    equal = sum(t) / 4 + (m - 1 / 4) * max(t) + w0  # (as if the chunks were equal)
    assert simulated - equal > 0.07 * simulated
