"""The independent check of a sensitivity analysis: every marginal value of a design row, a bound,
the budget or the time target that the optimum meets, binding or not, is held against two exact
solves of the instance with that parameter moved by +-h (h = :data:`FD_STEP` of its size), each
certified to its gap.

V is convex in each of these parameters, so its one-sided derivatives lie between the secants:
V'(theta+) <= (V(theta + h) - V(theta)) / h and V'(theta-) >= (V(theta) - V(theta - h)) / h. A value
outside its secant (beyond the solves' gaps and :data:`FD_TOL`), a side said infeasible that solves,
or a value on a side that cannot be solved means the multipliers do not describe this optimum; the
caller then reports the sensitivity as not available. The free bandwidth bonus is not a parameter of
the instance and is not re-checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..errors import HieroptError, NoSolutionError
from ..model.timing import build_time_model
from ..result import Marginal, Sensitivity, Solution
from ..spec import Instance
from .sensitivity import parameters

__all__ = ["check_marginals", "without_sensitivity", "FD_STEP", "FD_TOL"]

FD_STEP = 1e-4
"""Step of the secants, relative to the parameter's size."""
FD_TOL = 0.02
"""Relative slack allowed between a claimed one-sided derivative and its secant (curvature over one
step)."""


def check_marginals(instance: Instance, sol: Solution, sens: Sensitivity,
                    solve: Callable[[Instance], Solution],
                    steps: dict[str, float] | None = None) -> str | None:
    """None when every binding re-checkable marginal of ``sens`` (at the optimum ``sol`` of
    ``instance``) lies within its secants (module docstring); else the reason, one line. ``solve``:
    the objective's certified solve of a perturbed instance
    (:func:`hieropt.solvers.objectives.solve` with the same objective). ``steps``: the secants' step
    of a marginal by its name, where :data:`FD_STEP` of its size would be too far (a budget a hair
    above the cheapest network: :func:`hieropt.solvers.sensitivity_near.near_sensitivity`)."""
    v0 = sol.objective_value
    moves: dict[str, Callable[[float], Instance]] = {}
    for p in parameters(instance, build_time_model(instance), sol.bw_gbps, sol.objective):
        moves.setdefault(p.name, p.moved)
    for m in sens.marginals:
        if m.kind not in ("constraint", "bound", "budget", "time_target") or not (
            m.binding or _tight(instance, sol, m)
        ):
            continue
        h = FD_STEP * max(abs(m.current), 1e-9)
        if steps is not None and m.name in steps:
            h = steps[m.name]
        for sign, claimed in ((1.0, m.value if m.value is not None else m.increase),
                              (-1.0, m.value if m.value is not None else m.decrease)):
            try:
                moved = moves[m.name](sign * h) if m.name in moves else None
            except ValueError:  # (a bound moved below zero or past the other)
                moved = None
            if moved is None:
                continue
            try:
                other = solve(moved)
            except NoSolutionError:
                other = None
            # (the check cannot be made: the LP's value stands unconfirmed, not refuted)
            except HieroptError:
                continue
            side = "increase" if sign > 0 else "decrease"
            if other is None or not other.success:
                if claimed is not None and other is None:
                    return (f"{m.name}: a marginal value on its {side} side, but moving it by "
                            f"{sign * h:+.3g} is infeasible")
                continue
            if claimed is None:
                return (f"{m.name}: its {side} side was reported infeasible, but an exact solve "
                        f"moved by {sign * h:+.3g} succeeds")
            secant = (other.objective_value - v0) / (sign * h)
            noise = (sol.gap * abs(v0) + other.gap * abs(other.objective_value)) / h
            slack = FD_TOL * max(abs(secant), abs(claimed)) + noise
            # convexity: right <= secant, left >= secant
            off = claimed - secant if sign > 0 else secant - claimed
            if off > slack or abs(claimed - secant) > 0.5 * max(abs(secant), abs(claimed)) + noise:
                return (f"{m.name}: the LP's marginal value {claimed:.6g} {m.unit} disagrees with "
                        f"exact re-solves (secant {secant:.6g} over {sign * h:+.3g})")
    return None


def _tight(instance: Instance, sol: Solution, m: Marginal) -> bool:
    """Whether a marginal reported as not binding sits where the optimum meets its row, bound or
    budget (so the claim is checked too: an LP that splits a multiplier between a tied bound and a
    cut can read 0 there); a design row or budget with slack at the optimum never binds and is not
    re-solved."""
    if m.kind == "constraint":
        for c in instance.constraints:
            if f"constraint '{c.text}'" == m.name:
                lhs = sum(a * b for a, b in zip(c.coefficients, sol.bw_gbps.tolist(), strict=True))
                return c.sense == "==" or abs(lhs - c.rhs) <= 1e-9 * max(abs(c.rhs), abs(lhs),
                                                                            1e-300)
        return False
    if m.kind == "budget":
        return sol.network_cost_usd >= m.current * (1 - 1e-9)
    return True


def without_sensitivity(sol: Solution, reason: str) -> Solution:
    """``sol`` with its sensitivity dropped and a note saying why."""
    return replace(sol, sensitivity=None,
                   notes=sol.notes + (f"sensitivity not available: {reason}",))
