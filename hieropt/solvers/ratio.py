"""Cutting planes on the procurement LP in cost shares (:mod:`hieropt.formulation.ratio_arrays`;
decision record 0005): time x cost and the fastest network within a budget, on the loop of
:class:`hieropt.solvers.cut_lp.CutLP` with the links r_d >= 1/x_d and kap >= 1/u."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction

import numpy as np

from ..errors import LimitReached, NoSolutionError, SolverError
from ..formulation.ratio_arrays import RatioArrays, shared_ratio_lp
from ..formulation.scale import MS_NS, cost_bounds_usd
from ..model.timing import TimeModel
from ..result import Status
from ..spec import Instance
from ..units import usd_cents
from .cost_range import cheapest_vertex
from .cut_lp import CutLP, Loop
from .linalg import EPS, INF, round_outwards
from .line_search import ROW_TOL, meet_target, meets_rows, onto_budget, within_rows
from .outcome import OAResult

MAX_LPS = 400
"""LPs per objective call before it stops with LIMIT."""
BOUND_SLACK = 1e-9
"""Relative round-off allowed between a proven bound and a value: taken off an LP's own value before
it counts as a bound, and how far a bound may exceed the evaluator's value of the answer."""
BOUNDS_SPREAD = 1e-6
"""The single rows' cost bounds stand in for the exact cost range when the lower is at least this
fraction of the upper."""
SHARE_SEEDS = (0.05, 0.3, 1.0, 3.0, 20.0)
"""Initial cuts on r_d >= 1/x_d (shares scaled by g_d: 1 at the typical bandwidth)."""
LEVEL_SEEDS = (0.1, 0.3, 1.0, 3.0, 10.0)
"""Initial cuts on kap >= 1/u (u = K / C is about 1 at the typical bandwidth)."""


class RatioCore(CutLP):
    """The procurement LP with its cuts (owned by one call) for ``instance`` and its aggregated time
    model ``tm``, in the units of ``bw_unit_gbps`` (GB/s,
    :func:`hieropt.formulation.scale.typical_bandwidth`), or of ``share_units_gbps`` ((D,) GB/s) for
    the shares; ``time_limit_s``: of each LP, s. With ``prune``, the rows no design within the
    dearest network and ``budget_usd`` ($) reaches are left out
    (:func:`hieropt.formulation.ratio_arrays.redundant_rows`; ``cost_bounds``: the rows' cost
    bounds, if known). ``exact_rows``, ``slacks``, ``fixed_usd``: as
    :func:`hieropt.formulation.ratio_arrays.compile_ratio_lp`."""

    max_lps = MAX_LPS

    def __init__(self, instance: Instance, tm: TimeModel, bw_unit_gbps: float,
                 time_limit_s: float = 60.0, budget_usd: float | None = None, prune: bool = False,
                 cost_bounds: tuple[float, float] | None = None,
                 share_units_gbps: np.ndarray | None = None, exact_rows: bool = False,
                 slacks: tuple[tuple[str, int], ...] = (), fixed_usd: float = 0.0):
        self.instance, self.tm = instance, tm
        self.fixed_usd = float(fixed_usd)
        self._cost_bounds = cost_bounds if cost_bounds is not None else cost_bounds_usd(instance)
        self.time_limit_s = float(time_limit_s)
        self._range: tuple[float, float] | None = None
        self._cheapest_bw: np.ndarray | None = None
        self._unit_gbps = float(bw_unit_gbps)
        cap = INF
        if prune:  # (the rows' cost ceiling, the budget, the exact dearest when the rows' are wide)
            cap = min(self._cost_bounds[1], budget_usd if budget_usd is not None else INF)
            if not self._rows_bound_costs(budget_usd):
                cap = min(cap, self.cost_range()[1])
        units = bw_unit_gbps if share_units_gbps is None else share_units_gbps
        self.lp: RatioArrays = shared_ratio_lp(instance, tm, units, cost_cap_usd=cap,
                                               exact_rows=exact_rows, slacks=slacks,
                                               fixed_usd=fixed_usd)
        self.K = self.lp.cost_unit_usd
        self.unit_cost = self.lp.price_usd_per_gbps
        self.scale = None  # (shares and the cost level are of order 1 by construction)
        self._start(time_limit_s)

    def _compile(self, scale) -> object:
        return self.lp.arr

    def _unit(self) -> np.ndarray:
        return np.ones(self.lp.arr.pair_b.size)

    def _seeds(self) -> list[tuple[int, float]]:
        n = self.lp.arr.pair_b.size
        return [(j, v) for j in range(n - 1) for v in SHARE_SEEDS] + [
            (n - 1, v) for v in LEVEL_SEEDS
        ]

    def _bound_col(self, col: int, lo: float, hi: float) -> None:
        self.solver.change_col_bounds(col, lo, hi)
        self.arr.col_lower[col], self.arr.col_upper[col] = lo, hi

    def _set(self, u: tuple[float, float] = (0.0, INF), kap: tuple[float, float] = (0.0, INF),
             share_equal: bool = True) -> None:
        self._bound_col(self.lp.u_col, *u)
        self._bound_col(self.lp.kap_col, *kap)
        self._set_row(self.lp.share_row, 1.0 if share_equal else -INF, 1.0)

    def _design(self, x: np.ndarray, cost_usd: float) -> np.ndarray | None:
        """The design of shares ``x`` at network cost ``cost_usd`` if it meets the rows, else
        None."""
        if not (cost_usd > 0 and np.isfinite(cost_usd)):
            return None
        bw = self.lp.bandwidth(x, cost_usd)
        return bw if meets_rows(self.instance, bw) else None

    def _outcome(self, spec: Loop, rel_gap: float, what: str) -> OAResult:
        def empty(x: np.ndarray) -> bool:
            if x.size == 0:
                self.cost_range()  # infeasible design rows alone are reported as such
                raise NoSolutionError("infeasible", f"{what}: no design satisfies the constraints")
            return False

        spec.on_empty = empty
        try:
            out = self._loop(spec, rel_gap)
        except LimitReached:  # (no design and no bound: the gap unknown, never "infeasible")
            raise
        except SolverError as e:
            return OAResult(Status.LIMIT, None, INF, -INF, self.lps, str(e))
        bw = out.bw if out.bw is not None and np.isfinite(out.upper) else None
        return OAResult(out.status, bw, out.upper, min(out.lower, out.upper), self.lps, out.message)

    def cost_range(self) -> tuple[float, float]:
        """(cheapest, dearest) feasible network cost in $ (0 / inf when unbounded;
        :func:`hieropt.solvers.cost_range.cheapest_vertex`, once).

        Raises:
            NoSolutionError: infeasible design constraints and bounds.
            SolverError: HiGHS fails on the cheapest network's LP."""
        if self._range is None:
            v = cheapest_vertex(self.instance, self.time_limit_s, self._unit_gbps)
            self._range, self._cheapest_bw = (v.cost_usd, v.dearest_usd), v.bw_gbps
        return self._range

    def search_range(self, budget_usd: float | None) -> tuple[float, float]:
        """(cheapest, dearest) network cost in $ for the time x cost search: the single rows' cost
        bounds when :meth:`_rows_bound_costs`, else :meth:`cost_range` within them.

        Raises:
            NoSolutionError: (exact range) infeasible design constraints and bounds."""
        lower, upper = self._cost_bounds
        if self._rows_bound_costs(budget_usd):
            return lower, upper
        cheapest, dearest = self.cost_range()
        return max(cheapest, lower), min(dearest, upper)

    def _rows_bound_costs(self, budget_usd: float | None) -> bool:
        """Whether the single rows' cost bounds stand in for the exact range (no budget, both
        finite, at least :data:`BOUNDS_SPREAD` apart)."""
        lower, upper = self._cost_bounds
        return (budget_usd is None and bool(np.isfinite(upper)) and upper > 0
                and lower >= BOUNDS_SPREAD * upper)

    def add_rows(self, coef: np.ndarray, lower: np.ndarray, upper: np.ndarray, budget_usd: float,
                 slack_coef: list[dict] | None = None, slack_cap: dict | None = None) -> None:
        """Add rows lower_i <= sum_d coef_id B_d + sum_k c_ik s_k <= upper_i (``coef`` (m, D), B in
        GB/s; ``slack_coef[i]``: c_ik by slack key; ``slack_cap``: caps on s_k) to the LP of
        :meth:`fastest_within` at ``budget_usd``; each must hold for every design within the budget.
        Coefficients are scaled by powers of two and bounds rounded outwards, so with ``exact_rows``
        every exactly feasible design meets the float rows."""
        if slack_cap:
            self._slack_units(slack_cap, budget_usd)
        lp = self.lp
        arr = lp.arr
        u = Fraction(self.K / budget_usd)  # (the value fastest_within fixes u at)
        lows, highs, start = [], [], [arr.start[:arr.n_rows + 1]]
        end = int(arr.start[arr.n_rows])
        index, value = [arr.index[:end]], [arr.value[:end]]
        slack_coef = slack_coef if slack_coef is not None else [{}] * len(np.atleast_2d(coef))
        for c, lo, hi, sc in zip(np.atleast_2d(coef), np.atleast_1d(lower), np.atleast_1d(upper),
                                 slack_coef, strict=True):
            full = np.asarray(c, dtype=float) * lp.unit_gbps
            nz = np.flatnonzero(full)
            cols = [*lp.x_col[nz].tolist(), *(lp.slack_col[k] for k in sc)]
            vals = [*full[nz].tolist(), *(float(v) * lp.slack_factor[k] for k, v in sc.items())]
            top = max((abs(v) for v in vals), default=0.0)
            scale = math.ldexp(1.0, -math.frexp(top)[1]) if top > 0 else 1.0
            f = u * Fraction(scale)
            lows.append(round_outwards(Fraction(float(lo)) * f, False) if np.isfinite(lo) else -INF)
            highs.append(round_outwards(Fraction(float(hi)) * f, True) if np.isfinite(hi) else INF)
            end += len(cols)
            start.append(np.array([end]))
            index.append(np.array(cols, dtype=np.int64))
            value.append(np.array(vals) * scale)
        new = replace(arr, row_lower=np.append(arr.row_lower, lows),
                      row_upper=np.append(arr.row_upper, highs),
                      start=np.concatenate(start).astype(np.int32),
                      index=np.concatenate(index).astype(np.int32), value=np.concatenate(value),
                      cache={})
        if slack_cap:
            for k, cap in slack_cap.items():  # s_lp = u s / factor
                new.col_upper[lp.slack_col[k]] = round_outwards(
                    Fraction(float(cap)) * u / Fraction(lp.slack_factor[k]), up=True
                )
        self.lp = replace(lp, arr=new)
        self._reload()

    def _slack_units(self, caps: dict, budget_usd: float) -> None:
        """Give each slack column a power-of-two unit putting its cap at the geometric mean of 1 and
        its size in its row."""
        lp = self.lp
        arr = lp.arr
        u = self.K / budget_usd
        value = arr.value.copy()
        factor = dict(lp.slack_factor)
        for key, cap in caps.items():
            size = float(cap) * u / factor[key]  # the cap in the row's own (normalised) units
            if not (size > 0 and np.isfinite(size)):
                continue
            unit = min(1.0, math.ldexp(1.0, round(0.5 * math.log2(size))))
            row, col = lp.slack_row[key], lp.slack_col[key]
            a, b = arr.start[row], arr.start[row + 1]
            at = a + int(np.flatnonzero(arr.index[a:b] == col)[0])
            value[at] *= unit
            factor[key] *= unit
        self.lp = replace(lp, arr=replace(arr, value=value, cache={}), slack_factor=factor)

    def fastest_within(self, budget_usd: float, rel_gap: float,
                       repair: Callable[[np.ndarray], list[np.ndarray]] | None = None,
                       budget_row: bool = True,
                       score: Callable[[np.ndarray], float] | None = None) -> OAResult:
        """f(kappa): the fastest design costing at most ``budget_usd`` (ns). ``repair``: LP point
        (GB/s) -> candidates within the rows and budget; ``budget_row=False``: the share row free
        (rows of :meth:`add_rows` hold the budget); ``score``: design -> value (>= its time, ns) to
        rank by.

        Raises:
            NoSolutionError: a budget below the cheapest network, or leaving a loaded dimension
                no bandwidth."""
        u = self.K / budget_usd
        self._set(u=(u, u), kap=(1.0 / u, 1.0 / u), share_equal=False)
        if not budget_row:
            self._set_row(self.lp.share_row, -INF, INF)
            # (shares <= 1 up to rounding)
            for col, g in zip(self.lp.x_col, self.lp.share_scale, strict=True):
                self._bound_col(int(col), 0.0, g * (1 + 8 * EPS))
        to_ns = self.lp.product_unit * MS_NS / budget_usd

        cheapest = self._cheapest_bw if self._range is not None else None

        def candidates(x: np.ndarray) -> list[np.ndarray]:
            extra = repair(self.lp.bandwidth(x, budget_usd)) if repair is not None else []
            # (the plain designs hold the rows to ROW_TOL only: a last resort)
            return extra or plain(x)

        def plain(x: np.ndarray) -> list[np.ndarray]:
            bw = self._design(x, budget_usd)
            # the LP's point moved inside the rows towards the cheapest network
            if bw is None and cheapest is not None:
                bw = within_rows(self.instance, self.lp.bandwidth(x, budget_usd), cheapest)
                bw = bw if meets_rows(self.instance, bw) else None
            if bw is None:
                return [cheapest] if cheapest is not None else []
            # a hair over the budget (HiGHS's tolerance) stepped back towards the cheapest network,
            # else the lower bounds, else 0
            for anchor in (cheapest, self.instance.design_matrix.bw_lower, 0.0 * bw):
                point = (onto_budget(self.unit_cost, anchor, bw, budget_usd)
                         if anchor is not None else None)
                if point is not None and meets_rows(self.instance, point):
                    return [point]
            return [cheapest] if cheapest is not None else []

        spec = Loop(costs=lambda: self.arr.time_costs, native=lambda v: v * to_ns,
                    candidates=candidates, score=self.tm.time_ns if score is None else score)
        out = self._outcome(spec, rel_gap, f"budget ${usd_cents(budget_usd, up=False)}")
        if out.bw is None:
            raise NoSolutionError(
                "infeasible",
                f"the budget ${usd_cents(budget_usd, up=False)} leaves a dimension that carries "
                "traffic (almost) without bandwidth",
            )
        return out

    def min_product(self, rel_gap: float, cost_lo: float, cost_hi: float,
                    target_ns: float | None = None, meets: np.ndarray | None = None) -> OAResult:
        """min T(B) x cost(B) (ns x $; cost = ``fixed_usd`` + the network's) over designs costing
        within [cost_lo, cost_hi] $ and, if given, with T <= ``target_ns``: the target enters as the
        cost floor and LP designs that miss it move towards ``meets`` before they count."""
        u_lo = self.K / cost_hi if np.isfinite(cost_hi) else 0.0
        u_hi = self.K / cost_lo if cost_lo > 0 else INF
        self._set(u=(u_lo, u_hi), kap=(cost_lo / self.K, cost_hi / self.K))
        to_ns_usd = self.lp.product_unit * MS_NS
        u_col, kap_col = self.lp.u_col, self.lp.kap_col
        t_meets = self.tm.time_ns(meets) if meets is not None else INF

        def candidates(x: np.ndarray) -> list[np.ndarray]:
            out = []
            for c in ((self.K / max(x[u_col], u_lo) if x[u_col] > 0 else INF), self.K * x[kap_col]):
                within = cost_lo * (1 - ROW_TOL) <= c <= cost_hi * (1 + ROW_TOL)
                bw = self._design(x, c) if within else None
                if bw is not None and target_ns is not None and meets is not None:
                    bw = meet_target(self.instance, self.tm, bw, meets, t_meets, target_ns)
                if bw is not None:
                    out.append(bw)
            return out

        def score(bw: np.ndarray) -> float:
            T = self.tm.time_ns(bw)
            if target_ns is not None and T > target_ns:
                return INF
            c = self.fixed_usd + self.network_cost(bw)
            return T * c if c <= cost_hi * (1 + 1e-12) else INF

        spec = Loop(costs=lambda: self.arr.time_costs, native=lambda v: v * to_ns_usd,
                    candidates=candidates, score=score)
        return self._outcome(spec, rel_gap, "time x cost")

