"""A tiny LLM, a one-dimension network and runs files written to a folder, for the validate tests.

The model (2 layers, h 64, 4 heads, FFN 256, vocabulary 128, 32 tokens per sequence, LayerNorm,
biases, learned positions, tied embeddings) trained data-parallel on 2 NPUs of 1 TFLOP/s at
efficiency 0.5, global batch 4 (2 micro-batches of 1 sequence per NPU), no recompute, no ZeRO.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.errors import InputError
from hieropt.io.runs import read_runs

MODEL = """generator = "llm"
[params.model]
name = "tiny"
layers = 2
hidden_size = 64
heads = 4
ffn_size = 256
vocab_size = 128
sequence_length = 32
[params.plan]
npus = 2
dp = 2
global_batch_size = 4
[params.npu]
name = "toy"
peak_tflops = 1.0
efficiency = 0.5
hbm_gib = 1.0
"""

NETWORK = """description = "two NPUs on a switch"
[network]
dims = [{ block = "Switch", npus = 2, cost_class = "x" }]
"""

HEADER = "model,network,bw_gbps,measured_ms"


def write_case(folder: Path, rows: list[str], header: str = HEADER, model: str = MODEL) -> Path:
    """tiny.toml, net.toml and runs.csv (``header`` and ``rows``) in ``folder``; returns the CSV."""
    (folder / "tiny.toml").write_text(model, encoding="utf-8")
    (folder / "net.toml").write_text(NETWORK, encoding="utf-8")
    path = folder / "runs.csv"
    path.write_text("\n".join(["# a comment line", header, *rows]) + "\n", encoding="utf-8")
    return path


def refused(path: Path) -> str:
    """The one-line error :func:`hieropt.io.runs.read_runs` refuses the runs file ``path`` with
    (the test fails when it reads the file)."""
    with pytest.raises(InputError) as e:
        read_runs(path)
    return e.value.one_line()


NET3 = """description = "pairs of NPUs, two pairs per board, two boards"
[network]
dims = [
  { block = "Switch", npus = 2, cost_class = "x" },
  { block = "Switch", npus = 2, cost_class = "y" },
  { block = "Switch", npus = 2, cost_class = "z" },
]
"""
"""A network file of three Switch dimensions of 2 NPUs (cost classes x, y, z)."""
