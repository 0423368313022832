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


class _Loop:
    """The performance LP in HiGHS with column indices of B and t, and the cut bookkeeping."""

    def __init__(self, lp: PerfLP, time_limit_s: float):
        self.lp = lp
        self.solver = PersistentHighs(lp.model, time_limit_s)
        self.b_col = [self.solver.col(lp.model.B[d]) for d in lp.model.B]
        self.t_col = {d: self.solver.col(lp.model.t[d]) for d in lp.loaded}
        self.cuts = 0

    def cut(self, d: int, b_gbps: float) -> None:
        """Add the tangent cut of t_d >= 1/B_d at B_d = ``b_gbps`` (GB/s) to the HiGHS LP."""
        lower, ct, cb = PerfLP.tangent_cut(b_gbps)
        self.solver.add_row(lower, np.inf, [self.t_col[d], self.b_col[d]], [ct, cb])
        self.cuts += 1

    def bw(self, x: np.ndarray) -> np.ndarray:
        """B (GB/s, shape (D,)) from the LP's column values ``x``."""
        return x[self.b_col]

    def t(self, x: np.ndarray) -> dict[int, float]:
        """t_d (1/(GB/s)) of the loaded dimensions from the LP's column values ``x``."""
        return {d: float(x[c]) for d, c in self.t_col.items()}


def _maximize(loop: _Loop, dims: tuple[int, ...]):
    """Solve max sum_{d in dims} B_d on the same LP, then restore the time objective."""
    time_costs = loop.solver.objective_costs()
    costs = np.zeros_like(time_costs)
    costs[[loop.b_col[d] for d in dims]] = 1.0
    loop.solver.set_costs(costs, maximize=True)
    res = loop.solver.solve()
    loop.solver.set_costs(time_costs)
    return res


def _reach(loop: _Loop, instance: Instance) -> float:
    """Check feasibility and boundedness; return the largest summed bandwidth of the loaded dimensions (GB/s)."""
    res = _maximize(loop, loop.lp.loaded)
    if res.status is Status.OPTIMAL:
        return res.objective
    if res.status in (Status.INFEASIBLE, Status.UNBOUNDED):
        check = loop.solver.solve()  # the time objective is bounded below by 0: not optimal here means infeasible
        if check.status is not Status.OPTIMAL:
            raise NoSolutionError("infeasible", "the design constraints and bounds cannot all hold: "
                                  + "; ".join(c.text for c in instance.constraints) + " (check the numbers)")
        dims = ", ".join(f"bw[{d}]" for d in loop.lp.loaded)
        raise NoSolutionError("unbounded", f"add a bandwidth budget: the constraints put no upper limit on the "
                              f"bandwidth of the dimensions that carry traffic ({dims}), so the iteration time has "
                              f"no minimum; e.g. --constraint 'sum(bw) == 500'")
    raise SolverError(f"HiGHS failed on the feasibility LP ({res.termination})")


def _forced_zero(loop: _Loop, d: int) -> bool:
    """True when the design constraints force B_d = 0 (solved as max B_d)."""
    res = _maximize(loop, (d,))
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
    loop = _Loop(build_perf_lp(instance, tm), time_limit_s)
    reach = _reach(loop, instance)
    if not loop.lp.loaded:
        res = loop.solver.solve()
        if res.status is not Status.OPTIMAL:
            raise SolverError(f"HiGHS stopped with '{res.termination}'")
        return OAResult(Status.OPTIMAL, loop.bw(res.x), tm.compute_ns, tm.compute_ns, 1, 0, "no collective traffic")
    low = max(reach * 1e-6, 1e-9)
    for d in loop.lp.loaded:
        for b in np.geomspace(low, reach, SEED_CUTS):
            loop.cut(d, float(b))
    best_bw, upper, lower = None, np.inf, -np.inf
    for it in range(1, max_iterations + 1):
        res = loop.solver.solve()
        if res.status is not Status.OPTIMAL:
            raise SolverError(f"HiGHS stopped on cutting-plane LP {it} with '{res.termination}'")
        lower = max(lower, tm.compute_ns + res.objective * MS_NS)
        bw, t = loop.bw(res.x), loop.t(res.x)
        value = tm.time_ns(bw)
        if value < upper:
            best_bw, upper = bw, value
        if upper - lower <= rel_gap * upper:
            return OAResult(Status.OPTIMAL, best_bw, upper, lower, it, loop.cuts, "optimal within the gap target")
        for d in loop.lp.loaded:
            b = bw[d]
            if b <= 0:
                if _forced_zero(loop, d):
                    raise NoSolutionError("infeasible", f"dimension {d} carries traffic but the design constraints "
                                          f"force bw[{d}] = 0; allow it a positive bandwidth")
                b = low * 1e-3
            if t[d] * b < 1.0 - 1e-12:
                loop.cut(d, float(b))
                if t[d] > 0:  # also where the LP's t is exact: brackets the optimum from the other side
                    loop.cut(d, float(1.0 / t[d]))
    gap = (upper - lower) / upper
    return OAResult(Status.LIMIT, best_bw, upper, lower, max_iterations, loop.cuts,
                    f"stopped after {max_iterations} LPs at relative gap {gap:.3g}")
