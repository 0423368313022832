"""The interleaved schedule's micro-batch group N (``microbatch_group_size``): warm-up forwards and
micro-batches in flight per stage by hand, the activation memory they give, the bounds refused, and
an event simulation of the schedule's order (written here from Megatron-LM's description: rank r
runs min(m v, 2 (p - r - 1) + (v - 1) N) forwards, then one forward and one backward in turn, then
the remaining backwards; micro-batches in groups of N per model chunk) confirming the in-flight
count and that the iteration time does not depend on N within the bounds when the chunks take
equal times.

The tiny model (tests/workloads/tiny.py) with 8 layers on p = 4 stages of v = 2 chunks: one block
per chunk, 1,216 activation bytes per block and micro-batch (test_llm_block.py), none for the
embedding (no dropout)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from hieropt.model.groups import instance_for
from hieropt.model.memory import chunk_activation_bytes, memory, stage_activation_bytes
from hieropt.model.timing import evaluate
from hieropt.spec import CostClass, CostModel, Dimension, Network
from hieropt.workloads.llm import build_step
from hieropt.workloads.llm.layout import stage_chunks
from hieropt.workloads.llm.step import in_flight, warmup_forwards

from .tiny import params

BLOCK_BYTES = 1216


def _plan(m: int, n: int | None, **kw):
    """p = 4, v = 2, one block per chunk, m micro-batches of 2 sequences, group n."""
    return params({"layers": 8}, pp=4, dp=1, schedule="interleaved", virtual_stages=2,
                  global_batch_size=2 * m, microbatch_group_size=n, **kw)


def test_warmup_and_in_flight_by_hand():
    """Warm-up 2 (p - r - 1) + (v - 1) N, capped at m v = 16; in flight (warm-up + 1) / v.
    N = 4 (= p, depth-first), m = 8: stage 0 6 + 4 = 10 -> 5.5; stage 3 0 + 4 = 4 -> 2.5.
    N = 8 (= m, breadth-first): stage 0 6 + 8 = 14 -> 7.5; stage 3 8 -> 4.5.
    N = 6, m = 12 (12 mod 6 = 0): stage 0 6 + 6 = 12 -> 6.5; stage 1 4 + 6 = 10 -> 5.5."""
    p = _plan(8, 4)
    assert [warmup_forwards(p, r) for r in range(4)] == [10, 8, 6, 4]
    assert [in_flight(p, r) for r in range(4)] == [5.5, 4.5, 3.5, 2.5]
    assert [in_flight(_plan(8, None), r) for r in range(4)] == [5.5, 4.5, 3.5, 2.5]  # default p
    p = _plan(8, 8)
    assert [warmup_forwards(p, r) for r in range(4)] == [14, 12, 10, 8]
    assert [in_flight(p, r) for r in range(4)] == [7.5, 6.5, 5.5, 4.5]
    p = _plan(12, 6)
    assert [in_flight(p, r) for r in range(2)] == [6.5, 5.5]
    # m = 4 = p: warm-up 10 >= m v = 8, every forward first: 8 chunk micro-batches, 4 per block
    p = _plan(4, 4)
    assert [warmup_forwards(p, r) for r in range(4)] == [8, 8, 6, 4]
    assert [in_flight(p, r) for r in range(4)] == [4.0, 4.0, 3.5, 2.5]


def test_activation_memory_follows_the_group():
    """Stage 0 holds 2 blocks (one per chunk): 2 x 1,216 x 5.5 = 13,376 B with N = 4, 2 x 1,216 x
    7.5 = 18,240 B with N = 8; the weights, gradients and optimizer state do not change."""
    for n, want in ((4, 13_376.0), (8, 18_240.0)):
        p = _plan(8, n)
        step = build_step(p)
        assert stage_activation_bytes(p, step, 0) == 2 * BLOCK_BYTES * (5.5 if n == 4 else 7.5)
        assert stage_activation_bytes(p, step, 0) == want
        assert memory(p).stages[0].activations_bytes == want
    a, b = memory(_plan(8, 4)).stages[0], memory(_plan(8, 8)).stages[0]
    assert (a.weights_bytes, a.gradients_bytes, a.optimizer_bytes) == (
        b.weights_bytes, b.gradients_bytes, b.optimizer_bytes)


@pytest.mark.parametrize(
    "m, n, schedule, match",
    [
        (8, 3, "interleaved", r"microbatch_group_size: 3 with pp 4 and 8 micro-batches"),
        (8, 9, "interleaved", r"microbatch_group_size: 9 with pp 4 and 8 micro-batches"),
        # 12 mod 5 = 2: a last group of 2 < p stalls
        (12, 5, "interleaved", r"m mod N = 0 or >= pp \(Megatron-LM\); fix: use N = 4"),
        (8, 4, "1f1b", r"microbatch_group_size: 4 with schedule 1f1b; fix: leave it out"),
        # without a group the micro-batches must be a multiple of p (N = p)
        (10, None, "interleaved", r"needs the micro-batch count \(10\) to be a multiple of pp 4"),
    ],
)
def test_bounds_are_refused(m, n, schedule, match):
    with pytest.raises(ValidationError, match=match):
        _plan(m, n) if schedule == "interleaved" else params(
            {"layers": 8}, pp=4, dp=1, global_batch_size=2 * m, microbatch_group_size=n)


def test_llama3_figure6_group_is_accepted():
    """Llama 3's Figure 6 (arXiv 2407.21783): p = 4, v = 2, m = 10, N = 5 (10 mod 5 = 0); and a last
    group of at least p: m = 10, N = 6 (10 mod 6 = 4 >= 4)."""
    assert in_flight(_plan(10, 5), 0) == (6 + 5 + 1) / 2
    assert in_flight(_plan(10, 6), 0) == (6 + 6 + 1) / 2


# ------------------------------------------------------------------- the schedule, event by event
def _order(p: int, v: int, m: int, n: int, r: int) -> list[tuple[bool, int, int]]:
    """Rank r's (backward?, micro-batch, chunk) in order: groups of n micro-batches per chunk (the
    last group the remainder), warm-up forwards, one forward and one backward in turn, the rest."""
    table = []
    for g in range(0, m, n):
        hi = m if g + n >= m else g + n
        table += [(i, c) for c in range(v) for i in range(g, hi)]
    warm = min(m * v, 2 * (p - r - 1) + (v - 1) * n)
    out = [(False, *table[k]) for k in range(warm)]
    for k in range(m * v - warm):
        out.append((False, *table[k + warm]))
        out.append((True, table[k][0], v - 1 - table[k][1]))
    out += [(True, table[k][0], v - 1 - table[k][1]) for k in range(m * v - warm, m * v)]
    return out


def _simulate(p: int, v: int, m: int, n: int, f: float = 1.0, b: float = 2.0, weights=None):
    """(iteration time, peak chunk micro-batches held per rank): each chunk's forward takes f / v,
    its backward b / v, after the rank's previous operation and the one it depends on (the previous
    model chunk's forward, the next one's backward); ``weights[r][c]``: what a micro-batch on rank
    r's chunk c weighs (default 1: the peak counts chunk micro-batches)."""
    weights = weights or [[1] * v for _ in range(p)]
    orders = [_order(p, v, m, n, r) for r in range(p)]
    end: dict = {}
    pos, clock, live, peak = [0] * p, [0.0] * p, [0] * p, [0] * p
    while any(pos[r] < len(orders[r]) for r in range(p)):
        moved = False
        for r in range(p):
            while pos[r] < len(orders[r]):
                bwd, i, c = orders[r][pos[r]]
                if not bwd:
                    dep = (r - 1, False, i, c) if r else ((p - 1, False, i, c - 1) if c else None)
                elif r < p - 1:
                    dep = (r + 1, True, i, c)
                else:
                    dep = (0, True, i, c + 1) if c < v - 1 else (r, False, i, c)
                if dep is not None and dep not in end:
                    break
                clock[r] = max(clock[r], end[dep] if dep else 0.0) + (b if bwd else f) / v
                end[(r, bwd, i, c)] = clock[r]
                live[r] += -weights[r][c] if bwd else weights[r][c]
                peak[r] = max(peak[r], live[r])
                pos[r] += 1
                moved = True
        assert moved, "the schedule deadlocks"
    return max(clock), peak


@pytest.mark.parametrize(
    "p, v, m, groups",
    [(4, 2, 8, (4, 8)), (4, 2, 12, (4, 6, 7, 8, 12)), (4, 4, 8, (4, 8)), (4, 2, 10, (5, 6, 10)),
     (16, 8, 32, (16, 32))],
)
def test_schedule_simulation(p, v, m, groups):
    """For every N within the bounds: each rank's peak is warm-up + 1 chunk micro-batches (the
    in-flight count x v), and the iteration takes (m + (p - 1) / v)(f + b), the equal-stage form of
    hieropt's composed time (hieropt/model/pipeline.py), whatever N. Outside them (N = 5 with m =
    12: a last group of 2 < p) the schedule stalls: longer."""
    for n in groups:
        t, peak = _simulate(p, v, m, n)
        assert t == pytest.approx((m + (p - 1) / v) * 3.0)
        plan = params({"layers": p * v}, pp=p, dp=1, schedule="interleaved", virtual_stages=v,
                      global_batch_size=2 * m, microbatch_group_size=n)
        assert peak == [in_flight(plan, r) * v for r in range(p)]
    if (p, v, m) == (4, 2, 12):
        assert _simulate(p, v, m, 5)[0] > (m + (p - 1) / v) * 3.0


def test_time_follows_the_group_through_the_graph():
    """hieropt's iteration time of the p = 4, v = 2, m = 12 plan for N = 4, 6, 12: with free
    communication the same for every N (488.448 ns: the chunks' compute is nearly equal, and the
    event simulation above gives equal chunks the same time for every N); at 1 GB/s per dimension
    the chunks' sends and collectives make them unequal (the first and last stages' chunks hold the
    embedding and the output layer) and the schedule's graph (hieropt/model/schedule_dag.py) takes
    longer the later the first backward: 21,416.448, 21,544.448 and 21,928.448 ns (the simulator
    follows N likewise: tests/fidelity/test_interleaved_group.py)."""
    net = Network(dims=tuple(Dimension(block="Ring", npus=2, cost_class="c") for _ in range(3)))
    cost = CostModel(classes={"c": CostClass(link_usd_per_gbps=1.0)})
    runs = [evaluate(instance_for(_plan(12, n), net, cost), [1.0, 1.0, 1.0]) for n in (4, 6, 12)]
    assert [r.compute_ns + r.bubble_ns for r in runs] == pytest.approx([488.448] * 3, rel=1e-12)
    assert [r.iteration_time_ns for r in runs] == pytest.approx(
        [21_416.448, 21_544.448, 21_928.448], rel=1e-12)


def test_first_chunk_with_only_the_embedding():
    """6 blocks, p = 2, v = 4, stage_layers (3, 3): stage 0's chunks hold 0, 1, 1, 1 blocks (the
    first only the embedding), stage 1's 1, 1, 1, 0 (the last only the output layer); model chunks
    c0 (stage 0) ..., blocks in model order: c1 = block 1, c2 = block 2, ..., c6 = block 6."""
    p = params({"layers": 6}, dp=1, global_batch_size=8, schedule="interleaved",
               virtual_stages=4, stage_layers=(3, 3))
    assert stage_chunks(p) == [
        [range(0, 0), range(1, 2), range(3, 4), range(5, 6)],
        [range(0, 1), range(2, 3), range(4, 5), range(6, 6)],
    ]
    step = build_step(p)
    assert [o.name for o in step.stages[0].ops] == [
        "embed", "attn2", "mlp2", "attn4", "mlp4", "attn6", "mlp6"]
    assert [o.name for o in step.stages[1].ops] == [
        "attn1", "mlp1", "attn3", "mlp3", "attn5", "mlp5", "output"]
    # the embedding alone sends its output on; the output layer alone sends the gradient back
    sends = {(o.name, c.phase) for o in step.stages[0].ops for c in o.comms if c.group == "pp"}
    assert ("embed", "forward") in sends
    sends = {(o.name, c.phase) for o in step.stages[1].ops for c in o.comms if c.group == "pp"}
    assert ("output", "input_grad") in sends


def test_uneven_chunks_weighted_in_flight():
    """The plan above, m = 4, N = 2. Stage 0's chunks weigh 0 (the embedding keeps nothing without
    dropout), B, B, B (B = 1,216): after its 2 + 3 x 2 = 8 warm-up forwards it holds chunks 0 to 3
    twice each, 6 B, and never more: 7,296 B, 2.0 micro-batches per block (the unweighted (8 + 1) /
    4 = 2.25 would give 8,208). The last stage's weigh B, B, B, O (O = 768, the output layer): 6
    warm-up forwards hold 6 B; the third steady step's forward of chunk 0 before the backward of
    chunk 2 holds 7 B = 8,512 B, 8,512 / 4,416 micro-batches (unweighted (6 + 1) / 4 x 4,416 =
    7,728). The event simulation gives the same peaks."""
    p = params({"layers": 6}, dp=1, global_batch_size=8, schedule="interleaved",
               virtual_stages=4, stage_layers=(3, 3))
    b, o = BLOCK_BYTES, 768
    assert chunk_activation_bytes(p, 0, {}) == (0.0, b, b, b)
    assert chunk_activation_bytes(p, 1, {}) == (b, b, b, o)
    rep = memory(p)
    assert [s.activations_bytes for s in rep.stages] == [6 * b, 7 * b]
    assert [s.in_flight for s in rep.stages] == [2.0, 7 * b / (3 * b + o)]
    assert stage_activation_bytes(p, build_step(p), 1) == 7 * b
    _, peak = _simulate(2, 4, 4, 2, weights=[[0, b, b, b], [b, b, b, o]])
    assert peak == [6 * b, 7 * b]


def test_step_schedule_group_bounds():
    """The instance's [step] takes the group from the plan (the workload's training facts) and
    checks the same bounds."""
    from hieropt.spec import StepSchedule

    assert StepSchedule(microbatches=8, stages=4, virtual_stages=2, microbatch_group=8).group == 8
    assert StepSchedule(microbatches=8, stages=4, virtual_stages=2).group == 4
    for n, v in ((3, 2), (8, 1), (9, 2)):
        with pytest.raises(ValidationError, match=f"step.microbatch_group: {n} with 4 stages"):
            StepSchedule(microbatches=8, stages=4, virtual_stages=v, microbatch_group=n)
    from hieropt.workloads.llm.lower import schedule

    assert schedule(_plan(12, 6)).microbatch_group == 6
