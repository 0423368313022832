"""``hieropt explore SPACE.toml``: enumerate every network shape of a shape space, solve each
exactly, rank them (registered in :mod:`hieropt.cli`). Exit codes: 0 done, 2 bad input, 3 no shape
has a certified answer, 130 interrupted (rerun with the same ``--out`` to resume)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..names import OBJECTIVES
from .common import (
    check_output_file,
    console,
    error_console,
    error_line,
    fail,
    to_stdout,
    write_json,
)
from .numbers import parse_amount, parse_time_ns
from .options import BudgetOpt, MaxTimeOpt
from .outputs import interrupt_note, sweep_where
from .usage import attribute_to_file

NO_ANSWER = "no shape has a certified answer (see the failures above)"
"""The error line (and the ``--json`` message) of a sweep that ends without a ranked shape (exit
3)."""


def _status(result) -> str:
    """The ``--json`` status of a sweep without a certified shape: ``infeasible`` or ``unbounded``
    when every failed shape was that, else ``error`` (the statuses of
    :func:`hieropt.cli.common.fail`)."""
    kinds = {r["status"] for r in result.failed}
    return kinds.pop() if len(kinds) == 1 and kinds <= {"infeasible", "unbounded"} else "error"


def explore_command(
    space: Annotated[
        Path,
        typer.Argument(
            help="Shape-space TOML file (see spaces/gpt3-4096.toml).", show_default=False
        ),
    ],
    objective: Annotated[
        str | None,
        typer.Option(
            "--objective",
            help=f"One of {', '.join(o for o in OBJECTIVES if o != 'min_run_cost')} (default: the "
            "space's).",
        ),
    ] = None,
    max_time: MaxTimeOpt = None,
    budget: BudgetOpt = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Rows of the ranked table.")] = 20,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE",
            help="Stream one row per shape to FILE (.csv, or .parquet with pyarrow) as results "
            "arrive; an "
            "existing FILE is resumed: its shapes are not solved again.",
        ),
    ] = None,
    dask: Annotated[
        str | None,
        typer.Option(
            "--dask",
            help="Run the solves on a Dask cluster at this scheduler address (tcp://host:8786); "
            "needs "
            "dask[distributed] here and hieropt on the workers.",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers", help="Processes of the local pool (default: CPU count; 1: no pool)."
        ),
    ] = None,
    prune: Annotated[
        bool,
        typer.Option(
            "--prune/--no-prune",
            help="Solve one shape per class of exact duplicates (docs/how-to/explore.md).",
        ),
    ] = True,
    catalog: Annotated[
        Path | None,
        typer.Option(
            "--catalog",
            help="Parts catalog: also provision the best --provision-top shapes with whole parts "
            "and rank "
            "them by the integer bill of materials.",
        ),
    ] = None,
    provision_top: Annotated[
        int,
        typer.Option(
            "--provision-top", help="With --catalog: how many of the best shapes to provision."
        ),
    ] = 5,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            metavar="FILE",
            help="Also write the sweep as JSON to FILE ('-': stdout): counts, throughput "
            "(candidates "
            "certified per second per core), the --top ranked rows, the per-dimension "
            "summary, the Pareto set.",
        ),
    ] = None,
) -> None:
    """Which network to build: every shape of the space (dimension count, sizes, building blocks,
    group placement), each solved exactly; prints the ranking by proven optimum, the scale-out (NIC)
    spend per dimension count and the Pareto set of shapes over (iteration time, network cost)."""
    from ..errors import HieroptError
    from ..io.common import read_toml

    err = error_console()
    # Ctrl-C (130) or SIGTERM (143): the line says where the rows are (hieropt.cli.common)
    interrupt_note(sweep_where(out))
    out_console = err if to_stdout(json_out) else console(160)
    try:
        check_output_file(json_out, "--json")  # (before the sweep: a path that cannot be written)
        max_time_ns, budget_usd = (
            parse_time_ns(max_time, "--max-time"),
            parse_amount(budget, "--budget"),
        )
        # a missing or unreadable file is reported before numpy loads
        read_toml(space, "shape space")
        from ..io.space import load_space

        shapes = load_space(space)  # bad input is reported before the solvers load
        if catalog is not None:  # (a catalog for other cost classes: told before the sweep)
            from ..studies.explore.provision import check_catalog_classes

            check_catalog_classes(shapes, catalog)
        if dask is not None:  # a malformed address is one line, before any work
            from ..io.dask_address import check_dask_address

            check_dask_address(dask)
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    from ..report.explore import (
        dims_table,
        explore_dict,
        pareto_table,
        ranking_table,
        summary_lines,
    )
    from ..studies.explore import explore

    try:
        result = explore(
            shapes,
            objective,
            max_iteration_time_ns=max_time_ns,
            max_network_cost_usd=budget_usd,
            out=out,
            workers=workers,
            dask=dask,
            prune=None if prune else False,
            progress=True,
        )
    except HieroptError as e:
        raise fail(err, attribute_to_file(e, space, shapes.name), json_out) from None
    # the file first: a stdout its reader closes (| head) cannot keep it from being written;
    # after exit 3 it holds this run's outcome, as every command's --json (never an earlier
    # answer)
    if json_out is not None:
        data = explore_dict(result, top)
        if not result.ranking:
            failed = result.failed
            why = f" (e.g. {failed[0]['shape_id']}: {failed[0]['message']})" if failed else ""
            data = {
                "status": _status(result),
                "message": f"no shape has a certified answer{why}",
                "exit_code": 3,
                **data,
            }
        write_json(json_out, data)
    for line in summary_lines(result):
        out_console.print(line, highlight=False, soft_wrap=True)
    if not result.ranking:
        error_line(err, NO_ANSWER)
        raise typer.Exit(3)
    out_console.print(ranking_table(result, top))
    out_console.print(dims_table(result))
    out_console.print(pareto_table(result))
    if catalog is not None:
        from ..report.explore import provision_table
        from ..studies.explore import provision_shortlist
        from ..studies.explore.provision import all_failed

        try:
            rows = provision_shortlist(result, catalog, provision_top)
        except HieroptError as e:
            raise fail(err, e, json_out) from None
        out_console.print(provision_table(rows))
        for note in dict.fromkeys(r["note"] for r in rows if r.get("note")):
            out_console.print(f"note: {note}", highlight=False, soft_wrap=True)
        for r in rows:
            for line in r.get("nic_bounds") or ():
                out_console.print(f"note: bom rank {r['bom_rank']}: {line}", highlight=False,
                                  soft_wrap=True)
        if (problem := all_failed(rows)) is not None:
            error_line(err, problem)
            raise typer.Exit(3)
