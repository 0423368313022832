"""Pyomo models in HiGHS: a Pyomo model translated once into a persistent highspy LP, then re-solved in place.

Used by the solvers that extend the performance LP with Pyomo rows of their own (portfolios, sensitivity ranging)
and by the procurement LP; the cutting-plane core itself hands HiGHS arrays (:class:`hieropt.solvers.highs.HighsLP`).
The model is declared to a highspy object through Pyomo's public linear representation (``generate_standard_repn``
of each row and of the objective; columns and rows found again by the components themselves, ``ComponentMap``),
not through the private maps of Pyomo's persistent interface; the cutting-plane loops then add their rows to the
same highspy object and call ``run`` directly. Options are set explicitly on the highspy object once, so nothing
persists by accident.
"""

from __future__ import annotations

from typing import Any

import highspy
import numpy as np
import pyomo.environ as pyo
from pyomo.common.collections import ComponentMap
from pyomo.repn import generate_standard_repn

from ..errors import SolverError
from ..result import Status
from .highs import LP_TOLERANCE, LPResult, map_status

INF = float("inf")

_MS = highspy.HighsModelStatus

__all__ = ["PersistentHighs"]


def _load(h: highspy.Highs, model: Any) -> tuple[ComponentMap, ComponentMap]:
    """Declare ``model`` (linear rows, one active objective, minimised) to the empty highspy object ``h``: every
    variable of the model a column in declaration order (a variable no row names, e.g. a dimension no constraint
    mentions, keeps its column and bounds; one reached twice through a Reference once), every active constraint a
    row, each through Pyomo's public linear representation (``generate_standard_repn``). Returns the column of each
    variable and the row of each constraint (Pyomo ``ComponentMap`` s, keyed by the components themselves).

    Raises:
        SolverError: a row or the objective is not linear, or HiGHS rejects the model.
    """
    cols = ComponentMap()
    lower, upper = [], []
    for v in model.component_data_objects(pyo.Var, descend_into=True):
        if v in cols:
            continue
        cols[v] = len(lower)
        lo, hi = (v.value, v.value) if v.fixed else (v.lb, v.ub)
        lower.append(-INF if lo is None else float(lo))
        upper.append(INF if hi is None else float(hi))
    n = len(lower)
    if h.addVars(n, np.array(lower), np.array(upper)) != highspy.HighsStatus.kOk:
        raise SolverError("HiGHS rejected the LP's columns")
    rows = ComponentMap()
    row_lo, row_hi, start, index, value = [], [], [], [], []
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        repn = _linear(con.body, con.name)
        rows[con] = len(row_lo)
        row_lo.append(-INF if con.lower is None else float(pyo.value(con.lower)) - repn.constant)
        row_hi.append(INF if con.upper is None else float(pyo.value(con.upper)) - repn.constant)
        start.append(len(index))
        index += [cols[v] for v in repn.linear_vars]
        value += [float(c) for c in repn.linear_coefs]
    if row_lo and h.addRows(len(row_lo), np.array(row_lo), np.array(row_hi), len(index),
                            np.array(start, dtype=np.int32), np.array(index, dtype=np.int32),
                            np.array(value)) == highspy.HighsStatus.kError:
        raise SolverError("HiGHS rejected the LP's rows")
    objectives = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if len(objectives) != 1:
        raise SolverError(f"the LP has {len(objectives)} active objectives; it needs one")
    repn = _linear(objectives[0].expr, objectives[0].name)
    costs = np.zeros(n)
    for v, c in zip(repn.linear_vars, repn.linear_coefs, strict=True):
        costs[cols[v]] += float(c)
    sign = 1.0 if objectives[0].sense == pyo.minimize else -1.0
    h.changeColsCost(n, np.arange(n, dtype=np.int32), sign * costs)
    h.changeObjectiveOffset(sign * float(repn.constant))
    return cols, rows


def _linear(expr: Any, name: str) -> Any:
    """Pyomo's standard (linear) representation of ``expr``.

    Raises:
        SolverError: ``expr`` is not linear.
    """
    repn = generate_standard_repn(expr, quadratic=False)
    if not repn.is_linear():
        raise SolverError(f"'{name}' is not linear: the LP interface takes linear rows only")
    return repn


class PersistentHighs:
    """One persistent HiGHS LP for one Pyomo model, owned by one solve call (no global state).

    Args:
        model: a Pyomo model with exactly one active objective; later rows are added with :meth:`add_row`.
        time_limit_s: wall-clock limit of each solve, s.

    Raises:
        SolverError: a row or the objective is not linear, or HiGHS rejects the model.
    """

    def __init__(self, model: Any, time_limit_s: float = 60.0):
        self._h = highspy.Highs()
        self.time_limit_s = float(time_limit_s)
        for name, value in (("output_flag", False), ("primal_feasibility_tolerance", LP_TOLERANCE),
                            ("dual_feasibility_tolerance", LP_TOLERANCE)):
            self._h.setOptionValue(name, value)
        self._cols, self._rows = _load(self._h, model)

    def set_tolerance(self, tol: float) -> None:
        """Set HiGHS's primal and dual feasibility tolerances (HiGHS accepts down to 1e-10)."""
        for name in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
            self._h.setOptionValue(name, tol)

    def col(self, var: Any) -> int:
        """HiGHS column index of a Pyomo variable."""
        return self._cols[var]

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

    def row_activity(self) -> np.ndarray:
        """Row activities (the left-hand sides) of the last optimal solve."""
        return np.asarray(self._h.getSolution().row_value, dtype=float)

    def add_col(self, lower: float, upper: float, rows: list[int], vals: list[float]) -> int:
        """Add a column with bounds [lower, upper], cost 0 and coefficients ``vals`` in ``rows``; returns its index."""
        self._h.addCol(0.0, lower, upper, len(rows), np.asarray(rows, dtype=np.int32), np.asarray(vals, dtype=float))
        return self._h.getNumCol() - 1

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

    def ranging(self) -> Any:
        """HiGHS's sensitivity ranging of the last optimal basis (``highspy.HighsRanging``: ``row_bound_up`` /
        ``row_bound_dn`` and ``col_bound_up`` / ``col_bound_dn``, each with ``value_`` (the bound up or down to which
        the basis stays optimal) and ``objective_`` (the objective there)), or None when HiGHS gives none."""
        status, r = self._h.getRanging()
        return r if status == highspy.HighsStatus.kOk and r.valid else None

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
