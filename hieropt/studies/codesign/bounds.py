"""Proven lower bounds on the objective of a co-design candidate (plan, network shape, placement of
the plan's groups), the same for every shape of one dimension count and every placement.

**Lower bound (exact).** Without a pipeline, loop ``step`` gives the stage's T_s(B) = F C + U +
sum_k w_k tau_k(B), F = m + (p - 1)/v micro-batch slots, C one micro-batch's compute on stage s, U
its optimizer step, w_k = F for a per-micro-batch collective and 1 for a per-iteration one (0 with
``overlap_dp``, which may hide the gradient reduction: T is then still at least F (C +
per-micro-batch communication) + U; the all-gather after the optimizer step keeps w_k = 1, as no
overlap of the backward hides it, and takes 0 with ``overlap_param_gather``, whose gathered first
forward is at least the forward: :mod:`hieropt.model.gathers`; 0 too for the per-micro-batch
collectives on their own stream with ``overlap_sharded_comms``, which the compute may hide). Two
facts bound the communication for every shape, placement and bandwidth B:

- tau_k(B) >= max_d m_kd / B_d >= (sum_d m_kd) / (sum_d B_d) (the largest ratio is at least the
  ratio of the sums);
- the volume sum_d m_kd of the hierarchical decomposition (:mod:`hieropt.model.traffic`) depends
  only on the group's size P, not on its placement: 2S (1 - 1/P) for an all-reduce, S (1 - 1/P) for
  a reduce-scatter, S (P - 1) for an all-gather of shard S; an all-to-all puts S sum_d (1 - 1/p_d)
  >= S (1 - 1/P), a send S on each spanned dimension, >= S.

With sum_d B_d <= S_cap (a proven upper bound on the total over every bandwidth vector the space's
constraints allow: the dual of max sum_d B_d s.t. the rows, B >= 0, :func:`lp_lower_bound`; infinite
when they allow any total), T_s(B) >= T0_s + V_s / S_cap, V_s = sum_k w_k vol_k over stage s's
collectives. A pipelined plan composes its stages' micro-batch slots exactly
(:mod:`hieropt.model.pipeline`), which gives one (T0_s, V_s) pair per stage s
(:func:`plan_time_bounds`); T(B) >= max_s (T0_s + V_s / S_cap) =: T_lb for every shape and placement
of the plan (pairs that another exceeds in both are left out of the max: they never attain it).
Every collective algorithm sends at least the hierarchical volume on some spanned dimension (a flat
ring or tree the whole of it, a send S f_d >= S), so the bound holds for all of them; a group on
part of a dimension priced by its links multiplies its bytes there by g_d >= 1
(:func:`hieropt.model.algorithms.group_links`), which only adds to them. The network
cost N sum_d u_d B_d is at least C_lb = N min_B sum_d u_d B_d over the bandwidths the rows allow
(the same dual bound, 0 without a row that forces bandwidth). The bound on the objective is T_lb
(performance), T_lb C_lb (performance_per_cost), the $ of a run at (T_lb, C_lb) (min_run_cost,
increasing in both) or C_lb (min_cost, where a candidate with T_lb above the time target is
infeasible).
"""

from __future__ import annotations

import math

import numpy as np

from ...cache import Same
from ...model.cost import unit_costs
from ...model.pipeline import graph_fits
from ...spec import Network
from ...spec.space import constraint_for
from ...workloads.llm.comms import AG, own_stream_groups
from ...workloads.llm.lower import bottleneck_stage
from ...workloads.llm.params import LLMParams
from ...workloads.llm.space import CodesignSpace
from ...workloads.llm.step import chunk_layers


def plan_compute_ns(p: LLMParams, step, stage: int | None = None) -> float:
    """T0_s of plan ``p`` (module docstring): F x one micro-batch's compute of ``stage`` (default:
    the stage with the most compute, :func:`~hieropt.workloads.llm.lower.bottleneck_stage`) + its
    optimizer step, ns."""
    r = bottleneck_stage(step) if stage is None else stage
    pl = p.plan
    F = pl.microbatches + (pl.pp - 1) / pl.virtual_stages
    return F * sum(step.compute_ns(r)) + step.update_ns(r)


def _volume(kind: str, size: float, P: int) -> float:
    if P <= 1:
        return 0.0
    if kind == "ALLREDUCE":
        return 2 * size * (1 - 1 / P)
    if kind in ("REDUCESCATTER", "ALLTOALL"):
        return size * (1 - 1 / P)
    if kind == "ALLGATHER":
        return size * (P - 1)
    if kind == "P2P":
        return size
    raise KeyError(kind)


def plan_volume_bytes(p: LLMParams, step, stage: int | None = None) -> float:
    """V_s of plan ``p`` (module docstring): the weighted placement-free volume of ``stage``'s
    collectives per iteration (default: the stage with the most compute), bytes per NPU."""
    pl = p.plan
    F = pl.microbatches + (pl.pp - 1) / pl.virtual_stages
    sizes = step.group_sizes
    total = 0.0
    own = own_stream_groups(pl)  # (their per-micro-batch collectives may hide: weight 0)
    for op in step.stages[bottleneck_stage(step) if stage is None else stage].ops:
        for c in op.comms:
            if c.per_iteration and c.kind == AG:  # (after the optimizer step)
                w = 0.0 if pl.overlap_param_gather else 1.0
            elif c.per_iteration:
                w = 0.0 if pl.overlap_grad_reduce else 1.0
            else:
                w = 0.0 if c.group in own else F
            total += w * _volume(c.kind, c.size_bytes, sizes[c.group])
    return total


def plan_time_bounds(p: LLMParams, step) -> tuple[tuple[float, float], ...]:
    """(T0_s ns, V_s bytes) pairs of plan ``p`` that no other pair exceeds in both, the stage with
    the most compute first: T_lb = max over them of T0_s + V_s / S_cap (module docstring). With p >
    1, every stage's slot t_r >= C_r + Vm_r / S_cap (C_r a micro-batch's compute, Vm_r its
    per-micro-batch volume) and stage 0's tail W_0 >= U_0 + Vi_0 / S_cap (its optimizer step and
    per-iteration volume; with ``overlap_dp`` (v = 1) only its all-gathers after the step, unless
    ``overlap_param_gather`` (v = 1) hides them too: the gathered first forward is at least the
    forward; with v > 1 both stay in W_0). A schedule timed by its graph
    (:mod:`hieropt.model.pipeline`: 1F1B, or interleaved with v chunks per stage) is at least the
    path that takes micro-batch 0 forward through the first chunks of stages 0 .. s - 1, then every
    one of stage s's 2 m v operations (its first is that micro-batch's forward of its first chunk,
    its last the last micro-batch's backward of it), then that backward back through the first
    chunks of stages s - 1 .. 0 (stage 0's last operation) and W_0: sum_(r<s) t_r0 + m t_s + W_0,
    t_r0 the slot of stage r's first chunk (the whole stage for v = 1), at least C0_r + Vm0_r /
    S_cap over its layers: T0_s = sum_(r<s) C0_r + m C_s + U_0, V_s = sum_(r<s) Vm0_r + m Vm_s +
    Vi_0; the composition (1/v) sum_r t_r + (m - 1/v) max_r t_r + W_0 (c >= 1/v for unequal chunks
    only adds) gives T0_s = (1/v) sum_r C_r + (m - 1/v) C_s + U_0 and V_s likewise."""
    pl = p.plan
    if pl.pp == 1:
        return ((plan_compute_ns(p, step), plan_volume_bytes(p, step)),)
    m, v = pl.microbatches, pl.virtual_stages
    sizes, overlap, own = step.group_sizes, pl.overlap_grad_reduce, own_stream_groups(pl)
    per_op: dict[Same, tuple[float, ...]] = {}  # (by identity: a step's blocks share templates)

    def volumes(op) -> tuple[float, float, float]:
        hit = per_op.get(key := Same(op))
        if hit is None:
            vols = [(c.per_iteration + (c.per_iteration and c.kind == AG),
                     0.0 if c.group in own and not c.per_iteration  # (may hide)
                     else _volume(c.kind, c.size_bytes, sizes[c.group])) for c in op.comms]
            # (per micro-batch, per iteration, the all-gathers after the optimizer step)
            hit = per_op[key] = tuple(sum([x for it, x in vols if it == k]) for k in range(3))
        return hit

    graph = graph_fits(pl.pp, m, v, pl.group_size, bool(own))
    heads = [n[0] for n in chunk_layers(p)] if graph and v > 1 else None
    C, Vm, C0, Vm0 = [], [], [], []
    for r, stage in enumerate(step.stages):
        C.append(sum(step.compute_ns(r)))
        vols = [volumes(op)[0] for op in stage.ops]
        Vm.append(sum(vols))
        if heads is not None:  # (its first chunk's layers)
            C0.append(sum([_op_ns(step, op) for op in stage.ops[:heads[r]]]))
            Vm0.append(sum(vols[:heads[r]]))
        else:  # (v = 1: the whole stage)
            C0.append(C[-1])
            Vm0.append(Vm[-1])
    vi0 = 0.0 if overlap and v == 1 else sum([volumes(op)[1] for op in step.stages[0].ops])
    if not (pl.overlap_param_gather and v == 1):  # (else hidden behind the first forward)
        vi0 += sum([volumes(op)[2] for op in step.stages[0].ops])
    r0 = bottleneck_stage(step)
    # the schedule's graph: the path through stage s's 2 m v operations
    if graph:
        pairs = [
            (sum(C0[:s]) + m * C[s] + step.update_ns(0), sum(Vm0[:s]) + m * Vm[s] + vi0)
            for s in range(len(C))
        ]
    else:
        base_t, base_v = sum(C) / v + step.update_ns(0), sum(Vm) / v + vi0
        pairs = [
            (base_t + (m - 1 / v) * c, base_v + (m - 1 / v) * x) for c, x in zip(C, Vm, strict=True)
        ]
    first = pairs[r0]
    out = [first]
    # T0 descending: a kept pair has a larger T0
    for t, vol in sorted(set(pairs), key=lambda tv: (-tv[0], -tv[1])):
        if (t, vol) != first and vol > max((o[1] for o in out if o[0] >= t), default=-1.0):
            out.append((t, vol))
    return tuple(out)


def _op_ns(step, op) -> float:
    """One layer's compute per micro-batch (forward and backward with recompute), ns: as
    :meth:`~hieropt.workloads.llm.step.Step.compute_ns` adds it."""
    if step.params.npu.roofline:
        return sum(op.compute_ns)
    return (op.flops[0] + op.flops[1] + op.flops[2] + op.recompute_flops) / (
        step.params.npu.flops_per_ns)


def time_bound_ns(bounds: tuple[tuple[float, float], ...], cap: float) -> float:
    """T_lb = max over ``bounds`` ((T0_s, V_s) pairs, :func:`plan_time_bounds`) of T0_s + V_s /
    ``cap``, ns.

    A cap <= 0 (rows such as ``sum(bw) <= 0``) leaves no bandwidth (B >= 0): a stage with volume V_s
    > 0 then takes infinitely long, T_lb = inf (the candidate is infeasible), and one without volume
    T0_s."""
    if cap > 0:
        return max(t + v / cap for t, v in bounds)
    return max(t if v <= 0 else float("inf") for t, v in bounds)


def bandwidth_cap(space: CodesignSpace, n_dims: int) -> float:
    """S_cap: a proven upper bound on sum_d B_d over the bandwidths the space's rows allow on
    ``n_dims`` dimensions (B >= 0; :func:`lp_lower_bound` of -sum_d B_d, or the tightest ``sum(bw)
    <= / == S`` row if smaller): inf when they allow any total, -inf when they allow no bandwidth at
    all (contradictory rows)."""
    return min(-lp_lower_bound(_rows(space, n_dims), -np.ones(n_dims)),
               _sum_rows(space, n_dims, ("<=", "=="), min, math.inf))


def bandwidth_floor(space: CodesignSpace, n_dims: int) -> float:
    """S_floor: a proven lower bound on sum_d B_d over the bandwidths the space's rows allow (0
    without one; inf when they allow none): the dual bound, or the tightest ``sum(bw) >= / == S``
    row if larger."""
    return max(0.0, lp_lower_bound(_rows(space, n_dims), np.ones(n_dims)),
               _sum_rows(space, n_dims, (">=", "=="), max, 0.0))


def _sum_rows(
    space: CodesignSpace, n_dims: int, senses: tuple[str, ...], pick, start: float
) -> float:
    """The tightest right-hand side of the rows ``c sum(bw) <sense> S`` (all coefficients equal, c >
    0), over c: exact where a space gives its total so (the dual bound carries a 1e-12 rounding
    margin)."""
    out = start
    for text in space.constraints:
        c = constraint_for(text, n_dims)
        co = c.coefficients
        if c.sense in senses and co[0] > 0 and all(x == co[0] for x in co):
            out = pick(out, c.rhs / co[0])
    return out


def _rows(space: CodesignSpace, n_dims: int) -> tuple[np.ndarray, np.ndarray]:
    """The space's rows on ``n_dims`` dimensions as G B >= h (a row <= negated, a row == as two)."""
    G, h = [], []
    for text in space.constraints:
        c = constraint_for(text, n_dims)
        a = np.asarray(c.coefficients, dtype=float)
        if c.sense in (">=", "=="):
            G.append(a)
            h.append(c.rhs)
        if c.sense in ("<=", "=="):
            G.append(-a)
            h.append(-c.rhs)
    return np.array(G, dtype=float).reshape(len(G), n_dims), np.array(h, dtype=float)


def lp_lower_bound(rows: tuple[np.ndarray, np.ndarray], c: np.ndarray) -> float:
    """A proven lower bound on c . B over B >= 0 with G B >= h (``rows`` = (G, h)), by weak duality:
    any z >= 0 with G^T z <= c gives c . B >= (G^T z) . B = z . G B >= z . h. HiGHS solves the dual
    LP max h . z s.t. G^T z <= c, z >= 0; its z is made exactly feasible (negative entries dropped,
    then scaled by the largest factor <= 1, or for c < 0 the smallest, that keeps G^T z <= c) and h
    . z is rounded down by 1e-12 relative, so the bound holds whatever the LP's tolerances. Returns
    inf when no B satisfies the rows (the dual is unbounded), -inf when c . B has no lower bound
    there (or no certificate is found)."""
    G, h = rows
    m, n = G.shape
    if m == 0:
        return 0.0 if (c >= 0).all() else -math.inf
    z, status = _dual(G, h, c)
    if status == "unbounded":
        return math.inf
    if z is None:
        return -math.inf
    z = np.maximum(z, 0.0)
    s = G.T @ z
    if (c < 0).all():  # scale up or down until every (G^T z)_d <= c_d
        pos = -s
        if (pos <= 0).any():
            return -math.inf
        z = z * float(np.max(-c / pos))
    else:
        over = s > c
        if over.any():
            if (c[over] <= 0).any():
                return -math.inf
            z = z * float(np.min(c[over] / s[over]))
    value = float(h @ z)
    if not (G.T @ z <= c + 1e-12 * np.abs(c)).all() or not math.isfinite(value):
        return -math.inf
    return value - 1e-12 * abs(value)


def _dual(G: np.ndarray, h: np.ndarray, c: np.ndarray) -> tuple[np.ndarray | None, str]:
    """HiGHS on max h . z s.t. G^T z <= c, z >= 0: (z, "optimal"), (None, "unbounded") or (None,
    other)."""
    import highspy

    from ...solvers.highs import quiet_stdout

    with quiet_stdout():
        hs = highspy.Highs()
    hs.setOptionValue("output_flag", False)
    m, n = G.shape
    inf = highspy.kHighsInf
    idx = np.arange(m, dtype=np.int32)
    hs.addVars(m, np.zeros(m), np.full(m, inf))
    hs.changeColsCost(m, idx, h.astype(float))
    hs.changeObjectiveSense(highspy.ObjSense.kMaximize)
    for d in range(n):
        hs.addRow(-inf, float(c[d]), m, idx, G[:, d].astype(float))
    hs.run()
    status = hs.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        return np.array(hs.getSolution().col_value, dtype=float), "optimal"
    return None, "unbounded" if status == highspy.HighsModelStatus.kUnbounded else "other"


def objective_bound(space: CodesignSpace, network: Network, t_lb: float) -> float:
    """The candidate's bound on the space's objective from its time bound ``t_lb`` (module
    docstring)."""
    if space.objective == "performance":
        return t_lb
    c_lb = cost_floor_usd(space, network)
    if space.objective == "performance_per_cost":
        return t_lb * c_lb
    if space.objective == "min_run_cost":  # the $ of a run at (T_lb, C_lb): increasing in both
        from ...model.run_cost import terms_of

        b = space.base
        terms = terms_of(space.cluster, network.npus_total, space.tokens,
                         b.plan.global_batch_size * b.model.sequence_length)
        return terms.value(t_lb, c_lb)
    return c_lb


def cost_floor_usd(space: CodesignSpace, network: Network) -> float:
    """C_lb of ``network`` (module docstring): N min sum_d u_d B_d over the bandwidths the space's
    rows allow, $ (N = the network's NPUs, u its unit prices per GB/s per NPU); the same for every
    plan on that shape."""
    u = np.asarray(unit_costs(network, space.cost), dtype=float)
    cheapest = float(u.min())
    by_total = cheapest * bandwidth_floor(space, network.n_dims) if cheapest > 0 else 0.0
    return network.npus_total * max(0.0, lp_lower_bound(_rows(space, network.n_dims), u), by_total)


__all__ = [
    "plan_compute_ns",
    "plan_volume_bytes",
    "plan_time_bounds",
    "time_bound_ns",
    "bandwidth_cap",
    "bandwidth_floor",
    "objective_bound",
    "cost_floor_usd",
    "lp_lower_bound",
]
