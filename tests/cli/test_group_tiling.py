"""A job's parallel groups must tile the network, and the network must be the job's size: named
groups that cannot sit together (TP 8 x DP 2 on a dimension of 8 NPUs), a LIBRA-style mapping whose
data-parallel group overlaps the model-parallel one, an unknown or missing group name, and a network
larger than the job are refused by every command with one line and exit 2; the shipped and LIBRA
mappings pass."""

from __future__ import annotations

import pytest

from hieropt.io.instance import load_instance
from hieropt.spec.tiling import mapping_groups, tiling_problem
from tests.cases import REPO
from tests.cli.util import error_line, run

GPT3 = REPO / "instances" / "gpt3-4d.toml"
FIX = "fix: give groups that tile every dimension (their sizes multiply to its NPUs)"

PLAN = """generator = "llm"

[params.model]
name = "llama3-70b"
layers = 80
hidden_size = 8192
heads = 64
kv_heads = 8
ffn_size = 28672
gated_ffn = true
vocab_size = 128256
sequence_length = 8192
norm = "rmsnorm"
biases = false
dropout = false
position_embedding = "rotary"
tied_embeddings = false

[params.plan]
flash_attention = true
npus = 512
tp = 8
pp = 4
dp = 16
sequence_parallel = true
zero_stage = 1
micro_batch_size = 1
global_batch_size = 512
recompute = "selective"

[params.npu]
accelerator = "H100-SXM"
hbm_reserve_gib = 4.0
"""

INSTANCE = """name = "h100-512"
objective = "performance"
training_loop = "step"
workload = "plan.toml"
constraints = []
bounds = [
  {{ dim = 0, lower_gbps = 50, upper_gbps = 450 }},
  {{ dim = 1, lower_gbps = 12.5, upper_gbps = 50 }},
]

[network]
dims = [
  {{ block = "Switch", npus = 8, cost_class = "NVLink" }},
  {{ block = "Switch", npus = {npus}, cost_class = "ScaleOut" }},
]

[cost.NVLink]
link_usd_per_gbps = 0.01
switch_usd_per_gbps = 0.01
nic_usd_per_gbps = 0.01
[cost.ScaleOut]
link_usd_per_gbps = 56.0
switch_usd_per_gbps = 93.75
nic_usd_per_gbps = 240.0

[mapping.groups]
{groups}
"""


def _plan(tmp_path, groups: str, npus: int = 64):
    (tmp_path / "plan.toml").write_text(PLAN)
    path = tmp_path / "i.toml"
    path.write_text(INSTANCE.format(groups=groups, npus=npus))
    return path


def _gpt3(tmp_path, old: str, new: str):
    text = GPT3.read_text()
    assert old in text
    path = tmp_path / "g.toml"
    path.write_text(text.replace(old, new).replace('"../models/', f'"{REPO}/models/'))
    return path


COMMANDS = [
    ("solve", "--no-sensitivity"),
    ("evaluate", "--bw", "100,25"),
    ("pareto", "--points", "3"),
    ("report", "-o", "{out}"),
    ("export", "--astra-sim", "{out}.yml"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_named_groups_that_overlap_are_refused_by_every_command(tmp_path, command):
    path = _plan(tmp_path, "tp = [8, 1]\npp = [1, 4]\ndp = [2, 8]")
    args = [a.format(out=tmp_path / "out") for a in command]
    r = run(args[0], path, *args[1:])
    assert r.exit_code == 2, r.output
    assert error_line(r) == (
        f"error: {path}: mapping.groups.dp: [2, 8] does not fit beside tp [8, 1], pp [1, 4]: on "
        f"dimension 0 they need 8 x 2 = 16 NPUs, and it has 8; {FIX}"
    )


def test_a_pipeline_group_on_the_tensor_parallel_dimension_is_refused(tmp_path):
    r = run("solve", _plan(tmp_path, "tp = [8, 1]\npp = [4, 1]\ndp = [1, 16]"))
    assert r.exit_code == 2
    assert error_line(r).endswith(
        "mapping.groups.pp: [4, 1] does not fit beside tp [8, 1], dp [1, 16]: on dimension 0 they "
        f"need 8 x 4 = 32 NPUs, and it has 8; {FIX}"
    )


def test_the_valid_placement_solves(tmp_path):
    r = run("solve", _plan(tmp_path, "tp = [8, 1]\npp = [1, 4]\ndp = [1, 16]"), "--no-sensitivity")
    assert r.exit_code == 0, r.output
    # (the cheapest of the designs within 1e-8 of the fastest found, proven lower bound
    # 10,269,980,511.1 ns; the bf16 plan's FP32 gradients, 4 bytes)
    assert "iteration time: 10,269,980,613.8 ns" in r.stdout


@pytest.mark.parametrize(("groups", "line"), [
    ("tp = [8, 1]\npp = [1, 4]\ndp = [1, 16]\nep = [2, 8]",
     "mapping.groups.ep: unknown key: the workload llama3-70b-stage3 runs no collective on a "
     "group 'ep' (its groups: dp, pp, tp); fix: remove ep"),
    ("tp = [8, 1]\npp = [1, 4]\ndp = [1, 16]\ndpp = [1, 16]",
     "mapping.groups.dpp: unknown key: the workload llama3-70b-stage3 runs no collective on a "
     "group 'dpp' (its groups: dp, pp, tp); fix: remove dpp"),
    ("tp = [8, 1]\npp = [1, 4]\ndpx = [1, 16]",
     "mapping.groups.dpx: unknown key (did you mean 'dp'?): the workload llama3-70b-stage3 runs "
     "no collective on a group 'dpx' (its groups: dp, pp, tp); fix: rename 'dpx' to 'dp'"),
    ("tp = [8, 1]\npp = [1, 4]",
     "mapping.groups.dp: missing (weight_grad runs on the dp group when [mapping.groups] is "
     "given without it); fix: give dp's size on every dimension, or mapping.weight_grad"),
])
def test_unknown_and_missing_group_names(tmp_path, groups, line):
    path = _plan(tmp_path, groups)
    r = run("solve", path)
    assert r.exit_code == 2
    assert error_line(r) == f"error: {path}: {line}"


def test_a_group_of_one_npu_of_a_plan_name_is_accepted(tmp_path):
    inst = load_instance(_plan(tmp_path, "tp = [8, 1]\npp = [1, 4]\ndp = [1, 16]\ncp = [1, 1]"))
    assert inst.mapping.groups["cp"] == (1, 1)


def test_a_libra_mapping_whose_data_parallel_group_overlaps_tp_is_refused(tmp_path):
    """TP 16 on 4 x 4 and DP 256 on 2 x 1 x 4 x 32: dimension 0 (4 NPUs) would hold 4 x 2."""
    path = _gpt3(tmp_path, "weight_grad = [1, 2, 4, 32]", "weight_grad = [2, 1, 4, 32]")
    r = run("solve", path)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {path}: mapping.weight_grad: [2, 1, 4, 32] does not fit beside forward [4, 4, 1, "
        f"1]: on dimension 0 they need 4 x 2 = 8 NPUs, and it has 4; {FIX}"
    )


@pytest.mark.parametrize("command", [("solve",), ("evaluate", "--bw", "200,150,100,50")])
def test_a_network_larger_than_the_transformer_job_is_refused(tmp_path, command):
    """GPT-3 generated for TP 16 x DP 256 on a Switch of 64 (8,192 NPUs): cost and power would be
    for 8,192 NPUs, MFU and tokens/s for 4,096."""
    path = _gpt3(tmp_path, "npus = 32,", "npus = 64,")
    r = run(command[0], path, *command[1:])
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {path}: network: the workload gpt3-175b is planned for tp 16 x dp 256 = 4,096 "
        "NPUs but the network has 8,192 (its cost and power are for every NPU); fix: set dp = 512 "
        "in the workload model, or give a network of 4,096 NPUs"
    )


def test_a_network_larger_than_the_plan_is_refused_with_explicit_groups(tmp_path):
    """The LLM plan of 512 NPUs on 8 x 128 with its groups given: the same check as a derived
    mapping's."""
    path = _plan(tmp_path, "tp = [8, 1]\npp = [1, 4]\ndp = [1, 32]", npus=128)
    r = run("solve", path)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {path}: network: the workload llama3-70b-stage3 is planned for 512 NPUs but the "
        "network has 1,024 (its cost and power are for every NPU); fix: plan the workload for "
        "this network (dp in its model file's [plan], or `hieropt workload transformer --set "
        "dp=...` for a generated one), or give a network of 512 NPUs"
    )


@pytest.mark.parametrize(("named", "phases", "sizes", "want"), [
    # LIBRA's GPT-3 communicator on its 4-D network: TP 16 x DP 256 tiles
    ({}, {"forward": (4, 4, 1, 1), "input_grad": (4, 4, 1, 1), "weight_grad": (1, 2, 4, 32)},
     (4, 8, 4, 32), None),
    # the whole-cluster policies: every phase on all NPUs is one group
    ({}, {"forward": (4, 8), "input_grad": (4, 8), "weight_grad": (4, 8)}, (4, 8), None),
    # TP (2, 2) and DP (2, 2) on 4 x 4: two orthogonal groups of the same shape
    ({}, {"forward": (2, 2), "input_grad": (2, 2), "weight_grad": (2, 2)}, (4, 4), None),
    # a mixture-of-experts plan: dp = ep x edp is no factor of its own
    ({"tp": (4, 1), "ep": (2, 2), "edp": (1, 4), "dp": (2, 8), "pp": (1, 2)},
     {"forward": (4, 1), "input_grad": (4, 1), "weight_grad": (2, 8)}, (8, 16), None),
    # TP on all of dimension 0 and the data-parallel group on it too
    ({}, {"forward": (8, 1), "input_grad": (8, 1), "weight_grad": (8, 4)}, (8, 4),
     ("weight_grad", "[8, 4] does not fit beside forward [8, 1]: on dimension 0 they need 8 x 8 "
      "= 64 NPUs, and it has 8")),
    # an input-gradient group that is part of the forward one: one model-parallel group
    ({}, {"forward": (8, 1), "input_grad": (2, 1), "weight_grad": (9, 32)}, (72, 32), None),
    # TP 4 x DP 2 on 4 x 4: half of dimension 1 holds no group
    ({}, {"forward": (4, 1), "input_grad": (4, 1), "weight_grad": (1, 2)}, (4, 4),
     ("groups", "the groups forward, weight_grad give 2 of dimension 1's 4 NPUs")),
])
def test_tiling_rule_by_hand(named, phases, sizes, want):
    why = tiling_problem(mapping_groups(named, phases, sizes), sizes)
    assert (why[:2] if why else None) == want


def test_one_stage_of_a_pipeline_need_not_fill_the_network():
    """Loop ``pipeline``: the mapping is one stage's, the stages fill the rest (not exact)."""
    phases = {"forward": (4, 1), "input_grad": (4, 1), "weight_grad": (1, 2)}
    assert tiling_problem(mapping_groups({}, phases, (4, 4)), (4, 4), exact=False) is None



def test_a_workload_that_states_no_parallelism_keeps_its_groups(tmp_path):
    """An ASTRA-sim header without a group size (DATA) and a phase mapping that would not tile:
    the phases' groups are taken as given (hand-made and fuzz instances), the instance loads."""
    (tmp_path / "w.txt").write_text(
        "DATA\n1\nl0 -1 1000 ALLREDUCE 1000000 1000 NONE 0 2000 ALLREDUCE 2000000 0\n"
    )
    text = GPT3.read_text().replace('"../models/gpt3-175b.toml"', '"w.txt"')
    text = text.replace("weight_grad = [1, 2, 4, 32]", "weight_grad = [4, 1, 4, 32]")
    (tmp_path / "i.toml").write_text(text)
    inst = load_instance(tmp_path / "i.toml")
    assert inst.mapping.weight_grad == (4, 1, 4, 32)


MIXTRAL_3LEVEL = """name = "mixtral-3level"
objective = "performance"
training_loop = "step"
workload = "{model}"
constraints = ["sum(bw) == 600"]
[network]
dims = [
  {{ block = "Ring", npus = 2, cost_class = "Chiplet" }},
  {{ block = "Switch", npus = 4, cost_class = "Node" }},
  {{ block = "Switch", npus = 64, cost_class = "ScaleOut" }},
]
{mapping}
[cost.Chiplet]
link_usd_per_gbps = 1.0
[cost.Node]
link_usd_per_gbps = 4.0
switch_usd_per_gbps = 13.0
nic_usd_per_gbps = 1.0
[cost.ScaleOut]
link_usd_per_gbps = 50.0
switch_usd_per_gbps = 93.75
nic_usd_per_gbps = 120.0
"""


def test_the_placement_solve_prints_can_be_written_back(tmp_path):
    # an MoE plan's placement as solve prints it (tp, ep, edp, pp: dp = ep x edp is implied)
    # gives the derived placement's optimum
    import hieropt

    model = REPO / "models" / "mixtral-8x7b.toml"
    derived = tmp_path / "derived.toml"
    derived.write_text(MIXTRAL_3LEVEL.format(model=model, mapping=""))
    pasted = tmp_path / "pasted.toml"
    pasted.write_text(MIXTRAL_3LEVEL.format(model=model, mapping=(
        "[mapping.groups]\ntp = [2, 1, 1]\nep = [1, 4, 2]\nedp = [1, 1, 8]\npp = [1, 1, 4]")))
    options = hieropt.SolveOptions(sensitivity=False)
    a = hieropt.solve(hieropt.load_instance(derived), options=options)
    b = hieropt.solve(hieropt.load_instance(pasted), options=options)
    assert a.status.value == b.status.value == "optimal"
    assert a.iteration_time_ns == b.iteration_time_ns
    # (bf16: FP32 gradients, 4 bytes)
    assert round(a.iteration_time_ns / 1e6, 3) == 1867.737
