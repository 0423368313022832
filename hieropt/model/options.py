"""Every way to provision one dimension from a parts catalog: its bandwidth, bill of materials, cost
and power.

- **Ring / FullyConnected** dimensions: one option per link part and unit count n (1 .. its limit,
  in whole multiples of the peers a port can reach, :func:`hieropt.model.catalog.link_peers`: n =
  k x (n_d - 1) on a FullyConnected dimension of n_d NPUs, k x 2 on a Ring of 3 or more; per node
  of s NPUs, s times that, :func:`hieropt.model.catalog.unit_step`): n ports
  per NPU (or per node of s NPUs) give each NPU n x unit GB/s (/ s); the cluster has N x n (N / s
  x n) ports.
- **Switch** dimensions of p NPUs: one option per NIC part x unit count x switch model x fabric
  choice. The NICs need (NICs in the cluster) x (ports per NIC) switch ports (``ceil(NIC / port
  speed)`` each), ``ceil(ports / G)`` for each of the G = N / p groups; the fabric is built as
  :func:`hieropt.model.fabric.switch_fabric` says for the class's ``fabric`` table: each placement
  (``per_group`` by default: LIBRA's building blocks, one fat tree per group) x each combination of
  per-tier oversubscription choices (non-blocking by default), up to ``max_tiers``. The option's
  per-NPU bandwidth is the NICs' bandwidth times the fabric's bandwidth factor (1 when non-blocking
  or when a group sits under one leaf). With ``optics`` in the class, each link level takes the
  cheapest cable or transceivers that reach ``link_length_m`` at the link's speed
  (:func:`hieropt.model.optics.link_levels`).

Each option's bill of materials lists NICs (or link ports), switches and optics with unit price and
unit power (W, None when the catalog gives none); cost and power are their sums. Pure (no solver, no
files); assumes the catalog was checked against the network
(:func:`hieropt.io.catalog.check_catalog`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..spec import Network
from .catalog import LINK_BLOCKS, Catalog, Part, PartClass, Switch, link_peers, unit_step
from .fabric import SwitchFabric, design_fat_tree, switch_fabric
from .optics import link_levels

__all__ = ["BomLine", "Option", "dimension_options", "fabric", "link_notes"]


def fabric(ports: int, radix: int) -> tuple[int, int]:
    """(switches, tiers) of one non-blocking fat tree with ``ports`` endpoint ports
    (:mod:`hieropt.model.fabric`); (0, 0) without ports."""
    if ports <= 0:
        return 0, 0
    tree = design_fat_tree(ports, radix)
    return tree.switches, tree.n_tiers


@dataclass(frozen=True)
class BomLine:
    """One bill-of-materials line: ``quantity`` x ``item`` (kind link | nic | switch | optic) at
    ``unit_usd`` $ and ``unit_watts`` W each (None: the catalog gives no power), for dimension
    ``dim``."""

    dim: int
    kind: str
    item: str
    quantity: int
    unit_usd: float
    unit_watts: float | None = None

    @property
    def cost_usd(self) -> float:
        """quantity x unit price, $."""
        return self.quantity * self.unit_usd

    @property
    def watts(self) -> float | None:
        """quantity x unit power, W (None when unknown)."""
        return None if self.unit_watts is None else self.quantity * self.unit_watts


@dataclass(frozen=True)
class Option:
    """One way to provision dimension ``dim``: ``units`` of ``part`` per NPU (or per node), plus its
    fabric.

    Attributes:
        dim: dimension index.
        kind: ``"link"`` or ``"nic"``.
        part: the link port or NIC.
        units: parts per NPU (``part.per == "NPU"``) or per node of ``part.share`` NPUs.
        bw_gbps: per-NPU bandwidth it gives, GB/s per direction (NIC bandwidth x the fabric's
            bandwidth factor).
        units_total: parts in the whole cluster.
        switch: the switch model (Switch dimensions), else None.
        switches: switches in the whole cluster (0 without a switch).
        tiers: most fabric tiers (0 without a switch).
        groups: switch groups (N / p) of a Switch dimension (0 otherwise).
        ports_per_group: switch ports each group's NICs need.
        bom: bill-of-materials lines; ``cost_usd`` and ``power_w`` their sums.
        fabric: the dimension's fabrics (Switch dimensions), else None.
        placement: ``per_group`` | ``multi_plane`` | ``rail_optimized`` ("" for links).
        oversubscription: the per-tier ratios asked for (leaves first; () = non-blocking).
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
    fabric: SwitchFabric | None = None
    placement: str = ""
    oversubscription: tuple[float, ...] = ()

    @property
    def cost_usd(self) -> float:
        """Cost of this option for the whole cluster, $."""
        return sum(line.cost_usd for line in self.bom)

    @property
    def power_w(self) -> float | None:
        """Power of this option for the whole cluster, W (None when a line has no power figure)."""
        watts = [line.watts for line in self.bom]
        return None if any(w is None for w in watts) else float(sum(watts))

    @property
    def units_per_npu(self) -> float:
        """Parts per NPU (a fraction when parts are shared by a node)."""
        return self.units / self.part.share

    @property
    def bandwidth_factor(self) -> float:
        """Share of the NICs' bandwidth the fabric delivers (1: non-blocking)."""
        return 1.0 if self.fabric is None else self.fabric.bandwidth_factor

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready option (GB/s per NPU per direction, $, W; ``fabric``: each tree's
        copies, endpoints, rails, switches per tier, port splits and links per level, or None), as
        ``hieropt provision --json`` writes each dimension's design."""
        o = self
        return {
            "dim": o.dim,
            "kind": o.kind,
            "part": o.part.name,
            "unit_gbps": o.part.unit_gbps,
            "units": o.units,
            "units_per": o.part.per,
            "node_npus": o.part.share,
            "units_per_npu": o.units_per_npu,
            "units_total": o.units_total,
            "bw_gbps": o.bw_gbps,
            "switch": None if o.switch is None else o.switch.name,
            "switches_total": o.switches,
            "switch_tiers": o.tiers,
            "switch_groups": o.groups,
            "ports_per_group": o.ports_per_group,
            "cost_usd": o.cost_usd,
            "power_w": o.power_w,
            "placement": o.placement or None,
            "oversubscription": list(o.oversubscription),
            "bandwidth_factor": o.bandwidth_factor,
            "fabric": None
            if o.fabric is None
            else [
                {
                    "copies": n,
                    "endpoints": tr.endpoints,
                    "rails": tr.rails,
                    "switches_per_tier": [x.switches for x in tr.tiers],
                    "port_splits": [list(sp) for sp in tr.splits],
                    "links_per_level": list(tr.links),
                }
                for tr, n in o.fabric.trees
            ],
        }

    @property
    def line(self) -> tuple:
        """(part, switch, placement, oversubscription): options of one product line differ only in
        the unit count."""
        return (
            self.part.name,
            self.switch.name if self.switch is not None else None,
            self.placement,
            self.oversubscription,
        )

    def label(self) -> str:
        """Short human-readable description, e.g. ``2 x nic-400g per NPU + 256 x sw-64 (2
        tiers)``."""
        s = f"{self.units} x {self.part.name} per {self.part.per}"
        if self.part.per == "node":
            s += f" of {self.part.share}"
        if self.switch is not None:
            s += (
                f" + {self.switches:,} x {self.switch.name} ({self.tiers} "
                f"tier{'s' if self.tiers > 1 else ''}"
            )
            if self.placement != "per_group":
                s += f", {self.placement.replace('_', '-')}"
            if any(r != 1 for r in self.oversubscription):
                s += ", " + "/".join(f"{r:g}:1" for r in self.oversubscription) + " oversubscribed"
            s += ")"
        return s


def _switch_options(pc: PartClass, network: Network, d: int,
                    within: tuple[float, float] = (0.0, math.inf)) -> list[Option]:
    dim = network.dims[d]
    N = network.npus_total
    groups = N // dim.npus
    spec = pc.fabric
    placements = spec.placement if spec is not None else ("per_group",)
    choices = spec.ratio_choices() if spec is not None else [()]
    max_tiers = spec.max_tiers if spec is not None else None
    optics = [o.to_optic() for o in pc.optics]
    # a fabric keeps between 1 / prod(ratios) and all of the NICs' bandwidth (every port split has
    # down / up in [1, ratio]): a unit count whose bandwidth cannot land ``within`` is not designed
    keeps = min(1.0 / math.prod(r) for r in choices)
    low, high = within
    out: list[Option] = []
    for part in pc.nics:
        for n in range(1, part.max_units + 1):
            nominal = part.bw_gbps(n)
            if nominal < low * (1 - 1e-9) or nominal * keeps > high * (1 + 1e-9):
                continue
            total = N // part.share * n
            for sw in pc.switches:
                per_nic = sw.ports_per_nic(part.unit_gbps)
                port_gbps = sw.port_speed_gbps
                link_gbps = (
                    part.unit_gbps / per_nic
                    if port_gbps is None
                    else min(port_gbps, part.unit_gbps)
                )
                for placement in placements:
                    for ratios in choices:
                        try:
                            fab = switch_fabric(
                                groups,
                                dim.npus,
                                total * per_nic,
                                sw.radix,
                                ratios,
                                placement,
                                max_tiers,
                            )
                            levels = (
                                link_levels(fab, spec.link_length_m, optics, link_gbps, port_gbps)
                                if optics
                                else ()
                            )
                        # this placement / ratio / tier limit cannot serve these NICs
                        except ValueError:
                            continue
                        bom = [BomLine(d, "nic", part.name, total, part.usd, part.watts),
                               BomLine(d, "switch", sw.name, fab.switches, sw.price_usd, sw.watts)]
                        qty: dict = {}
                        for lv in levels:
                            for o, q in lv.parts:
                                qty[o] = qty.get(o, 0) + q
                        bom += [
                            BomLine(d, "optic", o.name, q, o.usd, _optic_watts(pc, o.name))
                            for o, q in qty.items()
                        ]
                        out.append(
                            Option(
                                d,
                                "nic",
                                part,
                                n,
                                part.bw_gbps(n) * fab.bandwidth_factor,
                                total,
                                sw,
                                fab.switches,
                                fab.tiers,
                                groups,
                                fab.ports_per_group,
                                tuple(bom),
                                fab,
                                placement,
                                tuple(ratios),
                            )
                        )
    return out


def _optic_watts(pc: PartClass, name: str) -> float | None:
    return next(o.watts for o in pc.optics if o.name == name)


def link_notes(network: Network) -> list[str]:
    """One line per Ring / FullyConnected dimension whose link ports come in whole multiples of its
    peers (:func:`hieropt.model.catalog.link_peers` > 1), saying so."""
    out = []
    for d, dim in enumerate(network.dims):
        k = link_peers(dim.block, dim.npus) if dim.block in LINK_BLOCKS else 1
        if k > 1:
            peers = "peers" if dim.block == "FullyConnected" else "ring neighbours"
            out.append(f"dimension {d} ({dim.block} {dim.npus}): link ports are bought in "
                       f"multiples of {k} per NPU ({k} x s per node of s NPUs), one to each of "
                       f"its {k} {peers} "
                       "(a port is a point-to-point link to one peer)")
    return out


def dimension_options(catalog: Catalog, network: Network, d: int,
                      within: tuple[float, float] = (0.0, math.inf)) -> list[Option]:
    """Every way to provision dimension ``d`` from ``catalog`` (module docstring) whose per-NPU
    bandwidth may lie ``within`` (lower, upper) GB/s: the fat trees of the other unit counts are not
    designed (some options outside it may still be returned; none inside it is left out).

    Assumes the catalog has been checked against the network
    (:func:`hieropt.io.catalog.check_catalog`): the class exists, has the parts the building block
    needs, and node sizes divide the NPU count. A Switch dimension whose fabric choices can serve
    none of its NICs (e.g. ``max_tiers`` too low) has no options.
    """
    dim = network.dims[d]
    pc = catalog.classes[dim.cost_class]
    N = network.npus_total
    if dim.block not in LINK_BLOCKS:
        return _switch_options(pc, network, d, within)
    out: list[Option] = []
    for part in pc.links:
        step = unit_step(part, dim.block, dim.npus)  # (one port per NPU to each peer)
        for n in range(step, part.max_units + 1, step):
            total = N // part.share * n
            bom = (BomLine(d, "link", part.name, total, part.usd, part.watts),)
            out.append(Option(d, "link", part, n, part.bw_gbps(n), total, None, 0, 0, 0, 0, bom))
    return out

