"""Error hierarchy of hieropt: one root, each class with the process exit code the CLI uses.

Exit codes: 0 certified optimum; 1 a bug (uncaught exception); 2 bad input or usage; 3 no certified
answer (infeasible, unbounded, solver failure, failed verification).
"""

from __future__ import annotations

import math
from pathlib import Path


class HieroptError(Exception):
    """Root of every error hieropt raises on purpose. ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class InputError(HieroptError):
    """Bad input the user can fix: names the file, the field, the problem and the fix (exit 2).

    Args:
        source: the file (path) or the origin of the data (e.g. ``"--constraint"``, ``"<inline>"``).
        field: the field inside that source, e.g. ``"line 7, field 4 (forward collective)"`` or
            ``"network.dims[2].npus"``.
        problem: what is wrong, e.g. ``"unknown collective 'ALLREDUCEX'"``; a problem that starts
            with ``"<field>: "`` (a message re-raised with its field, e.g. a run's line quoting
            its model file's error) has that head dropped, so the field is named once.
        fix: what to do about it, e.g. ``"use one of NONE, ALLREDUCE, REDUCESCATTER, ALLGATHER,
            ALLTOALL"``.
    """

    exit_code = 2

    def __init__(
        self, source: str | Path | None, field: str | None, problem: str, fix: str | None = None
    ):
        self.source = str(source) if source is not None else None
        self.field = field
        # (a problem re-raised with its field already at its head names the field once)
        self.problem = problem.removeprefix(f"{field}: ") if field else problem
        self.fix = fix
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The message as one line: ``SOURCE: FIELD: PROBLEM; fix: FIX``."""
        parts = [p for p in (self.source, self.field) if p]
        head = ": ".join(parts + [self.problem])
        return f"{head}; fix: {self.fix}" if self.fix else head

    def with_source(self, source: str | Path) -> InputError:
        """The same error attributed to ``source`` (used when a reader is called on inline data)."""
        return InputError(source, self.field, self.problem, self.fix)


class NoSolutionError(HieroptError):
    """The problem has no certified answer: infeasible or unbounded constraints (exit 3).

    ``kind`` is ``"infeasible"``, ``"unbounded"`` or ``"undecided"`` (a time target inside the
    optimality gap of the fastest time at the LP's precision: no design found meets it and none is
    proven impossible); the message says why and what to change.
    """

    exit_code = 3

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(f"{kind}: {message}")


class SolverError(HieroptError):
    """The solver failed, hit a limit, or its result failed independent verification (exit 3)."""

    exit_code = 3


class LimitReached(SolverError):
    """The time limit of a solve (an LP's or the MILP's ``time_limit_s``, s) was reached before any
    design or proven bound existed: no answer and an unknown (infinite) gap, never "infeasible"
    (exit 3). ``hieropt.solve`` returns it as status ``limit`` without a design
    (:meth:`hieropt.Solution.raise_for_status` raises it again); ``kind`` is ``"limit"`` (the
    command line's error document). The message starts with ``"limit: "`` (:func:`limit_reached`
    words it)."""

    kind = "limit"


def limit_reached(what: str, time_limit_s: float) -> LimitReached:
    """The :class:`LimitReached` of the solve of ``what`` (e.g. ``"the largest bandwidth of
    dimension 0"``) stopped by its time limit ``time_limit_s`` (s) before any design or bound."""
    return LimitReached(
        f"limit: the time limit of {float(time_limit_s):g} s per solve was reached on {what} "
        "before any design or proven bound: no design, gap unknown (inf); fix: allow more time "
        "(time_limit_s)")


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived during a sweep (``explore``, ``codesign``): handled like Ctrl-C (a pool is
    stopped, the rows so far are kept, one line says where they are), with exit 143."""


def raise_terminated(signum: int, frame: object) -> None:
    """A SIGTERM handler: raise :class:`Terminated` in the main thread."""
    raise Terminated()


def number_problem(value: float, want: str = "a positive number") -> str:
    """What is wrong with a ``value`` that is not ``want``, in words: a NaN is "not a number"; an
    infinity is not finite (a number written beyond the largest double, 1.8e308, such as ``1e400``,
    overflows to it, so the message says so rather than echo ``inf``); any other value "is not"
    ``want``."""
    if math.isnan(value):
        return f"nan is not a number (want {want})"
    if math.isinf(value):
        return (
            f"{value:g} is not finite (a value beyond 1.8e308, e.g. 1e400, overflows to "
            f"{value:g}; want "
            f"{want})"
        )
    return f"{value:g} is not {want}"
