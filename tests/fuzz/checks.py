"""Independent checks of hieropt's certificates: feasible points sampled in the design polytope,
heuristic splits, and the network cost recomputed from the cost classes. Nothing here uses hieropt's
formulation or solvers; times come from :func:`hieropt.evaluate` (the layer-by-layer evaluator).

A certificate says: the optimum lies in [bound, value] and the returned point is feasible with that
value. It is **beaten** when a feasible point does better than the bound (beyond the tolerances
below), or when the returned point breaks a constraint, the time target or the budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import hieropt
from hieropt.spec import Instance

BEAT_TOL = 1e-9
"""A feasible point beats a proven lower bound L when its value is below L (1 - BEAT_TOL). HiGHS's
1e-9 feasibility tolerances can move an LP bound by about that much; anything larger is a false
bound."""
FEAS_TOL = 1e-9
"""Relative slack on the design rows, bounds, time targets and budgets when checking a returned
point."""


def unit_costs(instance: Instance) -> np.ndarray:
    """$ per GB/s of per-NPU bandwidth of each dimension for the whole cluster (LIBRA's counting: N
    x (link, plus switch and NIC on Switch dimensions)), straight from the cost classes."""
    out = []
    for dim in instance.network.dims:
        cc = instance.cost.classes[dim.cost_class]
        price = cc.link_usd_per_gbps
        if dim.block == "Switch":
            price += (cc.switch_usd_per_gbps or 0.0) + (cc.nic_usd_per_gbps or 0.0)
        out.append(price * math.prod(d.npus for d in instance.network.dims))
    return np.array(out)


def time_ns(instance: Instance, bw: np.ndarray) -> float:
    """T(bw) by the evaluator; inf when a dimension that carries traffic has no bandwidth."""
    try:
        return float(hieropt.evaluate(instance, np.asarray(bw, dtype=float)).iteration_time_ns)
    except hieropt.InputError:
        return math.inf


class Polytope:
    """{B : design rows, bounds, B >= 0} plus optional extra rows ``a.B <= b``, as ``E B = e`` and
    ``G B <= g``.

    Sampling is hit-and-run from a feasible point: random directions in the null space of E, uniform
    (interior) or end (boundary) points of the feasible segment.
    """

    def __init__(self, instance: Instance, extra: tuple[tuple[np.ndarray, float], ...] = ()):
        D = instance.network.n_dims
        eq, ge = [], []
        for c in instance.constraints:
            a = np.array(c.coefficients, dtype=float)
            if c.sense == "==":
                eq.append((a, c.rhs))
            elif c.sense == "<=":
                ge.append((a, c.rhs))
            else:
                ge.append((-a, -c.rhs))
        for d, b in enumerate(instance.bounds_or_default):
            e = np.zeros(D)
            e[d] = 1.0
            ge.append((-e, -b.lower_gbps))
            if b.upper_gbps is not None:
                ge.append((e, b.upper_gbps))
        for a, rhs in extra:
            ge.append((np.asarray(a, dtype=float), float(rhs)))
        self.D = D
        self.E = np.array([a for a, _ in eq]).reshape(-1, D)
        self.e = np.array([r for _, r in eq])
        self.G = np.array([a for a, _ in ge]).reshape(-1, D)
        self.g = np.array([r for _, r in ge])
        if self.E.shape[0]:
            _, s, vt = np.linalg.svd(self.E)
            rank = int((s > 1e-12 * s.max()).sum())
            self.null = vt[rank:].T  # (D, D - rank)
        else:
            self.null = np.eye(D)

    def relative_violation(self, x: np.ndarray) -> float:
        """Largest violation of a row at ``x`` relative to the row's size, max(|rhs|, sum |a_d
        x_d|): the check of a returned point (stricter than an absolute tolerance when bandwidths
        are tiny)."""
        x = np.asarray(x, dtype=float)
        worst = 0.0
        for A, b, eq in ((self.E, self.e, True), (self.G, self.g, False)):
            if not A.shape[0]:
                continue
            r = A @ x - b
            size = np.maximum(np.abs(b), np.abs(A) @ np.abs(x))
            size = np.where(size > 0, size, 1e-300)
            v = np.abs(r) / size if eq else np.maximum(r, 0.0) / size
            worst = max(worst, float(v.max()))
        return worst

    def project(self, x: np.ndarray) -> np.ndarray:
        """``x`` moved onto the equality rows (least-squares correction)."""
        x = np.asarray(x, dtype=float)
        if not self.E.shape[0]:
            return x
        corr, *_ = np.linalg.lstsq(self.E, self.E @ x - self.e, rcond=None)
        return x - corr

    def violation(self, x: np.ndarray) -> float:
        """Alias of :meth:`relative_violation` (0 when feasible)."""
        return self.relative_violation(x)

    def segment(self, x: np.ndarray, d: np.ndarray) -> tuple[float, float]:
        """[lo, hi] with x + t d feasible for the inequalities (x feasible)."""
        lo, hi = -math.inf, math.inf
        gd = self.G @ d
        slack = self.g - self.G @ x
        for a, s in zip(gd, slack, strict=True):
            if a > 1e-15:
                hi = min(hi, max(s, 0.0) / a)
            elif a < -1e-15:
                lo = max(lo, -max(s, 0.0) / a)
        return lo, hi

    def direction(self, rng: np.random.Generator) -> np.ndarray | None:
        """A random unit direction in the null space of the equality rows (None when the rows fix
        the point)."""
        if self.null.shape[1] == 0:
            return None
        d = self.null @ rng.standard_normal(self.null.shape[1])
        n = np.linalg.norm(d)
        return d / n if n > 0 else None

    def samples(self, start: np.ndarray, rng: np.random.Generator, n: int,
                boundary: float = 0.5) -> list[np.ndarray]:
        """``n`` points by hit-and-run from ``start``; a share ``boundary`` of them on the
        boundary."""
        x = np.array(start, dtype=float)
        out = []
        for _ in range(n):
            d = self.direction(rng)
            if d is None:
                break
            lo, hi = self.segment(x, d)
            if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
                continue
            if rng.random() < boundary:
                y = x + (lo if rng.random() < 0.5 else hi) * d
                out.append(np.maximum(y, 0.0))
                x = x + rng.uniform(lo, hi) * d  # keep walking from an interior point
            else:
                x = x + rng.uniform(lo, hi) * d
                out.append(np.maximum(x, 0.0))
        return out

    def ray(self, r: np.ndarray, largest: bool = True) -> np.ndarray | None:
        """The point s r (s >= 0) that is feasible with the largest (or smallest) s, or None."""
        lo, hi = 0.0, math.inf
        r = np.asarray(r, dtype=float)
        for a, b in zip(self.E, self.e, strict=True):
            ar = float(a @ r)
            if abs(ar) < 1e-15:
                if abs(b) > 1e-12 * max(1.0, abs(b)):
                    return None
                continue
            s = b / ar
            lo, hi = max(lo, s), min(hi, s)
        for a, b in zip(self.G, self.g, strict=True):
            ar = float(a @ r)
            if ar > 1e-15:
                hi = min(hi, b / ar)
            elif ar < -1e-15:
                lo = max(lo, b / ar)
            elif b < -1e-12 * max(1.0, abs(b)):
                return None
        if hi < lo * (1 - 1e-12) or not math.isfinite(hi if largest else lo):
            return None
        x = (hi if largest else lo) * r
        return x if self.violation(x) <= 1e-9 else None


def descend(
    f: Callable[[np.ndarray], float],
    poly: Polytope,
    x: np.ndarray,
    rng: np.random.Generator,
    rounds: int = 12,
    evals: int = 24,
) -> tuple[np.ndarray, float]:
    """Random-direction line search (golden section on each feasible segment) from a feasible ``x``:
    a local improvement that never leaves the polytope. Returns the best point and its value."""
    best, fbest = np.array(x, dtype=float), f(x)
    phi = (math.sqrt(5) - 1) / 2
    for _ in range(rounds):
        d = poly.direction(rng)
        if d is None:
            break
        lo, hi = poly.segment(best, d)
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo <= 0:
            continue
        a, b = lo, hi
        c, e = b - phi * (b - a), a + phi * (b - a)
        fc, fe = f(np.maximum(best + c * d, 0)), f(np.maximum(best + e * d, 0))
        for _ in range(evals):
            if fc < fe:
                b, e, fe = e, c, fc
                c = b - phi * (b - a)
                fc = f(np.maximum(best + c * d, 0))
            else:
                a, c, fc = c, e, fe
                e = a + phi * (b - a)
                fe = f(np.maximum(best + e * d, 0))
        t = c if fc < fe else e
        y = np.maximum(best + t * d, 0)
        fy = f(y)
        if fy < fbest and poly.violation(y) <= 1e-10:
            best, fbest = y, fy
    return best, fbest


def traffic_bytes(instance: Instance) -> np.ndarray:
    """Bytes each NPU sends per dimension in one iteration (the evaluator's breakdown at an all-ones
    vector)."""
    bd = hieropt.evaluate(instance, np.ones(instance.network.n_dims))
    return np.asarray(bd.bytes_per_dim, dtype=float)


def candidate_points(
    instance: Instance,
    poly: Polytope,
    x0: np.ndarray,
    rng: np.random.Generator,
    n: int,
    around: np.ndarray | None = None,
) -> list[tuple[str, np.ndarray]]:
    """Feasible points to hold a certificate against: x0, the equal split and the
    traffic-proportional split (each scaled to the largest feasible multiple, and the smallest),
    hit-and-run samples from x0 and from ``around`` (the solver's point, pulled 1 % towards x0 so
    that it is strictly feasible)."""
    out: list[tuple[str, np.ndarray]] = [("x0", np.asarray(x0, dtype=float))]
    D = instance.network.n_dims
    rays = [("equal split", np.ones(D))]
    tb = traffic_bytes(instance)
    if (tb > 0).any():
        rays.append(("traffic-proportional", np.where(tb > 0, tb, tb[tb > 0].min() * 1e-3)))
    for name, r in rays:
        for largest in (True, False):
            x = poly.ray(r, largest)
            if x is not None and np.all(x > 0):
                out.append((f"{name} ({'largest' if largest else 'smallest'} feasible scale)", x))
    out += [("sample", x) for x in poly.samples(x0, rng, n)]
    if around is not None:
        start = poly.project(
            0.99 * np.asarray(around, dtype=float) + 0.01 * np.asarray(x0, dtype=float)
        )
        if poly.violation(start) <= 1e-10:
            out += [
                ("sample near the optimum", x)
                for x in poly.samples(start, rng, n // 2, boundary=0.8)
            ]
    return [(name, x) for name, x in out if poly.violation(x) <= 1e-10]
