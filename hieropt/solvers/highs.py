"""The HiGHS backend: an LP given as arrays in one persistent highspy object (Pyomo's interface cost
100x HiGHS's own time), re-solved warm; one thread, presolve off, objects re-used per thread. A
failed solve is retried cold, with the primal simplex, then with the interior-point method."""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

import highspy
import numpy as np

from ..errors import SolverError
from ..result import Status

LP_TOLERANCE = 1e-9
"""HiGHS primal and dual feasibility tolerances."""
TIGHT_TOLERANCE = 1e-10
"""Tolerances once a cutting-plane loop stalls above its gap target (HiGHS's smallest)."""

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
    # callers re-check feasibility with a bounded objective
    _MS.kUnboundedOrInfeasible: Status.UNBOUNDED,
    _MS.kModelEmpty: Status.OPTIMAL,
}
"""Map from HiGHS model statuses to :class:`Status`; any other is ERROR."""

IPM_ITERATIONS = 1000
"""The interior-point retry's iteration limit (it converges on these LPs in 7-50; a badly scaled one
can run on for the whole time limit)."""

RETRIES: tuple[tuple[tuple[str, Any], ...], ...] = (
    (),  # cold: the warm basis was the problem
    (("simplex_strategy", 4),),  # primal simplex
    # interior point, then a basis by crossover
    (("solver", "ipm"), ("run_crossover", "on"), ("ipm_iteration_limit", IPM_ITERATIONS)),
)
"""The HiGHS options of each cold retry of a solve that did not end optimal, in order."""
_DEFAULTS: tuple[tuple[str, Any], ...] = (
    ("output_flag", False), ("presolve", "off"), ("solver", "simplex"), ("simplex_strategy", 1),
    ("run_crossover", "on"), ("primal_feasibility_tolerance", LP_TOLERANCE),
    ("dual_feasibility_tolerance", LP_TOLERANCE),
    ("ipm_iteration_limit", 2147483647),  # (HiGHS's own default: no limit)
)


_OUTPUT_LOCK = threading.RLock()
"""Held while fd 1 is redirected and while Pyomo captures solver output: both are process-wide."""


@contextmanager
def quiet_stdout():
    """Discard fd-level stdout while HiGHS starts (its banner would corrupt JSON on stdout), one
    thread at a time."""
    with _OUTPUT_LOCK:
        try:
            sys.stdout.flush()
            saved = os.dup(1)
        except (OSError, ValueError):  # no real fd (e.g. captured by a test runner)
            yield
            return
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
            yield
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)


class _Pool(threading.local):
    """Idle highspy objects of the calling thread."""

    def __init__(self) -> None:
        self.idle: list[highspy.Highs] = []


_POOL = _Pool()
# HiGHS's scheduler threads for our objects: 1, or 0 (any) once another user set it up otherwise
_THREADS = [1]
_BANNER_SHOWN = [False]


def _acquire() -> highspy.Highs:
    """A highspy object with :data:`_DEFAULTS` (pooled ones were reset when handed back)."""
    if _POOL.idle:
        h = _POOL.idle.pop()  # cleared, with the default options, when it was handed back
    else:
        with quiet_stdout() if not _BANNER_SHOWN[0] else nullcontext():
            h = highspy.Highs()
        _BANNER_SHOWN[0] = True
        for name, value in _DEFAULTS:
            h.setOptionValue(name, value)
    h.setOptionValue("threads", _THREADS[0])
    return h


def _after_fork_in_child() -> None:  # pragma: no cover - runs in forked children
    """A forked child gets a fresh output lock, no pooled objects and a fresh HiGHS scheduler (the
    parent's threads do not exist there: a MIP solve would wait forever)."""
    global _OUTPUT_LOCK
    _OUTPUT_LOCK = threading.RLock()
    _POOL.idle = []
    highspy.Highs.resetGlobalScheduler(True)


os.register_at_fork(after_in_child=_after_fork_in_child)


@dataclass(frozen=True)
class LPResult:
    """One LP solve: status, HiGHS's model status name, objective value, column values (when
    optimal)."""

    status: Status
    termination: str
    objective: float
    x: np.ndarray


class LPBackend(Protocol):
    """The one interface of the LP back-ends (:class:`HighsLP`,
    :class:`hieropt.solvers.dense_lp.DenseLP`): an LP loaded from compiled arrays
    (:class:`hieropt.formulation.arrays.LPArrays`), changed in place, re-solved warm where it
    can."""

    time_limit_s: float

    def load(self, arrays: Any) -> None:
        """Replace the LP by ``arrays`` (n columns with bounds and time costs, m rows in
        compressed-row form); cold."""

    def add_rows(self, lower: np.ndarray, upper: np.ndarray, start: np.ndarray, index: np.ndarray,
                 value: np.ndarray) -> None:
        """Append k rows ``lower <= A x <= upper`` ((k,) each, -inf / inf free) given row-wise:
        ``start`` (k,) offsets into ``index`` (columns) and ``value`` (nnz,). The basis is kept."""

    def set_costs(self, costs: np.ndarray, maximize: bool = False) -> None:
        """Replace the objective by ``costs @ x`` ((n,)), minimised, or maximised when
        ``maximize``."""

    def change_row_bounds(self, row: int, lower: float, upper: float) -> None:
        """Change the bounds of row ``row`` (0-based, cuts counted); warm start kept."""

    def change_col_bounds(self, col: int, lower: float, upper: float) -> None:
        """Change the bounds of column ``col`` (0-based); warm start kept."""

    def set_tolerance(self, tol: float) -> None:
        """Set the primal and dual feasibility tolerances (HiGHS accepts down to 1e-10)."""

    def solve(self) -> LPResult:
        """Solve (warm where the back-end keeps a basis): status, objective, column values ((n,)
        when optimal, else empty)."""

    def row_duals(self) -> np.ndarray:
        """Row duals of the last optimal solve, (rows,): HiGHS's convention, d objective / d (active
        bound)."""

    def close(self) -> None:
        """Hand the solver object back to this thread's pool (the LP is unusable afterwards)."""


class HighsLP:
    """One LP (``arrays``, objective starting at ``arrays.time_costs``) in one highspy object, owned
    by one solve call; ``time_limit_s``: of each solve, s (:class:`LPBackend`).

    Raises:
        SolverError: HiGHS rejects the model."""

    def __init__(self, arrays: Any, time_limit_s: float = 60.0):
        self.time_limit_s = float(time_limit_s)
        self._tightened = False
        self._h: highspy.Highs | None = _acquire()
        self.load(arrays)

    def load(self, arrays: Any) -> None:
        """See :meth:`LPBackend.load`."""
        h = self._h
        if h.getNumCol() or h.getNumRow():  # (a fresh or handed-back object is empty already)
            h.clearModel()
        n, m = arrays.n_cols, arrays.n_rows
        if h.addVars(n, arrays.col_lower, arrays.col_upper) != highspy.HighsStatus.kOk:
            raise SolverError("HiGHS rejected the LP's columns")
        h.changeColsCost(n, np.arange(n, dtype=np.int32), arrays.time_costs)
        rows = (m, arrays.row_lower, arrays.row_upper, arrays.index.size, arrays.start[:-1],
                arrays.index, arrays.value)
        if m and h.addRows(*rows) == highspy.HighsStatus.kError:
            raise SolverError("HiGHS rejected the LP's rows")
        self.n_cols = n
        self._all_cols = np.arange(n, dtype=np.int32)

    def close(self) -> None:
        """See :meth:`LPBackend.close`."""
        if self._h is not None:
            self._h.clearModel()
            if self._tightened:
                self.set_tolerance(LP_TOLERANCE)
            _POOL.idle.append(self._h)
            self._h = None

    @property
    def num_rows(self) -> int:
        """Rows of the LP now (cuts included)."""
        return self._h.getNumRow()

    def set_tolerance(self, tol: float) -> None:
        """See :meth:`LPBackend.set_tolerance`."""
        for name in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
            self._h.setOptionValue(name, tol)
        self._tightened = tol != LP_TOLERANCE

    def set_costs(self, costs: np.ndarray, maximize: bool = False) -> None:
        """See :meth:`LPBackend.set_costs`."""
        self._h.changeColsCost(self.n_cols, self._all_cols, np.asarray(costs, dtype=float))
        self._h.changeObjectiveSense(
            highspy.ObjSense.kMaximize if maximize else highspy.ObjSense.kMinimize
        )

    def add_rows(self, lower: np.ndarray, upper: np.ndarray, start: np.ndarray, index: np.ndarray,
                 value: np.ndarray) -> None:
        """See :meth:`LPBackend.add_rows`."""
        if len(lower):
            self._h.addRows(len(lower), lower, upper, index.size, start, index, value)

    def change_row_bounds(self, row: int, lower: float, upper: float) -> None:
        """See :meth:`LPBackend.change_row_bounds`."""
        self._h.changeRowBounds(row, lower, upper)

    def change_col_bounds(self, col: int, lower: float, upper: float) -> None:
        """See :meth:`LPBackend.change_col_bounds`."""
        self._h.changeColBounds(col, lower, upper)

    def row_duals(self) -> np.ndarray:
        """See :meth:`LPBackend.row_duals`."""
        return np.asarray(self._h.getSolution().row_dual, dtype=float)

    def _run(self) -> Any:
        h = self._h
        # (HiGHS's time_limit counts the object's total run time)
        h.setOptionValue("time_limit", h.getRunTime() + self.time_limit_s)
        h.run()
        status = h.getModelStatus()
        if status == _MS.kNotset and _THREADS[0] == 1:
            # another HiGHS user in this process started the scheduler with more threads: share it
            _THREADS[0] = 0
            h.setOptionValue("threads", 0)
            h.run()
            status = h.getModelStatus()
        return status

    def solve(self) -> LPResult:
        """See :meth:`LPBackend.solve`; a non-optimal status (a warm start on badly scaled cuts) is
        retried with each of :data:`RETRIES`, the last status reported."""
        h = self._h
        status = self._run()
        if status != _MS.kOptimal:
            for options in RETRIES:
                for name, value in options:
                    h.setOptionValue(name, value)
                h.clearSolver()
                status = self._run()
                for name, _ in options:
                    h.setOptionValue(name, dict(_DEFAULTS)[name])
                if status == _MS.kOptimal:
                    break
        mapped = STATUS_OF.get(status, Status.ERROR)
        if mapped is not Status.OPTIMAL:
            return LPResult(mapped, h.modelStatusToString(status), float("nan"), np.zeros(0))
        x = np.asarray(h.getSolution().col_value, dtype=float)
        return LPResult(mapped, "Optimal", float(h.getObjectiveValue()), x)
