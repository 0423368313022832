"""Proven lower bounds on the objective of a co-design candidate (plan, network shape, placement of the plan's
groups), the same for every shape of one dimension count and every placement.

**Lower bound (exact).** Without a pipeline, loop ``step`` gives the stage's T_s(B) = F C + U + sum_k w_k
tau_k(B), F = m + (p - 1)/v micro-batch slots, C one micro-batch's compute on stage s, U its optimizer step,
w_k = F for a per-micro-batch collective and 1 for a per-iteration one (0 with ``overlap_dp``, which may hide them:
T is then still at least F (C + per-micro-batch communication) + U). Two facts bound the communication for every
shape, placement and bandwidth B:

- tau_k(B) >= max_d m_kd / B_d >= (sum_d m_kd) / (sum_d B_d) (the largest ratio is at least the ratio of the sums);
- the volume sum_d m_kd of the hierarchical decomposition (:mod:`hieropt.model.traffic`) depends only on the group's
  size P, not on its placement: 2S (1 - 1/P) for an all-reduce, S (1 - 1/P) for a reduce-scatter, S (P - 1) for an
  all-gather of shard S; an all-to-all puts S sum_d (1 - 1/p_d) >= S (1 - 1/P), a send S on each spanned dimension,
  >= S.

With sum_d B_d <= S_cap (the tightest ``sum(bw) <= / == S`` row of the space's constraints, all coefficients equal;
infinite without one), T_s(B) >= T0_s + V_s / S_cap, V_s = sum_k w_k vol_k over stage s's collectives. A pipelined
plan composes its stages' micro-batch slots exactly (:mod:`hieropt.model.pipeline`), which gives one (T0_s, V_s)
pair per stage s (:func:`plan_time_bounds`); T(B) >= max_s (T0_s + V_s / S_cap) =: T_lb for every shape and
placement of the plan (pairs that another exceeds in both are left out of the max: they never attain it). Every
collective algorithm sends at least the hierarchical volume on some spanned dimension (a flat ring or tree the
whole of it, a send S f_d >= S), so the bound holds for all of them. The network cost N sum_d u_d B_d
is at least C_lb = N min_d u_d S_floor, S_floor the largest right-hand side
of the rows ``sum(bw) >= / == S`` (0 without one). The bound on the objective is T_lb (performance), T_lb C_lb
(performance_per_cost) or C_lb (min_cost, where a candidate with T_lb above the time target is infeasible).
"""

from __future__ import annotations

from ...model.cost import unit_costs
from ...spec import Network
from ...spec.space import constraint_for
from ...workloads.llm.lower import bottleneck_stage
from ...workloads.llm.params import LLMParams
from ...workloads.llm.space import CodesignSpace


def plan_compute_ns(p: LLMParams, step, stage: int | None = None) -> float:
    """T0_s of plan ``p`` (module docstring): F x one micro-batch's compute of ``stage`` (default: the stage with the
    most compute, :func:`~hieropt.workloads.llm.lower.bottleneck_stage`) + its optimizer step, ns."""
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
    """V_s of plan ``p`` (module docstring): the weighted placement-free volume of ``stage``'s collectives per
    iteration (default: the stage with the most compute), bytes per NPU."""
    pl = p.plan
    F = pl.microbatches + (pl.pp - 1) / pl.virtual_stages
    sizes = step.group_sizes
    total = 0.0
    for op in step.stages[bottleneck_stage(step) if stage is None else stage].ops:
        for c in op.comms:
            w = (0.0 if pl.overlap_grad_reduce else 1.0) if c.per_iteration else F
            total += w * _volume(c.kind, c.size_bytes, sizes[c.group])
    return total


def plan_time_bounds(p: LLMParams, step) -> tuple[tuple[float, float], ...]:
    """(T0_s ns, V_s bytes) pairs of plan ``p`` that no other pair exceeds in both, the stage with the most compute
    first: T_lb = max over them of T0_s + V_s / S_cap (module docstring). With p > 1 the iteration is the exact
    1F1B composition (:mod:`hieropt.model.pipeline`), T = (1/v) sum_r t_r + (m - 1/v) max_r t_r + W_0 with
    t_r >= C_r + Vm_r / S_cap (C_r a micro-batch's compute, Vm_r its per-micro-batch volume) and W_0 >= U_0 +
    Vi_0 / S_cap (stage 0's optimizer step and per-iteration volume; 0 with ``overlap_dp``): the pair of stage s is
    T0_s = (1/v) sum_r C_r + (m - 1/v) C_s + U_0, V_s = (1/v) sum_r Vm_r + (m - 1/v) Vm_s + Vi_0."""
    pl = p.plan
    if pl.pp == 1:
        return ((plan_compute_ns(p, step), plan_volume_bytes(p, step)),)
    m, v = pl.microbatches, pl.virtual_stages
    sizes, overlap = step.group_sizes, pl.overlap_grad_reduce
    per_op: dict[int, tuple[float, float]] = {}  # an op's volumes by identity (a step's blocks share templates)

    def volumes(op) -> tuple[float, float]:
        hit = per_op.get(id(op))
        if hit is None:
            vols = [(c.per_iteration, _volume(c.kind, c.size_bytes, sizes[c.group])) for c in op.comms]
            hit = per_op[id(op)] = (sum([x for it, x in vols if not it]), sum([x for it, x in vols if it]))
        return hit

    C, Vm = [], []
    for r, stage in enumerate(step.stages):
        C.append(sum(step.compute_ns(r)))
        Vm.append(sum([volumes(op)[0] for op in stage.ops]))
    vi0 = 0.0 if overlap and v == 1 else sum([volumes(op)[1] for op in step.stages[0].ops])
    base_t, base_v = sum(C) / v + step.update_ns(0), sum(Vm) / v + vi0
    k = m - 1 / v
    r0 = bottleneck_stage(step)
    first = (base_t + k * C[r0], base_v + k * Vm[r0])
    out = [first]
    for t, vol in sorted({(base_t + k * c, base_v + k * x) for c, x in zip(C, Vm, strict=True)},
                         key=lambda tv: (-tv[0], -tv[1])):  # T0 descending: a kept pair has a larger T0
        if (t, vol) != first and vol > max((o[1] for o in out if o[0] >= t), default=-1.0):
            out.append((t, vol))
    return tuple(out)


def time_bound_ns(bounds: tuple[tuple[float, float], ...], cap: float) -> float:
    """T_lb = max over ``bounds`` ((T0_s, V_s) pairs, :func:`plan_time_bounds`) of T0_s + V_s / ``cap``, ns.

    A cap <= 0 (rows such as ``sum(bw) <= 0``) leaves no bandwidth (B >= 0): a stage with volume V_s > 0 then takes
    infinitely long, T_lb = inf (the candidate is infeasible), and one without volume T0_s."""
    if cap > 0:
        return max(t + v / cap for t, v in bounds)
    return max(t if v <= 0 else float("inf") for t, v in bounds)


def bandwidth_cap(space: CodesignSpace, n_dims: int) -> float:
    """S_cap: an upper bound on sum_d B_d from the space's rows ``c sum(bw) <= / == S`` (inf without one)."""
    return _sum_rows(space, n_dims, ("<=", "=="), min, float("inf"))


def bandwidth_floor(space: CodesignSpace, n_dims: int) -> float:
    """S_floor: a lower bound on sum_d B_d from the space's rows ``c sum(bw) >= / == S`` (0 without one)."""
    return max(0.0, _sum_rows(space, n_dims, (">=", "=="), max, 0.0))


def _sum_rows(space: CodesignSpace, n_dims: int, senses: tuple[str, ...], pick, start: float) -> float:
    out = start
    for text in space.constraints:
        c = constraint_for(text, n_dims)
        co = c.coefficients
        if c.sense in senses and co[0] > 0 and all(x == co[0] for x in co):
            out = pick(out, c.rhs / co[0])
    return out


def objective_bound(space: CodesignSpace, network: Network, t_lb: float) -> float:
    """The candidate's bound on the space's objective from its time bound ``t_lb`` (module docstring)."""
    if space.objective == "performance":
        return t_lb
    c_lb = cost_floor_usd(space, network)
    if space.objective == "performance_per_cost":
        return t_lb * c_lb
    if space.objective == "min_run_cost":  # the $ of a run at (T_lb, C_lb): increasing in both
        from ...solvers.run_cost import terms_of

        b = space.base
        terms = terms_of(space.cluster, network.npus_total, space.tokens,
                         b.plan.global_batch_size * b.model.sequence_length)
        return terms.value(t_lb, c_lb)
    return c_lb


def cost_floor_usd(space: CodesignSpace, network: Network) -> float:
    """C_lb of ``network`` (module docstring): N min_d u_d S_floor, $ (N = the network's NPUs); the same for every
    plan on that shape."""
    return network.npus_total * float(unit_costs(network, space.cost).min()) * bandwidth_floor(space, network.n_dims)


__all__ = ["plan_compute_ns", "plan_volume_bytes", "plan_time_bounds", "time_bound_ns", "bandwidth_cap",
           "bandwidth_floor", "objective_bound", "cost_floor_usd"]
