"""The limits of integer provisioning shared by :func:`hieropt.solvers.provision.provision` and
:func:`hieropt.solvers.provision_milp.provision_tradeoff`: the objective, time target (ns), budget
($) and power budget (W) checked, the total capex cap, their rows of the MILP and the note naming
them."""

from __future__ import annotations

import math

import pyomo.environ as pyo

from ..errors import InputError, number_problem
from ..formulation.milp import KW, MUSD
from ..formulation.scale import MS_NS
from ..model.capex import TotalCapex, total_capex
from ..model.run import SitePower
from ..names import PROVISION_OBJECTIVES, with_flag
from ..spec import Instance
from ..units import OBJECTIVE_UNITS

__all__ = ["add_caps", "checked_limits", "limit_notes", "power_limit", "total_capex_cap"]


def total_capex_cap(instance: Instance, cap_usd: float | None):
    """:func:`hieropt.model.capex.total_capex` of ``cap_usd`` (None: None), its errors naming
    ``max_total_capex_usd (--total-budget)``."""
    if cap_usd is None:
        return None
    try:
        return total_capex(instance, cap_usd)
    except InputError as e:
        raise e.with_source(with_flag("max_total_capex_usd")) from None


def checked_limits(instance: Instance, objective: str | None,
                   max_iteration_time_ns: float | None, max_cost_usd: float | None,
                   max_power_w: float | None) -> tuple[str, float | None, float | None]:
    """The objective, time target (ns) and budget ($) of
    :func:`hieropt.solvers.provision.provision`: the arguments, else the instance's; checked with
    the power budget (W).

    Raises:
        InputError: an unknown objective, a target or budget not finite and > 0, min_cost or
            min_power without a time target."""
    given = objective is not None
    objective = objective or instance.objective
    if objective not in PROVISION_OBJECTIVES:
        also = (" (codesign --catalog provisions a min_run_cost search's shortlist for "
                "performance: --objective performance gives its figures)"
                if objective == "min_run_cost" else "")
        if not given:  # (the instance file's: not an option the user gave)
            raise InputError(f"{instance.name}: objective", None,
                             f"{objective!r} has no integer provisioning",
                             f"give an objective (objective=..., --objective), one of "
                             f"{', '.join(PROVISION_OBJECTIVES)}{also}")
        if objective in OBJECTIVE_UNITS:  # (an objective of solve's, not of provisioning)
            raise InputError("objective", None,
                             f"{objective!r} has no integer provisioning: provision supports "
                             f"{', '.join(PROVISION_OBJECTIVES)}",
                             f"use one of them; 'hieropt solve --objective {objective}' gives its "
                             f"continuous design{also}")
        raise InputError("objective", None, f"unknown objective {objective!r}",
                         f"use one of {', '.join(PROVISION_OBJECTIVES)}")
    if max_iteration_time_ns is None:
        max_iteration_time_ns = instance.max_iteration_time_ns
    if max_cost_usd is None:
        max_cost_usd = instance.max_network_cost_usd
    limits = (("max_iteration_time_ns", max_iteration_time_ns), ("max_cost_usd", max_cost_usd),
              ("max_power_w", max_power_w))
    for flag, value in limits:
        if value is not None and not (math.isfinite(value) and value > 0):
            raise InputError(flag, None, number_problem(value), "give a finite value > 0")
    if objective in ("min_cost", "min_power") and max_iteration_time_ns is None:
        raise InputError("max_iteration_time_ns", None, f"missing for objective {objective}",
                         "give the iteration-time target (--max-time 1.3s, or "
                         "max_iteration_time_ns in ns)")
    return objective, max_iteration_time_ns, max_cost_usd


def add_caps(m, tm, max_iteration_time_ns: float | None, max_cost_usd: float | None,
              max_power_w: float | None) -> None:
    """Add the given time target (ns), budget ($) and power budget (W) to the MILP ``m``, in its
    units."""
    if max_iteration_time_ns is not None:
        m.time_cap = pyo.Constraint(expr=m.comm <= (max_iteration_time_ns - tm.compute_ns) / MS_NS)
    if max_cost_usd is not None:
        m.budget = pyo.Constraint(expr=m.cost <= max_cost_usd / MUSD)
    if max_power_w is not None:
        m.power_cap = pyo.Constraint(expr=m.power <= max_power_w / KW)


def limit_notes(limits: tuple[float | None, float | None, float | None],
                 total: TotalCapex | None) -> list[str]:
    """The line naming the limits (time target ns, budget $, power budget W, total cap) every
    trade-off point was solved within (none without one)."""
    max_time, max_cost, max_power = limits
    given = ([f"time target {max_time:,.1f} ns"] if max_time is not None else []) + (
        [f"budget ${max_cost:,.0f} on the parts"] if max_cost is not None else []) + (
        [f"power budget {max_power:,.0f} W on the parts"] if max_power is not None else []) + (
        [f"total budget ${total.cap_usd:,.0f} on the cluster's capex"] if total else [])
    return [f"every point is within the {', '.join(given)} (rows of each point's MILP; the "
            "grid's levels run between the fastest, cheapest and lowest-power designs within "
            "them)"] if given else []


def power_limit(max_power_w: float | None, site: SitePower | None) -> float | None:
    """The tighter of the power budget and the network's share of the site's cap (W), for the
    re-check."""
    caps = [w for w in (max_power_w, None if site is None else site.network_cap_w) if w is not None]
    return min(caps) if caps else None
