"""The pages that state when ``recompute_layers`` is refused say what the reader does: a count above
the model's blocks is refused, a stage or model chunk with fewer blocks recomputes all of its own
(Megatron-LM's block method), so a co-design plan whose chunks are shorter than the count stays
valid."""

from __future__ import annotations

import hieropt
from tests.cases import REPO

LLAMA_70B = REPO / "models" / "llama3-70b.toml"


def row(page: str, start: str) -> str:
    """The table row of ``page`` (under docs/) that begins with ``start``."""
    lines = (REPO / "docs" / page).read_text().splitlines()
    return next(line for line in lines if line.startswith(start))


def test_a_stage_shorter_than_the_count_recomputes_all_its_blocks():
    """80 blocks on 16 stages: 5 per stage, fewer than 8, so every block is recomputed, as ``full``
    without a count."""
    plan = ["recompute=full", "pp=16", "dp=32"]
    eight = hieropt.memory(hieropt.load_llm(LLAMA_70B, [*plan, "recompute_layers=8"]))
    assert eight == hieropt.memory(hieropt.load_llm(LLAMA_70B, plan))


def test_the_field_table_names_the_models_blocks_as_the_limit():
    text = row("llm-training.md", "| `recompute_layers` |")
    assert "largest chunk" not in text
    assert "above the model's blocks" in text


def test_the_codesign_plans_row_keeps_a_plan_with_shorter_chunks():
    text = row("codesign.md", "| `[plans]` |")
    assert "fewer blocks is invalid" not in text
    assert "recomputes all of its own" in text
