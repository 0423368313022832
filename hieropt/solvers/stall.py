"""The stall rule of the cutting-plane loop (:mod:`hieropt.solvers.cut_lp`): after
:data:`STALL_ROUNDS` rounds without progress, tighter LP tolerances, then a re-scale, then a stop
with status LIMIT and the gap proved."""

from __future__ import annotations

STALL_ROUNDS = 4
"""Rounds without an improved bound before the next step."""


class Stall:
    """Rounds without progress; asks for, in turn, tighter LP tolerances, a re-scale, and a stop."""

    def __init__(self) -> None:
        self.rounds, self.step = 0, 0

    def progress(self, improved: bool) -> str | None:
        """Record one round; returns "tighten", "rescale", "stop" or None."""
        self.rounds = 0 if improved else self.rounds + 1
        if self.rounds < STALL_ROUNDS:
            return None
        self.rounds = 0
        self.step += 1
        return ("tighten", "rescale", "stop")[min(self.step, 3) - 1]


__all__ = ["Stall", "STALL_ROUNDS"]
