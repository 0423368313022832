"""The plan an answer is for, as the buyer reads it: named after the model (not a pipeline stage)
and given by its true factors, whose product is the cluster (``dpc`` = dp x cp is derived, not
another factor)."""

from __future__ import annotations

import pytest

import hieropt
from hieropt.report.committee_answers import plan_text
from tests.cases import REPO
from tests.cli.util import run

LLAMA = REPO / "instances" / "llama3-405b-16k-cluster.toml"


def test_the_llama_plan_is_its_model_and_its_factors():
    inst = hieropt.load_instance(LLAMA)
    assert inst.workload.name == "llama3-405b-stage1"  # (the slowest stage's workload)
    # Llama 3 405B's plan (arXiv 2407.21783, Table 4): TP 8 x PP 16 x DP 128 = 16,384 GPUs
    assert plan_text(inst) == "llama3-405b: TP 8 x PP 16 x DP 128 = 16,384 NPUs"


def test_a_plan_with_context_and_expert_parallelism(tmp_path):
    inst = hieropt.load_instance(LLAMA)
    groups = {"tp": (8, 1), "cp": (1, 2), "pp": (1, 8), "dp": (1, 64), "ep": (1, 8),
              "edp": (1, 8), "dpc": (1, 128)}
    moe = inst.model_copy(update={"mapping": inst.mapping.model_copy(update={"groups": groups})})
    assert plan_text(moe) == (
        "llama3-405b: TP 8 x CP 2 x PP 8 x DP 64 = 8,192 NPUs (EP 8 x expert-DP 8)"
    )


@pytest.mark.heavy
def test_report_prints_the_plan(tmp_path):
    r = run("report", LLAMA, "-o", tmp_path / "r")
    assert r.exit_code == 0, r.output
    assert "  plan: llama3-405b: TP 8 x PP 16 x DP 128 = 16,384 NPUs" in r.stdout.splitlines()
    assert "dpc" not in r.stdout
