"""The Chakra trace writer: its schema table equals the shipped et_def.proto, and traces
round-trip."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hieropt.io.chakra import (
    ENUMS,
    SCHEMA,
    EtNode,
    attributes,
    comp_num_ops,
    encode_trace,
    read_trace,
    write_trace,
)

PROTO = (
    Path(__file__).resolve().parents[2].parent / "shared" / "tools" / "astra-sim" / "et_def.proto"
)


def _parse_proto(text: str):
    """Messages {name: [(field, number, type, label)]} and enums {name: [(value, number)]} of a
    proto3 file."""
    text = re.sub(r"//.*", "", text)
    messages, enums = {}, {}
    for m in re.finditer(r"message\s+(\w+)\s*\{(.*?)\n\}", text, re.S):
        body, fields = m.group(2), []
        oneof = re.search(r"oneof\s+\w+\s*\{(.*?)\}", body, re.S)
        members = set()
        if oneof:
            for f in re.finditer(r"(\w+)\s+(\w+)\s*=\s*(\d+);", oneof.group(1)):
                members.add(f.group(2))
        for f in re.finditer(r"(repeated\s+)?(\w+)\s+(\w+)\s*=\s*(\d+);", body):
            label = "oneof" if f.group(3) in members else ("repeated" if f.group(1) else "optional")
            fields.append((f.group(3), int(f.group(4)), f.group(2), label))
        messages[m.group(1)] = fields
    for e in re.finditer(r"enum\s+(\w+)\s*\{(.*?)\}", text, re.S):
        enums[e.group(1)] = [
            (v.group(1), int(v.group(2))) for v in re.finditer(r"(\w+)\s*=\s*(\d+);", e.group(2))
        ]
    return messages, enums


def test_schema_matches_shipped_proto():
    if not PROTO.is_file():
        pytest.skip("ASTRA-sim's et_def.proto not found beside the simulator")
    messages, enums = _parse_proto(PROTO.read_text())
    assert set(messages) == set(SCHEMA)
    for name, fields in messages.items():
        assert sorted(fields, key=lambda f: f[1]) == sorted(SCHEMA[name], key=lambda f: f[1]), name
    assert enums == ENUMS


def test_round_trip(tmp_path):
    nodes = [
        EtNode(0, "fwd", "comp", compute_ns=1234),
        EtNode(
            1,
            "ar",
            "coll",
            deps=[0],
            comm_type="ALL_REDUCE",
            comm_bytes=2**40,
            involved_dim=(True, False),
        ),
        EtNode(
            2,
            "ag",
            "coll",
            deps=[0, 1],
            comm_type="ALL_GATHER",
            comm_bytes=7,
            involved_dim=(False, True),
        ),
    ]
    size = write_trace(tmp_path / "t.0.et", nodes)
    assert size == (tmp_path / "t.0.et").stat().st_size == len(encode_trace(nodes))
    meta, back = read_trace(tmp_path / "t.0.et")
    assert meta.version == "0.0.4"
    assert [n.id for n in back] == [0, 1, 2]
    assert list(back[2].data_deps) == [0, 1] and not list(back[2].ctrl_deps)
    assert back[0].type == 4 and back[1].type == 7  # COMP_NODE, COMM_COLL_NODE
    assert attributes(back[0]) == {"is_cpu_op": False, "num_ops": 1234500, "tensor_size": 1}
    assert attributes(back[1]) == {"is_cpu_op": False, "comm_type": 0, "comm_size": 2**40,
                                   "involved_dim": [True, False]}
    assert attributes(back[2])["comm_type"] == 2


def test_num_ops_is_exact_after_the_simulators_truncation():
    """The simulator charges uint64(num_ops / 1e12 * 1e9) ns (peak-perf 1 TFLOP/s): every integer ns
    survives."""
    for ns in [1, 7, 999, 123456789, 10**12 + 3, 2**40 + 1]:
        assert int(comp_num_ops(ns) / 1e12 * 1e9) == ns


def test_unknown_kind_or_collective_is_refused():
    with pytest.raises(ValueError):
        encode_trace([EtNode(0, "x", "barrier")])
    with pytest.raises(ValueError):
        encode_trace([EtNode(0, "x", "coll", comm_type="ALLREDUCE")])
