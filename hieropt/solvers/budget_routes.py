"""The routes of the fastest design within a budget
(:func:`hieropt.solvers.procurement.fastest_design`, each point of the Pareto front, the performance
objective with a budget), most special first: a budget a hair above the cheapest network, a budget
far below the LP's bandwidth unit, and the performance LP for every other case
(:mod:`hieropt.solvers.routing`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..errors import NoSolutionError, SolverError
from .cost_range import CheapestVertex, below_cheapest
from .cutting import OAResult, TimeLP
from .near_cheapest import fastest_near_cheapest, near_cheapest
from .ratio import RatioCore
from .routing import Route, first_route

__all__ = ["BudgetCase", "NearCheapestBudget", "BudgetFarBelowScale", "TimeLPWithinBudget",
           "BUDGET_ROUTES", "fastest_within"]


@dataclass
class BudgetCase:
    """One fastest-within-a-budget solve: the performance LP ``core`` of the instance (its cuts kept
    across the solves of a sweep), the budget ``budget_usd`` ($, None: none) and the gap target
    ``rel_gap``."""

    core: TimeLP = field(repr=False)
    budget_usd: float | None
    rel_gap: float

    @cached_property
    def vertex(self) -> CheapestVertex | None:
        """The cheapest network when the budget is a hair above its cost and it starves a loaded
        dimension (:func:`hieropt.solvers.near_cheapest.near_cheapest`), else None."""
        if self.budget_usd is None:
            return None
        return near_cheapest(self.core.instance, self.core.tm, self.budget_usd)


class NearCheapestBudget:
    """A budget 1e-13 ... 1e-2 above the cheapest network's cost, where that network leaves a loaded
    dimension without bandwidth: the budget row's slack is lost in the rounding of the cost, so the
    row is stated exactly from the cheapest network's duals
    (:func:`hieropt.solvers.near_cheapest.fastest_near_cheapest`). Decision record: a budget a hair
    above the cheapest network."""

    name = "near_cheapest_budget"

    def accepts(self, case: BudgetCase) -> bool:
        """A budget within :data:`hieropt.solvers.near_cheapest.NEAR_SLACK` above a starving
        cheapest network."""
        return case.vertex is not None

    def solve(self, case: BudgetCase) -> OAResult:
        """The fastest design within the budget, on the exact reduced budget row."""
        core = case.core
        out, lps = fastest_near_cheapest(core.instance, core.tm, case.budget_usd, case.rel_gap,
                                         case.vertex, core.solver.time_limit_s)
        core.lps += lps
        return out


class BudgetFarBelowScale:
    """A budget that buys more than 100 x less bandwidth than the performance LP's unit
    (:func:`far_below_scale`): the time LP's cuts would sit under HiGHS's absolute tolerances, so
    the cost-share LP, whose units follow the budget, solves it
    (:class:`hieropt.solvers.ratio.RatioCore`). Decision record: a budget far below the LP's
    scale."""

    name = "budget_far_below_scale"

    def accepts(self, case: BudgetCase) -> bool:
        """A budget whose uniform bandwidth (budget / sum of prices) is below 1e-2 of the LP's
        unit."""
        return case.budget_usd is not None and far_below_scale(case.core, case.budget_usd)

    def solve(self, case: BudgetCase) -> OAResult:
        """The fastest design within the budget on the cost-share LP."""
        return fastest_by_shares(case.core, case.budget_usd, case.rel_gap)


class TimeLPWithinBudget:
    """Every other case: Kelley's cutting planes on the performance LP
    (:meth:`hieropt.solvers.cutting.TimeLP.min_time`), with or without a budget row. Its units
    follow the instance's limits, so when it fails with a budget (anything but unbounded) the
    cost-share LP, whose units follow the budget, solves the case again. Decision record: cutting
    planes with a Lagrangian bound."""

    name = "time_lp"

    def accepts(self, case: BudgetCase) -> bool:
        """Every case."""
        return True

    def solve(self, case: BudgetCase) -> OAResult:
        """The fastest design within the budget (if any) by cutting planes on the performance LP.

        Raises:
            NoSolutionError: infeasible or unbounded
                (:meth:`hieropt.solvers.cutting.TimeLP.min_time`).
        """
        try:
            return case.core.min_time(case.rel_gap, budget_usd=case.budget_usd)
        except (SolverError, NoSolutionError) as e:
            if case.budget_usd is None or isinstance(e, NoSolutionError) and e.kind == "unbounded":
                raise
            return fastest_by_shares(case.core, case.budget_usd, case.rel_gap)


BUDGET_ROUTES: tuple[Route, ...] = (NearCheapestBudget(), BudgetFarBelowScale(),
                                    TimeLPWithinBudget())
"""The routes of the fastest design within a budget, walked in this order (the last accepts every
case)."""


def fastest_within(core: TimeLP, budget_usd: float | None, rel_gap: float) -> OAResult:
    """The fastest design within ``budget_usd`` ($, None: none) on ``core``, by the first of
    :data:`BUDGET_ROUTES` that accepts the case.

    Raises:
        NoSolutionError: infeasible or unbounded.
        SolverError: the LP failed.
    """
    return first_route(BUDGET_ROUTES, BudgetCase(core, budget_usd, rel_gap))[1]


def far_below_scale(core: TimeLP, budget_usd: float) -> bool:
    """Whether the bandwidth a budget buys (budget / sum of prices, GB/s on every dimension) is more
    than 100 x below the LP's bandwidth unit (set by the instance's tightest upper limit, e.g. a cap
    far above what the budget buys): the time LP's cuts would then sit at 1e-4 model units and
    below."""
    return _uniform_gbps(core, budget_usd) < 1e-2 * core.s


def _uniform_gbps(core: TimeLP, budget_usd: float) -> float:
    """The bandwidth (GB/s) on every dimension that ``budget_usd`` buys."""
    return budget_usd / float(np.sum(core.lp.cost_musd_per_gbps) * 1e6)


def fastest_by_shares(core: TimeLP, budget_usd: float, rel_gap: float) -> OAResult:
    """The fastest design within ``budget_usd`` on the cost-share LP, whose units follow the budget.

    Raises:
        NoSolutionError: infeasible constraints, or a budget below the cheapest network they allow.
    """
    # (a cap far above the budget: left out)
    rc = RatioCore(core.instance, core.tm, _uniform_gbps(core, budget_usd),
                   core.solver.time_limit_s, budget_usd, prune=True)
    try:
        k_min, _ = rc.cost_range()  # infeasible constraints are reported as such
        if budget_usd < k_min * (1 - 1e-9):
            raise below_cheapest(budget_usd, k_min)
        out = rc.fastest_within(budget_usd, rel_gap)
    finally:
        rc.close()
        core.lps += rc.lps
    return out
