"""The design constraints and bounds of an instance that a bandwidth allocation violates, and its
network budget and time target that the design's cost and time break: the check of
:func:`hieropt.verify.verify` (which re-exports the first) and of every evaluation's breakdown
(:attr:`hieropt.model.breakdown.Breakdown.violations`, made by
:func:`hieropt.model.timing.evaluate` with :func:`design_notes`): one mechanism behind
``evaluate``'s warnings, its ``--json`` notes and the library's result."""

from __future__ import annotations

import numpy as np

from ..spec import Instance

FEAS_TOL = 1e-6
"""Allowed violation of a design constraint, relative to the row's magnitude max(|rhs|, sum_d |a_d
bw_d|), and of a bound, relative to max(|bound|, max_d bw_d * 1e-6): free of the bandwidth unit (a
floor of 1 GB/s let a 100 % violation pass at 1e-6 GB/s and refused a round-off of 1e-14 at 1e9
GB/s). The LP's own tolerance is 1e-9."""


def constraint_violations(instance: Instance, bw_gbps: np.ndarray) -> list[tuple[str, float]]:
    """Violated constraints and bounds at ``bw_gbps`` (GB/s, shape (D,)) as (description, relative
    violation)."""
    bw = np.asarray(bw_gbps, dtype=float)
    out = []
    dm = instance.design_matrix
    if dm.A.size:
        for i, over in enumerate(dm.violation_list(bw)):
            if over > FEAS_TOL or over != over:  # (a NaN row is violated)
                c = instance.constraints[i]
                lhs = float(dm.A[i] @ bw)
                out.append((f"'{c.text}' (lhs {lhs:.9g} vs {c.rhs:.9g})", over))
    b_list = bw.tolist()  # (Python floats over the few dimensions)
    floor = 1e-6 * max(map(abs, b_list), default=0.0)
    low = [
        b < lo - FEAS_TOL * max(abs(lo), floor)
        for b, lo in zip(b_list, dm.bw_lower_list, strict=True)
    ]
    high = [b > hi * (1 + FEAS_TOL) for b, hi in zip(b_list, dm.bw_upper_list, strict=True)]
    for d in [d for d in range(len(low)) if low[d] or high[d]]:
        b = instance.bounds_or_default[d]
        if low[d]:
            out.append(
                (
                    f"bw[{d}] >= {b.lower_gbps}",
                    (b.lower_gbps - bw[d]) / max(abs(b.lower_gbps), floor),
                )
            )
        if high[d]:
            out.append((f"bw[{d}] <= {b.upper_gbps}", (bw[d] - b.upper_gbps) / b.upper_gbps))
    return out


def constraint_notes(instance: Instance, bw_gbps: np.ndarray) -> tuple[str, ...]:
    """One text per design constraint or bound of ``instance`` that ``bw_gbps`` (GB/s per NPU, one
    per dimension) violates (:func:`constraint_violations`), ``violates design constraint
    'bw[0] <= 400' (lhs 800 vs 400) (relative violation 0.5)``: the one mechanism behind
    :attr:`~hieropt.model.breakdown.Breakdown.violations` (so ``hieropt.evaluate``'s result),
    ``evaluate``'s warnings and ``--json`` notes (and ``export --bw``'s). Empty when it
    meets them all."""
    return tuple(f"violates design constraint {text} (relative violation {v:.3g})"
                 for text, v in constraint_violations(instance, bw_gbps))


def limit_notes(instance: Instance, iteration_time_ns: float,
                network_cost_usd: float) -> tuple[str, ...]:
    """One text per limit of ``instance`` that a design of ``iteration_time_ns`` (ns; the weighted
    sum of its workloads' times, as the solvers cap it) and ``network_cost_usd`` ($) breaks, with
    the figures: its network budget ``max_network_cost_usd`` (``exceeds the network budget
    max_network_cost_usd = $10,000,000: the network costs $17,489,920, $7,489,920 over``) and its
    time target ``max_iteration_time_ns`` (``... 1,500,000,000 ns: the iteration takes
    1,600,000,000 ns, 100,000,000 ns over``; not checked on a relative, dimensionless time). A
    figure within :data:`FEAS_TOL` (relative) of its limit meets it (a solver's optimum on the
    limit). Empty when the design meets both, or the instance has neither."""
    out = []
    budget = instance.max_network_cost_usd
    if budget is not None and not network_cost_usd <= budget * (1 + FEAS_TOL):
        out.append(f"exceeds the network budget max_network_cost_usd = ${budget:,.0f}: the network "
                   f"costs ${network_cost_usd:,.0f}, ${network_cost_usd - budget:,.0f} over")
    target = instance.max_iteration_time_ns
    if (target is not None and not instance.relative_time
            and not iteration_time_ns <= target * (1 + FEAS_TOL)):
        out.append(f"exceeds the time target max_iteration_time_ns = {target:,.0f} ns: the "
                   f"iteration takes {iteration_time_ns:,.0f} ns, "
                   f"{iteration_time_ns - target:,.0f} ns over")
    return tuple(out)


def design_notes(instance: Instance, bw_gbps: np.ndarray, iteration_time_ns: float,
                 network_cost_usd: float) -> tuple[str, ...]:
    """Every limit of ``instance`` that a design breaks: its bandwidths ``bw_gbps`` (GB/s per NPU,
    one per dimension) against the design constraints and bounds (:func:`constraint_notes`), then
    its ``iteration_time_ns`` (ns) and ``network_cost_usd`` ($) against the time target and the
    network budget (:func:`limit_notes`): what :attr:`~hieropt.model.breakdown.Breakdown.
    violations` hold, so ``evaluate``'s warnings and ``--json`` notes and ``export --bw``'s
    warnings."""
    return constraint_notes(instance, bw_gbps) + limit_notes(instance, iteration_time_ns,
                                                             network_cost_usd)


__all__ = ["FEAS_TOL", "constraint_violations", "constraint_notes", "limit_notes",
           "design_notes"]
