"""A co-design space of a mixture-of-experts model (the tiny model with 4 experts, tp 1 or 2, pp 1
or 2, recompute none or full: 8 plans) with context parallelism (``set = ["cp=2"]``):
every plan combination is invalid because cp is modelled for dense models only, and cp is the
model file's, not a plan choice, so the refusal's fix is to drop cp or use a dense model, not to
widen the plan choices (which cannot help)."""

from __future__ import annotations

from hieropt.cli import app
from hieropt.studies.codesign.seen import model_fixes
from tests.cli.util import runner
from tests.codesign.spaces import MODEL, SPACE, write_space_files

MOE_MODEL = MODEL.replace("[params.plan]", """[params.model.moe]
experts = 4
top_k = 2
expert_ffn_size = 16
[params.plan]""")


def test_moe_with_cp_is_refused_with_the_model_fix(tmp_path):
    space = SPACE.replace("npus = 8\n", 'npus = 8\nset = ["cp=2"]\n').replace(
        "tp = [1, 2, 4]", "tp = [1, 2]")
    path = write_space_files(tmp_path, space, MOE_MODEL)
    r = runner.invoke(app, ["codesign", str(path), "--workers", "1"])
    assert r.exit_code == 2, r.output
    err = " ".join(r.output.split())
    assert ("none of the 8 plan combinations is valid for the model (plan.cp: context "
            "parallelism is modelled for dense models only (8 combinations))") in err
    assert err.endswith(
        'fix: drop context parallelism (cp = 1: the space\'s set = ["cp=1"] or the model '
        "file's plan) or use a dense model; the plan choices do not vary cp, so widening them "
        "cannot help")
    assert "widen the plan choices" not in err
    # the same space with cp 1 searches its plans
    path = write_space_files(tmp_path, space.replace('"cp=2"', '"cp=1"'), MOE_MODEL)
    r = runner.invoke(app, ["codesign", str(path), "--workers", "1"])
    assert r.exit_code == 0, r.output
    assert "plans: 8 combinations, 0 invalid for the model" in r.output


def test_a_reason_of_a_field_the_choices_do_not_vary_gets_its_own_fix():
    assert model_fixes({"plan.sequence_parallel: needs tp > 1": 4}) == []
    assert model_fixes({"plan.global_batch_size: 16 sequences are not ...": 4}) == []
    assert model_fixes({"plan.vocab_pad_multiple: 3 does not divide ...": 2,
                        "plan.cp: context parallelism is modelled for dense models only": 6}) == [
        "change plan.vocab_pad_multiple in the model file's plan or the space's set (the plan "
        "choices do not vary it)",
        'drop context parallelism (cp = 1: the space\'s set = ["cp=1"] or the model file\'s '
        "plan) or use a dense model; the plan choices do not vary cp, so widening them cannot "
        "help",
    ]
