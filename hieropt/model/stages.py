"""The max over a pipelined workload's distinct stages (:attr:`hieropt.spec.Workload.more_stages`)
in the time model's form, as one more max node of :class:`~hieropt.model.terms.TermBuilder`: of
each stage's time under the training loop, as if every stage were it, for stages whose pipeline
positions are not known (Narayanan et al. 2021 §2.2; Calculon, calculon/llm/llm.py, times the
fullest stage), and of the stages' micro-batch slots in the closed composition of
:mod:`hieropt.model.pipeline` (its steady state goes at the slowest stage's pace). The independent
evaluator (:func:`hieropt.model.timing.evaluate`) takes the same maximum its own way, stage by
stage."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..cache import Same, current
from ..spec import Job, LayerTable, Workload
from .terms import TermBuilder

__all__ = ["add_slowest_stage", "stage_jobs", "stage_rows"]


def stage_jobs(job: Job) -> tuple[Job, ...]:
    """One :class:`~hieropt.spec.Job` per pipeline stage of ``job``'s workload
    (:attr:`hieropt.spec.Workload.stages`), each with the job's mapping and weight: ``(job,)`` for a
    workload of one stage. Computed once per workload, mapping and weight."""
    w = job.workload
    if not w.more_stages:
        return (job,)
    return _kept("stages", w, job, lambda: tuple(
        Job.model_construct(workload=s, mapping=job.mapping, weight=job.weight) for s in w.stages))


def _kept(kind: str, w: Workload, job: Job, build: Callable[[], object]):
    """``build()`` kept in the active cache by the identity of ``w`` and ``job.mapping`` and by
    ``job.weight``: a sweep's instances (a new job each) share their workloads and mappings."""
    return current().memo("stage_jobs", (kind, Same(w), Same(job.mapping), job.weight), build, 4096)


def stage_rows(job: Job) -> tuple[Job, tuple[slice, ...]]:
    """For a workload of several stages: a :class:`~hieropt.spec.Job` (the job's mapping and weight)
    whose workload holds the layers of every stage, stage after stage, as columns, and the rows of
    each stage in it; the time model and the evaluator find every stage's traffic, latency and equal
    phases at once from it (the stages share most of their layers). Built once per workload (the job
    once per workload, mapping and weight)."""
    w = job.workload

    def build() -> tuple[Workload, tuple[slice, ...]]:
        tables = [
            s.layers if isinstance(s.layers, LayerTable) else LayerTable.from_layers(s.layers)
            for s in w.stages
        ]
        ends = np.cumsum([len(t) for t in tables])
        cols = {f: np.concatenate([getattr(t, f) for t in tables]) for f in
                ("compute_ns", "size_bytes", "kinds", "scopes", "update_ns", "policies")}
        layers = LayerTable([n for t in tables for n in t.names], **cols)
        # (the stages' groups, checked in their tables already; a pipeline send's boundary group,
        # hieropt.model.sends, holds a separator no group named in an input may)
        layers.groups = np.concatenate([t.groups for t in tables])
        rows = tuple(slice(int(e - len(t)), int(e)) for t, e in zip(tables, ends, strict=True))
        whole = Workload.model_construct(
            name=f"{w.name} (every stage)",
            layers=layers,
            header=None,
            more_stages=(),
            group_algorithms=w.group_algorithms,
        )
        return whole, rows

    combined, rows = w.memo("_stage_rows", (w.layers, w.more_stages, w.group_algorithms), build)
    return _kept("rows", combined, job, lambda: (
        Job.model_construct(workload=combined, mapping=job.mapping, weight=job.weight), rows))


def add_slowest_stage(
    b: TermBuilder, stages: int, add: Callable[[int], None], weight: float
) -> None:
    """Add ``weight`` x max_s T_s to the builder ``b``, T_s the time of stage s = 0 .. ``stages`` -
    1 under the training loop; ``add(s)`` adds stage s's T with weight 1 to ``b``
    (:mod:`hieropt.model.timing`).

    Each loop adds an affine function of the collective terms and max nodes (constant, linear
    weights, weights of root nodes), so each stage's T_s is captured as one affine piece: the
    builder's constant, linear weights and node weights are set aside, the loop adds the stage with
    weight 1, what it added is the piece (its nodes enter it with the weight the loop gave them, and
    keep weight 0 in T), and the builder is restored. Then, exactly: max_s T_s = common + max_s (T_s
    - common), common the entry-wise minimum of the pieces (constant, every term's and node's
      coefficient; all >= 0), so
    the part the stages share (their common blocks) stays linear in T and the max node holds only
    what differs; a piece that another is at least in every entry is left out (it never attains the
    max); one piece left adds linearly (no node). T is convex: a non-negative sum and a max of
    non-decreasing affine functions of tau and y."""
    pieces = []
    for s in range(stages):
        constant, linear, node_w = b.constant, b.linear, b.node_w
        b.constant, b.linear, b.node_w = 0.0, {}, list(node_w)
        add(s)
        nodes = {v: w - (node_w[v] if v < len(node_w) else 0.0) for v, w in enumerate(b.node_w)}
        pieces.append(
            (
                b.constant,
                {k: a for k, a in b.linear.items() if a},
                {v: a for v, a in nodes.items() if a},
            )
        )
        b.constant, b.linear, b.node_w = (
            constant,
            linear,
            node_w + [0.0] * (len(b.node_w) - len(node_w)),
        )
    c0 = min(c for c, _, _ in pieces)
    terms = {k: min(t.get(k, 0.0) for _, t, _ in pieces) for k in pieces[0][1]}
    nodes = {v: min(n.get(v, 0.0) for _, _, n in pieces) for v in pieces[0][2]}
    b.constant += weight * c0
    for k, a in terms.items():
        if a:
            b.linear[k] = b.linear.get(k, 0.0) + weight * a
    for v, a in nodes.items():
        b.node_w[v] += weight * a
    rest = [
        (
            c - c0,
            {k: a - terms.get(k, 0.0) for k, a in t.items() if a > terms.get(k, 0.0)},
            {v: a - nodes.get(v, 0.0) for v, a in n.items() if a > nodes.get(v, 0.0)},
        )
        for c, t, n in pieces
    ]
    kept = [p for i, p in enumerate(rest) if not any(_covers(q, p) and (not _covers(p, q) or j < i)
                                                     for j, q in enumerate(rest) if j != i)]
    if len(kept) == 1:  # one stage is the slowest at every bandwidth: linear
        c, t, n = kept[0]
        b.constant += weight * c
        for k, a in t.items():
            b.linear[k] = b.linear.get(k, 0.0) + weight * a
        for v, a in n.items():
            b.node_w[v] += weight * a
        return
    b.node([(c, list(t.items()), list(n.items())) for c, t, n in kept], weight)


def _covers(q: tuple, p: tuple) -> bool:
    """Whether piece ``q`` (constant, term coefficients, node coefficients) is at least ``p`` in
    every entry."""
    return q[0] >= p[0] and all(q[1].get(k, 0.0) >= a for k, a in p[1].items()) and all(
        q[2].get(v, 0.0) >= a for v, a in p[2].items())
