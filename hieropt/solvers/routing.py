"""What a route is, and how a table of routes is walked (most special first; decision record
0009)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Route", "first_route"]


@dataclass(frozen=True)
class Route:
    """One way to solve a case: ``accepts(case)``, a cheap check of its form (no LP), and
    ``solve(case)``, its answer or None when it declines after trying; ``solve`` raises
    NoSolutionError when the case has no answer and SolverError when the solver failed. ``name``: a
    short identifier the decision records and tests use; ``complete``: an objective route's Solution
    is final (no portfolio table, notes or sensitivity added)."""

    name: str
    accepts: Callable[[Any], bool]
    solve: Callable[[Any], Any]
    complete: bool = False


def first_route(routes: tuple[Route, ...], case: Any) -> tuple[Route, Any]:
    """(route, answer) of the first route of ``routes`` that accepts ``case`` and does not decline.

    Raises:
        LookupError: no route accepts ``case`` (a table ends with a catch-all, so a bug); and
            what the route's ``solve`` raises."""
    for route in routes:
        if route.accepts(case) and (out := route.solve(case)) is not None:
            return route, out
    names = ", ".join(r.name for r in routes)
    raise LookupError(f"no route of ({names}) accepts the {type(case).__name__}")
