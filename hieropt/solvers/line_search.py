"""The min-cost candidates' line search (:func:`segment_point`: the point of [meets, B] nearest B
whose value meets the target, the value convex along the segment), shared by the min-cost loop,
the perf-per-cost candidates under a target and the cheapest portfolio within a regret; and the
moves of a design into the rows (:func:`within_rows`, :func:`onto_rows`) and onto a budget
(:func:`onto_budget`)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np

from ..errors import InputError
from ..model.timing import TimeModel, evaluate
from ..spec import Instance
from .linalg import EPS, exact_dot

__all__ = ["meet_target", "segment_point", "meets_rows", "within_rows", "within_budget",
           "onto_budget", "onto_rows", "row_leak_usd", "TARGET_MARGIN", "ROW_TOL", "LEAK_ULPS"]

LINE_GRID = np.arange(1, 8) / 8.0
LINE_STEPS = 2.0 ** -np.arange(1, 53, 3)
"""Points of each batched round of :func:`segment_point`: the chord's root c, c + (hi - c) 2^-(1 +
3k), and a uniform grid of 7 points of the bracket (:data:`LINE_GRID`)."""
SCALAR_STEPS = 3
"""Single evaluations before the batched rounds, at the root of the parabola through the bracket's
ends and the point last dropped from it."""
TARGET_MARGIN = 1e-12
"""Relative margin below a time target that min-cost candidates keep (the evaluators' round-off)."""
ULP_STEPS = 64
"""Before the margin, :func:`meet_target` tries the point this many ulps inside the target."""
ROW_TOL = 1e-9
"""Relative violation of a design row or bound a candidate may keep (HiGHS's tolerance; the
evaluator allows 1e-6)."""


def within_rows(instance: Instance, bw: np.ndarray, meets: np.ndarray) -> np.ndarray:
    """The point of [meets, bw] ((D,) GB/s) nearest ``bw`` that meets every row and bound to
    :data:`ROW_TOL`, when ``meets`` does (else ``bw``): the rows are linear along the segment, so
    the largest feasible step is the smallest crossing (exact, no search)."""
    # (no feasible end to move towards: as it is)
    if meets_rows(instance, bw) or not meets_rows(instance, meets):
        return bw
    dm = instance.design_matrix
    D = bw.size
    A = np.vstack([dm.A, np.eye(D)])
    lower, upper = np.concatenate([dm.lower, dm.bw_lower]), np.concatenate([dm.upper, dm.bw_upper])
    r0, r1 = A @ meets, A @ bw
    dr = r1 - r0
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = np.where(r1 > upper, (upper - r0) / dr,
                         np.where(r1 < lower, (lower - r0) / dr, np.inf))
    s = float(np.clip(np.nan_to_num(cross, nan=0.0).min(initial=1.0), 0.0, 1.0))
    return meets + s * (bw - meets)


def meets_rows(instance: Instance, bw: np.ndarray) -> bool:
    """Whether ``bw`` ((D,) GB/s) meets every design row and bound of ``instance`` to
    :data:`ROW_TOL` relative."""
    dm = instance.design_matrix
    if dm.max_violation(bw) > ROW_TOL:
        return False
    # (Python floats over the few dimensions; a NaN meets no bound)
    below, above = 1 - ROW_TOL, 1 + ROW_TOL
    return all(b >= lo * below and b <= hi * above
               for b, lo, hi in zip(bw.tolist(), dm.bw_lower_list, dm.bw_upper_list, strict=True))


def within_budget(instance: Instance, bw: np.ndarray, budget_usd: float | None,
                  unit_cost_usd_per_gbps: np.ndarray,
                  anchor: Callable[[], np.ndarray | None] | None = None) -> np.ndarray | None:
    """An LP's ``bw`` ((D,) GB/s) as a candidate under ``budget_usd`` ($; None: none) that holds the
    rows to round-off, or None: clipped into its bounds, projected onto the rows (:func:`onto_rows`)
    when its misses are worth more than :data:`LEAK_ULPS` ulps of its cost (:func:`row_leak_usd`),
    then, when over budget by at most 1e-6 relative, moved onto the budget towards ``anchor()`` (the
    cheapest network) or the lower bounds (:func:`onto_budget`). ``unit_cost_usd_per_gbps``: (D,) $
    per GB/s."""
    if not meets_rows(instance, bw):
        return None
    dm = instance.design_matrix
    bw = np.minimum(np.maximum(bw, dm.bw_lower), dm.bw_upper)
    p = unit_cost_usd_per_gbps
    if _leaks(instance, bw, p):
        bw = onto_rows(instance, bw)
        if bw is None:
            return None
    if budget_usd is None:
        return bw
    cost = float(np.dot(p, bw))
    if cost <= budget_usd:
        return bw
    if cost > budget_usd * (1 + 1e-6):
        return None
    cheapest = anchor() if anchor is not None else None
    point = onto_budget(p, cheapest, bw, budget_usd) if cheapest is not None else None
    if point is None:
        point = onto_budget(p, dm.bw_lower, bw, budget_usd)
    if point is None or not meets_rows(instance, point) or _leaks(instance, point, p):
        return None
    return point


LEAK_ULPS = 64
"""Ulps of a candidate's cost its row misses may be worth (a float design holds its rows to a few, a
row held to HiGHS's tolerance frees thousands)."""


def _leaks(instance: Instance, bw: np.ndarray, price_usd_per_gbps: np.ndarray) -> bool:
    """Whether the row misses of ``bw`` are worth more than :data:`LEAK_ULPS` ulps of its cost."""
    leak = row_leak_usd(instance, bw, price_usd_per_gbps)
    return leak > LEAK_ULPS * EPS * abs(float(np.dot(price_usd_per_gbps, bw)))


def row_leak_usd(instance: Instance, bw: np.ndarray, price_usd_per_gbps: np.ndarray) -> float:
    """An upper estimate of the cost ($) ``bw`` ((D,) GB/s) saves by missing rows: each row's miss
    times the dearest price per unit of that row (``price_usd_per_gbps``: (D,) $ per GB/s); 0 when
    all hold."""
    dm = instance.design_matrix
    if not dm.A.size:
        return 0.0
    lhs = dm.A @ bw
    miss = np.abs(lhs - np.clip(lhs, dm.lower, dm.upper))
    return float(miss @ (dm.units_per_coefficient * price_usd_per_gbps).max(axis=1))


def onto_rows(instance: Instance, bw: np.ndarray) -> np.ndarray | None:
    """``bw`` ((D,) GB/s, within its bounds) moved onto the rows it misses or holds to 1e-9 of their
    size, the dimensions strictly inside their bounds moving (least squares); None when a row or
    bound is then missed by more than :data:`ROW_TOL`."""
    dm = instance.design_matrix
    lhs = dm.A @ bw
    size = np.maximum(np.abs(dm.A * bw).sum(axis=1), np.abs(dm.rhs))
    near = 1e-9 * np.maximum(size, 1e-300)
    target = np.where(lhs <= dm.lower + near, dm.lower,
                      np.where(lhs >= dm.upper - near, dm.upper, lhs))
    rows = target != lhs
    free = (bw > dm.bw_lower) & (bw < dm.bw_upper)
    if not rows.any():
        return bw
    if not free.any():
        return None
    x = bw.copy()
    x[free] += np.linalg.lstsq(dm.A[rows][:, free], (target - lhs)[rows], rcond=None)[0]
    x = np.minimum(np.maximum(x, dm.bw_lower), dm.bw_upper)
    return x if meets_rows(instance, x) else None


def onto_budget(price_usd_per_gbps: np.ndarray, anchor: np.ndarray, x: np.ndarray,
                budget_usd: float, fill: bool = False) -> np.ndarray | None:
    """The point anchor + f (x - anchor) ((D,) GB/s) with the largest f <= 1 whose cost (``price``:
    (D,) $ per GB/s) is within ``budget_usd`` ($), checked exactly and as the float dot product and
    sum give it; with ``fill``, moved past ``x`` (f <= 1e3) to spend the budget. None when
    ``anchor`` is over budget, the cost does not grow towards ``x`` where needed, or an entry is not
    finite."""
    p, budget = price_usd_per_gbps, Fraction(budget_usd)
    if not (np.isfinite(anchor).all() and np.isfinite(x).all()):
        return None

    def over(point: np.ndarray) -> Fraction:
        return max(exact_dot(p, point) - budget, Fraction(float(np.dot(p, point)) - budget_usd),
                   Fraction(float((p * point).sum()) - budget_usd))

    if not fill and over(x) <= 0:
        return x
    base, cost = exact_dot(p, anchor), exact_dot(p, x)
    if base > budget or not cost > base:
        return None
    f = min(float((budget - base) / (cost - base)), 1e3)
    for _ in range(8):
        point = anchor + f * (x - anchor)
        miss = over(point)
        if miss <= 0:
            return point
        f -= max(2 * float(miss / (cost - base)), 1e-12 * f)
    return None


def meet_target(instance: Instance, tm: TimeModel, bw: np.ndarray, meets: np.ndarray,
                t_meets: float, target_ns: float, tight: bool = True,
                sigma_tol: float = 0.0) -> np.ndarray:
    """The point of [meets, bw] nearest ``bw`` with T <= ``target_ns`` (ns) after
    :func:`within_rows` (``meets``: (D,) GB/s meeting the rows and target, time ``t_meets``;
    ``bw``: (D,) GB/s): the point :data:`ULP_STEPS` ulps inside the target when both the time
    model and :func:`hieropt.model.timing.evaluate` agree (only with ``tight``), else the point
    :data:`TARGET_MARGIN` below it when ``meets`` has that margin. ``sigma_tol``: as
    :func:`segment_point`."""
    bw = within_rows(instance, bw, meets)
    target = target_ns
    if t_meets <= target_ns * (1 - TARGET_MARGIN):
        target_ns *= 1 - TARGET_MARGIN
    t_bw = tm.time_ns(bw)
    if t_bw <= target_ns:
        return bw
    # a few ulps inside the target first (the evaluators sum in other orders), then the margin
    if tight and target_ns < target:
        goal = target * (1 - ULP_STEPS * EPS)
        point = segment_point(tm.time_ns, tm.times_ns, bw, meets, t_bw, t_meets, goal, sigma_tol)
        if tm.time_ns(point) <= goal and _evaluated_within(instance, point, target):
            return point
    return segment_point(tm.time_ns, tm.times_ns, bw, meets, t_bw, t_meets, target_ns, sigma_tol)


def _evaluated_within(instance: Instance, bw: np.ndarray, target_ns: float) -> bool:
    """Whether the independent evaluator finds T(bw) <= ``target_ns`` (False on an overflow)."""
    try:
        return evaluate(instance, bw).iteration_time_ns <= target_ns
    except InputError:  # (an overflow the time model did not see)
        return False


def segment_point(value: Callable[[np.ndarray], float], values: Callable[[np.ndarray], np.ndarray],
                  bw: np.ndarray, meets: np.ndarray, v_bw: float, v_meets: float, target: float,
                  sigma_tol: float = 0.0) -> np.ndarray:
    """The point of [meets, bw] ((D,) GB/s) nearest ``bw`` where ``value`` (convex along the
    segment; ``values`` of an (S, D) batch) is <= ``target``, given v_bw = value(bw) (may be inf)
    and v_meets <= target: to round-off, or with ``sigma_tol`` > 0 within that fraction of the
    segment."""
    if v_bw <= target:
        return bw
    # walked from bw, point(sigma) = bw + sigma (meets - bw), so that a point near bw keeps its
    # digits however far away meets lies
    chord = (v_bw - target) / (v_bw - v_meets) if np.isfinite(v_bw) else 1.0
    step = meets - bw
    # T(a) > target >= T(b); the feasible part is [sigma*, 1]
    a, t_a, b, t_b = 0.0, v_bw, 1.0, v_meets
    dropped = None  # (the point last dropped from the bracket: the parabola's third)
    # (a segment flat to round-off gets a batched round, whose grid is nearer bw than the chord)
    scalar = SCALAR_STEPS if v_bw - v_meets > 16 * EPS * target else 0
    for i in range(scalar + 20):
        # the chord's root: feasible (the chord lies above T), near sigma* on a smooth piece
        c = a + (b - a) * (t_a - target) / (t_a - t_b) if np.isfinite(t_a) else b
        s = _parabola_root((a, t_a), (b, t_b), dropped, target) if dropped else c
        if i < scalar and np.isfinite(t_a) and a < s < b:  # one evaluation of T
            t = value(bw + s * step)
            if t <= target:
                dropped, b, t_b = (b, t_b), s, t
            else:
                dropped, a, t_a = (a, t_a), s, t
        else:  # a batched round
            c = min(max(c, a), b)
            sig = np.concatenate(([c], c - (c - a) * LINE_STEPS, a + (b - a) * LINE_GRID))
            # (repeated points are harmless: the order is what counts)
            sig = np.sort(sig[(sig > a) & (sig <= b)])
            t = values(bw + sig[:, None] * step)
            ok = t <= target
            k = int(np.argmax(ok)) if ok.any() else sig.size  # the first point within the target
            if k > 0:
                a, t_a = float(sig[k - 1]), float(t[k - 1])
            if k < sig.size:
                b, t_b = float(sig[k]), float(t[k])
        # (further points differ by round-off)
        if b - a <= max(1e-15 * b, sigma_tol) or t_a - t_b <= 16 * EPS * target:
            break
    point = bw + b * step
    if b < chord and not value(point) <= target:  # the batched sum rounded the other way
        point = bw + chord * step
    return point


def _parabola_root(lo: tuple[float, float], hi: tuple[float, float], other: tuple[float, float],
                   target_ns: float) -> float:
    """The first crossing of ``target_ns`` by the parabola through (sigma, T) ``lo``, ``hi`` and
    ``other``, else the chord's root: a guess only."""
    (a, t_a), (b, t_b), (x, t_x) = lo, hi, other
    f1 = (t_b - t_a) / (b - a)
    f2 = ((t_x - t_b) / (x - b) - f1) / (x - a)  # T ~ t_a + f1 u + f2 u (u - (b - a)), u = s - a
    slope, over = f1 - f2 * (b - a), t_a - target_ns
    disc = slope * slope - 4.0 * f2 * over
    if not (np.isfinite(disc) and disc >= 0 and slope < 0):
        return a + (b - a) * over / (t_a - t_b)
    return a + 2.0 * over / (np.sqrt(disc) - slope)  # (the smaller root, without cancellation)
