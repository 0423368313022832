"""Sensitivity of an optimum (:func:`with_sensitivity`): what each design row, bound, GB/s, the
budget and the time target is worth, from re-solves with one parameter theta moved, each value
checked against exact solves (:func:`check_marginals`) before it is reported. Method, formulas
and constants: docs/procurement-design.md §1 (multipliers of certified re-solves,
:func:`sensitivity`; near the cheapest network, Richardson differences of exact re-solves,
:func:`near_sensitivity`)."""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from ..errors import HieroptError, NoSolutionError, SolverError
from ..formulation.scale import MS_NS
from ..model.cost import cluster_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..result import Marginal, Sensitivity, Solution, Status
from ..spec import Bound, Instance
from ..units import RELATIVE_UNIT
from .cut_lp import Multipliers
from .cutting import INF, OAResult, TimeLP
from .dual_bound import transpose_product
from .near_cheapest import NEAR_SLACK, near_budget, near_cheapest, reduced_budget_row, vertex_of

__all__ = ["with_sensitivity", "sensitivity", "near_sensitivity", "check_marginals", "resolver",
           "parameters", "Param", "holds_over", "KINK_TOL", "RANGE_TOL", "RANGE_STEPS", "STEP",
           "FD_STEP", "FD_TOL", "NEAR_STEP", "CHECK_STEP"]

KINK_TOL = 1e-3  # (the constants as docs/procurement-design.md §1 names them)
RANGE_TOL = 0.10
RANGE_STEPS = (0.01, 0.03, 0.1, 0.3, 1.0)
STEP = 1e-6
SENS_GAP = 5e-9
FRONT_STEP = 1e-3
FD_STEP = 1e-4
FD_TOL = 0.02
NEAR_STEP = 1e-3
CHECK_STEP = 1e-2
METHOD = "multipliers of certified re-solves at +-1e-6 perturbations, one-sided at kinks"
NEAR_METHOD = ("differences of exact re-solves (steps 1e-3 of the room above the cheapest network; "
               "Richardson-extrapolated, one-sided at kinks)")
UNITS = {"constraint": "per unit of the right-hand side", "bound": "per GB/s",
         "bandwidth": "per GB/s", "budget": "per $", "time_target": "per ns"}
"""The unit of a marginal value of each kind of parameter, after the objective's unit."""


@dataclass(frozen=True)
class Param:
    """One parameter theta at an optimum: ``name`` as printed, ``kind`` (``constraint``, ``bound``,
    ``bandwidth`` = a free GB/s, ``budget``, ``time_target``), ``current`` and ``scale`` (user
    units: the row's, GB/s, $, ns), ``index`` (row or dimension), ``slack`` (distance from binding;
    None: not a row) and ``sense`` (``<=``, ``>=``, ``==``)."""

    name: str
    kind: str
    current: float
    scale: float
    instance: Instance
    index: int = -1
    slack: float | None = None
    sense: str = ""

    def moved(self, delta: float) -> Instance:
        """The instance with theta moved by ``delta`` (user units); a free GB/s moves every row,
        bound (a lower bound of 0 stays) and the budget on its B.

        Raises:
            ValueError: a bound moved past the other."""
        inst, d, sense = self.instance, self.index, self.sense
        if self.kind in ("budget", "time_target"):
            key = "max_network_cost_usd" if self.kind == "budget" else "max_iteration_time_ns"
            return inst.model_copy(update={key: self.current + delta})
        rows, bs = list(inst.constraints), list(inst.bounds_or_default)
        if self.kind == "constraint":
            rows[d] = rows[d].model_copy(update={"rhs": rows[d].rhs + delta})
            return inst.model_copy(update={"constraints": tuple(rows)})
        lo, hi = bs[d].lower_gbps, bs[d].upper_gbps
        if self.kind == "bound":
            lo = lo + delta if sense in (">=", "==") else lo
            hi = hi + delta if sense in ("<=", "==") else hi
            bs[d] = Bound(lower_gbps=max(lo, 0.0) if sense != "==" else lo, upper_gbps=hi)
            return inst.model_copy(update={"bounds": tuple(bs)})
        price = float(cluster_cost_usd_per_gbps(inst)[d])
        rows = [c.model_copy(update={"rhs": c.rhs + c.coefficients[d] * delta})
                if c.coefficients[d] else c for c in rows]
        bs[d] = Bound(lower_gbps=max(lo + delta, 0.0) if lo > 0 else lo,
                      upper_gbps=None if hi is None else hi + delta)
        budget = inst.max_network_cost_usd
        return inst.model_copy(update={
            "constraints": tuple(rows), "bounds": tuple(bs),
            "max_network_cost_usd": None if budget is None else budget + price * delta})


def parameters(inst: Instance, tm: TimeModel, bw: np.ndarray,
               objective: str = "performance") -> list[Param]:
    """The parameters at the optimum ``bw`` ((D,) GB/s): every design row, every bound it sits at
    (lower bounds of 0 aside; a fixed dimension as one), a free GB/s on every loaded dimension, the
    budget (not for ``performance_per_cost``) and the min_cost time target."""
    out, price = [], cluster_cost_usd_per_gbps(inst)
    pos = bw[bw > 0]
    mean = float(pos.mean()) if pos.size else 1.0
    for i, c in enumerate(inst.constraints):
        slack = abs(c.rhs - float(np.dot(c.coefficients, bw))) if c.sense != "==" else 0.0
        out.append(Param(f"constraint '{c.text}'", "constraint", c.rhs, max(abs(c.rhs), mean),
                         inst, i, slack, c.sense))
    for d, b in enumerate(inst.bounds_or_default):
        if b.lower_gbps == b.upper_gbps and b.lower_gbps > 0:
            out.append(Param(f"fixed bandwidth of bw[{d}]", "bound", b.lower_gbps, b.lower_gbps,
                             inst, d, sense="=="))
            continue
        for which, value, sense in (("lower", b.lower_gbps, ">="), ("upper", b.upper_gbps, "<=")):
            if (value is None or abs(bw[d] - value) > 1e-7 * max(value, 1e-12)
                    or (which == "lower" and value == 0)):
                continue
            out.append(Param(f"{which} bound of bw[{d}]", "bound", value, max(value, 1e-9), inst,
                             d, sense=sense))
    for d in np.flatnonzero(tm.carries_traffic).tolist():
        out.append(Param(f"bandwidth of dimension {d}", "bandwidth", float(bw[d]), float(bw[d]),
                         inst, d))
    budget, target = inst.max_network_cost_usd, inst.max_iteration_time_ns
    if budget is not None and objective != "performance_per_cost":
        out.append(Param("budget", "budget", budget, budget, inst,
                         slack=budget - float(price @ bw), sense="<="))
    if objective == "min_cost" and target is not None:
        out.append(Param("time target", "time_target", target, target, inst))
    return out


def resolver(solve: Callable[[Instance], Solution]) -> Callable[[Param, float], Solution | None]:
    """``at(p, delta)``: ``solve`` of the instance with ``p`` moved by ``delta`` (None where it has
    no design), each move solved once; errors propagate."""
    memo: dict[tuple[str, int, float], Solution | None] = {}

    def at(p: Param, delta: float) -> Solution | None:
        key = (p.name, p.index, delta)
        if key not in memo:
            try:
                memo[key] = solve(p.moved(delta)).raise_for_status()
            except NoSolutionError:
                memo[key] = None
        return memo[key]

    return at


def with_sensitivity(instance: Instance, tm: TimeModel, sol: Solution,
                     solve: Callable[[Instance], Solution], time_limit_s: float,
                     ranges: bool) -> Solution:
    """``sol`` (the certified optimum of ``instance``, time model ``tm``) with its sensitivity, or a
    note why none: multipliers, else (within 10 x
    :data:`~hieropt.solvers.near_cheapest.NEAR_SLACK` above a starving cheapest network, or where
    they fail) differences. ``solve``: the objective's solve of a moved instance;
    ``time_limit_s``: of each LP, s; ``ranges``: also each value's range."""
    obj, budget = instance.objective, instance.max_network_cost_usd
    params, at = parameters(instance, tm, sol.bw_gbps, obj), resolver(solve)
    near = obj == "performance" and budget is not None
    near = near and near_budget(instance, budget, 10 * NEAR_SLACK)
    starved = near and near_cheapest(instance, tm, budget) is not None
    reason, last = "", sol
    for way in ([] if starved else ["multipliers"]) + (["differences"] if near else []):
        last = sol
        try:
            if way == "multipliers":
                sens, steps, notes = sensitivity(instance, tm, obj, sol.bw_gbps, ranges=ranges,
                                                 time_limit_s=time_limit_s), {}, ()
            else:
                sens, steps, notes = near_sensitivity(instance, sol, params, at, ranges=ranges)
        except (SolverError, NoSolutionError) as e:  # (the optimum stands)
            reason = str(e)
            continue
        last = replace(sol, sensitivity=sens, notes=sol.notes + notes)
        if (reason := check_marginals(last, sens, params, at, steps)) is None:
            return last
    return replace(last, sensitivity=None,
                   notes=last.notes + (f"sensitivity not available: {reason}",))


def _resolve(inst: Instance, tm: TimeModel, objective: str,
             time_limit_s: float) -> tuple[OAResult, Multipliers | None]:
    """The optimum of ``inst`` certified to :data:`SENS_GAP` and the multipliers of its bound.

    Raises:
        NoSolutionError: infeasible; SolverError: short of its gap."""
    with closing(TimeLP(inst, tm, time_limit_s)) as core:
        budget = inst.max_network_cost_usd
        res = core.min_time(SENS_GAP, budget_usd=budget)
        if objective == "min_cost":
            target = inst.max_iteration_time_ns
            if res.upper > target:
                raise NoSolutionError("infeasible", "the time target is below the fastest time")
            res = core.min_cost(target, res.bw, SENS_GAP, budget)
        if res.status is not Status.OPTIMAL:
            raise SolverError(f"a sensitivity re-solve stopped short of its gap: {res.message}")
        return res, core.certificate


def sensitivity(instance: Instance, tm: TimeModel, objective: str, bw: np.ndarray, *,
                ranges: bool = True, time_limit_s: float = 60.0) -> Sensitivity:
    """Marginal values (ns, $ or ns*$ per unit) of every parameter at the certified optimum ``bw``
    ((D,) GB/s) of ``objective`` (``performance``, ``min_cost`` or ``performance_per_cost``), by
    multipliers; with ``ranges`` their ranges (not for performance per cost). ``time_limit_s``: of
    each LP, s.

    Raises:
        NoSolutionError: no optimum to re-solve.
        SolverError: a re-solve stopped short of its gap or has no multipliers."""
    start = time.perf_counter()
    bw = np.asarray(bw, dtype=float)
    kappa = None
    if objective == "performance_per_cost":
        kappa = float(cluster_cost_usd_per_gbps(instance) @ bw)
        instance = instance.model_copy(update={"max_network_cost_usd": kappa})

    def slope(p: Param, delta: float) -> float | None:
        """dV/d theta with ``p`` moved by ``delta``, from the multipliers there; None:
        infeasible."""
        try:
            res, m = _resolve(p.moved(delta), tm, objective, time_limit_s)
        except NoSolutionError:
            return None
        if m is None:
            raise SolverError(f"a sensitivity re-solve ({p.name} moved by {delta:+.3g}) has no "
                              "multipliers")
        arr, sc, u = m.arr, m.scale, m.duals
        unit = sc.cost_usd if objective == "min_cost" else sc.time_ns  # V per scaled unit

        def bound_slope(d: int, with_reduced_cost: bool = True) -> float:
            # the Lagrangian's derivative in B_d's bound, g_d - P_d / B_d^2, or in a bonus on d
            r = m.costs - transpose_product(arr, np.asarray(u[:arr.n_rows], dtype=float))
            P = float(r[arr.t_col[d]]) if arr.t_col[d] >= 0 else 0.0
            B = float(res.bw[d] / sc.bw_gbps[d])
            g = float(r[arr.b_col[d]]) if with_reduced_cost else 0.0
            return (g - (P / B**2 if P else 0.0)) * unit / float(sc.bw_gbps[d])

        if p.kind == "constraint":
            row = float(u[arr.design.start + p.index]) * unit / float(arr.row_scale[p.index])
            implied = _implied_bound(p.moved(delta), p.index, res.bw)
            if implied is None:
                return row
            d, a = implied  # (the column bound the row sets in the LP shares its dual)
            return row + bound_slope(d) / a
        if p.kind == "budget":
            return float(u[arr.budget_row]) * unit / sc.cost_usd
        if p.kind == "time_target":
            return float(u[arr.time_row]) * sc.cost_usd / sc.time_ns
        return bound_slope(p.index, with_reduced_cost=p.kind == "bound")

    v0 = _resolve(instance, tm, objective, time_limit_s)[0].upper
    unit = {"performance": "ns", "min_cost": "$", "performance_per_cost": "ns*$"}[objective]
    if instance.relative_time:  # (shares of hours: the time is the hour-weighted ratio)
        unit = unit.replace("ns", RELATIVE_UNIT)
    marginals = []
    for p in parameters(instance, tm, bw, objective):
        mg = _marginal(p, v0, partial(slope, p), ranges and kappa is None)
        if kappa is not None:  # envelope over kappa: dV/dtheta = kappa* df/dtheta
            value, up, dn = (None if x is None else x * kappa
                             for x in (mg.value, mg.increase, mg.decrease))
            mg = replace(mg, value=value, increase=up, decrease=dn)
        marginals.append(replace(mg, unit=f"{unit} {UNITS[mg.kind]}"))
    usd_per_ms, note = _front_slope(instance, tm, objective, marginals, v0, time_limit_s)
    return Sensitivity(objective, unit.replace("$", "USD"), tuple(marginals), usd_per_ms, note,
                       METHOD + ("; ranges by exact re-solves" if ranges else ""),
                       time.perf_counter() - start)


def _implied_bound(instance: Instance, i: int, bw: np.ndarray) -> tuple[int, float] | None:
    """(d, a) when row ``i`` is a B_d <= rhs (or ==), a > 0, held at ``bw``: the LP also bounds B_d
    at rhs / a, whose marginal the row's adds; else None."""
    dm = instance.design_matrix
    a_row = dm.A[i]
    nz = np.flatnonzero(a_row)
    if nz.size != 1 or dm.sense[i] == 1 or a_row[nz[0]] <= 0:
        return None
    d, a = int(nz[0]), float(a_row[nz[0]])
    limit = float(dm.rhs[i]) / a
    if not abs(float(bw[d]) - limit) <= 1e-6 * max(abs(limit), 1e-300):
        return None
    return d, a


def _marginal(p: Param, v0: float, slope: Callable[[float], float | None],
              ranges: bool) -> Marginal:
    """The marginal value of ``p`` at the optimum of value ``v0`` from ``slope(delta)`` at +-h and,
    at a kink, +-2h; 0 for a row with slack."""
    h = STEP * p.scale
    up, dn = slope(h), slope(-h)
    tiny = 1e-9 * abs(v0) / p.scale
    both = [g for g in (up, dn) if g is not None]
    # (no side feasible: the other rows pin it)
    zero = bool(both) and all(abs(g) <= tiny for g in both)
    if p.kind == "constraint" and p.slack > 1e-9 * p.scale:
        zero = True  # a row with slack never binds (its duals are 0 up to the LP tolerance)
        up, dn = (0.0 if up is not None else None), (0.0 if dn is not None else None)
    smooth = len(both) == 2 and (zero or abs(up - dn) <= KINK_TOL * max(abs(up), abs(dn)))
    value = 0.0 if zero and len(both) == 2 else ((up + dn) / 2 if smooth else None)
    # one-sided: extrapolate the duals at +-h and +-2h to the limits at theta
    if value is None and not zero:
        if up is not None and (up2 := slope(2 * h)) is not None:
            up = 2 * up - up2
        if dn is not None and (dn2 := slope(-2 * h)) is not None:
            dn = 2 * dn - dn2
    rng = None
    if ranges and both:
        rng = (slack_range(p) if zero and p.kind == "constraint"
               else holds_over(p, value, up, dn, p.scale, slope))
    return Marginal(p.name, p.kind, "", p.current, value, up, dn, not zero, rng)


def slack_range(p: Param) -> tuple[float, float]:
    """The exact range of a row ``p`` with slack: every right-hand side its optimal left-hand side
    meets."""
    lhs = p.current - p.slack if p.sense == "<=" else p.current + p.slack
    return (lhs, INF) if p.sense == "<=" else (-INF, lhs)


def holds_over(p: Param, value: float | None, up: float | None, dn: float | None, reach: float,
               slope: Callable[[float], float | None]) -> tuple[float, float]:
    """The range of a marginal value: ``p`` moved by the largest of :data:`RANGE_STEPS` x ``reach``
    each way at which ``slope(move)`` stays within :data:`RANGE_TOL` of ``value`` (or, at a kink, of
    ``dn`` / ``up`` on that side)."""
    out = []
    for sign, ref in ((-1.0, value if value is not None else dn),
                      (1.0, value if value is not None else up)):
        ok = 0.0
        for step in RANGE_STEPS if ref is not None else ():
            g = slope(sign * step * reach)
            if g is None or abs(g - ref) > RANGE_TOL * max(abs(ref), 1e-300):
                break
            ok = step * reach
        out.append(p.current + sign * ok)
    return out[0], out[1]


def _front_slope(inst: Instance, tm: TimeModel, objective: str, marginals: list[Marginal],
                 v0: float, time_limit_s: float) -> tuple[float | None, str]:
    """$ per ms along the exact time-cost front at this optimum of value ``v0``: a row's dual, or at
    the fastest network the secant of two min-cost solves at v0 and v0 (1 + :data:`FRONT_STEP`);
    None with a note when unresolved or when the time is a ratio (shares of hours)."""
    by_kind = {m.kind: m for m in marginals}
    if objective == "performance_per_cost":
        return None, "not defined at the performance-per-cost optimum (cost is chosen with time)"
    if objective == "min_cost":
        m = by_kind.get("time_target")
        g = None if m is None else (m.value if m.value is not None else m.increase)
        if g is None or g == 0:
            return None, "the time target does not bind"
        return abs(g) * 1e6, ("relaxing the time target by 1 ms saves this much (the target row's "
                              "dual)")
    m = by_kind.get("budget")
    relative = inst.relative_time  # (shares of hours: no ms, the note gives $ per 0.001 of it)
    if m is not None and m.binding and (g := m.value if m.value is not None else m.increase):
        if relative:
            return None, (f"the budget row's dual: ${1e-3 / abs(g):,.4g} per 0.001 of the "
                          "hour-weighted ratio saved by spending more")
        return 1e6 / abs(g), ("the budget row's dual: $ per ms of iteration time saved by spending "
                              "more")
    step_ns, budget = FRONT_STEP * v0, inst.max_network_cost_usd
    with closing(TimeLP(inst, tm, time_limit_s)) as core:
        try:
            fastest = core.min_time(SENS_GAP, budget_usd=budget)
            at = core.min_cost(v0 * (1 + 1e-7), fastest.bw, SENS_GAP, budget)
            relaxed = core.min_cost(v0 + step_ns, at.bw, SENS_GAP, budget)
        except (NoSolutionError, SolverError, ValueError):
            return None, "not available (a min-cost solve near the optimal time failed)"
    saved, slack = at.upper - relaxed.upper, (at.upper - at.lower) + (relaxed.upper - relaxed.lower)
    if not (math.isfinite(saved) and saved > slack):
        return None, ("no money buys time here: the design constraints, not the cost, set the "
                      f"optimal time (relaxing the time by {FRONT_STEP:.1%} saves nothing the "
                      "solves' gaps can resolve)")
    step_ms = step_ns / MS_NS
    money = f"${saved:,.0f}" if saved >= 1000 else f"${saved:.4g}"
    if relative:
        return None, (
            f"at the fastest design: relaxing the hour-weighted ratio by {FRONT_STEP:.1%} (to "
            f"{v0 + step_ns:.6g}) saves {money}, the secant of two certified min-cost solves")
    return saved / step_ms, (
        f"at the fastest time: relaxing the iteration time by {FRONT_STEP:.1%} ({step_ms:,.4g} "
        f"ms) saves {money}, the secant of two certified min-cost solves (the front's slope at "
        "the fastest time itself can be unbounded)"
    )


def near_sensitivity(inst: Instance, sol: Solution, params: list[Param],
                     at: Callable[[Param, float], Solution | None], *, ranges: bool = False
                     ) -> tuple[Sensitivity, dict[str, float], tuple[str, ...]]:
    """Within a budget a hair above the cheapest network: (sensitivity, the check's step of each
    value by name, notes on values below what the solves resolve) of ``params`` at ``sol`` by
    Richardson differences of the solves ``at`` (:func:`resolver`), theta moved by h changing the
    room by :data:`NEAR_STEP` of itself; with ``ranges`` each value's range.

    Raises:
        SolverError: no room above the cheapest network, or a solve stopped short of its gap."""
    start = time.perf_counter()
    vertex = vertex_of(inst)
    reduced = reduced_budget_row(inst, vertex, float(inst.max_network_cost_usd))
    room = reduced.room_usd if reduced is not None else 0.0
    if not room > 0:
        raise SolverError("the budget is the cheapest network's cost to within round-off: no "
                          "room to move")
    v0 = sol.objective_value

    def value(p: Param, delta: float) -> Solution | None:
        """The certified solve with ``p`` moved by ``delta`` (None: infeasible)."""
        if (other := at(p, delta)) is not None and not other.success:
            raise SolverError(f"a sensitivity re-solve ({p.name} moved by {delta:+.3g}) "
                              f"stopped short of its gap: {other.message}")
        return other

    def central(p: Param, h: float, move: float) -> float | None:
        """The central difference of V over +-h around ``p`` moved by ``move``; None where a side
        fails."""
        try:
            a, b = value(p, move + h), value(p, move - h)
        except HieroptError:
            return None
        return None if a is None or b is None else (a.objective_value - b.objective_value) / (2 * h)

    # d room / d theta ($ per unit) from the cheapest network's multipliers: 1 for the budget, -y_i
    # for design row i, -r_d for a bound of dimension d or a free GB/s on it (r = p - A'y)
    y, price, dm = vertex.row_duals, cluster_cost_usd_per_gbps(inst), inst.design_matrix
    r = price - dm.A.T @ y if dm.A.size else price.copy()
    marginals, steps, unresolved = [], {}, []
    for p in params:
        rate = 1.0 if p.kind == "budget" else -float(y[p.index] if p.kind == "constraint"
                                                     else r[p.index])
        reach = min(p.scale, room / abs(rate)) if rate != 0 else p.scale  # (the scale V changes on)
        h = NEAR_STEP * reach
        steps[p.name] = min(FD_STEP * max(abs(p.current), 1e-9), CHECK_STEP * reach)
        if (p.slack or 0.0) > (NEAR_STEP * room if p.kind == "budget" else 1e-9 * p.scale):
            rng = slack_range(p) if ranges else None  # (a row with slack never binds)
            marginals.append(Marginal(p.name, p.kind, f"ns {UNITS[p.kind]}", p.current, 0.0, 0.0,
                                      0.0, False, rng))
            continue
        sols = [value(p, s * h) for s in (1, 2, -1, -2)]
        up1, up2, dn1, dn2 = (None if s is None else s.objective_value for s in sols)
        up = None if up1 is None or up2 is None else 2 * (up1 - v0) / h - (up2 - v0) / (2 * h)
        dn = None if dn1 is None or dn2 is None else 2 * (v0 - dn1) / h - (v0 - dn2) / (2 * h)
        # what the certified gaps leave of each difference (5 / h times the largest error)
        errs = (s.gap * s.objective_value for s in sols if s is not None)
        resolution = 5 * (sol.gap * v0 + max(errs, default=0.0)) / h
        both = [g for g in (up, dn) if g is not None]
        if both and max(abs(g) for g in both) < 10 * resolution:
            unresolved.append((p, resolution))
            continue
        smooth = (up is not None and dn is not None
                  and abs(up - dn) <= max(KINK_TOL * max(abs(up), abs(dn)), 2 * resolution))
        mid = (4 * (up1 - dn1) / (2 * h) - (up2 - dn2) / (4 * h)) / 3 if smooth else None
        rng = holds_over(p, mid, up, dn, reach, partial(central, p, h)) if ranges else None
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
                       NEAR_METHOD + ("; ranges by exact re-solves" if ranges else ""),
                       time.perf_counter() - start), steps, notes


def check_marginals(sol: Solution, sens: Sensitivity, params: list[Param],
                    at: Callable[[Param, float], Solution | None],
                    steps: dict[str, float] | None = None) -> str | None:
    """None when every re-checkable marginal of ``sens`` lies within its secants at +-h (convexity,
    up to the gaps and :data:`FD_TOL`), each side solved by ``at`` (:func:`resolver`); else the
    reason, one line. h: ``steps`` by name (:func:`near_sensitivity`), else :data:`FD_STEP` of
    the parameter."""
    v0, steps = sol.objective_value, steps or {}
    by_name = {p.name: p for p in reversed(params)}
    for m in sens.marginals:
        p = by_name.get(m.name)
        if p is None or p.kind == "bandwidth" or not (
                m.binding or p.slack is None or p.slack <= 1e-9 * (abs(p.current) + p.slack)):
            continue  # (a row or budget with slack never binds and is not re-solved)
        h = steps.get(m.name, FD_STEP * max(abs(m.current), 1e-9))
        for sign, claimed in ((1.0, m.value if m.value is not None else m.increase),
                              (-1.0, m.value if m.value is not None else m.decrease)):
            try:
                other = at(p, sign * h)
            # (a move that cannot be made: the value stands unconfirmed, not refuted)
            except (ValueError, HieroptError):
                continue
            side = "increase" if sign > 0 else "decrease"
            if other is None or not other.success:
                if claimed is not None and other is None:
                    return (f"{m.name}: a marginal value on its {side} side, but moving it by "
                            f"{sign * h:+.3g} is infeasible")
                continue
            if claimed is None:
                return (f"{m.name}: its {side} side was reported infeasible, but an exact solve "
                        f"moved by {sign * h:+.3g} succeeds")
            secant = (other.objective_value - v0) / (sign * h)
            noise = (sol.gap * abs(v0) + other.gap * abs(other.objective_value)) / h
            slack = FD_TOL * max(abs(secant), abs(claimed)) + noise
            # convexity: right <= secant, left >= secant
            off = claimed - secant if sign > 0 else secant - claimed
            if off > slack or abs(claimed - secant) > 0.5 * max(abs(secant), abs(claimed)) + noise:
                return (f"{m.name}: the LP's marginal value {claimed:.6g} {m.unit} disagrees with "
                        f"exact re-solves (secant {secant:.6g} over {sign * h:+.3g})")
    return None
