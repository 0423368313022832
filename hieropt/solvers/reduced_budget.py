"""The reduced budget row near the cheapest network (:mod:`hieropt.solvers.near_cheapest`): LP
duality at the cheapest network (Dantzig's reduced costs), in exact rational arithmetic.

With row multipliers y of the cheapest-network LP
(:func:`hieropt.solvers.cost_range.cheapest_vertex`) and reduced prices r = p - A'y, every design
has p.B = y.(A B) + r.B identically, and within a budget

    sum_starved r_d B_d + sum_i |y_i| s_i + sum_edge |r_d| sigma_d <= budget - y.b - sum_edge r_d
    edge_d

(the exact row): s_i >= 0 is the distance of an inequality row with a multiplier from the bound the
cheapest network holds it at, sigma_d >= 0 that of a dimension held at a bound other than 0 (its
edge), and the dimensions the cheapest network fills have r_d = 0. Every term is >= 0 and the
right-hand side is the room above the cheapest network itself, not a difference of two numbers of
the cost's size. Dropping the slack terms gives the reduced budget row on the starved dimensions
alone (a relaxation, for a cost-share LP that keeps its budget row).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..model.cost import cluster_cost_usd_per_gbps
from ..spec import Instance
from .cost_range import CheapestVertex

__all__ = ["ReducedBudget", "reduced_budget_row", "round_outwards"]

INF = float("inf")


@dataclass(frozen=True)
class ReducedBudget:
    """The reduced budget row sum_d coef_d B_d <= rhs_usd (module docstring), valid for every design
    within the budget; ``room_usd`` = rhs_usd - coef . B0 at the cheapest design B0 (the slack as
    the row sees it), ``cap_gbps`` (D,) the largest B_d the row allows each dimension (inf where its
    coefficient is not positive)."""

    coef: np.ndarray
    rhs_usd: float
    room_usd: float
    cap_gbps: np.ndarray
    slacks: tuple[tuple[tuple[str, int], float, float], ...] = ()
    """(key, coef $ per unit, cap): the other terms of the exact budget
    (:func:`reduced_budget_row`), each on a row's slack column
    (:func:`hieropt.formulation.ratio_arrays.compile_ratio_lp`'s ``slacks``): coef x the row's
    distance from its bound, at most ``cap`` (rhs / coef, rounded up)."""
    exact_rhs_usd: float = INF
    """The right-hand side of the exact row coef . B + sum of the slack terms <= exact_rhs_usd: the
    budget itself, every term >= 0 (so resolved to the room, not to the cost), rounded up for every
    float coefficient."""


def reduced_budget_row(instance: Instance, vertex: CheapestVertex,
                       budget_usd: float) -> ReducedBudget | None:
    """The reduced budget row at ``budget_usd`` ($) from the duals of ``vertex`` (module docstring),
    or None when a dimension has no price (its bandwidth, and so the rounding margin, would be
    unbounded).

    Computed in exact rational arithmetic (:class:`fractions.Fraction`; a few rows and dimensions):
    the duals are first corrected so that the reduced prices of the dimensions the cheapest network
    fills are exactly 0 (HiGHS's duals leave 1e-16 of the price there, which at the budget / price
    such a dimension may reach is 1e-16 of the cost: the whole slack of a budget 1e-16 above the
    cheapest), then each reduced price is rounded to a float and the rounding, at the most bandwidth
    the row allows that dimension, is added to the right-hand side, which is rounded up: the float
    row holds for every design within the budget."""
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
    # a dimension the cheapest network leaves at a bound other than 0 keeps its term's least value
    # there (r_d B_d >= r_d lo_d): the row then has only the starved dimensions, each term >= 0, and
    # its right-hand side is the slack itself, not a difference of two terms of the cost's size
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
    # a reduced price of 0 but for rounding (no exact correction): its largest term, at budget / p_d
    for d in basic:
        basic_margin += abs(r[d]) * _reach(dm, d, B / P[d])
    # every term below is >= 0, and they sum to at most this
    room = max(rhs + basic_margin, Fraction(0))
    margin = basic_margin
    for d in starved:  # each B_d <= room / r_d (the other terms are >= 0), and at most budget / p_d
        c = float(r[d])
        coef[d] = c
        margin += abs(r[d] - Fraction(c)) * _reach(dm, d, min(room / r[d], B / P[d]))
    # the exact row: the same terms and those the row above leaves at their least value, each as the
    # distance from a bound (a slack >= 0 of its own): |y_i| (A_i B - b_i) of an inequality row with
    # a multiplier, |r_d| times B_d's distance from the bound the cheapest network holds it at
    terms = _slack_terms(dm, Y, r, basic, starved)
    exact_margin = margin
    slacks = []
    for key, c in terms:
        cf = float(c)
        cap = room / c
        exact_margin += abs(c - Fraction(cf)) * cap
        slacks.append((key, cf, round_outwards(cap, up=True)))
    rhs_f = round_outwards(rhs + margin, up=True)
    with np.errstate(divide="ignore"):
        cap = np.where(coef > 0, rhs_f / np.where(coef > 0, coef, 1.0), np.inf)
    return ReducedBudget(coef, rhs_f, rhs_f, cap, tuple(slacks),
                         round_outwards(rhs + exact_margin, up=True))


def _reduced_prices(P: list[Fraction], A: list[list[Fraction]],
                    Y: list[Fraction]) -> list[Fraction]:
    """r = p - A'y, exact: the reduced price ($ per GB/s) of each dimension under the row
    multipliers ``Y`` (one per row of ``A``, one column per dimension)."""
    m = len(Y)
    return [P[d] - sum((A[i][d] * Y[i] for i in range(m)), Fraction(0)) for d in range(len(P))]


def _corrected(P: list[Fraction], A: list[list[Fraction]], Y: list[Fraction], r: list[Fraction],
               basic: list[int]) -> tuple[list[Fraction], list[Fraction]]:
    """The multipliers ``Y`` and reduced prices ``r``, moved so that r = 0 exactly on the ``basic``
    dimensions when as many rows have a multiplier (a square system) and the move keeps every
    multiplier's sign; else unchanged."""
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


def _slack_terms(dm, Y: list[Fraction], r: list[Fraction], basic: list[int],
                 starved: list[int]) -> list[tuple[tuple[str, int], Fraction]]:
    """The exact row's slack terms, (key, coefficient $ per unit): ("row", i) with |y_i| for an
    inequality row with a multiplier, ("lower" or "upper", d) with |r_d| for a dimension the
    cheapest network holds at that bound (neither basic nor starved, r_d != 0)."""
    rows = [(("row", i), abs(Y[i])) for i in range(len(Y))
            if Y[i] != 0 and dm.lower[i] != dm.upper[i]]
    return rows + [(("lower" if r[d] > 0 else "upper", d), abs(r[d])) for d in range(len(r))
                   if d not in basic and d not in starved and r[d] != 0]


def _reach(dm, d: int, top: Fraction) -> Fraction:
    """The most bandwidth dimension ``d`` may have (GB/s, exact): ``top``, within its upper
    bound."""
    return min(top, Fraction(float(dm.bw_upper[d]))) if np.isfinite(dm.bw_upper[d]) else top


def round_outwards(q: Fraction, up: bool) -> float:
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
