"""The SCIP oracle's own statement of every training loop (hieropt/model/timing.py module
docstring), with numbers or with SCIP expressions (tests/oracle/scip_loops.py builds SCIP's model
from it).

The oracle states each loop straight from the formulas of the :mod:`hieropt.model.timing` docstring,
per layer and phase, from its own statement of every group's collective algorithm
(tests/oracle/algorithms.py: bytes and latency per dimension, and whether the dimensions' times add
up; no aggregation, nothing from hieropt's model, formulation or solvers), with pyscipopt, in KB (or
MB), GB/s and us (or ms):

    T_lj >= m_ljd t_d + lat_ljd  for every dimension d     (concurrent, flat ring / tree / direct:
    the max over d) T_lj >= sum_d (m_ljd t_d + lat_ljd)                    (sequential)
    B_d t_d == 1  (loaded d),  design rows on B,

then the loop's structure over the collective times T and compute times C, with an epigraph variable
z >= each argument for every max (convex, minimised, so z is the max at the optimum):

- no_overlap: sum_l (C_f + T_f + C_ig + T_ig + C_wg + T_wg);
- tp_dp_overlap: sum_l (C_f + T_f) + sum_l max(C_ig + T_ig, C_ig + C_wg + T_wg, C_ig + S_ig,d +
  S_wg,d for every dimension d) (shared links; S_ljd = m_ljd t_d + lat_ljd the time a collective
  keeps d busy), or with collectives_in_flight = 1: sum_l (C_f + T_f) + sum_l (C_ig + max(T_ig,
  C_wg) + T_wg);
- tp_dp_overlap_cross: backwards, r_l = r_(l+1) + C_ig + T_ig + C_wg, Z_d = max(r_l, Z_d + S_ig,d) +
  S_wg,d (a dimension's gradient backlog; Z_d += S_ig,d in layers without a weight-gradient
  collective), y_l = max(max(y_(l+1), r_l) + T_wg, Z_d for every d) (r, y = 0 past the last layer),
  end max(r_0, y_0, Z_d), plus the forward sum; with collectives_in_flight = 1 one slot s: r +=
  C_ig, r = s = max(r,
  s) + T_ig, r += C_wg, s = max(r,
  s) + T_wg, end max(r, s);
- recompute: no_overlap + sum_l (C_f + T_f);
- pipeline: (m + p - 1) (sum_l (C_f + T_f + C_ig + T_ig + C_wg) + 2 T_p2p) + sum_l T_wg with
  T_p2p >= p2p_bytes t_(p2p_dim) + one step of that dimension's latency (none when p2p_bytes is 0);
- step: with F = m + (p - 1)/v, F sum_l (C_f + T_f + C_ig + T_ig + C_wg) + sum_l T_wg + U, or with
  overlap_dp F sum_l (C_f + T_f) + (F - 1) sum_l (C_ig + T_ig + C_wg) + (the tp_dp_overlap_cross
  backward above, shared links or one collective in flight) + U (U: the optimizer step, sum_l
  update_ns); with overlap_groups (the forward and input-gradient collectives of those groups on
  their own stream, O; the others M) each slot is max(sum_l (C_f + C_ig + C_wg) + sum_M (T_f +
  T_ig), sum_O (T_f + T_ig), sum_(l, j<2) S_ljd for every dimension d both streams use) (one
  collective in flight: sum_(l, j<2) T_lj instead of the last), the pipeline composed from these
  slots (no graph); otherwise a pipeline of known stages by its schedule's graph (1F1B, or
  interleaved with each model chunk's forward and backward an operation: :func:`graph_end`); the
  weight-gradient all-gathers (ZeRO's updated parameters) never on the overlap_dp stream but after
  U, or with overlap_gather (v = 1) hidden behind the first forward, which then takes G: the
  overlapped backward pass above on the mirrored layers (compute C_f, the forward collectives as
  the input-gradient ones, each gather on the row it gates: its own, or for a compute-free row the
  nearest earlier row with compute), in place of one f;

and the objective sum_j weight_j T_j over the workloads, T_j the max over the workload's pipeline
stages (``Workload.more_stages``) of each stage's time by the loop. The same loop code, with
numbers and ``max`` instead of SCIP expressions and epigraph variables, gives the time at a point
(:func:`oracle_time_ns`), which the oracle tests check against :func:`hieropt.evaluate`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np

from hieropt.spec import Collective, Instance, StepSchedule
from tests.oracle.algorithms import LINK_RULES, crossed_sizes, restated_rows


def own_slot(instance: Instance, C: np.ndarray, T: list[list], mx: Callable[[list], object],
             S: list[list], own: np.ndarray):
    """One micro-batch slot with own-stream collectives (``own`` (L, 3): the phases on their own
    stream)."""
    L, D = len(T), instance.network.n_dims
    cells = [(lay, j) for lay in range(L) for j in (0, 1)]
    main = sum(C[lay].sum() for lay in range(L))
    main = main + sum(T[lay][j] for lay, j in cells if not own[lay, j])
    side = sum(T[lay][j] for lay, j in cells if own[lay, j])
    items = [main, side]
    if instance.collectives_in_flight == 1:
        items.append(sum(T[lay][j] for lay, j in cells))
    else:
        def used(d: int, stream: bool) -> bool:
            return any(not (isinstance(S[lay][j][d], float) and S[lay][j][d] == 0.0)
                       for lay, j in cells if bool(own[lay, j]) == stream)

        items += [sum(S[lay][j][d] for lay, j in cells) for d in range(D)
                  if used(d, True) and used(d, False)]
    return mx(items)


def loop_time(
    instance: Instance,
    C: np.ndarray,
    T: list[list],
    p2p,
    mx: Callable[[list], object],
    S: list[list],
    U: float = 0.0,
    own: np.ndarray | None = None,
    A: np.ndarray | None = None,
):
    """One workload's iteration time, straight from the formulas of the hieropt.model.timing
    docstring (``U``: the workload's optimizer step, loop ``step`` only; ``A``: (L,) its
    weight-gradient all-gathers, :func:`_gathers`).

    ``C`` (L, 3) compute times; ``T[l][j]`` collective times, ``S[l][j][d]`` the time the collective
    keeps dimension d busy (0.0: not at all) and ``p2p`` the pipeline transfer time (numbers or SCIP
    expressions, in the same unit as C); ``mx`` the maximum of a list (``max`` for numbers, an
    epigraph variable for SCIP). Only sums, non-negative multiples and ``mx`` are used, so the
    result is a number or a linear expression.
    """
    L = len(T)
    f, ig, wg = (0, 1, 2)
    loop = instance.training_loop
    forward = sum(C[lay, f] + T[lay][f] for lay in range(L))
    if loop == "no_overlap":
        return forward + sum(C[lay, ig] + T[lay][ig] + C[lay, wg] + T[lay][wg] for lay in range(L))
    if loop == "recompute":
        return 2 * forward + sum(
            C[lay, ig] + T[lay][ig] + C[lay, wg] + T[lay][wg] for lay in range(L)
        )
    serial = instance.collectives_in_flight == 1
    D = instance.network.n_dims
    if loop == "tp_dp_overlap" and serial:
        return forward + sum(
            C[lay, ig] + mx([T[lay][ig], C[lay, wg]]) + T[lay][wg] for lay in range(L)
        )
    if loop == "tp_dp_overlap":
        return forward + sum(mx([C[lay, ig] + T[lay][ig], C[lay, ig] + C[lay, wg] + T[lay][wg]]
                                + [C[lay, ig] + S[lay][ig][d] + S[lay][wg][d] for d in range(D)
                                   if _busy(S[lay][ig][d]) and _busy(S[lay][wg][d])])
                             for lay in range(L))
    if loop == "tp_dp_overlap_cross":
        return forward + _cross_backward(C, T, S, mx, D, serial)
    if loop == "step":
        st_ = instance.step
        F = st_.microbatches + (st_.stages - 1) / st_.virtual_stages
        backward = sum(C[lay, ig] + T[lay][ig] + C[lay, wg] for lay in range(L))
        if own is not None and own.any():
            tail = sum(T[lay][wg] for lay in range(L)) + U
            return F * own_slot(instance, C, T, mx, S, own) + tail
        A = np.zeros(L, dtype=bool) if A is None else A
        hide = bool(A.any()) and st_.overlap_gather and st_.virtual_stages == 1
        gathers = sum(T[lay][wg] for lay in range(L) if A[lay])
        after = 0.0 if hide else gathers  # (after the optimizer step)
        first = (F - 1) * forward + _gathered_forward(C, T, S, mx, D, serial, A) if hide \
            else F * forward
        if not st_.overlap_dp:
            return first + F * backward + sum(T[lay][wg] for lay in range(L) if not A[lay]) \
                + after + U
        T2 = [[T[lay][0], T[lay][1], 0.0 if A[lay] else T[lay][2]] for lay in range(L)]
        S2 = [[S[lay][0], S[lay][1], [0.0] * D if A[lay] else S[lay][2]] for lay in range(L)]
        cross = _cross_backward(C, T2, S2, mx, D, serial)
        return first + (F - 1) * backward + cross + U + after
    if loop == "pipeline":
        pp = instance.pipeline
        per_micro = (
            sum(C[lay, f] + T[lay][f] + C[lay, ig] + T[lay][ig] + C[lay, wg] for lay in range(L))
            + 2 * p2p
        )
        return (pp.microbatches + pp.stages - 1) * per_micro + sum(T[lay][wg] for lay in range(L))
    raise AssertionError(f"unknown loop {loop}")


def _gathered_forward(C: np.ndarray, T: list[list], S: list[list], mx: Callable[[list], object],
                      D: int, serial: bool, A: np.ndarray):
    """The first forward with the gathers ``A`` on their own stream: the overlapped backward pass
    (:func:`_cross_backward`) of the mirrored layers (module docstring, step)."""
    L = len(T)
    at = {}  # gathered row -> the row it gates
    for i in np.flatnonzero(A).tolist():
        j = i
        while j > 0 and C[j].sum() == 0:
            j -= 1
        if j != i and (A[j] or j in at.values()):
            j = i
        at[i] = j
    gate = {j: i for i, j in at.items()}
    C2 = np.zeros_like(C)
    C2[:, 2] = C[:, 0]
    T2 = [[0.0, T[lay][0], T[gate[lay]][2] if lay in gate else 0.0] for lay in range(L)]
    S2 = [[[0.0] * D, S[lay][0], S[gate[lay]][2] if lay in gate else [0.0] * D]
          for lay in range(L)]
    return _cross_backward(C2, T2, S2, mx, D, serial)


def _busy(x) -> bool:
    """Whether a collective time (a number or a SCIP expression) can be positive: not the number
    0.0."""
    return not (isinstance(x, float) and x == 0.0)


def _cross_backward(C: np.ndarray, T: list[list], S: list[list], mx: Callable[[list], object],
                    D: int, serial: bool):
    """The backward pass of tp_dp_overlap_cross (also the last micro-batch's backward of step +
    overlap_dp): :func:`_serial_backward` with one collective in flight (``serial``), else
    :func:`_shared_backward`."""
    return _serial_backward(C, T, mx) if serial else _shared_backward(C, T, S, mx, D)


def _serial_backward(C: np.ndarray, T: list[list], mx: Callable[[list], object]):
    """The cross-overlapped backward pass with one collective in flight (:func:`loop_time`'s
    arguments): one slot s, going backwards from the last layer: r += C_ig, r = s = max(r, s) +
    T_ig, r += C_wg, s = max(r, s) + T_wg; the end max(r, s)."""
    ig, wg = 1, 2
    r = slot = 0.0  # compute position and the end of the last collective (one at a time)
    for lay in reversed(range(len(T))):
        r = r + C[lay, ig]
        if _busy(T[lay][ig]):
            r = slot = mx([r, slot]) + T[lay][ig]
        r = r + C[lay, wg]
        if _busy(T[lay][wg]):
            slot = mx([r, slot]) + T[lay][wg]
    return mx([r, slot])


def _shared_backward(C: np.ndarray, T: list[list], S: list[list], mx: Callable[[list], object],
                     D: int):
    """The cross-overlapped backward pass on shared links (:func:`loop_time`'s arguments, ``D``
    dimensions): the compute stream r, the weight-gradient stream y and each dimension's gradient
    backlog Z_d (module docstring, tp_dp_overlap_cross); the end max(r, y, Z_d)."""
    ig, wg = 1, 2
    r = y = 0.0  # compute and weight-gradient collective streams, backwards from the last layer
    Z: dict[int, object] = {}  # the gradient stream's backlog on each dimension (TP ones go first)
    for lay in reversed(range(len(T))):
        r = r + C[lay, ig] + T[lay][ig] + C[lay, wg]
        for d in list(Z):
            Z[d] = Z[d] + S[lay][ig][d]
        if _busy(T[lay][wg]):  # (hieropt.evaluate skips layers without one: the end is the same)
            for d in range(D):
                if _busy(S[lay][wg][d]) or d in Z:
                    Z[d] = mx([r, Z[d]]) + S[lay][wg][d] if d in Z else r + S[lay][wg][d]
            y = mx([mx([y, r]) + T[lay][wg]] + list(Z.values()))
    return mx([r, y] + list(Z.values()))


def stage_time(instance: Instance, C, T, p2p, mx, S, U, own=None, A=None, cuts=None):
    """One stage's time by the loop (:func:`loop_time`) and, under loop ``step``, its parts for the
    pipeline's composition: (T, micro-batch slot t = sum_l (C_f + T_f + C_ig + T_ig + C_wg), tail W
    = sum_l T_wg + U (the gathers ``A`` left out when they hide behind the first forward), the
    overlapped last micro-batch f + X + U (+ the gathers; G for f when they hide): the loop with one
    micro-batch, one stage and overlap_dp, the forward sum_l (C_f + T_f) and backward sum_l (C_ig +
    T_ig + C_wg) of each of its chunks, ``cuts`` their (first, end) rows (default: one chunk, the
    stage), and G: the loop with one micro-batch and the backward taken out, or None)."""
    L = len(T)
    whole = loop_time(instance, C, T, p2p, mx, S, U, own, A)
    if instance.training_loop != "step":
        return whole, None
    if own is not None and own.any():  # (no graph, no overlap_dp: the composition reads the slot)
        slot = own_slot(instance, C, T, mx, S, own)
        return whole, (slot, sum(T[lay][2] for lay in range(L)) + U, None, [slot], [0.0], None)
    cuts = cuts or [(0, L)]
    fwd = [sum(C[lay, 0] + T[lay][0] for lay in range(a, b)) for a, b in cuts]
    bwd = [sum(C[lay, 1] + T[lay][1] + C[lay, 2] for lay in range(a, b)) for a, b in cuts]
    st_ = instance.step
    hide = A is not None and A.any() and st_.overlap_gather and st_.virtual_stages == 1
    tail = sum(T[lay][2] for lay in range(L) if not (hide and A[lay])) + U
    one = instance.model_copy(update={"step": StepSchedule(
        microbatches=1, stages=1, overlap_dp=True, overlap_gather=st_.overlap_gather)})
    G = _gathered_forward(C, T, S, mx, instance.network.n_dims,
                          instance.collectives_in_flight == 1, A) if hide else None
    return whole, (sum(fwd) + sum(bwd), tail, loop_time(one, C, T, p2p, mx, S, U, None, A), fwd,
                   bwd, G)


def chunk_cuts(w) -> list[tuple[int, int]]:
    """The (first, end) rows of each model chunk of stage workload ``w``: a layer (its row and the
    rows ``<name>+k`` after it) with a forward point-to-point send ends a chunk, one with an
    input-gradient send starts one (the sends between an interleaved stage's chunks)."""
    kind = w.table.collective
    names = list(w.layers.names) if hasattr(w.layers, "names") else [x.name for x in w.layers]
    starts = [i for i, n in enumerate(names) if not (i and n.startswith(names[i - 1].split("+")[0]
                                                                   + "+"))]
    layers = [(a, b) for a, b in zip(starts, starts[1:] + [len(names)], strict=True)]
    cuts, first = [], 0
    for a, b in layers:
        sends = [kind[i, j] == Collective.P2P for i in range(a, b) for j in (0, 1)]
        if any(sends[1::2]) and a > first:
            cuts.append((first, a))
            first = a
        if any(sends[0::2]):
            cuts.append((first, b))
            first = b
    return cuts + ([(first, len(names))] if first < len(names) else [])


def flush_order(p: int, m: int, r: int, v: int = 1, n: int = 0) -> list[tuple[str, int, int]]:
    """Stage r's operations (F / B, micro-batch, chunk j). 1F1B (PipeDream-Flush): min(p - r - 1,
    m) forwards, then F and B in turn, then B. Interleaved (v chunks; Megatron-LM's
    forward_backward_pipelining_with_interleaving): the k-th forward runs micro-batch and chunk of
    row k of the table of groups of n micro-batches (the last group the rest) through chunks 0 ..
    v - 1, the k-th backward that row with its chunk reversed; 2 (p - r - 1) + (v - 1) n forwards
    first (at most m v), then F and B in turn, then B."""
    if v == 1:
        ops = [("F", i, 0) for i in range(min(p - r - 1, m))]
        while len([o for o in ops if o[0] == "B"]) < m:
            nf = len([o for o in ops if o[0] == "F"])
            if nf < m:
                ops.append(("F", nf, 0))
            ops.append(("B", len([o for o in ops if o[0] == "B"]), 0))
        return ops
    rows = []
    for g in range(0, m, n):
        top = m if g + n >= m else g + n
        rows += [(i, j) for j in range(v) for i in range(g, top)]
    warm = min(m * v, 2 * (p - r - 1) + (v - 1) * n)
    ops = [("F", *rows[k]) for k in range(warm)]
    for k in range(m * v):
        if warm + k < m * v:
            ops.append(("F", *rows[warm + k]))
        ops.append(("B", rows[k][0], v - 1 - rows[k][1]))
    return ops


def graph_end(p: int, m: int, fwd: list, bwd: list, mx, v: int = 1, n: int = 0, first=None):
    """The end of stage 0's last backward (and the start of it) by the recursion e = max(e of the
    stage's previous operation, e of the send it waits for) + duration over the stages' orders
    (:func:`flush_order`; blocking sends): a forward of model chunk c = j p + r waits for the
    forward of chunk c - 1, a backward for that of chunk c + 1; ``fwd[r][j]``, ``bwd[r][j]`` the
    durations of stage r's chunk j; ``first``: stage 0's first forward's duration when not
    fwd[0][0] (the gathered one). None when the orders deadlock."""
    orders = [flush_order(p, m, r, v, n) for r in range(p)]
    end: dict = {}
    start0 = None
    pending = {r: 0 for r in range(p)}
    while any(pending[r] < len(orders[r]) for r in range(p)):
        moved = False
        for r in range(p):
            while pending[r] < len(orders[r]):
                kind, i, j = orders[r][pending[r]]
                c = j * p + r + (-1 if kind == "F" else 1)
                src = (c % p, kind, i, c // p) if 0 <= c < p * v else None
                if src is not None and src not in end:
                    break
                before = [end[(r, *orders[r][pending[r] - 1])]] if pending[r] else []
                if src is not None:
                    before.append(end[src])
                start = mx(before) if len(before) > 1 else (before[0] if before else 0.0)
                if r == 0 and pending[r] == len(orders[r]) - 1:
                    start0 = start
                took = fwd[r][j] if kind == "F" else bwd[r][j]
                if first is not None and (r, kind, i, j) == (0, "F", 0, 0):
                    took = first
                end[(r, kind, i, j)] = start + took
                pending[r] += 1
                moved = True
        if not moved:
            return None
    return end[(0, *orders[0][-1])], start0


def compose(instance: Instance, workload, times: list, mx):
    """A workload's time from its stages' :func:`stage_time`: the slowest stage's T, or under loop
    ``step`` with the workload's pipeline stages known: up to 4096 operations (2 p m v), without
    own-stream collectives and with every stage cut into its v chunks by its sends, the schedule's
    graph (:func:`graph_end`, 1F1B or interleaved) plus stage 0's tail W_0, else the composition c
    sum_r t_r + (m - c) max_r t_r + W_0, c = ``step.fill_share`` (hieropt/model/pipeline.py
    docstring); with overlap_dp and v = 1 stage 0's last backward overlapped; with gathers hidden
    stage 0's first forward takes G."""
    ids = workload.pipeline_stages
    st_ = instance.step
    if (instance.training_loop != "step" or len(times) == 1 or len(ids) != len(times)
            or sorted(i for m in ids for i in m) != list(range(st_.stages))):
        return times[0][0] if len(times) == 1 else mx([t for t, _ in times])
    m, v = st_.microbatches, st_.virtual_stages
    over = st_.overlap_dp and v == 1
    first = next(k for k, members in enumerate(ids) if 0 in members)
    graph = (not st_.overlap_groups and 2 * st_.stages * m * v <= 4096
             and all(len(parts[3]) == v for _, parts in times))
    entry = {r: k for k, members in enumerate(ids) for r in members}
    p = st_.stages
    G = times[first][1][5]  # (the gathered first forward, or None)
    ends = graph and graph_end(p, m, [times[entry[r]][1][3] for r in range(p)],
                               [times[entry[r]][1][4] for r in range(p)], mx, v,
                               st_.microbatch_group or p, G)
    if ends:  # the schedule's graph (hieropt/model/schedule_dag.py)
        end, start0 = ends
        if over:  # stage 0's last backward overlapped: its start, then f + X + U less the forward
            # (G + X + U less G when the gathers hide: the graph's first forward took G already)
            forward = G if G is not None else times[first][1][3][0]
            return start0 + times[first][1][2] - forward
        return end + times[first][1][1]
    total = 0.0
    for k, (members, (_, parts)) in enumerate(zip(ids, times, strict=True)):
        n = len(members) - (1 if (over or G is not None) and k == first else 0)
        total = total + n * st_.fill_share * parts[0]
    if G is not None and not over:  # (stage 0's first slot: G + b)
        total = total + G + sum(times[first][1][4])
    c = st_.fill_share
    total = total + (m - c) * mx([parts[0] for _, parts in times])
    return total + (times[first][1][2] if over else times[first][1][1])


def stage_parts(instance: Instance) -> list[tuple[float, list[tuple]]]:
    """Per workload: (weight, per stage (traffic, latency, compute, optimizer step)):
    :func:`stage_rows` without the sums and the workload."""
    return [(w, [x[:4] for x in stages]) for w, stages, _ in stage_rows(instance)]


def stage_rows(instance: Instance) -> list[tuple[float, list[tuple], object]]:
    """Per workload: (weight, per pipeline stage (Workload.stages; one for most workloads): (traffic
    (L, 3, D) bytes, latency (L, 3, D) ns, compute (L, 3) ns, optimizer step ns, sums (L, 3): the
    collectives whose dimensions' times add up)). Traffic, latency and sums are the oracle's own
    statement of each group's algorithm (tests/oracle/algorithms.py). A workload's time is the max
    over its stages of each stage's time (the slowest stage paces the pipeline). A pipeline whose
    send group spans several dimensions (:func:`_send_groups`) is listed stage by stage, 0 first,
    each stage's forward sends crossing the dimensions between it and stage r + 1 (mod p), its
    input-gradient sends those between it and stage r - 1 (tests/oracle/algorithms.py
    crossed_sizes); the third item then states one pipeline stage per entry."""
    out = []
    for job in instance.jobs:
        stages = []
        placed = _send_groups(instance, job)
        if placed:
            p = instance.step.stages
            entry = {r: k for k, m in enumerate(job.workload.pipeline_stages) for r in m}
            for r in range(p):
                w = job.workload.stages[entry[r]]
                sends = {(j, g): crossed_sizes(sizes, r, (r + (1 if j == 0 else -1)) % p)
                         for g, sizes in placed.items() for j in (0, 1)}
                traffic, latency, sums = restated_rows(instance, w, job.mapping, sends)
                stages.append((traffic, latency, w.table.compute_ns,
                               float(w.table.update_ns.sum()), sums, _own(instance, w.table.group),
                               _gathers(instance, w.table), chunk_cuts(w)))
            each = SimpleNamespace(pipeline_stages=tuple((r,) for r in range(p)))
            out.append((job.weight, stages, each))
            continue
        for w in job.workload.stages:
            traffic, latency, sums = restated_rows(instance, w, job.mapping)
            own = _own(instance, w.table.group)
            stages.append((traffic, latency, w.table.compute_ns, float(w.table.update_ns.sum()),
                           sums, own, _gathers(instance, w.table), chunk_cuts(w)))
        out.append((job.weight, stages, job.workload))
    return out  # (per workload: weight, stages, the workload)


def _send_groups(instance: Instance, job) -> dict:
    """The named groups of the point-to-point sends in the forward and input-gradient phases of a
    loop ``step`` workload whose pipeline stages are known, that span several dimensions and hold
    the schedule's p stages: name -> sizes; empty otherwise (every send then crosses its group's
    dimensions)."""
    w, st_ = job.workload, instance.step
    if instance.training_loop != "step" or not w.more_stages or not w.pipeline_stages:
        return {}
    if sorted(r for m in w.pipeline_stages for r in m) != list(range(st_.stages)):
        return {}
    out = {}
    for s in w.stages:
        t = s.table
        for lay in range(t.size_bytes.shape[0]):
            for j in (0, 1):
                g = t.group[lay, j]
                if t.collective[lay, j] is Collective.P2P and g is not None:
                    sizes = tuple(job.mapping.groups[g])
                    if math.prod(sizes) == st_.stages and sum(x > 1 for x in sizes) > 1:
                        out[g] = sizes
    return out


def _gathers(instance: Instance, table) -> np.ndarray | None:
    """(L,) bool: under loop ``step`` the layers whose weight-gradient collective is an all-gather
    (ZeRO's updated parameters: after the optimizer step), None otherwise."""
    if instance.training_loop != "step":
        return None
    return np.array([c is Collective.ALL_GATHER for c in table.collective[:, 2]], dtype=bool)


def _own(instance: Instance, groups: np.ndarray) -> np.ndarray:
    """(L, 3) bool: the forward and input-gradient phases of a group in ``step.overlap_groups``."""
    named = set(instance.step.overlap_groups) if instance.step is not None else set()
    rows = [[g in named for g in row] for row in groups.tolist()]
    out = np.array(rows, dtype=bool).reshape(groups.shape)
    out[:, 2] = False
    return out


def p2p_transfer(instance: Instance) -> tuple[int, float, float]:
    """(dimension, bytes, latency ns) of one pipeline transfer; (0, 0, 0) without one."""
    pp = instance.pipeline
    if pp is None or pp.p2p_bytes <= 0:
        return 0, 0.0, 0.0
    dim = instance.network.dims[pp.p2p_dim]
    # (a FullyConnected dimension's send gets one of its n - 1 links)
    links = LINK_RULES[dim.block](dim.npus)
    return pp.p2p_dim, pp.p2p_bytes * links, dim.latency_ns * instance.chunks


def _collective_value(m: np.ndarray, lam: np.ndarray, bw: np.ndarray, summing: bool) -> float:
    per_dim = [m[d] / bw[d] + lam[d] for d in range(len(m)) if m[d] > 0 or lam[d] > 0]
    if not per_dim:
        return 0.0
    return float(sum(per_dim) if summing else max(per_dim))


def _per_dim_values(m: np.ndarray, lam: np.ndarray, bw: np.ndarray) -> list[float]:
    return [
        float(m[d] / bw[d] + lam[d]) if (m[d] > 0 or lam[d] > 0) else 0.0 for d in range(len(m))
    ]


def oracle_time_ns(instance: Instance, bw: np.ndarray) -> float:
    """T(bw) from :func:`loop_time` with numbers (used for SCIP's bounds, and checked against
    hieropt.evaluate)."""
    total = 0.0
    pd, pb, pl = p2p_transfer(instance)
    for w, stages, workload in stage_rows(instance):
        times = []
        for traffic, latency, C, U, sums, own, A, cuts in stages:
            T = [
                [
                    _collective_value(traffic[lay, j], latency[lay, j], bw, bool(sums[lay, j]))
                    for j in range(3)
                ]
                for lay in range(traffic.shape[0])
            ]
            S = [[_per_dim_values(traffic[lay, j], latency[lay, j], bw) for j in range(3)]
                 for lay in range(traffic.shape[0])]
            p2p = pb / bw[pd] + pl if pb > 0 else 0.0
            times.append(stage_time(instance, C, T, p2p, max, S, U, own, A, cuts))
        total += w * compose(instance, workload, times, max)
    return total
