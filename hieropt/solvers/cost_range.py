"""The cheapest and the dearest network the design rows and bounds allow, by two small LPs over B
alone in units of their own (:func:`hieropt.formulation.ratio_arrays.compile_cost_range_lp`); on
the same rows, each dimension's reach and whether it has an upper limit."""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, replace

import numpy as np

from ..errors import NoSolutionError, SolverError, limit_reached
from ..formulation.ratio_arrays import CostRangeLP, compile_cost_range_lp
from ..formulation.scale import cost_bounds_usd
from ..model.cost import cluster_cost_usd_per_gbps
from ..result import Status
from ..spec import Instance
from ..spec.design import DesignMatrix
from ..units import usd_cents
from .highs import HighsLP
from .linalg import INF

__all__ = ["cheapest_vertex", "CheapestVertex", "reach_centre_gbps", "unlimited_dimensions",
           "rows_infeasible", "below_cheapest", "no_design_by_rows", "no_design_by_rows_of",
           "rows_problem", "FORCED_ZERO", "forced_zero"]

FORCED_ZERO = ("the design constraints force zero bandwidth on every dimension that carries "
               "traffic")
"""The reason there is no design when the rows and bounds allow no bandwidth on any dimension that
carries traffic (each then takes infinitely long)."""


def forced_zero(d: int, budget: bool = False) -> str:
    """The reason there is no design when the rows (and the ``budget``, when it takes part) allow
    dimension ``d``, which carries traffic, no bandwidth."""
    return (f"dimension {d} carries traffic but the design constraints "
            f"{'and the budget ' if budget else ''}force bw[{d}] = 0")


def rows_infeasible(instance: Instance) -> NoSolutionError:
    """The error of design constraints and bounds that cannot all hold, listing them (GB/s per
    NPU)."""
    return _rows_infeasible(instance.constraints, instance.bounds_or_default)


def _rows_infeasible(constraints: tuple, bounds_of: tuple) -> NoSolutionError:
    """:func:`rows_infeasible` of ``constraints`` (with ``text``) and ``bounds_of`` (one
    :class:`hieropt.spec.Bound` per dimension)."""
    texts = "; ".join(c.text for c in constraints) or "(no constraints)"
    bounds = []
    for d, b in enumerate(bounds_of):
        low = f"{b.lower_gbps:g} <= " if b.lower_gbps > 0 else ""
        high = f" <= {b.upper_gbps:g}" if b.upper_gbps is not None else ""
        if low or high:
            bounds.append(f"{low}bw[{d}]{high}")
    listed = f"; bounds (GB/s per NPU): {', '.join(bounds)}" if bounds else ""
    return NoSolutionError("infeasible",
                           f"the design constraints and bounds cannot all hold: {texts}{listed}; "
                           "fix: loosen a constraint or widen a bound")


def no_design_by_rows(instance: Instance, loaded: Sequence[int] | np.ndarray,
                      time_limit_s: float = 60.0) -> None:
    """Refuse ``instance`` when its design rows and bounds alone leave no finite-time design: they
    cannot all hold, or they force zero bandwidth on a dimension of ``loaded`` (those that carry
    traffic): :func:`rows_problem` of its constraints and bounds. Every objective's solve runs this
    first, so that each says the one reason.

    Raises:
        NoSolutionError: infeasible, :func:`rows_infeasible`'s reason, :data:`FORCED_ZERO` (every
            loaded dimension at zero) or :func:`forced_zero`'s (the first such dimension)."""
    err = rows_problem(instance.constraints, instance.bounds_or_default, loaded, time_limit_s,
                       instance.design_matrix)
    if err is not None:
        raise err


def no_design_by_rows_of(instance: Instance, time_limit_s: float = 60.0) -> None:
    """:func:`no_design_by_rows` of ``instance`` with the dimensions that carry traffic in its time
    model (:func:`hieropt.model.timing.build_time_model`): the check :func:`hieropt.solve` makes
    first, for the entry points that do not go through it (the Pareto front, provisioning), so
    that each says the same reason; ``time_limit_s``: s, of each LP.

    Raises:
        NoSolutionError: infeasible, as :func:`no_design_by_rows`."""
    from ..model.timing import build_time_model

    loaded = np.flatnonzero(build_time_model(instance).carries_traffic)
    no_design_by_rows(instance, loaded, time_limit_s)


def rows_problem(constraints: tuple, bounds: tuple, loaded: Sequence[int] | np.ndarray,
                 time_limit_s: float = 60.0,
                 dm: DesignMatrix | None = None) -> NoSolutionError | None:
    """Why design rows ``constraints`` (:class:`hieropt.spec.LinearConstraint`) and ``bounds``
    (one :class:`hieropt.spec.Bound` per dimension; ``dm``: their
    :class:`~hieropt.spec.design.DesignMatrix` when known) leave no finite-time design for a
    workload whose ``loaded`` dimensions carry traffic, or None: one LP over B alone (GB/s, rows
    divided by their largest coefficient) for max B_d per loaded dimension d, B_d forced to zero
    when that maximum is at most 1e-9 of the smallest non-zero right-hand side or bound (GB/s; 0
    when all are 0: the answer is the same at every scale of the rows). A time stays finite only
    when every loaded dimension has bandwidth (T holds V_d / B_d for each). None too when HiGHS
    fails or stops at ``time_limit_s`` (s, of each LP): the objective's own solve then
    decides."""
    if dm is None:
        dm = DesignMatrix.of(tuple(constraints), tuple(bounds))
    top = np.abs(dm.A).max(axis=1, initial=0.0)
    keep = top > 0
    if ((dm.lower[~keep] > 0) | (dm.upper[~keep] < 0)).any():  # (a row 0 <= -1)
        return _rows_infeasible(constraints, bounds)
    A = dm.A[keep] / top[keep, None]
    rows, cols = np.nonzero(A)
    start = np.searchsorted(rows, np.arange(A.shape[0] + 1)).astype(np.int32)
    D = dm.bw_upper.size
    lp = CostRangeLP(D, np.asarray(dm.bw_lower, dtype=float), np.asarray(dm.bw_upper, dtype=float),
                     np.zeros(D), dm.lower[keep] / top[keep], dm.upper[keep] / top[keep], start,
                     cols.astype(np.int32), A[rows, cols], 1.0)
    # (zero to 1e-9 of the smallest number the rows and bounds state, GB/s: scale-free, and far
    # below any bandwidth they allow; 0 when they state none)
    sizes = np.abs(np.concatenate([lp.row_lower, lp.row_upper, lp.col_lower, lp.col_upper]))
    stated = sizes[np.isfinite(sizes) & (sizes > 0)]
    tol = 1e-9 * float(stated.min()) if stated.size else 0.0
    zero = []
    with closing(HighsLP(lp, time_limit_s)) as solver:
        solver.set_costs(np.zeros(D))  # (first whether the rows hold: no objective to be unbounded)
        for d in (None, *(int(d) for d in loaded)):
            res = solver.solve() if d is None else _maximise(solver, D, d)
            if res.status is Status.INFEASIBLE and d is None:
                return _rows_infeasible(constraints, bounds)
            if res.status is Status.OPTIMAL and d is not None and res.objective <= tol:
                zero.append(d)
            elif res.status not in (Status.OPTIMAL, Status.UNBOUNDED):
                return None
    if zero and len(zero) == len(loaded):
        return NoSolutionError("infeasible", FORCED_ZERO)
    return NoSolutionError("infeasible", forced_zero(zero[0])) if zero else None


def below_cheapest(budget_usd: float, cheapest_usd: float) -> NoSolutionError:
    """The error of a budget ($) below the cheapest network ($), both to the cent (the cheapest
    rounded up)."""
    return NoSolutionError("infeasible", f"the budget ${usd_cents(budget_usd, up=False)} is below "
                           f"the cheapest network the design constraints allow, "
                           f"${usd_cents(cheapest_usd, up=True)}")


@dataclass(frozen=True)
class CheapestVertex:
    """The cheapest network the rows and bounds allow, with the LP's certificate.

    Attributes:
        cost_usd: its cost, $; dearest_usd: the dearest feasible network, $ (inf when
            unbounded).
        bw_gbps: (D,) a cheapest design, GB/s (the LP's vertex clipped to the bounds).
        row_duals: (n,) one multiplier per design row, $ per unit of its activity: p - A'
            row_duals are the reduced costs."""

    cost_usd: float
    dearest_usd: float
    bw_gbps: np.ndarray
    row_duals: np.ndarray


def cheapest_vertex(instance: Instance, time_limit_s: float = 60.0,
                    unit_gbps: float | None = None) -> CheapestVertex:
    """The cheapest and dearest network of ``instance`` (min and max of sum_d p_d B_d over its rows
    and bounds), a cheapest design and its row duals. A vertex the reduced prices call not
    optimal (:func:`_optimal`: prices far apart defeat HiGHS's dual tolerance) is solved again
    with one unit per dimension, the square-root split of the prices, and the cheaper kept.
    ``time_limit_s``: of each LP, s; ``unit_gbps``: the LP's unit (GB/s; default
    :func:`_unit_gbps`).

    Raises:
        NoSolutionError: the design rows and bounds are infeasible.
        SolverError: HiGHS fails (:class:`hieropt.errors.LimitReached` at its time limit)."""
    if unit_gbps is None:
        unit_gbps = _unit_gbps(instance)
    v = _vertex(instance, time_limit_s, unit_gbps)
    if not _optimal(instance, v):
        p = cluster_cost_usd_per_gbps(instance)
        mean = float(np.exp(np.log(p).mean())) if (p > 0).all() else 1.0
        units = unit_gbps * np.sqrt(mean / np.where(p > 0, p, mean))
        w = _vertex(instance, time_limit_s, units)
        if w.cost_usd < v.cost_usd:
            v = replace(w, dearest_usd=max(v.dearest_usd, w.dearest_usd))
    return v


def _vertex(instance: Instance, time_limit_s: float,
            unit_gbps: float | np.ndarray) -> CheapestVertex:
    lp = compile_cost_range_lp(instance, unit_gbps)
    with closing(HighsLP(lp, time_limit_s)) as solver:
        low = solver.solve()
        if low.status is Status.INFEASIBLE:
            raise rows_infeasible(instance)
        if low.status is Status.LIMIT:
            raise limit_reached("the cheapest network's LP", time_limit_s)
        if low.status is not Status.OPTIMAL:
            raise SolverError(f"HiGHS could not find the cheapest network ({low.termination})")
        duals = solver.row_duals()[:lp.n_rows] if lp.n_rows else np.zeros(0)
        solver.set_costs(lp.time_costs, maximize=True)
        high = solver.solve()
    cheapest = max(low.objective, 0.0) * lp.unit_usd
    dearest = high.objective * lp.unit_usd if high.status is Status.OPTIMAL else INF
    dm = instance.design_matrix
    design = np.clip(low.x[:lp.n_cols] * unit_gbps, dm.bw_lower, dm.bw_upper)
    y = np.zeros(dm.A.shape[0])
    y[lp.rows] = duals * lp.unit_usd / lp.row_scale
    return CheapestVertex(cheapest, max(dearest, cheapest), design, y)


def _maximise(solver: HighsLP, n_cols: int, d: int):
    """The LP loaded in ``solver`` solved for max x_d."""
    costs = np.zeros(n_cols)
    costs[d] = 1.0
    solver.set_costs(costs, maximize=True)
    return solver.solve()


def unlimited_dimensions(instance: Instance, dims: tuple[int, ...] | list[int],
                         time_limit_s: float = 60.0) -> tuple[int, ...]:
    """The dimensions of ``dims`` whose bandwidth the design rows and bounds do not limit, for
    feasible rows: those with a direction r of the rows' recession cone with r_d > 0, one LP each
    (docs/certificates.md, "Unbounded, the same at every scale"). Raises SolverError when HiGHS
    fails (:class:`hieropt.errors.LimitReached` at its time limit)."""
    if not dims:
        return ()
    # the cone {r >= 0: r_d = 0 where bw_d has an upper bound, a_i' r <= / >= / == 0 by sense},
    # its rows normalised, as a cost-range LP without objective
    dm = instance.design_matrix
    top = np.abs(dm.A).max(axis=1, initial=0.0)
    keep = top > 0
    A = dm.A[keep] / top[keep, None]
    rows, cols = np.nonzero(A)
    start = np.searchsorted(rows, np.arange(A.shape[0] + 1)).astype(np.int32)
    D = dm.bw_upper.size
    lp = CostRangeLP(D, np.zeros(D), np.where(np.isfinite(dm.bw_upper), 0.0, INF), np.zeros(D),
                     np.where(dm.sense >= 1, 0.0, -INF)[keep],
                     np.where(dm.sense != 1, 0.0, INF)[keep], start, cols.astype(np.int32),
                     A[rows, cols], 1.0)
    out = []
    with closing(HighsLP(lp, time_limit_s)) as solver:
        for d in dims:
            if lp.col_upper[d] == 0:
                continue
            solver.change_col_bounds(int(d), 0.0, 1.0)
            res = _maximise(solver, lp.n_cols, d)
            if res.status is Status.LIMIT:
                raise limit_reached(f"whether bw[{d}] has an upper limit", time_limit_s)
            if res.status is not Status.OPTIMAL:
                raise SolverError(f"HiGHS could not decide whether bw[{d}] has an upper limit "
                                  f"({res.termination})")
            if res.objective >= 0.5:
                out.append(int(d))
            solver.change_col_bounds(int(d), 0.0, INF)
    return tuple(out)


def reach_centre_gbps(instance: Instance, dims: list[int], fallback_gbps: np.ndarray,
                      time_limit_s: float = 60.0) -> np.ndarray:
    """A design ((D,) GB/s) to centre an LP on when it failed before any design: each dimension of
    ``dims`` at half its reach (max B_d over the rows), the others (and those without a finite
    positive reach) at ``fallback_gbps``.

    Raises:
        NoSolutionError: the design rows and bounds are infeasible.
        SolverError: HiGHS fails (:class:`hieropt.errors.LimitReached` at its time limit)."""
    unit = _unit_gbps(instance)
    lp = compile_cost_range_lp(instance, unit)
    out = np.array(fallback_gbps, dtype=float)
    with closing(HighsLP(lp, time_limit_s)) as solver:
        for d in dims:
            res = _maximise(solver, lp.n_cols, d)
            if res.status is Status.INFEASIBLE:
                raise rows_infeasible(instance)
            if res.status is Status.LIMIT:
                raise limit_reached(f"the largest bandwidth of dimension {d}", time_limit_s)
            if res.status not in (Status.OPTIMAL, Status.UNBOUNDED):
                raise SolverError(f"HiGHS could not find the largest bandwidth of dimension {d} "
                                  f"({res.termination})")
            reach = res.objective * unit if res.status is Status.OPTIMAL else INF
            if np.isfinite(reach) and reach > 0:
                out[d] = 0.5 * reach
    return out


OPTIMAL_TOL = 1e-7
"""Reduced price a vertex may have in the wrong direction, relative to the dimension's price."""


def _optimal(instance: Instance, v: CheapestVertex) -> bool:
    """Whether no dimension's reduced price says its cost falls off its bound beyond
    :data:`OPTIMAL_TOL` of its price."""
    dm = instance.design_matrix
    p = cluster_cost_usd_per_gbps(instance)
    r = p - (dm.A.T @ v.row_duals if dm.A.size else 0.0)
    b = v.bw_gbps
    tol = OPTIMAL_TOL * np.abs(p)
    span = 1e-9 * np.maximum(np.abs(b), 1e-300)
    at_lo = b <= dm.bw_lower + span
    at_hi = b >= dm.bw_upper - span
    bad = (~at_lo & (r > tol)) | (~at_hi & (r < -tol))
    return not bad.any()


def _unit_gbps(instance: Instance) -> float:
    """The cost-range LP's default unit (GB/s): the uniform bandwidth that costs the rows' cost
    floor, else their ceiling, to a power of ten; else 1."""
    price = float(np.sum(cluster_cost_usd_per_gbps(instance)))
    floor, ceiling = cost_bounds_usd(instance)
    for cost in (floor, ceiling):
        if price > 0 and 0 < cost < INF:
            return float(10.0 ** round(math.log10(cost / price)))
    return 1.0
