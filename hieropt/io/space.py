"""Shape-space files (TOML) -> :class:`hieropt.spec.space.ShapeSpace`. Example
(``spaces/gpt3-4096.toml``)::

    name = "gpt3-4096"
    npus = 4096
    dims = [2, 5]                        # fewest and most dimensions of a shape (or one number)
    objective = "performance"            # performance | performance_per_cost | min_cost (+
                                         # max_iteration_time_ns)
    training_loop = "no_overlap"
    workload = "../models/gpt3-175b.toml"    # as in instance files: model (.toml), ASTRA-sim text,
                                             # inline generator
    constraints = ["sum(bw) == 500"]     # parsed for every dimension count; 'top' = index of the
                                         # last dimension
    nic_gbps = 50                        # optional: GB/s per scale-out NIC, for the NIC count
                                         # (or nic_gbit_per_s = 400, its rating in Gb/s)
    nic_npus = 1                         # optional: NPUs whose NICs are bought together (1: whole
                                         # NICs per NPU;
                                         # 8: per node of 8), hieropt.spec.space.nic_count
    switch_only_at_top = true            # default true
    scale_out_level = "pod"              # default: the last level

    [mapping]
    rule = "tp_lowest"                   # tp_lowest | all_placements | header
    tp = 16                              # default: the workload header's model_parallel_NPU_group

    [[levels]]                           # innermost first
    name = "chiplet"
    blocks = ["Ring", "FullyConnected"]
    npus = [2, 8]                        # NPUs along one dimension at this level: [min, max] (or
                                         # one number)
    cost_class = "InterChiplet"
    max_npus_within = 8                  # optional: at most 8 NPUs per chiplet group; also
                                         # max_npus, min_dims,
                                         # max_dims (default 0..1), latency_ns, algorithm

    [cost.InterChiplet]                  # or cost = "cost.yml" (LIBRA format)
    link_usd_per_gbps = 2.0

Several workloads: ``[[workloads]]`` tables with ``workload``, ``weight`` and optionally ``tp``.
Every mistake raises a one-line :class:`hieropt.errors.InputError` naming the file, the field and
the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..names import TRANSFORMER_POLICIES
from ..spec import OBJECTIVES, Workload
from ..spec.space import MAPPING_RULES, ShapeSpace
from .common import (
    check_settings,
    missing_key,
    path_argument,
    positive_number,
    unknown_key_error,
    validation_error,
)
from .instance import cost_entry, read_toml, required_choice, workload_entry

_TOP_KEYS = (
    "name",
    "description",
    "npus",
    "dims",
    "objective",
    "training_loop",
    "dimension_mode",
    "group_bandwidth",
    "workload",
    "workloads",
    "mapping",
    "levels",
    "cost",
    "constraints",
    "nic_gbps",
    "nic_gbit_per_s",
    "nic_npus",
    "switch_only_at_top",
    "scale_out_level",
    "prune_symmetric",
    "max_iteration_time_ns",
    "max_network_cost_usd",
)
_LEVEL_KEYS = (
    "name",
    "blocks",
    "npus",
    "cost_class",
    "latency_ns",
    "algorithm",
    "min_dims",
    "max_dims",
    "max_npus",
    "max_npus_within",
)
_LOOPS = ("no_overlap", "tp_dp_overlap", "tp_dp_overlap_cross", "recompute")


def load_space(path: str | Path) -> ShapeSpace:
    """Read a shape-space TOML file and the workload and cost files it names (paths relative to the
    file).

    Raises:
        InputError: any bad file or field, naming the file, the field and the fix; a path that is
            not a str or Path, naming ``path``.
    """
    path = path_argument(path, "a shape-space file", 'hieropt.load_space("spaces/gpt3-4096.toml")')
    src = str(path)
    data = read_toml(path, "shape space")
    for k in data:
        if k not in _TOP_KEYS:
            raise unknown_key_error(src, k, k, _TOP_KEYS, f"use only {', '.join(_TOP_KEYS)}")
    for k, fix in (("npus", "give the total number of NPUs, e.g. npus = 4096"),
                   ("levels", "give one [[levels]] table per level, innermost first"),
                   ("cost", "inline [cost.<class>] tables or name a LIBRA cost file")):
        if k not in data:
            raise missing_key(data, k, src, fix)
    objective = required_choice(data, "objective", OBJECTIVES, src)
    if data.get("training_loop") == "pipeline":
        raise InputError(
            src,
            "training_loop",
            "the pipeline loop is not supported in shape spaces (its p2p "
            "dimension depends on the shape)",
            f"use one of {', '.join(_LOOPS)}",
        )
    loop = required_choice(data, "training_loop", _LOOPS, src)
    base = path.parent
    min_dims, max_dims = dims_entry(data.get("dims", [2, 4]), src)
    mapping = data.get("mapping", {})
    if not isinstance(mapping, dict):
        raise InputError(
            src, "mapping", "expected a table", 'write [mapping] rule = "tp_lowest", tp = 16'
        )
    extra = set(mapping) - {"rule", "tp"}
    if extra:
        k = sorted(extra)[0]
        raise unknown_key_error(src, f"mapping.{k}", k, ("rule", "tp"), "use rule and tp")
    rule = mapping.get("rule", "tp_lowest")
    if rule not in MAPPING_RULES:
        raise InputError(
            src, "mapping.rule", f"unknown rule {rule!r}", f"use one of {', '.join(MAPPING_RULES)}"
        )
    jobs = _jobs(data, base, src, rule, mapping.get("tp"))
    levels = data["levels"]
    if not isinstance(levels, list) or not levels or not all(isinstance(lv, dict) for lv in levels):
        raise InputError(
            src, "levels", "expected one or more [[levels]] tables", "see spaces/gpt3-4096.toml"
        )
    levels = [level_entry(lv, i, src) for i, lv in enumerate(levels)]
    texts = data.get("constraints", [])
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise InputError(
            src,
            "constraints",
            "expected a list of strings",
            'write constraints = ["sum(bw) == 500"]',
        )
    parts = {
        k: data[k]
        for k in (
            "nic_npus",
            "switch_only_at_top",
            "scale_out_level",
            "prune_symmetric",
            "max_iteration_time_ns",
            "max_network_cost_usd",
            "dimension_mode",
            "group_bandwidth",
        )
        if k in data
    }
    check_settings(src, data)  # (group_bandwidth: links or whole, with what each means)
    parts.update(nic_entry(data, src))
    try:
        return ShapeSpace(
            name=str(data.get("name", path.stem)),
            npus=data["npus"],
            min_dims=min_dims,
            max_dims=max_dims,
            levels=levels,
            jobs=jobs,
            mapping_rule=rule,
            cost=cost_entry(data["cost"], base, src),
            constraints=tuple(texts),
            objective=objective,
            training_loop=loop,
            **parts,
        )
    except ValidationError as e:
        err = validation_error(e, src)
        head, _, rest = err.problem.partition(": ")
        # "levels[0]" + "npus: ..." -> "levels[0].npus"
        if err.field and rest and head.isidentifier():
            err = InputError(src, f"{err.field}.{head}", rest, err.fix)
        raise err from e


def nic_entry(data: dict[str, Any], src: str) -> dict[str, Any]:
    """The scale-out NIC speed of a space file's ``data`` as ``{"nic_gbps": GB/s}`` ({} when not
    given): ``nic_gbps`` (GB/s per direction, as given: the space's schema checks it is a number
    > 0) or ``nic_gbit_per_s`` (the NIC's rating in Gb/s, / 8 by
    :func:`hieropt.units.gbit_to_gbyte`), as a parts catalog's ``gbps`` and ``gbit_per_s``.

    Raises:
        InputError: both given; ``nic_gbit_per_s`` not a number > 0; a ``nic_gbps`` equal to a
            NIC's rating in Gb/s (:func:`hieropt.units.gbit_rating_slip`, the catalog's rule:
            ``nic_gbps = 400`` would be a 3.2 Tb/s NIC), with the fix; a port slower than
            1 GB/s (:data:`LEAST_NIC_GBPS`).
    """
    from ..units import gbit_rating_slip, gbit_to_gbyte

    if "nic_gbps" in data and "nic_gbit_per_s" in data:
        raise InputError(src, "nic_gbit_per_s", "given together with nic_gbps",
                         "give the NIC's speed once: nic_gbps (GB/s) or nic_gbit_per_s (Gb/s)")
    if "nic_gbit_per_s" in data:
        gbit = positive_number(data["nic_gbit_per_s"], src, "nic_gbit_per_s",
                               "give the NIC's rating in Gb/s, e.g. nic_gbit_per_s = 400")
        _check_nic_floor(gbit_to_gbyte(gbit), src, "nic_gbit_per_s", gbit, "Gb/s")
        return {"nic_gbps": gbit_to_gbyte(gbit)}
    if "nic_gbps" not in data:
        return {}
    value = data["nic_gbps"]
    if type(value) in (int, float) and (
        slip := gbit_rating_slip(value, "nic_gbps", "nic_gbit_per_s")
    ):
        raise InputError(src, "nic_gbps", *slip)
    if type(value) in (int, float) and value > 0:
        _check_nic_floor(float(value), src, "nic_gbps", float(value), "GB/s")
    return {"nic_gbps": value}


LEAST_NIC_GBPS = 1.0
"""The slowest scale-out NIC port a space may give, GB/s per direction: 8 Gb/s, less than one 10
Gb/s Ethernet port (no training cluster's scale-out is slower; the bandwidths' own floor,
:data:`hieropt.workloads.llm.links.LEAST_GBPS`). A slower one is a unit slip (``0.4`` for 400 Gb/s
written in Tb/s, ``0.05`` for 50 GB/s in TB/s), and the NIC counts divided by it are absurd."""


def _check_nic_floor(gbps: float, src: str, field: str, given: float, unit: str) -> None:
    """Refuse a NIC port below :data:`LEAST_NIC_GBPS` (``gbps``, GB/s; ``given`` in ``unit`` as
    the file wrote it in ``field``).

    Raises:
        InputError: naming ``src`` and ``field``, with the fix."""
    if gbps >= LEAST_NIC_GBPS:
        return
    raise InputError(src, field, f"{given:g} {unit} is slower than 1 GB/s (8 Gb/s): a speed in "
                     "Tb/s or TB/s, or a typo?", "give one NIC port's speed, e.g. nic_gbps = 50 (a "
                     "400 Gb/s port, GB/s per direction) or nic_gbit_per_s = 400")


def _int(value: Any, src: str, field: str, fix: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(src, field, f"expected a whole number, got {value!r}", fix)
    return value


def _range(value: Any, src: str, field: str, fix: str) -> tuple[int, int]:
    """``field``'s ``[min, max]``, ``[n]`` (a range of one value) or ``n`` as (min, max).

    Raises:
        InputError: a list of another length, or an entry that is not a whole number.
    """
    if isinstance(value, list):
        if len(value) == 2:
            return _int(value[0], src, f"{field}[0]", fix), _int(value[1], src, f"{field}[1]", fix)
        if len(value) == 1:  # (a range of one value)
            n = _int(value[0], src, f"{field}[0]", fix)
            return n, n
        raise InputError(src, field, f"expected [min, max] or one whole number, got a list of "
                         f"{len(value)} values {value!r}", fix)
    n = _int(value, src, field, fix)
    return n, n


def dims_entry(value: Any, src: str) -> tuple[int, int]:
    """A ``dims`` entry: ``[min, max]``, ``[n]`` or ``n`` (one dimension count), as (min, max);
    InputError otherwise."""
    return _range(value, src, "dims",
                  "write dims = [2, 5] (fewest and most dimensions) or dims = 4 (or [4])")


def level_entry(value: dict[str, Any], i: int, src: str) -> dict[str, Any]:
    """One ``[[levels]]`` table as Level fields (``npus`` as (min, max)); InputError on unknown keys
    or values."""
    extra = set(value) - set(_LEVEL_KEYS)
    if extra:
        k = sorted(extra)[0]
        raise unknown_key_error(src, f"levels[{i}].{k}", k, _LEVEL_KEYS,
                                f"use only {', '.join(_LEVEL_KEYS)}")
    out = dict(value)
    npus = value.get("npus")
    fix = ("write npus = [2, 8] (smallest and largest dimension at this level) or npus = 4 (or "
           "[4])")
    if npus is not None:
        out["npus"] = _range(npus, src, f"levels[{i}].npus", fix)
    if isinstance(out.get("blocks"), str):
        out["blocks"] = [out["blocks"]]
    return out


def _header_tp(workload: Workload) -> int | None:
    h = workload.header
    if h is None:
        return None
    if h.model_parallel_npu_group is not None:
        return h.model_parallel_npu_group
    return 1 if h.policy == "DATA" else None


def _jobs(
    data: dict[str, Any], base: Path, src: str, rule: str, tp_default: Any
) -> list[dict[str, Any]]:
    if "workloads" in data:
        if "workload" in data:
            raise InputError(
                src,
                "workloads",
                "given together with workload",
                "use either workload or [[workloads]]",
            )
        entries = data["workloads"]
        if (
            not isinstance(entries, list)
            or not entries
            or not all(isinstance(e, dict) for e in entries)
        ):
            raise InputError(src, "workloads", "expected one or more [[workloads]] tables",
                             "write [[workloads]] with workload = ..., weight = ... (and tp = ...)")
        label = "workloads[{}]"
    elif "workload" in data:
        entries, label = [{"workload": data["workload"]}], "workload"
    else:
        raise InputError(
            src, "workload", "missing", "name the workload file or inline it (or use [[workloads]])"
        )
    jobs = []
    for i, e in enumerate(entries):
        where = label.format(i)
        extra = set(e) - {"workload", "weight", "tp"}
        if extra:
            k = sorted(extra)[0]
            raise unknown_key_error(src, f"{where}.{k}", k, ("workload", "weight", "tp"),
                                    "use workload, weight, tp")
        if "workload" not in e:
            raise InputError(
                src, f"{where}.workload", "missing", "give the workload file or an inline generator"
            )
        weight = positive_number(e.get("weight", 1.0), src, f"{where}.weight",
                                 "give the workload's weight, e.g. its share of cluster hours")
        wl = workload_entry(e["workload"], base, src)
        if wl.schedule is not None:  # (LIBRA's loops time one micro-batch of one stage of a plan)
            raise InputError(
                src, f"{where}.workload",
                f"LLM plan {wl.name!r}: a shape space's loops (LIBRA's) time one pass of its "
                "layers (one micro-batch of one stage), not its iteration",
                "explore an LLM plan's networks with 'hieropt codesign' (its iteration, loop step)",
            )
        tp = e.get("tp", tp_default)
        if rule == "header":
            if tp is not None:
                raise InputError(
                    src,
                    f"{where}.tp" if "tp" in e else "mapping.tp",
                    "the header rule takes the groups from the workload's header",
                    "remove tp, or use rule tp_lowest",
                )
            jobs.append({"workload": wl, "weight": float(weight)})
            continue
        header_tp = _header_tp(wl)
        if tp is None:
            if header_tp is None:
                raise InputError(
                    src,
                    "mapping.tp",
                    f"missing: workload {wl.name!r} has no model-parallel group in its header",
                    "give tp = <tensor-parallel degree> (1: data parallel only)",
                )
            tp = header_tp
        tp = _int(
            tp, src, f"{where}.tp" if "tp" in e else "mapping.tp", "give the tensor-parallel degree"
        )
        if (
            header_tp is not None
            and wl.header is not None
            and wl.header.policy in TRANSFORMER_POLICIES
            and tp != header_tp
        ):
            raise InputError(
                src,
                f"{where}.tp" if "tp" in e else "mapping.tp",
                f"tp {tp} differs from the workload's model_parallel_NPU_group {header_tp} (its "
                "collective sizes were generated for that degree)",
                f"set tp = {header_tp}, or regenerate the workload with tp = {tp}",
            )
        jobs.append({"workload": wl, "weight": float(weight), "tp": tp})
    return jobs
