"""Plausibility of the ``[cluster]`` figures' and the parts catalogs' units: a figure that looks
like the wrong unit (kW for W, $k for $, $M per MW for $ per MW, cents for $) is refused with the
conversion, as :mod:`hieropt.io.run_units` refuses a runs file's Gb/s and seconds.

Each bound is far from any real part, so that a correct figure is never refused, and a figure of
0 (free, bundled, or none) is always accepted. The figures behind the bounds:

- an accelerator draws 70-1,400 W (an inference card about 70 W; H100 SXM 700 W, B200 1,000 W,
  GB200 1,200 W: the NVIDIA datasheets) and costs about $17,500-$47,400 (``catalogs/npus.toml``),
  so a price above $150,000 (three times the dearest) is refused: one that is a plausible price
  when divided by 8 is an 8-GPU server's (a DGX H100 about $270,000, SemiAnalysis 2023: $33,750
  per GPU);
- a server without its accelerators draws 3.3-4.6 kW (DGX A100 6.5 kW and DGX H100 10.2 kW system
  power less 8 x 400 W and 8 x 700 W: the NVIDIA user guides); a GB200 NVL72 rack taken as one
  server draws about 120 kW and costs about $3.1M;
- the network draws tens of W per NPU (a 400G NIC about 25 W, an 800G transceiver 17 W: the
  parts catalogs);
- a data centre costs $9.3M-$15.0M per MW of critical load (Cushman & Wakefield, Data Center
  Development Cost Guide 2025), "AI-optimised" builds above $20M;
- US industrial electricity costs 5.75-35.28 cents per kWh by state (EIA Electric Power Annual
  2023): a price above $1 per kWh is $ per MWh or cents per kWh, and the hint names each reading
  that gives $0.01-$1 per kWh (82.6: $82.6 per MWh, 0.0826, or 82.6 cents, 0.826);
- a site's power cap is 1 kW-10 GW of facility power: one 8-GPU server draws about 10 kW (DGX H100
  10.2 kW, NVIDIA user guide); the largest announced AI campuses are 1-5 GW (Meta's Hyperion, up
  to 5 GW, Meta 2025; Stargate Abilene, 1.2 GW, OpenAI/Oracle 2025), so a cap above 10,000 MW is
  kW (25,000 for 25 MW) or W;
- accelerators, servers and networks are depreciated over 0.5-10 years: 5-6 years at the
  hyperscalers (Microsoft and Alphabet 6 years, 10-K 2023; Meta 5.5 years, 10-K 2025; Amazon 5
  years, 10-K 2025; CoreWeave 6 years, S-1 2025), a short lease half a year; a figure above 10 that
  is 0.5-10 years when divided by 12 (48 for 4 years) is months;
- a NIC and the switch port it plugs into cost and draw alike (:data:`PORT_RATIO`), and neither
  costs less than :data:`PART_USD_FLOOR` ($50: the cheapest NICs and ports of a training
  cluster's scale-out cost hundreds to thousands of $); catalogs of hand-made examples may use
  toy prices, and a catalog whose toy figures are meant so says it with ``check_units = false``
  (named in the error's fix). Link ports (die-to-die, SerDes lanes, NVLink) have no floor: an
  on-package port can cost tens of $ or be bundled;
- a cost model's price ($ per GB/s of per-NPU bandwidth, per direction) is a part's price over
  the GB/s it gives one NPU: the dearest part of the shipped catalogs is a 400G ConnectX-7 NIC at
  about $12,000 for 50 GB/s, 240 $ per GB/s (``catalogs/nvl72-ethernet.toml``), a port of a
  64 x 800G switch 31 and an 800G optic 12.5; the shipped instances' prices are 0.01 (a scale-up
  domain taken as free) to 240. A price above 10,000 $ per GB/s (:data:`COST_PRICE_RANGE`, 40 x
  the dearest) is a part's price not divided by its GB/s, cents, or a whole cluster's price per
  GB/s; one below 1e-6 (100 x below 1e-4 of the shipped toys' 0.01) is $ per byte/s.
  A price per Gb/s (8 x too low) or in thousands of $ is within the range and cannot be told from
  a cheap part: the fix of every price says both.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from ..model.catalog import Catalog
    from ..spec.cluster import Cluster


@dataclass(frozen=True)
class Plausible:
    """A figure's plausible range and the unit slips a value outside it looks like.

    Attributes:
        low, high: the range (0 is always accepted); the unit is the figure's own (W, $, ...).
        unit: the figure's unit as a message says it (``"W per accelerator"``).
        slips: (factor, wrong unit) pairs tried in order for a value below ``low``: value x factor
            in the range means the value was given in the wrong unit (``(1e3, "kW")``).
        fix: the fix's words, with ``{}`` for the converted value (``"give watts, e.g. {}"``).
        high_fix: the fix for a value above ``high``.
        high_slips: (divisor, wrong unit) pairs tried in order for a value above ``high``: value /
            divisor in the range means the value was given in the smaller unit (``(1e3, "kW")``
            for MW).
    """

    low: float
    high: float
    unit: str
    slips: tuple[tuple[float, str], ...]
    fix: str
    high_fix: str
    high_slips: tuple[tuple[float, str], ...] = ()


_W = "give watts, e.g. {}"
_USD = "give dollars, e.g. {}"
CLUSTER_RANGES: dict[str, Plausible] = {
    "accelerator_w": Plausible(10, 5e3, "W per accelerator", ((1e3, "kW"),), _W,
                               "give one accelerator's power in W (H100: 700)"),
    "server_w": Plausible(50, 2e5, "W per server", ((1e3, "kW"),), _W,
                          "give one server's power without its accelerators, in W (DGX H100: "
                          "4,600)"),
    "rack_w": Plausible(50, 2e5, "W per rack", ((1e3, "kW"),), _W,
                        "give one rack's power beyond its servers, in W"),
    "network_w_per_npu": Plausible(1, 5e3, "W of network per NPU", ((1e3, "kW"),), _W,
                                   "give the network's W per NPU (NICs, switches, optics)"),
    "accelerator_usd": Plausible(100, 1.5e5, "$ per accelerator", ((1e3, "thousands of $"),),
                                 _USD, "give one accelerator's price in $ (H100: about 33750)",
                                 ((8, "the price of an 8-accelerator server"),)),
    "server_usd": Plausible(100, 1e7, "$ per server", ((1e3, "thousands of $"),), _USD,
                            "give one server's price without its accelerators, in $"),
    "rack_usd": Plausible(100, 1e7, "$ per rack", ((1e3, "thousands of $"),), _USD,
                          "give one rack's price beyond its servers, in $"),
    "facility_usd_per_mw": Plausible(1e5, 1e9, "$ per MW", ((1e6, "$M per MW"),
                                                            (1e3, "$ per kW")),
                                     "give $ per MW of IT power, e.g. {}",
                                     "give $ per MW of IT power (about 11.7e6)"),
    "electricity_usd_per_kwh": Plausible(0, 1, "$ per kWh", (), "give $ per kWh, e.g. {}",
                                         "give $ per kWh, e.g. 0.0826 for 8.26 cents"),
    "max_power_mw": Plausible(1e-3, 1e4, "MW", (), "give the site's power cap in MW, e.g. {}",
                              "give the site's power cap in MW of facility power (e.g. 25)",
                              ((1e3, "kW"), (1e6, "W"))),
    "usd_per_npu_hour": Plausible(0.05, 100, "$ per NPU-hour", ((1e3, "thousands of $"),), _USD,
                                  "give the all-in rate of one NPU for one hour in $ (H100 rented: "
                                  "about 2-4)"),
    "amortisation_years": Plausible(0.5, 10, "years", (), "give years, e.g. {}",
                                    "give the years over which the hardware is paid (e.g. 5)",
                                    ((12, "months"),)),
}
"""The ``[cluster]`` figures checked, with their ranges (module docstring for the figures)."""

COST_PRICE_RANGE = Plausible(
    1e-6, 1e4, "$ per GB/s of per-NPU bandwidth", ((1e9, "$ per byte/s"),),
    "give $ per GB/s of per-NPU bandwidth, e.g. {}",
    "give $ per GB/s of per-NPU bandwidth, not a part's price: the part's price over the GB/s "
    "per direction it gives "
    "one NPU (an 800 Gb/s NIC, 100 GB/s, at $12,000: 12000 / 100 = 120), in $ (not thousands "
    "of $ or cents) and per GB/s (a price per Gb/s is 8 x too low)")
"""The plausible range of a cost model's prices (``link_usd_per_gbps``, ``switch_usd_per_gbps``,
``nic_usd_per_gbps``; LIBRA's ``Link``, ``Switch``, ``Nic``): module docstring for the figures. 0
(a bundled switch, no NIC) is accepted, as for every figure."""

PORT_RATIO = 300.0
"""A NIC and the switch port it plugs into cost and draw alike: a 400G NIC about $1,500 and 25 W,
a port of a 64 x 800G switch ($200,000, about 2 kW) about $3,125 and 31 W, within 2-4 x of each
other (``catalogs/nvl72-ethernet.toml``: a ConnectX-7 about $12,000). One of them this many times
below the other looks like the wrong unit ($k for $, kW for W): the factor of such a slip is 1,000,
and the catalogs of hand-made examples stay within 50 x."""


PART_USD_FLOOR: dict[str, float] = {"NIC": 50.0, "switch port": 50.0}
"""The least $ a NIC and a switch port (a switch's price over its radix) of a catalog may cost
unless the catalog says its figures are meant (``check_units = false``): the cheapest NICs of a
training cluster's scale-out cost hundreds of $ (a 100G NIC several hundred, a 400G ConnectX-7
about $1,500-$12,000: ``catalogs/nvl72-ethernet.toml``), a port of a 64 x 400G switch about $700
and of a 64 x 800G one about $3,125 (``catalogs/example-4d.toml``, ``nvl72-ethernet.toml``).
Below it a price looks like thousands of $ written as $k (``usd = 1.5`` for $1,500); 0 (bundled,
free) is accepted."""


PART_USD_CEILING = 1e6
"""The most $ a NIC or a switch port (a switch's price over its radix) of a catalog may cost unless
the catalog says its figures are meant (``check_units = false``): the dearest are thousands of $
(a ConnectX-8 NIC, a port of a 144 x 800G switch about $3,000). Above it the price is a slip (an
exponent, cents, a cluster's total) and is named itself, not the part it is compared with."""


PART_GBPS_FLOOR = 1.0
"""The slowest link port, NIC or switch port (GB/s per direction per unit, 8 Gb/s) a catalog may
rate unless it says its figures are meant (``check_units = false``): no training cluster's network
has a port slower than 10 Gb/s; a slower rating is in Tb/s or TB/s."""


def _num(x: float) -> str:
    """``x`` as a file would give it: 700, 33750, 11.7e6."""
    return f"{x / 1e6:g}e6" if x >= 1e6 else f"{x:g}"


def unit_problem(value: float, rule: Plausible) -> tuple[str, str] | None:
    """(problem, fix) of ``value`` outside ``rule``'s range, else None (0 is always accepted)."""
    if value == 0 or rule.low <= value <= rule.high:
        return None
    if value > rule.high:
        if rule.unit == "$ per kWh" and (found := _price_slip(value)) is not None:
            return found
        for divisor, wrong in rule.high_slips:
            if rule.low <= value / divisor <= rule.high:
                return (f"{value:g} {rule.unit} looks like {wrong}",
                        rule.fix.format(_num(value / divisor)))
        return f"{value:g} {rule.unit} is above {rule.high:g}", rule.high_fix
    for factor, wrong in rule.slips:
        if rule.low <= value * factor <= rule.high:
            return (f"{value:g} {rule.unit} looks like {wrong}",
                    rule.fix.format(_num(value * factor)))
    return f"{value:g} {rule.unit} is below {rule.low:g}", rule.high_fix


KWH_READINGS = ((1e3, "$ per MWh", "${} per MWh"), (100.0, "cents per kWh", "{} cents per kWh"))
"""(divisor to $ per kWh, unit, words of the value) of the units an electricity price above $1 per
kWh may be in."""
KWH_PLAUSIBLE = (0.01, 1.0)
"""$ per kWh a reading of :data:`KWH_READINGS` must fall in to be named (US industrial prices are
5.75-35.28 cents per kWh by state, EIA Electric Power Annual 2023)."""


def _price_slip(value: float) -> tuple[str, str] | None:
    """(problem, fix) of an electricity price ``value`` above $1 per kWh: the readings of
    :data:`KWH_READINGS` that give a price within :data:`KWH_PLAUSIBLE`, each with its $ per kWh
    (82.6: $82.6 per MWh is 0.0826, 82.6 cents per kWh 0.826; 8.26: only cents, 0.0826, as
    $0.00826 per kWh is below any grid's price), else None."""
    low, high = KWH_PLAUSIBLE
    found = [(value / d, unit, words.format(f"{value:g}")) for d, unit, words in KWH_READINGS
             if low <= value / d <= high]
    if not found:
        return None
    units = " or ".join(unit for _, unit, _ in found)
    eg = " or ".join(f"{v:g} for {words}" for v, _, words in found)
    return f"{value:g} $ per kWh looks like {units}", f"give $ per kWh, e.g. {eg}"


def check_cluster_units(cluster: Cluster, src: str | Path, field: str = "cluster") -> None:
    """Refuse a ``[cluster]`` figure outside :data:`CLUSTER_RANGES`.

    Raises:
        InputError: ``src``, ``cluster.<figure>``, the unit it looks like and the converted value.
    """
    for key, rule in CLUSTER_RANGES.items():
        value = getattr(cluster, key)
        found = None if value is None else unit_problem(float(value), rule)
        if found is not None:
            raise InputError(src, f"{field}.{key}", *found)


def check_cost_units(classes: dict[str, dict[str, float | None]], src: str | Path) -> None:
    """Refuse a cost model's price outside :data:`COST_PRICE_RANGE` (the same rule as the
    ``[cluster]`` figures': :func:`unit_problem`). ``classes``: each class's prices by the field
    the file names them with (``cost.InterPod.nic_usd_per_gbps`` in an instance file,
    ``InterPod.Nic`` in a LIBRA cost file), in $ per GB/s of per-NPU bandwidth.

    Raises:
        InputError: ``src``, the field, the unit the price looks like and the fix.
    """
    for cname, prices in classes.items():
        for field, value in prices.items():
            found = None if value is None else unit_problem(float(value), COST_PRICE_RANGE)
            if found is not None:
                raise InputError(src, f"{cname}.{field}", *found)


def check_servers(cluster: Cluster | None, sizes: tuple[int, ...], src: str | Path,
                  scaleup: int | None = None) -> None:
    """Refuse ``npus_per_server`` that does not divide every cluster size of ``sizes`` (NPUs): a
    cluster is whole servers. ``scaleup``: the first dimension's NPUs, named in the fix when it
    divides the size.

    Raises:
        InputError: ``src``, ``cluster.npus_per_server``, the size and the fix.
    """
    if cluster is None or cluster.npus_per_server is None:
        return
    per = cluster.npus_per_server
    for n in sizes:
        if n % per:
            hint = (f", e.g. {scaleup} (the first dimension's NPUs)"
                    if scaleup and n % scaleup == 0 else "")
            raise InputError(src, "cluster.npus_per_server",
                             f"{per} NPUs per server do not divide the cluster's {n:,} NPUs",
                             f"give the NPUs of one server, a divisor of {n:,}{hint}")


def _port(switch) -> tuple[float | None, float | None]:
    """A switch's ($, W) per port (None where not given or 0)."""
    usd = (switch.usd_per_port if switch.usd_per_port is not None else
           None if switch.usd_per_switch is None else switch.usd_per_switch / switch.radix)
    watts = None if switch.watts is None else switch.watts / switch.radix
    return usd or None, watts or None


MEANT = "if {} is meant, write check_units = false at the top of the catalog"
"""How a catalog states that figures refused as a unit slip are as meant (toy prices)."""


def _slip(what: str, value: float, other: str, against: float, unit: str, wrong: str,
          fix: str) -> tuple[str, str] | None:
    """(problem, ``fix``) when ``value`` is :data:`PORT_RATIO` times below ``against``, else
    None; the fix also says how to keep the figure if it is meant (:data:`MEANT`)."""
    if not value or value * PORT_RATIO >= against:
        return None
    return (f"{what} is {value:g} {unit}, {against / value:,.0f} x below {other} "
            f"({against:,.4g} {unit}): looks like {wrong}",
            f"{fix} ({MEANT.format(f'{value:g} {unit}')})")


def _class_slip(pc) -> tuple[str, str, str] | None:
    """(field, problem, fix) of the first NIC or switch of a class whose $ or W per port is
    :data:`PORT_RATIO` times below its counterpart's."""
    for i, nic in enumerate(pc.nics):
        for j, sw in enumerate(pc.switches):
            usd, watts = _port(sw)
            for field, a, b, unit, wrong, fix in (
                ("usd", nic.usd, usd, "$", "thousands of $", _USD),
                ("watts", nic.watts, watts, "W", "kW", _W),
            ):
                if a is None or b is None:
                    continue
                found = _slip(f"NIC '{nic.name}'", a, f"a port of switch '{sw.name}'", b,
                              unit, wrong, fix.format(_num(a * 1e3)))
                if found is not None:
                    return f"nics[{i}].{field}", *found
                key = "usd_per_port" if field == "usd" and sw.usd_per_port else (
                    "usd_per_switch" if field == "usd" else "watts")
                given = _num(getattr(sw, key) * 1e3)
                found = _slip(f"a port of switch '{sw.name}'", b, f"NIC '{nic.name}'", a,
                              unit, wrong, f"give {key} in {unit}, e.g. {given}")
                if found is not None:
                    return f"switches[{j}].{key}", *found
    return None


def _ceiling_slip(pc) -> tuple[str, str, str] | None:
    """(field, problem, fix) of the first NIC or switch of a class whose $ (per port for a switch)
    is above :data:`PART_USD_CEILING`."""
    parts = [(f"nics[{i}].usd", f"NIC '{n.name}'", n.usd) for i, n in enumerate(pc.nics)]
    for j, sw in enumerate(pc.switches):
        key = "usd_per_port" if sw.usd_per_port is not None else "usd_per_switch"
        parts.append((f"switches[{j}].{key}", f"a port of switch '{sw.name}'", _port(sw)[0]))
    for field, what, value in parts:
        if value and value > PART_USD_CEILING:
            key = field.rsplit(".", 1)[1]
            return (field,
                    f"{what} is {value:,.4g} $, above {PART_USD_CEILING:,.0f} $ (the dearest NIC "
                    "or switch port of a training cluster costs thousands of $): a mistyped "
                    "price",
                    f"give {key} in $ per unit (a ConnectX-7 NIC about 12e3, a 64 x 400G switch "
                    f"about 35e3; {MEANT.format(f'{value:,.4g} $')})")
    return None


def _slow_slip(pc) -> tuple[str, str, str] | None:
    """(field, problem, fix) of the first link port, NIC or switch port of a class slower than
    :data:`PART_GBPS_FLOOR` per unit (a rating in Tb/s or TB/s: ``gbit_per_s = 0.4`` for a 400 Gb/s
    NIC, which no design can use without hundreds of them per NPU)."""
    parts = [(f"{kind}[{i}]", f"{what} '{p.name}'", p)
             for kind, what in (("links", "link port"), ("nics", "NIC"))
             for i, p in enumerate(getattr(pc, kind))]
    parts += [(f"switches[{j}]", f"a port of switch '{s.name}'", s)
              for j, s in enumerate(pc.switches)]
    for where, what, p in parts:
        for key, unit, per in (("gbps", "GB/s", 1.0), ("gbit_per_s", "Gb/s", 8.0),
                               ("port_gbps", "GB/s", 1.0), ("port_gbit_per_s", "Gb/s", 8.0)):
            v = getattr(p, key, None)
            if v and v / per < PART_GBPS_FLOOR:
                big = "Tb/s" if unit == "Gb/s" else "TB/s"
                return (f"{where}.{key}",
                        f"{what} gives {v:g} {unit} per unit, slower than "
                        f"{PART_GBPS_FLOOR * per:g} {unit} (less than one 10 Gb/s port): looks "
                        f"like {big}",
                        f"give {key} in {unit}: {v:g} {big} = {v * 1000:g} {unit} "
                        f"({MEANT.format(f'{v:g} {unit}')})")
    return None


def _floor_slip(pc) -> tuple[str, str, str] | None:
    """(field, problem, fix) of the first NIC or switch of a class whose $ (per port for a switch)
    is above 0 and below its :data:`PART_USD_FLOOR`."""
    parts = [(f"nics[{i}].usd", "NIC", f"NIC '{n.name}'", n.usd, n.usd)
             for i, n in enumerate(pc.nics)]
    for j, sw in enumerate(pc.switches):
        key = "usd_per_port" if sw.usd_per_port is not None else "usd_per_switch"
        parts.append((f"switches[{j}].{key}", "switch port", f"a port of switch '{sw.name}'",
                      _port(sw)[0], getattr(sw, key)))
    for field, kind, what, value, given in parts:
        floor = PART_USD_FLOOR[kind]
        if value and value < floor:
            key = field.rsplit(".", 1)[1]
            return (field,
                    f"{what} is {value:g} $, below {floor:g} $ (the cheapest {kind} of a "
                    "training cluster costs hundreds of $): looks like thousands of $",
                    f"give {key} in $, e.g. {_num(given * 1e3)} "
                    f"({MEANT.format(f'{value:g} $')})")
    return None


def _bandwidth_slip(pc) -> tuple[str, str, str] | None:
    """(field, problem, fix) of the first link port, NIC or switch port of a class whose bandwidth
    per unit is above :data:`hieropt.units.MAX_PLAUSIBLE_BW_GBPS` (1e6 GB/s, a thousand times the
    fastest scale-up link): ``gbit_per_s`` written in bit/s, ``gbps`` in bytes/s (a 400G NIC as
    ``gbit_per_s = 400e9``: 5e10 GB/s, which no design can use)."""
    from ..units import MAX_PLAUSIBLE_BW_GBPS

    parts = [(f"{kind}[{i}]", f"{what} '{p.name}'", p) for kind, what in (("links", "link port"),
                                                                           ("nics", "NIC"))
             for i, p in enumerate(getattr(pc, kind))]
    parts += [(f"switches[{j}]", f"a port of switch '{s.name}'", s)
              for j, s in enumerate(pc.switches)]
    for where, what, p in parts:
        for key, unit, wrong in (("gbps", "GB/s", "bytes/s"), ("gbit_per_s", "Gb/s", "bit/s"),
                                 ("port_gbps", "GB/s", "bytes/s"),
                                 ("port_gbit_per_s", "Gb/s", "bit/s")):
            v = getattr(p, key, None)
            gbps = None if v is None else v / 8 if unit == "Gb/s" else v
            if gbps is not None and gbps > MAX_PLAUSIBLE_BW_GBPS:
                per = f" ({gbps:g} GB/s)" if unit == "Gb/s" else ""
                return (f"{where}.{key}",
                        f"{what} gives {v:g} {unit}{per} per unit, above "
                        f"{MAX_PLAUSIBLE_BW_GBPS:g} GB/s (a thousand times the fastest scale-up "
                        f"link): looks like {wrong}",
                        f"give {key} in {unit}: {v:g} {wrong} = {v / 1e9:g} {unit}")
    return None


def check_catalog_units(catalog: Catalog, src: str | Path) -> None:
    """Refuse a Switch class whose NIC and switch port differ in $ or W per port by more than
    :data:`PORT_RATIO` (one of them is in $k or kW), or whose NIC or switch port costs more than
    :data:`PART_USD_CEILING` ($1M) or less than :data:`PART_USD_FLOOR` ($50: $k written for $),
    unless the catalog says its figures are meant
    (``check_units = false``); and, whatever it says, a part whose bandwidth per unit is above
    1e6 GB/s (bit/s or bytes/s written for Gb/s or GB/s).

    Raises:
        InputError: ``src``, ``classes.<class>.<nics|switches>[i].<field>``, the unit it looks like,
            the converted value and how to keep the figure if it is meant.
    """
    for cname, pc in catalog.classes.items():  # (no bandwidth that far out is meant)
        found = _bandwidth_slip(pc)
        if found is not None:
            raise InputError(src, f"classes.{cname}.{found[0]}", found[1], found[2])
    if not catalog.check_units:
        return
    for cname, pc in catalog.classes.items():
        found = (_slow_slip(pc) or _ceiling_slip(pc) or _class_slip(pc)
                 or _floor_slip(pc))
        if found is not None:
            raise InputError(src, f"classes.{cname}.{found[0]}", found[1], found[2])


__all__ = ["Plausible", "CLUSTER_RANGES", "COST_PRICE_RANGE", "PORT_RATIO", "PART_USD_FLOOR",
           "PART_USD_CEILING",
           "PART_GBPS_FLOOR",
           "unit_problem", "check_cluster_units", "check_cost_units", "check_servers",
           "check_catalog_units"]
