"""SIGTERM as an interrupt: a command in the main thread ends on it as on Ctrl-C
(:func:`hieropt.cli.common.interrupted`, exit 143)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def terminated_as_interrupt() -> Iterator[None]:
    """Within the block (in the main thread), SIGTERM raises :class:`hieropt.errors.Terminated`, a
    KeyboardInterrupt: a command ends on it as on Ctrl-C (:func:`hieropt.cli.common.interrupted`),
    with exit 143. The earlier handler is restored after the block."""
    import signal
    import threading

    from ..errors import raise_terminated

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = ["terminated_as_interrupt"]
