"""``hieropt explore SPACE.toml``: enumerate every network shape of a shape space, solve each exactly, rank them
(registered in :mod:`hieropt.cli`). Exit codes: 0 done, 2 bad input, 3 no shape has a certified answer, 130
interrupted (rerun with the same ``--out`` to resume)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ..names import OBJECTIVES
from .common import error_console, fail


def explore_command(
    space: Annotated[Path, typer.Argument(help="Shape-space TOML file (see spaces/gpt3-4096.toml).",
                                          show_default=False)],
    objective: Annotated[str | None, typer.Option(
        "--objective", help=f"One of {', '.join(OBJECTIVES)} (default: the space's).")] = None,
    max_time_ns: Annotated[float | None, typer.Option(
        "--max-time-ns", help="Iteration-time target, ns (required by min_cost).")] = None,
    budget_usd: Annotated[float | None, typer.Option("--budget-usd", help="Network-cost cap, $.")] = None,
    top: Annotated[int, typer.Option("--top", help="Rows of the ranked table.")] = 20,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Stream one row per shape to FILE (.csv, or .parquet with pyarrow) as results arrive; an "
        "existing FILE is resumed: its shapes are not solved again.")] = None,
    dask: Annotated[str | None, typer.Option(
        "--dask", help="Run the solves on a Dask cluster at this scheduler address (tcp://host:8786); needs "
        "dask[distributed] here and hieropt on the workers.")] = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", help="Processes of the local pool (default: CPU count; 1: no pool).")] = None,
    prune: Annotated[bool, typer.Option(
        "--prune/--no-prune", help="Solve one shape per class of exact duplicates (see the README).")] = True,
) -> None:
    """Which network to build: every shape of the space (dimension count, sizes, building blocks, group placement),
    each solved exactly; prints the ranking by proven optimum, the scale-out (NIC) spend per dimension count and the
    Pareto set of shapes over (iteration time, network cost)."""
    from ..errors import HieroptError
    from ..report.explore import dims_table, pareto_table, ranking_table, summary_lines
    from ..studies.explore import explore

    err = error_console()
    out_console = Console(width=max(Console().width, 160))
    try:
        result = explore(space, objective, max_iteration_time_ns=max_time_ns, max_network_cost_usd=budget_usd,
                         out=out, workers=workers, dask=dask, prune=None if prune else False, progress=True)
    except HieroptError as e:
        raise fail(err, e) from None
    except KeyboardInterrupt:
        where = f"the rows so far are in {out}; rerun the same command to resume" if out else "no --out file"
        err.print(f"interrupted: {where}", highlight=False, soft_wrap=True)
        raise typer.Exit(130) from None
    for line in summary_lines(result):
        out_console.print(line, highlight=False, soft_wrap=True)
    if not result.ranking:
        err.print("[bold red]error:[/] no shape has a certified answer (see the failures above)", highlight=False)
        raise typer.Exit(3)
    out_console.print(ranking_table(result, top))
    out_console.print(dims_table(result))
    out_console.print(pareto_table(result))
