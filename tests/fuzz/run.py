"""Calling hieropt in the fuzz worker and classifying what comes back (see tests/fuzz/tally.py for
the kinds)."""

from __future__ import annotations

from typing import Any

from tests.fuzz.tally import TALLY, TIMEOUT_S
from tests.fuzz.worker import Crash, Hang, Raised, worker


def call(target: str, *args: Any, suite: str, reproducer: str, timeout: float = TIMEOUT_S,
         allow: tuple[str, ...] = (), **kwargs: Any) -> dict[str, Any] | Raised | None:
    """Run ``target`` on a valid input in the worker. A hang, a crash or an exception is a problem
    (recorded, and raised in the short run) unless its kind is in ``allow`` (``"infeasible"``,
    ``"unbounded"``, ``"InputError"``, ``"SolverError"``), in which case the :class:`Raised` is
    returned. Returns the task's result, or None after a recorded problem."""
    try:
        r = worker().call(target, *args, timeout=timeout, **kwargs)
    except Hang as e:
        TALLY.problem("hang", suite, str(e), reproducer)
        return None
    except Crash as e:
        TALLY.problem("crash", suite, str(e), reproducer)
        return None
    if not isinstance(r, Raised):
        return r
    kind = {"SolverError": "SolverError", "InputError": "InputError"}.get(r.type)
    if r.type == "NoSolutionError":
        kind = "unbounded" if r.message.startswith("unbounded") else "infeasible"
    if kind in allow:
        return r
    TALLY.count(f"raised {r.type}")
    problem = {
        "SolverError": "SolverError on valid input",
        "InputError": "InputError on valid input",
        "infeasible": "false infeasible",
        "unbounded": "false unbounded",
    }.get(kind, "traceback")
    detail = f"{r.type}: {r.message}" if problem != "traceback" else r.traceback[-3000:]
    TALLY.problem(problem, suite, f"{target}: {detail}", reproducer)
    return None
