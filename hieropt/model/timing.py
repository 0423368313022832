"""Time model and the independent numpy evaluator of the training-iteration time (design.md §2.2).

A collective with per-dimension traffic m (bytes) and latency lambda (ns) takes, at per-NPU bandwidths B (GB/s =
bytes/ns), ``T_k = max_d (m_d / B_d + lambda_d)`` when the dimensions work concurrently (pipelined, LIBRA) or
``sum_d (m_d / B_d + lambda_d)`` when they work one after another (``dimension_mode``). With C the compute times and
T the collective times of each layer's forward (f), input-gradient (ig) and weight-gradient (wg) phases:

- ``no_overlap`` (LIBRA, ``inputs/training_loop/no_overlap.py``):
  T = sum_l (C_f + T_f) + sum_l (C_ig + T_ig + C_wg + T_wg).
- ``tp_dp_overlap``: a layer's weight-gradient collective runs concurrently with the rest of its back-propagation:
  T = sum_l (C_f + T_f) + sum_l max(C_ig + T_ig, C_ig + C_wg + T_wg).
- ``tp_dp_overlap_cross``: the weight-gradient collectives run on their own stream, in backward order, overlapping the
  following layers' backward compute: going backwards, the compute stream reaches r_l = r_(l+1) + C_ig + T_ig + C_wg
  (input-gradient collectives block it), the collective stream finishes y_l = max(y_(l+1), r_l) + T_wg,l, and the
  backward pass ends at max(r_0, y_0). Collectives of the two streams are assumed not to contend for a dimension.
- ``recompute`` (ASTRA-sim's FWD_IN_BCKWD, full activation recomputation): the forward compute and collective of
  every layer run again in the backward pass: T = no_overlap + sum_l (C_f + T_f).
- ``pipeline`` (GPipe / 1F1B schedule with p stages and m micro-batches; the workload is one stage's layers for one
  micro-batch): T = (m + p - 1) (sum_l (C_f + T_f + C_ig + T_ig + C_wg) + 2 T_p2p) + sum_l T_wg, where T_p2p sends
  the stage's activations (and, backwards, their gradients) over one dimension; the bubble is (p - 1)/m of the
  m (...) ideal, and the data-parallel gradient collectives run once per iteration.

Several workloads: T = sum_j weight_j T_j. Every T is convex and piecewise linear in t = 1/B (maxima and non-negative
sums of affine functions of t), so the exact solvers apply unchanged. :class:`TimeModel` states T in that form
(collective terms, linear weights, and max nodes for the epigraph LP); :func:`evaluate` computes T directly from the
formulas above, layer by layer, as an independent check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..spec import PHASES, Instance
from .cost import cost_per_dim_usd
from .traffic import phase_latency, phase_traffic

Ref = tuple[int, float]
"""A reference to collective term k with coefficient a (the collective is a times term k)."""


@dataclass(frozen=True)
class Piece:
    """One affine piece of a max node: ``const_ns + sum a * tau_k + sum b * y_u`` (earlier nodes u only)."""

    const_ns: float
    terms: tuple[Ref, ...]
    nodes: tuple[tuple[int, float], ...] = ()


@dataclass(frozen=True)
class TimeModel:
    """T(B) = ``constant_ns + sum_k term_weights[k] tau_k + sum_v node_weights[v] y_v`` (ns), where
    ``tau_k = max_d (terms_bytes[k, d] / B_d + terms_latency_ns[k, d])`` (or the sum over d when ``dimension_mode`` is
    ``sequential``) and ``y_v = max over the pieces of node v``.

    Exact aggregation (design.md §2.3): collectives with proportional (bytes, latency) rows share one term; terms
    without latency that only enter linearly carry their total weight in ``terms_bytes`` (weight 1), so K does not
    grow with the layer count under ``no_overlap``.

    Attributes:
        constant_ns: the part of T that does not depend on bandwidth (compute, and compute repeated by the loop).
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
        """Alias of ``constant_ns``: the bandwidth-independent part of T (ns); a lower bound on T."""
        return self.constant_ns

    @property
    def n_dims(self) -> int:
        """Number of dimensions D."""
        return self.terms_bytes.shape[1]

    @property
    def carries_traffic(self) -> np.ndarray:
        """Boolean (D,): whether any collective puts bytes on dimension d."""
        return (self.terms_bytes > 0).any(axis=0)

    @property
    def is_simple(self) -> bool:
        """True for LIBRA's form: T = constant + sum_k max_d bytes/B (no nodes, no latency, concurrent, weights 1)."""
        return (not self.nodes and not self.terms_latency_ns.any() and self.dimension_mode == "concurrent"
                and bool(np.all(self.term_weights == 1.0)))

    def term_times_ns(self, bw_gbps: np.ndarray) -> np.ndarray:
        """tau_k at ``bw_gbps`` (shape (K,), ns); inf where a dimension with traffic has B = 0."""
        return _collective_times(self.terms_bytes, self.terms_latency_ns, np.asarray(bw_gbps, dtype=float),
                                 self.dimension_mode)

    def node_values_ns(self, tau: np.ndarray) -> np.ndarray:
        """y_v for term times ``tau`` (ns)."""
        y = np.zeros(len(self.nodes))
        for v, pieces in enumerate(self.nodes):
            y[v] = max(p.const_ns + sum(a * tau[k] for k, a in p.terms) + sum(b * y[u] for u, b in p.nodes)
                       for p in pieces)
        return y

    def time_ns(self, bw_gbps: np.ndarray) -> float:
        """T(B) in ns for per-NPU bandwidths ``bw_gbps`` (shape (D,), GB/s); inf if a loaded dimension has B = 0."""
        tau = self.term_times_ns(bw_gbps)
        total = self.constant_ns + float(np.dot(self.term_weights, tau)) if tau.size else self.constant_ns
        if self.nodes:
            total += float(np.dot(self.node_weights, self.node_values_ns(tau)))
        return total


def _collective_times(traffic: np.ndarray, latency: np.ndarray, bw: np.ndarray, mode: str) -> np.ndarray:
    """Time of each collective row (shape traffic.shape[:-1]), ns: max or sum over d of bytes/B + latency."""
    if traffic.size == 0:
        return np.zeros(traffic.shape[:-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        per_dim = np.where(traffic > 0, np.where(bw > 0, traffic / bw, np.inf), 0.0) + latency
    return per_dim.sum(axis=-1) if mode == "sequential" else per_dim.max(axis=-1)


# --------------------------------------------------------------------------------------------------- model building
class _Builder:
    """Collects the terms (with exact aggregation), the linear weights, the constant and the max nodes."""

    def __init__(self, n_dims: int):
        self.D = n_dims
        self.keys: dict[tuple[str, ...], int] = {}
        self.bytes: list[np.ndarray] = []
        self.latency: list[np.ndarray] = []
        self.peaks: list[float] = []
        self.linear: dict[int, float] = {}
        self.constant = 0.0
        self.nodes: list[tuple[Piece, ...]] = []
        self.node_w: list[float] = []
        self.roots: dict[tuple, int] = {}
        self.collectives = 0

    def term(self, m: np.ndarray, lam: np.ndarray, count: int = 1) -> Ref | None:
        """Register ``count`` identical collective rows (bytes, latency); returns (term, coefficient) or None when the
        collective takes no time."""
        peak = float(m.max())
        if peak <= 0:
            peak = float(lam.max())
            if peak <= 0:
                return None
        key = tuple(f"{x:.12g}" for x in np.concatenate([m, lam]) / peak)
        k = self.keys.get(key)
        if k is None:  # the term is the first such collective itself (keeps tau in natural units for the LP)
            k = self.keys[key] = len(self.bytes)
            self.bytes.append(m.copy())
            self.latency.append(lam.copy())
            self.peaks.append(peak)
        self.collectives += count
        return k, peak / self.peaks[k]

    def add(self, ref: Ref | None, weight: float) -> None:
        """Add ``weight`` x the collective to T."""
        if ref is not None:
            self.linear[ref[0]] = self.linear.get(ref[0], 0.0) + weight * ref[1]

    def add_all(self, refs: _Refs, weights: np.ndarray) -> None:
        """Add every collective of phase column j with weight ``weights[j]`` (vectorised :meth:`add`)."""
        sel = refs.k >= 0
        total = np.bincount(refs.k[sel], weights=(refs.a * weights[None, :])[sel])
        for k in np.flatnonzero(total):
            self.linear[int(k)] = self.linear.get(int(k), 0.0) + float(total[k])

    def node(self, pieces: list[tuple[float, list[Ref | None], list[tuple[int, float]]]], weight: float) -> int:
        """Add a max node ``y >= max(pieces)``; identical root nodes (weight > 0, no node references) merge."""
        norm = tuple(Piece(float(c), tuple((r[0], r[1] * 1.0) for r in refs if r is not None), tuple(nodes))
                     for c, refs, nodes in pieces)
        root = weight > 0 and not any(p.nodes for p in norm)
        if root:
            key = tuple((f"{p.const_ns:.12g}",) + tuple((k, f"{a:.12g}") for k, a in p.terms) for p in norm)
            v = self.roots.get(key)
            if v is not None:
                self.node_w[v] += weight
                return v
        self.nodes.append(norm)
        self.node_w.append(weight)
        if root:
            self.roots[key] = len(self.nodes) - 1
        return len(self.nodes) - 1

    def build(self, mode: str) -> TimeModel:
        K = len(self.bytes)
        B = np.array(self.bytes) if K else np.zeros((0, self.D))
        lam = np.array(self.latency) if K else np.zeros((0, self.D))
        w = np.array([self.linear.get(k, 0.0) for k in range(K)])
        referenced = {k for pieces in self.nodes for p in pieces for k, _ in p.terms}
        for k in range(K):  # fold the weight of latency-free, linear-only terms into their bytes (exact)
            if k not in referenced and not lam[k].any() and w[k] > 0:
                B[k] *= w[k]
                w[k] = 1.0
        keep = np.array([w[k] > 0 or k in referenced for k in range(K)], dtype=bool)
        if not keep.all():  # renumber (only unused terms drop; node references keep their terms)
            new = np.cumsum(keep) - 1
            self.nodes = [tuple(Piece(p.const_ns, tuple((int(new[k]), a) for k, a in p.terms), p.nodes)
                                for p in pieces) for pieces in self.nodes]
            B, lam, w = B[keep], lam[keep], w[keep]
        return TimeModel(constant_ns=self.constant, terms_bytes=B, terms_latency_ns=lam, term_weights=w,
                         nodes=tuple(self.nodes), node_weights=np.array(self.node_w, dtype=float),
                         dimension_mode=mode, n_collectives=self.collectives)


@dataclass(frozen=True)
class _Refs:
    """Term index ``k`` (-1: no collective) and coefficient ``a`` of every layer's phases, arrays of shape (L, 3)."""

    k: np.ndarray
    a: np.ndarray

    def __call__(self, layer: int, j: int) -> Ref | None:
        k = int(self.k[layer, j])
        return None if k < 0 else (k, float(self.a[layer, j]))

    def rows(self) -> list[tuple[Ref | None, Ref | None, Ref | None]]:
        return [(self(lay, 0), self(lay, 1), self(lay, 2)) for lay in range(self.k.shape[0])]


def _refs(b: _Builder, traffic: np.ndarray, latency: np.ndarray) -> _Refs:
    """Register every phase's collective; identical rows are registered once (fast for replicated layers)."""
    L, _, D = traffic.shape
    rows = np.ascontiguousarray(np.concatenate([traffic, latency], axis=2).reshape(L * 3, 2 * D))
    ids: dict[bytes, int] = {}
    inverse = np.fromiter((ids.setdefault(r.tobytes(), len(ids)) for r in rows), dtype=np.int64, count=len(rows))
    counts = np.bincount(inverse, minlength=len(ids))
    first = np.full(len(ids), -1, dtype=np.int64)
    first[inverse[::-1]] = np.arange(len(rows) - 1, -1, -1)  # first occurrence of each distinct row
    uniq = rows[first]
    k = np.full(len(uniq), -1, dtype=int)
    a = np.zeros(len(uniq))
    for i, row in enumerate(uniq):
        ref = b.term(row[:D], row[D:], int(counts[i]))
        if ref is not None:
            k[i], a[i] = ref
    inverse = inverse.reshape(-1)
    return _Refs(k=k[inverse].reshape(L, 3), a=a[inverse].reshape(L, 3))


def _loop_no_overlap(b: _Builder, C: np.ndarray, refs: _Refs, w: float, instance: Instance) -> None:
    b.constant += w * float(C.sum())
    b.add_all(refs, np.array([w, w, w]))


def _loop_recompute(b: _Builder, C: np.ndarray, refs: _Refs, w: float, instance: Instance) -> None:
    b.constant += w * float(C.sum() + C[:, 0].sum())
    b.add_all(refs, np.array([2 * w, w, w]))


def _loop_tp_dp_overlap(b: _Builder, C: np.ndarray, refs: _Refs, w: float, instance: Instance) -> None:
    b.constant += w * float(C[:, 0].sum())
    b.add_all(refs, np.array([w, 0.0, 0.0]))
    for (_, ig, wg), (_, c_ig, c_wg) in zip(refs.rows(), C, strict=True):
        b.node([(c_ig, [ig], []), (c_ig + c_wg, [wg], [])], w)


def _loop_tp_dp_overlap_cross(b: _Builder, C: np.ndarray, refs: _Refs, w: float, instance: Instance) -> None:
    b.constant += w * float(C[:, 0].sum())
    b.add_all(refs, np.array([w, 0.0, 0.0]))
    rows = refs.rows()
    r_prev = y_prev = None
    for lay in reversed(range(len(rows))):
        _, ig, wg = rows[lay]
        _, c_ig, c_wg = C[lay]
        r = b.node([(c_ig + c_wg, [ig], [] if r_prev is None else [(r_prev, 1.0)])], 0.0)
        if wg is not None:
            pieces = [(0.0, [wg], [(r, 1.0)])]
            if y_prev is not None:
                pieces.append((0.0, [wg], [(y_prev, 1.0)]))
            y_prev = b.node(pieces, 0.0)
        r_prev = r
    if r_prev is None:
        return
    end = [(0.0, [], [(r_prev, 1.0)])] + ([(0.0, [], [(y_prev, 1.0)])] if y_prev is not None else [])
    b.node(end, w)


def _p2p_row(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    pp = instance.pipeline
    D = instance.network.n_dims
    m, lam = np.zeros(D), np.zeros(D)
    m[pp.p2p_dim] = pp.p2p_bytes
    if pp.p2p_bytes > 0:
        lam[pp.p2p_dim] = instance.network.dims[pp.p2p_dim].latency_ns  # one step
    return m, lam


def _loop_pipeline(b: _Builder, C: np.ndarray, refs: _Refs, w: float, instance: Instance) -> None:
    pp = instance.pipeline
    factor = pp.microbatches + pp.stages - 1
    b.constant += w * factor * float(C.sum())
    b.add_all(refs, np.array([w * factor, w * factor, w]))
    b.add(b.term(*_p2p_row(instance)), 2 * w * factor)


LOOPS: dict[str, Callable[..., None]] = {
    "no_overlap": _loop_no_overlap,
    "tp_dp_overlap": _loop_tp_dp_overlap,
    "tp_dp_overlap_cross": _loop_tp_dp_overlap_cross,
    "recompute": _loop_recompute,
    "pipeline": _loop_pipeline,
}
"""Training loops by name: each adds one workload's T, in the form of :class:`TimeModel`, to the builder."""


def build_time_model(instance: Instance) -> TimeModel:
    """The instance's iteration time (all workloads, weighted) as a :class:`TimeModel` for the formulations."""
    b = _Builder(instance.network.n_dims)
    loop = LOOPS[instance.training_loop]
    for job in instance.jobs:
        refs = _refs(b, phase_traffic(instance, job), phase_latency(instance, job))
        loop(b, job.workload.table.compute_ns, refs, job.weight, instance)
    return b.build(instance.dimension_mode)


# --------------------------------------------------------------------------------------------------- evaluator
@dataclass(frozen=True)
class Breakdown:
    """Where the iteration time goes at one bandwidth vector (all times ns, bytes per NPU, cost $). With several
    workloads, every figure is the weighted sum over them.

    Attributes:
        bw_gbps: (D,) the evaluated per-NPU bandwidths.
        iteration_time_ns: T(B).
        compute_ns: T with every collective taking no time (the compute on the critical path).
        communication_ns: exposed communication, T - compute_ns.
        communication_by_phase_ns: collective time issued in forward / input_grad / weight_grad phases (and
            ``p2p`` for the pipeline loop), per iteration; under overlap loops part of it is hidden.
        bytes_per_dim: (D,) bytes each NPU sends on each dimension in one iteration.
        busy_ns_per_dim: (D,) time dimension d transmits (bytes/B plus latency).
        utilisation_per_dim: (D,) busy time / iteration time.
        bottleneck_ns_per_dim: (D,) collective time during which d is the slowest dimension (ties: lowest d).
        cost_per_dim_usd: (D,) network cost of each dimension; ``network_cost_usd`` their sum.
        iteration_time_by_workload_ns: T of each workload (unweighted), by workload name.
    """

    bw_gbps: np.ndarray
    iteration_time_ns: float
    compute_ns: float
    communication_ns: float
    communication_by_phase_ns: dict[str, float]
    bytes_per_dim: np.ndarray
    busy_ns_per_dim: np.ndarray
    utilisation_per_dim: np.ndarray
    bottleneck_ns_per_dim: np.ndarray
    cost_per_dim_usd: np.ndarray
    network_cost_usd: float
    iteration_time_by_workload_ns: dict[str, float]


def _loop_time(loop: str, C: np.ndarray, T: np.ndarray, p2p_ns: float, instance: Instance) -> float:
    """The training-loop formulas of the module docstring, numerically (C, T: (L, 3) compute and collective ns)."""
    if loop == "no_overlap":
        return float(C.sum() + T.sum())
    if loop == "recompute":
        return float(C.sum() + T.sum() + C[:, 0].sum() + T[:, 0].sum())
    if loop == "tp_dp_overlap":
        bwd = np.maximum(C[:, 1] + T[:, 1], C[:, 1] + C[:, 2] + T[:, 2])
        return float(C[:, 0].sum() + T[:, 0].sum() + bwd.sum())
    if loop == "tp_dp_overlap_cross":
        compute_at = comm_free = 0.0
        for lay in reversed(range(C.shape[0])):
            compute_at += C[lay, 1] + T[lay, 1] + C[lay, 2]
            if T[lay, 2] > 0:
                comm_free = max(comm_free, compute_at) + T[lay, 2]
        return float(C[:, 0].sum() + T[:, 0].sum() + max(compute_at, comm_free))
    if loop == "pipeline":
        pp = instance.pipeline
        per_micro = C.sum() + T[:, 0].sum() + T[:, 1].sum() + 2 * p2p_ns
        return float((pp.microbatches + pp.stages - 1) * per_micro + T[:, 2].sum())
    raise ValueError(f"unknown training loop {loop!r}")


def _executions(instance: Instance) -> tuple[np.ndarray, float]:
    """How often each phase's collective runs per iteration (forward, input_grad, weight_grad) and the p2p count."""
    if instance.training_loop == "recompute":
        return np.array([2.0, 1.0, 1.0]), 0.0
    if instance.training_loop == "pipeline":
        m = float(instance.pipeline.microbatches)
        return np.array([m, m, 1.0]), 2 * m
    return np.ones(3), 0.0


def _check_bw(instance: Instance, bw_gbps) -> np.ndarray:
    D = instance.network.n_dims
    bw = np.asarray(bw_gbps, dtype=float)
    if bw.shape != (D,):
        raise InputError("--bw", None, f"{bw.size} bandwidths given for {D} dimensions",
                         f"give {D} comma-separated GB/s values")
    if not np.all(np.isfinite(bw)) or np.any(bw < 0):
        raise InputError("--bw", None, f"bandwidths must be finite and >= 0 GB/s, got {bw.tolist()}",
                         "fix the values")
    return bw


def evaluate(instance: Instance, bw_gbps: np.ndarray | list[float]) -> Breakdown:
    """Evaluate the iteration time of the instance's training loop and its breakdown at ``bw_gbps``, layer by layer
    from the formulas of the module docstring (no aggregation, no solver): the independent check of every result.

    Args:
        instance: the problem.
        bw_gbps: per-NPU bandwidth of each dimension, GB/s, shape (D,).

    Raises:
        InputError: wrong length, a negative or non-finite entry, or zero bandwidth on a dimension with traffic.
    """
    bw = _check_bw(instance, bw_gbps)
    D = instance.network.n_dims
    mode = instance.dimension_mode
    execs, p2p_count = _executions(instance)
    total = compute_total = 0.0
    by_phase = dict.fromkeys(PHASES, 0.0)
    bytes_per_dim, busy, bottleneck = np.zeros(D), np.zeros(D), np.zeros(D)
    by_workload: dict[str, float] = {}
    p2p = _p2p_row(instance) if instance.pipeline is not None else (np.zeros(D), np.zeros(D))
    for job in instance.jobs:
        traffic, latency = phase_traffic(instance, job), phase_latency(instance, job)  # (L, 3, D)
        job_bytes = np.einsum("ljd,j->d", traffic, execs) + p2p_count * p2p[0]
        starved = (bw == 0) & (job_bytes > 0)
        if starved.any():
            d = int(np.flatnonzero(starved)[0])
            raise InputError("--bw", f"bw[{d}]", f"0 GB/s but dimension {d} carries {job_bytes[d]:.6g} bytes per "
                             "iteration", "give it a positive bandwidth")
        with np.errstate(divide="ignore", invalid="ignore"):
            per_dim = np.where(traffic > 0, traffic / bw, 0.0) + latency  # (L, 3, D)
        coll = per_dim.sum(axis=2) if mode == "sequential" else per_dim.max(axis=2)  # (L, 3)
        p2p_ns = float(_collective_times(p2p[0][None, :], p2p[1][None, :], bw, mode)[0])
        C = job.workload.table.compute_ns
        T = _loop_time(instance.training_loop, C, coll, p2p_ns, instance)
        T0 = _loop_time(instance.training_loop, C, np.zeros_like(coll), 0.0, instance)
        w = job.weight
        by_workload[job.workload.name] = by_workload.get(job.workload.name, 0.0) + T
        total += w * T
        compute_total += w * T0
        for j, p in enumerate(PHASES):
            by_phase[p] += w * execs[j] * float(coll[:, j].sum())
        bytes_per_dim += w * job_bytes
        with np.errstate(divide="ignore", invalid="ignore"):
            p2p_dim_ns = np.where(p2p[0] > 0, p2p[0] / bw, 0.0) + p2p[1]
        busy += w * (np.einsum("ljd,j->d", per_dim, execs) + p2p_count * p2p_dim_ns)
        slowest = per_dim.argmax(axis=2)
        for d in range(D):
            bottleneck[d] += w * float((coll * (slowest == d) * execs[None, :]).sum())
        if p2p_count:
            by_phase["p2p"] = by_phase.get("p2p", 0.0) + w * p2p_count * p2p_ns
            bottleneck[int(np.argmax(p2p_dim_ns))] += w * p2p_count * p2p_ns
    costs = cost_per_dim_usd(instance, bw)
    return Breakdown(
        bw_gbps=bw,
        iteration_time_ns=total,
        compute_ns=compute_total,
        communication_ns=total - compute_total,
        communication_by_phase_ns=by_phase,
        bytes_per_dim=bytes_per_dim,
        busy_ns_per_dim=busy,
        utilisation_per_dim=busy / total if total > 0 else np.zeros(D),
        bottleneck_ns_per_dim=bottleneck,
        cost_per_dim_usd=costs,
        network_cost_usd=float(costs.sum()),
        iteration_time_by_workload_ns=by_workload,
    )


__all__ = ["TimeModel", "Piece", "Breakdown", "LOOPS", "build_time_model", "evaluate"]
