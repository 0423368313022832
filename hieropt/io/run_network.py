"""The network of a measured run (a runs file's ``network`` column): a LIBRA network YAML, a
network TOML file or an instance file, read once per runs file (:func:`read_network_file`), and
sized to each run's NPU count (:func:`sized`). See :mod:`hieropt.io.runs` for the format."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .common import read_toml, unknown_key_error, validation_error

if TYPE_CHECKING:
    from ..spec import CostModel, Network

NETWORK_KEYS = (
    "description",
    "name",
    "network",
    "chunks",
    "collectives_in_flight",
)
"""Keys of a network TOML file (one without a workload). Not ``dimension_mode``: each group of an
LLM plan runs its collectives by the plan's algorithm (``collective_algorithms``, default
``sequential``), so it would have no effect on a run; refused, pointing at that column."""
SETTINGS = ("dimension_mode", "chunks", "collectives_in_flight")
"""Instance settings a network or instance file passes on to each run's instance."""


@dataclass(frozen=True)
class NetworkFile:
    """A network as a runs file names it.

    Attributes:
        path: the file.
        network: its dimensions (before sizing to a run).
        settings: instance fields it sets (``chunks``, ``collectives_in_flight``; an instance
            file's ``dimension_mode`` too, which, as in ``hieropt evaluate``, no group of an LLM
            plan runs by).
        cost: an instance file's cost model, or None (runs are priced at 1 $ per GB/s: cost plays no
            part here).
        placement: an instance file's named groups (group -> size on each dimension), or None:
            lowest-first.
    """

    path: Path
    network: Network
    settings: dict[str, Any]
    cost: CostModel | None = None
    placement: dict[str, tuple[int, ...]] | None = None


def read_network_file(path: Path) -> NetworkFile:
    """A runs file's network: LIBRA YAML, a network TOML or an instance file (module docstring).

    Raises:
        InputError: a missing or bad file, naming it and the field; a network TOML file setting
            ``dimension_mode`` (no effect on an LLM run: :data:`NETWORK_KEYS`).
    """
    if path.suffix.lower() in (".yml", ".yaml"):
        from .libra import read_network

        return NetworkFile(path=path, network=read_network(path), settings={})
    data = read_toml(path, "network")
    if "workload" in data or "workloads" in data:
        from .instance import load_instance

        inst = load_instance(path)
        groups = dict(inst.mapping.groups) if "mapping" in data else None
        return NetworkFile(
            path=path,
            network=inst.network,
            cost=inst.cost,
            placement=groups or None,
            settings={k: data[k] for k in SETTINGS if k in data},
        )
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
    try:
        network = Network(**value) if isinstance(value, dict) else Network(dims=value)
    except (ValidationError, TypeError) as e:
        if isinstance(e, ValidationError):
            raise validation_error(e, path, "network") from e
        raise InputError(
            path, "network", "expected a table with dims", "write [network] dims = [...]"
        ) from e
    return NetworkFile(
        path=path, network=network, settings={k: data[k] for k in SETTINGS if k in data}
    )


def sized_network(net: NetworkFile, npus: int, where: str) -> Network:
    """The network of ``net`` holding ``npus`` NPUs: the dimensions, innermost first, up to the
    first whose NPUs with the inner ones' reach ``npus``, that one resized to hold them; the outer
    ones, which a run within the inner ones does not use and which carry none of its traffic,
    dropped. A file of 8 NPUs per node, 4 nodes per leaf and leaves holds a run of 8 NPUs on
    dimension 0 alone, one of 16 on dimension 0 and 2 nodes of dimension 1, one of 64 on all
    three (2 leaves); a run of more NPUs than the file grows its outermost dimension. A file that
    maps the groups holds only runs of its own size.

    Raises:
        InputError: the kept inner dimensions' NPU count does not divide ``npus`` (naming it), a
            run of one NPU, or a mapped file of another size.
    """
    dims = net.network.dims
    if net.network.npus_total == npus:
        return net.network
    kept = len(dims)
    while kept > 1 and npus <= math.prod(d.npus for d in dims[: kept - 1]):
        kept -= 1
    inner = math.prod(d.npus for d in dims[: kept - 1])
    if net.placement is not None or npus % inner or npus // inner < 2:
        sizes = " x ".join(str(d.npus) for d in dims)
        raise InputError(
            where,
            "network",
            f"the run's tp x pp x dp = {npus} NPUs do not fit the {sizes} network of "
            f"{net.path}" + (" (which maps the groups)" if net.placement is not None else ""),
            f"use a network whose inner dimensions ({inner} NPUs) divide the run's NPUs, "
            "or check the plan's degrees",
        )
    last = dims[kept - 1]
    if last.npus != npus // inner:
        last = last.model_copy(update={"npus": npus // inner})
    return type(net.network)(dims=(*dims[: kept - 1], last))


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
    "sized",
    "sized_network",
    "NETWORK_KEYS",
    "SETTINGS",
]
