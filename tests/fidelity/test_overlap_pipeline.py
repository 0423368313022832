"""A pipelined plan with the gradient reduction overlapped (``overlap_grad_reduce = true``,
``step.overlap_dp``) simulates as hieropt's simulator mode times it.

The simulator queues a stage's send behind the collectives issued before it, whatever their
dimension: the last stage's final input-gradient send, which the first stage waits for, went after
the gradient collectives its last backward pass had issued, so the iteration took its time without
the overlap (1,685.93 ms against 1,689.68 ms, hieropt's simulator mode 1,612.83 ms). The export
starts a stage's gradient stream after its last backward send.

Llama 3.1 8B (validation/models/llama3-8b-h100.toml) at TP 2 x PP 2 x DP 4 with 16 sequences per
iteration (4 micro-batches) on Switch 2 x Switch 8, PP alone on the first dimension, TP and DP
on the second; every allocation within 1 % of the simulator mode.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

INSTANCE = """name = "l8-overlap-pp"
objective = "performance"
training_loop = "step"
workload = "model.toml"
constraints = ["bw[0] <= 450", "bw[1] <= 50"]
[network]
dims = [
  { block = "Switch", npus = 2, cost_class = "A" },
  { block = "Switch", npus = 8, cost_class = "B" },
]
[mapping.groups]
tp = [1, 2]
pp = [2, 1]
dp = [1, 4]
[cost.A]
link_usd_per_gbps = 1.0
switch_usd_per_gbps = 1.0
nic_usd_per_gbps = 0
[cost.B]
link_usd_per_gbps = 56.0
switch_usd_per_gbps = 93.75
nic_usd_per_gbps = 240.0
"""


def test_overlapped_gradients_of_a_pipeline_simulate_as_predicted(astra_sim, tmp_path):
    from tests.cli.util import run

    model = (REPO / "validation" / "models" / "llama3-8b-h100.toml").read_text()
    plan = "npus = 16\ntp = 2\ncp = 1\npp = 2\ndp = 4"
    for old, new in (("tp = 1\ncp = 2\npp = 1\ndp = 4", plan),
                     ("global_batch_size = 128", "global_batch_size = 16")):
        assert old in model
        model = model.replace(old, new)
    assert "overlap_grad_reduce = true" in model
    (tmp_path / "model.toml").write_text(model)
    inst = tmp_path / "inst.toml"
    inst.write_text(INSTANCE)
    out = tmp_path / "check.json"
    r = run("simulate", inst, "--astra-sim", astra_sim, "--tolerance", "0.1", "--json", out)
    assert r.exit_code in (0, 3), r.output
    rows = {a["name"]: a for a in json.loads(out.read_text())["allocations"]}
    equal = rows["equal"]
    assert equal["simulated_iteration_time_ns"] / 1e6 < 1_630.0
    for a in rows.values():  # (predicted_iteration_time_ns: hieropt in the simulator's mode)
        ratio = a["simulated_iteration_time_ns"] / a["predicted_iteration_time_ns"]
        assert abs(ratio - 1) < 0.01, (a["name"], ratio)


@pytest.mark.heavy
@pytest.mark.parametrize("gather", [True, False])
def test_parameter_gathers_after_the_step_simulate_as_predicted(astra_sim, tmp_path, gather):
    """The same model at TP 1 x PP 2 x DP 8 (32 sequences, 4 micro-batches; PP on the first
    dimension, DP on the second), ZeRO 1 with ``overlap_grad_reduce``: the all-gathers of the
    updated parameters run after the optimizer step (``overlap_param_gather = false``) or on their
    own stream through the next iteration's first forward (true, the model file's), the traces
    ordered as the model orders them. Every allocation within 1 % of the simulator mode in both,
    and the overlap saves at least 100 ms at the optimum (ASTRA-sim: 2,088.7 against 2,205.7 ms)."""
    from tests.cli.util import run

    model = (REPO / "validation" / "models" / "llama3-8b-h100.toml").read_text()
    flag = f"overlap_param_gather = {str(gather).lower()}"
    plan = "npus = 16\ntp = 1\ncp = 1\npp = 2\ndp = 8"
    for old, new in (("tp = 1\ncp = 2\npp = 1\ndp = 4", plan),
                     ("global_batch_size = 128", "global_batch_size = 32"),
                     ("overlap_param_gather = true", flag)):
        assert old in model
        model = model.replace(old, new)
    (tmp_path / "model.toml").write_text(model)
    inst = tmp_path / "inst.toml"
    inst.write_text(INSTANCE.replace("tp = [1, 2]", "tp = [1, 1]").replace("dp = [1, 4]",
                                                                           "dp = [1, 8]"))
    out = tmp_path / "check.json"
    r = run("simulate", inst, "--astra-sim", astra_sim, "--tolerance", "0.1", "--json", out)
    assert r.exit_code in (0, 3), r.output
    rows = {a["name"]: a for a in json.loads(out.read_text())["allocations"]}
    for a in rows.values():
        ratio = a["simulated_iteration_time_ns"] / a["predicted_iteration_time_ns"]
        assert abs(ratio - 1) < 0.01, (a["name"], ratio)
    simulated = rows["optimum"]["simulated_iteration_time_ns"] / 1e6
    assert (simulated < 2_105.0) if gather else (simulated > 2_200.0)
