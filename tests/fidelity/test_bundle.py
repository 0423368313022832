"""The ASTRA-sim bundle: network conventions, system JSON, trace schedules per loop, file layout (no
binary needed)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.io.astrasim_bundle import write_bundle
from hieropt.io.astrasim_network import sim_network
from hieropt.io.astrasim_trace import job_trace
from hieropt.io.chakra import attributes, read_trace
from hieropt.spec import Layer
from tests.cases import REPO
from tests.fidelity.instances import make_instance, ph

G = 2**30 / 1e9  # GiB per GB


def test_gpt3_4d_bundle_layout(tmp_path):
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    bw = [225.0, 138.0, 103.5, 33.5]
    b = write_bundle(inst, bw, tmp_path / "b")
    assert b.npus == 4096 and b.files == 5 + 4096
    first = tmp_path / "b" / "traces" / "0" / "et.0.et"
    assert first.stat().st_nlink == 4096  # one file, 4,096 names
    assert (tmp_path / "b" / "traces" / "0" / "et.4095.et").samefile(first)
    assert b.bytes_on_disk < 200_000
    net = (tmp_path / "b" / "network.yml").read_text()
    assert "topology: [ Ring, FullyConnected, FullyConnected, Ring, Switch ]" in net
    assert "npus_count: [ 4, 4, 2, 4, 32 ]" in net
    bw_line = next(ln for ln in net.splitlines() if ln.startswith("bandwidth:"))
    links = [float(x) for x in bw_line.split("[")[1].split("]")[0].split(",")]
    # Ring: one link of B; FullyConnected / Switch (direct): B / (p - 1); TP 4 and DP 2 of dimension
    # 1 each at B
    assert links == pytest.approx(
        [225 / G, 138 / 3 / G, 138 / 1 / G, 103.5 / G, 33.5 / 31 / G], rel=1e-12
    )
    system = json.loads((tmp_path / "b" / "system.json").read_text())
    assert system["all-reduce-implementation"] == ["ring", "direct", "direct", "ring", "direct"]
    assert system["all-to-all-implementation"] == [
        "direct1",
        "direct",
        "direct",
        "direct1",
        "direct",
    ]
    assert (
        system["collective-optimization"] == "localBWAware"
        and system["preferred-dataset-splits"] == 1
    )
    assert system["endpoint-delay"] == 1
    _, nodes = read_trace(first)
    colls = [attributes(n) for n in nodes if n.type == 7]
    dims = {tuple(c["involved_dim"]) for c in colls}
    # TP 16, DP 256
    assert dims == {(True, True, False, False, False), (False, False, True, True, True)}
    assert os.access(tmp_path / "b" / "run.sh", os.X_OK)


def test_latency_per_hop_and_halving_doubling(tmp_path):
    layer = Layer(name="l", forward=ph(0, "ALLREDUCE", 1e6), input_grad=ph(), weight_grad=ph())
    inst = make_instance(
        [
            ("Ring", 4, "direct", 300.0),
            ("Switch", 8, "halving_doubling", 500.0),
            ("FullyConnected", 4, "ring", 70.0),
            ("Ring", 8, "halving_doubling", 700.0),
        ],
        [layer],
        [4, 8, 4, 8],
        [1] * 4,
        [1] * 4,
    )
    sn = sim_network(inst, [10, 20, 30, 40])
    assert [s.link_latency_ns for s in sn.dims] == pytest.approx(
        [300 / 2, 500 / 2, 70, 700 * 3 / 7]
    )
    assert [s.link_gbps for s in sn.dims] == pytest.approx([10 / 3, 20, 30, 40])
    assert [s.implementation for s in sn.dims] == [
        "direct",
        "halvingDoubling",
        "ring",
        "halvingDoubling",
    ]
    bad = make_instance([("Switch", 6, "halving_doubling")], [layer], [6], [1], [1])
    with pytest.raises(InputError, match="power of two"):
        sim_network(bad, [10])


def test_groups_that_are_not_whole_simulator_dimensions():
    layer = Layer(
        name="l",
        forward=ph(0, "ALLREDUCE", 1e6),
        input_grad=ph(0, "ALLREDUCE", 1e6),
        weight_grad=ph(),
    )
    inst = make_instance([("Ring", 6)], [layer], [2], [3], [1])
    with pytest.raises(InputError, match="groups of 2, 3 NPUs on a dimension of 6"):
        sim_network(inst, [10])
    chain = make_instance([("Ring", 8)], [layer], [2], [4], [1])
    assert [s.npus for s in sim_network(chain, [10]).dims] == [2, 2, 2]
    with pytest.raises(InputError, match="bandwidth > 0"):
        sim_network(chain, [0])


def _deps(nodes):
    return {n.name: sorted(nodes[d].name for d in n.deps) for n in nodes}


@pytest.mark.parametrize(
    "loop", ["no_overlap", "recompute", "tp_dp_overlap", "tp_dp_overlap_cross", "pipeline"]
)
def test_trace_schedule_per_loop(loop):
    """Two layers with every phase present: the dependencies of each training loop, node by node."""
    layers = [
        Layer(
            name=f"l{i}",
            forward=ph(10, "ALLGATHER", 100),
            input_grad=ph(20, "ALLREDUCE", 100),
            weight_grad=ph(30, "REDUCESCATTER", 100),
        )
        for i in range(2)
    ]
    extra = {"pipeline": hieropt.spec.Pipeline(stages=2, microbatches=1, p2p_bytes=64, p2p_dim=0)} \
        if loop == "pipeline" else {}
    inst = make_instance(
        [("Ring", 4), ("Switch", 2)], layers, [4, 1], [4, 1], [1, 2], training_loop=loop, **extra
    )
    nodes = job_trace(inst, inst.jobs[0], sim_network(inst, [10, 10]))
    d = _deps(nodes)
    assert [n.id for n in nodes] == list(range(len(nodes)))
    fwd = [
        "l0.forward.compute",
        "l0.forward.all_gather",
        "l1.forward.compute",
        "l1.forward.all_gather",
    ]
    if loop == "pipeline":
        # (m + p - 1) slots, then the 2 weight-gradient collectives
        assert len(nodes) == 2 * (4 + 1 + 6 + 1) + 2
        assert d["l1.input_grad@0.compute"] == ["p2p.forward@0"]
        assert d["l1.weight_grad.reduce_scatter"] == ["p2p.backward@1"]
        return
    assert [n.name for n in nodes[:4]] == fwd
    ig1, wg1 = "l1.input_grad.compute", "l1.weight_grad.compute"
    if loop in ("no_overlap", "recompute"):
        chain = [n.name for n in nodes]
        assert all(d[b] == [a] for a, b in zip(chain, chain[1:], strict=False))
        assert len(nodes) == (12 if loop == "no_overlap" else 16)
    elif loop == "tp_dp_overlap":
        assert d[ig1] == ["l1.forward.all_gather"]
        assert d["l1.input_grad.all_reduce"] == [ig1] and d[wg1] == [ig1]
        assert d["l0.input_grad.compute"] == [
            "l1.input_grad.all_reduce",
            "l1.weight_grad.reduce_scatter",
        ]
    else:
        assert d[wg1] == ["l1.input_grad.all_reduce"]
        assert d["l0.input_grad.compute"] == [wg1]
        assert d["l0.weight_grad.reduce_scatter"] == [
            "l0.weight_grad.compute",
            "l1.weight_grad.reduce_scatter",
        ]


def test_run_sh_needs_a_binary(tmp_path):
    layer = Layer(name="l", forward=ph(5, "ALLREDUCE", 1e6), input_grad=ph(), weight_grad=ph())
    write_bundle(make_instance([("Ring", 2)], [layer], [2], [1], [1]), [10], tmp_path / "b")
    env = {k: v for k, v in os.environ.items() if k != "ASTRA_SIM"}
    r = subprocess.run([str(tmp_path / "b" / "run.sh")], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "give the ASTRA-sim binary" in r.stderr
    r = subprocess.run(
        [str(tmp_path / "b" / "run.sh"), str(tmp_path / "nope")], capture_output=True, text=True
    )
    assert r.returncode == 2 and "is not an executable file" in r.stderr


# ------------------------------------------------ what the trace writer refuses (codesign features)
def _refused(inst, tmp_path, *parts, alone=True):
    folder = tmp_path / "refused"
    with pytest.raises(InputError) as e:
        write_bundle(inst, [100.0] * inst.network.n_dims, folder)
    msg = str(e.value)
    assert "\n" not in msg and ("FILE.yml" in msg or not alone), msg
    for p in parts:
        assert p in msg, msg
    assert not folder.exists()  # refused before anything is written


def test_bundle_refuses_loop_step_without_a_pipeline_group(tmp_path):
    from hieropt.spec import StepSchedule

    layers = [
        Layer(
            name="l0",
            forward=ph(100.0, "ALLREDUCE", 1e6),
            input_grad=ph(100.0, "ALLREDUCE", 1e6),
            weight_grad=ph(100.0, "ALLREDUCE", 1e6),
        )
    ]
    inst = make_instance(
        [("Ring", 4), ("Switch", 8)],
        layers,
        (4, 1),
        (4, 1),
        (1, 8),
        training_loop="step",
        step=StepSchedule(microbatches=4, stages=2, overlap_dp=True),
    )
    _refused(inst, tmp_path, "mapping.groups", "2 pipeline stages without a 'pp' group of 2",
             alone=False)


def test_bundle_refuses_p2p_outside_loop_step_and_writes_named_groups(tmp_path):
    from hieropt.spec import Mapping, Phase, Workload

    p2p = [Layer(name="l0", forward=ph(100.0, "P2P", 1e6), input_grad=ph(100.0, "ALLREDUCE", 1e6),
                 weight_grad=ph(100.0))]
    inst = make_instance(
        [("Ring", 4), ("Switch", 8)], p2p, (1, 8), (4, 1), (1, 8), dimension_mode="concurrent"
    )
    _refused(inst, tmp_path, "workload w", "P2P")
    named = [
        Layer(
            name="l0",
            forward=Phase(compute_ns=100.0, collective="ALLREDUCE", size_bytes=1e6, group="tp"),
            input_grad=ph(100.0, "ALLREDUCE", 1e6),
            weight_grad=ph(100.0, "ALLREDUCE", 1e6),
        )
    ]
    plain = [Layer(name="l0", forward=ph(100.0), input_grad=ph(100.0), weight_grad=ph(100.0))]
    base = make_instance([("Ring", 4), ("Switch", 8)], plain, (4, 1), (4, 1), (1, 8))
    inst = type(base).model_validate(
        {
            **dict(base),
            "workload": Workload(name="w", layers=tuple(named)),
            "mapping": Mapping(
                forward=(4, 1), input_grad=(4, 1), weight_grad=(1, 8), groups={"tp": (4, 1)}
            ),
        }
    )
    bundle = write_bundle(inst, [100.0, 100.0], tmp_path / "named")
    assert [s.npus for s in sim_network(inst, [100.0, 100.0]).dims] == [4, 8]
    assert bundle.workloads[0].trace_files == 1


def test_bundle_refuses_several_pipeline_stages(tmp_path):
    """A workload with further pipeline stages (hieropt.spec.Workload.more_stages) is timed by its
    slowest stage; a trace states one workload for every NPU, so the bundle would simulate one stage
    and compare it with the slowest's time: refused (the network file alone is still written), and
    the one stage exports as before."""
    from hieropt.io.astrasim1 import format_workload

    layers = [
        Layer(
            name="l0",
            forward=ph(100.0, "ALLREDUCE", 1e6),
            input_grad=ph(100.0, "ALLREDUCE", 1e6),
            weight_grad=ph(100.0, "ALLREDUCE", 1e6),
        )
    ]
    slow = [
        Layer(
            name="l0",
            forward=ph(900.0, "ALLREDUCE", 1e6),
            input_grad=ph(100.0, "ALLREDUCE", 1e6),
            weight_grad=ph(100.0, "ALLREDUCE", 1e6),
        )
    ]
    base = make_instance([("Ring", 4), ("Switch", 8)], layers, (4, 1), (4, 1), (1, 8))
    two = base.model_copy(
        update={
            "workload": base.workload.model_copy(
                update={
                    "more_stages": (
                        base.workload.model_copy(
                            update={"name": "w-stage1", "layers": tuple(slow)}
                        ),
                    )
                }
            )
        }
    )
    assert hieropt.evaluate(two, [100.0, 100.0]).slowest_stage == "w-stage1"
    _refused(two, tmp_path, "workload w", "2 distinct pipeline stages")
    write_bundle(base, [100.0, 100.0], tmp_path / "one")  # the stage alone: as before
    with pytest.raises(
        InputError, match="more_stages: 2 distinct pipeline stages have no ASTRA-sim 1.0 text form"
    ):
        format_workload(two.workload)
