"""Sensitivity of an optimum: what each GB/s, each design constraint, each bound and the budget is worth.

V(theta) is the optimal value (iteration time in ns for ``performance``, cost in $ for ``min_cost``) as a function
of one parameter theta of the problem, the others fixed: a design row's right-hand side, a per-dimension bound at
which the optimum sits, the budget, the min_cost time target, or a free bonus delta_d of bandwidth on dimension d
(B_d = B'_d + delta_d with every row, bound and the budget on B'). V is convex in each of them (the value function
of a convex program in a right-hand side), so its one-sided derivatives exist everywhere and are monotone.

**Values from the LP duals and active cuts** (``docs/procurement-design.md`` §1). The problem is re-solved
on the solve's own persistent cutting-plane LP (every cut stays valid) at theta + h and theta - h (h = 1e-6 of the
parameter's scale) and the duals of the final LP are read there: the row dual of a design row, the budget row or
the time-target row, the reduced cost of B_d at its bound, and for the bonus the active tangent cuts of dimension d,
-sum_cuts y_cut / b^2 (the stationarity row of B_d). The duals are polished first (:mod:`hieropt.solvers.polish`:
Newton on the KKT conditions of the LP's active set with the exact t_d = 1/B_d, which makes them accurate to
round-off where the cutting-plane point is only accurate to about sqrt(gap)). They are subgradients of V at
theta +- h, so they converge to V's right and left derivatives as h -> 0: the two-sided value is their mean (error
O(h^2)); at a kink each side is extrapolated linearly from +-h and +-2h (error O(h^2)). When the two sides agree
within :data:`KINK_TOL` the value is two-sided; otherwise both one-sided values are reported (typical at ties:
more bandwidth on one of two dimensions tied as a collective's slowest buys nothing, less costs time). A parameter
whose both sides are 0 is reported as not binding; one that no step either way leaves feasible (redundant equalities
that pin the design: 'sum(bw) == 100', 'bw[0] == 50', 'bw[1] == 50') is binding with no value on either side.

**Ranges**: the parameter is moved by growing steps (:data:`RANGE_STEPS` of its scale) each way and re-solved; the
range is the largest tested step with the marginal value within :data:`RANGE_TOL` of its value at the optimum (an
"at least" range: V' is monotone, so it cannot come back inside once it left). For a row that does not bind, the
range is exact: it stays not binding for every right-hand side its optimal left-hand side satisfies.

**$ per ms along the time-cost front**: with a binding budget, 1e6 / |dV/d budget|; for min_cost, 1e6 x |dV/d
target|; for the fastest network without a binding budget, the secant over a relaxation of :data:`FRONT_STEP` of
the time (two certified min_cost solves: the cheapest network at the optimal time and at the relaxed one). Not a
derivative there: where two dimensions tie as the slowest, the front is C0 - k sqrt(dT), its slope unbounded at the
fastest time (the time-target dual 1e-7 above it, printed before, was 46x the saving of the first ms on GPT-3 4D).

**performance_per_cost**: V = T x C at the optimal cost level kappa* = C(B*); by the envelope theorem over kappa,
dV/dtheta = kappa* x df/dtheta at kappa*, f(kappa) the fastest time within budget kappa (so the values come from
the performance problem at budget kappa*; no ranges: the envelope holds to first order only).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import NoSolutionError, SolverError
from ..formulation.scale import MS_NS, MUSD
from ..result import Marginal, Sensitivity, Status
from ..spec import Instance
from .cutting import INF
from .polish import Polished, kkt_polish
from .pyomo_core import PyomoTimeLP

__all__ = ["sensitivity", "KINK_TOL", "RANGE_TOL", "RANGE_STEPS", "STEP"]

KINK_TOL = 1e-3
"""Relative difference of the one-sided derivatives above which the optimum is reported as a kink."""
RANGE_TOL = 0.10
"""A marginal value 'holds' while it stays within this relative distance of its value at the optimum."""
RANGE_STEPS = (0.01, 0.03, 0.1, 0.3, 1.0)
"""Steps (fractions of the parameter's scale) at which ranges are checked by re-solves."""
STEP = 1e-6
"""Perturbation of the one-sided derivatives, as a fraction of the parameter's scale."""
SENS_GAP = 5e-9
FRONT_STEP = 1e-3
"""The time-cost front at the fastest network is given as the secant over this relative relaxation of the time."""
"""Relative gap of every re-solve."""


@dataclass
class _Param:
    name: str
    kind: str
    current: float
    scale: float
    apply: Callable[[float], None]  # set the parameter to current + delta (user units) in the LP
    derivative: Callable[[], float]  # dV/dparameter from the last LP's duals (user units)
    row_slack: float | None = None  # for design rows: how far the row is from binding (user units)
    sense: str = ""


class _Analysis:
    """The parameters of one optimum and the re-solves that differentiate V (owned by one :func:`sensitivity`)."""

    def __init__(self, instance: Instance, core: PyomoTimeLP, objective: str, bw: np.ndarray, budget: float | None,
                 target: float | None):
        self.inst, self.core, self.objective = instance, core, objective
        self.bw, self.budget, self.target = np.asarray(bw, dtype=float), budget, target
        self.s = core.s
        self.budget_delta = 0.0
        self.target_delta = 0.0
        self.polished: Polished | None = None
        self.polish_ok = self.polish_tries = 0

    @property
    def to_user(self) -> float:
        """dV/d(model dual) -> user units: time objective in s x ms units, cost objective in the $ unit of the last
        min-cost LP (:attr:`~hieropt.solvers.pyomo_core.PyomoTimeLP.objective_usd`)."""
        return MS_NS / self.s if self.objective != "min_cost" else self.core.objective_usd

    # ------------------------------------------------------------------------------------------------ re-solves
    def resolve(self) -> float:
        """Re-solve with the current perturbations; return V (ns or $). Raises NoSolutionError when infeasible."""
        core = self.core
        budget = None if self.budget is None else self.budget + self.budget_delta
        if self.objective != "min_cost":
            res = core.min_time(SENS_GAP, budget_usd=budget)
        else:
            fastest = core.min_time(SENS_GAP, budget_usd=budget)
            target = self.target + self.target_delta
            if fastest.upper > target:
                raise NoSolutionError("infeasible", "the time target is below the fastest time")
            res = core.min_cost(target, fastest.bw, SENS_GAP, budget)
        if res.status is not Status.OPTIMAL:
            raise SolverError(f"a sensitivity re-solve stopped short of its gap: {res.message}")
        self.polished = kkt_polish(core)
        self.polish_tries += 1
        self.polish_ok += self.polished is not None
        return res.upper

    def row_dual(self, row: int) -> float:
        if self.polished is not None:
            return float(self.polished.row_dual[row])
        return float(self.core.solver.row_duals()[row])

    def col_dual(self, col: int) -> float:
        if self.polished is not None:
            return float(self.polished.col_dual[col])
        return float(self.core.solver.col_duals()[col])

    # ------------------------------------------------------------------------------------------------ parameters
    def params(self) -> list[_Param]:
        out: list[_Param] = []
        core, s, inst = self.core, self.s, self.inst
        m = core.lp.model
        lhs = [float(np.dot(c.coefficients, self.bw)) for c in inst.constraints]
        for i, con in enumerate(inst.constraints):
            row = core.solver.row(m.design[i])
            base = core.solver.row_bounds(row)
            out.append(_Param(f"constraint '{con.text}'", "constraint", con.rhs, max(abs(con.rhs), _mean(self.bw)),
                              self._row_setter(row, base, con.sense),
                              lambda row=row: self.row_dual(row) * self.to_user / s,
                              row_slack=abs(con.rhs - lhs[i]) if con.sense != "==" else 0.0, sense=con.sense))
        for d, b in enumerate(inst.bounds_or_default):
            col = core.b_col[d]
            base = core.solver.col_bounds(col)
            for which, value in (("lower", b.lower_gbps), ("upper", b.upper_gbps)):
                if value is None or abs(self.bw[d] - value) > 1e-7 * max(value, 1e-12) or (which == "lower"
                                                                                         and value == 0):
                    continue
                out.append(_Param(f"{which} bound of bw[{d}]", "bound", value, max(value, 1e-9),
                                  self._col_setter(col, base, which),
                                  lambda col=col, d=d, up=which == "upper": (self.col_dual(col) + (
                                      self._t_floor_dual(d) if up else 0.0)) * self.to_user / s))
        for d in core.loaded:
            out.append(_Param(f"bandwidth of dimension {d}", "bandwidth", float(self.bw[d]), float(self.bw[d]),
                              self._bonus_setter(d), lambda d=d: self._bonus_derivative(d)))
        if self.budget is not None and self.objective != "performance_per_cost":
            out.append(_Param("budget", "budget", self.budget, self.budget, self._set_budget_delta,
                              lambda: self.row_dual(core.budget_row) * self.to_user / core.cost_unit))
        if self.objective == "min_cost" and core.time_row is not None:
            out.append(_Param("time target", "time_target", self.target, self.target, self._set_target_delta,
                              lambda: self.row_dual(core.time_row) * core.objective_usd * s / MS_NS))
        return out

    def _row_setter(self, row: int, base: tuple[float, float], sense: str) -> Callable[[float], None]:
        def apply(delta: float) -> None:
            lo, hi = base
            dm = delta / self.s
            self.core.solver.change_row_bounds(row, lo + dm if sense in (">=", "==") else lo,
                                               hi + dm if sense in ("<=", "==") else hi)
        return apply

    def _col_setter(self, col: int, base: tuple[float, float], which: str) -> Callable[[float], None]:
        d = self.core.b_col.index(col)
        floor = self._t_floor_setter(d)

        def apply(delta: float) -> None:
            lo, hi = base
            dm = delta / self.s
            self.core.solver.change_col_bounds(col, max(lo + dm, 0.0) if which == "lower" else lo,
                                               hi + dm if which == "upper" else hi)
            floor(hi + dm if which == "upper" else hi)
        return apply

    def _t_floor_dual(self, d: int) -> float:
        """What t_d's floor 1 / hi (hi: B_d's upper bound, model units) adds to dV/d hi: its reduced cost times
        d(1/hi)/d hi = -1/hi^2 (0 without a floor or a link). At a tie of the floor and a cut the LP may put the
        whole multiplier on either."""
        col = self.core.t_col.get(d)
        if col is None:
            return 0.0
        hi = self.core.solver.col_bounds(self.core.b_col[d])[1]
        return -self.col_dual(col) / hi**2 if math.isfinite(hi) and hi > 0 else 0.0

    def _t_floor_setter(self, d: int) -> Callable[[float], None]:
        """Setting t_d's lower bound 1 / (B_d's upper bound) (model units; :mod:`hieropt.formulation.lp` bounds t
        by it) to follow a moved upper bound: left at the old one, t_d sits at that floor above the moved bound
        and B_d's dual reads 0 (the upper bound of NVLink at 900 GB/s on ``instances/gpt3-nvl72-2304.toml``: the
        LP's marginal 0 against the re-solves' -1.4e5 ns per GB/s)."""
        col = self.core.t_col.get(d)
        if col is None:
            return lambda hi: None
        base = self.core.solver.col_bounds(col)

        def apply(hi: float) -> None:
            self.core.solver.change_col_bounds(col, 1.0 / hi if math.isfinite(hi) and hi > 0 else base[0],
                                               base[1])
        return apply

    def _bonus_setter(self, d: int) -> Callable[[float], None]:
        """B_d = B'_d + delta: every row and bound on B' shifts by a_d delta, the budget by (cost of delta)."""
        core, inst, m = self.core, self.inst, self.core.lp.model
        rows = [(core.solver.row(m.design[i]), core.solver.row_bounds(core.solver.row(m.design[i])),
                 float(c.coefficients[d])) for i, c in enumerate(inst.constraints) if c.coefficients[d] != 0]
        col = core.b_col[d]
        col_base = core.solver.col_bounds(col)
        usd_per_gbps = float(core.lp.cost_musd_per_gbps[d]) * MUSD
        floor = self._t_floor_setter(d)

        def apply(delta: float) -> None:
            dm = delta / self.s
            for row, (lo, hi), a in rows:
                core.solver.change_row_bounds(row, lo + a * dm, hi + a * dm)
            lo, hi = col_base
            core.solver.change_col_bounds(col, max(lo + dm, 0.0) if lo > 0 else lo, hi + dm)
            floor(hi + dm)
            self.budget_delta = usd_per_gbps * delta
        return apply

    def _bonus_derivative(self, d: int) -> float:
        if self.polished is not None and d in self.polished.nu:  # h_d = t_d - 1/(B_d + delta): dV/d delta = -nu/B^2
            b = self.polished.x[self.core.b_col[d]]
            return -self.polished.nu[d] / b**2 * self.to_user / self.s
        if self.polished is not None:  # (B_d held at its bound: the bound moves with delta, and t_d's floor too)
            col = self.core.b_col[d]
            return (self.col_dual(col) + self._t_floor_dual(d)) * self.to_user / self.s
        duals = self.core.solver.row_duals()
        # a cut t_d + cb B_d >= 2/b becomes t_d + cb B'_d >= 2/b - cb delta: its bound falls by cb per unit of delta
        g = sum(float(duals[row]) * cb for dd, row, cb in self.core.cut_rows if dd == d)
        return (-g + self._t_floor_dual(d)) * self.to_user / self.s

    def _set_budget_delta(self, delta: float) -> None:
        self.budget_delta = delta

    def _set_target_delta(self, delta: float) -> None:
        self.target_delta = delta

    # ------------------------------------------------------------------------------------------------ analysis
    def one_sided(self, p: _Param, delta: float) -> float | None:
        p.apply(delta)
        try:
            self.resolve()
            g = p.derivative()
        except NoSolutionError:
            g = None
        p.apply(0.0)
        return g

    def marginal(self, p: _Param, v0: float, ranges: bool) -> Marginal:
        h = STEP * p.scale
        up, dn = self.one_sided(p, h), self.one_sided(p, -h)
        tiny = 1e-9 * abs(v0) / p.scale
        both = [g for g in (up, dn) if g is not None]
        zero = bool(both) and all(abs(g) <= tiny for g in both)  # (no side feasible: the other rows pin it)
        if p.row_slack is not None and p.row_slack > 1e-9 * p.scale:
            zero = True  # a row with slack never binds (its duals are 0 up to the LP tolerance)
            up, dn = (0.0 if up is not None else None), (0.0 if dn is not None else None)
        smooth = len(both) == 2 and (zero or abs(up - dn) <= KINK_TOL * max(abs(up), abs(dn)))
        value = 0.0 if zero and len(both) == 2 else ((up + dn) / 2 if smooth else None)
        if value is None and not zero:  # one-sided: extrapolate the duals at +-h and +-2h to the limits at theta
            if up is not None and (up2 := self.one_sided(p, 2 * h)) is not None:
                up = 2 * up - up2
            if dn is not None and (dn2 := self.one_sided(p, -2 * h)) is not None:
                dn = 2 * dn - dn2
        rng = None
        if ranges and self.objective != "performance_per_cost" and both:
            rng = self._range(p, value, up, dn, zero)
        return Marginal(p.name, p.kind, "", p.current, value, up, dn, not zero, rng)

    def _range(self, p: _Param, value, up, dn, zero: bool) -> tuple[float, float] | None:
        if zero and p.row_slack is not None:  # exact: the row stays slack for every rhs its optimum satisfies
            lhs = p.current - p.row_slack if p.sense == "<=" else p.current + p.row_slack
            return (lhs, INF) if p.sense == "<=" else (-INF, lhs)
        out = []
        for sign, ref in ((-1.0, value if value is not None else dn), (1.0, value if value is not None else up)):
            ok = 0.0
            if ref is not None:
                for step in RANGE_STEPS:
                    g = self.one_sided(p, sign * step * p.scale)
                    if g is None or abs(g - ref) > RANGE_TOL * max(abs(ref), 1e-300):
                        break
                    ok = step * p.scale
            out.append(p.current + sign * ok)
        return out[0], out[1]


def _mean(bw: np.ndarray) -> float:
    pos = bw[bw > 0]
    return float(pos.mean()) if pos.size else 1.0


_UNITS = {"constraint": "per unit of the right-hand side", "bound": "per GB/s", "bandwidth": "per GB/s",
          "budget": "per $", "time_target": "per ns"}


def sensitivity(instance: Instance, core: PyomoTimeLP, objective: str, bw: np.ndarray, *, ranges: bool = True,
                budget_usd: float | None = None, target_ns: float | None = None) -> Sensitivity:
    """Marginal values of every parameter at the optimum ``bw`` of ``objective`` (module docstring).

    Args:
        instance: the solved instance (its design rows and bounds).
        core: the solve's persistent LP (re-used; its rows are restored after each perturbation).
        objective: ``performance``, ``min_cost`` or ``performance_per_cost``.
        bw: (D,) the certified optimum, GB/s.
        ranges: also compute the ranges (a few re-solves per parameter).
        budget_usd: the budget of the solve ($), if any; target_ns: the min_cost time target (ns).

    Returns:
        A :class:`hieropt.result.Sensitivity`; marginal values are ns (or $, or ns*$) per unit of each parameter.

    Raises:
        SolverError: a re-solve stopped short of its gap.
    """
    start = time.perf_counter()
    kappa = None
    if objective == "performance_per_cost":
        kappa = core.network_cost(np.asarray(bw, dtype=float))
        budget_usd = kappa
    a = _Analysis(instance, core, objective, bw, budget_usd, target_ns)
    v0 = a.resolve()
    unit = {"performance": "ns", "min_cost": "$", "performance_per_cost": "ns*$"}[objective]
    marginals = []
    for p in a.params():
        mg = a.marginal(p, v0, ranges)
        if kappa is not None:  # envelope over kappa: dV/dtheta = kappa* df/dtheta
            mg = Marginal(mg.name, mg.kind, mg.unit, mg.current, *(None if x is None else x * kappa
                                                                    for x in (mg.value, mg.increase, mg.decrease)),
                          mg.binding, None)
        marginals.append(Marginal(mg.name, mg.kind, f"{unit} {_UNITS[mg.kind]}", mg.current, mg.value, mg.increase,
                                  mg.decrease, mg.binding, mg.range))
    usd_per_ms, note = _front_slope(a, marginals, v0)
    return Sensitivity(objective, {"performance": "ns", "min_cost": "USD", "performance_per_cost": "ns*USD"}[objective],
                       tuple(marginals), usd_per_ms, note,
                       "duals of the final cutting-plane LP at +-1e-6 perturbations (one-sided at kinks); ranges by "
                       "exact re-solves" if ranges else "duals of the final cutting-plane LP at +-1e-6 perturbations",
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
        return abs(g) * 1e6, "relaxing the time target by 1 ms saves this much (the target row's dual)"
    m = by_kind.get("budget")
    if m is not None and m.binding:
        g = m.value if m.value is not None else m.increase
        if g:
            return 1e6 / abs(g), "the budget row's dual: $ per ms of iteration time saved by spending more"
    # fastest network, no binding budget: the front's slope there can be unbounded (C0 - k sqrt(dT) where two
    # dimensions tie as the slowest), so no derivative: the secant of two certified min-cost solves instead
    return _front_secant(a, v0)


def _front_secant(a: _Analysis, v0: float) -> tuple[float | None, str]:
    """$ per ms saved by relaxing the fastest time ``v0`` (ns) by :data:`FRONT_STEP` of itself: the cheapest network
    at (nearly) the fastest time and at v0 x (1 + FRONT_STEP), both certified min-cost solves, their cost difference
    over the step. Their gaps bound the difference; a difference the gaps do not resolve is not reported."""
    step_ns = FRONT_STEP * v0
    try:
        fastest = a.core.min_time(SENS_GAP, budget_usd=a.budget)
        at = a.core.min_cost(v0 * (1 + 1e-7), fastest.bw, SENS_GAP, a.budget)
        relaxed = a.core.min_cost(v0 + step_ns, at.bw, SENS_GAP, a.budget)
    except (NoSolutionError, SolverError):
        return None, "not available (a min-cost solve near the optimal time failed)"
    saved, slack = at.upper - relaxed.upper, (at.upper - at.lower) + (relaxed.upper - relaxed.lower)
    if not (math.isfinite(saved) and saved > slack):
        return None, ("no money buys time here: the design constraints, not the cost, set the optimal time (relaxing "
                      f"the time by {FRONT_STEP:.1%} saves nothing the solves' gaps can resolve)")
    step_ms = step_ns / MS_NS
    money = f"${saved:,.0f}" if saved >= 1000 else f"${saved:.4g}"
    return saved / step_ms, (f"at the fastest time: relaxing the iteration time by {FRONT_STEP:.1%} ({step_ms:,.4g} "
                             f"ms) saves {money}, the secant of two certified min-cost solves (the front's slope at "
                             "the fastest time itself can be unbounded)")
