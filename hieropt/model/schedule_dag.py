"""The 1F1B schedule as a dependency graph, and its length: the exact iteration time of a pipeline
with blocking sends (:mod:`hieropt.model.pipeline`).

Stage r runs its operations in PipeDream-Flush order (Narayanan et al. 2021, arXiv 2104.04473,
§2.2.1): min(p - r - 1, m) warm-up forwards, then one forward and one backward in turn, then the
remaining backwards. A forward of micro-batch i on stage r > 0 waits for stage r - 1's forward of i
(its activation send), a backward of i on stage r < p - 1 for stage r + 1's backward of i (the
gradient send); each operation also waits for the stage's previous one. With f_r, b_r the durations
of stage r's forward and backward of one micro-batch (each ending with its send, which blocks the
sender until the data has arrived), every operation ends at

    e = max(e_previous on the stage, e_dependency) + duration,

and the iteration at stage 0's last backward plus its tail. This is the longest path through the
graph: a maximum of sums of the durations, convex and piecewise linear in 1/B. ASTRA-sim 2.0 (send
and receive nodes, analytical backend) gives the same to the nanosecond
(tests/fidelity/test_pipeline_schedule.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cache import Same, current


@dataclass(frozen=True)
class Op:
    """One operation: ``stage``, ``backward`` (else forward), micro-batch ``index``, and the
    operations it waits for (positions in the graph's order, or -1): the stage's previous one and
    the neighbouring stage's send."""

    stage: int
    backward: bool
    index: int
    prev: int
    dep: int


def stage_order(p: int, m: int, r: int) -> list[tuple[bool, int]]:
    """Stage ``r``'s operations (backward?, micro-batch) in 1F1B order."""
    warm = min(p - r - 1, m)
    out = [(False, i) for i in range(warm)]
    f, b = warm, 0
    while b < m:
        if f < m:
            out.append((False, f))
            f += 1
        out.append((True, b))
        b += 1
    return out


def one_f_one_b(p: int, m: int) -> tuple[Op, ...]:
    """The graph of p stages and m micro-batches, every operation after those it waits for (a
    topological order); the last is stage 0's last backward. Kept in the active cache
    (:mod:`hieropt.cache`)."""
    return current().memo("one_f_one_b", (p, m), lambda: _graph(p, m))


def _graph(p: int, m: int) -> tuple[Op, ...]:
    orders = [stage_order(p, m, r) for r in range(p)]
    pos: dict[tuple[int, bool, int], int] = {}
    done = [0] * p
    out: list[Op] = []
    while len(out) < 2 * m * p:
        moved = False
        for r in range(p):
            while done[r] < len(orders[r]):
                bwd, i = orders[r][done[r]]
                src = (r + 1 if bwd else r - 1)
                key = (src, bwd, i)
                if 0 <= src < p and key not in pos:
                    break
                prev = pos[(r, *orders[r][done[r] - 1])] if done[r] else -1
                pos[(r, bwd, i)] = len(out)
                out.append(Op(r, bwd, i, prev, pos.get(key, -1) if 0 <= src < p else -1))
                done[r] += 1
                moved = True
        if not moved:  # (cannot happen for 1F1B; guards the loop)
            raise ValueError(f"the 1F1B graph of {p} stages and {m} micro-batches has a cycle")
    return tuple(out)


def schedule_time(
    ops: tuple[Op, ...], fwd: list[float], bwd: list[float]
) -> tuple[float, list[int]]:
    """The graph's length (ns) with stage r's forward taking ``fwd[r]`` and backward ``bwd[r]`` ns,
    and the critical path (positions, last first): at each operation the predecessor that ends later
    (the stage's previous one on ties)."""
    end = [0.0] * len(ops)
    via = [-1] * len(ops)
    for j, op in enumerate(ops):
        a = end[op.prev] if op.prev >= 0 else 0.0
        d = end[op.dep] if op.dep >= 0 else 0.0
        via[j] = op.dep if op.dep >= 0 and d > a else op.prev
        end[j] = max(a, d) + (bwd[op.stage] if op.backward else fwd[op.stage])
    path, j = [], len(ops) - 1
    while j >= 0:
        path.append(j)
        j = via[j]
    return end[-1], path


def schedule_length(ops: tuple[Op, ...], fwd: list[float], bwd: list[float]) -> float:
    """The graph's length (ns) with stage r's forward taking ``fwd[r]`` and backward ``bwd[r]`` ns:
    :func:`schedule_time`'s, by the same operations in the same order, without the critical path
    (each operation's predecessors and duration as flat lists, kept with the graph in the active
    cache)."""
    prev, dep, kind = current().memo("schedule lists", Same(ops), lambda: _lists(ops), 4)
    dur = [x for pair in zip(fwd, bwd, strict=True) for x in pair]
    end = [0.0] * (len(ops) + 1)  # (the last entry stays 0.0: the end of "no predecessor")
    for j, p, q, k in zip(range(len(ops)), prev, dep, kind, strict=True):
        a, d = end[p], end[q]
        end[j] = (d if d > a else a) + dur[k]  # (max(a, d): a unless d is larger)
    return end[len(ops) - 1]


def _lists(ops: tuple[Op, ...]) -> tuple[list[int], list[int], list[int]]:
    """Per operation its stage's previous one and its dependency (``len(ops)`` for none) and its
    duration's position in (f_0, b_0, f_1, b_1, ...)."""
    n = len(ops)
    return ([op.prev if op.prev >= 0 else n for op in ops],
            [op.dep if op.dep >= 0 else n for op in ops],
            [2 * op.stage + op.backward for op in ops])


__all__ = ["Op", "stage_order", "one_f_one_b", "schedule_time", "schedule_length"]
