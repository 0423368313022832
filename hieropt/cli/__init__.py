"""Command line (typer + rich): the ``hieropt`` app and its entry point :func:`main`. One module per command group
(:mod:`.solve`: solve, evaluate, pareto; :mod:`.compare`: compare, report; :mod:`.explore`; :mod:`.provision`;
:mod:`.workload`: workload, export), shared helpers in :mod:`.common`. The only package that prints.

Command modules import only typer, rich and the standard library at load time; each command imports the library
when it runs, so ``hieropt --help`` does not load Pyomo, numpy or pydantic.

Exit codes: 0 certified optimum (or evaluation done); 1 a bug; 2 bad input or usage; 3 no certified answer
(infeasible, unbounded, limit reached, solver failure, failed verification); 130 interrupted.
"""

from __future__ import annotations

import typer

from .common import UNITS, error_console
from .compare import compare_command, report_command
from .explore import explore_command
from .provision import provision_command
from .solve import evaluate_command, pareto_command, solve_command
from .workload import export_command, workload_app

__all__ = ["app", "main"]

app = typer.Typer(
    rich_markup_mode="markdown",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="hieropt: exact per-dimension bandwidth design of multi-dimensional hierarchical training networks "
    "(LIBRA's problem on Pyomo + HiGHS, with proven optimality gaps). " + UNITS + " Exit codes: 0 success, "
    "2 bad input, 3 infeasible / unbounded / not certified.",
)
app.command("solve")(solve_command)
app.command("evaluate")(evaluate_command)
app.command("pareto")(pareto_command)
app.command("provision")(provision_command)
app.add_typer(workload_app, name="workload")
app.command("export")(export_command)
app.command("compare")(compare_command)
app.command("report")(report_command)
app.command("explore")(explore_command)


def main() -> None:
    """Entry point of the ``hieropt`` console script. A file that cannot be written (a folder, a missing folder,
    no permission) ends with a one-line message and exit 2, not a traceback; Ctrl-C ends with exit 130."""
    try:
        app()
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except OSError as e:
        error_console().print(f"[bold red]error:[/] {e.filename or ''}: cannot write or read: {e.strerror or e}; "
                              "fix: give a writable file path (its folder must exist)", highlight=False,
                              soft_wrap=True)
        raise SystemExit(2) from None
