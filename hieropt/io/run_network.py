"""The network of a measured run (a runs file's ``network`` column): a LIBRA network YAML, a
network TOML file or an instance file, read once per runs file (:func:`read_network_file`), and
sized to each run's NPU count (:func:`sized`). See :mod:`hieropt.io.runs` for the format."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..units import plural
from .common import (
    check_network_table,
    check_settings,
    read_toml,
    unknown_key_error,
    validation_error,
)

if TYPE_CHECKING:
    from ..spec import CostModel, Network
    from ..workloads.llm.params import LLMParams

NETWORK_KEYS = (
    "description",
    "name",
    "network",
    "chunks",
    "collectives_in_flight",
    "group_bandwidth",
)
"""Keys of a network TOML file (one without a workload). Not ``dimension_mode``: each group of an
LLM plan runs its collectives by the plan's algorithm (``collective_algorithms``, default
``sequential``), so it would have no effect on a run; refused, pointing at that column."""
SETTINGS = ("dimension_mode", "chunks", "collectives_in_flight", "group_bandwidth")
"""Instance settings a network or instance file passes on to each run's instance."""


@dataclass(frozen=True)
class NetworkFile:
    """A network as a runs file names it.

    Attributes:
        path: the file.
        network: its dimensions (before sizing to a run).
        settings: instance fields it sets (``chunks``, ``collectives_in_flight``,
            ``group_bandwidth``: default ``links`` for the runs' LLM plans; an instance
            file's ``dimension_mode`` too, which, as in ``hieropt evaluate``, no group of an LLM
            plan runs by).
        cost: an instance file's cost model, or None (runs are priced at 1 $ per GB/s: cost plays no
            part here).
        placement: an instance file's named groups (group -> size on each of the file's
            dimensions), or None: lowest-first. Checked against each run's plan and sized to its
            network by :func:`run_placement` (the instance's own workload plays no part).
    """

    path: Path
    network: Network
    settings: dict[str, Any]
    cost: CostModel | None = None
    placement: dict[str, tuple[int, ...]] | None = None


TOP_LEVEL = ("chunks", "collectives_in_flight", "dimension_mode", "description", "name",
             "group_bandwidth")
"""Top-level keys of a network or instance file that a ``[network]`` table may be given by mistake
(a key written below ``[network]`` in TOML belongs to that table)."""


def read_network_file(path: Path) -> NetworkFile:
    """A runs file's network: LIBRA YAML, a network TOML or an instance file (module docstring;
    of an instance file its network, cost, settings and ``[mapping.groups]``, not its workload).

    Raises:
        InputError: a missing or bad file, naming it and the field; a network TOML file setting
            ``dimension_mode`` (no effect on an LLM run: :data:`NETWORK_KEYS`); a top-level key
            written inside ``[network]`` (:data:`TOP_LEVEL`); ``collectives_in_flight`` other
            than 1.
    """
    if path.suffix.lower() in (".yml", ".yaml"):
        from .libra import read_network

        return NetworkFile(path=path, network=read_network(path), settings={})
    data = read_toml(path, "network")
    if "workload" in data or "workloads" in data:
        return _instance_network(path, data)
    if "dimension_mode" in data:
        raise InputError(
            path,
            "dimension_mode",
            "has no effect on a run: each group of the LLM plan runs its collectives over its "
            "dimensions by the plan's algorithm (collective_algorithms; default sequential)",
            "remove it, and give the runs file a collective_algorithms column "
            '(e.g. {tp = "concurrent"}) for a group whose dimensions work concurrently',
        )
    for k in data:
        if k not in NETWORK_KEYS:
            raise unknown_key_error(
                path, k, k, NETWORK_KEYS,
                otherwise=f"use only {', '.join(NETWORK_KEYS)} (or give an instance file)",
            )
    if "network" not in data:
        raise InputError(
            path,
            "network",
            "missing",
            "add [network] dims = [{block = ..., npus = ..., cost_class = ...}, ...]",
        )
    from pydantic import ValidationError

    from ..spec import Network

    value = data["network"]
    check_network_table(path, value, TOP_LEVEL[:2] + TOP_LEVEL[3:])
    check_settings(path, data)
    try:
        network = Network(**value) if isinstance(value, dict) else Network(dims=value)
    except (ValidationError, TypeError) as e:
        if isinstance(e, ValidationError):
            raise missing_dimension_key(validation_error(e, path, "network")) from e
        raise InputError(
            path, "network", "expected a table with dims", "write [network] dims = [...]"
        ) from e
    return NetworkFile(
        path=path, network=network, settings={k: data[k] for k in SETTINGS if k in data}
    )


DIMENSION_KEYS = {
    "block": "the building block: one of {blocks}",
    "npus": "the NPUs along the dimension, 2 or more (8 for the GPUs of a node)",
    "cost_class": "a name for its parts, e.g. \"NVLink\" or \"InfiniBand\" (a runs file's "
    "network is not priced: any name)",
}
"""What each key every dimension of a network file needs gives (``dims = [{block, npus,
cost_class}, ...]``)."""


def missing_dimension_key(e: InputError) -> InputError:
    """``e`` with the fix naming what a missing dimension key (:data:`DIMENSION_KEYS`) takes and an
    example dimension, when it is one (``network.dims[0].cost_class: Field required``); else ``e``
    unchanged."""
    key = (e.field or "").rsplit(".", 1)[-1]
    if key not in DIMENSION_KEYS or "required" not in (e.problem or "").lower():
        return e
    from ..names import BLOCKS

    what = DIMENSION_KEYS[key].format(blocks=", ".join(BLOCKS))
    return InputError(
        e.source, e.field, "missing: every dimension needs block, npus and cost_class",
        f'add {key}, {what}: e.g. {{block = "Switch", npus = 8, cost_class = "NVLink"}}',
    )


def _instance_network(path: Path, data: dict[str, Any]) -> NetworkFile:
    """The network, cost, settings and ``[mapping.groups]`` of the instance file ``path`` (parsed
    ``data``), without its workload: the runs' plans are the rows'."""
    from .instance import INSTANCE_KEYS, cost_entry, network_entry

    src = str(path)
    for k in data:
        if k not in INSTANCE_KEYS:
            raise InputError(src, k, "unknown key", f"use only {', '.join(INSTANCE_KEYS)}")
    if "network" not in data:
        raise InputError(src, "network", "missing", "name the network file or inline it")
    check_network_table(path, data["network"], TOP_LEVEL)
    check_settings(path, data)
    network = network_entry(data["network"], path.parent, src)
    cost = cost_entry(data["cost"], path.parent, src) if "cost" in data else None
    return NetworkFile(
        path=path,
        network=network,
        cost=cost,
        placement=_mapping_groups(data.get("mapping"), network, src),
        settings={k: data[k] for k in SETTINGS if k in data},
    )


def _mapping_groups(value: Any, network: Network, src: str) -> dict[str, tuple[int, ...]] | None:
    """The named groups of an instance file's ``mapping`` entry (``[mapping.groups]``), each
    checked against the file's ``network``; None when it names none (the runs' groups placed
    lowest-first)."""
    if not isinstance(value, dict) or not value.get("groups"):
        return None
    from .libra import parse_group
    from .mapping_entry import PLAN_GROUPS

    groups = value["groups"]
    if not isinstance(groups, dict):
        raise InputError(
            src, "mapping.groups", "expected a table", "write [mapping.groups] tp = [4, 2] ..."
        )
    out = {}
    for name, g in groups.items():
        if name not in PLAN_GROUPS:
            raise InputError(
                src,
                f"mapping.groups.{name}",
                "unknown key: not a group of an LLM plan",
                f"use only {', '.join(PLAN_GROUPS)}",
            )
        if not isinstance(g, list):
            raise InputError(
                src, f"mapping.groups.{name}", "expected a list", "write e.g. [4, 2]"
            )
        out[name] = parse_group(g, f"mapping.groups.{name}", src, network)
    return out


def sized_network(
    net: NetworkFile, npus: int, where: str, domain: tuple[int, str] | None = None
) -> Network:
    """The network of ``net`` holding ``npus`` NPUs: the dimensions, innermost first, up to the
    first whose NPUs with the inner ones' reach ``npus``, that one resized to hold them; the outer
    ones, which a run within the inner ones does not use and which carry none of its traffic,
    dropped. A file of 8 NPUs per node, 4 nodes per leaf and leaves holds a run of 8 NPUs on
    dimension 0 alone, one of 16 on dimension 0 and 2 nodes of dimension 1, one of 64 on all
    three (2 leaves); a run of more NPUs than the file grows its outermost dimension. An instance
    file that maps the groups is sized the same way (its groups are checked against the run by
    :func:`run_placement`).

    A file of one dimension is grown only within the accelerator's scale-up domain (``domain``:
    its NPUs, ``scaleup_npus``, and where that figure comes from in words,
    :func:`hieropt.io.run_units.nic_limit`; None: unknown, grown to any size): its one dimension is
    then the NPUs' scale-up network (an 8-GPU NVLink switch), and a run of more NPUs than the
    domain holds needs a network beyond it, which the file does not describe.

    Raises:
        InputError: the kept inner dimensions' NPU count does not divide ``npus`` (naming it), a
            run of one NPU, or a one-dimension file grown beyond ``domain``.
    """
    dims = net.network.dims
    if net.network.npus_total == npus:
        return net.network
    if len(dims) == 1 and npus > dims[0].npus and domain is not None and npus > domain[0]:
        d, (domain, domain_source) = dims[0], domain
        raise InputError(
            where,
            "network",
            f"the run's {npus:,} NPUs do not fit {net.path}: its one dimension ({d.block}, "
            f"{d.npus} NPUs, {d.cost_class}) would grow to {npus:,} NPUs, beyond the "
            f"accelerator's scale-up domain of {domain} ({domain_source}), and a file of one "
            "dimension describes no network beyond it (only the outermost dimension of a file of "
            "two or more grows)",
            f"add the network beyond it as a second dimension, e.g. dims = [{{block = "
            f'"{d.block}", npus = {d.npus}, cost_class = "{d.cost_class}"}}, {{block = '
            f'"Switch", npus = {max(2, -(-npus // d.npus))}, cost_class = "InfiniBand"}}] '
            "(and its bandwidth in bw_gbps), or check the plan's degrees",
        )
    if npus < 2:
        raise InputError(
            where,
            "network",
            f"the run's tp x pp x dp = {npus} NPU uses no network",
            "give runs of 2 or more NPUs, or check the plan's degrees",
        )
    kept = len(dims)
    while kept > 1 and npus <= math.prod(d.npus for d in dims[: kept - 1]):
        kept -= 1
    inner = math.prod(d.npus for d in dims[: kept - 1])
    if npus % inner:
        sizes = " x ".join(str(d.npus) for d in dims)
        raise InputError(
            where,
            "network",
            f"the run's tp x pp x dp = {npus} NPUs do not fit the {sizes} network of "
            f"{net.path}: its inner dimensions' {inner} NPUs do not divide {npus}",
            f"use a network whose inner dimensions ({inner} NPUs) divide the run's NPUs, "
            "or check the plan's degrees",
        )
    last = dims[kept - 1]
    if last.npus != npus // inner:
        last = last.model_copy(update={"npus": npus // inner})
    return type(net.network)(dims=(*dims[: kept - 1], last))


def run_placement(
    net: NetworkFile, params: LLMParams, network: Network, where: str
) -> dict[str, tuple[int, ...]] | None:
    """The named groups of ``net`` (an instance file's ``[mapping.groups]``) for a run of plan
    ``params`` on ``network`` (``net`` sized to the run, :func:`sized_network`): each group of
    the plan (:func:`hieropt.model.groups.plan_groups`) as the file gives it (a group of one NPU
    it omits: 1 on every dimension), cut to the dimensions the run uses; None for a file that
    maps none (groups placed lowest-first).

    Raises:
        InputError: ``where: network``: a group whose NPUs are not the plan's degree, a group of
            the plan the file omits, or groups whose sizes on a dimension do not multiply to its
            NPUs in the run's network (a dimension the run does not use: 1), naming the file, the
            group and the fix.
    """
    if net.placement is None:
        return None
    from ..model.groups import plan_groups

    src, n_file = net.path, net.network.n_dims
    no_mapping = "or give a network file without [mapping.groups] (the groups placed lowest-first)"
    groups = {}
    for name, n in plan_groups(params):
        g = net.placement.get(name)
        if g is None and n > 1:
            raise InputError(
                where,
                "network",
                f"{src}: mapping.groups.{name}: missing, and the row's plan has {name} = {n}",
                f"add {name} to [mapping.groups] of {src} (its size on each dimension, "
                f"multiplying to {n}), {no_mapping}",
            )
        g = g or (1,) * n_file
        if math.prod(g) != n:
            raise InputError(
                where,
                "network",
                f"{src}: mapping.groups.{name}: {list(g)} has {plural(math.prod(g), 'NPU')} but "
                f"the row's plan has {name} = {n}",
                f"give the {name} group {n} NPUs in [mapping.groups] of {src} (its sizes on the "
                f"dimensions multiply to them), {no_mapping}",
            )
        groups[name] = g
    want = [d.npus for d in network.dims] + [1] * (n_file - network.n_dims)
    for d in range(n_file):
        got = math.prod(g[d] for g in groups.values())
        if got != want[d]:
            sizes = " x ".join(str(x.npus) for x in network.dims)
            file_sizes = " x ".join(str(x.npus) for x in net.network.dims)
            npus = params.plan.total_npus
            used = (
                f"the run's network ({sizes}: the file's {file_sizes} sized to its {npus} NPUs)"
                if sizes != file_sizes
                else f"the {sizes} network"
            )
            has = f"{want[d]} NPUs" if d < network.n_dims else "no NPUs the run uses"
            desc = " x ".join(f"{k} {g[d]}" for k, g in groups.items())
            raise InputError(
                where,
                "network",
                f"{src}: mapping.groups: the plan's groups take {desc} = {got} NPUs of dimension "
                f"{d}, which has {has} in {used}",
                f"give groups whose sizes on each dimension multiply to its NPUs in the run's "
                f"network ({sizes}"
                + (", 1 on the dimensions it does not use" if network.n_dims < n_file else "")
                + f"), {no_mapping}",
            )
    out = {k: v[: network.n_dims] for k, v in net.placement.items()}
    return out | {k: v[: network.n_dims] for k, v in groups.items()}


def sized(
    net: NetworkFile, npus: int, bw: tuple[float, ...], where: str
) -> tuple[Network, tuple[float, ...]]:
    """The network of ``net`` holding ``npus`` NPUs (:func:`sized_network`) and the bandwidths of
    the dimensions kept (``bw``: one per dimension of the file, or only those of the dimensions
    kept).

    Raises:
        InputError: as :func:`sized_network`.
    """
    network = sized_network(net, npus, where)
    return network, bw[: network.n_dims]


__all__ = [
    "NetworkFile",
    "read_network_file",
    "run_placement",
    "TOP_LEVEL",
    "sized",
    "sized_network",
    "NETWORK_KEYS",
    "SETTINGS",
]
