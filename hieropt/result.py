"""Result types shared by every solver: :class:`Status` and :class:`Solution` (scipy/Pyomo-style result object)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from .model.timing import Breakdown


class Status(StrEnum):
    """Why a solve stopped. Only ``OPTIMAL`` carries a certified optimum (gap within the target)."""

    OPTIMAL = "optimal"
    LIMIT = "limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    ERROR = "error"


@dataclass(frozen=True)
class Solution:
    """The outcome of one solve.

    Attributes:
        status: see :class:`Status`; ``success`` is ``status is OPTIMAL``.
        message: one line, human-readable.
        objective: the objective that was optimized (e.g. ``"performance"``).
        bw_gbps: (D,) optimal per-NPU bandwidth of each dimension, GB/s. At a relative gap g the objective is known
            to about g, the bandwidths only to roughly sqrt(g) where the optimum is flat (research/solver_probe.md P4).
        iteration_time_ns: T(bw_gbps), re-evaluated by the independent evaluator.
        network_cost_usd: cost(bw_gbps), $.
        objective_value: the objective at ``bw_gbps`` (re-evaluated), in ``objective_unit``: ns for performance,
            $ for min_cost, ns * $ for performance_per_cost.
        objective_bound: proven lower bound on the optimal objective value (same unit).
        objective_unit: ``"ns"``, ``"USD"`` or ``"ns*USD"``.
        lower_bound_ns: proven lower bound on the optimal iteration time (performance objective), else None.
        gap: relative gap (objective_value - objective_bound) / objective_value, >= 0.
        iterations: LPs solved (all sub-solves included).
        solve_seconds: wall time of build + solve + verify, s.
        breakdown: the evaluator's breakdown at ``bw_gbps``.
        method: the algorithm used.
        notes: remarks a user should read (e.g. dimensions without traffic).
        extra: method-specific statistics (cuts, LP rows, ...).
    """

    status: Status
    message: str
    objective: str
    bw_gbps: np.ndarray
    iteration_time_ns: float
    network_cost_usd: float
    objective_value: float
    objective_bound: float
    objective_unit: str
    lower_bound_ns: float | None
    gap: float
    iterations: int
    solve_seconds: float
    breakdown: Breakdown
    method: str
    notes: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def success(self) -> bool:
        """True when the result is a certified optimum."""
        return self.status is Status.OPTIMAL
