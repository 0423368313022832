"""The question a committee page answers: the objective asked (``hieropt report --objective``, else
the input's own) under the targets given (an iteration-time cap, a network budget), the column that
is its certified optimum (:data:`ANSWERS`), and the words that name them on the page: each column's
label (:func:`titled`) and the page head's lines (:func:`asked_lines`). Values and strings only; the
alternatives themselves are :mod:`hieropt.report.committee`'s."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..units import RELATIVE_UNIT, fmt_relative
from .run import fmt_money

ANSWERS = {
    "performance": "fastest",
    "performance_per_cost": "performance_per_cost",
    "min_cost": "min_cost",
    "min_run_cost": "min_run_cost",
}
"""The key of the alternative that is the certified optimum of each objective (under the targets
the page was solved for); ``min_max_regret`` has none."""


def time_words(value: float, time_unit: str) -> str:
    """An iteration time for a line of text: ms from 1 ms up, else ns (a small instance's times
    stay readable), or the hour-weighted ratio (``time_unit``)."""
    if time_unit == RELATIVE_UNIT:
        return fmt_relative(value, 5)
    return f"{value / 1e6:,.1f} ms" if value >= 1e6 else f"{value:,.1f} ns"


def targets_words(max_time_ns: float | None, budget_usd: float | None,
                  time_unit: str = "ns") -> str:
    """The targets a design was solved under, for a label or a line: ``iteration time <= 1,300.0
    ms, network capex <= $10M`` (the time in ``time_unit``: ns shown as ms, or the hour-weighted
    ratio); empty when there are none."""
    parts = []
    if max_time_ns is not None:
        parts.append(f"iteration time <= {time_words(max_time_ns, time_unit)}")
    if budget_usd is not None:
        parts.append(f"network capex <= {fmt_money(budget_usd)}")
    return ", ".join(parts)


def titled(name: str, objective: str | None, max_time_ns: float | None = None,
           budget_usd: float | None = None, time_unit: str = "ns") -> str:
    """A column's label: its ``name``, then the objective it is the optimum of and the targets it
    was solved under (:func:`targets_words`), e.g. ``performance per network $
    (performance_per_cost; iteration time <= 1,300.0 ms)``; ``name`` alone without an
    objective or a target."""
    inside = "; ".join(x for x in (objective, targets_words(max_time_ns, budget_usd, time_unit))
                       if x)
    return f"{name} ({inside})" if inside else name


@dataclass(frozen=True)
class Asked:
    """The question the page answers: an objective under targets.

    Attributes:
        objective: the objective asked (``hieropt report --objective``) or, without that flag,
            the input's own.
        given: True when it was asked with ``--objective`` (the page then recommends its optimum).
        max_time_ns, budget_usd: the targets every design is solved under (the input's, or
            ``--max-time`` in ns (or the hour-weighted ratio) and ``--budget`` in $), None where
            none.
        answer: the key of the alternative that is its certified optimum under those targets
            (:data:`ANSWERS`), None when the page has none (``why_not`` says why).
        time_unit: the unit of ``max_time_ns``, as the alternatives'
            (:attr:`hieropt.report.committee.Alternative.time_unit`).
    """

    objective: str
    given: bool
    max_time_ns: float | None = None
    budget_usd: float | None = None
    answer: str | None = None
    why_not: str | None = None
    time_unit: str = "ns"

    def targets(self) -> str:
        """The targets as words (:func:`targets_words`); empty without any."""
        return targets_words(self.max_time_ns, self.budget_usd, self.time_unit)

    def words(self) -> str:
        """The objective and its targets, e.g. ``min_cost, iteration time <= 1,300.0 ms``."""
        t = self.targets()
        return f"{self.objective}, {t}" if t else self.objective

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: objective, given, max_iteration_time_ns, max_network_cost_usd, answer (an
        alternative's key or null) and why_not."""
        return {"objective": self.objective, "given": self.given,
                "max_iteration_time_ns": self.max_time_ns,
                "max_network_cost_usd": self.budget_usd,
                "answer": self.answer, "why_not": self.why_not}


def asked_lines(asked: Asked, labels: dict[str, str], recommended: str) -> tuple[str, ...]:
    """The page head's lines on the question: the objective asked (``--objective``) or the
    input's, the targets (the input's caps, or ``--max-time`` and ``--budget``: every column meets
    them), and which column is its optimum (or why none is). ``labels``: each column's key ->
    its label; ``recommended``: the recommended column's key."""
    head = (f"objective asked: {asked.objective} (--objective)" if asked.given
            else f"objective of the input: {asked.objective}")
    lines = [head]
    if asked.targets():
        lines.append(f"targets: {asked.targets()} (every column meets them)")
    if asked.answer in labels:
        rec = " (the recommendation)" if asked.answer == recommended else ""
        lines.append(f"its certified optimum: the column '{labels[asked.answer]}'{rec}, the "
                     "design hieropt solve gives for it")
    else:
        lines.append(f"its optimum is not on this page: {asked.why_not or 'no column gives it'}")
    return tuple(lines)


__all__ = ["ANSWERS", "Asked", "asked_lines", "targets_words", "time_words", "titled"]
