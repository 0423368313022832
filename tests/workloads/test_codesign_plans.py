"""Co-design plan enumeration: combinations, invalid ones by reason, the ones that do not fit, the
fitting ones."""

from __future__ import annotations

from hieropt.studies.codesign.plans import enumerate_plans
from hieropt.workloads.llm.space import PlanChoices

from .tiny import NPU1, params


def test_enumeration_classifies_every_combination():
    base = params()
    ch = PlanChoices(tp=(1, 2, 3), pp=(1, 2), zero_stage=(0, 3), recompute=("none", "full"))
    e = enumerate_plans(base, 8, ch)
    assert e.combinations == 3 * 2 * 2 * 2
    # tp 3 never divides 8 NPUs (8 combinations); the others: tp 1, 2 x pp 1, 2 x 2 x 2 = 16 valid,
    # all tiny
    assert e.invalid == {"plan.npus: tp 3 x pp 1 = 3 does not divide the 8 NPUs": 4,
                         "plan.npus: tp 3 x pp 2 = 6 does not divide the 8 NPUs": 4}
    assert len(e.fitting) == 16 and not e.too_big
    assert e.fitting[0].id == "tp1 cp1 pp1 dp8 ep1 z0 nore nosp v1 mb1"
    # the global batch of 16 over dp 4: micro-batch 4 gives m = 1 < pp 2 (a valid 1f1b plan, not
    # searched: (2 - 1) / (1 + 2 - 1) = 50 % of its iteration idle), micro-batch 3 does not divide
    # it
    e = enumerate_plans(base, 8, PlanChoices(tp=(1,), pp=(2,), micro_batch_size=(1, 3, 4)))
    assert [c.id for c in e.fitting] == ["tp1 cp1 pp2 dp4 ep1 z0 nore nosp v1 mb1"]
    assert e.invalid == {  # (each with its numbers)
        "plan.global_batch_size: 16 sequences are not a multiple of dp x micro_batch_size = "
        "4 x 3 = 12": 1,
        "plan.global_batch_size: 1 micro-batches per iteration are fewer than the 2 pipeline "
        "stages: not searched (the pipeline would idle 50% of the iteration; a model file with "
        "the plan times it)": 1,
    }
    # interleaved (v 2), m = 1 < pp 2 is invalid
    e = enumerate_plans(base, 8, PlanChoices(tp=(1,), pp=(2,), virtual_stages=(2,),
                                             micro_batch_size=(4,)))
    assert e.invalid == {
        "plan.global_batch_size: 1 micro-batches per iteration are fewer than the 2 pipeline "
        "stages (Megatron-LM's interleaved schedule needs m >= pp; 1f1b runs them)": 1}


def test_memory_filter_and_smallest_need():
    tiny_hbm = params().model_copy(update={"npu": NPU1.model_copy(update={"hbm_gib": 4e-6})})
    e = enumerate_plans(tiny_hbm, 8, PlanChoices(tp=(1, 2), zero_stage=(0, 3)))
    needs = sorted(m.peak.total_bytes for _, m in e.too_big) + sorted(
        c.memory.peak.total_bytes for c in e.fitting
    )
    assert e.smallest_need_bytes == min(needs)
    assert all(c.memory.fits for c in e.fitting) and all(not m.fits for _, m in e.too_big)
    assert len(e.fitting) + len(e.too_big) == 4


def test_plan_choices_refuse_text_booleans_and_out_of_range_stages():
    """Plan choices are as strict as every input model ('yes', 1 and '1' are refused, not converted;
    zero_stage 5 is refused, not counted as an invalid plan)."""
    import pytest
    from pydantic import ValidationError

    for bad in (
        {"sequence_parallel": ["yes"]},
        {"sequence_parallel": [1]},
        {"micro_batch_size": ["1"]},
        {"zero_stage": [0, 5]},
        {"tp": [True]},
    ):
        with pytest.raises(ValidationError):
            PlanChoices(**bad)
    ok = PlanChoices(sequence_parallel=[False, True], micro_batch_size=[1, 2], zero_stage=[0, 3])
    assert ok.combinations == 8


def test_invalid_reasons_keep_their_numbers():
    """Each reason names the numbers of its plans ("pp 3 does not divide ..."), not N; plans invalid
    for the same reason with the same numbers count together."""
    base = params()
    e = enumerate_plans(base, 8, PlanChoices(tp=(1, 3), pp=(2,), micro_batch_size=(1, 3, 4)))
    assert e.invalid == {
        "plan.npus: tp 3 x pp 2 = 6 does not divide the 8 NPUs": 3,
        "plan.global_batch_size: 16 sequences are not a multiple of dp x micro_batch_size = "
        "4 x 3 = 12": 1,
        "plan.global_batch_size: 1 micro-batches per iteration are fewer than the 2 pipeline "
        "stages: not searched (the pipeline would idle 50% of the iteration; a model file with "
        "the plan times it)": 1,
    }


def test_schedule_in_the_plan_choices():
    """schedule = [...] lists the schedules to keep: 1f1b plans have v = 1, interleaved ones v >=
    2."""
    base = params()
    both = PlanChoices(pp=(2,), virtual_stages=(1, 2), schedule=("1f1b", "interleaved"))
    only = PlanChoices(pp=(2,), virtual_stages=(1, 2), schedule=("interleaved",))
    assert both.combinations == 2 and only.combinations == 1
    e = enumerate_plans(base, 8, only)
    assert e.combinations == 1 and [c.params.plan.schedule for c in e.fitting] == ["interleaved"]
    e = enumerate_plans(base, 8, both)
    assert sorted(c.params.plan.schedule for c in e.fitting) == ["1f1b", "interleaved"]


def test_custom_pipeline_layouts_are_searched_only_when_allowed():
    """Megatron-LM's flags state equal chunks of L / (pp v) layers and equal stages but the first
    and the last; any other split needs a custom layout, searched only with custom_layouts."""
    base = params({"layers": 8}, tp=1, pp=1, dp=8, micro_batch_size=1)
    ch = PlanChoices(pp=(2,), virtual_stages=(2, 3))
    # 8 layers on pp 2: v 2 gives chunks of 2 (8 / 4), v 3 gives 4 layers per stage in 3 chunks
    # (2, 1, 1): a custom layout
    e = enumerate_plans(base, 8, ch)
    assert [c.id for c in e.fitting] == ["tp1 cp1 pp2 dp4 ep1 z0 nore nosp v2 mb1"]
    assert e.invalid == {
        "plan.virtual_stages: pp 2 x v 3 = 6 chunks of unequal layer counts (8 layers): a custom "
        "pipeline layout (custom_layouts = true searches it)": 1}
    e = enumerate_plans(base, 8, ch, custom_layouts=True)
    assert [c.id for c in e.fitting] == ["tp1 cp1 pp2 dp4 ep1 z0 nore nosp v2 mb1",
                                         "tp1 cp1 pp2 dp4 ep1 z0 nore nosp v3 mb1"]
    assert not e.invalid
    # 1F1B: 9 layers on 4 stages are balanced 2, 2, 3, 2 (two middle sizes: custom); 10 layers
    # on 4 stages 2, 3, 3, 2 (only the first and the last differ: the standard flags)
    e = enumerate_plans(params({"layers": 9}, tp=1, pp=1, dp=8, micro_batch_size=1), 8,
                        PlanChoices(pp=(4,)))
    assert not e.fitting and e.invalid == {
        "plan.pp: 4 stages of 2 layer counts besides the first and the last (9 layers): a "
        "custom pipeline layout (custom_layouts = true searches it)": 1}
    e = enumerate_plans(params({"layers": 10}, tp=1, pp=1, dp=8, micro_batch_size=1), 8,
                        PlanChoices(pp=(4,)))
    assert [c.id for c in e.fitting] == ["tp1 cp1 pp4 dp2 ep1 z0 nore nosp v1 mb1"]
