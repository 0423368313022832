"""Parts catalog for integer provisioning (docs/how-to/provision.md).

A catalog lists, per cost class of the network, the parts a buyer can choose from:

- ``links`` (Ring and FullyConnected dimensions): a link port of ``gbps`` GB/s **per direction**;
  ``n`` ports per NPU give that NPU ``n * gbps`` GB/s on the dimension (hieropt's per-NPU bandwidth
  B_d, as in LIBRA). The price is per port (one per NPU per unit: its share of the cable included);
  the cluster has ``N
  * n`` of them (N = all NPUs). A port is a point-to-point link to one peer, so ``n`` is a whole
  multiple of the peers an NPU has on the dimension (:func:`link_peers`); a link part fitted per
  node of ``s`` NPUs comes in multiples of ``s`` x peers, one port per NPU to each peer
  (:func:`unit_step`).
- ``nics`` (Switch dimensions): a NIC of ``gbps`` GB/s per direction; each NIC takes one switch port
  (or ``ceil(gbps / port_gbps)`` ports when the switch states its port speed and the NIC is faster).
- ``switches`` (Switch dimensions): a switch of ``radix`` ports, priced per switch
  (``usd_per_switch``) or per port (``usd_per_port``: a switch costs ``radix * usd_per_port``).

Bandwidth is given either as ``gbps`` (GB/s per direction, 1 GB = 1e9 bytes) or as ``gbit_per_s``
(Gb/s, the way vendors rate NICs and ports), converted explicitly with
:func:`hieropt.units.gbit_to_gbyte` (divide by 8). A part is fitted either per NPU (``max_per_npu``)
or per node (``max_per_node`` with ``node_npus``: ``n`` parts shared by a node of ``s`` NPUs give
each NPU ``n * gbps / s`` GB/s and the cluster ``N / s * n`` parts).

**Power and sources** (:mod:`hieropt.model.parts`): every part may carry ``watts`` (W per unit) and
``source`` / ``watts_source`` (keys of the catalog's ``sources``); ``require_sources = true`` makes
a source mandatory for every price. **Fabrics**: a Switch class may list ``optics`` (transceivers
and cables by reach) and a ``fabric`` table (placement, oversubscription per tier, max tiers, link
lengths); switches need radix >= 4. How the fabric of a Switch dimension is counted is
:mod:`hieropt.model.fabric` (tiers, switches, links) and :mod:`hieropt.model.optics` (optics per
link level); :mod:`hieropt.model.options` turns a catalog into the options the MILP picks from.

This module is the schema only (pydantic, no solver, no files).
"""

from __future__ import annotations

import math

from pydantic import Field, field_validator, model_validator

from ..spec.base import Frozen
from ..units import gbit_rating_slip, gbit_to_gbyte
from .fabric import check_radix
from .parts import MAX_PART_USD, FabricSpec, OpticPart, Source, check_power, check_sources

__all__ = ["Part", "Switch", "PartClass", "Catalog", "LINK_BLOCKS", "link_peers", "unit_step"]

LINK_BLOCKS = ("Ring", "FullyConnected")
"""Building blocks provisioned with link ports; Switch dimensions use NICs and switches."""


def link_peers(block: str, npus: int) -> int:
    """The peers one NPU's point-to-point link ports reach on a dimension of ``npus`` NPUs built as
    ``block``, so the step of its unit counts: a link port goes to one peer, and the time model
    (docs/explanation/model.md; :func:`hieropt.model.algorithms.group_links`) gives each
    FullyConnected NPU one link to each of its n - 1 peers (B / (n - 1) each) and each Ring NPU one
    to each of its 2 neighbours (1 when n = 2). 1 for a Switch dimension (NICs, any count) and a
    dimension of one NPU."""
    if block == "FullyConnected":
        return max(npus - 1, 1)
    if block == "Ring":
        return 2 if npus > 2 else 1
    return 1


def unit_step(part: Part, block: str, npus: int) -> int:
    """The step of ``part``'s unit counts (per NPU, or per node when fitted per node) on a
    dimension of ``npus`` NPUs built as ``block``: each NPU's link ports are a whole multiple of
    its peers (:func:`link_peers`), so a link part fitted per node of s NPUs comes in multiples of
    s x peers (s ports to each peer, one per NPU). 1 for a NIC on a Switch dimension."""
    if block not in LINK_BLOCKS:
        return 1
    return link_peers(block, npus) * part.share


UNIT_BW_RANGE = (1e-9, 1e12)
"""Bandwidths a part may state per unit (GB/s or Gb/s): far beyond any real part either way, and
inside the range where 1 / bandwidth and bytes / bandwidth stay finite (a NIC of 1e-310 Gb/s made
every time overflow)."""


def _positive_bw(v: float | None) -> float | None:
    if v is not None and not (math.isfinite(v) and UNIT_BW_RANGE[0] <= v <= UNIT_BW_RANGE[1]):
        raise ValueError(
            f"bandwidth per unit is {v:g}; fix: give a bandwidth > 0, from {UNIT_BW_RANGE[0]:g} to "
            f"{UNIT_BW_RANGE[1]:g} (gbps in GB/s per direction, or gbit_per_s in Gb/s)"
        )
    return v


class Part(Frozen):
    """A link port or NIC: bandwidth per unit (GB/s per direction), price per unit ($), power per
    unit (W, optional), how many fit, and the keys of the sources of its price and power.

    Exactly one of ``gbps`` (GB/s) and ``gbit_per_s`` (Gb/s, converted by dividing by 8); exactly
    one of ``max_per_npu`` and ``max_per_node`` (the latter with ``node_npus``, the NPUs sharing a
    node's parts).
    """

    name: str = Field(min_length=1)
    gbps: float | None = None
    gbit_per_s: float | None = None
    usd: float = Field(ge=0, le=MAX_PART_USD, allow_inf_nan=False)
    max_per_npu: int | None = Field(default=None, ge=1)
    max_per_node: int | None = Field(default=None, ge=1)
    node_npus: int | None = Field(default=None, ge=1)
    watts: float | None = None
    source: str | None = None
    watts_source: str | None = None
    note: str = ""

    @field_validator("gbps", "gbit_per_s")
    @classmethod
    def _bw(cls, v: float | None) -> float | None:
        return _positive_bw(v)

    @field_validator("watts")
    @classmethod
    def _w(cls, v: float | None) -> float | None:
        return check_power(v)

    @model_validator(mode="after")
    def _one_of_each(self) -> Part:
        if (self.gbps is None) == (self.gbit_per_s is None):
            raise ValueError(
                f"part '{self.name}' needs exactly one bandwidth; fix: give gbps (GB/s per "
                "direction) "
                "or gbit_per_s (Gb/s), not both"
            )
        if self.max_per_npu is not None and (
            self.max_per_node is not None or self.node_npus is not None
        ):
            raise ValueError(
                f"part '{self.name}' is fitted both per NPU and per node; fix: give "
                "max_per_npu, or "
                "max_per_node with node_npus"
            )
        if self.max_per_npu is None and (self.max_per_node is None or self.node_npus is None):
            raise ValueError(
                f"part '{self.name}' has no unit limit; fix: give max_per_npu, or "
                "max_per_node with "
                "node_npus"
            )
        return self

    @property
    def unit_gbps(self) -> float:
        """Bandwidth of one unit, GB/s per direction (``gbit_per_s`` converted with
        :func:`gbit_to_gbyte`)."""
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
    """A switch: ``radix`` ports (>= 4), priced per switch or per port, power per switch (W,
    optional); optional port speed (``port_gbps`` GB/s or ``port_gbit_per_s`` Gb/s) so that a NIC
    faster than a port takes ``ceil(nic / port)`` ports."""

    name: str = Field(min_length=1)
    radix: int
    usd_per_switch: float | None = Field(default=None, ge=0, le=MAX_PART_USD, allow_inf_nan=False)
    usd_per_port: float | None = Field(default=None, ge=0, le=MAX_PART_USD, allow_inf_nan=False)
    port_gbps: float | None = None
    port_gbit_per_s: float | None = None
    watts: float | None = None
    source: str | None = None
    watts_source: str | None = None
    note: str = ""

    @field_validator("radix", mode="before")
    @classmethod
    def _radix(cls, v):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(
                f"radix {v!r} is not a whole number of ports; fix: give an integer radix >= 4"
            )
        return check_radix(v)

    @field_validator("port_gbps", "port_gbit_per_s")
    @classmethod
    def _bw(cls, v: float | None) -> float | None:
        return _positive_bw(v)

    @field_validator("watts")
    @classmethod
    def _w(cls, v: float | None) -> float | None:
        return check_power(v)

    @model_validator(mode="after")
    def _one_price(self) -> Switch:
        if (self.usd_per_switch is None) == (self.usd_per_port is None):
            raise ValueError(
                f"switch '{self.name}' needs exactly one price; fix: give usd_per_switch or "
                "usd_per_port"
            )
        if self.port_gbps is not None and self.port_gbit_per_s is not None:
            raise ValueError(
                f"switch '{self.name}' has two port speeds; fix: give port_gbps or port_gbit_per_s"
            )
        return self

    @property
    def price_usd(self) -> float:
        """Price of one switch, $ (``radix * usd_per_port`` when priced per port)."""
        return (
            self.usd_per_switch
            if self.usd_per_switch is not None
            else self.radix * self.usd_per_port
        )

    @property
    def port_speed_gbps(self) -> float | None:
        """Port speed in GB/s per direction, if stated."""
        if self.port_gbps is not None:
            return self.port_gbps
        return gbit_to_gbyte(self.port_gbit_per_s) if self.port_gbit_per_s is not None else None

    def ports_per_nic(self, nic_gbps: float) -> int:
        """Switch ports one NIC of ``nic_gbps`` GB/s occupies (1 unless the NIC is faster than a
        port)."""
        q = self.port_speed_gbps
        return 1 if q is None else max(1, math.ceil(nic_gbps / q - 1e-9))


class PartClass(Frozen):
    """The parts of one cost class: ``links`` for Ring / FullyConnected dimensions, ``nics``,
    ``switches``, ``optics`` and a ``fabric`` (how it is built; default: one non-blocking fat tree
    per group) for Switch dimensions."""

    links: tuple[Part, ...] = ()
    nics: tuple[Part, ...] = ()
    switches: tuple[Switch, ...] = ()
    optics: tuple[OpticPart, ...] = ()
    fabric: FabricSpec | None = None

    @model_validator(mode="after")
    def _nic_in_gbit(self) -> PartClass:
        # a NIC rated 800 Gb/s written as gbps = 800 would be a 6.4 Tb/s NIC; a link port alike
        for kind, parts in (("NIC", self.nics), ("link port", self.links)):
            for part in parts:
                slip = (gbit_rating_slip(part.gbps, "gbps", "gbit_per_s", kind) if part.gbps
                        else None)
                if slip is not None:
                    raise ValueError(f"{kind} '{part.name}': gbps = {slip[0]}; fix: {slip[1]}")
        return self


class Catalog(Frozen):
    """A parts catalog: cost class name -> :class:`PartClass`. Prices in $, power in W, bandwidths
    in GB/s per direction; ``sources`` by key; ``require_sources``: every price must name its
    source; ``check_units``: refuse a NIC and a switch port 300 x apart in $ or W as a unit slip
    (false for toy prices meant that way)."""

    name: str = "catalog"
    description: str = ""
    require_sources: bool = False
    check_units: bool = True
    """False: the NIC and switch-port $ and W are as meant, however far apart (toy prices); the
    unit-slip check of :func:`hieropt.io.cluster_units.check_catalog_units` is skipped."""
    sources: dict[str, Source] = Field(default_factory=dict)
    classes: dict[str, PartClass] = Field(min_length=1)

    @model_validator(mode="after")
    def _sources(self) -> Catalog:
        check_sources(self)
        return self

    def parts(self):
        """Every part as (class name, kind, index, part), kind in links | nics | switches |
        optics."""
        for cname, pc in self.classes.items():
            for kind in ("links", "nics", "switches", "optics"):
                for i, p in enumerate(getattr(pc, kind)):
                    yield cname, kind, i, p

    def missing_power(self) -> list[str]:
        """Fields of parts without a power figure (a power objective or budget needs none
        missing)."""
        return [
            f"classes.{c}.{k}[{i}] ('{p.name}').watts"
            for c, k, i, p in self.parts()
            if p.watts is None
        ]
