"""Time model and the independent numpy evaluator of the training-iteration time
(docs/explanation/model.md).

A collective with per-dimension traffic m (bytes) and latency lambda (ns) takes, at per-NPU
bandwidths B (GB/s = bytes/ns), ``T_k = max_d (m_d / B_d + lambda_d)`` when the dimensions work
concurrently (pipelined, LIBRA) or ``sum_d (m_d / B_d + lambda_d)`` when they work one after another
(``dimension_mode``). With C the compute times and T the collective times of each layer's forward
(f), input-gradient (ig) and weight-gradient (wg) phases:

- ``no_overlap`` (LIBRA, ``inputs/training_loop/no_overlap.py``):
  T = sum_l (C_f + T_f) + sum_l (C_ig + T_ig + C_wg + T_wg).
- ``tp_dp_overlap``: a layer's weight-gradient collective runs concurrently with the rest of its
  back-propagation, and the two collectives share the bandwidth of every dimension they both use.
  With S_j,d = m_j,d / B_d + lambda_j,d the time collective j keeps dimension d busy:
  T = sum_l (C_f + T_f) + sum_l max(C_ig + T_ig, C_ig + C_wg + T_wg, C_ig + S_ig,d + S_wg,d for
  every d). The last pieces are the shared links: once the input-gradient collective starts,
  dimension d must still carry the bytes of both (for one dimension this is the exact makespan of
  the two under any work-conserving sharing).
- ``tp_dp_overlap_cross``: the weight-gradient collectives run on their own stream, in backward
  order, overlapping the following layers' backward compute. Going backwards, the compute stream
  reaches r_l = r_(l+1) + C_ig + T_ig + C_wg (input-gradient collectives block it, and go first on a
  shared dimension: they are on the critical path); the gradient stream finishes y_l =
  max(max(y_(l+1), r_l) + T_wg,l, Z_l,d for every d), where Z_l,d = max(r_l, Z_(l+1),d + S_ig(l),d)
  + S_wg(l),d is the gradient stream's backlog on dimension d: an input-gradient collective that
    starts while gradient bytes
  wait on d delays them by its own time on d (in a layer without a weight-gradient collective, Z_d
  += S_ig,d). The backward pass ends at max(r_0, y_0, Z_0,d).
- ``collectives_in_flight = 1`` (the simulator's behaviour: one collective at a time per NPU,
  compute still overlapping): ``tp_dp_overlap`` becomes sum_l (C_f + T_f) + sum_l (C_ig + max(T_ig,
  C_wg) + T_wg); ``tp_dp_overlap_cross`` one collective slot s: going backwards, r += C_ig, then r =
  s = max(r, s)
  + T_ig, r += C_wg, then s = max(r, s) + T_wg; the end is max(r, s); ``step`` with ``overlap_dp``
    uses the
  same for its last backward. The other loops never overlap two collectives.
- ``recompute`` (ASTRA-sim's FWD_IN_BCKWD, full activation recomputation): the forward compute and
  collective of every layer run again in the backward pass: T = no_overlap + sum_l (C_f + T_f).
- ``pipeline`` (GPipe / 1F1B schedule with p stages and m micro-batches; the workload is one stage's
  layers for one micro-batch): T = (m + p - 1) (sum_l (C_f + T_f + C_ig + T_ig + C_wg) + 2 T_p2p) +
  sum_l T_wg, where T_p2p sends the stage's activations (and, backwards, their gradients) over one
  dimension; the bubble is (p - 1)/m of the m (...) ideal, and the data-parallel gradient
  collectives run once per iteration.
- ``step`` (the composed training step of an LLM plan, :class:`hieropt.spec.StepSchedule`; the
  workload is one stage for one micro-batch, its collectives on named groups, pipeline sends
  included as ``P2P`` collectives): with F = m + (p - 1)/v micro-batch slots (1F1B: v = 1;
  interleaved: v chunks per stage; Narayanan et al. 2021 §2.2), T = F sum_l (C_f + T_f + C_ig + T_ig
  + C_wg) + sum_l T_wg + U, U the optimizer step (``update_ns``); with ``overlap_dp`` the last
  micro-batch's backward runs as ``tp_dp_overlap_cross`` (the per-iteration collectives on their own
  stream, sharing each dimension's bandwidth with the input-gradient collectives exactly as there):
  T = F sum_l (C_f + T_f) + (F - 1) sum_l (C_ig + T_ig + C_wg) + max(r_0, y_0, Z_0,d) + U, the
  weight-gradient all-gathers (ZeRO's, after the optimizer step) left out of that pass and added
  after U, or with ``overlap_gather`` hidden behind the first forward
  (:mod:`hieropt.model.gathers`). m = 1, p = 1 is ``no_overlap`` plus U. With ``overlap_groups``
  (per-micro-batch collectives on their own stream) each of the F slots is the max of
  :mod:`hieropt.model.overlap`.

``chunks = n``: a collective is sent in n chunks and each chunk pays its steps' latency, so every
latency term is n times larger (the bandwidth terms do not change).

Several pipeline stages (:attr:`hieropt.spec.Workload.more_stages`: a pipelined LLM plan's distinct
stages, each one stage for one micro-batch): under loop ``step`` with the stages each entry stands
for known (:attr:`hieropt.spec.Workload.pipeline_stages`), the schedule's graph of every stage's
forward and backward, each model chunk's with the interleaved schedule
(:mod:`hieropt.model.schedule_dag`: each operation after its stage's previous one and the blocking
send it waits for) plus W_0, the first stage's per-iteration tail, or for large schedules (and
own-stream collectives) the composition T = c sum_r t_r + (m - c) max_r t_r + W_0 of the stages'
slots t_r (c = 1/v for equal chunks; :mod:`hieropt.model.pipeline`; with ``overlap_dp`` the first
stage's last backward overlapped); otherwise a workload's T is the largest of its stages' T by
the formulas above (every stage as if the pipeline were made of it; a stage with less compute but
more communication, e.g. a middle stage's two pipeline sends, is the slowest at low bandwidth).
Several workloads: T = sum_j weight_j T_j. Every T is convex and piecewise linear in t = 1/B (maxima
and non-negative sums of affine functions of t), so the exact solvers apply unchanged.
:class:`TimeModel` states T in that form (collective terms, linear weights, and max nodes for the
epigraph LP; the stages' max is one more node); :func:`evaluate` computes T directly from the
formulas above, layer by layer and stage by stage, as an independent check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial, reduce

import numpy as np

from ..cache import Same, current, scoped
from ..errors import InputError
from ..spec import Instance
from .algorithms import p2p_links
from .bandwidths import check_bw
from .breakdown import Breakdown, free_times, stage_bytes
from .cost import cost_per_dim_usd
from .gathers import gather_rows, gathered, step_gathers
from .loops import LOOPS, DimRefs, cross_time, executions, gather_time, loop_time, p2p_row
from .overlap import own_stream
from .pipeline import (
    add_composed,
    add_graph,
    composed_time,
    composition,
    graph_chunks,
    overlapped,
    stage_parts,
)
from .sends import placed_job
from .stage_terms import StageTerms
from .stages import add_slowest_stage, stage_rows
from .terms import PhaseRefs, Piece, TermBuilder, TimeModel, collective_times, phase_refs
from .traffic import (
    CLASS_ROWS,
    job_arrays,
    links_key,
    may_sum,
    model_fields,
    model_mode,
    phase_classes,
    phase_latency,
    phase_sums,
    phase_traffic,
)
from .violations import design_notes


def build_time_model(instance: Instance) -> TimeModel:
    """The instance's iteration time (all workloads, weighted) as a :class:`TimeModel` for the
    formulations.

    Built once per instance and the fields it derives from (:meth:`hieropt.spec.base.Frozen.memo`: a
    copy with another objective, budget or constraint, as a Pareto front, a sensitivity re-solve or
    a repeated solve makes, shares it) and read-only (its arrays are not writeable). The independent
    evaluator (:func:`evaluate`) never reads it.

    Across instances, the model depends on the workloads, their mappings and weights, the loop and
    its settings and the dimensions' latency (and, with latency, their collective algorithms) and
    FullyConnected sizes (a point-to-point send's link), not on prices, constraints or blocks
    otherwise: the last :data:`TIME_MODELS` models of small workloads (<=
    :data:`~hieropt.model.traffic.CLASS_ROWS` phases) are kept by those inputs in the active cache
    (:mod:`hieropt.cache`) and shared, read-only (a sweep's shapes that differ only in blocks or
    prices, and its candidates on equal dimension sizes, have one model).

    Raises:
        nothing for a validated :class:`~hieropt.spec.Instance` (the library's
        ``hieropt.build_time_model`` refuses anything else as an InputError naming ``instance``).
    """
    return instance.memo("_time_model", model_fields(instance),
                         lambda: _shared_time_model(instance))


def _shared_time_model(instance: Instance) -> TimeModel:
    key, build = _model_key(instance), lambda: _new_time_model(instance)
    return build() if key is None else current().memo("time_model", key, build, TIME_MODELS)


def _new_time_model(instance: Instance) -> TimeModel:
    instance.require_resolved_weights()
    b = TermBuilder(instance.network.n_dims)
    mode = model_mode(instance)
    for job in instance.jobs:
        _add_job(b, instance, job, job.weight, mode)
    tm = b.build(mode)
    for a in (tm.terms_bytes, tm.terms_latency_ns, tm.term_weights, tm.node_weights):
        a.flags.writeable = False
    return tm


TIME_MODELS = 64
"""Time models :func:`build_time_model` keeps in the active cache (the last used)."""


def _model_key(instance: Instance) -> tuple | None:
    """What :func:`build_time_model` reads, as a key (tables as :class:`~hieropt.cache.Same`), or
    None."""
    jobs = instance.jobs
    if any(3 * t.size_bytes.shape[0] > CLASS_ROWS for t in _tables(instance)):
        return None
    dims = tuple(d.latency_ns for d in instance.network.dims)
    # (the algorithms give the latency's step counts; without latency they play no part)
    if any(dims):
        dims += tuple(d.collective_algorithm for d in instance.network.dims)
    return (
        instance.training_loop,
        instance.dimension_mode,
        instance.collectives_in_flight,
        instance.chunks,
        instance.step,
        instance.pipeline,
        dims,
        p2p_links(instance.network),
        tuple(
            (
                tuple(Same(w.table) for w in job.workload.stages),
                job.workload.group_algorithms,
                job.weight,
                job.mapping.forward,
                job.mapping.input_grad,
                job.mapping.weight_grad,
                tuple(sorted(job.mapping.groups.items())),
                links_key(instance, job),
            )
            for job in jobs
        ),
    )


def _tables(instance: Instance) -> list:
    """The phase tables of every stage of every workload of ``instance`` (jobs in order, stages in
    order)."""
    return [w.table for job in instance.jobs for w in job.workload.stages]


def _add_job(
    b: TermBuilder, instance: Instance, job, weight: float, mode: str | None = None
) -> None:
    """Add ``weight`` x one workload's T, by its training loop, to the builder; a workload of
    several pipeline stages adds ``weight`` x the max over its stages of each stage's T
    (:func:`hieropt.model.stages.add_slowest_stage`), every stage's collectives registered at once
    (:func:`hieropt.model.stages.stage_rows`), each pipeline send on the dimensions it crosses
    (:func:`hieropt.model.sends.placed_job`)."""
    job = placed_job(instance, job)
    rows, original = None, job
    if job.workload.more_stages:
        job, rows = stage_rows(job)
    traffic, latency = phase_traffic(instance, job), phase_latency(instance, job)
    table = job.workload.table
    concurrent = (mode or model_mode(instance)) == "concurrent"
    sums = phase_sums(instance, job) if concurrent and may_sum(instance, job) else None
    refs = phase_refs(
        b, traffic, latency, phase_classes(table), sums if sums is not None and sums.any() else None
    )
    loop, own = LOOPS[instance.training_loop], own_stream(instance, table.group)
    gathers = step_gathers(instance, table.collective)  # (hieropt.model.gathers)
    if rows is None:
        loop(b, table.compute_ns, refs, weight, instance, DimRefs(b, traffic, latency),
             float(table.update_ns.sum()), **_own(own, slice(None)),
             **gather_rows(gathers, slice(None)))
        return

    def add(s: int) -> None:
        r = rows[s]
        loop(b, table.compute_ns[r], PhaseRefs(k=refs.k[r], a=refs.a[r]), 1.0, instance,
             DimRefs(b, traffic[r], latency[r]), float(table.update_ns[r].sum()), **_own(own, r),
             **gather_rows(gathers, r))

    comp = composition(instance, original)
    if comp is None:
        add_slowest_stage(b, len(rows), add, weight)
        return
    parts = StageTerms(b, instance, table, refs, traffic, latency, rows, own, gathers)
    chunks = graph_chunks(instance, original)
    if chunks is None:
        add_composed(b, instance, *comp, parts.slot, parts.tail, parts.last, weight,
                     parts.first_slot if parts.hide else None)
        return
    gathered_first = parts.first_forward if parts.hide and parts.mask(comp[1]) is not None \
        else None
    add_graph(b, instance, comp[1], comp[2], parts.durations(chunks), parts.tail, parts.last_pass,
              weight, gathered_first)


def _own(own: np.ndarray | None, rows: slice) -> dict:
    """The loop's ``own`` argument for the phases ``rows``: their own-stream phases, if any."""
    return {"own": own[rows]} if own is not None and own[rows].any() else {}


def job_time_models(instance: Instance) -> list[TimeModel]:
    """One :class:`TimeModel` per workload of ``instance`` (``instance.jobs`` order), each
    unweighted: T_w(B)."""
    out = []
    for job in instance.jobs:
        b = TermBuilder(instance.network.n_dims)
        mode = model_mode(instance)
        _add_job(b, instance, job, 1.0, mode)
        out.append(b.build(mode))
    return out


# ---------------------------------------------------------------------------------------- evaluator
# an overflow to inf is reported as an InputError
@np.errstate(divide="ignore", over="ignore", invalid="ignore")
@scoped
def evaluate(instance: Instance, bw_gbps: np.ndarray | list[float]) -> Breakdown:
    """Evaluate the iteration time of the instance's training loop and its breakdown at ``bw_gbps``,
    layer by layer from the formulas of the module docstring (no aggregation, no solver): the
    independent check of every result.

    Args:
        instance: the problem.
        bw_gbps: per-NPU bandwidth of each dimension, GB/s, shape (D,).

    Raises:
        InputError (naming ``bw_gbps``): not a sequence of D numbers, a negative or non-finite
            entry, zero bandwidth on a dimension with traffic, or bandwidths so small (or large)
            that the time (or cost) overflows; (naming ``weights``) the weights are still shares
            of hours (:meth:`hieropt.spec.Instance.require_resolved_weights`).

    The last :data:`EVALUATIONS` breakdowns of an instance object at a float array of bandwidths
    are kept in the active cache (:mod:`hieropt.cache`) by the array's values, so that a solve
    that checks one design twice (its tie-break's time target, then its certificate; a line
    search's point, then the answer) evaluates it once; such a breakdown's ``bw_gbps`` is a
    read-only copy of the array.
    """
    if isinstance(bw_gbps, np.ndarray) and bw_gbps.dtype == np.float64 and bw_gbps.ndim == 1:
        bw = bw_gbps.copy()
        bw.flags.writeable = False
        return current().memo("evaluations", (Same(instance), bw.tobytes()),
                              lambda: _evaluate(instance, bw), EVALUATIONS)
    return _evaluate(instance, bw_gbps)


EVALUATIONS = 16
"""Breakdowns :func:`evaluate` keeps in the active cache (the last used)."""


def _evaluate(instance: Instance, bw_gbps: np.ndarray | list[float]) -> Breakdown:
    """:func:`evaluate` itself (no look-up)."""
    instance.require_resolved_weights()
    bw = check_bw(instance.network.n_dims, bw_gbps)
    execs, p2p_count = executions(instance)
    total = 0.0
    by_workload: dict[str, float] = {}
    # (without a pipeline no point-to-point row: its terms are 0, left out)
    pipe = instance.pipeline is not None
    p2p = p2p_row(instance) if pipe else None
    positive = bool(bw.min() > 0) if bw.size else True
    stage_times: dict[str, float] = {}
    latency_free = not any(d.latency_ns for d in instance.network.dims)
    slowest = []
    for i, job in enumerate(instance.jobs):
        runs = _stage_runs(instance, i, bw, execs, p2p_count, p2p, positive, latency_free)
        job = placed_job(instance, job)  # (the stages as _stage_runs times them)
        # the slowest stage (the first of equals): every figure is its
        r = max(runs, key=lambda x: x.T)
        comp = composition(instance, job)
        # the stages composed by the schedule (hieropt.model.pipeline): its graph or closed form
        if comp is not None:
            chunks = graph_chunks(instance, job)
            r = replace(
                r,
                T=_composed(instance, comp, runs, False, chunks),
                ideal_ns=_ideal_ns(instance, i, comp, runs, chunks),
                compute_ns=instance.step.microbatches * max(float(x.C.sum()) for x in runs)
                + runs[comp[1]].U,
            )
        elif len(runs) > 1:
            # (T with free communication is the largest stage's then: its compute and bubble)
            free = [free_times(instance, x) for x in runs]
            ideal, compute = max(free, key=lambda f: f[0])
            r = replace(r, ideal_ns=ideal, compute_ns=compute)
        if len(runs) > 1:
            for stage, x in zip(job.workload.stages, runs, strict=True):
                name = (
                    stage.name
                    if stage.name not in stage_times
                    else f"{stage.name}#{len(stage_times)}"
                )
                stage_times[name] = x.T
        # (two workloads of one name, e.g. one model on two mappings, keep one entry each)
        name = job.workload.name
        by_workload[
            name if name not in by_workload else f"{name} (workload {len(by_workload)})"
        ] = r.T
        total += job.weight * r.T
        slowest.append((job.weight, r))
    costs = cost_per_dim_usd(instance, bw)
    cost = float(costs.sum())
    if not (math.isfinite(total) and math.isfinite(cost)):
        what = "iteration time" if not math.isfinite(total) else "network cost"
        raise InputError(
            "bw_gbps",
            None,
            f"the {what} overflows (inf) at bandwidths {bw.tolist()} GB/s",
            "give bandwidths of realistic size (the time is bytes / bandwidth: 1e-300 GB/s takes "
            "longer than a float can hold)",
        )
    bd = Breakdown(
        bw_gbps=bw,
        iteration_time_ns=total,
        cost_per_dim_usd=costs,
        network_cost_usd=cost,
        iteration_time_by_workload_ns=by_workload,
        stage_times_ns=stage_times,
        violations=design_notes(instance, bw, total, cost),
        source=(total, instance, bw.copy(), slowest, execs, p2p_count, p2p),
    )
    if sum(r.per_dim.size for _, r in slowest) > LAZY_FIGURES:
        # (a large workload's figures now: its layer-by-layer arrays are not kept)
        bd.compute_ns  # noqa: B018
    return bd


LAZY_FIGURES = 1 << 16
"""A :class:`Breakdown` keeps the layer-by-layer arrays for its figures beyond T and cost (computed
on first access) only while they hold at most this many entries (layers x 3 phases x dimensions,
about 0.5 MB); above it the figures are computed at once, so that many breakdowns of a large
workload (a Pareto front) do not hold gigabytes."""


@dataclass
class _Run:
    """One stage at one bandwidth vector: T (ns), collective times (L, 3) and busy times (L, 3, D)
    ns, the pipeline send's time (ns), its traffic (L, 3, D) bytes, compute (L, 3) and optimizer
    step (ns) ns."""

    T: float
    coll: np.ndarray
    per_dim: np.ndarray
    p2p_ns: float
    traffic: np.ndarray
    C: np.ndarray
    U: float
    ideal_ns: float | None = None
    """T with every collective taking no time, when the run's own loop formula does not give it (the
    composed pipeline; stages not composed: the largest stage's)."""
    compute_ns: float | None = None
    """The compute without the bubble, when the loop's formula alone does not give it: the composed
    pipeline's m x the largest stage compute per micro-batch + the first stage's optimizer step;
    with stages not composed, that of the stage with the largest T with free communication
    (:mod:`hieropt.model.breakdown`)."""
    sums: np.ndarray | None = None
    """(L, 3) the collectives whose dimensions' times add up (``sequential``), None for none."""
    own: np.ndarray | None = None
    """(L, 3) the phases on their own stream (:mod:`hieropt.model.overlap`), None for none."""
    gathers: np.ndarray | None = None
    """(L,) the all-gathers after the optimizer step (:mod:`hieropt.model.gathers`), None for
    none."""


def _composed(instance: Instance, comp: tuple, runs: list[_Run], compute_only: bool,
              chunks: tuple | None = None) -> float:
    """A workload's T composed from its stages' runs (:func:`hieropt.model.pipeline.composed_time`;
    ``chunks``: each run's chunk rows when the schedule's graph times it,
    :func:`hieropt.model.pipeline.graph_chunks`); with ``compute_only`` every collective taking no
    time."""
    parts = []
    over = overlapped(instance)  # (else no stage's overlapped last pass is read: not computed)
    serial = instance.collectives_in_flight == 1
    for s, x in enumerate(runs):
        T = np.zeros_like(x.coll) if compute_only else x.coll
        per_dim = np.zeros_like(x.per_dim) if compute_only else x.per_dim
        own = (per_dim, x.own, serial)
        A = x.gathers if x.gathers is not None else np.zeros(len(x.C), dtype=bool)
        Tr, Pr = T.copy(), per_dim.copy()
        Tr[A, 2], Pr[A, 2] = 0.0, 0.0  # (the all-gathers after the step: not on the stream)
        cross = partial(cross_time, x.C, Tr, Pr, instance) if over else None
        hide = x.gathers is not None and gathered(instance)
        gather = partial(gather_time, x.C, T, per_dim, A, serial) if hide else None
        parts.append(stage_parts(x.C, T, x.U, cross, own,
                                 chunks=None if chunks is None else chunks[s],
                                 gathers=x.gathers, gather=gather))
    return composed_time(instance, *comp, *map(list, zip(*parts, strict=True)),
                         graph=chunks is not None)


def _ideal_ns(instance: Instance, i: int, comp: tuple, runs: list[_Run],
              chunks: tuple | None = None) -> float:
    """Job ``i``'s T composed from its stages' ``runs`` with every collective taking no time
    (:func:`_composed`, ``compute_only``): its compute and bubble, which no bandwidth changes (the
    runs' compute, optimizer step and own-stream phases are the job's arrays,
    :func:`~hieropt.model.traffic.job_arrays`), kept on the instance by the same fields (an
    evaluation at another bandwidth, of a copy with another objective or target too, finds it)."""
    return instance.memo_by_value("_ideal_ns", model_fields(instance), i,
                                  lambda: _composed(instance, comp, runs, True, chunks))


def _stage_runs(
    instance: Instance,
    i: int,
    bw: np.ndarray,
    execs: np.ndarray,
    p2p_count: float,
    p2p: tuple[np.ndarray, np.ndarray] | None,
    positive: bool,
    latency_free: bool = False,
) -> list[_Run]:
    """Every stage's (:attr:`hieropt.spec.Workload.stages`) time of job ``i`` at ``bw``, layer by
    layer (:func:`evaluate`): the stages' layers in one array
    (:func:`hieropt.model.stages.stage_rows`), each stage's time from its rows by the loop's
    formula.

    Raises:
        InputError: a dimension a stage loads has no bandwidth.
    """
    mode = instance.dimension_mode
    job, rows, traffic, latency, sums = job_arrays(instance, i)
    table = job.workload.table
    if not positive:
        for r in rows:
            starved = (bw == 0) & (stage_bytes(traffic[r], execs, p2p_count, p2p) > 0)
            if starved.any():
                d = int(np.flatnonzero(starved)[0])
                raise InputError(
                    "bw_gbps",
                    f"bw[{d}]",
                    f"0 GB/s but dimension {d} carries "
                    f"{stage_bytes(traffic[r], execs, p2p_count, p2p)[d]:.6g} bytes per iteration",
                    "give it a positive bandwidth",
                )
    # (L, 3, D); every bandwidth positive: no 0/0 to guard (traffic >= 0), the common case
    per_dim = traffic / bw if positive else np.where(traffic > 0, traffic / bw, 0.0)
    if not latency_free:  # (without latency on any dimension the latency rows are zeros)
        per_dim = per_dim + latency
    if mode == "sequential" and sums.all():
        coll = per_dim.sum(axis=2)  # (L, 3)
    # (the max over the few dimensions as D - 1 element-wise maxima: numpy's reduction over a short
    # last
    else:
        # axis is 5-8x slower)
        coll = reduce(np.maximum, [per_dim[:, :, d] for d in range(per_dim.shape[2])])
        if sums.any():  # (the collectives of sequential groups: their dimensions' times add up)
            coll = np.where(sums, per_dim.sum(axis=2), coll)
    p2p_ns = (
        float(collective_times(p2p[0][None, :], p2p[1][None, :], bw, mode)[0])
        if p2p is not None
        else 0.0
    )
    out = []
    own = own_stream(instance, table.group)
    gathers = step_gathers(instance, table.collective)
    for r in rows:
        C, U = table.compute_ns[r], float(table.update_ns[r].sum())
        mine = _own(own, r).get("own")
        A = gather_rows(gathers, r).get("gathers")
        T = loop_time(instance.training_loop, C, coll[r], p2p_ns, instance, per_dim[r], U, mine,
                      A)
        out.append(_Run(T, coll[r], per_dim[r], p2p_ns, traffic[r], C, U, own=mine,
                        sums=sums[r] if sums.any() else None, gathers=A))
    return out


__all__ = ["TimeModel", "Piece", "Breakdown", "LOOPS", "build_time_model", "evaluate"]
