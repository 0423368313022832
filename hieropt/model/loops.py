"""The training loops (one home for each): how a loop adds one workload's T to the time model (the entries of
:data:`LOOPS`, for the formulations) and the same formula evaluated numerically (:func:`loop_time`, for the independent
evaluator). The formulas are in the :mod:`hieropt.model.timing` docstring."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..spec import Instance
from .terms import PhaseRefs, TermBuilder


def _loop_no_overlap(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float, instance: Instance,
                     update_ns: float = 0.0) -> None:
    b.constant += w * float(C.sum())
    b.add_all(refs, np.array([w, w, w]))


def _loop_recompute(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float, instance: Instance,
                    update_ns: float = 0.0) -> None:
    b.constant += w * float(C.sum() + C[:, 0].sum())
    b.add_all(refs, np.array([2 * w, w, w]))


def _loop_tp_dp_overlap(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float, instance: Instance,
                        update_ns: float = 0.0) -> None:
    b.constant += w * float(C[:, 0].sum())
    b.add_all(refs, np.array([w, 0.0, 0.0]))
    for (_, ig, wg), (_, c_ig, c_wg) in zip(refs.rows(), C, strict=True):
        b.node([(c_ig, [ig], []), (c_ig + c_wg, [wg], [])], w)


def _loop_tp_dp_overlap_cross(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float, instance: Instance,
                              update_ns: float = 0.0) -> None:
    b.constant += w * float(C[:, 0].sum())
    b.add_all(refs, np.array([w, 0.0, 0.0]))
    cross_backward(b, C, refs, w)


def cross_backward(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float) -> None:
    """Add w x one backward pass with the weight-gradient collectives on their own stream (loop
    ``tp_dp_overlap_cross``): its compute and input-gradient collectives as max nodes (not as constant and terms)."""
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


def p2p_row(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """The pipeline's point-to-point send as one collective row: (bytes, latency ns) per dimension, (D,) each."""
    pp = instance.pipeline
    D = instance.network.n_dims
    m, lam = np.zeros(D), np.zeros(D)
    m[pp.p2p_dim] = pp.p2p_bytes
    if pp.p2p_bytes > 0:
        lam[pp.p2p_dim] = instance.network.dims[pp.p2p_dim].latency_ns  # one step
    return m, lam


def _loop_pipeline(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float, instance: Instance,
                   update_ns: float = 0.0) -> None:
    pp = instance.pipeline
    factor = pp.microbatches + pp.stages - 1
    b.constant += w * factor * float(C.sum())
    b.add_all(refs, np.array([w * factor, w * factor, w]))
    b.add(b.term(*p2p_row(instance)), 2 * w * factor)


def _loop_step(b: TermBuilder, C: np.ndarray, refs: PhaseRefs, w: float, instance: Instance,
               update_ns: float = 0.0) -> None:
    st = instance.step
    F = st.slots
    b.constant += w * update_ns
    if not st.overlap_dp:
        b.constant += w * F * float(C.sum())
        b.add_all(refs, np.array([w * F, w * F, w]))
        return
    b.constant += w * (F * float(C[:, 0].sum()) + (F - 1) * float(C[:, 1:].sum()))
    b.add_all(refs, np.array([w * F, w * (F - 1), 0.0]))
    cross_backward(b, C, refs, w)


LOOPS: dict[str, Callable[..., None]] = {
    "no_overlap": _loop_no_overlap,
    "tp_dp_overlap": _loop_tp_dp_overlap,
    "tp_dp_overlap_cross": _loop_tp_dp_overlap_cross,
    "recompute": _loop_recompute,
    "pipeline": _loop_pipeline,
    "step": _loop_step,
}
"""Training loops by name: each adds one workload's T, in the form of :class:`TimeModel`, to the builder."""


def _cross_backward_time(C: np.ndarray, T: np.ndarray) -> float:
    compute_at = comm_free = 0.0
    for lay in reversed(range(C.shape[0])):
        compute_at += C[lay, 1] + T[lay, 1] + C[lay, 2]
        if T[lay, 2] > 0:
            comm_free = max(comm_free, compute_at) + T[lay, 2]
    return max(compute_at, comm_free)


def loop_time(loop: str, C: np.ndarray, T: np.ndarray, p2p_ns: float, instance: Instance,
              update_ns: float = 0.0) -> float:
    """The training-loop formulas of the :mod:`hieropt.model.timing` docstring, numerically (C, T: (L, 3) compute
    and collective ns; ``update_ns``: the workload's optimizer step, counted by loop ``step``)."""
    if loop == "no_overlap":
        return float(C.sum() + T.sum())
    if loop == "recompute":
        return float(C.sum() + T.sum() + C[:, 0].sum() + T[:, 0].sum())
    if loop == "tp_dp_overlap":
        bwd = np.maximum(C[:, 1] + T[:, 1], C[:, 1] + C[:, 2] + T[:, 2])
        return float(C[:, 0].sum() + T[:, 0].sum() + bwd.sum())
    if loop == "tp_dp_overlap_cross":
        return float(C[:, 0].sum() + T[:, 0].sum() + _cross_backward_time(C, T))
    if loop == "step":
        st = instance.step
        F = st.slots
        if not st.overlap_dp:
            return float(F * (C.sum() + T[:, 0].sum() + T[:, 1].sum()) + T[:, 2].sum() + update_ns)
        forward = C[:, 0].sum() + T[:, 0].sum()
        backward = C[:, 1].sum() + T[:, 1].sum() + C[:, 2].sum()
        return float(F * forward + (F - 1) * backward + _cross_backward_time(C, T) + update_ns)
    if loop == "pipeline":
        pp = instance.pipeline
        per_micro = C.sum() + T[:, 0].sum() + T[:, 1].sum() + 2 * p2p_ns
        return float((pp.microbatches + pp.stages - 1) * per_micro + T[:, 2].sum())
    raise ValueError(f"unknown training loop {loop!r}")


def executions(instance: Instance) -> tuple[np.ndarray, float]:
    """How often each phase's collective runs per iteration (forward, input_grad, weight_grad) and the p2p count."""
    if instance.training_loop == "recompute":
        return np.array([2.0, 1.0, 1.0]), 0.0
    if instance.training_loop == "pipeline":
        m = float(instance.pipeline.microbatches)
        return np.array([m, m, 1.0]), 2 * m
    if instance.training_loop == "step":
        m = float(instance.step.microbatches)
        return np.array([m, m, 1.0]), 0.0
    return np.ones(3), 0.0
