"""Co-design spaces on 64 NPUs that the fidelity tests run through ASTRA-sim, the simulator's
per-NPU cycle lines, and hieropt's closed composition of a pipelined plan's stages
(tests/fidelity/test_codesign_bundles.py)."""

from __future__ import annotations

import re

from hieropt.io.astrasim_stages import stage_workloads
from hieropt.model.timing import evaluate
from tests.cases import REPO

SPACE = """name = "{name}"
model = "{model}"
set = {sets}
npus = 64
objective = "performance"
constraints = ["sum(bw) == 500"]
mapping_rule = "lowest"
dimension_mode = "sequential"
[plans]
{plans}
zero_stage = [1]
recompute = ["selective"]
sequence_parallel = [true]
micro_batch_size = [1]
[network]
dims = [{{ block = "FullyConnected", npus = 8, cost_class = "A" }},
        {{ block = "Switch", npus = 8, cost_class = "B" }}]
[cost.A]
link_usd_per_gbps = 1.0
[cost.B]
link_usd_per_gbps = 1.0
switch_usd_per_gbps = 1.0
nic_usd_per_gbps = 1.0
"""
"""A co-design space on 64 NPUs (FullyConnected 8 x Switch 8, sequential dimensions, sum(bw) ==
500): format fields ``name``, ``model`` (a model file), ``sets`` (its ``set`` list) and ``plans``
(the [plans] lines)."""


GPT = (
    REPO / "models" / "gpt3-175b-llm.toml",
    '["model.layers=8", "global_batch_size=64", "npus=64", "tp=2", "pp=2", "dp=16"]',
)
"""GPT-3's architecture with 8 layers (model file, ``set`` list for :data:`SPACE`)."""


MOE = (
    REPO / "models" / "mixtral-8x7b.toml",
    '["model.layers=4", "global_batch_size=64", "npus=64", "tp=2", "pp=2", "dp=16", "ep=4"]',
)
"""Mixtral's architecture with 4 layers and expert parallelism (model file, ``set`` list)."""


CYCLES = re.compile(r"sys\[(\d+)\] finished, (\d+) cycles")
"""ASTRA-sim's line for one NPU's end: its index and its cycle count (1 cycle = 1 ns)."""


def stage_slots(inst, bw) -> list[tuple[float, float]]:
    """(t_r, W_r) of every pipeline stage r by hieropt's model: the stage alone (one stage, v = 1)
    at 1 and at 2
    micro-batches, T(m) = m t_r + W_r."""
    out = []
    for w in stage_workloads(inst, inst.jobs[0]):
        one = w.model_copy(update={"more_stages": ()})
        times = []
        for m in (1, 2):
            st = inst.step.model_copy(update={"microbatches": m, "stages": 1, "virtual_stages": 1})
            times.append(
                float(
                    evaluate(
                        inst.model_copy(update={"workload": one, "step": st}), bw
                    ).iteration_time_ns
                )
            )
        out.append((times[1] - times[0], 2 * times[0] - times[1]))
    return out


def composed(inst, bw) -> float:
    """c Σ_r t_r + (m - c) max_r t_r + W_0, c = 1 / v for equal chunks (else the largest chunk's
    share of the fullest stage, ``step.fill_share``): 1F1B (v = 1) with blocking sends, and what
    the interleaved schedule measures here (the first stage finishes last; its tail W_0 ends the
    iteration)."""
    slots = stage_slots(inst, bw)
    t = [x for x, _ in slots]
    c = inst.step.fill_share
    return c * sum(t) + (inst.step.microbatches - c) * max(t) + slots[0][1]
