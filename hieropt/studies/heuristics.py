"""Rules of thumb for per-dimension bandwidth, each made feasible for the instance's design
constraints.

Each heuristic is a pure function ``instance -> HeuristicResult`` (bandwidths in GB/s per NPU per
dimension). A heuristic first proposes a direction r >= 0 (its ratios between the dimensions), then
:func:`place` turns the direction into a feasible vector:

1. **Along its ratios** when the ray {s r : s >= 0} meets the feasible set F (design constraints,
   bounds, the instance's budget): the interval of feasible scales [s_lo, s_hi] is computed exactly,
   row by row, and the scale the objective prefers is taken: performance spends everything F allows
   (s_hi, T decreases with the scale); performance per cost takes the smallest feasible scale (along
   a ray T
   * cost = compute * cost + comm * cost(r), which grows with s); min_cost the cheapest scale that
     meets the
   time target. This is how practitioners apply a ratio ("split the budget 4:2:1:1"), and it keeps
   the ratios exact.
2. **Projected** when the ray misses F (e.g. LIBRA's ``multiple_constraints`` pins bw[0] = 500 and
   bw[2] + bw[3] = 200, which equal ratios cannot meet): the Euclidean projection of the ray onto F,
   the convex QP ``min ||B - s r||^2  s.t. B in F, s >= 0``, solved by HiGHS (highspy with a
   Hessian; D + 1 variables, scale-free in r). Its minimisers form a segment along r; the objective
   picks a point on it as in 1. The result reports the distance moved (GB/s). A Euclidean projection
   was chosen over "scale, then an LP projection" because it changes the heuristic's vector as
   little as possible in every coordinate at once; a scale-only repair cannot meet equalities that
   fix single dimensions.

A heuristic **cannot be made feasible** (``feasible=False``, the message says why, ``bw`` is None)
when: the design constraints, bounds and budget admit no bandwidth vector at all (the exact solver
fails the same way); the projected vector leaves a dimension that carries traffic at 0 GB/s (e.g.
the heuristic's direction is 0 on a loaded dimension and the constraints let that stand: infinite
iteration time); no point on its ratios meets the instance's time target (or, for min_cost, the
target); nothing bounds the scale the objective prefers (no upper limit on bandwidth for
performance, no floor for performance per cost); or its own direction is empty (all zero) or invalid
(vendor ratios of the wrong length, negative or non-finite). A zero entry on a dimension that a
constraint forces positive is **not** a failure: the projection repairs it, and the placement
message says so.

The heuristics:

- :func:`equal_split`: B_d equal on every dimension.
- :func:`traffic_proportional`: B_d proportional to the bytes each NPU sends on dimension d per
  iteration (:mod:`hieropt.model.traffic`; the bytes do not depend on bandwidth).
- :func:`square_root`: B_d proportional to sqrt(m_d / p_d) with m_d those bytes and p_d the
  dimension's $ per GB/s: Kleinrock's square-root capacity assignment (L. Kleinrock, *Communication
  Nets: Stochastic Message Flow and Delay*, McGraw-Hill 1964, ch. 5), the closed-form optimum of the
  separable relaxation min sum_d m_d / B_d s.t. sum_d p_d B_d = budget (Lagrange: m_d / B_d^2 =
  lambda p_d). It ignores that the dimensions of one collective work concurrently (T takes a max
  over dimensions, not a sum).
- :func:`gradient_descent`: projected (sub)gradient descent on the true objective from the equal
  split, the method of LIBRA's earlier (2022) code (today's LIBRA repository solves with Gurobi).
  Backtracking step: a step is kept only when it lowers the objective (then the step grows by 1.5),
  otherwise it is halved; every iterate is projected onto F by the HiGHS QP. T is a sum of maxima,
  non-smooth where two dimensions tie as a collective's slowest, so descent stalls at such kinks:
  the result reports its iterations and its final gap to the exact optimum.
- :func:`water_filling`: greedy water-filling on the bottleneck: 1,000 equal increments, each to the
  dimension that is currently the slowest for the most collective time
  (Breakdown.bottleneck_ns_per_dim). It equalises bottleneck time where the optimum equalises
  marginal gain (sum_k m_kd / B_d^2 per unit of constraint), so it is not optimal.
- :func:`vendor_ratios`: the fixed ratios the instance gives in ``heuristic_ratios`` (e.g. a
  vendor's 8:4:2:1).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model.cost import unit_cost_usd_per_gbps
from ..model.timing import TimeModel, build_time_model, evaluate
from ..spec import Instance
from ..units import fmt_num
from ..verify import constraint_violations
from .placement import (
    FeasibleSet,
    Placement,
    cannot_place,
    objective_value,
    place,
    placed_objective,
    relative_gap,
)

WATER_STEPS = 1000
"""Increments of the water-filling heuristic."""
GD_MAX_ITER = 500
"""Iteration limit of the gradient-descent heuristic."""


@dataclass(frozen=True)
class HeuristicResult:
    """The outcome of one heuristic (scipy-style result object).

    Attributes:
        name: registry key, e.g. ``"equal"``, ``"gradient"``, ``"vendor:DGX-like"``.
        label: display name, e.g. ``"equal split"``.
        feasible: ``bw`` satisfies every design constraint, bound, budget and time target, with
            finite time.
        message: one line: how the vector was placed, or why it "cannot be made feasible".
        bw: (D,) per-NPU bandwidths, GB/s, when feasible; None otherwise.
        ratios: (D,) the heuristic's own direction as shares summing to 1 (None when it has none).
        placement: ``"ratios"`` (exactly on its ratios), ``"projected"`` (moved onto the
            constraints) or ``""``.
        projection_gbps: Euclidean distance (GB/s) between ``bw``'s ray point and the heuristic's
            ray; 0 on the ray.
        iterations: iterations of an iterative heuristic (gradient descent steps, water-filling
            increments).
        gap: relative gap (value - optimum) / optimum to the exact optimum, where the heuristic
            reports it (gradient descent); compare computes it for every heuristic.
        seconds: wall time of the heuristic, s.
        extra: heuristic-specific details (stop reason, step size, scale, ...).
    """

    name: str
    label: str
    feasible: bool
    message: str
    bw: np.ndarray | None
    ratios: np.ndarray | None = None
    placement: str = ""
    projection_gbps: float = 0.0
    iterations: int | None = None
    gap: float | None = None
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def _result(
    instance: Instance,
    name: str,
    label: str,
    direction: np.ndarray | None,
    placed: Placement,
    start: float,
    **kw: Any,
) -> HeuristicResult:
    ratios = None
    if direction is not None and np.all(np.isfinite(direction)) and float(np.sum(direction)) > 0:
        ratios = np.asarray(direction, dtype=float) / float(np.sum(direction))
    bw = placed.bw
    message = placed.message
    if bw is not None:
        bad = constraint_violations(instance, bw)
        # never expected: the placement enforces every row; say so rather than return an infeasible
        # vector
        if bad:
            bw, message = (
                None,
                "cannot be made feasible: the placed vector violates "
                + "; ".join(t for t, _ in bad),
            )
    extra = dict(kw.pop("extra", {}))
    if placed.scale:
        extra.setdefault("scale", placed.scale)
    return HeuristicResult(
        name=name,
        label=label,
        feasible=bw is not None,
        message=message,
        bw=bw,
        ratios=ratios,
        placement=placed.placement if bw is not None else "",
        projection_gbps=placed.distance,
        seconds=time.perf_counter() - start,
        extra=extra,
        **kw,
    )


def _bytes_per_dim(instance: Instance) -> np.ndarray:
    """Bytes each NPU sends on each dimension per iteration (all workloads, weighted; independent of
    bandwidth)."""
    return evaluate(instance, np.ones(instance.network.n_dims)).bytes_per_dim


# ----------------------------------------------------------------------------------- the heuristics
def equal_split(instance: Instance, objective: str | None = None) -> HeuristicResult:
    """The same bandwidth on every dimension, made feasible by :func:`place`."""
    start = time.perf_counter()
    r = np.ones(instance.network.n_dims)
    return _result(instance, "equal", "equal split", r, place(instance, r, objective), start)


def traffic_proportional(instance: Instance, objective: str | None = None) -> HeuristicResult:
    """Bandwidth in proportion to the bytes each NPU sends on each dimension per iteration."""
    start = time.perf_counter()
    r = _bytes_per_dim(instance)
    return _result(
        instance, "traffic", "traffic-proportional", r, place(instance, r, objective), start
    )


def square_root(instance: Instance, objective: str | None = None) -> HeuristicResult:
    """Kleinrock's square-root rule B_d ~ sqrt(m_d / p_d) (bytes per iteration over $ per GB/s)."""
    start = time.perf_counter()
    r = np.sqrt(_bytes_per_dim(instance) / unit_cost_usd_per_gbps(instance))
    return _result(instance, "sqrt", "square-root rule", r, place(instance, r, objective), start)


def _subgradient(tm: TimeModel, B: np.ndarray) -> np.ndarray:
    """A subgradient of T at B (ns per GB/s): in LIBRA's form each term's slowest dimension d gets
    -m_kd / B_d^2; other training loops (latency, overlap nodes): one-sided forward differences, as
    a numerical code would."""
    g = np.zeros_like(B)
    M = tm.terms_bytes
    if M.shape[0] == 0:
        return g
    if not tm.is_simple:
        base = tm.time_ns(B)
        for d in range(B.size):
            h = 1e-7 * max(B[d], 1e-3)
            e = B.copy()
            e[d] += h
            g[d] = (tm.time_ns(e) - base) / h
        return g
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.where(M > 0, M / B, 0.0)
    d = per.argmax(axis=1)
    np.add.at(g, d, -M[np.arange(M.shape[0]), d] / B[d] ** 2)
    return g


def gradient_descent(instance: Instance, objective: str | None = None, optimum: float | None = None,
                     max_iter: int = GD_MAX_ITER) -> HeuristicResult:
    """Projected (sub)gradient descent on the true objective from the equal split (backtracking
    step).

    For performance it descends T(B); for performance per cost T(B) * cost(B); for min_cost it
    descends T(B) and then takes the cheapest point on the result's ratios that meets the time
    target.

    Args:
        optimum: the exact optimal objective value (ns, $ or ns * $), for the reported ``gap``; when
            None, the exact optimum is computed with :func:`hieropt.solvers.objectives.solve`.
        max_iter: iteration limit.
    """
    start = time.perf_counter()
    obj = placed_objective(instance, objective)
    F = FeasibleSet(instance)
    tm = build_time_model(instance)
    D = instance.network.n_dims
    first = place(instance, np.ones(D), obj, F, tm)
    if first.bw is None:
        why = first.message.removeprefix("cannot be made feasible: ")
        return _result(instance, "gradient", "gradient descent", None,
                       cannot_place(f"its start, the equal split: {why}"),
                       start, iterations=0)
    descend = "performance" if obj == "min_cost" else obj
    unit = F.unit_usd

    def f(B: np.ndarray) -> float:
        return objective_value(instance, tm, B, descend)

    def grad(B: np.ndarray) -> np.ndarray:
        gT = _subgradient(tm, B)
        if descend == "performance":
            return gT
        return float(unit @ B) * gT + tm.time_ns(B) * unit

    B = first.bw
    fB = f(B)
    size = max(float(np.linalg.norm(B)), 1e-12)
    cap = instance.max_iteration_time_ns
    step = 0.1 * size
    n = projections = 0
    stop = f"iteration limit {max_iter}"
    for n in range(1, max_iter + 1):  # noqa: B007 - n is reported
        g = grad(B)
        gn = float(np.linalg.norm(g))
        if gn == 0 or not math.isfinite(gn):
            stop = "zero gradient"
            break
        trial = F.project(B - step * g / gn)
        projections += 1
        ft = math.inf
        if trial is not None and np.all(trial[tm.carries_traffic] > 0):
            # keep the time cap
            within = cap is None or descend == "performance" or tm.time_ns(trial) <= cap
            ft = f(trial) if within else math.inf
        if ft < fB:
            B, fB = trial, ft
            step *= 1.5
        else:
            step *= 0.5
        if step < 1e-9 * size:
            stop = "the step fell below 1e-9 of the vector (stalled)"
            break
    if obj == "min_cost":
        placed = place(instance, B, obj, F, tm)
    else:
        placed = Placement(B, "", "projected", 0.0, 0.0)
        if (
            instance.max_iteration_time_ns is not None
            and tm.time_ns(B) > instance.max_iteration_time_ns
        ):
            placed = cannot_place(
                f"its result misses the time target {instance.max_iteration_time_ns:,.1f} ns"
            )
    gap = None
    if placed.bw is not None:
        if optimum is None:
            from ..solvers.objectives import solve

            optimum = solve(instance, obj).raise_for_status().objective_value
        gap = relative_gap(objective_value(instance, tm, placed.bw, obj), optimum)
        placed = Placement(
            placed.bw,
            f"{n} iterations from the equal split, stopped: {stop}; every step projected "
            f"onto the constraints; final gap to the exact optimum {fmt_num(gap, '.3%')}",
            placed.placement,
            0.0,
            0.0,
        )
    return _result(
        instance,
        "gradient",
        "gradient descent",
        None,
        placed,
        start,
        iterations=n,
        gap=gap,
        extra={"stop": stop, "projections": projections, "final_step_gbps": step},
    )


def _bottleneck_ns(instance: Instance, tm: TimeModel, B: np.ndarray) -> np.ndarray:
    """Collective time during which each dimension is the slowest (Breakdown.bottleneck_ns_per_dim;
    from the aggregated terms in LIBRA's form, from the evaluator otherwise)."""
    if not tm.is_simple:
        return evaluate(instance, B).bottleneck_ns_per_dim
    M = tm.terms_bytes
    out = np.zeros(B.size)
    if M.shape[0] == 0:
        return out
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.where(M > 0, np.where(B > 0, M / B, np.inf), 0.0)
    d = per.argmax(axis=1)
    np.add.at(out, d, per[np.arange(M.shape[0]), d])
    return out


def water_filling(
    instance: Instance, objective: str | None = None, steps: int = WATER_STEPS
) -> HeuristicResult:
    """Greedy water-filling: ``steps`` equal increments, each to the current bottleneck dimension
    (the one that is the slowest for the most collective time); every loaded dimension starts with
    one increment."""
    start = time.perf_counter()
    tm = build_time_model(instance)
    loaded = tm.carries_traffic
    B = np.where(loaded, 1.0, 0.0)
    if not loaded.any():
        B = np.ones(instance.network.n_dims)
    for _ in range(max(steps - int(loaded.sum()), 0)):
        if not loaded.any():
            break
        B[int(np.argmax(_bottleneck_ns(instance, tm, B)))] += 1.0
    return _result(
        instance,
        "waterfill",
        "water-filling",
        B,
        place(instance, B, objective, tm=tm),
        start,
        iterations=steps,
    )


def ratio_problems(instance: Instance) -> list[tuple[str, str]]:
    """(name, problem) for every invalid entry of ``instance.heuristic_ratios`` (wrong length,
    negative, non-finite, all zero)."""
    from ..spec.instance import ratios_problem

    D = instance.network.n_dims
    return [(name, problem) for name, ratios in (instance.heuristic_ratios or {}).items()
            if (problem := ratios_problem(ratios, D)) is not None]


def vendor_ratios(instance: Instance, objective: str | None = None) -> list[HeuristicResult]:
    """One result per named ratio vector of ``instance.heuristic_ratios`` (empty when the instance
    gives none)."""
    bad = dict(ratio_problems(instance))
    out = []
    for name, ratios in (instance.heuristic_ratios or {}).items():
        start = time.perf_counter()
        key, label = f"vendor:{name}", f"ratios {name}"
        if name in bad:
            out.append(
                _result(
                    instance, key, label, None, cannot_place(f"invalid ratios: {bad[name]}"), start
                )
            )
            continue
        r = np.array(ratios, dtype=float)
        out.append(_result(instance, key, label, r, place(instance, r, objective), start))
    return out


HEURISTICS: dict[str, Callable[..., HeuristicResult]] = {
    "equal": equal_split,
    "traffic": traffic_proportional,
    "sqrt": square_root,
    "gradient": gradient_descent,
    "waterfill": water_filling,
}
"""The built-in heuristics by name (vendor ratios come from the instance: :func:`vendor_ratios`)."""


def run_all(
    instance: Instance, objective: str | None = None, optimum: float | None = None
) -> list[HeuristicResult]:
    """Every built-in heuristic, then the instance's vendor ratios (``optimum``: see
    :func:`gradient_descent`)."""
    out = []
    for name, fn in HEURISTICS.items():
        out.append(
            fn(instance, objective, optimum=optimum)
            if name == "gradient"
            else fn(instance, objective)
        )
    return out + vendor_ratios(instance, objective)
