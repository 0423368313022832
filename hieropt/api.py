"""The library facade: load, solve, evaluate, verify. Each call runs the one-way flow
read -> validate -> traffic/time model -> formulate -> solve -> verify, with no state kept between calls."""

from __future__ import annotations

import time

import numpy as np

from .errors import InputError, SolverError
from .io.instance import load_instance, load_libra
from .result import Solution, Status
from .solvers.performance import REL_GAP, minimize_time
from .spec import Instance
from .timing import Breakdown, build_time_model, evaluate
from .verify import Certificate, verify

MIN_REL_GAP = 5e-9
"""Smallest relative gap :func:`solve` accepts (the cutting-plane loop stalls near 2.5e-9 with 1e-9 LP tolerances)."""

__all__ = ["load_instance", "load_libra", "solve", "evaluate", "verify", "Solution", "Breakdown", "Certificate"]


def solve(instance: Instance, rel_gap: float = REL_GAP, time_limit_s: float = 60.0) -> Solution:
    """Solve ``instance`` for its objective and return a verified :class:`Solution`.

    Args:
        instance: a validated instance (see :func:`load_instance`, :func:`load_libra`).
        rel_gap: target relative optimality gap, in [5e-9, 1) (HiGHS's 1e-9 LP tolerances put the floor near 2.5e-9).
        time_limit_s: time limit of each LP solve, s.

    Returns:
        A :class:`Solution`; ``status`` is OPTIMAL when the gap target was met, LIMIT otherwise.

    Raises:
        InputError: ``rel_gap`` outside [5e-9, 1).
        NoSolutionError: infeasible constraints or no upper limit on bandwidth (exit code 3).
        SolverError: HiGHS failed, or the independent evaluator disagrees with the solver (exit code 3).
    """
    if not MIN_REL_GAP <= rel_gap < 1:
        raise InputError("rel_gap", None, f"relative gap {rel_gap:g} is outside [{MIN_REL_GAP:g}, 1)",
                         f"ask for a gap of at least {MIN_REL_GAP:g}: HiGHS's 1e-9 LP tolerances put the floor there")
    start = time.perf_counter()
    tm = build_time_model(instance)
    oa = minimize_time(instance, tm, rel_gap=rel_gap, time_limit_s=time_limit_s)
    cert = verify(instance, oa.bw, oa.upper_ns)
    if not cert.ok:
        raise SolverError("independent verification failed: " + "; ".join(cert.problems))
    notes = tuple(
        f"dimension {d} carries no traffic: its bandwidth ({oa.bw[d]:.6g} GB/s) is whatever the constraints allow; "
        "any feasible value is equally fast"
        for d in np.flatnonzero(~tm.carries_traffic)
    )
    bd = cert.breakdown
    status = Status.OPTIMAL if oa.status is Status.OPTIMAL else oa.status
    return Solution(
        status=status,
        message=oa.message,
        objective=instance.objective,
        bw_gbps=oa.bw,
        iteration_time_ns=bd.iteration_time_ns,
        network_cost_usd=bd.network_cost_usd,
        lower_bound_ns=min(oa.lower_ns, bd.iteration_time_ns),
        gap=oa.gap,
        iterations=oa.iterations,
        solve_seconds=time.perf_counter() - start,
        breakdown=bd,
        method="outer-approximation (Kelley cutting planes) on HiGHS LP",
        notes=notes,
        extra={"cuts": oa.cuts, "terms": int(tm.terms_bytes.shape[0]), "collectives": tm.n_collectives},
    )
