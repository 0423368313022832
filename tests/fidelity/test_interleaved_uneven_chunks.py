"""The interleaved schedule with unequal chunks through ASTRA-sim 2.0: GPT-3's architecture cut to
20 layers, TP 2 x PP 4 x DP 8 on FullyConnected 8 x Switch 8, v = 4, m = 4. Each stage's 5 blocks
split over 4 chunks as 2, 1, 1, 1 (the first stage's 1, 1, 1, 2): the fill and drain run at the
pace of a 2-block chunk, c = 2 / 5 of a stage's slot, not 1 / v = 1 / 4. The simulator runs the
exported per-chunk traces; hieropt's c Σ_r t_r + (m - c) max_r t_r + W_0 is within 1 % of it
(0.48 %), where the equal-chunk 1 / v is 8.3 % fast."""

from __future__ import annotations

import json
import subprocess

import pytest

import hieropt
from hieropt.model.timing import evaluate
from tests.cases import gpt3_step_instance
from tests.cli.util import run

from .test_codesign_bundles import stage_slots
from .test_interleaved_group import CYCLES


def _instance(folder):
    return gpt3_step_instance(folder, (
        ("layers = 96", "layers = 20"), ("npus = 4096", "npus = 64"), ("tp = 8", "tp = 2"),
        ("pp = 8", "pp = 4"), ("dp = 64", "dp = 8"),
        ("global_batch_size = 1536", "global_batch_size = 32"),
        ('schedule = "1f1b"', 'schedule = "interleaved"\nvirtual_stages = 4')))


def test_unequal_chunks_pace_the_fill_and_drain(tmp_path, astra_sim):
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
    slots = stage_slots(inst, bw)
    t, w0 = [x for x, _ in slots], slots[0][1]
    m, c = st.microbatches, 2 / 5
    assert predicted == pytest.approx(c * sum(t) + (m - c) * max(t) + w0, rel=1e-9)
    out = subprocess.run([str(bundle / "run.sh"), str(astra_sim)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-500:]
    simulated = float(max(int(x[2]) for x in CYCLES.finditer(out.stdout)))
    assert abs(simulated - predicted) <= 0.01 * simulated, (simulated, predicted)
    equal = sum(t) / 4 + (m - 1 / 4) * max(t) + w0  # (as if the chunks were equal)
    assert simulated - equal > 0.03 * simulated
