"""What a co-design space reaches when its time target is too tight (:func:`fastest_reachable`):
the least proven time bound over its candidates and its fastest design without the target."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .search import Codesign, codesign


@dataclass(frozen=True)
class Reach:
    """How fast a co-design space can be, for a search with a time target no candidate meets
    (:func:`fastest_reachable`).

    Attributes:
        bound_ns: the least proven time bound over every candidate, ns: no design of the space
            has a shorter iteration time.
        bound_of: the plan and shape of that bound (``"<plan> | <shape>"``).
        row: the fastest candidate of the space searched without the time target (a row,
            :data:`~hieropt.studies.codesign.rows.COLUMNS`; its ``iteration_time_ns`` the fastest
            possible time, proven within the gap target), or None when none has a certified answer
            without it either.
    """

    bound_ns: float
    bound_of: str
    row: dict[str, Any] | None


def fastest_reachable(result: Codesign, workers: int | None = None,
                      dask: Any = None) -> Reach | None:
    """What the space of ``result`` reaches when its time target is too tight: the least proven
    time bound over its candidates, and the space searched again for the least iteration time
    without the target (:func:`codesign`, objective performance, pruned by the proven bounds on
    ``workers`` processes or ``dask``; the network budget and the constraints kept): the fastest
    possible design, as ``hieropt solve`` says "fastest possible is ...". None without a time
    target or a candidate with a finite bound."""
    space, enum = result.space, result.enumeration
    if space.max_iteration_time_ns is None:
        return None
    least = enum.least_time_bound()
    if least is None:
        return None
    t, pos = least
    p, s = enum.pair(pos)
    free = space.model_copy(update={"max_iteration_time_ns": None, "objective": "performance"})
    fastest = codesign(free, "performance", workers=workers, dask=dask, prune=True, keep=1)
    row = fastest.ranking[0] if fastest.ranking else None
    return Reach(t, f"{enum.fitting[p].id} | {enum.shapes[s][0]}", row)


__all__ = ["Reach", "fastest_reachable"]
