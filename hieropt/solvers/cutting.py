"""The performance LP (:mod:`hieropt.formulation.arrays`) on the loop of
:class:`hieropt.solvers.cut_lp.CutLP`: the objectives over the bandwidths directly
(:meth:`TimeLP.min_time`, :meth:`TimeLP.min_cost`, :meth:`TimeLP.cost_range`) and the checks before
a loop (whether the rows bound the loaded dimensions; what an LP without a finite-time design
means)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

import numpy as np

from ..errors import NoSolutionError, SolverError, limit_reached
from ..formulation.arrays import LPArrays, compile_perf_lp, read_only
from ..formulation.scale import Scale, choose_scale, upper_limits_gbps
from ..model.cost import cluster_cost_usd_per_gbps
from ..model.cutmodel import CutModel
from ..model.timing import TimeModel
from ..result import Status
from ..spec import Instance
from .cost_range import (
    FORCED_ZERO,
    below_cheapest,
    cheapest_vertex,
    forced_zero,
    reach_centre_gbps,
    rows_infeasible,
    unlimited_dimensions,
)
from .cut_lp import INF, CutLP, Loop, OAResult
from .line_search import TARGET_MARGIN, meet_target, meets_rows, within_budget, within_rows
from .near_cheapest import cheapest_anchor

__all__ = ["TimeLP", "OAResult", "REL_GAP", "INF", "cost_cap"]

REL_GAP = 1e-8
"""Default target relative gap."""
STARVE = 1e-3
"""Factor on a loaded dimension's unit for a design re-centred on while the LP leaves it at zero."""


class TimeLP(CutLP):
    """The performance LP of ``instance`` and its aggregated time model ``tm`` with its cuts and the
    budget and time-target rows (owned by one solve call; :meth:`CutLP.close` it when done);
    ``time_limit_s``: of each LP, s; ``bw_scale``: a bandwidth unit (GB/s) on every dimension to
    start from (default: the instance's)."""

    def __init__(self, instance: Instance, tm: TimeModel, time_limit_s: float = 60.0,
                 bw_scale: float | None = None):
        self.instance, self.tm = instance, tm
        self.unit_cost = cluster_cost_usd_per_gbps(instance)  # $ per GB/s, (D,), read-only
        # GB/s, from single rows and bounds (the budget comes on top)
        self._limits = upper_limits_gbps(instance)
        budget, target = instance.max_network_cost_usd, instance.max_iteration_time_ns
        self.scale: Scale = instance.memo(
            "_perf_scale", (tm, budget, target, self._limits, self.unit_cost),
            lambda: choose_scale(instance, tm, budget, target, self._limits))
        if bw_scale is not None:
            self.scale = self.scale.rescaled(tm, self.unit_cost,
                                             np.full(tm.n_dims, float(bw_scale)))
        self._budget: float | None = None
        self._target: float | None = None
        self._checked = False
        self._cheapest: float | None = None
        self._ub_key: tuple | None = None
        self._ub = np.zeros(0)
        self._widened = False
        self._reach: np.ndarray | None = None
        self.cut_first = True
        """:attr:`hieropt.solvers.cut_lp.Loop.cut_first` of :meth:`min_time` (the min-cost path sets
        it off)."""
        # the first pieces of T: at the scale's centre and at 10x / 0.1x of it
        if isinstance(tm, CutModel):
            b = self.scale.bw_gbps
            self.tm = tm = tm.with_pieces([tm.piece(b * f) for f in (1.0, 10.0, 0.1)])
        self._start(time_limit_s)

    def _check(self) -> None:
        """Once: whether the rows bound every loaded dimension (else a budget must): by single rows
        alone, else by the rows' recession cone
        (:func:`hieropt.solvers.cost_range.unlimited_dimensions`), with one LP for infeasible rows
        and the reach."""
        if self._checked:
            return
        self._checked = True
        loaded = list(self.loaded)
        limits = self._limits[loaded].tolist()
        if loaded and all(0 < v < INF for v in limits):
            self.bounded, self.reach_gbps, self.unlimited = True, float(np.sum(limits)), ()
            return
        costs = np.zeros(self.arr.n_cols)
        costs[self.arr.b_col[loaded]] = self.scale.bw_gbps[loaded]
        with self._rows_alone():
            res = self._solve(costs if loaded else self.arr.cost_costs, maximize=True)
            # bounded below by 0: not optimal means infeasible (stopped at the time limit: unknown)
            low = None if res.status is Status.OPTIMAL else self._solve(self.arr.cost_costs).status
            if low is Status.LIMIT:
                raise limit_reached("the bandwidths' reach", self.solver.time_limit_s)
            if low is not None and low is not Status.OPTIMAL:
                raise rows_infeasible(self.instance)
        # (on the rows' recession cone, the same at every scale, not on this LP's optimum)
        self.unlimited = unlimited_dimensions(self.instance, loaded,
                                              time_limit_s=self.solver.time_limit_s)
        self.bounded = not self.unlimited
        self.reach_gbps = res.objective if self.bounded and res.status is Status.OPTIMAL else INF

    @contextmanager
    def _rows_alone(self):
        """The LP without its budget and time-target rows while the block runs."""
        budget, target = self._budget, self._target
        self._set_budget(None)
        self._set_target(None)
        try:
            yield
        finally:
            self._set_budget(budget)
            self._set_target(target)

    def _require(self, budget_usd: float | None) -> None:
        """Raise NoSolutionError unless the rows (with ``budget_usd``) admit a finite-bandwidth
        solution."""
        self._check()
        # (an unknown cheapest network is found when the first LP is infeasible)
        if budget_usd is not None:
            if self._cheapest is not None and budget_usd < self._cheapest * (1 - 1e-12):
                raise below_cheapest(budget_usd, self._cheapest)
        elif not self.bounded and self.loaded:
            dims = ", ".join(f"bw[{d}]" for d in self.unlimited)
            raise NoSolutionError(
                "unbounded",
                f"add a bandwidth budget: the constraints put no upper limit on the "
                f"bandwidth of the dimensions that carry traffic ({dims}), so the iteration time "
                f"has no minimum; e.g. the constraint 'sum(bw) == 500' (the instance's "
                "constraints, --constraint on the command line)",
            )
        if self.loaded and self.reach_gbps <= 0:
            raise NoSolutionError("infeasible", FORCED_ZERO)

    def cost_range(self) -> tuple[float, float]:
        """(cheapest, dearest) feasible network cost in $ (dearest may be inf), without budget or
        time rows.

        Raises:
            NoSolutionError: the design constraints are infeasible."""
        with self._rows_alone():
            lo = self._solve(self.arr.cost_costs)
            ok = lo.status is Status.OPTIMAL
            hi = self._solve(self.arr.cost_costs, maximize=True) if ok else None
        if hi is None:  # (infeasible rows, or a failure in this LP's units: the rows alone tell)
            v = cheapest_vertex(self.instance, self.solver.time_limit_s)
            self._cheapest = self._cheapest_lp = v.cost_usd
            return v.cost_usd, v.dearest_usd
        self._cheapest = self.network_cost(self._bw(lo.x))
        # the LP's own value: its notion of the cheapest
        self._cheapest_lp = lo.objective * self.scale.cost_usd
        return self._cheapest, (
            self.network_cost(self._bw(hi.x)) if hi.status is Status.OPTIMAL else INF
        )

    def _diagnose_empty(self, x: np.ndarray) -> bool:
        """No finite-time design yet (the first LP infeasible, or a loaded dimension at zero): raise
        NoSolutionError with the reason, or return True to solve again (a budget at the cheapest
        network set to the LP's own cheapest cost, the same within round-off)."""
        if x.size == 0:
            budget = self._budget
            self.cost_range()  # raises when the design rows alone are infeasible
            if budget is not None and budget < self._cheapest_lp * (1 - 1e-9):
                raise below_cheapest(budget, self._cheapest)
            if budget is not None and budget < self._cheapest_lp * (1 + 1e-9):
                self._set_row(self.arr.budget_row, -INF,
                              self._cheapest_lp * (1 + 1e-12) / self.scale.cost_usd)
                return True
            return False
        bw = self._bw(x)
        top = float(bw.max(initial=0.0))
        for d in self.loaded:
            if bw[d] <= 1e-9 * top and self._forced_zero(d):
                raise NoSolutionError("infeasible", forced_zero(d, self._budget is not None))
        return False

    def _forced_zero(self, d: int) -> bool:
        """Whether the rows (budget included) allow dimension ``d`` no bandwidth (one LP)."""
        costs = np.zeros(self.arr.n_cols)
        costs[self.arr.b_col[d]] = 1.0
        res = self._solve(costs, maximize=True)
        if res.status is not Status.OPTIMAL:
            return False
        bw = self.scale.bw_gbps
        return res.objective <= 1e-9 * max(1.0, float(bw.max() / bw[d]))

    def _starved(self, x: np.ndarray) -> np.ndarray | None:
        """While no candidate is finite and ``x`` leaves a loaded dimension at zero (not forced
        there): a design whose units shrink by :data:`STARVE` there (below
        :data:`hieropt.solvers.cut_lp.CUT_RANGE` the LP's t is a finite extrapolation of an
        unbounded time)."""
        bw = self._bw(x)
        top = float(bw.max(initial=0.0))
        starved = [d for d in self.loaded if bw[d] <= 1e-9 * top]
        if not starved:
            return None
        design = np.zeros(bw.size)
        design[starved] = self.scale.bw_gbps[starved] * STARVE
        return design

    def _compile(self, scale: Scale) -> LPArrays:
        """The LP at ``scale``, compiled once per instance, time model, scale, rows and prices
        (read-only, shared by repeated solves and copies)."""
        inst, tm, budget, target = self.instance, self.tm, self._budget, self._target
        return inst.memo("_perf_lp",
                         (tm, scale, budget, target, inst.design_matrix, self.unit_cost),
                         lambda: read_only(compile_perf_lp(inst, tm, scale, budget, target)))

    def _unit(self) -> np.ndarray:
        return self.scale.bw_gbps[self.arr.pair_b]

    def _rescaled(self, design: np.ndarray) -> Scale:
        return self.scale.rescaled(self.tm, self.unit_cost, design)

    def _centre_default(self) -> np.ndarray:
        """Where to re-centre when an LP failed before any design:
        :func:`~hieropt.solvers.cost_range.reach_centre_gbps` (computed once)."""
        if self._reach is None:
            self._reach = reach_centre_gbps(self.instance, list(self.loaded), self.scale.bw_gbps,
                                            self.solver.time_limit_s)
        return self._reach

    def _col_upper(self) -> np.ndarray:
        """Upper limits on the scaled columns that single rows, bounds and the budget imply (keyed
        on the arrays object itself: a stale bound would cut off feasible points)."""
        key = (self._budget, self.arr)
        if self._ub_key is None or self._ub_key[0] != key[0] or self._ub_key[1] is not key[1]:
            self._ub_key = key
            ub = np.full(self.arr.n_cols, INF)
            lim = self._limits if self._budget is None else np.minimum(
                self._limits, self._budget / self.unit_cost)
            ub[self.arr.b_col] = lim / self.scale.bw_gbps
            self._ub = ub
        return self._ub

    def _refine(self, x: np.ndarray, polished: np.ndarray | None) -> None:
        """Add the pieces of T (:class:`hieropt.model.cutmodel.CutModel`) at the LP's B and the
        polished B (else the B of the LP's t) and re-load the LP when any is new."""
        b = self.scale.bw_gbps
        points = [self._bw(x)]
        tcol = self.arr.t_col
        if polished is not None:
            points.append(self._bw(polished))
        else:
            with np.errstate(divide="ignore"):
                at_t = b / np.maximum(x[np.maximum(tcol, 0)], 0.0)
            points.append(np.where(tcol >= 0, at_t, points[0]))
        tm = self.tm.with_pieces([self.tm.piece(p) for p in points])
        if tm is not self.tm:
            self.tm = tm
            self._reload()

    @property
    def s(self) -> float:
        """The smallest bandwidth unit (GB/s) of the loaded dimensions."""
        loaded = list(self.loaded) or list(range(self.tm.n_dims))
        return float(self.scale.bw_gbps[loaded].min())

    def _set_budget(self, budget_usd: float | None) -> None:
        if budget_usd != self._budget:
            self._budget = budget_usd
            self._set_row(self.arr.budget_row, -INF,
                          INF if budget_usd is None else budget_usd / self.scale.cost_usd)

    def _set_target(self, target_ns: float | None) -> None:
        if target_ns != self._target:
            self._target = target_ns
            self._set_row(self.arr.time_row, -INF, INF if target_ns is None else
                          (target_ns - self.tm.constant_ns) / self.scale.time_ns)

    def _bw(self, x: np.ndarray) -> np.ndarray:
        """B (GB/s) from the LP's columns, round-off below zero (and -0.0) clipped to 0."""
        return np.maximum(x[self.arr.b_col], 0.0) * self.scale.bw_gbps + 0.0

    def _within_budget(self, bw: np.ndarray) -> list[np.ndarray]:
        """``bw`` as a candidate under the budget
        (:func:`hieropt.solvers.line_search.within_budget`), as a list."""
        point = within_budget(self.instance, bw, self._budget, self.unit_cost,
                              lambda: cheapest_anchor(self.instance))
        return [] if point is None else [point]

    def min_time(self, rel_gap: float = REL_GAP, budget_usd: float | None = None) -> OAResult:
        """Minimise T(B) (ns) under the design constraints and, if given, cost(B) <= ``budget_usd``
        ($).

        Raises:
            NoSolutionError: infeasible (constraints or budget), a loaded dimension forced to
                zero bandwidth, or no upper limit on a loaded dimension's bandwidth.
            SolverError: HiGHS failed on every retry before any feasible point."""
        tm = self.tm
        self._require(budget_usd)
        self._set_target(None)
        self._set_budget(budget_usd)
        # (once per LP; the min-cost path, cut_first off, keeps its cuts)
        if self.cut_first and not self._widened:
            self._widened = True
            unit = self._unit()
            self._add_cuts([(j, float(unit[j] * f)) for j in range(unit.size) for f in WIDE_SEEDS])
        # every feasible design is fastest: report the cheapest (not a vertex of the budget)
        if not self.loaded:
            res = self._solve(self.arr.cost_costs)
            if res.status is not Status.OPTIMAL:
                self._diagnose_empty(res.x)
                if res.status is Status.LIMIT:
                    raise limit_reached("the cheapest design's LP", self.solver.time_limit_s)
                raise SolverError(f"HiGHS stopped with '{res.termination}'")
            bw = self._bw(res.x)
            if not meets_rows(self.instance, bw):  # (round-off clipped at 0 can break a row)
                anchor = cheapest_anchor(self.instance)
                bw = bw if anchor is None else within_rows(self.instance, bw, anchor)
            if budget_usd is not None:  # (the LP meets its budget row to HiGHS's tolerance only)
                fit = self._within_budget(bw)
                if not fit:
                    raise below_cheapest(budget_usd, float(self.unit_cost @ bw))
                bw = fit[0]
            # does not depend on bandwidth (latency-only collectives and max nodes included)
            T = tm.time_ns(bw)
            return OAResult(Status.OPTIMAL, bw, T, T, 1, "no collective traffic")
        spec = Loop(
            costs=lambda: self.arr.time_costs,
            native=lambda v: tm.constant_ns + v * self.scale.time_ns,
            candidates=lambda x: self._within_budget(self._bw(x)), score=tm.time_ns,
            slope=(lambda m: m * self.scale.time_ns / self.scale.cost_usd) if budget_usd else None,
            on_empty=self._diagnose_empty,
            refine=self._refine if isinstance(tm, CutModel) else None, cut_first=self.cut_first)
        out = self._loop(spec, rel_gap)
        if out.bw is None or not np.isfinite(out.upper):
            raise NoSolutionError(
                "infeasible",
                f"no bandwidth vector with a finite iteration time was found in "
                f"{out.iterations} LPs: the constraints{' and the budget' if budget_usd else ''} "
                "leave a dimension that carries traffic with (almost) no bandwidth",
            )
        return out

    def min_cost(self, target_ns: float, meets: np.ndarray, rel_gap: float = REL_GAP,
                 budget_usd: float | None = None) -> OAResult:
        """Minimise cost(B) ($) s.t. T(B) <= ``target_ns`` (ns) and the design constraints;
        ``meets``: (D,) GB/s, a design meeting the target (e.g. the performance optimum), the
        anchor of the feasible candidates; ``budget_usd``: an optional cost cap ($).

        Raises:
            ValueError: ``meets`` misses the target."""
        t_meets = self.tm.time_ns(meets)
        if t_meets > target_ns:
            raise ValueError("min_cost needs a point that meets the target")
        self._require(budget_usd)
        self._set_budget(budget_usd)
        self._set_target(target_ns)
        meets = np.asarray(meets, dtype=float)
        # centred on the known design before the first LP (not after a wasted one)
        self._centre(meets)
        self._add_cuts([(j, float(meets[d] * (1.0 + r))) for j, d in enumerate(self.arr.pair_b)
                        if meets[d] > 0 for r in MEETS_OFFSETS])

        def moves(x: np.ndarray, best: list) -> list[np.ndarray]:
            # the LP's point moved towards ``meets`` along the segment (feasible by convexity), and
            # towards the cheapest design found, raised by ANCHOR_RISE (room below the target)
            # when the rows allow (``meets`` may lie orders of magnitude away)
            bw = self._bw(x)

            def towards(anchor: np.ndarray, t_anchor: float) -> np.ndarray:
                # (a point that cannot undercut the cheapest found needs no exact digits)
                cost, rise = self.network_cost(bw), self.network_cost(anchor)
                tight = cost < best[1] or rise < cost
                rise = abs(rise - cost)
                tol = SEGMENT_DIGITS * rel_gap * best[1] / rise if rise > 0 else 0.0
                return meet_target(self.instance, self.tm, bw, anchor, t_anchor, target_ns, tight,
                                   tol)

            out = [towards(meets, t_meets)]
            raised = raised_anchor(self.instance, self.tm, within_rows(self.instance, bw, meets),
                                   target_ns)
            if raised is not None:
                out.append(towards(*raised))
            near = best[0] * (1 + ANCHOR_RISE)  # (its T only when the rows allow it)
            if (best[0] is not meets and within_rows(self.instance, near, best[0]) is near
                    and (t_near := self.tm.time_ns(near)) < target_ns):
                out.append(towards(near, t_near))
            return out

        try:
            return self._cheapest_loop(meets, budget_usd, moves,
                                  lambda point: self.tm.time_ns(point) <= target_ns, rel_gap)
        finally:
            self._set_target(None)

    def _cheapest_loop(self, meets: np.ndarray, budget_usd: float | None,
                  moves: Callable[[np.ndarray, list], list[np.ndarray]],
                  within: Callable[[np.ndarray], bool], rel_gap: float,
                  score: Callable[[np.ndarray], float] | None = None) -> OAResult:
        """The cheapest-design loop of both min-cost objectives (:meth:`min_cost`,
        :meth:`hieropt.solvers.portfolio.RegretLP.min_cost_within`): the candidates
        ``moves(x, best)`` of an LP point ``x`` (``best``: [the cheapest design found that is
        ``within`` the target, its cost $], from ``meets``), each one cheaper and within capping
        the LP's cost (:func:`cost_cap` with ``budget_usd``, $); ``score``: design -> $ (default
        the network's cost)."""
        best = [meets, self.network_cost(meets)]

        def candidates(x: np.ndarray) -> list[np.ndarray]:
            out = moves(x, best)
            for point in out:
                cost = self.network_cost(point)
                if cost < best[1] and within(point):
                    best[:] = [point, cost]
                    self._set_budget(cost_cap(budget_usd, cost))
            return out

        self._set_budget(cost_cap(budget_usd, best[1]))
        spec = Loop(costs=lambda: self.arr.cost_costs, native=lambda v: v * self.scale.cost_usd,
                    candidates=candidates, score=score or self.network_cost, start=meets)
        try:
            return self._loop(spec, rel_gap)
        finally:
            self._set_budget(budget_usd)


WIDE_SEEDS = (8.0,)
"""Further tangent cuts of the performance objective per link, at these multiples of its unit,
before its first LP: an optimum a few units above the scale's guess is then inside the cuts' span
and the first LP's point is trusted (:meth:`hieropt.solvers.cut_lp.CutLP.trusted`). Not for the
min-cost path (:attr:`hieropt.solvers.cut_lp.Loop.cut_first`)."""
SEGMENT_DIGITS = 1e-3
"""The min-cost line search's precision: the point it returns costs at most this fraction of the gap
target more than the segment's exact point."""
ANCHOR_RISE = 1e-6
"""Relative rise of the cheapest design found before it anchors the min-cost line search."""
CAP_SLACK = 1e-6
"""Relative slack of the min-cost loop's cost cap above the cheapest design found."""


RAISES = (1e-10, 1e-8, 1e-6)
"""Relative raises of an LP point tried, smallest first, as the anchor of :func:`raised_anchor`."""


def raised_anchor(instance: Instance, tm: TimeModel, bw: np.ndarray,
                  target_ns: float) -> tuple[np.ndarray, float] | None:
    """A near anchor for the min-cost line search from ``bw`` ((D,) GB/s, within the rows): ``bw`` x
    (1 + r) for the smallest r of :data:`RAISES` that keeps the rows and has T <= ``target_ns``
    (1 - :data:`~hieropt.solvers.line_search.TARGET_MARGIN`), with its time (ns); None when none
    does. Raising every bandwidth by r costs r of the network, far less near the fastest time
    than a move towards the fastest design."""
    limit = target_ns * (1 - TARGET_MARGIN)
    for r in RAISES:
        point = bw * (1 + r)
        if not meets_rows(instance, point):
            return None
        t = tm.time_ns(point)
        if t <= limit:
            return point, t
    return None


def cost_cap(budget_usd: float | None, incumbent_usd: float) -> float:
    """The min-cost loop's cost cap ($): the cheapest design found meeting the target (x (1 +
    :data:`CAP_SLACK`)), within ``budget_usd``. Valid (no cheaper design is cut off); it keeps the
    Lagrangian bound's box on the answer's scale."""
    cap = incumbent_usd * (1 + CAP_SLACK)
    return cap if budget_usd is None else min(budget_usd, cap)


MEETS_OFFSETS = (0.0, -1e-1, 1e-1, -1e-2, 1e-2, -1e-3, 1e-3, -1e-4, 1e-4)
"""Tangent cuts of the min-cost LP at ``meets`` x (1 + r): cuts bracketing the design near which the
cheapest design under a tight target lies."""
