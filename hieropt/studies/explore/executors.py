"""Where the candidates are solved: one candidate (:func:`solve_candidate`), serially, in a local
process pool or on a Dask cluster; each yields result rows as they finish."""

from __future__ import annotations

import gc
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, as_completed, wait
from contextlib import contextmanager
from typing import Any

from ...cache import Cache, scoped, use
from ...errors import HieroptError, InputError, NoSolutionError, SolverError, raise_terminated
from ...names import with_flag
from ...result import Solution
from ...spec import Mapping
from ...spec.space import ShapeSpace, nic_count
from .enumerate import Candidate, build_instance
from .results import COLUMN_NAMES


def _group_text(mappings: tuple[Mapping, ...], phase: str) -> str:
    return "; ".join("x".join(map(str, m.group(phase))) for m in mappings)


@scoped
def solve_candidate(space: ShapeSpace, cand: Candidate) -> dict[str, Any]:
    """Solve one candidate with the space's objective (:func:`hieropt.solvers.objectives.solve`,
    proven gap) and return its row
    (see :data:`COLUMNS`; ``space_hash`` and the equivalents are filled in by :func:`explore`). A
    shape without a certified answer gets its status (``infeasible``, ``unbounded``, ``error``) and
    the message.

    With the performance objective many designs of a shape are often equally fast (the optimum is
    not unique), and their costs differ; the row then reports the cheapest of the designs proven
    within the gap target of the optimum (a second, min_cost solve), so cost, bandwidths and
    scale-out figures are well defined; the objective value, bound and gap are that design's."""
    from ...solvers.objectives import solve, solve_fastest_cheapest

    row: dict[str, Any] = dict.fromkeys(COLUMN_NAMES)
    row.update(
        shape_id=cand.id,
        n_dims=cand.n_dims,
        levels=",".join(space.levels[d.level].name for d in cand.dims),
        blocks=",".join(d.block for d in cand.dims),
        npus="x".join(str(d.npus) for d in cand.dims),
        tp_groups=_group_text(cand.mappings, "forward"),
        dp_groups=_group_text(cand.mappings, "weight_grad"),
        objective=space.objective,
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )
    start = time.perf_counter()
    inst = build_instance(space, cand)
    try:
        # tie-break: the cheapest design within the gap target of the optimum
        if space.objective == "performance":
            sol, sol_design = solve_fastest_cheapest(inst)
        else:
            sol = sol_design = solve(inst).raise_for_status()
    except NoSolutionError as e:
        row.update(status=e.kind, message=str(e))
    except HieroptError as e:
        row.update(status="error", message=str(e))
    else:
        message = sol.message + tie_break_words(sol, sol_design)
        row.update(
            status=str(sol.status),
            message=message,
            objective_value=sol.objective_value,
            objective_bound=sol.objective_bound,
            objective_unit=sol.objective_unit,
            gap=sol.gap,
        )
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
            nics = nic_count(
                space.npus, [sol.bw_gbps[d] for d in top], space.nic_gbps, space.nic_npus
            )
        row.update(
            iteration_time_ns=sol.iteration_time_ns,
            network_cost_usd=sol.network_cost_usd,
            bw_gbps=";".join(repr(float(b)) for b in sol.bw_gbps),
            scaleout_gbps_per_npu=scale_bw,
            scaleout_usd=float(sum(bd.cost_per_dim_usd[d] for d in top)),
            nic_usd=nic_usd,
            nics=nics,
        )
    row["solve_seconds"] = time.perf_counter() - start
    return row


@contextmanager
def paused_gc(pause: bool = True):
    """The cyclic garbage collector paused while the block runs (then as it was), when ``pause``: a
    sweep's enumeration and its serial loop make 10^4 - 10^5 long-lived objects (candidates, rows)
    that the collector would traverse again and again and never free (they form no cycles);
    reference counting frees the rest at once, and the few cycles made meanwhile (an exception's
    traceback) are collected after. Not for a block that starts worker processes (a forked worker
    would inherit the pause)."""
    was = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if pause and was:
            gc.enable()


Task = Callable[[Any, Any], dict[str, Any]]
"""A solve task: (space, candidate) -> result row; a module-level function, so that it pickles to
workers."""
_WORKER: tuple[Any, Task, Cache] | None = None


def _init_worker(space: Any, parent: int, task: Task = solve_candidate) -> None:
    """Pool worker set-up: the space, the task and the worker's cache (the worker lives for one
    sweep, so its solves share their repeated work as the sweep's serial solves do); Ctrl-C is the
    parent's to handle (no traceback from every worker); and the worker ends when its parent is gone
    (killed), instead of running on as an orphan."""
    global _WORKER
    _WORKER = (space, task, Cache())
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # not the parent's handler (forked after it was installed)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    threading.Thread(target=_end_with_parent, args=(parent,), daemon=True).start()


def _end_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _pool_task(cand: Any) -> dict[str, Any]:
    assert _WORKER is not None
    space, task, cache = _WORKER
    with use(cache):
        return task(space, cand)


def tie_break_words(sol: Solution, design: Solution | str) -> str:
    """What a sweep row's message adds about its design, from
    :func:`hieropt.solvers.objectives.solve_fastest_cheapest`'s answers: why the tie-break failed
    (``design`` a str: the optimum's own design stands); else nothing, the design shown being
    ``sol``'s, whose message says how it was chosen."""
    if isinstance(design, str):
        return f"; design: the solver's (no cheaper tie found: {design})"
    return ""


def run_serial(
    space: ShapeSpace, todo: list[Candidate], task: Task = solve_candidate
) -> Iterator[dict[str, Any]]:
    """Solve ``todo`` one after another in this process; yields one result row per candidate."""
    for cand in todo:
        yield task(space, cand)


@contextmanager
def _pool(space: Any, workers: int, task: Task):
    """A local process pool for ``task`` on ``space``. SIGTERM in the main thread is raised as
    :class:`hieropt.errors.Terminated` while it runs; leaving the block after a complete sweep
    waits for the pool, leaving it any other way (Ctrl-C, SIGTERM, an error) terminates the workers
    at once, so no process outlives the sweep."""
    ex = ProcessPoolExecutor(
        max_workers=workers, initializer=_init_worker, initargs=(space, os.getpid(), task)
    )
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, raise_terminated) if main else None
    state = {"done": False}
    try:
        yield ex, state
    finally:
        if state["done"]:
            ex.shutdown(wait=True)
        else:
            procs = list((getattr(ex, "_processes", None) or {}).values())
            ex.shutdown(wait=False, cancel_futures=True)
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.join(5)
        if main:
            signal.signal(signal.SIGTERM, previous)


def run_pool(space: ShapeSpace, todo: list[Candidate], workers: int, started: Callable[[], None],
             task: Task = solve_candidate):
    """Solve ``todo`` in a local process pool of ``workers`` processes; yields rows as they
    finish."""
    with _pool(space, workers, task) as (ex, state):
        # workers start here, before any progress thread
        futures = [ex.submit(_pool_task, cand) for cand in todo]
        started()
        for f in as_completed(futures):
            yield f.result()
        state["done"] = True


def run_admitted(
    space: Any,
    todo: list[Any],
    workers: int,
    task: Task,
    admit: Callable[[Any], bool],
    dask: Any = None,
) -> Iterator[tuple[Any, dict[str, Any] | None]]:
    """Solve ``todo`` in its order, asking ``admit(candidate)`` just before each one is started:
    (candidate, row) as solves finish, (candidate, None) for a candidate not admitted (not solved).
    Serial in this process when ``workers`` is 1; in a local process pool otherwise, at most 2 x
    ``workers`` batches of consecutive candidates in flight (:func:`_batched`: one candidate each
    at first, then about :data:`BATCH_S` of solving), so ``admit`` sees the rows of all but those;
    or on the Dask cluster ``dask`` (an address or a ``distributed.Client``), 2 x ``workers`` solves
    in flight."""
    if dask is None and workers <= 1:
        for cand in todo:
            yield (cand, task(space, cand)) if admit(cand) else (cand, None)
        return
    if dask is not None:
        yield from _dask_admitted(space, todo, task, admit, dask)
        return
    with _pool(space, workers, task) as (ex, state):
        yield from _batched(todo, 2 * workers, admit, lambda cands: ex.submit(_pool_batch, cands))
        state["done"] = True


BATCH_S = 0.2
"""Seconds of solving a local pool's task aims at: consecutive admitted candidates go to one worker
together (:func:`_batched`), so that a task's round trip (pickling, the queues: a fraction of a
millisecond) is small beside its solves, and neighbouring candidates (one plan's shapes) share the
worker's cache (time models, certified optima) as the serial loop's do."""
MAX_BATCH = 32
"""Candidates per pool task at most."""


def _pool_batch(cands: list[Any]) -> list[dict[str, Any]]:
    """:func:`_pool_task` of each candidate of a batch, in order, with the cyclic garbage collector
    paused as in the serial loop (:func:`paused_gc`: a worker's cache holds many long-lived
    objects that each collection would traverse again)."""
    with paused_gc():
        return [_pool_task(cand) for cand in cands]


def _batch_size(rows: list[dict[str, Any]], size: int) -> int:
    """The next batch size from the rows of a finished batch: :data:`BATCH_S` over their mean
    ``solve_seconds`` (when the task reports it), within 1 .. :data:`MAX_BATCH`."""
    took = [r.get("solve_seconds") for r in rows]
    took = [t for t in took if isinstance(t, float) and t > 0]
    if not took:
        return size
    return max(1, min(MAX_BATCH, int(BATCH_S * len(took) / sum(took))))


def _batched(todo, window, admit, submit):
    """As :func:`_windowed`, with batches of consecutive admitted candidates as tasks (the first of
    one candidate, then sized by :func:`_batch_size`): at most ``window`` batches in flight, each
    candidate admitted when its batch is made."""
    pending: dict[Any, list[Any]] = {}
    it = iter(todo)
    exhausted, size = False, 1
    while True:
        while not exhausted and len(pending) < window:
            batch: list[Any] = []
            while len(batch) < size:
                cand = next(it, None)
                if cand is None:
                    exhausted = True
                    break
                if admit(cand):
                    batch.append(cand)
                else:
                    yield cand, None
            if batch:
                pending[submit(batch)] = batch
        if not pending:
            return
        for f in wait(list(pending), return_when=FIRST_COMPLETED)[0]:
            rows = f.result()
            size = _batch_size(rows, size)
            yield from zip(pending.pop(f), rows, strict=True)


def _windowed(todo, window, admit, submit, wait_some):
    pending: dict[Any, Any] = {}
    it = iter(todo)
    exhausted = False
    while True:
        while not exhausted and len(pending) < window:
            cand = next(it, None)
            if cand is None:
                exhausted = True
            elif admit(cand):
                pending[submit(cand)] = cand
            else:
                yield cand, None
        if not pending:
            return
        for f in wait_some(list(pending)):
            yield pending.pop(f), f.result()


def _dask_admitted(space, todo, task, admit, address):
    with dask_session(address) as (client, dask):
        space_f = client.scatter(space, broadcast=True)
        window = 2 * max(1, len(client.scheduler_info().get("workers", {})) or 1)
        yield from _windowed(
            todo,
            window,
            admit,
            lambda cand: client.submit(task, space_f, cand, pure=False),
            lambda pending: dask_wait_some(client, dask, pending),
        )


NO_WORKER_S = 120.0
"""Seconds a Dask sweep waits while the scheduler has no worker at all (every worker died or none
joined) before it ends with an error (the rows so far are kept in ``--out``; a rerun resumes)."""


def dask_wait_some(client: Any, dask: Any, pending: list[Any], step_s: float = 5.0) -> set[Any]:
    """The futures of ``pending`` done once at least one is, as
    ``distributed.wait(FIRST_COMPLETED)`` (``dask``: the ``distributed`` module); while none is done
    the scheduler is asked every ``step_s`` seconds for its workers.

    Raises:
        SolverError: the scheduler had no worker for :data:`NO_WORKER_S` seconds.
    """
    watch = NoWorkerWatch(client)
    while True:
        try:
            return dask.wait(pending, timeout=step_s, return_when="FIRST_COMPLETED").done
        except TimeoutError:
            watch.check()


class NoWorkerWatch:
    """Ends a Dask sweep whose scheduler has had no worker for :data:`NO_WORKER_S` seconds:
    :meth:`check`, called while no result comes, asks the scheduler for its workers at most every
    ``step_s`` seconds."""

    def __init__(self, client: Any, step_s: float = 5.0) -> None:
        self.client, self.step_s = client, step_s
        self.asked = self.seen = time.monotonic()

    def check(self) -> None:
        """Raise SolverError when the scheduler has had no worker for :data:`NO_WORKER_S`
        seconds."""
        now = time.monotonic()
        if now - self.asked < self.step_s:
            return
        self.asked = now
        if self.client.nthreads():
            self.seen = now
        elif now - self.seen >= NO_WORKER_S:
            raise no_worker(self.client)


def no_worker(client: Any) -> SolverError:
    """The error of a Dask scheduler that has had no worker for :data:`NO_WORKER_S` seconds."""
    return SolverError(
        f"Dask: the scheduler at {client_address(client)} has had no worker for {NO_WORKER_S:g} s "
        f"(all died or none joined); the rows so far are kept in {with_flag('out')}: start "
        "workers (dask worker ADDRESS) and rerun to resume"
    )


@contextmanager
def dask_session(address: Any):
    """``(client, distributed)``: a client of the Dask scheduler at ``address`` (:func:`connect`;
    closed at the end when made here) and the ``distributed`` module, for one sweep. Its failures
    are one SolverError line (exit 3), not a traceback, and the rows written before stay in
    ``--out`` (a rerun resumes): a task whose workers died more often than Dask allows
    (``distributed.scheduler.allowed-failures``, default 3: a solve that kills its worker, e.g. out
    of memory), or the connection to the scheduler lost (it stopped). distributed's own log lines of
    a lost connection are not printed during the sweep (the one line says it).

    Raises:
        InputError: Dask not installed, a malformed address, or no scheduler there
            (:func:`connect`).
    """
    try:
        import distributed
    except ImportError:
        raise InputError(
            "dask",
            None,
            "Dask is not installed",
            "pip install 'hieropt[explore]' (dask[distributed]), or run without --dask",
        ) from None
    import asyncio
    import logging

    client = connect(distributed.Client, address)
    where = client_address(client)
    loggers = [logging.getLogger(n) for n in ["distributed", *logging.root.manager.loggerDict]
               if n.startswith("distributed.")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        try:
            client.wait_for_workers(1, timeout=NO_WORKER_S)
        except TimeoutError:
            raise no_worker(client) from None
        yield client, distributed
    except distributed.KilledWorker as e:
        raise SolverError(
            f"Dask: the workers running task {e.task} died {e.allowed_failures + 1} times "
            "(distributed.scheduler.allowed-failures); the rows so far are kept in --out, rerun to "
            "resume (or give the workers more memory)"
        ) from None
    except (OSError, asyncio.CancelledError, distributed.client.FutureCancelledError) as e:
        first = (str(e).splitlines() or [""])[0][:200]
        raise SolverError(
            f"Dask: lost the connection to the scheduler at {where} ({type(e).__name__}: "
            f"{first}); the "
            "rows so far are kept in --out: restart the cluster and rerun to resume"
        ) from None
    finally:
        try:
            if client is not address:
                client.close(timeout=5)
        finally:
            for lg, level in zip(loggers, levels, strict=True):
                lg.setLevel(level)


def connect(client_cls: Any, address: Any) -> Any:
    """A ``distributed.Client`` (``client_cls``) of the scheduler at ``address`` (checked first by
    :func:`hieropt.io.dask_address.check_dask_address`), or ``address`` itself when it is already a
    client.

    Raises:
        InputError: a malformed address, or a scheduler that cannot be reached within 20 s (named
            ``dask``).
    """
    if isinstance(address, client_cls):
        return address
    from ...io.dask_address import check_dask_address

    checked = check_dask_address(str(address))
    try:
        return client_cls(checked, timeout="20s")
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        raise InputError(
            "dask",
            str(address),
            f"cannot reach the Dask scheduler: {e}",
            "start one (dask scheduler; dask worker ADDRESS) or check the address",
        ) from None


def client_address(client: Any) -> str:
    """The scheduler address of a Dask client (for the ``worker`` column and messages)."""
    try:
        return str(client.scheduler.address)
    except AttributeError:
        return "client"


def run_dask(space: ShapeSpace, todo: list[Candidate], address: Any, started: Callable[[], None],
             task: Task = solve_candidate):
    """Solve ``todo`` on the Dask cluster at ``address``; yields rows as they finish (failures as
    :func:`dask_session`). InputError without distributed."""
    with dask_session(address) as (client, dask):
        space_f = client.scatter(space, broadcast=True)
        done = dask.as_completed([client.submit(task, space_f, cand, pure=False) for cand in todo])
        started()
        watch = NoWorkerWatch(client)
        while not done.is_empty():
            batch = done.next_batch(block=False)
            for f in batch:
                yield f.result()
            if not batch:
                time.sleep(0.05)
                watch.check()
