"""LLM model files (TOML) -> :class:`hieropt.workloads.llm.LLMParams`, with ``KEY=VALUE`` overrides.

A model file::

    generator = "llm"
    description = "..."              # optional
    [params]
    name = "gpt3-175b"               # optional: the workload's name (default: the model's)
    [params.model]                   # hieropt.workloads.llm.Architecture (layers, hidden_size,
                                     # heads, ...)
    [params.model.moe]               # optional: MoE layers
    [params.plan]                    # hieropt.workloads.llm.Plan (tp, pp, dp, ep, zero_stage, ...)
    [params.npu]                     # hieropt.workloads.llm.NPU: accelerator = "H100-SXM"
                                     # (from the catalog; fields given here win), or
                                     # peak_tflops, efficiency, hbm_gib, ...
    [params.precision]               # optional: bytes per element

``npu_catalog = "path.toml"`` (top level, relative to the model file) names the accelerator catalog
``accelerator`` is looked up in (default: ``catalogs/npus.toml``, :mod:`hieropt.io.npus`).

Overrides (``hieropt workload plan FILE --set tp=8 --set recompute=full``): ``KEY`` is a dotted path
below ``params`` (``plan.tp``, ``model.moe.experts``, ``npu.hbm_gib``) or a bare field name found in
exactly one of plan, npu, precision, model and model.moe (``tp``, ``hbm_gib``); ``VALUE`` is a TOML
value (``8``, ``true``, ``[7, 8]``, ``"x"``), a bare word standing for a string
(``schedule=interleaved``).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..names import close_name
from ..workloads.llm.params import NPU, Architecture, LLMParams, MoE, Plan, Precision
from .common import path_argument, read_toml, referenced_file, unknown_key_error, validation_error
from .npus import figure_sourced, fill_calibrated, fill_npu

SECTIONS: tuple[tuple[str, type], ...] = (("plan", Plan), ("npu", NPU), ("precision", Precision),
                                          ("model", Architecture), ("model.moe", MoE))
"""Where a bare override key is looked up, in this order (a key must name a field of exactly
one)."""


def parse_override_value(text: str) -> Any:
    """The value of a ``KEY=VALUE`` override: a TOML value (``8``, ``true``, ``[7, 8]``, ``"x"``),
    or a bare word standing for that string (``interleaved``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def override_path(key: str, source: str = "--set") -> list[str]:
    """The dotted path below ``params`` an override key stands for (``"tp"`` -> ``["plan", "tp"]``).

    Raises:
        InputError: the key names no field, or a field of several sections.
    """
    if "." in key:
        parts = key.split(".")
        if parts[0] == "params":
            parts = parts[1:]
        return parts
    hits = [sec for sec, cls in SECTIONS if key in cls.model_fields]
    if not hits:
        known = sorted({f for _, cls in SECTIONS for f in cls.model_fields})
        guess = close_name(key, known)
        if guess is not None:
            raise InputError(source, key, f"unknown key (did you mean '{guess}'?)",
                             f"use '{guess}' (or a dotted path like plan.tp)")
        raise InputError(
            source,
            key,
            "unknown key",
            f"use one of {', '.join(known)} (or a dotted path like plan.tp)",
        )
    if len(hits) > 1:
        raise InputError(source, key, f"ambiguous: a field of {' and '.join(hits)}",
                         f"write {hits[0]}.{key} or {hits[1]}.{key}")
    return hits[0].split(".") + [key]


_MORE_PAIRS = re.compile(r",\s*[A-Za-z_][\w.]*\s*=")
"""A second ``KEY=`` after a comma in an override's value (``tp=8,pp=8``)."""


def _one_pair(item: str, value: str, source: str) -> None:
    """Refuse an override ``item`` whose unparsed ``value`` holds more ``KEY=VALUE`` pairs after
    commas (``tp=8,pp=8``: one override per key), with the overrides to write.

    Raises:
        InputError: naming ``item``, with one ``--set`` (or one ``set`` entry) per pair.
    """
    if parse_override_value(value) != value or not _MORE_PAIRS.search(value):
        return
    pairs = [p.strip() for p in item.split(",") if p.strip()]
    if source == "--set":
        one, fix = "--set", "give one --set per key: " + " ".join(f"--set {p}" for p in pairs)
    else:
        one = "entry"
        fix = f"give one entry per key: {_list_of(source, pairs)}"
    raise InputError(source, item, f"{len(pairs)} KEY=VALUE pairs in one {one}", fix)


def _list_of(source: str, overrides: list[str]) -> str:
    """``overrides`` written as the list ``source`` takes: the library's argument ``overrides``
    (``overrides=["tp=8"]``) or a space file's ``set`` (``set = ["tp=8"]``)."""
    items = ", ".join(f'"{p}"' for p in overrides)
    return f"overrides=[{items}]" if source == "overrides" else f"set = [{items}]"


def apply_overrides(
    params: dict[str, Any], overrides: Iterable[str], source: str = "--set"
) -> dict[str, Any]:
    """``params`` (the file's ``[params]`` table) with ``KEY=VALUE`` overrides applied (a new dict).

    An override of ``recompute`` to another value than ``full`` drops the file's
    ``recompute_layers`` (a count of full recompute's blocks), unless an override sets it too
    (then refused by the plan's rule), as a co-design space drops it for its other choices.

    Raises:
        InputError: an override without ``=``, with an unknown key, or with several ``KEY=VALUE``
            pairs separated by commas (one override per key).
    """
    out = _deep_copy(params)
    given: dict[tuple[str, ...], Any] = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(
                source,
                item,
                "expected KEY=VALUE",
                "write e.g. --set tp=8" if source == "--set" else
                f"write e.g. {_list_of(source, ['tp=8'])}",
            )
        path = override_path(key, source)
        _one_pair(item, value.strip(), source)
        node = out
        for part in path[:-1]:
            nxt = node.setdefault(part, {})
            if not isinstance(nxt, dict):
                raise InputError(source, key, f"{part} is not a table", "check the key's path")
            node = nxt
        node[path[-1]] = given[tuple(path)] = parse_override_value(value.strip())
    recompute = given.get(("plan", "recompute"), "full")
    if recompute != "full" and ("plan", "recompute_layers") not in given:
        out.get("plan", {}).pop("recompute_layers", None)
    return out


def _deep_copy(d: dict[str, Any]) -> dict[str, Any]:
    return {k: _deep_copy(v) if isinstance(v, dict) else v for k, v in d.items()}


def llm_params(data: dict[str, Any], source: str | Path, overrides: Iterable[str] = (),
               override_source: str = "--set", plan_rules: bool = True) -> LLMParams:
    """Validate a model file's parsed TOML (``generator = "llm"``) with ``overrides`` into
    :class:`LLMParams`, its NPU knowing where its scale-up domain and NIC limit come from
    (:func:`hieropt.io.npus.figure_sourced`).

    ``plan_rules`` False leaves out the rules between the plan and the model (the degrees'
    product, divisibility, the micro-batch count against the stages, ...: :class:`LLMParams`), for a
    co-design space, whose plans replace the model file's and are each checked when enumerated.

    ``override_source`` names where the overrides come from (``--set``, or ``"space.toml: set"`` for
    a co-design space's ``set`` list): a bad override, or a value an override gives that the model
    rejects, is reported there with the override itself (``space.toml: set: npus=abc: ...``), not as
    the model file's.

    Raises:
        InputError: another generator, unknown keys, or a plan that does not fit the model (the
            field and the fix).
    """
    if data.get("generator") != "llm":
        raise InputError(source, "generator", f"{data.get('generator')!r} is not the LLM generator",
                         'use a model file with generator = "llm" (e.g. models/gpt3-175b-llm.toml)')
    known = ("generator", "params", "description", "npu_catalog")
    extra = set(data) - set(known)
    if extra:
        key = sorted(extra)[0]
        raise unknown_key_error(source, key, key, known,
                                otherwise="use generator, description, npu_catalog and [params]")
    params = data.get("params")
    if not isinstance(params, dict):
        raise InputError(
            source, "params", "missing", "add [params.model], [params.plan] and [params.npu]"
        )
    _top_level_key_inside(source, params)
    npu = params.get("npu")
    if isinstance(npu, dict) and "flash_attention" in npu:
        raise InputError(
            source,
            "params.npu.flash_attention",
            "a plan field (one field read by the memory model and the compute kernels)",
            "move flash_attention to [params.plan]",
        )
    overrides = list(overrides)
    overridden = apply_overrides(params, overrides, override_source)
    try:
        merged = with_accelerator(data, overridden, source)
    except InputError as e:  # (a peak --set gave, refused against the catalog: the override's)
        item = _override_setting(e.field, overrides, override_source)
        if item is None:
            raise
        raise InputError(override_source, item, e.problem, e.fix) from e
    merged = _peak_format(params, merged)
    try:
        validated = LLMParams.model_validate(merged, context={"plan_rules": plan_rules})
    except ValidationError as e:
        item = _override_of(e, overrides, override_source)
        if item is not None:
            blamed = validation_error(e, override_source)
            head, sep, rest = blamed.problem.partition(": ")
            # (the field is the override's key)
            problem = rest if sep and " " not in head else blamed.problem
            raise InputError(override_source, item, problem, blamed.fix) from e
        raise validation_error(e, source, "params") from e
    return figure_sourced(validated, npu_catalog_of(data, source))  # (the cap's and caveats' words)


def _top_level_key_inside(source: str | Path, params: dict[str, Any]) -> None:
    """Refuse ``npu_catalog`` or ``description`` written inside ``[params]`` or one of its tables
    (in TOML a key below a ``[table]`` line belongs to that table): the fix moves it to the top.

    Raises:
        InputError: the key's path, where it belongs and the line to write.
    """
    tables = [("params", params)] + [(f"params.{k}", v) for k, v in params.items()
                                     if isinstance(v, dict)]
    for where, table in tables:
        for key in ("npu_catalog", "description"):
            if key in table:
                raise InputError(
                    source, f"{where}.{key}",
                    f"unknown key: {key} is a top-level key of the model file, not a key of "
                    f"[{where}] (a key written below a [table] line belongs to that table)",
                    f"move {key} = {table[key]!r} above the first [table] line".replace("'", '"'))


def _peak_format(own: dict[str, Any], merged: dict[str, Any]) -> dict[str, Any]:
    """``merged`` (``[params]``, overrides applied) with ``npu.peak_format``, the number format of
    the file's own ``[params]`` (``own``) inline ``peak_tflops``, when an override changed the
    number format and kept that peak (no accelerator nor calibrated file): the peak is then
    another format's (:attr:`hieropt.workloads.llm.NPU.peak_note`)."""
    mine, npu = own.get("npu"), merged.get("npu")
    if not isinstance(mine, dict) or not isinstance(npu, dict) or "peak_tflops" not in mine:
        return merged
    if "accelerator" in npu or "calibrated" in npu or npu.get("peak_tflops") != mine["peak_tflops"]:
        return merged
    fmt = mine.get("number_format", "bf16")
    if npu.get("number_format", "bf16") == fmt:
        return merged
    return {**merged, "npu": {**npu, "peak_format": fmt}}


def with_accelerator(data: dict[str, Any], params: dict[str, Any],
                     source: str | Path) -> dict[str, Any]:
    """``params`` (a model file's ``[params]``, overrides applied) with ``[params.npu] accelerator``
    filled in from the file's ``npu_catalog`` (relative to the file) or the shipped catalog
    (:func:`hieropt.io.npus.fill_npu`), or ``[params.npu] calibrated`` from that calibrated
    accelerator file (relative to the file; :func:`hieropt.io.npus.fill_calibrated`).

    Raises:
        InputError: a missing catalog file, an unknown accelerator, or no peak in the number format;
            a missing or bad calibrated file, one given with ``accelerator``, or a model file
            changing its fitted values.
    """
    if not isinstance(params.get("npu"), dict):
        return params
    if "calibrated" in params["npu"]:
        own = (data.get("params") or {}).get("npu")
        return {**params, "npu": fill_calibrated(params["npu"], source, own)}
    return {**params, "npu": fill_npu(params["npu"], source, npu_catalog_of(data, source))}


def npu_catalog_of(data: dict[str, Any], source: str | Path) -> Path | None:
    """The accelerator catalog a model file's parsed TOML ``data`` names (``npu_catalog``, relative
    to the file ``source``), or None: the shipped one.

    Raises:
        InputError: a missing catalog file.
    """
    if "npu_catalog" not in data:
        return None
    return referenced_file(Path(source).parent, data["npu_catalog"], str(source), "npu_catalog",
                           "accelerator catalog")


def _field_of(e: ValidationError) -> str:
    """The dotted field below ``params`` of ``e``'s first error: its location, and the field a model
    validator names at the start of its message (``plan`` + ``"npus: 'abc' is text"`` ->
    ``plan.npus``)."""
    err = e.errors()[0]
    loc = [str(p) for p in err["loc"]]
    msg = str(err["msg"]).removeprefix("Value error, ")
    head = msg.split(": ", 1)[0] if ": " in msg else ""
    if head and " " not in head:
        loc += [p for p in head.split(".") if p not in loc]
    return ".".join(loc)


def _override_setting(field: str | None, overrides: list[str], source: str) -> str | None:
    """The last override (``KEY=VALUE``) setting ``field`` (``params.npu.peak_tflops``), or
    None."""
    if field is None or not field.startswith("params."):
        return None
    for item in reversed(overrides):  # (applied: each has a key naming a field)
        key = item.partition("=")[0].strip()
        if "params." + ".".join(override_path(key, source)) == field:
            return item
    return None


def _override_of(e: ValidationError, overrides: list[str], source: str) -> str | None:
    """The override (``KEY=VALUE``) whose value ``e`` rejects by itself, or None. By itself:
    pydantic's error on that field (a type, a bound, a choice), or a validator's message on that
    field quoting the value (``npus: 'abc' is text, not a number``). A value that only clashes with
    other fields (``tp x pp x dp`` against ``npus``) stays the model file's error, as several
    fields, given or overridden, take part."""
    err = e.errors()[0]
    field, msg = _field_of(e), str(err["msg"])
    for item in reversed(overrides):  # (the last override of a field is the value validated)
        key, _, value = item.partition("=")
        path = override_path(key.strip(), source)
        if ".".join(path) == field and (
            list(map(str, err["loc"])) == path or f"'{value.strip()}'" in msg
            or _npu_figure_slip(path, value)
        ):
            return item
    return None


def _npu_figure_slip(path: list[str], value: str) -> bool:
    """Whether ``value``, given to the NPU figure at ``path`` (``npu.nic_gbps``), is refused by
    itself as written in another unit (:func:`hieropt.workloads.llm.accelerators.unit_slip`:
    ``nic_gbps = 400`` is a NIC's rating in Gb/s; ``peak_slip`` for ``peak_tflops``), a check the
    NPU's model validator makes on that one field."""
    from ..workloads.llm.accelerators import peak_slip, unit_slip

    if len(path) != 2 or path[0] != "npu":
        return False
    try:
        v = float(parse_override_value(value.strip()))
    except (TypeError, ValueError):
        return False
    if path[1] == "peak_tflops":
        return peak_slip(v) is not None
    return unit_slip(path[1], v) is not None


def read_llm(
    path: str | Path,
    overrides: Iterable[str] = (),
    override_source: str = "--set",
    plan_rules: bool = True,
) -> LLMParams:
    """Read an LLM model file (module docstring) and apply ``overrides`` (from ``override_source``,
    see :func:`llm_params`; ``plan_rules`` False: without the rules between the plan and the model,
    for a co-design space's base).

    Raises:
        InputError: a path that is not a str or Path (naming ``path``), a missing or unreadable
            file, invalid TOML, bad fields or overrides.
    """
    path = path_argument(path, "an LLM model file", 'hieropt.load_llm("models/llama3-70b.toml")')
    data = read_toml(path, "model")
    return llm_params(data, path, overrides, override_source, plan_rules)


load_llm = read_llm
"""Public alias (``hieropt.load_llm``): an LLM model file as
:class:`~hieropt.workloads.llm.LLMParams`."""

__all__ = ["read_llm", "load_llm", "llm_params", "with_accelerator", "npu_catalog_of",
           "apply_overrides",
           "override_path", "parse_override_value", "SECTIONS"]
