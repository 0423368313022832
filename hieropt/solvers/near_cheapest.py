"""The fastest network within a budget a hair above the cheapest network (budget = cheapest x (1 +
1e-13 ... 1e-2)), where the cheapest network leaves a dimension that carries traffic without
bandwidth (decision record: a budget a hair above the cheapest network).

The starved dimensions get only what the slack (budget - cheapest) buys, and in the budget row
sum_d p_d B_d <= budget that slack is a difference of two numbers that agree to 1e-9 and beyond,
which no LP resolves. With the cheapest network's multipliers the budget is an exact row whose terms
are all >= 0 and whose right-hand side is the slack itself (:mod:`hieropt.solvers.reduced_budget`).
The cost-share LP of :class:`hieropt.solvers.ratio.RatioCore` holds the budget by that row alone,
with share units that follow the slack on the starved dimensions, so its Lagrangian bound holds for
every exactly feasible design (:func:`fastest_near_cheapest`); its points become designs by
completing the cheapest network (:func:`complete`). Keeping the float share row instead fails at
ties in price: the LP spends the row's tolerance, 1e-9 of the cost, on the tied split
(tests/solve/test_near_cheapest_ties.py).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np

from ..errors import NoSolutionError
from ..model.cost import cluster_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..result import Status
from ..spec import Instance
from .cost_range import CheapestVertex, cheapest_vertex
from .line_search import meets_rows, within_rows
from .outcome import OAResult
from .ratio import INF, RatioCore
from .reduced_budget import ReducedBudget, reduced_budget_row

__all__ = ["NEAR_SLACK", "ReducedBudget", "reduced_budget_row", "vertex_of", "near_budget",
           "near_cheapest", "complete", "fastest_near_cheapest"]

NEAR_SLACK = 1e-2
"""Budgets within this relative slack above the cheapest network are solved here when that network
leaves a loaded dimension without bandwidth."""
EPS = float(np.finfo(float).eps)
ROW_ROUNDING = 4
"""Round-off of the LP's budget and design rows, in units of EPS x the cheapest cost, that the bound
allows for."""


def vertex_of(instance: Instance) -> CheapestVertex:
    """The cheapest network of ``instance`` with its LP duals
    (:func:`hieropt.solvers.cost_range.cheapest_vertex`), computed once per instance (a Pareto front
    asks for every budget)."""
    return instance.memo(
        "_cheapest_vertex",
        (instance.constraints, instance.bounds, instance.network, instance.cost),
        lambda: _polished(instance, cheapest_vertex(instance)),
    )


def _polished(instance: Instance, v: CheapestVertex) -> CheapestVertex:
    """``v`` with its design moved onto the rows and bounds active there (to round-off, not to the
    LP's 1e-9: a vertex above a floor by 1e-9 of the cost would eat a slack of 1e-9 of it): the
    dimensions at a bound stay, the others solve the active rows (least squares); kept only when it
    still meets every row and bound."""
    dm = instance.design_matrix
    b0 = v.bw_gbps
    rows, at_bound = _active(instance, b0)
    free = ~at_bound
    if not (rows.any() and free.any()):
        return v
    A = dm.A[rows]
    floor = np.abs(A @ b0 - dm.lower[rows]) <= np.abs(A @ b0 - dm.upper[rows])
    target = np.where(np.isfinite(dm.lower[rows]) & floor, dm.lower[rows], dm.upper[rows])
    b = b0.copy()
    b[free] = np.linalg.lstsq(A[:, free], target - A[:, ~free] @ b0[~free], rcond=None)[0]
    b = np.clip(b, dm.bw_lower, dm.bw_upper)
    if not meets_rows(instance, b) or np.abs(b - b0).max() > 1e-6 * max(float(np.abs(b0).max()),
                                                                        1e-300):
        return v
    cost = float(cluster_cost_usd_per_gbps(instance) @ b)
    return CheapestVertex(min(cost, v.cost_usd) if cost <= v.cost_usd * (1 + 1e-9) else v.cost_usd,
                          v.dearest_usd, b, v.row_duals)


def near_budget(instance: Instance, budget_usd: float, slack: float = NEAR_SLACK) -> bool:
    """Whether ``budget_usd`` ($) is within ``slack`` (relative) above the cheapest network's cost
    (> 0)."""
    c = vertex_of(instance).cost_usd
    return bool(c > 0 and c <= budget_usd <= c * (1 + slack))


def near_cheapest(instance: Instance, tm: TimeModel, budget_usd: float) -> CheapestVertex | None:
    """The cheapest network (with its duals) when ``budget_usd`` is within :data:`NEAR_SLACK` above
    its cost and it leaves a dimension that carries traffic without bandwidth (infinite time) that a
    reduced price keeps from the slack (not a tie in price); else None."""
    v = vertex_of(instance)
    if not near_budget(instance, budget_usd) or np.isfinite(tm.time_ns(v.bw_gbps)):
        return None
    # (ties in price: no reduced price, nothing to resolve)
    reduced = reduced_budget_row(instance, v, budget_usd)
    return v if reduced is not None and (reduced.coef[tm.carries_traffic] > 0).any() else None


def _active(instance: Instance, bw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, dimensions) active at ``bw``: rows that hold with equality to 1e-9 (relative to their
    size) and dimensions at a bound."""
    dm = instance.design_matrix
    lhs = dm.A @ bw
    size = np.maximum(np.abs(dm.A * bw).sum(axis=1), np.abs(dm.rhs)) if dm.A.size else np.zeros(0)
    tol = 1e-9 * np.maximum(size, 1e-300)
    rows = (np.abs(lhs - dm.lower) <= tol) | (np.abs(lhs - dm.upper) <= tol)
    dims = (bw <= dm.bw_lower * (1 + 1e-12)) | (bw >= dm.bw_upper * (1 - 1e-12))
    return rows, dims


def complete(instance: Instance, vertex: CheapestVertex, reduced: ReducedBudget, budget_usd: float,
             bw: np.ndarray) -> list[np.ndarray]:
    """Designs within the rows and the budget from an LP point ``bw`` (GB/s): the starved dimensions
    (those of the reduced row) take ``bw``'s values; the others at a bound of the cheapest network
    stay there (or, in a second design, take ``bw``'s values: the LP holds them only to 1e-9 of
    their size, and that noise costs budget for nothing); the rest follow the rows active at the
    cheapest network (least squares: each at its bound, or, in another design, an inequality row as
    far off it as at ``bw``), and the change from the cheapest network is scaled down onto the
    budget when it costs more (the change is linear in that scale). Also the segment from the
    cheapest network towards ``bw`` (moved inside the rows). Only designs that meet every row to
    round-off (:data:`STRICT`) count. Returns [] when none does."""
    dm = instance.design_matrix
    p = cluster_cost_usd_per_gbps(instance)
    b0 = vertex.bw_gbps
    rows, at_bound = _active(instance, b0)
    z = reduced.coef != 0
    fixed = at_bound & ~z
    free = ~at_bound & ~z
    lp = np.clip(bw, dm.bw_lower, dm.bw_upper) - b0
    A = dm.A[rows]
    # an inequality row active at the cheapest network may stay there, or move off it as far as the
    # LP's point does (the exact row charges that move to the room)
    lhs0, lhs = A @ b0, A @ (b0 + lp)
    floor = np.abs(lhs0 - dm.lower[rows]) <= np.abs(lhs0 - dm.upper[rows])
    off = np.where(dm.lower[rows] == dm.upper[rows], 0.0,
                   np.where(floor, np.maximum(lhs - dm.lower[rows], 0.0),
                            np.minimum(lhs - dm.upper[rows], 0.0)))
    deltas = []
    for move in ((False, True) if fixed.any() else (False,)):
        for follow in ((False, True) if off.any() else (False,)):
            delta = np.where(z | (fixed & move), lp, 0.0)
            if rows.any() and free.any():
                target = (np.where(floor, dm.lower[rows], dm.upper[rows]) - lhs0
                          + (off if follow else 0.0))
                delta[free] = np.linalg.lstsq(A[:, free], target - A[:, ~free] @ delta[~free],
                                              rcond=None)[0]
            deltas.append(delta)
    deltas.append(within_rows(instance, bw, b0) - b0)
    out = []
    for d in deltas:
        for fill in (False, True):
            point = _onto_budget(p, b0, d, budget_usd, fill)
            if point is not None and _exact_rows(instance, point):
                out.append(point)
    return out


STRICT = 1e-13
"""Relative row violation the designs here may have (round-off): a floor met only to 1e-9
(:data:`ROW_TOL`) would leave 1e-9 of its cost to a slack that may be smaller than that."""


def _exact_rows(instance: Instance, bw: np.ndarray) -> bool:
    dm = instance.design_matrix
    if dm.max_violation(bw) > STRICT:
        return False
    return bool((bw >= dm.bw_lower).all() and (bw <= dm.bw_upper).all())


def _onto_budget(p: np.ndarray, b0: np.ndarray, delta: np.ndarray, budget_usd: float,
                 fill: bool = False) -> np.ndarray | None:
    """b0 + s delta with the largest s <= 1 (tried down to 8 steps of 1e-9) whose cost is within
    ``budget_usd`` (:func:`_within_budget`); ``fill``: with s above 1 where the change leaves budget
    unused (an LP point held to its tolerance may leave part of a room of 1e-9 of the cost unspent),
    the whole room spent; None when there is nothing to fill."""
    base = float(p @ b0)
    extra = float(p @ delta)
    s = 1.0
    if base + extra > budget_usd:
        if extra <= 0 or budget_usd <= base:
            return None
        s = (budget_usd - base) / extra
    elif fill:
        if extra <= 0 or budget_usd <= base + extra:
            return None
        s = min((budget_usd - base) / extra, 1e3)
    for _ in range(8):
        point = np.maximum(b0 + s * delta, 0.0)
        if _within_budget(p, point, budget_usd):
            return point
        s *= 1 - 1e-9
    return None


def _within_budget(p: np.ndarray, bw: np.ndarray, budget_usd: float) -> bool:
    """Whether the cost of ``bw`` is within the budget as every float sum of it evaluates (a dot
    product and numpy's pairwise sum round differently). Its exact cost may be a last bit above:
    :func:`_excess_usd` counts that."""
    return float(p @ bw) <= budget_usd and float((p * bw).sum()) <= budget_usd


def fastest_near_cheapest(instance: Instance, tm: TimeModel, budget_usd: float, rel_gap: float,
                          vertex: CheapestVertex,
                          time_limit_s: float = 60.0) -> tuple[OAResult, int]:
    """The fastest design within ``budget_usd`` ($) a hair above the cheapest network ``vertex``
    (module docstring): (:class:`hieropt.solvers.outcome.OAResult` in ns, LPs solved).

    Two passes on one cost-share LP (its cuts are valid for both):

    1. the budget held by the exact row of :func:`hieropt.solvers.reduced_budget.reduced_budget_row`
       alone: its terms >= 0 (the distances of the rows and bounds the cheapest network holds on
       slack columns of their own), its right-hand side the room, so the LP resolves the room to its
       own tolerance; the share row (a float of the cost's size, whose tolerance is 1e-9 of the cost
       and whose last bit a share EPS x cost / room of the room) left free; the design rows without
       rounding (``exact_rows``), so the Lagrangian bound holds for every exactly feasible design;
    2. only if that does not prove the gap (HiGHS failed, or the LP's tolerance on a row the room
       depends on is too coarse for it), the same LP with the share row, whose bound allows for that
       row's rounding (:data:`ROW_ROUNDING`).

    Designs are ranked by their time over what the bound gives up for them (:func:`_excess_usd`: a
    design that meets an equality 1e-13 short of it has that much more room than an exactly feasible
    one), so the design with the best certified gap is the answer.

    Raises:
        NoSolutionError: the budget leaves a dimension that carries traffic no bandwidth (the
            reduced budget row allows it none), or no design with a finite time was found.
    """
    reduced = reduced_budget_row(instance, vertex, budget_usd)
    if reduced is None:
        raise NoSolutionError("infeasible", f"the budget ${budget_usd:,.6g} leaves a dimension "
                              "that carries traffic (almost) without bandwidth")
    dm = instance.design_matrix
    loaded = np.flatnonzero(tm.carries_traffic)
    for d in loaded:
        if reduced.cap_gbps[d] <= dm.bw_lower[d] and dm.bw_lower[d] <= 0:
            raise NoSolutionError("infeasible", (
                f"the budget ${budget_usd:,.10g} is the cheapest network's cost "
                f"(${vertex.cost_usd:,.10g}) to within round-off, and every design within it has "
                f"bw[{d}] = 0 on dimension {d}, which carries traffic: no finite iteration time"))
    p = cluster_cost_usd_per_gbps(instance)
    units = _units(tm, p, vertex.bw_gbps, reduced)
    keys_caps = {key: cap for key, _, cap in reduced.slacks}
    rc = RatioCore(instance, tm, budget_usd / float(p.sum()), time_limit_s, budget_usd, prune=True,
                   share_units_gbps=units, exact_rows=True, slacks=tuple(keys_caps))
    loop_gap = rel_gap * (1 - 1e-3)
    room = reduced.room_usd

    def repair(bw: np.ndarray) -> list[np.ndarray]:
        return complete(instance, vertex, reduced, budget_usd, bw)

    # (of the room: what the design may use beyond the budget, exactly)
    def share(bw: np.ndarray) -> float:
        return min(1.0, _excess_usd(instance, vertex, budget_usd, bw) / room) if room > 0 else 0.0

    # T / (1 - what the bound gives up for this design): the certified gap's measure
    def scorer(allowance: float):
        def score(bw: np.ndarray) -> float:
            keep = (1 - share(bw)) * (1 - allowance)
            return tm.time_ns(bw) / keep if keep > 0 else INF
        return score

    # (outcome, the share of the time its bound allows for its rows)
    passes: list[tuple[OAResult, float]] = []
    try:
        if reduced.rhs_usd > 0:
            rc.add_rows(reduced.coef[None, :], np.array([-INF]), np.array([reduced.exact_rhs_usd]),
                        budget_usd, slack_coef=[{key: c for key, c, _ in reduced.slacks}],
                        slack_cap=keys_caps)
            try:
                passes.append((rc.fastest_within(budget_usd, loop_gap, repair=repair,
                                                 budget_row=False, score=scorer(0.0)), 0.0))
            except NoSolutionError:
                pass  # (the second pass says why, with the budget row)
        if not passes or _combined(passes, tm, share).gap > rel_gap:
            # (the bound of the LP with the share row is for its float row: allow for that row's
            # last bits)
            rounding = min(1.0, ROW_ROUNDING * EPS * vertex.cost_usd / room) if room > 0 else 0.0
            try:
                passes.append((rc.fastest_within(budget_usd, loop_gap, repair=repair,
                                                 score=scorer(rounding)), rounding))
            except NoSolutionError:
                if not passes:
                    raise
    finally:
        rc.close()
    out = _combined(passes, tm, share)
    allowance = share(out.bw) + max(a for _, a in passes) if out.bw is not None else 0.0
    return _finished(out, allowance, rel_gap, reduced.room_usd, vertex.cost_usd), rc.lps


def _finished(out: OAResult, allowance: float, rel_gap: float, room_usd: float,
              cheapest_usd: float) -> OAResult:
    """``out`` OPTIMAL within ``rel_gap``, else LIMIT saying why: the round-off of a cost when the
    share of the time the bound gives up for it (``allowance``) is half the gap target or more."""
    if out.gap <= rel_gap:
        return replace(out, status=Status.OPTIMAL, message="optimal within the gap target")
    if allowance >= 0.5 * rel_gap:
        msg = (f"stopped at proven relative gap {out.gap:.3g}: the budget is only "
               f"${room_usd:.3g} ({room_usd / cheapest_usd:.2g} of it) above the cheapest network "
               f"(${cheapest_usd:,.10g}), and the design found meets the rows and the budget only "
               f"to the round-off of a cost (about ${EPS * cheapest_usd:.2g}), which leaves "
               f"{allowance:.2g} of the time undecided")
    elif out.status is Status.LIMIT:
        msg = out.message
    else:
        msg = f"stopped at proven relative gap {out.gap:.3g}"
    return replace(out, status=Status.LIMIT, message=msg)


def _combined(passes: list[tuple[OAResult, float]], tm: TimeModel, share) -> OAResult:
    """One outcome from the passes of :func:`fastest_near_cheapest` (their ``upper`` is the score T
    / (1 - what the bound gives up), their bounds for the LP's rows): the design of the least score,
    its time, and the best bound, each pass's first lowered by the share it allows for its rows,
    then by the share of the room the design may use beyond the budget in exact arithmetic
    (``share``, :func:`_excess_usd`; T of the starved dimensions falls at most as fast as the room
    grows)."""
    found = [o for o, _ in passes if o.bw is not None and np.isfinite(o.upper)]
    best = min(found, key=lambda o: o.upper) if found else passes[-1][0]
    lower = max((o.lower * (1 - a) if np.isfinite(o.lower) else o.lower) for o, a in passes)
    lps = sum(o.iterations for o, _ in passes)
    if best.bw is None:
        return replace(best, lower=lower, iterations=lps)
    T = tm.time_ns(best.bw)
    return replace(best, upper=T, lower=min(lower, T) * (1 - share(best.bw)), iterations=lps)


def _excess_usd(instance: Instance, vertex: CheapestVertex, budget_usd: float,
                bw: np.ndarray) -> float:
    """How much more than the budget ``bw`` may use in exact arithmetic ($, >= 0): its exact cost
    above the budget, plus each row's exact violation weighted by the cheapest network's dual (a
    floor missed by round-off frees that much of the cheap dimension's cost). Exact
    (:class:`fractions.Fraction`) on the float inputs."""
    dm = instance.design_matrix
    p = cluster_cost_usd_per_gbps(instance)
    B = [Fraction(float(v)) for v in bw]
    def dot(coef) -> Fraction:
        return sum((Fraction(float(a)) * b for a, b in zip(coef, B, strict=True)), Fraction(0))

    out = max(dot(p) - Fraction(budget_usd), Fraction(0))
    for i, y in enumerate(vertex.row_duals):
        if y == 0:
            continue
        lhs = dot(dm.A[i])
        miss = Fraction(float(dm.lower[i])) - lhs if y > 0 else lhs - Fraction(float(dm.upper[i]))
        out += abs(Fraction(float(y))) * max(miss, Fraction(0))
    return float(out)


def _units(tm: TimeModel, p: np.ndarray, b0: np.ndarray, reduced: ReducedBudget) -> np.ndarray:
    """(D,) GB/s: the share units near the cheapest network b0: on a dimension with a reduced price,
    b0_d plus its square-root split of the row's room (B_d - b0_d proportional to sqrt(M_d / r_d)
    with sum_d r_d (B_d - b0_d) = room, M_d the bytes on d); elsewhere b0_d (or the largest unit
    where b0_d is 0)."""
    from ..formulation.scale import bytes_per_dim
    r = reduced.coef
    M = bytes_per_dim(tm)
    room = max(reduced.room_usd, 0.0)
    units = b0.astype(float).copy()
    pos = r > 0
    if pos.any() and room > 0:
        w = np.sqrt(np.where(M[pos] > 0, M[pos], M[pos].max(initial=0.0) or 1.0) / r[pos])
        units[pos] = b0[pos] + w * (room / float(r[pos] @ w))
    top = float(units.max(initial=0.0))
    fill = top if top > 0 else 1.0
    return np.where(units > 0, units, fill)
