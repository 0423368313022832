"""An instance file whose workload is an LLM model file runs the plan's own step schedule: the
micro-batches, stages and virtual stages, and which collectives run on their own stream
(``overlap_sharded_comms``, ``overlap_grad_reduce``), as ``validate`` and ``codesign`` run the same
plan; a ``[step]`` table in the instance file replaces what it states."""

from __future__ import annotations

import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.io.astrasim_bundle import write_bundle
from hieropt.io.llm import read_llm
from hieropt.model.groups import instance_for
from tests.validate.tiny import MODEL as TINY

MODEL = TINY.replace(  # the validate tests' tiny LLM on 4 NPUs, ZeRO-2, 4 micro-batches
    "npus = 2\ndp = 2\nglobal_batch_size = 4\n",
    "npus = 4\ndp = 4\nzero_stage = 2\nglobal_batch_size = 16\n{overlap}\n",
)

INSTANCE = """name = "tiny-zero2"
objective = "performance"
training_loop = "step"
workload = "tiny.toml"
constraints = []
{step}
[network]
dims = [
  {{ block = "Switch", npus = 2, cost_class = "c" }},
  {{ block = "Switch", npus = 2, cost_class = "c" }},
]
[cost.c]
link_usd_per_gbps = 1.0
switch_usd_per_gbps = 1.0
nic_usd_per_gbps = 1.0
"""

BW = [3.0, 0.5]


def _instance(tmp_path, overlap: str = "", step: str = ""):
    (tmp_path / "tiny.toml").write_text(MODEL.format(overlap=overlap), encoding="utf-8")
    path = tmp_path / "inst.toml"
    path.write_text(INSTANCE.format(step=step), encoding="utf-8")
    return hieropt.load_instance(path)


def test_the_plans_own_stream_collectives_reach_the_instance(tmp_path):
    """ZeRO-2 with ``overlap_sharded_comms``: the instance's step runs the DP reduce-scatters on
    their own stream (the groups ``dp``, ``edp``, ``dpc``), and its time is the validate path's
    (``instance_for`` on the same plan and network) to the last digit; without the flag, the
    reduce-scatters are exposed and the iteration is slower at this bandwidth."""
    on = _instance(tmp_path, "overlap_sharded_comms = true")
    assert on.step.overlap_groups == ("dp", "edp", "dpc")
    assert (on.step.microbatches, on.step.stages, on.step.virtual_stages) == (4, 1, 1)
    p = read_llm(tmp_path / "tiny.toml")
    same = instance_for(p, on.network, on.cost)
    t_on = hieropt.evaluate(on, BW).iteration_time_ns
    assert t_on == hieropt.evaluate(same, BW).iteration_time_ns
    off = _instance(tmp_path)
    assert off.step.overlap_groups == () and not off.step.overlap_dp
    assert hieropt.evaluate(off, BW).iteration_time_ns > t_on * 1.01


def test_the_instance_files_step_table_replaces_the_plans_overlap(tmp_path):
    """``[step] overlap_groups = []`` in the instance file: the reduce-scatters exposed again (the
    file's choice, stated), the plan's micro-batch count kept."""
    inst = _instance(tmp_path, "overlap_sharded_comms = true", "[step]\noverlap_groups = []")
    assert inst.step.overlap_groups == () and inst.step.microbatches == 4
    plain = _instance(tmp_path)
    assert (hieropt.evaluate(inst, BW).iteration_time_ns
            == hieropt.evaluate(plain, BW).iteration_time_ns)


def test_export_refuses_the_own_stream_plan_it_cannot_write(tmp_path):
    """ASTRA-sim traces run every collective of a pass in its layer's place: the bundle of a plan
    with own-stream collectives is refused, naming the field and the fix."""
    inst = _instance(tmp_path, "overlap_sharded_comms = true")
    with pytest.raises(InputError, match="overlap_groups"):
        write_bundle(inst, BW, tmp_path / "bundle")


def test_another_loop_refuses_the_plans_overlap(tmp_path):
    """Under loop ``no_overlap`` the plan's own-stream collectives cannot run: refused (exit 2),
    naming ``training_loop`` and both fixes, never silently dropped; without them it loads."""
    (tmp_path / "tiny.toml").write_text(MODEL.format(overlap="overlap_sharded_comms = true"),
                                        encoding="utf-8")
    path = tmp_path / "inst.toml"
    path.write_text(INSTANCE.format(step="").replace('"step"', '"no_overlap"'), encoding="utf-8")
    with pytest.raises(InputError, match='training_loop.*set training_loop = "step"'):
        hieropt.load_instance(path)
    (tmp_path / "tiny.toml").write_text(MODEL.format(overlap=""), encoding="utf-8")
    assert hieropt.load_instance(path).training_loop == "no_overlap"


def test_another_loop_refuses_the_overlap_of_any_workload_of_a_mix(tmp_path):
    """A mix under loop ``no_overlap`` whose second workload's plan overlaps is refused too."""
    (tmp_path / "plain.toml").write_text(MODEL.format(overlap=""), encoding="utf-8")
    (tmp_path / "tiny.toml").write_text(MODEL.format(overlap="overlap_sharded_comms = true"),
                                        encoding="utf-8")
    top = ('name = "mix"\nobjective = "performance"\ntraining_loop = "no_overlap"\n'
           "constraints = []\n")
    jobs = "".join(f'[[workloads]]\nworkload = "{w}"\nweight = 1.0\n' for w in ("plain.toml",
                                                                             "tiny.toml"))
    path = tmp_path / "mix.toml"
    rest = INSTANCE.format(step="")
    path.write_text(top + jobs + rest[rest.index("[network]"):], encoding="utf-8")
    with pytest.raises(InputError, match="overlap_sharded_comms"):
        hieropt.load_instance(path)


def test_another_loop_names_the_tp_overlap(tmp_path):
    """A plan with the TP collectives on their own stream under loop ``no_overlap``: refused,
    naming ``overlap_tp_comms`` (not the ZeRO flag the plan does not set)."""
    model = TINY.replace("npus = 2\ndp = 2\n",
                         "npus = 4\ntp = 2\ndp = 2\noverlap_tp_comms = true\n")
    (tmp_path / "tiny.toml").write_text(model, encoding="utf-8")
    path = tmp_path / "inst.toml"
    path.write_text(INSTANCE.format(step="").replace('"step"', '"no_overlap"'), encoding="utf-8")
    with pytest.raises(InputError, match="or overlap_tp_comms = false in the model file"):
        hieropt.load_instance(path)
