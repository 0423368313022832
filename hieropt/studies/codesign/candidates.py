"""The candidates of a co-design space: (plan, network shape, placement of the plan's groups), each
with a proven lower bound on its objective (:mod:`.bounds`), generated lazily in best-bound-first
order.

**Streaming.** Under ``all_placements`` a space has millions of candidates (the GPT-3 space, 2.2
million); they are never held at once. :class:`CodesignEnumeration` keeps the fitting plans, the
shapes, each plan's time bound per dimension count, each shape's cost floor, the number of
placements of each (group sizes, shape) pair, and the order of the (plan, shape) pairs by their
bound: **8 bytes per (plan, shape) pair** (one int64), whatever the number of placements. A pair's
candidates (one per placement; all share its bound) are made when the search reaches it: its
placements are generated then (the last few hundred placement lists are cached: plans with the same
group sizes share them). Order: bound, then id (the pairs by ``"<plan> | <shape> | "``, a pair's
placements by their text).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ...cache import Table
from ...errors import InputError
from ...model.groups import Placement, place_lowest, placements, plan_groups
from ...spec import Network
from ...spec.space import ShapeSpace, SpaceJob
from ...workloads.llm.lower import lower_stage
from ...workloads.llm.params import LLMParams
from ...workloads.llm.space import CodesignSpace
from ...workloads.llm.step import build_step
from ..explore.enumerate import enumerate_shapes, no_shape, shape_id, shape_network
from .bounds import (
    bandwidth_cap,
    bandwidth_floor,
    cost_floor_usd,
    objective_bound,
    plan_compute_ns,
    plan_time_bounds,
    plan_volume_bytes,
    time_bound_ns,
)
from .plans import PlanEnumeration, enumerate_plans


@dataclass(frozen=True)
class CodesignCandidate:
    """One (plan, shape, placement): what one solve is about.

    Attributes:
        id: ``"<plan> | <shape> | <placement>"``, e.g. ``"tp8 cp1 pp8 dp64 ... | node:R4 pod:SW32 |
            tp 4x2 dp 1x32 ..."``.
        plan_id, shape_id: the parts of the id.
        params: the plan (model, NPU, precision included).
        network: the shape as a network.
        placement: the group sizes per dimension.
        lower_bound: the proven bound on the candidate's objective (:mod:`.bounds`; ns for
            performance).
        compute_ns: the time bound T0 + V / S_cap of the candidate (ns), whatever the objective.
        memory_bytes: the plan's fullest stage, bytes per NPU.
    """

    id: str
    plan_id: str
    shape_id: str
    params: LLMParams
    network: Network
    placement: Placement
    lower_bound: float
    compute_ns: float
    memory_bytes: float


def shapes_of(
    space: CodesignSpace, placeholder, npus: int | None = None
) -> list[tuple[str, Network]]:
    """(id, network) of the space's fixed network, or of every shape of its shape space on ``npus``
    NPUs (default: the space's only cluster size; explore's enumeration)."""
    if space.network is not None:
        return [
            ("fixed " + " x ".join(f"{d.block}{d.npus}" for d in space.network.dims), space.network)
        ]
    shim = ShapeSpace(
        name=space.name,
        npus=npus or space.sizes[0],
        min_dims=space.min_dims,
        max_dims=space.max_dims,
        levels=space.levels,
        switch_only_at_top=space.switch_only_at_top,
        jobs=(SpaceJob(workload=placeholder),),
        mapping_rule="header",
        cost=space.cost,
        objective="performance",
        training_loop="no_overlap",
    )
    return [(shape_id(shim, s), shape_network(shim, s)) for s in enumerate_shapes(shim)]


def _candidate(
    cid: str,
    plan: str,
    shape: str,
    params: LLMParams,
    network: Network,
    placement: Placement,
    bound: float,
    t_lb: float,
    memory_bytes: float,
) -> CodesignCandidate:
    """``CodesignCandidate(...)`` without the frozen ``__init__``'s per-field ``__setattr__`` (its
    ``__dict__`` set at once, as ``copy.copy`` fills a copy's): 2.5x faster, and a space has 10^4 -
    10^5 candidates."""
    c = object.__new__(CodesignCandidate)
    object.__setattr__(
        c,
        "__dict__",
        {
            "id": cid,
            "plan_id": plan,
            "shape_id": shape,
            "params": params,
            "network": network,
            "placement": placement,
            "lower_bound": bound,
            "compute_ns": t_lb,
            "memory_bytes": memory_bytes,
        },
    )
    return c



PLACEMENTS_CACHED = 512
"""Placement lists (of one (shape sizes, group sizes) pair each) an enumeration keeps for reuse by
later plans."""


class CodesignEnumeration:
    """The plans (classified), the shapes, and the candidates in best-bound-first order, made on
    demand (module docstring).

    Attributes:
        plans: the plan enumeration (invalid ones by reason, too big, fitting).
        shapes: (shape id, network) of every shape.
        count: the number of candidates.
        pairs: the number of (plan, shape) pairs with at least one placement.
        skipped: reason -> number of plan-shape pairs the mapping rule cannot place (no candidate).
        no_shape: cluster size -> why no shape of the space holds it (with the fix; set by
            :func:`enumerate_candidates`): a size with a plan that fits but no shape is skipped,
            the others searched.
    """

    no_shape: dict[int, str]

    def __init__(
        self, space: CodesignSpace, plans: PlanEnumeration, shapes: list[tuple[str, Network]]
    ):
        self.space, self.plans = space, plans
        self.no_shape = {}
        self._placements = Table(PLACEMENTS_CACHED)
        self.fitting = sorted(plans.fitting, key=lambda pc: pc.id + " | ")
        self.shapes = tuple(sorted(shapes, key=lambda sn: sn[0] + " | "))
        self._sizes = [tuple(d.npus for d in net.dims) for _, net in self.shapes]
        self._plan_npus = np.array([pc.params.plan.npus for pc in self.fitting], dtype=np.int64)
        self._shape_npus = np.array([net.npus_total for _, net in self.shapes], dtype=np.int64)
        dims = sorted({net.n_dims for _, net in self.shapes})
        self._dcol = np.array([dims.index(net.n_dims) for _, net in self.shapes], dtype=np.int64)
        caps = [bandwidth_cap(space, n) for n in dims]
        self._T = np.array(
            [
                [
                    time_bound_ns(
                        plan_time_bounds(pc.params, build_step(pc.params, names=False)), c
                    )
                    for c in caps
                ]
                for pc in self.fitting
            ],
            dtype=float,
        ).reshape(len(self.fitting), len(dims))
        self._C = np.array([cost_floor_usd(space, net) for _, net in self.shapes], dtype=float)
        self._K, self._F, self._R = _run_terms(space, self._shape_npus)
        groups: dict[tuple, int] = {}
        self._gkey = np.array(
            [groups.setdefault(tuple(plan_groups(pc.params)), len(groups)) for pc in self.fitting],
            dtype=np.int64,
        )
        self._groups = tuple(groups)
        self._count, skipped = self._placement_counts()
        per_group = np.bincount(self._gkey, minlength=len(self._groups))
        self.skipped = dict(_sum_by(skipped, per_group))
        self.count = int((per_group @ self._count).sum()) if len(self._groups) else 0
        self._order = self._sorted_pairs()
        self.pairs = len(self._order)

    def _placement_counts(self) -> tuple[np.ndarray, dict[tuple[int, int], str]]:
        """(G x S) placements of each group-size tuple on each shape, and why a pair has none."""
        out = np.zeros((len(self._groups), len(self.shapes)), dtype=np.int64)
        why: dict[tuple[int, int], str] = {}
        for g, groups in enumerate(self._groups):
            n = math.prod(k for _, k in groups)
            for s, sizes in enumerate(self._sizes):
                if math.prod(sizes) != n:  # (another cluster size: no pair)
                    continue
                options = self._options(sizes, groups)
                if isinstance(options, str):
                    why[g, s] = options
                else:
                    out[g, s] = len(options)
        return out, why

    def _options(
        self, sizes: tuple[int, ...], groups: tuple
    ) -> tuple[tuple[Placement, str], ...] | str:
        hit = self._placements.get(key := (sizes, groups))
        if hit is None:
            hit = self._placements.put(key, _options(self.space.mapping_rule, sizes, groups))
        return hit

    def bounds(self, p: int, s: int) -> tuple[float, float]:
        """(objective bound, time bound ns) of plan ``p`` (index into :attr:`fitting`) on shape
        ``s``."""
        t = float(self._T[p, self._dcol[s]])
        c, k, f = float(self._C[s]), float(self._K[s]), float(self._F[s])
        return _objective(self.space.objective, t, c, k, f, float(self._R[s])), t

    def _bound_matrix(self) -> np.ndarray:
        t = self._T[:, self._dcol]  # (P, S)
        c, k, f = self._C[None, :], self._K[None, :], self._F[None, :]
        bound = _objective(self.space.objective, t, c, k, f, self._R[None, :])
        return np.broadcast_to(bound, t.shape)

    def size_bounds(self) -> dict[int, float]:
        """Cluster size (NPUs) -> the smallest objective bound of its candidates (a size without
        a candidate is absent): no candidate of a size whose smallest bound is at least the best
        found can beat it."""
        if not self.pairs:
            return {}
        p, s = np.divmod(self._order, len(self.shapes))
        # (the order is by bound: a size's first pair has its least bound)
        npus, first = np.unique(self._shape_npus[s], return_index=True)
        bound = self._bound_matrix()[p[first], s[first]]
        return {int(n): float(b) for n, b in zip(npus, bound, strict=True)}

    def size_ends(self) -> dict[int, int]:
        """Cluster size (NPUs) -> the position of its last pair in the best-bound-first order (a
        size without a candidate is absent): from the next position on it has no candidate."""
        if not self.pairs:
            return {}
        sizes = self._shape_npus[self._order % len(self.shapes)][::-1]
        npus, first = np.unique(sizes, return_index=True)
        return {int(n): self.pairs - 1 - int(i) for n, i in zip(npus, first, strict=True)}

    def dims_floor(self, start: int, target: float | None = None) -> dict[int, float]:
        """Dimension count -> the least objective bound of the candidates of the pairs from
        position ``start`` on that are not infeasible by their time bound (finite, and within
        ``target`` ns when given); a count without one is absent. Read off the order, without
        making the candidates."""
        if start >= self.pairs:
            return {}
        p, s = np.divmod(self._order[start:], len(self.shapes))
        t = self._T[p, self._dcol[s]]
        ok = ~(np.isinf(t) | np.isinf(self._C[s]))
        if target is not None:
            ok &= t <= target
        p, s = p[ok], s[ok]
        dims = np.array([net.n_dims for _, net in self.shapes], dtype=np.int64)[s]
        # (the order is by bound: a count's first pair has its least bound)
        keys, first = np.unique(dims, return_index=True)
        bound = self._bound_matrix()[p[first], s[first]]
        return {int(d): float(b) for d, b in zip(keys, bound, strict=True)}

    def _sorted_pairs(self) -> np.ndarray:
        """Flat indices p S + s of the pairs with a placement, by (bound, plan id, shape id) (a
        stable sort of the plan-major index: plans and shapes are held in id order)."""
        if not len(self.fitting) or not len(self.shapes):
            return np.zeros(0, dtype=np.int64)
        bound = self._bound_matrix().ravel()
        same = self._plan_npus[:, None] == self._shape_npus[None, :]
        live = np.flatnonzero(((self._count[self._gkey] > 0) & same).ravel())
        return live[np.argsort(bound[live], kind="stable")]

    def cost_floors(self) -> dict[str, tuple[int, float]]:
        """Shape id -> (its NPUs, C_lb): the least network cost of any design of that shape
        under the space's rows, $ (:func:`~hieropt.studies.codesign.bounds.cost_floor_usd`)."""
        return {sid: (int(net.npus_total), float(c))
                for (sid, net), c in zip(self.shapes, self._C, strict=True)}

    @property
    def frontier_bytes(self) -> int:
        """Bytes of the pair order, the one array whose size grows with the space (8 per (plan,
        shape) pair)."""
        return int(self._order.nbytes)

    def pair(self, pos: int) -> tuple[int, int]:
        """(plan index, shape index) of the pair at position ``pos`` of the order."""
        p, s = divmod(int(self._order[pos]), len(self.shapes))
        return p, s

    def pair_candidates(self, pos: int) -> list[CodesignCandidate]:
        """The candidates of the pair at position ``pos`` (one per placement, in id order)."""
        p, s = self.pair(pos)
        pc = self.fitting[p]
        sid, net = self.shapes[s]
        bound, t_lb = self.bounds(p, s)
        mem = pc.memory.peak.total_bytes
        prefix = f"{pc.id} | {sid} | "
        options = self._options(self._sizes[s], self._groups[self._gkey[p]])
        return [_candidate(prefix + text, pc.id, sid, pc.params, net, dict(pl), bound, t_lb, mem)
                for pl, text in options]

    def candidates(self, start: int = 0) -> Iterator[CodesignCandidate]:
        """Every candidate of the pairs from position ``start`` on, best bound first (made as they
        are reached)."""
        for pos in range(start, self.pairs):
            yield from self.pair_candidates(pos)

    def least_time_bound(self) -> tuple[float, int] | None:
        """(the least finite time bound over every candidate, ns; the position of its pair in the
        order), or None when no candidate has a finite one. No candidate's iteration time is below
        it (each bound is proven, :mod:`.bounds`): the fastest the space can be. Read off the
        bounds, without making the candidates."""
        if not self.pairs:
            return None
        p, s = np.divmod(self._order, len(self.shapes))
        t = np.where(np.isinf(self._C[s]), np.inf, self._T[p, self._dcol[s]])
        i = int(np.argmin(t))  # (the first of equal bounds: the order's)
        return (float(t[i]), i) if np.isfinite(t[i]) else None

    def tail(self, start: int, target: float | None = None) -> tuple[int, int, int]:
        """(candidates, of which infeasible by a finite time bound above ``target``, of which with
        an infinite time bound) of the pairs from position ``start`` on, counted without making
        them."""
        if start >= self.pairs:
            return 0, 0, 0
        p, s = np.divmod(self._order[start:], len(self.shapes))
        n = self._count[self._gkey[p], s]
        t = self._T[p, self._dcol[s]]
        endless = np.isinf(t) | np.isinf(self._C[s])
        late = 0 if target is None else int(n[(t > target) & ~endless].sum())
        return int(n.sum()), late, int(n[endless].sum())


def _sum_by(skipped: dict[tuple[int, int], str], per_group: np.ndarray) -> Counter:
    out: Counter = Counter()
    for (g, _), reason in skipped.items():
        out[reason] += int(per_group[g])
    return out


def _objective(objective: str, t_lb, c_lb, k=1.0, f=0.0, r=0.0):
    """The objective bound from the time and cost bounds (floats or arrays;
    :func:`.bounds.objective_bound`): ``k`` and ``f`` are min_run_cost's $ per (ns x $) and
    fixed $, ``r`` its $ per ns on a rented cluster (``k`` 0: the network's price does not enter;
    :func:`_run_terms`)."""
    if objective == "performance":
        return t_lb
    if objective == "performance_per_cost":
        return t_lb * c_lb
    if objective != "min_run_cost":
        return c_lb
    with np.errstate(invalid="ignore"):  # (k 0 and f inf where rented: that side is not taken)
        return np.where(k > 0, k * t_lb * (f + c_lb), r * t_lb) if np.ndim(k) else (
            k * t_lb * (f + c_lb) if k > 0 else r * t_lb)


def _run_terms(space: CodesignSpace,
               npus: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per shape (its NPUs ``npus``) min_run_cost's $ per (ns x $), fixed $ ($ of a run =
    k T (f + C), :func:`hieropt.model.run_cost.terms_of`, increasing in T and C) and, on a rented
    cluster (k = 0), $ per ns (a run = r T); ones and zeros for the other objectives."""
    if space.objective != "min_run_cost":
        return np.ones(len(npus)), np.zeros(len(npus)), np.zeros(len(npus))
    from ...model.run_cost import terms_of

    b = space.base
    per = b.plan.global_batch_size * b.model.sequence_length
    terms = {n: terms_of(space.cluster, n, space.tokens, per) for n in sorted(set(npus.tolist()))}
    return (np.array([terms[n].usd_per_ns_usd for n in npus.tolist()], dtype=float),
            np.array([terms[n].fixed_usd for n in npus.tolist()], dtype=float),
            np.array([terms[n].usd_per_ns for n in npus.tolist()], dtype=float))


def _options(
    rule: str, sizes: tuple[int, ...], groups: tuple
) -> tuple[tuple[Placement, str], ...] | str:
    """(placement, its text) of every placement ``rule`` gives ``groups`` on ``sizes``, in text
    order, or why there is none (a reason that depends on the sizes and groups only). Shared: the
    caller copies a placement it keeps."""
    if rule == "lowest":
        try:
            pl = place_lowest(sizes, groups, "placement")
        except InputError as e:
            return e.problem
        return ((pl, _placement_text(pl)),)
    options = sorted(
        ((pl, _placement_text(pl)) for pl in placements(sizes, groups)), key=lambda o: o[1]
    )
    return tuple(options) or "no placement of the groups on this shape"


def _placement_text(pl: Placement) -> str:
    return " ".join(f"{k} {'x'.join(map(str, v))}" for k, v in pl.items())


def enumerate_candidates(space: CodesignSpace) -> CodesignEnumeration:
    """The candidates of ``space`` with their lower bounds, best bound first, made on demand (module
    docstring).

    Raises:
        InputError: the network family has no shape on the space's size, or on none of its sizes
            with a plan that fits (a size without one is skipped, :attr:`CodesignEnumeration.
            no_shape`, as a size ``nic_npus`` does not divide is: :func:`nic_problem`).
    """
    nic = {n: nic_problem(space, n) for n in space.sizes if n % space.nic_npus}
    per_size = [enumerate_plans(space.base, n, space.plans, space.custom_layouts)
                for n in space.sizes if n not in nic]
    fitting = [pe.fitting[0] for pe in per_size if pe.fitting]
    placeholder = lower_stage(fitting[0].step) if fitting else None
    shapes: list[tuple[str, Network]] = []
    missing: dict[int, InputError] = {}
    for n, pe in zip([n for n in space.sizes if n not in nic], per_size, strict=True):
        if not pe.fitting and space.network is None:
            continue
        found = shapes_of(space, placeholder, n)
        if not found:
            blocked = space.switch_only_at_top and bool(shapes_of(
                space.model_copy(update={"switch_only_at_top": False}), placeholder, n))
            missing[n] = no_shape(space.name, space.min_dims, space.max_dims, n, blocked)
        shapes += found
    if missing and not shapes:
        raise _no_size_shape(space, missing)
    enum = CodesignEnumeration(space, PlanEnumeration.merged(per_size), shapes)
    enum.no_shape = {**{n: f"{e.problem}; fix: {e.fix}" for n, e in missing.items()}, **nic}
    enum.no_shape = {n: enum.no_shape[n] for n in space.sizes if n in enum.no_shape}
    return enum


def nic_problem(space: CodesignSpace, npus: int) -> str:
    """Why a cluster size of ``npus`` NPUs that the space's ``nic_npus`` does not divide is skipped
    (the NICs of a node are bought together, so its NIC count is not whole), with the fix."""
    return (f"the space's nic_npus = {space.nic_npus} does not divide the {npus:,} NPUs (a node's "
            f"NICs are bought together); fix: drop {npus} from the cluster sizes (npus, --sizes) "
            "or give nic_npus a node size that divides it")


def _no_size_shape(space: CodesignSpace, missing: dict[int, InputError]) -> InputError:
    """The error of a space none of whose sizes with a fitting plan has a shape (``missing``: size
    -> its :func:`~hieropt.studies.explore.enumerate.no_shape` error): that error itself for one
    size, else one naming every such size (the Switch rule as the cause when it is for each)."""
    if len(missing) == 1:
        return next(iter(missing.values()))
    blocked = all(e.field == "switch_only_at_top" for e in missing.values())
    first, e = next(iter(missing.items()))
    if not blocked:
        e = no_shape(space.name, space.min_dims, space.max_dims, first)
    sizes = ", ".join(f"{n:,}" for n in missing)
    return InputError(
        space.name, e.field,
        e.problem.replace(f"multiplies to {first} NPUs", f"multiplies to any of the cluster sizes "
                          f"{sizes} NPUs (those with a plan that fits)"),
        f"{e.fix}; or list cluster sizes the levels can hold (npus, --sizes)")


__all__ = [
    "CodesignCandidate",
    "CodesignEnumeration",
    "enumerate_candidates",
    "plan_compute_ns",
    "plan_volume_bytes",
    "plan_time_bounds",
    "time_bound_ns",
    "bandwidth_cap",
    "bandwidth_floor",
    "objective_bound",
    "cost_floor_usd",
    "shapes_of",
    "PLACEMENTS_CACHED",
]
