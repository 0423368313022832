"""The exact time-cost-power trade-off of integer provisioning, by epsilon-constraint (Haimes,
Lasdon and Wismer 1971).

For a grid of cost levels C_i (the cheapest catalog design to the cost of the fastest) and power
levels P_j (the lowest-power design to the power of the fastest), each point is the exact MILP min
T(B) s.t. cost <= C_i, power <= P_j, the design rows, whole parts from the catalog, on one
persistent HiGHS model (:mod:`hieropt.formulation.milp`), re-checked by the independent evaluator.
The points not dominated in (time, cost, power) are the front: no catalog design is faster within
both limits of a point.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyomo.environ as pyo

from ..cache import scoped
from ..errors import InputError, SolverError
from ..formulation.milp import KW, MUSD
from ..formulation.scale import MS_NS
from ..model.catalog import Catalog
from ..model.options import Option
from ..model.timing import build_time_model
from ..result import Status
from ..spec import Instance
from ..spec.overrides import check_time_limit
from .provision_milp import (
    ProvisionSolver,
    catalog_for,
    check_power_figures,
    explain_infeasible,
    instance_options,
    options_milp,
    verify_design,
)

__all__ = ["TradeoffPoint", "Tradeoff", "provision_tradeoff"]


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
    """The non-dominated points of the epsilon-constraint grid (time ascending), the grid size and
    timing."""

    points: tuple[TradeoffPoint, ...]
    grid: tuple[int, int]
    solves: int
    solve_seconds: float


@scoped
def provision_tradeoff(instance: Instance, catalog: Catalog | str | Path, levels: int = 5,
                       time_limit_s: float = 60.0) -> Tradeoff:
    """Time-cost-power front of whole-part designs from ``catalog`` on a ``levels`` x ``levels``
    grid.

    Raises:
        InputError: fewer than 2 levels, a bad catalog, or a part without a power figure.
        NoSolutionError: no catalog design meets the design constraints.
        SolverError: HiGHS failed, or a design failed independent verification.
    """
    start = time.perf_counter()
    time_limit_s = check_time_limit(time_limit_s)
    if isinstance(levels, bool) or not isinstance(levels, int | np.integer):
        raise InputError("levels", None, f"{levels!r} is not a whole number",
                         "ask for at least 2 levels per axis")
    if levels < 2:
        raise InputError("levels", None, f"{levels} levels", "ask for at least 2 levels per axis")
    catalog = catalog_for(catalog, instance)
    check_power_figures(catalog, instance, "the time-cost-power trade-off")
    tm = build_time_model(instance)
    options = instance_options(catalog, instance, power=True)
    milp = options_milp(instance, tm, options)
    m = milp.model
    solver = ProvisionSolver(milp, time_limit_s)
    ends = []  # the fastest, the cheapest and the lowest-power design
    for objective in ("obj_time", "obj_cost", "obj_power"):
        if (choice := solver.solve(objective).choice) is None:
            raise explain_infeasible(solver, instance, tm, options, None, None)
        ends.append(choice)
    c_hi, p_hi = milp.cost(ends[0]), milp.power(ends[0])
    c_lo, p_lo = milp.cost(ends[1]), milp.power(ends[2])
    m.cost_cap = pyo.Constraint(expr=m.cost <= c_hi / MUSD)
    m.power_cap = pyo.Constraint(expr=m.power <= p_hi / KW)
    found: dict[tuple[int, ...], TradeoffPoint] = {}
    for c in np.linspace(c_lo, c_hi, levels):
        for p in np.linspace(p_lo, p_hi, levels):
            m.del_component(m.cost_cap)
            m.del_component(m.power_cap)
            m.cost_cap = pyo.Constraint(expr=m.cost <= c * (1 + 1e-12) / MUSD)
            m.power_cap = pyo.Constraint(expr=m.power <= p * (1 + 1e-12) / KW + 1e-12)
            run = solver.solve("obj_time")
            if run.choice is None:  # no design within both levels
                continue
            if run.status is not Status.OPTIMAL:
                raise SolverError(f"a trade-off point stopped at '{run.termination}'")
            design = tuple(options[d][o] for d, o in enumerate(run.choice))
            bd, value = verify_design(instance, tm, milp, "performance", run.choice, design,
                                      ("obj_time", run.incumbent), None, float(c) * (1 + 1e-9),
                                      float(p) * (1 + 1e-9) + 1e-9)
            bound = tm.compute_ns + (run.bound if run.bound is not None else run.incumbent) * MS_NS
            point = TradeoffPoint(float(c), float(p), design, value, milp.cost(run.choice),
                                  milp.power(run.choice),
                                  max(0.0, (value - min(bound, value)) / value))
            key = run.choice
            if key not in found or found[key].iteration_time_ns > point.iteration_time_ns:
                found[key] = point
    pts = sorted(found.values(), key=lambda q: (q.iteration_time_ns, q.network_cost_usd, q.power_w))
    front = [q for q in pts if not any(_dominates(o, q) for o in pts if o is not q)]
    return Tradeoff(tuple(front), (levels, levels), solver.solves, time.perf_counter() - start)


def _dominates(a: TradeoffPoint, b: TradeoffPoint) -> bool:
    tol = 1e-9
    pairs = ((a.iteration_time_ns, b.iteration_time_ns, 0.0),
             (a.network_cost_usd, b.network_cost_usd, tol), (a.power_w, b.power_w, tol))
    return (all(x <= y * (1 + tol) + e for x, y, e in pairs)
            and any(x < y * (1 - tol) - e for x, y, e in pairs))
