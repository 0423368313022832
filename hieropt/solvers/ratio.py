"""Cutting planes on the procurement LP (:mod:`hieropt.formulation.ratio`): one persistent HiGHS LP in cost-share
variables for time x cost (global, one convex solve) and for the fastest network within a budget.

Kelley's cutting planes as in :mod:`hieropt.solvers.cutting`: ``r_d >= 1/x_d`` and ``kap >= 1/u`` are
outer-approximated by tangent cuts, valid for every objective and bound, so they accumulate across the solves of one
call (a Pareto front re-uses every cut). Each LP optimum is a proven lower bound (a relaxation); the LP's shares and
cost level give a design B whose objective is evaluated exactly (an upper bound). Every loop is bounded by an LP count
and a wall-clock deadline; when it stops short of its gap target, or HiGHS fails on an LP, the result is LIMIT with the
bounds proven so far, never a claim beyond them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import NoSolutionError
from ..formulation.lp import MS_NS, PerfLP
from ..formulation.ratio import RatioLP, build_ratio_lp
from ..model.timing import TimeModel
from ..result import Status
from ..spec import Instance
from .highs import TIGHT_TOLERANCE
from .highs_pyomo import PersistentHighs

INF = float("inf")
SEED_CUTS = 8
"""Initial tangent cuts per loaded dimension (shares 1e-4 .. 1) and on kap >= 1/u."""
MAX_LPS = 400
"""LPs per objective call before it stops with status LIMIT."""
STALL_ROUNDS = 8
"""LPs without a better lower bound before the tolerances are tightened (once), then before the loop stops."""
ROW_TOL = 1e-9
"""Relative violation of a design row or bound accepted for a candidate design (the LP's own tolerance)."""
BOUND_SLACK = 1e-9
"""Every LP value is lowered by this relative amount before it counts as a proven bound: HiGHS meets its dual
feasibility tolerance (1e-9), not exact optimality, so an LP value can sit that far above the LP's true minimum. A
gap is therefore never reported as 0."""


@dataclass(frozen=True)
class Outcome:
    """One objective solve on the procurement LP (units of the objective: ns, $ or ns x $).

    Attributes:
        status: OPTIMAL when the gap target was met; LIMIT otherwise (bounds still valid).
        bw: (D,) the best design found, GB/s (None when none was found).
        upper: objective at ``bw`` (evaluated exactly).
        lower: proven lower bound on the optimum.
        lps: LPs solved.
        message: one line.
    """

    status: Status
    bw: np.ndarray | None
    upper: float
    lower: float
    lps: int
    message: str

    @property
    def gap(self) -> float:
        """Relative gap (upper - lower)/upper, clipped at 0."""
        return max(0.0, (self.upper - self.lower) / self.upper) if 0 < self.upper < INF else INF


class RatioCore:
    """The procurement LP in HiGHS with its cuts (owned by one call).

    Args:
        instance: design constraints, bounds and prices.
        tm: the aggregated time model.
        bw_unit_gbps: typical bandwidth (GB/s) that fixes the LP's units (:func:`typical_bandwidth`).
        time_limit_s: wall-clock limit of each LP and of each objective call, s.
    """

    def __init__(self, instance: Instance, tm: TimeModel, bw_unit_gbps: float, time_limit_s: float = 60.0):
        self.instance, self.tm = instance, tm
        self.lp: RatioLP = build_ratio_lp(instance, tm, bw_unit_gbps)
        self.solver = PersistentHighs(self.lp.model, time_limit_s)
        self.time_limit_s = float(time_limit_s)
        m = self.lp.model
        self.x_col = [self.solver.col(m.x[d]) for d in m.x]
        self.u_col, self.kap_col = self.solver.col(m.u), self.solver.col(m.kap)
        self.r_col = {d: self.solver.col(m.r[d]) for d in self.lp.loaded}
        self.share_row = self.solver.row(m.share)
        self.product_costs = self.solver.objective_costs()
        self.kap_costs = np.zeros_like(self.product_costs)
        self.kap_costs[self.kap_col] = 1.0
        self.u_costs = np.zeros_like(self.product_costs)
        self.u_costs[self.u_col] = 1.0
        self.u_row = self.solver.add_row(-INF, INF, [self.u_col], [1.0])
        self.kap_row = self.solver.add_row(-INF, INF, [self.kap_col], [1.0])
        self.K = self.lp.cost_unit_usd
        self.lps = self.cuts = 0
        self._seeded = False
        self._range: tuple[float, float] | None = None

    # ------------------------------------------------------------------------------------------------- plumbing
    @property
    def loaded(self) -> tuple[int, ...]:
        """Dimensions that carry traffic."""
        return self.lp.loaded

    def network_cost(self, bw: np.ndarray) -> float:
        """cost(B) in $."""
        return float(np.dot(self.lp.price_usd_per_gbps, bw))

    def _solve(self, costs: np.ndarray, maximize: bool = False):
        self.solver.set_costs(costs, maximize)
        self.lps += 1
        return self.solver.solve()

    def _set(self, u: tuple[float, float] = (0.0, INF), kap: tuple[float, float] = (0.0, INF),
             share_equal: bool = True) -> None:
        self.solver.change_row_bounds(self.u_row, *u)
        self.solver.change_row_bounds(self.kap_row, *kap)
        self.solver.change_row_bounds(self.share_row, 1.0 if share_equal else -INF, 1.0)

    def _cut(self, t_col: int, b_col: int, b: float) -> None:
        lower, ct, cb = PerfLP.tangent_cut(b)  # t >= 2/b - B/b^2, exact at B = b
        self.solver.add_row(lower, INF, [t_col, b_col], [ct, cb])
        self.cuts += 1

    def _seed(self) -> None:
        if self._seeded:
            return
        for d in self.loaded:
            for b in np.geomspace(1e-4, 1.0, SEED_CUTS):
                self._cut(self.r_col[d], self.x_col[d], float(b))
        for v in np.geomspace(1e-3, 1e3, SEED_CUTS):
            self._cut(self.kap_col, self.u_col, float(v))
        self._seeded = True

    def _cut_at(self, x: np.ndarray, with_kap: bool) -> int:
        """Cuts where the LP's point breaks r_d >= 1/x_d or kap >= 1/u (at the point and at 1/r); returns how many."""
        added = 0
        pairs = [(self.r_col[d], self.x_col[d]) for d in self.loaded]
        if with_kap:
            pairs.append((self.kap_col, self.u_col))
        for t_col, b_col in pairs:
            b, t = x[b_col], x[t_col]
            if t * b < 1.0 - 1e-12:
                b = b if b > 1e-12 else 1e-12
                self._cut(t_col, b_col, float(b))
                added += 1
                if t > 0 and 1.0 / t != b:
                    self._cut(t_col, b_col, float(1.0 / t))
                    added += 1
        return added

    def _design(self, x: np.ndarray, cost_usd: float) -> np.ndarray | None:
        """The design of shares x at network cost ``cost_usd``, if it meets every design row and bound (to
        :data:`ROW_TOL` relative); else None."""
        if not (cost_usd > 0 and np.isfinite(cost_usd)):
            return None
        bw = self.lp.bandwidth(x[self.x_col], cost_usd)
        for c in self.instance.constraints:
            a = np.asarray(c.coefficients, dtype=float)
            lhs, scale = float(a @ bw), max(abs(c.rhs), float(np.abs(a * bw).sum()), 1e-300)
            over = {"<=": lhs - c.rhs, ">=": c.rhs - lhs, "==": abs(lhs - c.rhs)}[c.sense]
            if over > ROW_TOL * scale:
                return None
        for b, v in zip(self.instance.bounds_or_default, bw, strict=True):
            if v < b.lower_gbps * (1 - ROW_TOL) or (b.upper_gbps is not None and v > b.upper_gbps * (1 + ROW_TOL)):
                return None
        return bw

    def _meet_target(self, bw: np.ndarray, meets: np.ndarray, target_ns: float) -> np.ndarray:
        """The point of the segment [meets, bw] nearest ``bw`` with T <= target (bisection; T is convex)."""
        t_bw, t_meets = self.tm.time_ns(bw), self.tm.time_ns(meets)
        if t_bw <= target_ns:
            return bw
        lo, hi = (max(0.0, (target_ns - t_meets) / (t_bw - t_meets)) if np.isfinite(t_bw) else 0.0), 1.0
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            if self.tm.time_ns(meets + mid * (bw - meets)) <= target_ns:
                lo = mid
            else:
                hi = mid
        return meets + lo * (bw - meets)

    # ------------------------------------------------------------------------------------------------- set-up
    def cost_range(self) -> tuple[float, float]:
        """(cheapest, dearest) feasible network cost in $ (0 / inf when unbounded), from two LPs on u.

        Raises:
            NoSolutionError: the design constraints and bounds are infeasible.
        """
        if self._range is None:
            self._set()
            lo_u = self._solve(self.u_costs)  # min u = K / dearest
            if lo_u.status is not Status.OPTIMAL:
                texts = "; ".join(c.text for c in self.instance.constraints) or "(no constraints)"
                raise NoSolutionError("infeasible", f"the design constraints and bounds cannot all hold: {texts}")
            hi_u = self._solve(self.u_costs, maximize=True)  # max u = K / cheapest
            dearest = self.K / lo_u.objective if lo_u.objective > 0 else INF
            cheapest = self.K / hi_u.objective if hi_u.status is Status.OPTIMAL and hi_u.objective > 0 else 0.0
            self._range = (cheapest, dearest)
        return self._range

    # ------------------------------------------------------------------------------------------------- the loop
    def _loop(self, costs: np.ndarray, lower_of, candidates, score, rel_gap: float, with_kap: bool,
              what: str) -> Outcome:
        """Kelley's loop: solve, bound, evaluate the candidates, cut; stop at the gap, a stall, the LP count or
        the deadline. ``lower_of(lp_value)`` converts the LP value to a proven bound, ``candidates(x)`` yields
        designs, ``score(bw)`` their exact objective (inf when infeasible)."""
        self._seed()
        deadline = time.perf_counter() + self.time_limit_s
        best_bw, upper, lower = None, INF, -INF
        stall, tightened = 0, False
        why = "LP limit"
        for it in range(1, MAX_LPS + 1):
            res = self._solve(costs)
            if res.status is not Status.OPTIMAL:
                if res.status is Status.INFEASIBLE and best_bw is None and it == 1:
                    raise NoSolutionError("infeasible", f"{what}: no design satisfies the constraints")
                why = f"HiGHS stopped on LP {it} with '{res.termination}'"
                break
            value = lower_of(res.objective) * (1 - BOUND_SLACK)
            if lower == -INF or value > lower + 1e-12 * abs(lower):
                lower, stall = value, 0
            else:
                stall += 1
            for bw in candidates(res.x):
                v = score(bw)
                if v < upper:
                    best_bw, upper = bw, v
            if best_bw is not None and upper - lower <= rel_gap * upper:
                return Outcome(Status.OPTIMAL, best_bw, upper, min(lower, upper), it, "optimal within the gap target")
            if stall >= STALL_ROUNDS:
                if tightened:
                    why = "no further progress at the LP tolerance floor"
                    break
                self.solver.set_tolerance(TIGHT_TOLERANCE)
                tightened, stall = True, 0
            if time.perf_counter() > deadline:
                why = f"time limit {self.time_limit_s:g} s"
                break
            if not self._cut_at(res.x, with_kap):
                why = "the LP point is exact but the gap is open (LP tolerances)"
                break
        gap = (upper - lower) / upper if best_bw is not None and upper > 0 else INF
        return Outcome(Status.LIMIT, best_bw, upper, min(lower, upper), self.lps,
                       f"stopped after {self.lps} LPs at proven relative gap {gap:.3g} ({why})")

    # ------------------------------------------------------------------------------------------------- objectives
    def fastest_within(self, budget_usd: float, rel_gap: float) -> Outcome:
        """f(kappa): the fastest design costing at most ``budget_usd`` (ns). u and kap are fixed by the budget.

        Raises:
            NoSolutionError: the budget is below the cheapest network, or leaves a loaded dimension no bandwidth.
        """
        u = self.K / budget_usd
        self._set(u=(u, u), kap=(1.0 / u, 1.0 / u), share_equal=False)
        to_ns = self.lp.product_unit * MS_NS / budget_usd

        def candidates(x):
            bw = self._design(x, budget_usd)
            return [] if bw is None else [bw]

        out = self._loop(self.product_costs, lambda v: v * to_ns, candidates, self.tm.time_ns, rel_gap, False,
                         f"budget ${budget_usd:,.6g}")
        if out.bw is None:
            raise NoSolutionError("infeasible", f"the budget ${budget_usd:,.6g} leaves a dimension that carries "
                                  "traffic (almost) without bandwidth")
        return out

    def min_product(self, rel_gap: float, cost_lo: float, cost_hi: float, target_ns: float | None = None,
                    meets: np.ndarray | None = None) -> Outcome:
        """min T(B) x cost(B) (ns x $) over designs costing within [cost_lo, cost_hi] $ and, if given, with
        T <= ``target_ns``.

        A time target enters as the cost floor ``cost_lo`` (a proven lower bound on the cheapest design meeting it:
        min T x cost over T <= T* equals the minimum of kappa f(kappa) over kappa >= that cheapest cost, since f is
        non-increasing); designs of the LP that miss the target are moved towards ``meets`` (a design that meets
        it) before they count. kap >= 1/u is exact at the optimum because every coefficient of kap is >= 0."""
        u_lo = self.K / cost_hi if np.isfinite(cost_hi) else 0.0
        u_hi = self.K / cost_lo if cost_lo > 0 else INF
        self._set(u=(u_lo, u_hi))
        to_ns_usd = self.lp.product_unit * MS_NS

        def candidates(x):
            u, kap = x[self.u_col], x[self.kap_col]
            out = []
            for c in ((self.K / max(u, u_lo) if u > 0 else INF), self.K * kap):
                bw = self._design(x, c) if cost_lo * (1 - ROW_TOL) <= c <= cost_hi * (1 + ROW_TOL) else None
                if bw is not None and target_ns is not None and meets is not None:
                    bw = self._meet_target(bw, meets, target_ns)
                if bw is not None:
                    out.append(bw)
            return out

        def score(bw):
            T = self.tm.time_ns(bw)
            if target_ns is not None and T > target_ns:
                return INF
            c = self.network_cost(bw)
            return T * c if c <= cost_hi * (1 + 1e-12) else INF

        return self._loop(self.product_costs, lambda v: v * to_ns_usd, candidates, score, rel_gap, True,
                          "time x cost")
