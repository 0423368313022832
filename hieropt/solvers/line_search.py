"""The min-cost candidates' line search: the point of the segment [meets, B] nearest B whose
iteration time meets the target (T is convex along the segment), on the target when the independent
evaluator agrees, else a hair inside. Used by the min-cost loop of
:class:`hieropt.solvers.cutting.TimeLP` and by the perf-per-cost candidates under a time target
(:class:`hieropt.solvers.ratio.RatioCore`): one line search for both."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..model.timing import TimeModel, evaluate
from ..spec import Instance

__all__ = ["meet_target", "meets_rows", "within_rows", "within_budget", "TARGET_MARGIN", "ROW_TOL"]

EPS = float(np.finfo(float).eps)
LINE_GRID = np.arange(1, 16) / 16.0
LINE_STEPS = 2.0 ** -np.arange(1, 53)
"""Points of each round of the line search in :func:`meet_target`, one batched evaluation of T: the
chord's root c (feasible, T being convex), c + (hi - c) 2^-i (the distance from c to the boundary to
a factor 2, however small), and a uniform grid of the bracket [lo, hi]; the chord of the new, far
smaller bracket is then closer still. A few rounds reach the 1e-15 bracket that 50 bisection steps
would, or a bracket whose two times differ by round-off only (T is evaluated to its last bits there:
a finer point would be chosen by rounding noise)."""
TARGET_MARGIN = 1e-12
"""Relative margin below a time target that min-cost candidates keep (round-off of the evaluators'
sums)."""
ULP_STEPS = 64
"""Before the margin, :func:`meet_target` tries the exact target and this many ulps (relative)
inside it."""
ROW_TOL = 1e-9
"""Relative violation of a design row (:meth:`~hieropt.spec.design.DesignMatrix.violations`) or
bound a candidate may keep (HiGHS's own tolerance); the independent evaluator allows 1e-6."""


def within_rows(instance: Instance, bw: np.ndarray, meets: np.ndarray) -> np.ndarray:
    """The point of the segment [meets, bw] nearest ``bw`` (GB/s, shape (D,)) that meets every
    design row and bound of ``instance`` to :data:`ROW_TOL`, when ``meets`` does (else ``bw``
    unchanged): the rows are linear, so along the segment each row's activity is r(s) = r(0) + s
    (r(1) - r(0)) and the largest feasible s is the smallest crossing (exact, no search).
    An LP's point can miss a row its scaling made negligible (a floor 1e-10 of the LP's bandwidth
    unit, held only to HiGHS's absolute tolerance): such a point is no upper bound until it is moved
    back inside."""
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
    """Whether ``bw`` (GB/s, shape (D,)) meets every design row
    (:meth:`~hieropt.spec.design.DesignMatrix.violations`) and bound of ``instance`` to
    :data:`ROW_TOL` relative."""
    dm = instance.design_matrix
    if dm.max_violation(bw) > ROW_TOL:
        return False
    # (Python floats over the few dimensions; a NaN meets no bound)
    below, above = 1 - ROW_TOL, 1 + ROW_TOL
    return all(b >= lo * below and b <= hi * above
               for b, lo, hi in zip(bw.tolist(), dm.bw_lower_list, dm.bw_upper_list, strict=True))


def within_budget(instance: Instance, bw: np.ndarray, budget_usd: float | None,
                  unit_cost_usd_per_gbps: np.ndarray) -> np.ndarray | None:
    """An LP's ``bw`` (GB/s, shape (D,)) as a candidate under ``budget_usd`` ($; None: no budget),
    or None.

    The candidate meets every bound exactly (``bw`` clipped into them: an LP point meets them only
    to HiGHS's tolerance) and costs at most the budget exactly. An LP point meets the budget row
    only to that tolerance too, so a point over budget by a hair (at most 1e-6 relative) is moved
    onto it by scaling its bandwidth above the lower bounds, bw' = lo + f (bw - lo) (the bounds stay
    exact; design rows move by as little). Near the cheapest network the room above it is a sliver
    of the cost, and a design 1e-10 below its floors, or 1e-10 over budget, spends room that the
    budget does not give (a time below the proven bound). A point further over budget, or one that
    misses a design row (:func:`meets_rows`; an LP point does unless its units hid a row: never
    taken on trust), is no candidate. ``unit_cost_usd_per_gbps``: (D,) the cluster's $ per GB/s of
    each dimension."""
    if not meets_rows(instance, bw):
        return None
    dm = instance.design_matrix
    bw = np.minimum(np.maximum(bw, dm.bw_lower), dm.bw_upper)
    if budget_usd is None:
        return bw
    cost = float(np.dot(unit_cost_usd_per_gbps, bw))
    if cost <= budget_usd:
        return bw
    if cost > budget_usd * (1 + 1e-6):
        return None
    floor = float(np.dot(unit_cost_usd_per_gbps, dm.bw_lower))
    if not floor < budget_usd:
        return None
    f = (budget_usd - floor) / (cost - floor)
    for _ in range(4):  # (rounding: a few ulps less until the sum is within the budget)
        scaled = dm.bw_lower + f * (bw - dm.bw_lower)
        if float(np.dot(unit_cost_usd_per_gbps, scaled)) <= budget_usd:
            # (scaled down: a floor row may then fail)
            return scaled if meets_rows(instance, scaled) else None
        f *= 1 - 4 * EPS
    return None


def meet_target(instance: Instance, tm: TimeModel, bw: np.ndarray, meets: np.ndarray,
                t_meets: float, target_ns: float) -> np.ndarray:
    """The point of the segment [meets, bw] nearest ``bw`` with T <= target (a line search; T is
    convex), after :func:`within_rows` (``bw`` moved inside the design rows first; ``meets`` meets
    them and the target).

    Args:
        instance, tm: the problem and its time model.
        bw: (D,) the LP's (or polished) design, GB/s; ``meets``: (D,) a design that meets the rows
            and the target, GB/s, with time ``t_meets`` (ns).
        target_ns: the iteration-time target, ns.

    Returns:
        (D,) GB/s. It is the point of the exact target when both evaluators (the time model and the
        independent :func:`hieropt.model.timing.evaluate`) find it within the target. Otherwise it
        is the point that keeps a margin of :data:`TARGET_MARGIN` (relative) below the target when
        ``meets`` has it, so that the evaluator, which sums in another order, also finds T <= target
        (not 1 ulp above).

    The margin is only a fallback: a move towards ``meets`` costs about margin x T / (T(bw) -
    T(meets)) of the way. For a target within 1e-6 of the fastest time, that is ~1e-6 of the cost
    difference between ``bw`` and ``meets``, and min_cost would stall at that gap (3e-8 on a fuzz
    case) with the exact optimum in hand."""
    bw = within_rows(instance, bw, meets)
    exact = target_ns
    if t_meets <= target_ns * (1 - TARGET_MARGIN):
        target_ns *= 1 - TARGET_MARGIN
    t_bw = tm.time_ns(bw)
    if t_bw <= target_ns:
        return bw
    # the exact target first, then a few ulps inside it: the evaluators sum in other orders
    if target_ns < exact:
        for goal in (exact, exact * (1 - ULP_STEPS * EPS)):
            point = bw if t_bw <= goal else _segment_point(tm, bw, meets, t_bw, t_meets, goal)
            if tm.time_ns(point) <= goal and _evaluated_within(instance, point, exact):
                return point
    return _segment_point(tm, bw, meets, t_bw, t_meets, target_ns)


def _evaluated_within(instance: Instance, bw: np.ndarray, target_ns: float) -> bool:
    """Whether the independent evaluator finds T(bw) <= ``target_ns`` (False on an overflow it
    reports)."""
    try:
        return evaluate(instance, bw).iteration_time_ns <= target_ns
    except InputError:  # (an overflow the time model did not see)
        return False


def _segment_point(tm: TimeModel, bw: np.ndarray, meets: np.ndarray, t_bw: float, t_meets: float,
                   target_ns: float) -> np.ndarray:
    """The point of [meets, bw] nearest ``bw`` whose time model T is <= ``target_ns`` (T(bw) >
    target >= T(meets))."""
    # the segment is walked from bw: point(sigma) = bw + sigma (meets - bw), so that a point near bw
    # keeps its own digits however far away meets lies (from meets, s = 1 - sigma has a spacing of
    # 1e-16 x |bw - meets|: with meets at a ceiling 1e13 above the answer, 1e-3 GB/s steps)
    # feasible by convexity
    chord = (t_bw - target_ns) / (t_bw - t_meets) if np.isfinite(t_bw) else 1.0
    step = meets - bw
    # T(a) > target >= T(b); the feasible part is [sigma*, 1]
    a, t_a, b, t_b = 0.0, t_bw, 1.0, t_meets
    for _ in range(20):
        c = a + (b - a) * (t_a - target_ns) / (t_a - t_b) if np.isfinite(t_a) else b
        # the chord's root: feasible (the chord lies above T), near sigma* on a smooth piece
        c = min(max(c, a), b)
        sig = np.concatenate(([c], c - (c - a) * LINE_STEPS, a + (b - a) * LINE_GRID))
        # (repeated points are harmless: the order is what counts)
        sig = np.sort(sig[(sig > a) & (sig <= b)])
        t = tm.times_ns(bw + sig[:, None] * step)
        ok = t <= target_ns
        k = int(np.argmax(ok)) if ok.any() else sig.size  # the first point within the target
        if k > 0:
            a, t_a = float(sig[k - 1]), float(t[k - 1])
        if k < sig.size:
            b, t_b = float(sig[k]), float(t[k])
        # (further points differ by round-off)
        if b - a <= 1e-15 * b or t_a - t_b <= 16 * EPS * target_ns:
            break
    point = bw + b * step
    if b < chord and not tm.time_ns(point) <= target_ns:  # the batched sum rounded the other way
        point = bw + chord * step
    return point
