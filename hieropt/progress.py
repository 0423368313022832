"""A progress bar on stderr for the long runs of the command line (an ``explore`` sweep, a Pareto
front of many points): rich's, or nothing when disabled. Imports rich only when enabled."""

from __future__ import annotations


class ProgressBar:
    """A rich progress bar on stderr (description, bar, done/total, elapsed and remaining time), or
    nothing.

    Args:
        enabled: False: every method does nothing.
        description: the label, printed as written (it is escaped: a name such as ``x[/b]`` is not
            markup).
        total: the number of steps.
    """

    def __init__(self, enabled: bool, description: str, total: int):
        self.bar = None
        if enabled:
            from rich.console import Console
            from rich.markup import escape
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
            )
            self.task = self.bar.add_task(escape(description), total=total)

    def start(self) -> None:
        """Show the bar."""
        if self.bar is not None:
            self.bar.start()

    def advance(self) -> None:
        """One step done."""
        if self.bar is not None:
            self.bar.advance(self.task)

    def update(self, done: int, total: int) -> None:
        """``done`` of ``total`` steps done (a callback of the form ``progress(done, total)``)."""
        if self.bar is not None:
            self.bar.update(self.task, completed=done, total=total)

    def stop(self) -> None:
        """Remove the live display (the last state stays on a terminal)."""
        if self.bar is not None:
            self.bar.stop()


__all__ = ["ProgressBar"]
