"""The shipped co-design spaces load as documented (cluster sizes, plan fields), and a down-sized
copy of the Llama 3 405B space (the tiny model, its levels and cluster sizes scaled down, the same
constraints, objective and kinds of plan fields) gives the same best pruned as unpruned; a pipeline
that does not divide the layers gets balanced stages."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.io.codesign import load_codesign
from hieropt.spec.space import Level
from hieropt.studies.codesign.plans import balanced_stage_layers, enumerate_plans, plan_params
from hieropt.workloads.llm import NPU
from hieropt.workloads.llm.space import PlanChoices
from tests.codesign.brute_force import check_pruned_equals_brute_force

from ..workloads.tiny import params

SPACES = Path(__file__).resolve().parents[2] / "spaces"


def test_shipped_spaces_load():
    llama = load_codesign(SPACES / "codesign-llama3-405b.toml")
    assert llama.sizes == (8192, 16384, 32768) and llama.base.model.layers == 126
    assert llama.plans.virtual_stages == (1, 3) and llama.plans.zero_stage == (0, 1, 2, 3)
    assert [lv.name for lv in llama.levels] == [
        "nvl",
        "leaf",
        "pod",
        "spine",
    ] and llama.nic_npus == 8
    moe = load_codesign(SPACES / "codesign-moe-1t.toml")
    assert (
        moe.sizes == (4096, 8192)
        and moe.base.model.moe.experts == 64
        and moe.plans.ep == (8, 16, 32, 64)
    )
    m = moe.base.model
    assert m.layers * m.moe.experts * 3 * m.hidden_size * m.moe.expert_ffn_size == pytest.approx(
        1.08e12, rel=0.01
    )
    for path in SPACES.glob("codesign-*.toml"):
        assert load_codesign(path).name == path.stem


def test_balanced_stages():
    assert balanced_stage_layers(126, 16) == (7,) + (8,) * 14 + (7,)  # Llama 3 405B's stages
    assert balanced_stage_layers(126, 8) == (15,) + (16,) * 6 + (15,)
    assert balanced_stage_layers(9, 4) == (2, 2, 3, 2)
    assert balanced_stage_layers(96, 8) is None and balanced_stage_layers(5, 4) is None
    llama = load_codesign(SPACES / "codesign-llama3-405b.toml")
    e = enumerate_plans(
        llama.base,
        16384,
        PlanChoices(
            tp=(8,), pp=(8,), zero_stage=(1,), recompute=("selective",), sequence_parallel=(True,)
        ),
    )
    # (valid though pp 8 does not divide the 126 layers: the stages are balanced)
    assert e.combinations == 1 and not e.invalid
    p = plan_params(
        llama.base,
        16384,
        {
            "tp": 8,
            "pp": 8,
            "ep": 1,
            "zero_stage": 1,
            "recompute": "selective",
            "sequence_parallel": True,
            "virtual_stages": 1,
            "micro_batch_size": 1,
            "overlap_grad_reduce": False,
        },
    )
    assert p.plan.stage_layers == (15,) + (16,) * 6 + (15,)


@pytest.mark.heavy
def test_down_sized_llama_space_prunes_to_the_brute_force_best():
    llama = load_codesign(SPACES / "codesign-llama3-405b.toml")
    slow = params(pp=2, dp=2, global_batch_size=32).model_copy(
        update={"npu": NPU(peak_tflops=1e-4, efficiency=1.0, hbm_gib=1.0)})
    levels = (
        Level(name="nvl", blocks=("Switch",), npus=(2, 4), cost_class="NVLink", min_dims=1),
        Level(name="leaf", blocks=("Switch",), npus=(2, 2), cost_class="ScaleOut"),
        Level(name="spine", blocks=("Switch",), npus=(2, 8), cost_class="ScaleOut", min_dims=1),
    )
    plans = PlanChoices(tp=(1, 2, 4), pp=(1, 2), virtual_stages=(1,), zero_stage=(1, 3),
                        recompute=("selective", "full"), sequence_parallel=(True,))
    small = llama.model_copy(
        update={
            "base": slow,
            "npus": (8, 16),
            "levels": levels,
            "min_dims": 2,
            "max_dims": 3,
            "plans": plans,
            "nic_npus": 2,
            "constraints": (
                "bw[0] <= 4.5",
                "bw[0] >= 0.5",
                "sum(bw[1:]) <= 4",
                "sum(bw[1:]) >= 0.5",
            ),
        }
    )
    for objective in ("performance", "performance_per_cost"):
        pruned, brute = check_pruned_equals_brute_force(
            small.model_copy(update={"objective": objective})
        )
        assert pruned.pruned > 0 and {r["npus"] for r in brute.ranking} == {8, 16}


def test_the_model_files_own_pipeline_layout_is_kept_for_its_own_pp_and_v():
    """Llama 3 405B's model file states Meta's layout (16 stages of 8 chunks: 7, 8, ..., 8, 7
    layers): a plan of that pp and v keeps it (a custom layout: 126 layers in 128 chunks, searched
    with custom_layouts = true), another pp or v does not."""
    from hieropt.studies.codesign.plans import custom_layout_reason

    llama = load_codesign(SPACES / "codesign-llama3-405b.toml")
    own = {"tp": 8, "pp": 16, "ep": 1, "zero_stage": 2, "recompute": "none",
           "sequence_parallel": True, "virtual_stages": 8, "micro_batch_size": 1,
           "overlap_grad_reduce": False}
    p = plan_params(llama.base, 16384, own)
    assert p.plan.stage_layers == (7,) + (8,) * 14 + (7,)
    assert "custom_layouts = true" in custom_layout_reason(p)
    e = enumerate_plans(llama.base, 16384, PlanChoices(tp=(8,), pp=(16,), virtual_stages=(8,),
                                                       zero_stage=(2,), recompute=("none",),
                                                       sequence_parallel=(True,)),
                        custom_layouts=True)
    assert e.combinations == 1 and not e.invalid and len(e.fitting) == 1
    assert plan_params(llama.base, 16384, {**own, "virtual_stages": 2}).plan.stage_layers is None


@pytest.mark.heavy
def test_the_library_result_carries_the_best_runs_caveats():
    """``Codesign.run()``: the best design's figures as the command prints them, with the caveat on
    a bandwidth its A100 cannot have (the LIBRA plan's space reaches past its 300 GB/s NVLink)."""
    from hieropt.studies.codesign.search import codesign

    r = codesign(load_codesign(SPACES / "codesign-gpt3-4096-libra-plan.toml"), workers=1)
    fig = r.run()
    assert fig.iteration_time_ns == r.best.iteration_time_ns and fig.mfu is not None
    bw = [float(x) for x in r.best.to_dict()["bw_gbps"]]
    assert max(bw) > 300  # (306.5 GB/s on NVLink)
    assert any(c.startswith(f"dimension 0: {bw[0]:.1f} GB/s per NPU is above the A100-SXM-80GB's "
                            "scale-up bandwidth of 300 GB/s") for c in fig.caveats)
