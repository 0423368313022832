"""Full recompute of the first N blocks of each stage or model chunk (``recompute_layers``,
Megatron-LM's ``--recompute-method block --recompute-num-layers N``): hand-computed compute, FLOPs,
iteration time through hieropt's evaluator and memory of the tiny model (tests/workloads/tiny.py),
an uneven interleaved pipeline, the roofline model on the H100 8B validation model, and the
refusals.

The tiny model's numbers (per micro-batch of b s = 8 tokens on one NPU of TP 2, bf16, no dropout,
no FlashAttention): a block's forward is 2048 (attention: QKV 2 x 8 x 8 x (4 + 4) = 1024,
projection 2 x 8 x 4 x 8 = 512, core 4 x 2 x 16 x 4 = 512) + 3072 (gated FFN 6 x 8 x 8 x 8) = 5120
FLOP, 5.12 ns at 1 TFLOP/s; its stored activations 576 B (attention: norm and QKV inputs 8 x 8 x
(2 + 2) = 256, Q, K, V 8 x 8 x 2 = 128, projection input 8 x 4 x 2 = 64, scores 2 x 2 x 16 x 2 =
128) + 640 B (FFN: norm and FC1 inputs 256, gate and up outputs 2 x 8 x 8 x 2 = 256, FC2 input 8 x
8 x 2 = 128) = 1216 B; its checkpoint (input) 8 x 8 x 2 = 128 B; the output layer keeps 2 x 8 x 8 x
2 + 8 x 16 x 4 = 768 B (its input, the final norm's input, the fp32 logits); the embedding nothing
(no dropout)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.io.llm import read_llm
from hieropt.model.groups import instance_for
from hieropt.model.memory import chunk_activation_bytes, memory, memory_savers
from hieropt.model.timing import build_time_model, evaluate
from hieropt.spec import CostClass, CostModel, Dimension, Network
from hieropt.studies.codesign.plans import plan_id, plan_params
from hieropt.workloads.llm import build_step
from hieropt.workloads.llm.flops import recompute_flops_per_iteration
from hieropt.workloads.llm.layout import stage_chunks
from hieropt.workloads.llm.lower import lower_stage
from tests.cases import REPO

from .tiny import params

BLOCK_FWD_NS = 5.12
BLOCK_BYTES, CHECKPOINT, OUTPUT = 1216.0, 128.0, 768.0
COST = CostModel(classes={"c": CostClass(link_usd_per_gbps=1.0)})
H100_8B = REPO / "validation" / "models" / "llama3-8b-fp8-h100.toml"


def _net(*sizes):
    return Network(dims=tuple(Dimension(block="Ring", npus=n, cost_class="c") for n in sizes))


def test_compute_of_k_recomputed_blocks_is_none_plus_k_blocks_forward():
    """PP 2 with 2 blocks per stage: the backward of a stage with k of its 2 blocks recomputed is
    the backward without recompute plus k block forwards (k x 5.12 ns), k / 2 of what full
    recompute adds; the forward is unchanged. recompute_layers = 0 is the plan without recompute,
    = 2 the plan with full recompute of every block."""
    none = build_step(params())
    assert [x for r in (0, 1) for x in none.compute_ns(r)] == pytest.approx(
        [10.24, 20.48, 12.288, 24.576], rel=1e-12)
    full = build_step(params(recompute="full"))
    for k in (0, 1, 2):
        step = build_step(params(recompute="full", recompute_layers=k))
        for r in (0, 1):
            fwd, bwd = step.compute_ns(r)
            assert fwd == pytest.approx(none.compute_ns(r)[0], rel=1e-12)
            assert bwd == pytest.approx(none.compute_ns(r)[1] + k * BLOCK_FWD_NS, rel=1e-12)
            extra = full.compute_ns(r)[1] - none.compute_ns(r)[1]
            assert bwd - none.compute_ns(r)[1] == pytest.approx(k / 2 * extra, rel=1e-12)
        # a search's stage sums (the block templates, not copies) are the same
        sums = build_step(params(recompute="full", recompute_layers=k), names=False)
        assert [sums.compute_ns(r) for r in (0, 1)] == [step.compute_ns(r) for r in (0, 1)]
    # the first block of each stage is the recomputed one (blocks 1 and 3, 1-based)
    step = build_step(params(recompute="full", recompute_layers=1))
    assert [op.name for st in step.stages for op in st.ops if op.recompute_flops] == [
        "attn1", "mlp1", "attn3", "mlp3"]


def test_recompute_flops_count_the_recomputed_blocks():
    """A block's forward is 5120 FLOP per sequence (whole model, TP undone: the same as per
    micro-batch of 2 sequences at TP 2); 16 sequences per iteration: 1 block per stage recomputed
    adds 16 x 2 x 5120 = 163,840 FLOP, every block 16 x 4 x 5120 = 327,680."""
    assert recompute_flops_per_iteration(params(recompute="full", recompute_layers=1)) == 163_840
    assert recompute_flops_per_iteration(params(recompute="full", recompute_layers=2)) == 327_680
    assert recompute_flops_per_iteration(params(recompute="full")) == 327_680
    assert recompute_flops_per_iteration(params(recompute="full", recompute_layers=0)) == 0


def test_iteration_time_through_the_evaluator_by_hand():
    """The plan of tests/workloads/test_llm_lower.py (TP 2 x DP 2 x PP 2 on rings of 2, 1 GB/s,
    m = 4: t_0 = 1310.72, t_1 = 1316.864 ns per micro-batch, 1F1B t_0 + t_1 + 3 t_1 + 2944 ns),
    with the first block of each stage recomputed: each stage's backward adds the block's forward,
    5.12 ns, and its two TP all-reduces again (128 ns each): t_k = t + k (5.12 + 256). The
    iteration with k blocks is exactly the one without recompute plus k / 2 of what full recompute
    adds."""
    def time(**plan):
        return evaluate(instance_for(params(**plan), _net(2, 2, 2), COST),
                        [1.0, 1.0, 1.0]).iteration_time_ns

    t0, t1 = 30.72 + 9 * 128 + 128, 36.864 + 9 * 128 + 128
    none = t0 + t1 + 3 * t1 + 2944
    assert time() == pytest.approx(none, rel=1e-12)
    for k in (1, 2):
        d = k * (BLOCK_FWD_NS + 2 * 128)
        assert time(recompute="full", recompute_layers=k) == pytest.approx(
            (t0 + d) + (t1 + d) + 3 * (t1 + d) + 2944, rel=1e-12)
    full = time(recompute="full")
    assert time(recompute="full", recompute_layers=1) == pytest.approx(
        none + (full - none) / 2, rel=1e-12)
    inst = instance_for(params(recompute="full", recompute_layers=1), _net(2, 2, 2), COST)
    for bw in ([1.0, 1.0, 1.0], [3.0, 0.5, 2.0]):  # the LP's time model states the same function
        assert build_time_model(inst).time_ns(np.array(bw)) == pytest.approx(
            evaluate(inst, bw).iteration_time_ns, rel=1e-12)


def test_memory_keeps_checkpoints_of_the_recomputed_blocks_only():
    """1F1B, PP 2, m = 4: stage 0 holds 2 micro-batches, stage 1 one. Without recompute stage 0
    holds 2 x 2 x 1216 = 4864 B, stage 1 2 x 1216 + 768 = 3200; full recompute 2 x 2 x 128 + 1216
    (the block being recomputed) = 1728 and 2 x 128 + 768 + 1216 = 2240. One block per stage
    recomputed: per micro-batch 128 + 1216 B; recomputing it needs 1216 B, no more than the other
    block's activations, already freed by then (it comes later in the stage, so it is
    back-propagated first): stage 0 2 x 1344 = 2688 (between 1728 and 4864: the peak stage),
    stage 1 1344 + 768 = 2112 (below full recompute's 2240, whose peak holds both checkpoints and
    the block being recomputed; one micro-batch in flight)."""
    def act(**plan):
        return [m.activations_bytes for m in memory(params(**plan)).stages]

    assert act() == [4864.0, 3200.0]
    assert act(recompute="full") == [1728.0, 2240.0]
    assert act(recompute="full", recompute_layers=2) == [1728.0, 2240.0]
    assert act(recompute="full", recompute_layers=0) == [4864.0, 3200.0]
    one = params(recompute="full", recompute_layers=1)
    assert act(recompute="full", recompute_layers=1) == [2 * (CHECKPOINT + BLOCK_BYTES),
                                                        CHECKPOINT + BLOCK_BYTES + OUTPUT]
    # the built step gives the same report as the counted layers
    assert [m.activations_bytes for m in memory(one, build_step(one)).stages] == [2688.0, 2112.0]
    assert memory(one).peak.stage == 0
    assert "a larger recompute_layers" in memory_savers(one)


def test_uneven_interleaved_stages_recompute_the_first_blocks_of_each_chunk():
    """8 blocks on PP 2 x 2 chunks, stage_layers 3, 5: stage 0's chunks hold 1 and 2 blocks (its
    first chunk, with the embedding, the short one), stage 1's 3 and 2. recompute_layers = 2
    recomputes min(2, n) of each chunk: 1 + 2 = 3 blocks on stage 0, 2 + 2 = 4 on stage 1 (its
    first chunk's third block, block 4 of the model (model chunks: block 1; blocks 2-4; 5-6;
    7-8), keeps its activations): backwards + 3 x 5.12 and + 4 x 5.12 ns. Per micro-batch, stage
    1's chunks keep 2 x 128 + 1216 = 1472 B and 2 x 128 + 768 (the output layer) = 1024 B, stage
    0's 128 and 256 B. The largest chunk holds 3 blocks: recompute_layers = 4 is refused naming
    3."""
    arch = {"layers": 8}
    plan = dict(pp=2, schedule="interleaved", virtual_stages=2, stage_layers=[3, 5])
    p = params(arch, recompute="full", recompute_layers=2, **plan)
    assert [[len(b) for b in st] for st in stage_chunks(p)] == [[1, 2], [3, 2]]
    none = build_step(params(arch, **plan))
    step = build_step(p)
    for r, k in ((0, 3), (1, 4)):
        assert step.compute_ns(r)[1] == pytest.approx(
            none.compute_ns(r)[1] + k * BLOCK_FWD_NS, rel=1e-12)
        assert step.compute_ns(r)[0] == pytest.approx(none.compute_ns(r)[0], rel=1e-12)
    assert [op.name for op in step.stages[1].ops if op.kind == "attention"
            and not op.recompute_flops] == ["attn4"]
    assert recompute_flops_per_iteration(p) == 16 * 7 * 5120
    assert chunk_activation_bytes(p, 0, {}) == (CHECKPOINT, 2 * CHECKPOINT)
    assert chunk_activation_bytes(p, 1, {}) == (2 * CHECKPOINT + BLOCK_BYTES,
                                                2 * CHECKPOINT + OUTPUT)
    # stage 1: the chunk recomputing every block needs the whole block being recomputed on top
    rep = memory(p)
    inflight = rep.stages[1].in_flight
    a = 2 * CHECKPOINT + BLOCK_BYTES + 2 * CHECKPOINT
    assert rep.stages[1].activations_bytes == pytest.approx(
        a * inflight + BLOCK_BYTES + OUTPUT * inflight, rel=1e-12)
    assert [m.activations_bytes for m in memory(p, step).stages] == [
        m.activations_bytes for m in rep.stages]
    # a count above every chunk's blocks recomputes each chunk whole, as Megatron-LM's block
    # method does: the plan of full recompute
    whole = build_step(params(arch, recompute="full", **plan))
    for n in (3, 4):
        step_n = build_step(params(arch, recompute="full", recompute_layers=n, **plan))
        assert [step_n.compute_ns(r) for r in (0, 1)] == [whole.compute_ns(r) for r in (0, 1)]


def test_moe_blocks_and_the_counted_layers_agree():
    """An MoE model (every second block MoE) with the first block of each stage recomputed: the
    step's stage sums, built or from templates, and the memory from the built step or from the
    counted layers, agree; the recomputed blocks are the first of each stage."""
    arch = {"moe": {"experts": 4, "top_k": 2, "expert_ffn_size": 16, "moe_layer_interval": 2}}
    p = params(arch, recompute="full", recompute_layers=1, ep=2)
    built, sums = build_step(p), build_step(p, names=False)
    assert [x for r in (0, 1) for x in built.compute_ns(r)] == pytest.approx(
        [x for r in (0, 1) for x in sums.compute_ns(r)], rel=1e-12)
    assert [m.total_bytes for m in memory(p).stages] == pytest.approx(
        [m.total_bytes for m in memory(p, built).stages], rel=1e-12)
    assert [op.name for st in built.stages for op in st.ops if op.recompute_flops] == [
        "attn1", "moe1", "attn3", "moe3"]
    # the recomputed MoE layer repeats its all-to-alls in the backward, the other does not
    a2a = {op.name: sum(c.group == "ep" for c in op.comms) for st in built.stages
           for op in st.ops if op.kind in ("moe", "mlp")}
    assert a2a == {"moe1": 6, "mlp2": 0, "moe3": 6, "mlp4": 0}


def test_roofline_h100_8b_five_of_32_blocks():
    """The H100 8B FP8 validation model (one stage of 32 blocks, roofline model): recomputing its
    first 5 blocks adds 5 / 32 of what recomputing all 32 adds to the backward, exactly (every
    block's kernels are the same)."""
    p = read_llm(H100_8B)
    assert (p.plan.recompute, p.plan.recompute_layers) == ("full", 5)

    def bwd(**plan):
        q = p.model_copy(update={"plan": p.plan.model_copy(update=plan)})
        return build_step(q).compute_ns(0)[1]

    none = bwd(recompute="none", recompute_layers=None)
    full = bwd(recompute_layers=None)
    assert bwd() - none == pytest.approx(5 / 32 * (full - none), rel=1e-12)
    assert bwd() > none


def test_refusals_name_the_field_and_the_fix(tmp_path):
    """recompute_layers without full recompute, or above the model's blocks, is refused with the
    field and the fix (exit 2 from the CLI); a negative count by its bound; a count above a
    stage's blocks but within the model's recomputes the whole stage."""
    with pytest.raises(ValidationError, match=r"recompute_layers: 1 with recompute 'none'.*fix: "
                       r"set recompute = \"full\", or leave recompute_layers out"):
        params(recompute_layers=1)
    with pytest.raises(ValidationError, match="recompute_layers: 1 with recompute 'selective'"):
        params(recompute="selective", recompute_layers=1)
    assert params(recompute="full", recompute_layers=3).plan.recompute_layers == 3
    with pytest.raises(ValidationError, match=r"plan.recompute_layers: 5 is more than the "
                       r"model's 4 blocks .*fix: use 0 \.\. 4, or leave recompute_layers out"):
        params(recompute="full", recompute_layers=5)
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        params(recompute="full", recompute_layers=-1)
    runner = CliRunner()
    r = runner.invoke(app, ["workload", "plan", str(H100_8B), "--set", "recompute=none",
                            "--set", "recompute_layers=5"])
    assert r.exit_code == 2
    assert ("params.plan: recompute_layers: 5 with recompute 'none': it counts the blocks per "
            "chunk that full recompute recomputes; fix: set recompute = \"full\", or leave "
            "recompute_layers out") in " ".join(r.output.split())
    r = runner.invoke(app, ["workload", "plan", str(H100_8B), "--set", "recompute_layers=33"])
    assert r.exit_code == 2
    assert ("plan.recompute_layers: 33 is more than the model's 32 blocks"
            in " ".join(r.output.split()))


def test_workload_plan_states_the_recomputed_blocks():
    """``workload plan``'s plan line and its JSON plan (``recompute_layers`` after ``recompute``,
    docs/reference/json.md)."""
    runner = CliRunner()
    r = runner.invoke(app, ["workload", "plan", str(H100_8B)])
    assert r.exit_code == 0, r.output
    assert "ZeRO 3, recompute full, the first 5 blocks of each stage; micro-batch 1" in r.output
    r = runner.invoke(app, ["workload", "plan", str(H100_8B), "--json", "-"])
    assert r.exit_code == 0, r.output
    plan = json.loads(r.stdout)["plan"]
    assert list(plan)[-2:] == ["recompute", "recompute_layers"]
    assert (plan["recompute"], plan["recompute_layers"]) == ("full", 5)
    r = runner.invoke(app, ["workload", "plan", str(H100_8B), "--set", "recompute_layers=2"])
    assert "recompute full, the first 2 blocks of each stage;" in r.output


def test_a_codesign_plan_keeps_recompute_layers_for_full_recompute_only():
    """A co-design space's base plan with recompute_layers: a ``full`` choice keeps it (the plan id
    says ``full1``), a ``none`` or ``selective`` choice drops it."""
    base = params(recompute="full", recompute_layers=1)
    choice = dict(tp=2, pp=2, ep=1, zero_stage=0, sequence_parallel=False, virtual_stages=1,
                  micro_batch_size=2, overlap_grad_reduce=False)
    full = plan_params(base, 8, {**choice, "recompute": "full"})
    assert full.plan.recompute_layers == 1 and " full1 " in plan_id(full)
    none = plan_params(base, 8, {**choice, "recompute": "none"})
    assert none.plan.recompute_layers is None and " nore " in plan_id(none)


def test_the_lowered_stage_carries_the_recompute_in_the_recomputed_layers_only():
    """The stage as hieropt's workload (what loop ``step`` times and the ASTRA-sim export writes,
    each layer's input-gradient compute with its recompute): the recomputed block's attention
    input gradient 2.56 + 2.048 ns and FFN 3.072 + 3.072 ns, each with its forward's all-reduce
    again (a second collective, ``+1``); the other block's as without recompute."""
    w = lower_stage(build_step(params(recompute="full", recompute_layers=1)), 0)
    rows = {x.name: (x.forward.compute_ns, x.input_grad.compute_ns, x.input_grad.collective)
            for x in w.layers}
    assert rows["attn1"][:2] == pytest.approx((2.048, 4.608), rel=1e-12)
    assert rows["mlp1"][:2] == pytest.approx((3.072, 6.144), rel=1e-12)
    assert rows["attn2"][:2] == pytest.approx((2.048, 2.56), rel=1e-12)
    assert rows["mlp2"][:2] == pytest.approx((3.072, 3.072), rel=1e-12)
    assert rows["attn1+1"][2] == rows["mlp1+1"][2] == "ALLREDUCE"
    assert "attn2+1" not in rows


@pytest.mark.parametrize("recompute", ["none", "selective"])
def test_an_override_away_from_full_drops_the_files_recompute_layers(recompute, tmp_path):
    """The H100 8B model file recomputes 5 of its 32 blocks; ``--set recompute=none`` (or a runs
    file's ``recompute`` cell, or the library's overrides) asks for no full recompute at all, so
    the file's count, which only full recompute has, is dropped, as a co-design space drops it for
    its ``none`` and ``selective`` plans: nothing on the command line could leave it out. Without
    recompute the 8B model needs 53.20 GB per GPU, as with recompute_layers = 0."""
    changed = read_llm(H100_8B, [f"recompute={recompute}"])
    assert (changed.plan.recompute, changed.plan.recompute_layers) == (recompute, None)
    if recompute == "none":
        assert memory(changed) == memory(read_llm(H100_8B, ["recompute_layers=0"]))
    r = CliRunner().invoke(app, ["workload", "plan", str(H100_8B), "--set",
                                 f"recompute={recompute}"])
    assert r.exit_code == 0, r.output
    assert f"recompute {recompute};" in r.output
    if recompute == "none":
        assert "stage 0 needs 53.20 GB per NPU" in r.output


def test_workload_plan_states_a_count_of_zero_as_no_block_recomputed():
    """``recompute_layers = 0`` (NVIDIA's recipes for runs without recompute) recomputes nothing:
    the plan line says so instead of "the first 0 blocks of each stage"."""
    r = CliRunner().invoke(app, ["workload", "plan", str(H100_8B), "--set", "recompute_layers=0"])
    assert r.exit_code == 0, r.output
    assert "ZeRO 3, recompute full of no block (recompute_layers 0); micro-batch 1" in r.output
