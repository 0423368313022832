"""The traces of loop ``step`` without the simulator: named groups as simulator dimensions, the
stage order of 1F1B and of the interleaved schedule (hand-derived), chunks, and the per-NPU files
(every send matched by its receive
on the neighbouring stage's NPU with the same coordinates otherwise; hard links where the NPUs are
equal)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.io.astrasim_bundle import write_bundle
from hieropt.io.astrasim_groups import group_layout, snake
from hieropt.io.astrasim_network import sim_network
from hieropt.io.astrasim_stages import chunks, stage_workloads
from hieropt.io.astrasim_step import order
from hieropt.io.chakra import NODE_TYPE, attributes, padded_varint, read_trace
from tests.cases import REPO, STEP_INSTANCE_TOML


def step_instance(tmp_path: Path, tp: int, pp: int, dp: int, batch: int, v: int = 1):
    """GPT-3's architecture with 8 layers on FullyConnected 8 x Switch 8 under loop step (plan tp x
    pp x dp)."""
    model = (REPO / "models" / "gpt3-175b-llm.toml").read_text()
    for old, new in (
        ("layers = 96", "layers = 8"),
        ("npus = 4096", "npus = 64"),
        ("tp = 8", f"tp = {tp}"),
        ("pp = 8", f"pp = {pp}"),
        ("dp = 64", f"dp = {dp}"),
        ("global_batch_size = 1536", f"global_batch_size = {batch}"),
        (
            'schedule = "1f1b"',
            'schedule = "1f1b"' if v == 1 else f'schedule = "interleaved"\nvirtual_stages = {v}',
        ),
    ):
        model = model.replace(old, new)
    (tmp_path / "model.toml").write_text(model)
    (tmp_path / "inst.toml").write_text(STEP_INSTANCE_TOML)
    return hieropt.load_instance(tmp_path / "inst.toml")


def test_snake_order_steps_one_coordinate():
    assert snake([2, 2]) == [(0, 0), (1, 0), (1, 1), (0, 1)]
    assert snake([3]) == [(0,), (1,), (2,)]
    seq = snake([3, 2, 2])
    assert len(set(seq)) == 12
    for a, b in zip(seq, seq[1:], strict=False):
        assert sum(abs(x - y) for x, y in zip(a, b, strict=True)) == 1


def test_one_f_one_b_order():
    assert order(4, 6, 1, 0) == [
        ("F", 0, 0),
        ("F", 1, 0),
        ("F", 2, 0),
        ("F", 3, 0),
        ("B", 0, 0),
        ("F", 4, 0),
        ("B", 1, 0),
        ("F", 5, 0),
        ("B", 2, 0),
        ("B", 3, 0),
        ("B", 4, 0),
        ("B", 5, 0),
    ]
    assert order(4, 6, 1, 3)[:4] == [("F", 0, 0), ("B", 0, 0), ("F", 1, 0), ("B", 1, 0)]
    assert order(4, 2, 1, 0) == [
        ("F", 0, 0),
        ("F", 1, 0),
        ("B", 0, 0),
        ("B", 1, 0),
    ]  # warm-up capped at m


def test_interleaved_order():
    """p = 2, v = 2, m = 2 (chunk j of stage r is model chunk 2 j + r): stage 0 warms up with all 4
    chunk
    forwards; stage 1 with 2, then alternates."""
    assert order(2, 2, 2, 0) == [
        ("F", 0, 0),
        ("F", 1, 0),
        ("F", 0, 1),
        ("F", 1, 1),
        ("B", 0, 1),
        ("B", 1, 1),
        ("B", 0, 0),
        ("B", 1, 0),
    ]
    assert order(2, 2, 2, 1) == [
        ("F", 0, 0),
        ("F", 1, 0),
        ("F", 0, 1),
        ("B", 0, 1),
        ("F", 1, 1),
        ("B", 1, 1),
        ("B", 0, 0),
        ("B", 1, 0),
    ]
    for r in range(4):
        tasks = order(4, 8, 3, r)
        assert Counter(tasks) == Counter(
            (k, i, j) for k in "FB" for i in range(8) for j in range(3)
        )


def test_interleaved_order_with_a_micro_batch_group():
    """p = 2, v = 2, m = 4, N = 4 (breadth-first): stage 0 runs 2 (p - 1) + (v - 1) N = 6 warm-up
    forwards, chunk 0 of micro-batches 0-3 then chunk 1 of 0-1; then forward / backward pairs (the
    backwards in the forward order, chunks reversed); N = 2 = p is the default order."""
    F, B = "F", "B"
    assert order(2, 4, 2, 0, 4) == [
        (F, 0, 0), (F, 1, 0), (F, 2, 0), (F, 3, 0), (F, 0, 1), (F, 1, 1),
        (F, 2, 1), (B, 0, 1), (F, 3, 1), (B, 1, 1),
        (B, 2, 1), (B, 3, 1), (B, 0, 0), (B, 1, 0), (B, 2, 0), (B, 3, 0),
    ]
    assert order(2, 4, 2, 0, 2) == order(2, 4, 2, 0)
    # a last group of the remainder: m = 6, N = 4 on p = 2 -> groups 0-3 and 4-5
    forwards = [(i, j) for k, i, j in order(2, 6, 2, 1, 4) if k == F]
    assert forwards == [(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1), (2, 1), (3, 1),
                        (4, 0), (5, 0), (4, 1), (5, 1)]


def test_named_groups_become_simulator_dimensions(tmp_path):
    inst = step_instance(tmp_path, tp=4, pp=2, dp=8, batch=16)
    assert inst.mapping.groups["pp"] == (1, 2)
    lay = group_layout(inst)
    assert lay.sizes == (4, 2, 4, 2)  # FC 8 = tp 4 x dp 2; Switch 8 = dp 4 x pp 2
    assert lay.groups["tp"] == (0,) and lay.groups["dp"] == (1, 2) and lay.groups["pp"] == (3,)
    assert lay.groups["forward"] == (0,) and lay.groups["weight_grad"] == (1, 2)
    assert [lay.stage_of(n) for n in (0, 31, 32, 63)] == [0, 0, 1, 1]
    assert lay.peer(5, 1) == 37 and lay.peer(37, 0) == 5
    net = sim_network(inst, [300.0, 200.0])
    # the pipeline's own factor of the Switch carries sends only: one link of B (a send: S / B),
    # not B / (p - 1)
    assert [d.algorithm for d in net.dims] == ["direct", "direct", "direct", "ring"]
    assert net.dims[3].link_gbps == 200.0


def test_moe_groups_dp_spans_ep_and_edp():
    from hieropt.spec import (
        CostClass,
        CostModel,
        Dimension,
        Instance,
        Layer,
        Mapping,
        Network,
        Phase,
        StepSchedule,
        Workload,
    )
    from tests.fidelity.instances import ph

    layer = Layer(
        name="l",
        forward=Phase(compute_ns=10.0, collective="ALLTOALL", size_bytes=1e6, group="ep"),
        input_grad=ph(10.0),
        weight_grad=ph(1.0),
    )
    groups = {"tp": (2, 1), "ep": (4, 2), "edp": (1, 4), "dp": (4, 8), "pp": (1, 1)}
    inst = Instance(
        name="moe",
        network=Network(
            dims=(
                Dimension(block="FullyConnected", npus=8, cost_class="C"),
                Dimension(block="Switch", npus=8, cost_class="C"),
            )
        ),
        workload=Workload(name="w", layers=(layer,)),
        mapping=Mapping(forward=(2, 1), input_grad=(2, 1), weight_grad=(4, 8), groups=groups),
        cost=CostModel(
            classes={
                "C": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0, nic_usd_per_gbps=1.0)
            }
        ),
        objective="performance",
        training_loop="step",
        step=StepSchedule(microbatches=2),
    )
    lay = group_layout(inst)
    assert lay.sizes == (2, 4, 2, 4)
    assert (
        lay.groups["ep"] == (1, 2) and lay.groups["edp"] == (3,) and lay.groups["dp"] == (1, 2, 3)
    )
    assert lay.groups["pp"] == () and lay.stages == ((),)


def test_stage_workloads_and_chunks(tmp_path):
    inst = step_instance(tmp_path, tp=4, pp=4, dp=4, batch=16)
    works = stage_workloads(inst, inst.jobs[0])
    assert [w.name.rsplit("-", 1)[1] for w in works] == ["stage0", "stage1", "stage1", "stage3"]
    assert [len(chunks(w, 1)) for w in works] == [1, 1, 1, 1]
    with pytest.raises(InputError, match="2 virtual stages"):
        chunks(works[1], 2)
    inter = step_instance(tmp_path, tp=4, pp=2, dp=8, batch=16, v=2)
    assert inter.step.virtual_stages == 2
    for w in stage_workloads(inter, inter.jobs[0]):
        parts = chunks(w, 2)
        assert len(parts) == 2 and sum(1 for c in parts for op in c for _ in op) == len(w.layers)


def _sends(path: Path) -> list[tuple[str, int, int, int]]:
    """(kind, peer, tag, bytes) of every send and receive of a trace file."""
    _, nodes = read_trace(path)
    out = []
    for n in nodes:
        if n.type in (NODE_TYPE["COMM_SEND_NODE"], NODE_TYPE["COMM_RECV_NODE"]):
            a = attributes(n)
            send = n.type == NODE_TYPE["COMM_SEND_NODE"]
            out.append(
                (
                    "send" if send else "recv",
                    a["comm_dst" if send else "comm_src"],
                    a["comm_tag"],
                    a["comm_size"],
                )
            )
    return out


def test_every_send_meets_its_receive(tmp_path):
    """TP 4 x PP 4 x DP 4, m = 4: each of the 64 NPU files names absolute peers; every send of NPU a
    to b with tag k and S bytes has a receive of b from a with tag k and S bytes, and the peers are
    the neighbouring
    stage's NPU with the same tp / dp coordinates; the tied-embedding exchange goes both ways
    between the ends."""
    inst = step_instance(tmp_path, tp=4, pp=4, dp=4, batch=16)
    bundle = write_bundle(inst, [300.0, 200.0], tmp_path / "b")
    assert bundle.workloads[0].trace_files == 64
    lay = sim_network(inst, [300.0, 200.0]).layout
    sends, recvs = Counter(), Counter()
    for n in range(64):
        for kind, peer, tag, size in _sends(tmp_path / "b" / "traces" / "0" / f"et.{n}.et"):
            assert lay.coordinates(peer)[:3] == lay.coordinates(n)[:3]  # same tp and dp coordinates
            assert abs(lay.stage_of(peer) - lay.stage_of(n)) in (1, 3)
            (sends if kind == "send" else recvs)[
                (n, peer, tag, size) if kind == "send" else (peer, n, tag, size)
            ] += 1
    assert sends == recvs and sum(sends.values()) == 16 * (
        2 * 3 * 4 + 2
    )  # 3 links x 2 ways x m, + the tie
    assert padded_varint(5) == bytes([0x85, 0x80, 0x80, 0x80, 0x00])


def test_without_a_pipeline_the_npus_share_one_file(tmp_path):
    inst = step_instance(tmp_path, tp=8, pp=1, dp=8, batch=16)
    bundle = write_bundle(inst, [300.0, 200.0], tmp_path / "b")
    assert bundle.workloads[0].trace_files == 1
    assert (tmp_path / "b" / "traces" / "0" / "et.0.et").stat().st_nlink == 64


def test_template_bytes_parse_to_the_nodes_with_their_peers(tmp_path):
    """encode_template writes each node as its head and its shared attributes; read back, the file
    holds
    to_message's nodes (compact), every send / receive with the NPU its key resolves to."""
    from hieropt.io.chakra import EtNode, encode_template, instantiate, to_message

    nodes = [
        EtNode(0, "", "comp", compute_ns=1500),
        EtNode(1, "", "recv", deps=[0], comm_bytes=4096, peer=1, tag=3),
        EtNode(
            2,
            "",
            "coll",
            deps=[1],
            comm_type="ALL_GATHER",
            comm_bytes=1 << 20,
            involved_dim=(True, False, True),
        ),
        EtNode(3, "", "comp", deps=[2], compute_ns=1500),
        EtNode(200, "", "send", deps=[3, 2], comm_bytes=4096, peer=2, tag=300),
    ]
    template, slots = encode_template(nodes)
    assert [k for _, k in slots] == [1, 2]
    path = tmp_path / "t.et"
    path.write_bytes(instantiate(template, slots, {1: 70000, 2: 5}))
    _, read = read_trace(path)
    want = [
        to_message(
            EtNode(**{**n.__dict__, "peer": {1: 70000, 2: 5}.get(n.peer, n.peer)}), compact=True
        )
        for n in nodes
    ]
    assert read == want
    assert attributes(read[1])["comm_src"] == 70000 and attributes(read[4])["comm_dst"] == 5


def test_a_moe_candidate_file_names_dp_and_exports(tmp_path):
    """A mixture-of-experts candidate's instance file (codesign --write-instances) names dp =
    ep x edp, which the instance reader takes weight_grad from; its bundle puts the all-to-all on
    ep's simulator dimensions."""
    import tomllib

    from tests.cli.util import run
    from tests.fidelity.bundles import MOE, SPACE

    space = tmp_path / "space.toml"
    model, sets = MOE
    plans = "tp = [2]\npp = [1]\nep = [8]"
    space.write_text(SPACE.format(name="moe", model=model, sets=sets, plans=plans))
    assert run("codesign", space, "--write-instances", tmp_path / "answers").exit_code == 0
    (path,) = (tmp_path / "answers").glob("*.toml")
    groups = tomllib.loads(path.read_text())["mapping"]["groups"]
    assert groups["dp"] == [a * b for a, b in zip(groups["ep"], groups["edp"], strict=True)]
    r = run("export", path, "--astra-sim", tmp_path / "b")
    assert r.exit_code == 0, r.output
    inst = hieropt.load_instance(path)
    net = sim_network(inst, [300.0, 200.0])
    assert net.groups["ep"] == (1, 2) and net.groups["weight_grad"] == net.groups["dp"]
