"""The cheapest and the dearest network the design rows and bounds allow, from two small LPs over B alone
(:func:`hieropt.formulation.ratio_arrays.compile_cost_range_lp`: columns in a bandwidth unit near the rows' cost
floor, each row divided by its largest coefficient), exact to HiGHS's tolerance however far apart the two ends lie.
The performance and cost-share LPs carry the time model's columns in units chosen for the optimum, where a cost far
below (or above) it is only resolved to their absolute tolerances; the procurement solvers take the ends of a cost
range from here."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import NoSolutionError, SolverError
from ..formulation.ratio_arrays import compile_cost_range_lp
from ..formulation.scale import cost_bounds_usd
from ..model.cost import cluster_cost_usd_per_gbps
from ..result import Status
from ..spec import Instance
from .highs import HighsLP

__all__ = ["network_cost_range", "cheapest_network", "cheapest_vertex", "CheapestVertex"]

INF = float("inf")


def network_cost_range(instance: Instance, time_limit_s: float = 60.0,
                       unit_gbps: float | None = None) -> tuple[float, float]:
    """(cheapest, dearest) network cost in $ over the design rows and bounds of ``instance`` (dearest inf when the
    rows put no upper limit on a priced dimension), by min and max of sum_d p_d B_d (:func:`cheapest_network`
    gives the cheapest design too).

    Args:
        instance: design rows, bounds and prices.
        time_limit_s: time limit of each LP, s.
        unit_gbps: the LP's bandwidth unit (GB/s); default: the uniform bandwidth that costs the rows' cost floor
            (:func:`hieropt.formulation.scale.cost_bounds_usd`), else the one that costs their ceiling, else 1.

    Raises:
        NoSolutionError: the design rows and bounds are infeasible.
        SolverError: HiGHS fails on the cheapest network's LP.
    """
    cheapest, dearest, _ = cheapest_network(instance, time_limit_s, unit_gbps)
    return cheapest, dearest


def cheapest_network(instance: Instance, time_limit_s: float = 60.0,
                     unit_gbps: float | None = None) -> tuple[float, float, np.ndarray]:
    """As :func:`network_cost_range`, and a cheapest design: (cheapest $, dearest $, (D,) GB/s, clipped to the
    bounds). Raises as :func:`network_cost_range`."""
    v = cheapest_vertex(instance, time_limit_s, unit_gbps)
    return v.cost_usd, v.dearest_usd, v.bw_gbps


@dataclass(frozen=True)
class CheapestVertex:
    """The cheapest network the design rows and bounds allow, with the LP's certificate of it.

    Attributes:
        cost_usd: its cost, $.
        dearest_usd: the dearest feasible network, $ (inf when unbounded).
        bw_gbps: (D,) a cheapest design, GB/s (the LP's vertex, clipped to the bounds).
        row_duals: (n,) one multiplier per design row (instance order), $ per unit of the row's activity
            (sum_d a_d B_d): the cost-range LP's row duals in the instance's units (0 for a row without a
            coefficient), so that p - A' row_duals are the reduced costs of the dimensions at the cheapest network.
    """

    cost_usd: float
    dearest_usd: float
    bw_gbps: np.ndarray
    row_duals: np.ndarray


def cheapest_vertex(instance: Instance, time_limit_s: float = 60.0,
                    unit_gbps: float | None = None) -> CheapestVertex:
    """The cheapest and dearest network of ``instance`` (as :func:`network_cost_range`), a cheapest design and the
    row duals of its LP (:class:`CheapestVertex`). Raises as :func:`network_cost_range`."""
    if unit_gbps is None:
        unit_gbps = _unit_gbps(instance)
    lp = compile_cost_range_lp(instance, unit_gbps)
    solver = HighsLP(lp, time_limit_s)
    try:
        low = solver.solve()
        if low.status is Status.INFEASIBLE:
            texts = "; ".join(c.text for c in instance.constraints) or "(no constraints)"
            raise NoSolutionError("infeasible", f"the design constraints and bounds cannot all hold: {texts}")
        if low.status is not Status.OPTIMAL:
            raise SolverError(f"HiGHS could not find the cheapest network ({low.termination})")
        duals = solver.row_duals()[:lp.n_rows] if lp.n_rows else np.zeros(0)
        solver.set_costs(lp.time_costs, maximize=True)
        high = solver.solve()
    finally:
        solver.close()
    cheapest = max(low.objective, 0.0) * lp.unit_usd
    dearest = high.objective * lp.unit_usd if high.status is Status.OPTIMAL else INF
    dm = instance.design_matrix
    design = np.clip(low.x[:lp.n_cols] * unit_gbps, dm.bw_lower, dm.bw_upper)
    y = np.zeros(dm.A.shape[0])
    y[lp.rows] = duals * lp.unit_usd / lp.row_scale
    return CheapestVertex(cheapest, max(dearest, cheapest), design, y)


def _unit_gbps(instance: Instance) -> float:
    price = float(np.sum(cluster_cost_usd_per_gbps(instance)))
    floor, ceiling = cost_bounds_usd(instance)
    for cost in (floor, ceiling):
        if price > 0 and 0 < cost < INF:
            return float(10.0 ** round(math.log10(cost / price)))
    return 1.0
