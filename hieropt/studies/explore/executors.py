"""Where the candidates are solved: one candidate (:func:`solve_candidate`), serially, in a local process pool or on a
Dask cluster; each yields result rows as they finish."""

from __future__ import annotations

import math
import os
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from ...errors import HieroptError, InputError, NoSolutionError
from ...solvers.cutting import REL_GAP
from ...spec import Mapping
from ...spec.space import ShapeSpace
from .enumerate import Candidate, build_instance
from .results import COLUMN_NAMES


def _group_text(mappings: tuple[Mapping, ...], phase: str) -> str:
    return "; ".join("x".join(map(str, m.group(phase))) for m in mappings)


def solve_candidate(space: ShapeSpace, cand: Candidate) -> dict[str, Any]:
    """Solve one candidate with the space's objective (:func:`hieropt.solvers.objectives.solve`, proven gap) and return
    its row
    (see :data:`COLUMNS`; ``space_hash`` and the equivalents are filled in by :func:`explore`). A shape without a
    certified answer gets its status (``infeasible``, ``unbounded``, ``error``) and the message.

    With the performance objective many designs of a shape are often equally fast (the optimum is not unique), and
    their costs differ; the row then reports the cheapest design whose time is within the gap target (1e-8) of the
    optimum (a second, min_cost solve), so cost, bandwidths and scale-out figures are well defined. The objective
    value, bound and gap are those of the performance solve."""
    from ...solvers.objectives import solve

    row: dict[str, Any] = dict.fromkeys(COLUMN_NAMES)
    row.update(shape_id=cand.id, n_dims=cand.n_dims, levels=",".join(space.levels[d.level].name for d in cand.dims),
               blocks=",".join(d.block for d in cand.dims), npus="x".join(str(d.npus) for d in cand.dims),
               tp_groups=_group_text(cand.mappings, "forward"), dp_groups=_group_text(cand.mappings, "weight_grad"),
               objective=space.objective, worker=f"{socket.gethostname()}:{os.getpid()}")
    start = time.perf_counter()
    inst = build_instance(space, cand)
    try:
        sol = solve(inst)
    except NoSolutionError as e:
        row.update(status=e.kind, message=str(e))
    except HieroptError as e:
        row.update(status="error", message=str(e))
    else:
        message = sol.message
        if space.objective == "performance":  # tie-break: the cheapest design within the gap target of the optimum
            try:
                target = sol.objective_value * (1 + REL_GAP)
                sol_design = solve(inst, objective="min_cost", max_iteration_time_ns=target)
                message += f"; design: the cheapest within {REL_GAP:g} of the optimal time"
            except HieroptError as e:
                sol_design = sol
                message += f"; design: the solver's (no cheaper tie found: {e})"
        else:
            sol_design = sol
        row.update(status=str(sol.status), message=message, objective_value=sol.objective_value,
                   objective_bound=sol.objective_bound, objective_unit=sol.objective_unit, gap=sol.gap)
        sol = sol_design
        bd = sol.breakdown
        top = [d for d, dim in enumerate(cand.dims) if dim.level == space.scale_out_index]
        scale_bw = float(sum(sol.bw_gbps[d] for d in top))
        nic_usd = 0.0
        for d in top:
            cc = space.cost.classes[space.levels[cand.dims[d].level].cost_class]
            if cand.dims[d].block == "Switch" and cc.nic_usd_per_gbps is not None:
                nic_usd += space.npus * cc.nic_usd_per_gbps * float(sol.bw_gbps[d])
        nics = None
        if space.nic_gbps is not None:
            nics = math.ceil(space.npus * scale_bw / space.nic_gbps * (1 - 1e-12))
        row.update(iteration_time_ns=sol.iteration_time_ns, network_cost_usd=sol.network_cost_usd,
                   bw_gbps=";".join(repr(float(b)) for b in sol.bw_gbps), scaleout_gbps_per_npu=scale_bw,
                   scaleout_usd=float(sum(bd.cost_per_dim_usd[d] for d in top)), nic_usd=nic_usd, nics=nics)
    row["solve_seconds"] = time.perf_counter() - start
    return row


_WORKER_SPACE: ShapeSpace | None = None


def _init_worker(space: ShapeSpace) -> None:
    global _WORKER_SPACE
    _WORKER_SPACE = space


def _pool_task(cand: Candidate) -> dict[str, Any]:
    assert _WORKER_SPACE is not None
    return solve_candidate(_WORKER_SPACE, cand)


def run_serial(space: ShapeSpace, todo: list[Candidate]) -> Iterator[dict[str, Any]]:
    """Solve ``todo`` one after another in this process; yields one result row per candidate."""
    for cand in todo:
        yield solve_candidate(space, cand)


def run_pool(space: ShapeSpace, todo: list[Candidate], workers: int, started: Callable[[], None]):
    """Solve ``todo`` in a local process pool of ``workers`` processes; yields rows as they finish."""
    ex = ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(space,))
    try:
        futures = [ex.submit(_pool_task, cand) for cand in todo]  # workers start here, before any progress thread
        started()
        for f in as_completed(futures):
            yield f.result()
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


def client_address(client: Any) -> str:
    """The scheduler address of a Dask client (for the ``worker`` column and messages)."""
    try:
        return str(client.scheduler.address)
    except AttributeError:
        return "client"


def run_dask(space: ShapeSpace, todo: list[Candidate], address: Any, started: Callable[[], None]):
    """Solve ``todo`` on the Dask cluster at ``address``; yields rows as they finish. InputError without distributed."""
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError:
        raise InputError("--dask", None, "Dask is not installed",
                         "pip install 'hieropt[explore]' (dask[distributed]), or run without --dask") from None
    own = not isinstance(address, Client)
    try:
        client = Client(address, timeout="20s") if own else address
    except (OSError, TimeoutError) as e:
        raise InputError("--dask", str(address), f"cannot reach the Dask scheduler: {e}",
                         "start one (dask scheduler; dask worker ADDRESS) or check the address") from None
    try:
        space_f = client.scatter(space, broadcast=True)
        futures = [client.submit(solve_candidate, space_f, cand, pure=False) for cand in todo]
        started()
        for f in dask_completed(futures):
            yield f.result()
    finally:
        if own:
            client.close()
