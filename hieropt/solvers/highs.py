"""The HiGHS backend: a Pyomo model translated once into a persistent highspy LP, then re-solved in place.

Pyomo's persistent ``Highs`` interface (``pyomo.contrib.solver.solvers.highs``) declares the model to HiGHS
(``set_instance``) and switches objectives (``set_objective``). The cutting-plane loops then add their rows to the
same highspy object and call ``run`` directly: a Pyomo ``solve()`` costs ~2.5 ms of configuration and output
capture per call, ten times HiGHS's warm-started re-solve of these LPs (research/solver_probe.md §3a, §6.1).
Options are set explicitly on the highspy object once, so nothing persists by accident (probe pitfall P1).
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import highspy
import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.solvers.highs import Highs

from ..errors import SolverError
from ..result import Status

LP_TOLERANCE = 1e-9
"""HiGHS primal and dual feasibility tolerances; relative gaps below ~2.5e-9 are not reachable with them."""
TIGHT_TOLERANCE = 1e-10
"""Tolerances used once a cutting-plane loop stalls above its gap target (HiGHS's smallest)."""

_MS = highspy.HighsModelStatus
STATUS_OF: dict[Any, Status] = {
    _MS.kOptimal: Status.OPTIMAL,
    _MS.kTimeLimit: Status.LIMIT,
    _MS.kIterationLimit: Status.LIMIT,
    _MS.kSolutionLimit: Status.LIMIT,
    _MS.kObjectiveBound: Status.LIMIT,
    _MS.kObjectiveTarget: Status.LIMIT,
    _MS.kMemoryLimit: Status.ERROR,
    _MS.kInfeasible: Status.INFEASIBLE,
    _MS.kUnbounded: Status.UNBOUNDED,
    _MS.kUnboundedOrInfeasible: Status.UNBOUNDED,  # callers re-check feasibility with a bounded objective
    _MS.kModelEmpty: Status.OPTIMAL,
}
"""Map from HiGHS model statuses to :class:`Status`; every other status (errors, interrupts, unknown) is ERROR."""


def map_status(model_status: Any) -> Status:
    """Map a ``highspy.HighsModelStatus`` to a :class:`Status` (ERROR for anything not in :data:`STATUS_OF`)."""
    return STATUS_OF.get(model_status, Status.ERROR)


_OUTPUT_LOCK = threading.RLock()
"""Held while file descriptor 1 is redirected and while Pyomo captures solver output (``set_instance``, Pyomo's
``solve``): both are process-wide, so two threads doing it at once swap each other's stdout (and Pyomo's TeeStream
reader threads deadlock). Independent solves in threads stay independent; only these short sections take turns."""


def _after_fork_in_child() -> None:
    """A forked child starts with a fresh output lock (another thread of the parent may have held it) and a fresh
    HiGHS task scheduler: the parent's scheduler threads do not exist in the child, and a MIP solve would wait for
    them forever (issue 10: provision() in a forked child after one in the parent never returned)."""
    global _OUTPUT_LOCK
    _OUTPUT_LOCK = threading.RLock()
    highspy.Highs.resetGlobalScheduler(True)


os.register_at_fork(after_in_child=_after_fork_in_child)


@contextmanager
def quiet_stdout():
    """Send file-descriptor-level stdout to stderr while HiGHS starts (its banner would corrupt JSON on stdout), one
    thread at a time (:data:`_OUTPUT_LOCK`)."""
    with _OUTPUT_LOCK:
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


@dataclass(frozen=True)
class LPResult:
    """One LP solve: mapped status, HiGHS's model status name, objective value and column values (when optimal)."""

    status: Status
    termination: str
    objective: float
    x: np.ndarray


class PersistentHighs:
    """One persistent HiGHS LP for one Pyomo model, owned by one solve call (no global state).

    Args:
        model: a Pyomo model with exactly one active objective; later rows are added with :meth:`add_row`.
        time_limit_s: wall-clock limit of each solve, s.

    Raises:
        SolverError: highspy is not available or this Pyomo version's interface is not the one expected.
    """

    def __init__(self, model: Any, time_limit_s: float = 60.0):
        opt = Highs()
        if not opt.available():
            raise SolverError("HiGHS (highspy) is not available: pip install highspy")
        with quiet_stdout():
            opt.set_instance(model)
        try:
            self._h: highspy.Highs = opt._solver_model
            self._cols: dict[int, int] = opt._pyomo_var_to_solver_var_map
            self._rows: dict[Any, int] = opt._pyomo_con_to_solver_con_map
        except AttributeError as e:  # pragma: no cover - depends on the installed Pyomo
            raise SolverError(f"unsupported Pyomo version (persistent HiGHS interface changed: {e})") from e
        # Pyomo declares only variables that appear in a constraint or the objective; a dimension no constraint
        # names still needs its column (with its bounds) for the other objectives and the cuts.
        unused = [v for v in model.component_data_objects(pyo.Var, descend_into=True) if id(v) not in self._cols]
        if unused:
            opt.add_variables(unused)
        self._opt = opt
        self.time_limit_s = float(time_limit_s)
        for name, value in (("output_flag", False), ("primal_feasibility_tolerance", LP_TOLERANCE),
                            ("dual_feasibility_tolerance", LP_TOLERANCE)):
            self._h.setOptionValue(name, value)

    def set_tolerance(self, tol: float) -> None:
        """Set HiGHS's primal and dual feasibility tolerances (HiGHS accepts down to 1e-10)."""
        for name in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
            self._h.setOptionValue(name, tol)

    def col(self, var: Any) -> int:
        """HiGHS column index of a Pyomo variable."""
        return self._cols[id(var)]

    def row(self, con: Any) -> int:
        """HiGHS row index of a Pyomo constraint declared before :meth:`__init__`."""
        return self._rows[con]

    def objective_costs(self) -> np.ndarray:
        """The current objective coefficients of all columns (to restore them after :meth:`set_costs`)."""
        return np.asarray(self._h.getLp().col_cost_, dtype=float)

    def set_costs(self, costs: np.ndarray, maximize: bool = False) -> None:
        """Replace the objective by ``costs @ x`` (one coefficient per column), minimised or maximised.

        Objectives are switched here, on the HiGHS side, not through Pyomo's ``set_objective``: Pyomo would drop
        the columns only the old objective referenced and so shift the column indices of later variables.
        """
        n = self._h.getNumCol()
        self._h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(costs, dtype=float))
        sense = highspy.ObjSense.kMaximize if maximize else highspy.ObjSense.kMinimize
        self._h.changeObjectiveSense(sense)

    def add_row(self, lower: float, upper: float, cols: list[int], vals: list[float]) -> int:
        """Add the row ``lower <= sum vals[i] x[cols[i]] <= upper``; returns its index."""
        self._h.addRow(lower, upper, len(cols), np.asarray(cols, dtype=np.int32), np.asarray(vals, dtype=float))
        return self._h.getNumRow() - 1

    def change_row_bounds(self, row: int, lower: float, upper: float) -> None:
        """Change the bounds of row ``row``."""
        self._h.changeRowBounds(row, lower, upper)

    def row_duals(self) -> np.ndarray:
        """Row duals of the last optimal solve (d objective / d rhs, HiGHS's sign convention)."""
        return np.asarray(self._h.getSolution().row_dual, dtype=float)

    def col_duals(self) -> np.ndarray:
        """Column duals (reduced costs) of the last optimal solve: d objective / d the bound a column sits at."""
        return np.asarray(self._h.getSolution().col_dual, dtype=float)

    def change_col_bounds(self, col: int, lower: float, upper: float) -> None:
        """Change the bounds of column ``col``."""
        self._h.changeColBounds(col, lower, upper)

    def col_bounds(self, col: int) -> tuple[float, float]:
        """Current (lower, upper) bounds of column ``col``."""
        lp = self._h.getLp()
        return float(lp.col_lower_[col]), float(lp.col_upper_[col])

    def row_bounds(self, row: int) -> tuple[float, float]:
        """Current (lower, upper) bounds of row ``row``."""
        lp = self._h.getLp()
        return float(lp.row_lower_[row]), float(lp.row_upper_[row])

    def lp_arrays(self) -> dict[str, np.ndarray]:
        """The LP as dense arrays and its last solution: ``A`` (rows x cols), ``cost``, ``col_lower``, ``col_upper``,
        ``row_lower``, ``row_upper``, ``x``, ``row_value``, ``row_dual``, ``col_dual`` (HiGHS's conventions:
        cost = A^T row_dual + col_dual at an optimum)."""
        lp = self._h.getLp()
        m, n = int(lp.num_row_), int(lp.num_col_)
        A = np.zeros((m, n))
        start = np.asarray(lp.a_matrix_.start_, dtype=int)
        index = np.asarray(lp.a_matrix_.index_, dtype=int)
        value = np.asarray(lp.a_matrix_.value_, dtype=float)
        for j in range(n):  # column-wise storage
            A[index[start[j]:start[j + 1]], j] = value[start[j]:start[j + 1]]
        sol = self._h.getSolution()
        def arr(v) -> np.ndarray:
            return np.asarray(v, dtype=float)

        return {"A": A, "cost": arr(lp.col_cost_), "col_lower": arr(lp.col_lower_), "col_upper": arr(lp.col_upper_),
                "row_lower": arr(lp.row_lower_), "row_upper": arr(lp.row_upper_), "x": arr(sol.col_value),
                "row_value": arr(sol.row_value), "row_dual": arr(sol.row_dual), "col_dual": arr(sol.col_dual)}

    def _run(self) -> None:
        # HiGHS's time_limit counts the object's total run time, so each solve gets the limit on top of it
        self._h.setOptionValue("time_limit", self._h.getRunTime() + self.time_limit_s)
        self._h.run()

    def solve(self) -> LPResult:
        """Solve in place (warm-started from the previous basis) and return status, objective and column values.

        A warm start can fail on these badly scaled cut rows (HiGHS: "excessive dual values", a false Infeasible or
        an error); any status other than Optimal is therefore confirmed by one cold solve (``clearSolver``).
        """
        self._run()
        if self._h.getModelStatus() != _MS.kOptimal:
            self._h.clearSolver()
            self._run()
        status = map_status(self._h.getModelStatus())
        name = self._h.modelStatusToString(self._h.getModelStatus())
        if status is not Status.OPTIMAL:
            return LPResult(status, name, float("nan"), np.zeros(0))
        x = np.asarray(self._h.getSolution().col_value, dtype=float)
        return LPResult(status, name, float(self._h.getInfo().objective_function_value), x)
