"""Model files of the number-format tests: a small LLM whose NPU and precision lines are filled in
per test."""

from __future__ import annotations

MODEL = """generator = "llm"
[params.model]
name = "m"
layers = 2
hidden_size = 64
heads = 4
ffn_size = 256
vocab_size = 1024
sequence_length = 128
[params.plan]
tp = 1
pp = 1
dp = 8
micro_batch_size = 1
global_batch_size = 8
[params.npu]
accelerator = "A100"
{npu}
{precision}
"""
"""A small LLM on an A100 as a model file, with ``{npu}`` and ``{precision}`` for more lines of
[params.npu] and a [precision] table."""
