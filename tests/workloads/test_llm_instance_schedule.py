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
    naming ``training_loop``, the flag and the fix, never silently dropped; without them it is
    refused too (an LLM plan runs on loop step only)."""
    (tmp_path / "tiny.toml").write_text(MODEL.format(overlap="overlap_sharded_comms = true"),
                                        encoding="utf-8")
    path = tmp_path / "inst.toml"
    path.write_text(INSTANCE.format(step="").replace('"step"', '"no_overlap"'), encoding="utf-8")
    with pytest.raises(InputError, match='training_loop.*overlap_sharded_comms.*'
                                         'use training_loop = "step"'):
        hieropt.load_instance(path)
    (tmp_path / "tiny.toml").write_text(MODEL.format(overlap=""), encoding="utf-8")
    with pytest.raises(InputError, match='use training_loop = "step"'):
        hieropt.load_instance(path)


def test_another_loop_refuses_the_overlap_of_any_workload_of_a_mix(tmp_path):
    """A mix under loop ``no_overlap`` whose second workload is an LLM plan (its first a LIBRA
    one) is refused too, naming the plan's overlap."""
    (tmp_path / "plain.toml").write_text(
        'generator = "transformer"\n[params]\nname = "plain"\nlayers = 2\nhidden_size = 64\n'
        "sequence_length = 16\nffn_multiplier = 4\nmicro_batch = 1\nbytes_per_element = 2\n"
        "tp = 1\ndp = 4\nnpu_peak_tflops = 100.0\nefficiency = 0.5\n", encoding="utf-8")
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
                         "npus = 4\ntp = 2\ndp = 2\noverlap_tp_comms = true\n"
                         "sequence_parallel = true\n")
    (tmp_path / "tiny.toml").write_text(model, encoding="utf-8")
    path = tmp_path / "inst.toml"
    path.write_text(INSTANCE.format(step="").replace('"step"', '"no_overlap"'), encoding="utf-8")
    with pytest.raises(InputError, match="cannot run the plan's overlap_tp_comms"):
        hieropt.load_instance(path)


@pytest.mark.parametrize("loop", ["no_overlap", "tp_dp_overlap", "tp_dp_overlap_cross",
                                  "recompute"])
def test_an_llm_plan_under_a_libra_loop_is_refused(tmp_path, loop):
    """LIBRA's loops time one pass of a workload's layers: for the 4-micro-batch plan one
    micro-batch, a quarter of the iteration whose tokens and FLOPs the run figures divide by (an
    MFU 4x too high). Refused, naming training_loop and the fix (step); the plan loads on step."""
    (tmp_path / "tiny.toml").write_text(MODEL.format(overlap=""), encoding="utf-8")
    path = tmp_path / "inst.toml"
    path.write_text(INSTANCE.format(step="").replace('"step"', f'"{loop}"'), encoding="utf-8")
    with pytest.raises(InputError, match=r"training_loop: .*one micro-batch of one stage.*"
                                         r'use training_loop = "step"'):
        hieropt.load_instance(path)
    path.write_text(INSTANCE.format(step=""), encoding="utf-8")
    assert hieropt.load_instance(path).step.microbatches == 4


def test_a_missing_loop_suggests_step_for_an_llm_plan(tmp_path):
    """The missing-loop error's fix for an LLM plan is step (no_overlap would be refused)."""
    (tmp_path / "tiny.toml").write_text(MODEL.format(overlap=""), encoding="utf-8")
    path = tmp_path / "inst.toml"
    path.write_text(INSTANCE.format(step="").replace('training_loop = "step"\n', ""),
                    encoding="utf-8")
    with pytest.raises(InputError, match='training_loop: missing; fix: add training_loop = "step"'):
        hieropt.load_instance(path)
