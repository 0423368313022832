"""Minimum iteration time by outer approximation (Kelley's cutting planes) on a persistent HiGHS LP.

Algorithm (design.md §3; Kelley 1960, "The cutting-plane method for solving convex programs"): the LP of
:mod:`hieropt.formulation` relaxes t_d = 1/B_d to tangent cuts, so its optimum is a lower bound LB on the optimal
iteration time; its B satisfies every design constraint exactly, so T(B), evaluated exactly, is an upper bound UB.
Each round adds the tangent at the LP's B_d for every dimension where t_d < 1/B_d; since T is increasing in t and the
cuts are exact at their points, UB - LB -> 0. Stop when (UB - LB)/UB <= ``rel_gap``.
"""

from __future__ import annotations

import numpy as np

from ..errors import NoSolutionError, SolverError
from ..formulation import MS_NS, PerfLP, build_perf_lp
from ..result import Status
from ..spec import Instance
from ..timing import TimeModel
from .highs import PersistentHighs

REL_GAP = 1e-8
"""Default target relative gap; the LP tolerances (1e-9) put the floor near 2.5e-9."""
SEED_CUTS = 8
"""Initial tangent cuts per loaded dimension, on a geometric grid over the reachable bandwidth range."""


class OAResult:
    """Raw outcome of the cutting-plane loop (times ns, bandwidths GB/s)."""

    def __init__(self, status: Status, bw: np.ndarray, upper_ns: float, lower_ns: float, iterations: int,
                 cuts: int, message: str):
        self.status, self.bw, self.upper_ns, self.lower_ns = status, bw, upper_ns, lower_ns
        self.iterations, self.cuts, self.message = iterations, cuts, message

    @property
    def gap(self) -> float:
        """Relative gap (UB - LB)/UB, clipped at 0."""
        return max(0.0, (self.upper_ns - self.lower_ns) / self.upper_ns) if self.upper_ns > 0 else 0.0


def _reach(lp: PerfLP, solver: PersistentHighs, instance: Instance) -> float:
    """Check feasibility and boundedness; return the largest summed bandwidth of the loaded dimensions (GB/s)."""
    lp.use_reach_objective()
    res = solver.solve(lp.model)
    lp.use_time_objective()
    if res.status is Status.OPTIMAL:
        return res.objective
    if res.status in (Status.INFEASIBLE, Status.UNBOUNDED):
        check = solver.solve(lp.model)  # time objective is bounded below by 0: infeasible here means infeasible
        if check.status is Status.INFEASIBLE or res.status is Status.INFEASIBLE and check.status is not Status.OPTIMAL:
            raise NoSolutionError("infeasible", "the design constraints and bounds cannot all hold: "
                                  + "; ".join(c.text for c in instance.constraints) + " (check the numbers)")
        dims = ", ".join(f"bw[{d}]" for d in lp.loaded)
        raise NoSolutionError("unbounded", f"add a bandwidth budget: the constraints put no upper limit on the "
                              f"bandwidth of the dimensions that carry traffic ({dims}), so the iteration time has "
                              f"no minimum; e.g. --constraint 'sum(bw) == 500'")
    raise SolverError(f"HiGHS failed on the feasibility LP ({res.termination})")


def _forced_zero(lp: PerfLP, solver: PersistentHighs, d: int) -> bool:
    """True when the design constraints force B_d = 0 (solved as max B_d)."""
    import pyomo.environ as pyo

    m = lp.model
    m.time.deactivate()
    m.probe = pyo.Objective(expr=m.B[d], sense=pyo.maximize)
    res = solver.solve(m)
    m.del_component(m.probe)
    m.time.activate()
    return res.status is Status.OPTIMAL and res.objective <= 1e-12


def minimize_time(instance: Instance, tm: TimeModel, rel_gap: float = REL_GAP, max_iterations: int = 500,
                  time_limit_s: float = 60.0) -> OAResult:
    """Minimise the iteration time T(B) of ``tm`` under the instance's design constraints.

    Args:
        instance: design constraints and bounds (GB/s per NPU).
        tm: aggregated time model.
        rel_gap: target relative gap between the proven bound and T at the returned B.
        max_iterations: LP rounds before giving up with status LIMIT.
        time_limit_s: time limit of each LP.

    Returns:
        :class:`OAResult` (status OPTIMAL when the gap target is met).

    Raises:
        NoSolutionError: infeasible constraints, a loaded dimension forced to zero bandwidth, or unbounded bandwidth.
        SolverError: HiGHS failed.
    """
    lp = build_perf_lp(instance, tm)
    solver = PersistentHighs(time_limit_s)
    reach = _reach(lp, solver, instance)
    if not lp.loaded:
        res = solver.solve(lp.model)
        bw = lp.bw_gbps()
        return OAResult(Status.OPTIMAL, bw, tm.compute_ns, tm.compute_ns, 1, 0, "no collective traffic")
    low = max(reach * 1e-6, 1e-9)
    cuts = 0
    for d in lp.loaded:
        for b in np.geomspace(low, reach, SEED_CUTS):
            lp.add_cut(d, float(b))
            cuts += 1
    best_bw, upper, lower = None, np.inf, -np.inf
    for it in range(1, max_iterations + 1):
        res = solver.solve(lp.model)
        if res.status is not Status.OPTIMAL:
            raise SolverError(f"HiGHS stopped on cutting-plane LP {it} with '{res.termination}'")
        lower = max(lower, tm.compute_ns + res.objective * MS_NS)
        bw = lp.bw_gbps()
        t = lp.t_values()
        value = tm.time_ns(bw)
        if value < upper:
            best_bw, upper = bw, value
        if upper - lower <= rel_gap * upper:
            return OAResult(Status.OPTIMAL, best_bw, upper, lower, it, cuts, "optimal within the gap target")
        for d in lp.loaded:
            b = bw[d]
            if b <= 0:
                if _forced_zero(lp, solver, d):
                    raise NoSolutionError("infeasible", f"dimension {d} carries traffic but the design constraints "
                                          f"force bw[{d}] = 0; allow it a positive bandwidth")
                b = low * 1e-3
            if t[d] * b < 1.0 - 1e-12:
                lp.add_cut(d, float(b))
                cuts += 1
    gap = (upper - lower) / upper
    return OAResult(Status.LIMIT, best_bw, upper, lower, max_iterations, cuts,
                    f"stopped after {max_iterations} LPs at relative gap {gap:.3g}")
