"""Multi-tier folded-Clos (fat-tree) fabrics of one switch radix: switch, link and optic counts,
cost and power.

A Switch dimension is bought as a folded Clos (a "fat tree", Leiserson 1985) of identical switches
with ``radix`` ports. Tier 1 (leaves) holds the endpoints (NIC ports); every tier below the top
splits its ports into ``down`` and ``up`` ports with ``down / up <= r`` (the tier's oversubscription
ratio r >= 1; 1 = non-blocking); the top tier uses all ``radix`` ports downwards.

**Capacity and tiers.** With splits (d_l, u_l) an L-tier fabric reaches at most ``radix * d_1 * ...
* d_(L-1)`` endpoints (one switch holds ``radix``): for r = 1, d = radix / 2, this is 2 (radix/2)^L,
  the k-ary
fat tree of Al-Fares, Loukissas and Vahdat, "A scalable, commodity data center network
architecture", SIGCOMM 2008 (k^3/4 hosts and 5k^2/4 switches for three tiers). A fabric uses the
fewest tiers whose capacity (at the largest split of every tier's ratio) holds its endpoints;
``max_tiers`` caps them.

**Counts (balanced construction).** Endpoints fill ``ceil(E / d_1)`` leaves (per rail, with
rail-optimized placement). Tier l >= 2 groups the blocks below it (leaves, then pods, ...) into
``ceil(blocks / d_l)`` blocks of ``n = ceil(blocks / that)`` children (one block at the top, d_L =
radix). The tier-l switches of a block form one plane per top switch of a child block (plane j links
switch j of every child), each plane with c switches, c the smallest divisor of u_(l-1) with c >=
ceil(n u_(l-1) / d_l): every child switch then has the same number u_(l-1) / c of links to each
switch of its plane and no switch needs more than d_l down ports. Links from tier l - 1 to tier l
are (switches of tier l - 1) x u_(l-1), all uplinks cabled. For full builds this is exactly Al-Fares
et al.'s fat tree and the NVIDIA DGX SuperPOD reference architectures' tables
(docs.nvidia.com/dgx-superpod, B200 RA "Larger DGX SuperPOD component counts": 1,024 GPUs on 64-port
NDR switches: 32 leaves, 16 spines; 16,384 GPUs: 512 leaves, 512 spines, 256 core; B300 XDR RA on
144-port switches: 2,304 GPUs: 32 leaves and 18 spines, the divisor rule, where port counting alone
would say 16). Among the port splits of each tier that meet its ratio, the one needing the fewest
switches (then links) is used (all combinations up to :data:`MAX_SPLIT_COMBINATIONS`, else those
with the most down ports).

**Placement of a Switch dimension** (its G = N / p groups of p NPUs, P NIC ports per group;
:func:`switch_fabric`):

- ``per_group`` (LIBRA's counting, the default): each group is its own fat tree of P ports (a
  "rail-only" network: Wang et al., "How to build low-cost networks for large language models
  (without sacrificing performance)", arXiv 2307.12169);
- ``multi_plane``: each NPU's ports are spread over planes, each a fat tree of p ports (one port of
  every NPU of the group): NVIDIA NVL72's 18 NVLink switch planes, DeepSeek-V3's multi-plane fat
  tree (arXiv 2505.09343, §5);
- ``rail_optimized``: one fat tree for the whole dimension whose leaves each serve one group
  ("rail") only, with shared upper tiers (NVIDIA DGX SuperPOD reference architecture: one leaf per
  rail per scalable unit).

**Bandwidth.** A group whose ports sit under one leaf never crosses an oversubscribed link;
otherwise its traffic is taken to climb to the lowest block holding the whole group (to the top for
rail-optimized placement), and its per-NPU bandwidth is the NIC bandwidth times the product of u_l /
d_l over the tiers it climbs through: the bisection bound, exact for uniform all-to-all traffic
among many leaves and pessimistic for ring-ordered collectives, which cross a leaf's uplinks on few
of their steps.

**Optics**, cost and power per link level: :mod:`hieropt.model.optics`.

Pure (stdlib only, no solver): invalid arguments raise ValueError with a ``"problem; fix: ..."``
message.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..cache import current

__all__ = [
    "MIN_RADIX",
    "MAX_SPLIT_COMBINATIONS",
    "PLACEMENTS",
    "Tier",
    "FatTree",
    "SwitchFabric",
    "check_radix",
    "MAX_RADIX",
    "check_ratio",
    "port_splits",
    "fat_tree",
    "design_fat_tree",
    "switch_fabric",
]

MIN_RADIX = 4
"""Smallest radix with a fat tree that grows with its tiers (a tier must have >= 2 down ports)."""
MAX_RADIX = 65_536
"""Largest radix taken (ports per switch): the largest switches of this field have 512 ports; a
radix beyond this is a typo (and its $ per port overflowed a float)."""
MAX_SPLIT_COMBINATIONS = 4096
"""Most port-split combinations :func:`design_fat_tree` compares (beyond: the splits with the most
down ports)."""
PLACEMENTS = ("per_group", "multi_plane", "rail_optimized")
"""How a Switch dimension's groups are placed on fabrics (module docstring)."""


def check_radix(radix: int) -> int:
    """Return ``radix`` if it is an integer in [:data:`MIN_RADIX`, :data:`MAX_RADIX`], else raise
    ValueError."""
    if isinstance(radix, bool) or not isinstance(radix, int) or radix < MIN_RADIX:
        raise ValueError(
            f"radix {radix!r} is below {MIN_RADIX}: a fat tree of such switches cannot grow "
            "with its "
            f"tiers; fix: give a switch radix >= {MIN_RADIX}"
        )
    if radix > MAX_RADIX:
        shown = f"{radix:,}" if radix < 10**30 else f"a {len(str(radix))}-digit number"
        raise ValueError(
            f"radix {shown} is above {MAX_RADIX:,} ports per switch (the largest switches have "
            "512); fix: give the switch's port count"
        )
    return radix


def check_ratio(ratio: float) -> float:
    """Return ``ratio`` as float if it is a finite oversubscription ratio >= 1, else raise
    ValueError."""
    if (
        isinstance(ratio, bool)
        or not isinstance(ratio, int | float)
        or not (math.isfinite(ratio) and ratio >= 1)
    ):
        raise ValueError(
            f"oversubscription {ratio!r} is below 1 (or not a number): it is down ports per "
            "up port; "
            "fix: give a ratio >= 1 (1 = non-blocking, 2 = 2:1)"
        )
    return float(ratio)


def port_splits(radix: int, ratio: float) -> tuple[tuple[int, int], ...]:
    """Every useful (down, up) split of ``radix`` ports with down / up <= ``ratio``: down >= 2, and
    no split with fewer down and more up ports than another; most down ports first. E.g. radix 64,
    ratio 1: (32, 32), (31, 31),
    ..., (2, 2); ratio 2: (42, 21), (40, 20), ..., (2, 1).

    Raises:
        ValueError: radix < 4 or ratio < 1.
    """
    check_radix(radix)
    ratio = check_ratio(ratio)
    out: list[tuple[int, int]] = []
    for up in range(1, radix):
        down = min(radix - up, math.floor(ratio * up + 1e-9))
        if down >= 2 and (not out or down > out[-1][0]):
            out.append((down, up))
    return tuple(reversed(out))


@dataclass(frozen=True)
class Tier:
    """One tier of a fat tree.

    Attributes:
        level: 1 = leaves, L = top.
        switches: switches on this tier.
        down_ports, up_ports: the split of each switch's ports (top: radix and 0).
        blocks: blocks (sub-fabrics) this tier's switches are grouped in (1 at the top; leaves are
            their own blocks).
        children: children per block (endpoints per leaf at level 1).
        planes: switches per plane in a block (1 at level 1).
        down_used: down ports each switch uses (<= down_ports).
    """

    level: int
    switches: int
    down_ports: int
    up_ports: int
    blocks: int
    children: int
    planes: int
    down_used: int

    @property
    def ratio(self) -> float | None:
        """down / up of this tier's switches (None at the top)."""
        return self.down_ports / self.up_ports if self.up_ports else None


@dataclass(frozen=True)
class FatTree:
    """A built fat tree: ``endpoints`` ports on switches of ``radix`` ports, in ``tiers`` (leaves
    first).

    Attributes:
        endpoints: endpoint (NIC) ports.
        radix: ports per switch.
        rails: rails (leaves serve one rail each; 1 = no rail placement).
        tiers: the tiers, leaves first.
        links: links per level: ``links[0]`` endpoint-to-leaf (= endpoints), ``links[l]`` tier l to
            tier l + 1.
        capacity: most endpoints these splits reach (radix x product of the down ports below the
            top).
    """

    endpoints: int
    radix: int
    rails: int
    tiers: tuple[Tier, ...]
    links: tuple[int, ...]
    capacity: int

    @property
    def n_tiers(self) -> int:
        """Number of tiers L."""
        return len(self.tiers)

    @property
    def switches(self) -> int:
        """Switches on all tiers."""
        return sum(t.switches for t in self.tiers)

    @property
    def splits(self) -> tuple[tuple[int, int], ...]:
        """(down, up) of every tier below the top."""
        return tuple((t.down_ports, t.up_ports) for t in self.tiers[:-1])

    def bandwidth_factor(self, span_ports: int | None = None) -> float:
        """Share of the NIC bandwidth a group of ``span_ports`` endpoint ports (default: all) keeps:
        1 within one leaf, else the product of up / down over the tiers its traffic climbs through
        (module docstring)."""
        span = self.endpoints if span_ports is None else span_ports
        if self.n_tiers == 1 or span <= min(self.tiers[0].children, self.tiers[0].down_ports):
            return 1.0
        factor, cover = 1.0, 1
        for tier in self.tiers[:-1]:
            factor *= tier.up_ports / tier.down_ports
            cover *= tier.down_ports
            nxt = self.tiers[tier.level]
            if self.rails == 1 and nxt.level < self.n_tiers and span <= cover * nxt.down_ports:
                return factor
        return factor


def _smallest_divisor_at_least(n: int, lo: int) -> int:
    for c in range(max(1, lo), n + 1):
        if n % c == 0:
            return c
    raise ValueError(f"no divisor of {n} is >= {lo}")  # unreachable when blocks <= down ports


def fat_tree(
    endpoints: int, radix: int, splits: Sequence[tuple[int, int]] = (), rails: int = 1
) -> FatTree:
    """Build the balanced fat tree of ``endpoints`` ports with the given (down, up) split of every
    tier below the top (``len(splits) + 1`` tiers; no splits: one switch). Counts as in the module
    docstring.

    Args:
        endpoints: endpoint ports, >= 1 (a multiple of ``rails``).
        radix: ports per switch, >= 4.
        splits: (down, up) per tier below the top, down + up <= radix, down >= 2, up >= 1.
        rails: leaves serve one rail (``endpoints / rails`` ports) each; needs at least two tiers
            when > 1.

    Raises:
        ValueError: bad arguments, or more endpoints than the tiers can hold.
    """
    check_radix(radix)
    if endpoints < 1 or rails < 1 or endpoints % rails:
        raise ValueError(
            f"{endpoints} endpoints in {rails} rails; fix: give >= 1 endpoints, a multiple "
            "of the rails"
        )
    for d, u in splits:
        if d < 2 or u < 1 or d + u > radix:
            raise ValueError(
                f"port split {d} down + {u} up does not fit a radix-{radix} switch; fix: "
                "use down >= 2, "
                f"up >= 1, down + up <= {radix}"
            )
    L = len(splits) + 1
    capacity = radix * math.prod(d for d, _ in splits)
    if L == 1:
        if endpoints > radix or rails > 1:
            raise ValueError(
                f"{endpoints} endpoints ({rails} rails) do not fit one radix-{radix} "
                "switch; fix: use "
                "two or more tiers"
            )
        return FatTree(
            endpoints,
            radix,
            1,
            (Tier(1, 1, radix, 0, 1, endpoints, 1, endpoints),),
            (endpoints,),
            radix,
        )
    d1, u1 = splits[0]
    per_rail = endpoints // rails
    leaves_per_rail = math.ceil(per_rail / d1)
    leaves = rails * leaves_per_rail
    tiers = [Tier(1, leaves, d1, u1, leaves, math.ceil(per_rail / leaves_per_rail), 1,
                  math.ceil(per_rail / leaves_per_rail))]
    links = [endpoints]
    blocks, below, u_prev, per_block = leaves, leaves, u1, 1
    for level in range(2, L + 1):
        top = level == L
        d, u = (radix, 0) if top else splits[level - 1]
        nb = 1 if top else math.ceil(blocks / d)
        n = math.ceil(blocks / nb)
        if n > d:
            raise ValueError(
                f"{endpoints} endpoints need more than {L} tiers of radix-{radix} switches "
                "with splits "
                f"{list(splits)}; fix: allow more tiers or use a larger radix"
            )
        c = _smallest_divisor_at_least(u_prev, math.ceil(n * u_prev / d))
        per_block *= c
        switches = nb * per_block
        links.append(below * u_prev)
        tiers.append(Tier(level, switches, d, u, nb, n, c, n * (u_prev // c)))
        blocks, below, u_prev = nb, switches, u
    return FatTree(endpoints, radix, rails, tuple(tiers), tuple(links), capacity)


def _design(
    endpoints: int, radix: int, ratios: tuple[float, ...], rails: int, max_tiers: int | None
) -> FatTree:
    if rails == 1 and endpoints <= radix:
        return fat_tree(endpoints, radix)
    options = [port_splits(radix, ratios[i] if i < len(ratios) else 1.0) for i in range(64)]
    L = 2
    # capacity at the largest splits at least doubles per tier (down >= 2): ends within log2(E)
    # tiers
    while True:
        best_capacity = radix * math.prod(options[i][0][0] for i in range(L - 1))
        leaves_min = rails * math.ceil(endpoints / rails / options[0][0][0])
        if best_capacity >= endpoints and leaves_min <= best_capacity // options[0][0][0]:
            break
        L += 1
        if L > len(options):
            raise ValueError(
                f"{endpoints:,} endpoints need more than {len(options)} tiers; fix: use a "
                "larger radix"
            )
    if max_tiers is not None and L > max_tiers:
        raise ValueError(
            f"{endpoints:,} endpoints need {L} tiers of radix-{radix} switches, more than "
            "max_tiers = "
            f"{max_tiers}; fix: raise max_tiers, use a larger radix or lower the oversubscription"
        )
    per_tier = [list(options[i]) for i in range(L - 1)]
    keep = max(1, int(MAX_SPLIT_COMBINATIONS ** (1.0 / (L - 1))))
    if math.prod(len(p) for p in per_tier) > MAX_SPLIT_COMBINATIONS:
        per_tier = [p[:keep] for p in per_tier]
    best, best_key = None, None
    for combo in itertools.product(*per_tier):
        if radix * math.prod(d for d, _ in combo) < endpoints:
            continue
        try:
            tree = fat_tree(endpoints, radix, combo, rails)
        except ValueError:
            continue
        key = (tree.switches, sum(tree.links), -tree.capacity)
        if best_key is None or key < best_key:
            best, best_key = tree, key
    if best is None:  # the largest splits always fit (checked above); kept as a guard
        raise ValueError(
            f"{endpoints:,} endpoints do not fit {L} tiers of radix-{radix} switches; fix: "
            "allow more "
            "tiers"
        )
    return best


def design_fat_tree(
    endpoints: int,
    radix: int,
    oversubscription: Sequence[float] = (),
    *,
    rails: int = 1,
    max_tiers: int | None = None,
) -> FatTree:
    """The fat tree for ``endpoints`` ports: fewest tiers, then the port splits that need the fewest
    switches.

    Args:
        endpoints: endpoint (NIC) ports, >= 1.
        radix: ports per switch, >= 4.
        oversubscription: ratio (>= 1) of tier 1, 2, ... (leaves first); tiers not listed are
            non-blocking (1).
        rails: rail-optimized placement with this many rails (1: none).
        max_tiers: most tiers allowed (None: no limit).

    Raises:
        ValueError: radix < 4, a ratio < 1, bad counts, or more than ``max_tiers`` tiers needed.
    """
    check_radix(radix)
    ratios = tuple(check_ratio(r) for r in oversubscription)
    if max_tiers is not None and max_tiers < 1:
        raise ValueError(f"max_tiers = {max_tiers}; fix: give max_tiers >= 1")
    if endpoints < 1 or rails < 1 or endpoints % rails:
        raise ValueError(
            f"{endpoints} endpoints in {rails} rails; fix: give >= 1 endpoints, a multiple "
            "of the rails"
        )
    args = (int(endpoints), radix, ratios, int(rails), max_tiers)
    return current().memo("fat_tree", args, lambda: _design(*args), 4096)  # (frozen: shared)


@dataclass(frozen=True)
class SwitchFabric:
    """The fabrics of one Switch dimension.

    Attributes:
        placement: ``per_group``, ``multi_plane`` or ``rail_optimized``.
        trees: (fat tree, copies) pairs.
        bandwidth_factor: share of the NIC bandwidth each group keeps (1 = non-blocking).
        ports_per_group: NIC ports of one group.
    """

    placement: str
    trees: tuple[tuple[FatTree, int], ...]
    bandwidth_factor: float
    ports_per_group: int

    @property
    def switches(self) -> int:
        """Switches in all fabrics."""
        return sum(t.switches * n for t, n in self.trees)

    @property
    def tiers(self) -> int:
        """Most tiers of any fabric."""
        return max(t.n_tiers for t, _ in self.trees)

    @property
    def links(self) -> tuple[int, ...]:
        """Links per level over all fabrics (level 0: NIC to leaf)."""
        out = [0] * self.tiers
        for t, n in self.trees:
            for level, k in enumerate(t.links):
                out[level] += k * n
        return tuple(out)


def switch_fabric(groups: int, npus_per_group: int, ports_total: int, radix: int,
                  oversubscription: Sequence[float] = (), placement: str = "per_group",
                  max_tiers: int | None = None) -> SwitchFabric:
    """The fabrics of a Switch dimension with ``groups`` groups of ``npus_per_group`` NPUs and
    ``ports_total`` NIC ports in the cluster (each group gets ``ceil(ports_total / groups)``);
    placements as in the module docstring.

    Raises:
        ValueError: bad arguments; ``multi_plane`` when a group's ports are not a whole number per
            NPU.
    """
    if placement not in PLACEMENTS:
        raise ValueError(
            f"unknown placement {placement!r}; fix: use one of {', '.join(PLACEMENTS)}"
        )
    if groups < 1 or npus_per_group < 1 or ports_total < 1:
        raise ValueError(
            f"{groups} groups of {npus_per_group} NPUs with {ports_total} ports; fix: give "
            "counts >= 1"
        )
    P = math.ceil(ports_total / groups)
    if placement == "per_group":
        tree = design_fat_tree(P, radix, oversubscription, max_tiers=max_tiers)
        return SwitchFabric(placement, ((tree, groups),), tree.bandwidth_factor(), P)
    if placement == "multi_plane":
        if P % npus_per_group:
            raise ValueError(
                f"multi-plane placement needs a whole number of ports per NPU, but a group of "
                f"{npus_per_group} NPUs has {P} ports; fix: use per_group placement"
            )
        tree = design_fat_tree(npus_per_group, radix, oversubscription, max_tiers=max_tiers)
        return SwitchFabric(
            placement, ((tree, groups * (P // npus_per_group)),), tree.bandwidth_factor(), P
        )
    if groups == 1:  # one rail: the same as a single fabric
        tree = design_fat_tree(P, radix, oversubscription, max_tiers=max_tiers)
    else:
        tree = design_fat_tree(
            groups * P, radix, oversubscription, rails=groups, max_tiers=max_tiers
        )
    return SwitchFabric(placement, ((tree, 1),), tree.bandwidth_factor(P), P)
