"""ASTRA-sim 2.0 analytical network YAML (research/peers.md §4.4): write a solution's bandwidths, read them back.

The file has exactly four keys, lists of one entry per dimension: ``topology`` (``Ring``, ``FullyConnected``,
``Switch``; case-sensitive), ``npus_count`` (ints > 1), ``bandwidth`` (GB/s per unidirectional link, > 0) and
``latency`` (ns per link, >= 0).

Conventions differ from hieropt's, and every conversion is explicit (:mod:`hieropt.units`):

- hieropt: B_d in GB/s **per NPU** on dimension d, 1 GB = 1e9 bytes;
- ASTRA-sim 2.0 analytical backend: GB/s **per link**, 1 GB = 2^30 bytes (its docs, input-format/bandwidth.md);
- links per NPU (LIBRA's cost model and design notes §1): Ring 2 (one each way, B/2 each), FullyConnected p - 1
  (B/(p - 1) each), Switch 1 (B).

So ``bandwidth[d] = B_d / links_d * 1e9 / 2^30`` and, reading back, ``B_d = bandwidth[d] * links_d * 2^30 / 1e9``.
Files written here say ``latency: 0`` unless latencies are given.

This is the physical link count. To make ASTRA-sim's collective *algorithms* reproduce hieropt's time model (its
ring algorithm sends one way round, ``direct`` sends to all peers at once), ``hieropt export`` uses the simulator
conventions of :mod:`hieropt.io.astrasim_network` instead (Ring: one link of B; direct: B / (p - 1); latency per
hop).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import InputError
from ..spec import Block, Instance, Network
from ..units import gbps_binary_to_decimal, gbps_decimal_to_binary
from .common import read_yaml_mapping, validation_error

KEYS = ("topology", "npus_count", "bandwidth", "latency")
"""The four keys of the analytical network YAML, in the order written."""


def links_per_npu(block: str, npus: int) -> int:
    """Unidirectional links of one NPU on a dimension: Ring 2, FullyConnected ``npus - 1``, Switch 1."""
    if block == "Ring":
        return 2
    if block == "FullyConnected":
        return npus - 1
    if block == "Switch":
        return 1
    raise ValueError(f"unknown building block {block!r}")


def per_link_gib(block: str, npus: int, bw_gbps: float) -> float:
    """Per-NPU GB/s (1 GB = 1e9 B) -> ASTRA-sim per-link GB/s (1 GB = 2^30 B)."""
    return gbps_decimal_to_binary(bw_gbps / links_per_npu(block, npus))


def per_npu_gbps(block: str, npus: int, link_gib: float) -> float:
    """ASTRA-sim per-link GB/s (1 GB = 2^30 B) -> per-NPU GB/s (1 GB = 1e9 B); inverse of :func:`per_link_gib`."""
    return gbps_binary_to_decimal(link_gib) * links_per_npu(block, npus)


class AnalyticalNetwork(BaseModel):
    """An ASTRA-sim 2.0 analytical network file, as its four lists; ``bandwidth`` in its own units (GB/s per link,
    1 GB = 2^30 bytes), ``latency`` in ns per link. :attr:`bw_gbps` gives hieropt's per-NPU GB/s."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    topology: tuple[Block, ...] = Field(min_length=1)
    npus_count: tuple[int, ...]
    bandwidth: tuple[float, ...]
    latency: tuple[float, ...]

    @model_validator(mode="after")
    def _lists_agree(self) -> AnalyticalNetwork:
        D = len(self.topology)
        for key in KEYS[1:]:
            n = len(getattr(self, key))
            if n != D:
                raise ValueError(f"{key}: has {n} entries but topology has {D}; fix: give one entry per dimension")
        for d, p in enumerate(self.npus_count):
            if p < 2:
                raise ValueError(f"npus_count[{d}]: {p} NPUs; fix: use a number > 1")
        for d, b in enumerate(self.bandwidth):
            if not math.isfinite(b) or b <= 0:
                raise ValueError(f"bandwidth[{d}]: {b} GB/s; fix: use a finite number > 0")
        for d, a in enumerate(self.latency):
            if not math.isfinite(a) or a < 0:
                raise ValueError(f"latency[{d}]: {a} ns; fix: use a finite number >= 0")
        return self

    @property
    def bw_gbps(self) -> tuple[float, ...]:
        """Per-NPU bandwidth of every dimension in hieropt's unit: GB/s per NPU, 1 GB = 1e9 bytes."""
        return tuple(per_npu_gbps(b, p, x) for b, p, x in zip(self.topology, self.npus_count, self.bandwidth,
                                                               strict=True))


def _network(where: Instance | Network) -> Network:
    return where.network if isinstance(where, Instance) else where


def to_analytical(network: Instance | Network, bw_gbps: Sequence[float],
                  latency_ns: Sequence[float] | None = None) -> AnalyticalNetwork:
    """The analytical network of ``network`` with per-NPU bandwidths ``bw_gbps`` (GB/s, 1 GB = 1e9 bytes).

    Raises:
        InputError: ``bw_gbps`` or ``latency_ns`` has the wrong length, or a bandwidth is not > 0 (ASTRA-sim needs a
            positive bandwidth on every dimension, also one that carries no traffic).
    """
    net = _network(network)
    D = net.n_dims
    bw = [float(b) for b in bw_gbps]
    lat = [0.0] * D if latency_ns is None else [float(a) for a in latency_ns]
    for what, values in (("bandwidth", bw), ("latency", lat)):
        if len(values) != D:
            raise InputError("ASTRA-sim export", what, f"{len(values)} values for {D} dimensions",
                             "give one value per dimension")
    for d, b in enumerate(bw):
        if not math.isfinite(b) or b <= 0:
            raise InputError("ASTRA-sim export", f"bw[{d}]", f"{b:g} GB/s per NPU: ASTRA-sim needs a bandwidth > 0 "
                             "on every dimension", f"bound dimension {d} from below (e.g. bounds = [{{dim = {d}, "
                             "lower_gbps = 1}]) and solve again")
    try:
        return AnalyticalNetwork(
            topology=tuple(dim.block for dim in net.dims),
            npus_count=tuple(dim.npus for dim in net.dims),
            bandwidth=tuple(per_link_gib(dim.block, dim.npus, b) for dim, b in zip(net.dims, bw, strict=True)),
            latency=tuple(lat),
        )
    except ValidationError as e:
        raise validation_error(e, "ASTRA-sim export") from e


def _flow(values: Sequence[object]) -> str:
    return "[ " + ", ".join(str(v) for v in values) + " ]"


def format_network_yml(network: Instance | Network, bw_gbps: Sequence[float],
                       latency_ns: Sequence[float] | None = None, title: str | None = None) -> str:
    """The analytical network YAML text (four keys, a comment block giving the conversion per dimension).

    Bandwidths are written with full precision (``repr``), so reading back gives ``bw_gbps`` to ~1e-16.
    """
    net = _network(network)
    an = to_analytical(net, bw_gbps, latency_ns)
    if title is None and isinstance(network, Instance):
        title = f"instance '{network.name}'"
    lines = [
        "# ASTRA-sim 2.0 analytical network configuration, written by hieropt"
        + (f" for {title}" if title else "") + ".",
        "# Bandwidth: hieropt's values are GB/s per NPU per dimension with 1 GB = 1e9 bytes; ASTRA-sim's analytical",
        "# backend reads GB/s per unidirectional link with 1 GB = 2^30 bytes. Links per NPU: Ring 2, FullyConnected",
        "# p - 1, Switch 1. So  bandwidth[d] = B_d / links_d * 1e9 / 2^30  (and back: B_d = bandwidth[d] * links_d",
        "# * 2^30 / 1e9).",
    ]
    for d, (dim, b, link) in enumerate(zip(net.dims, bw_gbps, an.bandwidth, strict=True)):
        k = links_per_npu(dim.block, dim.npus)
        lines.append(f"#   dim {d}: {dim.block}, {dim.npus} NPUs: {float(b):.6g} GB/s per NPU / {k} link"
                     f"{'s' if k != 1 else ''} = {float(b) / k:.6g} GB/s (1e9) = {link:.6g} GB/s (2^30) per link")
    if latency_ns is None:
        lines.append("# Latency: 0 ns on every dimension: hieropt's model, like LIBRA's, has no link latency; put in "
                     "real")
        lines.append("# per-link latencies (ns) to simulate them.")
    else:
        lines.append("# Latency: ns per link, as given.")
    lines += [
        f"topology: {_flow(an.topology)}",
        f"npus_count: {_flow(an.npus_count)}",
        f"bandwidth: {_flow(repr(x) for x in an.bandwidth)}  # GB/s per link (1 GB = 2^30 bytes)",
        f"latency: {_flow(repr(x) for x in an.latency)}  # ns",
    ]
    return "\n".join(lines) + "\n"


def write_network_yml(instance: Instance | Network, bw_gbps: Sequence[float], path: str | Path,
                      latency_ns: Sequence[float] | None = None) -> AnalyticalNetwork:
    """Write the ASTRA-sim 2.0 analytical network YAML of ``instance``'s network with per-NPU bandwidths ``bw_gbps``
    (GB/s per NPU, 1 GB = 1e9 bytes; e.g. a :class:`hieropt.Solution`'s ``bw_gbps``). Latency 0 ns unless
    ``latency_ns`` (ns per link, one per dimension) is given.

    Returns:
        the :class:`AnalyticalNetwork` written (per-link bandwidths in ASTRA-sim's unit).

    Raises:
        InputError: wrong number of values, a bandwidth not > 0, or the file cannot be written.
    """
    path = Path(path)
    text = format_network_yml(instance, bw_gbps, latency_ns)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise InputError(path, None, f"cannot write the network file: {e}",
                         "check the folder exists and is writable") from e
    return to_analytical(instance, bw_gbps, latency_ns)


def read_network_yml(path: str | Path) -> AnalyticalNetwork:
    """Read an ASTRA-sim 2.0 analytical network YAML; ``.bw_gbps`` of the result is hieropt's per-NPU GB/s.

    Raises:
        InputError: missing file, bad YAML, a key missing or unknown, lists of different lengths, a topology other
            than Ring / FullyConnected / Switch, a count <= 1, a bandwidth <= 0, a negative latency.
    """
    path = Path(path)
    data = read_yaml_mapping(path, "ASTRA-sim network")
    for key in data:
        if key not in KEYS:
            raise InputError(path, str(key), "unknown key", f"use exactly {', '.join(KEYS)}")
    for key in KEYS:
        if key not in data:
            raise InputError(path, key, "missing", f"give {key} as a list with one entry per dimension")
        if not isinstance(data[key], list):
            raise InputError(path, key, f"expected a list, got {data[key]!r}", f"write e.g. {key}: [ ... ]")
    try:
        return AnalyticalNetwork(**data)
    except ValidationError as e:
        raise validation_error(e, path) from e
