"""Independent verification of a solver's answer: re-evaluate T(B) and cost(B) layer by layer and
check the design constraints, without the formulation or the solver (imports only spec, timing and
cost; the constraints' check, :data:`FEAS_TOL` and :func:`constraint_violations`, is
:mod:`hieropt.model.violations`', which every evaluation's breakdown states too)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .model.timing import Breakdown, evaluate
from .model.violations import FEAS_TOL, constraint_notes, constraint_violations
from .spec import Instance

TIME_TOL = 1e-9
"""Allowed relative difference between a reported iteration time and the evaluator's."""


@dataclass(frozen=True)
class Certificate:
    """The outcome of :func:`verify`.

    Attributes:
        ok: every check passed.
        breakdown: the evaluator's breakdown at the checked bandwidths.
        max_violation: largest relative constraint or bound violation (0 when feasible).
        problems: one line per failed check.
    """

    ok: bool
    breakdown: Breakdown
    max_violation: float
    problems: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready certificate: ``ok``, ``max_violation`` (relative), ``problems`` (one string
        per failed check) and the evaluator's ``breakdown``
        (:meth:`hieropt.model.timing.Breakdown.to_dict`: times ns, bandwidths GB/s per NPU)."""
        return {"ok": bool(self.ok), "max_violation": float(self.max_violation),
                "problems": list(self.problems), "breakdown": self.breakdown.to_dict()}


def verify(instance: Instance, bw_gbps: np.ndarray, iteration_time_ns: float | None = None, *,
           budget_usd: float | None = None, target_ns: float | None = None) -> Certificate:
    """Check a claimed answer: feasibility of ``bw_gbps`` and, if given, that T(bw) equals
    ``iteration_time_ns``, that the network costs at most ``budget_usd`` and that T(bw) is at most
    ``target_ns`` (each to :data:`TIME_TOL` relative).

    Args:
        instance: the problem.
        bw_gbps: per-NPU bandwidths, GB/s, shape (D,).
        iteration_time_ns: the solver's reported iteration time (ns), or None to skip that check.
        budget_usd: a budget the design must meet ($), or None.
        target_ns: an iteration-time target the design must meet (ns), or None.

    Returns:
        a :class:`Certificate`: ``ok``, the breakdown at ``bw_gbps``, the largest violation of a
        design row or bound and every problem in words (a failed check is no exception).

    Raises:
        InputError: ``bw_gbps`` not one finite number per dimension (through
            :func:`hieropt.model.timing.evaluate`).
    """
    bd = evaluate(instance, bw_gbps)
    violations = constraint_violations(instance, bw_gbps)
    problems = [f"violates {text}" for text, _ in violations]
    viol = max((v for _, v in violations), default=0.0)
    if iteration_time_ns is not None:
        rel = abs(bd.iteration_time_ns - iteration_time_ns) / max(bd.iteration_time_ns, 1e-300)
        if rel > TIME_TOL:
            problems.append(
                f"reported iteration time {iteration_time_ns:.12g} ns but the evaluator gives "
                f"{bd.iteration_time_ns:.12g} ns (relative difference {rel:.3g})"
            )
    if target_ns is not None and bd.iteration_time_ns > target_ns * (1 + TIME_TOL):
        problems.append(f"iteration time {bd.iteration_time_ns:.12g} ns exceeds the target "
                        f"{target_ns:.12g} ns")
    if budget_usd is not None and bd.network_cost_usd > budget_usd * (1 + TIME_TOL):
        problems.append(f"network cost ${bd.network_cost_usd:.12g} exceeds the budget "
                        f"${budget_usd:.12g}")
    return Certificate(ok=not problems, breakdown=bd, max_violation=viol, problems=tuple(problems))


__all__ = ["Certificate", "verify", "FEAS_TOL", "TIME_TOL", "constraint_violations",
           "constraint_notes"]
