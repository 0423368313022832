"""The training loops (one home for each): how a loop adds one workload's T to the time model (the
entries of :data:`LOOPS`, for the formulations) and the same formula evaluated numerically
(:func:`loop_time`, for the independent evaluator). The formulas are in the
:mod:`hieropt.model.timing` docstring."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..spec import Instance
from .algorithms import p2p_links
from .gathers import gathered, only, reversed_forward, reversed_refs, without
from .overlap import add_slot, slot_time
from .terms import PhaseRefs, Ref, TermBuilder


def _loop_no_overlap(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float, instance: Instance,
                     dims: DimRefs, update_ns: float = 0.0) -> None:
    b.constant += w * float(C.sum())
    b.add_all(refs, np.array([w, w, w]))


def _loop_recompute(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float, instance: Instance,
                    dims: DimRefs, update_ns: float = 0.0) -> None:
    b.constant += w * float(C.sum() + C[:, 0].sum())
    b.add_all(refs, np.array([2 * w, w, w]))


class DimRefs:
    """Per-dimension terms sigma_{l,j,d} = m_{l,j,d} t_d + lambda_{l,j,d} of single collectives (the
    time a collective keeps dimension d busy), registered on demand as one-dimension terms (their
    max and sum over d agree, so they mean the same in both dimension modes)."""

    def __init__(self, b: TermBuilder, traffic: np.ndarray, latency: np.ndarray):
        self.b, self.traffic, self.latency = b, traffic, latency
        self.cache: dict[tuple[int, float, float], Ref | None] = {}

    def __call__(self, lay: int, j: int, d: int) -> Ref | None:
        m, lam = float(self.traffic[lay, j, d]), float(self.latency[lay, j, d])
        key = (d, m, lam)
        if key not in self.cache:
            row_m, row_l = np.zeros(self.traffic.shape[2]), np.zeros(self.traffic.shape[2])
            row_m[d], row_l[d] = m, lam
            self.cache[key] = self.b.term(row_m, row_l, count=0)
        return self.cache[key]

    def busy(self, lay: int, j: int) -> np.ndarray:
        """Boolean (D,): dimensions the collective of (layer, phase) keeps busy."""
        return (self.traffic[lay, j] > 0) | (self.latency[lay, j] > 0)

    def busy_all(self) -> np.ndarray:
        """Boolean (L, 3, D): :meth:`busy` of every (layer, phase)."""
        return (self.traffic > 0) | (self.latency > 0)


def _loop_tp_dp_overlap(
    b: TermBuilder,
    C: np.ndarray,
    refs: PhaseRefs,
    w: float,
    instance: Instance,
    dims: DimRefs,
    update_ns: float = 0.0,
) -> None:
    b.constant += w * float(C[:, 0].sum())
    b.add_all(refs, np.array([w, 0.0, 0.0]))
    serial = instance.collectives_in_flight == 1
    for lay, ((_, ig, wg), (_, c_ig, c_wg)) in enumerate(zip(refs.rows(), C, strict=True)):
        if serial:  # C_ig + max(T_ig, C_wg) + T_wg
            b.node([(c_ig, [ig, wg], []), (c_ig + c_wg, [wg], [])], w)
            continue
        pieces = [(c_ig, [ig], []), (c_ig + c_wg, [wg], [])]
        # both on a dimension: its bytes of both over its bandwidth
        if ig is not None and wg is not None:
            for d in np.flatnonzero(dims.busy(lay, 1) & dims.busy(lay, 2)):
                pieces.append((c_ig, [dims(lay, 1, d), dims(lay, 2, d)], []))
        b.node(pieces, w)


def _node_ref(v: int | None) -> list[tuple[int, float]]:
    return [] if v is None else [(v, 1.0)]


def _cross_serial(b: TermBuilder, C: np.ndarray, rows: list, w: float) -> int:
    """One collective at a time: going backwards, ig(l) starts at max(compute position + C_ig, slot
    free) and blocks compute; wg(l) starts at max(compute position after C_wg, slot free)."""
    # compute position, collective slot free (nodes; None = start of the backward pass)
    R = S = None
    for lay in reversed(range(len(rows))):
        _, ig, wg = rows[lay]
        _, c_ig, c_wg = C[lay]
        if ig is not None:
            E = b.node(
                [(c_ig, [ig], _node_ref(R))]
                + ([(0.0, [ig], _node_ref(S))] if S is not None else []),
                0.0,
            )
            base, off, S = E, c_wg, E
        else:
            base, off = R, c_ig + c_wg
        if wg is not None:
            S = b.node(
                [(off, [wg], _node_ref(base))]
                + ([(0.0, [wg], _node_ref(S))] if S is not None else []),
                0.0,
            )
        R = b.node([(off, [], _node_ref(base))], 0.0)
    end = [(0.0, [], _node_ref(R))] + ([(0.0, [], _node_ref(S))] if S is not None else [])
    return b.node(end, w)


def _loop_tp_dp_overlap_cross(
    b: TermBuilder,
    C: np.ndarray,
    refs: PhaseRefs,
    w: float,
    instance: Instance,
    dims: DimRefs,
    update_ns: float = 0.0,
) -> None:
    b.constant += w * float(C[:, 0].sum())
    b.add_all(refs, np.array([w, 0.0, 0.0]))
    cross_backward(b, C, refs, w, instance, dims)


def cross_backward(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float, instance: Instance,
                   dims: DimRefs) -> int | None:
    """Add w x one backward pass with the weight-gradient collectives on their own stream (loop
    ``tp_dp_overlap_cross``, and the last micro-batch of loop ``step`` with ``overlap_dp``): its
    compute and input-gradient collectives as max nodes (not as constant and terms); concurrent
    collectives share every dimension's bandwidth, or run one at a time when
    ``instance.collectives_in_flight == 1``. Returns the pass's end node (None without layers)."""
    rows = refs.rows()
    if not rows:
        return None
    if instance.collectives_in_flight == 1:
        return _cross_serial(b, C, rows, w)
    L = len(rows)
    shared = np.flatnonzero(np.any([dims.busy(lay, 1) for lay in range(L)], axis=0)
                            & np.any([dims.busy(lay, 2) for lay in range(L)], axis=0))
    r_prev = y_prev = None
    # per shared dimension: the gradient stream's backlog there (TP collectives first)
    Z: dict[int, int] = {}
    for lay in reversed(range(L)):
        _, ig, wg = rows[lay]
        _, c_ig, c_wg = C[lay]
        r = b.node([(c_ig + c_wg, [ig], _node_ref(r_prev))], 0.0)
        if wg is not None:
            pieces = [(0.0, [wg], [(r, 1.0)])] + (
                [(0.0, [wg], [(y_prev, 1.0)])] if y_prev is not None else []
            )
            for d in shared:
                s_wg, s_ig = dims(lay, 2, d), dims(lay, 1, d)
                zp = [(0.0, [s_wg], [(r, 1.0)])] + (
                    [(0.0, [s_ig, s_wg], [(Z[d], 1.0)])] if d in Z else []
                )
                Z[d] = b.node(zp, 0.0)
                pieces.append((0.0, [], [(Z[d], 1.0)]))
            y_prev = b.node(pieces, 0.0)
        else:
            for d in shared:
                s_ig = dims(lay, 1, d)
                if d in Z and s_ig is not None:
                    Z[d] = b.node([(0.0, [s_ig], [(Z[d], 1.0)])], 0.0)
        r_prev = r
    end = [(0.0, [], [(r_prev, 1.0)])] + (
        [(0.0, [], [(y_prev, 1.0)])] if y_prev is not None else []
    )
    end += [(0.0, [], [(z, 1.0)]) for z in Z.values()]
    return b.node(end, w)


def gather_forward(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float, instance: Instance,
                   dims: DimRefs, gathers: np.ndarray) -> int | None:
    """Add w x the first forward pass with the all-gathers of ``gathers`` (bool (L,)) on their own
    stream (:mod:`hieropt.model.gathers`: the backward pass of :func:`cross_backward` it mirrors);
    returns its end node."""
    C2, tr = reversed_forward(C, dims.traffic, gathers)
    lat = reversed_forward(C, dims.latency, gathers)[1]
    return cross_backward(b, C2, reversed_refs(refs, C, gathers), w, instance,
                          DimRefs(b, tr, lat))


def p2p_row(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """The pipeline's point-to-point send as one collective row: (bytes, latency ns) per dimension,
    (D,) each; a FullyConnected dimension of n NPUs gives the send one of its n - 1 links
    (:func:`hieropt.model.algorithms.p2p_links`)."""
    pp = instance.pipeline
    D = instance.network.n_dims
    m, lam = np.zeros(D), np.zeros(D)
    # (one link of a FullyConnected dim)
    m[pp.p2p_dim] = pp.p2p_bytes * p2p_links(instance.network)[pp.p2p_dim]
    if pp.p2p_bytes > 0:
        # one step per chunk
        lam[pp.p2p_dim] = instance.network.dims[pp.p2p_dim].latency_ns * instance.chunks
    return m, lam


def _loop_pipeline(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float, instance: Instance,
                   dims: DimRefs, update_ns: float = 0.0) -> None:
    pp = instance.pipeline
    factor = pp.microbatches + pp.stages - 1
    b.constant += w * factor * float(C.sum())
    b.add_all(refs, np.array([w * factor, w * factor, w]))
    b.add(b.term(*p2p_row(instance)), 2 * w * factor)


def _loop_step(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float, instance: Instance,
               dims: DimRefs, update_ns: float = 0.0, own: np.ndarray | None = None,
               gathers: np.ndarray | None = None) -> None:
    st = instance.step
    F = st.slots
    b.constant += w * update_ns
    if own is not None:  # (the own-stream collectives of every micro-batch: hieropt.model.overlap)
        b.add_all(refs, np.array([0.0, 0.0, w]))
        add_slot(b, C, refs, dims, own, w * F, instance.collectives_in_flight == 1)
        return
    # (the all-gathers after the optimizer step: hieropt.model.gathers)
    hide = gathers is not None and gathered(instance)
    first = F - 1 if hide else F
    if hide:
        gather_forward(b, C, refs, w, instance, dims, gathers)
    if not st.overlap_dp:
        b.constant += w * (first * float(C[:, 0].sum()) + F * float(C[:, 1:].sum()))
        b.add_all(without(refs, gathers if hide else None), np.array([w * first, w * F, w]))
        return
    b.constant += w * (first * float(C[:, 0].sum()) + (F - 1) * float(C[:, 1:].sum()))
    b.add_all(refs, np.array([w * first, w * (F - 1), 0.0]))
    if gathers is not None and not hide:
        b.add_all(only(refs, gathers), np.array([0.0, 0.0, w]))
    cross_backward(b, C, without(refs, gathers), w, instance, dims)


LOOPS: dict[str, Callable[..., None]] = {
    "no_overlap": _loop_no_overlap,
    "tp_dp_overlap": _loop_tp_dp_overlap,
    "tp_dp_overlap_cross": _loop_tp_dp_overlap_cross,
    "recompute": _loop_recompute,
    "pipeline": _loop_pipeline,
    "step": _loop_step,
}
"""Training loops by name: each adds one workload's T, in the form of :class:`TimeModel`, to the
builder."""


def _cross_time(C: np.ndarray, T: np.ndarray, per_dim: np.ndarray, serial: bool) -> float:
    """The backward pass of ``tp_dp_overlap_cross`` (after the forward), numerically: see the timing
    docstring. Layer by layer on Python floats (a numpy call per layer costs more than the
    arithmetic on D numbers)."""
    compute_at = comm_free = 0.0
    D = per_dim.shape[2]
    Cl, Tl = C.tolist(), T.tolist()
    if serial:
        for lay in reversed(range(len(Cl))):
            compute_at += Cl[lay][1]
            if Tl[lay][1] > 0:
                compute_at = comm_free = max(compute_at, comm_free) + Tl[lay][1]
            compute_at += Cl[lay][2]
            if Tl[lay][2] > 0:
                comm_free = max(compute_at, comm_free) + Tl[lay][2]
        return max(compute_at, comm_free)
    if not per_dim.any():  # no collective takes time: the backward compute
        return float(C[:, 1].sum() + C[:, 2].sum())
    P1, P2 = per_dim[:, 1, :].tolist(), per_dim[:, 2, :].tolist()
    Z = [-float("inf")] * D
    for lay in reversed(range(len(Cl))):
        c, t = Cl[lay], Tl[lay]
        compute_at += c[1] + t[1] + c[2]
        # the TP collective delays the gradient backlog on its dimensions, then the gradient's joins
        if t[2] > 0:
            Z = [max(compute_at, z + a) + b for z, a, b in zip(Z, P1[lay], P2[lay], strict=True)]
            comm_free = max(max(comm_free, compute_at) + t[2], max(Z) if D else -float("inf"))
        elif t[1] > 0:
            Z = [z + a for z, a in zip(Z, P1[lay], strict=True)]
    return max(compute_at, comm_free, max(Z) if D else 0.0)


def gather_time(C: np.ndarray, T: np.ndarray, per_dim: np.ndarray, gathers: np.ndarray,
                serial: bool) -> float:
    """The first forward pass with the all-gathers of ``gathers`` (bool (L,)) on their own stream,
    numerically, ns (:mod:`hieropt.model.gathers`): the mirrored backward pass of
    :func:`_cross_time`."""
    C2, T2 = reversed_forward(C, T, gathers)
    return _cross_time(C2, T2, reversed_forward(C, per_dim, gathers)[1], serial)


def cross_time(C: np.ndarray, T: np.ndarray, per_dim: np.ndarray, instance: Instance) -> float:
    """The backward pass of ``tp_dp_overlap_cross`` (the per-iteration collectives on their own
    stream), numerically, ns: C, T (L, 3) compute and collective ns, ``per_dim`` (L, 3, D) busy ns
    (timing docstring)."""
    return _cross_time(C, T, per_dim, instance.collectives_in_flight == 1)


def loop_time(loop: str, C: np.ndarray, T: np.ndarray, p2p_ns: float, instance: Instance,
              per_dim: np.ndarray | None = None, update_ns: float = 0.0,
              own: np.ndarray | None = None, gathers: np.ndarray | None = None) -> float:
    """The training-loop formulas of the :mod:`hieropt.model.timing` docstring, numerically (C, T:
    (L, 3) compute and collective ns; ``per_dim``: (L, 3, D) ns each collective keeps each dimension
    busy, needed by the overlap loops and ``step`` with ``overlap_dp`` or own-stream collectives;
    ``update_ns``: the workload's optimizer step, counted by loop ``step``; ``own``: (L, 3) the
    phases on their own stream, :mod:`hieropt.model.overlap`; ``gathers``: (L,) the layers whose
    weight-gradient collective is an all-gather after the optimizer step,
    :mod:`hieropt.model.gathers`)."""
    serial = instance.collectives_in_flight == 1
    if per_dim is None:
        per_dim = np.zeros(T.shape + (instance.network.n_dims,))
    if loop == "no_overlap":
        return float(C.sum() + T.sum())
    if loop == "recompute":
        return float(C.sum() + T.sum() + C[:, 0].sum() + T[:, 0].sum())
    if loop == "tp_dp_overlap":
        if serial:
            bwd = C[:, 1] + np.maximum(T[:, 1], C[:, 2]) + T[:, 2]
        else:
            both = (
                (per_dim[:, 1, :] + per_dim[:, 2, :]).max(axis=1)
                if per_dim.shape[2]
                else np.zeros(len(C))
            )
            bwd = np.maximum(
                np.maximum(C[:, 1] + T[:, 1], C[:, 1] + C[:, 2] + T[:, 2]), C[:, 1] + both
            )
        return float(C[:, 0].sum() + T[:, 0].sum() + bwd.sum())
    if loop == "tp_dp_overlap_cross":
        return float(C[:, 0].sum() + T[:, 0].sum()) + _cross_time(C, T, per_dim, serial)
    if loop == "step":
        st = instance.step
        F = st.slots
        if own is not None:
            return float(F * slot_time(C, T, per_dim, own, serial) + T[:, 2].sum() + update_ns)
        forward = C[:, 0].sum() + T[:, 0].sum()
        backward = C[:, 1].sum() + T[:, 1].sum() + C[:, 2].sum()
        # (the all-gathers after the optimizer step: hieropt.model.gathers)
        A = gathers if gathers is not None else np.zeros(len(C), dtype=bool)
        hide = bool(A.any()) and gathered(instance)
        fwd = (F - 1) * forward + gather_time(C, T, per_dim, A, serial) if hide else F * forward
        after = 0.0 if hide else float(T[A, 2].sum())
        if not st.overlap_dp:
            return float(fwd + F * backward + T[~A, 2].sum() + after + update_ns)
        Tr, Pr = T.copy(), per_dim.copy()
        Tr[A, 2], Pr[A, 2] = 0.0, 0.0
        return float(fwd + (F - 1) * backward + _cross_time(C, Tr, Pr, serial) + update_ns
                     + after)
    if loop == "pipeline":
        pp = instance.pipeline
        per_micro = C.sum() + T[:, 0].sum() + T[:, 1].sum() + 2 * p2p_ns
        return float((pp.microbatches + pp.stages - 1) * per_micro + T[:, 2].sum())
    raise ValueError(f"unknown training loop {loop!r}")


def executions(instance: Instance) -> tuple[np.ndarray, float]:
    """How often each phase's collective runs per iteration (forward, input_grad, weight_grad) and
    the p2p count."""
    if instance.training_loop == "recompute":
        return np.array([2.0, 1.0, 1.0]), 0.0
    if instance.training_loop == "pipeline":
        m = float(instance.pipeline.microbatches)
        return np.array([m, m, 1.0]), 2 * m
    if instance.training_loop == "step":
        m = float(instance.step.microbatches)
        return np.array([m, m, 1.0]), 0.0
    return np.ones(3), 0.0
