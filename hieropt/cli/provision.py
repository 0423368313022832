"""``hieropt provision INSTANCE --catalog FILE``: integer provisioning from a parts catalog
(registered in :mod:`hieropt.cli`). Exit codes as the other commands: 0 certified optimum, 2 bad
input, 3 no certified answer."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..names import PROVISION_OBJECTIVES
from .common import console, error_console, error_line, fail, to_stdout, write_json
from .numbers import (
    parse_amount,
    parse_power_w,
    parse_time_ns,
    parse_tokens,
    parse_within,
    with_run_tokens,
)
from .options import BudgetOpt, MaxTimeOpt, TokensOpt, TotalBudgetOpt, WithinOpt

MAX_TRADEOFF_LEVELS = 50
"""The most levels per axis ``--tradeoff`` takes: N x N + 3 MILPs (the grid and the three ends),
each up to 60 s; at 50, 2,503 of them, about 40 s at the 16 ms each of a 2-dimension instance (40
levels, 1,603 solves, took 25 s) and far longer on larger ones; the front has at most one point per
distinct design, so a finer grid than that adds solves, seldom points."""

TRADEOFF_PROGRESS_LEVELS = 10
"""``--tradeoff`` from this many levels per axis (103 MILPs) shows a progress bar on stderr, as
``pareto`` does from 1,000 points: the grid points settled, updated after each cost level."""


def _check_tradeoff(levels: int) -> None:
    """Refuse ``--tradeoff`` above :data:`MAX_TRADEOFF_LEVELS` with the number of MILP solves it
    would take (fewer than 2 levels: the library's message).

    Raises:
        InputError: ``--tradeoff``, the solves and the fix.
    """
    from ..errors import InputError

    if levels > MAX_TRADEOFF_LEVELS:
        most = MAX_TRADEOFF_LEVELS
        raise InputError("--tradeoff", None,
                         f"{levels} levels per axis take {levels * levels + 3:,} MILP solves (a "
                         f"{levels} x {levels} grid and the 3 ends, each up to 60 s), above the "
                         f"{most * most + 3:,} of {most}",
                         f"give at most {most} levels; the front has one point per distinct "
                         "design, which a coarser grid usually finds")


def _named(e, catalog: Path, max_power_w: str | None = None):
    """``e`` with the catalog file as its source where the solver could only say "catalog" (the
    catalog checks that need the instance, e.g. a part without a power figure under a power
    objective); an infeasible power budget given with its unit (``max_power_w``, the text of
    ``--max-power-w``: ``1kW``) without the hint that reads it as a plain number of W
    (:func:`hieropt.units.without_plain_power_hint`)."""
    from ..errors import InputError, NoSolutionError
    from ..units import PLAIN_NUMBER, without_plain_power_hint

    if (isinstance(e, NoSolutionError) and max_power_w is not None
            and not PLAIN_NUMBER.fullmatch(max_power_w.strip())):
        text = str(e).removeprefix(f"{e.kind}: ")
        if (kept := without_plain_power_hint(text)) != text:
            return NoSolutionError(e.kind, kept)
    return e.with_source(catalog) if isinstance(e, InputError) and e.source == "catalog" else e


def _usable(catalog: Path, inst, err):
    """The catalog file read and checked against ``inst`` within the accelerator's NIC cap (the
    bounds whole parts are bought within: :func:`hieropt.io.nic_bound.nic_checked_catalog`),
    without the parts no design can use; one ``note:`` line on ``err`` per part left out (naming
    it, the bound, cap or constraint and the file).

    Raises:
        InputError: a bad catalog, or one that cannot serve the instance.
        NoSolutionError: the design rows alone cannot hold, or force zero bandwidth on a
            dimension that carries traffic (first, in the words of ``hieropt solve``).
    """
    from ..io.catalog import read_catalog
    from ..io.nic_bound import nic_checked_catalog
    from ..solvers.cost_range import no_design_by_rows_of

    parts = read_catalog(catalog)
    no_design_by_rows_of(inst)  # (the rows' own reason before any part's misfit, as solve)
    usable, notes = nic_checked_catalog(parts, inst, catalog)
    for note in notes:
        error_line(err, note, label="note:", style="yellow")
    return usable


def provision_command(
    ctx: typer.Context,
    instance: Annotated[Path, typer.Argument(help="Instance TOML file.", show_default=False)],
    catalog: Annotated[
        Path,
        typer.Option(
            "--catalog",
            help="Parts catalog (TOML or YAML): per cost class the link "
            "ports, NICs and switches with GB/s (or Gb/s) per unit and $ per unit.",
            show_default=False,
        ),
    ],
    objective: Annotated[
        str | None,
        typer.Option(
            "--objective",
            help=f"One of {', '.join(PROVISION_OBJECTIVES)} (default: the instance's): min "
            "iteration "
            "time; cheapest design with iteration time <= --max-time; min time x cost; "
            "least power with iteration "
            "time <= --max-time.",
        ),
    ] = None,
    max_time: MaxTimeOpt = None,
    budget: BudgetOpt = None,
    total_budget: TotalBudgetOpt = None,
    tokens: TokensOpt = None,
    within: WithinOpt = "1%",
    max_power_w: Annotated[
        str | None,
        typer.Option(
            "--max-power-w",
            help="Power budget of the network's parts: 500kW, 1.2MW (a plain number is W; every "
            "part needs watts).",
            show_default=False,
        ),
    ] = None,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            metavar="FILE",
            help="Also write the full result as JSON to FILE ('-': stdout, tables then go to "
            "stderr).",
        ),
    ] = None,
    tradeoff: Annotated[
        int | None,
        typer.Option(
            "--tradeoff",
            help="Instead of one design: the exact time-cost-power trade-off on an N x N grid of "
            "cost and "
            "power levels (epsilon-constraint; every part needs watts), every point within "
            "--max-time, --budget, --max-power-w, --total-budget and the file's limits: "
            "N x N + 3 MILP solves, "
            f"N at most {MAX_TRADEOFF_LEVELS}; a progress bar on stderr from N = "
            f"{TRADEOFF_PROGRESS_LEVELS}.",
        ),
    ] = None,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare/--no-compare",
            help="Compare with the continuous optimum and its roundings to units.",
        ),
    ] = True,
) -> None:
    """Choose whole parts (link ports, NICs, switches, optics) from a catalog for every dimension,
    exactly (MILP, proven gap).

    Prints per dimension the part, parts per NPU and in the cluster, switches and fabric, bandwidth
    and cost; the bill of materials with power; the proven gap; and the comparison with the
    continuous optimum (a lower bound on time) and with its roundings to whole units. Exit 3 when no
    catalog design meets the constraints, the time target, the budget, the total budget (the
    whole cluster's capex with the facility its parts' power needs) the power budget or the site's
    power cap ([cluster] max_power_mw, MW with the parts' power).
    """
    from ..errors import HieroptError
    from ..io.instance import load_instance

    err = error_console()
    out = err if to_stdout(json_out) else console()
    if tradeoff is not None:
        try:
            _check_tradeoff(tradeoff)
            _tradeoff_alone(objective, tokens, within if _given(ctx, "within") else None)
            max_time_ns, max_cost_usd, max_power, total_usd = (
                parse_time_ns(max_time, "--max-time"),
                parse_amount(budget, "--budget"),
                parse_power_w(max_power_w, "--max-power-w"),
                parse_amount(total_budget, "--total-budget"),
            )
            inst = load_instance(instance)
            parts = _usable(catalog, inst, err)
            from ..progress import ProgressBar
            from ..solvers.provision_milp import provision_tradeoff  # (once the input is valid)

            bar = ProgressBar(tradeoff >= TRADEOFF_PROGRESS_LEVELS,
                              f"trade-off {inst.name} ({tradeoff} x {tradeoff} grid)",
                              tradeoff * tradeoff)
            bar.start()
            try:
                tr = provision_tradeoff(inst, parts, tradeoff, max_iteration_time_ns=max_time_ns,
                                        max_cost_usd=max_cost_usd, max_power_w=max_power,
                                        max_total_capex_usd=total_usd, progress=bar.update)
            finally:
                bar.stop()
        except HieroptError as e:
            raise fail(err, _named(e, catalog, max_power_w), json_out) from None
        from ..report import provision as report_provision

        # the file first: a stdout closed by its reader (| head) cannot keep it back
        if json_out is not None:
            write_json(json_out, report_provision.tradeoff_dict(tr))
        out.print(report_provision.tradeoff_table(tr))
        for note in tr.notes:
            out.print(f"note: {note}", highlight=False, soft_wrap=True)
        raise typer.Exit(0)
    try:
        max_time_ns, max_cost_usd, max_power, total_usd = (
            parse_time_ns(max_time, "--max-time"),
            parse_amount(budget, "--budget"),
            parse_power_w(max_power_w, "--max-power-w"),
            parse_amount(total_budget, "--total-budget"),
        )
        inst = load_instance(instance)
        inst = with_run_tokens(inst, parse_tokens(tokens))
        parts = _usable(catalog, inst, err)
        slack = parse_within(within)
        # loaded once the input is valid (a bad input is reported fast)
        from ..solvers.provision import provision

        result = provision(inst, parts, objective=objective, max_iteration_time_ns=max_time_ns,
                           max_cost_usd=max_cost_usd, max_power_w=max_power, compare=compare,
                           max_total_capex_usd=total_usd)
        knee = None
        if (
            slack is not None
            and result.objective == "performance"
            and result.status.value == "optimal"
        ):
            from ..studies.knee import provision_knee

            knee = provision_knee(inst, parts, result, slack)
    except HieroptError as e:
        raise fail(err, _named(e, catalog, max_power_w), json_out) from None
    from ..model.run import provisioned_run
    from ..report import provision as report_provision
    from ..report.run import instance_calibration, run_dict, run_lines, run_notes

    # (the catalog's bill of materials: its cost and power)
    run, power_line = provisioned_run(inst, result.iteration_time_ns, result.network_cost_usd,
                                      result.power_w, result.bw_gbps)
    power_lines = [] if power_line is None else [power_line]
    calibration = instance_calibration(inst)
    data = {**result.to_dict(inst), "run": run_dict(run, calibration),
            "knee": None if knee is None else knee.to_dict()}
    data["notes"] = list(data.get("notes", [])) + power_lines + run_notes(run, calibration)
    try:
        _finite(data, catalog)
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    if json_out is not None:  # the file first (as above)
        write_json(json_out, data)
    knee_line = [] if knee is None else [knee.line()]
    lines = (report_provision.summary_lines(inst, result) + run_lines(run, calibration)
             + power_lines)
    for line in lines + knee_line:
        out.print(line, highlight=False, soft_wrap=True)
    out.print(report_provision.design_table(inst, result))
    out.print(report_provision.bom_table(result))
    if compare:
        out.print(report_provision.comparison_table(result, inst.relative_time))
        for line in report_provision.rounding_lines(result):
            out.print(line, highlight=False, soft_wrap=True)
    raise typer.Exit(0 if result.success else 3)


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the option of parameter ``name`` was given in ``ctx`` (not left at its
    default)."""
    source = ctx.get_parameter_source(name)  # (typer may carry its own click: by its name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def _tradeoff_alone(objective: str | None, tokens: str | None,
                    within: str | None = None) -> None:
    """Refuse the options a trade-off has no use for (its limits, --max-time, --budget,
    --max-power-w and --total-budget, are rows of every point).

    Raises:
        InputError: naming ``--objective`` (each point is the fastest design within its cost and
            power level), ``--tokens`` (no run figures are printed) or ``--within`` (no knee of
            one fastest design is searched)."""
    from ..errors import InputError

    if objective is not None:
        raise InputError("--objective", None, "has no meaning with --tradeoff: each point is the "
                         "fastest design within its cost and power level",
                         "drop --objective (a time target is --max-time), or drop --tradeoff")
    if tokens is not None:
        raise InputError("--tokens", None, "has no meaning with --tradeoff: it prints no run "
                         "figures", "drop --tokens, or drop --tradeoff")
    if within is not None:
        raise InputError("--within", None, "has no meaning with --tradeoff: it searches the "
                         "cheapest design within a slack of one fastest design, and the trade-off "
                         "already lists the fastest design at each cost and power level",
                         "drop --within, or drop --tradeoff")


def _finite(data: dict, catalog: Path) -> None:
    """Refuse a provisioning whose figures (``data``, as written to ``--json``) hold a NaN or
    infinity: a price or size of the catalog too large for a double (a link at $1e308 makes the bill
    infinite).

    Raises:
        InputError: naming the catalog file and the figure.
    """
    from ..errors import InputError
    from ..io.files import nonfinite_field

    field = nonfinite_field(data)
    if field is not None:
        raise InputError(
            catalog,
            field,
            "not a finite number: a price, size or count of the catalog is too large for a double",
            "give realistic figures (prices and sizes well below 1e300)",
        )
