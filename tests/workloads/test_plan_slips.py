"""Model-file values that are likely slips get a note naming the slip (the plan still runs): an
inline NPU's peak used at another number format than the file states, FP8 weights (1 byte)
under 16-bit training, and values in the wrong unit."""

from __future__ import annotations

from hieropt.io.llm import read_llm
from hieropt.workloads.llm.flops import plan_caveats

INLINE = """generator = "llm"
[params.model]
name = "m"
layers = 4
hidden_size = 8
heads = 4
ffn_size = 16
vocab_size = 32
sequence_length = 4
[params.plan]
npus = 1
global_batch_size = 2
micro_batch_size = 1
[params.npu]
number_format = "fp8"
peak_tflops = 4500.0
hbm_gib = 180.0
efficiency = 0.5
[params.precision]
weight_bytes = 1
"""


def _notes(tmp_path, text=INLINE, *overrides):
    path = tmp_path / "m.toml"
    path.write_text(text, encoding="utf-8")
    p = read_llm(path, overrides)
    return p, [n for n in plan_caveats(p) if "peak" in n or "weight_bytes" in n]


def test_an_inline_peak_used_at_another_format_is_noted(tmp_path):
    """The file's FP8 peak of 4,500 TFLOP/s under --set number_format=bf16 stays 4,500 (the
    inline NPU has no catalog to take the BF16 peak from): noted, as FP8 weights under BF16;
    in the file's own format, or with the peak given too, neither peak note."""
    p, notes = _notes(tmp_path, INLINE, 'number_format="bf16"')
    assert p.npu.peak_tflops == 4500.0 and p.npu.peak_format == "fp8"
    assert notes[0].startswith("peak_tflops = 4500 is the model file's fp8 peak, used for bf16 "
                               "training")
    assert notes[1].startswith("weight_bytes = 1 (FP8 weights) under bf16 training")
    assert _notes(tmp_path)[1] == []
    p, notes = _notes(tmp_path, INLINE, 'number_format="bf16"', "peak_tflops=2250")
    assert p.npu.peak_format is None and [n for n in notes if "peak" in n] == []
