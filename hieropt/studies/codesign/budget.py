"""A co-design space's network budget against the cheapest network of each shape: the shapes no
design of which fits the budget (their candidates settled infeasible without a solve), and the
refusal of a budget below the cheapest network of every shape, before the search
(:mod:`hieropt.studies.codesign.search`).

The cheapest network of a shape is the proven floor C_lb = N min sum_d u_d B_d over the bandwidths
the space's rows allow (:func:`hieropt.studies.codesign.bounds.cost_floor_usd`), the same for every
plan on it; the budget of a shape of N NPUs is :func:`hieropt.studies.codesign.solve.network_cap`
(``--budget``, or what a total budget leaves the network of that cluster size)."""

from __future__ import annotations

from ...errors import NoSolutionError
from ...workloads.llm.space import CodesignSpace
from .candidates import CodesignEnumeration
from .solve import network_cap

FLOOR_SLACK = 1e-9
"""A shape is over the budget when its floor exceeds the budget by more than this fraction (the
floor is an LP's bound, exact to about this)."""


def over_budget(space: CodesignSpace, enum: CodesignEnumeration) -> dict[str, str]:
    """Shape id -> why no design of it fits its network budget, for the shapes whose cheapest
    network costs more than the budget of their cluster size; empty without a budget. A size
    whose cluster alone costs the total budget is left to the solve (which says so)."""
    out = {}
    for sid, (npus, floor) in enum.cost_floors().items():
        try:
            cap = network_cap(space, npus)
        except NoSolutionError:
            continue
        if cap is not None and floor > cap * (1 + FLOOR_SLACK):
            out[sid] = (f"network budget ${cap:,.0f} below this shape's cheapest network "
                        f"${floor:,.0f} (its least bandwidths under the space's constraints)")
    return out


def refuse_below_every_shape(space: CodesignSpace, enum: CodesignEnumeration,
                             over: dict[str, str]) -> None:
    """Refuse a network budget below the cheapest network of every shape of the space, before
    the search (it would solve every candidate and find none within it).

    Raises:
        NoSolutionError: ``infeasible``, naming the cheapest shape, its cost ($) and the fix.
    """
    floors = enum.cost_floors()
    if not floors or any(sid not in over for sid in floors):
        return
    sid, (npus, floor) = min(floors.items(), key=lambda kv: (kv[1][1], kv[0]))
    cap = network_cap(space, npus)
    total = ("" if space.max_total_capex_usd is None else
             f" (with the total budget ${space.max_total_capex_usd:,.0f}, what its {npus:,} NPUs "
             "leave their network)")
    raise NoSolutionError(
        "infeasible",
        f"the network budget ${cap:,.0f}{total} is below the cheapest network of every shape of "
        f"the space: the cheapest, {sid}, costs ${floor:,.0f} at the least bandwidths the "
        f"space's constraints allow; give a budget of at least ${floor:,.0f} (--budget), or "
        "lower the constraints' least bandwidths")


__all__ = ["over_budget", "refuse_below_every_shape", "FLOOR_SLACK"]
