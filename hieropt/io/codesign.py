"""Co-design space files (TOML) -> :class:`hieropt.workloads.llm.space.CodesignSpace`. Example
(``spaces/codesign-gpt3-4096.toml``)::

    name = "codesign-gpt3-4096"
    model = "../models/gpt3-175b-llm.toml"   # LLM model file: architecture, NPU (HBM), precision,
                                             # base plan
    set = ["global_batch_size=1536"]         # optional KEY=VALUE overrides of the model file (as
                                             # --set; checked with the plans the space searches,
                                             # not the model file's own plan)
    npus = 4096                              # or several cluster sizes: npus = [2048, 4096, 8192]
    objective = "performance"                # performance | performance_per_cost | min_cost (+
                                             # max_iteration_time_ns)
    constraints = ["sum(bw) == 500"]         # parsed for every dimension count; 'top' = the last
                                             # dimension
    mapping_rule = "lowest"                  # lowest | all_placements
    prune = true                             # skip candidates whose proven bound cannot beat the
                                             # incumbent

    [plans]                                  # the values each plan field may take (lists; an
                                             # omitted field
                                             # keeps the model file's value)
    tp = [1, 2, 4, 8, 16]
    pp = [1, 2, 4, 8, 16]
    zero_stage = [0, 1]
    recompute = ["none", "selective", "full"]
    sequence_parallel = [false, true]        # also: ep, virtual_stages, micro_batch_size,
                                             # overlap_grad_reduce,
                                             # schedule = ["1f1b", "interleaved"] (v = 1 / v >= 2;
                                             # default
                                             # virtual_stages then [1, 2])

    [network]                                # one fixed network: dims = [{block, npus, cost_class},
                                             # ...]
    # or, instead of [network], a shape space as in hieropt explore: dims = [2, 4],
    # switch_only_at_top,
    # [[levels]] tables (name, blocks, npus, cost_class, max_npus_within, ...)

    [cost.InterPod]                          # or cost = "cost.yml" (LIBRA format), $ per GB/s
    link_usd_per_gbps = 7.8

Every mistake raises a one-line :class:`hieropt.errors.InputError` naming the file, the field and
the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..names import CODESIGN_OBJECTIVES
from ..spec import Network
from ..workloads.llm.space import CodesignSpace, PlanChoices
from .common import (
    check_settings,
    missing_key,
    path_argument,
    unknown_key_error,
    validation_error,
)
from .instance import buyer_entries, cost_entry, read_toml, required_choice
from .llm import override_path, parse_override_value, read_llm
from .space import dims_entry, level_entry, nic_entry

_TOP_KEYS = (
    "name",
    "description",
    "model",
    "set",
    "npus",
    "objective",
    "constraints",
    "mapping_rule",
    "prune",
    "custom_layouts",
    "plans",
    "network",
    "dims",
    "levels",
    "switch_only_at_top",
    "cost",
    "max_iteration_time_ns",
    "max_network_cost_usd",
    "dimension_mode",
    "group_bandwidth",
    "nic_gbps",
    "nic_gbit_per_s",
    "nic_npus",
    "max_total_capex_usd",
)
# the run's token budget and the cluster's cost (hieropt.io.cluster)
_TOP_KEYS += ("tokens", "cluster")


def load_codesign(path: str | Path) -> CodesignSpace:
    """Read a co-design space file and the model and cost files it names (paths relative to the
    file).

    Raises:
        InputError: any bad file or field, naming the file, the field and the fix; a ``path`` not
            a str or Path, naming it.
    """
    path = path_argument(path, "a co-design space file",
                         'hieropt.load_codesign("spaces/codesign-gpt3-4096.toml")')
    src = str(path)
    data = read_toml(path, "co-design space")
    _check_keys(data, src)
    sets = _strings(data, "set", src, "expected a list of KEY=VALUE strings",
                    'write set = ["global_batch_size=1536"]')
    # (the model file's own plan is not one the space searches: its npus and [plans] replace it,
    # so the rules between plan and model are checked on each plan the space enumerates)
    base = read_llm(_path(path, data["model"]), sets, f"{src}: set", plan_rules=False)
    _check_set_npus(sets, data["npus"], src)
    # (min_max_regret: refused by the space with why; any other unknown value lists codesign's)
    objective = ("performance" if "objective" not in data else data["objective"]
                 if data["objective"] == "min_max_regret"
                 else required_choice(data, "objective", CODESIGN_OBJECTIVES, src))
    parts: dict[str, Any] = {k: data[k] for k in ("mapping_rule", "prune", "custom_layouts",
                                                   "switch_only_at_top",
                                                   "max_iteration_time_ns", "max_network_cost_usd",
                                                   "dimension_mode", "group_bandwidth",
                                                   "nic_npus", "max_total_capex_usd")
                             if k in data}
    check_settings(src, data)  # (group_bandwidth: links or whole, with what each means)
    parts.update(nic_entry(data, src))
    parts.update(buyer_entries(data, src))
    choices = _plan_choices(data, base, src)
    parts.update(_network_parts(data, src))
    texts = _strings(data, "constraints", src, "expected a list of strings",
                     'write constraints = ["sum(bw) == 500"]')
    try:
        space = CodesignSpace(name=str(data.get("name", path.stem)), base=base, npus=data["npus"],
                              plans=choices, cost=cost_entry(data["cost"], path.parent, src),
                              constraints=tuple(texts), objective=objective, **parts)
    except ValidationError as e:
        raise validation_error(e, src) from e
    from .cluster_units import check_servers

    check_servers(space.cluster, space.sizes, src)
    return space


def result_space(data: dict[str, Any], source: str | Path) -> CodesignSpace | None:
    """The space a co-design result (the JSON ``hieropt codesign --json`` writes, read as
    ``data``) was searched on: its ``space_definition``
    (:meth:`hieropt.studies.codesign.search.Codesign.to_dict`), or None for a result written
    without one (then ``hieropt report`` needs ``--space``).

    Raises:
        InputError: a ``space_definition`` that is not a valid space (a file edited, or written
            by another version), naming ``source``.
    """
    doc = data.get("space_definition")
    if doc is None:
        return None
    try:  # (the model file's own plan, as load_codesign reads it: not one the space searched)
        return CodesignSpace.model_validate(doc, context={"plan_rules": False})
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise InputError(str(source), f"space_definition.{where}" if where else
                         "space_definition", f"not a co-design space: {first['msg']}",
                         "give the space file with --space SPACE.toml, or search again with "
                         "this version ('hieropt codesign SPACE --json FILE')") from None


def _check_keys(data: dict[str, Any], src: str) -> None:
    """Refuse a top-level key of ``data`` (the file ``src``) that a space does not take, then a
    missing ``model``, ``npus`` or ``cost`` (in that order)."""
    for k in data:
        if k not in _TOP_KEYS:
            raise unknown_key_error(src, k, k, _TOP_KEYS, f"use only {', '.join(_TOP_KEYS)}")
    for k, fix in (
        ("model", 'name the LLM model file, e.g. model = "../models/gpt3-175b-llm.toml"'),
        ("npus", "give the total number of NPUs, e.g. npus = 4096"),
        ("cost", "inline [cost.<class>] tables or name a LIBRA cost file"),
    ):
        if k not in data:
            raise missing_key(data, k, src, fix)


def _strings(data: dict[str, Any], key: str, src: str, problem: str, fix: str) -> list[str]:
    """The list of strings ``data[key]`` (empty when absent).

    Raises:
        InputError: it is not a list of strings (``problem`` and ``fix`` name the field's form).
    """
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise InputError(src, key, problem, fix)
    return value


def _plan_choices(data: dict[str, Any], base, src: str) -> PlanChoices:
    """The ``[plans]`` table of ``data`` as :class:`PlanChoices`: a field it omits keeps the model
    file's value (``base.plan``, with the space's set overrides), not PlanChoices' default; an
    interleaved schedule without ``virtual_stages`` gets v = 2 (and 1 beside 1f1b).

    Raises:
        InputError: ``plans`` is not a table, names a plan field that no space searches (cp, dp,
            npus, recompute_layers: said why), or a value PlanChoices refuses.
    """
    plans = data.get("plans", {})
    if not isinstance(plans, dict):
        raise InputError(src, "plans", "expected a table", "write [plans] tp = [1, 2, 4, 8]")
    given = {k: v if isinstance(v, list) else [v] for k, v in plans.items()}
    fixed = sorted(set(given) & {"cp", "dp", "npus", "recompute_layers"})
    if fixed:  # (plan fields every plan of the space takes from the model file or follows from)
        raise InputError(
            src, f"plans.{fixed[0]}",
            {"cp": "context parallelism is not searched: every plan takes the model file's cp",
             "dp": "dp is not searched: it follows from npus / (tp x cp x pp)",
             "npus": "npus is not searched here: the space's top-level npus lists the sizes",
             "recompute_layers": "recompute_layers is not searched: every full recompute choice "
                                 "takes the model file's count"}[
                fixed[0]],
            {"cp": "remove it from [plans]; set cp in the model file's plan or with "
                   'set = ["cp=2"] (one space per cp to compare several)',
             "dp": "remove it from [plans]",
             "npus": "remove it from [plans]; write npus = [...] at the top of the file",
             "recompute_layers": "remove it from [plans]; set recompute_layers in the model "
                                 'file\'s plan or with set = ["recompute=full", '
                                 '"recompute_layers=2"] (one space per count to compare several)'}[
                fixed[0]],
        )
    own = {
        k: [getattr(base.plan, k)]
        for k in PlanChoices.model_fields
        if k not in given and k != "schedule"
    }
    if "interleaved" in (given.get("schedule") or ()) and "virtual_stages" not in given:
        # (the interleaved schedule's v)
        own["virtual_stages"] = [1, 2] if "1f1b" in given["schedule"] else [2]
    try:
        return PlanChoices(**own, **given)
    except ValidationError as e:
        raise validation_error(e, src, "plans", PlanChoices) from e


def _network_parts(data: dict[str, Any], src: str) -> dict[str, Any]:
    """The space's network entries of ``data``: ``network`` (one fixed :class:`Network`) and/or
    ``levels`` with ``min_dims`` and ``max_dims`` (a shape space; CodesignSpace refuses both).

    Raises:
        InputError: a shape-space key beside ``[network]`` without levels, a bad network, or
            ``levels`` that are not tables (or a bad level or dims entry).
    """
    parts: dict[str, Any] = {}
    if "network" in data:
        for k in ("dims", "switch_only_at_top"):
            # (with levels too: CodesignSpace says to keep one of them)
            if k in data and "levels" not in data:
                raise InputError(
                    src,
                    k,
                    "belongs to a shape space, and [network] gives one fixed network",
                    f"remove {k} or [network]",
                )
        net = data["network"]
        try:
            parts["network"] = Network(**net) if isinstance(net, dict) else Network(dims=net)
        except (ValidationError, TypeError) as e:
            if isinstance(e, ValidationError):
                raise validation_error(e, src, "network") from e
            raise InputError(
                src, "network", "expected a table with dims", "write [network] dims = [...]"
            ) from e
    if "levels" in data:
        levels = data["levels"]
        if not isinstance(levels, list) or not all(isinstance(lv, dict) for lv in levels):
            raise InputError(
                src, "levels", "expected one or more [[levels]] tables", "see spaces/gpt3-4096.toml"
            )
        parts["levels"] = [level_entry(lv, i, src) for i, lv in enumerate(levels)]
        parts["min_dims"], parts["max_dims"] = dims_entry(data.get("dims", [2, 4]), src)
    return parts


def _check_set_npus(sets: list[str], npus: Any, src: str) -> None:
    """Refuse a ``set`` entry for the plan's NPU count that contradicts the space's own ``npus``
    (the space's ``npus`` replaces the model file's plan's; a different one in ``set`` of the same
    file was silently lost)."""
    for item in sets:
        key, _, value = item.partition("=")
        if override_path(key.strip(), f"{src}: set") != ["plan", "npus"]:
            continue
        given = parse_override_value(value.strip())
        sizes = npus if isinstance(npus, list) else [npus]
        if (
            all(isinstance(n, int) and not isinstance(n, bool) for n in sizes)
            and given not in sizes
        ):
            raise InputError(
                f"{src}: set",
                item,
                f"contradicts npus = {npus} of the same file (the space's npus is "
                "the cluster every plan runs on, and replaces the model file's)",
                f"remove '{item}' from set, or make the two the same",
            )


def _path(src: Path, value: Any) -> Path:
    if not isinstance(value, str):
        raise InputError(
            src, "model", f"expected a file name, got {value!r}", "give the model file's path"
        )
    p = Path(value)
    return p if p.is_absolute() else src.parent / p


def write_instance_file(
    path: str | Path, document: dict[str, Any], comment: list[str] = ()
) -> Path:
    """Write an instance file (TOML, :func:`hieropt.io.instance.load_instance` reads it) from
    ``document`` (no None values), after ``comment`` lines (``# ...``), atomically
    (:func:`hieropt.io.files.write_atomic`).

    Raises:
        InputError: the file cannot be written (naming it).
    """
    import tomli_w

    from .files import write_atomic

    path = Path(path)
    text = "".join(f"# {line}\n" for line in comment) + tomli_w.dumps(document)
    try:
        write_atomic(path, text)  # (recorded as this run's: hieropt.io.files.written)
    except OSError as e:
        raise InputError(
            path, None, f"cannot be written: {e.strerror}", "name a file in a folder you can write"
        ) from None
    return path


__all__ = ["load_codesign", "result_space", "write_instance_file"]
