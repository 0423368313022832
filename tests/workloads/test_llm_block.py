"""LLM generator and memory model: FLOPs, bytes and memory of one block for every feature, computed
by hand.

TINY: b = 2 sequences, s = 4 tokens (n = b s = 8), h = 8, a = 4 heads of d = 2, g = 2 KV heads
(GQA), SwiGLU FFN f = 16 (m = 3 matrices), vocabulary 32 (no padding), 4 layers, RMSNorm (h params),
no biases, no dropout, rotary positions, untied embeddings; TP 2, PP 2, DP 2 (8 NPUs), micro-batch
2, global batch 16 (m = 4 micro-batches); 1 TFLOP/s at efficiency 1 (1 FLOP = 1e-3 ns); 2-byte
activations and weights, 4-byte gradients (g, the default of bf16 training: an FP32 reduction),
K = 12. Per NPU: a_t = 2, g_t = 1, q_t = a_t d = 4, kv_t = 2,
f_t = 8, V_t = 16. Formulas: Narayanan et al. 2021 (FLOPs), Korthikanti et al. 2022 (activations,
sequence parallelism, recompute), Rajbhandari et al. 2020 (ZeRO); as stated in
hieropt/workloads/llm/{counts,step}.py and hieropt/model/memory.py.
"""

from __future__ import annotations

import pytest

from hieropt.model.memory import (
    attention_activation_bytes,
    ffn_activation_bytes,
    memory,
    moe_activation_bytes,
    stage_activation_bytes,
)
from hieropt.workloads.llm import NPU, MoE, Plan, build_step
from hieropt.workloads.llm.counts import (
    attention_flops,
    attention_params,
    ffn_flops,
    ffn_params,
    moe_flops,
)

from .tiny import PLAN, params


def comms(op, phase=None):
    return [(c.group, c.kind, c.size_bytes) for c in op.comms if phase is None or c.phase == phase]


def op(step, name):
    return next(o for st in step.stages for o in st.ops if o.name == name)


# ------------------------------------------------------------------------------------ FLOPs, params
def test_gqa_attention_flops_and_params():
    # projections 2 n h (q_t + 2 kv_t) + 2 n q_t h = 2*8*8*(4+4) + 2*8*4*8 = 1024 + 512 = 1536
    # core 4 b s^2 q_t = 4*2*16*4 = 512; forward 2048, input grad 1536 + 2*512 = 2560, weight grad
    # 1536
    assert attention_flops(params()) == (2048, 2560, 1536)
    # multi-head (g = 4, kv_t = 4): 2*8*8*12 + 512 = 2048 = 8 b s h^2 / t of Narayanan et al.; +
    # core 512
    assert attention_flops(params({"kv_heads": None})) == (2048 + 512, 2048 + 1024, 2048)
    # params: h (q_t + 2 kv_t) + q_t h + norm h = 64 + 32 + 8 = 104
    assert attention_params(params()) == 104
    # TP 4 > g = 2: one replicated KV head per NPU (kv_t = 2), q_t = 2: 8*(2+4) + 16 + 8 = 72
    assert attention_params(params(tp=4, dp=1, global_batch_size=8)) == 72


def test_swiglu_ffn_flops_and_params():
    # gated: 2 m n h f_t = 2*3*8*8*8 = 3072 per phase; params m h f_t + h = 192 + 8 = 200
    assert ffn_flops(params(), 8) == (3072, 3072, 3072)
    assert ffn_params(params(), 8) == 200
    # GeLU (m = 2): 2048 per phase, params 128 + 8; with biases (m-1) f_t + h = 8 + 8 more, and a
    # LayerNorm (2h)
    assert ffn_flops(params({"gated_ffn": False}), 8) == (2048, 2048, 2048)
    assert (
        ffn_params(params({"gated_ffn": False, "biases": True, "norm": "layernorm"}), 8)
        == 128 + 16 + 16
    )


def test_stage_layout_and_compute_ns():
    st = build_step(params())
    assert [o.name for o in st.stages[0].ops] == ["embed", "attn1", "mlp1", "attn2", "mlp2"]
    assert [o.name for o in st.stages[1].ops] == ["attn3", "mlp3", "attn4", "mlp4", "output"]
    # stage 1 per micro-batch: 2 blocks (2048 + 3072) forward; output layer 2 n h V_t = 2*8*8*16 =
    # 2048 per phase
    fwd, bwd = st.compute_ns(1)
    assert fwd == pytest.approx((2 * (2048 + 3072) + 2048) * 1e-3)
    assert bwd == pytest.approx((2 * (2560 + 1536 + 3072 * 2) + 2 * 2048) * 1e-3)


# ---------------------------------------------------------------------------------------- TP and SP
def test_tp_without_sequence_parallelism():
    # all-reduce of n h e = 8*8*2 = 128 bytes after the block (forward) and before it (input
    # gradient)
    a = op(build_step(params()), "attn1")
    assert comms(a, "forward") == [("tp", "ALLREDUCE", 128)]
    assert comms(a, "input_grad") == [("tp", "ALLREDUCE", 128)]


def test_sequence_parallel_collectives():
    # all-gather of the shard 128 / t = 64 and reduce-scatter of 128 in the forward; conjugates and
    # the second all-gather (the split input gathered again for the weight gradient) in the input
    # gradient
    a = op(build_step(params(sequence_parallel=True)), "mlp1")
    assert comms(a, "forward") == [("tp", "ALLGATHER", 64), ("tp", "REDUCESCATTER", 128)]
    assert comms(a, "input_grad") == [
        ("tp", "ALLGATHER", 64),
        ("tp", "REDUCESCATTER", 128),
        ("tp", "ALLGATHER", 64),
    ]


def test_sequence_parallel_activations():
    # attention: 2 n h e / T + n (q_t + 2 kv_t) e + n q_t e + a_t b s^2 e = 256/T + 128 + 64 + 128
    assert attention_activation_bytes(params()) == 576
    assert attention_activation_bytes(params(sequence_parallel=True)) == 448
    # SwiGLU FFN: 2 n h e / T + 2 n f_t e (gate, up) + n f_t e (FC2 input) = 256/T + 256 + 128
    assert ffn_activation_bytes(params()) == 640
    assert ffn_activation_bytes(params(sequence_parallel=True)) == 512


def test_gpt_block_activations_are_korthikanti():
    # GPT-style block (q = kv = h, f = 4h, GeLU, dropout): s b h (10 + 24/t + 5 a s / (h t)) without
    # and s b h (34/t + 5 a s / (h t)) with sequence parallelism (Korthikanti et al. 2022, Table 2)
    arch = {"kv_heads": None, "ffn_size": 32, "gated_ffn": False, "dropout": True, "heads": 4}
    for sp, expect in (
        (False, 64 * (10 + 24 / 2 + 5 * 4 * 4 / 16)),
        (True, 64 * (34 / 2 + 5 * 4 * 4 / 16)),
    ):
        p = params(arch, sequence_parallel=sp)
        assert attention_activation_bytes(p) + ffn_activation_bytes(p) == pytest.approx(expect)
        # selective recompute leaves out 5 a s^2 b / t
        sel = attention_activation_bytes(p, core=False) + ffn_activation_bytes(p)
        assert sel == pytest.approx(expect - 5 * 4 * 16 * 2 / 2)


# ---------------------------------------------------------------------------------------- recompute
def test_recompute_flops_and_collectives():
    none, sel, full = (build_step(params(recompute=r)) for r in ("none", "selective", "full"))
    assert op(none, "attn1").recompute_flops == 0
    assert op(sel, "attn1").recompute_flops == 512  # the attention core 4 b s^2 q_t
    assert op(sel, "mlp1").recompute_flops == 0
    assert op(full, "attn1").recompute_flops == 2048 and op(full, "mlp1").recompute_flops == 3072
    assert comms(op(full, "attn1"), "input_grad") == [
        ("tp", "ALLREDUCE", 128),
        ("tp", "ALLREDUCE", 128),
    ]
    sp_full = build_step(params(recompute="full", sequence_parallel=True))
    assert comms(op(sp_full, "attn1"), "input_grad") == [
        ("tp", "ALLGATHER", 64),
        ("tp", "REDUCESCATTER", 128),
        ("tp", "ALLGATHER", 64),
        ("tp", "REDUCESCATTER", 128),
    ]


def test_recompute_activation_memory():
    # 1F1B in flight: stage 0 min(m, p) = 2, stage 1 1; block 576 + 640 = 1216 (selective: 1216 -
    # 128 = 1088) output layer (last stage): 2 n h e + n V_t 4 = 256 + 512 = 768; embedding stores
    # nothing (no dropout)
    for mode, s0, s1 in (
        ("none", 2 * 2 * 1216, 2 * 1216 + 768),
        ("selective", 2 * 2 * 1088, 2 * 1088 + 768),
        # full: 2 blocks x checkpoint n h e = 128 x in flight, + one block's 1216 recomputed
        ("full", 2 * 128 * 2 + 1216, 2 * 128 * 1 + 1216 + 768),
    ):
        p = params(recompute=mode)
        st = build_step(p)
        assert stage_activation_bytes(p, st, 0) == s0, mode
        assert stage_activation_bytes(p, st, 1) == s1, mode
    # full recompute with sequence parallelism: the checkpoint is split over TP (64), the working
    # block too
    p = params(recompute="full", sequence_parallel=True)
    assert stage_activation_bytes(p, build_step(p), 0) == 2 * 64 * 2 + 448 + 512


# --------------------------------------------------------------------------------------------- ZeRO
# stage 0 dense parameters per NPU: embedding V_t h = 128, 2 x (attention 104 + FFN 200) = 736;
# largest layer 200
@pytest.mark.parametrize("zero, weights, grads, optimizer", [
    # (weights w = 2 bytes, gradients g = 4 bytes per parameter)
    (0, 736 * 2, 736 * 4, 736 * 12),
    (1, 736 * 2, 736 * 4, 736 * 12 / 2),
    # + one layer's full gradient before its reduce-scatter
    (2, 736 * 2, 736 * 4 / 2 + 200 * 4, 736 * 12 / 2),
    # + 2 gathered layers (current, prefetched)
    (3, 736 * 2 / 2 + 2 * 200 * 2, 736 * 4 / 2 + 200 * 4, 736 * 12 / 2),
])
def test_zero_memory(zero, weights, grads, optimizer):
    m = memory(params(zero_stage=zero)).stages[0]
    assert (m.weights_bytes, m.gradients_bytes, m.optimizer_bytes) == (weights, grads, optimizer)


def test_zero_collectives_and_phases():
    # attention layer: 104 parameters, gradients 104 * 4 = 416 bytes, weight shard 104 * 2 / dp =
    # 104 bytes
    expect = {
        0: {"weight_grad": [("dp", "ALLREDUCE", 416)]},
        1: {"weight_grad": [("dp", "REDUCESCATTER", 416), ("dp", "ALLGATHER", 104)]},
        2: {
            "input_grad": [("dp", "REDUCESCATTER", 416)],
            "weight_grad": [("dp", "ALLGATHER", 104)],
        },
        3: {
            "forward": [("dp", "ALLGATHER", 104)],
            "input_grad": [("dp", "ALLGATHER", 104), ("dp", "REDUCESCATTER", 416)],
        },
    }
    for zero, phases in expect.items():
        a = op(build_step(params(zero_stage=zero)), "attn1")
        for phase in ("forward", "input_grad", "weight_grad"):
            got = [c for c in comms(a, phase) if c[0] == "dp"]
            assert got == phases.get(phase, []), (zero, phase)


def test_optimizer_step_time():
    # (2 K + g + w) = 24 + 4 + 2 = 30 bytes per parameter at 1 GB/s: attention 104 params ->
    # 3120 ns; ZeRO 1 halves it
    p = params().model_copy(
        update={"npu": NPU(peak_tflops=1.0, efficiency=1.0, hbm_gib=1.0, hbm_gbps=1.0)}
    )
    assert op(build_step(p), "attn1").update_ns == 3120
    p1 = p.model_copy(update={"plan": Plan(**{**PLAN, "zero_stage": 1})})
    assert op(build_step(p1), "attn1").update_ns == 1560


# ----------------------------------------------------------------------------------------------- EP
MOE = {"moe": MoE(experts=4, top_k=2, expert_ffn_size=8)}


def test_moe_flops_params_and_alltoall():
    p = params(MOE, ep=2)
    # router 2 n h E = 512; routed copies r = n k = 16; experts 2 m r h f_e/t = 2*3*16*8*4 = 3072
    assert moe_flops(p) == (3584, 3584, 3584)
    st = build_step(p)
    moe = op(st, "moe1")
    # dense: router h E = 32 + norm 8 = 40; experts: E/ep = 2 local experts x m h f_e/t = 96 -> 192
    assert (moe.dense_params, moe.expert_params) == (40, 192)
    # dispatch and combine all-to-all of r h e = 256 bytes; TP all-reduce on the routed tokens 256
    # bytes
    assert comms(moe, "forward") == [
        ("ep", "ALLTOALL", 256),
        ("ep", "ALLTOALL", 256),
        ("tp", "ALLREDUCE", 256),
    ]
    assert comms(moe, "input_grad")[:2] == [("ep", "ALLTOALL", 256), ("ep", "ALLTOALL", 256)]
    # dense parameters all-reduced over dp = 2 (40 x 4 = 160 bytes); experts over edp = dp/ep = 1:
    # none
    assert comms(moe, "weight_grad") == [("dp", "ALLREDUCE", 160)]
    # activations: 2 n h e + n E e + 2 r h e + 2 r f_e/t e + r f_e/t e = 256 + 64 + 512 + 256 + 128
    assert moe_activation_bytes(p) == 1216
    # with sequence parallelism each TP rank dispatches its n/t tokens: 128 bytes
    sp = op(build_step(params(MOE, ep=2, sequence_parallel=True)), "moe1")
    assert [c for c in comms(sp, "forward") if c[0] == "ep"] == [("ep", "ALLTOALL", 128)] * 2


def test_expert_gradients_over_expert_dp():
    # edp = 2: expert gradients 192 * 4 bytes all-reduced there
    p = params(MOE, ep=2, dp=4, global_batch_size=32)
    assert ("edp", "ALLREDUCE", 768) in comms(op(build_step(p), "moe1"), "weight_grad")


# -------------------------------------------------------------------------------------- pipeline, v
def test_pipeline_sends():
    st = build_step(params(scatter_gather_sends=False))
    # stage 0's last layer sends n h e = 128 forward; stage 1's first receives it and sends the
    # gradient back
    assert ("pp", "P2P", 128) in comms(op(st, "mlp2"), "forward")
    assert ("pp", "P2P", 128) in comms(op(st, "attn3"), "input_grad")
    assert not [c for c in comms(op(st, "output")) if c[0] == "pp"]
    # scatter-gather (the default, tp 2 without SP): each NPU sends n h e / t = 64 B and the
    # receiver all-gathers the 64 B shard over TP (the forward at stage 1's first layer, the
    # gradient at stage 0's last)
    st = build_step(params())
    assert ("pp", "P2P", 64) in comms(op(st, "mlp2"), "forward")
    assert ("tp", "ALLGATHER", 64) in comms(op(st, "mlp2"), "input_grad")
    assert ("pp", "P2P", 64) in comms(op(st, "attn3"), "input_grad")
    assert ("tp", "ALLGATHER", 64) in comms(op(st, "attn3"), "forward")
    # with sequence parallelism the activation is split already: n h e / t, no extra all-gather
    sp = build_step(params(sequence_parallel=True))
    assert ("pp", "P2P", 64) in comms(op(sp, "mlp2"), "forward")
    assert len(comms(op(sp, "attn3"))) == len(comms(op(build_step(params(
        sequence_parallel=True, scatter_gather_sends=False)), "attn3")))


def test_interleaved_schedule():
    p = params(schedule="interleaved", virtual_stages=2)
    st = build_step(p)
    # 4 chunks of 1 block: stage 0 holds blocks 1 and 3, stage 1 blocks 2 and 4
    assert [o.name for o in st.stages[0].ops] == ["embed", "attn1", "mlp1", "attn3", "mlp3"]
    # in flight (2 (p - r - 1) + (v - 1) p + 1) / v: stage 0 (2 + 2 + 1)/2 = 2.5, stage 1 1.5;
    # Korthikanti et al.: the first stage holds L (1 + (p - 1)/(p v)) = 4 x 1.25 = 5 layers' worth =
    # 2 blocks x 2.5
    assert [s.in_flight for s in st.stages] == [2.5, 1.5]
    assert stage_activation_bytes(p, st, 0) == 2 * 1216 * 2.5
    sends = [(c.phase, o.name) for o in st.stages[0].ops for c in o.comms if c.group == "pp"]
    assert sends == [("forward", "mlp1"), ("input_grad", "attn3"), ("forward", "mlp3")]
    sends = [(c.phase, o.name) for o in st.stages[1].ops for c in o.comms if c.group == "pp"]
    assert sends == [("input_grad", "attn2"), ("forward", "mlp2"), ("input_grad", "attn4")]


def test_uneven_stages():
    st = build_step(params(stage_layers=(1, 3)))
    assert [o.name for o in st.stages[0].ops] == ["embed", "attn1", "mlp1"]
    assert st.stages[1].blocks == 3


def test_tied_embeddings_exchange():
    # tied with pp > 1: the last stage keeps a copy (norm 8 + V_t h 128) and both ends exchange V_t
    # h g = 16 x 8 x 4 = 512 bytes
    st = build_step(params({"tied_embeddings": True}))
    assert op(st, "output").dense_params == 136
    assert ("pp", "P2P", 512) in comms(op(st, "embed"), "weight_grad")
    assert ("pp", "P2P", 512) in comms(op(st, "output"), "weight_grad")
    one = build_step(params({"tied_embeddings": True}, pp=1, global_batch_size=4))
    assert op(one, "output").dense_params == 8  # one stage: one matrix, counted in the embedding


def test_memory_report_fits_and_says_by_how_much():
    p = params(zero_stage=0)
    rep = memory(p)
    assert rep.fits  # a few kB of 1 GiB
    small = p.model_copy(update={"npu": NPU(peak_tflops=1.0, efficiency=1.0, hbm_gib=1e-5)})
    rep = memory(small)
    assert not rep.fits
    assert rep.over_bytes == pytest.approx(rep.peak.total_bytes - 1e-5 * 2**30)
    assert "does not fit" in rep.message() and "more than" in rep.message()
