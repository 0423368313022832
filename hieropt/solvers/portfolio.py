"""Portfolios of workloads on one fabric: each workload's own optimum, min-max regret, and its
time-target form.

- **Own optima** T_w* = min T_w(B) under the instance's design rows, bounds and budget: one
  cutting-plane solve per workload (:class:`hieropt.solvers.cutting.TimeLP` on T_w), each proven in
  [L_w, U_w]; U_w (the best time found) is used as T_w*. When one stops short of its gap target
  (LIMIT), the portfolio's answer is LIMIT too, its message says by how much, and a min-max ratio's
  bound is scaled by min_w L_w / U_w.
- **Min-max regret** (``objective = "min_max_regret"``): min z s.t. T_w(B) <= z U_w for every w. One
  LP with every workload's epigraph on the shared t = 1/B, one variable z and W rows
  (:mod:`hieropt.formulation.portfolio`) steers: its points are candidates (z(B_LP) = max_w
  T_w(B_LP) / U_w, B_LP meets every linear row), cuts at B_LP refine it, and its regret rows' duals
  are the weights of a mix whose performance optimum, solved by the main loop, proves the bound
  (:func:`hieropt.solvers.regret_bound.regret_bound`). The LP's own value is exact only to HiGHS's
  tolerances and certifies nothing.
- **Time-target form** (``objective = "min_cost"`` with ``max_regret = x``): the cheapest network
  with T_w(B) <= (1 + x) U_w for every w: the same LP with z fixed at 1 + x and the cost objective;
  the point of the segment from the min-max-regret optimum (feasible iff z* <= 1 + x) to B_LP
  nearest B_LP that meets every target (bisection: max_w T_w / U_w is convex) is a candidate, and
  the main loop's min cost on the surrogate mix (its duals as weights) proves the bound
  (:func:`hieropt.solvers.regret_bound.regret_cost_bound`).

A loop tries a certificate when its LP's own gap is a quarter of the target (then ten times smaller,
up to :data:`CHECKS` times), when it stalls, or when an LP fails (HiGHS 'Unknown' on every retry):
it then stops with status LIMIT and the gap proved. Without collective traffic every design is every
workload's own optimum.

Every design is re-evaluated per workload by the independent evaluator
(:func:`hieropt.model.timing.evaluate` on a one-workload copy of the instance) before it is
returned.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import NoSolutionError, SolverError
from ..model.cost import cluster_cost_usd_per_gbps
from ..model.terms import TimeModel
from ..model.timing import build_time_model, evaluate, job_time_models
from ..result import Portfolio, Status, slowdown_ratio
from ..spec import Instance
from .cutting import INF, REL_GAP, OAResult, TimeLP
from .regret_bound import regret_bound, regret_cost_bound

__all__ = ["own_optima", "min_max_regret", "min_cost_within_regret", "portfolio_of", "single_job"]

STALL_ROUNDS = 12
"""LP rounds without a better lower bound after which a loop stops (status LIMIT, honest gap)."""


def single_job(instance: Instance, w: int) -> Instance:
    """``instance`` with only its workload ``w`` (weight 1): for own optima and per-workload
    evaluation."""
    job = instance.jobs[w]
    return instance.model_copy(update={"workload": job.workload, "mapping": job.mapping, "workload_weight": 1.0,
                                       "more_workloads": (), "objective": "performance", "max_regret": None,
                                       "max_iteration_time_ns": None})


def own_optima(instance: Instance, rel_gap: float = REL_GAP, time_limit_s: float = 60.0) -> list[OAResult]:
    """T_w* of every workload under the instance's rows, bounds and budget (one solve each; a solve
    that stops short of its gap target is kept with status LIMIT and its proven bound: the portfolio
    is then LIMIT too).

    Raises:
        NoSolutionError: a workload has no optimum (infeasible or unbounded constraints).
"""
    out = []
    for w, tm in enumerate(job_time_models(instance)):
        core = TimeLP(single_job(instance, w), tm, time_limit_s)
        try:
            out.append(core.min_time(rel_gap, budget_usd=instance.max_network_cost_usd))
        finally:
            core.close()
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
class RegretLP:
    """The portfolio LP (:mod:`hieropt.formulation.portfolio`) in HiGHS: it steers the portfolio
    loops (points and the regret rows' duals); the bounds come from
    :mod:`hieropt.solvers.regret_bound`."""

    core: Any  # PyomoTimeLP
    tms: list[TimeModel]
    optima: np.ndarray
    z_col: int
    rows: list[int]

    @classmethod
    def build(cls, instance: Instance, optima: np.ndarray, time_limit_s: float) -> RegretLP:
        """The LP of ``instance``'s workloads with the regret rows against ``optima`` (U_w, ns),
        checked for feasibility under the budget and seeded with its first cuts.

        Raises:
            NoSolutionError: infeasible rows or budget, or no upper limit on a loaded bandwidth.
"""
        # Pyomo loads on use only: the performance path (and every bad-input error) never imports it
        from ..formulation.portfolio import add_regret_rows
        from .pyomo_core import PyomoTimeLP

        tms = job_time_models(instance)
        core = PyomoTimeLP(instance, build_time_model(instance), time_limit_s,
                           extend=lambda lp: add_regret_rows(lp, tms, optima))
        m = core.lp.model
        rows = [core.solver.row(m.regret[w]) for w in range(len(tms))]
        out = cls(core, tms, optima, core.solver.col(m.z), rows)
        core.prepare(instance.max_network_cost_usd)
        return out

    def ratio(self, bw: np.ndarray) -> float:
        """max_w T_w(B) / U_w (inf when a loaded dimension has no bandwidth)."""
        with np.errstate(divide="ignore"):
            return max(slowdown_ratio(tm.time_ns(bw), u) for tm, u in zip(self.tms, self.optima,
                                                                          strict=True))

    def multipliers(self) -> np.ndarray:
        """The multipliers of the ratio rows T_w / U_w <= z of the last optimal LP, (W,): the regret
        rows' duals by magnitude, times U_w (each row is its ratio row times U_w / 1e6)."""
        return np.abs(self.core.solver.row_duals()[self.rows]) * self.optima


def _steering(instance: Instance, U: np.ndarray, time_limit_s: float) -> RegretLP | None:
    """The portfolio LP, or None when HiGHS fails while setting it up (the loops then certify with
    equal multipliers: an honest answer without the LP's steering).

    Raises:
        NoSolutionError: infeasible rows or budget, or no upper limit on a loaded bandwidth.
"""
    try:
        return RegretLP.build(instance, U, time_limit_s)
    except SolverError:
        return None


def _ratio_of(instance: Instance, U: np.ndarray):
    """bw -> max_w T_w(bw) / U_w (inf when a loaded dimension has no bandwidth)."""
    tms = job_time_models(instance)

    def ratio(bw: np.ndarray) -> float:
        with np.errstate(divide="ignore"):
            return max(slowdown_ratio(tm.time_ns(bw), u) for tm, u in zip(tms, U, strict=True))

    return ratio


def _loaded(instance: Instance) -> bool:
    """Whether any workload puts bytes on a dimension (else every design gives every workload the
    same time)."""
    return any(tm.carries_traffic.any() for tm in job_time_models(instance))


def _uppers(optima: list[OAResult]) -> np.ndarray:
    return np.array([r.upper for r in optima])


def _honest(res: OAResult, optima: list[OAResult], ratio: bool) -> OAResult:
    """``res`` as LIMIT when an own optimum is not certified: its message says by how much; for the
    min-max ratio the bound is scaled by min_w L_w / U_w (the ratio to T_w* in [L_w, U_w] may be
    that much lower)."""
    short = [(w, r.gap) for w, r in enumerate(optima) if r.status is not Status.OPTIMAL]
    if not short:
        return res
    w, g = max(short, key=lambda item: item[1])
    share = min(max(r.lower, 0.0) / r.upper if r.upper > 0 else 1.0 for r in optima)
    lower = res.lower * share if ratio else res.lower
    gap = (res.upper - lower) / res.upper if res.upper > 0 else INF
    why = (f"stopped at proven relative gap {gap:.3g}: the own optimum of workload {w} is proven "
           f"only to a gap of {g:.3g}")
    return replace(res, status=Status.LIMIT, lower=lower, message=why)


CHECKS = 3
"""Certificates (mix solves) a portfolio loop tries before it stops with status LIMIT and the gap it
proved."""


@dataclass
class _Search:
    """The state of one portfolio loop: the best design and its value, the proven bound, the LP's
    own value."""

    best: np.ndarray | None = None
    upper: float = INF
    lower: float = -INF
    lp_lower: float = -INF
    stall: int = 0
    checks: int = 0
    last: np.ndarray | None = None

    def fresh(self, lam: np.ndarray | None) -> bool:
        """Whether the multipliers ``lam`` differ from the last certified ones (counts a check
        either way)."""
        self.checks += 1
        new = self.last is None or lam is None or not np.array_equal(lam, self.last)
        self.last = lam
        return new

    def offer(self, bw: np.ndarray | None, value: float) -> None:
        if bw is not None and value < self.upper:
            self.best, self.upper = bw, value

    def lp_value(self, value: float) -> None:
        self.stall = 0 if value > self.lp_lower + 1e-12 * abs(self.lp_lower) else self.stall + 1
        self.lp_lower = max(self.lp_lower, value)

    def closed(self, rel_gap: float) -> bool:
        return self.best is not None and self.upper - self.lower <= rel_gap * self.upper

    def due(self, rel_gap: float) -> bool:
        """Whether the LP's own gap is small enough (or stalled) to try a certificate."""
        target = rel_gap / 4 * 10.0 ** -self.checks
        return self.best is not None and (self.upper - self.lp_lower <= target * self.upper
                                          or self.stall >= STALL_ROUNDS)

    def result(self, it: int, rel_gap: float) -> OAResult:
        """OPTIMAL when the proven gap meets ``rel_gap``, else LIMIT with that gap.

        Raises:
            NoSolutionError: no design with a finite time was found.
        """
        if self.best is None or not np.isfinite(self.upper):
            raise NoSolutionError("infeasible", "no bandwidth vector gives every workload a finite "
                                  "iteration time")
        if self.closed(rel_gap):
            return OAResult(Status.OPTIMAL, self.best, self.upper, self.lower, it,
                            "optimal within the gap target")
        gap = (self.upper - self.lower) / self.upper
        return OAResult(Status.LIMIT, self.best, self.upper, self.lower, it,
                        f"stopped after {it} LPs at proven relative gap {gap:.3g}")

    def again(self, lam: np.ndarray | None, rel_gap: float) -> bool:
        """Whether a loop that ended (LP failure, iteration limit) should try one more
        certificate."""
        return not self.checks or (lam is not None and not self.closed(rel_gap)
                                   and self.checks < CHECKS and self.stall < STALL_ROUNDS)


def min_max_regret(instance: Instance, optima: list[OAResult], rel_gap: float = REL_GAP,
                   time_limit_s: float = 60.0, max_iterations: int = 500) -> OAResult:
    """min_B max_w T_w(B) / U_w (module docstring); ``upper`` / ``lower`` are ratios (1 = every
    workload at its own optimum). The LP's points are the candidates; every bound is a certificate
    of :func:`hieropt.solvers.regret_bound.regret_bound` (the main loop on a weighted mix). A
    portfolio LP that fails (HiGHS 'Unknown' on every retry) ends the loop with the certificates so
    far (LIMIT, honest gap).

    Raises:
        NoSolutionError: infeasible rows or budget.
"""
    U = _uppers(optima)
    s = _Search()
    it = 0
    if not _loaded(instance):  # no collective traffic: every design is each workload's own optimum
        bw = optima[0].bw
        z = _ratio_of(instance, U)(bw)
        res = OAResult(Status.OPTIMAL, bw, z, z, 0, "no collective traffic")
        return _honest(res, optima, ratio=True)
    rl = _steering(instance, U, time_limit_s)
    ratio = _ratio_of(instance, U)
    lam = None

    def certify() -> None:
        if not s.fresh(lam):
            return
        weights = np.ones(U.size) if lam is None else lam
        cert = regret_bound(instance, weights, U, rel_gap / 4, time_limit_s)
        s.lower = max(s.lower, cert.lower)
        if cert.bw is not None:
            s.offer(cert.bw, ratio(cert.bw))

    if rl is None:
        certify()
        return _honest(s.result(it, rel_gap), optima, ratio=True)
    costs = np.zeros(rl.core.solver.objective_costs().size)
    costs[rl.z_col] = 1.0
    for it in range(1, max_iterations + 1):  # noqa: B007 - (the LPs solved, reported)
        r = rl.core.solve_costs(costs)
        if r.status is not Status.OPTIMAL:
            break
        s.lp_value(r.objective)
        lam = rl.multipliers()
        bw = rl.core.bandwidth(r.x)
        s.offer(bw, ratio(bw))
        if s.due(rel_gap):
            certify()
            if s.closed(rel_gap) or s.checks >= CHECKS or s.stall >= STALL_ROUNDS:
                break
        rl.core.cut_at(r.x)
    if s.again(lam, rel_gap):
        certify()
    return _honest(s.result(it, rel_gap), optima, ratio=True)


def min_cost_within_regret(instance: Instance, optima: list[OAResult], max_regret: float, regret: OAResult,
                           rel_gap: float = REL_GAP, time_limit_s: float = 60.0,
                           max_iterations: int = 500) -> OAResult:
    """The cheapest network with T_w(B) <= (1 + ``max_regret``) U_w for every workload (module
    docstring); ``regret`` is the min-max-regret optimum (its point meets every target when z* <= 1
    + max_regret). The LP's points, moved into the targets, are the candidates; every bound is a
    certificate of :func:`hieropt.solvers.regret_bound.regret_cost_bound` (the main loop's min cost
    on a surrogate mix).

    Raises:
        NoSolutionError: no fabric meets every target (z* > 1 + max_regret).
"""
    cap = 1.0 + max_regret
    if regret.lower > cap:
        raise NoSolutionError("infeasible", f"no fabric keeps every workload within {max_regret:.4g} of its own "
                              f"optimum: the best any fabric does is within {regret.upper - 1:.4g} (min-max regret)")
    if regret.upper > cap:
        raise NoSolutionError("infeasible", f"max_regret {max_regret:.4g} is within the optimality gap of the best "
                              f"achievable {regret.upper - 1:.6g}; allow a slightly larger regret")
    U = _uppers(optima)
    s = _Search()
    it = 0
    lam = None
    rl = _steering(instance, U, time_limit_s) if _loaded(instance) else None
    ratio = _ratio_of(instance, U)

    def certify() -> None:
        if not s.fresh(lam):
            return
        weights = np.ones(U.size) if lam is None else lam
        cert = regret_cost_bound(instance, weights, U, cap, rel_gap / 4, time_limit_s)
        s.lower = max(s.lower, cert.lower)
        if cert.bw is not None and ratio(cert.bw) <= cap:
            s.offer(cert.bw, network_cost(instance, cert.bw))

    s.offer(regret.bw, network_cost(instance, regret.bw))
    if rl is None:  # no collective traffic (every design meets every target), or no steering LP
        certify()
        return _honest(s.result(it, rel_gap), optima, ratio=False)
    core = rl.core
    core.solver.change_col_bounds(rl.z_col, cap, cap)
    for it in range(1, max_iterations + 1):  # noqa: B007 - (the LPs solved, reported)
        r = core.solve_costs(core.cost_costs)
        if r.status is not Status.OPTIMAL:
            break
        s.lp_value(r.objective * core.cost_unit)  # (the cost objective: units of core.cost_unit $)
        lam = rl.multipliers()
        point = _within(rl, regret.bw, core.bandwidth(r.x), cap)
        s.offer(point, network_cost(instance, point))
        if s.due(rel_gap):
            certify()
            if s.closed(rel_gap) or s.checks >= CHECKS or s.stall >= STALL_ROUNDS:
                break
        core.cut_at(r.x)
    if s.again(lam, rel_gap):
        certify()
    return _honest(s.result(it, rel_gap), optima, ratio=False)


def network_cost(instance: Instance, bw: np.ndarray) -> float:
    """cost(B) in $ of per-NPU bandwidths ``bw`` (GB/s, (D,))."""
    return float(np.dot(cluster_cost_usd_per_gbps(instance), bw))


def _within(rl: RegretLP, meets: np.ndarray, bw: np.ndarray, cap: float) -> np.ndarray:
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
