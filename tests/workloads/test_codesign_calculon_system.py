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
docs/validation.md. The 1T model at FP16 on the same system: spaces/codesign-1t-calculon-a100.toml.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.io.codesign import load_codesign
from hieropt.studies.codesign.search import codesign

ROOT = Path(__file__).resolve().parents[2]


def _solved_fastest_first(space: str) -> list[dict]:
    """The rows of every plan that fits in ``space`` (a path below the repository), unpruned and
    solved, fastest first."""
    rows: list[dict] = []
    codesign(load_codesign(ROOT / space), on_row=rows.append, workers=1, prune=False)
    return sorted((r for r in rows if r["status"] == "optimal"),
                  key=lambda r: r["iteration_time_ns"])


@pytest.mark.heavy
def test_the_pick_keeps_tp_inside_the_node():
    solved = _solved_fastest_first("spaces/codesign-gpt3-calculon-a100.toml")
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


@pytest.mark.heavy
def test_the_1t_pick_is_within_calculons_best_three():
    """The 1T model at FP16 (models/megatron-1t.toml, 2-byte gradients) on the same system
    (spaces/codesign-1t-calculon-a100.toml; 141 plans fit, timed unpruned in 6 s on an idle
    machine): the best plan is TP 8 x PP 16 x DP 32, 2 virtual stages, selective recompute,
    sequence parallel, micro-batch 1 (50.386 s), then TP 8 x PP 32 x DP 16 with the same
    settings (50.972 s, +1.2 %); the fastest TP 16 plan (TP 16 x PP 16 x DP 16, 2 virtual
    stages, no recompute) is 9.6 % slower. Calculon (at caa4b11, a100_80g, megatron-1T.json,
    float16, ZeRO-1 sharding, batch 3,072; 119 of the 141 plans within its 80 GiB) ranks the
    pick 3rd, 0.70 % behind its best, which is hieropt's 2nd: the output layer, which hieropt
    runs on the last stage and Calculon leaves out, is twice the share of a stage's compute at
    PP 32 as at PP 16 (docs/validation.md)."""
    solved = _solved_fastest_first("spaces/codesign-1t-calculon-a100.toml")
    assert len(solved) == 141
    key = [
        (
            r["tp"],
            r["pp"],
            r["dp"],
            r["virtual_stages"],
            r["micro_batch_size"],
            r["recompute"],
            r["sequence_parallel"],
        )
        for r in solved[:2]
    ]
    assert key == [(8, 16, 32, 2, 1, "selective", True), (8, 32, 16, 2, 1, "selective", True)]
    best = solved[0]["iteration_time_ns"]
    assert best == pytest.approx(50.386e9, rel=0.02)
    assert solved[1]["iteration_time_ns"] == pytest.approx(1.0116 * best, rel=0.004)
    tp16 = next(r for r in solved if r["tp"] == 16)
    assert (tp16["pp"], tp16["dp"], tp16["virtual_stages"]) == (16, 16, 2)
    assert tp16["recompute"] == "none"
    assert tp16["iteration_time_ns"] > 1.08 * best
