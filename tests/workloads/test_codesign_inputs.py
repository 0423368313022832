"""Co-design inputs a new user may write (odd but legal spaces and bad inputs): each gives
a one-line error or the right answer, never a traceback, a silent default or a wrong answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from hieropt.errors import InputError
from hieropt.io.codesign import load_codesign
from hieropt.report.codesign import no_answer
from hieropt.spec import Network
from hieropt.studies.codesign.search import codesign
from hieropt.workloads.llm.space import PlanChoices
from tests.codesign.spaces import MODEL, SPACE, space


def _files(tmp_path: Path, text: str) -> Path:
    (tmp_path / "model.toml").write_text(MODEL, encoding="utf-8")
    path = tmp_path / "space.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_value_listed_twice_is_refused():
    """tp = [8, 8] gave two candidates of one id: the second (pruned, its bound equal to the first's
    optimum) replaced the first's row, and the search said "no candidate has a certified answer"
    (exit 3)."""
    with pytest.raises(ValidationError, match="2 is listed twice"):
        PlanChoices(tp=(2, 2))
    with pytest.raises(ValidationError, match="True is listed twice"):
        PlanChoices(sequence_parallel=(True, False, True))


@pytest.mark.parametrize("field", ["tp", "pp", "ep", "virtual_stages", "micro_batch_size"])
def test_degrees_below_one_are_refused(field):
    """tp = [0] was a ZeroDivisionError traceback in the plan enumeration."""
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        PlanChoices(**{field: (0,)})


def test_omitted_plan_fields_keep_the_model_files_plan(tmp_path):
    """A field [plans] omits took PlanChoices' default (micro-batch 1, ZeRO 0, ...) and silently
    dropped the model file's plan and the space's own set overrides (set = ["zero_stage=3"] was
    ignored)."""
    sp = load_codesign(
        _files(tmp_path, SPACE.replace("npus = 8\n", 'npus = 8\nset = ["zero_stage=3"]\n'))
    )
    assert sp.plans.micro_batch_size == (2,)  # the model file's micro_batch_size = 2
    assert sp.plans.zero_stage == (3,)  # the space's set override
    assert sp.plans.tp == (1, 2, 4) and sp.plans.recompute == ("none", "full")  # given in [plans]
    r = codesign(sp, workers=1)
    assert all(c.params.plan.zero_stage == 3 and c.params.plan.micro_batch_size == 2
               for c in r.enumeration.candidates())


@pytest.mark.parametrize(
    "edit, message",
    [
        (('cost_class = "A"', 'cost_class = "X"'), "levels[0].cost_class: unknown cost class 'X'"),
        (
            ("switch_usd_per_gbps = 1.0\n", ""),
            "cost.B: levels[1] has a Switch but its cost class has no switch",
        ),
        (("dims = [1, 2]", "dims = [2, 1]"), "dims: min 2 exceeds max 1"),
        (
            ("npus = 8\n", 'npus = 8\nobjective = "min_max_regret"\n'),
            "objective: min_max_regret compares several",
        ),
        (("npus = 8\n", 'npus = 8\nprune = "yes"\n'), "prune: Input should be a valid boolean"),
        (
            ("npus = 8\n", "npus = 8\nswitch_only_at_top = 1\n"),
            "switch_only_at_top: Input should be a valid boolean",
        ),
        (("tp = [1, 2, 4]", "tp = [2, 2]"), "plans.tp: 2 is listed twice"),
        (("tp = [1, 2, 4]", "tp = [0]"), "plans.tp[0]: 0 is below 1; fix: use an integer >= 1"),
        (('model = "model.toml"', "model = 3"), "space.toml: model: expected a file name, got 3"),
    ],
)
def test_bad_space_files_are_one_line_errors(tmp_path, edit, message):
    """Each was a traceback at the search (unknown cost class, a Switch level without prices, dims
    [2, 1]; in the report: min_max_regret), a silent conversion ('yes' -> True) or a wrong answer
    (the duplicate)."""
    assert edit[0] in SPACE
    with pytest.raises(InputError) as e:
        load_codesign(_files(tmp_path, SPACE.replace(*edit)))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_fixed_network_checks_its_cost_classes_and_refuses_shape_keys(tmp_path):
    net = (
        '[network]\ndims = [{block = "Ring", npus = 4, cost_class = "A"}, {block = '
        '"Switch", npus = 2, '
        'cost_class = "B"}]\n'
    )
    fixed = (
        SPACE.split("[[levels]]")[0].replace("dims = [1, 2]\n", "")
        + net
        + SPACE[SPACE.index("[cost.A]") :]
    )
    assert load_codesign(_files(tmp_path, fixed)).network.n_dims == 2
    with pytest.raises(InputError, match=r"network.dims\[1\].cost_class: unknown cost class 'C'"):
        load_codesign(_files(tmp_path, fixed.replace('cost_class = "B"', 'cost_class = "C"')))
    with pytest.raises(
        InputError, match="dims: belongs to a shape space, and .network. gives one fixed network"
    ):
        load_codesign(_files(tmp_path, "dims = [1, 2]\n" + fixed))


def test_objective_and_target_overrides_are_checked_and_applied():
    """--objective bogus and --objective min_cost without a time target were pydantic tracebacks;
    min_max_regret ran and crashed in the report; codesign had no time target or budget override."""
    sp = space()
    with pytest.raises(InputError, match="unknown objective 'bogus'"):
        codesign(sp, "bogus", workers=1)
    with pytest.raises(InputError, match="max_iteration_time_ns: missing for objective min_cost"):
        codesign(sp, "min_cost", workers=1)
    with pytest.raises(InputError, match="objective: min_max_regret compares several workloads"):
        codesign(sp, "min_max_regret", workers=1)
    with pytest.raises(InputError, match="is not a positive number"):
        codesign(sp, max_network_cost_usd=-1.0, workers=1)
    by_override = codesign(sp, "min_cost", max_iteration_time_ns=1.7e6, workers=1)
    in_space = codesign(space(objective="min_cost", max_iteration_time_ns=1.7e6), workers=1)
    assert by_override.space.max_iteration_time_ns == 1.7e6
    assert by_override.best.objective_value == pytest.approx(
        in_space.best.objective_value, rel=1e-12
    )
    assert by_override.best.iteration_time_ns <= 1.7e6 * (1 + 1e-9)
    # a budget of half the fastest network's $24 (8 NPUs x $1 per GB/s x 3 GB/s): 1.5 GB/s, the
    # communication (3,016 ns at 3 GB/s) doubles: 1,351,680 ns of compute + 6,032 ns
    # (the row's design is the cheapest within 1e-8 of that time: T = 1,351,680 + 3,016 x 3 / b ns
    # <= 1,354,696 x (1 + 1e-8) gives b >= 3 / (1 + 0.01354696 / 3016) GB/s, $8 per GB/s)
    # (LIBRA's convention, group_bandwidth "whole": the times above give the a:FC8 network's tp
    # pair the NPU's whole bandwidth; by its links, 1/7 of it, the same time needs the $96 switch)
    loose = space(constraints=("sum(bw) <= 3",), group_bandwidth="whole")
    assert codesign(space(constraints=("sum(bw) <= 3",)), workers=1).best.network_cost_usd == \
        pytest.approx(96.0 / (1 + 1354696e-8 / 3016), rel=1e-9)
    fastest = codesign(loose, workers=1).best
    assert fastest.network_cost_usd == pytest.approx(
        24.0 / (1 + 1354696e-8 / 3016), rel=1e-9
    ) and fastest.objective_value == pytest.approx(1354696)
    capped = codesign(loose, max_network_cost_usd=12.0, workers=1).best
    # (the cheapest within 1e-8 of that time, as above: 12 / (1 + 1,357,712e-8 / 6,032))
    assert capped.network_cost_usd == pytest.approx(12.0 / (1 + 1357712e-8 / 6032), rel=1e-9)
    # (the row's value is its design's time: within 1e-8 of the optimum)
    assert capped.objective_value == pytest.approx(1351680 + 2 * 3016, rel=1.01e-8)


@pytest.mark.heavy
def test_a_space_prune_false_can_be_pruned_from_the_call():
    sp = space(prune=False)
    assert codesign(sp, workers=1).pruned == 0
    assert codesign(sp, workers=1, prune=True).pruned > 0


def test_sequential_placements_split_pipeline_groups_are_stated():
    """dimension_mode sequential with a pipeline group split over two dimensions: an LLM plan names
    its groups' algorithms, and its sends take the slower dimension (a send crosses one), so every
    placement is solved (they were error rows) and the best is the best of them all."""
    from hieropt.spec import Dimension

    net = Network(dims=(Dimension(block="Ring", npus=4, cost_class="A"),
                       Dimension(block="Switch", npus=2, cost_class="B")))
    sp = space(levels=(), network=net, mapping_rule="all_placements", dimension_mode="sequential",
               plans=PlanChoices(tp=(1,), pp=(4,)))
    rows: list[dict] = []
    full = codesign(sp, workers=1, prune=False, on_row=rows.append)
    statuses = {r["status"] for r in rows}
    assert statuses == {"optimal"} and set(full.statuses) == statuses
    assert any("pp 2x2" in r["id"] for r in rows)
    ok = [r["objective_value"] for r in rows if r["status"] == "optimal"]
    assert full.best.objective_value == min(ok)
    assert codesign(sp, workers=1).best.objective_value == pytest.approx(min(ok), rel=1e-12)


def test_no_answer_names_the_statuses_and_a_reason():
    """'no candidate has a certified answer' said nothing of why (here: an infeasible design
    row)."""
    r = codesign(
        space(constraints=("sum(bw) <= -5",), plans=PlanChoices(tp=(1, 2), pp=(1,))), workers=1
    )
    assert r.best is None
    text = no_answer(r)
    n = r.enumeration.count
    assert text.startswith(
        f"no candidate has a certified answer: {n} infeasible (e.g. infeasible: "
    )
    assert "sum(bw) <= -5" in text


def test_schedule_and_recompute_names_in_any_case():
    """``schedule = ["1F1B"]`` as the papers write it was refused ("Input should be '1f1b' or
    'interleaved'"); a plan's names are taken in any case, and a name listed twice in two cases is
    still listed twice."""
    choices = PlanChoices(schedule=["1F1B", "Interleaved"], recompute=["None", "FULL"])
    assert choices.schedule == ("1f1b", "interleaved")
    assert choices.recompute == ("none", "full")
    with pytest.raises(ValidationError, match="'full' is listed twice"):
        PlanChoices(recompute=["full", "Full"])
