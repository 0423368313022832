"""ASTRA-sim 1.0 workload text, every dialect (and LIBRA's header-less variant): reader and writer.

Format. Optional header: line 1 the parallelism policy and the tokens it takes, line 2 the
number of layers. Then one line per layer with 12 whitespace-separated fields (tabs or spaces):

    name  reserved(-1)  fwd_compute fwd_type fwd_size  ig_compute ig_type ig_size  wg_compute
    wg_type wg_size  update

plus a 13th token, the layer's own policy, under a ``HYBRID_CUSTOMIZED`` header. Compute times are
ns (ASTRA-sim 1.0 cycles at its default 1 GHz clock), sizes bytes; all-gather sizes are the per-NPU
input shard.

Header line 1, by policy (:class:`hieropt.spec.WorkloadHeader` holds the parsed values):

- ``DATA``, ``MODEL``, ``HYBRID_DATA_MODEL``, ``HYBRID_MODEL_DATA``, ``MICRO``,
  ``DISTRIBUTED_INFERENCE``, ``HYBRID_CUSTOMIZED``: the policy alone;
- ``HYBRID_TRANSFORMER``: ``model_parallel_NPU_group: N`` (required);
- ``HYBRID_TRANSFORMER_FWD_IN_BCKWD``: the same, then ``checkpoints: k l1..lk checkpoint_initiates:
  m i1..im``;
- ``HYBRID_DLRM``, ``HYBRID_DLRM_ENHANCED``: the number of the last bottom-MLP layer (required),
  bare as in ASTRA-sim 1.0 or as SimAI's ``DLRM_LAST_BOTTOM_LAYER: n``;
- SimAI's extension of the transformer policies: also ``ep: pp: vpp: ga: all_gpus:``, and ``pp_comm
  B`` or ``pp_comm: B`` (bytes) with any policy.

Keys are case-insensitive and their colon is optional; an unknown token, a key the policy does not
take, a repeated key or a missing value is an error. Collective names are case-insensitive:
``NONE``, ``ALLREDUCE``, ``REDUCESCATTER``, ``ALLGATHER``, ``ALLTOALL``, optionally with SimAI's
scope suffix ``_EP`` or ``_DP_EP`` (``ALLTOALL_EP``; kept in :attr:`hieropt.spec.Phase.scope`).
Anything else is an error, never a silent NONE (the ASTRA-sim 1.0 parser reads unknown names as
NONE, Chakra's converter as all-reduce); ASTRA-sim's ``ALLREDUCEALLTOALL`` is reported as not
modelled. Numbers may use scientific notation; CRLF line ends, trailing tabs and blank lines are
accepted. A file is header-less (LIBRA) when its first line is a 12-field layer line and does not
start with a policy followed by a layer-count line.

The writer produces the two header lines, tab-separated layer lines with ``-1`` in the reserved
field, and times and sizes rounded to whole ns and bytes (ASTRA-sim 1.0 reads them as integers), or
exact with ``exact=True``.
"""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import ValidationError

from ..errors import InputError
from ..spec import (
    DLRM_POLICIES,
    LAYER_POLICIES,
    PHASES,
    POLICIES,
    TRANSFORMER_POLICIES,
    Collective,
    Layer,
    Phase,
    Workload,
    WorkloadHeader,
)
from .astrasim1_columns import TokenLines, layer_table, parse_collective
from .common import read_text, validation_error
from .files import write_atomic
from .kinds import check_kind

_FIELDS = 12
_PHASE_FIELDS = (("forward", 2), ("input_grad", 5), ("weight_grad", 8))
_HEADER_KEYS = {
    "model_parallel_npu_group": "model_parallel_npu_group",
    "ep": "ep",
    "pp": "pp",
    "vpp": "vpp",
    "ga": "ga",
    "all_gpus": "all_gpus",
    "pp_comm": "pp_comm_bytes",
    "dlrm_last_bottom_layer": "last_bottom_layer",
    "checkpoints": "checkpoints",
    "checkpoint_initiates": "checkpoint_initiates",
}
_KEY_TEXT = {"model_parallel_npu_group": "model_parallel_NPU_group", "pp_comm_bytes": "pp_comm",
             "last_bottom_layer": "DLRM_LAST_BOTTOM_LAYER"}
_FWD_IN_BCKWD = "HYBRID_TRANSFORMER_FWD_IN_BCKWD"


def read_workload(path: str | Path) -> Workload:
    """Read an ASTRA-sim 1.0 workload file of any dialect, with or without its two header lines.

    Raises:
        InputError: missing file; an unknown header policy or header token, a value missing from the
            header, a key the policy does not take; a header layer count that is not an integer or
            differs from the number of layer lines (both numbers named); a layer line with the wrong
            number of fields; an unknown collective name or scope, or an unknown per-layer policy; a
            negative, non-finite or non-numeric time or size.
    """
    path = Path(path)
    text = read_text(path, "workload")
    check_kind(path, "workload", text)
    return parse_workload(text, source=str(path), name=path.stem)


def parse_workload(text: str, source: str = "<workload>", name: str = "workload") -> Workload:
    """Parse ASTRA-sim 1.0 workload text; see :func:`read_workload` (``source`` names the origin in
    errors)."""
    text = text.lstrip("\ufeff")
    lines = TokenLines.of(text)
    if lines is None:  # not plain ASCII with \n or \r\n line ends: line by line
        lines = [
            (i + 1, toks) for i, toks in enumerate(ln.split() for ln in text.splitlines()) if toks
        ]
    if not lines:
        raise InputError(
            source, None, "the workload has no layers", "add at least one 12-field layer line"
        )
    header = None
    if _has_header(lines):
        n0, toks0 = lines[0]
        if len(lines) < 2 or len(lines[1][1]) != 1:
            raise InputError(
                source,
                f"line {n0 + 1}",
                "after the policy line the header must give the layer count alone on a line",
                "put the number of layers on line 2, or remove the header",
            )
        n1, (count,) = lines[1]
        declared = _whole(count)
        if declared is None:
            raise InputError(source, f"line {n1}", f"layer count '{count}' is not an integer",
                             "write the number of layers")
        header = parse_header(" ".join(toks0), source=source, line_no=n0)
        lines = lines[2:]
        if declared != len(lines):
            raise InputError(
                source,
                "header layer count",
                f"the header says {declared} layers but the file has {len(lines)} layer lines",
                f"set line 2 to {len(lines)} or fix the layer lines",
            )
        if not lines:
            raise InputError(
                source, None, "the workload has no layers", "add at least one 12-field layer line"
            )
        header = WorkloadHeader(**{**header.model_dump(), "declared_layers": declared})
    elif len(lines[0][1]) < _FIELDS and (len(lines[0][1]) < 2 or _float(lines[0][1][1]) is None):
        n0, toks0 = lines[0]
        raise InputError(
            source,
            f"line {n0}",
            f"'{' '.join(toks0)}' is neither a header (a policy, then the layer "
            "count on the next line) nor a 12-field layer line",
            f"start the file with one of {', '.join(POLICIES)} and the layer count, or write only "
            "layer lines",
        )
    customized = header is not None and header.policy == "HYBRID_CUSTOMIZED"
    layers = layer_table(lines, customized)
    # something is wrong: the line-by-line reader names the line, the field and the fix
    if layers is None:
        layers = tuple(_layer(n, toks, source, customized) for n, toks in lines)
    try:
        return Workload(name=name, layers=layers, header=header)
    except ValidationError as e:
        raise validation_error(e, source) from e


def _has_header(lines: list[tuple[int, list[str]]]) -> bool:
    """True when line 1 is a header: it starts with a policy and is not itself a 12-field layer line
    followed by more layer lines; or it is not a 12-field line and line 2 is a lone count (an
    unknown policy, reported later)."""
    toks0 = lines[0][1]
    count_next = len(lines) >= 2 and len(lines[1][1]) == 1
    if toks0[0].upper() in POLICIES and (count_next or len(toks0) != _FIELDS):
        return True
    return len(toks0) != _FIELDS and count_next


def parse_header(line: str, source: str = "<header>", line_no: int = 1) -> WorkloadHeader:
    """Parse header line 1 (policy and its tokens, any dialect) into a
    :class:`~hieropt.spec.WorkloadHeader`.

    ``declared_layers`` is left None (it is line 2). Raises :class:`InputError` naming ``source``
    and ``line_no``.
    """
    toks = line.split()
    where = f"line {line_no} (header)"
    if not toks:
        raise InputError(
            source,
            where,
            "empty header line",
            f"start the file with a policy: {', '.join(POLICIES)}",
        )
    policy = toks[0].upper()
    if policy not in POLICIES:
        raise InputError(
            source, where, f"unknown header policy '{toks[0]}'", f"use one of {', '.join(POLICIES)}"
        )
    values: dict[str, object] = {}
    i = 1
    while i < len(toks):
        tok = toks[i]
        if i == 1 and policy in DLRM_POLICIES and _whole(tok) is not None:
            values["last_bottom_layer"] = _whole(tok)
            i += 1
            continue
        field = _HEADER_KEYS.get(tok.rstrip(":").lower())
        if field is None:
            raise InputError(source, where, f"unknown header token '{tok}'", _header_fix(policy))
        key = _KEY_TEXT.get(field, field)
        if field in values:
            raise InputError(source, f"{where}, {key}", "given twice", "keep one")
        if i + 1 >= len(toks):
            raise InputError(
                source, f"{where}, {key}", "has no value", f"write '{key}:' followed by its value"
            )
        if field in ("checkpoints", "checkpoint_initiates"):
            values[field] = _layer_numbers(toks[i + 1:], source, f"{where}, {key}", key)
            i += 2 + len(values[field])
            continue
        values[field] = _header_number(field, toks[i + 1], source, f"{where}, {key}")
        i += 2
    if policy in TRANSFORMER_POLICIES and "model_parallel_npu_group" not in values:
        raise InputError(
            source,
            where,
            f"{policy} needs the model-parallel group size",
            "add 'model_parallel_NPU_group: N' after the policy (N NPUs per model-parallel group)",
        )
    if policy in DLRM_POLICIES and "last_bottom_layer" not in values:
        raise InputError(
            source,
            where,
            f"{policy} needs the number of the last bottom-MLP layer",
            f"write it after the policy, e.g. '{policy} 4' (layers are numbered from 0)",
        )
    try:
        return WorkloadHeader(policy=policy, **values)
    except ValidationError as e:
        raise _header_error(e, source, line_no) from e


def _layer_numbers(toks: list[str], source: str, where: str, key: str) -> tuple[int, ...]:
    """The layer numbers of a ``checkpoints``/``checkpoint_initiates`` header key (``key``) whose
    tokens ``toks`` are its count k and then k layer numbers (tokens after them are not read).

    Raises:
        InputError: the count is not a whole number >= 0, or fewer than k whole numbers follow it.
    """
    count = _whole(toks[0])
    if count is None or count < 0:
        raise InputError(source, where, f"count '{toks[0]}' is not a whole number >= 0",
                         f"write '{key}: k' followed by k layer numbers")
    items = toks[1:1 + count]
    numbers = [_whole(t) for t in items]
    if len(items) < count or any(v is None for v in numbers):
        raise InputError(source, where, f"says {count} layer numbers but "
                         f"{' '.join(items) or 'none'} follow",
                         f"write '{key}: k' followed by k layer numbers")
    return tuple(numbers)


def _header_number(field: str, raw: str, source: str, where: str) -> float | int:
    """The value ``raw`` of header key ``field``: bytes (a finite number >= 0) for
    ``pp_comm_bytes``, an integer for every other key.

    Raises:
        InputError: ``raw`` is not such a number.
    """
    if field == "pp_comm_bytes":
        v = _float(raw)
        if v is None or v < 0:
            raise InputError(source, where, f"'{raw}' is not a finite number >= 0",
                             "write the bytes of one pipeline transfer")
        return v
    v = _whole(raw)
    if v is None:
        raise InputError(source, where, f"'{raw}' is not an integer", "write a whole number")
    return v


def _header_fix(policy: str) -> str:
    if policy in TRANSFORMER_POLICIES:
        keys = "model_parallel_NPU_group:, ep:, pp:, vpp:, ga:, all_gpus:, pp_comm"
        if policy == _FWD_IN_BCKWD:
            keys += ", checkpoints: k l1..lk, checkpoint_initiates: m i1..im"
        return f"{policy} takes {keys}"
    if policy in DLRM_POLICIES:
        return (
            f"{policy} takes the last bottom layer number (or DLRM_LAST_BOTTOM_LAYER: n) and "
            "pp_comm"
        )
    return f"{policy} takes no tokens but pp_comm; remove it"


def _header_error(e: ValidationError, source: str, line_no: int) -> InputError:
    ie = validation_error(e, source)
    field = f"line {line_no} (header)" + (f", {ie.field}" if ie.field else "")
    return InputError(source, field, ie.problem, ie.fix)


def _layer(n: int, toks: list[str], source: str, customized: bool) -> Layer:
    expected = _FIELDS + 1 if customized else _FIELDS
    if len(toks) != expected:
        if customized and len(toks) == _FIELDS:
            raise InputError(
                source,
                f"line {n}",
                f"{len(toks)} fields, expected 13: a HYBRID_CUSTOMIZED workload "
                "ends every layer line with the layer's own policy",
                f"append one of {', '.join(LAYER_POLICIES)}",
            )
        if not customized and len(toks) == _FIELDS + 1:
            raise InputError(
                source,
                f"line {n}",
                f"{len(toks)} fields, expected 12: a 13th (per-layer policy) token "
                "is read only under a HYBRID_CUSTOMIZED header",
                "write exactly 12 whitespace-separated fields, or use header policy "
                "HYBRID_CUSTOMIZED",
            )
        raise InputError(
            source,
            f"line {n}",
            f"{len(toks)} fields, expected {expected} (name, -1, then compute, "
            "collective, bytes for forward, input-grad and weight-grad, then update time"
            + (", then the layer's policy)" if customized else ")"),
            f"write exactly {expected} whitespace-separated fields",
        )
    phases = {}
    for phase, k in _PHASE_FIELDS:
        compute = _number(toks[k], n, k, f"{phase} compute ns", source)
        kind, scope = _collective(toks[k + 1], n, k + 1, source)
        size = _number(toks[k + 2], n, k + 2, f"{phase} size bytes", source)
        phases[phase] = Phase(compute_ns=compute, collective=kind, size_bytes=size, scope=scope)
    update = _number(toks[11], n, 11, "update time ns", source)
    policy = None
    if customized:
        policy = toks[12].upper()
        if policy not in LAYER_POLICIES:
            raise InputError(
                source,
                f"line {n}, field 13 (layer policy)",
                f"unknown per-layer policy '{toks[12]}'",
                f"use one of {', '.join(LAYER_POLICIES)}",
            )
    return Layer(name=toks[0], update_ns=update, policy=policy, **phases)


def _float(tok: str) -> float | None:
    try:
        v = float(tok)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _whole(tok: str) -> int | None:
    """``tok`` as an integer (``12``, ``-1``, ``1.2e1``), None if it is not a whole number."""
    try:
        return int(tok)
    except ValueError:
        v = _float(tok)
        return int(v) if v is not None and v.is_integer() else None


def _number(tok: str, n: int, k: int, what: str, source: str) -> float:
    v = _float(tok)
    if v is None or v < 0:
        raise InputError(
            source,
            f"line {n}, field {k + 1} ({what})",
            f"'{tok}' is not a finite number >= 0",
            "write a non-negative number",
        )
    return v


def _collective(tok: str, n: int, k: int, source: str) -> tuple[Collective, str | None]:
    try:
        return parse_collective(tok)
    except ValueError as e:
        problem, fix = str(e).split("; fix: ", 1)
        raise InputError(source, f"line {n}, field {k + 1} (collective)", problem, fix) from None


# ------------------------------------------------------------------------------------------- writer
def _complete_header(workload: Workload, header: WorkloadHeader | None) -> WorkloadHeader:
    h = header if header is not None else workload.header
    src = workload.name
    if h is None:
        raise InputError(
            src,
            "header",
            "the workload has no ASTRA-sim header policy (e.g. read from a header-less LIBRA file)",
            f"give a header, e.g. WorkloadHeader(policy='DATA'); policies: {', '.join(POLICIES)}",
        )
    if h.policy in TRANSFORMER_POLICIES and h.model_parallel_npu_group is None:
        raise InputError(
            src,
            "header.model_parallel_npu_group",
            f"{h.policy} needs the model-parallel group size",
            "set model_parallel_npu_group (e.g. the tensor-parallel degree)",
        )
    if h.policy in DLRM_POLICIES and h.last_bottom_layer is None:
        raise InputError(
            src,
            "header.last_bottom_layer",
            f"{h.policy} needs the number of the last bottom-MLP layer",
            "set last_bottom_layer (layers are numbered from 0)",
        )
    update: dict[str, object] = {"declared_layers": len(workload.layers)}
    if h.policy == _FWD_IN_BCKWD:  # ASTRA-sim 1.0 reads both lists positionally: always write them
        update["checkpoints"] = h.checkpoints or ()
        update["checkpoint_initiates"] = h.checkpoint_initiates or ()
    h = h.model_copy(update=update)
    try:  # re-validate the header against the layers (numbers in range, per-layer policies)
        Workload(
            name=workload.name, layers=workload.layers, header=WorkloadHeader(**h.model_dump())
        )
    except ValidationError as e:
        raise validation_error(e, src) from e
    return h


def _text(v: float, exact: bool) -> str:
    if not exact:
        return str(round(v))
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def format_workload(
    workload: Workload, header: WorkloadHeader | None = None, exact: bool = False
) -> str:
    """ASTRA-sim 1.0 text of ``workload``: two header lines, then one tab-separated line per layer.

    Args:
        workload: the workload; its layer names must be non-empty and free of whitespace.
        header: the header to write (default ``workload.header``); line 2 is always the number of
            layers, and a ``HYBRID_TRANSFORMER_FWD_IN_BCKWD`` header always gets its two checkpoint
            lists (possibly ``0``).
        exact: False (default) rounds times to whole ns and sizes to whole bytes, as ASTRA-sim 1.0
            reads integers; True writes every value exactly (hieropt and LIBRA read it back
            unchanged, ASTRA-sim 1.0 does not).

    Raises:
        InputError: no header; a header missing what its policy needs, or disagreeing with the
            layers; a layer name with whitespace; several pipeline stages (``more_stages``).
    """
    if workload.more_stages:
        raise InputError(
            workload.name,
            "more_stages",
            f"{len(workload.stages)} distinct pipeline stages have no "
            "ASTRA-sim 1.0 text form (a file holds one workload)",
            "write each of workload.stages on its own",
        )
    h = _complete_header(workload, header)
    customized = h.policy == "HYBRID_CUSTOMIZED"
    out = [h.line, str(len(workload.layers))]
    for i, layer in enumerate(workload.layers):
        if not layer.name or len(layer.name.split()) != 1 or layer.name != layer.name.strip():
            raise InputError(
                workload.name,
                f"layers[{i}].name",
                f"layer name {layer.name!r} is empty or has "
                "whitespace (the text format separates fields by whitespace)",
                "rename the layer",
            )
        toks = [layer.name, "-1"]
        for phase in PHASES:
            p: Phase = getattr(layer, phase)
            if p.collective is Collective.P2P or p.group is not None:
                what = (
                    "a point-to-point send"
                    if p.collective is Collective.P2P
                    else f"named group '{p.group}'"
                )
                raise InputError(
                    workload.name,
                    f"layers[{i}].{phase}",
                    f"{what} has no ASTRA-sim 1.0 text form",
                    "keep the workload in hieropt (an instance file naming the model), or "
                    "lower the "
                    "plan to one group per phase",
                )
            toks += [_text(p.compute_ns, exact), p.collective_name, _text(p.size_bytes, exact)]
        toks.append(_text(layer.update_ns, exact))
        if customized:
            toks.append(str(layer.policy))
        out.append("\t".join(toks))
    return "\n".join(out) + "\n"


def write_workload(workload: Workload, path: str | Path, header: WorkloadHeader | None = None,
                   exact: bool = False) -> Path:
    """Write ``workload`` as an ASTRA-sim 1.0 text file (see :func:`format_workload`); returns the
    path.

    Raises:
        InputError: as :func:`format_workload`, or the file cannot be written.
    """
    path = Path(path)
    text = format_workload(workload, header=header, exact=exact)
    try:
        write_atomic(path, text)
    except OSError as e:
        raise InputError(path, None, f"cannot write the workload file: {e.strerror or e}",
                         "check the folder exists and is writable") from e
    return path
