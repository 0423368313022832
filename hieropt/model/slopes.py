"""The iteration time and one of its linear pieces at a point, for every layer at once (numpy, no Python object per
layer): what the cutting-plane model of large workloads (:mod:`hieropt.model.cutmodel`) is built from.

T is convex and piecewise linear in t = 1/B (t_d in ns per byte: 1 GB/s = 1 byte/ns); every max of the training
loop's formulas (:mod:`hieropt.model.timing` docstring) is resolved at the point by its largest argument, which gives
one affine function ``const_ns + grad . t`` that equals T at the point and is below T everywhere: T is a max (and
non-negative sums) of such selections, so any selection is a valid under-estimator (a subgradient cut). The
recursions of the cross-layer overlap (``tp_dp_overlap_cross``, ``step`` with ``overlap_dp``) are max-plus
recurrences x_i = max(a_i, x_(i-1) + s_i), solved in closed form, x_i = S_i + max_(k <= i) (a_k - S_k) with S the
prefix sums of s, by ``np.maximum.accumulate``; the argument that attains the running maximum is the selected piece.
Not covered: ``collectives_in_flight = 1`` with the cross-layer overlap (a two-state recurrence; the dense model
serves it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spec import Instance
from .loops import p2p_row
from .traffic import phase_latency, phase_traffic

__all__ = ["JobArrays", "job_arrays", "time_piece", "supported"]


@dataclass(frozen=True)
class JobArrays:
    """One workload's per-layer data: ``traffic`` and ``latency`` (L, 3, D) bytes and ns per phase and dimension,
    ``compute`` (L, 3) ns, ``update_ns`` its optimizer step and ``weight`` its weight in T."""

    traffic: np.ndarray
    latency: np.ndarray
    compute: np.ndarray
    update_ns: float
    weight: float


def job_arrays(instance: Instance) -> list[JobArrays]:
    """The per-layer arrays of every workload of ``instance`` (``instance.jobs`` order)."""
    out = []
    for job in instance.jobs:
        table = job.workload.table
        out.append(JobArrays(phase_traffic(instance, job), phase_latency(instance, job), table.compute_ns,
                             float(table.update_ns.sum()), float(job.weight)))
    return out


def supported(instance: Instance) -> bool:
    """Whether :func:`time_piece` states the instance's loop (all but the serial cross-layer overlap)."""
    loop = instance.training_loop
    cross = loop == "tp_dp_overlap_cross" or (loop == "step" and instance.step.overlap_dp)
    return not (cross and instance.collectives_in_flight == 1)


def _collectives(traffic: np.ndarray, latency: np.ndarray, t: np.ndarray, mode: str):
    """Each collective's time at t as a linear piece: (const (...,), grad (..., D))."""
    if mode == "sequential":
        return latency.sum(axis=-1), traffic.copy()
    per = traffic * t + latency
    d = per.argmax(axis=-1)[..., None]
    const = np.take_along_axis(latency, d, axis=-1)[..., 0]
    grad = np.zeros_like(traffic)
    np.put_along_axis(grad, d, np.take_along_axis(traffic, d, axis=-1), axis=-1)
    return const, grad


def _pick(options: list[tuple[np.ndarray, np.ndarray]], t: np.ndarray):
    """Per row, the option of largest value (const, grad) among ``options``."""
    vals = np.stack([c + g @ t for c, g in options])
    k = vals.argmax(axis=0)
    const = np.choose(k, [c for c, _ in options])
    grad = np.stack([g for _, g in options])[k, np.arange(k.size)]
    return const, grad


def time_piece(instance: Instance, jobs: list[JobArrays], t: np.ndarray) -> tuple[float, np.ndarray]:
    """The affine piece of T (all workloads, weighted) selected at ``t`` (D,) ns per byte: (const_ns, grad (D,)
    bytes), with T(t) = const_ns + grad . t up to rounding and T(t') >= const_ns + grad . t' for every t' >= 0.

    Raises:
        ValueError: the loop is not :func:`supported`.
    """
    if not supported(instance):
        raise ValueError("the serial cross-layer overlap has no vectorised piece")
    t = np.asarray(t, dtype=float)
    const, grad = 0.0, np.zeros(t.size)
    for job in jobs:
        c, g = _job_piece(instance, job, t)
        const += job.weight * c
        grad += job.weight * g
    return const, grad


def _job_piece(instance: Instance, job: JobArrays, t: np.ndarray) -> tuple[float, np.ndarray]:
    mode = instance.dimension_mode
    C = job.compute
    cc, cg = _collectives(job.traffic, job.latency, t, mode)  # (L, 3), (L, 3, D)
    loop = instance.training_loop

    def linear(w) -> tuple[float, np.ndarray]:
        w = np.asarray(w, dtype=float)
        return float(cc.sum(axis=0) @ w), np.einsum("ljd,j->d", cg, w)

    if loop in ("no_overlap", "recompute"):
        w = [2.0, 1.0, 1.0] if loop == "recompute" else [1.0, 1.0, 1.0]
        c, g = linear(w)
        return c + float(C.sum() + (C[:, 0].sum() if loop == "recompute" else 0.0)), g
    if loop == "pipeline":
        pp = instance.pipeline
        f = pp.microbatches + pp.stages - 1
        c, g = linear([f, f, 1.0])
        m, lam = p2p_row(instance)
        pc, pg = _collectives(m[None, :], lam[None, :], t, mode)
        return c + f * float(C.sum()) + 2 * f * float(pc[0]), g + 2 * f * pg[0]
    if loop == "step" and not instance.step.overlap_dp:
        F = instance.step.slots
        c, g = linear([F, F, 1.0])
        return c + F * float(C.sum()) + job.update_ns, g
    if loop == "step":
        F = instance.step.slots
        c, g = linear([F, F - 1.0, 0.0])  # every T_wg is inside the cross piece of the last backward
        bc, bg = _cross(instance, job, cc, cg, t)
        return c + F * float(C[:, 0].sum()) + (F - 1) * float(C[:, 1:].sum()) + bc + job.update_ns, g + bg
    c, g = linear([1.0, 0.0, 0.0])
    c += float(C[:, 0].sum())
    if loop == "tp_dp_overlap_cross":
        bc, bg = _cross(instance, job, cc, cg, t)
        return c + bc, g + bg
    if loop == "tp_dp_overlap":
        bc, bg = _overlap(instance, job, cc, cg, t)
        return c + bc, g + bg
    raise ValueError(f"unknown training loop {loop!r}")


def _overlap(instance: Instance, job: JobArrays, cc: np.ndarray, cg: np.ndarray, t: np.ndarray):
    """Sum over layers of the backward pass of ``tp_dp_overlap``."""
    C = job.compute
    c_ig, c_wg = C[:, 1], C[:, 2]
    if instance.collectives_in_flight == 1:  # C_ig + max(T_ig, C_wg) + T_wg
        zero = np.zeros_like(cg[:, 1])
        c, g = _pick([(cc[:, 1], cg[:, 1]), (c_wg, zero)], t)
        return float((c_ig + c + cc[:, 2]).sum()), g.sum(axis=0) + cg[:, 2].sum(axis=0)
    tr = job.traffic[:, 1] + job.traffic[:, 2]  # (L, D): both collectives on each dimension
    la = job.latency[:, 1] + job.latency[:, 2]
    options = [(c_ig + cc[:, 1], cg[:, 1]), (c_ig + c_wg + cc[:, 2], cg[:, 2])]
    if tr.shape[1]:
        d = (tr * t + la).argmax(axis=1)[:, None]
        g3 = np.zeros_like(tr)
        np.put_along_axis(g3, d, np.take_along_axis(tr, d, axis=1), axis=1)
        options.append((c_ig + np.take_along_axis(la, d, axis=1)[:, 0], g3))
    c, g = _pick(options, t)
    return float(c.sum()), g.sum(axis=0)


def _running_max(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Running maximum of ``v`` along axis 0 and the index attaining it (the latest on ties)."""
    m = np.maximum.accumulate(v, axis=0)
    idx = np.arange(v.shape[0]).reshape((-1,) + (1,) * (v.ndim - 1))
    at = np.maximum.accumulate(np.where(v >= m, idx, 0), axis=0)
    return m, at


def _cross(instance: Instance, job: JobArrays, cc: np.ndarray, cg: np.ndarray, t: np.ndarray):
    """The backward pass of ``tp_dp_overlap_cross`` (shared links) as a linear piece, layers in backward order:
    R_i = prefix of C_ig + T_ig + C_wg; on each dimension Z_i = max(R_i + p2_i, Z_(i-1) + p1_i + p2_i) for layers
    with a weight-gradient collective (else Z_(i-1) + p1_i); Y_i = max(Y_(i-1) + T_wg,i, R_i + T_wg,i, max_d Z_i)
    (Y_(-1) = 0); the end is max(R, Y, max_d Z) of the last."""
    rev = slice(None, None, -1)
    C = job.compute[rev]
    tr, la = job.traffic[rev], job.latency[rev]  # (L, 3, D)
    cc, cg = cc[rev], cg[rev]
    L, D = C.shape[0], t.size
    # prefix sums (with a leading 0) of the constants and gradients of R, S (per dimension) and P = prefix T_wg
    Rc = np.concatenate([[0.0], np.cumsum(C[:, 1] + C[:, 2] + cc[:, 1])])
    Rg = np.concatenate([np.zeros((1, D)), np.cumsum(cg[:, 1], axis=0)])
    Sc = np.concatenate([np.zeros((1, D)), np.cumsum(la[:, 1] + la[:, 2], axis=0)])
    Sg = np.concatenate([np.zeros((1, D)), np.cumsum(tr[:, 1] + tr[:, 2], axis=0)])  # S_d's slope on t_d
    Pc = np.concatenate([[0.0], np.cumsum(cc[:, 2])])
    Pg = np.concatenate([np.zeros((1, D)), np.cumsum(cg[:, 2], axis=0)])
    wg = (cc[:, 2] + cg[:, 2] @ t) > 0  # (a zero-time gradient collective is not issued)
    R = Rc[1:] + Rg[1:] @ t  # (L,)
    S = Sc[1:] + Sg[1:] * t  # (L, D)
    p2 = tr[:, 2] * t + la[:, 2]
    a = np.where(wg[:, None], R[:, None] + p2, -np.inf)
    zm, zat = _running_max(a - S)  # Z_i,d = S_i,d + zm_i,d (-inf before the first gradient collective)
    Z = S + zm

    def z_piece(i: int, d: int):
        """Z_(i, d) as (const, grad): a_k + (S_i - S_k) with k its argument."""
        k = int(zat[i, d])
        c = Rc[k + 1] + la[k, 2, d] + Sc[i + 1, d] - Sc[k + 1, d]
        g = Rg[k + 1].copy()
        g[d] += tr[k, 2, d] + Sg[i + 1, d] - Sg[k + 1, d]
        return c, g

    P = Pc[1:] + Pg[1:] @ t
    T2 = cc[:, 2] + cg[:, 2] @ t
    zmax = Z.max(axis=1) if D else np.full(L, -np.inf)
    b = np.where(wg, np.maximum(R + T2, zmax), -np.inf)
    ym, yat = _running_max(b - P)
    last = L - 1
    ends = [R[last], P[last] + max(ym[last], 0.0), zmax[last]]
    e = int(np.argmax(ends))
    if e == 0:
        return float(Rc[L]), Rg[L].copy()
    if e == 2:
        return z_piece(last, int(Z[last].argmax()))
    if ym[last] <= 0.0:  # Y_(-1) = 0 plus every T_wg
        return float(Pc[L]), Pg[L].copy()
    k = int(yat[last])
    tail_c, tail_g = Pc[L] - Pc[k + 1], Pg[L] - Pg[k + 1]
    if R[k] + T2[k] >= zmax[k]:
        return float(Rc[k + 1] + cc[k, 2] + tail_c), Rg[k + 1] + cg[k, 2] + tail_g
    c, g = z_piece(k, int(Z[k].argmax()))
    return float(c + tail_c), g + tail_g
