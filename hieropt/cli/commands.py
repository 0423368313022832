"""The typer app of ``hieropt`` (``hieropt.cli.app``; run by :func:`hieropt.cli.main`).

Its commands are loaded lazily (``hieropt --help`` and a bad-input error in a fraction of a second):
:data:`COMMANDS` names the module, the function and the summary of each, and :class:`LazyGroup`
imports a command's module and builds its click command (with typer's own
:func:`typer.main.get_command` and the app's settings) only when that command runs or shows its
help. ``hieropt --help`` lists every command with its summary, without importing the command
modules; a command that runs loads only its own module. ``tests/cli/test_startup.py`` checks that
the lazy app prints the same help, for the app and every command, as an app with every command
registered eagerly.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from .common import UNITS, Command, Group

COMMANDS: dict[str, tuple[str, str, str]] = {
    "solve": (
        "solve",
        "solve_command",
        "Find the optimal per-NPU bandwidth of every dimension, with a proven optimality gap.",
    ),
    "evaluate": (
        "solve",
        "evaluate_command",
        "Evaluate a given bandwidth allocation: iteration time, breakdown, utilisation and "
        "cost (no solver).",
    ),
    "pareto": (
        "solve",
        "pareto_command",
        "The exact time-cost Pareto front: from the cheapest feasible network to the "
        "fastest, each point the "
        "fastest network within its budget (proven to 1e-8), with the performance and "
        "performance-per-cost "
        "optima marked.",
    ),
    "provision": (
        "provision",
        "provision_command",
        "Choose whole parts (link ports, NICs, switches, optics) from a catalog for every "
        "dimension, exactly "
        "(MILP, proven gap).",
    ),
    "export": (
        "astrasim",
        "export_command",
        "Write an ASTRA-sim 2.0 bundle for INSTANCE: network.yml, system.json, Chakra "
        "traces of every NPU, "
        "remote_memory.json and run.sh (`DIR/run.sh [BIN]`, BIN default `$ASTRA_SIM`).",
    ),
    "simulate": (
        "astrasim",
        "simulate_command",
        "Run ASTRA-sim on INSTANCE's bundle and compare its iteration time with hieropt's "
        "prediction.",
    ),
    "compare": (
        "compare",
        "compare_command",
        "Compare the exact optimum with the rules of thumb: equal split, "
        "traffic-proportional, Kleinrock's "
        "square-root rule, projected gradient descent (with its iterations and gap), greedy "
        "water-filling and"
        " the instance's vendor ratios (heuristic_ratios). Every heuristic is made feasible "
        "for the same "
        "constraints; prints iteration time, cost, time x cost, the gap to the optimum, the "
        "bottleneck "
        "dimension and where each heuristic loses.",
    ),
    "report": (
        "compare",
        "report_command",
        "Write the committee page of an instance or a co-design result: one self-contained "
        "HTML page with the "
        "recommendation (plan, fabric, cluster size, days, $ per run, MW, MFU), the "
        "alternatives side by side "
        "(fastest, knee, least $ per run, ...), the trade-off plot and the detail, and "
        "report.json.",
    ),
    "explore": (
        "explore",
        "explore_command",
        "Which network to build: every shape of the space (dimension count, sizes, building "
        "blocks, group "
        "placement), each solved exactly; prints the ranking by proven optimum, the "
        "scale-out (NIC) spend per"
        " dimension count and the Pareto set of shapes over (iteration time, network cost).",
    ),
    "codesign": (
        "codesign",
        "codesign_command",
        "Choose the training plan (TP, PP, DP, EP, ZeRO, recompute, micro-batch) and the "
        "network (shape, "
        "group placement, per-dimension bandwidth) together: every plan that fits in memory "
        "on every shape of"
        " the space, each solved to a proven gap or pruned by a proven bound; prints the "
        "best, the ranking "
        "and the best per dimension count with its scale-out bandwidth.",
    ),
    "validate": (
        "validate",
        "validate_command",
        "Predict measured training runs and compare: every run's predicted and measured "
        "iteration time and "
        "error, the mean absolute error and the worst, per runs file, and per group of runs "
        "compared with each "
        "other the Spearman rank correlation and the measured rank of the predicted-fastest "
        "plan. Each run is an "
        "LLM plan on its network at its bandwidths, timed as hieropt evaluate times it "
        "(training loop step, every"
        " pipeline stage).",
    ),
    "calibrate": (
        "validate",
        "calibrate_command",
        "Fit the accelerator's calibration parameters (flat model: [params.npu] efficiency; "
        "roofline: "
        "matrix_efficiency, or the fields --fit names) to measured runs of one accelerator, within "
        "their bounds, "
        "minimising the mean absolute percentage error (or the log error), and write the "
        "accelerator with its "
        "fitted values, the fit's mean and worst error, the number of runs it rests on and each "
        "runs file's SHA-256 (validate --npu refuses a runs file changed since). Each distinct "
        "run counts once (a row repeating a run, or a file given twice, does not add one; "
        "rows of one plan measured at several times weigh each but are one run). "
        "Refused (exit 2): more fitted fields than distinct runs, a run whose plan does not fit in "
        "memory, a row giving a fitted field, rows that differ in an accelerator setting the "
        "file holds once (number_format, hbm_reserve_gib, ...), a best fit more than 50 % off "
        "(with the unit it "
        "points at), a fitted field no run depends on or fields the runs do not separate, "
        "an --out or --json file that is one of the inputs; a fitted value at a bound "
        "of its range is a note on stderr and in the file, and two runs of the same plan "
        "measured more than 10 % apart a note on stderr and in the JSON.",
    ),
    "workload": (
        "workload",
        "workload_app",
        "Show ASTRA-sim 1.0 workloads (every dialect), generate them from workload models "
        "(transformer, DLRM,"
        " CNN), and size LLM training plans (memory, compute, collectives). Times in ns, "
        "sizes in bytes per "
        "NPU.",
    ),
}
"""Command name -> (module of :mod:`hieropt.cli`, attribute, summary). The attribute is the command
function, or the typer app of a command group (``workload``); the summary is the first paragraph of
its help (the function's docstring, or the group app's help), which the command list of ``hieropt
--help`` shows (tests/cli/test_startup.py checks that they agree). The order is the order of
``hieropt --help`` (typer lists command groups last)."""

SETTINGS: dict[str, Any] = {
    "rich_markup_mode": "markdown",
    "add_completion": False,
    "pretty_exceptions_enable": False,
}
"""The typer settings of the app, also given to each lazily built command."""

HELP = (
    "hieropt: exact per-dimension bandwidth design of multi-dimensional hierarchical "
    "training networks "
    "(LIBRA's problem on Pyomo + HiGHS, with proven optimality gaps). "
    + UNITS
    + " Exit codes: 0 success, "
    "2 bad input, 3 infeasible / unbounded / not certified."
)


def target(name: str) -> Any:
    """The command function (or typer app) of command ``name``, its module imported."""
    module, attribute, _ = COMMANDS[name]
    return getattr(importlib.import_module(f"{__package__}.{module}"), attribute)


def build(name: str) -> TyperCommand | TyperGroup:
    """The click command of command ``name``, built by typer exactly as ``app.command(name,
    cls=Command)`` (or ``app.add_typer(workload_app, name=name)``) on the app would build it."""
    value = target(name)
    if isinstance(value, typer.Typer):
        one = typer.Typer(**SETTINGS)
        one.add_typer(value, name=name)
        group = typer.main.get_group(one)
        return group.commands[name]
    one = typer.Typer(**SETTINGS)
    one.command(name, cls=Command)(value)
    return typer.main.get_command(one)


def summary(name: str) -> TyperCommand | TyperGroup:
    """A command without options that carries only what the command list of ``hieropt --help``
    shows: the name and the summary of :data:`COMMANDS` (its module is not imported)."""
    return Command(name=name, help=COMMANDS[name][2], rich_markup_mode=SETTINGS["rich_markup_mode"])


class LazyCommands(MutableMapping):
    """The commands of :class:`LazyGroup` by name: every name of :data:`COMMANDS` (in its order),
    each command built on first access and kept; a command added later (``add_command``) is kept as
    given."""

    def __init__(self, added: dict[str, Any] | None = None) -> None:
        self.built: dict[str, Any] = dict(added or {})

    def __getitem__(self, name: str) -> Any:
        if name not in self.built:
            if name not in COMMANDS:
                raise KeyError(name)
            self.built[name] = build(name)
        return self.built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self.built[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError("the commands of hieropt cannot be removed")

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (name for name in self.built if name not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS) + sum(name not in COMMANDS for name in self.built)

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self.built


class LazyGroup(Group):
    """The top-level group: its commands are a :class:`LazyCommands` mapping (a command is built
    when it is looked up). While the group prints its own help, a lookup of a command not built yet
    returns its :func:`summary` instead, so the command list costs no option set-up."""

    _listing = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = LazyCommands(self.commands)

    # click's (the names; builds nothing)
    def list_commands(self, ctx: Any) -> list[str]:  # noqa: D102
        return list(self.commands)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:  # noqa: D102 - click's
        if self._listing and cmd_name in COMMANDS and cmd_name not in self.commands.built:
            return summary(cmd_name)
        return self.commands.get(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:  # noqa: D102 - click's
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(cls=LazyGroup, no_args_is_help=True, help=HELP, **SETTINGS)


def versions() -> str:
    """One line per package that decides an answer: hieropt, HiGHS (highspy), DAQP, Pyomo, numpy,
    Python (read from the installed distributions' metadata, nothing imported), for a result to be
    reproduced on the same versions."""
    import platform
    from importlib import metadata

    from ..version import __version__

    lines = [f"hieropt {__version__}"]
    for dist, label in (("highspy", "HiGHS (highspy)"), ("daqp", "DAQP"), ("pyomo", "Pyomo"),
                        ("numpy", "numpy")):
        try:
            lines.append(f"{label} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            lines.append(f"{label} not installed")
    lines.append(f"Python {platform.python_version()}")
    return "\n".join(lines)


def _print_versions(value: bool) -> None:
    if value:
        typer.echo(versions())
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_versions,
        is_eager=True,
        help="Print the versions of hieropt, HiGHS, DAQP, Pyomo, numpy and Python, and exit.",
    ),
) -> None:
    """Only ``--version`` of its own: typer makes a group of an app with a callback, and
    :class:`LazyGroup` adds the commands (the app's help is :data:`HELP`)."""
