"""The HiGHS backend: an LP given as arrays (:class:`~hieropt.formulation.arrays.LPArrays`) in one
persistent highspy object (added directly: Pyomo's interface cost 100x HiGHS's own time), re-solved
warm as rows, bounds and objectives change; one thread, presolve off, objects re-used per thread.
:meth:`HighsLP.solve` retries a failure cold, with the primal simplex, then with the interior-point
method, before it reports it.
"""

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
"""Tolerances used by a retry once a cutting-plane loop stalls above its gap target (HiGHS's
smallest)."""

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
"""Map from HiGHS model statuses to :class:`Status`; every other status (errors, interrupts,
unknown) is ERROR."""

IPM_ITERATIONS = 1000
"""The interior-point retry's iteration limit. IPX converges on these LPs (tens to hundreds of rows)
in 7-50 iterations; on a badly scaled one at the 1e-10 tolerances it can run on without converging
(82,812 iterations in 10 s on a 146-row LP of cuts, where the simplex answers in no iteration), and
the retry then held a solve for its whole time limit. At the limit the retry ends (LIMIT)."""

RETRIES: tuple[tuple[tuple[str, Any], ...], ...] = (
    (),  # cold: the warm basis was the problem
    (("simplex_strategy", 4),),  # primal simplex
    # interior point, then a basis by crossover
    (("solver", "ipm"), ("run_crossover", "on"), ("ipm_iteration_limit", IPM_ITERATIONS)),
)
"""The HiGHS options of each retry of a solve that did not end optimal
(:meth:`HighsLP.solve`), in order; each retry starts cold."""
_DEFAULTS: tuple[tuple[str, Any], ...] = (
    ("output_flag", False), ("presolve", "off"), ("solver", "simplex"), ("simplex_strategy", 1),
    ("run_crossover", "on"), ("primal_feasibility_tolerance", LP_TOLERANCE),
    ("dual_feasibility_tolerance", LP_TOLERANCE),
    ("ipm_iteration_limit", 2147483647),  # (HiGHS's own default: no limit)
)


_OUTPUT_LOCK = threading.RLock()
"""Held while file descriptor 1 is redirected and while Pyomo captures solver output
(``set_instance``, Pyomo's ``solve``): both are process-wide, so two threads doing it at once swap
each other's stdout (and Pyomo's TeeStream reader threads deadlock). Independent solves in threads
stay independent; only these short sections take turns."""


@contextmanager
def quiet_stdout():
    """Discard file-descriptor-level stdout while HiGHS starts (its copyright banner would corrupt
    JSON on stdout and is noise on stderr; the solver and its version are in every result's
    ``method``), one thread at a time (:data:`_OUTPUT_LOCK`)."""
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
    """Idle highspy objects of the calling thread (each thread has its own; objects never cross
    threads)."""

    def __init__(self) -> None:
        self.idle: list[highspy.Highs] = []


_POOL = _Pool()
# HiGHS's scheduler threads for our objects: 1, or 0 (any) once another user set it up otherwise
_THREADS = [1]
_BANNER_SHOWN = [False]


def _acquire() -> highspy.Highs:
    """A highspy object with :data:`_DEFAULTS` (a pooled one was reset to them when it was handed
    back; each solve sets its own time limit)."""
    if _POOL.idle:
        h = _POOL.idle.pop()  # cleared, with the default options, when it was handed back
        h.setOptionValue("threads", _THREADS[0])
        return h
    with quiet_stdout() if not _BANNER_SHOWN[0] else nullcontext():
        h = highspy.Highs()
    _BANNER_SHOWN[0] = True
    for name, value in _DEFAULTS:
        h.setOptionValue(name, value)
    h.setOptionValue("threads", _THREADS[0])
    return h


def _after_fork_in_child() -> None:  # pragma: no cover - runs in forked children
    """A forked child starts with a fresh output lock (another thread of the parent may have held
    it), no pooled objects, and a fresh HiGHS task scheduler: the parent's scheduler threads do not
    exist in the child, and a MIP solve would wait for them forever (provision() in a forked child
    after one in the parent would never return)."""
    global _OUTPUT_LOCK
    _OUTPUT_LOCK = threading.RLock()
    _POOL.idle = []
    highspy.Highs.resetGlobalScheduler(True)


os.register_at_fork(after_in_child=_after_fork_in_child)


@dataclass(frozen=True)
class LPResult:
    """One LP solve: mapped status, HiGHS's model status name, objective value and column values
    (when optimal)."""

    status: Status
    termination: str
    objective: float
    x: np.ndarray


class LPBackend(Protocol):
    """The one interface of the LP back-ends (:class:`HighsLP`,
    :class:`hieropt.solvers.dense_lp.DenseLP`): an LP loaded from compiled arrays
    (:class:`hieropt.formulation.arrays.LPArrays`), changed in place, re-solved warm where the
    back-end can; ``row_duals`` of the last optimal solve, one per row; ``close`` hands the
    solver object back for re-use."""

    time_limit_s: float

    def load(self, arrays: Any) -> None:
        """Replace the LP by ``arrays`` (an :class:`~hieropt.formulation.arrays.LPArrays`: n
        columns with their bounds and time costs, m rows in compressed-row form); cold: the next
        solve starts without a basis."""

    def add_rows(self, lower: np.ndarray, upper: np.ndarray, start: np.ndarray, index: np.ndarray,
                 value: np.ndarray) -> None:
        """Append k rows ``lower <= A x <= upper`` (``lower``, ``upper``: shape (k,), -inf / inf
        for a free side) given row-wise: ``start`` (shape (k,)) the offset of each row's first
        entry in ``index`` (column numbers) and ``value`` (coefficients), both of shape (nnz,).
        The basis is kept: the next solve starts warm."""

    def set_costs(self, costs: np.ndarray, maximize: bool = False) -> None:
        """Replace the objective by ``costs @ x`` (``costs`` of shape (n,)), minimised, or
        maximised when ``maximize``."""

    def change_row_bounds(self, row: int, lower: float, upper: float) -> None:
        """Change the bounds of row ``row`` (0-based, cuts counted) in place; warm start kept."""

    def change_col_bounds(self, col: int, lower: float, upper: float) -> None:
        """Change the bounds of column ``col`` (0-based) in place; warm start kept."""

    def set_tolerance(self, tol: float) -> None:
        """Set the primal and dual feasibility tolerances (HiGHS accepts down to 1e-10)."""

    def solve(self) -> LPResult:
        """Solve, warm-started from the previous basis where the back-end keeps one, and return
        the mapped status, objective value and column values (shape (n,) when optimal, else
        empty)."""

    def row_duals(self) -> np.ndarray:
        """The row duals of the last optimal solve, shape (rows now,): HiGHS's sign convention, d
        objective / d (the row's active bound), so in a minimisation >= 0 on a row at its lower
        bound, <= 0 at its upper bound, 0 on a row at neither."""

    def close(self) -> None:
        """Hand the solver object back to this thread's pool for re-use (the LP is unusable
        afterwards)."""


class HighsLP:
    """One LP (``arrays``) in one highspy object, owned by one solve call.

    Args:
        arrays: the compiled LP (:func:`hieropt.formulation.arrays.compile_perf_lp`); its objective
            starts at ``arrays.time_costs``.
        time_limit_s: wall-clock limit of each solve, s.

    Raises:
        SolverError: HiGHS rejects the model.
    """

    def __init__(self, arrays: Any, time_limit_s: float = 60.0):
        self.time_limit_s = float(time_limit_s)
        self._tightened = False
        self._h: highspy.Highs | None = _acquire()
        self.load(arrays)

    def load(self, arrays: Any) -> None:
        """Replace the model by ``arrays`` (cold: the next solve starts without a basis)."""
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
        """Hand the highspy object back to this thread's pool (the LP is unusable afterwards)."""
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
        """Set HiGHS's primal and dual feasibility tolerances (HiGHS accepts down to 1e-10)."""
        for name in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
            self._h.setOptionValue(name, tol)
        self._tightened = tol != LP_TOLERANCE

    def set_costs(self, costs: np.ndarray, maximize: bool = False) -> None:
        """Replace the objective by ``costs @ x`` (one coefficient per column), minimised or
        maximised."""
        self._h.changeColsCost(self.n_cols, self._all_cols, np.asarray(costs, dtype=float))
        self._h.changeObjectiveSense(
            highspy.ObjSense.kMaximize if maximize else highspy.ObjSense.kMinimize
        )

    def add_rows(self, lower: np.ndarray, upper: np.ndarray, start: np.ndarray, index: np.ndarray,
                 value: np.ndarray) -> None:
        """Append rows ``lower <= A x <= upper`` given row-wise (``start`` has one entry per
        row)."""
        if len(lower):
            self._h.addRows(len(lower), lower, upper, index.size, start, index, value)

    def change_row_bounds(self, row: int, lower: float, upper: float) -> None:
        """Change the bounds of row ``row``."""
        self._h.changeRowBounds(row, lower, upper)

    def change_col_bounds(self, col: int, lower: float, upper: float) -> None:
        """Change the bounds of column ``col``."""
        self._h.changeColBounds(col, lower, upper)

    def row_duals(self) -> np.ndarray:
        """Row duals of the last optimal solve (d objective / d rhs, HiGHS's sign convention)."""
        return np.asarray(self._h.getSolution().row_dual, dtype=float)

    def _run(self) -> Any:
        h = self._h
        # HiGHS's time_limit counts the object's total run time, so each solve gets the limit on top
        # of it
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
        """Solve in place (warm-started from the previous basis) and return status, objective and
        column values.

        A warm start can fail on badly scaled cut rows (HiGHS: "excessive dual values", a false
        Infeasible or an error): a non-optimal status is re-tried cold, then with the primal
        simplex, then with the interior-point method, and only the last status is reported.
        """
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
