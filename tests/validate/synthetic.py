"""Synthetic runs of the tiny LLM (tests/validate/tiny.py) whose measured times are the model's own
predictions under given calibration values, for the fit and check tests."""

from __future__ import annotations

from pathlib import Path

from hieropt.io.runs import read_runs
from hieropt.studies.validate import predict_ms

from .tiny import MODEL, write_case

HEADER = "model,network,bw_gbps,dp,global_batch_size,micro_batch_size,measured_ms,group"
"""A runs file's header with the plan's columns (dp, global and micro batch) and a group."""
PLANS = [("10", 2, 4, 1), ("20", 2, 8, 2), ("5", 4, 16, 1), ("40", 4, 32, 4)]
"""The synthetic runs: (GB/s, dp, global batch, micro batch)."""


def synthetic(folder: Path, truth: tuple[str, ...], model: str = MODEL) -> Path:
    """A runs file whose measured times are the model's own predictions with ``truth``."""
    rows = [f"tiny.toml,net.toml,{bw},{dp},{gbs},{mb},1,g" for bw, dp, gbs, mb in PLANS]
    path = write_case(folder, rows, HEADER, model)
    times = [predict_ms(r, truth) for r in read_runs(path)]
    rows = [f"tiny.toml,net.toml,{bw},{dp},{gbs},{mb},{t!r},g"
            for (bw, dp, gbs, mb), t in zip(PLANS, times, strict=True)]
    return write_case(folder, rows, HEADER, model)
