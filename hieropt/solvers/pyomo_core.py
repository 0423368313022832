"""The performance LP as a Pyomo model in HiGHS, for solvers that extend it with Pyomo rows of their own.

:class:`PyomoTimeLP` is the cutting-plane loop of :mod:`hieropt.solvers.cutting` on the Pyomo statement of
:mod:`hieropt.formulation.lp` (uniform bandwidth unit, MB / ms / M$), kept for the portfolio objectives (their
regret rows are Pyomo blocks added before HiGHS sees the model: ``extend``) and the sensitivity analysis (which
reads duals and ranging in these units). Every other solve uses the array core :class:`hieropt.solvers.cutting.TimeLP`
(faster, per-dimension scaling, rigorous Lagrangian bounds).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import NoSolutionError, SolverError
from ..formulation.lp import MS_NS, MUSD, PerfLP, build_perf_lp
from ..formulation.scale import upper_limits_gbps
from ..model.timing import TimeModel
from ..result import Status
from ..spec import Instance
from .cost_range import unlimited_dimensions
from .cutting import INF, REL_GAP, OAResult
from .highs import TIGHT_TOLERANCE
from .highs_pyomo import PersistentHighs
from .line_search import meet_target

SEED_CUTS = 8
"""Initial tangent cuts per loaded dimension, on a geometric grid over the reachable bandwidth range."""


class _Stall:
    """Detects a cutting-plane loop that no longer progresses (the LP tolerances'
    floor): after 6 rounds without a better bound it tightens HiGHS's tolerances to 1e-10 once; after 6 more it asks
    the loop to stop (status LIMIT, with the proven gap reached)."""

    def __init__(self, solver: PersistentHighs):
        self.solver, self.rounds, self.tightened = solver, 0, False

    def check(self, value: float, best: float, cuts: int) -> bool:
        if value > best + 1e-12 * abs(best):
            self.rounds = 0
            return False
        self.rounds += 1
        if self.rounds < 6:
            return False
        if not self.tightened:
            self.solver.set_tolerance(TIGHT_TOLERANCE)
            self.tightened, self.rounds = True, 0
            return False
        return True

    def message(self, lps: int, gap: float) -> str:
        """Why the loop stopped short of its gap target."""
        why = "no further progress at the LP tolerance floor" if self.rounds >= 6 else "iteration limit"
        return f"stopped after {lps} LPs at proven relative gap {gap:.3g} ({why})"


class PyomoTimeLP:
    """The performance LP in HiGHS, its cuts, and the budget and time-target rows (owned by one solve call).

    Args:
        instance: design constraints, bounds and cost model.
        tm: the aggregated time model.
        time_limit_s: time limit of each LP, s.
        bw_scale: the LP's unit of bandwidth, GB/s (default: from the instance's limits).

    Raises:
        NoSolutionError: the design constraints are infeasible (checked here, once).
    """

    def __init__(self, instance: Instance, tm: TimeModel, time_limit_s: float = 60.0, bw_scale: float | None = None,
                 extend: Callable[[PerfLP], None] | None = None):
        self.instance, self.tm = instance, tm
        self.lp: PerfLP = build_perf_lp(instance, tm, bw_scale)
        if extend is not None:  # further rows and variables (e.g. a portfolio's epigraphs) before HiGHS sees it
            extend(self.lp)
        self.solver = PersistentHighs(self.lp.model, time_limit_s)
        m = self.lp.model
        self.b_col = [self.solver.col(m.B[d]) for d in m.B]
        self.t_col = {d: self.solver.col(m.t[d]) for d in self.lp.loaded}
        tau_col = [self.solver.col(m.tau[k]) for k in m.tau]
        y_col = [self.solver.col(m.y[v]) for v in m.y]
        n = self.solver.objective_costs().size
        self.time_costs = np.zeros(n)  # the time objective: w_k on tau, omega_v on y (ms)
        self.time_costs[tau_col] = tm.term_weights
        self.time_costs[y_col] = tm.node_weights
        self.s = self.lp.bw_scale  # model bandwidth unit, GB/s: B = s * B_model, t = t_model / s
        # cost row and min-cost objective in units of cost_unit $, so that the largest coefficient is 1: in fixed
        # units (M$) prices x bandwidth of a few $ give coefficients below HiGHS's 1e-9 matrix and dual tolerances,
        # which then drop the budget row or stop the simplex at a vertex that is not optimal (a false bound)
        usd_per_unit_bw = self.lp.cost_musd_per_gbps * MUSD * self.s  # $ per model unit of bandwidth
        top = float(usd_per_unit_bw.max()) if usd_per_unit_bw.size else 0.0
        self.cost_unit = top if top > 0 else 1.0
        self.objective_usd = self.cost_unit  # $ per unit of the last min-cost LP objective (set by min_cost)
        self.cost_costs = np.zeros(n)
        self.cost_costs[self.b_col] = usd_per_unit_bw / self.cost_unit
        self.budget_row = self.solver.add_row(-INF, INF, self.b_col, list(usd_per_unit_bw / self.cost_unit))
        used = np.flatnonzero(self.time_costs)
        self.time_row = (self.solver.add_row(-INF, INF, list(used), list(self.time_costs[used]))
                         if used.size else None)
        self.cuts = 0
        self.cut_rows: list[tuple[int, int, float]] = []  # (dimension, HiGHS row, coefficient of B) of every cut
        self.lps = 0
        self._seeded = False
        self.reach, self.floor = 0.0, 1e-12  # set by _seed from the reachable bandwidth

    # ----------------------------------------------------------------------------------------------- LP plumbing
    @property
    def loaded(self) -> tuple[int, ...]:
        """Dimensions that carry traffic."""
        return self.lp.loaded

    def _solve(self, costs: np.ndarray, maximize: bool = False):
        self.solver.set_costs(costs, maximize)
        self.lps += 1
        return self.solver.solve()

    def _set_budget(self, budget_usd: float | None) -> None:
        self.solver.change_row_bounds(self.budget_row, -INF, INF if budget_usd is None else budget_usd / self.cost_unit)

    def _set_time_target(self, target_ns: float | None) -> None:
        if self.time_row is not None:
            hi = INF if target_ns is None else (target_ns - self.tm.compute_ns) / MS_NS * self.s
            self.solver.change_row_bounds(self.time_row, -INF, hi)

    def _bw(self, x: np.ndarray) -> np.ndarray:
        """B (GB/s) from the LP's columns, with LP round-off below zero (and -0.0) clipped to 0."""
        return np.maximum(x[self.b_col], 0.0) * self.s + 0.0

    def cut(self, d: int, b: float) -> None:
        """Add the tangent cut of t_d >= 1/B_d at B_d = ``b`` (model units of ``s`` GB/s)."""
        lower, ct, cb = PerfLP.tangent_cut(b)
        row = self.solver.add_row(lower, INF, [self.t_col[d], self.b_col[d]], [ct, cb])
        self.cut_rows.append((d, row, cb))
        self.cuts += 1

    def _cut_at(self, x: np.ndarray, floor: float) -> None:
        """Cuts at the LP's point for every loaded dimension where t_d < 1/B_d, plus where the LP's t is exact."""
        for d in self.loaded:
            b, t = x[self.b_col[d]], x[self.t_col[d]]
            b = b if b > 0 else floor
            if t * b < 1.0 - 1e-12:
                self.cut(d, float(b))
                if t > 0:  # brackets the optimum from the other side: fewer rounds than Kelley's single cut
                    self.cut(d, float(1.0 / t))

    def _max_cost_like(self, dims: tuple[int, ...] | None):
        """max sum of B over ``dims`` (None: max cost) under the current rows."""
        if dims is None:
            return self._solve(self.cost_costs, maximize=True)
        costs = np.zeros_like(self.time_costs)
        costs[[self.b_col[d] for d in dims]] = 1.0
        return self._solve(costs, maximize=True)

    def _infeasible(self, what: str) -> NoSolutionError:
        texts = "; ".join(c.text for c in self.instance.constraints) or "(no constraints)"
        return NoSolutionError("infeasible", f"{what} cannot all hold: {texts}")

    # ----------------------------------------------------------------------------------------------- set-up checks
    def cost_range(self) -> tuple[float, float]:
        """(cheapest, dearest) feasible network cost in $ (dearest may be inf), without budget or time rows.

        Raises:
            NoSolutionError: the design constraints are infeasible.
        """
        self._set_budget(None)
        self._set_time_target(None)
        lo = self._solve(self.cost_costs)
        if lo.status is not Status.OPTIMAL:
            raise self._infeasible("the design constraints and bounds")
        hi = self._solve(self.cost_costs, maximize=True)
        return lo.objective * self.cost_unit, (hi.objective * self.cost_unit if hi.status is Status.OPTIMAL else INF)

    def _seed(self, budget_usd: float | None) -> None:
        """Check feasibility and boundedness under ``budget_usd``, then place the initial cuts (once)."""
        res = self._max_cost_like(self.loaded)
        if res.status is not Status.OPTIMAL:
            check = self._solve(self.time_costs)  # bounded below by 0: not optimal means infeasible
            if check.status is not Status.OPTIMAL:
                if budget_usd is not None:
                    self._set_budget(None)
                    cheapest = self._solve(self.cost_costs)
                    self._set_budget(budget_usd)
                    if cheapest.status is Status.OPTIMAL:
                        cheapest_usd = cheapest.objective * self.cost_unit
                        raise NoSolutionError("infeasible", f"the budget ${budget_usd:,.0f} is below the cheapest "
                                              f"network the design constraints allow, ${cheapest_usd:,.0f}")
                raise self._infeasible("the design constraints and bounds")
        # (the rows' recession cone decides, the same at every scale: :class:`hieropt.solvers.lp_checks.LPChecks`)
        limited = np.isfinite(upper_limits_gbps(self.instance, budget_usd)[list(self.loaded)]).all()
        unlimited = () if limited else unlimited_dimensions(self.instance, self.loaded, priced=budget_usd is not None,
                                                            time_limit_s=self.solver.time_limit_s)
        if unlimited:
            dims = ", ".join(f"bw[{d}]" for d in unlimited)
            raise NoSolutionError("unbounded", f"add a bandwidth budget: the constraints put no upper limit on the "
                                  f"bandwidth of the dimensions that carry traffic ({dims}), so the iteration time "
                                  f"has no minimum; e.g. --constraint 'sum(bw) == 500'")
        if res.status is not Status.OPTIMAL:
            raise SolverError(f"HiGHS could not find the largest bandwidth the rows allow ({res.termination})")
        reach = res.objective
        if reach <= 0 and self.loaded:
            raise NoSolutionError("infeasible", "the design constraints"
                                  f"{' and the budget' if budget_usd is not None else ''} force zero bandwidth on "
                                  "every dimension that carries traffic")
        if not self._seeded and self.loaded:
            self.reach = reach
            self.floor = max(reach * 1e-9, 1e-12)
            for d in self.loaded:  # cut coefficients 1/b^2 then span 1e8: wide enough, and tame for the simplex
                for b in np.geomspace(reach * 1e-4, reach, SEED_CUTS):
                    self.cut(d, float(b))
            self._seeded = True

    def _forced_zero(self, d: int) -> bool:
        res = self._max_cost_like((d,))
        return res.status is Status.OPTIMAL and res.objective <= 1e-9 * max(1.0, self.reach)

    # ----------------------------------------------------------------------------------------------- for other loops
    def prepare(self, budget_usd: float | None = None) -> None:
        """Set the budget row, clear the time target, check feasibility and place the initial cuts (once): what a
        cutting-plane loop over another objective (:mod:`hieropt.solvers.portfolio`) needs before its first LP."""
        self._set_time_target(None)
        self._set_budget(budget_usd)
        self._seed(budget_usd)

    def solve_costs(self, costs: np.ndarray):
        """Solve the LP with objective ``costs @ x`` (one coefficient per column); an ``LPResult``."""
        return self._solve(costs)

    def bandwidth(self, x: np.ndarray) -> np.ndarray:
        """B (GB/s) of an LP solution."""
        return self._bw(x)

    def cut_at(self, x: np.ndarray) -> None:
        """Tangent cuts at the LP solution ``x`` wherever t_d < 1/B_d there (the loop's refinement step)."""
        self._cut_at(x, self.floor)

    # ----------------------------------------------------------------------------------------------- objectives
    def min_time(self, rel_gap: float = REL_GAP, budget_usd: float | None = None,
                 max_iterations: int = 500) -> OAResult:
        """Minimise T(B) (ns) under the design constraints and, if given, cost(B) <= ``budget_usd``.

        Raises:
            NoSolutionError: infeasible (constraints or budget), a loaded dimension forced to zero bandwidth, or no
                upper limit on the bandwidth of a loaded dimension.
            SolverError: HiGHS failed.
        """
        tm = self.tm
        self._set_time_target(None)
        self._set_budget(budget_usd)
        self._seed(budget_usd)
        if not self.loaded:  # every feasible design is fastest: report the cheapest (not a vertex of the budget)
            res = self._solve(self.cost_costs)
            if res.status is not Status.OPTIMAL:
                raise SolverError(f"HiGHS stopped with '{res.termination}'")
            bw = self._bw(res.x)
            T = tm.time_ns(bw)  # does not depend on bandwidth (latency-only collectives and max nodes included)
            return OAResult(Status.OPTIMAL, bw, T, T, 1, "no collective traffic")
        best_bw, upper, lower = None, INF, -INF
        stall = _Stall(self.solver)
        for it in range(1, max_iterations + 1):
            res = self._solve(self.time_costs)
            if res.status is not Status.OPTIMAL:
                raise SolverError(f"HiGHS stopped on cutting-plane LP {it} with '{res.termination}'")
            lp_ns = tm.compute_ns + res.objective / self.s * MS_NS
            if stall.check(lp_ns, lower, self.cuts):
                break
            lower = max(lower, lp_ns)
            bw = self._bw(res.x)
            value = tm.time_ns(bw)
            if value < upper:
                best_bw, upper = bw, value
            if best_bw is not None and upper - lower <= rel_gap * upper:
                duals = self.solver.row_duals()
                dual = float(duals[self.budget_row]) / self.s * MS_NS / self.cost_unit if budget_usd else 0.0
                return OAResult(Status.OPTIMAL, best_bw, upper, lower, it, "optimal within the gap target",
                                budget_dual_ns_per_usd=min(dual, 0.0), lp_lower_ns=lp_ns)
            for d in self.loaded:
                if bw[d] <= 0 and self._forced_zero(d):
                    raise NoSolutionError("infeasible", f"dimension {d} carries traffic but the design constraints "
                                          f"{'and the budget ' if budget_usd else ''}force bw[{d}] = 0")
            self._cut_at(res.x, self.floor)
        if best_bw is None:
            raise NoSolutionError("infeasible", f"no bandwidth vector with a finite iteration time was found in "
                                  f"{max_iterations} LPs: the constraints{' and the budget' if budget_usd else ''} "
                                  "leave a dimension that carries traffic with (almost) no bandwidth")
        return OAResult(Status.LIMIT, best_bw, upper, lower, it, stall.message(it, (upper - lower) / upper))

    def network_cost(self, bw: np.ndarray) -> float:
        """cost(B) in $ (the LP's own coefficients)."""
        return float(np.dot(self.lp.cost_musd_per_gbps, bw)) * MUSD

    def min_cost(self, target_ns: float, meets: np.ndarray, rel_gap: float = REL_GAP,
                 budget_usd: float | None = None, max_iterations: int = 500) -> OAResult:
        """Minimise cost(B) ($) s.t. T(B) <= ``target_ns`` and the design constraints.

        Args:
            target_ns: the iteration-time target, ns.
            meets: (D,) a feasible point with T(meets) < target_ns (e.g. the performance optimum): the segment from
                it to the LP's B gives the feasible upper bounds.
            rel_gap: target relative gap on the cost.
            budget_usd: optional cost cap (an infeasibility check only).
        """
        tm = self.tm
        t_meets = tm.time_ns(meets)
        if t_meets > target_ns:
            raise ValueError("min_cost needs a point that meets the target")
        self._set_budget(budget_usd)
        self._set_time_target(target_ns)
        self._seed(budget_usd)
        best_bw, upper, lower = meets, self.network_cost(meets), -INF
        stall = _Stall(self.solver)
        # the objective is rescaled so that the last LP value is 1: HiGHS's dual tolerance (1e-9) is absolute, and
        # an LP value of 1e-3 (a bandwidth cap far above the design) let it stop at a vertex 1e-3 above the minimum
        unit = self.cost_unit
        for it in range(1, max_iterations + 1):
            res = self._solve(self.cost_costs * (self.cost_unit / unit))
            self.objective_usd = unit  # $ per unit of this LP's objective (duals are read in it)
            if res.status is not Status.OPTIMAL:
                self._set_time_target(None)
                raise SolverError(f"HiGHS stopped on min-cost LP {it} with '{res.termination}'")
            value = res.objective * unit
            if value > 0:
                unit = value
            if stall.check(value, lower, self.cuts):
                break
            lower = max(lower, value)
            bw = self._bw(res.x)
            point = meet_target(self.instance, self.tm, bw, meets, t_meets, target_ns)
            c = self.network_cost(point)
            if c < upper:
                best_bw, upper = point, c
            if upper - lower <= rel_gap * upper:
                self._set_time_target(None)
                return OAResult(Status.OPTIMAL, best_bw, upper, lower, it, "optimal within the gap target")
            self._cut_at(res.x, self.floor)
        self._set_time_target(None)
        return OAResult(Status.LIMIT, best_bw, upper, lower, it, stall.message(it, (upper - lower) / upper))
