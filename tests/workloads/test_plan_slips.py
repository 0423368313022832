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


def _slips(tmp_path, *overrides):
    path = tmp_path / "m.toml"
    path.write_text(INLINE, encoding="utf-8")
    return [n for n in plan_caveats(read_llm(path, overrides)) if "peak" not in n
            and "weight_bytes" not in n and not n.startswith("the model file states none")]


def test_wrong_unit_values_are_noted_with_the_slip(tmp_path):
    """Each likely slip gets one note naming it; the tiny model (h 8, FFN 16, 4 blocks, 4 tokens
    per sequence, 2 x 4 = 8 tokens per iteration) none: a sequence of 8 tokens at hidden size
    1,024 (FFN 4,096); 2 x 2^26 = 134,217,728 tokens per iteration (> 1e8: 2^25 sequences of 4,
    tokens typed as sequences: 2^25 / 4 = 8,388,608 sequences); FFN 8 below hidden 16; 600
    blocks."""
    assert _slips(tmp_path) == []
    (seq,) = _slips(tmp_path, "hidden_size=1024", "ffn_size=4096", "sequence_length=8")
    assert seq.startswith("sequence_length = 8 tokens is short for a model of hidden size 1,024")
    (batch,) = _slips(tmp_path, "global_batch_size=33554432")
    assert batch.startswith("global_batch_size = 33,554,432 sequences of 4 tokens is 1.34e+08 "
                            "tokens per iteration")
    assert "(33,554,432 tokens = 8,388,608 sequences)" in batch
    (ffn,) = _slips(tmp_path, "hidden_size=16", "ffn_size=8")
    assert ffn.startswith("ffn_size = 8 is below hidden_size = 16")
    (layers,) = _slips(tmp_path, "layers=600")
    assert layers.startswith("layers = 600 blocks, more than 512")


def test_hbm_in_gb_on_a_catalog_part_is_refused(tmp_path):
    """hbm_gib = 85.9 on the catalog H100 (80 GiB = 85.899 GB): the GB figure typed as GiB:
    refused naming the field and the GiB figure; 80 loads."""
    import pytest

    from hieropt.errors import InputError

    text = INLINE.replace('number_format = "fp8"\npeak_tflops = 4500.0\nhbm_gib = 180.0\n',
                          'accelerator = "H100-SXM"\nhbm_gib = 85.9\n')
    with pytest.raises(InputError, match=r"params\.npu\.hbm_gib: 85\.9 GiB is the H100-SXM's "
                                         r"80 GiB in GB .*fix: give GiB .*hbm_gib = 80"):
        _notes(tmp_path, text)
    with pytest.raises(InputError, match=r"--set: hbm_gib=85\.9: 85\.9 GiB is"):
        _notes(tmp_path, text.replace("85.9", "80"), "hbm_gib=85.9")
    assert _notes(tmp_path, text.replace("85.9", "80"))[0].npu.hbm_gib == 80


def test_one_rule_for_hbm_given_on_a_catalog_part(tmp_path):
    """The part's own capacity in another unit is refused (80 GiB = 85.899 GB = 85,899 MB =
    81,920 MiB); any other figure is a what-if, taken as given (96 above the part's 80, 60
    below it); without a catalog part a figure above 16 TiB is refused as MiB."""
    import pytest

    from hieropt.errors import InputError

    text = INLINE.replace('number_format = "fp8"\npeak_tflops = 4500.0\nhbm_gib = 180.0\n',
                          'accelerator = "H100-SXM"\nhbm_gib = 80\n')
    for value, unit in (("85.9", "GB (1e9 bytes)"), ("85899", "MB (1e6 bytes)"),
                        ("81920", "MiB (2^20 bytes)")):
        with pytest.raises(InputError) as e:
            _notes(tmp_path, text, f"hbm_gib={value}")
        assert str(e.value) == (
            f"--set: hbm_gib={value}: {value} GiB is the H100-SXM's 80 GiB in {unit}, not GiB "
            "(another capacity is taken as a what-if; this one is the part's own in the wrong "
            "unit); fix: give GiB (2^30 bytes): hbm_gib = 80, or leave it out (the catalog's)")
    for value in (96, 60):
        assert _notes(tmp_path, text, f"hbm_gib={value}")[0].npu.hbm_gib == value
    with pytest.raises(InputError, match=r"hbm_gib: 20000 GiB of HBM per NPU is 20 TiB, above 16 "
                                         r"TiB: a capacity in MiB rather than GiB\?; fix: give "
                                         r"GiB \(2\^30 bytes\), e.g. 19.53 for 20000 MiB"):
        _notes(tmp_path, INLINE.replace("hbm_gib = 180.0", "hbm_gib = 20000"))


def test_a_file_stating_no_architecture_field_is_told_the_defaults(tmp_path):
    """A model file giving only the required fields is timed as a GPT (GeLU FFN, LayerNorm,
    biases, dropout, learned positions, tied embeddings, no FlashAttention): one note lists the
    defaults taken; stating any one of them (rmsnorm here) silences it; no FlashAttention is
    listed when the plan states it."""
    path = tmp_path / "m.toml"
    path.write_text(INLINE, encoding="utf-8")
    (note,) = [n for n in plan_caveats(read_llm(path)) if n.startswith("the model file")]
    assert note.startswith(
        "the model file states none of the architecture fields and takes GPT-3's defaults: "
        'gated_ffn = false, norm = "layernorm", biases = true, dropout = true, '
        'position_embedding = "learned", tied_embeddings = true, flash_attention = false (plan); '
        "a Llama-style model gives gated_ffn = true")
    path.write_text(INLINE.replace("sequence_length = 4\n",
                                   'sequence_length = 4\nnorm = "rmsnorm"\n'), encoding="utf-8")
    assert not [n for n in plan_caveats(read_llm(path)) if n.startswith("the model file")]
    path.write_text(INLINE.replace("[params.plan]\n", "[params.plan]\nflash_attention = true\n"),
                    encoding="utf-8")
    (note,) = [n for n in plan_caveats(read_llm(path)) if n.startswith("the model file")]
    assert "tied_embeddings = true; a Llama-style" in note


def test_overlap_grad_reduce_under_interleaving_is_noted():
    """overlap_grad_reduce is modelled under 1F1B only: with v = 2 chunks the DP collectives are
    counted exposed, and the plan says so; under 1F1B no such note."""
    from .tiny import params

    note = ("overlap_grad_reduce with the interleaved schedule (v = 2): the model does not overlap "
            "the DP gradient reduction under interleaving")
    inter = params(schedule="interleaved", virtual_stages=2, overlap_grad_reduce=True)
    assert [n for n in plan_caveats(inter) if n.startswith(note)]
    plain = params(overlap_grad_reduce=True)
    assert not [n for n in plan_caveats(plain) if n.startswith("overlap_grad_reduce")]
