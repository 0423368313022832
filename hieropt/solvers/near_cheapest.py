"""The fastest network within a budget a hair above the cheapest network (budget = cheapest x (1 + 1e-13 ... 1e-2)),
where the cheapest network leaves a dimension that carries traffic without bandwidth.

There the feasible designs are a sliver: the dimensions the cheapest network starves get only what the slack
(budget - cheapest) buys, 1e-13 GB/s next to 1e3 GB/s elsewhere, and their times are 1e17 ns and more. In the budget
row sum_d p_d B_d <= budget the slack is a difference of two numbers that agree to 1e-9 and beyond, which no LP
resolves (HiGHS's tolerances are 1e-9): the performance and cost-share LPs said "infeasible" or stopped at gaps near
1. The remedy is LP duality at the cheapest network (Dantzig's reduced costs): with row multipliers y of the
cheapest-network LP (:func:`hieropt.solvers.cost_range.cheapest_vertex`) and reduced prices r = p - A'y, every
feasible design has p.B = y.(A B) + r.B and y.(A B) >= y.b (y sign-correct for each row), so

    r.B <= budget - y.b                                            (the reduced budget row)

holds for every design within the budget. Its terms cancel nothing: r_d is 0 on the dimensions the cheapest network
fills and >= 0 on those it leaves at a bound, and its right-hand side is the slack itself. Added to the cost-share
LP of :class:`hieropt.solvers.ratio.RatioCore` (an implied row: every bound stays valid), with share units that
follow the slack on the starved dimensions, the LP resolves the sliver to its own tolerance. Its points become
designs by completing the cheapest network: the starved dimensions take the LP's values, the others follow from the
rows active at the cheapest network (a small linear solve), and the result is scaled onto the budget
(:func:`complete`). When the reduced row leaves a loaded dimension no bandwidth at all the budget admits no
finite iteration time, and that is said (:class:`NoSolutionError`, with the bound).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from ..errors import NoSolutionError
from ..model.cost import cluster_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..result import Status
from ..spec import Instance
from .cost_range import CheapestVertex, cheapest_vertex
from .line_search import meets_rows, within_rows
from .ratio import INF, Outcome, RatioCore

__all__ = ["NEAR_SLACK", "ReducedBudget", "reduced_budget_row", "vertex_of", "near_cheapest", "complete",
           "fastest_near_cheapest"]

NEAR_SLACK = 1e-2
"""Budgets within this relative slack above the cheapest network are solved here when that network leaves a loaded
dimension without bandwidth."""
EPS = float(np.finfo(float).eps)
ROW_ROUNDING = 4
"""Round-off of the LP's budget and design rows, in units of EPS x the cheapest cost, that the bound allows for."""


@dataclass(frozen=True)
class ReducedBudget:
    """The reduced budget row sum_d coef_d B_d <= rhs_usd (module docstring), valid for every design within the
    budget; ``room_usd`` = rhs_usd - coef . B0 at the cheapest design B0 (the slack as the row sees it), ``cap_gbps``
    (D,) the largest B_d the row allows each dimension (inf where its coefficient is not positive)."""

    coef: np.ndarray
    rhs_usd: float
    room_usd: float
    cap_gbps: np.ndarray
    slacks: tuple[tuple[tuple[str, int], float, float], ...] = ()
    """(key, coef $ per unit, cap): the other terms of the exact budget (:func:`reduced_budget_row`), each on a row's
    slack column (:func:`hieropt.formulation.ratio_arrays.compile_ratio_lp`'s ``slacks``): coef x the row's
    distance from its bound, at most ``cap`` (rhs / coef, rounded up)."""
    exact_rhs_usd: float = INF
    """The right-hand side of the exact row coef . B + sum of the slack terms <= exact_rhs_usd: the budget itself,
    every term >= 0 (so resolved to the room, not to the cost), rounded up for every float coefficient."""


def vertex_of(instance: Instance) -> CheapestVertex:
    """The cheapest network of ``instance`` with its LP duals (:func:`hieropt.solvers.cost_range.cheapest_vertex`),
    computed once per instance (a Pareto front asks for every budget)."""
    return instance.memo("_cheapest_vertex", (instance.constraints, instance.bounds, instance.network,
                                              instance.cost), lambda: _polished(instance, cheapest_vertex(instance)))


def _polished(instance: Instance, v: CheapestVertex) -> CheapestVertex:
    """``v`` with its design moved onto the rows and bounds active there (to round-off, not to the LP's 1e-9: a
    vertex above a floor by 1e-9 of the cost would eat a slack of 1e-9 of it): the dimensions at a bound stay, the
    others solve the active rows (least squares); kept only when it still meets every row and bound."""
    dm = instance.design_matrix
    b0 = v.bw_gbps
    rows, at_bound = _active(instance, b0)
    free = ~at_bound
    if not (rows.any() and free.any()):
        return v
    A = dm.A[rows]
    target = np.where(np.isfinite(dm.lower[rows]) & (np.abs(A @ b0 - dm.lower[rows]) <= np.abs(A @ b0 -
                                                                                                  dm.upper[rows])),
                      dm.lower[rows], dm.upper[rows])
    b = b0.copy()
    b[free] = np.linalg.lstsq(A[:, free], target - A[:, ~free] @ b0[~free], rcond=None)[0]
    b = np.clip(b, dm.bw_lower, dm.bw_upper)
    if not meets_rows(instance, b) or np.abs(b - b0).max() > 1e-6 * max(float(np.abs(b0).max()), 1e-300):
        return v
    cost = float(cluster_cost_usd_per_gbps(instance) @ b)
    return CheapestVertex(min(cost, v.cost_usd) if cost <= v.cost_usd * (1 + 1e-9) else v.cost_usd,
                          v.dearest_usd, b, v.row_duals)


def reduced_budget_row(instance: Instance, vertex: CheapestVertex, budget_usd: float) -> ReducedBudget | None:
    """The reduced budget row at ``budget_usd`` ($) from the duals of ``vertex`` (module docstring), or None when a
    dimension has no price (its bandwidth, and so the rounding margin, would be unbounded).

    Computed in exact rational arithmetic (:class:`fractions.Fraction`; a few rows and dimensions): the duals are
    first corrected so that the reduced prices of the dimensions the cheapest network fills are exactly 0 (HiGHS's
    duals leave 1e-16 of the price there, which at the budget / price such a dimension may reach is 1e-16 of the
    cost: the whole slack of a budget 1e-16 above the cheapest), then each reduced price is rounded to a float and
    the rounding, at the most bandwidth the row allows that dimension, is added to the right-hand side, which is
    rounded up: the float row holds for every design within the budget."""
    dm = instance.design_matrix
    p = cluster_cost_usd_per_gbps(instance)
    if not (p > 0).all():
        return None
    y = vertex.row_duals.copy()
    y[((y > 0) & ~np.isfinite(dm.lower)) | ((y < 0) & ~np.isfinite(dm.upper))] = 0.0
    bound = np.where(y > 0, dm.lower, np.where(y < 0, dm.upper, 0.0))
    D, m = p.size, y.size
    P = [Fraction(float(v)) for v in p]
    A = [[Fraction(float(v)) for v in row] for row in dm.A]
    Y = [Fraction(float(v)) for v in y]
    r = [P[d] - sum((A[i][d] * Y[i] for i in range(m)), Fraction(0)) for d in range(D)]
    basic = [d for d in range(D) if abs(r[d]) <= Fraction(1, 10**12) * P[d]]
    used = [i for i in range(m) if Y[i] != 0]
    if basic and len(used) == len(basic):  # square: move y so that r = 0 exactly on the basic dimensions
        dy = _solve_exact([[A[i][d] for i in used] for d in basic], [r[d] for d in basic])
        if dy is not None:
            Y2 = list(Y)
            for i, v in zip(used, dy, strict=True):
                Y2[i] += v
            if all((Y2[i] > 0) == (Y[i] > 0) for i in used):
                Y = Y2
                r = [P[d] - sum((A[i][d] * Y[i] for i in range(m)), Fraction(0)) for d in range(D)]
    B = Fraction(float(budget_usd))
    rhs = B - sum((Y[i] * Fraction(float(bound[i])) for i in range(m) if Y[i] != 0), Fraction(0))
    # a dimension the cheapest network leaves at a bound other than 0 keeps its term's least value there (r_d B_d
    # >= r_d lo_d): the row then has only the starved dimensions, each term >= 0, and its right-hand side is the
    # slack itself, not a difference of two terms of the cost's size
    b0 = vertex.bw_gbps
    starved = [d for d in range(D) if d not in basic and r[d] > 0 and dm.bw_lower[d] <= 0]
    for d in range(D):
        if d in basic or d in starved or r[d] == 0:
            continue
        edge = dm.bw_lower[d] if r[d] > 0 else dm.bw_upper[d]
        if not np.isfinite(edge):
            return None
        rhs -= r[d] * Fraction(float(edge))
    coef = np.zeros(D)
    basic_margin = Fraction(0)
    for d in basic:  # a reduced price of 0 but for rounding (no exact correction): its largest term, at budget / p_d
        basic_margin += abs(r[d]) * _reach(dm, d, B / P[d])
    room = max(rhs + basic_margin, Fraction(0))  # every term below is >= 0, and they sum to at most this
    margin = basic_margin
    for d in starved:  # each B_d <= room / r_d (the other terms are >= 0), and at most budget / p_d
        c = float(r[d])
        coef[d] = c
        margin += abs(r[d] - Fraction(c)) * _reach(dm, d, min(room / r[d], B / P[d]))
    # the exact row: the same terms and those the row above leaves at their least value, each as the distance from
    # a bound (a slack >= 0 of its own): |y_i| (A_i B - b_i) of an inequality row with a multiplier, |r_d| times
    # B_d's distance from the bound the cheapest network holds it at
    terms: list[tuple[tuple[str, int], Fraction]] = []
    for i in range(m):
        if Y[i] != 0 and dm.lower[i] != dm.upper[i]:
            terms.append((("row", i), abs(Y[i])))
    for d in range(D):
        if d not in basic and d not in starved and r[d] != 0:
            terms.append(((("lower" if r[d] > 0 else "upper"), d), abs(r[d])))
    exact_margin = margin
    slacks = []
    for key, c in terms:
        cf = float(c)
        cap = room / c
        exact_margin += abs(c - Fraction(cf)) * cap
        slacks.append((key, cf, _round(cap, up=True)))
    rhs_f = _round(rhs + margin, up=True)
    with np.errstate(divide="ignore"):
        cap = np.where(coef > 0, rhs_f / np.where(coef > 0, coef, 1.0), np.inf)
    return ReducedBudget(coef, rhs_f, rhs_f, cap, tuple(slacks), _round(rhs + exact_margin, up=True))


def _reach(dm, d: int, top: Fraction) -> Fraction:
    """The most bandwidth dimension ``d`` may have (GB/s, exact): ``top``, within its upper bound."""
    return min(top, Fraction(float(dm.bw_upper[d]))) if np.isfinite(dm.bw_upper[d]) else top


def _round(q: Fraction, up: bool) -> float:
    """``q`` rounded to a float upwards (``up``) or downwards."""
    f = float(q)
    if up and Fraction(f) < q:
        return float(np.nextafter(f, np.inf))
    if not up and Fraction(f) > q:
        return float(np.nextafter(f, -np.inf))
    return f


def _solve_exact(M: list[list[Fraction]], v: list[Fraction]) -> list[Fraction] | None:
    """x with M x = v (square, exact Gaussian elimination), or None when M is singular."""
    n = len(v)
    a = [list(row) + [v[i]] for i, row in enumerate(M)]
    for c in range(n):
        piv = next((i for i in range(c, n) if a[i][c] != 0), None)
        if piv is None:
            return None
        a[c], a[piv] = a[piv], a[c]
        for i in range(n):
            if i != c and a[i][c] != 0:
                f = a[i][c] / a[c][c]
                a[i] = [x - f * z for x, z in zip(a[i], a[c], strict=True)]
    return [a[i][n] / a[i][i] for i in range(n)]


def near_cheapest(instance: Instance, tm: TimeModel, budget_usd: float) -> CheapestVertex | None:
    """The cheapest network (with its duals) when ``budget_usd`` is within :data:`NEAR_SLACK` above its cost and it
    leaves a dimension that carries traffic without bandwidth (infinite time) that a reduced price keeps from the
    slack (not a tie in price); else None."""
    v = vertex_of(instance)
    if not (v.cost_usd > 0 and v.cost_usd <= budget_usd <= v.cost_usd * (1 + NEAR_SLACK)):
        return None
    if np.isfinite(tm.time_ns(v.bw_gbps)):
        return None
    reduced = reduced_budget_row(instance, v, budget_usd)  # (ties in price: no reduced price, nothing to resolve)
    return v if reduced is not None and (reduced.coef[tm.carries_traffic] > 0).any() else None


def _active(instance: Instance, bw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, dimensions) active at ``bw``: rows that hold with equality to 1e-9 (relative to their size) and
    dimensions at a bound."""
    dm = instance.design_matrix
    lhs = dm.A @ bw
    size = np.maximum(np.abs(dm.A * bw).sum(axis=1), np.abs(dm.rhs)) if dm.A.size else np.zeros(0)
    tol = 1e-9 * np.maximum(size, 1e-300)
    rows = (np.abs(lhs - dm.lower) <= tol) | (np.abs(lhs - dm.upper) <= tol)
    dims = (bw <= dm.bw_lower * (1 + 1e-12)) | (bw >= dm.bw_upper * (1 - 1e-12))
    return rows, dims


def complete(instance: Instance, vertex: CheapestVertex, reduced: ReducedBudget, budget_usd: float,
             bw: np.ndarray) -> list[np.ndarray]:
    """Designs within the rows and the budget from an LP point ``bw`` (GB/s): the starved dimensions (those of the
    reduced row) take ``bw``'s values; the others at a bound of the cheapest network stay there (or, in a second
    design, take ``bw``'s values: the LP holds them only to 1e-9 of their size, and that noise costs budget for
    nothing); the rest follow the rows active at the cheapest network (least squares: each at its bound, or, in
    another design, an inequality row as far off it as at ``bw``), and the change from the cheapest network is
    scaled down onto the budget when it costs more (the change is linear in that scale).
    Also the segment from the cheapest network towards ``bw`` (moved inside the rows). Only designs that meet
    every row to round-off (:data:`STRICT`) count. Returns [] when none does."""
    dm = instance.design_matrix
    p = cluster_cost_usd_per_gbps(instance)
    b0 = vertex.bw_gbps
    rows, at_bound = _active(instance, b0)
    z = reduced.coef != 0
    fixed = at_bound & ~z
    free = ~at_bound & ~z
    lp = np.clip(bw, dm.bw_lower, dm.bw_upper) - b0
    A = dm.A[rows]
    # an inequality row active at the cheapest network may stay there, or move off it as far as the LP's point does
    # (the exact row charges that move to the room)
    lhs0, lhs = A @ b0, A @ (b0 + lp)
    floor = np.abs(lhs0 - dm.lower[rows]) <= np.abs(lhs0 - dm.upper[rows])
    off = np.where(dm.lower[rows] == dm.upper[rows], 0.0,
                   np.where(floor, np.maximum(lhs - dm.lower[rows], 0.0), np.minimum(lhs - dm.upper[rows], 0.0)))
    deltas = []
    for move in ((False, True) if fixed.any() else (False,)):
        for follow in ((False, True) if off.any() else (False,)):
            delta = np.where(z | (fixed & move), lp, 0.0)
            if rows.any() and free.any():
                target = np.where(floor, dm.lower[rows], dm.upper[rows]) - lhs0 + (off if follow else 0.0)
                delta[free] = np.linalg.lstsq(A[:, free], target - A[:, ~free] @ delta[~free], rcond=None)[0]
            deltas.append(delta)
    deltas.append(within_rows(instance, bw, b0) - b0)
    out = []
    for d in deltas:
        point = _onto_budget(p, b0, d, budget_usd)
        if point is not None and _exact_rows(instance, point):
            out.append(point)
    return out


STRICT = 1e-13
"""Relative row violation the designs here may have (round-off): a floor met only to 1e-9 (:data:`ROW_TOL`) would
leave 1e-9 of its cost to a slack that may be smaller than that."""


def _exact_rows(instance: Instance, bw: np.ndarray) -> bool:
    dm = instance.design_matrix
    if dm.A.size and dm.violations(bw).max() > STRICT:
        return False
    return bool((bw >= dm.bw_lower).all() and (bw <= dm.bw_upper).all())


def _onto_budget(p: np.ndarray, b0: np.ndarray, delta: np.ndarray, budget_usd: float) -> np.ndarray | None:
    """b0 + s delta with the largest s <= 1 (tried down to 8 steps of 1e-9) whose cost is within ``budget_usd``
    (:func:`_within_budget`)."""
    base = float(p @ b0)
    extra = float(p @ delta)
    s = 1.0
    if base + extra > budget_usd:
        if extra <= 0 or budget_usd <= base:
            return None
        s = (budget_usd - base) / extra
    for _ in range(8):
        point = np.maximum(b0 + s * delta, 0.0)
        if _within_budget(p, point, budget_usd):
            return point
        s *= 1 - 1e-9
    return None


def _within_budget(p: np.ndarray, bw: np.ndarray, budget_usd: float) -> bool:
    """Whether the cost of ``bw`` is within the budget exactly (:class:`fractions.Fraction`) and as every float sum
    of it evaluates (a dot product and numpy's pairwise sum round differently)."""
    if float(p @ bw) > budget_usd or float((p * bw).sum()) > budget_usd:
        return False
    return sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(p, bw, strict=True)),
               Fraction(0)) <= Fraction(budget_usd)


def fastest_near_cheapest(instance: Instance, tm: TimeModel, budget_usd: float, rel_gap: float,
                          vertex: CheapestVertex, time_limit_s: float = 60.0) -> tuple[Outcome, int]:
    """The fastest design within ``budget_usd`` ($) a hair above the cheapest network ``vertex`` (module
    docstring): (:class:`hieropt.solvers.ratio.Outcome` in ns, LPs solved).

    Two passes on one cost-share LP (its cuts are valid for both):

    1. the budget held by the reduced row and its implied rows alone (the share row, a float of the cost's size
       whose last bits are a share EPS x cost / room of the room, left free: a relaxation, so its bound holds; the
       rows are widened by their rounding, so it holds for every exactly feasible design). Where the cheapest
       network's multipliers sit on equality rows the two problems are the same, and the LP resolves the room to
       its own tolerance, ties in price included (two dimensions of one price: the LP's budget row could not tell
       their split from a share 1e-9 of the cost of the room);
    2. when that does not prove the gap (a floor the optimum leaves, which the reduced row does not charge), the
       LP with the share row too, whose bound allows for that row's rounding (:data:`ROW_ROUNDING`).

    Raises:
        NoSolutionError: the budget leaves a dimension that carries traffic no bandwidth (the reduced budget row
            allows it none), or no design with a finite time was found.
    """
    reduced = reduced_budget_row(instance, vertex, budget_usd)
    if reduced is None:
        raise NoSolutionError("infeasible", f"the budget ${budget_usd:,.6g} leaves a dimension that carries traffic "
                              "(almost) without bandwidth")
    dm = instance.design_matrix
    loaded = np.flatnonzero(tm.carries_traffic)
    for d in loaded:
        if reduced.cap_gbps[d] <= dm.bw_lower[d] and dm.bw_lower[d] <= 0:
            raise NoSolutionError("infeasible", f"the budget ${budget_usd:,.10g} is the cheapest network's cost "
                                  f"(${vertex.cost_usd:,.10g}) to within round-off, and every design within it has "
                                  f"bw[{d}] = 0 on dimension {d}, which carries traffic: no finite iteration time")
    p = cluster_cost_usd_per_gbps(instance)
    units = _units(tm, p, vertex.bw_gbps, reduced)
    keys_caps = {key: cap for key, _, cap in reduced.slacks}
    rc = RatioCore(instance, tm, budget_usd / float(p.sum()), time_limit_s, budget_usd, prune=True,
                   share_units_gbps=units, exact_rows=True, slacks=tuple(keys_caps))
    loop_gap = rel_gap * (1 - 1e-3)
    room = reduced.room_usd

    def repair(bw: np.ndarray) -> list[np.ndarray]:
        return complete(instance, vertex, reduced, budget_usd, bw)

    def share(bw: np.ndarray) -> float:  # (of the room: what the design may use beyond the budget, exactly)
        return min(1.0, _excess_usd(instance, vertex, budget_usd, bw) / room) if room > 0 else 0.0

    def scorer(allowance: float):  # T / (1 - what the bound gives up for this design): the certified gap's measure
        def score(bw: np.ndarray) -> float:
            keep = (1 - share(bw)) * (1 - allowance)
            return tm.time_ns(bw) / keep if keep > 0 else INF
        return score

    passes: list[tuple[Outcome, float]] = []  # (outcome, the share of the time its bound allows for its rows)
    try:
        if reduced.rhs_usd > 0:
            rc.add_rows(reduced.coef[None, :], np.array([-INF]), np.array([reduced.exact_rhs_usd]), budget_usd,
                        slack_coef=[{key: c for key, c, _ in reduced.slacks}], slack_cap=keys_caps)
            try:
                passes.append((rc.fastest_within(budget_usd, loop_gap, repair=repair, budget_row=False,
                                                 score=scorer(0.0)), 0.0))
            except NoSolutionError:
                pass  # (the second pass says why, with the budget row)
        if not passes or _combined(passes, tm, share).gap > rel_gap:
            # (the bound of the LP with the share row is for its float row: allow for that row's last bits)
            rounding = min(1.0, ROW_ROUNDING * EPS * vertex.cost_usd / room) if room > 0 else 0.0
            try:
                passes.append((rc.fastest_within(budget_usd, loop_gap, repair=repair, score=scorer(rounding)),
                               rounding))
            except NoSolutionError:
                if not passes:
                    raise
    finally:
        rc.close()
    out = _combined(passes, tm, share)
    allowance = share(out.bw) + max(a for _, a in passes) if out.bw is not None else 0.0
    if out.gap <= rel_gap:
        return replace(out, status=Status.OPTIMAL, message="optimal within the gap target"), rc.lps
    if allowance >= 0.5 * rel_gap:
        msg = (f"stopped at proven relative gap {out.gap:.3g}: the budget is only ${reduced.room_usd:.3g} "
               f"({reduced.room_usd / vertex.cost_usd:.2g} of it) above the cheapest network "
               f"(${vertex.cost_usd:,.10g}), and the design found meets the rows and the budget only to the "
               f"round-off of a cost (about ${EPS * vertex.cost_usd:.2g}), which leaves {allowance:.2g} of the time "
               "undecided")
    else:
        msg = out.message if out.status is Status.LIMIT else f"stopped at proven relative gap {out.gap:.3g}"
    out = replace(out, status=Status.LIMIT, message=msg)
    return out, rc.lps


def _combined(passes: list[tuple[Outcome, float]], tm: TimeModel, share) -> Outcome:
    """One outcome from the passes of :func:`fastest_near_cheapest` (their ``upper`` is the score T / (1 - what
    the bound gives up), their bounds for the LP's rows): the design of the least score, its time, and the best
    bound, each pass's first lowered by the share it allows for its rows, then by the share of the room the design
    may use beyond the budget in exact arithmetic (``share``, :func:`_excess_usd`; T of the starved dimensions
    falls at most as fast as the room grows)."""
    found = [o for o, _ in passes if o.bw is not None and np.isfinite(o.upper)]
    best = min(found, key=lambda o: o.upper) if found else passes[-1][0]
    lower = max((o.lower * (1 - a) if np.isfinite(o.lower) else o.lower) for o, a in passes)
    lps = sum(o.lps for o, _ in passes)
    if best.bw is None:
        return replace(best, lower=lower, lps=lps)
    T = tm.time_ns(best.bw)
    return replace(best, upper=T, lower=min(lower, T) * (1 - share(best.bw)), lps=lps)


def _excess_usd(instance: Instance, vertex: CheapestVertex, budget_usd: float, bw: np.ndarray) -> float:
    """How much more than the budget ``bw`` may use in exact arithmetic ($, >= 0): its exact cost above the budget,
    plus each row's exact violation weighted by the cheapest network's dual (a floor missed by round-off frees that
    much of the cheap dimension's cost). Exact (:class:`fractions.Fraction`) on the float inputs."""
    dm = instance.design_matrix
    p = cluster_cost_usd_per_gbps(instance)
    B = [Fraction(float(v)) for v in bw]
    excess = sum((Fraction(float(a)) * b for a, b in zip(p, B, strict=True)), Fraction(0)) - Fraction(budget_usd)
    out = max(excess, Fraction(0))
    for i, y in enumerate(vertex.row_duals):
        if y == 0:
            continue
        lhs = sum((Fraction(float(a)) * b for a, b in zip(dm.A[i], B, strict=True)), Fraction(0))
        miss = Fraction(float(dm.lower[i])) - lhs if y > 0 else lhs - Fraction(float(dm.upper[i]))
        out += abs(Fraction(float(y))) * max(miss, Fraction(0))
    return float(out)


def _units(tm: TimeModel, p: np.ndarray, b0: np.ndarray, reduced: ReducedBudget) -> np.ndarray:
    """(D,) GB/s: the share units near the cheapest network b0: on a dimension with a reduced price, b0_d plus its
    square-root split of the row's room (B_d - b0_d proportional to sqrt(M_d / r_d) with sum_d r_d (B_d - b0_d) =
    room, M_d the bytes on d); elsewhere b0_d (or the largest unit where b0_d is 0)."""
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
