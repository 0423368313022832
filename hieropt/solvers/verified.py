"""A solver's point made a :class:`hieropt.result.Solution`: re-checked by the independent evaluator
(:mod:`hieropt.verify`), its objective value re-evaluated, its gap restated from that value, and the
notes a user should read. Every route of :mod:`hieropt.solvers.routes` ends here, so every answer
carries the same certificate."""

from __future__ import annotations

import re
import time

import numpy as np

from ..errors import SolverError
from ..model.cost import ignored_price_notes
from ..model.timing import TimeModel
from ..result import Solution, Status
from ..spec import Instance
from ..units import implausible_bw_notes
from ..verify import verify
from .procurement import Counts
from .run_cost import run_cost_terms

__all__ = ["verified", "METHODS", "UNITS", "REGRET_COST_METHOD"]

METHODS = {
    "performance": "outer approximation (Kelley cutting planes) on one LP (DAQP while small, then "
    "HiGHS)",
    "min_cost": "outer approximation (Kelley cutting planes) on one LP (DAQP while small, then "
    "HiGHS), feasible points by convex combination with the fastest network",
    "performance_per_cost": "one convex LP in cost-share variables (time x cost made linear by "
    "Charnes-Cooper homogenisation), Kelley cutting planes on one LP (DAQP while small, then "
    "HiGHS)",
    "min_max_regret": "each workload's own optimum, then min z with T_w(B) <= z T_w* for every "
    "workload by cutting planes on one persistent HiGHS LP (every workload's epigraph on the "
    "shared t = 1/B), the bound from the performance optimum of the mix weighted by its regret "
    "rows' duals",
    "min_run_cost": "one convex LP in cost-share variables with the cluster's fixed cost as a "
    "fixed term (run time x (fixed + network cost), Charnes-Cooper homogenisation), Kelley cutting "
    "planes on one LP",
}
"""How each objective is solved (the ``method`` of its :class:`Solution`); the keys are
:data:`hieropt.names.OBJECTIVES`."""
REGRET_COST_METHOD = (
    "each workload's own optimum and the min-max-regret optimum, then the cheapest network with "
    "T_w(B) <= (1 + max_regret) T_w* for every workload by cutting planes, the bound from the "
    "cheapest network under the dual-weighted sum of those rows"
)
"""The ``method`` of min_cost with ``max_regret``."""
UNITS = {
    "performance": "ns",
    "min_cost": "USD",
    "performance_per_cost": "ns*USD",
    "min_max_regret": "ratio",
    "min_run_cost": "USD",
}
"""Unit of each objective's value."""


_GAP_TEXT = re.compile(r"proven relative gap (?:[0-9.]+(?:e[-+]?[0-9]+)?|inf)")
"""The gap a loop's message states ("stopped after 15 LPs at proven relative gap 9.13e-08
(...)")."""


def verified(
    instance: Instance,
    tm: TimeModel,
    counts: Counts,
    res,
    obj: str,
    start: float,
    extra: dict,
    value: float | None = None,
    method: str | None = None,
) -> Solution:
    """Re-check the solver's point ``res`` (an outcome with ``bw``, ``upper``, ``lower``, ``status``
    and ``message``) with the independent evaluator and package the :class:`Solution` of objective
    ``obj``.

    Args:
        instance, tm: the problem and its time model; counts: LPs and cuts of the solve; start: its
            ``time.perf_counter()`` at the start; extra: method-specific statistics (updated in
            place).
        value: the objective re-evaluated elsewhere (the portfolio objectives); method: how it was
            solved, when not the objective's usual :data:`METHODS`.

    Raises:
        SolverError: the evaluator finds the point infeasible, or its objective value differs from
            the solver's by more than 1e-9 (relative).
    """
    cert = verify(
        instance,
        res.bw,
        target_ns=instance.max_iteration_time_ns,
        budget_usd=instance.max_network_cost_usd,
    )
    if not cert.ok:
        raise SolverError("independent verification failed: " + "; ".join(cert.problems))
    bd = cert.breakdown
    if value is None and obj == "min_run_cost":
        value = run_cost_terms(instance).value(bd.iteration_time_ns, bd.network_cost_usd)
    elif value is None:
        value = {
            "performance": bd.iteration_time_ns,
            "min_cost": bd.network_cost_usd,
            "performance_per_cost": bd.iteration_time_ns * bd.network_cost_usd,
        }[obj]
    if abs(value - res.upper) > 1e-9 * abs(value):
        raise SolverError(
            f"independent verification failed: the solver reports {res.upper:.12g} {UNITS[obj]} "
            f"but the evaluator gives {value:.12g}"
        )
    notes = (
        tuple(
            f"dimension {d} carries no traffic: its bandwidth ({res.bw[d]:.6g} GB/s) is whatever "
            "the constraints allow; any feasible value is equally good"
            for d in np.flatnonzero(~tm.carries_traffic)
        )
        + implausible_bw_notes(res.bw, tm.carries_traffic)
        + ignored_price_notes(instance)
    )
    bound = min(res.lower, value)
    gap = max(0.0, (value - bound) / value) if value > 0 else 0.0
    # a loop's message states its gap before the bound's last slack and the evaluator's value:
    # restated, so that the status line and the gap line agree
    message = (
        _GAP_TEXT.sub(f"proven relative gap {gap:.3g}", res.message) if res.message else res.message
    )
    extra.update(cuts=counts.cuts, terms=int(tm.terms_bytes.shape[0]), collectives=tm.n_collectives)
    return Solution(
        status=Status.OPTIMAL if res.status is Status.OPTIMAL else res.status,
        message=message,
        objective=obj,
        bw_gbps=res.bw,
        iteration_time_ns=bd.iteration_time_ns,
        network_cost_usd=bd.network_cost_usd,
        objective_value=value,
        objective_bound=bound,
        objective_unit=UNITS[obj],
        lower_bound_ns=bound if obj == "performance" else None,
        gap=gap,
        iterations=counts.lps,
        solve_seconds=time.perf_counter() - start,
        breakdown=bd,
        method=method or METHODS[obj],
        notes=notes,
        extra=extra,
        instance=instance,
    )
