"""``hieropt provision INSTANCE --catalog FILE``: integer provisioning from a parts catalog (registered in
:mod:`hieropt.cli`). Exit codes as the other commands: 0 certified optimum, 2 bad input, 3 no certified answer."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ..errors import HieroptError
from ..io.instance import load_instance
from ..report import provision as report_provision
from ..solvers.provision import PROVISION_OBJECTIVES, provision


def provision_command(
    instance: Annotated[Path, typer.Argument(help="Instance TOML file.", show_default=False)],
    catalog: Annotated[Path, typer.Option("--catalog", help="Parts catalog (TOML or YAML): per cost class the link "
                                          "ports, NICs and switches with GB/s (or Gb/s) per unit and $ per unit.",
                                          show_default=False)],
    objective: Annotated[str | None, typer.Option(
        "--objective", help=f"One of {', '.join(PROVISION_OBJECTIVES)} (default: the instance's): min iteration "
        "time; cheapest design with iteration time <= --max-time-ns; min time x cost.")] = None,
    max_time_ns: Annotated[float | None, typer.Option(
        "--max-time-ns", help="Iteration-time target, ns (required with min_cost).")] = None,
    max_cost_usd: Annotated[float | None, typer.Option(
        "--max-cost-usd", help="Budget on the catalog cost of the network, $.")] = None,
    json_out: Annotated[Path | None, typer.Option(
        "--json", help="Also write the full result as JSON to FILE ('-': stdout, tables then go to stderr).")] = None,
    compare: Annotated[bool, typer.Option(
        "--compare/--no-compare", help="Compare with the continuous optimum and its roundings to units.")] = True,
) -> None:
    """Choose whole parts (link ports, NICs, switches) from a catalog for every dimension, exactly (MILP, proven gap).

    Prints per dimension the part, parts per NPU and in the cluster, switches, bandwidth and cost; the bill of
    materials; the proven gap; and the comparison with the continuous optimum (a lower bound on time) and with its
    roundings to whole units. Exit 3 when no catalog design meets the constraints, the time target or the budget.
    """
    err = Console(stderr=True)
    to_stdout = json_out is not None and str(json_out) == "-"
    out = err if to_stdout else _console()
    try:
        inst = load_instance(instance)
        result = provision(inst, catalog, objective=objective, max_iteration_time_ns=max_time_ns,
                           max_cost_usd=max_cost_usd, compare=compare)
    except HieroptError as e:
        err.print(f"[bold red]error:[/] {e}", highlight=False, soft_wrap=True)
        raise typer.Exit(e.exit_code) from None
    for line in report_provision.summary_lines(inst, result):
        out.print(line, highlight=False, soft_wrap=True)
    out.print(report_provision.design_table(inst, result))
    out.print(report_provision.bom_table(result))
    if compare:
        out.print(report_provision.comparison_table(result))
        for line in report_provision.rounding_lines(result):
            out.print(line, highlight=False, soft_wrap=True)
    if json_out is not None:
        text = json.dumps(report_provision.provision_dict(inst, result), indent=2)
        if to_stdout:
            sys.stdout.write(text + "\n")
        else:
            json_out.write_text(text + "\n", encoding="utf-8")
    raise typer.Exit(0 if result.success else 3)


def _console() -> Console:
    """stdout console, at least 120 columns wide when not a terminal (files, pipes) so tables are not truncated."""
    c = Console()
    return c if c.is_terminal else Console(width=max(c.width, 120))
