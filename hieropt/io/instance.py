"""Native instance files (TOML) and LIBRA file sets -> :class:`hieropt.spec.Instance`.

An instance file names its parts by path (relative to the instance file) or inlines them::

    name = "gpt3-175b-4d"
    objective = "performance"          # required
    training_loop = "no_overlap"       # required ("step" only for an LLM model file)
    network = "net.yml"                # LIBRA network YAML, or inline:
                                       # [network] dims = [{block = ..., npus = ..., cost_class =
                                       # ...}]
    workload = "../models/gpt3-175b.toml"  # .toml workload model (generated) or .txt ASTRA-sim 1.0
                                           # text
    mapping = "comm.yml"               # LIBRA communicator, or inline: [mapping] forward = [...]
                                       # (-1 or 1: not spanned)
    cost = "cost.yml"                  # LIBRA cost model, or inline: [cost.InterPod]
                                       # link_usd_per_gbps = 7.8 ...
    constraints = ["sum(bw) == 500", "bw[0] >= bw[1]"]       # linear, GB/s per NPU
    bounds = [{dim = 3, lower_gbps = 10, upper_gbps = 200}]  # optional per-dimension bounds, GB/s
                                                             # per NPU
    max_iteration_time_ns = 1.2e9      # optional time target (required by objective "min_cost"), ns
    max_network_cost_usd = 1.5e7       # optional network budget, $
    max_regret = 0.05                  # optional, objective min_cost: every workload within 5 % of
                                       # its own optimum
    tokens = 15e12                     # optional token budget of one run (days, MWh and $ per run)
    [cluster]                          # optional: the whole cluster's cost and power
                                       # (hieropt.io.cluster)
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..names import OBJECTIVES, TRAINING_LOOPS, close_name
from ..spec.base import text_for_number
from ..workloads.llm.links import check_bound_units
from .common import (
    check_network_table,
    check_settings,
    path_argument,
    read_toml,
    referenced_file,
    short_repr,
    unknown_key_error,
    validation_error,
)
from .ratios import ratios_entries
from .workload_file import read_model, run_generator, workload_entry

if TYPE_CHECKING:
    from ..spec import Bound, CostModel, Instance, Job, Mapping, Network, Workload

__all__ = [
    "INSTANCE_KEYS",
    "network_entry",
    "as_instance",
    "cost_entry",
    "load_instance",
    "instance_from",
    "read_model",
    "read_toml",
    "required_choice",
    "run_generator",
    "step_entry",
    "check_plan_loop",
    "workload_entry",
]

_TOP_KEYS = (
    "name",
    "description",
    "objective",
    "training_loop",
    "network",
    "workload",
    "mapping",
    "cost",
    "constraints",
    "bounds",
    "max_iteration_time_ns",
    "max_network_cost_usd",
    "pipeline",
    "step",
    "dimension_mode",
    "group_bandwidth",
    "collectives_in_flight",
    "chunks",
    "workloads",
    "max_regret",
)
# vendor-style ratios for hieropt compare (hieropt.studies.heuristics)
_TOP_KEYS += ("heuristic_ratios",)
# a run's token budget and the cluster's cost (hieropt.io.cluster)
_TOP_KEYS += ("tokens", "cluster")
INSTANCE_KEYS = _TOP_KEYS
"""Every top-level key of an instance file."""
# The spec models, the workload readers and the LIBRA readers are imported where they are first
# needed (the network first): an unknown key, a missing file or a bad network field is reported
# without loading numpy or the rest of the spec (a bad-input error in a fraction of a second).


def __getattr__(name: str) -> Any:
    """``GENERATORS`` (of :mod:`hieropt.io.workload_file`), built on first use."""
    if name == "GENERATORS":
        from . import workload_file

        return workload_file.GENERATORS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def network_entry(value: Any, base: Path, src: str) -> Network:
    """A ``network`` entry of file ``src``: a LIBRA network YAML path (relative to ``base``) or an
    inline table with ``dims``.

    Raises:
        InputError: a missing or bad file or field, naming ``src`` and the field.
    """
    from pydantic import ValidationError

    from ..spec.network import Network

    if isinstance(value, str):
        from .libra import read_network

        return read_network(referenced_file(base, value, src, "network", "network"))
    try:
        return Network(**value) if isinstance(value, dict) else Network(dims=value)
    except (ValidationError, TypeError) as e:
        if isinstance(e, ValidationError):
            raise validation_error(e, src, "network", Network) from e
        raise InputError(src, "network", "expected a file name or a table with dims",
                         "see docs/reference/file-formats.md") from e


def cost_entry(value: Any, base: Path, src: str) -> CostModel:
    """A ``cost`` entry of file ``src``: a LIBRA cost-model path (relative to ``base``) or an inline
    table ($ per GB/s). Raises InputError naming ``src`` and the field, also for a price outside
    the plausible range (:func:`hieropt.io.cluster_units.check_cost_units`: a part's price not
    divided by its GB/s, $ per byte/s)."""
    from pydantic import ValidationError

    from ..spec import CostModel
    from .libra import read_cost_model

    if isinstance(value, str):
        return read_cost_model(referenced_file(base, value, src, "cost", "cost model"))
    from .cluster_units import check_cost_units

    try:
        model = CostModel(classes=value)
    except ValidationError as e:
        err = validation_error(e, src, "cost", CostModel)
        # (the file's [cost.X] tables are the model's classes: named as the file names them)
        field = err.field.replace("cost.classes.", "cost.", 1) if err.field else None
        raise InputError(src, field, err.problem, err.fix) from e
    check_cost_units({f"cost.{name}": {k: v for k, v in cc.model_dump().items() if k in value[name]}
                      for name, cc in model.classes.items()}, src)
    return model


def _bounds(value: Any, src: str, n_dims: int) -> tuple[Bound, ...] | None:
    if value is None:
        return None
    from pydantic import ValidationError

    from ..spec import Bound
    from ..spec.ranges import bytes_per_second_bound

    if not isinstance(value, list):
        raise InputError(
            src,
            "bounds",
            "expected a list of tables",
            "write bounds = [{dim = 0, upper_gbps = 400}]",
        )
    out: list[Bound] = [Bound() for _ in range(n_dims)]
    seen = set()
    for i, b in enumerate(value):
        if (
            not isinstance(b, dict)
            or not isinstance(b.get("dim"), int)
            or not 0 <= b["dim"] < n_dims
        ):
            raise InputError(src, f"bounds[{i}].dim", f"expected a dimension index 0..{n_dims - 1}",
                             "write {dim = 0, lower_gbps = ..., upper_gbps = ...}")
        d = b["dim"]
        if d in seen:
            raise InputError(
                src, f"bounds[{i}].dim", f"dimension {d} bounded twice", "merge the two entries"
            )
        seen.add(d)
        if len(b) == 1:  # (only 'dim': a no-op that looks like a bound)
            raise InputError(
                src,
                f"bounds[{i}]",
                f"dimension {d} has neither lower_gbps nor upper_gbps",
                "give a bound, e.g. {dim = 0, upper_gbps = 400}, or remove the entry",
            )
        try:
            out[d] = Bound(**{k: v for k, v in b.items() if k != "dim"})
        except ValidationError as e:
            raise validation_error(e, src, f"bounds[{i}]") from e
        for key in ("lower_gbps", "upper_gbps"):
            slip = bytes_per_second_bound(getattr(out[d], key))
            if slip is not None:
                raise InputError(src, f"bounds[{i}].{key}", *slip)
    return tuple(out)


def required_choice(data: dict[str, Any], key: str, allowed: tuple[str, ...], src: str) -> str:
    """``data[key]``, which must be one of ``allowed``; InputError naming ``src`` and ``key``
    otherwise."""
    if key not in data:
        raise InputError(
            src, key, "missing", f'add {key} = "{allowed[0]}" (one of {", ".join(allowed)})'
        )
    if data[key] not in allowed:
        raise InputError(
            src, key, f"unknown value {data[key]!r}", f"use one of {', '.join(allowed)}"
        )
    return data[key]


def load_instance(path: str | Path) -> Instance:
    """Read an instance TOML file and the files it names (see the module docstring for the format).

    Raises:
        InputError: a bad file or field, or a ``path`` not a str or Path, naming it and the fix.
    """
    path = path_argument(path, "an instance file", 'hieropt.load_instance("instances/x.toml")')
    src = str(path)
    data = read_toml(path, "instance")
    for k in data:
        if k not in _TOP_KEYS:
            raise unknown_key_error(src, k, k, _TOP_KEYS, f"use only {', '.join(_TOP_KEYS)}")
    for k in ("network", "cost"):
        if k not in data:
            raise InputError(src, k, "missing", f"name the {k} file or inline it")
    objective = required_choice(data, "objective", OBJECTIVES, src)
    base = path.parent
    if "training_loop" not in data:  # (an LLM plan's fix is step, a LIBRA workload's no_overlap)
        llm = names_llm_plan(data, base)
        first = "step" if llm else TRAINING_LOOPS[0]
        why = " (an LLM plan's iteration)" if llm else ""
        raise InputError(src, "training_loop", "missing",
                         f'add training_loop = "{first}"{why} (one of {", ".join(TRAINING_LOOPS)})')
    loop = required_choice(data, "training_loop", TRAINING_LOOPS, src)
    # (group_bandwidth = "links" written below [network]: the file's setting, not the network's)
    check_network_table(src, data["network"], [k for k in _TOP_KEYS if k != "network"])
    network = network_entry(data["network"], base, src)
    jobs = _jobs(data, base, src, network)
    cost = cost_entry(data["cost"], base, src)
    texts = data.get("constraints", [])
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise InputError(
            src,
            "constraints",
            "expected a list of strings",
            'write constraints = ["sum(bw) == 500"]',
        )
    from ..spec.constraint_text import parse_constraint

    constraints = tuple(parse_constraint(t, network.n_dims, src) for t in texts)
    (workload, mapping, _, weight), more = jobs[0], jobs[1:]
    notes = "; ".join(n for _, _, n, _ in jobs if n) or None
    check_settings(src, data)  # (collectives_in_flight: the one value modelled, with the reason)
    extra = {
        k: data[k]
        for k in ("pipeline", "dimension_mode", "group_bandwidth", "collectives_in_flight",
                  "chunks", "max_regret")
        if k in data
    }
    # (shares of hours: hieropt.solvers.portfolio.hours_weighted)
    if "workloads" in data and "hours_share" in data["workloads"][0]:
        extra["weights"] = "hours"
    if "step" in data or loop == "step":
        extra["step"] = step_entry(data.get("step"), workload, src)
    else:
        for job in jobs:  # (every workload of a mix, not only the first)
            check_plan_loop(job[0], loop, src)
    extra.update(ratios_entries(data, src, network.n_dims))  # ([heuristic_ratios], if given)
    extra.update(buyer_entries(data, src, (network.npus_total,), network.dims[0].npus))
    bounds = _bounds(data.get("bounds"), src, network.n_dims)
    if bounds is not None and (tr := workload.training) is not None:  # (TB/s: refused)
        check_bound_units([(b.lower_gbps, b.upper_gbps) for b in bounds], tr.scaleup_gbps,
                          tr.npu, src)
    return instance_from(
        src,
        name=str(data.get("name", path.stem)),
        network=network,
        workload=workload,
        mapping=mapping,
        workload_weight=weight,
        mapping_note=notes,
        more_workloads=tuple(_job(src, i + 1, w, mp, wt) for i, (w, mp, _, wt) in enumerate(more)),
        **extra,
        cost=cost,
        constraints=constraints,
        bounds=bounds,
        objective=objective,
        training_loop=loop,
        max_iteration_time_ns=data.get("max_iteration_time_ns"),
        max_network_cost_usd=data.get("max_network_cost_usd"),
    )


def names_llm_plan(data: dict[str, Any], base: Path) -> bool:
    """Whether an instance file's table ``data`` names an LLM model file (``generator = "llm"``,
    inline or a TOML file relative to ``base``) as its workload or one of its ``[[workloads]]``,
    read without the workload reader (no numpy: the early errors' path); an unreadable entry
    counts as not."""
    import tomllib

    jobs = data.get("workloads")
    entries = [data.get("workload")] + [e.get("workload") for e in
                                        (jobs if isinstance(jobs, list) else [])
                                        if isinstance(e, dict)]
    for e in entries:
        if isinstance(e, dict) and e.get("generator") == "llm":
            return True
        if isinstance(e, str) and e.endswith(".toml"):
            try:
                with open(base / e, "rb") as f:
                    if tomllib.load(f).get("generator") == "llm":
                        return True
            except (OSError, ValueError):
                continue
    return False


def buyer_entries(data: dict[str, Any], src: str, sizes: tuple[int, ...] = (),
                  scaleup: int | None = None) -> dict[str, Any]:
    """The ``tokens`` and ``[cluster]`` entries of a file's table ``data`` (those given), read by
    :mod:`hieropt.io.cluster`, the servers checked against the cluster ``sizes`` (NPUs; scaleup:
    the first dimension's NPUs). Raises InputError naming ``src`` and the field."""
    from .cluster import cluster_entry, tokens_entry
    from .cluster_units import check_servers

    out: dict[str, Any] = {}
    if "tokens" in data:
        out["tokens"] = tokens_entry(data["tokens"], src)
    if "cluster" in data:
        out["cluster"] = cluster_entry(data["cluster"], src)
        check_servers(out["cluster"], sizes, src, scaleup)
    return out


def own_stream_flags(groups: tuple[str, ...]) -> str:
    """The LLM plan fields that put ``groups`` (a step's ``overlap_groups``) on their own stream,
    as a user sets them: ``overlap_tp_comms`` for ``tp``, ``overlap_sharded_comms`` for the
    data-parallel groups, joined by " and "."""
    flags = ["overlap_tp_comms"] if "tp" in groups else []
    flags += ["overlap_sharded_comms"] if set(groups) - {"tp"} else []
    return " and ".join(flags)


def check_plan_loop(workload: Workload, loop: str, src: str) -> None:
    """An LLM plan (a workload with a step schedule, from an LLM model file) runs on loop ``step``
    only: LIBRA's loops (``no_overlap``, ``tp_dp_overlap``, ``tp_dp_overlap_cross``,
    ``recompute``, ``pipeline``) time one pass of the workload's layers, which for a plan is one
    micro-batch of one stage, while its tokens and model FLOPs are the whole iteration's (MFU,
    tokens/s and days would be off by the micro-batches and stages); its own-stream collectives
    (``overlap_sharded_comms``, ``overlap_tp_comms``, ``overlap_grad_reduce``) would be dropped.

    Raises:
        InputError: an LLM plan under ``loop``, naming ``training_loop``, the plan's own-stream
            flag if it sets one, and the fix (use ``step``).
    """
    sch = workload.schedule
    if sch is None:
        return
    flag = ("overlap_grad_reduce" if sch.overlap_dp
            else "overlap_param_gather" if sch.overlap_gather
            else own_stream_flags(sch.overlap_groups) if sch.overlap_groups else "")
    also = f"; it cannot run the plan's {flag} (collectives on their own stream)" if flag else ""
    raise InputError(
        src, "training_loop",
        f"{loop!r} times one pass of the layers of LLM plan {workload.name!r} (one micro-batch "
        f"of one stage), not its iteration: its MFU, tokens/s and days would be wrong{also}",
        'use training_loop = "step" (an LLM plan\'s iteration: its micro-batches, stages and '
        "optimizer step)",
    )


def step_entry(value: Any, workload: Workload, src: str) -> dict[str, Any]:
    """The ``[step]`` table of loop ``step``; fields it leaves out come from the workload's plan
    (:attr:`hieropt.spec.Workload.schedule`, an LLM model file's: micro-batches, stages, virtual
    stages, the micro-batch group and its own-stream collectives, ``overlap_dp`` /
    ``overlap_gather`` / ``overlap_groups``), else from its header (``ga``: micro-batches,
    ``pp``: stages, ``vpp``: virtual stages) and its training facts (the micro-batch group).

    Raises:
        InputError: not a table, or the micro-batch count neither given nor in the header.
    """
    if value is not None and not isinstance(value, dict):
        raise InputError(src, "step", "expected a table", "write [step] microbatches = 24 ...")
    out = dict(value or {})
    if workload.schedule is not None:
        plan = workload.schedule.model_dump()
        overlaps = ("overlap_dp", "overlap_gather", "overlap_groups")
        if any(k in out for k in overlaps):  # the file's overlap replaces the plan's
            for k in overlaps:
                plan.pop(k)
        out = {**plan, **out}
    h = workload.header
    for key, attr in (("microbatches", "ga"), ("stages", "pp"), ("virtual_stages", "vpp")):
        if key not in out and h is not None and getattr(h, attr) is not None:
            out[key] = getattr(h, attr)
    group = workload.training.microbatch_group if workload.training is not None else None
    if "microbatch_group" not in out and group is not None:
        out["microbatch_group"] = group
    if "microbatches" not in out:
        raise InputError(
            src,
            "step.microbatches",
            "missing, and the workload's header has no ga (micro-batches)",
            "give [step] microbatches (and stages, virtual_stages)",
        )
    return out


def _jobs(data: dict[str, Any], base: Path, src: str,
          network: Network) -> list[tuple[Workload, Mapping, str | None, float]]:
    """The workloads: ``workload`` + ``mapping`` (weight 1), or ``[[workloads]]`` entries with a
    ``weight`` each, or a ``hours_share`` each (normalised to sum 1)."""
    if "workloads" in data:
        if "workload" in data or "mapping" in data:
            raise InputError(src, "workloads", "given together with workload/mapping",
                             "use either workload + mapping or [[workloads]] entries")
        entries = data["workloads"]
        if (
            not isinstance(entries, list)
            or not entries
            or not all(isinstance(e, dict) for e in entries)
        ):
            raise InputError(src, "workloads", "expected one or more [[workloads]] tables",
                             "write [[workloads]] with workload = ..., mapping = ..., weight = ...")
        out = []
        for i, e in enumerate(entries):
            extra = set(e) - set(_JOB_KEYS)
            if extra:
                k = sorted(extra)[0]
                fix = (None if close_name(k, _JOB_KEYS)
                       else "use workload, mapping, weight or hours_share")
                raise unknown_key_error(src, f"workloads[{i}].{k}", k, _JOB_KEYS, fix)
            key = hours_key(entries, i, src)
            for k in ("workload", key):
                if k not in e:
                    raise InputError(src, f"workloads[{i}].{k}", "missing", f"give the {k}")
            w = job_weight(e[key], key, src, f"workloads[{i}].{key}")
            from ..spec.ranges import WEIGHT_RANGE

            if not WEIGHT_RANGE[0] <= w <= WEIGHT_RANGE[1]:
                raise InputError(
                    src,
                    f"workloads[{i}].{key}",
                    f"{w:g} is outside the accepted {WEIGHT_RANGE[0]:g} .. "
                    f"{WEIGHT_RANGE[1]:g} (weights are multiplied into bytes and times)",
                    "give the weights on a common scale, e.g. shares of cluster hours",
                )
            wl = workload_entry(e["workload"], base, src)
            out.append(
                (wl, *_mapping_or_derived(e.get("mapping"), wl, base, src, network,
                                          _stages(data)), float(w))
            )
        # (shares normalised to sum 1)
        total = sum(w for *_, w in out) if key == "hours_share" else 1.0
        return [(wl, mp, n, w / total) for wl, mp, n, w in out]
    if "workload" not in data:
        raise InputError(
            src, "workload", "missing", "name the workload file or inline it (or use [[workloads]])"
        )
    wl = workload_entry(data["workload"], base, src)
    return [(wl, *_mapping_or_derived(data.get("mapping"), wl, base, src, network,
                                      _stages(data)), 1.0)]


def _stages(data: dict[str, Any]) -> int:
    """The pipeline loop's stage count as the file gives it (a derived mapping is one stage's), 1
    for another loop or a count the instance's checks will refuse."""
    pipeline = data.get("pipeline")
    if data.get("training_loop") != "pipeline" or not isinstance(pipeline, dict):
        return 1
    stages = pipeline.get("stages")
    return stages if type(stages) is int and stages >= 2 else 1


_JOB_KEYS = ("workload", "mapping", "weight", "hours_share")
"""The keys of a ``[[workloads]]`` entry of an instance file."""


def job_weight(value: Any, key: str, src: str, field: str) -> float:
    """A ``[[workloads]]`` entry's ``weight`` or ``hours_share`` (``key``, at ``field``) as a number
    > 0, as given (shares are normalised later).

    Raises:
        InputError: naming ``field``, for text (a percentage: the share as a plain number, in the
            scale of the others), true / false, a value <= 0, or one that is not finite.
    """
    share = key == "hours_share"
    fix = ("give the workload's share of the cluster's hours, a number > 0 (the shares are "
           "normalised to sum 1: 60 and 40, or 0.6 and 0.4); remove a workload that gets no hours"
           if share else "give the workload's weight, e.g. its share of cluster hours")
    if isinstance(value, str):
        number = value.strip().removesuffix("%").strip()
        if share and value.strip().endswith("%") and re.fullmatch(r"[0-9]*\.?[0-9]+", number):
            raise InputError(src, field, f"{value!r} is text, not a number",
                             f"write {number} without '%' (the shares are normalised to sum 1: "
                             "give every workload's share in one scale, e.g. 60 and 40 for 60 % "
                             "and 40 %)")
        problem, _, text_fix = text_for_number(key, value).partition(": ")[2].partition("; fix: ")
        raise InputError(src, field, problem, text_fix)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise InputError(src, field, f"{short_repr(value)} is not a positive, finite number", fix)
    return value


def hours_key(entries: list[dict[str, Any]], i: int, src: str) -> str:
    """``"hours_share"`` when the ``[[workloads]]`` entries give shares of the cluster's hours, else
    ``"weight"``; InputError when entry ``i`` gives both or the other key than the first entry."""
    first = "hours_share" if "hours_share" in entries[0] else "weight"
    other = "weight" if first == "hours_share" else "hours_share"
    e = entries[i]
    if "hours_share" in e and "weight" in e:
        raise InputError(src, f"workloads[{i}]", "gives both weight and hours_share",
                         "give hours_share (hieropt turns shares into weights) or weight, not both")
    if other in e:
        raise InputError(src, f"workloads[{i}].{other}", f"workloads[0] gives {first}",
                         "give every workload a hours_share, or every one a weight")
    return first


def _mapping_or_derived(value: Any, workload: Workload, base: Path, src: str,
                        network: Network, stages: int = 1) -> tuple[Mapping, str | None]:
    """The given mapping, or the one the workload header implies with a note saying so (on one of
    ``stages`` pipeline stages: :func:`hieropt.model.mapping.derive_mapping`)."""
    if value is not None:
        from .mapping_entry import mapping_entry

        return mapping_entry(value, workload, base, src, network), None
    from ..model.mapping import derive_mapping

    mapping, why = derive_mapping(workload, network, src, stages)
    return mapping, f"mapping of {workload.name} derived from its header: {why}"


def _job(src: str, i: int, workload: Workload, mapping: Mapping, weight: float) -> Job:
    from pydantic import ValidationError

    from ..spec import Job

    try:
        return Job(workload=workload, mapping=mapping, weight=weight)
    except ValidationError as e:
        raise validation_error(e, src, f"workloads[{i}]") from e


def instance_from(src: str, **parts: Any) -> Instance:
    """An :class:`Instance` of ``parts`` (its fields), a validation error as an InputError naming
    ``src`` and the field."""
    from pydantic import ValidationError

    from ..spec import Instance

    try:
        return Instance(**parts)
    except ValidationError as e:
        raise validation_error(e, src, model=Instance) from e


def as_instance(value: Any, argument: str = "instance") -> Instance:
    """``value`` as an :class:`Instance`: an Instance itself, or the path (str or Path) of an
    instance file, read with :func:`load_instance`.

    Raises:
        InputError: a missing or bad file, or a value of another type (naming ``argument``).
    """
    from ..spec import Instance

    if isinstance(value, Instance):
        return value
    if isinstance(value, str | Path):
        return load_instance(value)
    raise InputError(
        argument,
        None,
        f"expected an Instance or the path of an instance file, got a {type(value).__name__}",
        "pass hieropt.load_instance(path) or the path itself",
    )


