"""The typer app of ``hieropt`` with every command group registered (``hieropt.cli.app``; run by
:func:`hieropt.cli.main`)."""

from __future__ import annotations

import typer

from .astrasim import export_command, simulate_command
from .codesign import codesign_command
from .common import UNITS, Command, Group
from .compare import compare_command, report_command
from .explore import explore_command
from .provision import provision_command
from .solve import evaluate_command, pareto_command, solve_command
from .workload import workload_app

app = typer.Typer(
    cls=Group,
    rich_markup_mode="markdown",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="hieropt: exact per-dimension bandwidth design of multi-dimensional hierarchical training networks "
    "(LIBRA's problem on Pyomo + HiGHS, with proven optimality gaps). " + UNITS + " Exit codes: 0 success, "
    "2 bad input, 3 infeasible / unbounded / not certified.",
)
app.command("solve", cls=Command)(solve_command)
app.command("evaluate", cls=Command)(evaluate_command)
app.command("pareto", cls=Command)(pareto_command)
app.command("provision", cls=Command)(provision_command)
app.add_typer(workload_app, name="workload")
app.command("export", cls=Command)(export_command)
app.command("simulate", cls=Command)(simulate_command)
app.command("compare", cls=Command)(compare_command)
app.command("report", cls=Command)(report_command)
app.command("explore", cls=Command)(explore_command)
app.command("codesign", cls=Command)(codesign_command)
