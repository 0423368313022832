"""The candidates of a co-design space: (plan, network shape, placement of the plan's groups), each with a proven
lower bound on its objective, in best-bound-first order.

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

from dataclasses import dataclass
from operator import attrgetter

from ...errors import InputError
from ...model.cost import unit_costs
from ...model.groups import Placement, place_lowest, placements, plan_groups
from ...model.pipeline import DAG_OPS
from ...spec import Network
from ...spec.space import ShapeSpace, SpaceJob, constraint_for
from ...workloads.llm.lower import bottleneck_stage, lower_stage
from ...workloads.llm.params import LLMParams
from ...workloads.llm.space import CodesignSpace
from ...workloads.llm.step import build_step
from ..explore.enumerate import enumerate_shapes, shape_id, shape_network
from .plans import PlanEnumeration, enumerate_plans


@dataclass(frozen=True)
class CodesignCandidate:
    """One (plan, shape, placement): what one solve is about.

    Attributes:
        id: ``"<plan> | <shape> | <placement>"``, e.g. ``"tp8 pp8 dp64 ... | node:R4 pod:SW32 | tp 4x2 dp 1x32 ..."``.
        plan_id, shape_id: the parts of the id.
        params: the plan (model, NPU, precision included).
        network: the shape as a network.
        placement: the group sizes per dimension.
        lower_bound: the proven bound on the candidate's objective (module docstring; ns for performance).
        compute_ns: the time bound T0 + V / S_cap of the candidate (ns), whatever the objective.
        memory_bytes: the plan's fullest stage, bytes per NPU.
    """

    id: str
    plan_id: str
    shape_id: str
    params: LLMParams
    network: Network
    placement: Placement
    lower_bound: float
    compute_ns: float
    memory_bytes: float


@dataclass(frozen=True)
class CodesignEnumeration:
    """The plans (classified), the shapes, and the candidates in best-bound-first order.

    Attributes:
        plans: the plan enumeration (invalid ones by reason, too big, fitting).
        shapes: (shape id, network) of every shape.
        candidates: (plan, shape, placement) of every fitting plan, sorted by lower bound then id.
        skipped: (plan id | shape id, reason) of plan-shape pairs whose groups the mapping rule cannot place.
    """

    plans: PlanEnumeration
    shapes: tuple[tuple[str, Network], ...]
    candidates: tuple[CodesignCandidate, ...]
    skipped: tuple[tuple[str, str], ...] = ()


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
    first: T_lb = max over them of T0_s + V_s / S_cap (module docstring). With p > 1, every stage's slot
    t_r >= C_r + Vm_r / S_cap (C_r a micro-batch's compute, Vm_r its per-micro-batch volume) and stage 0's tail
    W_0 >= U_0 + Vi_0 / S_cap (its optimizer step and per-iteration volume; 0 with ``overlap_dp``). A 1F1B schedule
    timed by its graph (:mod:`hieropt.model.pipeline`) is at least the path through stage s's 2 m operations,
    sum_(r<s) t_r + m t_s + W_0: T0_s = sum_(r<s) C_r + m C_s + U_0, V_s = sum_(r<s) Vm_r + m Vm_s + Vi_0; the
    composition (1/v) sum_r t_r + (m - 1/v) max_r t_r + W_0 gives T0_s = (1/v) sum_r C_r + (m - 1/v) C_s + U_0 and
    V_s likewise."""
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
    r0 = bottleneck_stage(step)
    if v == 1 and 2 * pl.pp * m <= DAG_OPS:  # the schedule's graph: the path through stage s's 2 m operations
        pairs = [(sum(C[:s]) + m * C[s] + step.update_ns(0), sum(Vm[:s]) + m * Vm[s] + vi0) for s in range(len(C))]
    else:
        base_t, base_v = sum(C) / v + step.update_ns(0), sum(Vm) / v + vi0
        pairs = [(base_t + (m - 1 / v) * c, base_v + (m - 1 / v) * x) for c, x in zip(C, Vm, strict=True)]
    first = pairs[r0]
    out = [first]
    for t, vol in sorted(set(pairs), key=lambda tv: (-tv[0], -tv[1])):  # T0 descending: a kept pair has a larger T0
        if (t, vol) != first and vol > max((o[1] for o in out if o[0] >= t), default=-1.0):
            out.append((t, vol))
    return tuple(out)


def time_bound_ns(bounds: tuple[tuple[float, float], ...], cap: float) -> float:
    """T_lb = max over ``bounds`` ((T0_s, V_s) pairs, :func:`plan_time_bounds`) of T0_s + V_s / ``cap``, ns."""
    return max(t + v / cap for t, v in bounds)


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
    return t_lb * c_lb if space.objective == "performance_per_cost" else c_lb


def cost_floor_usd(space: CodesignSpace, network: Network) -> float:
    """C_lb of ``network`` (module docstring): N min_d u_d S_floor, $; the same for every plan on that shape."""
    return space.npus * float(unit_costs(network, space.cost).min()) * bandwidth_floor(space, network.n_dims)


def shapes_of(space: CodesignSpace, placeholder) -> list[tuple[str, Network]]:
    """(id, network) of the space's fixed network, or of every shape of its shape space (explore's enumeration)."""
    if space.network is not None:
        return [("fixed " + " x ".join(f"{d.block}{d.npus}" for d in space.network.dims), space.network)]
    shim = ShapeSpace(name=space.name, npus=space.npus, min_dims=space.min_dims, max_dims=space.max_dims,
                      levels=space.levels, switch_only_at_top=space.switch_only_at_top,
                      jobs=(SpaceJob(workload=placeholder),), mapping_rule="header", cost=space.cost,
                      objective="performance", training_loop="no_overlap")
    return [(shape_id(shim, s), shape_network(shim, s)) for s in enumerate_shapes(shim)]


def _candidate(cid: str, plan: str, shape: str, params: LLMParams, network: Network, placement: Placement,
               bound: float, t_lb: float, memory_bytes: float) -> CodesignCandidate:
    """``CodesignCandidate(...)`` without the frozen ``__init__``'s per-field ``__setattr__`` (its ``__dict__`` set
    at once, as ``copy.copy`` fills a copy's): 2.5x faster, and a space has 10^4 - 10^5 candidates."""
    c = object.__new__(CodesignCandidate)
    object.__setattr__(c, "__dict__", {"id": cid, "plan_id": plan, "shape_id": shape, "params": params,
                                       "network": network, "placement": placement, "lower_bound": bound,
                                       "compute_ns": t_lb, "memory_bytes": memory_bytes})
    return c


def _placement_text(pl: Placement) -> str:
    return " ".join(f"{k} {'x'.join(map(str, v))}" for k, v in pl.items())


def _options(space: CodesignSpace, sizes: tuple[int, ...], groups: tuple[tuple[str, int], ...],
             sid: str) -> list[tuple[Placement, str]] | str:
    """(placement, its text) of every placement the space's mapping rule gives ``groups`` on ``sizes``, or why there
    is none (a reason that depends on the sizes and groups only, not on the shape's id)."""
    if space.mapping_rule == "lowest":
        try:
            pl = place_lowest(sizes, groups, sid)
        except InputError as e:
            return e.problem
        return [(pl, _placement_text(pl))]
    options = [(pl, _placement_text(pl)) for pl in placements(sizes, groups)]
    return options or "no placement of the groups on this shape"


def enumerate_candidates(space: CodesignSpace) -> CodesignEnumeration:
    """Every candidate of ``space`` with its lower bound, best bound first (module docstring).

    The placements depend on a plan only through its group sizes (tp, dp, pp, ...), so they are found once per
    (shape, group sizes) and shared by every plan with those sizes (each candidate holds its own copy of the
    placement dict); the cost floor of a shape is found once.

    Raises:
        InputError: the network family has no shape.
    """
    plans = enumerate_plans(space.base, space.npus, space.plans)
    placeholder = lower_stage(plans.fitting[0].step) if plans.fitting else None
    shapes = shapes_of(space, placeholder) if placeholder is not None or space.network is not None else []
    if placeholder is not None and not shapes:
        raise InputError(space.name, "levels", f"no shape of {space.min_dims} to {space.max_dims} dimensions "
                         f"multiplies to {space.npus} NPUs within the levels' sizes and limits",
                         "widen the levels' npus ranges, max_dims or limits")
    out: list[CodesignCandidate] = []
    skipped: list[tuple[str, str]] = []
    caps = {n: bandwidth_cap(space, n) for n in {net.n_dims for _, net in shapes}}
    objective = space.objective
    shaped = [(sid, net, tuple(d.npus for d in net.dims), caps[net.n_dims],
               None if objective == "performance" else cost_floor_usd(space, net)) for sid, net in shapes]
    placed: dict[tuple, list[tuple[Placement, str]] | str] = {}  # (sizes, groups) -> placements or the reason
    per_shape: dict[tuple, list] = {}  # groups -> the placements (or the reason) on each shape, in shape order
    for pc in plans.fitting:
        sums = build_step(pc.params, names=False)  # (its layers' values, in order: the sums of pc.step)
        bounds = plan_time_bounds(pc.params, sums)
        t_lbs: dict[float, float] = {}  # the time bound on each bandwidth cap (shapes of one dimension count share)
        groups = tuple(plan_groups(pc.params))
        mem = pc.memory.peak.total_bytes
        if groups not in per_shape:
            for sid, _, sizes, _, _ in shaped:
                if (sizes, groups) not in placed:
                    placed[sizes, groups] = _options(space, sizes, groups, sid)
            per_shape[groups] = [placed[sizes, groups] for _, _, sizes, _, _ in shaped]
        for (sid, net, _, cap, c_lb), options in zip(shaped, per_shape[groups], strict=True):
            prefix = f"{pc.id} | {sid} | "
            t_lb = t_lbs.get(cap)
            if t_lb is None:
                t_lb = t_lbs[cap] = time_bound_ns(bounds, cap)
            bound = t_lb if c_lb is None else t_lb * c_lb if objective == "performance_per_cost" else c_lb
            if isinstance(options, str):
                skipped.append((f"{pc.id} | {sid}", options))
                continue
            for pl, text in options:
                out.append(_candidate(prefix + text, pc.id, sid, pc.params, net, dict(pl), bound, t_lb, mem))
    out.sort(key=attrgetter("lower_bound", "id"))
    return CodesignEnumeration(plans, tuple(shapes), tuple(out), tuple(skipped))


__all__ = ["CodesignCandidate", "CodesignEnumeration", "enumerate_candidates", "plan_compute_ns",
           "plan_volume_bytes", "plan_time_bounds", "time_bound_ns", "bandwidth_cap", "bandwidth_floor",
           "objective_bound", "cost_floor_usd", "shapes_of"]
