"""ASTRA-sim 2.0 analytical network YAML: write a solution's bandwidths, read them back.

The file has exactly four keys, lists of one entry per dimension: ``topology`` (``Ring``,
``FullyConnected``, ``Switch``; case-sensitive), ``npus_count`` (ints > 1), ``bandwidth`` (GB/s per
unidirectional link, > 0) and ``latency`` (ns per link, >= 0).

Conventions differ from hieropt's, and every conversion is explicit (:mod:`hieropt.units`):

- hieropt: B_d in GB/s **per NPU** on dimension d, 1 GB = 1e9 bytes;
- ASTRA-sim 2.0 analytical backend: GB/s **per link**, 1 GB = 2^30 bytes (its docs,
  input-format/bandwidth.md);
- links per NPU (LIBRA's cost model, as its network YAML and cost-model files state them): Ring
  2 (one each way, B/2 each), FullyConnected p - 1 (B/(p - 1) each), Switch 1 (B).

So ``bandwidth[d] = B_d / links_d * 1e9 / 2^30`` and, reading back, ``B_d = bandwidth[d] * links_d *
2^30 / 1e9``. Files written here say ``latency: 0`` unless latencies are given.

This is the physical link count. To make ASTRA-sim's collective *algorithms* reproduce hieropt's
time model (its ring algorithm sends one way round, ``direct`` sends to all peers at once),
``hieropt export`` uses the simulator conventions of :mod:`hieropt.io.astrasim_network` instead
(Ring: one link of B; direct: B / (p - 1); latency per hop; a dimension that groups span in part
split into several simulator dimensions). :func:`read_network_yml` recognises such a file by its
comment header (:data:`hieropt.io.astrasim_network.EXPORT_MARK`) and reads it by those conventions:
:attr:`AnalyticalNetwork.dims` gives back hieropt's dimensions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import InputError
from ..spec import Block, Instance, Network
from ..units import gbps_binary_to_decimal, gbps_decimal_to_binary
from .astrasim_network import SimDim, exported_dims
from .common import read_text, read_yaml_mapping, unknown_key_error, validation_error
from .files import write_atomic

KEYS = ("topology", "npus_count", "bandwidth", "latency")
"""The four keys of the analytical network YAML, in the order written."""


def links_per_npu(block: str, npus: int) -> int:
    """Unidirectional links of one NPU on a dimension: Ring 2, FullyConnected ``npus - 1``, Switch
    1."""
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
    """ASTRA-sim per-link GB/s (1 GB = 2^30 B) -> per-NPU GB/s (1 GB = 1e9 B); inverse of
    :func:`per_link_gib`."""
    return gbps_binary_to_decimal(link_gib) * links_per_npu(block, npus)


SAME_REL = 1e-9
"""Relative tolerance within which the simulator dimensions of one hieropt dimension in an exported
file must agree on its per-NPU bandwidth and per-step latency (they are written from one value, with
full precision)."""


@dataclass(frozen=True)
class NetworkDim:
    """One hieropt dimension read from an analytical network file.

    Attributes:
        block: ``Ring``, ``FullyConnected`` or ``Switch``.
        npus: NPUs along it (the product of its simulator dimensions in an exported file).
        bw_gbps: per-NPU bandwidth, GB/s with 1 GB = 1e9 bytes (hieropt's unit).
        latency_ns: ns per step of its collective algorithm in an exported file; the file's ns per
            link otherwise.
        algorithm: hieropt's collective algorithm (``ring``, ``direct``, ``halving_doubling``) in an
            exported file, ``None`` in a plain analytical file (which does not say).
    """

    block: str
    npus: int
    bw_gbps: float
    latency_ns: float
    algorithm: str | None


class AnalyticalNetwork(BaseModel):
    """An ASTRA-sim 2.0 analytical network file, as its four lists; ``bandwidth`` in its own units
    (GB/s per link, 1 GB = 2^30 bytes), ``latency`` in ns per link (per hop). :attr:`bw_gbps` gives
    hieropt's per-NPU GB/s of each entry, :attr:`dims` hieropt's dimensions.

    ``parent`` and ``algorithm`` are set (one per entry) for a file written by ``hieropt export``
    (the simulator conventions of :mod:`hieropt.io.astrasim_network`): the hieropt dimension of each
    simulator dimension and its collective algorithm, which fix its links (``direct``: p - 1 links
    of B / (p - 1); ``ring`` and ``halving_doubling``: one link of B). Otherwise (``None``) links
    are counted physically (:func:`links_per_npu`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    topology: tuple[Block, ...] = Field(min_length=1)
    npus_count: tuple[int, ...]
    bandwidth: tuple[float, ...]
    latency: tuple[float, ...]
    parent: tuple[int, ...] | None = None
    algorithm: tuple[Literal["ring", "direct", "halving_doubling"], ...] | None = None
    share: tuple[float, ...] | None = None
    """An exported file's share of B each entry's links carry (a named group's part of a dimension
    priced by its links: :attr:`hieropt.io.astrasim_network.SimDim.share`); None: 1 each."""

    @model_validator(mode="after")
    def _lists_agree(self) -> AnalyticalNetwork:
        D = len(self.topology)
        for key in KEYS[1:]:
            n = len(getattr(self, key))
            if n != D:
                raise ValueError(
                    f"{key}: has {n} entries but topology has {D}; fix: give one entry per "
                    "dimension"
                )
        for d, p in enumerate(self.npus_count):
            if p < 2:
                raise ValueError(f"npus_count[{d}]: {p} NPUs; fix: use a number > 1")
        for d, b in enumerate(self.bandwidth):
            if not math.isfinite(b) or b <= 0:
                raise ValueError(f"bandwidth[{d}]: {b} GB/s; fix: use a finite number > 0")
        for d, a in enumerate(self.latency):
            if not math.isfinite(a) or a < 0:
                raise ValueError(f"latency[{d}]: {a} ns; fix: use a finite number >= 0")
        if (self.parent is None) != (self.algorithm is None):
            raise ValueError("parent: parent and algorithm go together; fix: give both or neither")
        if self.parent is not None:
            for key in ("parent", "algorithm"):
                if len(getattr(self, key)) != D:
                    raise ValueError(
                        f"{key}: has {len(getattr(self, key))} entries but topology has "
                        f"{D}; fix: give "
                        "one entry per dimension"
                    )
            for d, (a, b) in enumerate(zip(self.parent, self.parent[1:], strict=False)):
                if self.parent[0] != 0 or b not in (a, a + 1):
                    raise ValueError(
                        f"parent[{d + 1}]: hieropt dimensions {list(self.parent)} are not "
                        "0, 1, ... in "
                        "order; fix: export the file again"
                    )
        return self

    def _sim_dim(self, i: int) -> SimDim:
        """Entry ``i`` of an exported file as the simulator dimension it was written from (bandwidth
        and latency converted back to hieropt's per-NPU GB/s and per-step ns)."""
        block, p, algorithm = self.topology[i], self.npus_count[i], self.algorithm[i]
        share = self.share[i] if self.share is not None else 1.0
        link = gbps_binary_to_decimal(self.bandwidth[i])
        bw = (link * (p - 1) if algorithm == "direct" else link) / share
        hops = SimDim(self.parent[i], block, p, bw, algorithm, 0.0).hops_per_step
        return SimDim(self.parent[i], block, p, bw, algorithm, self.latency[i] * hops, share)

    @property
    def bw_gbps(self) -> tuple[float, ...]:
        """Per-NPU bandwidth of every entry (simulator dimension) in hieropt's unit: GB/s per NPU, 1
        GB = 1e9 bytes; by the export's conventions when ``algorithm`` is set, else by physical link
        counting."""
        if self.algorithm is not None:
            return tuple(self._sim_dim(i).bw_gbps for i in range(len(self.topology)))
        return tuple(
            per_npu_gbps(b, p, x)
            for b, p, x in zip(self.topology, self.npus_count, self.bandwidth, strict=True)
        )

    @property
    def dims(self) -> tuple[NetworkDim, ...]:
        """hieropt's dimensions: one per entry in a plain file; in an exported file the simulator
        dimensions of each hieropt dimension merged back (NPUs multiplied; bandwidth and per-step
        latency shared)."""
        if self.parent is None:
            return tuple(NetworkDim(b, p, bw, a, None) for b, p, bw, a in zip(
                self.topology, self.npus_count, self.bw_gbps, self.latency, strict=True))
        out = []
        for d in range(self.parent[-1] + 1):
            sims = [self._sim_dim(i) for i, q in enumerate(self.parent) if q == d]
            s0 = sims[0]
            out.append(
                NetworkDim(
                    s0.block,
                    math.prod(s.npus for s in sims),
                    s0.bw_gbps,
                    s0.latency_ns,
                    s0.algorithm,
                )
            )
        return tuple(out)


def _network(where: Instance | Network) -> Network:
    return where.network if isinstance(where, Instance) else where


def to_analytical(network: Instance | Network, bw_gbps: Sequence[float],
                  latency_ns: Sequence[float] | None = None) -> AnalyticalNetwork:
    """The analytical network of ``network`` with per-NPU bandwidths ``bw_gbps`` (GB/s, 1 GB = 1e9
    bytes).

    Raises:
        InputError: ``bw_gbps`` or ``latency_ns`` has the wrong length, or a bandwidth is not > 0
            (ASTRA-sim needs a positive bandwidth on every dimension, also one that carries no
            traffic).
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
            raise InputError(
                "ASTRA-sim export",
                f"bw[{d}]",
                f"{b:g} GB/s per NPU: ASTRA-sim needs a bandwidth > 0 on every dimension",
                f"bound dimension {d} from below (e.g. bounds = [{{dim = {d}, "
                "lower_gbps = 1}]) and solve again",
            )
    try:
        return AnalyticalNetwork(
            topology=tuple(dim.block for dim in net.dims),
            npus_count=tuple(dim.npus for dim in net.dims),
            bandwidth=tuple(
                per_link_gib(dim.block, dim.npus, b) for dim, b in zip(net.dims, bw, strict=True)
            ),
            latency=tuple(lat),
        )
    except ValidationError as e:
        raise validation_error(e, "ASTRA-sim export") from e


def _flow(values: Sequence[object]) -> str:
    return "[ " + ", ".join(str(v) for v in values) + " ]"


def format_network_yml(network: Instance | Network, bw_gbps: Sequence[float],
                       latency_ns: Sequence[float] | None = None, title: str | None = None) -> str:
    """The analytical network YAML text (four keys, a comment block giving the conversion per
    dimension).

    Bandwidths are written with full precision (``repr``), so reading back gives ``bw_gbps`` to
    ~1e-16.
    """
    net = _network(network)
    an = to_analytical(net, bw_gbps, latency_ns)
    if title is None and isinstance(network, Instance):
        title = f"instance '{network.name}'"
    lines = [
        "# ASTRA-sim 2.0 analytical network configuration, written by hieropt"
        + (f" for {title}" if title else "")
        + ".",
        "# Bandwidth: hieropt's values are GB/s per NPU per dimension with 1 GB = 1e9 "
        "bytes; ASTRA-sim's analytical",
        "# backend reads GB/s per unidirectional link with 1 GB = 2^30 bytes. Links per "
        "NPU: Ring 2, FullyConnected",
        "# p - 1, Switch 1. So  bandwidth[d] = B_d / links_d * 1e9 / 2^30  (and back: B_d = "
        "bandwidth[d] * links_d",
        "# * 2^30 / 1e9).",
    ]
    for d, (dim, b, link) in enumerate(zip(net.dims, bw_gbps, an.bandwidth, strict=True)):
        k = links_per_npu(dim.block, dim.npus)
        lines.append(
            f"#   dim {d}: {dim.block}, {dim.npus} NPUs: {float(b):.6g} GB/s per NPU / {k} link"
            f"{'s' if k != 1 else ''} = {float(b) / k:.6g} GB/s (1e9) = {link:.6g} GB/s "
            "(2^30) per link"
        )
    if latency_ns is None:
        lines.append(
            "# Latency: 0 ns on every dimension: hieropt's model, like LIBRA's, has no link "
            "latency; put in "
            "real"
        )
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
    """Write the ASTRA-sim 2.0 analytical network YAML of ``instance``'s network with per-NPU
    bandwidths ``bw_gbps`` (GB/s per NPU, 1 GB = 1e9 bytes; e.g. a :class:`hieropt.Solution`'s
    ``bw_gbps``). Latency 0 ns unless ``latency_ns`` (ns per link, one per dimension) is given.

    Returns:
        the :class:`AnalyticalNetwork` written (per-link bandwidths in ASTRA-sim's unit).

    Raises:
        InputError: wrong number of values, a bandwidth not > 0, or the file cannot be written.
    """
    path = Path(path)
    text = format_network_yml(instance, bw_gbps, latency_ns)
    try:
        write_atomic(path, text)
    except OSError as e:
        raise InputError(path, None, f"cannot write the network file: {e.strerror or e}",
                         "check the folder exists and is writable") from e
    return to_analytical(instance, bw_gbps, latency_ns)


def _same(values: Sequence[float]) -> bool:
    return all(math.isclose(v, values[0], rel_tol=SAME_REL, abs_tol=0.0) for v in values)


def _export_conventions(path: Path, net: AnalyticalNetwork, text: str) -> AnalyticalNetwork:
    """``net`` with ``parent`` and ``algorithm`` from the comments of a file ``hieropt export``
    wrote, checked against its lists; ``net`` unchanged for a plain file."""
    fix = (
        "export the network again with 'hieropt export ... --astra-sim', or delete the "
        "hieropt comment header to "
        "read the file with physical link counting"
    )
    try:
        sims = exported_dims(text)
    except ValueError as e:
        raise InputError(path, "comments", f"hieropt export header: {e}", fix) from e
    if sims is None:
        return net
    if len(sims) != len(net.topology):
        raise InputError(
            path,
            "comments",
            f"the hieropt export header describes {len(sims)} simulator dimensions "
            f"but topology has {len(net.topology)}",
            fix,
        )
    for i, (_, _, block, npus, _) in enumerate(sims):
        if (block, npus) != (net.topology[i], net.npus_count[i]):
            raise InputError(
                path,
                f"topology[{i}]",
                f"{net.topology[i]} of {net.npus_count[i]} NPUs, but the hieropt "
                f"export header says {block} of {npus}",
                fix,
            )
    try:
        out = AnalyticalNetwork(
            **net.model_dump(exclude={"parent", "algorithm", "share"}),
            parent=tuple(s[0] for s in sims),
            algorithm=tuple(s[1] for s in sims),
            share=tuple(s[4] for s in sims),
        )
    except ValidationError as e:
        raise validation_error(e, path) from e
    for d in range(out.parent[-1] + 1):
        sims_d = [out._sim_dim(i) for i, q in enumerate(out.parent) if q == d]
        for what, values in (
            ("bandwidth", [s.bw_gbps for s in sims_d]),
            ("latency", [s.latency_ns for s in sims_d]),
        ):
            if not _same(values):
                first = out.parent.index(d)
                raise InputError(
                    path,
                    f"{what}[{first}]",
                    f"the simulator dimensions of hieropt dimension {d} differ "
                    f"in per-NPU {what} ({', '.join(f'{v:.6g}' for v in values)})",
                    fix,
                )
    return out


def read_network_yml(path: str | Path) -> AnalyticalNetwork:
    """Read an ASTRA-sim 2.0 analytical network YAML; ``.bw_gbps`` of the result is hieropt's
    per-NPU GB/s of each entry and ``.dims`` hieropt's dimensions.

    A file written by ``hieropt export ... --astra-sim`` (recognised by its comment header,
    :data:`hieropt.io.astrasim_network.EXPORT_MARK`) is read by the export's simulator conventions
    (Ring and halvingDoubling: one link of B; direct: p - 1 links of B / (p - 1); latency per hop;
    split dimensions merged back in ``.dims``), so it reads back to the network and bandwidths
    exported; any other file by physical link counting (Ring 2 links, FullyConnected p - 1, Switch
    1).

    Raises:
        InputError: missing file, bad YAML, a key missing or unknown, lists of different lengths, a
            topology other than Ring / FullyConnected / Switch, a count <= 1, a bandwidth <= 0, a
            negative latency; for an exported file, a comment header that does not match the lists
            or simulator dimensions of one hieropt dimension that disagree on its bandwidth or
            latency.
    """
    path = Path(path)
    data = read_yaml_mapping(path, "ASTRA-sim network")
    for key in data:
        if key not in KEYS:
            raise unknown_key_error(path, str(key), key, KEYS,
                                    otherwise=f"use exactly {', '.join(KEYS)}")
    for key in KEYS:
        if key not in data:
            raise InputError(
                path, key, "missing", f"give {key} as a list with one entry per dimension"
            )
        if not isinstance(data[key], list):
            raise InputError(
                path, key, f"expected a list, got {data[key]!r}", f"write e.g. {key}: [ ... ]"
            )
    try:
        net = AnalyticalNetwork(**data)
    except ValidationError as e:
        raise validation_error(e, path) from e
    return _export_conventions(path, net, read_text(path, "ASTRA-sim network"))
