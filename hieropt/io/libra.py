"""LIBRA input files (github.com/astra-sim/libra ``inputs/``): network, communicator and cost-model
YAML.

- network: ``Topology: [Ring, FullyConnected, Switch]``, ``NpusCount: [16, 8, 32]``,
  ``CostDimension: [InterPackage, InterNode, InterPod]`` (dimension 0 first).
- communicator: ``Forward``, ``InputGrad``, ``WeightGrad``: group size per dimension, -1 = not
  spanned.
- cost model: per cost class ``{Link, Switch, Nic}`` in $ per GB/s of per-NPU bandwidth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..spec import BLOCKS, CostClass, CostModel, Dimension, Mapping, Network
from ..spec.base import MAX_NPUS
from .common import (
    positive_number,
    read_yaml_mapping,
    short_repr,
    unknown_key_error,
    validation_error,
)

_BLOCK_NAMES = {b.lower(): b for b in BLOCKS}
_PHASE_KEYS = (("Forward", "forward"), ("InputGrad", "input_grad"), ("WeightGrad", "weight_grad"))
_PRICE_KEYS = {
    "link": "link_usd_per_gbps",
    "switch": "switch_usd_per_gbps",
    "nic": "nic_usd_per_gbps",
}


def _list(data: dict[str, Any], key: str, source: str) -> list[Any]:
    if key not in data:
        raise InputError(source, key, "missing", f"add '{key}: [...]' with one entry per dimension")
    v = data[key]
    if not isinstance(v, list) or not v:
        raise InputError(
            source,
            key,
            f"expected a non-empty list, got {short_repr(v)}",
            f"write '{key}: [a, b, ...]'",
        )
    return v


def _check_keys(data: dict[str, Any], allowed: tuple[str, ...], source: str) -> None:
    for k in data:
        if k not in allowed:
            raise unknown_key_error(source, str(k), k, allowed,
                                    otherwise=f"use only {', '.join(allowed)}")


def read_network(path: str | Path) -> Network:
    """Read a LIBRA network YAML file into a :class:`Network`.

    Raises:
        InputError: missing file or key, lists of different lengths, unknown building block,
            dimension size < 2.
    """
    src = str(path)
    data = read_yaml_mapping(Path(path), "network", "LIBRA network")
    _check_keys(data, ("Topology", "NpusCount", "CostDimension"), src)
    topo, npus, classes = (_list(data, k, src) for k in ("Topology", "NpusCount", "CostDimension"))
    if not len(topo) == len(npus) == len(classes):
        raise InputError(
            src,
            "Topology/NpusCount/CostDimension",
            f"lists have different lengths ({len(topo)}, {len(npus)}, {len(classes)})",
            "give one entry per dimension in each list",
        )
    dims = []
    for d, (b, p, c) in enumerate(zip(topo, npus, classes, strict=True)):
        block = _BLOCK_NAMES.get(str(b).lower())
        if block is None:
            raise InputError(
                src,
                f"Topology[{d}]",
                f"unknown building block '{b}'",
                f"use one of {', '.join(BLOCKS)}",
            )
        if not isinstance(p, int) or isinstance(p, bool) or not 2 <= p <= MAX_NPUS:
            raise InputError(
                src,
                f"NpusCount[{d}]",
                f"dimension size {short_repr(p)} is not an integer from 2 to {MAX_NPUS:.0e}",
                "a dimension connects at least 2 NPUs; remove size-1 dimensions",
            )
        if c is None or isinstance(c, list | dict) or str(c) == "":
            raise InputError(
                src,
                f"CostDimension[{d}]",
                f"cost class {short_repr(c)} is not a name",
                "give the name of a cost class of the cost model, e.g. InterPod",
            )
        dims.append(Dimension(block=block, npus=p, cost_class=str(c)))
    try:
        return Network(dims=tuple(dims))
    except ValidationError as e:
        raise validation_error(e, src) from e


def parse_group(
    values: list[Any], field: str, source: str, network: Network | None
) -> tuple[int, ...]:
    """Convert one communicator list (-1 or 1: not spanned) into group sizes, checked against
    ``network``.

    Raises:
        InputError: a non-integer entry, 0 or a negative entry other than -1, a length different
            from the number of dimensions, or a group larger than its dimension.
    """
    out = []
    for d, v in enumerate(values):
        if not isinstance(v, int) or isinstance(v, bool) or v == 0 or v < -1:
            raise InputError(
                source,
                f"{field}[{d}]",
                f"group size {short_repr(v)} is invalid",
                "use an integer >= 1, or -1 (or 1) for a dimension the group does not span",
            )
        out.append(1 if v == -1 else v)
    if network is not None:
        if len(out) != network.n_dims:
            raise InputError(
                source,
                field,
                f"has {len(out)} entries but the network has {network.n_dims} dimensions",
                "give one group size per dimension",
            )
        for d, (p, dim) in enumerate(zip(out, network.dims, strict=True)):
            if p > dim.npus:
                raise InputError(
                    source,
                    f"{field}[{d}]",
                    f"group of {short_repr(p)} NPUs exceeds dimension {d}'s {dim.npus} NPUs",
                    f"use a group size between 1 and {dim.npus} (or -1)",
                )
            if dim.npus % p:
                raise InputError(
                    source,
                    f"{field}[{d}]",
                    f"a group of {p} NPUs does not divide dimension {d}'s "
                    f"{dim.npus} NPUs (the groups must tile the dimension)",
                    f"use a divisor of {dim.npus} (or -1)",
                )
    return tuple(out)


def read_communicator(path: str | Path, network: Network | None = None) -> Mapping:
    """Read a LIBRA communicator YAML file into a :class:`Mapping` (-1 becomes 1), checked against
    ``network``."""
    src = str(path)
    data = read_yaml_mapping(Path(path), "communicator")
    _check_keys(data, tuple(k for k, _ in _PHASE_KEYS), src)
    groups = {
        name: parse_group(_list(data, key, src), key, src, network) for key, name in _PHASE_KEYS
    }
    return Mapping(**groups)


def read_cost_model(path: str | Path) -> CostModel:
    """Read a LIBRA cost-model YAML file ($ per GB/s per cost class; keys Link, Switch, Nic,
    case-insensitive).

    Raises:
        InputError: missing file, a class that is not a mapping, an unknown part, a missing Link
            price, a price that is not a positive number, or one outside the plausible range
            (:func:`hieropt.io.cluster_units.check_cost_units`).
    """
    from .cluster_units import check_cost_units

    src = str(path)
    data = read_yaml_mapping(Path(path), "cost model")
    classes = {}
    for name, parts in data.items():
        if not isinstance(parts, dict):
            raise InputError(
                src, str(name), "expected a mapping of part prices", "write e.g. 'Link: 4.0'"
            )
        prices, given = {}, {}
        for part, price in parts.items():
            key = _PRICE_KEYS.get(str(part).lower())
            if key is None:
                raise InputError(
                    src, f"{name}.{part}", "unknown part", "use Link, Switch or Nic ($ per GB/s)"
                )
            # (the parts' names are case-insensitive: 'Link' and 'LINK' are one part)
            if key in given:
                raise InputError(
                    src,
                    f"{name}.{part}",
                    f"the same part as '{given[key]}' (part names are "
                    "case-insensitive): given twice",
                    "keep one price per part",
                )
            given[key] = part
            prices[key] = positive_number(
                price, src, f"{name}.{part}", "give the price in $ per GB/s, > 0"
            )
        if "link_usd_per_gbps" not in prices:
            raise InputError(
                src, f"{name}.Link", "missing", "every cost class needs a Link price ($ per GB/s)"
            )
        try:
            classes[str(name)] = CostClass(**prices)
        except ValidationError as e:
            raise validation_error(e, src, str(name)) from e
        check_cost_units({str(name): {str(given[k]): v for k, v in prices.items()}}, src)
    try:
        return CostModel(classes=classes)
    except ValidationError as e:
        raise validation_error(e, src) from e
