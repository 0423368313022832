"""The HiGHS backend through Pyomo's persistent solver interface (``pyomo.contrib.solver`` factory name ``highs``).

Options persist on that interface between calls (research/solver_probe.md P1), so every call passes them all.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import TerminationCondition

from ..result import Status

LP_TOLERANCE = 1e-9
"""HiGHS primal and dual feasibility tolerances; relative gaps below ~2.5e-9 are not reachable with them."""

_TC = TerminationCondition
STATUS_OF: dict[TerminationCondition, Status] = {
    _TC.convergenceCriteriaSatisfied: Status.OPTIMAL,
    _TC.maxTimeLimit: Status.LIMIT,
    _TC.iterationLimit: Status.LIMIT,
    _TC.objectiveLimit: Status.LIMIT,
    _TC.minStepLength: Status.ERROR,
    _TC.unbounded: Status.UNBOUNDED,
    _TC.provenInfeasible: Status.INFEASIBLE,
    _TC.locallyInfeasible: Status.INFEASIBLE,
    _TC.infeasibleOrUnbounded: Status.INFEASIBLE,
    _TC.error: Status.ERROR,
    _TC.interrupted: Status.ERROR,
    _TC.licensingProblems: Status.ERROR,
    _TC.emptyModel: Status.ERROR,
    _TC.unknown: Status.ERROR,
}
"""Total map from Pyomo's termination conditions to :class:`Status` (unlisted members fall back to ERROR)."""


def map_status(tc: TerminationCondition) -> Status:
    """Map a Pyomo termination condition to a :class:`Status` (ERROR for anything unknown)."""
    return STATUS_OF.get(tc, Status.ERROR)


@contextmanager
def quiet_stdout():
    """Send file-descriptor-level stdout to stderr while HiGHS is created (its banner would corrupt JSON output)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no real fd (e.g. captured by a test runner)
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


@dataclass
class LPResult:
    """Status and objective of one LP solve (values are loaded into the Pyomo model when optimal)."""

    status: Status
    objective: float
    termination: str


class PersistentHighs:
    """One persistent HiGHS LP/MILP solver owned by one solve call (no global state).

    Args:
        time_limit_s: wall-clock limit passed to every solve.
    """

    def __init__(self, time_limit_s: float = 60.0):
        with quiet_stdout():
            self._opt = SolverFactory("highs")
            if not self._opt.available():
                raise RuntimeError("HiGHS (highspy) is not available: pip install highspy")
        self.time_limit_s = time_limit_s

    def solve(self, model: Any) -> LPResult:
        """Solve ``model`` (re-using the persistent instance), load values when optimal, and map the status."""
        with quiet_stdout():
            res = self._opt.solve(
                model,
                time_limit=self.time_limit_s,
                rel_gap=1e-9,
                load_solutions=False,
                raise_exception_on_nonoptimal_result=False,
                solver_options={
                    "primal_feasibility_tolerance": LP_TOLERANCE,
                    "dual_feasibility_tolerance": LP_TOLERANCE,
                    "output_flag": False,
                },
            )
        status = map_status(res.termination_condition)
        obj = float("nan")
        if status is Status.OPTIMAL:
            res.solution_loader.load_vars()
            obj = float(res.incumbent_objective) if res.incumbent_objective is not None else 0.0
        return LPResult(status=status, objective=obj, termination=res.termination_condition.name)
