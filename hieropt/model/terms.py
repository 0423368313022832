"""The time model's algebraic form, shared by every training loop: collective terms with exact
aggregation, linear weights and max nodes (:class:`TimeModel`), and the builder the loops of
:mod:`hieropt.model.loops` fill."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..cache import Same, current
from .node_levels import node_levels, node_plan, node_rows, node_values, node_values_batch
from .rows import direction_key, direction_rows, distinct_rows, unique_rows

Ref = tuple[int, float]
"""A reference to collective term k with coefficient a (the collective is a times term k)."""


@dataclass(frozen=True)
class Piece:
    """One affine piece of a max node: ``const_ns + sum a * tau_k + sum b * y_u`` (earlier nodes u
    only)."""

    const_ns: float
    terms: tuple[Ref, ...]
    nodes: tuple[tuple[int, float], ...] = ()


@dataclass(frozen=True)
class TimeModel:
    """T(B) = ``constant_ns + sum_k term_weights[k] tau_k + sum_v node_weights[v] y_v`` (ns), where
    ``tau_k = max_d (terms_bytes[k, d] / B_d + terms_latency_ns[k, d])`` (or the sum over d when
    ``dimension_mode`` is ``sequential``) and ``y_v = max over the pieces of node v``.

    Exact aggregation: collectives with proportional (bytes, latency) rows share one term; terms
    without latency that only enter linearly carry their total weight in ``terms_bytes`` (weight 1),
    so K does not grow with the layer count under ``no_overlap``.

    Attributes:
        constant_ns: the part of T that does not depend on bandwidth (compute, and compute repeated
            by the loop).
        terms_bytes: (K, D) bytes per term and dimension.
        terms_latency_ns: (K, D) latency per term and dimension, ns.
        term_weights: (K,) linear weights.
        nodes: the max nodes, each a tuple of :class:`Piece`.
        node_weights: (V,) weights of the nodes in T (0 for nodes only referenced by later nodes).
        dimension_mode: ``concurrent`` or ``sequential``.
        n_collectives: collectives issued per iteration before aggregation (all workloads).
    """

    constant_ns: float
    terms_bytes: np.ndarray
    terms_latency_ns: np.ndarray
    term_weights: np.ndarray
    nodes: tuple[tuple[Piece, ...], ...]
    node_weights: np.ndarray
    dimension_mode: str
    n_collectives: int

    @property
    def compute_ns(self) -> float:
        """Alias of ``constant_ns``: the bandwidth-independent part of T (ns); a lower bound on
        T."""
        return self.constant_ns

    @property
    def n_dims(self) -> int:
        """Number of dimensions D."""
        return self.terms_bytes.shape[1]

    @cached_property
    def carries_traffic(self) -> np.ndarray:
        """Boolean (D,): whether any collective puts bytes on dimension d (read-only; computed once
        per model)."""
        out = (self.terms_bytes > 0).any(axis=0)
        out.flags.writeable = False
        return out

    @property
    def is_simple(self) -> bool:
        """True for LIBRA's form: T = constant + sum_k max_d bytes/B (no nodes, no latency,
        concurrent, weights 1)."""
        return (
            not self.nodes
            and not self.terms_latency_ns.any()
            and self.dimension_mode == "concurrent"
            and bool(np.all(self.term_weights == 1.0))
        )

    def term_times_ns(self, bw_gbps: np.ndarray) -> np.ndarray:
        """tau_k at ``bw_gbps`` (shape (K,), ns); inf where a dimension with traffic has B = 0."""
        return collective_times(
            self.terms_bytes,
            self.terms_latency_ns,
            np.asarray(bw_gbps, dtype=float),
            self.dimension_mode,
        )

    def node_values_ns(self, tau: np.ndarray) -> np.ndarray:
        """y_v for term times ``tau`` (K,) ns: shape (V,)
        (:func:`hieropt.model.node_levels.node_values` on the nodes' flat plan, built once)."""
        return node_values(self._node_plan, np.asarray(tau, dtype=float))

    def time_ns(self, bw_gbps: np.ndarray) -> float:
        """T(B) in ns for per-NPU bandwidths ``bw_gbps`` (shape (D,), GB/s); inf if a loaded
        dimension has B = 0. With max nodes, the last :data:`MODEL_TIMES` values of a model are
        kept in the active cache (:mod:`hieropt.cache`) by the bandwidths' values (a solve asks
        for one design's time several times: its line search, its candidates, its bounds)."""
        if not self.nodes:
            return self._time_ns(bw_gbps)
        bw = np.asarray(bw_gbps, dtype=float)
        return current().memo("model times", (Same(self), bw.shape, bw.tobytes()),
                              lambda: self._time_ns(bw), MODEL_TIMES)

    def _time_ns(self, bw_gbps: np.ndarray) -> float:
        """:meth:`time_ns` itself (no look-up)."""
        tau = self.term_times_ns(bw_gbps)
        w = self.term_weights
        total = (
            self.constant_ns + float(np.dot(w, np.where(w > 0, tau, 0.0)))
            if tau.size
            else self.constant_ns
        )
        if self.nodes:
            # (nodes of weight 0, only referenced by later ones, may be inf: no 0 x inf)
            nw = self.node_weights
            total += float(np.dot(nw, np.where(nw > 0, self.node_values_ns(tau), 0.0)))
        return total

    def times_ns(self, bw_gbps: np.ndarray) -> np.ndarray:
        """T(B) in ns for a batch of designs ``bw_gbps`` (shape (S, D), GB/s): shape (S,), inf where
        a loaded dimension has B = 0. The same formula as :meth:`time_ns`, vectorised over the
        designs (a line search evaluates many points at once); the sums may round differently in the
        last bit."""
        bw = np.asarray(bw_gbps, dtype=float)
        tau = collective_times(
            self.terms_bytes, self.terms_latency_ns, bw[:, None, :], self.dimension_mode
        )
        w = self.term_weights
        total = np.full(bw.shape[0], self.constant_ns)
        if w.size:
            total = total + np.where(w > 0, tau, 0.0) @ w
        if self.nodes:
            y = node_values_batch(self._node_levels, len(self.nodes), tau)
            nw = self.node_weights
            total = total + np.where(nw[:, None] > 0, y, 0.0).T @ nw
        return total

    @cached_property
    def _node_plan(self) -> tuple:
        """:func:`hieropt.model.node_levels.node_plan` of the nodes, built once."""
        return node_plan(self.nodes)

    @cached_property
    def fingerprint(self) -> bytes:
        """A digest (BLAKE2b, 32 bytes) of everything the model states: its arrays, constant, mode,
        collective count and every piece of every max node (constant and references in order),
        computed once per model. Two models with equal fingerprints give the same T and the same
        LP, operation for operation."""
        h = hashlib.blake2b(digest_size=32)
        h.update(repr((self.constant_ns, self.dimension_mode, self.n_collectives,
                       self.terms_bytes.shape)).encode())
        for a in (self.terms_bytes, self.terms_latency_ns, self.term_weights, self.node_weights):
            h.update(np.ascontiguousarray(a).tobytes())
        flat: list[float] = []
        put, more = flat.append, flat.extend
        for pieces in self.nodes:
            put(len(pieces))
            for p in pieces:
                terms, refs = p.terms, p.nodes
                put(p.const_ns)
                put(len(terms))
                for r in terms:
                    more(r)
                put(len(refs))
                for r in refs:
                    more(r)
        h.update(np.array(flat, dtype=float).tobytes())
        return h.digest()

    @cached_property
    def node_rows(self) -> tuple:
        """The max nodes as the epigraph LP's node rows
        (:func:`hieropt.model.node_levels.node_rows`), built once per model (a re-scaled LP of the
        same model reuses them)."""
        return node_rows(self.nodes, self.terms_bytes.shape[0])

    @cached_property
    def _node_levels(self) -> tuple:
        """:func:`hieropt.model.node_levels.node_levels` of the nodes (flat arrays, by level), built
        once."""
        return node_levels(self.nodes)


MODEL_TIMES = 64
"""Values of T :meth:`TimeModel.time_ns` keeps in the active cache (the last used)."""


def collective_times(
    traffic: np.ndarray, latency: np.ndarray, bw: np.ndarray, mode: str
) -> np.ndarray:
    """Time of each collective row, ns: max or sum over d of bytes/B + latency; shape: that of
    ``traffic`` (rows, D) broadcast with ``bw`` ((D,), or (S, 1, D) for a batch of S designs),
    less its last axis, also when there are no rows ((S, 0) for a batch)."""
    if traffic.size == 0:
        return np.zeros(np.broadcast_shapes(traffic.shape, bw.shape)[:-1])
    # every dimension has bandwidth: no 0/0 to guard (the common case, a fast path)
    if bw.min() > 0:
        per_dim = traffic / bw + latency
        return per_dim.sum(axis=-1) if mode == "sequential" else per_dim.max(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_dim = np.where(traffic > 0, np.where(bw > 0, traffic / bw, np.inf), 0.0) + latency
    return per_dim.sum(axis=-1) if mode == "sequential" else per_dim.max(axis=-1)


# ----------------------------------------------------------------------------------- model building
class TermBuilder:
    """Collects the terms (with exact aggregation), the linear weights, the constant and the max
    nodes."""

    def __init__(self, n_dims: int):
        self.D = n_dims
        self.sums: dict[int, list[Ref]] = {}
        self.keys: dict[bytes, int] = {}
        self.bytes: list[np.ndarray] = []
        self.latency: list[np.ndarray] = []
        self.peaks: list[float] = []
        self.largest: list[float] = []
        self.linear: dict[int, float] = {}
        self.constant = 0.0
        self.nodes: list[tuple[Piece, ...]] = []
        self.node_w: list[float] = []
        self.roots: dict[tuple, int] = {}
        self.collectives = 0

    def term(self, m: np.ndarray, lam: np.ndarray, count: int = 1) -> Ref | None:
        """Register ``count`` identical collective rows (bytes, latency); returns (term,
        coefficient) or None when the collective takes no time. ``count = 0`` registers a term that
        is no collective of its own (e.g. the part of one on a single dimension)."""
        peak = float(m.max())
        if peak <= 0:
            peak = float(lam.max())
            if peak <= 0:
                return None
        return self.term_keyed(
            direction_key(np.concatenate([m, lam])[None, :] / peak)[0], m, lam, peak, count
        )

    def term_keyed(
        self, key: bytes, m: np.ndarray, lam: np.ndarray, peak: float, count: int
    ) -> Ref:
        """:meth:`term` for a row whose peak (> 0) and :func:`direction_key` are known."""
        k = self.keys.get(key)
        # the term is the first such collective itself (re-scaled to the largest one in build())
        if k is None:
            k = self.keys[key] = len(self.bytes)
            self.bytes.append(m.copy())
            self.latency.append(lam.copy())
            self.peaks.append(peak)
            self.largest.append(peak)
        self.largest[k] = max(self.largest[k], peak)
        self.collectives += count
        return k, peak / self.peaks[k]

    def term_sum(self, key: bytes, m: np.ndarray, lam: np.ndarray, peak: float, count: int) -> Ref:
        """:meth:`term_keyed` for a collective whose dimensions' times add up (a ``sequential``
        group's) in a model whose terms take the largest: a composite term, the sum of its
        one-dimension parts (a one-dimension term is the same under a max and a sum); :meth:`build`
        replaces every use of it by its parts (exact). ``key``: the row's :func:`direction_key`."""
        key = b"+" + key
        k = self.keys.get(key)
        if k is None:
            k = self.keys[key] = len(self.bytes)
            self.bytes.append(m.copy())
            self.latency.append(lam.copy())
            self.peaks.append(peak)
            self.largest.append(peak)
            parts = []
            for d in np.flatnonzero((m > 0) | (lam > 0)):
                row_m, row_l = np.zeros(self.D), np.zeros(self.D)
                row_m[d], row_l[d] = m[d], lam[d]
                parts.append(self.term(row_m, row_l, count=0))
            self.sums[k] = [r for r in parts if r is not None]
        self.largest[k] = max(self.largest[k], peak)
        self.collectives += count
        return k, peak / self.peaks[k]

    def _expand_sums(self) -> None:
        """Replace every use of a composite term (:meth:`term_sum`) by its parts, in the linear
        weights and the max nodes; each part is re-scaled to the largest use (so coefficients stay
        <= 1 after :meth:`build`)."""
        for k, parts in self.sums.items():
            r = self.largest[k] / self.peaks[k]
            for kd, ad in parts:
                self.largest[kd] = max(self.largest[kd], r * ad * self.peaks[kd])

        def expand(refs) -> tuple[Ref, ...]:
            out: dict[int, float] = {}
            for k, a in refs:
                for kd, ad in self.sums.get(k, [(k, 1.0)]):
                    out[kd] = out.get(kd, 0.0) + a * ad
            return tuple(out.items())

        self.linear = dict(expand(self.linear.items()))
        self.nodes = [
            tuple(Piece(p.const_ns, expand(p.terms), p.nodes) for p in pieces)
            for pieces in self.nodes
        ]
        self.sums = {}

    def add(self, ref: Ref | None, weight: float) -> None:
        """Add ``weight`` x the collective to T."""
        if ref is not None:
            self.linear[ref[0]] = self.linear.get(ref[0], 0.0) + weight * ref[1]

    def add_all(self, refs: PhaseRefs, weights: np.ndarray) -> None:
        """Add every collective of phase column j with weight ``weights[j]`` (vectorised
        :meth:`add`)."""
        sel = refs.k >= 0
        total = np.bincount(refs.k[sel], weights=(refs.a * weights[None, :])[sel])
        for k in np.flatnonzero(total):
            self.linear[int(k)] = self.linear.get(int(k), 0.0) + float(total[k])

    def node(
        self, pieces: list[tuple[float, list[Ref | None], list[tuple[int, float]]]], weight: float
    ) -> int:
        """Add a max node ``y >= max(pieces)``; identical root nodes (weight > 0, no node
        references) merge."""
        return self.node_of(tuple([Piece(float(c), self.refs_of(refs), tuple(nodes))
                                   for c, refs, nodes in pieces]), weight)

    @staticmethod
    def refs_of(refs: list[Ref | None]) -> tuple[Ref, ...]:
        """A piece's term references as :meth:`node` keeps them (the None entries, collectives that
        take no time, left out; the coefficients as floats)."""
        return tuple([(r[0], r[1] * 1.0) for r in refs if r is not None])

    def node_of(self, norm: tuple[Piece, ...], weight: float) -> int:
        """:meth:`node` for pieces already made (their terms by :meth:`refs_of`): a graph of many
        nodes that share a few durations makes each duration's references once."""
        root = weight > 0 and not any(p.nodes for p in norm)
        if root:
            key = tuple(
                (f"{p.const_ns:.12g}",) + tuple((k, f"{a:.12g}") for k, a in p.terms) for p in norm
            )
            v = self.roots.get(key)
            if v is not None:
                self.node_w[v] += weight
                return v
        self.nodes.append(norm)
        self.node_w.append(weight)
        if root:
            self.roots[key] = len(self.nodes) - 1
        return len(self.nodes) - 1

    def _distinct_terms(self) -> list[tuple[Ref, ...]]:
        """The distinct term references of the nodes' pieces (a graph's nodes share a few)."""
        return list({p.terms: None for pieces in self.nodes for p in pieces})

    def _map_terms(self, terms: list[tuple[Ref, ...]], f) -> None:
        """Every piece's term references (``terms``: :meth:`_distinct_terms`) replaced by ``f`` of
        them, ``f`` called once per distinct references: the values per piece, ``f`` depending on
        the references' values alone (their coefficients are positive, so no -0.0 stands for a
        0.0)."""
        new = {t: f(t) for t in terms}
        self.nodes = [tuple([Piece(p.const_ns, new[p.terms], p.nodes) for p in pieces])
                      for pieces in self.nodes]

    def build(self, mode: str) -> TimeModel:
        """The :class:`TimeModel`. Each term is re-scaled to the largest collective it stands for
        (exact: tau_k is positively homogeneous in (bytes, latency)), so every reference has a
        coefficient <= 1: a term first met as a 1-byte collective and then used by a 100 GB one
        would otherwise enter the LP's epigraph rows with coefficients ~1e-11, below HiGHS's matrix
        tolerance (dropped: tau_k = 0, a bound that never closes)."""
        if self.sums:
            self._expand_sums()
        K = len(self.bytes)
        B = np.array(self.bytes) if K else np.zeros((0, self.D))
        lam = np.array(self.latency) if K else np.zeros((0, self.D))
        r = np.array(self.largest) / np.array(self.peaks) if K else np.ones(0)
        B *= r[:, None]
        lam *= r[:, None]
        rl = r.tolist()
        w = np.array([self.linear.get(k, 0.0) / r[k] for k in range(K)])
        terms = self._distinct_terms()
        referenced = {k for refs in terms for k, _ in refs}
        # fold the weight of latency-free, linear-only terms into their bytes (exact)
        for k in range(K):
            if k not in referenced and not lam[k].any() and w[k] > 0:
                B[k] *= w[k]
                w[k] = 1.0
        keep = np.array([w[k] > 0 or k in referenced for k in range(K)], dtype=bool)
        # the references re-scaled (a / 1.0 is a: none when every r is 1) and renumbered (only
        # unused terms drop; node references keep their terms): one pass over the pieces
        rescale, renumber = any(x != 1.0 for x in rl), not keep.all()
        new = (np.cumsum(keep) - 1).tolist() if renumber else list(range(K))
        if rescale or renumber:
            self._map_terms(terms, lambda refs: tuple([(new[k], a / rl[k] if rescale else a)
                                                       for k, a in refs]))
        if renumber:
            B, lam, w = B[keep], lam[keep], w[keep]
        return TimeModel(
            constant_ns=self.constant,
            terms_bytes=B,
            terms_latency_ns=lam,
            term_weights=w,
            nodes=tuple(self.nodes),
            node_weights=np.array(self.node_w, dtype=float),
            dimension_mode=mode,
            n_collectives=self.collectives,
        )


@dataclass(frozen=True)
class PhaseRefs:
    """Term index ``k`` (-1: no collective) and coefficient ``a`` of every layer's phases, arrays of
    shape (L, 3)."""

    k: np.ndarray
    a: np.ndarray

    def __call__(self, layer: int, j: int) -> Ref | None:
        """(term index, coefficient) of phase ``j`` (0 forward, 1 input gradient, 2 weight
        gradient) of layer ``layer``, None when the phase has no collective."""
        k = int(self.k[layer, j])
        return None if k < 0 else (k, float(self.a[layer, j]))

    def rows(self) -> list[tuple[Ref | None, Ref | None, Ref | None]]:
        """Every layer's three phase references (:meth:`__call__` for j = 0, 1, 2), in layer
        order."""
        return [(self(lay, 0), self(lay, 1), self(lay, 2)) for lay in range(self.k.shape[0])]


def phase_refs(
    b: TermBuilder,
    traffic: np.ndarray,
    latency: np.ndarray,
    classes: tuple[np.ndarray, np.ndarray] | None = None,
    sums: np.ndarray | None = None,
) -> PhaseRefs:
    """Register every phase's collective; identical rows are registered once (fast for replicated
    layers).

    Args:
        b: the builder.
        traffic, latency: (L, 3, D) bytes and ns of every phase's collective on each dimension.
        classes: optional (first, inverse) of a partition of the L x 3 phases (phase-major within a
            layer) into classes whose rows are known to be equal (e.g.
            :func:`hieropt.model.traffic.phase_classes`: the same collective, bytes and group), the
            classes in order of first appearance; then only one row per class is compared, with the
            same result.
        sums: optional (L, 3) bool, the collectives whose dimensions' times add up in a model whose
            terms take the largest (registered by :meth:`TermBuilder.term_sum`); classes must not
            mix them with others.
    """
    L, _, D = traffic.shape
    # (the summing flag as a last column, when there is one: rows differing in it stay apart)
    parts = [traffic.reshape(L * 3, D), latency.reshape(L * 3, D)]
    if sums is not None:
        parts.append(sums.reshape(L * 3, 1).astype(float))
    if classes is not None:
        cfirst, cinv = classes
        rows = np.concatenate([p[cfirst] for p in parts], axis=1) + 0.0
        sub_first, sub_inverse, _ = distinct_rows(rows)
        uniq = rows[sub_first]
        inverse = sub_inverse[cinv]
        first = cfirst[sub_first]
        counts = np.bincount(inverse, minlength=first.size)
    else:
        rows = np.concatenate(parts, axis=1) + 0.0
        first, inverse, counts = distinct_rows(rows)  # (+ 0.0: -0.0 == 0.0)
        uniq = rows[first]
    summing = None
    if sums is not None:
        summing = (uniq[:, 2 * D] > 0) & (
            np.count_nonzero(uniq[:, : 2 * D].reshape(-1, 2, D).any(axis=1), axis=1) > 1
        )
        uniq = uniq[:, :2 * D]
    peak = uniq[:, :D].max(axis=1)
    peak = np.where(peak > 0, peak, uniq[:, D:].max(axis=1))
    k = np.full(len(uniq), -1, dtype=int)
    a = np.zeros(len(uniq))
    live = np.flatnonzero(peak > 0)
    # many distinct rows: group them by direction with numpy,
    if live.size > 4096 and (summing is None or not summing.any()):
        # register one row per direction
        keys = direction_rows(uniq[live] / peak[live, None])
        first_of, group, _ = unique_rows(keys)
        group = group.reshape(-1)
        term = np.zeros(first_of.size, dtype=int)
        for g in np.argsort(first_of):  # directions in order of first appearance
            i = live[first_of[g]]
            term[g] = b.term_keyed(
                keys[first_of[g]].tobytes(), uniq[i, :D], uniq[i, D:], float(peak[i]), 0
            )[0]
        b.collectives += int(counts[live].sum())
        k[live] = term[group]
        a[live] = peak[live] / np.asarray(b.peaks)[k[live]]
    elif live.size:
        for i, key in zip(live, direction_key(uniq[live] / peak[live, None]), strict=True):
            add = b.term_sum if summing is not None and summing[i] else b.term_keyed
            k[i], a[i] = add(key, uniq[i, :D], uniq[i, D:], float(peak[i]), int(counts[i]))
    inverse = inverse.reshape(-1)
    return PhaseRefs(k=k[inverse].reshape(L, 3), a=a[inverse].reshape(L, 3))
