"""The provisioning MILP on HiGHS for :func:`hieropt.solvers.provision.provision`: one persistent
solver per call, the tie-breaking second solve, the exact re-check of every integer design, why none
exists; and the time-cost-power trade-off on that MILP (:func:`provision_tradeoff`)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.common.results import TerminationCondition
from pyomo.contrib.solver.solvers.highs import Highs

from ..cache import scoped
from ..errors import InputError, NoSolutionError, SolverError, limit_reached
from ..formulation.milp import KW, MUSD, ProvisionMILP, build_provision_milp
from ..formulation.scale import MS_NS
from ..io.nic_bound import nic_bounded
from ..model.capex import TotalCapex
from ..model.catalog import Catalog
from ..model.options import Option, dimension_options, link_notes
from ..model.run import SitePower, power_cap_problem, site_power
from ..model.terms import TimeModel
from ..model.timing import Breakdown, build_time_model, evaluate
from ..result import Status
from ..spec import Instance
from ..spec.overrides import check_time_limit
from ..units import plural, power_unit_hint, usd_cents
from ..verify import constraint_violations
from .cost_range import no_design_by_rows_of
from .highs import quiet_stdout
from .portfolio import hours_weighted
from .provision_limits import add_caps, checked_limits, limit_notes, power_limit, total_capex_cap

MILP_REL_GAP = 1e-9
"""HiGHS ``mip_rel_gap`` of every MILP solve."""


MILP_TOLERANCES = ({"primal_feasibility_tolerance": 1e-9, "mip_feasibility_tolerance": 1e-9},
                   {"primal_feasibility_tolerance": 1e-7, "mip_feasibility_tolerance": 1e-6})
"""HiGHS feasibility tolerances: tight first, HiGHS's defaults when it rejects its own answer at the
tight ones (the design is re-checked exactly either way)."""


CLAIM_TOL = 1e-6
"""Allowed relative difference between the MILP's objective and the exact value of its design."""


TIE_TOL = 1e-9
"""Relative slack on the first objective when the second solve breaks ties."""


NS_USD_PER_UNIT = MS_NS * MUSD  # ns*$ per model unit of the product objective (ms * M$)
_T = TerminationCondition
STATUS = {_T.convergenceCriteriaSatisfied: Status.OPTIMAL, _T.provenInfeasible: Status.INFEASIBLE,
          _T.infeasibleOrUnbounded: Status.INFEASIBLE, _T.maxTimeLimit: Status.LIMIT,
          _T.iterationLimit: Status.LIMIT}
"""The status of each HiGHS termination of a MILP solve (any other: ERROR)."""


@dataclass(frozen=True)
class MilpRun:
    """One MILP solve: status, HiGHS's termination name, the chosen option per dimension (or None),
    the incumbent and the bound (model units)."""

    status: Status
    termination: str
    choice: tuple[int, ...] | None
    incumbent: float | None
    bound: float | None


class ProvisionSolver:
    """One persistent HiGHS MILP for one provisioning model (owned by one call)."""

    def __init__(self, milp: ProvisionMILP, time_limit_s: float):
        self.milp = milp
        self.time_limit_s = float(time_limit_s)
        opt = Highs()
        if not opt.available():
            raise SolverError("HiGHS (highspy) is not available: pip install highspy")
        with quiet_stdout():
            opt.set_instance(milp.model)
        self.opt = opt
        self.solves = 0
        self.seconds = 0.0

    def solve(self, objective: str) -> MilpRun:
        """Minimise the objective component named ``objective`` (the others deactivated)."""
        m = self.milp.model
        for obj in m.component_objects(pyo.Objective):
            obj.activate() if obj.local_name == objective else obj.deactivate()
        for tolerances in MILP_TOLERANCES:
            start = time.perf_counter()
            with quiet_stdout():
                res = self.opt.solve(m, time_limit=self.time_limit_s, rel_gap=MILP_REL_GAP,
                                     abs_gap=0.0, load_solutions=False,
                                     raise_exception_on_nonoptimal_result=False,
                                     solver_options={**tolerances, "output_flag": False})
            self.seconds += time.perf_counter() - start
            self.solves += 1
            if res.termination_condition != TerminationCondition.error:
                break
        tc = res.termination_condition
        status = STATUS.get(tc, Status.ERROR)
        if status in (Status.INFEASIBLE, Status.ERROR):
            return MilpRun(status, tc.name, None, None, None)
        if res.incumbent_objective is None:
            status = Status.ERROR if status is Status.OPTIMAL else status
            return MilpRun(status, tc.name, None, None, res.objective_bound)
        res.solution_loader.load_vars()
        choice = tuple(int(np.argmax([m.z[d, o].value or 0.0 for o in range(len(bw))]))
                       for d, bw in enumerate(self.milp.bw_gbps))
        return MilpRun(status, tc.name, choice, float(res.incumbent_objective),
                    None if res.objective_bound is None else float(res.objective_bound))


def catalog_for(catalog: Catalog | str | Path, instance: Instance) -> Catalog:
    """``catalog`` (read when a path) checked against ``instance``, without the parts no design can
    use (:func:`hieropt.io.catalog.check_catalog`).

    Raises:
        InputError: a bad catalog file, or one that does not fit the instance's network."""
    from ..io.catalog import check_catalog, read_catalog

    if isinstance(catalog, str | Path):
        return read_catalog(catalog, instance)
    return check_catalog(catalog, instance, "catalog")


def options_milp(instance: Instance, tm: TimeModel, options: list[list[Option]],
                 product: bool = False) -> ProvisionMILP:
    """The unary MILP (:func:`hieropt.formulation.milp.build_provision_milp`) over ``options``'
    GB/s, $ and W (0 where unknown); ``product``: with the time x cost objective."""
    return build_provision_milp(instance, tm, [[o.bw_gbps for o in opts] for opts in options],
                                [[o.cost_usd for o in opts] for opts in options], product=product,
                                power_w=[[o.power_w or 0.0 for o in opts] for opts in options])


def option_key(bw: float) -> float:
    """A bandwidth (GB/s) to 12 significant digits: options of equal key are interchangeable."""
    return float(f"{bw:.12g}")


def instance_options(catalog: Catalog, instance: Instance,
                     power: bool = False) -> list[list[Option]]:
    """Options per dimension within the instance's bounds, sorted by bandwidth; of equal bandwidths
    the cheapest, or with ``power`` every one no other beats in both cost and power.

    Raises:
        InputError: a dimension has no option within the bounds."""
    out = []
    for d, b in enumerate(instance.bounds_or_default):
        same: dict[float, list[Option]] = {}
        high = math.inf if b.upper_gbps is None else b.upper_gbps
        # (no fat trees designed for unit counts outside the bounds)
        for o in dimension_options(catalog, instance.network, d, within=(b.lower_gbps, high)):
            if o.bw_gbps < b.lower_gbps * (1 - 1e-12) or o.bw_gbps > high * (1 + 1e-12):
                continue
            same.setdefault(option_key(o.bw_gbps), []).append(o)
        kept = []
        for opts in same.values():
            if not power:
                kept.append(min(opts, key=lambda o: o.cost_usd))
                continue
            w = [o.power_w or 0.0 for o in opts]
            kept += [o for i, o in enumerate(opts) if not any(
                (opts[j].cost_usd <= o.cost_usd and w[j] <= w[i])
                and (opts[j].cost_usd < o.cost_usd or w[j] < w[i] or j < i)
                for j in range(len(opts)) if j != i)]
        if not kept:
            dim = instance.network.dims[d]
            raise InputError("catalog", f"classes.{dim.cost_class}",
                             f"dimension {d} ({dim.block} {dim.npus}) has no option within the "
                             "instance's bounds and the fabric's limits (max_tiers, placement)",
                             "add a part whose bandwidth fits the bounds, or raise max_tiers")
        out.append(sorted(kept, key=lambda o: o.bw_gbps))
    return out


def check_power_figures(catalog: Catalog, instance: Instance, why: str) -> None:
    """Every part a dimension of ``instance`` may use has ``watts``.

    Raises:
        InputError: naming the first part without one (``why`` says what needs it)."""
    used = {dim.cost_class for dim in instance.network.dims}
    missing = [f for f in catalog.missing_power() if f.split(".")[1] in used]
    if missing:
        raise InputError("catalog", missing[0],
                         f"no power figure, but {why} needs one on every part",
                         "add watts = <W per unit> (0 for passive parts)")


PRIMARY = {"performance": "obj_time", "min_cost": "obj_cost",
           "performance_per_cost": "obj_product", "min_power": "obj_power"}
"""The MILP's objective component of each provisioning objective."""
PER_UNIT = {"obj_time": MS_NS, "obj_cost": MUSD, "obj_product": NS_USD_PER_UNIT, "obj_power": KW}
"""ns, $, ns*$ or W per model unit of each MILP objective (time: its communication part)."""


def native(name: str, value: float, tm: TimeModel) -> float:
    """The model value ``value`` of MILP objective ``name`` in ns (with ``tm.compute_ns``), $, ns*$
    or W."""
    return (tm.compute_ns if name == "obj_time" else 0.0) + value * PER_UNIT[name]


def design_value(objective: str, milp: ProvisionMILP, tm: TimeModel,
                 choice: tuple[int, ...]) -> float:
    """Exact objective value (ns, $, ns*$ or W) of ``choice`` from the time model and the
    options."""
    T = tm.compute_ns + milp.comm_ms(choice, tm) * MS_NS
    return _value(PRIMARY[objective], T, milp.cost(choice), milp.power(choice))


def _value(name: str, T: float, C: float, P: float) -> float:
    return {"obj_time": T, "obj_cost": C, "obj_product": T * C, "obj_power": P}[name]


def tie_break(solver: ProvisionSolver, objective: str, milp: ProvisionMILP, tm: TimeModel,
              choice: tuple[int, ...]) -> MilpRun | None:
    """The second solve: the cheapest design of (nearly) the optimal time, or the fastest of the
    optimal cost (power); None when none is better."""
    m, power = milp.model, objective == "min_power"
    value = {"comm": lambda c: milp.comm_ms(c, tm), "cost": milp.cost, "power": milp.power}
    held, other = ("comm", "cost") if objective == "performance" else (objective[4:], "comm")
    per_unit = {"comm": 1.0, "cost": MUSD, "power": KW}[held]
    m.tie = pyo.Constraint(expr=getattr(m, held) <= value[held](choice) / per_unit * (1 + TIE_TOL)
                           + (1e-12 if power else 0.0))
    run = solver.solve("obj_cost" if objective == "performance" else "obj_time")
    m.del_component(m.tie)
    if run.status is not Status.OPTIMAL or run.choice is None:
        return None
    first = value[held](choice) * (1 + TIE_TOL) + (1e-9 if power else 0.0)
    better = value[held](run.choice) <= first and value[other](run.choice) < value[other](choice)
    return run if better else None


def verify_design(instance: Instance, tm: TimeModel, milp: ProvisionMILP, objective: str,
                  options: list[list[Option]], run: MilpRun, name: str, max_time: float | None,
                  max_cost: float | None, max_power: float | None = None, *,
                  total: TotalCapex | None = None
                  ) -> tuple[tuple[Option, ...], Breakdown, float]:
    """Re-check the design of ``run`` (its choice among ``options``) by the independent evaluator
    against the constraints, the MILP's claim (incumbent of component ``name``) and the limits (ns,
    $, W, the total cap ``total``).

    Returns:
        (the design, one option per dimension; the evaluator's breakdown; the exact objective
            value).

    Raises:
        SolverError: any disagreement, each named."""
    choice, incumbent = run.choice, run.incumbent
    design = tuple(options[d][o] for d, o in enumerate(choice))
    bw = np.array([o.bw_gbps for o in design])
    bd = evaluate(instance, bw)
    T = bd.iteration_time_ns
    C = float(sum(line.cost_usd for o in design for line in o.bom))
    watts = [line.watts for o in design for line in o.bom]
    # unknown power: 0 in the MILP
    P = float(sum(watts)) if all(w is not None for w in watts) else milp.power(choice)
    problems = [f"violates {text}" for text, _ in constraint_violations(instance, bw)]
    if abs(tm.time_ns(bw) - T) > 1e-9 * T:
        problems.append(f"the aggregated time model gives {tm.time_ns(bw):.12g} ns, the "
                        f"evaluator {T:.12g} ns")
    if abs(C - milp.cost(choice)) > 1e-9 * max(C, 1.0):
        problems.append(f"bill of materials ${C:,.2f} differs from the MILP's option cost "
                        f"${milp.cost(choice):,.2f}")
    claimed, exact = native(name, incumbent, tm), _value(name, T, C, P)
    if abs(P - milp.power(choice)) > 1e-9 * max(P, 1.0):
        problems.append(f"bill of materials {P:,.1f} W differs from the MILP's option power "
                        f"{milp.power(choice):,.1f} W")
    # a design may draw 0 W (HiGHS returns ~1e-12 kW then)
    floor = 1.0 if name == "obj_power" else 1e-300
    if abs(claimed - exact) > CLAIM_TOL * max(abs(exact), floor):
        problems.append(f"the MILP claims {claimed:.12g} but the design evaluates to {exact:.12g}")
    if max_time is not None and T > max_time * (1 + 1e-9):
        problems.append(f"iteration time {T:,.1f} ns exceeds the target {max_time:,.1f} ns")
    if max_cost is not None and C > max_cost * (1 + 1e-9):
        problems.append(f"cost ${C:,.2f} exceeds the budget ${max_cost:,.2f}")
    if max_power is not None and P > max_power * (1 + 1e-9):
        problems.append(f"power {P:,.1f} W exceeds the power budget {max_power:,.1f} W")
    if total is not None and total.network_usd(C, P) > total.network_left_usd * (1 + 1e-9):
        problems.append(f"the cluster's capex ${total.total_usd(C, P):,.2f} exceeds the total "
                        f"budget ${total.cap_usd:,.2f}")
    if problems:
        raise SolverError("independent verification of the integer design failed: "
                          + "; ".join(problems))
    return design, bd, _value(PRIMARY[objective], T, C, P)


def explain_infeasible(solver: ProvisionSolver, instance: Instance, tm: TimeModel,
                       options: list[list[Option]], max_time: float | None,
                       max_cost: float | None, max_power: float | None = None, *,
                       site: SitePower | None = None,
                       total: TotalCapex | None = None) -> NoSolutionError:
    """Why no design exists (to raise): the time target (ns), budget ($), power budget (W), site cap
    (``site``) or total cap (``total``), each with the best a design achieves without it; when two
    or more leave no design each, the first that leaves none alone, with the best a design achieves
    under no limit; when only all together do, their names; else the design constraints with the
    bandwidths the parts give."""
    m = solver.milp.model
    rows = [getattr(m, n) for n in LIMIT_ROWS if hasattr(m, n)]

    def cause() -> NoSolutionError | None:
        return _limit_cause(solver, tm, max_time, max_cost, max_power, site, total)

    if (why := cause()) is not None:
        return why
    # two limits or more leave no design each: every one that does alone, with the others off
    for row in rows:
        row.deactivate()
    try:
        causes = []
        for row in rows:
            row.activate()
            alone = solver.solve("obj_cost").status is Status.INFEASIBLE
            causes += [str(why).removeprefix("infeasible: ")] if alone and (why := cause()) else []
            row.deactivate()
        if causes:
            return NoSolutionError("infeasible", "; also ".join(causes))
        if rows and solver.solve("obj_cost").choice is not None:
            named = _limit_words(m, max_time, max_cost, max_power, site, total)
            return NoSolutionError("infeasible", (
                f"no design from the catalog meets {named} together, though each alone is met "
                "by one; relax one of them"))
    finally:
        for row in rows:
            row.activate()
    ranges = "; ".join(f"bw[{d}] in {{{_values(opts)}}}" for d, opts in enumerate(options))
    cons = "; ".join(c.text for c in instance.constraints) or "(none)"
    return NoSolutionError("infeasible", (
        f"no combination of the catalog's parts meets the design constraints {cons}: the parts "
        f"give {ranges} GB/s per NPU; change the constraints or the parts"))


LIMIT_ROWS = ("time_cap", "budget", "power_cap", "site_cap", "total_cap")
"""The MILP rows of the limits :func:`explain_infeasible` names, in the order it tries them."""


def _limit_cause(solver: ProvisionSolver, tm: TimeModel, max_time: float | None,
                 max_cost: float | None, max_power: float | None, site: SitePower | None,
                 total: TotalCapex | None) -> NoSolutionError | None:
    """The first active limit row without which a design exists, as the error naming it with the
    best a design achieves without it (the other active rows kept); None when there is none."""
    m = solver.milp.model
    budget = usd_cents(max_cost, up=False) if max_cost else ""
    on = {n for n in LIMIT_ROWS if hasattr(m, n) and getattr(m, n).active}
    within = f" within the budget ${budget}" if "budget" in on else ""
    for name, objective, why in (
            ("time_cap", "performance", "time target {max_time:,.1f} ns: the fastest design from "
             "the catalog{within} takes {best:,.1f} ns; raise the target or add faster parts"),
            ("budget", "min_cost", "budget ${budget}: the cheapest design from the "
             "catalog that meets the constraints costs ${floor}; raise the budget or add "
             "cheaper parts"),
            ("power_cap", "min_power", "power budget {power_text} W: the lowest-power design "
             "from the catalog that meets the other limits draws {best:,.0f} W{power_hint}; raise "
             "the power budget"),
            ("site_cap", "min_power", "the site's power cap of {cap_mw:,.6g} MW: with the "
             "lowest-power design from the catalog that meets the other limits (its parts draw "
             "{best:,.0f} W) the cluster draws {mw:,.6g} MW with PUE; fewer NPUs, lower-power "
             "parts or a higher cap")):
        if name not in on:
            continue
        getattr(m, name).deactivate()
        run = solver.solve(PRIMARY[objective])
        getattr(m, name).activate()
        if run.choice is not None:
            best = design_value(objective, solver.milp, tm, run.choice)
            return NoSolutionError("infeasible", why.format(
                max_time=max_time, budget=budget, max_power=max_power, within=within, best=best,
                floor=usd_cents(best, up=True), cap_mw=site.cap_mw if site else 0.0,
                mw=site.cluster_mw(best) if site else 0.0,
                power_hint=power_unit_hint(max_power, best) if max_power else "",
                power_text=(f"{max_power:,.0f}" if max_power and max_power >= 100
                            else f"{max_power or 0:g}")))
    if total is not None and "total_cap" in on:
        m.total_cap.deactivate()
        run = solver.solve("obj_total")
        m.total_cap.activate()
        if run.choice is not None:
            return NoSolutionError("infeasible", total_cap_words(
                total, solver.milp.cost(run.choice), solver.milp.power(run.choice)))
    return None


def _limit_words(m: pyo.ConcreteModel, max_time: float | None, max_cost: float | None,
                 max_power: float | None, site: SitePower | None,
                 total: TotalCapex | None) -> str:
    """The limits of ``m`` named in words (time target ns, budget $, power budget W, the site's cap
    MW, the total budget $)."""
    words = {"time_cap": f"the time target {max_time or 0:,.1f} ns",
             "budget": f"the budget ${usd_cents(max_cost or 0, up=False)}",
             "power_cap": f"the power budget {max_power or 0:,.0f} W",
             "site_cap": f"the site's power cap of {site.cap_mw if site else 0:,.6g} MW",
             "total_cap": f"the total budget ${usd_cents(total.cap_usd if total else 0, up=False)}"}
    named = [words[n] for n in LIMIT_ROWS if hasattr(m, n)]
    return ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else "".join(named)


def add_total_cap(m: pyo.ConcreteModel, total: TotalCapex) -> None:
    """Add to ``m`` the total capex cap as the row parts' $ + ``usd_per_w`` x parts' W <= what the
    cap leaves the network (M$), and the inactive objective ``obj_total`` of that share."""
    share = m.cost + (total.usd_per_w * KW / MUSD) * m.power
    m.total_cap = pyo.Constraint(expr=share <= total.network_left_usd / MUSD)
    m.obj_total = pyo.Objective(expr=share, sense=pyo.minimize)
    m.obj_total.deactivate()


def total_cap_words(total: TotalCapex, cost_usd: float, power_w: float) -> str:
    """Why the total capex cap ``total`` leaves no design: what it leaves the network, and the least
    network (``cost_usd`` in parts, ``power_w`` W) with the total that buys it."""
    facility = ("" if total.usd_per_w == 0 else
                f" and draws {power_w:,.0f} W, whose facility costs "
                f"${usd_cents(total.usd_per_w * power_w, up=True)}")
    return (f"total budget ${usd_cents(total.cap_usd, up=False)}: the cluster without its network "
            f"costs ${usd_cents(total.fixed_usd, up=True)} (accelerators, servers, racks and "
            f"facility), which leaves ${usd_cents(max(total.network_left_usd, 0.0), up=False)} "
            f"for the network; the cheapest design from the catalog that meets the other limits "
            f"costs ${usd_cents(cost_usd, up=True)} in parts{facility}: a total budget of at "
            f"least ${usd_cents(total.total_usd(cost_usd, power_w), up=True)} buys it")


def total_note(total: TotalCapex | None, design: tuple[Option, ...]) -> list[str]:
    """The line saying how ``design`` meets the total capex cap (none without one)."""
    if total is None:
        return []
    cost = float(sum(o.cost_usd for o in design))
    watts = [line.watts for o in design for line in o.bom]
    power = float(sum(w for w in watts if w is not None))
    facility = (f" + ${total.usd_per_w * power:,.0f} of facility for their {power:,.0f} W"
                if total.usd_per_w > 0 else "")
    return [f"total budget ${total.cap_usd:,.0f}: the cluster costs "
            f"${total.total_usd(cost, power):,.0f} with this network (${total.fixed_usd:,.0f} "
            f"without it + its parts' ${cost:,.0f}{facility})"]


def _values(opts: list[Option], show: int = 6) -> str:
    vals = [f"{o.bw_gbps:g}" for o in opts]
    return ", ".join(vals) if len(vals) <= show else ", ".join(vals[:3] + ["..."] + vals[-2:])


@dataclass(frozen=True)
class TradeoffPoint:
    """The fastest catalog design within a cost level ($) and a power level (W), and its figures."""

    max_cost_usd: float
    max_power_w: float
    design: tuple[Option, ...]
    iteration_time_ns: float
    network_cost_usd: float
    power_w: float
    gap: float


@dataclass(frozen=True)
class Tradeoff:
    """The non-dominated points of the epsilon-constraint grid (time ascending), the grid size,
    solves, time and the notes of the dimensions bounded at the accelerator's ``nic_gbps``."""

    points: tuple[TradeoffPoint, ...]
    grid: tuple[int, int]
    solves: int
    solve_seconds: float
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready trade-off as ``hieropt provision --tradeoff --json`` writes it (ns, $, W; a
        gap that is not finite None; designs as :meth:`hieropt.model.options.Option.to_dict`)."""
        return {"grid": list(self.grid), "solves": self.solves,
                "solve_seconds": self.solve_seconds, "notes": list(self.notes),
                "points": [{"iteration_time_ns": q.iteration_time_ns,
                            "network_cost_usd": q.network_cost_usd, "power_w": q.power_w,
                            "max_cost_usd": q.max_cost_usd, "max_power_w": q.max_power_w,
                            "gap": float(q.gap) if math.isfinite(q.gap) else None,
                            "design": [o.to_dict() for o in q.design]} for q in self.points]}


def check_levels(levels: Any) -> None:
    """Refuse a trade-off's ``levels`` (per axis) but a whole number >= 2: InputError (its fix)."""
    if isinstance(levels, bool) or not isinstance(levels, int | np.integer):
        raise InputError("levels", None, f"{levels!r} is not a whole number",
                         "ask for at least 2 levels per axis")
    if levels < 2:
        raise InputError("levels", None, plural(levels, "level"),
                         "ask for at least 2 levels per axis")


@scoped
def provision_tradeoff(instance: Instance, catalog: Catalog | str | Path, levels: int = 5,
                       time_limit_s: float = 60.0, *, max_iteration_time_ns: float | None = None,
                       max_cost_usd: float | None = None, max_power_w: float | None = None,
                       max_total_capex_usd: float | None = None,
                       progress: Callable[[int, int], None] | None = None) -> Tradeoff:
    """The exact time-cost-power front of whole-part designs by epsilon-constraint (Haimes, Lasdon
    and Wismer 1971): on a ``levels`` x ``levels`` grid of cost levels ($, the cheapest design's to
    the fastest's) and power levels (W, the lowest-power design's to the fastest's), the exact MILP
    min T(B) within both, the rows and the site's power cap, each design re-checked; the points not
    dominated in (time, cost, power). ``progress(done, total)``: called after each cost level's row
    of the grid with the points settled of ``levels`` ** 2. As in :func:`~.provision.provision`,
    shares of hours become weights (:func:`hours_weighted`) and the limits are rows of every point's
    MILP (the ends of the grid are the fastest, cheapest and lowest-power designs within them):
    ``max_iteration_time_ns`` (ns; default the instance's), ``max_cost_usd`` (the parts' $; default
    ``max_network_cost_usd``), ``max_power_w`` (the parts' W), ``max_total_capex_usd`` (the whole
    cluster's capex, $: :class:`TotalCapex`); one note says which were applied.

    Raises:
        InputError: fewer than 2 levels, a bad catalog, a part without a power figure, a limit
            not finite and > 0, a total cap without the ``[cluster]`` capex.
        NoSolutionError: no catalog design meets the constraints, the limits or the site's power
            cap (as :func:`explain_infeasible` names it; first the rows' own, as solve does).
        SolverError: HiGHS failed, or a design failed verification
            (:class:`hieropt.errors.LimitReached` at a point's time limit)."""
    start = time.perf_counter()
    time_limit_s = check_time_limit(time_limit_s)
    check_levels(levels)
    _, max_iteration_time_ns, max_cost_usd = checked_limits(
        instance, "performance", max_iteration_time_ns, max_cost_usd, max_power_w)
    total = total_capex_cap(instance, max_total_capex_usd)
    instance, _ = hours_weighted(instance, time_limit_s)  # (as provision: shares -> weights)
    no_design_by_rows_of(instance, time_limit_s)  # (as solve: the rows' own reason, first)
    instance, notes = nic_bounded(instance)  # (no NIC bought that the accelerator cannot feed)
    catalog = catalog_for(catalog, instance)
    check_power_figures(catalog, instance, "the time-cost-power trade-off")
    if (over := power_cap_problem(instance)) is not None:  # (the site's cap, whatever the network)
        raise NoSolutionError("infeasible", over)
    tm = build_time_model(instance)
    if max_iteration_time_ns is not None and max_iteration_time_ns <= tm.compute_ns:
        raise NoSolutionError("infeasible", f"time target {max_iteration_time_ns:,.1f} ns: the "
                              f"compute alone takes {tm.compute_ns:,.1f} ns; raise the target")
    options = instance_options(catalog, instance, power=True)
    milp = options_milp(instance, tm, options)
    m = milp.model
    limits = (max_iteration_time_ns, max_cost_usd, max_power_w)
    add_caps(m, tm, *limits)  # (rows of every point, as in provision)
    if (site := site_power(instance)) is not None:
        m.site_cap = pyo.Constraint(expr=m.power <= site.network_cap_w / KW)
    if total is not None:
        add_total_cap(m, total)
    solver = ProvisionSolver(milp, time_limit_s)
    ends = []  # the fastest, the cheapest and the lowest-power design within the limits
    for objective in ("obj_time", "obj_cost", "obj_power"):
        if (choice := solver.solve(objective).choice) is None:
            raise explain_infeasible(solver, instance, tm, options, *limits, site=site,
                                     total=total)
        ends.append(choice)
    notes = (*notes, *link_notes(instance.network), *limit_notes(limits, total))
    max_power_w = power_limit(max_power_w, site)
    c_hi, p_hi = milp.cost(ends[0]), milp.power(ends[0])
    c_lo, p_lo = milp.cost(ends[1]), milp.power(ends[2])
    m.cost_level = pyo.Constraint(expr=m.cost <= c_hi / MUSD)
    m.power_level = pyo.Constraint(expr=m.power <= p_hi / KW)
    found: dict[tuple[int, ...], TradeoffPoint] = {}
    for row, c in enumerate(np.linspace(c_lo, c_hi, levels), start=1):
        if progress is not None and row > 1:
            progress((row - 1) * levels, levels * levels)
        for p in np.linspace(p_lo, p_hi, levels):
            m.del_component(m.cost_level)
            m.del_component(m.power_level)
            m.cost_level = pyo.Constraint(expr=m.cost <= c * (1 + 1e-12) / MUSD)
            m.power_level = pyo.Constraint(expr=m.power <= p * (1 + 1e-12) / KW + 1e-12)
            run = solver.solve("obj_time")
            if run.choice is None and run.status is Status.LIMIT:  # (not "no design": unknown)
                raise limit_reached(f"the trade-off point at ${c:,.0f} and {p:,.0f} W",
                                    time_limit_s)
            if run.choice is None:  # no design within both levels
                continue
            if run.status is not Status.OPTIMAL:
                raise SolverError(f"a trade-off point stopped at '{run.termination}'")
            design, _, value = verify_design(instance, tm, milp, "performance", options, run,
                                             "obj_time", max_iteration_time_ns,
                                             min(float(c) * (1 + 1e-9), max_cost_usd or math.inf),
                                             min(float(p) * (1 + 1e-9) + 1e-9,
                                                 max_power_w or math.inf), total=total)
            bound = native("obj_time", run.bound if run.bound is not None else run.incumbent, tm)
            point = TradeoffPoint(float(c), float(p), design, value, milp.cost(run.choice),
                                  milp.power(run.choice),
                                  max(0.0, (value - min(bound, value)) / value))
            key = run.choice
            if key not in found or found[key].iteration_time_ns > point.iteration_time_ns:
                found[key] = point
    if progress is not None:
        progress(levels * levels, levels * levels)
    pts = sorted(found.values(), key=lambda q: (q.iteration_time_ns, q.network_cost_usd, q.power_w))
    front = [q for q in pts if not any(_dominates(o, q) for o in pts if o is not q)]
    return Tradeoff(tuple(front), (levels, levels), solver.solves, time.perf_counter() - start,
                    notes)


def _dominates(a: TradeoffPoint, b: TradeoffPoint) -> bool:
    tol = 1e-9
    pairs = ((a.iteration_time_ns, b.iteration_time_ns, 0.0),
             (a.network_cost_usd, b.network_cost_usd, tol), (a.power_w, b.power_w, tol))
    return (all(x <= y * (1 + tol) + e for x, y, e in pairs)
            and any(x < y * (1 - tol) - e for x, y, e in pairs))
