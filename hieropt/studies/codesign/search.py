"""The joint search over training plans and networks (issue 14): every candidate (plan, shape, placement) of a
:class:`~hieropt.workloads.llm.space.CodesignSpace` solved exactly for its bandwidths, or pruned by a proven bound.

Flow: :func:`~hieropt.studies.codesign.candidates.enumerate_candidates` classifies the plans (invalid, too big for
the HBM, fitting), attaches every shape and placement and sorts the candidates by their lower bound; the candidates
are then taken in that order and a candidate is **pruned** when its bound is at least the best objective value found
so far (the incumbent), which only falls: with the bounds sorted, every later candidate is pruned too. A pruned
candidate's optimum is >= its bound >= the incumbent, so it cannot beat the best: the optimum, and the ranking of
every candidate better than the incumbent, are those of solving everything (``prune=False``; the test suite checks
this on small spaces). The solves run serially, in a process pool or on a Dask cluster (explore's executors, with at
most 2 x workers solves in flight so the incumbent prunes early), stream one row per candidate to a CSV / Parquet
file (explore's results sink, with the columns :data:`COLUMNS`), and resume from it.

Each solved row reports the plan, the shape and placement, the bandwidths, the time split at the optimum of the
slowest pipeline stage there (compute m C + U, pipeline bubble (F - m) S with S one micro-batch's stage time, and
the communication of every group per iteration: m x its per-micro-batch collectives + its per-iteration ones; these
add up to the iteration time without ``overlap_dp``), the memory per NPU of the plan's fullest stage, the network
cost and the proven gap.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from ...errors import HieroptError, InputError, NoSolutionError
from ...io.common import validation_error
from ...model.groups import instance_for
from ...model.stages import stage_jobs
from ...model.timing import evaluate
from ...model.traffic import phase_times
from ...spec.overrides import with_targets
from ...spec.space import constraint_for
from ...workloads.llm.space import CodesignSpace
from ..explore.executors import client_address, paused_gc, run_admitted
from ..explore.results import ResultSink, typed_row
from ..explore.run import SOLVED, rank_rows
from .candidates import CodesignCandidate, CodesignEnumeration, enumerate_candidates

COLUMNS: tuple[tuple[str, type], ...] = (
    ("id", str), ("space_hash", str), ("plan", str), ("shape", str), ("placement", str), ("n_dims", int),
    ("tp", int), ("pp", int), ("dp", int), ("ep", int), ("zero_stage", int), ("recompute", str),
    ("sequence_parallel", int), ("virtual_stages", int), ("micro_batch_size", int), ("status", str), ("message", str),
    ("objective", str), ("objective_value", float), ("objective_bound", float), ("objective_unit", str),
    ("gap", float), ("lower_bound", float), ("iteration_time_ns", float), ("compute_ns", float),
    ("bubble_ns", float), ("communication_ns", float), ("communication_by_group_ns", str), ("memory_bytes", float),
    ("network_cost_usd", float), ("bw_gbps", str), ("scaleout_gbps_per_npu", float), ("nics", int),
    ("solve_seconds", float), ("worker", str),
)
"""Columns of a co-design results file, with their types (empty: not applicable). ``status`` is ``optimal``,
``limit``, ``infeasible``, ``unbounded``, ``error`` or ``pruned`` (bound >= incumbent, not solved)."""
NAMES = tuple(n for n, _ in COLUMNS)


@lru_cache(maxsize=64)
def _parsed(texts: tuple[str, ...], n_dims: int) -> tuple:
    return tuple(constraint_for(t, n_dims) for t in texts)


def _constraints(space: CodesignSpace, n_dims: int):
    """The space's constraints for ``n_dims`` dimensions: one tuple per (texts, n_dims), shared by the candidates'
    instances (whose design matrices are then computed once, :attr:`hieropt.spec.Instance.design_matrix`)."""
    return _parsed(tuple(space.constraints), n_dims)


def split_ns(inst, bw: np.ndarray, stage: str | None = None) -> tuple[float, float, dict[str, float]]:
    """(compute m C + U, bubble (F - m) S, communication per group per iteration) of a step-loop instance at
    ``bw`` (ns) for its slowest pipeline stage there (the stage named ``stage``, when the caller knows it; a
    workload of one stage: that one); see the module docstring. Each group's communication is summed phase by
    phase, layer by layer (one ``bincount`` over the phases in that order)."""
    st = inst.step
    job = inst.jobs[0]
    if inst.workload.more_stages:
        name = stage or evaluate(inst, bw).slowest_stage
        job = next(j for j in stage_jobs(job) if j.workload.name == name)
    table = job.workload.table
    coll = phase_times(inst, job, bw)  # (L, 3)
    names, ids, C, U = _group_ids(table)
    per_micro = C + float(coll[:, :2].sum())
    t = coll.T.ravel()  # phase-major: the order the per-group sums run in
    live = t > 0
    times = np.repeat([float(st.microbatches), float(st.microbatches), 1.0], coll.shape[0])
    sums = np.bincount(ids[live], weights=(times * t)[live], minlength=len(names))
    used = np.bincount(ids[live], minlength=len(names))
    by_group = {names[i]: float(sums[i]) for i in np.flatnonzero(used)}
    return st.microbatches * C + U, (st.slots - st.microbatches) * per_micro, by_group


_GROUP_IDS: list[tuple[object, tuple]] = []
GROUP_IDS_KEPT = 12
"""Tables whose group ids :func:`_group_ids` keeps (a plan has up to three distinct stages)."""


def _group_ids(table) -> tuple[tuple[str, ...], np.ndarray, float, float]:
    """The group names of a step workload's phases (a named group, else ``tp`` forward / input gradient and
    ``dp`` weight gradient), each phase's name index, phase-major, and the compute C and optimizer step U of the
    table, ns (the last few tables' are kept)."""
    for t, out in _GROUP_IDS:
        if t is table:
            return out
    names: dict[str, int] = {}
    ids = [names.setdefault(g or ("tp" if j < 2 else "dp"), len(names))
           for j in range(3) for g in table.group[:, j].tolist()]
    out = (tuple(names), np.array(ids, dtype=np.int64), float(table.compute_ns.sum()), float(table.update_ns.sum()))
    _GROUP_IDS.insert(0, (table, out))
    del _GROUP_IDS[GROUP_IDS_KEPT:]
    return out


def _row(space: CodesignSpace, cand: CodesignCandidate) -> dict[str, Any]:
    pl = cand.params.plan
    row: dict[str, Any] = dict.fromkeys(NAMES)
    row.update(id=cand.id, plan=cand.plan_id, shape=cand.shape_id,
               placement=cand.id.rsplit(" | ", 1)[-1], n_dims=cand.network.n_dims, tp=pl.tp, pp=pl.pp, dp=pl.dp,
               ep=pl.ep, zero_stage=pl.zero_stage, recompute=pl.recompute, sequence_parallel=int(pl.sequence_parallel),
               virtual_stages=pl.virtual_stages, micro_batch_size=pl.micro_batch_size, objective=space.objective,
               lower_bound=cand.lower_bound, memory_bytes=cand.memory_bytes)
    return row


_OWN = ("id", "shape", "placement", "n_dims", "status", "message", "lower_bound", "memory_bytes")
OWN_COLUMNS = tuple(c for c in COLUMNS if c[0] in _OWN)
"""The columns of a row that is not solved (pruned, or infeasible by its bound) in which the candidates of one plan
differ; the others are the plan's (:class:`UnsolvedRows`)."""


class UnsolvedRows:
    """Typed rows (:func:`~hieropt.studies.explore.results.typed_row` of :data:`COLUMNS`) of candidates that are not
    solved. A pruned search settles most candidates this way (13,172 of 13,350 in ``spaces/codesign-1t-4096.toml``),
    so the columns a plan's candidates share are typed once per plan and only :data:`OWN_COLUMNS` per candidate;
    :meth:`row` equals ``typed_row({**row of the candidate, status, message, space_hash}, COLUMNS)`` (the tests
    check it)."""

    def __init__(self, space: CodesignSpace, space_hash: str):
        self.space, self.space_hash = space, space_hash
        self._plans: dict[str, dict[str, Any]] = {}

    def row(self, cand: CodesignCandidate, status: str, message: str) -> dict[str, Any]:
        """The typed row of ``cand`` with ``status`` and ``message``."""
        base = self._plans.get(cand.plan_id)
        if base is None:
            base = self._plans[cand.plan_id] = typed_row({**_row(self.space, cand), "space_hash": self.space_hash},
                                                         COLUMNS)
        row = base.copy()  # typed_row's rule for the own columns: "" / None / nan -> None ("" for message)
        row["id"] = cand.id or None
        row["shape"] = cand.shape_id or None
        row["placement"] = cand.id.rsplit(" | ", 1)[-1] or None
        row["n_dims"] = len(cand.network.dims)
        row["status"] = status or None
        row["message"] = message or ""
        lb, mem = cand.lower_bound, cand.memory_bytes
        row["lower_bound"] = float(lb) if lb == lb else None  # (x != x: nan)
        row["memory_bytes"] = float(mem) if mem == mem else None
        return row


def solve_codesign_candidate(space: CodesignSpace, cand: CodesignCandidate) -> dict[str, Any]:
    """Solve one candidate exactly (the space's objective, :func:`hieropt.solvers.objectives.solve`) and return its
    row (:data:`COLUMNS`); a candidate without a certified answer gets its status and message."""
    from ...solvers.objectives import solve

    row = _row(space, cand)
    row["worker"] = _worker()
    start = time.perf_counter()
    try:
        inst = instance_for(cand.params, cand.network, space.cost, cand.placement, objective=space.objective,
                            constraints=_constraints(space, cand.network.n_dims), name=cand.id,
                            max_iteration_time_ns=space.max_iteration_time_ns,
                            max_network_cost_usd=space.max_network_cost_usd, dimension_mode=space.dimension_mode)
        sol = solve(inst)
    except NoSolutionError as e:
        row.update(status=e.kind, message=str(e))
    except HieroptError as e:
        row.update(status="error", message=str(e))
    except ValidationError as e:  # a placement the instance cannot state (e.g. a pp send over two dimensions in
        row.update(status="error", message=str(validation_error(e, cand.id)))  # sequential mode): this row only
    else:
        compute, bubble, by_group = split_ns(inst, sol.bw_gbps, sol.breakdown.slowest_stage)
        row.update(status=str(sol.status), message=sol.message, objective_value=sol.objective_value,
                   objective_bound=sol.objective_bound, objective_unit=sol.objective_unit, gap=sol.gap,
                   iteration_time_ns=sol.iteration_time_ns, compute_ns=compute, bubble_ns=bubble,
                   communication_ns=sol.iteration_time_ns - compute - bubble,
                   communication_by_group_ns=";".join(f"{g}={t!r}" for g, t in sorted(by_group.items())),
                   network_cost_usd=sol.network_cost_usd, bw_gbps=";".join(repr(float(b)) for b in sol.bw_gbps))
        top = [d for d, dim in enumerate(cand.network.dims) if dim.cost_class == space.scale_out_class]
        scale = float(sum(sol.bw_gbps[d] for d in top))
        row["scaleout_gbps_per_npu"] = scale
        if space.nic_gbps is not None:
            row["nics"] = math.ceil(space.npus * scale / space.nic_gbps * (1 - 1e-12))
    row["solve_seconds"] = time.perf_counter() - start
    return row


_WORKER: list = [None, ""]


def _worker() -> str:
    """``host:pid`` of this process (asked of the system once per process)."""
    if _WORKER[0] != os.getpid():
        _WORKER[:] = os.getpid(), f"{socket.gethostname()}:{os.getpid()}"
    return _WORKER[1]


@dataclass(frozen=True)
class Codesign:
    """The outcome of :func:`codesign`.

    Attributes:
        space: the space as searched; space_hash: its fingerprint (in every row).
        enumeration: plans (classified), shapes and candidates.
        rows: one row per candidate (solved, pruned, or read back from the results file), in bound order.
        backend: ``serial``, ``pool(n)`` or ``dask(address)``; seconds: wall time (enumeration included).
        solved, pruned, resumed: how many candidates this call solved, pruned, read back.
    """

    space: CodesignSpace
    space_hash: str
    enumeration: CodesignEnumeration
    rows: tuple[dict[str, Any], ...]
    backend: str
    seconds: float
    solved: int
    pruned: int
    resumed: int

    @property
    def ranking(self) -> list[dict[str, Any]]:
        """Solved rows best first with their ``rank`` (ties within the gap target share a rank)."""
        return rank_rows([r for r in self.rows if r["status"] in SOLVED], self.space.objective, key="id")

    @property
    def best(self) -> dict[str, Any] | None:
        """The best candidate's row (None when none was solved)."""
        r = self.ranking
        return r[0] if r else None


def codesign_fingerprint(space: CodesignSpace) -> str:
    """Short sha256 of the space: a results file belongs to one fingerprint."""
    return hashlib.sha256(json.dumps(space.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()[:12]


def codesign(space: CodesignSpace | str | Path, objective: str | None = None, *, out: str | Path | None = None,
             workers: int | None = None, dask: Any = None, prune: bool | None = None,
             max_iteration_time_ns: float | None = None, max_network_cost_usd: float | None = None) -> Codesign:
    """Search plans and networks jointly and rank the candidates by their proven optimum (module docstring).

    Args:
        space: a :class:`~hieropt.workloads.llm.space.CodesignSpace` or the path of a co-design space TOML file.
        objective: override the space's objective.
        out: results file (``.csv`` or ``.parquet``), streamed and resumed as in ``hieropt explore``.
        workers: local processes (default: CPU count; 1: this process); dask: a Dask scheduler address or client.
        prune: skip candidates whose bound cannot beat the incumbent (default: the space's ``prune``).
        max_iteration_time_ns, max_network_cost_usd: override the space's time target (ns) and budget ($).

    Returns:
        a :class:`Codesign`.

    Raises:
        InputError: bad space, overrides (an unknown objective, min_max_regret, min_cost without a time target, a
            target or budget that is not a finite number > 0) or results file. NoSolutionError (exit 3): no plan
            fits in memory ("no plan fits: the smallest needs X GB per NPU") or no plan is valid.
    """
    start = time.perf_counter()
    if not isinstance(space, CodesignSpace):
        from ...io.codesign import load_codesign

        space = load_codesign(space)
    space = with_targets(space, objective, max_iteration_time_ns, max_network_cost_usd)
    try:  # validated again: the overrides' combination (e.g. min_max_regret) may not be a valid space
        space = CodesignSpace(**{**dict(space), **({} if prune is None else {"prune": prune})})
    except ValidationError as e:
        raise validation_error(e, space.name) from e
    if workers is not None and workers < 1:
        raise InputError("--workers", None, f"{workers} workers", "give at least 1")
    with paused_gc():
        enum = enumerate_candidates(space)
    _no_plan(space, enum)
    digest = codesign_fingerprint(space)
    sink = ResultSink(Path(out), digest, COLUMNS) if out is not None else None
    done = {r["id"]: r for r in (sink.previous if sink else [])}
    todo = [c for c in enum.candidates if c.id not in done]
    n = workers or os.cpu_count() or 1
    backend = (f"dask({dask if isinstance(dask, str) else client_address(dask)})" if dask is not None
               else "serial" if n == 1 or len(todo) <= 1 else f"pool({min(n, len(todo))})")
    best = [min((r["objective_value"] for r in done.values() if r["status"] in SOLVED), default=float("inf"))]

    target = space.max_iteration_time_ns  # (a time cap under any objective: a candidate whose time bound exceeds it
    # is infeasible, settled without a solve)
    prune_now = space.prune

    def infeasible(cand: CodesignCandidate) -> bool:
        return target is not None and cand.compute_ns > target

    def admit(cand: CodesignCandidate) -> bool:
        return (target is None or not cand.compute_ns > target) and not (prune_now and cand.lower_bound >= best[0])

    incumbent = [None, ""]  # the incumbent and its text in the pruned rows' message (formatted when it changes)
    bound_text: dict[float, str] = {}  # (a plan's candidates on shapes of one dimension count share their bound)
    unsolved = UnsolvedRows(space, digest)

    def unsolved_row(cand: CodesignCandidate) -> dict[str, Any]:
        if infeasible(cand):
            return unsolved.row(cand, "infeasible", "its time bound exceeds the time target")
        if incumbent[0] != best[0]:
            incumbent[:] = best[0], f"{best[0]:.10g}"
        lb = bound_text.get(cand.lower_bound)
        if lb is None or not cand.lower_bound:  # (0.0 and -0.0 are one key but two texts)
            lb = bound_text[cand.lower_bound] = f"{cand.lower_bound:.10g}"
        return unsolved.row(cand, "pruned", f"lower bound {lb} >= incumbent {incumbent[1]}")

    solved = pruned = 0
    complete = False
    serial = backend == "serial"
    rest: list[CodesignCandidate] = []
    with paused_gc(serial):  # (not with worker processes: they would inherit the pause)
        try:
            for k, (cand, row) in enumerate(run_admitted(space, todo, 1 if serial else min(n, len(todo)),
                                                         solve_codesign_candidate, admit, dask)):
                if row is None:
                    row = unsolved_row(cand)
                    pruned += 1
                else:
                    solved += 1
                    if row["status"] in SOLVED:
                        best[0] = min(best[0], row["objective_value"])
                    row["space_hash"] = digest
                    row = typed_row(row, COLUMNS)
                done[row["id"]] = row
                if sink is not None:
                    sink.write(row)
                if serial and prune_now and row["status"] == "pruned":
                    # every later candidate is settled unsolved too: its bound is at least this one's, which is at
                    # least the incumbent (bounds ascending, no solve in between), or it is infeasible by its bound
                    rest = todo[k + 1:]
                    break
            for cand in rest:
                row = done[cand.id] = unsolved_row(cand)
                if sink is not None:
                    sink.write(row)
            pruned += len(rest)
            complete = True
        finally:
            if sink is not None:
                sink.close(complete)
    rows = tuple(done[c.id] for c in enum.candidates if c.id in done)
    return Codesign(space, digest, enum, rows, backend, time.perf_counter() - start, solved, pruned,
                    len(enum.candidates) - len(todo))


def _no_plan(space: CodesignSpace, enum: CodesignEnumeration) -> None:
    plans = enum.plans
    if plans.fitting:
        return
    need = plans.smallest_need_bytes
    if need is None:
        reasons = ", ".join(f"{k} ({v})" for k, v in sorted(plans.invalid.items(), key=lambda kv: -kv[1])[:3])
        raise InputError(space.name, "plans", f"none of the {plans.combinations} plan combinations is valid for "
                         f"the model ({reasons})", "widen the plan choices")
    avail = space.base.npu.hbm_gib - space.base.npu.hbm_reserve_gib
    raise NoSolutionError("infeasible", f"no plan fits: the smallest needs {need / 1e9:,.2f} GB per NPU, "
                          f"{avail * 2**30 / 1e9:,.2f} GB are available (HBM less reserve); allow more sharding, "
                          "recompute or pipeline stages, or more HBM")


__all__ = ["codesign", "Codesign", "COLUMNS", "OWN_COLUMNS", "UnsolvedRows", "solve_codesign_candidate", "split_ns",
           "codesign_fingerprint"]
