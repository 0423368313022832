"""ASTRA-sim 1.0 workload text (and LIBRA's header-less variant).

Format (research/peers.md §4.2). Optional header: line 1 the parallelism policy with optional extra tokens
(e.g. ``HYBRID_TRANSFORMER model_parallel_NPU_group: 4``), line 2 the number of layers. Then one line per layer with
12 whitespace-separated fields (tabs or spaces):

    name  reserved(-1)  fwd_compute fwd_type fwd_size  ig_compute ig_type ig_size  wg_compute wg_type wg_size  update

Compute times are ns (ASTRA-sim 1.0 cycles at its default 1 GHz clock), sizes bytes; all-gather sizes are the per-NPU
input shard. Collective names are case-insensitive. Blank lines are ignored; scientific notation is accepted.
A header-less file (LIBRA) is recognised by its first line having 12 fields.
"""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import ValidationError

from ..errors import InputError
from ..spec import Collective, Layer, Phase, Workload
from .common import read_text, validation_error

_FIELDS = 12
_NAMES = {c.value: c for c in Collective}
_PHASE_FIELDS = (("forward", 2), ("input_grad", 5), ("weight_grad", 8))


def read_workload(path: str | Path) -> Workload:
    """Read an ASTRA-sim 1.0 workload file, with or without its two header lines.

    Raises:
        InputError: missing file; a header layer count that is not an integer or differs from the number of layer
            lines (both numbers named); a layer line with the wrong number of fields; an unknown collective name;
            a negative, non-finite or non-numeric time or size.
    """
    path = Path(path)
    return parse_workload(read_text(path, "workload"), source=str(path), name=path.stem)


def parse_workload(text: str, source: str = "<workload>", name: str = "workload") -> Workload:
    """Parse ASTRA-sim 1.0 workload text; see :func:`read_workload` (``source`` names the origin in errors)."""
    lines = [(i + 1, ln.split()) for i, ln in enumerate(text.splitlines())]
    lines = [(n, toks) for n, toks in lines if toks]
    if not lines:
        raise InputError(source, None, "the workload has no layers", "add at least one 12-field layer line")
    policy = None
    declared = None
    if len(lines[0][1]) != _FIELDS:
        n0, header = lines[0]
        policy = " ".join(header)
        if len(lines) < 2 or len(lines[1][1]) != 1:
            raise InputError(source, f"line {n0 + 1}", "after the policy line the header must give the layer count "
                             "alone on a line", "put the number of layers on line 2, or remove the header")
        n1, (count,) = lines[1]
        try:
            declared = int(count)
        except ValueError:
            raise InputError(source, f"line {n1}", f"layer count '{count}' is not an integer",
                             "write the number of layers") from None
        lines = lines[2:]
    if declared is not None and declared != len(lines):
        raise InputError(source, "header layer count", f"the header says {declared} layers but the file has "
                         f"{len(lines)} layer lines", f"set line 2 to {len(lines)} or fix the layer lines")
    if not lines:
        raise InputError(source, None, "the workload has no layers", "add at least one 12-field layer line")
    layers = tuple(_layer(n, toks, source) for n, toks in lines)
    try:
        return Workload(name=name, layers=layers, policy=policy)
    except ValidationError as e:
        raise validation_error(e, source) from e


def _layer(n: int, toks: list[str], source: str) -> Layer:
    if len(toks) != _FIELDS:
        raise InputError(source, f"line {n}", f"{len(toks)} fields, expected {_FIELDS} (name, -1, then compute, "
                         "collective, bytes for forward, input-grad and weight-grad, then update time)",
                         "write exactly 12 whitespace-separated fields")
    phases = {}
    for phase, k in _PHASE_FIELDS:
        compute = _number(toks[k], n, k, f"{phase} compute ns", source)
        kind = _collective(toks[k + 1], n, k + 1, source)
        size = _number(toks[k + 2], n, k + 2, f"{phase} size bytes", source)
        phases[phase] = Phase(compute_ns=compute, collective=kind, size_bytes=size)
    update = _number(toks[11], n, 11, "update time ns", source)
    return Layer(name=toks[0], update_ns=update, **phases)


def _number(tok: str, n: int, k: int, what: str, source: str) -> float:
    try:
        v = float(tok)
    except ValueError:
        v = math.nan
    if not math.isfinite(v) or v < 0:
        raise InputError(source, f"line {n}, field {k + 1} ({what})", f"'{tok}' is not a finite number >= 0",
                         "write a non-negative number")
    return v


def _collective(tok: str, n: int, k: int, source: str) -> Collective:
    kind = _NAMES.get(tok.upper())
    if kind is None:
        raise InputError(source, f"line {n}, field {k + 1} (collective)", f"unknown collective '{tok}'",
                         f"use one of {', '.join(_NAMES)} (case-insensitive)")
    return kind
