"""Integer provisioning from a parts catalog (:func:`provision`; docs/how-to/provision.md): the
exact unary MILP of :mod:`hieropt.formulation.milp` on HiGHS
(:mod:`hieropt.solvers.provision_milp`), ties broken by a second solve, the design re-checked by
the independent evaluator and compared with the continuous optimum and its roundings."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyomo.environ as pyo

from ..cache import scoped
from ..errors import (
    HieroptError,
    InputError,
    NoSolutionError,
    SolverError,
    limit_reached,
)
from ..formulation.milp import KW, ProvisionMILP
from ..io.nic_bound import nic_bounded, nic_error
from ..model.capex import TotalCapex
from ..model.catalog import Catalog, unit_step
from ..model.options import BomLine, Option, dimension_options, link_notes
from ..model.run import SitePower, power_cap_problem, site_power
from ..model.timing import Breakdown, TimeModel, build_time_model
from ..names import PROVISION_OBJECTIVES, with_flag
from ..result import Solution, Status, freeze_arrays, results_equal
from ..spec import Bound, Instance
from ..spec.overrides import check_time_limit
from ..units import objective_unit, time_unit_hint
from .cost_range import no_design_by_rows_of
from .objectives import solve
from .outcome import relative_gap
from .portfolio import hours_weighted
from .provision_limits import add_caps, checked_limits, power_limit, total_capex_cap
from .provision_milp import (
    MILP_REL_GAP,
    PRIMARY,
    ProvisionSolver,
    add_total_cap,
    catalog_for,
    check_power_figures,
    design_value,
    explain_infeasible,
    instance_options,
    native,
    option_key,
    options_milp,
    tie_break,
    total_note,
    verify_design,
)

__all__ = ["provision", "Provisioning", "Rounding", "PROVISION_OBJECTIVES", "MILP_REL_GAP"]

@dataclass(frozen=True)
class Rounding:
    """The continuous optimum rounded to whole units of the catalog's parts.

    Attributes:
        name: ``"down"``, ``"up"`` or ``"best"`` (each dimension down or up); description: one
            line.
        feasible: whether any such rounding meets the constraints, target and budget.
        design: the best such rounding (one option per dimension), or None.
        iteration_time_ns, network_cost_usd, objective_value: its figures (None when
            infeasible).
        saving: (rounding's objective - exact objective) / rounding's objective, >= 0 (None when
            infeasible)."""

    name: str
    description: str
    feasible: bool
    design: tuple[Option, ...] | None = None
    iteration_time_ns: float | None = None
    network_cost_usd: float | None = None
    objective_value: float | None = None
    saving: float | None = None

    @property
    def bw_gbps(self) -> np.ndarray | None:
        """Per-NPU bandwidths of the rounded design (GB/s), or None."""
        return None if self.design is None else np.array([o.bw_gbps for o in self.design])


@dataclass(frozen=True, eq=False)
class Provisioning:
    """The exact integer design and how it compares with the continuous optimum and its roundings.

    Attributes:
        status: OPTIMAL when HiGHS proved the gap target; LIMIT at its time limit with a design.
        message: one line.
        objective: ``performance`` | ``min_cost`` | ``performance_per_cost`` | ``min_power``;
            ``objective_unit`` ns | USD | ns*USD | W.
        design: the chosen option of every dimension (part, units, totals, switches, BOM lines).
        bw_gbps: (D,) per-NPU bandwidths, GB/s; iteration_time_ns: T by the independent
            evaluator.
        network_cost_usd: the bill of materials' total, $; power_w: its power, W (None when a
            part has no power figure).
        objective_value: the objective at the design (exact); objective_bound: HiGHS's proven
            lower bound; gap: (value - bound) / value.
        max_iteration_time_ns, max_cost_usd, max_power_w: the target, budget and power budget
            applied (None: none).
        total: the cap on the whole cluster's capex applied
            (:class:`~hieropt.model.capex.TotalCapex`; None: none).
        bom: every bill-of-materials line.
        breakdown: the evaluator's breakdown at ``bw_gbps`` (its costs are the instance's $/GB/s
            model, not the catalog's).
        continuous: the continuous performance optimum over the catalog's ranges, or None;
            continuous_note: why None, or what it means.
        roundings: the roundings of the continuous optimum (:class:`Rounding`).
        catalog: the catalog's name; options: options per dimension given to the MILP.
        milp_solves, milp_seconds: MILP solves (tie-breaks, diagnostics, roundings) and their
            wall time; solve_seconds: the whole call's.
        method: the algorithm; notes: remarks a user should read.
        nic_bounds: the notes of the dimensions bounded at the accelerator's ``nic_gbps``
            (:func:`hieropt.io.nic_bound.nic_bounded`).

    ``==`` compares every field but the wall times ``milp_seconds`` and ``solve_seconds`` (two
    provisionings of one instance are equal), ``bw_gbps`` element-wise
    (:func:`hieropt.result.results_equal`); unhashable."""

    status: Status
    message: str
    objective: str
    objective_unit: str
    design: tuple[Option, ...]
    bw_gbps: np.ndarray
    iteration_time_ns: float
    network_cost_usd: float
    power_w: float | None
    objective_value: float
    objective_bound: float
    gap: float
    max_iteration_time_ns: float | None
    max_cost_usd: float | None
    max_power_w: float | None
    bom: tuple[BomLine, ...]
    breakdown: Breakdown
    continuous: Solution | None
    continuous_note: str
    roundings: tuple[Rounding, ...]
    catalog: str
    options: tuple[int, ...]
    milp_solves: int
    milp_seconds: float = field(compare=False)
    solve_seconds: float = field(compare=False)
    method: str
    notes: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    total: TotalCapex | None = None
    nic_bounds: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        freeze_arrays(self, "bw_gbps")

    __eq__ = results_equal
    __hash__ = None  # type: ignore[assignment]  # (its arrays are unhashable)

    def to_dict(self, instance: Instance) -> dict[str, Any]:
        """JSON-ready result of provisioning ``instance`` (units in the keys), as ``hieropt
        provision --json`` writes but ``run`` and ``knee``, which the command adds
        (:func:`hieropt.solvers.provision_dicts.provision_dict`)."""
        from .provision_dicts import provision_dict

        return provision_dict(instance, self)

    @property
    def success(self) -> bool:
        """True when the design is a certified optimum."""
        return self.status is Status.OPTIMAL

    @property
    def continuous_gap(self) -> float | None:
        """(T_integer - T_continuous) / T_integer, or None without a continuous optimum."""
        if self.continuous is None:
            return None
        return (self.iteration_time_ns - self.continuous.iteration_time_ns) / self.iteration_time_ns


@scoped
def provision(instance: Instance, catalog: Catalog | str | Path, objective: str | None = None,
              max_iteration_time_ns: float | None = None, max_cost_usd: float | None = None, *,
              max_power_w: float | None = None, max_total_capex_usd: float | None = None,
              compare: bool = True, time_limit_s: float = 60.0) -> Provisioning:
    """Provision every dimension from ``catalog`` with whole parts, exactly (MILP, proven gap); a
    dimension beyond the accelerator's scale-up domain gets at most its ``nic_gbps`` per NPU
    (:func:`hieropt.io.nic_bound.nic_bounded`, noted in ``notes`` and ``nic_bounds``).

    Args:
        instance: the problem (network, workload, mapping, design constraints, bounds).
        catalog: a :class:`Catalog` or the path of a catalog file (TOML / YAML), checked against
            ``instance``.
        objective: ``"performance"``, ``"min_cost"`` (with time <= ``max_iteration_time_ns``),
            ``"performance_per_cost"`` or ``"min_power"`` (least W with time <=
            ``max_iteration_time_ns``); default: the instance's.
        max_iteration_time_ns: time target, ns (required for min_cost and min_power); default:
            the instance's.
        max_cost_usd: budget on the catalog cost, $; default: the instance's
            ``max_network_cost_usd``.
        max_power_w: power budget of the network's parts, W (``watts`` needed on every part the
            design may use). The site's cap (``[cluster] max_power_mw``) applies too: as a row
            without ``network_w_per_npu`` (:func:`hieropt.model.run.site_power`), else as the
            check of :func:`hieropt.model.run.power_cap_problem`.
        max_total_capex_usd: a cap on the whole cluster's capex, $ (needs the ``[cluster]``
            capex): the parts' $ plus the facility their W needs <= the cap less the cluster's
            capex without its network (:class:`hieropt.model.capex.TotalCapex`), a MILP row; a
            part without ``watts`` counts 0 W.
        compare: also solve the continuous optimum and its roundings.
        time_limit_s: time limit of each MILP solve, s.

    Returns:
        A verified :class:`Provisioning`.

    Raises:
        InputError: a bad catalog, an unknown objective, min_cost / min_power without a time
            target, a non-positive target or budget, a power objective, budget or site cap with
            a part without a power figure, a total cap without the ``[cluster]`` capex, a
            ``lower_gbps`` above the NIC limit beyond the scale-up domain.
        NoSolutionError: no catalog design meets the constraints, target, budget, power budget,
            site cap or total cap (exit code 3); the rows alone cannot hold or force zero
            bandwidth where traffic goes: first, in :func:`hieropt.solve`'s words.
        SolverError: HiGHS failed, or the evaluator disagrees with the MILP (exit code 3);
            :class:`hieropt.errors.LimitReached` when the MILP's time limit came before any
            design."""
    time_limit_s = check_time_limit(time_limit_s)
    start = time.perf_counter()
    objective, max_iteration_time_ns, max_cost_usd = checked_limits(
        instance, objective, max_iteration_time_ns, max_cost_usd, max_power_w)
    total = total_capex_cap(instance, max_total_capex_usd)
    instance, _ = hours_weighted(instance, time_limit_s)  # (as solve: shares of hours -> weights)
    no_design_by_rows_of(instance, time_limit_s)  # (as solve: the rows' own reason, first)
    given = instance
    instance, nic_notes = nic_bounded(instance)  # (no NIC bought that the accelerator cannot feed)
    try:
        catalog = catalog_for(catalog, instance)
    except InputError as e:
        raise nic_error(e, given) from e
    if (over := power_cap_problem(instance)) is not None:  # (the site's cap, whatever the network)
        raise NoSolutionError("infeasible", over)
    site = site_power(instance)
    power = objective == "min_power" or max_power_w is not None or site is not None
    if power:
        why = ("objective min_power" if objective == "min_power" else with_flag("max_power_w")
               if max_power_w is not None else "the site's power cap ([cluster] max_power_mw, no "
               "network_w_per_npu)")
        check_power_figures(catalog, instance, why)

    tm = build_time_model(instance)
    if max_iteration_time_ns is not None and max_iteration_time_ns <= tm.compute_ns:
        raise NoSolutionError(
            "infeasible",
            f"time target {max_iteration_time_ns:,.1f} ns: the compute alone takes "
            f"{tm.compute_ns:,.1f} ns"
            # (a target in s or ms read as ns: the unit that makes it feasible, as solve says)
            f"{time_unit_hint(max_iteration_time_ns, tm.compute_ns)}; raise the target",
        )
    try:
        options = instance_options(catalog, instance, power)
    except InputError as e:
        raise nic_error(e, given) from e
    milp = options_milp(instance, tm, options, product=objective == "performance_per_cost")
    m = milp.model
    limits = (max_iteration_time_ns, max_cost_usd, max_power_w)
    add_caps(m, tm, *limits)
    if site is not None:
        m.site_cap = pyo.Constraint(expr=m.power <= site.network_cap_w / KW)
    if total is not None:
        add_total_cap(m, total)
    solver = ProvisionSolver(milp, time_limit_s)
    run = solver.solve(PRIMARY[objective])
    if run.status is Status.INFEASIBLE:
        why = explain_infeasible(solver, instance, tm, options, *limits, site=site, total=total)
        # (the bound is why when the fastest design misses the target or no part meets a row)
        raise nic_error(why, given) if str(why).startswith(
            ("infeasible: time target", "infeasible: no combination")) else why
    limits = (max_iteration_time_ns, max_cost_usd, power_limit(max_power_w, site))
    if run.choice is None and run.status is Status.LIMIT:
        raise limit_reached("the catalog's MILP", time_limit_s)
    if run.choice is None:
        raise SolverError(f"HiGHS found no design ({run.termination})")
    final, claim = run, PRIMARY[objective]
    first_value = design_value(objective, milp, tm, run.choice)
    if run.status is Status.OPTIMAL and objective in ("performance", "min_cost", "min_power"):
        tie = tie_break(solver, objective, milp, tm, run.choice)
        if tie is not None:
            final, claim = tie, "obj_cost" if objective == "performance" else "obj_time"
    design, bd, value = verify_design(instance, tm, milp, objective, options, final, claim, *limits,
                                      total=total)
    bound = native(PRIMARY[objective], run.bound, tm) if run.bound is not None else -math.inf
    bound = min(bound, value, first_value)
    gap = relative_gap(value, bound)
    notes = [*nic_notes, *link_notes(instance.network)] + [
        f"dimension {d} carries no traffic: its option is the cheapest the constraints allow"
        for d in np.flatnonzero(~tm.carries_traffic)] + _site_note(site, design)
    notes += total_note(total, design)
    continuous, cnote, roundings = None, "not computed (compare=False)", ()
    if compare:
        continuous, cnote = _continuous(instance, options)
        if continuous is not None:
            roundings = _roundings(solver, objective, instance, catalog, tm, milp, options,
                                   continuous.bw_gbps, value, limits, total)
    status = Status.OPTIMAL if run.status is Status.OPTIMAL else Status.LIMIT
    message = ("optimal within the gap target" if status is Status.OPTIMAL else
               f"HiGHS stopped at its time limit ({time_limit_s:g} s) at relative gap {gap:.3g}")
    return Provisioning(
        status=status, message=message, objective=objective,
        objective_unit=objective_unit(objective, instance.relative_time) or "W",  # (min_power)
        design=design, bw_gbps=bd.bw_gbps, iteration_time_ns=bd.iteration_time_ns,
        network_cost_usd=float(sum(o.cost_usd for o in design)), power_w=_power(design),
        objective_value=value, objective_bound=bound, gap=gap,
        max_iteration_time_ns=max_iteration_time_ns, max_cost_usd=max_cost_usd,
        max_power_w=max_power_w, bom=tuple(line for o in design for line in o.bom), breakdown=bd,
        continuous=continuous, continuous_note=cnote, roundings=roundings, catalog=catalog.name,
        options=tuple(len(o) for o in options), milp_solves=solver.solves,
        milp_seconds=solver.seconds, solve_seconds=time.perf_counter() - start,
        method=_method(objective), notes=tuple(notes),
        extra={"binaries": sum(len(o) for o in options), "rows": m.nconstraints(),
               "columns": m.nvariables()}, total=total, nic_bounds=nic_notes)


def _site_note(site: SitePower | None, design: tuple[Option, ...]) -> list[str]:
    """The line saying how the design meets the site's power cap (none without one)."""
    if site is None:
        return []
    w = float(sum(o.power_w or 0.0 for o in design))
    return [f"the site's power cap {site.cap_mw:,.6g} MW: the cluster draws "
            f"{site.cluster_mw(w):,.6g} MW with PUE (the network's parts {w:,.0f} W; at most "
            f"{max(site.network_cap_w, 0.0):,.0f} W fit under the cap)"]


def _method(objective: str) -> str:
    base = ("unary MILP (one binary per dimension x part x unit count [x switch]; B and 1/B exact) "
            "on HiGHS")
    return {"performance": base + "; then the cheapest design of that time",
            "min_cost": base + "; then the fastest design of that cost",
            "performance_per_cost": base + "; time x cost linearised exactly (binary x continuous)",
            "min_power": base + "; then the fastest design of that power"}[objective]


def _power(design: tuple[Option, ...]) -> float | None:
    watts = [o.power_w for o in design]
    return None if any(w is None for w in watts) else float(sum(watts))


def _continuous(instance: Instance, options: list[list[Option]]) -> tuple[Solution | None, str]:
    """The continuous performance optimum within the catalog's reachable range per dimension."""
    bounds = []
    for b, opts in zip(instance.bounds_or_default, options, strict=True):
        lo, hi = min(o.bw_gbps for o in opts), max(o.bw_gbps for o in opts)
        bounds.append(Bound(lower_gbps=max(b.lower_gbps, lo),
                            upper_gbps=hi if b.upper_gbps is None else min(b.upper_gbps, hi)))
    relaxed = instance.model_copy(update={  # (catalog targets are not the LIBRA cost model's)
        "bounds": tuple(bounds), "objective": "performance", "max_iteration_time_ns": None,
        "max_network_cost_usd": None})
    try:
        sol = solve(relaxed).raise_for_status()
    except HieroptError as e:
        return None, f"continuous optimum not available: {e}"
    if not sol.success:
        return None, f"continuous optimum not certified: {sol.message}"
    return sol, ("continuous performance optimum with each bandwidth within the catalog's range: a "
                 "lower bound on the iteration time of every integer design")


def _roundings(solver: ProvisionSolver, objective: str, instance: Instance, catalog: Catalog,
               tm: TimeModel, milp: ProvisionMILP, options: list[list[Option]],
               bw_cont: np.ndarray, exact_value: float,
               limits: tuple[float | None, float | None, float | None],
               total: TotalCapex | None = None) -> tuple[Rounding, ...]:
    """The continuous optimum rounded down, up or either per dimension to whole units of each part
    line, the MILP picking the best part among those roundings."""
    index = [{option_key(o.bw_gbps): i for i, o in enumerate(opts)} for opts in options]
    down: list[set[int]] = [set() for _ in options]
    up: list[set[int]] = [set() for _ in options]
    for d in range(len(options)):
        lines = {o.line: o.part for o in dimension_options(catalog, instance.network, d)}
        dim = instance.network.dims[d]
        for part in lines.values():  # (a product line's options differ in unit count only)
            # (link ports come in whole multiples of the peers they reach: the options' steps)
            step = unit_step(part, dim.block, dim.npus)
            exact_units = bw_cont[d] * part.share / part.unit_gbps / step
            # (the continuous optimum is known to ~1e-4 where it is flat: a value that close to a
            # whole number of units is that number)
            slack = 1e-4 * max(exact_units, 1.0)
            most = part.max_units // step
            n_down = step * min(max(math.floor(exact_units + slack), 1), most)
            n_up = step * min(max(math.ceil(exact_units - slack), 1), most)
            for n, target in ((n_down, down[d]), (n_up, up[d])):
                i = index[d].get(option_key(part.bw_gbps(n)))
                if i is not None:  # None: outside the instance's bounds
                    target.add(i)
    kinds = (
        ("down", "every dimension rounded down to whole units (at least 1) of each part", down),
        ("up", "every dimension rounded up to whole units (at most the unit limit) of each part",
         up),
        ("best", "each dimension rounded down or up, whichever is best",
         [a | b for a, b in zip(down, up, strict=True)]),
    )
    out = []
    m = milp.model
    for name, text, allowed in kinds:
        banned = [(d, o) for d in range(len(options)) for o in range(len(options[d]))
                  if o not in allowed[d]]
        if any(not a for a in allowed):
            out.append(Rounding(name, text, False))
            continue
        if banned:
            m.rounding = pyo.Constraint(expr=sum(m.z[d, o] for d, o in banned) == 0)
        run = solver.solve(PRIMARY[objective])
        if banned:
            m.del_component(m.rounding)
        if run.choice is None:
            out.append(Rounding(name, text, False))
            continue
        design, bd, value = verify_design(instance, tm, milp, objective, options, run,
                                          PRIMARY[objective], *limits, total=total)
        saving = relative_gap(value, exact_value)
        out.append(Rounding(name, text, True, design, bd.iteration_time_ns,
                            milp.cost(run.choice), value, saving))
    return tuple(out)

