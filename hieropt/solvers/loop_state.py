"""What an objective gives the cutting-plane loop of :mod:`hieropt.solvers.cut_lp` (:class:`Loop`),
and the incumbent and bounds one run of that loop keeps (:class:`LoopState`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..result import Status
from .outcome import OAResult

INF = float("inf")


@dataclass
class Loop:
    """What one objective gives the shared loop (all callables of the LP's column vector ``x``,
    scaled units).

    Attributes:
        costs: () -> the LP objective (minimised) at the current scale (a re-scale changes it).
        native: a scaled bound -> the objective's unit (ns, $, ns x $).
        candidates: x -> designs (GB/s) to evaluate exactly.
        score: design -> exact objective value (inf when infeasible).
        start: a known feasible design, or None.
        slope: the bound's multiplier of the budget row -> d bound / d budget in native units
            (0: none).
        on_empty: called with the LP's point (empty when the first LP is infeasible) while no
            candidate, or only one with a dimension (almost) without bandwidth, has been found;
            raises NoSolutionError with the reason, or returns True to have the LP solved again.
        refine: called after every LP that did not close the gap with its point and the polished
            point (or None): adds the model's own cuts (pieces of T for
            :class:`hieropt.model.cutmodel.CutModel`) and re-loads the LP.
        cut_first: when the first LP's point is not
            :meth:`hieropt.solvers.cut_lp.CutLP.trusted`, cut it once more before the polish (the
            performance objective: one warm LP instead of up to four Newton runs from a guessed
            active set on LIBRA's multiple_constraints cases). Off for the min-cost path, whose
            loop re-uses the fastest solve's cuts: a different cut set there moved a fragile case
            (tests/fuzz/test_solver_at_extreme_magnitudes.py, a target 1e-3 above the fastest
            time) from optimal to LIMIT at 3.1e-8.
    """

    costs: Callable[[], np.ndarray]
    native: Callable[[float], float]
    candidates: Callable[[np.ndarray], list[np.ndarray]]
    score: Callable[[np.ndarray], float]
    start: np.ndarray | None = None
    slope: Callable[[float], float] | None = None
    on_empty: Callable[[np.ndarray], bool] | None = None
    refine: Callable[[np.ndarray, np.ndarray | None], None] | None = None
    cut_first: bool = False


@dataclass
class LoopState:
    """One loop's incumbent and bounds in the objective's unit: the best design and its value (the
    upper bound), the best proven lower bound and its anchor (that bound, d bound / d budget)."""

    spec: Loop
    rel_gap: float
    best: np.ndarray | None
    upper: float = INF
    lower: float = -INF
    anchor: tuple[float, float] = (-INF, 0.0)

    def offer(self, x: np.ndarray) -> bool:
        """Score the objective's candidate designs at the LP point ``x`` and keep the best.
        Returns True when the incumbent improved by more than round-off."""
        improved = False
        for design in self.spec.candidates(x):
            value = self.spec.score(design)
            if value < self.upper:
                improved = improved or value < self.upper * (1 - 1e-13)
                self.best, self.upper = design, value
        return improved

    def done(self) -> bool:
        """True when there is an incumbent and the proven gap meets the target."""
        return self.best is not None and self.upper - self.lower <= self.rel_gap * self.upper

    def result(self, it: int, max_iterations: int) -> OAResult:
        """The loop's outcome after ``it`` LPs: OPTIMAL when :meth:`done`, else LIMIT with the
        proven relative gap and why it stopped (the iteration limit or a stall)."""
        if self.done():
            return OAResult(Status.OPTIMAL, self.best, self.upper, self.lower, it,
                            "optimal within the gap target",
                            budget_dual_ns_per_usd=self.anchor[1], lp_lower_ns=self.anchor[0])
        upper = self.upper
        gap = (upper - self.lower) / upper if upper > 0 and np.isfinite(upper) else INF
        why = ("iteration limit" if it >= max_iterations
               else "no further progress at the LP tolerance floor")
        return OAResult(Status.LIMIT, self.best, upper, self.lower, it,
                        f"stopped after {it} LPs at proven relative gap {gap:.3g} ({why})",
                        budget_dual_ns_per_usd=self.anchor[1], lp_lower_ns=self.anchor[0])
