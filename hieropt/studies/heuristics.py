"""Rules of thumb for per-dimension bandwidth, each made feasible for the instance's design constraints.

Each heuristic is a pure function ``instance -> HeuristicResult`` (bandwidths in GB/s per NPU per dimension). A
heuristic first proposes a direction r >= 0 (its ratios between the dimensions), then :func:`place` turns the
direction into a feasible vector:

1. **Along its ratios** when the ray {s r : s >= 0} meets the feasible set F (design constraints, bounds, the
   instance's budget): the interval of feasible scales [s_lo, s_hi] is computed exactly, row by row, and the scale
   the objective prefers is taken: performance spends everything F allows (s_hi, T decreases with the scale);
   performance per cost takes the smallest feasible scale (along a ray T * cost = compute * cost + comm * cost(r),
   which grows with s); min_cost the cheapest scale that meets the time target. This is how practitioners apply a
   ratio ("split the budget 4:2:1:1"), and it keeps the ratios exact.
2. **Projected** when the ray misses F (e.g. LIBRA's ``multiple_constraints`` pins bw[0] = 500 and bw[2] + bw[3] =
   200, which equal ratios cannot meet): the Euclidean projection of the ray onto F, the convex QP
   ``min ||B - s r||^2  s.t. B in F, s >= 0``, solved by HiGHS (highspy with a Hessian; D + 1 variables, scale-free in
   r). Its minimisers form a segment along r; the objective picks a point on it as in 1. The result reports the
   distance moved (GB/s). A Euclidean projection was chosen over "scale, then an LP projection" because it changes
   the heuristic's vector as little as possible in every coordinate at once; a scale-only repair cannot meet
   equalities that fix single dimensions.

A heuristic **cannot be made feasible** (``feasible=False``, the message says why, ``bw`` is None) when: the design
constraints, bounds and budget admit no bandwidth vector at all (the exact solver fails the same way); the projected
vector leaves a dimension that carries traffic at 0 GB/s (e.g. the heuristic's direction is 0 on a loaded dimension
and the constraints let that stand: infinite iteration time); no point on its ratios meets the instance's time target
(or, for min_cost, the target); nothing bounds the scale the objective prefers (no upper limit on bandwidth for
performance, no floor for performance per cost); or its own direction is empty (all zero) or invalid (vendor ratios
of the wrong length, negative or non-finite). A zero entry on a dimension that a constraint forces positive is **not**
a failure: the projection repairs it, and the placement message says so.

The heuristics:

- :func:`equal_split`: B_d equal on every dimension.
- :func:`traffic_proportional`: B_d proportional to the bytes each NPU sends on dimension d per iteration
  (:mod:`hieropt.model.traffic`; the bytes do not depend on bandwidth).
- :func:`square_root`: B_d proportional to sqrt(m_d / p_d) with m_d those bytes and p_d the dimension's $ per GB/s:
  Kleinrock's square-root capacity assignment (L. Kleinrock, *Communication Nets: Stochastic Message Flow and Delay*,
  McGraw-Hill 1964, ch. 5), the closed-form optimum of the separable relaxation
  min sum_d m_d / B_d s.t. sum_d p_d B_d = budget (Lagrange: m_d / B_d^2 = lambda p_d). It ignores that the
  dimensions of one collective work concurrently (T takes a max over dimensions, not a sum).
- :func:`gradient_descent`: projected (sub)gradient descent on the true objective from the equal split, the method
  of LIBRA's earlier (2022) code as described in issue 6 (today's LIBRA repository solves with Gurobi). Backtracking
  step: a step is kept only when it lowers the objective (then the step grows by 1.5), otherwise it is halved; every
  iterate is projected onto F by the HiGHS QP. T is a sum of maxima, non-smooth where two dimensions tie as a
  collective's slowest, so descent stalls at such kinks: the result reports its iterations and its final gap to the
  exact optimum.
- :func:`water_filling`: greedy water-filling on the bottleneck: 1,000 equal increments, each to the dimension that
  is currently the slowest for the most collective time (Breakdown.bottleneck_ns_per_dim). It equalises bottleneck
  time where the optimum equalises marginal gain (sum_k m_kd / B_d^2 per unit of constraint), so it is not optimal.
- :func:`vendor_ratios`: the fixed ratios the instance gives in ``heuristic_ratios`` (e.g. a vendor's 8:4:2:1).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import highspy
import numpy as np

from ..errors import InputError
from ..model.cost import unit_cost_usd_per_gbps
from ..model.timing import TimeModel, build_time_model, evaluate
from ..spec import Instance
from ..verify import constraint_violations

OBJECTIVES_PLACED = ("performance", "performance_per_cost", "min_cost")
ROW_TOL = 1e-9
"""Relative slack on a row or bound when sliding along a direction (verify accepts 1e-6)."""
WATER_STEPS = 1000
"""Increments of the water-filling heuristic."""
GD_MAX_ITER = 500
"""Iteration limit of the gradient-descent heuristic."""
_INF = highspy.kHighsInf


@dataclass(frozen=True)
class HeuristicResult:
    """The outcome of one heuristic (scipy-style result object).

    Attributes:
        name: registry key, e.g. ``"equal"``, ``"gradient"``, ``"vendor:DGX-like"``.
        label: display name, e.g. ``"equal split"``.
        feasible: ``bw`` satisfies every design constraint, bound, budget and time target, with finite time.
        message: one line: how the vector was placed, or why it "cannot be made feasible".
        bw: (D,) per-NPU bandwidths, GB/s, when feasible; None otherwise.
        ratios: (D,) the heuristic's own direction as shares summing to 1 (None when it has none).
        placement: ``"ratios"`` (exactly on its ratios), ``"projected"`` (moved onto the constraints) or ``""``.
        projection_gbps: Euclidean distance (GB/s) between ``bw``'s ray point and the heuristic's ray; 0 on the ray.
        iterations: iterations of an iterative heuristic (gradient descent steps, water-filling increments).
        gap: relative gap (value - optimum) / optimum to the exact optimum, where the heuristic reports it
            (gradient descent); compare computes it for every heuristic.
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


def _objective(instance: Instance, objective: str | None) -> str:
    obj = objective or instance.objective
    if obj not in OBJECTIVES_PLACED:
        raise InputError("objective", None, f"unknown objective {obj!r}", f"use one of {', '.join(OBJECTIVES_PLACED)}")
    if obj == "min_cost" and instance.max_iteration_time_ns is None:
        raise InputError("max_iteration_time_ns", None, "missing for objective min_cost",
                         "give the iteration-time target in ns (--max-time-ns)")
    return obj


def relative_gap(value: float, optimum: float) -> float:
    """(value - optimum) / optimum; 0 when both are 0 (nothing to optimise), inf when only the optimum is."""
    if optimum == 0:
        return 0.0 if value == 0 else math.inf
    return (value - optimum) / optimum


def objective_value(instance: Instance, tm: TimeModel, bw: np.ndarray, objective: str) -> float:
    """The objective at ``bw``: ns (performance), $ (min_cost) or ns * $ (performance_per_cost)."""
    t = tm.time_ns(bw)
    c = float(instance.network.npus_total * unit_cost_usd_per_gbps(instance) @ bw)
    return {"performance": t, "min_cost": c, "performance_per_cost": t * c}[objective]


# ------------------------------------------------------------------------------------------------ the feasible set
class FeasibleSet:
    """F = {B : design constraints, bounds, cost <= budget} as rows ``lo <= A B <= hi`` and bounds ``lb <= B <= ub``,
    with Euclidean projections onto it (convex QPs in HiGHS, built on first use and re-solved in place)."""

    def __init__(self, instance: Instance):
        D = instance.network.n_dims
        rows, lo, hi, text = [], [], [], []
        for c in instance.constraints:
            a = np.asarray(c.coefficients, dtype=float)
            rows.append(a)
            lo.append(c.rhs if c.sense in (">=", "==") else -_INF)
            hi.append(c.rhs if c.sense in ("<=", "==") else _INF)
            text.append(f"'{c.text}'")
        self.unit_usd = instance.network.npus_total * unit_cost_usd_per_gbps(instance)  # $ per GB/s, per dimension
        if instance.max_network_cost_usd is not None:
            scale = float(self.unit_usd.max())
            rows.append(self.unit_usd / scale)
            lo.append(-_INF)
            hi.append(instance.max_network_cost_usd / scale)
            text.append(f"the budget ${instance.max_network_cost_usd:,.0f}")
        self.A = np.array(rows, dtype=float).reshape(len(rows), D)
        self.lo, self.hi, self.text = np.array(lo, dtype=float), np.array(hi, dtype=float), text
        b = instance.bounds_or_default
        self.lb = np.array([x.lower_gbps for x in b], dtype=float)
        self.ub = np.array([x.upper_gbps if x.upper_gbps is not None else _INF for x in b], dtype=float)
        self.D = D
        self._proj: highspy.Highs | None = None

    def _highs(self, n_cols: int, lb: np.ndarray, ub: np.ndarray, a_cols: np.ndarray) -> highspy.Highs:
        from ..solvers.highs import quiet_stdout

        with quiet_stdout():
            h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        for name, v in (("primal_feasibility_tolerance", 1e-9), ("dual_feasibility_tolerance", 1e-9)):
            h.setOptionValue(name, v)
        none = np.zeros(0, dtype=np.int32)
        h.addCols(n_cols, np.zeros(n_cols), lb, ub, 0, none, none, np.zeros(0))
        for i in range(self.A.shape[0]):
            nz = np.flatnonzero(a_cols[i]).astype(np.int32)
            h.addRow(float(self.lo[i]), float(self.hi[i]), len(nz), nz, a_cols[i][nz])
        return h

    def project(self, y: np.ndarray) -> np.ndarray | None:
        """argmin ||B - y|| over F (None when F is empty)."""
        if self._proj is None:
            D = self.D
            self._proj = self._highs(D, self.lb, self.ub, self.A)
            idx = np.arange(D, dtype=np.int32)
            self._proj.passHessian(D, D, highspy.HessianFormat.kTriangular, idx, idx, np.ones(D))
        h = self._proj
        h.changeColsCost(self.D, np.arange(self.D, dtype=np.int32), -np.asarray(y, dtype=float))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        return np.clip(np.asarray(h.getSolution().col_value, dtype=float), self.lb, self.ub)

    def nearest_to_ray(self, r: np.ndarray) -> tuple[np.ndarray, float] | None:
        """(B, s) minimising ||B - s r||^2 over B in F, s >= 0 (r with unit norm); None when F is empty."""
        D = self.D
        lb = np.append(self.lb, 0.0)
        ub = np.append(self.ub, _INF)
        h = self._highs(D + 1, lb, ub, np.hstack([self.A, np.zeros((self.A.shape[0], 1))]))
        # 1/2 z' Q z with Q = 2 [[I, -r], [-r', r'r]], lower triangle column-wise
        start, index, value = [], [], []
        for j in range(D):
            start.append(len(index))
            index += [j, D]
            value += [2.0, -2.0 * r[j]]
        start.append(len(index))
        index.append(D)
        value.append(2.0 * float(r @ r))
        h.passHessian(D + 1, len(index), highspy.HessianFormat.kTriangular, np.array(start, dtype=np.int32),
                      np.array(index, dtype=np.int32), np.array(value, dtype=float))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        z = np.asarray(h.getSolution().col_value, dtype=float)
        return np.clip(z[:D], self.lb, self.ub), max(float(z[D]), 0.0)

    def contains(self, B: np.ndarray) -> bool:
        """Whether ``B`` satisfies every row and bound within :data:`ROW_TOL` (relative)."""
        v = self.A @ B
        tol_r = ROW_TOL * np.maximum(1.0, np.abs(np.where(np.isfinite(self.hi), self.hi, self.lo)))
        tol_b = ROW_TOL * np.maximum(1.0, np.abs(self.lb))
        return bool(np.all(v >= self.lo - tol_r) and np.all(v <= self.hi + tol_r) and np.all(B >= self.lb - tol_b)
                    and np.all(B <= self.ub * (1 + ROW_TOL)))

    def slide(self, B: np.ndarray, r: np.ndarray, t_min: float = -_INF) -> tuple[float, float] | None:
        """The interval of t with B + t r in F and t >= t_min, None when empty. Exact first; if round-off empties it
        (two equalities that pin t to values a few ulps apart), each row and bound gets a :data:`ROW_TOL` slack and
        a pinned interval collapses to its midpoint."""
        exact = self._slide(B, r, t_min, 0.0)
        if exact is not None:
            return exact
        loose = self._slide(B, r, t_min, ROW_TOL)
        if loose is None:
            return None
        lo, hi = loose
        if hi - lo <= 1e-6 * max(1.0, abs(lo)):
            return 0.5 * (lo + hi), 0.5 * (lo + hi)
        return loose

    def _slide(self, B: np.ndarray, r: np.ndarray, t_min: float, rel_tol: float) -> tuple[float, float] | None:
        lo, hi = t_min, _INF

        def clip(a: float, v: float, low: float, high: float, scale: float) -> bool:
            nonlocal lo, hi
            tol = rel_tol * max(1.0, scale)
            if abs(a) <= 1e-14 * max(1.0, abs(v)):
                return low - tol <= v <= high + tol
            ends = sorted(((low - tol - v) / a, (high + tol - v) / a))
            lo, hi = max(lo, ends[0]), min(hi, ends[1])
            return True

        v = self.A @ B
        a = self.A @ r
        for i in range(self.A.shape[0]):
            rhs = self.hi[i] if np.isfinite(self.hi[i]) else self.lo[i]
            if not clip(float(a[i]), float(v[i]), float(self.lo[i]), float(self.hi[i]), abs(float(rhs))):
                return None
        for d in range(self.D):
            if not clip(float(r[d]), float(B[d]), float(self.lb[d]), float(self.ub[d]), abs(float(self.lb[d]))):
                return None
        return (lo, hi) if lo <= hi else None


# -------------------------------------------------------------------------------------------------------- placing
@dataclass(frozen=True)
class _Placed:
    bw: np.ndarray | None
    message: str
    placement: str = ""
    distance: float = 0.0
    scale: float = 0.0


def _cannot(reason: str) -> _Placed:
    return _Placed(None, f"cannot be made feasible: {reason}")


def _first_time_ok(tm: TimeModel, B: np.ndarray, r: np.ndarray, lo: float, hi: float, target: float) -> float | None:
    """Smallest t in [lo, hi] with T(B + t r) <= target (T is non-increasing in t as r >= 0); None if none."""
    def ok(t: float) -> bool:
        return tm.time_ns(B + t * r) <= target

    if ok(lo):
        return lo
    if not math.isfinite(hi):
        step = max(1.0, abs(lo))
        hi = lo + step
        for _ in range(200):
            if ok(hi):
                break
            step *= 2.0
            hi = lo + step
        else:
            return None
    if not ok(hi):
        return None
    a, b = lo, hi
    for _ in range(200):
        m = 0.5 * (a + b)
        if ok(m):
            b = m
        else:
            a = m
        if b - a <= 1e-13 * max(1.0, abs(b)):
            break
    return b


def _min_product(tm: TimeModel, B: np.ndarray, r: np.ndarray, lo: float, hi: float,
                 unit_usd: np.ndarray) -> float:
    """t in [lo, hi] minimising T(B + t r) * cost(B + t r): coarse grid, then golden section."""
    def phi(t: float) -> float:
        x = B + t * r
        return tm.time_ns(x) * float(unit_usd @ x)

    if not math.isfinite(hi):  # the product grows once compute * cost dominates: double until it does
        hi = lo + max(1.0, abs(lo))
        while phi(2 * hi - lo) < phi(hi) and hi < 1e15:
            hi = 2 * hi - lo
        hi = 2 * hi - lo
    ts = np.linspace(lo, hi, 65)
    vals = [phi(float(t)) for t in ts]
    i = int(np.argmin(vals))
    a, b = float(ts[max(i - 1, 0)]), float(ts[min(i + 1, len(ts) - 1)])
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    for _ in range(100):
        if phi(c) <= phi(d):
            b = d
        else:
            a = c
        c, d = b - g * (b - a), a + g * (b - a)
        if b - a <= 1e-12 * max(1.0, abs(b)):
            break
    best = min((float(ts[i]), 0.5 * (a + b)), key=phi)
    return best


def place(instance: Instance, direction: np.ndarray, objective: str | None = None,
          feasible_set: FeasibleSet | None = None, tm: TimeModel | None = None) -> _Placed:
    """Turn a direction (ratios, >= 0) into a feasible bandwidth vector (module docstring: along its ratios when the
    ray meets F, else the Euclidean projection of the ray, then the objective's point on the segment)."""
    obj = _objective(instance, objective)
    F = feasible_set or FeasibleSet(instance)
    tm = tm or build_time_model(instance)
    r = np.asarray(direction, dtype=float)
    if r.shape != (F.D,) or not np.all(np.isfinite(r)) or np.any(r < 0):
        return _cannot(f"its direction {r.tolist()} is not {F.D} finite numbers >= 0")
    norm = float(np.linalg.norm(r))
    if norm == 0:
        return _cannot("its direction is zero on every dimension")
    r = r / norm
    zero = np.zeros(F.D)
    ray = F.slide(zero, r, t_min=0.0)
    if ray is not None:
        B, t_min, placement, dist = zero, 0.0, "ratios", 0.0
        interval = ray
    else:
        near = F.nearest_to_ray(r)
        if near is None:
            return _cannot("the design constraints, bounds and budget admit no bandwidth vector")
        B, s = near
        dist = float(np.linalg.norm(B - s * r))
        # the minimisers of ||B - s r|| form the segment (B + t r, s + t); stay on it (s + t >= 0)
        interval = F.slide(B, r, t_min=-s)
        if interval is None:  # the QP's point sits on F's edge within its tolerance: keep it
            interval = (0.0, 0.0)
        t_min, placement = -s, "projected"
    lo, hi = interval
    target = instance.max_iteration_time_ns
    if target is not None:
        t_ok = _first_time_ok(tm, B, r, lo, hi, target)
        if t_ok is None:
            best = tm.time_ns(B + hi * r) if math.isfinite(hi) else float("nan")
            return _cannot(f"no point on its ratios within the constraints meets the time target {target:,.1f} ns "
                           f"(best {best:,.1f} ns)")
        lo = t_ok
    if obj == "performance":
        if not math.isfinite(hi):
            return _cannot("nothing limits the bandwidth along its ratios (add a budget or a constraint such as "
                           "'sum(bw) <= 500')")
        t = hi
    elif obj == "min_cost":
        t = lo  # cost grows with t: the cheapest point that meets the target
    elif placement == "ratios":
        t = lo  # T * cost = compute * cost(s r) + comm(r) * cost(r): increasing in s
        if t <= 0:
            return _cannot("no constraint keeps bandwidth away from zero along its ratios, so time x cost keeps "
                           "falling as it shrinks (add a floor such as 'sum(bw) == 500')")
    else:
        t = _min_product(tm, B, r, lo, hi, F.unit_usd)
    bw = np.clip(B + t * r, F.lb, F.ub) + 0.0
    scale = t if placement == "ratios" else t - t_min
    loaded = tm.carries_traffic
    starved = np.flatnonzero(loaded & (bw <= 0))
    if starved.size:
        d = int(starved[0])
        return _cannot(f"the constraints leave dimension {d}, which carries traffic, at 0 GB/s on this heuristic's "
                       "ratios (infinite iteration time)")
    if placement == "ratios":
        message = "on its ratios, scaled to " + ("use the whole allowance" if obj == "performance" else
                                                  "the cheapest point meeting the time target" if obj == "min_cost"
                                                  else "the smallest allowed size (best time x cost on the ray)")
    else:
        message = (f"projected onto the constraints: moved {dist:,.3f} GB/s from its ratios "
                   f"({dist / max(float(np.linalg.norm(bw)), 1e-300):.1%} of the vector)")
    return _Placed(bw, message, placement, dist, float(scale))


def _result(instance: Instance, name: str, label: str, direction: np.ndarray | None, placed: _Placed, start: float,
            **kw: Any) -> HeuristicResult:
    ratios = None
    if direction is not None and np.all(np.isfinite(direction)) and float(np.sum(direction)) > 0:
        ratios = np.asarray(direction, dtype=float) / float(np.sum(direction))
    bw = placed.bw
    message = placed.message
    if bw is not None:
        bad = constraint_violations(instance, bw)
        if bad:  # never expected: the placement enforces every row; say so rather than return an infeasible vector
            bw, message = None, "cannot be made feasible: the placed vector violates " + "; ".join(t for t, _ in bad)
    extra = dict(kw.pop("extra", {}))
    if placed.scale:
        extra.setdefault("scale", placed.scale)
    return HeuristicResult(name=name, label=label, feasible=bw is not None, message=message, bw=bw, ratios=ratios,
                           placement=placed.placement if bw is not None else "", projection_gbps=placed.distance,
                           seconds=time.perf_counter() - start, extra=extra, **kw)


def _bytes_per_dim(instance: Instance) -> np.ndarray:
    """Bytes each NPU sends on each dimension per iteration (all workloads, weighted; independent of bandwidth)."""
    return evaluate(instance, np.ones(instance.network.n_dims)).bytes_per_dim


# ------------------------------------------------------------------------------------------------- the heuristics
def equal_split(instance: Instance, objective: str | None = None) -> HeuristicResult:
    """The same bandwidth on every dimension, made feasible by :func:`place`."""
    start = time.perf_counter()
    r = np.ones(instance.network.n_dims)
    return _result(instance, "equal", "equal split", r, place(instance, r, objective), start)


def traffic_proportional(instance: Instance, objective: str | None = None) -> HeuristicResult:
    """Bandwidth in proportion to the bytes each NPU sends on each dimension per iteration."""
    start = time.perf_counter()
    r = _bytes_per_dim(instance)
    return _result(instance, "traffic", "traffic-proportional", r, place(instance, r, objective), start)


def square_root(instance: Instance, objective: str | None = None) -> HeuristicResult:
    """Kleinrock's square-root rule B_d ~ sqrt(m_d / p_d) (bytes per iteration over $ per GB/s)."""
    start = time.perf_counter()
    r = np.sqrt(_bytes_per_dim(instance) / unit_cost_usd_per_gbps(instance))
    return _result(instance, "sqrt", "square-root rule", r, place(instance, r, objective), start)


def _subgradient(tm: TimeModel, B: np.ndarray) -> np.ndarray:
    """A subgradient of T at B (ns per GB/s): in LIBRA's form each term's slowest dimension d gets -m_kd / B_d^2;
    other training loops (latency, overlap nodes): one-sided forward differences, as a numerical code would."""
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
    """Projected (sub)gradient descent on the true objective from the equal split (backtracking step).

    For performance it descends T(B); for performance per cost T(B) * cost(B); for min_cost it descends T(B) and
    then takes the cheapest point on the result's ratios that meets the time target.

    Args:
        optimum: the exact optimal objective value (ns, $ or ns * $), for the reported ``gap``; when None, the
            exact optimum is computed with :func:`hieropt.solvers.objectives.solve`.
        max_iter: iteration limit.
    """
    start = time.perf_counter()
    obj = _objective(instance, objective)
    F = FeasibleSet(instance)
    tm = build_time_model(instance)
    D = instance.network.n_dims
    first = place(instance, np.ones(D), obj, F, tm)
    if first.bw is None:
        why = first.message.removeprefix("cannot be made feasible: ")
        return _result(instance, "gradient", "gradient descent", None, _cannot(f"its start, the equal split: {why}"),
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
            within = cap is None or descend == "performance" or tm.time_ns(trial) <= cap  # keep the time cap
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
        placed = _Placed(B, "", "projected", 0.0, 0.0)
        if instance.max_iteration_time_ns is not None and tm.time_ns(B) > instance.max_iteration_time_ns:
            placed = _cannot(f"its result misses the time target {instance.max_iteration_time_ns:,.1f} ns")
    gap = None
    if placed.bw is not None:
        if optimum is None:
            from ..solvers.objectives import solve

            optimum = solve(instance, objective=obj).objective_value
        gap = relative_gap(objective_value(instance, tm, placed.bw, obj), optimum)
        placed = _Placed(placed.bw, f"{n} iterations from the equal split, stopped: {stop}; every step projected "
                         f"onto the constraints; final gap to the exact optimum {gap:.3%}", placed.placement, 0.0, 0.0)
    return _result(instance, "gradient", "gradient descent", None, placed, start, iterations=n, gap=gap,
                   extra={"stop": stop, "projections": projections, "final_step_gbps": step})


def _bottleneck_ns(instance: Instance, tm: TimeModel, B: np.ndarray) -> np.ndarray:
    """Collective time during which each dimension is the slowest (Breakdown.bottleneck_ns_per_dim; from the
    aggregated terms in LIBRA's form, from the evaluator otherwise)."""
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


def water_filling(instance: Instance, objective: str | None = None, steps: int = WATER_STEPS) -> HeuristicResult:
    """Greedy water-filling: ``steps`` equal increments, each to the current bottleneck dimension (the one that is
    the slowest for the most collective time); every loaded dimension starts with one increment."""
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
    return _result(instance, "waterfill", "water-filling", B, place(instance, B, objective, tm=tm), start,
                   iterations=steps)


def ratio_problems(instance: Instance) -> list[tuple[str, str]]:
    """(name, problem) for every invalid entry of ``instance.heuristic_ratios`` (wrong length, negative, non-finite,
    all zero)."""
    out = []
    D = instance.network.n_dims
    for name, ratios in (instance.heuristic_ratios or {}).items():
        r = list(ratios)
        if len(r) != D:
            out.append((name, f"{len(r)} ratios for {D} dimensions"))
        elif not all(math.isfinite(x) and x >= 0 for x in r):
            out.append((name, f"ratios {r} must be finite numbers >= 0"))
        elif not any(x > 0 for x in r):
            out.append((name, "every ratio is 0"))
    return out


def vendor_ratios(instance: Instance, objective: str | None = None) -> list[HeuristicResult]:
    """One result per named ratio vector of ``instance.heuristic_ratios`` (empty when the instance gives none)."""
    bad = dict(ratio_problems(instance))
    out = []
    for name, ratios in (instance.heuristic_ratios or {}).items():
        start = time.perf_counter()
        key, label = f"vendor:{name}", f"ratios {name}"
        if name in bad:
            out.append(_result(instance, key, label, None, _cannot(f"invalid ratios: {bad[name]}"), start))
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


def run_all(instance: Instance, objective: str | None = None, optimum: float | None = None) -> list[HeuristicResult]:
    """Every built-in heuristic, then the instance's vendor ratios (``optimum``: see :func:`gradient_descent`)."""
    out = []
    for name, fn in HEURISTICS.items():
        out.append(fn(instance, objective, optimum=optimum) if name == "gradient" else fn(instance, objective))
    return out + vendor_ratios(instance, objective)
