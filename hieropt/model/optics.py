"""Cables and transceivers per link level of a fat tree, and a fabric's bill with cost and power.

Each link level (0: NIC to leaf, l: tier l to tier l + 1) has a length; its links take the cheapest
part that reaches it ($ per link, then W): a cable (both ends; ``ports`` links per cable for a
splitter) or a transceiver at each end (``ports`` switch ports per module, e.g. 2 for a twin-port
OSFP), counted as ceil(links / ports) per end.

Pure (stdlib only): invalid arguments raise ValueError with a ``"problem; fix: ..."`` message.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from .fabric import SwitchFabric

__all__ = ["Optic", "LinkLevel", "FabricLine", "link_levels", "fabric_lines"]


@dataclass(frozen=True)
class Optic:
    """A transceiver or cable, for :func:`link_levels`.

    Attributes:
        name: part name.
        reach_m: longest link it serves, m.
        usd: price per module or cable, $.
        watts: power per module or cable, W.
        ports: ports one module serves (twin-port OSFP: 2), or links one cable serves (splitter: >
            1).
        kind: ``"transceiver"`` (one per link end) or ``"cable"`` (both ends).
        fits: ``"switch"``, ``"nic"`` or ``"both"``: which end a transceiver plugs into.
        gbps: the port speed it serves, GB/s per direction (None: any speed).
    """

    name: str
    reach_m: float
    usd: float
    watts: float = 0.0
    ports: int = 1
    kind: str = "transceiver"
    fits: str = "both"
    gbps: float | None = None

    def serves(self, link_gbps: float | None) -> bool:
        """True when the part works at links of ``link_gbps`` GB/s (None: the speed is not known,
        any part)."""
        return (
            self.gbps is None or link_gbps is None or abs(self.gbps - link_gbps) <= 1e-9 * link_gbps
        )


@dataclass(frozen=True)
class LinkLevel:
    """The links of one level and the parts chosen for them: ``parts`` are (optic, quantity)
    pairs."""

    level: int
    links: int
    length_m: float
    parts: tuple[tuple[Optic, int], ...]

    @property
    def usd(self) -> float:
        """Cost of the level's parts, $."""
        return sum(o.usd * q for o, q in self.parts)

    @property
    def watts(self) -> float:
        """Power of the level's parts, W."""
        return sum(o.watts * q for o, q in self.parts)


def _level_parts(level: int, links: int, length_m: float, optics: Sequence[Optic],
                 link_gbps: float | None) -> LinkLevel:
    reach = [o for o in optics if o.reach_m >= length_m * (1 - 1e-12) and o.serves(link_gbps)]
    lower_end = "nic" if level == 0 else "switch"
    cands: list[tuple[tuple[float, float, str], tuple[tuple[Optic, int], ...]]] = []
    for o in reach:
        if o.kind == "cable":
            cands.append(
                ((o.usd / o.ports, o.watts / o.ports, o.name), ((o, math.ceil(links / o.ports)),))
            )
    lows = [o for o in reach if o.kind == "transceiver" and o.fits in (lower_end, "both")]
    ups = [o for o in reach if o.kind == "transceiver" and o.fits in ("switch", "both")]
    for a, b in itertools.product(lows, ups):
        key = (
            a.usd / a.ports + b.usd / b.ports,
            a.watts / a.ports + b.watts / b.ports,
            a.name + "|" + b.name,
        )
        qa, qb = math.ceil(links / a.ports), math.ceil(links / b.ports)
        cands.append((key, ((a, qa + qb),) if a == b else ((a, qa), (b, qb))))
    if not cands:
        speed = "" if link_gbps is None else f" at {link_gbps:g} GB/s"
        raise ValueError(
            f"link level {level} "
            f"({'NIC to leaf' if level == 0 else f'tier {level} to {level + 1}'}, "
            f"{length_m:g} m{speed}): no cable or transceiver pair reaches it; fix: add an "
            "optic with "
            f"reach_m >= {length_m:g}{' for that port speed' if speed else ''}"
        )
    return LinkLevel(level, links, length_m, min(cands, key=lambda c: c[0])[1])


def link_levels(
    fabric: SwitchFabric,
    lengths_m: Sequence[float],
    optics: Sequence[Optic],
    nic_link_gbps: float | None = None,
    switch_port_gbps: float | None = None,
) -> tuple[LinkLevel, ...]:
    """The cheapest cables or transceivers for every link level of ``fabric``.

    Args:
        fabric: the dimension's fabrics.
        lengths_m: link length per level, m (level 0: NIC to leaf); at least one entry per level.
        optics: the candidate parts.
        nic_link_gbps: speed of a NIC-to-leaf link, GB/s (None: any part); switch_port_gbps: speed
            of the links between switches (None: any part). Parts with a stated speed serve only
            links of that speed.

    Raises:
        ValueError: fewer lengths than levels, or a level no part reaches.
    """
    levels = fabric.links
    if len(lengths_m) < len(levels):
        raise ValueError(
            f"the fabric has {len(levels)} link levels but link_length_m gives "
            f"{len(lengths_m)}; fix: "
            "give one length per level (NIC to leaf, leaf to spine, spine to core, ...)"
        )
    return tuple(
        _level_parts(
            i, k, float(lengths_m[i]), optics, nic_link_gbps if i == 0 else switch_port_gbps
        )
        for i, k in enumerate(levels)
    )


@dataclass(frozen=True)
class FabricLine:
    """One line of a fabric's bill: ``quantity`` x ``item`` (``kind`` nic | switch | optic) at
    ``unit_usd`` $ and ``unit_watts`` W each."""

    kind: str
    item: str
    quantity: int
    unit_usd: float
    unit_watts: float

    @property
    def usd(self) -> float:
        """quantity x unit price, $."""
        return self.quantity * self.unit_usd

    @property
    def watts(self) -> float:
        """quantity x unit power, W."""
        return self.quantity * self.unit_watts


def fabric_lines(
    fabric: SwitchFabric,
    switch: tuple[str, float, float],
    levels: Sequence[LinkLevel] = (),
    nics: tuple[str, int, float, float] | None = None,
) -> tuple[FabricLine, ...]:
    """Bill of a dimension's fabric: NICs (``(name, quantity, usd, watts)``), switches (``(name,
    usd, watts)`` each) and the optics of ``levels``, one line per part (quantities of a part on
    several levels added up)."""
    out: list[FabricLine] = []
    if nics is not None:
        out.append(FabricLine("nic", nics[0], nics[1], nics[2], nics[3]))
    out.append(FabricLine("switch", switch[0], fabric.switches, switch[1], switch[2]))
    optic_qty: dict[Optic, int] = {}
    for lv in levels:
        for o, q in lv.parts:
            optic_qty[o] = optic_qty.get(o, 0) + q
    out += [FabricLine("optic", o.name, q, o.usd, o.watts) for o, q in optic_qty.items()]
    return tuple(out)
