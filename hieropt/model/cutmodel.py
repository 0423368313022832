"""The time model of large workloads as cutting planes: T(B) = T0 + y with y >= every stored piece
of T (:func:`hieropt.model.slopes.time_piece`), in the :class:`TimeModel` form the LP compiler
reads, so no row or Python object exists per layer.

Exact aggregation (:mod:`hieropt.model.terms`) keeps the LP small when layers repeat or when their
collectives are proportional and enter T linearly. Distinct layers under an overlap loop (one max
node per layer), or with latency (one term per distinct collective), would give an LP with a row
block per layer. :class:`CutModel` instead states T(t) = T0 + max_i (c_i + g_i . t) over the affine
pieces of T found so far (Kelley's cutting planes on T itself, one aggregated row of D + 1
coefficients per piece), and evaluates T exactly, for all layers at once, wherever the solver asks.
Every piece is below T, so every LP bound stays a valid bound of the true problem; the solver adds
the piece at each LP point until the gap closes (:meth:`hieropt.solvers.cutting.TimeLP.min_time`).
The pieces enter as one max node over D unit terms tau_d = M_d t_d (M_d: bytes per iteration on
dimension d).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..spec import Instance
from .loops import executions, p2p_row
from .slopes import JobArrays, job_arrays, supported, time_piece
from .terms import Piece, TimeModel

__all__ = ["CutModel", "cut_model", "prefers_cuts", "DENSE_LAYERS"]

DENSE_LAYERS = 500
"""Workloads with at most this many (distinct, where layers merge exactly) layers keep the dense
model (measured: at 2,000 distinct layers with latency the dense model takes 5-35 s per loop, at 300
at most 3 s)."""


@dataclass(frozen=True)
class CutModel(TimeModel):
    """A :class:`TimeModel` whose only node is the max over the stored affine pieces of T (see the
    module docstring); :meth:`time_ns` is the exact T. ``jobs``: the per-layer arrays; ``dims``: the
    loaded dimension of each unit term; ``pieces``: the stored (const ns, grad bytes (D,)) pairs."""

    jobs: tuple[JobArrays, ...] = ()
    instance: Instance | None = None
    dims: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    pieces: tuple[tuple[float, np.ndarray], ...] = ()
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def piece(self, bw_gbps: np.ndarray) -> tuple[float, np.ndarray]:
        """The affine piece of T (const ns, grad (D,) bytes) selected at ``bw_gbps`` (GB/s; 0 or inf
        allowed); the last few are remembered (the solver asks for the value and the piece at the
        same points)."""
        bw = np.asarray(bw_gbps, dtype=float)
        key = bw.tobytes()
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        with np.errstate(divide="ignore"):
            t = np.where(bw > 0, 1.0 / bw, np.inf)
        t = np.where(self.carries_traffic, t, 0.0)
        out = (
            (np.inf, np.zeros(bw.size))
            if not np.all(np.isfinite(t))
            else time_piece(self.instance, list(self.jobs), t)
        )
        if len(self.memo) >= 16:
            self.memo.pop(next(iter(self.memo)))
        self.memo[key] = out
        return out

    def time_ns(self, bw_gbps: np.ndarray) -> float:
        """The exact T(B) in ns (inf when a dimension with traffic has no bandwidth)."""
        bw = np.asarray(bw_gbps, dtype=float)
        c, g = self.piece(bw)
        if not np.isfinite(c):
            return np.inf
        with np.errstate(divide="ignore"):
            t = np.where(self.carries_traffic & (bw > 0), 1.0 / np.where(bw > 0, bw, 1.0), 0.0)
        return float(c + g @ t)

    def times_ns(self, bw_gbps: np.ndarray) -> np.ndarray:
        """The exact T(B) (ns) of each design of the batch ``bw_gbps`` (S, D), GB/s (one
        :meth:`time_ns` each: the base class's batched form would evaluate the pieces, a lower
        bound)."""
        return np.array([self.time_ns(b) for b in np.asarray(bw_gbps, dtype=float)])

    def with_pieces(self, new: list[tuple[float, np.ndarray]]) -> CutModel:
        """This model with the pieces ``new`` added (duplicates dropped)."""
        seen = {_key(c, g) for c, g in self.pieces}
        kept = list(self.pieces)
        for c, g in new:
            if np.isfinite(c) and _key(c, g) not in seen:
                seen.add(_key(c, g))
                kept.append((float(c), np.asarray(g, dtype=float)))
        if len(kept) == len(self.pieces):
            return self
        M = self.terms_bytes[np.arange(self.dims.size), self.dims]
        node = tuple(
            Piece(
                c - self.constant_ns,
                tuple((k, float(g[d] / M[k])) for k, d in enumerate(self.dims) if g[d] > 0),
            )
            for c, g in kept
        )
        return replace(self, nodes=(node,), node_weights=np.ones(1), pieces=tuple(kept))


def _key(c: float, g: np.ndarray) -> bytes:
    return np.round(np.concatenate([[c], g]), 9).tobytes()


def cut_model(instance: Instance) -> CutModel:
    """The :class:`CutModel` of ``instance`` without pieces (a solver adds them). T0 = T at infinite
    bandwidth (compute, and latency on the critical path) is its constant: T >= T0 everywhere.

    Raises:
        ValueError: the loop is not supported (:func:`hieropt.model.slopes.supported`).
    """
    if not supported(instance):
        raise ValueError("the serial cross-layer overlap needs the dense time model")
    instance.require_resolved_weights()
    jobs = tuple(job_arrays(instance))
    D = instance.network.n_dims
    execs, p2p_count = executions(instance)
    M = np.zeros(D)
    # (a workload of several stages: the most any of them sends; any M > 0 on the loaded d will do)
    for j in jobs:
        M += j.weight * np.max(
            [np.einsum("ljd,j->d", s.traffic, execs) for s in (j, *j.more)], axis=0
        )
    if instance.pipeline is not None and p2p_count:
        M += p2p_count * p2p_row(instance)[0] * sum(j.weight for j in jobs)
    dims = np.flatnonzero(M > 0)
    terms = np.zeros((dims.size, D))
    terms[np.arange(dims.size), dims] = M[dims]
    T0, _ = time_piece(instance, list(jobs), np.zeros(D))
    n = sum(
        int(np.count_nonzero(s.traffic.any(axis=2) | s.latency.any(axis=2)))
        for j in jobs
        for s in (j, *j.more)
    )
    return CutModel(
        constant_ns=float(T0),
        terms_bytes=terms,
        terms_latency_ns=np.zeros_like(terms),
        term_weights=np.zeros(dims.size),
        nodes=(),
        node_weights=np.zeros(0),
        dimension_mode=instance.dimension_mode,
        n_collectives=n,
        jobs=jobs,
        instance=instance,
        dims=dims,
        pieces=(),
    )


def prefers_cuts(instance: Instance) -> bool:
    """Whether the dense model would grow with the layer count: more than :data:`DENSE_LAYERS`
    layers, a supported loop, and either an overlap loop (one max node per distinct layer; per layer
    for the cross-layer overlap) or latency (one term per distinct collective size). Linear loops
    without latency aggregate exactly: dense."""
    if not supported(instance):
        return False
    L = sum(w.table.compute_ns.shape[0] for job in instance.jobs for w in job.workload.stages)
    if L <= DENSE_LAYERS:
        return False
    loop = instance.training_loop
    cross = loop == "tp_dp_overlap_cross" or (loop == "step" and instance.step.overlap_dp)
    if cross:
        return True
    latency = any(d.latency_ns > 0 for d in instance.network.dims)
    if loop != "tp_dp_overlap" and not latency:
        return False
    distinct = 0  # layers that merge exactly: identical compute, bytes and latency rows
    # (every stage's layers)
    for table in (w.table for job in instance.jobs for w in job.workload.stages):
        rows = np.concatenate([table.compute_ns, table.size_bytes], axis=1)
        distinct += np.unique(rows, axis=0).shape[0]
    return distinct > DENSE_LAYERS
