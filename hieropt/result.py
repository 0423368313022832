"""Result types shared by every solver: :class:`Status`, :class:`Solution` (scipy/Pyomo-style result
object) and the sensitivity of an optimum (:class:`Marginal`, :class:`Sensitivity`)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

import numpy as np

from .errors import LimitReached, NoSolutionError
from .model.run import RunFigures, run_figures
from .model.timing import Breakdown
from .spec import Instance
from .units import RELATIVE_UNIT, objective_unit


class Status(StrEnum):
    """Why a solve stopped. Only ``OPTIMAL`` carries a certified optimum (gap within the target);
    ``LIMIT`` carries a design with its proven gap, or no design and an unknown gap (inf) when a
    time limit stopped the solve before any design or bound existed; ``INFEASIBLE``,
    ``UNBOUNDED`` and ``UNDECIDED`` (a time target inside the optimality gap of the fastest time:
    no design found meets it and none is proven impossible) carry no design, only the reason in
    the message (the command line exits 3)."""

    OPTIMAL = "optimal"
    LIMIT = "limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    UNDECIDED = "undecided"
    ERROR = "error"


NO_DESIGN = (Status.INFEASIBLE, Status.UNBOUNDED, Status.UNDECIDED)
"""The statuses of a :class:`Solution` without a design."""


def freeze_arrays(result: object, *names: str) -> None:
    """Replace each numpy array field ``names`` of the frozen dataclass ``result`` by a read-only
    copy (None and other values stay), so that a result's bandwidths cannot be changed after the
    fact (``sol.bw_gbps[0] = 1.0`` raises ValueError), as its cached breakdown's arrays cannot:
    the object would otherwise pair the changed bandwidths with the old times. Called from the
    result classes' ``__post_init__``."""
    for name in names:
        value = getattr(result, name)
        if isinstance(value, np.ndarray) and value.flags.writeable:
            copy = value.copy()
            copy.flags.writeable = False
            object.__setattr__(result, name, copy)


def values_equal(a: Any, b: Any) -> bool:
    """Whether two field values are equal: numpy arrays of the same shape and elements
    (:func:`numpy.array_equal`), dicts, tuples and lists item by item (so arrays inside them too),
    other values by ``==``; one object is equal to itself (a result whose numbers are NaN too)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and bool(np.array_equal(a, b)))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return (type(a) is type(b) and len(a) == len(b)
                and all(values_equal(x, y) for x, y in zip(a, b, strict=True)))
    return bool(a == b)


def results_equal(self: Any, other: Any) -> Any:
    """``==`` of a result dataclass holding numpy arrays (:class:`Solution`, :class:`FrontPoint
    <hieropt.solvers.front.FrontPoint>`, ...): equal when ``other`` is of the same class and every
    compared field is equal (:func:`values_equal`: arrays element-wise), where the dataclass's own
    ``==`` raised ValueError on an array of two or more elements (and so did ``in`` and
    ``list.index``); NotImplemented for another class. Such results are unhashable (their arrays
    are)."""
    if type(other) is not type(self):
        return NotImplemented
    return all(values_equal(getattr(self, f.name), getattr(other, f.name))
               for f in fields(self) if f.compare)


@dataclass(frozen=True, eq=False)
class Solution:
    """The outcome of one solve.

    Attributes:
        status: see :class:`Status`; ``success`` is ``status is OPTIMAL``.
        message: one line, human-readable.
        objective: the objective that was optimized (e.g. ``"performance"``).
        bw_gbps: (D,) optimal per-NPU bandwidth of each dimension, GB/s. At a relative gap g the
            objective is known to about g, the bandwidths only to roughly sqrt(g) where the optimum
            is flat.
        iteration_time_ns: T(bw_gbps), re-evaluated by the independent evaluator.
        network_cost_usd: cost(bw_gbps), $.
        objective_value: the objective at ``bw_gbps`` (re-evaluated), in ``objective_unit``: ns for
            performance, $ for min_cost, ns * $ for performance_per_cost.
        objective_bound: proven lower bound on the optimal objective value (same unit).
        objective_unit: ``"ns"``, ``"USD"`` or ``"ns*USD"``.
        lower_bound_ns: proven lower bound on the optimal iteration time (performance objective),
            else None.
        gap: relative gap (objective_value - objective_bound) / objective_value, >= 0.
        iterations: LPs solved (all sub-solves included).
        solve_seconds: wall time of build + solve + verify, s (not compared by ``==``).
        breakdown: the evaluator's breakdown at ``bw_gbps``; None without a design (status
            infeasible, unbounded or undecided: then ``bw_gbps`` is empty and the numbers are NaN).
        method: the algorithm used.
        notes: remarks a user should read (e.g. dimensions without traffic).
        extra: method-specific statistics (cuts, LP rows, ...). ``kappa_range_usd`` (performance
            per cost): the network costs searched, $, lowest and highest; the highest is ``inf``
            when no constraint caps bandwidth (written ``null`` by :meth:`to_dict`).

    Two solutions are ``==`` when every field is, ``bw_gbps`` element-wise (the instance and the
    wall time ``solve_seconds`` are not compared: two solves of one instance are equal;
    :func:`results_equal`), so ``in`` and ``list.index`` work; unhashable.
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
    solve_seconds: float = field(compare=False)
    breakdown: Breakdown | None
    method: str
    notes: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    sensitivity: Sensitivity | None = None
    portfolio: Portfolio | None = None
    instance: Instance | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        freeze_arrays(self, "bw_gbps")

    __eq__ = results_equal
    __hash__ = None  # type: ignore[assignment]  # (its arrays are unhashable)

    @property
    def success(self) -> bool:
        """True when the result is a certified optimum."""
        return self.status is Status.OPTIMAL

    @property
    def has_design(self) -> bool:
        """True when the solve found a design (status OPTIMAL or LIMIT)."""
        return self.breakdown is not None

    def raise_for_status(self) -> Solution:
        """This solution when it has a design (OPTIMAL or LIMIT).

        Raises:
            NoSolutionError: status infeasible, unbounded or undecided, with the solution's
                message (exit 3).
            LimitReached: status LIMIT without a design (a time limit before any design or bound,
                the gap unknown), with the solution's message (exit 3).
        """
        if self.status in NO_DESIGN:
            raise NoSolutionError(self.status.value, self.message)
        if self.status is Status.LIMIT and not self.has_design:
            raise LimitReached(f"limit: {self.message}")
        return self

    @classmethod
    def without_design(cls, status: Status, message: str, objective: str, objective_unit: str,
                       solve_seconds: float = 0.0, instance: Instance | None = None) -> Solution:
        """The outcome of a solve that found no design: ``status`` one of :data:`NO_DESIGN`, or
        LIMIT (a time limit before any design or bound: the gap unknown, inf); ``message`` the
        reason (one line, what to change), no bandwidths (an empty array), NaN numbers, no
        breakdown."""
        nan = float("nan")
        return cls(status=status, message=message, objective=objective, bw_gbps=np.zeros(0),
                   iteration_time_ns=nan, network_cost_usd=nan, objective_value=nan,
                   objective_bound=nan, objective_unit=objective_unit, lower_bound_ns=None,
                   gap=float("inf"), iterations=0, solve_seconds=solve_seconds, breakdown=None,
                   method="", instance=instance)

    @property
    def run(self) -> RunFigures | None:
        """The buyer's figures of this design (:func:`hieropt.model.run.run_figures`: tokens/s, MFU,
        days, MWh, $ per run), None when the instance is not known or there is no design."""
        if self.instance is None or not self.has_design:
            return None
        return run_figures(self.instance, self.iteration_time_ns, self.network_cost_usd,
                           bw_gbps=self.bw_gbps)

    def to_dict(self, instance: Instance | None = None) -> dict[str, Any]:
        """The solution as JSON-ready data: the keys ``hieropt solve --json`` writes (the command
        adds the ``knee``, the run's error band ``run.band`` and the default-calibration note to
        ``notes``: :func:`hieropt.report.dicts.solution_dict`; status, bandwidths, times, bound,
        gap, cost, statistics, breakdown, sensitivity, portfolio,
        the buyer's figures ``run`` (:class:`hieropt.model.run.RunFigures`), and the instance echo
        of ``instance`` or of the instance it was solved for; None when neither is known). Without a
        design (:attr:`has_design`): only status, message, objective, its unit, the solve time and
        the instance echo. An unbounded end of a range in ``extra`` is None (:func:`json_extra`).
        ``units.time`` is the unit of ``iteration_time_ns`` and ``lower_bound_ns``: ns, or
        :data:`hieropt.units.RELATIVE_UNIT` for workloads weighted by shares of hours."""
        inst = instance if instance is not None else self.instance
        if not self.has_design:
            return {"status": self.status.value, "message": self.message,
                    "objective": self.objective, "objective_unit": self.objective_unit,
                    "solve_seconds": self.solve_seconds,
                    "instance": None if inst is None else inst.summary_dict()}
        run = (
            None
            if inst is None
            else run_figures(inst, self.iteration_time_ns, self.network_cost_usd,
                             bw_gbps=self.bw_gbps)
        )
        # (workloads weighted by shares of hours: iteration_time_ns and lower_bound_ns hold the
        # hour-weighted ratio, whatever the objective)
        relative = (inst.relative_time if inst is not None
                    else RELATIVE_UNIT in self.objective_unit)
        return {
            "units": {
                "bw": "GB/s per NPU per dimension (1 GB = 1e9 bytes)",
                "time": objective_unit("performance", relative),
                "cost": "USD",
                "bytes": "bytes per NPU",
            },
            "status": self.status.value,
            "message": self.message,
            "objective": self.objective,
            "bw_gbps_per_dim": [float(x) for x in self.bw_gbps],
            "iteration_time_ns": self.iteration_time_ns,
            "lower_bound_ns": self.lower_bound_ns,
            "objective_value": self.objective_value,
            "objective_bound": self.objective_bound,
            "objective_unit": self.objective_unit,
            "gap": self.gap,
            "network_cost_usd": self.network_cost_usd,
            "iterations": self.iterations,
            "solve_seconds": self.solve_seconds,
            "method": self.method,
            "notes": list(self.notes),
            "extra": json_extra(self.extra),
            "breakdown": self.breakdown.to_dict(),
            "sensitivity": (None if self.sensitivity is None
                            else self.sensitivity.to_dict(self.bw_gbps)),
            "portfolio": None if self.portfolio is None else self.portfolio.to_dict(),
            "run": None if run is None else run.to_dict(),
            "instance": None if inst is None else inst.summary_dict(),
        }


UNBOUNDED_ENDS = ("kappa_range_usd",)
"""Keys of :attr:`Solution.extra` that are ranges whose end may be unbounded (``inf``)."""


def json_extra(extra: dict[str, Any]) -> dict[str, Any]:
    """``extra`` as JSON writes it: an unbounded end (``inf`` or ``-inf``) of a range in
    :data:`UNBOUNDED_ENDS` becomes None (JSON ``null``: no bound), as JSON has no infinity. Any
    other number is kept as it is (a NaN or infinity elsewhere is still refused by the writer)."""
    out = dict(extra)
    for key in UNBOUNDED_ENDS:
        if key in out:
            out[key] = [None if abs(float(x)) == float("inf") else x for x in out[key]]
    return out


def slowdown_ratio(time_ns: float, own_ns: float) -> float:
    """T_w(B) / T_w*: a workload that takes no time on its own best fabric (no compute, no traffic)
    takes none on any, and its ratio is 1 (inf if it ever took time)."""
    if own_ns > 0:
        return time_ns / own_ns
    return 1.0 if time_ns <= 0 else float("inf")


@dataclass(frozen=True)
class Portfolio:
    """Every workload of a multi-workload instance on the chosen fabric, against its own optimum.

    Attributes:
        names: workload names (``Instance.jobs`` order); weights: their weights in the weighted
            objective.
        times_ns: T_w(B) of each workload on the chosen fabric (unweighted, re-evaluated
            independently), ns.
        own_optima_ns: T_w*, each workload's own optimum under the same constraints, bounds and
            budget (the best time found, certified to the gap target), ns; own_bounds_ns: their
            proven lower bounds.
        max_regret: the min_cost form's bound on every slowdown (None otherwise).
        optima_within_budget: whether the own optima were held to the instance's budget (False
            for the weights from shares of hours, whose own optima ignore the budget).
    """

    names: tuple[str, ...]
    weights: tuple[float, ...]
    times_ns: tuple[float, ...]
    own_optima_ns: tuple[float, ...]
    own_bounds_ns: tuple[float, ...]
    max_regret: float | None = None
    optima_within_budget: bool = True

    @property
    def slowdowns(self) -> tuple[float, ...]:
        """T_w(B) / T_w* - 1 of each workload (0 = as fast as on its own best fabric)."""
        return tuple(
            slowdown_ratio(t, u) - 1.0
            for t, u in zip(self.times_ns, self.own_optima_ns, strict=True)
        )

    @property
    def worst_ratio(self) -> float:
        """max_w T_w(B) / T_w*: the min-max-regret objective at this fabric."""
        return max(
            slowdown_ratio(t, u) for t, u in zip(self.times_ns, self.own_optima_ns, strict=True)
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready portfolio (times ns)."""
        return {
            "workloads": [
                {
                    "name": n,
                    "weight": w,
                    "time_ns": t,
                    "own_optimum_ns": u,
                    "own_bound_ns": lb,
                    "slowdown": sd,
                }
                for n, w, t, u, lb, sd in zip(
                    self.names,
                    self.weights,
                    self.times_ns,
                    self.own_optima_ns,
                    self.own_bounds_ns,
                    self.slowdowns,
                    strict=True,
                )
            ],
            "worst_ratio": self.worst_ratio,
            "max_regret": self.max_regret,
        }


@dataclass(frozen=True)
class Marginal:
    """How the optimal value moves with one parameter of the problem (units in ``unit``).

    Attributes:
        name: what the parameter is, e.g. ``"constraint 'sum(bw) == 500'"``, ``"bandwidth of
            dimension 3"``.
        kind: ``"constraint"`` (a design row's right-hand side), ``"bound"`` (a per-dimension
            bound), ``"bandwidth"`` (a free extra GB/s on one dimension, beyond constraints, bounds
            and budget), ``"budget"`` (the cost cap, $) or ``"time_target"`` (the min_cost target,
            ns).
        unit: of the marginal values, e.g. ``"ns per GB/s"``, ``"ns per $"``, ``"$ per ns"``.
        current: the parameter's value at the optimum (GB/s, $ or ns).
        value: dV/dparameter where V is differentiable in it; None at a kink (then only one-sided
            values).
        increase: the right derivative (the parameter increased); None when increasing it is
            infeasible.
        decrease: the left derivative (the parameter decreased); None when decreasing it is
            infeasible.
        binding: False when the parameter does not constrain the optimum (marginal value 0 on both
            sides).
        range: (lo, hi), parameter values over which the marginal value stays within 10 % of
            ``value`` (or of the one-sided value on that side): checked by exact re-solves at
            growing steps, so "at least this range"; None when not computed.
    """

    name: str
    kind: str
    unit: str
    current: float
    value: float | None
    increase: float | None
    decrease: float | None
    binding: bool
    range: tuple[float, float] | None = None

    @property
    def differentiable(self) -> bool:
        """True when the left and right derivatives agree (within 0.1 %)."""
        return self.value is not None


POINT_AT = (
    "the fastest design found, before the tie-break to the cheapest design within the gap of its "
    "time that bw_gbps_per_dim gives: each marginal's current is its value at this design; both "
    "are equally fast (within the solve's gap)"
)
"""What a sensitivity's ``at`` says when its design is not the one printed
(:meth:`Sensitivity.to_dict`)."""


@dataclass(frozen=True)
class Sensitivity:
    """The sensitivity of an optimum: one :class:`Marginal` per parameter, and the $ per ms of the
    time-cost front.

    Attributes:
        objective: the objective whose optimal value V the marginals differentiate (``value_unit``
            ns or USD; for performance_per_cost: ns*USD).
        marginals: constraints, active bounds, each dimension's bandwidth, the budget or the time
            target.
        usd_per_ms: $ saved per ms of iteration time given up (or spent per ms gained) along the
            exact time-cost front at this point; None when not defined (e.g. performance_per_cost).
        usd_per_ms_note: how ``usd_per_ms`` was obtained.
        method: how the values were computed.
        seconds: wall time of the analysis (not compared by ``==``: two analyses of one optimum
            are equal).
    """

    objective: str
    value_unit: str
    marginals: tuple[Marginal, ...]
    usd_per_ms: float | None
    usd_per_ms_note: str
    method: str
    seconds: float = field(compare=False)

    def point_gbps(self) -> list[float] | None:
        """The bandwidths (GB/s per NPU per dimension, innermost first) of the design the marginals
        were computed at: each ``bandwidth`` marginal's ``current``; None without one per
        dimension."""
        bw = {m.name: m.current for m in self.marginals if m.kind == "bandwidth"}
        out = [bw.get(f"bandwidth of dimension {d}") for d in range(len(bw))]
        return None if not out or any(x is None for x in out) else [float(x) for x in out]

    def elsewhere(self, bw_gbps: Any) -> list[float] | None:
        """:meth:`point_gbps` when it is not the design ``bw_gbps`` (GB/s per NPU per dimension,
        the design printed: with the performance objective the cheapest design within the gap of
        the fastest found, chosen after the marginals were computed at that fastest one), else
        None (the same design within 1e-9 relative)."""
        point = self.point_gbps()
        if point is None or len(point) != len(bw_gbps):
            return None
        same = all(abs(a - float(b)) <= 1e-9 * max(abs(a), abs(float(b)), 1.0)
                   for a, b in zip(point, bw_gbps, strict=True))
        return None if same else point

    def to_dict(self, bw_gbps: Any = None) -> dict[str, Any]:
        """JSON-ready sensitivity (marginal values in the unit each names; a range end of None is
        unbounded). ``at_bw_gbps_per_dim``: the design the marginals (and each ``current``) are
        of (GB/s per NPU per dimension; None without a bandwidth marginal per dimension); ``at``:
        ``"the design printed (bw_gbps_per_dim)"``, or, when that differs from ``bw_gbps`` (the
        solution's design: :meth:`elsewhere`), :data:`POINT_AT` (the fastest design found before
        the tie-break to the cheapest equally fast one)."""

        def f(x: float | None) -> float | None:
            return None if x is None or abs(x) == float("inf") else float(x)

        other = None if bw_gbps is None else self.elsewhere(bw_gbps)
        if bw_gbps is None:
            at, point = "the optimum the marginals were computed at", self.point_gbps()
        elif other is None:
            at, point = "the design printed (bw_gbps_per_dim)", [float(x) for x in bw_gbps]
        else:
            at, point = POINT_AT, other
        return {
            "at": at,
            "at_bw_gbps_per_dim": point,
            "objective": self.objective,
            "value_unit": self.value_unit,
            "method": self.method,
            "seconds": self.seconds,
            "usd_per_ms": f(self.usd_per_ms),
            "usd_per_ms_note": self.usd_per_ms_note,
            "marginals": [
                {
                    "name": m.name,
                    "kind": m.kind,
                    "unit": m.unit,
                    "current": m.current,
                    "value": f(m.value),
                    "increase": f(m.increase),
                    "decrease": f(m.decrease),
                    "binding": m.binding,
                    "differentiable": m.differentiable,
                    "range": None if m.range is None else [f(m.range[0]), f(m.range[1])],
                }
                for m in self.marginals
            ],
        }
