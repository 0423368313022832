"""Proven lower bounds on the objective of a co-design candidate (plan, network shape, placement of the plan's
groups), the same for every shape of one dimension count and every placement.

**Lower bound (exact).** A pipelined plan's iteration time is its slowest stage's, T(B) = max_s T_s(B)
(:attr:`hieropt.spec.Workload.more_stages`), and loop ``step`` gives each stage's T_s(B) = F C + U + sum_k w_k
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
infinite without one), T_s(B) >= T0_s + V_s / S_cap, V_s = sum_k w_k vol_k over stage s's collectives, so
T(B) >= max_s (T0_s + V_s / S_cap) =: T_lb for every shape and placement of the plan (the stages whose (T0_s, V_s)
another stage's exceeds in both are left out of the max: they never attain it). The network cost N sum_d u_d B_d
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
    """(T0_s ns, V_s bytes) of every stage of plan ``p`` (module docstring) that no other stage exceeds in both,
    each once, the stage with the most compute first: T_lb = max over them of T0_s + V_s / S_cap."""
    r0 = bottleneck_stage(step)
    pl = p.plan
    F = pl.microbatches + (pl.pp - 1) / pl.virtual_stages
    sizes, overlap = step.group_sizes, pl.overlap_grad_reduce
    per_op: dict[int, float] = {}  # an op's weighted volume by identity (a step's blocks share their templates)

    def volume(op) -> float:
        v = per_op.get(id(op))
        if v is None:
            v = per_op[id(op)] = sum([((0.0 if overlap else 1.0) if c.per_iteration else F)
                                      * _volume(c.kind, c.size_bytes, sizes[c.group]) for c in op.comms])
        return v

    first = (plan_compute_ns(p, step, r0), plan_volume_bytes(p, step, r0))
    pairs, seen = [first], {tuple(map(id, step.stages[r0].ops))}
    for r, stage in enumerate(step.stages):  # stages of the same layer objects (without names: equal stages) once
        key = tuple(map(id, stage.ops))
        if key not in seen:
            seen.add(key)
            pairs.append((plan_compute_ns(p, step, r), sum([volume(op) for op in stage.ops])))
    out = [first]
    for t, v in sorted(set(pairs), key=lambda tv: (-tv[0], -tv[1])):  # T0 descending: a kept pair has a larger T0
        if (t, v) != first and v > max((o[1] for o in out if o[0] >= t), default=-1.0):
            out.append((t, v))
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
