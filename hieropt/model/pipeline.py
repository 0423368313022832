"""The iteration of a pipelined workload (loop ``step``) from its stages: a schedule of at most
:data:`DAG_OPS` operations by its graph (:mod:`hieropt.model.schedule_dag`: exact for 1F1B and the
interleaved schedule, each model chunk's forward and backward an operation), larger ones (and
own-stream collectives, chunks the sends do not delimit) by the closed composition below of the
stages' micro-batch slots.

**The graph.** With v model chunks per stage, stage r's chunk j takes f_(r,j) = sum_l (C_f + T_f)
forwards and b_(r,j) = sum_l (C_ig + T_ig + C_wg) backwards over the chunk's layers l (its own
pipeline send included, over the dimensions its boundary crosses: :mod:`hieropt.model.sends`); a
stage's chunks are its layers cut after each forward send and before each input-gradient send
(:func:`chunk_rows`, as the ASTRA-sim export cuts them). T = the graph's length + W_0, W the
per-iteration tail sum_l T_wg + U of the first stage (its last backward ends the iteration).

**The closed composition.** With t_r = sum_j (f_(r,j) + b_(r,j)) stage r's micro-batch slot,

    T = c sum_r t_r + (m - c) max_r t_r + W_0

with c = 1/v for v equal chunks (v = 1: sum_r t_r + (m - 1) max_r t_r + W). The micro-batch that
enters first passes every stage once on its way forward and once back (the fill and drain: sum_r
t_r, each stage at its own pace; with v chunks a chunk's share t_r / v), and the other m - 1
micro-batches follow at the pace of the slowest stage. With unequal chunks (a stage's blocks that v
does not divide) the fill and drain run at the largest chunk's pace: c is its share of the slowest
stage's slot (:attr:`hieropt.spec.StepSchedule.fill_share`; 5 blocks in chunks of 2, 1, 1, 1: c =
2/5). For 1F1B it is exact when the last stage is the slowest (stages after a slower middle one
hide in its steady state); for the interleaved schedule it approximates the graph, off by up to 17
% either way at m = p (stages of 3, 2, 2, 1 blocks in 2 chunks: +17.3 %, the simulator confirming
the graph), by -0.08 % .. +0.94 % on the shipped interleaved validation plans (m = 16 to 1,120)
and by -0.3 % .. +3.0 % on uneven layouts at and just past the graph's size (docs/llm-training.md;
tests/solve/test_interleaved_graph.py). With equal stages it is Narayanan et al.'s
(m + (p - 1)/v) t (arXiv 2104.04473, §2.2), which charges the fill and drain at the slowest stage's
pace. With ``overlap_dp`` (v = 1) the first stage's last backward runs with the per-iteration
collectives on their own stream (:func:`hieropt.model.loops.cross_backward`): its backward b_0 is
replaced by that pass X_0 (graph), T = sum_(r != 0) t_r + f_0 + X_0 + (m - 1) max_r t_r + U_0
(composition); with v > 1 the tail is not overlapped (W above). The all-gathers after the optimizer
step (:mod:`hieropt.model.gathers`) stay in the tail, after U_0 (with v > 1 always, in W_0 after
the graph or the composition), unless ``overlap_gather`` (v = 1) hides them behind stage 0's first
forward: every operation of the schedule waits for it, so its gathered pass G_0 replaces f_0 once
(T + G_0 - f_0: the graph's first operation; in the composition's sums, one slot t_0 becomes G_0 +
b_0, or the overlapped last pass G_0 + X_0 + U_0). T is a non-negative sum of stage terms and
maxima, each convex and piecewise linear in 1/B.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from ..cache import Same, current
from ..spec import Collective, Instance, Job, LayerTable, Workload
from .gathers import gathered
from .overlap import slot_time
from .schedule_dag import Op, schedule_graph, schedule_length
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
"""Up to this many operations (2 p m v), a pipeline is timed by its schedule's graph
(:mod:`hieropt.model.schedule_dag`: exact); above, by the composition of the module docstring."""

_ROW = re.compile(r"^(.*)\+\d+$")


def graph_fits(p: int, m: int, v: int, group: int, own_stream: bool) -> bool:
    """Whether a schedule of ``p`` stages, ``m`` micro-batches, ``v`` chunks per stage and
    micro-batch group ``group`` is timed by its graph: at most :data:`DAG_OPS` operations, no
    own-stream collectives (``own_stream``), and an order that does not deadlock
    (:func:`hieropt.model.schedule_dag.schedule_graph`; Megatron-LM's bounds on the group ensure
    it). The workload's chunks must be found too (:func:`graph_chunks`)."""
    if own_stream or 2 * p * m * v > DAG_OPS:
        return False
    return v == 1 or schedule_graph(p, m, v, group) is not None


def layer_rows(names: list[str]) -> list[list[int]]:
    """The rows of a workload grouped by layer: a layer's further collectives sit on the rows right
    after it named ``<layer>+k`` (:mod:`hieropt.workloads.llm.lower`)."""
    ops: list[list[int]] = []
    for i, name in enumerate(names):
        m = _ROW.match(name)
        if ops and m is not None and names[ops[-1][0]] == m[1]:
            ops[-1].append(i)
        else:
            ops.append([i])
    return ops


def chunks_of(w: Workload) -> list[list[list[int]]]:
    """The rows of stage workload ``w`` as its model chunks, each a list of layers, each the rows of
    one layer (:func:`layer_rows`): a chunk ends after a layer with a forward ``P2P`` send and
    starts at one with an input-gradient ``P2P`` send (the sends between chunks of an interleaved
    stage). However many chunks the sends give."""
    t = w.table
    names = w.layers.names if isinstance(w.layers, LayerTable) else [x.name for x in w.layers]
    p2p = t.collective[:, :2] == Collective.P2P
    out: list[list[list[int]]] = [[]]
    for op in layer_rows(names):
        if out[-1] and p2p[op, 1].any():
            out.append([])
        out[-1].append(op)
        if p2p[op, 0].any():
            out.append([])
    return [c for c in out if c]


def chunk_rows(w: Workload, v: int) -> tuple[slice, ...] | None:
    """The rows of stage workload ``w``'s ``v`` chunks (:func:`chunks_of`), one slice each; None
    when its sends do not cut it into ``v`` chunks. Kept in the active cache by the table."""
    def build() -> tuple[slice, ...] | None:
        found = chunks_of(w)
        if len(found) != v:
            return None
        return tuple(slice(c[0][0], c[-1][-1] + 1) for c in found)

    if v == 1:
        return (slice(0, len(w.table.compute_ns)),)
    return current().memo("chunk_rows", (Same(w.table), v), build, 1024)


def graph_chunks(instance: Instance, job: Job) -> tuple[tuple[slice, ...], ...] | None:
    """When the pipeline of ``job`` (composed: :func:`composition`) is timed by its schedule's graph
    (:func:`graph_fits`, and every entry of the workload's stages cut into its v chunks): per entry
    of :attr:`~hieropt.spec.Workload.stages`, its chunks' rows (:func:`chunk_rows`); else None."""
    st = instance.step
    v = st.virtual_stages
    if not graph_fits(st.stages, st.microbatches, v, st.group, bool(st.overlap_groups)):
        return None
    out = tuple(chunk_rows(w, v) for w in job.workload.stages)
    return None if any(x is None for x in out) else out


def uses_graph(instance: Instance, job: Job) -> bool:
    """Whether the pipeline of ``job`` is timed by its schedule's graph (:func:`graph_chunks`)."""
    return graph_chunks(instance, job) is not None


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
    """Add ``weight`` x T of the closed composition (module docstring) to ``b``: ``slot(s, w)``
    adds w x t_s of stage entry s, ``tail`` w x W_s, ``last`` w x (f_s + X_s + U_s) (the
    overlapped last micro-batch; G_s for f_s with ``overlap_gather``), ``first_slot`` w x (G_s +
    b_s) (the slot of the gathered first forward, with ``overlap_gather`` and without
    ``overlap_dp``)."""
    m, c = instance.step.microbatches, instance.step.fill_share
    over, gath = overlapped(instance), gathered(instance) and first_slot is not None
    for s, n in enumerate(counts):
        n -= 1 if (over or gath) and s == first else 0
        if n:
            slot(s, weight * n * c)
    if m - c > 0:
        add_slowest_stage(b, len(counts), lambda s: slot(s, 1.0), weight * (m - c))
    (last if over else tail)(first, weight)
    if gath and not over:
        first_slot(first, weight)


def graph_ops(instance: Instance) -> tuple[Op, ...]:
    """The schedule graph of ``instance.step`` (:func:`hieropt.model.schedule_dag.schedule_graph`),
    for a schedule :func:`graph_fits` admits.

    Raises:
        ValueError: the schedule's order deadlocks (:func:`graph_fits` is False).
    """
    st = instance.step
    ops = schedule_graph(st.stages, st.microbatches, st.virtual_stages, st.group)
    if ops is None:
        raise ValueError(f"the schedule of {st.stages} stages, {st.microbatches} micro-batches "
                         f"and {st.virtual_stages} chunks deadlocks: timed by its composition")
    return ops


def add_graph(
    b: TermBuilder,
    instance: Instance,
    first: int,
    entry: tuple[int, ...],
    durations: list[list[tuple[tuple[float, list], tuple[float, list]]]],
    tail: Callable[[int, float], None],
    last: Callable[[int, float], None],
    weight: float,
    first_forward: Callable[[int], int] | None = None,
) -> None:
    """Add ``weight`` x the length of the schedule's graph (:mod:`hieropt.model.schedule_dag`)
    plus stage 0's tail to ``b``: one max node per operation, ``durations[s][j]`` = ((const, refs)
    of entry s's chunk j's forward, of its backward); with ``overlap_dp`` (v = 1) stage 0's last
    backward is ``last`` (f + X + U less the forward: its start node plus the overlapped pass);
    with ``overlap_gather`` (v = 1) the first operation (stage 0's first forward, which every other
    waits for) is the node ``first_forward(s)`` returns (its gathered pass G_s)."""
    ops = graph_ops(instance)
    over = overlapped(instance)
    gath = gathered(instance) and first_forward is not None
    # (each duration's references made once, as TermBuilder.node makes them: the graph's nodes
    # share them)
    made = [[tuple((float(c), b.refs_of(refs)) for c, refs in pair) for pair in chunks]
            for chunks in durations]
    nodes: list[int] = []
    for j, op in enumerate(ops):
        const, refs = made[entry[op.stage]][op.chunk][1 if op.backward else 0]
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
    fwd: list[list[float]],
    bwd: list[list[float]],
    tails: list[float],
    lasts: list[float | None],
    firsts: list[float | None] | None = None,
) -> float:
    """The length of the schedule's graph with entry s's chunk j's forward ``fwd[s][j]`` and
    backward ``bwd[s][j]`` ns, plus stage 0's tail (or, with ``overlap_dp``, its last backward
    replaced by the overlapped pass ``lasts[first]``, which includes the forward and the optimizer
    step: f + X + U); with ``overlap_gather`` (v = 1) stage 0's first forward takes
    ``firsts[first]`` (G), which every operation waits for: + G - f."""
    st = instance.step
    f = [x for r in range(st.stages) for x in fwd[entry[r]]]
    bw = [x for r in range(st.stages) for x in bwd[entry[r]]]
    end = schedule_length(graph_ops(instance), f, bw, st.virtual_stages)
    end += _gather_extra(instance, first, fwd, firsts)
    if overlapped(instance):
        return end - bw[0] + lasts[first] - fwd[first][0]
    return end + tails[first]


def _gather_extra(instance: Instance, first: int, fwds: list[list[float]],
                  firsts: list[float | None] | None) -> float:
    """G_0 - f_0 with ``overlap_gather`` (module docstring; v = 1, one chunk), else 0."""
    if not gathered(instance) or firsts is None or firsts[first] is None:
        return 0.0
    return float(firsts[first] - sum(fwds[first]))


def composed_time(instance: Instance, counts: tuple[int, ...], first: int, entry: tuple[int, ...],
                  slots: list[float], tails: list[float], lasts: list[float | None],
                  fwds: list[list[float]], bwds: list[list[float]],
                  firsts: list[float | None] | None = None, graph: bool = False) -> float:
    """T of a pipelined workload (ns) from every stage entry's slot t_s, tail W_s, overlapped last
    pass f_s + X_s + U_s, its chunks' forwards f_(s,j) and backwards b_(s,j), and its gathered first
    forward G_s (None: not asked for): the schedule's graph (``graph``: :func:`uses_graph`) or the
    composition of the module docstring."""
    if graph:
        return graph_time(instance, first, entry, fwds, bwds, tails, lasts, firsts)
    m, c = instance.step.microbatches, instance.step.fill_share
    over = overlapped(instance)
    total = sum(
        (n - (1 if over and s == first else 0)) * t * c
        for s, (n, t) in enumerate(zip(counts, slots, strict=True))
    )
    total += (m - c) * max(slots) + _gather_extra(instance, first, fwds, firsts)
    return float(total + (lasts[first] if over else tails[first]))


def stage_parts(C: np.ndarray, T: np.ndarray, U: float, cross: Callable[[], float] | None,
                own: tuple | None = None, chunks: tuple[slice, ...] | None = None,
                gathers: np.ndarray | None = None,
                gather: Callable[[], float] | None = None) -> tuple:
    """(t, W, f + X + U, [f_j], [b_j], G) of one stage, numerically: the slot t = f + b (forward f
    = sum_l (C_f + T_f), backward b = sum_l (C_ig + T_ig + C_wg)), the tail W, the overlapped last
    pass, the forward and backward of each of its ``chunks`` (rows; None: the whole stage, one
    chunk) and the gathered first forward; C, T (L, 3) compute and collective ns; ``cross()`` the
    backward pass X with the per-iteration collectives but the all-gathers after the step on their
    own stream (:func:`hieropt.model.loops.cross_time`; None: no overlapped last pass is asked for,
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
    if chunks is None or len(chunks) == 1:
        fs, bs = [f], [b]
    else:
        fs = [float(C[q, 0].sum() + T[q, 0].sum()) for q in chunks]
        bs = [float(C[q, 1:].sum() + T[q, 1].sum()) for q in chunks]
    return f + b, float(T[~A, 2].sum() + U) + after, last, fs, bs, G


__all__ = [
    "composition",
    "overlapped",
    "graph_fits",
    "graph_chunks",
    "graph_ops",
    "chunk_rows",
    "chunks_of",
    "layer_rows",
    "uses_graph",
    "add_composed",
    "add_graph",
    "composed_time",
    "graph_time",
    "stage_parts",
    "DAG_OPS",
]
