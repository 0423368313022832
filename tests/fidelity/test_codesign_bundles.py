"""Co-design answers through the simulator: ``codesign --write-instances`` -> ``export --astra-sim``
-> ASTRA-sim.

Three small spaces on 64 NPUs (FullyConnected 8 x Switch 8, ``dimension_mode = "sequential"``, the
mode one chunk per collective reproduces): a GPT-3-shaped model of 8 layers under 1F1B, the same
interleaved (v = 2), and a Mixtral-shaped model of 4 layers with expert parallelism. For the top 3
candidates of each, the simulated iteration (the slowest NPU) is within 3 % of the time the
candidate was solved for, and the simulator ranks them as the search did. Pipelined 1F1B plans are
also held against the closed composition Σ_r t_r + (m - 1) max_r t_r + W (t_r stage r's micro-batch
slot time and W the per-iteration tail, both from hieropt's model of each stage), to 0.1 %, and
interleaved plans against hieropt's schedule graph of their chunks (hieropt/model/schedule_dag.py),
to 0.01 %. """

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import hieropt
from hieropt.model.timing import evaluate
from tests.cli.util import run
from tests.fidelity.bundles import CYCLES, GPT, MOE, SPACE, composed

SPACES = {
    "1f1b": (GPT, "tp = [2, 4, 8]\npp = [2, 4]"),
    "interleaved": (GPT, "tp = [2, 4]\npp = [2, 4]\nvirtual_stages = [2]"),
    "moe": (MOE, "tp = [1, 2, 4]\npp = [1, 2]\nep = [2, 4, 8]"),
}


def _simulate(bundle: Path, binary: Path) -> float:
    """The bundle's iteration time on the simulator (its run.sh), ns: the slowest NPU."""
    r = subprocess.run(
        [str(bundle / "run.sh"), str(binary)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr[-500:]
    cycles = [int(m[2]) for m in CYCLES.finditer(r.stdout)]
    assert len(cycles) == 64
    return float(max(cycles))


@pytest.mark.parametrize("which", list(SPACES))
def test_best_candidates_simulated_as_predicted(which, tmp_path, astra_sim):
    (model, sets), plans = SPACES[which]
    space = tmp_path / "space.toml"
    space.write_text(SPACE.format(name=f"small-{which}", model=model, sets=sets, plans=plans))
    r = run("codesign", space, "--top", "3", "--write-instances", tmp_path / "answers")
    assert r.exit_code == 0, r.output
    files = sorted(
        (tmp_path / "answers").glob("*.toml"), key=lambda p: int(p.stem.rsplit("-", 1)[1])
    )
    assert len(files) == 3
    rows = []
    for k, f in enumerate(files):
        bundle = tmp_path / f"bundle{k}"
        r = run("export", f, "--astra-sim", bundle)
        assert r.exit_code == 0, r.output
        inst = hieropt.load_instance(f)
        bw = json.loads((bundle / "bundle.json").read_text())["bw_gbps"]
        predicted = float(evaluate(inst, bw).iteration_time_ns)  # the mode solved (sequential)
        simulated = _simulate(bundle, astra_sim)
        assert abs(simulated - predicted) <= 0.03 * simulated, (f.name, simulated, predicted)
        if inst.step.stages > 1 and inst.step.virtual_stages == 1:  # 1F1B to 0.1 %
            expected = composed(inst, bw)
            assert abs(simulated - expected) <= 1e-3 * simulated, (f.name, simulated, expected)
        if inst.step.virtual_stages > 1:  # the graph, to 0.01 %
            assert abs(simulated - predicted) <= 1e-4 * simulated, (f.name, simulated, predicted)
        if inst.step.stages == 1:
            assert abs(simulated - predicted) <= 1e-3 * simulated, (f.name, simulated, predicted)
        rows.append((predicted, simulated, inst))
    assert [s for _, s, _ in rows] == sorted(s for _, s, _ in rows), rows  # the search's order kept
    if which == "interleaved":
        assert all(i.step.virtual_stages == 2 and i.step.stages > 1 for *_, i in rows)
    if which == "1f1b":
        assert any(i.step.stages > 1 for *_, i in rows)
    if which == "moe":
        assert rows[0][2].mapping.groups["ep"] != (1, 1)
