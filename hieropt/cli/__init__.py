"""Command line (typer + rich): the ``hieropt`` app and its entry point :func:`main`. One module per command group
(:mod:`.solve`: solve, evaluate, pareto; :mod:`.compare`: compare, report; :mod:`.explore`; :mod:`.provision`;
:mod:`.workload`: workload, export), shared helpers in :mod:`.common`. The only package that prints.

Command modules import only typer, rich and the standard library at load time; each command imports the library
when it runs, so ``hieropt --help`` does not load Pyomo, numpy or pydantic.

Exit codes: 0 certified optimum (or evaluation done); 1 a bug; 2 bad input or usage; 3 no certified answer
(infeasible, unbounded, limit reached, solver failure, failed verification); 130 interrupted.
"""

from __future__ import annotations

from typing import Any

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the ``hieropt`` console script. A file that cannot be written (a folder, a missing folder,
    no permission) ends with a one-line message and exit 2, not a traceback; Ctrl-C (also while the command line
    is still loading) ends with exit 130."""
    try:
        from .commands import app

        app()
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except OSError as e:
        from .common import error_console

        error_console().print(f"[bold red]error:[/] {e.filename or ''}: cannot write or read: "
                              f"{e.strerror or e}; fix: give a writable file path (its folder must exist)",
                              highlight=False, soft_wrap=True)
        raise SystemExit(2) from None


def __getattr__(name: str) -> Any:
    """``hieropt.cli.app`` (the typer app), loaded on first use."""
    if name == "app":
        from .commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
