"""The typer app of ``hieropt`` with every command group registered (``hieropt.cli.app``; run by
:func:`hieropt.cli.main`)."""

from __future__ import annotations

import typer

from .astrasim import export_command, simulate_command
from .common import UNITS
from .compare import compare_command, report_command
from .explore import explore_command
from .provision import provision_command
from .solve import evaluate_command, pareto_command, solve_command
from .workload import workload_app

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
app.command("simulate")(simulate_command)
app.command("compare")(compare_command)
app.command("report")(report_command)
app.command("explore")(explore_command)
