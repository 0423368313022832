"""Parts catalog for integer provisioning (issue 4, design.md §2.4 and §3 "Discrete provisioning").

A catalog lists, per cost class of the network, the parts a buyer can choose from:

- ``links`` (Ring and FullyConnected dimensions): a link port of ``gbps`` GB/s **per direction**; ``n`` ports per NPU
  give that NPU ``n * gbps`` GB/s on the dimension (hieropt's per-NPU bandwidth B_d, as in LIBRA). The price is per
  port (one per NPU per unit: its share of the cable included); the cluster has ``N * n`` of them (N = all NPUs).
- ``nics`` (Switch dimensions): a NIC of ``gbps`` GB/s per direction; each NIC takes one switch port (or
  ``ceil(gbps / port_gbps)`` ports when the switch states its port speed and the NIC is faster).
- ``switches`` (Switch dimensions): a switch of ``radix`` ports, priced per switch (``usd_per_switch``) or per port
  (``usd_per_port``: a switch costs ``radix * usd_per_port``).

Bandwidth is given either as ``gbps`` (GB/s per direction, 1 GB = 1e9 bytes) or as ``gbit_per_s`` (Gb/s, the way
vendors rate NICs and ports), converted explicitly with :func:`hieropt.units.gbit_to_gbyte` (divide by 8). A part is
fitted either per NPU (``max_per_npu``) or per node (``max_per_node`` with ``node_npus``: ``n`` parts shared by a node
of ``s`` NPUs give each NPU ``n * gbps / s`` GB/s and the cluster ``N / s * n`` parts).

**Switch counting.** A Switch dimension of p NPUs splits the N NPUs into G = N / p switch groups (LIBRA's building
blocks; each group is its own fabric). Its NICs need P = (NICs in the cluster) x (ports per NIC) switch ports, i.e.
``ceil(P / G)`` per group. A group is built as a non-blocking folded Clos (fat tree) of switches of radix R:

- one tier, **one switch**, when the group needs at most R ports;
- otherwise the fewest tiers L >= 2 with ports <= 2 (R/2)^L (two tiers, leaf-spine: up to R^2/2 ports): each of the
  L - 1 lower tiers has ``ceil(2 ports / R)`` switches (half their ports down, half up), the top tier
  ``ceil(ports / R)`` (all ports down).

So a group of 128 NIC ports on radix-64 switches has 4 leaves and 2 spines. Cables between tiers, rack space and
wiring granularity are not priced. The cluster has G times the switches of one group.

This module is pure (no solver, no files): :func:`dimension_options` enumerates every way to provision one dimension
with its bandwidth, cost and bill-of-materials lines; the MILP (:mod:`hieropt.formulation.milp`) picks one per
dimension.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import Field, field_validator, model_validator

from ..spec import Network
from ..spec.base import Frozen
from ..units import gbit_to_gbyte

__all__ = ["Part", "Switch", "PartClass", "Catalog", "BomLine", "Option", "fabric", "dimension_options",
           "LINK_BLOCKS"]

LINK_BLOCKS = ("Ring", "FullyConnected")
"""Building blocks provisioned with link ports; Switch dimensions use NICs and switches."""



def _positive_bw(v: float | None) -> float | None:
    if v is not None and not (math.isfinite(v) and v > 0):
        raise ValueError(f"bandwidth per unit is {v:g}; fix: give a bandwidth > 0 (gbps in GB/s per direction, "
                         "or gbit_per_s in Gb/s)")
    return v


class Part(Frozen):
    """A link port or NIC: bandwidth per unit (GB/s per direction), price per unit ($), how many fit.

    Exactly one of ``gbps`` (GB/s) and ``gbit_per_s`` (Gb/s, converted by dividing by 8); exactly one of
    ``max_per_npu`` and ``max_per_node`` (the latter with ``node_npus``, the NPUs sharing a node's parts).
    """

    name: str = Field(min_length=1)
    gbps: float | None = None
    gbit_per_s: float | None = None
    usd: float = Field(ge=0, allow_inf_nan=False)
    max_per_npu: int | None = Field(default=None, ge=1)
    max_per_node: int | None = Field(default=None, ge=1)
    node_npus: int | None = Field(default=None, ge=1)
    note: str = ""

    @field_validator("gbps", "gbit_per_s")
    @classmethod
    def _bw(cls, v: float | None) -> float | None:
        return _positive_bw(v)

    @model_validator(mode="after")
    def _one_of_each(self) -> Part:
        if (self.gbps is None) == (self.gbit_per_s is None):
            raise ValueError(f"part '{self.name}' needs exactly one bandwidth; fix: give gbps (GB/s per direction) "
                             "or gbit_per_s (Gb/s), not both")
        if self.max_per_npu is not None and (self.max_per_node is not None or self.node_npus is not None):
            raise ValueError(f"part '{self.name}' is fitted both per NPU and per node; fix: give max_per_npu, or "
                             "max_per_node with node_npus")
        if self.max_per_npu is None and (self.max_per_node is None or self.node_npus is None):
            raise ValueError(f"part '{self.name}' has no unit limit; fix: give max_per_npu, or max_per_node with "
                             "node_npus")
        return self

    @property
    def unit_gbps(self) -> float:
        """Bandwidth of one unit, GB/s per direction (``gbit_per_s`` converted with :func:`gbit_to_gbyte`)."""
        return self.gbps if self.gbps is not None else gbit_to_gbyte(self.gbit_per_s)

    @property
    def share(self) -> int:
        """NPUs sharing one set of these parts: 1 (per NPU) or ``node_npus``."""
        return self.node_npus if self.node_npus is not None else 1

    @property
    def max_units(self) -> int:
        """Most units per NPU (or per node, when fitted per node)."""
        return self.max_per_npu if self.max_per_npu is not None else self.max_per_node

    @property
    def per(self) -> str:
        """``"NPU"`` or ``"node"``: what ``max_units`` counts per."""
        return "NPU" if self.max_per_npu is not None else "node"

    def bw_gbps(self, units: int) -> float:
        """Per-NPU bandwidth (GB/s) of ``units`` parts per NPU (or per node)."""
        return units * self.unit_gbps / self.share


class Switch(Frozen):
    """A switch: ``radix`` ports, priced per switch or per port; optional port speed (``port_gbps`` GB/s or
    ``port_gbit_per_s`` Gb/s) so that a NIC faster than a port takes ``ceil(nic / port)`` ports."""

    name: str = Field(min_length=1)
    radix: int = Field(ge=2)
    usd_per_switch: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    usd_per_port: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    port_gbps: float | None = None
    port_gbit_per_s: float | None = None
    note: str = ""

    @field_validator("port_gbps", "port_gbit_per_s")
    @classmethod
    def _bw(cls, v: float | None) -> float | None:
        return _positive_bw(v)

    @model_validator(mode="after")
    def _one_price(self) -> Switch:
        if (self.usd_per_switch is None) == (self.usd_per_port is None):
            raise ValueError(f"switch '{self.name}' needs exactly one price; fix: give usd_per_switch or "
                             "usd_per_port")
        if self.port_gbps is not None and self.port_gbit_per_s is not None:
            raise ValueError(f"switch '{self.name}' has two port speeds; fix: give port_gbps or port_gbit_per_s")
        return self

    @property
    def price_usd(self) -> float:
        """Price of one switch, $ (``radix * usd_per_port`` when priced per port)."""
        return self.usd_per_switch if self.usd_per_switch is not None else self.radix * self.usd_per_port

    @property
    def port_speed_gbps(self) -> float | None:
        """Port speed in GB/s per direction, if stated."""
        if self.port_gbps is not None:
            return self.port_gbps
        return gbit_to_gbyte(self.port_gbit_per_s) if self.port_gbit_per_s is not None else None

    def ports_per_nic(self, nic_gbps: float) -> int:
        """Switch ports one NIC of ``nic_gbps`` GB/s occupies (1 unless the NIC is faster than a port)."""
        q = self.port_speed_gbps
        return 1 if q is None else max(1, math.ceil(nic_gbps / q - 1e-9))


class PartClass(Frozen):
    """The parts of one cost class: ``links`` for Ring / FullyConnected dimensions, ``nics`` and ``switches`` for
    Switch dimensions."""

    links: tuple[Part, ...] = ()
    nics: tuple[Part, ...] = ()
    switches: tuple[Switch, ...] = ()


class Catalog(Frozen):
    """A parts catalog: cost class name -> :class:`PartClass`. Prices in $, bandwidths in GB/s per direction."""

    name: str = "catalog"
    description: str = ""
    classes: dict[str, PartClass] = Field(min_length=1)


def fabric(ports: int, radix: int) -> tuple[int, int]:
    """Switches and tiers of a non-blocking folded-Clos fabric with ``ports`` end ports of radix-``radix`` switches.

    One switch (one tier) when ``ports <= radix``; else the fewest tiers L >= 2 with ``ports <= 2 (radix//2)^L``,
    with ``ceil(2 ports / radix)`` switches on each of the L - 1 lower tiers and ``ceil(ports / radix)`` on top.
    """
    if ports <= 0:
        return 0, 0
    if ports <= radix:
        return 1, 1
    half = radix // 2
    tiers = 2
    while ports > 2 * half**tiers:
        tiers += 1
    return (tiers - 1) * math.ceil(2 * ports / radix) + math.ceil(ports / radix), tiers


@dataclass(frozen=True)
class BomLine:
    """One bill-of-materials line: ``quantity`` x ``item`` at ``unit_usd`` each, for dimension ``dim``."""

    dim: int
    kind: str  # "link", "nic" or "switch"
    item: str
    quantity: int
    unit_usd: float

    @property
    def cost_usd(self) -> float:
        """quantity x unit price, $."""
        return self.quantity * self.unit_usd


@dataclass(frozen=True)
class Option:
    """One way to provision dimension ``dim``: ``units`` of ``part`` per NPU (or per node), plus switches.

    Attributes:
        dim: dimension index.
        kind: ``"link"`` or ``"nic"``.
        part: the link port or NIC.
        units: parts per NPU (``part.per == "NPU"``) or per node of ``part.share`` NPUs.
        bw_gbps: per-NPU bandwidth it gives, GB/s per direction.
        units_total: parts in the whole cluster.
        switch: the switch model (Switch dimensions), else None.
        switches: switches in the whole cluster (0 without a switch).
        tiers: fabric tiers of each switch group (0 without a switch).
        groups: switch groups (N / p) of a Switch dimension (0 otherwise).
        ports_per_group: switch ports each group's NICs need.
        bom: bill-of-materials lines; ``cost_usd`` their sum.
    """

    dim: int
    kind: str
    part: Part
    units: int
    bw_gbps: float
    units_total: int
    switch: Switch | None
    switches: int
    tiers: int
    groups: int
    ports_per_group: int
    bom: tuple[BomLine, ...]

    @property
    def cost_usd(self) -> float:
        """Cost of this option for the whole cluster, $."""
        return sum(line.cost_usd for line in self.bom)

    @property
    def units_per_npu(self) -> float:
        """Parts per NPU (a fraction when parts are shared by a node)."""
        return self.units / self.part.share

    @property
    def line(self) -> tuple[str, str | None]:
        """(part name, switch name): the product line; options of one line differ only in the unit count."""
        return self.part.name, self.switch.name if self.switch is not None else None

    def label(self) -> str:
        """Short human-readable description, e.g. ``2 x nic-400g per NPU + 256 x sw-64 (2 tiers)``."""
        s = f"{self.units} x {self.part.name} per {self.part.per}"
        if self.part.per == "node":
            s += f" of {self.part.share}"
        if self.switch is not None:
            s += f" + {self.switches:,} x {self.switch.name} ({self.tiers} tier{'s' if self.tiers > 1 else ''})"
        return s


def dimension_options(catalog: Catalog, network: Network, d: int) -> list[Option]:
    """Every way to provision dimension ``d`` from ``catalog`` (each part, 1 .. max units, each switch).

    Assumes the catalog has been checked against the network (:func:`hieropt.io.catalog.check_catalog`): the class
    exists, has the parts the building block needs, and node sizes divide the NPU count.
    """
    dim = network.dims[d]
    pc = catalog.classes[dim.cost_class]
    N = network.npus_total
    out: list[Option] = []
    if dim.block in LINK_BLOCKS:
        for part in pc.links:
            for n in range(1, part.max_units + 1):
                total = N // part.share * n
                bom = (BomLine(d, "link", part.name, total, part.usd),)
                out.append(Option(d, "link", part, n, part.bw_gbps(n), total, None, 0, 0, 0, 0, bom))
        return out
    groups = N // dim.npus
    for part in pc.nics:
        for n in range(1, part.max_units + 1):
            total = N // part.share * n
            for sw in pc.switches:
                ports = math.ceil(total * sw.ports_per_nic(part.unit_gbps) / groups)
                per_group, tiers = fabric(ports, sw.radix)
                bom = (BomLine(d, "nic", part.name, total, part.usd),
                       BomLine(d, "switch", sw.name, per_group * groups, sw.price_usd))
                out.append(Option(d, "nic", part, n, part.bw_gbps(n), total, sw, per_group * groups, tiers, groups,
                                  ports, bom))
    return out
