"""Progress on stderr for the long runs of the command line: a bar for a known number of steps (an
``explore`` sweep, a Pareto front of many points) and a line for one long step of unknown length
(an ASTRA-sim run): rich's, or nothing when disabled. Imports rich only when enabled."""

from __future__ import annotations

import time


class ProgressBar:
    """A rich progress bar on stderr (description, bar, done/total, elapsed and remaining time), or
    nothing.

    Args:
        enabled: False: every method does nothing.
        description: the label, printed as written (it is escaped: a name such as ``x[/b]`` is not
            markup).
        total: the number of steps.
        remaining: show the estimated time remaining (False for steps of very unequal lengths,
            e.g. a co-design search, whose last candidates are settled at once by their bounds).
    """

    def __init__(self, enabled: bool, description: str, total: int, remaining: bool = True):
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
                *([TimeRemainingColumn()] if remaining else []),
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


def elapsed_text(seconds: float) -> str:
    """A duration ``seconds`` (s) as text: ``2.4 s`` under a minute, ``17 min 03 s`` under an hour,
    ``1 h 02 min`` from an hour up."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


class ActivityLine:
    """One long step of unknown length on stderr (rich), or nothing: :meth:`start` prints a line as
    written and, on a terminal, shows a spinner with the elapsed time, updated while the step runs
    (the caller may block, e.g. on a subprocess: rich refreshes from its own thread);
    :meth:`stop` removes the spinner and prints a line with the elapsed time. Off a terminal (a log
    file, a pipe) only the two lines are written.

    Args:
        enabled: False: every method does nothing (and :meth:`stop` returns None).
    """

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.console = None
        self.live = None
        self.started = 0.0

    def start(self, text: str, running: str = "running") -> None:
        """Print ``text`` (as written, no markup) and show the spinner labelled ``running``."""
        if not self.enabled:
            return
        from rich.console import Console
        from rich.markup import escape
        from rich.progress import Progress, SpinnerColumn, TimeElapsedColumn

        self.console = Console(stderr=True)
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)
        self.started = time.monotonic()
        if self.console.is_terminal:
            self.live = Progress(SpinnerColumn(), "[progress.description]{task.description}",
                                 TimeElapsedColumn(), console=self.console, transient=True)
            self.live.add_task(escape(running), total=None)
            self.live.start()

    def stop(self, text: str | None = None) -> float | None:
        """Remove the spinner and print ``text`` followed by `` in <elapsed>`` (None: no line, e.g.
        when the step failed and its error follows); returns the elapsed time (s), or None when
        disabled or not started."""
        if self.console is None:
            return None
        if self.live is not None:
            self.live.stop()
            self.live = None
        seconds = time.monotonic() - self.started
        if text is not None:
            self.console.print(f"{text} in {elapsed_text(seconds)}", markup=False,
                               highlight=False, soft_wrap=True)
        self.console = None
        return seconds


__all__ = ["ProgressBar", "ActivityLine", "elapsed_text"]
