"""Portfolios of workloads on one fabric: own optima T_w* (proven in [L_w, U_w], U_w used), min-max
regret (min z s.t. T_w(B) <= z U_w) and its target form (``min_cost`` with ``max_regret`` = x: z = 1
+ x), on the portfolio LP (:mod:`hieropt.formulation.portfolio`) and the loop of
:class:`hieropt.solvers.cut_lp.CutLP`; docs/procurement-design.md §2."""

from __future__ import annotations

from contextlib import closing
from dataclasses import replace

import numpy as np

from ..errors import InputError, NoSolutionError
from ..formulation.arrays import LPArrays, read_only
from ..formulation.portfolio import compile_regret_lp, stack_time_models
from ..model.terms import TimeModel
from ..model.timing import evaluate, job_time_models
from ..result import Portfolio, Status, slowdown_ratio
from ..spec import Instance
from .cut_lp import Loop
from .cutting import INF, REL_GAP, OAResult, TimeLP
from .line_search import segment_point, within_rows

__all__ = ["RegretLP", "hours_weighted", "max_ratio", "min_cost_within_regret", "min_max_regret",
           "own_optima", "portfolio_of", "single_job"]


def single_job(instance: Instance, w: int) -> Instance:
    """``instance`` with only its workload ``w`` (weight 1)."""
    job = instance.jobs[w]
    return instance.model_copy(update={
        "workload": job.workload, "mapping": job.mapping, "workload_weight": 1.0,
        "more_workloads": (), "objective": "performance", "max_regret": None,
        "max_iteration_time_ns": None, "weights": "plain"})


def own_optima(instance: Instance, rel_gap: float = REL_GAP, time_limit_s: float = 60.0, *,
               within_budget: bool = True) -> list[OAResult]:
    """T_w* of every workload under the rows and bounds, and the budget when ``within_budget``
    (never a time target); a solve short of its gap is kept, LIMIT.

    Raises:
        NoSolutionError: a workload has no optimum (infeasible or unbounded constraints)."""
    budget = instance.max_network_cost_usd if within_budget else None
    alone = instance.model_copy(update={"max_network_cost_usd": budget})
    out = []
    for w, tm in enumerate(job_time_models(alone)):
        with closing(TimeLP(single_job(alone, w), tm, time_limit_s)) as core:
            out.append(core.min_time(rel_gap, budget_usd=budget))
    return out


def hours_weighted(instance: Instance,
                   time_limit_s: float = 60.0) -> tuple[Instance, tuple[str, ...]]:
    """The one definition of a portfolio's objective with shares of hours (``[[workloads]]
    hours_share``), called first by every command: ``instance`` with each share h_w turned into the
    weight h_w / T_w* (1/ns; :func:`own_optima` without the budget), weights ``"relative"``, and a
    note; ``instance`` and no note when its weights are not shares. The weighted time is then the
    hour-weighted relative iteration time (:data:`hieropt.units.RELATIVE_UNIT`).

    Raises:
        InputError: a time target in ns is given too.
        NoSolutionError, SolverError: a workload has no certified own optimum."""
    if instance.weights != "hours":
        return instance, ()
    if instance.max_iteration_time_ns is not None:
        raise InputError(
            "max_iteration_time_ns", None,
            "a time target in ns is given for workloads weighted by hours_share, whose weighted "
            "time is a ratio to their own optima, not ns",
            "give max_regret (each workload within that fraction of its own optimum), or weights "
            "instead of hours_share")
    optima = [r.upper for r in own_optima(instance, REL_GAP, time_limit_s, within_budget=False)]
    shares = [j.weight for j in instance.jobs]
    w = [h / t for h, t in zip(shares, optima, strict=True)]
    more = tuple(j.model_copy(update={"weight": wj})
                 for j, wj in zip(instance.more_workloads, w[1:], strict=True))
    out = instance.model_copy(update={"workload_weight": w[0], "more_workloads": more,
                                      "weights": "relative"})
    each = ", ".join(f"{j.workload.name} {h:.4g} / {t:,.1f} ns = {wj:.6g}"
                     for j, h, t, wj in zip(instance.jobs, shares, optima, w, strict=True))
    note = (f"weights from shares of hours: {each} (share / own optimum: the weighted time is the "
            "hour-weighted relative iteration time, a ratio, 1 when every workload runs at its own "
            "optimum)")
    return out, (note,)


def portfolio_of(instance: Instance, bw: np.ndarray, optima: list[OAResult],
                 max_regret: float | None = None, within_budget: bool = True) -> Portfolio:
    """Each workload's time (ns, by the evaluator) on ``bw`` ((D,) GB/s) against its own optimum
    ``optima`` (:func:`own_optima` with ``within_budget``), with the ``max_regret`` asked (a
    fraction)."""
    jobs = instance.jobs
    times = tuple(evaluate(single_job(instance, w), bw).iteration_time_ns for w in range(len(jobs)))
    return Portfolio(names=tuple(j.workload.name for j in jobs),
                     weights=tuple(j.weight for j in jobs), times_ns=times,
                     own_optima_ns=tuple(r.upper for r in optima),
                     own_bounds_ns=tuple(max(r.lower, 0.0) for r in optima),
                     max_regret=max_regret, optima_within_budget=within_budget)


def max_ratio(tms: list[TimeModel], optima_ns: np.ndarray, bw: np.ndarray) -> float:
    """max_w T_w(bw) / U_w for ``tms``, own optima ``optima_ns`` (ns) and ``bw`` ((D,) GB/s); inf
    when a loaded dimension has no bandwidth."""
    with np.errstate(divide="ignore"):
        return max(slowdown_ratio(tm.time_ns(bw), u) for tm, u in zip(tms, optima_ns, strict=True))


def _honest(res: OAResult, optima: list[OAResult], ratio: bool) -> OAResult:
    """``res`` as LIMIT when an own optimum is not certified; for the ratio the bound scaled by
    min_w L_w / U_w."""
    short = [(w, r.gap) for w, r in enumerate(optima) if r.status is not Status.OPTIMAL]
    if not short:
        return res
    w, g = max(short, key=lambda item: item[1])
    share = min(max(r.lower, 0.0) / r.upper if r.upper > 0 else 1.0 for r in optima)
    out = replace(res, lower=res.lower * share if ratio else res.lower)
    # (never settled as optimal: a gap is >= 0)
    return out.settled(-1.0, f"the own optimum of workload {w} is proven only to a gap of {g:.3g}")


class RegretLP(TimeLP):
    """The portfolio LP (:func:`hieropt.formulation.portfolio.compile_regret_lp`) on the loop of
    :class:`hieropt.solvers.cut_lp.CutLP`.

    Args:
        instance: the portfolio (its rows, bounds and budget); optima_ns: (W,) U_w, ns.
        time_limit_s: time limit of each LP, s; z_bounds: the bounds of z ((cap, cap) for the
            target form)."""

    def __init__(self, instance: Instance, optima_ns: np.ndarray, time_limit_s: float,
                 z_bounds: tuple[float, float] = (0.0, INF)):
        self.tms = job_time_models(instance)
        self.optima = np.asarray(optima_ns, dtype=float)
        self.z_bounds = z_bounds
        self.z_cap = INF  # the best ratio found: z* is no larger (a valid box for the bound)
        super().__init__(instance, stack_time_models(self.tms), time_limit_s)

    def _compile(self, scale) -> LPArrays:
        self.regret = compile_regret_lp(self.instance, self.tms, self.optima, scale, self.z_bounds)
        return read_only(self.regret.arr)

    def _col_upper(self) -> np.ndarray:
        ub = super()._col_upper()
        if self.z_cap < INF:
            ub = ub.copy()
            ub[self.regret.z_col] = min(ub[self.regret.z_col], self.z_cap)
        return ub

    def ratio(self, bw: np.ndarray) -> float:
        """:func:`max_ratio` of this portfolio at ``bw`` (GB/s)."""
        return max_ratio(self.tms, self.optima, bw)

    def ratios(self, bws: np.ndarray) -> np.ndarray:
        """:meth:`ratio` of each design of ``bws`` ((S, D) GB/s): (S,)."""
        times = [tm.times_ns(bws) for tm in self.tms]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.max([np.where(u > 0, t / u, np.where(t <= 0, 1.0, INF))
                           for t, u in zip(times, self.optima, strict=True)], axis=0)

    def _ready(self) -> float | None:
        budget = self.instance.max_network_cost_usd
        self._require(budget)
        self._set_target(None)
        self._set_budget(budget)
        return budget

    def min_ratio(self, start: np.ndarray, rel_gap: float) -> OAResult:
        """min z: the design minimising max_w T_w(B) / U_w, from the feasible design ``start``."""
        self._ready()

        def score(bw: np.ndarray) -> float:
            z = self.ratio(bw)
            self.z_cap = min(self.z_cap, z)
            return z

        spec = Loop(costs=lambda: self.regret.z_costs, native=float,
                    candidates=lambda x: self._within_budget(self._bw(x)), score=score, start=start,
                    on_empty=self._diagnose_empty)
        return self._loop(spec, rel_gap)

    def min_cost_within(self, meets: np.ndarray, rel_gap: float) -> OAResult:
        """The cheapest design with every ratio within z's fixed bound, from ``meets`` (meets it,
        the rows and bounds): the LP's points moved inside (:meth:`_inside`) and towards
        ``meets`` (:func:`hieropt.solvers.line_search.segment_point`)."""
        budget = self._ready()
        cap, r_meets = self.z_bounds[1], self.ratio(meets)

        def moves(x: np.ndarray, best: list) -> list[np.ndarray]:
            bw = self._inside(self._bw(x), meets)
            return [segment_point(self.ratio, self.ratios, bw, meets, self.ratio(bw), r_meets, cap)]

        return self._cheapest_loop(meets, budget, moves, lambda bw: self.ratio(bw) <= cap, rel_gap,
                              lambda bw: self.network_cost(bw) if self.ratio(bw) <= cap else INF)

    def _inside(self, bw: np.ndarray, meets: np.ndarray) -> np.ndarray:
        """An LP's ``bw`` ((D,) GB/s) clipped into the bounds, then moved towards ``meets`` into the
        rows (:func:`hieropt.solvers.line_search.within_rows`)."""
        dm = self.instance.design_matrix
        return within_rows(self.instance, np.minimum(np.maximum(bw, dm.bw_lower), dm.bw_upper),
                           meets)

def min_max_regret(instance: Instance, optima: list[OAResult], rel_gap: float = REL_GAP,
                   time_limit_s: float = 60.0) -> OAResult:
    """min_B max_w T_w(B) / U_w (ratios: 1 = every workload at its own optimum).

    Raises:
        NoSolutionError: infeasible rows or budget.
        SolverError: every LP failed."""
    U, tms = np.array([r.upper for r in optima]), job_time_models(instance)
    # each own optimum meets the rows and the budget, and so does their mean (no dimension starved)
    starts = [r.bw for r in optima] + [np.mean([r.bw for r in optima], axis=0)]
    start = min(starts, key=lambda bw: max_ratio(tms, U, bw))
    if not any(tm.carries_traffic.any() for tm in tms):
        # no collective traffic: every design gives every workload its own optimum
        z = max_ratio(tms, U, start)
        res = OAResult(Status.OPTIMAL, start, z, z, 0, "no collective traffic")
        return _honest(res, optima, ratio=True)
    with closing(RegretLP(instance, U, time_limit_s)) as core:
        res = core.min_ratio(start, rel_gap)
    return _honest(res, optima, ratio=True)


def min_cost_within_regret(instance: Instance, optima: list[OAResult], max_regret: float,
                           regret: OAResult, rel_gap: float = REL_GAP,
                           time_limit_s: float = 60.0) -> OAResult:
    """The cheapest network with T_w(B) <= (1 + ``max_regret``) U_w for every workload, from the
    min-max-regret optimum ``regret``.

    Raises:
        NoSolutionError: no fabric meets every target."""
    cap = 1.0 + max_regret
    if regret.lower > cap:
        raise NoSolutionError("infeasible", (
            f"no fabric keeps every workload within {max_regret:.4g} of its own optimum: the best "
            f"any fabric does is within {regret.upper - 1:.4g} (min-max regret)"))
    if regret.upper > cap:
        raise NoSolutionError("infeasible", (
            f"max_regret {max_regret:.4g} is within the optimality gap of the best achievable "
            f"{regret.upper - 1:.6g}; allow a slightly larger regret"))
    uppers = [r.upper for r in optima]
    with closing(RegretLP(instance, uppers, time_limit_s, z_bounds=(cap, cap))) as core:
        res = core.min_cost_within(regret.bw, rel_gap)
    return _honest(res, optima, ratio=False)
