"""GPT-3 175B on Calculon's A100 system (NVLink 8 x HDR InfiniBand, 300;25 GB/s per GPU, fixed): the
co-design search keeps tensor parallelism inside the node (spaces/codesign-gpt3-calculon-a100.toml).

With the collectives of LLM plans run ``sequential`` over the dimensions (the NVLink part, then the
InfiniBand part), a TP group of 16 spanning two nodes pays its InfiniBand part on every layer; with
the roofline compute model the best plan is TP 8 x PP 16 x DP 32, interleaved (3 virtual stages),
sequence parallel, micro-batch 1, no recompute (5.489 s with the catalog's A100 default, fitted on
one node of measured runs; bf16, gradients reduced in FP32), and the fastest TP 16 plan (TP 16 x
PP 8 x DP 32) is 19.1 % slower. Calculon (Isaev et al., SC'23, at caa4b11, its a100_80g system and
gpt3-175B model, the 266 plans it accepts of the 271 that fit here) ranks that plan 2nd, 0.2 %
behind its best (TP 8 x PP 32 x DP 16, hieropt's 2nd), and the best TP 16 plan 101st (+108 %);
docs/validation.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.io.codesign import load_codesign
from hieropt.studies.codesign.search import codesign

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.heavy
def test_the_pick_keeps_tp_inside_the_node():
    rows: list[dict] = []
    codesign(
        load_codesign(ROOT / "spaces/codesign-gpt3-calculon-a100.toml"),
        on_row=rows.append,
        workers=1,
        prune=False,
    )
    solved = sorted(
        (r for r in rows if r["status"] == "optimal"), key=lambda r: r["iteration_time_ns"]
    )
    best = solved[0]
    assert (
        best["tp"],
        best["pp"],
        best["dp"],
        best["virtual_stages"],
        best["micro_batch_size"],
    ) == (8, 16, 32, 3, 1)
    assert (best["recompute"], best["sequence_parallel"]) == ("none", True)
    tp16 = next(r for r in solved if r["tp"] == 16)
    # (22.0 % with the kernel-level matrix efficiency: slower compute makes the TP group's fixed
    # InfiniBand time a smaller share)
    assert tp16["iteration_time_ns"] > 1.15 * best["iteration_time_ns"]
