"""The tiny LLM of the hand-computed tests (see test_llm_block.py for its numbers)."""

from __future__ import annotations

from hieropt.workloads.llm import NPU, Architecture, LLMParams, Plan

ARCH = dict(
    name="tiny",
    layers=4,
    hidden_size=8,
    heads=4,
    kv_heads=2,
    ffn_size=16,
    gated_ffn=True,
    vocab_size=32,
    sequence_length=4,
    norm="rmsnorm",
    biases=False,
    dropout=False,
    position_embedding="rotary",
    tied_embeddings=False,
)
PLAN = dict(tp=2, pp=2, dp=2, micro_batch_size=2, global_batch_size=16, vocab_pad_multiple=1)
NPU1 = NPU(peak_tflops=1.0, efficiency=1.0, hbm_gib=1.0)


def params(arch=None, **plan) -> LLMParams:
    """TINY with architecture and plan fields overridden."""
    return LLMParams(
        model=Architecture(**{**ARCH, **(arch or {})}), plan=Plan(**{**PLAN, **plan}), npu=NPU1
    )
