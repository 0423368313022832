"""The answers a buying committee compares for one instance: the recommendation (the cheapest run, ``min_run_cost``,
when the instance has a ``[cluster]``; else the knee), the fastest design, the knee (the cheapest within 1 % of the
fastest time), the performance-per-network-cost optimum, and the exact time-cost front, each with its buyer's
figures (:func:`hieropt.model.run.run_figures`: days, $ per run, MW, MFU).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import HieroptError
from ..model.run import RunFigures, run_figures
from ..result import Solution
from ..solvers.front import pareto
from ..solvers.objectives import solve
from ..spec import Instance
from .knee import WITHIN, knee


@dataclass(frozen=True)
class Answer:
    """One design the committee compares: its ``label``, the :class:`Solution` (bandwidths, time, network cost),
    its buyer's figures, and why it is there."""

    label: str
    solution: Solution
    run: RunFigures
    why: str


@dataclass(frozen=True)
class Committee:
    """The recommendation first, then the alternatives; the front's points as (design, run figures); notes on the
    answers that could not be computed."""

    instance: Instance
    recommendation: Answer
    alternatives: tuple[Answer, ...]
    front: tuple[tuple[Any, RunFigures], ...]
    notes: tuple[str, ...]


def _answer(label: str, sol: Solution, why: str) -> Answer:
    return Answer(label, sol, run_figures(sol.instance, sol.iteration_time_ns, sol.network_cost_usd), why)


def committee(instance: Instance, within: float = WITHIN, points: int = 20) -> Committee:
    """The committee's answers for ``instance`` (module docstring); alternatives that fail (e.g. performance per
    cost without a bandwidth floor) are left out with a note.

    Raises:
        NoSolutionError, SolverError, InputError: the fastest design itself has no certified answer.
    """
    notes: list[str] = []
    fastest = _answer("fastest", solve(instance, "performance"), "the shortest iteration time the constraints allow")
    k = knee(instance, within)
    kn = _answer(f"knee ({within * 100:g} %)", k.knee, f"the cheapest design within {within * 100:g} % of the "
                 f"fastest time: the last {within * 100:g} % of speed costs ${k.last_usd:,.0f}")
    answers = [fastest, kn]
    for label, objective, why in (("performance per network cost", "performance_per_cost",
                                   "min iteration time x network cost (LIBRA's PerfPerCostOpt)"),
                                  ("min $ per run", "min_run_cost", "the cheapest training run: run time x the "
                                   "whole cluster's cost rate")):
        if objective == "min_run_cost" and instance.cluster is None:
            notes.append("min $ per run: not computed (no [cluster] section)")
            continue
        try:
            answers.append(_answer(label, solve(instance, objective), why))
        except HieroptError as e:
            notes.append(f"{label}: not computed ({e})")
    rec = next((a for a in answers if a.label == "min $ per run"), kn)
    try:
        front = pareto(instance, points=points)
        pts = tuple((p, run_figures(instance, p.iteration_time_ns, p.network_cost_usd)) for p in front.points)
    except HieroptError as e:
        pts = ()
        notes.append(f"no time-cost front ({e})")
    return Committee(instance, rec, tuple(a for a in answers if a is not rec), pts, tuple(notes))


__all__ = ["Answer", "Committee", "committee"]
