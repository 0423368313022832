"""A child process that runs one task at a time with a wall-clock timeout, so that a hang (an
endless loop in Python or inside HiGHS) or a crash of the code under test is observed and counted
instead of stalling the test run.

``Worker.call("tests.fuzz.tasks:solve", instance, timeout=60)`` sends the task to the child and
waits; on timeout the child (and its process group) is killed, a new one is started and
:class:`Hang` is raised. The child is started with the ``spawn`` method (no state inherited from the
test process) in its own session, so killing it also ends any process it started.
"""

from __future__ import annotations

import importlib
import multiprocessing as mp
import os
import signal
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any


class Hang(Exception):
    """The task did not finish within its timeout (the child was killed)."""


class Crash(Exception):
    """The child died while running the task (e.g. a segmentation fault in a solver library)."""


@dataclass(frozen=True)
class Raised:
    """An exception raised by the task: its class name, module, message, formatted traceback and the
    ``exit_code`` attribute of hieropt's errors (None for other exceptions)."""

    type: str
    module: str
    message: str
    traceback: str
    exit_code: int | None

    @property
    def qualname(self) -> str:
        """``module.Class`` of the exception."""
        return f"{self.module}.{self.type}"


def _watch_parent(parent: int) -> None:  # pragma: no cover - runs in the child process
    """End the child (and its process group) when the test process is gone, even in the middle of a
    hung task."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os.killpg(os.getpgrp(), signal.SIGKILL)


def _child(conn, parent: int) -> None:  # pragma: no cover - runs in the child process
    os.setsid()  # own process group: the parent can kill it together with anything it started
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the terminal is the parent's business
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        target, args, kwargs = msg
        try:
            mod, _, name = target.partition(":")
            fn = getattr(importlib.import_module(mod), name)
            conn.send(("ok", fn(*args, **kwargs)))
        except BaseException as e:  # noqa: BLE001 - every exception is a result to report
            conn.send(
                (
                    "raised",
                    Raised(
                        type(e).__name__,
                        type(e).__module__,
                        str(e),
                        traceback.format_exc(),
                        getattr(e, "exit_code", None),
                    ),
                )
            )


class Worker:
    """One child process that runs tasks ``"module:function"`` with arguments that pickle."""

    def __init__(self) -> None:
        self._ctx = mp.get_context("spawn")
        self._proc = None
        self._conn = None
        self.restarts = 0

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_child, args=(child, os.getpid()), daemon=False)
        self._proc.start()
        child.close()
        self._conn = parent

    def _kill(self) -> None:
        if self._proc is None:
            return
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._proc.join(5)
        self._conn.close()
        self._proc = self._conn = None

    def call(self, target: str, *args: Any, timeout: float = 60.0, **kwargs: Any) -> Any:
        """Run ``target(*args, **kwargs)`` in the child; return its result, or the :class:`Raised`
        it raised.

        Raises:
            Hang: no answer within ``timeout`` seconds (the child is killed and replaced).
            Crash: the child died.
        """
        if self._proc is None or not self._proc.is_alive():
            self._start()
        self._conn.send((target, args, kwargs))
        if not self._conn.poll(timeout):
            self._kill()
            self.restarts += 1
            raise Hang(f"{target} did not finish within {timeout:g} s")
        try:
            kind, value = self._conn.recv()
        except (EOFError, ConnectionError) as e:
            code = self._proc.exitcode if self._proc is not None else None
            self._kill()
            self.restarts += 1
            raise Crash(f"{target}: the worker died (exit code {code})") from e
        return value

    def close(self) -> None:
        """Stop the child."""
        if self._proc is not None and self._proc.is_alive():
            try:
                self._conn.send(None)
                self._proc.join(5)
            except (BrokenPipeError, OSError):
                pass
        self._kill()


_SHARED: Worker | None = None


def worker() -> Worker:
    """The session's worker process (started on first use, stopped by :func:`close_worker` at the
    end of the session)."""
    global _SHARED
    if _SHARED is None:
        _SHARED = Worker()
    return _SHARED


def close_worker() -> None:
    """Stop the session's worker process, if one was started."""
    if _SHARED is not None:
        _SHARED.close()
