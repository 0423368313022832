"""The pipeline schedules as dependency graphs, and their length: the exact iteration time of a
pipeline with blocking sends (:mod:`hieropt.model.pipeline`).

**1F1B** (PipeDream-Flush, Narayanan et al. 2021, arXiv 2104.04473, §2.2.1): stage r runs
min(p - r - 1, m) warm-up forwards, then one forward and one backward in turn, then the remaining
backwards. **Interleaved** (§2.2.2; Megatron-LM's ``forward_backward_pipelining_with_interleaving``,
``get_schedule_table`` and ``get_pp_rank_microbatches``): stage r holds v model chunks, its j-th
being model chunk c = j p + r; it runs its chunk forwards in groups of N micro-batches per chunk
(chunks 0 .. v - 1 for micro-batches g .. g + N - 1, then the next group; the last group the
remainder), its chunk backwards in the same order with the chunks reversed, min(m v, 2 (p - r - 1)
+ (v - 1) N) forwards first, then one forward and one backward in turn, then the remaining
backwards (N the micro-batch group, p by default). 1F1B is the case v = 1.

A forward of micro-batch i on model chunk c > 0 waits for the forward of i on chunk c - 1 (its
activation send: from stage r - 1, or from the last stage to stage 0 when the chunk wraps), a
backward of i on chunk c < p v - 1 for the backward of i on chunk c + 1 (the gradient send); each
operation also waits for the stage's previous one. With f_(r,j), b_(r,j) the durations of stage
r's chunk j's forward and backward of one micro-batch (each ending with its send, which blocks the
sender until the data has arrived), every operation ends at

    e = max(e_previous on the stage, e_dependency) + duration,

and the iteration at stage 0's last backward (of model chunk 0) plus its tail. This is the longest
path through the graph: a maximum of sums of the durations, convex and piecewise linear in 1/B.
ASTRA-sim 2.0 (send and receive nodes, analytical backend) gives the same to the nanosecond for
1F1B (tests/fidelity/test_pipeline_schedule.py) and the interleaved schedule's exported traces
(tests/fidelity/test_interleaved_graph.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cache import Same, current


@dataclass(frozen=True)
class Op:
    """One operation: ``stage``, ``backward`` (else forward), micro-batch ``index``, and the
    operations it waits for (positions in the graph's order, or -1): the stage's previous one and
    the neighbouring stage's send; ``chunk``: the stage's model chunk j (0 for 1F1B)."""

    stage: int
    backward: bool
    index: int
    prev: int
    dep: int
    chunk: int = 0


def stage_order(p: int, m: int, r: int) -> list[tuple[bool, int]]:
    """Stage ``r``'s operations (backward?, micro-batch) in 1F1B order."""
    return [(bwd, i) for bwd, i, _ in stage_tasks(p, m, 1, r)]


def stage_tasks(
    p: int, m: int, v: int, r: int, n: int | None = None
) -> list[tuple[bool, int, int]]:
    """Stage ``r``'s operations (backward?, micro-batch, chunk j) in the order it runs them (module
    docstring): 1F1B for ``v`` = 1, else the interleaved schedule with micro-batch group ``n``
    (default ``p``)."""
    if v == 1:
        warm = min(p - r - 1, m)
        out = [(False, i, 0) for i in range(warm)]
        for i in range(m - warm):
            out += [(False, warm + i, 0), (True, i, 0)]
        return out + [(True, m - warm + i, 0) for i in range(warm)]
    n = n or p
    total = m * v
    warm = min(2 * (p - r - 1) + (v - 1) * n, total)
    # (micro-batch, chunk) of the k-th forward: groups of n micro-batches per chunk
    table = [(i, j) for g in range(0, m, n) for j in range(v) for i in range(g, min(g + n, m))]
    out = [(False, *table[k]) for k in range(warm)]
    for k in range(total - warm):
        i, j = table[k]
        out += [(False, *table[warm + k]), (True, i, v - 1 - j)]
    return out + [(True, table[k][0], v - 1 - table[k][1]) for k in range(total - warm, total)]


def one_f_one_b(p: int, m: int) -> tuple[Op, ...]:
    """The 1F1B graph of p stages and m micro-batches, every operation after those it waits for (a
    topological order); the last is stage 0's last backward. Kept in the active cache
    (:mod:`hieropt.cache`)."""
    out = schedule_graph(p, m, 1)
    assert out is not None  # (1F1B never stalls)
    return out


def schedule_graph(p: int, m: int, v: int = 1, n: int | None = None) -> tuple[Op, ...] | None:
    """The graph of p stages, m micro-batches and v chunks per stage (micro-batch group ``n``,
    default p), every operation after those it waits for (a topological order), the last stage 0's
    last backward; None when the order deadlocks (an operation waits, through its stage's earlier
    ones, for itself: interleaved groups outside Megatron-LM's bounds). Kept in the active cache
    (:mod:`hieropt.cache`)."""
    return current().memo("schedule_graph", (p, m, v, n or p), lambda: _graph(p, m, v, n or p))


def _graph(p: int, m: int, v: int, n: int) -> tuple[Op, ...] | None:
    orders = [stage_tasks(p, m, v, r, n) for r in range(p)]
    pos: dict[tuple[int, bool, int, int], int] = {}
    done = [0] * p
    out: list[Op] = []
    last = p * v - 1
    while len(out) < 2 * m * p * v:
        moved = False
        for r in range(p):
            while done[r] < len(orders[r]):
                bwd, i, j = orders[r][done[r]]
                c = j * p + r + (1 if bwd else -1)  # (the model chunk it waits for)
                key = (c % p, bwd, i, c // p) if 0 <= c <= last else None
                if key is not None and key not in pos:
                    break
                prev = pos[(r, *orders[r][done[r] - 1])] if done[r] else -1
                pos[(r, bwd, i, j)] = len(out)
                out.append(Op(r, bwd, i, prev, -1 if key is None else pos[key], j))
                done[r] += 1
                moved = True
        if not moved:
            return None
    return tuple(out)


def schedule_time(
    ops: tuple[Op, ...], fwd: list[float], bwd: list[float], v: int = 1
) -> tuple[float, list[int]]:
    """The graph's length (ns) with stage r's chunk j's forward taking ``fwd[r v + j]`` and its
    backward ``bwd[r v + j]`` ns (``v`` chunks per stage), and the critical path (positions, last
    first): at each operation the predecessor that ends later (the stage's previous one on ties)."""
    end = [0.0] * len(ops)
    via = [-1] * len(ops)
    for j, op in enumerate(ops):
        a = end[op.prev] if op.prev >= 0 else 0.0
        d = end[op.dep] if op.dep >= 0 else 0.0
        via[j] = op.dep if op.dep >= 0 and d > a else op.prev
        k = op.stage * v + op.chunk
        end[j] = max(a, d) + (bwd[k] if op.backward else fwd[k])
    path, j = [], len(ops) - 1
    while j >= 0:
        path.append(j)
        j = via[j]
    return end[-1], path


def schedule_length(
    ops: tuple[Op, ...], fwd: list[float], bwd: list[float], v: int = 1
) -> float:
    """The graph's length (ns) with stage r's chunk j's forward taking ``fwd[r v + j]`` and its
    backward ``bwd[r v + j]`` ns: :func:`schedule_time`'s, by the same operations in the same
    order, without the critical path (each operation's predecessors and duration as flat lists,
    kept with the graph in the active cache)."""
    prev, dep, kind = current().memo("schedule lists", (Same(ops), v), lambda: _lists(ops, v), 4)
    dur = [x for pair in zip(fwd, bwd, strict=True) for x in pair]
    end = [0.0] * (len(ops) + 1)  # (the last entry stays 0.0: the end of "no predecessor")
    for j, p, q, k in zip(range(len(ops)), prev, dep, kind, strict=True):
        a, d = end[p], end[q]
        end[j] = (d if d > a else a) + dur[k]  # (max(a, d): a unless d is larger)
    return end[len(ops) - 1]


def _lists(ops: tuple[Op, ...], v: int) -> tuple[list[int], list[int], list[int]]:
    """Per operation its stage's previous one and its dependency (``len(ops)`` for none) and its
    duration's position in (f_0, b_0, f_1, b_1, ...), chunk-major within a stage."""
    n = len(ops)
    return ([op.prev if op.prev >= 0 else n for op in ops],
            [op.dep if op.dep >= 0 else n for op in ops],
            [2 * (op.stage * v + op.chunk) + op.backward for op in ops])


__all__ = ["Op", "stage_order", "stage_tasks", "one_f_one_b", "schedule_graph", "schedule_time",
           "schedule_length"]
