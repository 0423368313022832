"""The whole model's parameter count and model FLOPs per iteration, as ``workload plan`` prints
them, by hand on the tiny model (h 8, 4 heads of 2, 2 key/value heads, FFN 16, vocabulary 32,
4 blocks, sequence 4)."""

from __future__ import annotations

from hieropt.model.plan import plan_figures
from hieropt.report.plan import model_line
from hieropt.workloads.llm.flops import model_flops_per_iteration, model_parameters

from .tiny import params


def test_llama_style_parameters_and_flops_by_hand():
    """Attention 8 (8 + 2 x 4) + 8 x 8 + norm 8 = 200, gated FFN 3 x 8 x 16 + 8 = 392: 4 x 592 =
    2,368 in the blocks, + embedding 32 x 8 = 256, final norm 8, untied output 256 = 2,888.
    FLOPs per sequence: attention 2 s h (q + 2 kv) + 2 s q h + 4 s^2 q = 1,024 + 512 + 512 =
    2,048, FFN 2 x 3 s h f = 3,072, 4 blocks 20,480, logits 2 s h V = 2,048; x 3 x 16 sequences =
    1,081,344."""
    p = params()
    assert model_parameters(p) == 2888
    assert model_flops_per_iteration(p) == 1_081_344
    assert model_line(p).startswith("model: 0.00B parameters (2,888); 1.081e+06 model FLOPs")
    d = plan_figures(p).as_dict()
    assert list(d)[:3] == ["model", "parameters", "model_flops_per_iteration"]
    assert (d["parameters"], d["model_flops_per_iteration"]) == (2888, 1_081_344)


def test_gpt_style_parameters_by_hand():
    """LayerNorm (2h = 16), biases, learned positions, tied embeddings, ungated FFN: attention
    192 + norm 16 + biases 8 + 8 + 8 = 232, FFN 2 x 8 x 16 + 16 + biases 16 + 8 = 296: 4 x 528
    = 2,112, + embedding 256 + positions 4 x 8 = 32, final norm 16, tied output 0 = 2,416."""
    p = params(dict(norm="layernorm", biases=True, position_embedding="learned",
                    tied_embeddings=True, gated_ffn=False))
    assert model_parameters(p) == 2416
