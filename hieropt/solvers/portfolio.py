"""Portfolios of workloads on one fabric: each workload's own optimum, min-max regret, and its time-target form.

- **Own optima** T_w* = min T_w(B) under the instance's design rows, bounds and budget: one cutting-plane solve per
  workload (:class:`hieropt.solvers.cutting.TimeLP` on T_w), each certified in [L_w, U_w]; U_w (the best time
  found) is used as T_w*.
- **Min-max regret** (``objective = "min_max_regret"``): min z s.t. T_w(B) <= z U_w for every w: one LP with every
  workload's epigraph on the shared t = 1/B, one variable z and W rows (:mod:`hieropt.formulation.portfolio`),
  solved by the same cutting planes: each LP value is a lower bound on z*, z(B_LP) = max_w T_w(B_LP) / U_w an upper
  bound (B_LP meets every linear row), cuts at B_LP until the relative gap is met. With T_w* in [L_w, U_w], each
  workload's true ratio lies in [T_w(B)/U_w, T_w(B)/L_w]: the gap reported includes max_w (U_w - L_w) / U_w.
- **Time-target form** (``objective = "min_cost"`` with ``max_regret = x``): the cheapest network with T_w(B) <=
  (1 + x) U_w for every w: the same LP with z fixed at 1 + x and the cost objective; each LP value is a lower bound,
  and the point of the segment from the min-max-regret optimum (feasible iff z* <= 1 + x) to B_LP nearest B_LP that
  meets every target (bisection: max_w T_w / U_w is convex) gives the upper bound.

Every design is re-evaluated per workload by the independent evaluator (:func:`hieropt.model.timing.evaluate` on a
one-workload copy of the instance) before it is returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import NoSolutionError, SolverError
from ..model.terms import TimeModel
from ..model.timing import build_time_model, evaluate, job_time_models
from ..result import Portfolio, Status
from ..spec import Instance
from .cutting import INF, REL_GAP, OAResult, TimeLP

__all__ = ["own_optima", "min_max_regret", "min_cost_within_regret", "portfolio_of", "single_job"]

STALL_ROUNDS = 12
"""LP rounds without a better lower bound after which a loop stops (status LIMIT, honest gap)."""


def single_job(instance: Instance, w: int) -> Instance:
    """``instance`` with only its workload ``w`` (weight 1): for own optima and per-workload evaluation."""
    job = instance.jobs[w]
    return instance.model_copy(update={"workload": job.workload, "mapping": job.mapping, "workload_weight": 1.0,
                                       "more_workloads": (), "objective": "performance", "max_regret": None,
                                       "max_iteration_time_ns": None})


def own_optima(instance: Instance, rel_gap: float = REL_GAP, time_limit_s: float = 60.0) -> list[OAResult]:
    """T_w* of every workload under the instance's rows, bounds and budget (one certified solve each).

    Raises:
        NoSolutionError: a workload has no optimum (infeasible or unbounded constraints).
    """
    out = []
    for w, tm in enumerate(job_time_models(instance)):
        core = TimeLP(single_job(instance, w), tm, time_limit_s)
        try:
            res = core.min_time(rel_gap, budget_usd=instance.max_network_cost_usd)
        finally:
            core.close()
        if res.status is not Status.OPTIMAL:
            raise SolverError(f"own optimum of workload {w} not certified: {res.message}")
        out.append(res)
    return out


def portfolio_of(instance: Instance, bw: np.ndarray, optima: list[OAResult],
                 max_regret: float | None = None) -> Portfolio:
    """Each workload's time on ``bw`` (independent evaluator) against its own optimum."""
    times = tuple(evaluate(single_job(instance, w), bw).iteration_time_ns for w in range(len(instance.jobs)))
    jobs = instance.jobs
    return Portfolio(names=tuple(j.workload.name for j in jobs), weights=tuple(j.weight for j in jobs), times_ns=times,
                     own_optima_ns=tuple(r.upper for r in optima),
                     own_bounds_ns=tuple(max(r.lower, 0.0) for r in optima), max_regret=max_regret)


@dataclass
class _RegretLP:
    core: Any  # PyomoTimeLP
    tms: list[TimeModel]
    optima: np.ndarray
    z_col: int

    @classmethod
    def build(cls, instance: Instance, optima: list[OAResult], time_limit_s: float) -> _RegretLP:
        # Pyomo loads on use only: the performance path (and every bad-input error) never imports it
        from ..formulation.portfolio import add_regret_rows
        from .pyomo_core import PyomoTimeLP

        tms = job_time_models(instance)
        U = np.array([r.upper for r in optima])
        core = PyomoTimeLP(instance, build_time_model(instance), time_limit_s,
                      extend=lambda lp: add_regret_rows(lp, tms, U))
        return cls(core, tms, U, core.solver.col(core.lp.model.z))

    def ratio(self, bw: np.ndarray) -> float:
        """max_w T_w(B) / U_w (inf when a loaded dimension has no bandwidth)."""
        with np.errstate(divide="ignore"):
            return max(tm.time_ns(bw) / u for tm, u in zip(self.tms, self.optima, strict=True))


def _optima_gap(optima: list[OAResult]) -> float:
    return max((r.upper - r.lower) / r.upper for r in optima)


def min_max_regret(instance: Instance, optima: list[OAResult], rel_gap: float = REL_GAP,
                   time_limit_s: float = 60.0, max_iterations: int = 500) -> OAResult:
    """min_B max_w T_w(B) / T_w* (module docstring); ``upper`` / ``lower`` are ratios (1 = every workload at its
    own optimum).

    Raises:
        NoSolutionError: infeasible rows or budget; SolverError: HiGHS failed.
    """
    rl = _RegretLP.build(instance, optima, time_limit_s)
    core = rl.core
    core.prepare(instance.max_network_cost_usd)
    costs = np.zeros(core.solver.objective_costs().size)
    costs[rl.z_col] = 1.0
    best, upper, lower, stall = None, INF, -INF, 0
    for it in range(1, max_iterations + 1):
        r = core.solve_costs(costs)
        if r.status is not Status.OPTIMAL:
            raise SolverError(f"HiGHS stopped on min-max-regret LP {it} with '{r.termination}'")
        stall = 0 if r.objective > lower + 1e-12 * abs(lower) else stall + 1
        lower = max(lower, r.objective)
        bw = core.bandwidth(r.x)
        z = rl.ratio(bw)
        if z < upper:
            best, upper = bw, z
        if best is not None and upper - lower <= rel_gap * upper:
            return OAResult(Status.OPTIMAL, best, upper, lower, it, "optimal within the gap target")
        if stall >= STALL_ROUNDS:
            break
        core.cut_at(r.x)
    if best is None or not np.isfinite(upper):
        raise NoSolutionError("infeasible", "no bandwidth vector gives every workload a finite iteration time")
    return OAResult(Status.LIMIT, best, upper, lower, it,
                    f"stopped after {it} LPs at proven relative gap {(upper - lower) / upper:.3g}")


def min_cost_within_regret(instance: Instance, optima: list[OAResult], max_regret: float, regret: OAResult,
                           rel_gap: float = REL_GAP, time_limit_s: float = 60.0,
                           max_iterations: int = 500) -> OAResult:
    """The cheapest network with T_w(B) <= (1 + ``max_regret``) T_w* for every workload (module docstring);
    ``regret`` is the min-max-regret optimum (its point meets every target when z* <= 1 + max_regret).

    Raises:
        NoSolutionError: no fabric meets every target (z* > 1 + max_regret); SolverError: HiGHS failed.
    """
    cap = 1.0 + max_regret
    if regret.lower > cap:
        raise NoSolutionError("infeasible", f"no fabric keeps every workload within {max_regret:.4g} of its own "
                              f"optimum: the best any fabric does is within {regret.upper - 1:.4g} (min-max regret)")
    if regret.upper > cap:
        raise NoSolutionError("infeasible", f"max_regret {max_regret:.4g} is within the optimality gap of the best "
                              f"achievable {regret.upper - 1:.6g}; allow a slightly larger regret")
    rl = _RegretLP.build(instance, optima, time_limit_s)
    core = rl.core
    core.prepare(instance.max_network_cost_usd)
    core.solver.change_col_bounds(rl.z_col, cap, cap)
    meets, best, upper, lower, stall = regret.bw, regret.bw, core.network_cost(regret.bw), -INF, 0
    for it in range(1, max_iterations + 1):
        r = core.solve_costs(core.cost_costs)
        if r.status is not Status.OPTIMAL:
            raise SolverError(f"HiGHS stopped on min-cost-within-regret LP {it} with '{r.termination}'")
        value = r.objective * core.cost_unit  # the cost objective is in units of core.cost_unit $
        stall = 0 if value > lower + 1e-12 * abs(lower) else stall + 1
        lower = max(lower, value)
        point = _within(rl, meets, core.bandwidth(r.x), cap)
        c = core.network_cost(point)
        if c < upper:
            best, upper = point, c
        if upper - lower <= rel_gap * upper:
            return OAResult(Status.OPTIMAL, best, upper, lower, it, "optimal within the gap target")
        if stall >= STALL_ROUNDS:
            break
        core.cut_at(r.x)
    return OAResult(Status.LIMIT, best, upper, lower, it,
                    f"stopped after {it} LPs at proven relative gap {(upper - lower) / upper:.3g}")


def _within(rl: _RegretLP, meets: np.ndarray, bw: np.ndarray, cap: float) -> np.ndarray:
    """The point of [meets, bw] nearest ``bw`` whose every workload is within ``cap`` x its optimum."""
    if rl.ratio(bw) <= cap:
        return bw
    lo, hi = 0.0, 1.0  # meets is feasible; the ratio is convex along the segment
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if rl.ratio(meets + mid * (bw - meets)) <= cap:
            lo = mid
        else:
            hi = mid
    return meets + lo * (bw - meets)
