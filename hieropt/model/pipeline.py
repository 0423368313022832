"""The iteration of a pipelined workload (loop ``step``) from its stages: a 1F1B schedule of at most
:data:`DAG_OPS` operations by its graph (:mod:`hieropt.model.schedule_dag`: exact), other schedules
by the closed composition below of the stages' micro-batch slots.

With p stages, m micro-batches and v model chunks per stage, stage r's micro-batch slot
t_r = sum_l (C_f + T_f + C_ig + T_ig + C_wg) (one micro-batch's forward and backward on it, its
own pipeline sends included, each over the dimensions its boundary crosses:
:mod:`hieropt.model.sends`) and the per-iteration tail W = sum_l T_wg + U of the first stage (its
last backward ends the iteration; another stage's ends at least one stage's backward earlier), 1F1B
with blocking sends takes

    T = c sum_r t_r + (m - c) max_r t_r + W

with c = 1/v for v equal chunks (v = 1: sum_r t_r + (m - 1) max_r t_r + W). The micro-batch that
enters first passes every stage once on its way forward and once back (the fill and drain: sum_r
t_r, each stage at its own pace; with v chunks a chunk's share t_r / v), and the other m - 1
micro-batches follow at the pace of the slowest stage. With unequal chunks (a stage's blocks that v
does not divide) the fill and drain run at the largest chunk's pace: c is its share of the slowest
stage's slot (:attr:`hieropt.spec.StepSchedule.fill_share`; 5 blocks in chunks of 2, 1, 1, 1: c =
2/5, which the simulator's per-chunk traces confirm, where 1/4 is 8 % fast). The composition is
exact when the last stage is the slowest (for 1F1B the graph is exact always: stages after a slower
middle one hide in its steady state). With equal stages it is
Narayanan et al.'s (m + (p - 1)/v) t (arXiv 2104.04473, §2.2), which charges the fill and drain at
the slowest stage's pace. With ``overlap_dp`` (v = 1) the first stage's last backward runs with the
per-iteration collectives on their own stream (:func:`hieropt.model.loops.cross_backward`): its
slot's backward b_0 is replaced by that pass X_0, T = sum_(r != 0) t_r + f_0 + X_0 + (m - 1) max_r
t_r + U_0; with v > 1 the tail is not overlapped (W above). The all-gathers after the optimizer
step (:mod:`hieropt.model.gathers`) stay in the tail, after U_0, unless ``overlap_gather`` (v = 1)
hides them behind stage 0's first forward: every operation of the schedule waits for it, so its
gathered pass G_0 replaces f_0 once (T + G_0 - f_0; in the sums, one slot t_0 becomes G_0 + b_0, or
the overlapped last pass G_0 + X_0 + U_0). T is a non-negative sum of stage terms and a max over
stages, each convex and piecewise linear in 1/B.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..spec import Instance, Job
from .gathers import gathered
from .overlap import slot_time
from .schedule_dag import one_f_one_b, schedule_length
from .stages import add_slowest_stage
from .terms import Piece, TermBuilder


def composition(
    instance: Instance, job: Job
) -> tuple[tuple[int, ...], int, tuple[int, ...]] | None:
    """For a workload of several stages under loop ``step`` whose
    :attr:`~hieropt.spec.Workload.pipeline_stages` cover the schedule's p stages once each: (how
    many pipeline stages each entry of ``stages`` stands for, the index of the entry holding stage
    0, the entry of every pipeline stage); else None (each stage's time as if every stage were it,
    the slowest one's taken)."""
    w = job.workload
    st = instance.step
    if instance.training_loop != "step" or st is None or not w.more_stages:
        return None
    ids = w.pipeline_stages
    if len(ids) != len(w.stages) or sorted(i for m in ids for i in m) != list(range(st.stages)):
        return None
    entry = [0] * st.stages
    for k, members in enumerate(ids):
        for r in members:
            entry[r] = k
    return tuple(len(m) for m in ids), next(k for k, m in enumerate(ids) if 0 in m), tuple(entry)


DAG_OPS = 4096
"""Up to this many operations (2 p m), a 1F1B pipeline is timed by its schedule's graph
(:mod:`hieropt.model.schedule_dag`: exact); above, and for the interleaved schedule, by the
composition of the module docstring."""


def uses_graph(instance: Instance) -> bool:
    """Whether the pipeline is timed by its schedule's graph (1F1B, at most :data:`DAG_OPS`
    operations)."""
    st = instance.step
    small = 2 * st.stages * st.microbatches <= DAG_OPS
    return st.virtual_stages == 1 and not st.overlap_groups and small


def overlapped(instance: Instance) -> bool:
    """Whether the first stage's last backward overlaps the per-iteration collectives
    (``overlap_dp``, v = 1)."""
    return instance.step.overlap_dp and instance.step.virtual_stages == 1


def add_composed(
    b: TermBuilder,
    instance: Instance,
    counts: tuple[int, ...],
    first: int,
    entry: tuple[int, ...],
    slot: Callable[[int, float], None],
    tail: Callable[[int, float], None],
    last: Callable[[int, float], None],
    weight: float,
    first_slot: Callable[[int, float], None] | None = None,
) -> None:
    """Add ``weight`` x T of the module docstring to ``b``: ``slot(s, w)`` adds w x t_s of stage
    entry s, ``tail`` w x W_s, ``last`` w x (f_s + X_s + U_s) (the overlapped last micro-batch; G_s
    for f_s with ``overlap_gather``), ``first_slot`` w x (G_s + b_s) (the slot of the gathered first
    forward, with ``overlap_gather`` and without ``overlap_dp``)."""
    m, c = instance.step.microbatches, instance.step.fill_share
    over, gath = overlapped(instance), gathered(instance) and first_slot is not None
    if uses_graph(instance):
        raise ValueError("a 1F1B pipeline timed by its graph: hieropt.model.pipeline.add_graph")
    for s, n in enumerate(counts):
        n -= 1 if (over or gath) and s == first else 0
        if n:
            slot(s, weight * n * c)
    if m - c > 0:
        add_slowest_stage(b, len(counts), lambda s: slot(s, 1.0), weight * (m - c))
    (last if over else tail)(first, weight)
    if gath and not over:
        first_slot(first, weight)


def add_graph(
    b: TermBuilder,
    instance: Instance,
    first: int,
    entry: tuple[int, ...],
    durations: list[tuple[tuple[float, list], tuple[float, list]]],
    tail: Callable[[int, float], None],
    last: Callable[[int, float], None],
    weight: float,
    first_forward: Callable[[int], int] | None = None,
) -> None:
    """Add ``weight`` x the length of the 1F1B graph (:mod:`hieropt.model.schedule_dag`) plus stage
    0's tail to ``b``: one max node per operation, ``durations[s]`` = ((const, refs) of entry s's
    forward, of its backward); with ``overlap_dp`` stage 0's last backward is ``last`` (f + X + U
    less the forward: its start node plus the overlapped pass); with ``overlap_gather`` the first
    operation (stage 0's first forward, which every other waits for) is the node
    ``first_forward(s)`` returns (its gathered pass G_s)."""
    ops = one_f_one_b(instance.step.stages, instance.step.microbatches)
    over = overlapped(instance)
    gath = gathered(instance) and first_forward is not None
    # (each duration's references made once, as TermBuilder.node makes them: the graph's nodes
    # share them)
    made = [tuple((float(c), b.refs_of(refs)) for c, refs in pair) for pair in durations]
    nodes: list[int] = []
    for j, op in enumerate(ops):
        const, refs = made[entry[op.stage]][1 if op.backward else 0]
        preds = [q for q in (op.prev, op.dep) if q >= 0]
        if over and j == len(ops) - 1:
            b.node([(0.0, [], [(nodes[q], 1.0)]) for q in preds], weight)
            last(first, weight)
            return
        if gath and j == 0:  # (op 0: stage 0's first forward, no predecessor)
            nodes.append(first_forward(first))
            continue
        nodes.append(
            b.node_of(
                tuple([Piece(const, refs, ((nodes[q], 1.0),)) for q in preds])
                or (Piece(const, refs, ()),),
                weight if j == len(ops) - 1 else 0.0,
            )
        )
    tail(first, weight)


def graph_time(
    instance: Instance,
    first: int,
    entry: tuple[int, ...],
    fwd: list[float],
    bwd: list[float],
    tails: list[float],
    lasts: list[float],
    firsts: list[float | None] | None = None,
) -> float:
    """The length of the 1F1B graph with entry s's forward ``fwd[s]`` and backward ``bwd[s]`` ns,
    plus stage 0's tail (or, with ``overlap_dp``, its last backward replaced by the overlapped pass
    ``lasts[first]``, which includes the forward and the optimizer step: f + X + U); with
    ``overlap_gather`` stage 0's first forward takes ``firsts[first]`` (G), which every operation
    waits for: + G - f."""
    ops = one_f_one_b(instance.step.stages, instance.step.microbatches)
    f = [fwd[entry[r]] for r in range(instance.step.stages)]
    bw = [bwd[entry[r]] for r in range(instance.step.stages)]
    end = schedule_length(ops, f, bw) + _gather_extra(instance, first, fwd, firsts)
    if overlapped(instance):
        return end - bw[0] + lasts[first] - fwd[first]
    return end + tails[first]


def _gather_extra(instance: Instance, first: int, fwds: list[float],
                  firsts: list[float | None] | None) -> float:
    """G_0 - f_0 with ``overlap_gather`` (module docstring), else 0."""
    if not gathered(instance) or firsts is None or firsts[first] is None:
        return 0.0
    return float(firsts[first] - fwds[first])


def composed_time(instance: Instance, counts: tuple[int, ...], first: int, entry: tuple[int, ...],
                  slots: list[float], tails: list[float], lasts: list[float], fwds: list[float],
                  bwds: list[float], firsts: list[float | None] | None = None) -> float:
    """T of a pipelined workload (ns) from every stage entry's slot t_s, tail W_s, overlapped last
    pass f_s + X_s + U_s, forward f_s, backward b_s and gathered first forward G_s (None: not
    asked for): the schedule's graph (:func:`uses_graph`) or the composition of the module
    docstring."""
    m, c = instance.step.microbatches, instance.step.fill_share
    if uses_graph(instance):
        return graph_time(instance, first, entry, fwds, bwds, tails, lasts, firsts)
    over = overlapped(instance)
    total = sum(
        (n - (1 if over and s == first else 0)) * t * c
        for s, (n, t) in enumerate(zip(counts, slots, strict=True))
    )
    total += (m - c) * max(slots) + _gather_extra(instance, first, fwds, firsts)
    return float(total + (lasts[first] if over else tails[first]))


def stage_parts(C: np.ndarray, T: np.ndarray, U: float, cross: Callable[[], float] | None,
                own: tuple | None = None, gathers: np.ndarray | None = None,
                gather: Callable[[], float] | None = None) -> tuple[float | None, ...]:
    """(t, W, f + X + U, f, b, G) of one stage, numerically: the slot t = f + b (forward f = sum_l
    (C_f + T_f), backward b = sum_l (C_ig + T_ig + C_wg)), the tail W, the overlapped last pass and
    the gathered first forward; C, T (L, 3) compute and collective ns; ``cross()`` the backward pass
    X with the per-iteration collectives but the all-gathers after the step on their own stream
    (:func:`hieropt.model.loops.cross_time`; None: no overlapped last pass is asked for,
    :func:`overlapped`, and that entry is None); ``own``: (per_dim, own-stream phases or None,
    serial): the slot with own-stream collectives (:func:`hieropt.model.overlap.slot_time`; f = t,
    b = 0: no schedule graph then); ``gathers``: (L,) the rows of the all-gathers after the
    optimizer step (:mod:`hieropt.model.gathers`), after U in W and in the last pass unless
    ``gather()`` (G, the first forward with them on their own stream; None: not hidden, G None)."""
    if own is not None and own[1] is not None:
        f, b = slot_time(C, T, own[0], own[1], own[2]), 0.0
    else:
        f = float(C[:, 0].sum() + T[:, 0].sum())
        b = float(C[:, 1:].sum() + T[:, 1].sum())
    A = gathers if gathers is not None else np.zeros(len(C), dtype=bool)
    after = 0.0 if gather is not None else float(T[A, 2].sum())
    last = None if cross is None else f + float(cross() + U) + after
    G = None if gather is None else float(gather())
    return f + b, float(T[~A, 2].sum() + U) + after, last, f, b, G


__all__ = [
    "composition",
    "overlapped",
    "uses_graph",
    "add_composed",
    "add_graph",
    "composed_time",
    "graph_time",
    "stage_parts",
    "DAG_OPS",
]
