"""Sensitivity of the fastest network within a budget a hair above the cheapest network (the budgets
:mod:`hieropt.solvers.near_cheapest` solves, and others within 1e-1 of the cheapest cost where the
LP's values fail), by differences of exact re-solves.

There V is set by the room above the cheapest network (budget - cheapest cost, 1e-13 ... 1e-2 of
the cost) and grows like 1 / room. The multipliers of :mod:`hieropt.solvers.sensitivity`, read at
+-1e-6 of each parameter, neither resolve the room nor stay inside it. So each parameter theta moves
by steps h that change the room by :data:`NEAR_STEP` of itself (h = NEAR_STEP x room / |d room / d
theta|, d room / d theta from the cheapest network's multipliers; at most NEAR_STEP of the
parameter's size), and V is re-solved exactly at theta +- h and +- 2h. One-sided derivatives are
the Richardson extrapolations 2 D(h) - D(2h) of the secants D (error O(h^2)); where the two sides
agree within :data:`~hieropt.solvers.sensitivity.KINK_TOL` the value is the central difference
extrapolated the same way ((4 C(h) - C(2h)) / 3, error O(h^4)). A budget the optimum leaves more
than NEAR_STEP of the room unspent does not bind. Ranges: the central difference at growing steps
of the same scale. :mod:`hieropt.solvers.sensitivity_check` then holds the values against two more
exact solves each, at the steps :func:`near_sensitivity` returns.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from ..errors import HieroptError, NoSolutionError, SolverError
from ..model.cost import cluster_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..result import Marginal, Sensitivity, Solution
from ..spec import Instance
from .near_cheapest import reduced_budget_row, vertex_of
from .sensitivity import KINK_TOL, UNITS, Param, holds_over, parameters, slack_range

__all__ = ["near_sensitivity", "NEAR_STEP", "CHECK_STEP"]

NEAR_STEP = 1e-3
"""Step of the differences, as the share of the room above the cheapest network it moves."""
CHECK_STEP = 1e-2
"""Step of the independent secant check (:mod:`hieropt.solvers.sensitivity_check`), the same way."""
METHOD = ("differences of exact re-solves (steps 1e-3 of the room above the cheapest network; "
          "Richardson-extrapolated, one-sided at kinks)")


def _rates(inst: Instance, params: list[Param]) -> list[float]:
    """d room / d theta ($ per unit) of each parameter, from the cheapest network's multipliers: 1
    for the budget, -y_i for design row i, -r_d for a bound of dimension d or a free GB/s on it (r =
    p - A'y)."""
    dm = inst.design_matrix
    y = vertex_of(inst).row_duals
    p = cluster_cost_usd_per_gbps(inst)
    r = p - dm.A.T @ y if dm.A.size else p.copy()
    return [1.0 if q.kind == "budget"
            else -float(y[q.index] if q.kind == "constraint" else r[q.index]) for q in params]


def near_sensitivity(inst: Instance, tm: TimeModel, sol: Solution,
                     solve: Callable[[Instance], Solution], *, ranges: bool = False
                     ) -> tuple[Sensitivity, dict[str, float], tuple[str, ...]]:
    """Marginal values of every parameter at the optimum ``sol`` of the fastest network within the
    budget of ``inst``, a hair above the cheapest network (module docstring), the secant check's
    step of each (by name), and notes on the parameters left out: those whose marginal value is
    below what the re-solves resolve (under 10 x 5 / h times their certified gaps x V: near the
    cheapest network, e.g. a GB/s more on a dimension it fills, worth 1e-12 of the time).

    Args:
        inst: the instance (objective performance, with its budget); tm: its time model.
        sol: its certified optimum.
        solve: the certified solve of a moved instance (:func:`hieropt.solvers.objectives.solve`,
            same objective).
        ranges: also the range over which each value holds.

    Raises:
        SolverError: a re-solve stopped short of its gap (the values would be noise).
    """
    start = time.perf_counter()
    reduced = reduced_budget_row(inst, vertex_of(inst), float(inst.max_network_cost_usd))
    room = reduced.room_usd if reduced is not None else 0.0
    if not room > 0:
        raise SolverError("the budget is the cheapest network's cost to within round-off: no "
                          "room to move")
    v0 = sol.objective_value
    cache: dict[tuple[str, float], tuple[float, float] | None] = {}

    def value(p: Param, delta: float) -> float | None:
        """V (ns) with ``p`` moved by ``delta`` (None: infeasible); its certified error is kept in
        ``cache``."""
        key = (p.name, delta)
        if key not in cache:
            try:
                other = solve(p.moved(delta))
            except NoSolutionError:
                cache[key] = None
            else:
                if not other.success:
                    raise SolverError(f"a sensitivity re-solve ({p.name} moved by {delta:+.3g}) "
                                      f"stopped short of its gap: {other.message}")
                cache[key] = (other.objective_value, other.gap * other.objective_value)
        return None if cache[key] is None else cache[key][0]

    marginals, steps, unresolved = [], {}, []
    params = parameters(inst, tm, sol.bw_gbps)
    for p, rate in zip(params, _rates(inst, params), strict=True):
        reach = min(p.scale, room / abs(rate)) if rate != 0 else p.scale  # (the scale V changes on)
        h = NEAR_STEP * reach
        steps[p.name] = min(1e-4 * max(abs(p.current), 1e-9), CHECK_STEP * reach)
        # a row with slack never binds
        if (p.slack or 0.0) > (NEAR_STEP * room if p.kind == "budget" else 1e-9 * p.scale):
            rng = slack_range(p) if ranges else None
            marginals.append(Marginal(p.name, p.kind, f"ns {UNITS[p.kind]}", p.current, 0.0, 0.0,
                                      0.0, False, rng))
            continue
        up1, up2, dn1, dn2 = (value(p, s * h) for s in (1, 2, -1, -2))
        up = None if up1 is None or up2 is None else 2 * (up1 - v0) / h - (up2 - v0) / (2 * h)
        dn = None if dn1 is None or dn2 is None else 2 * (v0 - dn1) / h - (v0 - dn2) / (2 * h)
        # what the certified gaps leave of each difference (5 / h times the largest error of the
        # values used)
        errs = (c[1] for k, c in cache.items() if k[0] == p.name and c is not None)
        err = sol.gap * v0 + max(errs, default=0.0)
        resolution = 5 * err / h
        both = [g for g in (up, dn) if g is not None]
        if both and max(abs(g) for g in both) < 10 * resolution:
            unresolved.append((p, resolution))
            continue
        smooth = (up is not None and dn is not None
                  and abs(up - dn) <= max(KINK_TOL * max(abs(up), abs(dn)), 2 * resolution))
        mid = (4 * (up1 - dn1) / (2 * h) - (up2 - dn2) / (4 * h)) / 3 if smooth else None
        rng = holds_over(p, mid, up, dn, reach, partial(_central, value, p, h)) if ranges else None
        marginals.append(Marginal(p.name, p.kind, f"ns {UNITS[p.kind]}", p.current, mid, up, dn,
                                  True, rng))
    budget = next((m for m in marginals if m.kind == "budget"), None)
    g = None if budget is None else (budget.value if budget.value is not None else budget.increase)
    usd_per_ms, note = ((1e6 / abs(g), "the budget's marginal value: $ per ms of iteration time "
                         "saved by spending more") if g else (None, "not resolved"))
    notes = tuple(
        f"{p.name}: its marginal value is below what exact re-solves resolve at this budget "
        f"(|value| < {10 * r:.3g} ns {UNITS[p.kind]}: the time moves by less than the re-solves' "
        "certified gaps)" for p, r in unresolved)
    return Sensitivity("performance", "ns", tuple(marginals), usd_per_ms, note,
                       METHOD + ("; ranges by exact re-solves" if ranges else ""),
                       time.perf_counter() - start), steps, notes


def _central(value, p: Param, h: float, at: float) -> float | None:
    """The central difference of V (``value``: V with ``p`` moved) over +-``h`` around ``p``
    moved by ``at``; None where a side is infeasible or its re-solve fails."""
    try:
        a, b = value(p, at + h), value(p, at - h)
    except HieroptError:
        return None
    return None if a is None or b is None else (a - b) / (2 * h)
