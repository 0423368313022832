"""What a cutting-plane loop (:mod:`hieropt.solvers.cut_lp`) returns: the certified outcome of a solve, and the
multipliers of its best bound."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..formulation.arrays import LPArrays
from ..result import Status

__all__ = ["Multipliers", "OAResult"]


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


@dataclass(frozen=True)
class Multipliers:
    """The row multipliers ``duals`` of a loop's best bound with the LP's arrays, scale, objective ``costs`` and
    point ``x`` then: subgradients of the optimum in the rows' bounds (:mod:`hieropt.solvers.sensitivity`)."""

    arr: LPArrays
    scale: object
    costs: np.ndarray
    x: np.ndarray
    duals: np.ndarray
