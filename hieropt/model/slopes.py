"""The iteration time and one of its linear pieces at a point, for every layer at once (numpy, no
Python object per layer): what the cutting-plane model of large workloads
(:mod:`hieropt.model.cutmodel`) is built from.

T is convex and piecewise linear in t = 1/B (t_d in ns per byte: 1 GB/s = 1 byte/ns); every max of
the training loop's formulas (:mod:`hieropt.model.timing` docstring) is resolved at the point by its
largest argument, which gives one affine function ``const_ns + grad . t`` that equals T at the point
and is below T everywhere: T is a max (and non-negative sums) of such selections, so any selection
is a valid under-estimator (a subgradient cut). The recursions of the cross-layer overlap
(``tp_dp_overlap_cross``, ``step`` with ``overlap_dp``) are max-plus recurrences x_i = max(a_i,
x_(i-1) + s_i), solved in closed form, x_i = S_i + max_(k <= i) (a_k - S_k) with S the prefix sums
of s, by ``np.maximum.accumulate``; the argument that attains the running maximum is the selected
piece. Not covered: ``collectives_in_flight = 1`` with the cross-layer overlap (a two-state
recurrence), loop ``step``'s all-gathers after the optimizer step with an overlap
(:mod:`hieropt.model.gathers`): the dense model serves them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..spec import Instance
from .gathers import step_gathers
from .loops import p2p_row
from .pipeline import composition, graph_chunks, graph_ops, overlapped
from .schedule_dag import schedule_time
from .sends import placed_job
from .stages import stage_jobs
from .traffic import model_mode, phase_latency, phase_sums, phase_traffic

__all__ = ["JobArrays", "job_arrays", "time_piece", "supported"]


@dataclass(frozen=True)
class JobArrays:
    """One workload's per-layer data: ``traffic`` and ``latency`` (L, 3, D) bytes and ns per phase
    and dimension, ``compute`` (L, 3) ns, ``update_ns`` its optimizer step and ``weight`` its weight
    in T; ``cache`` holds arrays derived once (prefix sums in backward order). ``more``: the arrays
    of the workload's further pipeline stages (:attr:`hieropt.spec.Workload.more_stages`), whose
    maximum with this stage is the workload's T."""

    traffic: np.ndarray
    latency: np.ndarray
    compute: np.ndarray
    update_ns: float
    weight: float
    cache: dict = field(default_factory=dict, compare=False, repr=False)
    more: tuple[JobArrays, ...] = ()
    sums: np.ndarray | None = None
    composed: tuple | None = None
    """(stage counts, index of the first stage) of :func:`hieropt.model.pipeline.composition`, or
    None."""
    chunks: tuple | None = None
    """Per stage (this one, then :attr:`more`) its chunks' rows when the schedule's graph times the
    pipeline (:func:`hieropt.model.pipeline.graph_chunks`), else None."""


def job_arrays(instance: Instance) -> list[JobArrays]:
    """The per-layer arrays of every workload of ``instance`` (``instance.jobs`` order)."""
    out = []
    for job in instance.jobs:
        job = placed_job(instance, job)  # (each pipeline send on the dimensions it crosses)
        first, *more = [_stage_arrays(instance, stage) for stage in stage_jobs(job)]
        out.append(
            replace(first, more=tuple(more), composed=(comp := composition(instance, job)),
                    chunks=graph_chunks(instance, job) if comp is not None else None)
            if more else first
        )
    return out


def _stage_arrays(instance: Instance, job) -> JobArrays:
    table = job.workload.table
    sums = phase_sums(instance, job) if model_mode(instance) == "concurrent" else None
    return JobArrays(phase_traffic(instance, job), phase_latency(instance, job), table.compute_ns,
                     float(table.update_ns.sum()), float(job.weight),
                     sums=sums if sums is not None and sums.any() else None)


def supported(instance: Instance) -> bool:
    """Whether :func:`time_piece` states the instance's loop (all but the serial cross-layer
    overlap, the own-stream collectives of :mod:`hieropt.model.overlap` and loop ``step``'s
    all-gathers after the optimizer step with ``overlap_dp`` or ``overlap_gather``
    (:mod:`hieropt.model.gathers`), which the dense model states)."""
    loop = instance.training_loop
    cross = loop == "tp_dp_overlap_cross" or (loop == "step" and instance.step.overlap_dp)
    own = loop == "step" and bool(instance.step.overlap_groups)
    # (the all-gathers after the optimizer step outside the overlapped pass, or hidden behind the
    # first forward: hieropt.model.gathers; the dense model states them)
    gathers = loop == "step" and (instance.step.overlap_dp or instance.step.overlap_gather) and any(
        step_gathers(instance, w.table.collective) is not None
        for job in instance.jobs for w in job.workload.stages)
    return not (cross and instance.collectives_in_flight == 1) and not own and not gathers


@dataclass
class _Coll:
    """Every collective's time at t as an affine piece, value ``val`` and constant ``const`` (L, 3);
    its gradient is bytes ``m`` on dimension ``d`` (L, 3) each when the dimensions work concurrently
    (the slowest), or the whole traffic row ``full`` (L, 3, D) when they work sequentially."""

    val: np.ndarray
    const: np.ndarray
    d: np.ndarray | None
    m: np.ndarray | None
    full: np.ndarray | None
    D: int

    def grad(self, j: int, sel=slice(None)) -> np.ndarray:
        """(D,) sum of the gradients of phase ``j``'s collectives over the layers ``sel`` (mask,
        slice or index array)."""
        if self.full is not None:
            return self.full[sel, j].sum(axis=0)
        return np.bincount(self.d[sel, j], weights=self.m[sel, j], minlength=self.D).astype(
            float, copy=False
        )

    def row(self, i: int, j: int) -> np.ndarray:
        """(D,) gradient of one collective."""
        if self.full is not None:
            return self.full[i, j].copy()
        g = np.zeros(self.D)
        g[self.d[i, j]] = self.m[i, j]
        return g


def _collectives(traffic: np.ndarray, latency: np.ndarray, t: np.ndarray, mode: str) -> _Coll:
    per = traffic * t
    lat = latency.any()
    if lat:
        per += latency
    if mode == "sequential":
        return _Coll(per.sum(axis=-1), latency.sum(axis=-1), None, None, traffic, t.size)
    D = t.size
    shape = per.shape[:-1]
    d = per.argmax(axis=-1)
    flat = d.ravel() + np.arange(0, d.size * D, D)
    const = latency.reshape(-1)[flat].reshape(shape) if lat else np.zeros(shape)
    return _Coll(
        per.reshape(-1)[flat].reshape(shape),
        const,
        d,
        traffic.reshape(-1)[flat].reshape(shape),
        None,
        D,
    )


def _phase_columns(job: JobArrays) -> list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """Per phase, once per workload: the dimensions any of its collectives uses, and its bytes and
    latency there as contiguous (L, n) arrays (latency None when there is none)."""
    cols = job.cache.get("phases")
    if cols is None:
        cols = []
        for j in range(3):
            tr, la = job.traffic[:, j], job.latency[:, j]
            dims = np.flatnonzero(tr.any(axis=0) | la.any(axis=0))
            lat = np.ascontiguousarray(la[:, dims]) if la[:, dims].any() else None
            cols.append((dims, np.ascontiguousarray(tr[:, dims]), lat))
        job.cache["phases"] = cols
    return cols


def _mixed(job: JobArrays, t: np.ndarray) -> _Coll:
    """:func:`_collectives` when some collectives sum their dimensions' times (``job.sums``) and the
    others take the largest: every gradient as a whole row (the summing ones' traffic, the others'
    bytes on their slowest dimension)."""
    per = job.traffic * t + job.latency
    d = per.argmax(axis=-1)[..., None]
    top = np.take_along_axis(per, d, -1)[..., 0]
    one = np.zeros_like(job.traffic)
    np.put_along_axis(one, d, np.take_along_axis(job.traffic, d, -1), -1)
    const = np.where(
        job.sums, job.latency.sum(axis=-1), np.take_along_axis(job.latency, d, -1)[..., 0]
    )
    return _Coll(np.where(job.sums, per.sum(axis=-1), top), const, None, None,
                 np.where(job.sums[..., None], job.traffic, one), t.size)


def _job_collectives(job: JobArrays, t: np.ndarray, mode: str) -> _Coll:
    """:func:`_collectives` of a workload's layers, on the dimensions each phase uses only."""
    if job.sums is not None:
        return _mixed(job, t)
    if mode == "sequential":
        return _collectives(job.traffic, job.latency, t, mode)
    L, D = job.compute.shape[0], t.size
    val, const, dd, mm = (
        np.zeros((L, 3)),
        np.zeros((L, 3)),
        np.zeros((L, 3), dtype=np.int64),
        np.zeros((L, 3)),
    )
    for j, (dims, tr, la) in enumerate(_phase_columns(job)):
        if dims.size == 0:
            continue
        per = tr * t[dims]
        if la is not None:
            per += la
        if dims.size == 1:
            val[:, j], mm[:, j], dd[:, j] = per[:, 0], tr[:, 0], dims[0]
            if la is not None:
                const[:, j] = la[:, 0]
            continue
        a = per.argmax(axis=1)
        flat = a + np.arange(0, L * dims.size, dims.size)
        val[:, j], mm[:, j], dd[:, j] = per.ravel()[flat], tr.ravel()[flat], dims[a]
        if la is not None:
            const[:, j] = la.ravel()[flat]
    return _Coll(val, const, dd, mm, None, D)


def time_piece(
    instance: Instance, jobs: list[JobArrays], t: np.ndarray
) -> tuple[float, np.ndarray]:
    """The affine piece of T (all workloads, weighted) selected at ``t`` (D,) ns per byte:
    (const_ns, grad (D,) bytes), with T(t) = const_ns + grad . t up to rounding and T(t') >=
    const_ns + grad . t' for every t' >= 0.

    Raises:
        ValueError: the loop is not :func:`supported`.
    """
    if not supported(instance):
        raise ValueError("the serial cross-layer overlap has no vectorised piece")
    t = np.asarray(t, dtype=float)
    const, grad = 0.0, np.zeros(t.size)
    for job in jobs:
        if job.composed is not None:
            c, g = _composed_piece(instance, job, t)
            const += job.weight * c
            grad += job.weight * g
            continue
        c, g = _job_piece(instance, job, t)
        # the slowest stage's piece: below the max of the stages' times, equal at t
        for stage in job.more:
            cs, gs = _job_piece(instance, stage, t)
            if cs + float(gs @ t) > c + float(g @ t):
                c, g = cs, gs
        const += job.weight * c
        grad += job.weight * g
    return const, grad


def _composed_piece(instance: Instance, job: JobArrays, t: np.ndarray) -> tuple[float, np.ndarray]:
    """The piece of a composed pipeline (:mod:`hieropt.model.pipeline`) at ``t``: each stage's
    (each chunk's) forward, backward, tail or overlapped last pass as affine pieces; the schedule
    graph's critical path at ``t`` (or the slowest slot of the composition) selected for its
    maxima."""
    counts, first, entry = job.composed
    m, share = instance.step.microbatches, instance.step.fill_share
    over = overlapped(instance)
    chunks = job.chunks
    fwd, bwd = [], []  # (per entry, per chunk: (const, grad))
    end = (0.0, np.zeros(t.size))
    for k, st in enumerate((job, *job.more)):
        co = _job_collectives(st, t, model_mode(instance))
        C = st.compute
        fwd.append([(float(C[q, 0].sum() + co.const[q, 0].sum()), co.grad(0, q))
                    for q in (chunks[k] if chunks is not None else (slice(None),))])
        bwd.append([(float(C[q, 1:].sum() + co.const[q, 1].sum()), co.grad(1, q))
                    for q in (chunks[k] if chunks is not None else (slice(None),))])
        if k == first and over:
            bc, bg = _cross(st, co, t)
            end = (float(bc + st.update_ns), bg)  # (the overlapped backward and the optimizer step)
        elif k == first:
            end = (float(co.const[:, 2].sum() + st.update_ns), co.grad(2))
    const, grad = end
    if chunks is not None:
        ops, v = graph_ops(instance), instance.step.virtual_stages
        value = [[[c + float(g @ t) for c, g in x] for x in fb] for fb in (fwd, bwd)]
        _, path = schedule_time(
            ops, *[[x for r in range(len(entry)) for x in value[i][entry[r]]] for i in (0, 1)], v)
        # (overlapped: stage 0's last backward is the pass above)
        for j in path[1:] if over else path:
            c, g = (bwd if ops[j].backward else fwd)[entry[ops[j].stage]][ops[j].chunk]
            const, grad = const + c, grad + g
        return const, grad
    fwd, bwd = [x[0] for x in fwd], [x[0] for x in bwd]
    slots = [(f[0] + b[0], f[1] + b[1]) for f, b in zip(fwd, bwd, strict=True)]
    if over:
        const, grad = const + fwd[first][0], grad + fwd[first][1]
    for k, (n, (c, g)) in enumerate(zip(counts, slots, strict=True)):
        n -= 1 if over and k == first else 0
        const, grad = const + n * share * c, grad + n * share * g
    top = max(range(len(slots)), key=lambda k: slots[k][0] + float(slots[k][1] @ t))
    return const + (m - share) * slots[top][0], grad + (m - share) * slots[top][1]


def _job_piece(instance: Instance, job: JobArrays, t: np.ndarray) -> tuple[float, np.ndarray]:
    C = job.compute
    co = _job_collectives(job, t, model_mode(instance))
    loop = instance.training_loop

    def linear(w) -> tuple[float, np.ndarray]:
        c = sum(wj * float(co.const[:, j].sum()) for j, wj in enumerate(w) if wj)
        return c, sum((wj * co.grad(j) for j, wj in enumerate(w) if wj), np.zeros(t.size))

    if loop in ("no_overlap", "recompute"):
        w = [2.0, 1.0, 1.0] if loop == "recompute" else [1.0, 1.0, 1.0]
        c, g = linear(w)
        return c + float(C.sum() + (C[:, 0].sum() if loop == "recompute" else 0.0)), g
    if loop == "pipeline":
        pp = instance.pipeline
        f = pp.microbatches + pp.stages - 1
        c, g = linear([f, f, 1.0])
        m, lam = p2p_row(instance)
        pc = _collectives(m[None, None, :], lam[None, None, :], t, instance.dimension_mode)
        return c + f * float(C.sum()) + 2 * f * float(pc.const[0, 0]), g + 2 * f * pc.grad(0)
    if loop == "step" and not instance.step.overlap_dp:
        F = instance.step.slots
        c, g = linear([F, F, 1.0])
        return c + F * float(C.sum()) + job.update_ns, g
    if loop == "step":
        F = instance.step.slots
        # every T_wg is inside the cross piece of the last backward
        c, g = linear([F, F - 1.0, 0.0])
        bc, bg = _cross(job, co, t)
        return c + F * float(C[:, 0].sum()) + (F - 1) * float(
            C[:, 1:].sum()
        ) + bc + job.update_ns, g + bg
    c, g = linear([1.0, 0.0, 0.0])
    c += float(C[:, 0].sum())
    if loop == "tp_dp_overlap_cross":
        bc, bg = _cross(job, co, t)
        return c + bc, g + bg
    if loop == "tp_dp_overlap":
        bc, bg = _overlap(instance, job, co, t)
        return c + bc, g + bg
    raise ValueError(f"unknown training loop {loop!r}")


def _overlap(
    instance: Instance, job: JobArrays, co: _Coll, t: np.ndarray
) -> tuple[float, np.ndarray]:
    """Sum over layers of the backward pass of ``tp_dp_overlap``: each layer's largest argument."""
    C = job.compute
    c_ig, c_wg = C[:, 1], C[:, 2]
    if instance.collectives_in_flight == 1:  # C_ig + max(T_ig, C_wg) + T_wg
        comm = co.val[:, 1] >= c_wg
        c = float((c_ig + np.where(comm, co.const[:, 1], c_wg) + co.const[:, 2]).sum())
        return c, co.grad(1, comm) + co.grad(2)
    options = [c_ig + co.val[:, 1], c_ig + c_wg + co.val[:, 2]]
    tr = job.traffic[:, 1] + job.traffic[:, 2]  # (L, D): both collectives on each dimension
    la = job.latency[:, 1] + job.latency[:, 2]
    if tr.shape[1]:
        both = tr * t + la
        d3 = both.argmax(axis=1)
        options.append(c_ig + both[np.arange(d3.size), d3])
    k = np.argmax(np.stack(options), axis=0)
    c = float(
        (
            c_ig
            + np.where(k == 0, co.const[:, 1], 0.0)
            + np.where(k == 1, c_wg + co.const[:, 2], 0.0)
        ).sum()
    )
    g = co.grad(1, k == 0) + co.grad(2, k == 1)
    if tr.shape[1]:
        sel = k == 2
        c += float(la[sel, d3[sel]].sum())
        g = g + np.bincount(d3[sel], weights=tr[sel, d3[sel]], minlength=t.size)
    return c, g


def _running_max(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Running maximum of ``v`` along axis 0 and the index attaining it (the latest on ties)."""
    m = np.maximum.accumulate(v, axis=0)
    idx = np.arange(v.shape[0]).reshape((-1,) + (1,) * (v.ndim - 1))
    at = np.maximum.accumulate(np.where(v >= m, idx, 0), axis=0)
    return m, at


def _backward_prefix(job: JobArrays) -> dict:
    """Bandwidth-independent arrays of the backward order, once per workload: the reversed compute,
    the dimensions both input- and weight-gradient collectives use (``shared``; on any other
    dimension the gradient backlog never exceeds the gradient stream Y, so it is left out, as in the
    LP of :mod:`hieropt.model.loops`), the weight-gradient bytes and latency there and the prefix
    sums (leading 0) of S's latency and bytes there."""
    pre = job.cache.get("backward")
    if pre is None:
        rev = slice(None, None, -1)
        uses = [job.traffic[:, j].any(axis=0) | job.latency[:, j].any(axis=0) for j in (1, 2)]
        shared = np.flatnonzero(uses[0] & uses[1])
        tr1, tr2 = job.traffic[rev, 1][:, shared], job.traffic[rev, 2][:, shared]
        la1, la2 = job.latency[rev, 1][:, shared], job.latency[rev, 2][:, shared]
        zero = np.zeros((1, shared.size))
        pre = job.cache["backward"] = {
            "C": job.compute[rev], "shared": shared, "tr2": tr2, "la2": la2,
            "Sc": np.concatenate([zero, np.cumsum(la1 + la2, axis=0)]),
            "Sg": np.concatenate([zero, np.cumsum(tr1 + tr2, axis=0)]),
        }
    return pre


def _cross(job: JobArrays, co: _Coll, t: np.ndarray) -> tuple[float, np.ndarray]:
    """The backward pass of ``tp_dp_overlap_cross`` (shared links) as an affine piece, layers in
    backward order i: R_i = prefix of C_ig + T_ig + C_wg; on each dimension Z_i = max(R_i + p2_i,
    Z_(i-1) + p1_i + p2_i) for layers with a weight-gradient collective (else Z_(i-1) + p1_i); Y_i =
    max(Y_(i-1) + T_wg,i, R_i + T_wg,i, max_d Z_i) (Y_(-1) = 0); the end is max(R, Y, max_d Z) of
    the last."""
    pre = _backward_prefix(job)
    C, tr2, la2, Sc, Sg, shared = (
        pre["C"],
        pre["tr2"],
        pre["la2"],
        pre["Sc"],
        pre["Sg"],
        pre["shared"],
    )
    L, D = C.shape[0], t.size
    ts = t[shared]
    rev = slice(None, None, -1)
    v1, v2 = co.val[rev, 1], co.val[rev, 2]
    k1, k2 = co.const[rev, 1], co.const[rev, 2]
    Rc = np.concatenate([[0.0], np.cumsum(C[:, 1] + C[:, 2] + k1)])  # constant of R_i at [i + 1]
    R = np.cumsum(C[:, 1] + C[:, 2] + v1)
    P = np.cumsum(v2)
    Pc = np.concatenate([[0.0], np.cumsum(k2)])

    def grad(j: int, lo: int, hi: int) -> np.ndarray:
        """Sum of the gradients of phase j's collectives over backward positions lo .. hi - 1."""
        return co.grad(j, slice(L - hi, L - lo)) if hi > lo else np.zeros(D)

    wg = v2 > 0  # (a zero-time gradient collective is not issued)
    S = Sc[1:] + Sg[1:] * ts  # (L, shared)
    p2 = tr2 * ts + la2
    zm, zat = _running_max(np.where(wg[:, None], R[:, None] + p2, -np.inf) - S)
    Z = S + zm  # Z_i,d (-inf before the first gradient collective)

    def z_piece(i: int, s: int) -> tuple[float, np.ndarray]:
        """Z_(i, shared[s]) as (const, grad): R_k + p2_k + S_i - S_k with k its argument."""
        k = int(zat[i, s])
        g = grad(1, 0, k + 1)
        g[shared[s]] += tr2[k, s] + Sg[i + 1, s] - Sg[k + 1, s]
        return float(Rc[k + 1] + la2[k, s] + Sc[i + 1, s] - Sc[k + 1, s]), g

    zmax = Z.max(axis=1) if shared.size else np.full(L, -np.inf)
    ym, yat = _running_max(np.where(wg, np.maximum(R + v2, zmax), -np.inf) - P)
    last = L - 1
    e = int(np.argmax([R[last], P[last] + max(ym[last], 0.0), zmax[last]]))
    if e == 0:
        return float(Rc[L]), grad(1, 0, L)
    if e == 2:
        return z_piece(last, int(Z[last].argmax()))
    if ym[last] <= 0.0:  # Y_(-1) = 0 plus every T_wg
        return float(Pc[L]), grad(2, 0, L)
    k = int(yat[last])
    tail_c, tail_g = Pc[L] - Pc[k + 1], grad(2, k + 1, L)
    if R[k] + v2[k] >= zmax[k]:
        return float(Rc[k + 1] + k2[k] + tail_c), grad(1, 0, k + 1) + grad(2, k, k + 1) + tail_g
    c, g = z_piece(k, int(Z[k].argmax()))
    return c + float(tail_c), g + tail_g
