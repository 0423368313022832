"""The answer flows on: the best candidates as instance files that ``solve`` re-solves to the same
optimum (the plan's DP overlap kept), and the shortlist provisioned from a parts catalog."""

from __future__ import annotations

import tomllib

import pytest

from hieropt.io.instance import load_instance
from hieropt.solvers.objectives import solve
from hieropt.studies.codesign.export import write_instances
from hieropt.studies.codesign.rows import fold_ties
from hieropt.studies.codesign.search import codesign
from hieropt.workloads.llm.space import PlanChoices
from tests.codesign.spaces import space


@pytest.mark.parametrize("kw", [
    {"plans": PlanChoices(tp=(1, 2), pp=(1, 2), overlap_grad_reduce=(False, True))},
    {"objective": "performance_per_cost", "mapping_rule": "all_placements"},
    {"objective": "min_cost", "max_iteration_time_ns": 1.7e6},
])
@pytest.mark.heavy
def test_written_instances_resolve_to_the_same_optimum(tmp_path, kw):
    r = codesign(space(**kw), workers=1, prune=False)
    paths = write_instances(r, tmp_path / "inst", top=3)
    assert len(paths) == 3
    # (the rows of the ranked table: one per plan and rank, fold_ties)
    shown = [head for head, _ in fold_ties(r.ranking)[:3]]
    for path, row in zip(paths, shown, strict=True):
        doc = tomllib.loads(path.read_text())
        assert doc["step"]["overlap_dp"] == bool(row["overlap_grad_reduce"])
        assert (
            doc["workload"]["params"]["plan"]["tp"] == row["tp"]
            and doc["mapping"]["groups"] == row["placement"]
        )
        sol = solve(load_instance(path))
        # (the row's value is its design's: the cheapest within 1e-8 of the optimal time)
        assert sol.objective_value == pytest.approx(row["objective_value"], rel=1.01e-8)
        assert sol.iteration_time_ns == pytest.approx(row["iteration_time_ns"], rel=1e-7)


def test_the_overlap_setting_is_kept(tmp_path):
    """The best plan here overlaps its DP all-reduce; its instance file keeps ``overlap_dp`` (the
    same file without it times another schedule, slower: the all-reduce after the last
    micro-batch)."""
    r = codesign(
        space(plans=PlanChoices(tp=(1,), pp=(1,), overlap_grad_reduce=(False, True))), workers=1
    )
    assert r.best.overlap_grad_reduce == 1
    path = write_instances(r, tmp_path)[0]
    assert solve(load_instance(path)).objective_value == pytest.approx(
        r.best.objective_value, rel=1e-9
    )
    text = path.read_text()
    assert "overlap_dp = true" in text
    (tmp_path / "off.toml").write_text(text.replace("overlap_dp = true", "overlap_dp = false"))
    assert solve(load_instance(tmp_path / "off.toml")).objective_value > r.best.objective_value * (
        1 + 1e-6
    )


def test_own_stream_overlap_is_kept(tmp_path):
    """A base plan with ZeRO 3 and ``overlap_sharded_comms``: the pruned search equals the brute
    force (the bound leaves the hidden collectives out), and the instance file of the best plan
    names the own-stream groups and re-solves to the same optimum (the file without them times
    the gathers exposed, slower)."""
    from tests.codesign.spaces import SLOW

    plan = SLOW.plan.model_copy(update={"overlap_sharded_comms": True, "zero_stage": 3})
    sp = space(base=SLOW.model_copy(update={"plan": plan}),
               plans=PlanChoices(tp=(1, 2), pp=(1, 2), zero_stage=(3,)))
    pruned, brute = codesign(sp, workers=1), codesign(sp, workers=1, prune=False)
    assert pruned.best.objective_value == pytest.approx(brute.best.objective_value, rel=1e-12)
    path = write_instances(brute, tmp_path, top=1)[0]
    doc = tomllib.loads(path.read_text())
    assert doc["step"]["overlap_groups"] == ["dp", "edp", "dpc"]
    inst = load_instance(path)
    assert solve(inst).objective_value == pytest.approx(brute.best.objective_value, rel=1e-9)
    exposed = inst.model_copy(update={"step": inst.step.model_copy(update={"overlap_groups": ()})})
    assert solve(exposed).objective_value > solve(inst).objective_value * (1 + 1e-6)


def test_tp_overlap_with_the_interleaved_grad_reduce_writes_a_loadable_instance(tmp_path):
    """A base plan with ``overlap_tp_comms`` and ``overlap_grad_reduce``: the 1F1B candidates
    that would combine the two overlaps of the last backward are left out (the plan rule), the
    interleaved ones run the TP stream; the written instance states the lowering's schedule (the
    own stream, no last-backward overlap), loads, and re-solves to the same optimum."""
    from tests.codesign.spaces import SLOW

    plan = SLOW.plan.model_copy(update={"overlap_tp_comms": True, "sequence_parallel": True})
    sp = space(base=SLOW.model_copy(update={"plan": plan}),
               plans=PlanChoices(tp=(2,), pp=(2,), virtual_stages=(1, 2),
                                 overlap_grad_reduce=(True,), sequence_parallel=(True,)))
    r = codesign(sp, workers=1, prune=False)
    assert {row["virtual_stages"] for row in r.ranking} == {2}
    path = write_instances(r, tmp_path, top=1)[0]
    doc = tomllib.loads(path.read_text())
    assert doc["step"]["overlap_groups"] == ["tp"] and doc["step"]["overlap_dp"] is False
    inst = load_instance(path)
    assert solve(inst).objective_value == pytest.approx(r.best.objective_value, rel=1e-9)
