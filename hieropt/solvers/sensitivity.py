"""Sensitivity of an optimum: what each GB/s, each design constraint, each bound and the budget is
worth.

V(theta) is the optimal value (ns for ``performance``, $ for ``min_cost``) as a function of one
parameter theta: a design row's right-hand side, a bound the optimum sits at, the budget, the
min_cost time target, or a free bonus delta_d of bandwidth on dimension d (B_d = B'_d + delta_d,
every row, bound and the budget on B'). V is convex in each (the value function of a convex
program in a right-hand side), so its one-sided derivatives exist and are monotone.

**Values**: the instance is re-solved at theta +- h (h = :data:`STEP` of the parameter's scale;
certified to :data:`SENS_GAP`) and the multipliers of the loop's bound are read there
(:class:`hieropt.solvers.cut_lp.Multipliers`): the row multiplier of a design row, the budget or the
time target; for a bound of B_d or the bonus the derivative of the Lagrangian's term of d, g_d -
P_d / B_d^2 (bound) or -P_d / B_d^2 (bonus), g_d and P_d the reduced costs of B_d and t_d
(:mod:`hieropt.solvers.dual_bound`). They are subgradients of V at theta +- h, so they tend to V's
right and left derivatives: the two-sided value is their mean (error O(h^2)) when they agree within
:data:`KINK_TOL`; otherwise each side is extrapolated from +-h and +-2h (a kink, typical at ties).
Both sides 0: not binding; no side feasible (equalities that pin the design): binding, no value.

**Ranges**: the largest of :data:`RANGE_STEPS` each way with the marginal value within
:data:`RANGE_TOL` of its value at the optimum (an "at least" range: V' is monotone); exact for a row
that does not bind.

**$ per ms along the time-cost front**: 1e6 / |dV/d budget| with a binding budget; 1e6 x |dV/d
target| for min_cost; at the fastest network the secant over a relaxation of :data:`FRONT_STEP` of
the time (two certified min_cost solves), since where two dimensions tie as the slowest the front is
C0 - k sqrt(dT), its slope unbounded at the fastest time.

**performance_per_cost**: V = T x C at kappa* = C(B*); by the envelope theorem dV/dtheta = kappa* x
df/dtheta, f(kappa) the fastest time within budget kappa (no ranges: first order only).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from ..errors import NoSolutionError, SolverError
from ..formulation.scale import MS_NS
from ..model.cost import cluster_cost_usd_per_gbps
from ..model.timing import TimeModel
from ..result import Marginal, Sensitivity, Status
from ..spec import Bound, Instance
from .cut_lp import Multipliers
from .cutting import INF, OAResult, TimeLP
from .dual_bound import transpose_product

__all__ = ["sensitivity", "parameters", "Param", "KINK_TOL", "RANGE_TOL", "RANGE_STEPS", "STEP"]

KINK_TOL = 1e-3
"""Relative difference of the one-sided derivatives above which the optimum is reported as a
kink."""
RANGE_TOL = 0.10
"""A marginal value 'holds' while it stays within this relative distance of its value at the
optimum."""
RANGE_STEPS = (0.01, 0.03, 0.1, 0.3, 1.0)
"""Steps (fractions of the parameter's scale) at which ranges are checked by re-solves."""
STEP = 1e-6
"""Perturbation of the one-sided derivatives, as a fraction of the parameter's scale."""
SENS_GAP = 5e-9
"""Relative gap of every re-solve."""
METHOD = "multipliers of certified re-solves at +-1e-6 perturbations, one-sided at kinks"
FRONT_STEP = 1e-3
"""The time-cost front at the fastest network is given as the secant over this relative relaxation
of the time."""


@dataclass(frozen=True)
class Param:
    """One parameter theta of the problem at an optimum.

    Attributes:
        name: as printed ("constraint 'sum(bw) <= 500'", "upper bound of bw[1]", ...).
        kind: ``constraint``, ``bound``, ``bandwidth`` (the free bonus), ``budget`` or
            ``time_target``.
        current: its value (user units: the row's, GB/s, $, ns).
        scale: its own size (steps are fractions of it).
        moved: delta -> the instance with theta moved by delta (user units).
        index: the design row (constraint) or the dimension (bound, bandwidth).
        slack: a design row's or the budget's distance from binding at the optimum (user units;
            None: not a row).
        sense: a design row's sense.
    """

    name: str
    kind: str
    current: float
    scale: float
    moved: Callable[[float], Instance]
    index: int = -1
    slack: float | None = None
    sense: str = ""


def parameters(inst: Instance, tm: TimeModel, bw: np.ndarray,
               objective: str = "performance") -> list[Param]:
    """The parameters of the optimum ``bw`` (GB/s, (D,)) of ``inst`` (module docstring): every
    design row, every bound the optimum sits at (lower bounds of 0 aside), a free GB/s on every
    loaded dimension, the budget (not for ``performance_per_cost``) and the min_cost time target,
    each with the instance it moves."""
    out = [_row(inst, i, bw) for i in range(len(inst.constraints))]
    bounds = inst.bounds_or_default
    for d, b in enumerate(bounds):
        if b.lower_gbps == b.upper_gbps and b.lower_gbps > 0:  # a fixed dimension moves as one
            out.append(Param(f"fixed bandwidth of bw[{d}]", "bound", b.lower_gbps, b.lower_gbps,
                             partial(_bound_moved, inst, d, "fixed"), d))
            continue
        for which, value in (("lower", b.lower_gbps), ("upper", b.upper_gbps)):
            if (value is None or abs(bw[d] - value) > 1e-7 * max(value, 1e-12)
                    or (which == "lower" and value == 0)):
                continue
            out.append(Param(f"{which} bound of bw[{d}]", "bound", value, max(value, 1e-9),
                             partial(_bound_moved, inst, d, which), d))
    price = cluster_cost_usd_per_gbps(inst)
    for d in np.flatnonzero(tm.carries_traffic).tolist():
        out.append(Param(f"bandwidth of dimension {d}", "bandwidth", float(bw[d]), float(bw[d]),
                         lambda delta, d=d: _bonus_moved(inst, d, float(price[d]), delta), d))
    budget = inst.max_network_cost_usd
    if budget is not None and objective != "performance_per_cost":
        out.append(Param("budget", "budget", budget, budget,
                         lambda delta: _with(inst, max_network_cost_usd=budget + delta),
                         slack=budget - float(price @ bw), sense="<="))
    target = inst.max_iteration_time_ns
    if objective == "min_cost" and target is not None:
        out.append(Param("time target", "time_target", target, target,
                         lambda delta: _with(inst, max_iteration_time_ns=target + delta)))
    return out


def _with(inst: Instance, **update) -> Instance:
    return inst.model_copy(update=update)


def _row(inst: Instance, i: int, bw: np.ndarray) -> Param:
    c = inst.constraints[i]
    lhs = float(np.dot(c.coefficients, bw))
    pos = bw[bw > 0]
    mean = float(pos.mean()) if pos.size else 1.0

    def moved(delta: float) -> Instance:
        rows = list(inst.constraints)
        rows[i] = rows[i].model_copy(update={"rhs": rows[i].rhs + delta})
        return _with(inst, constraints=tuple(rows))

    return Param(f"constraint '{c.text}'", "constraint", c.rhs, max(abs(c.rhs), mean), moved, i,
                 abs(c.rhs - lhs) if c.sense != "==" else 0.0, c.sense)


def _bound_moved(inst: Instance, d: int, which: str, delta: float) -> Instance:
    """``inst`` with the ``which`` (``lower``, ``upper`` or, for a fixed dimension, ``fixed``:
    both) bound of dimension ``d`` moved by ``delta`` GB/s.

    Raises:
        ValueError: a bound moved below zero or past the other (the re-solves skip that side).
    """
    bs = list(inst.bounds_or_default)
    lo, hi = bs[d].lower_gbps, bs[d].upper_gbps
    lo = lo + delta if which in ("lower", "fixed") else lo
    hi = hi + delta if which in ("upper", "fixed") else hi
    bs[d] = Bound(lower_gbps=max(lo, 0.0) if which != "fixed" else lo, upper_gbps=hi)
    return _with(inst, bounds=tuple(bs))


def _bonus_moved(inst: Instance, d: int, price: float, delta: float) -> Instance:
    """B_d = B'_d + delta: every row, bound and the budget on B' (a lower bound of 0 stays)."""
    rows = tuple(
        c.model_copy(update={"rhs": c.rhs + c.coefficients[d] * delta}) if c.coefficients[d] else c
        for c in inst.constraints)
    bs = list(inst.bounds_or_default)
    lo, hi = bs[d].lower_gbps, bs[d].upper_gbps
    bs[d] = Bound(lower_gbps=max(lo + delta, 0.0) if lo > 0 else lo,
                  upper_gbps=None if hi is None else hi + delta)
    budget = inst.max_network_cost_usd
    return _with(inst, constraints=rows, bounds=tuple(bs),
                 max_network_cost_usd=None if budget is None else budget + price * delta)


def derivative(p: Param, m: Multipliers, objective: str, bw: np.ndarray) -> float:
    """dV/d theta (user units) from the multipliers ``m`` of a re-solve whose optimum is ``bw``
    (GB/s, (D,)) (module docstring)."""
    arr, sc, u = m.arr, m.scale, m.duals
    unit = sc.cost_usd if objective == "min_cost" else sc.time_ns  # V per scaled objective unit
    if p.kind == "constraint":
        return float(u[arr.design.start + p.index]) * unit / float(arr.row_scale[p.index])
    if p.kind == "budget":
        return float(u[arr.budget_row]) * unit / sc.cost_usd
    if p.kind == "time_target":
        return float(u[arr.time_row]) * sc.cost_usd / sc.time_ns
    d = p.index
    r = m.costs - transpose_product(arr, np.asarray(u[:arr.n_rows], dtype=float))
    P = float(r[arr.t_col[d]]) if arr.t_col[d] >= 0 else 0.0
    B = float(bw[d] / sc.bw_gbps[d])
    g = float(r[arr.b_col[d]]) if p.kind == "bound" else 0.0
    return (g - (P / B**2 if P else 0.0)) * unit / float(sc.bw_gbps[d])


class _Analysis:
    """The parameters of one optimum and the re-solves that differentiate V (owned by one
    :func:`sensitivity`)."""

    def __init__(self, instance: Instance, tm: TimeModel, objective: str, time_limit_s: float):
        self.inst, self.tm, self.objective = instance, tm, objective
        self.time_limit_s, self.budget = time_limit_s, instance.max_network_cost_usd

    def resolve(self, inst: Instance) -> tuple[OAResult, Multipliers | None]:
        """The certified optimum of ``inst`` (V in ns or $) and the multipliers of its bound.

        Raises:
            NoSolutionError: ``inst`` is infeasible.
            SolverError: the solve stopped short of its gap.
        """
        core = TimeLP(inst, self.tm, self.time_limit_s)
        try:
            budget = inst.max_network_cost_usd
            res = core.min_time(SENS_GAP, budget_usd=budget)
            if self.objective == "min_cost":
                target = inst.max_iteration_time_ns
                if res.upper > target:
                    raise NoSolutionError("infeasible", "the time target is below the fastest time")
                res = core.min_cost(target, res.bw, SENS_GAP, budget)
            if res.status is not Status.OPTIMAL:
                raise SolverError(f"a sensitivity re-solve stopped short of its gap: {res.message}")
            return res, core.certificate
        finally:
            core.close()

    def one_sided(self, p: Param, delta: float) -> float | None:
        """dV/d theta with ``p`` moved by ``delta`` (None: infeasible there)."""
        try:
            res, m = self.resolve(p.moved(delta))
        except NoSolutionError:
            return None
        if m is None:
            raise SolverError(f"a sensitivity re-solve ({p.name} moved by {delta:+.3g}) has no "
                              "multipliers")
        return derivative(p, m, self.objective, res.bw)

    def marginal(self, p: Param, v0: float, ranges: bool) -> Marginal:
        """The marginal value of parameter ``p`` at the optimum of value ``v0`` (the objective's
        unit per the parameter's unit): the mean of the one-sided derivatives at theta +- h
        (h = :data:`STEP` x the parameter's scale) where they agree within :data:`KINK_TOL`, else
        both sides extrapolated from +-h and +-2h; 0 for a row with slack; with ``ranges``, the
        range over which it holds (not for performance per cost).

        Raises:
            SolverError: a re-solve stops short of its gap or has no multipliers.
        """
        h = STEP * p.scale
        up, dn = self.one_sided(p, h), self.one_sided(p, -h)
        tiny = 1e-9 * abs(v0) / p.scale
        both = [g for g in (up, dn) if g is not None]
        # (no side feasible: the other rows pin it)
        zero = bool(both) and all(abs(g) <= tiny for g in both)
        if _row_slack(p) is not None and _row_slack(p) > 1e-9 * p.scale:
            zero = True  # a row with slack never binds (its duals are 0 up to the LP tolerance)
            up, dn = (0.0 if up is not None else None), (0.0 if dn is not None else None)
        smooth = len(both) == 2 and (zero or abs(up - dn) <= KINK_TOL * max(abs(up), abs(dn)))
        value = 0.0 if zero and len(both) == 2 else ((up + dn) / 2 if smooth else None)
        # one-sided: extrapolate the duals at +-h and +-2h to the limits at theta
        if value is None and not zero:
            if up is not None and (up2 := self.one_sided(p, 2 * h)) is not None:
                up = 2 * up - up2
            if dn is not None and (dn2 := self.one_sided(p, -2 * h)) is not None:
                dn = 2 * dn - dn2
        rng = None
        if ranges and self.objective != "performance_per_cost" and both:
            rng = self._range(p, value, up, dn, zero)
        return Marginal(p.name, p.kind, "", p.current, value, up, dn, not zero, rng)

    def _range(self, p: Param, value, up, dn, zero: bool) -> tuple[float, float] | None:
        if zero and _row_slack(p) is not None:
            return slack_range(p)
        return holds_over(p, value, up, dn, p.scale, lambda at: self.one_sided(p, at))


def slack_range(p: Param) -> tuple[float, float]:
    """The exact range of a row ``p`` with slack at the optimum: it stays slack for every
    right-hand side its optimal left-hand side meets (user units of the row)."""
    lhs = p.current - p.slack if p.sense == "<=" else p.current + p.slack
    return (lhs, INF) if p.sense == "<=" else (-INF, lhs)


def holds_over(p: Param, value: float | None, up: float | None, dn: float | None, reach: float,
               slope: Callable[[float], float | None]) -> tuple[float, float]:
    """The range of a marginal value: ``p`` moved by the largest of :data:`RANGE_STEPS` x ``reach``
    each way at which ``slope(move)`` (dV/d theta there; None: not available) stays within
    :data:`RANGE_TOL` of ``value``, or of the one-sided value ``dn`` / ``up`` on that side at a
    kink; V' is monotone, so it is an "at least" range."""
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


def _row_slack(p: Param) -> float | None:
    """A design row's distance from binding (None for the other parameters)."""
    return p.slack if p.kind == "constraint" else None


UNITS = {"constraint": "per unit of the right-hand side", "bound": "per GB/s",
         "bandwidth": "per GB/s", "budget": "per $", "time_target": "per ns"}
"""The unit of a marginal value of each kind of parameter, after the objective's unit."""


def sensitivity(instance: Instance, tm: TimeModel, objective: str, bw: np.ndarray, *,
                ranges: bool = True, time_limit_s: float = 60.0) -> Sensitivity:
    """Marginal values of every parameter at the optimum ``bw`` of ``objective`` (module docstring).

    Args:
        instance: the solved instance (its design rows, bounds, budget and min_cost time target).
        tm: its time model.
        objective: ``performance``, ``min_cost`` or ``performance_per_cost``.
        bw: (D,) the certified optimum, GB/s.
        ranges: also compute the ranges (a few re-solves per parameter).
        time_limit_s: time limit of each LP, s.

    Returns:
        A :class:`hieropt.result.Sensitivity`; marginal values are ns (or $, or ns*$) per unit of
        each parameter.

    Raises:
        NoSolutionError: the instance has no optimum to re-solve.
        SolverError: a re-solve stopped short of its gap.
    """
    start = time.perf_counter()
    bw = np.asarray(bw, dtype=float)
    kappa = None
    if objective == "performance_per_cost":
        kappa = float(cluster_cost_usd_per_gbps(instance) @ bw)
        instance = _with(instance, max_network_cost_usd=kappa)
    a = _Analysis(instance, tm, objective, time_limit_s)
    v0 = a.resolve(instance)[0].upper
    unit = {"performance": "ns", "min_cost": "$", "performance_per_cost": "ns*$"}[objective]
    marginals = []
    for p in parameters(instance, tm, bw, objective):
        mg = a.marginal(p, v0, ranges)
        if kappa is not None:  # envelope over kappa: dV/dtheta = kappa* df/dtheta
            value, up, dn = (None if x is None else x * kappa
                             for x in (mg.value, mg.increase, mg.decrease))
            mg = replace(mg, value=value, increase=up, decrease=dn, range=None)
        marginals.append(replace(mg, unit=f"{unit} {UNITS[mg.kind]}"))
    usd_per_ms, note = _front_slope(a, marginals, v0)
    value_unit = {"performance": "ns", "min_cost": "USD", "performance_per_cost": "ns*USD"}
    return Sensitivity(objective, value_unit[objective], tuple(marginals), usd_per_ms, note,
                       METHOD + ("; ranges by exact re-solves" if ranges else ""),
                       time.perf_counter() - start)


def _front_slope(a: _Analysis, marginals: list[Marginal], v0: float) -> tuple[float | None, str]:
    """$ per ms along the exact time-cost front at this optimum."""
    by_kind = {m.kind: m for m in marginals}
    if a.objective == "performance_per_cost":
        return None, "not defined at the performance-per-cost optimum (cost is chosen with time)"
    if a.objective == "min_cost":
        m = by_kind.get("time_target")
        g = None if m is None else (m.value if m.value is not None else m.increase)
        if g is None or g == 0:
            return None, "the time target does not bind"
        return abs(g) * 1e6, ("relaxing the time target by 1 ms saves this much (the target row's "
                              "dual)")
    m = by_kind.get("budget")
    if m is not None and m.binding:
        g = m.value if m.value is not None else m.increase
        if g:
            return 1e6 / abs(g), ("the budget row's dual: $ per ms of iteration time saved by "
                                  "spending more")
    # fastest network, no binding budget: the front's slope there can be unbounded (C0 - k sqrt(dT)
    # where two dimensions tie as the slowest), so no derivative: the secant of two certified
    # min-cost solves instead
    return _front_secant(a, v0)


def _front_secant(a: _Analysis, v0: float) -> tuple[float | None, str]:
    """$ per ms saved by relaxing the fastest time ``v0`` (ns) by :data:`FRONT_STEP` of itself: the
    cheapest network at (nearly) the fastest time and at v0 x (1 + FRONT_STEP), both certified
    min-cost solves, their cost difference over the step. Their gaps bound the difference; a
    difference the gaps do not resolve is not reported."""
    step_ns = FRONT_STEP * v0
    core = TimeLP(a.inst, a.tm, a.time_limit_s)
    try:
        fastest = core.min_time(SENS_GAP, budget_usd=a.budget)
        at = core.min_cost(v0 * (1 + 1e-7), fastest.bw, SENS_GAP, a.budget)
        relaxed = core.min_cost(v0 + step_ns, at.bw, SENS_GAP, a.budget)
    except (NoSolutionError, SolverError, ValueError):
        return None, "not available (a min-cost solve near the optimal time failed)"
    finally:
        core.close()
    saved, slack = at.upper - relaxed.upper, (at.upper - at.lower) + (relaxed.upper - relaxed.lower)
    if not (math.isfinite(saved) and saved > slack):
        return None, ("no money buys time here: the design constraints, not the cost, set the "
                      f"optimal time (relaxing the time by {FRONT_STEP:.1%} saves nothing the "
                      "solves' gaps can resolve)")
    step_ms = step_ns / MS_NS
    money = f"${saved:,.0f}" if saved >= 1000 else f"${saved:.4g}"
    return saved / step_ms, (
        f"at the fastest time: relaxing the iteration time by {FRONT_STEP:.1%} ({step_ms:,.4g} "
        f"ms) saves {money}, the secant of two certified min-cost solves (the front's slope at "
        "the fastest time itself can be unbounded)"
    )
