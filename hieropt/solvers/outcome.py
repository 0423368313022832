"""What an objective gives the loop of :mod:`hieropt.solvers.cut_lp` (:class:`Loop`), one run's
progress (:class:`LoopState`) and its certified outcome (:class:`OAResult`,
:class:`Multipliers`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..formulation.arrays import LPArrays
from ..result import Status
from .linalg import INF

__all__ = ["Loop", "LoopState", "Multipliers", "OAResult", "relative_gap"]

STALL_ROUNDS = 4
"""Rounds without an improved bound before the next step of the stall rule."""


def relative_gap(value: float, bound: float) -> float:
    """(``value`` - ``bound``) / ``value`` clipped at 0, and 0 when ``value`` <= 0 (a best design
    worth 0): the one relative gap of a value and its proven lower bound (same unit)."""
    return max(0.0, (value - bound) / value) if value > 0 else 0.0


@dataclass(frozen=True)
class OAResult:
    """Outcome of one cutting-plane solve (of every loop).

    Attributes:
        status: OPTIMAL when the gap target was met, LIMIT otherwise (the bounds still hold).
        bw: (D,) best feasible bandwidths, GB/s (None when none was found).
        upper: objective at ``bw`` (ns, $, ns x $, a ratio); lower: proven lower bound (same
            unit).
        iterations: LPs solved; message: one line.
        budget_dual_ns_per_usd: slope (<= 0, ns per $) of a line under f(budget) through
            (budget, lower); 0 without a budget row.
        cuts: tangent cuts in the loop's LP at the end.
        kappa_range: performance per cost: the network costs ($) searched."""

    status: Status
    bw: np.ndarray | None
    upper: float
    lower: float
    iterations: int
    message: str
    budget_dual_ns_per_usd: float = 0.0
    cuts: int = 0
    kappa_range: tuple[float, float] = (0.0, 0.0)

    @property
    def gap(self) -> float:
        """Relative gap (upper - lower) / upper clipped at 0; inf without a finite design, 0 when
        the best is worth 0."""
        return relative_gap(self.upper, self.lower) if self.upper < INF else INF

    def settled(self, rel_gap: float, why: str | None = None) -> OAResult:
        """This outcome OPTIMAL when :attr:`gap` <= ``rel_gap``, else LIMIT "stopped at proven
        relative gap g: ``why``" (without ``why``, a LIMIT keeps its message): the one wording of
        a gap's verdict."""
        if self.gap <= rel_gap and self.status is not Status.OPTIMAL:
            return replace(self, status=Status.OPTIMAL, message="optimal within the gap target")
        if self.gap <= rel_gap or (why is None and self.status is Status.LIMIT):
            return self
        tail = f": {why}" if why else ""
        return replace(self, status=Status.LIMIT,
                       message=f"stopped at proven relative gap {self.gap:.3g}{tail}")


@dataclass(frozen=True)
class Multipliers:
    """The row multipliers ``duals`` of a loop's best bound with the LP's arrays, scale and
    objective ``costs`` (:mod:`hieropt.solvers.sensitivity`)."""

    arr: LPArrays
    scale: object
    costs: np.ndarray
    duals: np.ndarray


@dataclass
class Loop:
    """What one objective gives the shared loop (callables of the LP's columns ``x``, scaled).

    Attributes:
        costs: () -> the LP objective (minimised) at the current scale.
        native: a scaled bound -> the objective's unit (ns, $, ns x $).
        candidates: x -> designs (GB/s) to evaluate exactly; score: design -> exact value (inf:
            infeasible).
        start: a known feasible design, or None.
        slope: the bound's budget multiplier -> d bound / d budget in native units (None: none).
        on_empty: x -> raises NoSolutionError with the reason, or True to solve again; while no
            finite candidate was found (x empty when the first LP is infeasible).
        refine: (x, polished x or None) -> adds the model's own cuts
            (:class:`hieropt.model.cutmodel.CutModel`).
        cut_first: cut the first LP's point once more before the polish when it is not
            :meth:`hieropt.solvers.cut_lp.CutLP.trusted`."""

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
    """One loop's incumbent and bounds in the objective's unit (best design and value, proven lower
    bound and its budget slope) and its stall count."""

    spec: Loop
    rel_gap: float
    best: np.ndarray | None
    upper: float = INF
    lower: float = -INF
    budget_slope: float = 0.0
    idle_rounds: int = 0
    stall_steps: int = 0

    def offer(self, x: np.ndarray) -> bool:
        """Score the candidates at the LP point ``x``, keep the best; True when it improved beyond
        round-off."""
        improved = False
        for design in self.spec.candidates(x):
            value = self.spec.score(design)
            if value < self.upper:
                improved = improved or value < self.upper * (1 - 1e-13)
                self.best, self.upper = design, value
        return improved

    def stall(self, improved: bool) -> str | None:
        """The stall rule: after :data:`STALL_ROUNDS` rounds without progress "tighten", after the
        next "rescale", then "stop"; None meanwhile."""
        self.idle_rounds = 0 if improved else self.idle_rounds + 1
        if self.idle_rounds < STALL_ROUNDS:
            return None
        self.idle_rounds = 0
        self.stall_steps += 1
        return ("tighten", "rescale", "stop")[min(self.stall_steps, 3) - 1]

    def done(self) -> bool:
        """True with a finite incumbent whose proven gap meets the target."""
        return (self.best is not None and self.upper < INF
                and self.upper - self.lower <= self.rel_gap * self.upper)

    def result(self, it: int, max_iterations: int) -> OAResult:
        """The outcome after ``it`` LPs: OPTIMAL when :meth:`done`, else LIMIT with the gap and
        why."""
        upper, status, message = self.upper, Status.OPTIMAL, "optimal within the gap target"
        if not self.done():
            gap = (upper - self.lower) / upper if upper > 0 and np.isfinite(upper) else INF
            why = ("iteration limit" if it >= max_iterations
                   else "no further progress at the LP tolerance floor")
            status = Status.LIMIT
            message = f"stopped after {it} LPs at proven relative gap {gap:.3g} ({why})"
        return OAResult(status, self.best, upper, self.lower, it, message,
                        budget_dual_ns_per_usd=self.budget_slope)
