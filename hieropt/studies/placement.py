"""Placement of a heuristic's direction r >= 0 into the feasible set F (design constraints, bounds,
budget) for an objective: along its ratios when the ray meets F, else the Euclidean projection onto
F (a convex QP on HiGHS). The rules are in the :mod:`hieropt.studies.heuristics` docstring."""

from __future__ import annotations

import math
from dataclasses import dataclass

import highspy
import numpy as np

from ..errors import InputError
from ..model.cost import unit_cost_usd_per_gbps
from ..model.terms import TimeModel
from ..model.timing import build_time_model
from ..spec import Instance

OBJECTIVES_PLACED = ("performance", "performance_per_cost", "min_cost")


ROW_TOL = 1e-9
"""Relative slack on a row or bound when sliding along a direction (verify accepts 1e-6)."""


_INF = highspy.kHighsInf

QP_ITERATIONS = 10_000
"""Iteration cap of every projection QP. HiGHS's QP solver can cycle on a degenerate projection
(HiGHS 1.16: y = (100.0000078, 0, 0) onto {sum(B) = 100, B0 >= 5, B >= 0} never returned, so
``hieropt compare`` hung in the gradient-descent heuristic); a capped run's point is used when it
satisfies every row and bound (see :meth:`FeasibleSet.contains`), else the projection fails like an
empty set."""

_CAPPED = (highspy.HighsModelStatus.kIterationLimit, highspy.HighsModelStatus.kTimeLimit)


def placed_objective(instance: Instance, objective: str | None) -> str:
    """``objective`` or the instance's; InputError unless it is one of :data:`OBJECTIVES_PLACED`."""
    obj = objective or instance.objective
    if obj not in OBJECTIVES_PLACED:
        known = obj in ("min_run_cost", "min_max_regret")
        raise InputError(
            "objective",
            None,
            f"compare does not place heuristics for objective {obj!r}"
            if known
            else f"unknown objective {obj!r}",
            f"use one of {', '.join(OBJECTIVES_PLACED)}",
        )
    if obj == "min_cost" and instance.max_iteration_time_ns is None:
        raise InputError(
            "max_iteration_time_ns",
            None,
            "missing for objective min_cost",
            "give the iteration-time target (--max-time 1.3s, or max_iteration_time_ns in ns)",
        )
    return obj


def relative_gap(value: float, optimum: float) -> float:
    """(value - optimum) / optimum; 0 when both are 0 (nothing to optimise), inf when only the
    optimum is."""
    if optimum == 0:
        return 0.0 if value == 0 else math.inf
    return (value - optimum) / optimum


def objective_value(instance: Instance, tm: TimeModel, bw: np.ndarray, objective: str) -> float:
    """The objective at ``bw``: ns (performance), $ (min_cost) or ns * $ (performance_per_cost)."""
    t = tm.time_ns(bw)
    c = float(instance.network.npus_total * unit_cost_usd_per_gbps(instance) @ bw)
    return {"performance": t, "min_cost": c, "performance_per_cost": t * c}[objective]


# --------------------------------------------------------------------------------- the feasible set
class FeasibleSet:
    """F = {B : design constraints, bounds, cost <= budget} as rows ``lo <= A B <= hi`` and bounds
    ``lb <= B <= ub``, with Euclidean projections onto it (convex QPs in HiGHS, built on first use
    and re-solved in place)."""

    def __init__(self, instance: Instance):
        D = instance.network.n_dims
        rows, lo, hi, text = [], [], [], []
        for c in instance.constraints:
            a = np.asarray(c.coefficients, dtype=float)
            rows.append(a)
            lo.append(c.rhs if c.sense in (">=", "==") else -_INF)
            hi.append(c.rhs if c.sense in ("<=", "==") else _INF)
            text.append(f"'{c.text}'")
        # $ per GB/s, per dimension
        self.unit_usd = instance.network.npus_total * unit_cost_usd_per_gbps(instance)
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
        self.ub = np.array(
            [x.upper_gbps if x.upper_gbps is not None else _INF for x in b], dtype=float
        )
        self.D = D
        self._proj: highspy.Highs | None = None

    def _highs(
        self, n_cols: int, lb: np.ndarray, ub: np.ndarray, a_cols: np.ndarray
    ) -> highspy.Highs:
        from ..solvers.highs import quiet_stdout

        with quiet_stdout():
            h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        for name, v in (
            ("primal_feasibility_tolerance", 1e-9),
            ("dual_feasibility_tolerance", 1e-9),
            ("qp_iteration_limit", QP_ITERATIONS),
            ("time_limit", 60.0),
        ):
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
        x = np.clip(np.asarray(h.getSolution().col_value, dtype=float), self.lb, self.ub)
        status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal and not (
            status in _CAPPED and self.contains(x)
        ):
            return None
        return x

    def nearest_to_ray(self, r: np.ndarray) -> tuple[np.ndarray, float] | None:
        """(B, s) minimising ||B - s r||^2 over B in F, s >= 0 (r with unit norm); None when F is
        empty."""
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
        h.passHessian(
            D + 1,
            len(index),
            highspy.HessianFormat.kTriangular,
            np.array(start, dtype=np.int32),
            np.array(index, dtype=np.int32),
            np.array(value, dtype=float),
        )
        h.run()
        z = np.asarray(h.getSolution().col_value, dtype=float)
        x = np.clip(z[:D], self.lb, self.ub)
        status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal and not (
            status in _CAPPED and self.contains(x)
        ):
            return None
        return x, max(float(z[D]), 0.0)

    def contains(self, B: np.ndarray) -> bool:
        """Whether ``B`` satisfies every row and bound within :data:`ROW_TOL`, relative to the row's
        size (max of |rhs| and sum_d |a_d B_d|) and to the bound (or 1e-6 of the largest B): the
        same at every bandwidth unit."""
        v = self.A @ B
        rhs = np.abs(np.where(np.isfinite(self.hi), self.hi, self.lo))
        tol_r = ROW_TOL * np.maximum(rhs, np.abs(self.A) @ np.abs(B))
        tol_b = ROW_TOL * np.maximum(np.abs(self.lb), 1e-6 * float(np.max(np.abs(B), initial=0.0)))
        return bool(
            np.all(v >= self.lo - tol_r)
            and np.all(v <= self.hi + tol_r)
            and np.all(B >= self.lb - tol_b)
            and np.all(B <= self.ub * (1 + ROW_TOL))
        )

    def slide(
        self, B: np.ndarray, r: np.ndarray, t_min: float = -_INF
    ) -> tuple[float, float] | None:
        """The interval of t with B + t r in F and t >= t_min, None when empty. Exact first; if
        round-off empties it (two equalities that pin t to values a few ulps apart), each row and
        bound gets a :data:`ROW_TOL` slack and a pinned interval collapses to its midpoint."""
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

    def _slide(
        self, B: np.ndarray, r: np.ndarray, t_min: float, rel_tol: float
    ) -> tuple[float, float] | None:
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
            if not clip(
                float(a[i]), float(v[i]), float(self.lo[i]), float(self.hi[i]), abs(float(rhs))
            ):
                return None
        for d in range(self.D):
            if not clip(
                float(r[d]),
                float(B[d]),
                float(self.lb[d]),
                float(self.ub[d]),
                abs(float(self.lb[d])),
            ):
                return None
        return (lo, hi) if lo <= hi else None


# ------------------------------------------------------------------------------------------ placing
@dataclass(frozen=True)
class Placement:
    """A placed vector (GB/s per NPU, or None when it cannot be made feasible), the message saying
    how, the placement kind and the projection distance."""

    bw: np.ndarray | None
    message: str
    placement: str = ""
    distance: float = 0.0
    scale: float = 0.0


def cannot_place(reason: str) -> Placement:
    """The :class:`Placement` of a heuristic that cannot be made feasible, for ``reason``."""
    return Placement(None, f"cannot be made feasible: {reason}")


def _first_time_ok(
    tm: TimeModel, B: np.ndarray, r: np.ndarray, lo: float, hi: float, target: float
) -> float | None:
    """Smallest t in [lo, hi] with T(B + t r) <= target (T is non-increasing in t as r >= 0); None
    if none."""
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

    # the product grows once compute * cost dominates: double until it does
    if not math.isfinite(hi):
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
          feasible_set: FeasibleSet | None = None, tm: TimeModel | None = None) -> Placement:
    """Turn a direction (ratios, >= 0) into a feasible bandwidth vector (module docstring: along its
    ratios when the ray meets F, else the Euclidean projection of the ray, then the objective's
    point on the segment)."""
    obj = placed_objective(instance, objective)
    F = feasible_set or FeasibleSet(instance)
    tm = tm or build_time_model(instance)
    r = np.asarray(direction, dtype=float)
    if r.shape != (F.D,) or not np.all(np.isfinite(r)) or np.any(r < 0):
        return cannot_place(f"its direction {r.tolist()} is not {F.D} finite numbers >= 0")
    norm = float(np.linalg.norm(r))
    if norm == 0:
        return cannot_place("its direction is zero on every dimension")
    r = r / norm
    zero = np.zeros(F.D)
    ray = F.slide(zero, r, t_min=0.0)
    if ray is not None:
        B, t_min, placement, dist = zero, 0.0, "ratios", 0.0
        interval = ray
    else:
        near = F.nearest_to_ray(r)
        if near is None:
            return cannot_place(
                "the design constraints, bounds and budget admit no bandwidth vector"
            )
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
            return cannot_place(
                "no point on its ratios within the constraints meets the time target "
                f"{target:,.1f} ns "
                f"(best {best:,.1f} ns)"
            )
        lo = t_ok
    if obj == "performance":
        if not math.isfinite(hi):
            return cannot_place(
                "nothing limits the bandwidth along its ratios (add a budget or a "
                "constraint such as "
                "'sum(bw) <= 500')"
            )
        t = hi
    elif obj == "min_cost":
        t = lo  # cost grows with t: the cheapest point that meets the target
    elif placement == "ratios":
        t = lo  # T * cost = compute * cost(s r) + comm(r) * cost(r): increasing in s
        if t <= 0:
            return cannot_place(
                "no constraint keeps bandwidth away from zero along its ratios, so time x "
                "cost keeps "
                "falling as it shrinks (add a floor such as 'sum(bw) == 500')"
            )
    else:
        t = _min_product(tm, B, r, lo, hi, F.unit_usd)
    bw = np.clip(B + t * r, F.lb, F.ub) + 0.0
    scale = t if placement == "ratios" else t - t_min
    loaded = tm.carries_traffic
    starved = np.flatnonzero(loaded & (bw <= 0))
    if starved.size:
        d = int(starved[0])
        return cannot_place(
            f"the constraints leave dimension {d}, which carries traffic, at 0 GB/s on this "
            "heuristic's ratios (infinite iteration time)"
        )
    if placement == "ratios":
        message = "on its ratios, scaled to " + (
            "use the whole allowance"
            if obj == "performance"
            else "the cheapest point meeting the time target"
            if obj == "min_cost"
            else "the smallest allowed size (best time x cost on the ray)"
        )
    else:
        message = (f"projected onto the constraints: moved {dist:,.3f} GB/s from its ratios "
                   f"({dist / max(float(np.linalg.norm(bw)), 1e-300):.1%} of the vector)")
    return Placement(bw, message, placement, dist, float(scale))
