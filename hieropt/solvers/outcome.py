"""What a cutting-plane loop (:mod:`hieropt.solvers.cut_lp`) returns: the certified outcome of a
solve, and the multipliers of its best bound."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..formulation.arrays import LPArrays
from ..result import Status

__all__ = ["Multipliers", "OAResult"]

INF = float("inf")


@dataclass(frozen=True)
class OAResult:
    """Outcome of one cutting-plane solve (every loop's: time, cost, time x cost, a portfolio's
    ratio).

    Attributes:
        status: OPTIMAL when the gap target was met, LIMIT otherwise (the bounds still hold).
        bw: (D,) best feasible bandwidths found, GB/s (None when none was found).
        upper: objective at ``bw`` (ns for time, $ for cost, ns x $, a ratio).
        lower: proven lower bound on the optimum (same unit).
        iterations: LPs solved.
        message: one line.
        budget_dual_ns_per_usd: slope (<= 0, ns per $) of a line under f(budget) through (budget,
            lp_lower_ns); 0 when no budget row was set.
        lp_lower_ns: the anchor of that line, a proven lower bound of f at this budget, ns.
        cuts: tangent cuts in the loop's LP at the end (where the caller does not hold the LP).
        kappa_range: performance per cost: the network costs ($) searched, the exact cheapest and
            dearest or bounds that contain them.
    """

    status: Status
    bw: np.ndarray | None
    upper: float
    lower: float
    iterations: int
    message: str
    budget_dual_ns_per_usd: float = 0.0
    lp_lower_ns: float = 0.0
    cuts: int = 0
    kappa_range: tuple[float, float] = (0.0, 0.0)

    @property
    def gap(self) -> float:
        """Relative gap (upper - lower)/upper, clipped at 0 (inf when no finite design was found; 0
        when the best is worth 0)."""
        if not self.upper < INF:
            return INF
        return max(0.0, (self.upper - self.lower) / self.upper) if self.upper > 0 else 0.0


@dataclass(frozen=True)
class Multipliers:
    """The row multipliers ``duals`` of a loop's best bound with the LP's arrays, scale, objective
    ``costs`` and point ``x`` then: subgradients of the optimum in the rows' bounds
    (:mod:`hieropt.solvers.sensitivity`)."""

    arr: LPArrays
    scale: object
    costs: np.ndarray
    x: np.ndarray
    duals: np.ndarray
