"""Instance files with an LLM model as the workload: the plan's groups and schedule from the
workload's header, explicit named groups, an exact solve, and one-line errors for mappings that do
not match the workload."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.errors import InputError
from hieropt.io.instance import load_instance
from hieropt.io.llm import read_llm
from hieropt.model.plan import plan_figures
from hieropt.model.timing import evaluate
from hieropt.solvers.objectives import solve

REPO = Path(__file__).resolve().parents[2]
PLAN_4D = REPO / "instances" / "gpt3-plan-4d.toml"


def _write(tmp_path: Path, text: str) -> Path:
    base = PLAN_4D.read_text(encoding="utf-8").replace('"../models/', f'"{REPO}/models/')
    path = tmp_path / "inst.toml"
    path.write_text(base + text, encoding="utf-8")
    return path


def test_plan_instance_from_the_header():
    inst = load_instance(PLAN_4D)
    g = inst.mapping.groups
    assert (g["tp"], g["dp"], g["pp"]) == ((4, 2, 1, 1), (1, 4, 4, 4), (1, 1, 1, 8))
    assert (inst.step.microbatches, inst.step.stages, inst.step.virtual_stages) == (24, 8, 1)
    assert "placed on the lowest dimensions first" in inst.mapping_note
    sol = solve(inst)
    assert sol.success and sol.gap <= 1e-8
    bd = evaluate(inst, sol.bw_gbps)
    assert bd.iteration_time_ns == pytest.approx(sol.iteration_time_ns, rel=1e-9)
    # = hieropt workload plan's ideal iteration
    figures = plan_figures(read_llm(REPO / "models" / "gpt3-175b-llm.toml"))
    c = figures.compute()
    assert bd.compute_ns == pytest.approx(c["iteration_compute_ns"] + c["optimizer_ns"], rel=1e-9)
    assert bd.bubble_ns == pytest.approx(c["bubble_ns"], rel=1e-9)
    assert bd.compute_ns + bd.bubble_ns == pytest.approx(c["ideal_iteration_ns"], rel=1e-9)
    assert bd.communication_ns == pytest.approx(
        sol.iteration_time_ns - c["ideal_iteration_ns"], rel=1e-9
    ) and bd.communication_ns > 0


def test_explicit_named_groups_and_step(tmp_path):
    path = _write(tmp_path, '''
[mapping.groups]
tp = [4, 2, 1, 1]
pp = [1, 4, 2, 1]
dp = [1, 1, 2, 32]
[step]
overlap_dp = true
''')
    inst = load_instance(path)
    assert inst.mapping.forward == (4, 2, 1, 1) and inst.mapping.weight_grad == (1, 1, 2, 32)
    assert inst.step.overlap_dp and inst.step.microbatches == 24
    assert solve(inst).success


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            "[mapping.groups]\ntp = [4, 2, 1, 1]\ndp = [1, 4, 4, 4]\n",
            "mapping.groups: the workload gpt3-175b-stage7 runs collectives on group 'pp', "
            "which the mapping does not name",
        ),
        (
            "[mapping.groups]\ntp = [4, 1, 1, 1]\npp = [1, 8, 1, 1]\ndp = [1, 1, 4, 32]\n",
            "mapping.groups.tp: [4, 1, 1, 1] has 4 NPUs but the workload's header says "
            "model_parallel_npu_group = 8",
        ),
        (
            "[mapping.groups]\ntp = [4, 2, 1, 1]\npp = [1, 4, 2, 1]\ndp = [1, 1, 2, 64]\n",
            "mapping.groups.dp[3]: group of 64 NPUs exceeds dimension 3's 32 NPUs",
        ),
    ],
)
def test_mappings_that_do_not_match_the_plan(tmp_path, extra, message):
    with pytest.raises(InputError) as e:
        load_instance(_write(tmp_path, extra))
    assert message in str(e.value) and "fix: " in str(e.value) and "\n" not in str(e.value)


def test_network_of_another_size(tmp_path):
    text = PLAN_4D.read_text(encoding="utf-8").replace('"../models/', f'"{REPO}/models/').replace(
        "npus = 32, cost_class", "npus = 16, cost_class")
    path = tmp_path / "small.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_instance(path)
    assert str(e.value) == (
        f"{path}: network: the workload gpt3-175b-stage7 is planned for 4,096 NPUs but the network "
        "has 2,048 (its cost and power are for every NPU); fix: plan the workload for this "
        "network (dp in its model file's [plan], or `hieropt workload transformer --set dp=...` "
        "for a generated one), or give a network of 4,096 NPUs"
    )


def test_tp_workload_given_a_smaller_forward_group(tmp_path):
    """A TP-16 workload (header model_parallel_NPU_group: 16) given a forward group of 4 is
    refused."""
    text = (
        (REPO / "instances" / "gpt3-4d.toml")
        .read_text(encoding="utf-8")
        .replace('"../models/', f'"{REPO}/models/')
        .replace("forward = [4, 4, 1, 1]", "forward = [4, 1, 1, 1]")
    )
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(
        InputError,
        match=r"mapping.forward: \[4, 1, 1, 1\] has 4 NPUs but the workload gpt3-175b's "
        "header says model_parallel_NPU_group = 16",
    ):
        load_instance(path)


def test_bounds_in_tb_per_s_are_refused(tmp_path):
    """Llama 3 405B's bounds written in TB/s (0.45 for 450 GB/s of NVLink): refused as --bw
    0.45,0.05 is, with the bounds in GB/s."""
    text = (REPO / "instances" / "llama3-405b-16k-cluster.toml").read_text()
    text = text.replace("lower_gbps = 50, upper_gbps = 450", "lower_gbps = 0.05, upper_gbps = 0.45")
    text = text.replace("lower_gbps = 12.5, upper_gbps = 50",
                        "lower_gbps = 0.0125, upper_gbps = 0.05")
    path = tmp_path / "tb.toml"
    path.write_text(text.replace('"../models/', f'"{REPO}/models/'))
    with pytest.raises(InputError) as e:
        load_instance(path)
    assert str(e.value) == (
        f"{path}: bounds: every upper_gbps below 1 GB/s per NPU (0.45, 0.05) on the H100-SXM, "
        "whose scale-up alone has 450 GB/s per direction: looks like TB/s; fix: give GB/s per "
        "NPU per direction (TB/s x 1,000) in lower_gbps and upper_gbps: upper_gbps = 450, "
        "upper_gbps = 50 if every value is TB/s")
