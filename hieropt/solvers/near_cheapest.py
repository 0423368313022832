"""The fastest network within a budget a hair above a cheapest network that starves a loaded
dimension (decision record 0007): the budget stated exactly from the cheapest network's duals
(:func:`reduced_budget_row`), held by the cost-share LP (:func:`fastest_near_cheapest`), its
points completed into designs (:func:`complete`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from ..errors import NoSolutionError, SolverError
from ..formulation.scale import bytes_per_dim
from ..model.cost import cluster_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..spec import Instance
from ..units import usd_cents
from .cost_range import CheapestVertex, cheapest_vertex
from .linalg import EPS, exact_dot, round_outwards
from .line_search import meets_rows, onto_budget, within_rows
from .outcome import OAResult
from .ratio import INF, RatioCore

__all__ = ["NEAR_SLACK", "ReducedBudget", "reduced_budget_row", "vertex_of", "cheapest_anchor",
           "near_budget", "near_cheapest", "complete", "fastest_near_cheapest", "sharpened"]

NEAR_SLACK = 1e-2
"""Relative room above the cheapest network's cost within which a budget is solved here."""
ROW_ROUNDING = 4
"""Round-off of the LP's budget and design rows, in EPS x the cheapest cost, the bound allows
for."""
STRICT = 1e-13
"""Relative row violation the designs here may have (round-off, not HiGHS's 1e-9)."""


def vertex_of(instance: Instance) -> CheapestVertex:
    """:func:`hieropt.solvers.cost_range.cheapest_vertex` of ``instance`` moved onto its active rows
    and bounds to round-off when it then still meets them; memoised per instance."""
    key = (instance.constraints, instance.bounds, instance.network, instance.cost)
    return instance.memo("_cheapest_vertex", key,
                         lambda: _polished(instance, cheapest_vertex(instance)))


def cheapest_anchor(instance: Instance) -> np.ndarray | None:
    """(D,) GB/s of :func:`vertex_of`, or None when it cannot be found."""
    try:
        return vertex_of(instance).bw_gbps
    except (NoSolutionError, SolverError):
        return None


def _polished(instance: Instance, v: CheapestVertex) -> CheapestVertex:
    dm = instance.design_matrix
    b0 = v.bw_gbps
    rows, at_bound, A, _, bound = _held(instance, b0)
    free = ~at_bound
    if not (rows.any() and free.any()):
        return v
    b = np.clip(_onto_rows(A, free, bound, b0.copy()), dm.bw_lower, dm.bw_upper)
    if not meets_rows(instance, b) or np.abs(b - b0).max() > 1e-6 * max(float(np.abs(b0).max()),
                                                                        1e-300):
        return v
    cost = float(cluster_cost_usd_per_gbps(instance) @ b)
    return replace(v, cost_usd=min(cost, v.cost_usd), bw_gbps=b)


def _held(instance: Instance, b0: np.ndarray):
    """What ``b0`` (GB/s) holds: (mask of the rows at a bound to 1e-9 of their size, mask of the
    dimensions at a bound, those rows, whether each is at its lower bound, that bound)."""
    dm = instance.design_matrix
    lhs = dm.A @ b0
    size = np.maximum(np.abs(dm.A * b0).sum(axis=1), np.abs(dm.rhs)) if dm.A.size else np.zeros(0)
    tol = 1e-9 * np.maximum(size, 1e-300)
    rows = (np.abs(lhs - dm.lower) <= tol) | (np.abs(lhs - dm.upper) <= tol)
    at_bound = (b0 <= dm.bw_lower * (1 + 1e-12)) | (b0 >= dm.bw_upper * (1 - 1e-12))
    A = dm.A[rows]
    floor = np.abs(A @ b0 - dm.lower[rows]) <= np.abs(A @ b0 - dm.upper[rows])
    return rows, at_bound, A, floor, np.where(floor, dm.lower[rows], dm.upper[rows])


def _onto_rows(A: np.ndarray, free: np.ndarray, target: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``x`` with its ``free`` entries solving A x = ``target`` (least squares), the others kept."""
    x[free] = np.linalg.lstsq(A[:, free], target - A[:, ~free] @ x[~free], rcond=None)[0]
    return x


def near_budget(instance: Instance, budget_usd: float, slack: float = NEAR_SLACK) -> bool:
    """Whether ``budget_usd`` ($) is within ``slack`` (relative) above the cheapest network's cost
    (> 0)."""
    c = vertex_of(instance).cost_usd
    return bool(c > 0 and c <= budget_usd <= c * (1 + slack))


def near_cheapest(instance: Instance, tm: TimeModel, budget_usd: float,
                  edges: bool = False) -> ReducedBudget | None:
    """The reduced budget row at ``budget_usd`` ($) when :func:`near_budget` and the cheapest
    network starves a loaded dimension with a reduced price; with ``edges`` also when it holds a
    loaded dimension at a nonzero bound with one (decision record 0007); else None."""
    v = vertex_of(instance)
    if not near_budget(instance, budget_usd):
        return None
    starved = not np.isfinite(tm.time_ns(v.bw_gbps))
    if not (starved or edges):
        return None
    reduced = reduced_budget_row(instance, v, budget_usd)
    if reduced is None:
        return None
    if starved and (reduced.coef[tm.carries_traffic] > 0).any():
        return reduced
    edge = any(key[0] != "row" and tm.carries_traffic[key[1]] for key, _, _ in reduced.slacks)
    return reduced if edges and edge else None


@dataclass(frozen=True)
class ReducedBudget:
    """The reduced budget row sum_d coef_d B_d <= room_usd over the starved dimensions (decision
    record 0007), valid for every design within the budget.

    Attributes:
        vertex: the cheapest network whose duals state the row; budget_usd: the budget, $.
        coef: (D,) $ per GB/s, the reduced prices of the starved dimensions (0 elsewhere).
        room_usd: the right-hand side, $.
        slacks: (key, coef $ per unit, cap) of the exact row's terms on a row's slack column
            (:func:`hieropt.formulation.ratio_arrays.compile_ratio_lp`'s ``slacks``).
        exact_rhs_usd: the exact row's right-hand side, $ (rounded up)."""

    vertex: CheapestVertex
    budget_usd: float
    coef: np.ndarray
    room_usd: float
    slacks: tuple[tuple[tuple[str, int], float, float], ...]
    exact_rhs_usd: float


def reduced_budget_row(instance: Instance, vertex: CheapestVertex,
                       budget_usd: float) -> ReducedBudget | None:
    """The reduced budget row at ``budget_usd`` ($) from the duals y of ``vertex``, or None when a
    dimension has no price. With Dantzig's reduced prices r = p - A'y, p.B = y.(A B) + r.B, so

            sum_starved r_d B_d + sum_i |y_i| s_i + sum_edge |r_d| sigma_d
                <= budget - y.b - sum_edge r_d edge_d

    (s_i, sigma_d >= 0 the distances from the bounds held). In exact rationals: the duals corrected
    so that r = 0 exactly where the cheapest network fills, each float's rounding added to the
    right-hand side, rounded up."""
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
    r = _reduced_prices(P, A, Y)
    basic = [d for d in range(D) if abs(r[d]) <= Fraction(1, 10**12) * P[d]]
    Y, r = _corrected(P, A, Y, r, basic)
    B = Fraction(float(budget_usd))
    rhs = B - sum((Y[i] * Fraction(float(bound[i])) for i in range(m) if Y[i] != 0), Fraction(0))
    # a dimension left at a bound other than 0 keeps its term's least value there (an edge)
    starved = [d for d in range(D) if d not in basic and r[d] > 0 and dm.bw_lower[d] <= 0]
    edges = [d for d in range(D) if d not in basic and d not in starved and r[d] != 0]
    for d in edges:
        edge = dm.bw_lower[d] if r[d] > 0 else dm.bw_upper[d]
        if not np.isfinite(edge):
            return None
        rhs -= r[d] * Fraction(float(edge))
    coef = np.zeros(D)
    # a reduced price of 0 but for rounding (no exact correction): its largest term, at budget / p_d
    margin = sum((abs(r[d]) * _reach(dm, d, B / P[d]) for d in basic), Fraction(0))
    room = max(rhs + margin, Fraction(0))  # (every term below is >= 0; they sum to at most this)
    for d in starved:  # each B_d <= room / r_d (the other terms are >= 0), and at most budget / p_d
        coef[d] = float(r[d])
        margin += abs(r[d] - Fraction(coef[d])) * _reach(dm, d, min(room / r[d], B / P[d]))
    # the exact row's slack terms: |y_i| of an inequality row, |r_d| of a dimension at its edge
    terms = [(("row", i), abs(Y[i])) for i in range(m) if Y[i] != 0 and dm.lower[i] != dm.upper[i]]
    terms += [(("lower" if r[d] > 0 else "upper", d), abs(r[d])) for d in edges]
    exact_margin = margin + sum((abs(c - Fraction(float(c))) * (room / c) for _, c in terms),
                                Fraction(0))
    slacks = tuple((key, float(c), round_outwards(room / c, up=True)) for key, c in terms)
    return ReducedBudget(vertex, budget_usd, coef, round_outwards(rhs + margin, up=True), slacks,
                         round_outwards(rhs + exact_margin, up=True))


def _reduced_prices(P: list[Fraction], A: list[list[Fraction]],
                    Y: list[Fraction]) -> list[Fraction]:
    """r = p - A'y in exact rationals ($ per GB/s)."""
    return [P[d] - sum((A[i][d] * Y[i] for i in range(len(Y))), Fraction(0)) for d in range(len(P))]


def _corrected(P: list[Fraction], A: list[list[Fraction]], Y: list[Fraction], r: list[Fraction],
               basic: list[int]) -> tuple[list[Fraction], list[Fraction]]:
    """``Y`` and ``r`` moved so that r = 0 exactly on the ``basic`` dimensions (a square system
    whose solution keeps every multiplier's sign); else unchanged."""
    used = [i for i in range(len(Y)) if Y[i] != 0]
    if not basic or len(used) != len(basic):
        return Y, r
    dy = _solve_exact([[A[i][d] for i in used] for d in basic], [r[d] for d in basic])
    if dy is None:
        return Y, r
    Y2 = list(Y)
    for i, v in zip(used, dy, strict=True):
        Y2[i] += v
    if not all((Y2[i] > 0) == (Y[i] > 0) for i in used):
        return Y, r
    return Y2, _reduced_prices(P, A, Y2)


def _reach(dm, d: int, top: Fraction) -> Fraction:
    """The most bandwidth dimension ``d`` may have (GB/s, exact): ``top`` within its bound."""
    return min(top, Fraction(float(dm.bw_upper[d]))) if np.isfinite(dm.bw_upper[d]) else top


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


def complete(instance: Instance, reduced: ReducedBudget, bw: np.ndarray) -> list[np.ndarray]:
    """Designs (GB/s) within the rows to :data:`STRICT` and the budget from an LP point ``bw``
    (GB/s): the cheapest network with the starved dimensions at ``bw``'s, the dimensions at a
    bound kept or moved with ``bw``, the rest on the active rows (least squares), scaled onto the
    budget (:func:`hieropt.solvers.line_search.onto_budget`); also the segment towards ``bw``. []
    when none."""
    dm = instance.design_matrix
    b0 = reduced.vertex.bw_gbps
    rows, at_bound, A, floor, bound = _held(instance, b0)
    z = reduced.coef != 0
    fixed, free = at_bound & ~z, ~at_bound & ~z
    lp = np.clip(bw, dm.bw_lower, dm.bw_upper) - b0
    # an inequality row active at the cheapest network may stay, or move off as the LP's point does
    lhs0, lhs = A @ b0, A @ (b0 + lp)
    lower, upper = dm.lower[rows], dm.upper[rows]
    off = np.where(lower == upper, 0.0, np.where(floor, np.maximum(lhs - lower, 0.0),
                                                 np.minimum(lhs - upper, 0.0)))
    deltas = []
    for move in ((False, True) if fixed.any() else (False,)):
        for follow in ((False, True) if off.any() else (False,)):
            delta = np.where(z | (fixed & move), lp, 0.0)
            if rows.any() and free.any():
                delta = _onto_rows(A, free, bound - lhs0 + (off if follow else 0.0), delta)
            deltas.append(delta)
    deltas.append(within_rows(instance, bw, b0) - b0)
    p = cluster_cost_usd_per_gbps(instance)
    # (a point clipped at 0 costs less: p > 0 where a reduced row exists)
    points = (onto_budget(p, b0, b0 + d, reduced.budget_usd, fill) for d in deltas
              for fill in (False, True))
    points = (np.maximum(b, 0.0) for b in points if b is not None)
    return [b for b in points if dm.max_violation(b) <= STRICT
            and (b >= dm.bw_lower).all() and (b <= dm.bw_upper).all()]


def fastest_near_cheapest(core, reduced: ReducedBudget, rel_gap: float) -> OAResult:
    """The fastest design within the budget of ``reduced`` (:func:`near_cheapest`) on the instance
    and time model of ``core`` (a :class:`hieropt.solvers.cutting.TimeLP`, which counts the LPs):
    OAResult in ns. Two passes on one cost-share LP: the exact row alone, then (if that misses
    the gap) with the share row, its rounding (:data:`ROW_ROUNDING`) taken off the bound; designs
    ranked by their time over what the bound gives up for them (:func:`_excess_usd`).

    Raises:
        NoSolutionError: the budget leaves a loaded dimension no bandwidth, or no finite
            design was found."""
    instance, tm, time_limit_s = core.instance, core.tm, core.solver.time_limit_s
    vertex, budget_usd = reduced.vertex, reduced.budget_usd
    dm = instance.design_matrix
    room = reduced.room_usd
    for d in np.flatnonzero(tm.carries_traffic):  # (the most B_d the row allows: room / coef_d)
        c = reduced.coef[d]
        if dm.bw_lower[d] <= 0 and c > 0 and room / c <= dm.bw_lower[d]:
            raise NoSolutionError("infeasible", (
                f"the budget ${usd_cents(budget_usd, up=False)} is the cheapest network's cost "
                f"(${usd_cents(vertex.cost_usd, up=True)}) to within round-off, and every design "
                f"within it has bw[{d}] = 0 on dimension {d}, which carries traffic: no finite "
                "iteration time"))
    p = cluster_cost_usd_per_gbps(instance)
    keys_caps = {key: cap for key, _, cap in reduced.slacks}
    rc = RatioCore(instance, tm, budget_usd / float(p.sum()), time_limit_s, budget_usd, prune=True,
                   share_units_gbps=_units(tm, vertex.bw_gbps, reduced), exact_rows=True,
                   slacks=tuple(keys_caps))
    loop_gap = rel_gap * (1 - 1e-3)

    def repair(bw: np.ndarray) -> list[np.ndarray]:
        return complete(instance, reduced, bw)

    def share(bw: np.ndarray) -> float:  # (of the room: what the design may use beyond it)
        return min(1.0, _excess_usd(instance, reduced, bw) / room) if room > 0 else 0.0

    def scorer(allowance: float):  # T / (1 - what the bound gives up for this design)
        def score(bw: np.ndarray) -> float:
            keep = (1 - share(bw)) * (1 - allowance)
            return tm.time_ns(bw) / keep if keep > 0 else INF
        return score

    passes: list[tuple[OAResult, float]] = []  # (outcome, the share its bound allows for its rows)
    try:
        if room > 0:
            rc.add_rows(reduced.coef[None, :], np.array([-INF]), np.array([reduced.exact_rhs_usd]),
                        budget_usd, slack_coef=[{key: c for key, c, _ in reduced.slacks}],
                        slack_cap=keys_caps)
            try:
                passes.append((rc.fastest_within(budget_usd, loop_gap, repair=repair,
                                                 budget_row=False, score=scorer(0.0)), 0.0))
            except NoSolutionError:
                pass  # (the second pass says why, with the budget row)
        if not passes or _combined(passes, tm, share).gap > rel_gap:
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
    core.lps += rc.lps
    c = vertex.cost_usd  # (a miss of the gap by the round-off of a cost says so)
    return out.settled(rel_gap, None if allowance < 0.5 * rel_gap else (
        f"the budget is only ${room:.3g} ({room / c:.2g} of it) above the cheapest network "
        f"(${usd_cents(c, up=True)}), and the design found meets the rows and the budget only to "
        f"the round-off of a cost (about ${EPS * c:.2g}), which leaves the time undecided within "
        "that gap"))


def _combined(passes: list[tuple[OAResult, float]], tm: TimeModel, share) -> OAResult:
    """One outcome of the passes: the design of least score with its time, the best bound lowered by
    its pass's rounding and by ``share`` of the design."""
    found = [o for o, _ in passes if o.bw is not None and np.isfinite(o.upper)]
    best = min(found, key=lambda o: o.upper) if found else passes[-1][0]
    lower = max((o.lower * (1 - a) if np.isfinite(o.lower) else o.lower) for o, a in passes)
    lps = sum(o.iterations for o, _ in passes)
    if best.bw is None:
        return replace(best, lower=lower, iterations=lps)
    T = tm.time_ns(best.bw)
    return replace(best, upper=T, lower=min(lower, T) * (1 - share(best.bw)), iterations=lps)


def _excess_usd(instance: Instance, reduced: ReducedBudget, bw: np.ndarray) -> float:
    """$ (>= 0, exact) ``bw`` may use beyond the budget: its cost above it plus each row's violation
    weighted by the cheapest network's dual."""
    dm = instance.design_matrix
    out = max(exact_dot(cluster_cost_usd_per_gbps(instance), bw) - Fraction(reduced.budget_usd),
              Fraction(0))
    for i, y in enumerate(reduced.vertex.row_duals):
        if y == 0:
            continue
        lhs = exact_dot(dm.A[i], bw)
        miss = Fraction(float(dm.lower[i])) - lhs if y > 0 else lhs - Fraction(float(dm.upper[i]))
        out += abs(Fraction(float(y))) * max(miss, Fraction(0))
    return float(out)


def _units(tm: TimeModel, b0: np.ndarray, reduced: ReducedBudget) -> np.ndarray:
    """(D,) GB/s share units near the cheapest network b0: b0_d plus the square-root split of the
    room (sqrt(M_d / r_d)) where r_d > 0; elsewhere b0_d (or the largest)."""
    r = reduced.coef
    M = bytes_per_dim(tm)
    room = max(reduced.room_usd, 0.0)
    units = b0.astype(float).copy()
    pos = r > 0
    if pos.any() and room > 0:
        w = np.sqrt(np.where(M[pos] > 0, M[pos], M[pos].max(initial=0.0) or 1.0) / r[pos])
        units[pos] = b0[pos] + w * (room / float(r[pos] @ w))
    top = float(units.max(initial=0.0))
    return np.where(units > 0, units, top if top > 0 else 1.0)


def sharpened(out: OAResult, case) -> OAResult:
    """The time LP's outcome ``out`` of a budget ``case``, or, when it misses the gap on a budget of
    :func:`near_cheapest` with ``edges``, :func:`fastest_near_cheapest`'s when its gap is smaller
    (decision record 0007); its LPs added to ``case.core``."""
    core, budget = case.core, case.budget_usd
    if budget is None or not out.gap > case.rel_gap:
        return out
    reduced = near_cheapest(core.instance, core.tm, budget, edges=True)
    if reduced is None:
        return out
    try:
        exact = fastest_near_cheapest(core, reduced, case.rel_gap)
    except (NoSolutionError, SolverError):
        return out
    return exact if exact.bw is not None and exact.gap < out.gap else out
