"""What a route is, and how a table of routes is walked.

A solve may take one of several routes: a general method that handles every case, and special ones
that handle a narrow case exactly or in better units (:mod:`hieropt.solvers.routes`,
:mod:`hieropt.solvers.procurement`). A table is a tuple of routes, most special first;
:func:`first_route` walks it. The decision records (docs/decisions) state each route's reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Route", "first_route"]


@dataclass(frozen=True)
class Route:
    """One way to solve a case: ``accepts(case)``, a cheap check of the case's form (no LP), and
    ``solve(case)``, its answer or None when it declines after trying (its check needs the LP's
    answer); the docstring of ``solve`` says when and why the route exists. ``solve`` raises
    NoSolutionError when the case has no answer (infeasible, unbounded, undecided) and SolverError
    when the solver failed.

    Attributes:
        name: a short identifier, e.g. ``"single_term_rate"`` (the decision records and tests name
            routes so).
        complete: an objective route's Solution is final (the caller adds no portfolio table, notes
            or sensitivity).
    """

    name: str
    accepts: Callable[[Any], bool]
    solve: Callable[[Any], Any]
    complete: bool = False


def first_route(routes: tuple[Route, ...], case: Any) -> tuple[Route, Any]:
    """(route, answer) of the first route of ``routes`` that accepts ``case`` and does not decline.

    Raises:
        LookupError: no route of the table accepts ``case`` (a table ends with a catch-all route
            whose ``solve`` answers or raises a one-line error, so this is a bug); and whatever the
            route's ``solve`` raises.
    """
    for route in routes:
        if route.accepts(case) and (out := route.solve(case)) is not None:
            return route, out
    names = ", ".join(r.name for r in routes)
    raise LookupError(f"no route of ({names}) accepts the {type(case).__name__}")
