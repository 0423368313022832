"""Certificates for the portfolio objectives from the main loop's bound: surrogates of a portfolio
as one mix.

The portfolio LPs of :mod:`hieropt.solvers.portfolio` steer (their points are the designs, their row
duals the weights); their own LP values are exact only to HiGHS's tolerances and certify nothing.
Every proven bound comes from the main cutting-plane loop (:class:`hieropt.solvers.cutting.TimeLP`,
its Lagrangian bound evaluated exactly in :mod:`hieropt.solvers.dual_bound`) on one weighted mix of
the workloads, by weak duality:

- **min-max regret** z* = min_B max_w T_w(B) / U_w. For weights omega_w >= 0, at the optimum B*
  sum_w omega_w T_w(B*) <= z* sum_w omega_w U_w, hence z* >= L / sum_w omega_w U_w with L any proven
  lower bound on min_B sum_w omega_w T_w(B) (the performance optimum of the mix, same rows and
  budget). Equality holds for the optimal weights (a convex min-max: Sion's minimax theorem); the
  regret rows' duals approximate them.
- **time-target form** min cost(B) s.t. T_w(B) <= cap U_w for every w: every such B meets the one
  aggregated row sum_w omega_w T_w(B) <= cap sum_w omega_w U_w (a surrogate relaxation), so the
  cheapest network meeting that one target on the mix
  (:func:`hieropt.solvers.procurement.cheapest_meeting`) bounds the cost from below. For the optimal
  multipliers the surrogate's optimum is the portfolio's (convex program, Slater's condition).

Source: weak duality and surrogate relaxation, e.g. Boyd and Vandenberghe (2004), "Convex
Optimization", §5.1-5.2, and Glover (1975), "Surrogate constraint duality in mathematical
programming".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import HieroptError
from ..model.timing import build_time_model
from ..result import Status
from ..spec import Instance, Job
from ..spec.ranges import WEIGHT_RANGE
from .cutting import TimeLP

__all__ = ["Certificate", "mix_weights", "regret_bound", "regret_cost_bound"]

EPS = float(np.finfo(float).eps)
INF = float("inf")


@dataclass(frozen=True)
class Certificate:
    """A proven lower bound (ratio, or $ for the time-target form; -inf when the mix solve failed)
    and the mix solve's design (GB/s, (D,); None when it failed): a candidate for the upper
    bound."""

    lower: float
    bw: np.ndarray | None


def mix_weights(lam: np.ndarray, optima_ns: np.ndarray) -> np.ndarray:
    """Weights omega_w of the mix for multipliers ``lam`` (>= 0, one per workload; all 0 or not
    finite: equal multipliers) on the ratios T_w / U_w: omega_w proportional to lam_w / U_w, the
    largest 1 (the mix's times on the scale of a workload's own: a single workload weighted 2.7e7
    stopped the main loop at a gap of 0.99 where its own optimum, weighted 1, was certified).
    Weights below 1e-12 of the largest are dropped (0): their workloads hardly move the bound."""
    timed = optima_ns > 0  # (a workload that takes no time anywhere is at ratio 1 on every fabric)
    if not timed.any():
        return np.ones_like(optima_ns)
    lam = np.where(np.isfinite(lam) & timed, np.abs(lam), 0.0)
    if not lam.sum() > 0:
        lam = timed.astype(float)
    omega = np.where(timed, lam / np.where(timed, optima_ns, 1.0), 0.0)
    omega = omega / omega.max()
    return np.where(omega >= 1e-12, omega, 0.0)


def mix_instance(instance: Instance, omega: np.ndarray) -> Instance:
    """``instance`` whose workloads carry the weights ``omega`` (zeros dropped; each within the
    spec's weight range), objective performance, no targets: its time model is sum_w omega_w T_w."""
    jobs = [(job, float(w)) for job, w in zip(instance.jobs, omega, strict=True) if w > 0]
    first, w0 = jobs[0]
    more = tuple(Job(workload=j.workload, mapping=j.mapping, weight=w) for j, w in jobs[1:])
    return instance.model_copy(
        update={
            "workload": first.workload,
            "mapping": first.mapping,
            "workload_weight": w0,
            "more_workloads": more,
            "objective": "performance",
            "max_regret": None,
            "max_iteration_time_ns": None,
        }
    )


def _mix(instance: Instance, lam: np.ndarray, optima_ns: np.ndarray) -> tuple[Instance, float]:
    """The mix instance and sum_w omega_w U_w, rounded up, for the weights it holds."""
    omega = mix_weights(lam, optima_ns)
    held = np.where(omega > 0, np.clip(omega, *WEIGHT_RANGE), 0.0)
    total = float(np.dot(held, optima_ns))
    return mix_instance(instance, held), total * (1 + 4 * (held.size + 1) * EPS)


def regret_bound(
    instance: Instance, lam: np.ndarray, optima_ns: np.ndarray, rel_gap: float, time_limit_s: float
) -> Certificate:
    """A proven lower bound on min_B max_w T_w(B) / U_w (module docstring) from the multipliers
    ``lam`` (one per workload, any sign or scale: their magnitudes are used), and the mix's optimal
    design.

    Args:
        instance: the portfolio (its rows and budget).
        lam: (W,) multipliers, e.g. the duals of the regret rows.
        optima_ns: (W,) the U_w (ns) the ratios divide by.
        rel_gap: gap target of the mix's performance solve.
        time_limit_s: time limit of each LP, s.
"""
    inst, total = _mix(instance, lam, optima_ns)
    core = TimeLP(inst, build_time_model(inst), time_limit_s)
    try:
        res = core.min_time(rel_gap, budget_usd=instance.max_network_cost_usd)
    except HieroptError:
        return Certificate(-INF, None)
    finally:
        core.close()
    return Certificate(res.lower / total * (1 - 4 * EPS), res.bw)


def regret_cost_bound(
    instance: Instance,
    lam: np.ndarray,
    optima_ns: np.ndarray,
    cap: float,
    rel_gap: float,
    time_limit_s: float,
) -> Certificate:
    """A proven lower bound ($) on the cheapest network with T_w(B) <= ``cap`` U_w for every
    workload (module docstring, the surrogate relaxation with multipliers ``lam``), and the
    surrogate's cheapest design (it need not meet every workload's target).

    Args:
        instance: the portfolio (its rows and budget).
        lam: (W,) multipliers, e.g. the duals of the regret rows.
        optima_ns: (W,) the U_w (ns).
        cap: 1 + max_regret.
        rel_gap: gap target of the surrogate's min-cost solve.
        time_limit_s: time limit of each LP, s.
"""
    from .procurement import cheapest_meeting  # (procurement imports the portfolio-free core only)

    inst, total = _mix(instance, lam, optima_ns)
    try:
        res = cheapest_meeting(
            inst,
            build_time_model(inst),
            cap * total,
            rel_gap,
            instance.max_network_cost_usd,
            time_limit_s,
        )
    except HieroptError:
        return Certificate(-INF, None)
    return Certificate(res.lower if res.status in (Status.OPTIMAL, Status.LIMIT) else -INF, res.bw)
