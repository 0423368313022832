"""Full recompute of the first 2 of each stage's 5 blocks (``recompute_layers = 2``, Megatron-LM's
block method) through ASTRA-sim 2.0: GPT-3's architecture cut to 20 layers, TP 2 x PP 4 x DP 8 on
FullyConnected 8 x Switch 8, 1F1B, m = 4. The exported traces carry the second forward of the two
recomputed blocks in each backward; the simulator's iteration is within 1e-3 of hieropt's (1.4e-5),
whose time adds exactly 2/5 of what recomputing every block adds."""

from __future__ import annotations

import json
import subprocess

import pytest

import hieropt
from hieropt.model.timing import evaluate
from tests.cases import gpt3_step_instance
from tests.cli.util import run
from tests.fidelity.bundles import CYCLES

PLAN = (("layers = 96", "layers = 20"), ("npus = 4096", "npus = 64"), ("tp = 8", "tp = 2"),
        ("pp = 8", "pp = 4"), ("dp = 64", "dp = 8"),
        ("global_batch_size = 1536", "global_batch_size = 32"))


def _predicted(folder, recompute: str) -> tuple:
    path = gpt3_step_instance(folder, (*PLAN, ('recompute = "selective"', recompute)))
    return path, hieropt.load_instance(path)


def test_two_of_five_blocks_recomputed_simulate_as_predicted(tmp_path, astra_sim):
    bw = [300.0, 200.0]
    times = {}
    for name, text in (("none", 'recompute = "none"'), ("full", 'recompute = "full"'),
                       ("two", 'recompute = "full"\nrecompute_layers = 2')):
        (tmp_path / name).mkdir()
        path, inst = _predicted(tmp_path / name, text)
        times[name] = float(evaluate(inst, bw).iteration_time_ns)
    # every stage holds 5 blocks and recomputes 2: 2/5 of full recompute's extra time
    extra = (times["two"] - times["none"]) / (times["full"] - times["none"])
    assert extra == pytest.approx(2 / 5, rel=1e-4)
    bundle = tmp_path / "bundle"
    r = run("export", tmp_path / "two" / "inst.toml", "--astra-sim", bundle, "--bw", "300,200")
    assert r.exit_code == 0, r.output
    assert json.loads((bundle / "bundle.json").read_text())["bw_gbps"] == bw
    out = subprocess.run([str(bundle / "run.sh"), str(astra_sim)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-500:]
    simulated = float(max(int(x[2]) for x in CYCLES.finditer(out.stdout)))
    # (2,607,460,259 cycles against 2,607,424,756 ns predicted: 1.4e-5)
    assert simulated == pytest.approx(times["two"], rel=1e-3)
