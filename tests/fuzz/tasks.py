"""Tasks run in the fuzz worker process (:mod:`tests.fuzz.worker`): thin wrappers around the public
API and the command line that return small, picklable summaries. Exceptions propagate (the worker
reports them)."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import traceback
import warnings
from typing import Any

import numpy as np


def summary(sol: Any) -> dict[str, Any]:
    """The figures of a :class:`hieropt.Solution` the checks need (plain floats and lists)."""
    return {
        "status": str(sol.status.value if hasattr(sol.status, "value") else sol.status),
        "objective": sol.objective,
        "bw": np.asarray(sol.bw_gbps, dtype=float).tolist(),
        "time_ns": float(sol.iteration_time_ns),
        "cost_usd": float(sol.network_cost_usd),
        "value": float(sol.objective_value),
        "bound": float(sol.objective_bound),
        "gap": float(sol.gap),
        "message": sol.message,
        "notes": list(sol.notes),
        "iterations": int(sol.iterations),
        "own_optima_ns": None
        if sol.portfolio is None
        else [float(v) for v in sol.portfolio.own_optima_ns],
    }


def solve(instance, objective: str | None = None, **kwargs) -> dict[str, Any]:
    """``hieropt.solve(instance, objective, options=SolveOptions(**kwargs))`` as a :func:`summary`
    (``max_network_cost_usd`` is the option ``budget_usd``); no design raises NoSolutionError."""
    import hieropt

    kwargs = {"budget_usd" if k == "max_network_cost_usd" else k: v for k, v in kwargs.items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = hieropt.solve(instance, objective, options=hieropt.SolveOptions(**kwargs))
        out = summary(sol.raise_for_status())
    out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    return out


def scip_min_time(instance) -> dict[str, Any]:
    """SCIP's global minimum of the iteration time (tests/oracle/scip_loops.py): ``{"bw":
    [...]}``, or ``{"failed": reason}`` when SCIP proved no optimum. Run in the worker: SCIP's own
    time limit is not always honoured inside its LP solves, and the worker's wall-clock limit is."""
    from tests.oracle.scip import ScipFailed
    from tests.oracle.scip_loops import scip_min_time as scip

    try:
        bw, _ = scip(instance)
    except ScipFailed as e:
        return {"failed": str(e)}
    return {"bw": np.asarray(bw, dtype=float).tolist()}


def scip_min_max_regret(instance, own_ns: list[float], z0: float) -> dict[str, Any]:
    """SCIP's global min-max-regret design against the own optima ``own_ns``
    (tests/oracle/scip_traffic.py): ``{"bw": [...]}``, or ``{"failed": reason}``."""
    from tests.oracle.scip import ScipFailed
    from tests.oracle.scip_traffic import scip_min_max_regret as scip

    try:
        bw = scip(instance, own_ns, z0)
    except ScipFailed as e:
        return {"failed": str(e)}
    return {"bw": np.asarray(bw, dtype=float).tolist()}


def pareto(instance, points: int = 6) -> dict[str, Any]:
    """``hieropt.pareto(instance, points)``: the points (budget, bw, time, cost, bound, gap) and
    both optima."""
    import hieropt

    front = hieropt.pareto(instance, points=points)
    return {
        "points": [
            {
                "budget": p.budget_usd,
                "bw": np.asarray(p.bw).tolist(),
                "time_ns": p.iteration_time_ns,
                "cost_usd": p.network_cost_usd,
                "bound_ns": p.lower_bound_ns,
                "gap": p.gap,
            }
            for p in front.points
        ],
        "fastest": summary(front.fastest),
        "best_per_cost": None if front.best_per_cost is None else summary(front.best_per_cost),
        "notes": list(front.notes),
    }


def provision(instance, catalog, **kwargs) -> dict[str, Any]:
    """``hieropt.provision(instance, catalog, **kwargs)``: design bandwidths, time, cost, value,
    bound, gap."""
    import hieropt

    p = hieropt.provision(instance, catalog, **kwargs)
    return {
        "status": str(p.status.value),
        "bw": np.asarray(p.bw_gbps).tolist(),
        "time_ns": p.iteration_time_ns,
        "cost_usd": p.network_cost_usd,
        "value": p.objective_value,
        "bound": p.objective_bound,
        "gap": p.gap,
    }


def cli(argv: list[str], cwd: str | None = None, columns: int | None = None) -> dict[str, Any]:
    """Run ``hieropt ARGV`` in this process through the console-script entry point
    (:func:`hieropt.cli.main`), with stdout and stderr captured (not terminals). Returns exit code,
    both outputs and the traceback of an uncaught exception (exit code 1), if any."""
    from hieropt import cli as hcli

    out, err = io.StringIO(), io.StringIO()
    old_cwd, old_argv = os.getcwd(), sys.argv
    old_cols = os.environ.get("COLUMNS")
    if columns is not None:
        os.environ["COLUMNS"] = str(columns)
    code, tb = 0, None
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = ["hieropt", *argv]
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("default")
            warnings.showwarning = lambda m, c, f, n, file=None, line=None: err.write(
                warnings.formatwarning(m, c, f, n, line))
            try:
                hcli.main()
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except BaseException:  # noqa: BLE001 - an uncaught exception is what we look for
                code, tb = 1, traceback.format_exc()
    finally:
        os.chdir(old_cwd)
        sys.argv = old_argv
        if columns is not None:
            if old_cols is None:
                os.environ.pop("COLUMNS", None)
            else:
                os.environ["COLUMNS"] = old_cols
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(), "traceback": tb}


def threads_vs_serial(instances: list, threads: int = 8) -> dict[str, Any]:
    """Solve ``instances`` one after the other, then all at once on ``threads`` threads; both lists
    of summaries."""
    from concurrent.futures import ThreadPoolExecutor

    serial = [solve(inst) for inst in instances]
    with ThreadPoolExecutor(max_workers=threads) as ex:
        parallel = list(ex.map(solve, instances))
    return {"serial": serial, "parallel": parallel}


def pool_vs_serial(instances: list, method: str, processes: int = 4) -> dict[str, Any]:
    """Solve ``instances`` here, then in a pool of ``processes`` processes started with ``method``
    (spawn or fork; with fork after the serial solves, so the children inherit a process that
    already used HiGHS)."""
    import multiprocessing as mp

    serial = [solve(inst) for inst in instances]
    with mp.get_context(method).Pool(processes) as pool:
        parallel = pool.map(solve, instances)
    return {"serial": serial, "parallel": parallel}


def provision_after_fork(instance, catalog_path: str, timeout_s: float = 60.0) -> dict[str, Any]:
    """``hieropt.provision`` here, then again in a forked child: whether the child finished and with
    what."""
    import multiprocessing as mp

    first = provision(instance, catalog_path, compare=False)
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()

    def run(conn):  # in the forked child
        try:
            conn.send(("ok", provision(instance, catalog_path, compare=False)))
        except BaseException as e:  # noqa: BLE001
            conn.send(("raised", f"{type(e).__name__}: {e}"))

    p = ctx.Process(target=run, args=(child,))
    p.start()
    done = parent.poll(timeout_s)
    out = parent.recv() if done else ("hang", None)
    if p.is_alive():
        p.kill()
    p.join(5)
    return {"parent": first, "child": out}
