"""The set-up checks and diagnoses of :class:`hieropt.solvers.cutting.TimeLP` (its base class):
whether the design constraints bound the loaded dimensions, the cheapest and dearest network, and
what an LP without a finite-time design means (infeasible rows, a budget below the cheapest network,
a loaded dimension forced to zero bandwidth, or one whose unit is too large for the LP's cuts to
reach the little bandwidth it needs).

The methods read the attributes :class:`hieropt.solvers.cutting.TimeLP` sets (``instance``,
``scale``, ``arr``, ``_limits``, ``_budget``, ``_target``, ``_checked``, ``_cheapest``) and its
plumbing (``_set_budget``, ``_set_target``, ``_bw``, ``network_cost``, ``loaded``).
"""

from __future__ import annotations

import numpy as np

from ..errors import NoSolutionError
from ..result import Status
from .cost_range import below_cheapest, network_cost_range, rows_infeasible, unlimited_dimensions
from .cut_lp import INF, CutLP

__all__ = ["LPChecks", "STARVE"]

STARVE = 1e-3
"""Factor on the unit of a loaded dimension that the LP leaves at zero bandwidth before any finite
candidate."""


class LPChecks(CutLP):
    """:class:`hieropt.solvers.cut_lp.CutLP` with the performance LP's set-up checks and diagnoses
    (module docstring); not used on its own."""

    def _check(self) -> None:
        """Once: whether the design constraints bound every loaded dimension (else a budget must). A
        single row or bound that limits each loaded dimension alone decides it without an LP;
        otherwise the rows' recession cone does
        (:func:`hieropt.solvers.cost_range.unlimited_dimensions`: the same at every scale), and one
        LP (max sum of the loaded bandwidths) tells infeasible constraints apart and gives the
        reach."""
        if self._checked:
            return
        self._checked = True
        loaded = list(self.loaded)
        limits = self._limits[loaded].tolist()
        if loaded and all(0 < v < INF for v in limits):
            self.bounded, self.reach_gbps, self.unlimited = True, float(np.sum(limits)), ()
            return
        budget, target = self._budget, self._target
        self._set_budget(None)
        self._set_target(None)
        costs = np.zeros(self.arr.n_cols)
        costs[self.arr.b_col[loaded]] = self.scale.bw_gbps[loaded]
        res = self._solve(costs if loaded else self.arr.cost_costs, maximize=True)
        if res.status is not Status.OPTIMAL:
            # bounded below by 0: not optimal means infeasible
            check = self._solve(self.arr.cost_costs)
            if check.status is not Status.OPTIMAL:
                raise rows_infeasible(self.instance)
        # (decided on the rows' recession cone, the same at every scale: not on this LP's optimum,
        # which HiGHS reports as a huge finite value at some scales and as 'Unbounded' at others)
        self.unlimited = unlimited_dimensions(
            self.instance, loaded, time_limit_s=self.solver.time_limit_s
        )
        self.bounded = not self.unlimited
        self.reach_gbps = res.objective if self.bounded and res.status is Status.OPTIMAL else INF
        self._set_budget(budget)
        self._set_target(target)

    def _require(self, budget_usd: float | None) -> None:
        """Raise NoSolutionError unless the rows (with ``budget_usd``) admit a solution with finite
        bandwidth."""
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
                f"has no minimum; e.g. --constraint 'sum(bw) == 500'",
            )
        if self.loaded and self.reach_gbps <= 0:
            raise NoSolutionError(
                "infeasible",
                "the design constraints force zero bandwidth on every dimension that "
                "carries traffic",
            )

    def cost_range(self) -> tuple[float, float]:
        """(cheapest, dearest) feasible network cost in $ (dearest may be inf), without budget or
        time rows.

        Raises:
            NoSolutionError: the design constraints are infeasible.
        """
        budget, target = self._budget, self._target
        self._set_budget(None)
        self._set_target(None)
        lo = self._solve(self.arr.cost_costs)
        # infeasible rows, or HiGHS failing on this LP's cuts and units: the
        if lo.status is not Status.OPTIMAL:
            # rows alone, in their own units, tell which (raises when they are infeasible)
            self._set_budget(budget)
            self._set_target(target)
            self._cheapest, dearest = network_cost_range(self.instance, self.solver.time_limit_s)
            self._cheapest_lp = self._cheapest
            return self._cheapest, dearest
        hi = self._solve(self.arr.cost_costs, maximize=True)
        self._set_budget(budget)
        self._set_target(target)
        self._cheapest = self.network_cost(self._bw(lo.x))
        # the LP's own value: its notion of the cheapest
        self._cheapest_lp = lo.objective * self.scale.cost_usd
        return self._cheapest, (
            self.network_cost(self._bw(hi.x)) if hi.status is Status.OPTIMAL else INF
        )

    def _diagnose_empty(self, x: np.ndarray) -> bool:
        """No design with a finite time yet: the first LP is infeasible, or it left a loaded
        dimension (almost) at zero. Raises NoSolutionError with the reason; returns True when the LP
        is worth solving again (a budget at the cheapest network, which HiGHS's tolerances can make
        look infeasible, is set to the LP's own cheapest cost, the same budget within round-off)."""
        if x.size == 0:
            budget = self._budget
            self.cost_range()  # raises when the design rows alone are infeasible
            if budget is not None and budget < self._cheapest_lp * (1 - 1e-9):
                raise below_cheapest(budget, self._cheapest)
            if budget is not None and budget < self._cheapest_lp * (1 + 1e-9):
                self._set_row_upper(
                    self.arr.budget_row, self._cheapest_lp * (1 + 1e-12) / self.scale.cost_usd
                )
                return True
            return False
        bw = self._bw(x)
        top = float(bw.max(initial=0.0))
        for d in self.loaded:
            if bw[d] <= 1e-9 * top and self._forced_zero(d):
                raise NoSolutionError(
                    "infeasible",
                    f"dimension {d} carries traffic but the design constraints "
                    f"{'and the budget ' if self._budget is not None else ''}force bw[{d}] = 0",
                )
        return False

    def _forced_zero(self, d: int) -> bool:
        """Whether the rows (budget included) allow dimension ``d`` no bandwidth beyond round-off
        (one LP)."""
        costs = np.zeros(self.arr.n_cols)
        costs[self.arr.b_col[d]] = 1.0
        res = self._solve(costs, maximize=True)
        return res.status is Status.OPTIMAL and res.objective <= 1e-9 * max(
            1.0, float(self.scale.bw_gbps.max() / self.scale.bw_gbps[d])
        )

    def _starved(self, x: np.ndarray) -> np.ndarray | None:
        """No finite candidate yet and the LP point ``x`` leaves a loaded dimension at (almost) zero
        bandwidth (not forced there: :meth:`_diagnose_empty` raised before): a design whose units
        shrink by :data:`STARVE` on those dimensions. Cuts stop at
        :data:`hieropt.solvers.cut_lp.CUT_RANGE` of a unit; below it the LP's t is a finite
        extrapolation of a time that grows without bound, and a dimension whose time hides under a
        compute term of 1e7 its size (0.5 bytes against 7e7) can need less than that."""
        bw = self._bw(x)
        top = float(bw.max(initial=0.0))
        starved = [d for d in self.loaded if bw[d] <= 1e-9 * top]
        if not starved:
            return None
        design = np.zeros(bw.size)
        design[starved] = self.scale.bw_gbps[starved] * STARVE
        return design
