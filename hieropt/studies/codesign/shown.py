"""How far a co-design search must solve for the first ``top`` rows of its ranked table to be the
space's: :class:`ShownRows` keeps, from the values solved, a value that the ``top``-th row of the
table reaches at most; a candidate whose proven bound is at least it cannot rank among those rows
(:mod:`hieropt.studies.codesign.search` prunes it)."""

from __future__ import annotations

import bisect
import heapq
from itertools import chain


class ShownRows:
    """The ``top``-th least *run lead* over the plans solved (``kth``, inf until there are
    ``top``; it only falls).

    The ranked table shows one row per plan and rank
    (:func:`~hieropt.studies.codesign.rows.fold_ties`), ranks being runs of values within ``tol``
    (relative) of their first (:func:`~hieropt.studies.explore.run.rank_rows`). A plan's *runs* are
    the same greedy runs of its own values: each rank holds the plan's values of one interval of
    that width, and the greedy runs are the fewest such intervals, so the plan has at least as many
    rows in the table as runs, and the table's ``top``-th row has a value at most
    ``kth`` (to within ``tol``). A value at least ``kth`` when it is solved never moves a
    lead below it (the leads before it are those of the smaller values), so it is not kept.

    Args:
        top: the rows of the table to make exact (>= 1).
        tol: the ranks' tie tolerance (relative; 1e-8, 1e-7 for performance_per_cost).

    Attributes:
        kth: the value the table's ``top``-th row reaches at most (the objective's unit; inf until
            ``top`` runs are known).
    """

    def __init__(self, top: int, tol: float):
        self.top, self.tol, self.kth = top, tol, float("inf")
        self._values: dict[str, list[float]] = {}
        self._leads: dict[str, list[float]] = {}

    def add(self, plan: str, value: float) -> None:
        """Take in a solved ``value`` of ``plan`` (the objective's unit)."""
        if not value < self.kth:
            return
        values = self._values.setdefault(plan, [])
        bisect.insort(values, value)
        leads: list[float] = []
        for v in values:
            if not leads or v > leads[-1] + self.tol * abs(leads[-1]):
                leads.append(v)
        self._leads[plan] = leads
        least = heapq.nsmallest(self.top, chain.from_iterable(self._leads.values()))
        if len(least) >= self.top:
            self.kth = least[-1]


__all__ = ["ShownRows"]
