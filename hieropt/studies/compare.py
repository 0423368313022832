"""Exact versus heuristics: every rule of thumb of :mod:`hieropt.studies.heuristics` next to the
exact optimum, with the gap
each one leaves and a one-line explanation of where it loses.

``compare(instance, objective)`` solves the instance exactly
(:func:`hieropt.solvers.objectives.solve`, verified), runs every
heuristic for the same objective (each made feasible for the same constraints, bounds, budget and
time target), evaluates every vector with the independent evaluator
(:func:`hieropt.model.timing.evaluate`) and returns a :class:`Comparison`. The gap of a heuristic is
(its objective value - the optimum's) / the optimum's, in %, for the chosen objective: iteration
time (performance), network cost (min_cost) or time x cost (performance_per_cost).

Where a heuristic loses is read off the bandwidth difference to the optimum, priced per dimension,
and the evaluator's bottleneck data: the dimension it starves (less bandwidth than the optimum, and
the slowest dimension for the largest share of its communication time) and the dimension it
over-provisions (the most dollars above the optimum, N x $/GB/s x extra GB/s).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..cache import Cache, scoped
from ..errors import InputError
from ..model.breakdown import TIE_REL, tied_slowest
from ..model.cost import unit_cost_usd_per_gbps
from ..model.timing import Breakdown, TimeModel, build_time_model, evaluate
from ..result import Solution, freeze_arrays
from ..solvers.objectives import recommended_options, solve
from ..solvers.portfolio import hours_weighted
from ..spec import Instance
from ..units import objective_unit
from .heuristics import HeuristicResult, ratio_problems, run_all
from .placement import OBJECTIVES_PLACED, relative_gap

MATCH_REL = 1e-6
"""A heuristic within this relative gap of the optimum is reported as matching it."""


@dataclass(frozen=True)
class Row:
    """One design in the comparison: the exact optimum or a heuristic (times ns, cost $, bandwidth
    GB/s per NPU).

    Attributes:
        name: ``"optimum"`` or the heuristic's registry key.
        label: display name.
        kind: ``"optimum"`` or ``"heuristic"``.
        feasible: False when the heuristic cannot be made feasible (then the figures are None).
        message: how the vector was obtained, or why it is not feasible.
        bw: (D,) bandwidths, GB/s per NPU.
        breakdown: the evaluator's breakdown at ``bw``.
        objective_value: in the comparison's unit (ns, $ or ns x $).
        gap_pct: 100 (value - optimum) / optimum for the chosen objective (0 for the optimum).
        speedup: the optimum's speed-up over this design, T(this) / T(optimum).
        bottleneck_dim: the dimension that is the slowest for the most collective time (None without
            communication). At the optimum dimensions tie by design (the optimum balances them):
            a collective counts for every dimension within :data:`TIE_REL` of its slowest, so the
            answer is reproducible (:func:`bottleneck`; the rule of the evaluator's
            ``bottleneck_ns_per_dim``, which the solve table's slowest column prints).
        bottleneck_tied: every dimension tied with ``bottleneck_dim`` (itself included).
        explanation: one line: where this design loses against the optimum.
        iterations: iterations of an iterative heuristic; LPs for the optimum.
        seconds: wall time to produce the design, s.
        heuristic: the raw :class:`HeuristicResult` (None for the optimum).
    """

    name: str
    label: str
    kind: str
    feasible: bool
    message: str
    bw: np.ndarray | None
    breakdown: Breakdown | None
    objective_value: float | None
    gap_pct: float | None
    speedup: float | None
    bottleneck_dim: int | None
    explanation: str
    iterations: int | None
    seconds: float
    heuristic: HeuristicResult | None = None
    bottleneck_tied: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        freeze_arrays(self, "bw")

    @property
    def iteration_time_ns(self) -> float | None:
        """T(bw), ns."""
        return self.breakdown.iteration_time_ns if self.breakdown is not None else None

    @property
    def network_cost_usd(self) -> float | None:
        """cost(bw), $."""
        return self.breakdown.network_cost_usd if self.breakdown is not None else None

    @property
    def time_x_cost(self) -> float | None:
        """T(bw) x cost(bw), ns x $ (the inverse of performance per cost)."""
        bd = self.breakdown
        return bd.iteration_time_ns * bd.network_cost_usd if bd is not None else None


@dataclass(frozen=True)
class Comparison:
    """The exact optimum and every heuristic for one instance and objective.

    Attributes:
        instance: the instance.
        objective: ``performance``, ``performance_per_cost`` or ``min_cost``.
        objective_unit: ``ns``, ``ns*USD`` or ``USD`` (:func:`hieropt.units.objective_unit`: with
            workloads weighted by shares of hours the times are the hour-weighted ratio
            :data:`hieropt.units.RELATIVE_UNIT`).
        optimum: the exact, verified :class:`Solution`.
        rows: the optimum first, then the heuristics in registry order, then the instance's vendor
            ratios.
        seconds: wall time of the whole comparison, s.
    """

    instance: Instance
    objective: str
    objective_unit: str
    optimum: Solution
    rows: tuple[Row, ...]
    seconds: float

    @property
    def heuristics(self) -> tuple[Row, ...]:
        """The heuristic rows."""
        return self.rows[1:]

    def row(self, name: str) -> Row:
        """The row called ``name`` (``"optimum"``, ``"equal"``, ...)."""
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)


def dimension_name(instance: Instance, d: int, price: float | None = None) -> str:
    """Short name of dimension d, e.g. ``dim 3 (Switch)`` or, with its price, ``dim 3 (Switch, 57.4
    $/GB/s)``."""
    block = instance.network.dims[d].block
    return f"dim {d} ({block})" if price is None else f"dim {d} ({block}, {price:.1f} $/GB/s)"


def bottleneck_dim(bd: Breakdown) -> int | None:
    """The dimension with the largest ``bottleneck_ns_per_dim`` (None when there is no
    communication)."""
    b = np.asarray(bd.bottleneck_ns_per_dim)
    return int(np.argmax(b)) if b.size and float(b.max()) > 0 else None


def bottleneck(tm: TimeModel, bd: Breakdown) -> tuple[int | None, tuple[int, ...]]:
    """(bottleneck dimension, dimensions tied with it): each collective term counts its time for
    every dimension tied as its slowest (:func:`hieropt.model.breakdown.tied_slowest`, the rule of
    the evaluator's ``bottleneck_ns_per_dim``; in LIBRA's form of T from the aggregated terms,
    otherwise that figure itself); the dimension with the most such time, and those within
    :data:`TIE_REL` of it."""
    M = tm.terms_bytes
    if not tm.is_simple or M.shape[0] == 0:
        credit = np.asarray(bd.bottleneck_ns_per_dim, dtype=float)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(M > 0, M / bd.bw_gbps, 0.0)
        credit = (tied_slowest(t) * (tm.term_weights * t.max(axis=1))[:, None]).sum(axis=0)
    best = float(credit.max()) if credit.size else 0.0
    if best <= 0:
        return None, ()
    return int(np.argmax(credit)), tuple(
        int(d) for d in np.flatnonzero(credit >= best * (1 - TIE_REL))
    )


def explain(
    instance: Instance, h: Breakdown, opt: Breakdown, gap_pct: float, objective: str
) -> str:
    """One line: where a design with breakdown ``h`` loses against the optimum ``opt``.

    The starved dimension is the one with less bandwidth than the optimum whose slowest-dimension
    time would shrink the most at the optimum's bandwidth (bottleneck_ns x (1 - B_h / B_opt)); the
    over-provisioned one has the most dollars above the optimum (N x $/GB/s x extra GB/s). For the
    cost objectives the line starts with the time and cost differences.
    """
    if gap_pct <= 100 * MATCH_REL:
        return f"matches the optimum (within {MATCH_REL:.0e})"
    u = unit_cost_usd_per_gbps(instance)
    N = instance.network.npus_total
    dB = h.bw_gbps - opt.bw_gbps
    tol = 1e-3 * max(1.0, float(np.max(opt.bw_gbps)))
    parts = []
    under = np.flatnonzero(dB < -tol)
    if under.size:
        bott = np.asarray(h.bottleneck_ns_per_dim)
        # time the dimension is the slowest, scaled to the optimum's bandwidth: the first-order
        # saving there
        saving = bott[under] * (1 - h.bw_gbps[under] / opt.bw_gbps[under])
        s = (
            int(under[np.argmax(saving)])
            if float(saving.max()) > 0
            else int(under[np.argmin(dB[under])])
        )
        total = float(bott.sum())
        share = (
            f", the slowest dimension for {bott[s] / total:.0%} of its communication"
            if total > 0
            else ""
        )
        parts.append(
            f"starves {dimension_name(instance, s)}: {h.bw_gbps[s]:,.1f} vs "
            f"{opt.bw_gbps[s]:,.1f} GB/s" + share
        )
    over = np.flatnonzero(dB > tol)
    if over.size:
        o = int(over[np.argmax(dB[over] * u[over])])
        idle = " which carries no traffic" if h.bytes_per_dim[o] <= 0 else ""
        parts.append(
            f"over-provisions {dimension_name(instance, o, u[o])}{idle}: {dB[o]:+,.1f} GB/s "
            "vs optimum "
            f"({N * u[o] * dB[o] / 1e6:+,.2f} M$)"
        )
    if not parts:
        parts.append(
            "same bandwidths as the optimum to within 0.1%; the difference is below the "
            "display precision"
        )
    dt = relative_gap(h.iteration_time_ns, opt.iteration_time_ns)
    dc = relative_gap(h.network_cost_usd, opt.network_cost_usd)
    if objective == "performance_per_cost":
        parts.insert(0, f"time {dt:+.1%}, cost {dc:+.1%}")
    elif objective == "min_cost":
        parts.insert(0, f"cost {dc:+.1%} for the same time target")
    order = (
        parts
        if objective == "performance"
        else [parts[0]] + sorted(parts[1:], key=lambda p: "over" not in p)
    )
    return "; ".join(order)


def _value(bd: Breakdown, objective: str) -> float:
    return {"performance": bd.iteration_time_ns, "min_cost": bd.network_cost_usd,
            "performance_per_cost": bd.iteration_time_ns * bd.network_cost_usd}[objective]


def check_ratios(instance: Instance) -> None:
    """Raise :class:`InputError` for an invalid ``heuristic_ratios`` entry (exit 2 on the command
    line)."""
    from ..spec.instance import ratios_fix

    for name, problem in ratio_problems(instance):
        raise InputError("heuristic_ratios", name, problem, ratios_fix(instance.network.n_dims))


def comparison_objective(
    instance: Instance, objective: str | None
) -> tuple[str | None, str | None]:
    """The objective a comparison of ``instance`` runs for when ``objective`` (a command's
    ``--objective``, None when not given) is what the user chose, and why, for the page: the given
    one, or the instance's (None, no note) when heuristics are placed for it; performance (the
    iteration time), with a note saying so, when none was given and the instance's objective
    (``min_run_cost``, ``min_max_regret``) has no heuristic comparison."""
    regret = instance.objective == "min_cost" and instance.max_regret is not None
    if objective is not None or (instance.objective in OBJECTIVES_PLACED and not regret):
        return objective, None
    what = (f"min_cost with max_regret {instance.max_regret:g} (every workload within that "
            "fraction of its own optimum; 'hieropt solve' answers it)" if regret
            else instance.objective)
    return "performance", (
        f"the rules of thumb are compared for performance (iteration time): the instance's "
        f"objective {what} has no heuristic comparison (give --objective to compare "
        f"for {', '.join(OBJECTIVES_PLACED)})"
    )


def check_min_cost_target(instance: Instance, objective: str | None,
                          path: object = None) -> None:
    """Refuse a comparison for ``min_cost`` (``objective``, or the instance's when None) without a
    time target in ns: the rules of thumb are placed at the cheapest point of their ratios that
    meets that target. The fix said is one the instance can take: a time target, or, for
    workloads weighted by ``hours_share`` (whose weighted time is a ratio, no ns target) or a
    ``max_regret`` bound (each workload against its own optimum, which the heuristics are not
    placed for), ``hieropt solve`` for the cheapest network within the regret (``path``: the
    instance file it names; None: ``INSTANCE``) and a comparison for performance.

    Raises:
        InputError: min_cost without ``max_iteration_time_ns``.
    """
    obj = objective or instance.objective
    if obj != "min_cost" or instance.max_iteration_time_ns is not None:
        return
    regret = instance.max_regret if instance.max_regret is not None else 0.1
    answer = (f"'hieropt solve {path or 'INSTANCE'} --objective min_cost --max-regret {regret:g}' "
              f"gives the cheapest network with every workload within {regret * 100:g} % of its "
              "own optimum")
    if instance.relative_time:
        raise InputError(
            "objective", None,
            "compare places the rules of thumb for min_cost at a time target in ns, which "
            "workloads weighted by hours_share do not take (their weighted time is a ratio to "
            "their own optima)",
            f"compare them with --objective performance (or performance_per_cost); {answer}")
    if instance.max_regret is not None:
        raise InputError(
            "max_regret", None,
            "compare places the rules of thumb for min_cost at a time target in ns, not within "
            "max_regret of each workload's own optimum",
            f"give a time target (--max-time 1.3s, or max_iteration_time_ns in ns), or compare "
            f"with --objective performance; {answer}")
    raise InputError(
        "max_iteration_time_ns", None, "missing for objective min_cost",
        "give the iteration-time target (--max-time 1.3s, or max_iteration_time_ns in ns)")


@scoped
def compare(instance: Instance, objective: str | None = None, *,
            cache: Cache | None = None) -> Comparison:
    """Every heuristic and the exact optimum for ``objective`` (default: the instance's). ``cache``:
    the memo tables the heuristics' evaluations and the solve share (:class:`hieropt.cache.Cache`;
    default: a new one).

    Raises:
        InputError: invalid ``heuristic_ratios``, unknown objective, min_cost without a time target
            (:func:`check_min_cost_target`).
        NoSolutionError: the instance has no optimum (infeasible, unbounded, no bandwidth floor for
            performance_per_cost); the heuristics would have none either.
        SolverError: HiGHS failed or the exact answer failed verification.
    """
    start = time.perf_counter()
    check_ratios(instance)
    check_min_cost_target(instance, objective)
    if (objective or instance.objective) != "min_cost" and instance.max_regret is not None:
        # (the regret bound is min_cost's: a comparison for another objective leaves it out)
        instance = instance.model_copy(update={"max_regret": None})
    # (shares of hours -> weights once: the optimum and every heuristic on the one objective)
    instance, _ = hours_weighted(instance)
    # (several workloads: each one's time against its own optimum, as solve's portfolio table)
    sol = solve(instance, objective,
                options=recommended_options(portfolio=True)).raise_for_status()
    obj = sol.objective
    inst = instance if obj == instance.objective else instance.model_copy(update={"objective": obj})
    opt_bd = sol.breakdown
    T_opt = opt_bd.iteration_time_ns
    tm = build_time_model(inst)
    b, tied = bottleneck(tm, opt_bd)
    rows = [
        Row(
            "optimum",
            "exact optimum",
            "optimum",
            True,
            f"{sol.status.value}: proven relative gap {sol.gap:.1e} ({sol.method})",
            sol.bw_gbps,
            opt_bd,
            sol.objective_value,
            0.0,
            1.0,
            b,
            "",
            sol.iterations,
            sol.solve_seconds,
            None,
            tied,
        )
    ]
    for h in run_all(inst, obj, optimum=sol.objective_value):
        if not h.feasible or h.bw is None:
            rows.append(
                Row(
                    h.name,
                    h.label,
                    "heuristic",
                    False,
                    h.message,
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    h.message,
                    h.iterations,
                    h.seconds,
                    h,
                )
            )
            continue
        bd = evaluate(inst, h.bw)
        value = _value(bd, obj)
        gap = 100.0 * relative_gap(value, sol.objective_value)
        b, tied = bottleneck(tm, bd)
        rows.append(
            Row(
                h.name,
                h.label,
                "heuristic",
                True,
                h.message,
                h.bw,
                bd,
                value,
                gap,
                1.0 + relative_gap(bd.iteration_time_ns, T_opt),
                b,
                explain(inst, bd, opt_bd, gap, obj),
                h.iterations,
                h.seconds,
                h,
                tied,
            )
        )
    unit = sol.objective_unit or objective_unit(obj, inst.relative_time)
    return Comparison(inst, obj, unit, sol, tuple(rows), time.perf_counter() - start)
