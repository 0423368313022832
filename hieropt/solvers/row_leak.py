"""A budget candidate that holds the design rows exactly, for budgets a hair above the cheapest
network.

An LP point meets a design row only to HiGHS's tolerance, and
:func:`hieropt.solvers.line_search.within_budget` moves a point over budget onto it by scaling its
bandwidth towards the lower bounds, which moves an equality row (``sum(bw) == S``) off its value by
as much. Either way the row is met to 1e-12 of its size, well within
:data:`~hieropt.solvers.line_search.ROW_TOL`; but a row short by 3e-9 GB/s on dimensions of $2e6
per GB/s frees $6e-3 of cost, which near the cheapest network is many times the room the budget
leaves above it ($1.8e-4 for a budget 1e-13 above a $1.8e9 network). That design is faster than
every design exactly within the budget, so the loop's Lagrangian bound, valid for those, lies above
its time. :func:`row_exact_candidate` states such a candidate again: projected onto the rows it
misses or holds at a bound (least squares on the dimensions inside their bounds), then moved onto
the budget towards the cheapest network (which holds every row), so the rows stay met to
round-off.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import NoSolutionError, SolverError
from ..spec import Instance
from .line_search import meets_rows
from .near_cheapest import NEAR_SLACK, vertex_of

__all__ = ["LEAK_SHARE", "LEAK_ULPS", "row_leak_usd", "row_exact_candidate"]

LEAK_SHARE = 1e-6
"""Share of the room above the cheapest network that a candidate's row misses may be worth before
it is stated again on exact rows."""
LEAK_ULPS = 64
"""...and the number of units in the last place of the cheapest network's cost they must be worth
too: a float design holds its rows and cost only to a few such units (the designs stated again
differ from the LP's by that round-off and no more), while a row held to HiGHS's tolerance frees
thousands of them."""
EPS = float(np.finfo(float).eps)


def row_leak_usd(instance: Instance, bw: np.ndarray, price_usd_per_gbps: np.ndarray) -> float:
    """An upper estimate of the cost ($) that ``bw`` (GB/s, shape (D,)) saves by missing design
    rows: each row's miss (GB/s-weighted units of the row) times the dearest price per unit of that
    row among its dimensions (``price_usd_per_gbps``: (D,) $ per GB/s); 0 when every row holds."""
    dm = instance.design_matrix
    if not dm.A.size:
        return 0.0
    lhs = dm.A @ bw
    miss = np.abs(lhs - np.clip(lhs, dm.lower, dm.upper))
    with np.errstate(divide="ignore", invalid="ignore"):
        per_unit = np.where(dm.A != 0, price_usd_per_gbps / np.abs(dm.A), 0.0).max(axis=1)
    return float(miss @ per_unit)


def row_exact_candidate(instance: Instance, bw: np.ndarray, candidate: np.ndarray,
                        budget_usd: float, price_usd_per_gbps: np.ndarray) -> np.ndarray | None:
    """An LP point ``bw`` (GB/s, shape (D,), within the bounds) as a candidate within
    ``budget_usd`` ($) that meets the design rows to round-off, when the budget is within
    :data:`~hieropt.solvers.near_cheapest.NEAR_SLACK` above the cheapest network and the caller's
    ``candidate`` for it (GB/s) misses rows worth more than :data:`LEAK_SHARE` of the room above
    that network and :data:`LEAK_ULPS` units in the last place of its cost (:func:`row_leak_usd`);
    None otherwise (the caller's candidate stands).
    ``price_usd_per_gbps``: (D,) the cluster's $ per GB/s of each dimension.

    The point is projected onto every row it misses or holds to 1e-9 of its size (onto that bound;
    least squares on the dimensions strictly inside their bounds), then, when over budget, moved
    towards the cheapest network c (:func:`hieropt.solvers.near_cheapest.vertex_of`, on its rows
    to round-off): c + f (x - c), the largest f whose cost is within the budget in exact rational
    arithmetic (both ends hold every row, so the point does; each entry's rounding is paid from f).
    Returns None also when the projection or the move fails (a row or bound then missed by more
    than :data:`~hieropt.solvers.line_search.ROW_TOL`)."""
    leak = row_leak_usd(instance, candidate, price_usd_per_gbps)
    # (near the cheapest network its cost is at least budget / (1 + NEAR_SLACK): no LP when the
    # leak is round-off)
    if not leak > LEAK_ULPS * EPS * budget_usd / (1 + NEAR_SLACK):
        return None
    try:
        v = vertex_of(instance)
    except (NoSolutionError, SolverError):
        return None
    room = budget_usd - v.cost_usd
    if not (v.cost_usd > 0 and 0 <= room <= NEAR_SLACK * v.cost_usd):
        return None
    if leak <= max(LEAK_SHARE * room, LEAK_ULPS * EPS * v.cost_usd):
        return None
    x = _onto_rows(instance, bw)
    if x is None:
        return None
    prices = [Fraction(float(c)) for c in price_usd_per_gbps]
    budget = Fraction(float(budget_usd))
    anchor = v.bw_gbps
    if _exact_cost(prices, anchor) > budget:
        return None
    cost, base = _exact_cost(prices, x), _exact_cost(prices, anchor)
    if cost <= budget:
        return x
    f = float((budget - base) / (cost - base))
    for _ in range(8):  # (the rounding of each entry may cost more than the room: step back by it)
        point = anchor + f * (x - anchor)
        over = _exact_cost(prices, point) - budget
        if over <= 0:
            return point if meets_rows(instance, point) else None
        f -= max(2 * float(over / (cost - base)), 1e-12 * f)
    return None


def _exact_cost(prices: list[Fraction], bw: np.ndarray) -> Fraction:
    """The cost of ``bw`` ($), exact."""
    return sum((p * Fraction(float(b)) for p, b in zip(prices, bw, strict=True)), Fraction(0))


def _onto_rows(instance: Instance, bw: np.ndarray) -> np.ndarray | None:
    """``bw`` moved onto the design rows it misses or holds to 1e-9 of their size (each onto that
    bound), the dimensions strictly inside their bounds moving (least squares); None when that
    leaves a row or bound missed by more than
    :data:`~hieropt.solvers.line_search.ROW_TOL`."""
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
