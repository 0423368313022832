"""Co-design space files: several cluster sizes, schedule in [plans], the NIC grouping, and one-line
errors."""

from __future__ import annotations

import pytest

from hieropt.errors import InputError
from hieropt.io.codesign import load_codesign
from tests.codesign.spaces import MODEL, SPACE, write_space_files


def test_cluster_sizes_schedule_and_nic_npus_from_the_file(tmp_path):
    text = SPACE.replace("npus = 8\n", "npus = [8, 16]\nnic_npus = 2\n").replace(
        "pp = [1, 2]\n", 'pp = [1, 2]\nschedule = ["1f1b", "interleaved"]\n')
    sp = load_codesign(write_space_files(tmp_path, text))
    assert sp.sizes == (8, 16) and sp.nic_npus == 2
    assert sp.plans.schedule == ("1f1b", "interleaved") and sp.plans.virtual_stages == (1, 2)
    assert sp.custom_layouts is False  # (default: only the layouts the standard flags state)
    sp = load_codesign(write_space_files(tmp_path, text.replace("npus = [8, 16]\n",
                                                     "npus = [8, 16]\ncustom_layouts = true\n")))
    assert sp.custom_layouts is True


@pytest.mark.parametrize("edit, message", [
    (("npus = 8\n", "npus = [8, 8]\n"), "npus: [8, 8] is not a list of distinct NPU counts"),
    (("npus = 8\n", "npus = 8\nnic_npus = 3\n"), "nic_npus: 3 does not divide the 8 NPUs"),
    (("pp = [1, 2]\n", 'pp = [1, 2]\nschedule = ["gpipe"]\n'), "plans.schedule[0]"),
    (("npus = 8\n", "npus = [8, 16]\n"), "one fixed network has one cluster size"),
    (("npus = 8\n", "npus = 8\ncustom_layouts = 1\n"), "custom_layouts"),
    (("[plans]\n", "[plans]\ncp = [1, 2]\n"),
     "plans.cp: context parallelism is not searched: every plan takes the model file's cp; fix: "
     "remove it from [plans]; set cp in the model file's plan or with set = [\"cp=2\"]"),
    # (was: "unknown key (did you mean 'recompute'?); fix: rename 'recompute_layers' to
    # 'recompute'", which would replace the count by a recompute choice)
    (("[plans]\n", "[plans]\nrecompute_layers = [2, 4]\n"),
     "plans.recompute_layers: recompute_layers is not searched: every full recompute choice takes "
     "the model file's count; fix: remove it from [plans]; set recompute_layers in the model "
     "file's plan or with set = [\"recompute=full\", \"recompute_layers=2\"] (one space per "
     "count to compare several)"),
])
def test_bad_new_fields_are_one_line_errors(tmp_path, edit, message):
    text = SPACE.replace(*edit)
    if message.startswith("one fixed"):  # a fixed network instead of the levels
        text = (
            text[: text.index("[[levels]]")].replace("dims = [1, 2]\n", "")
            + text[text.index("[cost.A]") :]
            + ('[network]\ndims = [{block = "Ring", npus = 8, cost_class = "A"}]\n')
        )
    with pytest.raises(InputError) as e:
        load_codesign(write_space_files(tmp_path, text))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_plan_keeps_the_model_file_s_context_parallelism():
    # N = tp x cp x pp x dp: with the base's cp 2, 32 NPUs at tp 2, pp 2 leave dp 4 (not 8)
    from hieropt.studies.codesign.plans import plan_params
    from tests.workloads.tiny import params

    base = params(cp=2, dp=2)
    choice = {"tp": 2, "pp": 2, "virtual_stages": 1, "micro_batch_size": 1}
    plan = plan_params(base, 32, choice).plan
    assert (plan.tp, plan.cp, plan.pp, plan.dp, plan.npus) == (2, 2, 2, 4, 32)


# --------------------------------------------------------------------------------------------------
# A NIC's rating in Gb/s written as nic_gbps (400 for a 400 Gb/s = 50 GB/s port) was taken as a
# 3.2 Tb/s NIC and counted 8x too few NICs; the parts catalog refuses the same slip, by one rule.

_NIC_SLIP = (
    "nic_gbps: 400 GB/s per direction is a 3.2 Tb/s NIC, and 400 is a NIC's rating in Gb/s; fix: "
    "write nic_gbit_per_s = 400 (or nic_gbps = 50); if a 3.2 Tb/s NIC is meant, write "
    "nic_gbit_per_s = 3200"
)


def test_a_nic_rating_in_gbit_written_as_nic_gbps_is_refused(tmp_path):
    path = write_space_files(tmp_path, SPACE.replace("nic_gbps = 1\n", "nic_gbps = 400\n"))
    with pytest.raises(InputError) as e:
        load_codesign(path)
    assert str(e.value) == f"{path}: {_NIC_SLIP}"


@pytest.mark.parametrize(("line", "gbps"), [
    ("nic_gbit_per_s = 400", 50.0),  # the rating in Gb/s, / 8
    ("nic_gbit_per_s = 3200", 400.0),  # a 3.2 Tb/s NIC that is meant
    ("nic_gbps = 100", 100.0),  # an 800 Gb/s NIC: 100 GB/s is no Gb/s rating
])
def test_a_nic_is_given_in_gbit_or_as_gbps_that_is_no_rating(tmp_path, line, gbps):
    path = write_space_files(tmp_path, SPACE.replace("nic_gbps = 1", line))
    assert load_codesign(path).nic_gbps == gbps


@pytest.mark.parametrize(("line", "field", "given"), [
    ("nic_gbps = 5e-324", "nic_gbps", "4.94066e-324 GB/s"),  # (NIC counts / it overflowed)
    ("nic_gbps = 0.05", "nic_gbps", "0.05 GB/s"),  # (50 GB/s written in TB/s)
    ("nic_gbit_per_s = 0.4", "nic_gbit_per_s", "0.4 Gb/s"),
    ("nic_gbps = 0.4", "nic_gbps", "0.4 GB/s"),  # (400 Gb/s written in Tb/s)
])
def test_a_nic_slower_than_one_gigabit_port_is_refused(tmp_path, line, field, given):
    path = write_space_files(tmp_path, SPACE.replace("nic_gbps = 1", line))
    with pytest.raises(InputError) as e:
        load_codesign(path)
    assert str(e.value) == (
        f"{path}: {field}: {given} is slower than 1 GB/s (8 Gb/s): a speed in Tb/s or TB/s, or a "
        "typo?; "
        "fix: give one NIC port's speed, e.g. nic_gbps = 50 (a 400 Gb/s port, GB/s per "
        "direction) or nic_gbit_per_s = 400")


def test_a_nic_speed_given_twice_is_refused(tmp_path):
    text = SPACE.replace("nic_gbps = 1\n", "nic_gbps = 50\nnic_gbit_per_s = 400\n")
    path = write_space_files(tmp_path, text)
    with pytest.raises(InputError) as e:
        load_codesign(path)
    assert str(e.value) == (f"{path}: nic_gbit_per_s: given together with nic_gbps; fix: give the "
                            "NIC's speed once: nic_gbps (GB/s) or nic_gbit_per_s (Gb/s)")


def test_the_shape_space_reader_refuses_the_same_slip(tmp_path):
    from hieropt.io.space import load_space
    from tests.explore.util import space_text

    path = tmp_path / "space.toml"
    path.write_text(space_text().replace("nic_gbps = 50", "nic_gbps = 400"), encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_space(path)
    assert str(e.value) == f"{path}: {_NIC_SLIP}"
    path.write_text(space_text().replace("nic_gbps = 50", "nic_gbit_per_s = 400"), encoding="utf-8")
    assert load_space(path).nic_gbps == 50.0


# --------------------------------------------------------------------------------------------------
# A space's constraints were parsed only during the sweep, with 'top' replaced first: the error
# named no file and quoted text never written ("constraints: constraint 'bw[1] <= 200 Gb/s'", at
# column 10).

_FIXED = (
    SPACE[: SPACE.index("[[levels]]")].replace("dims = [1, 2]\n", "")
    + SPACE[SPACE.index("[cost.A]"):]
    + '[network]\ndims = [{block = "Ring", npus = 2, cost_class = "A"}, '
    '{block = "Switch", npus = 4, cost_class = "B"}]\n'
)


@pytest.mark.parametrize(("constraint", "message"), [
    ("bw[top] <= 200 Gb/s",
     "constraints[1]: 'bw[top] <= 200 Gb/s': syntax error at column 12: '200' has the unit 'Gb/s': "
     "constraints take plain numbers, in GB/s per NPU (1 GB = 1e9 bytes; Gb/s / 8 = GB/s); fix: "
     "write the number alone: 25 (200 Gb/s = 25 GB/s per NPU)"),
    ("bw[top] >== 1",
     "constraints[1]: 'bw[top] >== 1': syntax error at column 9: '>==' is not a comparison "
     "operator; fix: use >="),
    ("bw[5] >= 1",
     "constraints[1]: 'bw[5] >= 1': bw[5] at column 1 is out of range: the network has 2 "
     "dimensions; fix: use bw[0]..bw[1]"),
])
def test_a_bad_constraint_names_the_file_the_entry_and_the_text_as_written(tmp_path, constraint,
                                                                             message):
    text = _FIXED.replace('["sum(bw) == 3"]', f'["sum(bw) == 3", "{constraint}"]')
    path = write_space_files(tmp_path, text)
    with pytest.raises(InputError) as e:
        load_codesign(path)
    assert str(e.value) == f"{path}: {message}"


def test_a_constraint_that_fits_only_some_shapes_names_the_count(tmp_path):
    # the shape space has shapes of 1 and 2 dimensions: bw[1] is no dimension of the first
    text = SPACE.replace('["sum(bw) == 3"]', '["sum(bw) == 3", "bw[1] <= 2"]')
    path = write_space_files(tmp_path, text)
    with pytest.raises(InputError) as e:
        load_codesign(path)
    assert str(e.value) == (
        f"{path}: constraints[1]: 'bw[1] <= 2' does not fit 1 dimension: bw[1] at column 1 is out "
        "of range: the network has 1 dimension; fix: use bw[0] (sum(bw), or bw[top] for the last "
        "dimension)"
    )
    path = write_space_files(tmp_path, text.replace("bw[1]", "bw[top]"))
    assert load_codesign(path).constraints[1] == "bw[top] <= 2"


def test_a_misspelled_key_of_a_space_names_the_key_meant(tmp_path):
    path = write_space_files(tmp_path, SPACE.replace("[plans]", "[plan]"))
    with pytest.raises(InputError) as e:
        load_codesign(path)
    assert str(e.value).startswith(f"{path}: plan: unknown key (did you mean 'plans'?); fix: ")


# --------------------------------------------------------------------------------------------------
# A space's set was checked against the model file's own plan (here PP 4 on 4 NPUs), which the
# space never searches: global_batch_size=4 was refused for "2 micro-batches per iteration are
# fewer than the 4 pipeline stages", though the space's plans on 8 NPUs include valid ones.

_PP4 = MODEL.replace("micro_batch_size = 2\n", "micro_batch_size = 2\npp = 4\nnpus = 4\n")


def test_set_is_checked_against_the_plans_the_space_searches(tmp_path):
    from hieropt.studies.codesign.plans import enumerate_plans

    text = SPACE.replace("npus = 8\n", 'npus = 8\nset = ["global_batch_size=4"]\n')
    sp = load_codesign(write_space_files(tmp_path, text, _PP4))
    assert sp.base.plan.global_batch_size == 4
    plans = enumerate_plans(sp.base, 8, sp.plans)
    # 4 sequences over dp x 2: only dp 2 (tp 4, pp 1: 1 micro-batch) and dp 1 (tp 4, pp 2: 2
    # micro-batches for 2 stages) divide it, each with both recompute choices
    assert [c.id for c in plans.fitting] == [
        "tp4 cp1 pp1 dp2 ep1 z0 nore nosp v1 mb2", "tp4 cp1 pp1 dp2 ep1 z0 full nosp v1 mb2",
        "tp4 cp1 pp2 dp1 ep1 z0 nore nosp v1 mb2", "tp4 cp1 pp2 dp1 ep1 z0 full nosp v1 mb2",
    ]
    assert plans.combinations == 12 and sum(plans.invalid.values()) == 8


def test_a_set_that_no_searched_plan_meets_is_refused_with_the_plans_reasons(tmp_path):
    from typer.testing import CliRunner

    from hieropt.cli import app

    text = SPACE.replace("npus = 8\n", 'npus = 8\nset = ["global_batch_size=2"]\n')
    path = write_space_files(tmp_path, text, _PP4)
    r = CliRunner().invoke(app, ["codesign", str(path), "--workers", "1"])
    assert r.exit_code == 2
    # (no plan of dp <= 8 with 2 sequences per micro-batch divides a batch of 2)
    # (the reasons grouped by the field they name, the commonest shown: all 12 combinations)
    assert r.stderr.strip() == (
        f"error: {path}: plans: none of the 12 plan combinations is valid for the model "
        "(plan.global_batch_size: 2 sequences are not a multiple of dp x micro_batch_size = "
        "4 x 2 = 8 (12 combinations like it)); fix: give a cluster size (npus, --sizes) that "
        "tp x pp of the choices divides and whose dp = npus / (tp x cp x pp) divides the global "
        "batch of 2 sequences (with the micro-batch), or widen the plan choices"
    )


def test_a_size_no_plan_divides_names_the_size_first():
    """12,000 H100s for Llama 3 405B (a batch of 2,048 sequences): no tp x pp of the choices
    gives a dp dividing the batch; the size's own reasons come before the plan flags' exclusions
    that hold at every size (overlap_sharded_comms with overlap_grad_reduce)."""
    from hieropt.io.codesign import load_codesign
    from hieropt.studies.codesign.plans import enumerate_plans
    from hieropt.studies.codesign.seen import invalid_reasons
    from tests.cases import REPO

    space = load_codesign(REPO / "spaces" / "codesign-llama3-405b.toml")
    text, sized = invalid_reasons(enumerate_plans(space.base, 12000, space.plans).invalid)
    assert sized
    fields = [part.split(": ")[0] for part in text.split("), ")]
    assert fields == ["plan.global_batch_size", "plan.npus", "plan.overlap_sharded_comms"]
    assert "(768 combinations)" in text
    assert invalid_reasons({"plan.pp: 3 does not divide the 96 layers": 1}) == (
        "plan.pp: 3 does not divide the 96 layers (1 combination)", False)


def test_a_switch_below_the_top_names_switch_only_at_top(tmp_path):
    """Two Switch levels (an NVLink Switch under a scale-out Switch) on exactly two dimensions: with
    switch_only_at_top = true (the default) no shape exists, and the error names that flag as the
    cause and the fix; with it false the search runs."""
    from tests.cli.util import error_line, run

    text = (SPACE.replace("dims = [1, 2]\n", "dims = [2, 2]\n")
            .replace('blocks = ["Ring", "FullyConnected"]', 'blocks = ["Switch"]')
            .replace("max_dims = 2\n", "max_dims = 1\n")
            .replace("[cost.A]\nlink_usd_per_gbps = 1.0\n",
                     "[cost.A]\nlink_usd_per_gbps = 1.0\nswitch_usd_per_gbps = 1.0\n"
                     "nic_usd_per_gbps = 1.0\n"))
    path = write_space_files(tmp_path, text)
    r = run("codesign", path, "--workers", "1")
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {path}: switch_only_at_top: no shape of 2 to 2 dimensions multiplies to 8 "
        "NPUs within the levels' sizes and limits with switch_only_at_top = true (the default: a "
        "Switch only as the last dimension), and a level below the top offers only Switch; fix: "
        "set switch_only_at_top = false to allow a Switch below the top (e.g. an NVLink Switch "
        "under a scale-out Switch), or give that level another block (Ring, FullyConnected)")
    path.write_text(text.replace("dims = [2, 2]\n", "dims = [2, 2]\nswitch_only_at_top = false\n"))
    r = run("codesign", path, "--workers", "1")
    assert r.exit_code == 0, r.output
    assert "a:SW2 b:SW4" in r.stdout or "a:SW4 b:SW2" in r.stdout


def test_a_catalog_without_the_space_classes_is_refused_before_the_search(tmp_path):
    """codesign --catalog with a catalog for other cost classes searched the whole space (every
    candidate solved) and then ended with exit 3, "no shortlisted design could be provisioned";
    the catalog is bad input, told before the search (exit 2) with the classes the space uses."""
    from pathlib import Path

    from ..cli.util import error_line, run

    repo = Path(__file__).resolve().parents[2]
    space = repo / "spaces" / "codesign-gpt3-calculon-a100.toml"
    catalog = repo / "catalogs" / "example-4d.toml"
    out = tmp_path / "rows.csv"
    r = run("codesign", space, "--workers", "1", "--catalog", catalog, "--out", out)
    assert r.exit_code == 2, r.output
    assert error_line(r) == (
        f"error: {catalog}: classes.NVLink: missing: the space's every network uses cost class "
        "'NVLink' (and InfiniBand) but the catalog has parts for InterChiplet, InterNode, "
        "InterPackage, InterPod only; fix: add [classes.NVLink] and [classes.InfiniBand] with "
        "their parts, or give the catalog of this space's cost classes"
    )
    assert not out.exists()  # (refused before any candidate was solved)
