"""hieropt's network as ASTRA-sim 2.0 sees it: simulator dimensions, link bandwidths, latencies,
algorithms.

The conventions below make ASTRA-sim's collective algorithms reproduce hieropt's per-NPU bandwidth
model (docs/explanation/astra-sim.md) and its latency steps. They were measured with the prebuilt
analytical (congestion-unaware) binary (astra-sim c459ab6); ``tests/fidelity`` re-measures them. The
backend charges a message ``hops x latency + bytes / link bandwidth`` and never shares a link, so
what matters is how many messages an algorithm sends at once and over how many hops:

=================== ======================= =========== ============
========================================== hieropt algorithm   simulator RS / AG / AR  all-to-all
link (B/NPU) latency per hop (a = hieropt's per step) =================== =======================
=========== ============ ========================================== ``ring``            ``ring``
``direct1`` B Ring a, FullyConnected a, Switch a/2 ``direct``          ``direct``
``direct``  B / (p
- 1)  Ring a / floor(p/2), FullyConnected a, Switch a/2 ``halving_doubling`` ``halvingDoubling``
  ``direct1`` B
Ring a log2(p)/(p-1), FullyConnected a, Switch a/2 =================== =======================
=========== ============ ==========================================

(a: hieropt's ``latency_ns`` per step; p: NPUs of the simulator dimension; a Switch message takes 2
hops.) With these, every reduce-scatter / all-gather / all-reduce / all-to-all takes hieropt's bytes
/ B on every building block, and the latency of hieropt's step count, except: all-to-all on a
``ring`` Ring (the simulator sends to the j-th neighbour over min(j, p - j) hops: sum_j min(j, p -
j) hops instead of p - 1 steps) and all-to-all with ``halving_doubling`` (p - 1 steps instead of
   ceil(log2 p)).
ASTRA-sim's ring algorithm sends in one direction, so a Ring's whole per-NPU bandwidth goes on one
link (two links of B/2 would make every Ring-bound collective 2x slower); ``halvingDoubling`` needs
a power of two.

Groups that span part of a dimension (LIBRA's GPT-3 mapping: TP 4 of the 8 NPUs of a FullyConnected
dimension, DP the other factor 2): the simulator's ``involved_dim`` takes whole dimensions only
(its communicator groups fall back to a flat ring), so such a dimension becomes several simulator
dimensions, e.g. FullyConnected 8 -> FullyConnected 4 x FullyConnected 2, each with the dimension's
per-NPU bandwidth B under LIBRA's convention (``group_bandwidth = "whole"``), or with named groups
priced by their links (``"links"``) B / g, the share the group's links carry
(:func:`hieropt.model.algorithms.group_links`: a FullyConnected part of f NPUs then has f - 1 links
of B / (n - 1), the physical dimension's own). A group spanning several of those simulator
dimensions is exact with one chunk (sequential dimensions); with many chunks the simulator runs
them concurrently, each at its share of B, where hieropt has them share one B: where those shares
add up to more than B (:func:`shared_dimension`: every Switch, and every block under ``"whole"``)
the simulator would give the NPU more bandwidth than the dimension has, so ``simulate`` and
``export`` then pick one chunk (:func:`hieropt.studies.simulate.simulator_chunks`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import InputError
from ..names import with_flag
from ..spec import PHASES, Instance
from ..units import GB, GIB
from .astrasim_groups import PIPELINE, GroupLayout, group_layout

HOPS_SWITCH = 2
"""Hops of one message through a Switch (NPU -> switch -> NPU) in the analytical backend."""

IMPLEMENTATION = {"ring": "ring", "direct": "direct", "halving_doubling": "halvingDoubling"}
"""Simulator algorithm (reduce-scatter, all-gather, all-reduce) of each hieropt algorithm."""

EXPORT_MARK = "# Conventions (hieropt/io/astrasim_network.py):"
"""The comment line that marks a network file written by :func:`network_yml` (these conventions, not
LIBRA's physical link counting); :func:`hieropt.io.astrasim2.read_network_yml` reads such a file by
them."""

_SHARE = re.compile(r" x share ([0-9.eE+-]+) \(the group's links\)")
"""A ``sim dim`` comment's share of B (:attr:`SimDim.share`), when not 1."""
_SIM_DIM_LINE = re.compile(
    r"^#\s+sim dim (\d+) \(hieropt dim (\d+)\): (\w+) (\d+), B = [^,]*, (\w+)/(\w+),"
)


@dataclass(frozen=True)
class SimDim:
    """One dimension of the simulator's network.

    Attributes:
        parent: the hieropt dimension it belongs to.
        block: ``Ring``, ``FullyConnected`` or ``Switch`` (the parent's block).
        npus: NPUs along it (>= 2).
        bw_gbps: hieropt per-NPU bandwidth B of the parent, GB/s (1 GB = 1e9 bytes).
        algorithm: hieropt's algorithm of the parent (``ring``, ``direct``, ``halving_doubling``).
        latency_ns: hieropt's per-step latency of the parent, ns.
    """

    parent: int
    block: str
    npus: int
    bw_gbps: float
    algorithm: str
    latency_ns: float
    share: float = 1.0
    """The part of B the simulator dimension's links carry: 1, or for a factor of a named group
    that spans part of the parent, priced by the links it reaches there, 1 / g
    (:func:`hieropt.model.algorithms.group_links`)."""

    @property
    def implementation(self) -> str:
        """Simulator algorithm for reduce-scatter, all-gather and all-reduce on this dimension."""
        return IMPLEMENTATION[self.algorithm]

    @property
    def all_to_all_implementation(self) -> str:
        """Simulator algorithm for all-to-all: ``direct`` with the direct convention, else one
        message at a time."""
        return "direct" if self.algorithm == "direct" else "direct1"

    @property
    def link_gbps(self) -> float:
        """Per-link bandwidth in hieropt's unit (GB/s, 1e9 bytes): B (times :attr:`share`), or
        B / (p - 1) for ``direct``."""
        bw = self.bw_gbps * self.share
        return bw / (self.npus - 1) if self.algorithm == "direct" else bw

    @property
    def link_gib(self) -> float:
        """Per-link bandwidth in the simulator's unit: GB/s with 1 GB = 2^30 bytes."""
        return self.link_gbps * (GB / GIB)  # (the ratio first: 1e300 GB/s does not overflow to inf)

    @property
    def hops_per_step(self) -> float:
        """Hops per step of hieropt's step count (so ``latency per hop = latency_ns /
        hops_per_step``)."""
        if self.block == "Switch":
            return HOPS_SWITCH
        if self.block == "FullyConnected":
            return 1.0
        if self.algorithm == "direct":
            return float(self.npus // 2)
        if self.algorithm == "halving_doubling":
            return (self.npus - 1) / math.log2(self.npus)
        return 1.0

    @property
    def link_latency_ns(self) -> float:
        """The simulator's per-hop latency, ns."""
        return self.latency_ns / self.hops_per_step


@dataclass(frozen=True)
class SimNetwork:
    """The simulator's dimensions and how hieropt's groups map onto them.

    ``subdims[d]`` lists the simulator dimensions of hieropt dimension d (innermost first);
    ``placement[d][g]`` the ones a group of g NPUs on d spans (for the model-parallel phases and the
    weight-gradient phase, which may differ when both are partial: ``placement_wg``). With named
    groups (``mapping.groups``), ``layout`` places them (:mod:`hieropt.io.astrasim_groups`) and
    ``groups`` gives each group's simulator dimensions by name. """

    dims: tuple[SimDim, ...]
    subdims: tuple[tuple[int, ...], ...]
    placement: tuple[dict[int, tuple[int, ...]], ...]
    placement_wg: tuple[dict[int, tuple[int, ...]], ...]
    groups: dict[str, tuple[int, ...]] = field(default_factory=dict)
    layout: GroupLayout | None = None

    def involved_group(self, name: str) -> tuple[bool, ...]:
        """``involved_dim`` of a collective over the named group (or phase group) ``name``."""
        spans = self.groups[name]
        return tuple(i in spans for i in range(len(self.dims)))

    @property
    def npus(self) -> int:
        """Total NPUs (= the instance's)."""
        return math.prod(d.npus for d in self.dims)

    def involved(self, group: Sequence[int], phase: str) -> tuple[bool, ...]:
        """``involved_dim`` of a collective over ``group`` (sizes per hieropt dimension) in
        ``phase``."""
        out = [False] * len(self.dims)
        table = self.placement_wg if phase == "weight_grad" else self.placement
        for d, g in enumerate(group):
            if g > 1:
                for s in table[d][g]:
                    out[s] = True
        return tuple(out)

    def p2p_dim(self, dim: int) -> int:
        """The simulator dimension that carries pipeline transfers of hieropt dimension ``dim`` (its
        largest)."""
        return max(self.subdims[dim], key=lambda s: self.dims[s].npus)


def _split(
    p: int, low: set[int], high: set[int], where: str
) -> tuple[list[int], dict[int, tuple[int, ...]], dict[int, tuple[int, ...]]]:
    """Factor a dimension of p NPUs so every partial group is a run of whole factors.

    ``low``: partial sizes of model-parallel (forward / input-gradient) groups, ``high``: of
    data-parallel (weight-gradient) groups. One of each with g x h = p (a model-parallel group and
    its complement, as LIBRA maps GPT-3): factors (g, h), model-parallel innermost
    (hieropt.mapping's rule). Otherwise the sizes must form a divisibility chain g1 | g2 | ... | p:
    factors g1, g2/g1, ..., every group a prefix. Returns the factors and the factor indices of each
    group size (model-parallel, data-parallel).
    """
    if not low and not high:
        return [p], {}, {}
    if len(low) <= 1 and len(high) <= 1:
        g = next(iter(low), None)
        h = next(iter(high), None)
        if g is not None and h is not None and g * h == p:
            return [g, h], {g: (0,)}, {h: (1,)}
        if h is None and p % g == 0:
            return [g, p // g], {g: (0,)}, {}
        if g is None and p % h == 0:
            return [p // h, h], {}, {h: (1,)}
    chain = sorted(low | high) + [p]
    if all(b % a == 0 for a, b in zip(chain, chain[1:], strict=False)):
        fac = [chain[0]] + [b // a for a, b in zip(chain, chain[1:], strict=False)]
        prefix = {g: tuple(range(i + 1)) for i, g in enumerate(chain[:-1])}
        return fac, prefix, prefix
    raise InputError(
        where,
        None,
        f"groups of {', '.join(str(s) for s in chain[:-1])} NPUs on a dimension of {p} "
        "NPUs cannot be whole simulator dimensions (ASTRA-sim collectives span whole dimensions)",
        "use group sizes that divide each other, or a model-parallel size and its complement",
    )


def sim_network(
    instance: Instance, bw_gbps: Sequence[float], source: str = "ASTRA-sim export"
) -> SimNetwork:
    """The simulator network of ``instance`` at per-NPU bandwidths ``bw_gbps`` (GB/s, one per
    dimension).

    Raises:
        InputError: wrong number of bandwidths, a bandwidth not > 0 (the simulator needs one on
            every dimension), groups that cannot be whole simulator dimensions, ``halving_doubling``
            on a dimension whose simulator dimensions are not powers of two.
    """
    net = instance.network
    D = net.n_dims
    bw = [float(b) for b in bw_gbps]
    if len(bw) != D:
        raise InputError(
            source, with_flag("bw_gbps"), f"{len(bw)} bandwidths for {D} dimensions",
            f"give {D} values (GB/s)"
        )
    for d, b in enumerate(bw):
        if not math.isfinite(b) or b <= 0:
            raise InputError(
                source,
                f"bw[{d}]",
                f"{b:g} GB/s per NPU: ASTRA-sim needs a bandwidth > 0 on every dimension",
                f"bound dimension {d} from below (e.g. bounds = [{{dim = {d}, lower_gbps = "
                f"1}}]) or pass {with_flag('bw_gbps')}",
            )
    if any(job.mapping.groups for job in instance.jobs):
        return _check_links(_named_network(instance, bw, source), source)
    jobs = instance.jobs
    dims: list[SimDim] = []
    subdims, placement, placement_wg = [], [], []
    for d, dim in enumerate(net.dims):
        p = dim.npus
        low = {job.mapping.group(ph)[d] for job in jobs for ph in PHASES[:2]} - {1, p}
        high = {job.mapping.group("weight_grad")[d] for job in jobs} - {1, p}
        fac, lowmap, highmap = _split(p, low, high, f"{source}: dimension {d}")
        first = len(dims)
        for f in fac:
            _check_power(dim, d, f, source)
            dims.append(SimDim(d, dim.block, f, bw[d], dim.collective_algorithm, dim.latency_ns))
        ids = tuple(range(first, len(dims)))
        subdims.append(ids)
        full = {p: ids}
        placement.append({**{g: tuple(ids[i] for i in s) for g, s in lowmap.items()}, **full})
        placement_wg.append({**{g: tuple(ids[i] for i in s) for g, s in highmap.items()}, **full})
    simnet = SimNetwork(tuple(dims), tuple(subdims), tuple(placement), tuple(placement_wg))
    return _check_links(simnet, source)


def _check_power(dim, d: int, f: int, source: str) -> None:
    if dim.collective_algorithm == "halving_doubling" and f & (f - 1):
        raise InputError(source, f"network.dims[{d}].algorithm", f"halving_doubling on a simulator "
                         f"dimension of {f} NPUs: ASTRA-sim's halvingDoubling needs a power of two",
                         "use ring or direct on this dimension")


def _named_network(instance: Instance, bw: list[float], source: str) -> SimNetwork:
    """The simulator network of an instance with named groups: one simulator dimension per factor
    of :func:`~hieropt.io.astrasim_groups.group_layout`. A factor only the pipeline group spans
    carries sends only and gets the ``ring`` convention (one link of B, the hieropt step latency per
    hop), so that a send of S bytes takes S / B + latency, as hieropt's point-to-point model says,
    whatever the dimension's collective algorithm. A factor of a group that spans part of its
    dimension, priced by its links (``group_bandwidth`` ``links``), gets the share of B those links
    carry, B / g (:func:`hieropt.model.traffic.job_links`): a FullyConnected factor of f NPUs then
    has f - 1 links of B / (n - 1), the dimension's own, and a Ring factor B / 2 on a path."""
    from ..model.traffic import job_links

    layout = group_layout(instance, source)
    share = job_links(instance, instance.jobs[0])
    shared = {s for name, spans in layout.groups.items() if name != PIPELINE for s in spans}
    dims: list[SimDim] = []
    subdims = []
    for d, (dim, row) in enumerate(zip(instance.network.dims, layout.factors, strict=True)):
        first = len(dims)
        for name, f in row:
            sends_only = name == PIPELINE and len(dims) not in shared
            algo = "ring" if sends_only else dim.collective_algorithm
            if not sends_only:
                _check_power(dim, d, f, source)
            g = 1.0 if sends_only else share.get(name, (1.0,) * len(bw))[d]
            dims.append(SimDim(d, dim.block, f, bw[d], algo, dim.latency_ns, 1.0 / g))
        subdims.append(tuple(range(first, len(dims))))
    full = tuple({dim.npus: ids} for dim, ids in zip(instance.network.dims, subdims, strict=True))
    return SimNetwork(tuple(dims), tuple(subdims), full, full, dict(layout.groups), layout)


def _check_links(simnet: SimNetwork, source: str) -> SimNetwork:
    for s in simnet.dims:  # (refused here, not written as inf: hieropt's reader refuses inf)
        if not (math.isfinite(s.link_gib) and s.link_gib > 0):
            raise InputError(
                source,
                f"bw[{s.parent}]",
                f"{s.bw_gbps:g} GB/s per NPU gives a link bandwidth of "
                f"{s.link_gib:g} GB/s (2^30) on the simulator, not a finite number > 0",
                "give a bandwidth within the range of a double",
            )
    return simnet


@dataclass(frozen=True)
class SharedDimension:
    """A group whose collectives span several simulator dimensions cut from one hieropt dimension
    (:func:`shared_dimension`) whose per-NPU bandwidths add up to more than that dimension's B: the
    simulator, overlapping those simulator dimensions with several chunks per collective, would
    give the NPU more bandwidth there than the dimension has.

    Attributes:
        group: the group's name (a named group, or the phase and workload whose group it is).
        parent: the hieropt dimension.
        sim_dims: how many of its simulator dimensions the group spans (>= 2).
        bandwidth: their per-NPU bandwidths added, in units of the dimension's B (> 1; the sum of
            their :attr:`SimDim.share`).
    """

    group: str
    parent: int
    sim_dims: int
    bandwidth: float

    def __str__(self) -> str:
        return (f"{self.group} spans {self.sim_dims} simulator dimensions cut from hieropt "
                f"dimension {self.parent}, together {self.bandwidth:.3g} x its per-NPU bandwidth")


def collective_groups(
    instance: Instance, simnet: SimNetwork
) -> tuple[tuple[str, tuple[int, ...], tuple[bool, ...]], ...]:
    """Every distinct group that carries a collective (not a point-to-point send) in ``instance``'s
    workloads (every job and pipeline stage), as the trace writers place it: ``(name, sizes per
    hieropt dimension, involved_dim on simnet)``, ``name`` the named group or else the phase and
    its workload (``"forward of workload 'dlrm'"``)."""
    from ..spec import Collective

    named = bool(simnet.groups)
    out: dict[tuple, tuple[str, tuple[int, ...], tuple[bool, ...]]] = {}
    for job in instance.jobs:
        for stage in job.workload.stages:
            t = stage.table
            for j, phase in enumerate(PHASES):
                for lay in range(t.collective.shape[0]):
                    if Collective(t.collective[lay, j]) in (Collective.NONE, Collective.P2P) or \
                            not t.size_bytes[lay, j] > 0:
                        continue
                    name = t.group[lay, j]
                    sizes = tuple(job.mapping.group(phase, name))
                    label = name or f"{phase} of workload {job.workload.name!r}"
                    if (label, sizes) not in out:
                        involved = (simnet.involved_group(name or phase) if named
                                    else simnet.involved(sizes, phase))
                        out[label, sizes] = (label, sizes, involved)
    return tuple(out.values())


def shared_dimension(instance: Instance, simnet: SimNetwork) -> SharedDimension | None:
    """The first group of ``instance`` whose collectives span several simulator dimensions of one
    hieropt dimension whose per-NPU bandwidths (B x :attr:`SimDim.share` each) add up to more than
    its B, or None. hieropt prices a collective over such a group as one collective on that
    dimension at B; the simulator runs it hierarchically over the simulator dimensions, which gives
    the same time with one chunk per collective (one simulator dimension after another, each at its
    share of B) but, with several chunks, overlaps them, each at its share: the NPU then sends at
    their sum, more than the dimension's B (e.g. a DP x CP group of 4 on a Switch of 4, split into
    2 x 2: 2 B). Under ``group_bandwidth = "links"`` a FullyConnected dimension's parts carry
    disjoint links, whose bandwidths add up to at most B: not shared."""
    for name, _, involved in collective_groups(instance, simnet):
        for d, ids in enumerate(simnet.subdims):
            spanned = [s for s in ids if involved[s]]
            total = sum(simnet.dims[s].share for s in spanned)
            if len(spanned) > 1 and total > 1 + 1e-9:
                return SharedDimension(name, d, len(spanned), total)
    return None


def _flow(values) -> str:
    return "[ " + ", ".join(str(v) for v in values) + " ]"


def network_yml(simnet: SimNetwork, title: str = "") -> str:
    """The analytical network YAML of ``simnet`` (bandwidth per link, GB/s with 1 GB = 2^30 bytes;
    latency ns per hop), with a comment per simulator dimension giving its conversion."""
    lines = [
        f"# ASTRA-sim 2.0 analytical network written by hieropt{' for ' + title if title else ''}.",
        f"{EXPORT_MARK} link = B (ring, halvingDoubling) or B/(p-1) (direct);",
        "# latency per hop = per-step latency / hops per step (Switch 2 hops); GB here = "
        "2^30 bytes.",
    ]
    for i, s in enumerate(simnet.dims):
        lines.append(
            f"#   sim dim {i} (hieropt dim {s.parent}): {s.block} {s.npus}, B = "
            f"{s.bw_gbps:.6g} GB/s per NPU"
            + (f" x share {s.share!r} (the group's links)" if s.share != 1.0 else "") + ", "
            f"{s.implementation}/{s.all_to_all_implementation}, link {s.link_gbps:.6g} GB/s "
            "(1e9) = "
            f"{s.link_gib:.6g} GB/s (2^30), {s.link_latency_ns:.6g} ns per hop"
        )
    lines += [f"topology: {_flow(s.block for s in simnet.dims)}",
              f"npus_count: {_flow(s.npus for s in simnet.dims)}",
              f"bandwidth: {_flow(repr(s.link_gib) for s in simnet.dims)}",
              f"latency: {_flow(repr(s.link_latency_ns) for s in simnet.dims)}"]
    return "\n".join(lines) + "\n"


def exported_dims(text: str) -> tuple[tuple[int, str, str, int, float], ...] | None:
    """The simulator dimensions a network file written by :func:`network_yml` describes in its
    comments, as ``(hieropt dimension, hieropt algorithm, block, NPUs, share of B)`` in file order
    (:attr:`SimDim.share`: 1 unless the comment gives ``x share S``); ``None``
    when ``text`` has no :data:`EXPORT_MARK` line (a plain analytical network file).

    Raises:
        ValueError: the file has the mark but its ``sim dim`` comment lines are not numbered 0, 1,
            ... in order, or name an algorithm hieropt does not export.
    """
    lines = text.splitlines()
    if not any(line.startswith(EXPORT_MARK) for line in lines):
        return None
    algorithm = {v: k for k, v in IMPLEMENTATION.items()}
    out = []
    for line in lines:
        m = _SIM_DIM_LINE.match(line)
        if m is None:
            continue
        i, parent, block, npus, impl = int(m[1]), int(m[2]), m[3], int(m[4]), m[5]
        if i != len(out):
            raise ValueError(f"comment 'sim dim {i}' where 'sim dim {len(out)}' was expected")
        if impl not in algorithm:
            raise ValueError(
                f"comment 'sim dim {i}' names the algorithm {impl!r}, which hieropt does not export"
            )
        share = _SHARE.search(line)
        out.append((parent, algorithm[impl], block, npus, float(share[1]) if share else 1.0))
    return tuple(out)


def system_config(simnet: SimNetwork, chunks: int = 1) -> dict:
    """The system JSON: per-dimension collective algorithms, hierarchical ``localBWAware``,
    ``chunks`` splits per collective, one active chunk per dimension, endpoint delay 1 ns (0 trips
    an assertion), roofline compute at 1 TFLOP/s peak so ``num_ops`` / 1000 = ns
    (:func:`hieropt.io.chakra.comp_num_ops`)."""
    if chunks < 1:
        raise InputError(
            "ASTRA-sim export", "chunks", f"{chunks} chunks per collective", "use 1 or more"
        )
    impl = [s.implementation for s in simnet.dims]
    return {
        "scheduling-policy": "FIFO",
        "endpoint-delay": 1,
        "active-chunks-per-dimension": 1,
        "preferred-dataset-splits": int(chunks),
        "all-reduce-implementation": impl,
        "reduce-scatter-implementation": impl,
        "all-gather-implementation": impl,
        "all-to-all-implementation": [s.all_to_all_implementation for s in simnet.dims],
        "collective-optimization": "localBWAware",
        "local-mem-bw": 1000000,
        "boost-mode": 0,
        "roofline-enabled": 1,
        "peak-perf": 1,
    }


__all__ = [
    "EXPORT_MARK",
    "IMPLEMENTATION",
    "SimDim",
    "SimNetwork",
    "SharedDimension",
    "collective_groups",
    "shared_dimension",
    "exported_dims",
    "sim_network",
    "network_yml",
    "system_config",
]
