"""The plan's caveats (ZeRO-3, experts: :func:`hieropt.workloads.llm.flops.plan_caveats`) and the
default-calibration note, which solve, evaluate and compare print, are printed by ``pareto`` (whose
table shows each point's days) and by ``workload plan`` (whose compute times rest on the
calibration), each once, and are in their JSON ``notes``."""

from __future__ import annotations

import json

from hieropt.report.run import calibration_note
from hieropt.workloads.llm.flops import MOE_CAVEAT, ZERO3_CAVEAT, zero_pp_caveat
from tests.cases import REPO, gpt3_step_instance
from tests.cli.util import run

GPT3 = REPO / "models" / "gpt3-175b-llm.toml"
A100 = calibration_note("A100-SXM-80GB")
H100 = calibration_note("H100-SXM")
BEYOND_A100 = (
    "GB/s per NPU is above the A100-SXM-80GB's scale-up bandwidth of 300 GB/s per direction "
    "(catalog scaleup_gbps of the A100-SXM-80GB): no such NPU exists; bound it (bounds "
    "upper_gbps = 300) or name another accelerator"
)
"""The caveat on the step instance's designs (sum(bw) == 500 on A100s: more than NVLink's 300 GB/s
per direction on dimension 0), after its dimension and bandwidth."""
DOMAIN_A100 = (
    "dimension 1: 119.5 GB/s per NPU across 64 NPUs, beyond the A100-SXM-80GB's scale-up domain "
    "of 8 (catalog scaleup_npus of the A100-SXM-80GB, its baseboard or rack): past it one "
    "A100-SXM-80GB sends at most 32 GB/s through its NIC (catalog nic_gbps of the A100-SXM-80GB), "
    "so it needs a scale-up tier beyond that domain; bound it (bounds upper_gbps = 32) or take it "
    "as a hypothetical network"
)
"""The caveat on the step instance's designs whose second dimension (8 x 8 = 64 NPUs, past the
A100's 8-NPU baseboard) is faster than one A100's NIC: the optimum's and the front's 119.5 GB/s."""


ZERO3_PP2 = (
    "ZeRO stage 3 with pipeline parallelism (pp 2): DeepSpeed's pipeline engine refuses ZeRO "
    "stages 2 and 3 with pipeline parallelism and Megatron-LM runs ZeRO-3 through Megatron-FSDP, "
    "whose measured runs here have no pipeline parallelism; check that your training software "
    "runs this combination"
)
"""The note on a ZeRO-3 plan with two pipeline stages."""


def _notes(text: str) -> list[str]:
    return [line.removeprefix("note: ") for line in text.splitlines() if line.startswith("note: ")]


def _zero3(tmp_path):
    """GPT-3 (8 layers) on the 8 x 8 step instance, tp 2 x pp 2 x dp 16, ZeRO-3."""
    return gpt3_step_instance(tmp_path, (
        ("layers = 96", "layers = 8"), ("npus = 4096", "npus = 64"), ("tp = 8", "tp = 2"),
        ("pp = 8", "pp = 2"), ("dp = 64", "dp = 16"),
        ("global_batch_size = 1536", "global_batch_size = 64"),
        ("zero_stage = 1", "zero_stage = 3")))


def test_pareto_prints_the_zero3_caveat_and_the_calibration_note(tmp_path):
    inst = _zero3(tmp_path)
    r = run("pareto", inst, "--points", "3", "--tokens", "300B", "--json", tmp_path / "f.json")
    assert r.exit_code == 0, r.output
    assert "days" in r.stdout.split("\nnote: ")[0]
    notes = _notes(r.stdout)
    # the plan's caveat, the front's bandwidths beyond the A100 (its cheapest point puts all 500
    # GB/s per NPU on dimension 0), the calibration
    front = f"the front's designs reach dimension 0: 500 {BEYOND_A100}"
    assert notes[-5:] == [
        ZERO3_CAVEAT, ZERO3_PP2, front, f"the front's designs reach {DOMAIN_A100}", A100
    ]
    assert json.loads((tmp_path / "f.json").read_text())["notes"][-5:] == notes[-5:]
    solve = run("solve", inst, "--tokens", "300B", "--no-sensitivity")
    assert solve.exit_code == 0, solve.output
    # (as solve says them, with its optimum's 380.5 GB/s per NPU on dimension 0)
    assert _notes(solve.stdout)[-5:] == [
        ZERO3_CAVEAT, ZERO3_PP2, f"dimension 0: 380.5 {BEYOND_A100}", DOMAIN_A100, A100
    ]


def test_pareto_without_days_gives_the_caveat_alone(tmp_path):
    """Without a token budget the table shows no days: the calibration note is not due (as in
    solve), the plan's caveat is."""
    r = run("pareto", _zero3(tmp_path), "--points", "3")
    assert r.exit_code == 0, r.output
    assert "days" not in r.stdout.split("\nnote: ")[0]  # (the table, before the notes)
    assert _notes(r.stdout)[-4:] == [
        ZERO3_CAVEAT, ZERO3_PP2, f"the front's designs reach dimension 0: 500 {BEYOND_A100}",
        f"the front's designs reach {DOMAIN_A100}",
    ]
    assert A100 not in r.stdout


def test_workload_plan_prints_the_zero3_caveat():
    r = run("workload", "plan", GPT3, "--set", "zero_stage=3")
    assert r.exit_code == 0, r.output
    assert _notes(r.stdout) == [ZERO3_CAVEAT, zero_pp_caveat(3, 8), A100]
    plain = run("workload", "plan", GPT3)
    assert _notes(plain.stdout) == [A100]


def test_workload_plan_of_a_moe_model_prints_the_moe_caveat_and_its_json_has_it():
    model = REPO / "models" / "mixtral-8x7b.toml"
    r = run("workload", "plan", model)
    assert r.exit_code == 0, r.output
    assert _notes(r.stdout) == [MOE_CAVEAT, H100]
    r = run("workload", "plan", model, "--json", "-")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["notes"] == [MOE_CAVEAT, H100]
    assert _notes(r.stderr) == [MOE_CAVEAT, H100]  # (the tables on stderr with --json -)


def test_zero_2_or_3_with_pipeline_parallelism_is_noted_not_refused(tmp_path):
    """DeepSpeed's pipeline engine refuses ZeRO 2 and 3 with PP > 1, Megatron-FSDP's measured
    runs have no PP: a plan with either is run, with a note saying so in workload plan, evaluate
    and their JSON; ZeRO 2 or 3 without PP, or ZeRO 1 with PP, carries none."""
    r = run("workload", "plan", GPT3, "--set", "zero_stage=3", "--set", "pp=2", "--set", "dp=256",
            "--json", tmp_path / "p.json")
    assert r.exit_code == 0, r.output
    assert ZERO3_PP2 in _notes(r.stdout)
    assert ZERO3_PP2 in json.loads((tmp_path / "p.json").read_text())["notes"]
    two = run("workload", "plan", GPT3, "--set", "zero_stage=2")
    assert two.exit_code == 0, two.output
    assert _notes(two.stdout)[0] == (
        "ZeRO stage 2 with pipeline parallelism (pp 8): DeepSpeed's pipeline engine refuses ZeRO "
        "stages 2 and 3 with pipeline parallelism; check that your training software runs this "
        "combination (Llama 3's FSDP-based stack does)")
    no_pp = run("workload", "plan", GPT3, "--set", "zero_stage=2", "--set", "pp=1",
                "--set", "dp=512")
    assert no_pp.exit_code == 0, no_pp.output
    assert _notes(no_pp.stdout) == [A100]
    ev = run("evaluate", _zero3(tmp_path), "--bw", "100,100", "--json", tmp_path / "e.json")
    assert ev.exit_code == 0, ev.output
    assert ZERO3_PP2 in _notes(ev.stdout)
    assert ZERO3_PP2 in json.loads((tmp_path / "e.json").read_text())["notes"]
