"""Chakra execution traces (ET), the workload format of ASTRA-sim 2.0: write and read them with
``protobuf``.

Format (mlcommons/chakra ``schema/protobuf/et_def.proto``, MIT licence; the copy the prebuilt
simulator reads is ASTRA-sim's ``et_def.proto``): a file is a stream of messages, each preceded by
its length as a base-128 varint — one ``GlobalMetadata``, then ``Node`` messages. The field numbers
are the format.

How the message classes are made: at import time, from a ``FileDescriptorProto`` that this module
states field by field (:data:`SCHEMA`, a transcription of et_def.proto — every message, field name,
number, type and label, and both enums). No generated ``_pb2.py`` is committed: generated code
carries a protoc/runtime version guard that ties the package to one ``protobuf`` range, while a
descriptor built here works with every protobuf >= 4, needs no ``protoc``, and keeps the field
numbers readable in one table. ``tests/fidelity/test_chakra.py`` parses the shipped et_def.proto and
checks the table against it entry by entry.

What the simulator reads (astra-sim c459ab6 with chakra 214f2c5, ``src/feeder/et_feeder_node.cpp``):
dependencies from ``data_deps`` only (``ctrl_deps`` are ignored); ready nodes are issued lowest
``id`` first; attributes ``num_ops`` (int64_val), ``tensor_size`` (uint64_val), ``comm_type``
(int64_val, :data:`COMM_TYPE`), ``comm_size`` (int64_val, bytes), ``involved_dim`` (bool_list, one
entry per network dimension), ``is_cpu_op`` (bool_val; must be false for GPU compute and
collectives); a send (``COMM_SEND_NODE``) reads ``comm_dst``, a receive (``COMM_RECV_NODE``)
``comm_src`` (the peer NPU, absolute, int32_val only: other integer types read as 0), both
``comm_size`` and ``comm_tag`` (int32_val); the sender's own id and the receiver's default to the
NPU's. Measured: a send blocks the NPU's one communication slot for hops x latency + bytes / link
bandwidth and is buffered when its receive is not posted yet; the receive completes when the bytes
have arrived.

Traces that differ only in their peers (the NPUs of one pipeline stage) are written from one
template (:func:`encode_template`): each peer as a varint padded to :data:`PEER_BYTES` bytes
(protobuf readers accept padded varints), patched per NPU (:func:`instantiate`), so a stage's trace
is encoded once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "ChakraProtoMsg"
ET_VERSION = "0.0.4"
"""``GlobalMetadata.version`` written (the schema version of et_def.proto; the simulator does not
check it)."""

_SCALAR_LISTS = (
    "double",
    "float",
    "int32",
    "int64",
    "uint32",
    "uint64",
    "sint32",
    "sint64",
    "fixed32",
    "fixed64",
    "sfixed32",
    "sfixed64",
    "bool",
    "string",
    "bytes",
)
_LIST_NAME = {
    "double": "DoubleList",
    "float": "FloatList",
    "int32": "Int32List",
    "int64": "Int64List",
    "uint32": "Uint32List",
    "uint64": "Uint64List",
    "sint32": "Sint32List",
    "sint64": "Sint64List",
    "fixed32": "Fixed32List",
    "fixed64": "Fixed64List",
    "sfixed32": "Sfixed32List",
    "sfixed64": "Sfixed64List",
    "bool": "BoolList",
    "string": "StringList",
    "bytes": "BytesList",
}


def _attribute_fields() -> list[tuple[str, int, str, str]]:
    """AttributeProto: name = 1, doc_string = 2, then the oneof ``value``: <type>_val = 3, 5, ...
    and <type>_list = 4, 6, ... in the order of :data:`_SCALAR_LISTS`."""
    out = [("name", 1, "string", "optional"), ("doc_string", 2, "string", "optional")]
    for i, t in enumerate(_SCALAR_LISTS):
        out.append((f"{t}_val", 3 + 2 * i, t, "oneof"))
        out.append((f"{t}_list", 4 + 2 * i, _LIST_NAME[t], "oneof"))
    return out


SCHEMA: dict[str, list[tuple[str, int, str, str]]] = {
    "AttributeProto": _attribute_fields(),
    **{_LIST_NAME[t]: [("values", 1, t, "repeated")] for t in _SCALAR_LISTS},
    "GlobalMetadata": [
        ("version", 1, "string", "optional"),
        ("attr", 2, "AttributeProto", "repeated"),
    ],
    "Node": [
        ("id", 1, "uint64", "optional"),
        ("name", 2, "string", "optional"),
        ("type", 3, "NodeType", "optional"),
        ("ctrl_deps", 4, "uint64", "repeated"),
        ("data_deps", 5, "uint64", "repeated"),
        ("start_time_micros", 6, "uint64", "optional"),
        ("duration_micros", 7, "uint64", "optional"),
        ("inputs", 8, "IOInfo", "optional"),
        ("outputs", 9, "IOInfo", "optional"),
        ("attr", 10, "AttributeProto", "repeated"),
    ],
    "IOInfo": [
        ("values", 1, "string", "optional"),
        ("shapes", 2, "string", "optional"),
        ("types", 3, "string", "optional"),
    ],
    "Tensor": [
        ("tensor_id", 1, "uint64", "optional"),
        ("storage_id", 2, "uint64", "optional"),
        ("offset", 3, "uint64", "optional"),
        ("num_elem", 4, "uint64", "optional"),
        ("elem_bytes", 5, "uint64", "optional"),
        ("device", 6, "string", "optional"),
    ],
}
"""Every message of et_def.proto: (field name, field number, type, label); label ``oneof`` = member
of the oneof ``value`` (AttributeProto). Types are proto scalar names or message / enum names of
this package."""

ENUMS: dict[str, list[tuple[str, int]]] = {
    "NodeType": [
        ("INVALID_NODE", 0),
        ("METADATA_NODE", 1),
        ("MEM_LOAD_NODE", 2),
        ("MEM_STORE_NODE", 3),
        ("COMP_NODE", 4),
        ("COMM_SEND_NODE", 5),
        ("COMM_RECV_NODE", 6),
        ("COMM_COLL_NODE", 7),
    ],
    "CollectiveCommType": [
        ("ALL_REDUCE", 0),
        ("REDUCE", 1),
        ("ALL_GATHER", 2),
        ("GATHER", 3),
        ("SCATTER", 4),
        ("BROADCAST", 5),
        ("ALL_TO_ALL", 6),
        ("REDUCE_SCATTER", 7),
        ("REDUCE_SCATTER_BLOCK", 8),
        ("BARRIER", 9),
    ],
}
"""Both enums of et_def.proto: (value name, number)."""

NODE_TYPE = dict(ENUMS["NodeType"])
COMM_TYPE = dict(ENUMS["CollectiveCommType"])

_FDP = descriptor_pb2.FieldDescriptorProto
_SCALAR_TYPE = {t: getattr(_FDP, f"TYPE_{t.upper()}") for t in _SCALAR_LISTS}


def _file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(name="et_def.proto", package=PACKAGE, syntax="proto3")
    for ename, values in ENUMS.items():
        e = fd.enum_type.add(name=ename)
        for vname, num in values:
            e.value.add(name=vname, number=num)
    for mname, fields in SCHEMA.items():
        m = fd.message_type.add(name=mname)
        if any(lab == "oneof" for *_, lab in fields):
            m.oneof_decl.add(name="value")
        for fname, num, ftype, label in fields:
            f = m.field.add(name=fname, number=num)
            f.label = _FDP.LABEL_REPEATED if label == "repeated" else _FDP.LABEL_OPTIONAL
            if label == "oneof":
                f.oneof_index = 0
            if ftype in _SCALAR_TYPE:
                f.type = _SCALAR_TYPE[ftype]
            elif ftype in ENUMS:
                f.type, f.type_name = _FDP.TYPE_ENUM, f".{PACKAGE}.{ftype}"
            else:
                f.type, f.type_name = _FDP.TYPE_MESSAGE, f".{PACKAGE}.{ftype}"
    return fd


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file_descriptor())
_CLASSES = {name: message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{PACKAGE}.{name}"))
            for name in SCHEMA}
NodeMsg = _CLASSES["Node"]
"""The protobuf class of ``ChakraProtoMsg.Node``."""
GlobalMetadataMsg = _CLASSES["GlobalMetadata"]
"""The protobuf class of ``ChakraProtoMsg.GlobalMetadata``."""
AttributeMsg = _CLASSES["AttributeProto"]
"""The protobuf class of ``ChakraProtoMsg.AttributeProto``."""


# -------------------------------------------------------------------------------------------- nodes
@dataclass
class EtNode:
    """One node of a trace, in the simulator's terms.

    Attributes:
        id: unique per trace; among ready nodes the simulator issues the lowest id first.
        name: free text.
        kind: ``"comp"``, ``"coll"``, ``"send"`` or ``"recv"``.
        deps: ids this node waits for (written as ``data_deps``).
        compute_ns: ``comp``: duration in ns, encoded exactly as roofline ``num_ops`` (see
            :func:`comp_num_ops`).
        comm_type: ``coll``: a :data:`COMM_TYPE` name (``ALL_REDUCE``, ``REDUCE_SCATTER``,
            ``ALL_GATHER``, ``ALL_TO_ALL``).
        comm_bytes: ``coll``, ``send``, ``recv``: size in bytes (all-gather: the per-NPU input
            shard).
        involved_dim: ``coll``: one bool per simulator network dimension.
        peer: ``send``: the receiving NPU, ``recv``: the sending one (in a template: the key
            :func:`instantiate` maps to the NPU).
        tag: ``send`` / ``recv``: matches a send with its receive (same sender, receiver and tag).
    """

    id: int
    name: str
    kind: str
    deps: list[int] = field(default_factory=list)
    compute_ns: int = 0
    comm_type: str = ""
    comm_bytes: int = 0
    involved_dim: tuple[bool, ...] = ()
    peer: int = 0
    tag: int = 0


OPS_PER_NS = 1000
"""``num_ops`` per ns of compute at ``peak-perf: 1`` (TFLOP/s) in the system JSON with
``roofline-enabled: 1``."""


def comp_num_ops(compute_ns: int) -> int:
    """Roofline ``num_ops`` that makes the simulator charge exactly ``compute_ns`` ns at
    ``peak-perf: 1``.

    The simulator computes ``uint64(num_ops / 1e12 * 1e9)`` (truncation, Workload::issue_comp); half
    a nanosecond extra (``+ 500``) keeps floating-point rounding from truncating an exact integer to
    one ns less.
    """
    return int(compute_ns) * OPS_PER_NS + OPS_PER_NS // 2


def _attr(name: str, **value) -> AttributeMsg:
    a = AttributeMsg(name=name)
    for k, v in value.items():
        if k == "bool_list":
            a.bool_list.values.extend(v)
        else:
            setattr(a, k, v)
    return a


def to_message(node: EtNode, compact: bool = False) -> NodeMsg:
    """The protobuf ``Node`` of ``node``; ``compact``: without its name and ``is_cpu_op`` (the
    simulator reads neither: its default is false).
    Raises ValueError on an unknown kind or collective name."""
    msg = NodeMsg(id=node.id, name="" if compact else node.name)
    msg.data_deps.extend(node.deps)
    if not compact:
        msg.attr.append(_attr("is_cpu_op", bool_val=False))
    if node.kind == "comp":
        msg.type = NODE_TYPE["COMP_NODE"]
        msg.attr.append(_attr("num_ops", int64_val=comp_num_ops(node.compute_ns)))
        msg.attr.append(_attr("tensor_size", uint64_val=1))
    elif node.kind == "coll":
        if node.comm_type not in COMM_TYPE:
            raise ValueError(f"unknown collective {node.comm_type!r}")
        msg.type = NODE_TYPE["COMM_COLL_NODE"]
        msg.attr.append(_attr("comm_type", int64_val=COMM_TYPE[node.comm_type]))
        msg.attr.append(_attr("comm_size", int64_val=int(node.comm_bytes)))
        msg.attr.append(_attr("involved_dim", bool_list=[bool(x) for x in node.involved_dim]))
    elif node.kind in ("send", "recv"):
        msg.type = NODE_TYPE["COMM_SEND_NODE" if node.kind == "send" else "COMM_RECV_NODE"]
        peer = "comm_dst" if node.kind == "send" else "comm_src"
        msg.attr.append(_attr(peer, int32_val=int(node.peer)))
        msg.attr.append(_attr("comm_size", int64_val=int(node.comm_bytes)))
        msg.attr.append(_attr("comm_tag", int32_val=int(node.tag)))
    else:
        raise ValueError(f"unknown node kind {node.kind!r}")
    return msg


PEER_BYTES = 5
"""Bytes of a padded peer varint in a template (any int32 >= 0)."""
_PLACEHOLDER = 1 << 28
"""A peer whose minimal varint takes :data:`PEER_BYTES` bytes: a template's peer until patched."""


def padded_varint(n: int) -> bytes:
    """``n`` (0 <= n < 2^31) as a base-128 varint of exactly :data:`PEER_BYTES` bytes (continuation
    bits set on the leading bytes)."""
    if not 0 <= n < 1 << 31:
        raise ValueError(f"peer {n} outside 0 .. 2^31 - 1")
    last = PEER_BYTES - 1
    return bytes([(n >> 7 * i) & 0x7F | 0x80 for i in range(last)] + [n >> 7 * last])


def _head(node: EtNode) -> bytes:
    """The serialized ``id``, ``type`` and ``data_deps`` fields of a compact node (protobuf field
    order 1, 3, 5; ``id`` 0 is not written in proto3; the dependencies packed)."""
    deps = b"".join(_varint(d) for d in node.deps)
    out = (b"\x08" + _varint(node.id) if node.id else b"") + b"\x18" + _varint(_TYPE_OF[node.kind])
    return out + (b"\x2a" + _varint(len(deps)) + deps if deps else b"")


_TYPE_OF = {"comp": NODE_TYPE["COMP_NODE"], "coll": NODE_TYPE["COMM_COLL_NODE"],
            "send": NODE_TYPE["COMM_SEND_NODE"], "recv": NODE_TYPE["COMM_RECV_NODE"]}


def _tail(bare: EtNode) -> bytes:
    """The serialized attributes (field 10) of a compact node with id 0 and no dependencies."""
    return to_message(bare, compact=True).SerializeToString()[len(_head(bare)):]


def encode_template(nodes: Iterable[EtNode]) -> tuple[bytes, list[tuple[int, int]]]:
    """One ET file in which every send and receive holds a placeholder peer: the bytes and, per send
    / receive, (offset of its padded peer varint, the node's ``peer`` key), for :func:`instantiate`.

    Nodes are written compact (:func:`to_message`: a trace of many NPUs is written once per NPU),
    each as its serialized head (id, type, dependencies) and its attributes, serialized once per
    distinct content (``tests/fidelity`` checks the bytes parse to :func:`to_message`'s nodes)."""
    meta = GlobalMetadataMsg(version=ET_VERSION).SerializeToString()
    parts = [_varint(len(meta)), meta]
    pos = len(parts[0]) + len(meta)
    slots: list[tuple[int, int]] = []
    marks = {k: _attr(f, int32_val=_PLACEHOLDER).SerializeToString() for k, f in
             (("send", "comm_dst"), ("recv", "comm_src"))}
    tails: dict[tuple, bytes] = {}
    for node in nodes:
        peer = _PLACEHOLDER if node.kind in marks else node.peer
        key = (node.kind, node.compute_ns, node.comm_type, node.comm_bytes, node.involved_dim, peer,
               node.tag)
        tail = tails.get(key)
        if tail is None:
            bare = EtNode(0, "", node.kind, compute_ns=node.compute_ns, comm_type=node.comm_type,
                          comm_bytes=node.comm_bytes, involved_dim=node.involved_dim, peer=peer,
                          tag=node.tag)
            tail = tails[key] = _tail(bare)
        head = _head(node)
        size = _varint(len(head) + len(tail))
        if node.kind in marks:
            at = tail.index(marks[node.kind]) + len(marks[node.kind]) - PEER_BYTES
            slots.append((pos + len(size) + len(head) + at, node.peer))
        parts += [size, head, tail]
        pos += len(size) + len(head) + len(tail)
    return b"".join(parts), slots


def instantiate(template: bytes, slots: Sequence[tuple[int, int]],
                peers: dict[int, int]) -> bytearray:
    """The template with every peer key ``k`` of ``slots`` replaced by the NPU ``peers[k]``."""
    data = bytearray(template)
    padded = {k: padded_varint(n) for k, n in peers.items()}
    for at, key in slots:
        data[at:at + PEER_BYTES] = padded[key]
    return data


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_trace(nodes: Iterable[EtNode], version: str = ET_VERSION) -> bytes:
    """The bytes of one ET file: varint-length-delimited ``GlobalMetadata`` then every node."""
    parts = []
    for msg in [GlobalMetadataMsg(version=version)] + [to_message(n) for n in nodes]:
        body = msg.SerializeToString()
        parts.append(_varint(len(body)))
        parts.append(body)
    return b"".join(parts)


def write_trace(path: str | Path, nodes: Sequence[EtNode]) -> int:
    """Write one ET file; returns its size in bytes. OSError propagates (callers turn it into
    InputError)."""
    data = encode_trace(nodes)
    from .files import write_atomic

    write_atomic(path, data)
    return len(data)


def _messages(data: bytes) -> Iterator[bytes]:
    pos = 0
    while pos < len(data):
        n = shift = 0
        while True:
            if pos >= len(data):
                raise ValueError("truncated length prefix")
            b = data[pos]
            pos += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if pos + n > len(data):
            raise ValueError("truncated message")
        yield data[pos:pos + n]
        pos += n


def read_trace(path: str | Path) -> tuple[GlobalMetadataMsg, list[NodeMsg]]:
    """Read an ET file back: its ``GlobalMetadata`` and ``Node`` messages. Raises ValueError on a
    malformed file."""
    msgs = list(_messages(Path(path).read_bytes()))
    if not msgs:
        raise ValueError("empty trace")
    meta = GlobalMetadataMsg.FromString(msgs[0])
    return meta, [NodeMsg.FromString(m) for m in msgs[1:]]


def attributes(msg: NodeMsg) -> dict[str, object]:
    """A node's attributes as {name: value} (lists as Python lists)."""
    out: dict[str, object] = {}
    for a in msg.attr:
        which = a.WhichOneof("value")
        v = getattr(a, which) if which else None
        out[a.name] = list(v.values) if which and which.endswith("_list") else v
    return out


__all__ = ["EtNode", "encode_template", "instantiate", "padded_varint", "PEER_BYTES", "SCHEMA",
           "ENUMS", "COMM_TYPE", "NODE_TYPE", "NodeMsg", "GlobalMetadataMsg", "comp_num_ops",
           "to_message", "encode_trace", "write_trace", "read_trace", "attributes"]
