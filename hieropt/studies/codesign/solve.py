"""One co-design candidate solved exactly (:func:`solve_codesign_candidate`, its row of
:data:`~hieropt.studies.codesign.rows.COLUMNS`), and the communication each group issues per
iteration (:func:`issued_by_group_ns`). A row's split of the iteration time (compute, pipeline
bubble, exposed communication) is the evaluator's (:mod:`hieropt.model.breakdown`), the one
``hieropt solve`` prints for the same instance."""

from __future__ import annotations

import os
import socket
import time
from typing import Any

import numpy as np
from pydantic import ValidationError

from ...cache import Same, current, scoped
from ...errors import HieroptError, NoSolutionError
from ...io.common import validation_error
from ...model.groups import instance_for
from ...model.sends import base_group, placed_job
from ...model.stages import stage_jobs
from ...model.timing import evaluate
from ...model.traffic import phase_times
from ...solvers.cost_range import rows_problem
from ...spec import Bound
from ...spec.space import constraint_for, nic_count
from ...workloads.llm.space import CodesignSpace
from ..explore.executors import tie_break_words
from .candidates import CodesignCandidate
from .rows import base_row, objective_unit


def space_constraints(space: CodesignSpace, n_dims: int):
    """The space's constraints for ``n_dims`` dimensions: one tuple per (texts, n_dims) in the
    active cache, shared by the candidates' instances (whose design matrices are then computed once,
    :attr:`hieropt.spec.Instance.design_matrix`)."""
    texts = tuple(space.constraints)
    return current().memo("space constraints", (texts, n_dims),
                          lambda: tuple(constraint_for(t, n_dims) for t in texts))


def rows_reason(space: CodesignSpace, n_dims: int) -> str | None:
    """Why the space's constraints leave no design on ``n_dims`` dimensions whose every dimension
    carries traffic, as ``solve`` says it of a candidate's instance ("infeasible: ...",
    :func:`hieropt.solvers.cost_range.rows_problem` with the default bounds, which the candidates'
    instances keep); None when they allow bandwidth on every dimension."""
    err = rows_problem(space_constraints(space, n_dims), (Bound.model_construct(),) * n_dims,
                       range(n_dims))
    return None if err is None else str(err)


def issued_by_group_ns(inst, bw: np.ndarray, stage: str | None = None) -> dict[str, float]:
    """The collective time each group issues per iteration (ns: m x its per-micro-batch collectives
    + its per-iteration ones) of a step-loop instance at ``bw`` (D,) GB/s per NPU, on its slowest
    pipeline stage there (the stage named ``stage``, when the caller knows it; a workload of one
    stage: that one). Issued, not exposed: overlap hides part of it, and a pipeline's fill and
    drain put other stages' collectives on the critical path, so these are not parts of the
    exposed communication. Summed phase by phase, layer by layer (one ``bincount`` over the phases
    in that order)."""
    st = inst.step
    job = placed_job(inst, inst.jobs[0])  # (each pipeline send on the dimensions it crosses)
    if inst.workload.more_stages:
        name = stage or evaluate(inst, bw).slowest_stage
        job = next(j for j in stage_jobs(job) if j.workload.name == name)
    table = job.workload.table
    coll = phase_times(inst, job, bw)  # (L, 3)
    names, ids = _group_ids(table)
    t = coll.T.ravel()  # phase-major: the order the per-group sums run in
    live = t > 0
    times = np.repeat([float(st.microbatches), float(st.microbatches), 1.0], coll.shape[0])
    sums = np.bincount(ids[live], weights=(times * t)[live], minlength=len(names))
    used = np.bincount(ids[live], minlength=len(names))
    return {names[i]: float(sums[i]) for i in np.flatnonzero(used)}


GROUP_IDS_KEPT = 12
"""Tables whose group ids :func:`_group_ids` keeps (a plan has up to three distinct stages)."""


def _group_ids(table) -> tuple[tuple[str, ...], np.ndarray]:
    """The group names of a step workload's phases (a named group, else ``tp`` forward / input
    gradient and ``dp`` weight gradient) and each phase's name index, phase-major (the last few
    tables' are kept in the active cache)."""
    return current().memo("group ids", Same(table), lambda: _ids_of(table), GROUP_IDS_KEPT)


def _ids_of(table) -> tuple[tuple[str, ...], np.ndarray]:
    names: dict[str, int] = {}
    # (a pipeline send's boundary group counts as its send group: hieropt.model.sends)
    ids = [names.setdefault(base_group(g) or ("tp" if j < 2 else "dp"), len(names))
           for j in range(3) for g in table.group[:, j].tolist()]
    return tuple(names), np.array(ids, dtype=np.int64)


SCALE_UP_GROUPS = ("tp",)
"""Groups that usually stay within the scale-up domain (their collectives are on the critical path
of every layer); a placement that spans a scale-out dimension with one of them gets a note."""


def scale_out_dims(space: CodesignSpace, network) -> list[int]:
    """The scale-out dimensions of ``network``: those of the space's scale-out cost class (the last
    level's, or the last dimension's of a fixed network)."""
    return [d for d, dim in enumerate(network.dims) if dim.cost_class == space.scale_out_class]


def scale_up_notes(space: CodesignSpace, cand: CodesignCandidate, top: list[int]) -> list[str]:
    """A note for each group of :data:`SCALE_UP_GROUPS` that the placement spreads over a scale-out
    dimension."""
    out = []
    for g in SCALE_UP_GROUPS:
        sizes = cand.placement.get(g, ())
        over = [d for d in top if d < len(sizes) and sizes[d] > 1]
        if over:
            out.append(
                f"{g} {'x'.join(map(str, sizes))} spans the scale-out dimension(s) "
                f"{', '.join(map(str, over))}: {g.upper()} usually stays in the scale-up domain; "
                + _why_scale_out(space)
            )
    return out


def _why_scale_out(space: CodesignSpace) -> str:
    if space.objective == "performance":
        return (
            "the performance objective prices no bandwidth and the constraints "
            f"({'; '.join(space.constraints) or 'none'}) may treat every GB/s alike; bound "
            "the scale-out "
            "bandwidth (e.g. bw[top] <= 50) or use --objective performance_per_cost to "
            "prefer the scale-up "
            "domain"
        )
    return "here it is the better trade at the space's prices and constraints"


def cluster_capex_usd(space: CodesignSpace, npus: int) -> float:
    """The capex of ``npus`` NPUs of the space's ``[cluster]`` without their network, $
    (accelerators, servers, racks and facility: :func:`hieropt.model.run.cost_rate`).

    Raises:
        InputError: the space has no cluster, or its cluster gives no capex (an NPU-hour rate)."""
    from ...errors import InputError
    from ...model.run import cost_rate

    rate = None if space.cluster is None else cost_rate(space.cluster, npus)
    if rate is None or rate.capex_fixed_usd is None:
        raise InputError(
            space.name, "max_total_capex_usd",
            "a cap on the whole cluster's capex needs the cluster's capex",
            "give [cluster] accelerator_usd and amortisation_years (not usd_per_npu_hour), or a "
            "network budget (--budget)")
    return rate.capex_fixed_usd


def network_cap(space: CodesignSpace, npus: int) -> float | None:
    """The network budget of a candidate of ``npus`` NPUs, $: the space's ``max_total_capex_usd``
    less :func:`cluster_capex_usd` (what the cluster leaves its network), the tighter of it and
    ``max_network_cost_usd``; None without either.

    Raises:
        InputError: as :func:`cluster_capex_usd`.
        NoSolutionError: ``infeasible``, the cluster alone costs the total budget or more."""
    cap = space.max_network_cost_usd
    total = space.max_total_capex_usd
    if total is None:
        return cap
    left = total - cluster_capex_usd(space, npus)
    if left <= 0:
        raise NoSolutionError(
            "infeasible",
            f"{npus:,} NPUs cost ${total - left:,.0f} without their network (accelerators, "
            f"servers, racks and facility), the whole total budget of ${total:,.0f}: give a "
            "larger total budget or a smaller cluster")
    return left if cap is None else min(cap, left)


@scoped
def solve_codesign_candidate(space: CodesignSpace, cand: CodesignCandidate) -> dict[str, Any]:
    """Solve one candidate exactly (the space's objective, :func:`hieropt.solvers.objectives.solve`)
    and return its row (:data:`COLUMNS`); a candidate without a certified answer gets its status and
    message. With the performance objective the row's design (bandwidths, network cost, NICs, the
    time split) is the cheapest of the designs proven within the gap target of the optimal time
    (:func:`_fastest_design`), and the objective value, bound and gap are that design's. A solved
    row's ``notes``: the NPU's peak below half its catalog's
    (:attr:`hieropt.workloads.llm.NPU.peak_note`, as every command notes it), then
    :func:`scale_up_notes`."""
    row = base_row(space, cand)
    row["worker"] = _worker()
    start = time.perf_counter()
    try:
        inst = instance_for(
            cand.params,
            cand.network,
            space.cost,
            cand.placement,
            objective=space.objective,
            constraints=space_constraints(space, cand.network.n_dims),
            name=cand.id,
            max_iteration_time_ns=space.max_iteration_time_ns,
            max_network_cost_usd=network_cap(space, cand.network.npus_total),
            dimension_mode=space.dimension_mode,
            group_bandwidth=space.group_bandwidth,
        )
        # (the run's figures and min_run_cost)
        if space.tokens is not None or space.cluster is not None:
            inst = inst.model_copy(update={"tokens": space.tokens, "cluster": space.cluster})
        sol, design = _fastest_design(inst, space.objective)
    except NoSolutionError as e:
        row.update(status=e.kind, message=str(e))
    except HieroptError as e:
        row.update(status="error", message=str(e))
    # a placement the instance cannot state (e.g. a pp send over two dimensions in
    except ValidationError as e:
        # sequential mode): this row only
        row.update(status="error", message=str(validation_error(e, cand.id)))
    else:
        row.update(
            status=str(sol.status),
            message=sol.message + tie_break_words(sol, design),
            objective_value=sol.objective_value,
            objective_bound=sol.objective_bound,
            objective_unit=(objective_unit(space) if space.objective == "min_run_cost"
                            else sol.objective_unit),
            gap=sol.gap,
        )
        bd = sol.breakdown
        by_group = issued_by_group_ns(inst, sol.bw_gbps, bd.slowest_stage)
        row.update(
            iteration_time_ns=sol.iteration_time_ns,
            compute_ns=bd.compute_ns,
            bubble_ns=bd.bubble_ns,
            communication_ns=bd.communication_ns,
            communication_by_group_ns={g: t for g, t in sorted(by_group.items())},
            network_cost_usd=sol.network_cost_usd,
            bw_gbps=[float(b) for b in sol.bw_gbps],
        )
        top = scale_out_dims(space, cand.network)
        row["scaleout_gbps_per_npu"] = float(sum(sol.bw_gbps[d] for d in top))
        if space.nic_gbps is not None:
            row["nics"] = nic_count(
                cand.network.npus_total,
                [sol.bw_gbps[d] for d in top],
                space.nic_gbps,
                space.nic_npus,
            )
        peak = cand.params.npu.peak_note  # (the plan's caveat on a low peak, as every command's)
        row["notes"] = [*([peak] if peak is not None else []), *scale_up_notes(space, cand, top)]
    row["solve_seconds"] = time.perf_counter() - start
    return row


def _fastest_design(inst, objective: str):
    """The certified optimum of ``inst`` its row reports and the tie-break's answer: with the
    performance objective the optimum at the cheapest of the designs proven within the gap target
    of the optimal time and the min-cost answer, or the reason that min-cost solve failed (a str:
    the optimum's own design stands)
    (:func:`hieropt.solvers.objectives.solve_fastest_cheapest`, the tie-break ``hieropt solve``
    and ``hieropt explore`` use: many designs are often equally fast and their costs differ); with
    any other objective the optimum itself, twice (its cost is in the objective).

    Raises:
        NoSolutionError, HieroptError: as :func:`hieropt.solvers.objectives.solve`."""
    from ...solvers.objectives import solve, solve_fastest_cheapest

    if objective == "performance":
        return solve_fastest_cheapest(inst)
    sol = solve(inst).raise_for_status()
    return sol, sol


def _worker() -> str:
    """``host:pid`` of this process."""
    return f"{socket.gethostname()}:{os.getpid()}"




__all__ = [
    "cluster_capex_usd",
    "network_cap",
    "solve_codesign_candidate",
    "issued_by_group_ns",
    "space_constraints",
    "rows_reason",
    "scale_out_dims",
    "scale_up_notes",
    "SCALE_UP_GROUPS",
]
