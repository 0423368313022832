"""The convex core: one persistent HiGHS LP of the time model with tangent cuts, reused by every objective.

Kelley's cutting planes (Kelley 1960, "The cutting-plane method for solving convex programs"; design.md §3): the LP
of :mod:`hieropt.formulation` relaxes t_d = 1/B_d to tangent cuts ``t_d >= 2/b - B_d/b^2``. Cuts are valid for any
budget or time target, so they accumulate across sub-solves: after the first solve, each further one (another budget
on a Pareto front, another kappa of the perf-per-cost search) needs only a few warm-started LPs.

Each round: the LP's B satisfies every linear row, so T(B) is an upper bound; the lower bound is the Lagrangian
dual function of the true problem at the LP's duals (:mod:`hieropt.solvers.dual_bound`), exact up to rounding and at
least the LP's value. New cuts go where the LP's t undercuts 1/B, at 1/t, and at the Lagrangian's own minimiser
(the optimum itself once the duals are right: the next LP is then exact there), so a solve takes 2-5 LPs.

- :meth:`TimeLP.min_time` — min T(B) s.t. design constraints [and cost <= budget]; also returns the budget row's
  multiplier, the slope of a line under the value function f(budget) (the tangent bound of the kappa search).
- :meth:`TimeLP.min_cost` — min cost(B) s.t. T(B) <= target: feasible upper bounds from the segment between the
  LP's B and a point that meets the target (T is convex, cost linear).
- :meth:`TimeLP.cost_range` — cheapest and dearest feasible network (two LPs).

Numerical safety (issue 10): the LP is scaled per dimension (:class:`hieropt.formulation.Scale`) and re-centred on
the incumbent when the optimum lies outside [1e-2, 1e2] of a unit; a failed LP is re-tried (cold, primal simplex,
interior point: :meth:`hieropt.solvers.highs.HighsLP.solve`), then re-built at a new scale; a loop that stops
improving tightens the LP tolerances, then re-scales, then stops with status LIMIT and the gap it proved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cost import unit_cost_usd_per_gbps
from ..errors import NoSolutionError, SolverError
from ..formulation import LPArrays, Scale, choose_scale, compile_perf_lp, upper_limits_gbps
from ..result import Status
from ..spec import Instance
from ..timing import TimeModel
from .dual_bound import lagrangian_bound
from .highs import TIGHT_TOLERANCE, HighsLP, LPResult
from .kkt import polish

REL_GAP = 1e-8
"""Default target relative gap."""
SEED_POINTS = np.array([0.1, 0.5, 2.0])
"""Initial tangent cuts per loaded dimension, at these multiples of the dimension's bandwidth unit."""
CUT_RANGE = (1e-5, 1e5)
"""Cuts only at scaled bandwidths in this range (coefficients 1/b^2 within 1e-10..1e10, inside HiGHS's matrix range:
a dropped coefficient would turn a cut into a false, too strong one)."""
CENTRE = (1e-2, 1e2)
"""The scale is re-centred when a loaded dimension's incumbent bandwidth leaves this range of its unit."""
MAX_RESCALES = 6
STALL_ROUNDS = 4
INF = float("inf")


@dataclass(frozen=True)
class OAResult:
    """Outcome of one cutting-plane solve.

    Attributes:
        status: OPTIMAL when the gap target was met, LIMIT otherwise.
        bw: (D,) best feasible bandwidths found, GB/s.
        upper: objective at ``bw`` (ns for time, $ for cost).
        lower: proven lower bound on the optimum (same unit).
        iterations: LPs solved.
        message: one line.
        budget_dual_ns_per_usd: slope (<= 0, ns per $) of a line under f(budget) through (budget, lp_lower_ns);
            0 when no budget row was set.
        lp_lower_ns: the anchor of that line, a proven lower bound of f at this budget, ns.
    """

    status: Status
    bw: np.ndarray
    upper: float
    lower: float
    iterations: int
    message: str
    budget_dual_ns_per_usd: float = 0.0
    lp_lower_ns: float = 0.0

    @property
    def gap(self) -> float:
        """Relative gap (upper - lower)/upper, clipped at 0."""
        return max(0.0, (self.upper - self.lower) / self.upper) if self.upper > 0 else 0.0


class _Stall:
    """Rounds without progress; asks for, in turn, tighter LP tolerances, a re-scale, and a stop."""

    def __init__(self) -> None:
        self.rounds, self.step = 0, 0

    def progress(self, improved: bool) -> str | None:
        """Record one round; returns "tighten", "rescale", "stop" or None."""
        self.rounds = 0 if improved else self.rounds + 1
        if self.rounds < STALL_ROUNDS:
            return None
        self.rounds = 0
        self.step += 1
        return ("tighten", "rescale", "stop")[min(self.step, 3) - 1]


class TimeLP:
    """The performance LP in HiGHS, its cuts, and the budget and time-target rows (owned by one solve call).

    Args:
        instance: design constraints, bounds and cost model.
        tm: the aggregated time model.
        time_limit_s: time limit of each LP, s.

    Call :meth:`close` when done (it hands the HiGHS object back for re-use; forgetting it only costs speed).
    """

    def __init__(self, instance: Instance, tm: TimeModel, time_limit_s: float = 60.0):
        self.instance, self.tm = instance, tm
        self.unit_cost = instance.network.npus_total * unit_cost_usd_per_gbps(instance)  # $ per GB/s, (D,)
        self.scale: Scale = choose_scale(instance, tm, instance.max_network_cost_usd, instance.max_iteration_time_ns)
        self.lps = 0
        self.rescales = 0
        self._budget: float | None = None
        self._target: float | None = None
        self._cut_d: list[int] = []
        self._cut_b: list[float] = []  # GB/s: cuts survive a re-scale
        self._checked = False
        self._cheapest: float | None = None
        self._ub_key: tuple | None = None
        self._ub = np.zeros(0)
        self.arr: LPArrays = compile_perf_lp(instance, tm, self.scale)
        self.lp = HighsLP(self.arr, time_limit_s)
        self._bounds()
        for d in self.loaded:
            self._add_cuts([(d, float(p * self.scale.bw_gbps[d])) for p in SEED_POINTS])

    # ----------------------------------------------------------------------------------------------- LP plumbing
    @property
    def loaded(self) -> tuple[int, ...]:
        """Dimensions that carry traffic."""
        return self.arr.loaded

    @property
    def cuts(self) -> int:
        """Tangent cuts in the LP."""
        return len(self._cut_d)

    def close(self) -> None:
        """Release the HiGHS object."""
        self.lp.close()

    def _bounds(self) -> None:
        self._row_lower = self.arr.row_lower.copy()
        self._row_upper = self.arr.row_upper.copy()

    def _rebuild(self, scale: Scale) -> None:
        """Re-build the LP in ``scale`` with every cut so far (cold: the next solve has no basis)."""
        self.scale = scale
        self.arr = compile_perf_lp(self.instance, self.tm, scale, self._budget, self._target)
        self.lp.load(self.arr)
        self._bounds()
        cuts = list(zip(self._cut_d, self._cut_b, strict=True))
        self._cut_d, self._cut_b = [], []
        self._add_cuts(cuts)
        self.rescales += 1

    def _solve(self, costs: np.ndarray, maximize: bool = False) -> LPResult:
        self.lp.set_costs(costs, maximize)
        self.lps += 1
        return self.lp.solve()

    def _set_budget(self, budget_usd: float | None) -> None:
        if budget_usd == self._budget:
            return
        self._budget = budget_usd
        hi = INF if budget_usd is None else budget_usd / self.scale.cost_usd
        self.lp.change_row_bounds(self.arr.budget_row, -INF, hi)
        self._row_upper[self.arr.budget_row] = hi

    def _set_target(self, target_ns: float | None) -> None:
        if target_ns == self._target:
            return
        self._target = target_ns
        hi = INF if target_ns is None else (target_ns - self.tm.constant_ns) / self.scale.time_ns
        self.lp.change_row_bounds(self.arr.time_row, -INF, hi)
        self._row_upper[self.arr.time_row] = hi

    def _bw_upper(self) -> np.ndarray:
        """Upper limits on every dimension's scaled B that single design rows, bounds and the budget imply."""
        key = (self._budget, id(self.arr))
        if self._ub_key != key:
            self._ub_key = key
            self._ub = upper_limits_gbps(self.instance, self._budget) / self.scale.bw_gbps
        return self._ub

    def _bw(self, x: np.ndarray) -> np.ndarray:
        """B (GB/s) from the LP's columns, with LP round-off below zero (and -0.0) clipped to 0."""
        return np.maximum(x[self.arr.b_col], 0.0) * self.scale.bw_gbps + 0.0

    def _add_cuts(self, points: list[tuple[int, float]]) -> None:
        """Tangent cuts of t_d >= 1/B_d at (d, b GB/s), skipping points outside :data:`CUT_RANGE` of d's unit."""
        b_unit, t_col = self.scale.bw_gbps, self.arr.t_col
        rows = []
        for d, b in points:
            beta = b / b_unit[d]
            if CUT_RANGE[0] <= beta <= CUT_RANGE[1] and np.isfinite(beta):
                rows.append((d, beta))
                self._cut_d.append(d)
                self._cut_b.append(float(b))
        if not rows:
            return
        d = np.array([r[0] for r in rows])
        beta = np.array([r[1] for r in rows])
        n = len(rows)
        index = np.empty(2 * n, dtype=np.int32)
        index[0::2], index[1::2] = t_col[d], self.arr.b_col[d]
        value = np.empty(2 * n)
        value[0::2], value[1::2] = 1.0, 1.0 / beta**2
        self.lp.add_rows(2.0 / beta, np.full(n, INF), np.arange(0, 2 * n, 2, dtype=np.int32), index, value)

    def _cut_points(self, x: np.ndarray, lagrange_bw: np.ndarray) -> list[tuple[int, float]]:
        """Where to cut next (GB/s): the LP's B where its t undercuts 1/B, 1/t, and the Lagrangian minimiser."""
        out = []
        unit = self.scale.bw_gbps
        for d in self.loaded:
            bh, th = x[self.arr.b_col[d]], x[self.arr.t_col[d]]
            if bh * th < 1.0 - 1e-9:
                out.append((d, max(bh, CUT_RANGE[0]) * unit[d]))
                if th > 0:
                    out.append((d, unit[d] / th))
            bl = lagrange_bw[d]
            if np.isfinite(bl) and bl > 0 and abs(bl - bh) > 1e-12 * bh:
                out.append((d, bl * unit[d]))
        return out

    def _centre(self, bw: np.ndarray | None, force: bool = False) -> bool:
        """Re-centre the scale on ``bw`` (GB/s) when a loaded dimension is outside :data:`CENTRE` (or ``force``)."""
        if bw is None or self.rescales >= MAX_RESCALES or not self.loaded:
            return False
        loaded = np.array(self.loaded)
        ratio = bw[loaded] / self.scale.bw_gbps[loaded]
        ratio = ratio[ratio > 0]
        if not force and (ratio.size == 0 or (ratio.min() >= CENTRE[0] and ratio.max() <= CENTRE[1])):
            return False
        self._rebuild(self.scale.rescaled(self.tm, self.unit_cost, bw))
        return True

    def _infeasible(self, what: str) -> NoSolutionError:
        texts = "; ".join(c.text for c in self.instance.constraints) or "(no constraints)"
        return NoSolutionError("infeasible", f"{what} cannot all hold: {texts}")

    # ----------------------------------------------------------------------------------------------- set-up checks
    def _check(self) -> None:
        """Once: whether the design constraints bound every loaded dimension (else a budget must). A single row or
        bound that limits each loaded dimension alone decides it without an LP; otherwise one LP (max sum of the
        loaded bandwidths) does, and tells infeasible constraints apart."""
        if self._checked:
            return
        self._checked = True
        loaded = list(self.loaded)
        limits = upper_limits_gbps(self.instance)[loaded]
        if loaded and np.all(np.isfinite(limits)) and np.all(limits > 0):
            self.bounded, self.reach_gbps = True, float(limits.sum())
            return
        budget, target = self._budget, self._target
        self._set_budget(None)
        self._set_target(None)
        costs = np.zeros(self.arr.n_cols)
        costs[self.arr.b_col[loaded]] = self.scale.bw_gbps[loaded]
        res = self._solve(costs if loaded else self.arr.cost_costs, maximize=True)
        if res.status is Status.INFEASIBLE or res.status is Status.ERROR:
            check = self._solve(self.arr.cost_costs)  # bounded below by 0: not optimal means infeasible
            if check.status is not Status.OPTIMAL:
                raise self._infeasible("the design constraints and bounds")
        self.bounded = res.status is Status.OPTIMAL
        self.reach_gbps = res.objective if self.bounded else INF
        self._set_budget(budget)
        self._set_target(target)

    def _require(self, budget_usd: float | None) -> None:
        """Raise NoSolutionError unless the rows (with ``budget_usd``) admit a solution with finite bandwidth."""
        self._check()
        if budget_usd is not None:  # (an unknown cheapest network is found when the first LP is infeasible)
            if self._cheapest is not None and budget_usd < self._cheapest * (1 - 1e-12):
                raise NoSolutionError("infeasible", f"the budget ${budget_usd:,.6g} is below the cheapest network the "
                                      f"design constraints allow, ${self._cheapest:,.6g}")
        elif not self.bounded and self.loaded:
            dims = ", ".join(f"bw[{d}]" for d in self.loaded)
            raise NoSolutionError("unbounded", f"add a bandwidth budget: the constraints put no upper limit on the "
                                  f"bandwidth of the dimensions that carry traffic ({dims}), so the iteration time "
                                  f"has no minimum; e.g. --constraint 'sum(bw) == 500'")
        if self.loaded and self.reach_gbps <= 0:
            raise NoSolutionError("infeasible", "the design constraints force zero bandwidth on every dimension that "
                                  "carries traffic")

    def cost_range(self) -> tuple[float, float]:
        """(cheapest, dearest) feasible network cost in $ (dearest may be inf), without budget or time rows.

        Raises:
            NoSolutionError: the design constraints are infeasible.
        """
        budget, target = self._budget, self._target
        self._set_budget(None)
        self._set_target(None)
        lo = self._solve(self.arr.cost_costs)
        if lo.status is not Status.OPTIMAL:
            raise self._infeasible("the design constraints and bounds")
        hi = self._solve(self.arr.cost_costs, maximize=True)
        self._set_budget(budget)
        self._set_target(target)
        self._cheapest = self.network_cost(self._bw(lo.x))
        return self._cheapest, (self.network_cost(self._bw(hi.x)) if hi.status is Status.OPTIMAL else INF)

    def _diagnose_infeasible(self) -> None:
        """The first LP of a loop is infeasible (cuts are always satisfiable, so the rows are): raise the reason when
        the design rows or the budget are; return when they are not (a numerical failure, handled by the caller)."""
        budget = self._budget
        self.cost_range()  # raises when the design rows alone are infeasible
        if budget is not None and budget < self._cheapest * (1 - 1e-12):
            raise NoSolutionError("infeasible", f"the budget ${budget:,.6g} is below the cheapest network the "
                                  f"design constraints allow, ${self._cheapest:,.6g}")

    def _forced_zero(self, d: int) -> bool:
        costs = np.zeros(self.arr.n_cols)
        costs[self.arr.b_col[d]] = 1.0
        res = self._solve(costs, maximize=True)
        return res.status is Status.OPTIMAL and res.objective <= 1e-12

    def network_cost(self, bw: np.ndarray) -> float:
        """cost(B) in $ for per-NPU bandwidths ``bw`` (GB/s, shape (D,))."""
        return float(np.dot(self.unit_cost, bw))

    # ----------------------------------------------------------------------------------------------- objectives
    def min_time(self, rel_gap: float = REL_GAP, budget_usd: float | None = None,
                 max_iterations: int = 500) -> OAResult:
        """Minimise T(B) (ns) under the design constraints and, if given, cost(B) <= ``budget_usd``.

        Raises:
            NoSolutionError: infeasible (constraints or budget), a loaded dimension forced to zero bandwidth, or no
                upper limit on the bandwidth of a loaded dimension.
            SolverError: HiGHS failed on every retry before any feasible point was found.
        """
        tm = self.tm
        self._require(budget_usd)
        self._set_target(None)
        self._set_budget(budget_usd)
        if not self.loaded:
            res = self._solve(self.arr.time_costs)
            if res.status is not Status.OPTIMAL:
                raise SolverError(f"HiGHS stopped with '{res.termination}'")
            bw = self._bw(res.x)
            T = tm.time_ns(bw)  # does not depend on bandwidth (latency-only collectives and max nodes included)
            return OAResult(Status.OPTIMAL, bw, T, T, 1, "no collective traffic")

        def point(bw: np.ndarray) -> tuple[float, np.ndarray]:
            return tm.time_ns(bw), bw

        out = self._loop(self.arr.time_costs, lambda v: tm.constant_ns + v * self.scale.time_ns, point, None,
                         rel_gap, max_iterations, budget_usd is not None)
        if out.bw is None:
            raise NoSolutionError("infeasible", f"no bandwidth vector with a finite iteration time was found in "
                                  f"{out.iterations} LPs: the constraints{' and the budget' if budget_usd else ''} "
                                  "leave a dimension that carries traffic with (almost) no bandwidth")
        return out

    def _loop(self, costs: np.ndarray, native, point, start: np.ndarray | None, rel_gap: float,
              max_iterations: int, budget: bool) -> OAResult:
        """The cutting-plane loop shared by the objectives: ``costs`` the scaled objective, ``native(v)`` a scaled
        bound in the objective's unit, ``point(bw)`` the (objective value, feasible point) an LP's bandwidths give,
        ``start`` an initial feasible point (or None)."""
        best_bw, upper, lower, anchor = start, INF, -INF, (-INF, 0.0)
        if start is not None:
            upper = point(start)[0]
        stall = _Stall()
        it = 0

        def bounds(duals: np.ndarray) -> tuple[bool, np.ndarray]:
            nonlocal lower, anchor
            db = lagrangian_bound(self.arr, costs, duals, self._row_lower, self._row_upper, self._bw_upper())
            lb = native(db.value)
            better = lb > lower + 1e-13 * abs(lower)
            if lb > lower:
                lower = lb
                slope = db.budget_multiplier * self.scale.time_ns / self.scale.cost_usd if budget else 0.0
                anchor = (lb, min(slope, 0.0))
            return better, db.bw

        def offer(bw: np.ndarray) -> bool:
            nonlocal best_bw, upper
            value, pt = point(bw)
            if value < upper:
                better = value < upper * (1 - 1e-13)
                best_bw, upper = pt, value
                return better
            return False

        def done() -> bool:
            return best_bw is not None and upper - lower <= rel_gap * upper

        for it in range(1, max_iterations + 1):
            res = self._solve(costs)
            if res.status is Status.INFEASIBLE and best_bw is None and it == 1:
                self._diagnose_infeasible()
            if res.status is not Status.OPTIMAL:
                if self._centre(best_bw if best_bw is not None else self.scale.bw_gbps, force=True):
                    continue
                if best_bw is None:
                    raise SolverError(f"HiGHS stopped on cutting-plane LP {it} with '{res.termination}' on every "
                                      "retry")
                break
            improved = offer(self._bw(res.x))
            duals = self.lp.row_duals()
            better, lagrange_bw = bounds(duals)
            improved = improved or better
            if done():
                break
            points = self._cut_points(res.x, lagrange_bw)
            pol = polish(self.arr, costs, res.x, duals, self._row_lower, self._row_upper)
            if pol is not None:
                improved = offer(self._bw(pol.x)) or improved
                improved = bounds(pol.duals)[0] or improved
                if done():
                    break
                bp = pol.x[self.arr.b_col]
                points += [(d, bp[d] * self.scale.bw_gbps[d]) for d in self.loaded if bp[d] > 0]
            if best_bw is None:
                bw = self._bw(res.x)
                for d in self.loaded:
                    if bw[d] <= 0 and self._forced_zero(d):
                        raise NoSolutionError("infeasible", f"dimension {d} carries traffic but the design "
                                              f"constraints {'and the budget ' if budget else ''}force bw[{d}] = 0")
            self._add_cuts(points)
            if self._centre(best_bw):
                continue
            action = stall.progress(improved)
            if action == "tighten":
                self.lp.set_tolerance(TIGHT_TOLERANCE)
            elif action == "rescale":
                self._centre(best_bw, force=True)
            elif action == "stop":
                break
        if done():
            return OAResult(Status.OPTIMAL, best_bw, upper, lower, it, "optimal within the gap target",
                            budget_dual_ns_per_usd=anchor[1], lp_lower_ns=anchor[0])
        return OAResult(Status.LIMIT, best_bw, upper, lower, it, _limit_message(it, upper, lower, max_iterations),
                        budget_dual_ns_per_usd=anchor[1], lp_lower_ns=anchor[0])

    def min_cost(self, target_ns: float, meets: np.ndarray, rel_gap: float = REL_GAP,
                 budget_usd: float | None = None, max_iterations: int = 500) -> OAResult:
        """Minimise cost(B) ($) s.t. T(B) <= ``target_ns`` and the design constraints.

        Args:
            target_ns: the iteration-time target, ns.
            meets: (D,) a feasible point with T(meets) <= target_ns (e.g. the performance optimum): the segment from
                it to the LP's B gives the feasible upper bounds.
            rel_gap: target relative gap on the cost.
            budget_usd: optional cost cap (an infeasibility check only).
        """
        tm = self.tm
        t_meets = tm.time_ns(meets)
        if t_meets > target_ns:
            raise ValueError("min_cost needs a point that meets the target")
        self._require(budget_usd)
        self._set_budget(budget_usd)
        self._set_target(target_ns)

        def point(bw: np.ndarray) -> tuple[float, np.ndarray]:
            pt = self._meet_target(bw, meets, t_meets, target_ns)
            return self.network_cost(pt), pt

        try:
            return self._loop(self.arr.cost_costs, lambda v: v * self.scale.cost_usd, point, meets, rel_gap,
                              max_iterations, False)
        finally:
            self._set_target(None)

    def _meet_target(self, bw: np.ndarray, meets: np.ndarray, t_meets: float, target_ns: float) -> np.ndarray:
        """The point of the segment [meets, bw] nearest ``bw`` with T <= target (bisection; T is convex)."""
        t_bw = self.tm.time_ns(bw)
        if t_bw <= target_ns:
            return bw
        lo = (target_ns - t_meets) / (t_bw - t_meets) if np.isfinite(t_bw) else 0.0  # feasible by convexity
        hi = 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if self.tm.time_ns(meets + mid * (bw - meets)) <= target_ns:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 1e-15:
                break
        return meets + lo * (bw - meets)


def _limit_message(lps: int, upper: float, lower: float, max_iterations: int) -> str:
    gap = (upper - lower) / upper if upper > 0 else 0.0
    why = "iteration limit" if lps >= max_iterations else "no further progress at the LP tolerance floor"
    return f"stopped after {lps} LPs at proven relative gap {gap:.3g} ({why})"


def minimize_time(instance: Instance, tm: TimeModel, rel_gap: float = REL_GAP, max_iterations: int = 500,
                  time_limit_s: float = 60.0) -> OAResult:
    """Minimise the iteration time T(B) (ns) of ``tm`` under the instance's design constraints (one-shot helper).

    Raises:
        NoSolutionError: infeasible constraints, a loaded dimension forced to zero bandwidth, or unbounded bandwidth.
        SolverError: HiGHS failed.
    """
    core = TimeLP(instance, tm, time_limit_s)
    try:
        return core.min_time(rel_gap, max_iterations=max_iterations)
    finally:
        core.close()
