"""Checks of one certificate against independent evidence (shared by the random-instance fuzz
tests).

:func:`check_time_certificate` holds a performance answer (fastest network, optionally within a
budget) against: the returned point itself (feasible, re-evaluated time, recomputed cost), feasible
points sampled in the design polytope, the equal and traffic-proportional splits, a local descent
from the returned point, and (when given) SCIP's point.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tests.fuzz import checks
from tests.fuzz.tally import TALLY

REL_GAP = 1e-8
"""hieropt's default gap target for the time and cost objectives."""
PPC_GAP = 1e-7
"""hieropt's default gap target for time x cost."""


def point_ok(suite: str, repro: str, inst, r: dict[str, Any], poly: checks.Polytope, what: str,
             target_ns: float | None = None, budget_usd: float | None = None) -> bool:
    """The returned point is feasible (relative violation <= 1e-9), its time and cost are what the
    answer says, and it meets the time target and the budget. Records a problem and returns False
    otherwise."""
    x = np.asarray(r["bw"], dtype=float)
    problems = []
    if np.any(x < 0) or not np.all(np.isfinite(x)):
        problems.append(f"bandwidths {x.tolist()}")
    v = poly.relative_violation(x)
    if v > checks.FEAS_TOL:
        problems.append(f"violates a design row or bound by {v:.3g} (relative)")
    T = checks.time_ns(inst, x)
    if not math.isclose(T, r["time_ns"], rel_tol=1e-9):
        problems.append(f"reports T = {r['time_ns']!r} ns, the evaluator gives {T!r}")
    C = float(checks.unit_costs(inst) @ x)
    if not math.isclose(C, r["cost_usd"], rel_tol=1e-9, abs_tol=1e-300):
        problems.append(f"reports cost ${r['cost_usd']!r}, the cost classes give ${C!r}")
    if target_ns is not None and T > target_ns * (1 + checks.FEAS_TOL):
        problems.append(f"T = {T!r} ns exceeds the target {target_ns!r} ns")
    if budget_usd is not None and C > budget_usd * (1 + checks.FEAS_TOL):
        problems.append(
            f"cost ${C!r} exceeds the budget ${budget_usd!r} (by {C / budget_usd - 1:.3g})"
        )
    if problems:
        TALLY.problem("returned point invalid", suite, f"{what}: " + "; ".join(problems), repro)
        return False
    return True


def status_ok(suite: str, repro: str, r: dict[str, Any], target_gap: float, what: str,
              evidence: list[float]) -> bool:
    """An OPTIMAL answer meets its gap target; a LIMIT answer's bound is below every feasible value
    in ``evidence`` (honest). Counts certified / LIMIT answers."""
    if r["status"] == "optimal":
        TALLY.count("certified")
        if r["gap"] > target_gap * (1 + 1e-6):
            TALLY.problem(
                "optimal above the gap target",
                suite,
                f"{what}: status optimal at gap {r['gap']:.3g}",
                repro,
            )
            return False
        return True
    TALLY.count(f"status {r['status']}")
    if r["status"] == "limit":
        TALLY.count(f"limit gap >= {10.0 ** math.floor(math.log10(max(r['gap'], 1e-16))):.0e}")
        TALLY.note(
            "LIMIT",
            suite,
            f"{what}: gap {r['gap']:.3g}, bound {r['bound']!r}, value {r['value']!r}: "
            f"{r.get('message', '')}",
            repro,
        )
        low = min(evidence, default=math.inf)
        if r["bound"] > low * (1 + checks.BEAT_TOL) or r["bound"] > r["value"] * (1 + 1e-12):
            TALLY.problem(
                "LIMIT with a dishonest gap",
                suite,
                f"{what}: LIMIT with bound {r['bound']!r} above a "
                f"feasible value {min(low, r['value'])!r}",
                repro,
            )
            return False
        return True
    TALLY.problem("traceback", suite, f"{what}: unexpected status {r['status']!r}", repro)
    return False


def bound_holds(
    suite: str,
    repro: str,
    r: dict[str, Any],
    evidence: list[tuple[str, float]],
    what: str,
    tol: float = checks.BEAT_TOL,
) -> bool:
    """No feasible value in ``evidence`` is below the proven bound (beyond ``tol``)."""
    finite = [(name, v) for name, v in evidence if math.isfinite(v)]
    if not finite:
        return True
    name, low = min(finite, key=lambda e: e[1])
    if low < r["bound"] * (1 - tol):
        TALLY.problem(
            "certificate beaten",
            suite,
            f"{what}: {name} has {low!r} < proven bound {r['bound']!r} "
            f"(value {r['value']!r}, status {r['status']}, gap {r['gap']:.3g}; beaten by "
            f"{1 - low / r['bound']:.3g})",
            repro,
        )
        return False
    return True


def intervals_meet(
    suite: str,
    repro: str,
    a: dict[str, Any],
    b: dict[str, Any],
    factor: float,
    what: str,
    tol: float = 1e-9,
) -> bool:
    """The certified intervals [bound, value] of an answer ``a`` and of a rescaled copy ``b`` (whose
    objective must be ``factor`` times ``a``'s) overlap: the optimum of the copy is exactly
    ``factor`` times the original's."""
    la, va = a["bound"] * factor, a["value"] * factor
    lb, vb = b["bound"], b["value"]
    if lb > va * (1 + tol) or la > vb * (1 + tol):
        TALLY.problem(
            "rescaled answer differs",
            suite,
            f"{what}: original x factor {factor:g} gives [{la!r}, "
            f"{va!r}], the rescaled copy [{lb!r}, {vb!r}] (relative difference "
            f"{abs(vb - va) / max(abs(va), 1e-300):.3g})",
            repro,
        )
        return False
    return True
