"""``hieropt codesign SPACE.toml``: the training plan and the network chosen jointly, each candidate
solved exactly or pruned by a proven bound (registered in :mod:`hieropt.cli`). Exit codes: 0 done, 2
bad input, 3 no plan fits in memory, no candidate has a certified answer, or the best is a LIMIT
(not proven within the gap target over the search), 130 interrupted (rerun with the same ``--out``
to resume)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..names import CODESIGN_OBJECTIVES
from .common import console as stdout_console
from .common import error_console, error_line, fail
from .options import BudgetOpt, DeadlineOpt, MaxTimeOpt, TokensOpt


def codesign_command(
    space: Annotated[
        Path,
        typer.Argument(
            help="Co-design space TOML (see spaces/codesign-gpt3-4096.toml).", show_default=False
        ),
    ],
    objective: Annotated[
        str | None,
        typer.Option(
            "--objective",
            help=f"One of {', '.join(CODESIGN_OBJECTIVES)} (default: the space's).",
        ),
    ] = None,
    max_time: MaxTimeOpt = None,
    budget: BudgetOpt = None,
    tokens: TokensOpt = None,
    top: Annotated[
        int,
        typer.Option(
            "--top",
            min=1,
            help="Rows of the ranked table (the rows of one plan that share a rank folded "
            "into its first: +k), and with --write-instances the number of instance files "
            "(those rows); the search solves enough candidates that the first k plans' ranks "
            "are the space's (a rank >=r after them: among the solved candidates only).",
        ),
    ] = 15,
    write_instances: Annotated[
        Path | None,
        typer.Option(
            "--write-instances",
            metavar="DIR",
            help="Write each of the --top best candidates to DIR as a self-contained instance file "
            "(model and plan, network, placement, step options, constraints, cost model) "
            "that 'hieropt solve' "
            "re-solves to the same optimum; a calibrated accelerator file the model names is "
            "named by its path relative to DIR (its note kept; keep the file there).",
        ),
    ] = None,
    catalog: Annotated[
        Path | None,
        typer.Option(
            "--catalog",
            help="Parts catalog: also provision the best --provision-top candidates with whole "
            "parts (an "
            "integer bill of materials, its cost and power) and rank them by it.",
        ),
    ] = None,
    provision_top: Annotated[
        int,
        typer.Option(
            "--provision-top",
            min=1,
            help="With --catalog: how many of the best candidates to provision.",
        ),
    ] = 5,
    sizes: Annotated[
        str | None,
        typer.Option(
            "--sizes",
            help="Cluster sizes to choose from, comma-separated NPU counts (e.g. "
            "2048,4096,8192): the space's npus list, searched together on its shape family "
            "([[levels]]; a fixed network takes only its own NPU count); the best by the "
            "space's objective says how many NPUs to buy, sizes that cannot win are skipped by "
            "a proven bound, a size no shape holds is skipped with a note naming it.",
            show_default=False,
        ),
    ] = None,
    deadline: DeadlineOpt = None,
    total_budget: Annotated[
        str | None,
        typer.Option(
            "--total-budget",
            help="Cap on the whole cluster's capex in $ (2.5B): each cluster size's network gets "
            "what its accelerators, servers, racks and facility ([cluster]) leave, a network "
            "budget on that size (with --budget, the tighter); a size whose cluster alone costs "
            "it all is infeasible; with --catalog each shortlisted design's parts and the "
            "facility their power needs fit in it too. The space's max_total_capex_usd, "
            "replaced.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE",
            help="Stream one row per candidate to FILE (.csv, or .parquet with pyarrow); an "
            "existing FILE is "
            "resumed: its candidates are not solved again.",
        ),
    ] = None,
    dask: Annotated[
        str | None,
        typer.Option(
            "--dask",
            help="Run the solves on a Dask cluster at this scheduler address (tcp://host:8786).",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers", help="Processes of the local pool (default: CPU count; 1: no pool)."
        ),
    ] = None,
    prune: Annotated[
        bool | None,
        typer.Option(
            "--prune/--no-prune",
            help="Skip candidates whose proven bound (compute + bubble + communication volume over "
            "the bandwidth budget) cannot beat the best found on its cluster size (exact: each "
            "size's best is its own optimum; default: the space's prune).",
            show_default=False,
        ),
    ] = None,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json", metavar="FILE", help="Also write the summary as JSON ('-': stdout)."
        ),
    ] = None,
) -> None:
    """Choose the training plan (TP, PP, DP, EP, ZeRO, recompute, micro-batch) and the network
    (shape, group placement, per-dimension bandwidth) together: every plan that fits in memory on
    every shape of the space, each solved to a proven gap or pruned by a proven bound; prints the
    best, the ranking and the best per dimension count with its scale-out bandwidth.

    With several cluster sizes in the space (npus = [...], or --sizes) the size is searched
    too; --deadline makes the run's wall time a target every size's iterations must meet.
    --write-instances writes the best as instance files for 'hieropt solve'; --catalog provisions
    them with whole parts; --json writes the summary with the space searched, from which 'hieropt
    report RESULT.json' figures every candidate's days, MFU and $.

    When no candidate meets the time target (--max-time, or the deadline's), the error says what
    the space reaches: the least proven time bound over the candidates, and the fastest possible
    design (the space searched again without the target), with their days. The best carries its
    gap over the whole search: when a candidate stopped at a solver limit with a bound below it,
    the answer is a LIMIT with that gap (exit 3, as solve's). min_run_cost without a token budget
    is $ per iteration. Refused before the search: a --deadline of a day or more per iteration and
    a --budget below $1,000 (a unit slip: did you mean 30M?) and a budget below the cheapest
    network of every shape (the cheapest named with its cost)."""
    from ..errors import HieroptError
    from .common import to_stdout
    from .outputs import answer_outputs, inputs_read, interrupt_note, sweep_where
    from .usage import attribute_to_file

    err = error_console()
    # Ctrl-C anywhere: exit 130 (SIGTERM: 143), the line says where the rows are
    interrupt_note(sweep_where(out))
    console = err if to_stdout(json_out) else stdout_console(160)
    try:
        plans, max_time_ns, budget_usd, run_tokens = _read_space(
            space, max_time, budget, tokens, dask, sizes, deadline)
        plans = _with_total_budget(plans, total_budget, space)
        if catalog is not None:  # (a catalog for other cost classes: told before the search)
            from ..studies.explore.provision import check_catalog_classes

            check_catalog_classes(plans, catalog)
    except HieroptError as e:
        raise fail(err, e, json_out) from None
    inputs_read()
    if write_instances is not None:  # (none of an earlier run's rank files beside this run's)
        from ..studies.codesign.export import instance_files

        answer_outputs(*instance_files(write_instances, plans.name))
    from ..report.run import codesign_calibration, codesign_run, run_lines, run_notes
    from ..studies.codesign import codesign

    bar = _SearchBar(err.is_terminal, f"codesign {plans.name}: candidates settled")
    try:
        result = codesign(plans, objective, out=out, workers=workers, dask=dask, prune=prune,
                          max_iteration_time_ns=max_time_ns, max_network_cost_usd=budget_usd,
                          progress=bar.update,
                          top=max(top, provision_top if catalog is not None else 1))
    except HieroptError as e:
        raise fail(err, attribute_to_file(e, space, plans.name), json_out) from None
    finally:
        bar.stop()
    try:
        shortlist, written = _exports(result, catalog, provision_top, write_instances, top)
    except HieroptError as e:
        raise fail(err, attribute_to_file(e, space, plans.name), json_out) from None
    # the file first: a stdout its reader closes (| head) cannot keep it from being written
    run = codesign_run(result, run_tokens)
    notes = run_notes(run, codesign_calibration(result))
    budgets = _total_budget_notes(plans, budget_usd)
    reach = None
    if result.best is None:  # (a time target no candidate meets: what the space reaches)
        from ..studies.codesign.reach import fastest_reachable

        reach = fastest_reachable(result, workers, dask)
    deadline_ns = parse_deadline(deadline)
    if json_out is not None:
        _write_summary(json_out, result, top, shortlist, written, deadline is not None,
                       [*budgets, *notes], reach, deadline_ns)
    from ..report.codesign import summary_lines

    for line in (summary_lines(result) + [f"note: {n}" for n in budgets]
                 + run_lines(run, codesign_calibration(result))):
        console.print(line, highlight=False, soft_wrap=True)
    _print_tables(console, err, result, top, shortlist, written, write_instances,
                  deadline_ns, reach)


class _SearchBar:
    """The search's progress on a terminal's stderr: candidates settled (solved, or pruned by
    their bound) of the space's, shown from the first one settled (a search can run for minutes
    before its summary prints); nothing when ``enabled`` is False (stderr not a terminal)."""

    def __init__(self, enabled: bool, description: str):
        self.enabled, self.description, self.bar = enabled, description, None

    def update(self, settled: int, total: int) -> None:
        """``settled`` of ``total`` candidates settled (:func:`hieropt.studies.codesign.codesign`'s
        ``progress``)."""
        if not self.enabled:
            return
        if self.bar is None:
            from ..progress import ProgressBar

            self.bar = ProgressBar(True, self.description, total, remaining=False)
            self.bar.start()
        self.bar.update(settled, total)

    def stop(self) -> None:
        """Remove the bar (its last state stays on the terminal)."""
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _read_space(space: Path, max_time: str | None, budget: str | None, tokens: str | None,
                dask: str | None, sizes: str | None, deadline: str | None):
    """The co-design space of file ``space`` with the command's options applied, and its targets.

    Returns ``(plans, max_time_ns, budget_usd, run_tokens)``: the co-design space (``--tokens`` and
    the ``--sizes``/``--deadline`` sizes applied), the iteration-time limit (ns; with ``--deadline``
    the tighter of it and the deadline's target), the network budget ($) and the run's token count
    (None: not given). Options and file are checked in that order, before the search and the
    solvers load.

    Raises:
        HieroptError: an unreadable file, a bad option or a bad space (one line naming it).
    """
    from ..io.common import read_toml
    from .numbers import parse_amount, parse_deadline_ns, parse_time_ns, parse_tokens

    max_time_ns = parse_time_ns(max_time, "--max-time")
    budget_usd = parse_amount(budget, "--budget")
    _check_budget(budget, budget_usd)
    run_tokens = parse_tokens(tokens)
    read_toml(space, "co-design space")  # a missing or unreadable file: reported before numpy loads
    from ..io.codesign import load_codesign

    deadline_ns = parse_deadline_ns(deadline)
    plans = load_codesign(space)  # bad input is reported before the search and the solvers load
    if dask is not None:  # a malformed address is one line, before any work
        from ..io.dask_address import check_dask_address

        check_dask_address(dask)
    if (problem := plans.tokens_problem(run_tokens)) is not None:
        from ..errors import InputError

        raise InputError("--tokens", None, problem,
                         "give the run's token budget, at least one iteration's, e.g. --tokens 15T")
    plans = plans if run_tokens is None else plans.model_copy(update={"tokens": run_tokens})
    if deadline_ns is not None:
        _check_deadline(plans, deadline, deadline_ns)
    if sizes is not None or deadline is not None:  # the sizes, the deadline's target
        from ..errors import InputError
        from ..studies.sizing import sized_space
        from .usage import attribute_to_file

        try:  # (the space's field named after its file, as the search's errors are)
            plans = sized_space(plans, _sizes(sizes), deadline_ns)
        except InputError as e:
            raise attribute_to_file(e, space, plans.name) from None
        if deadline is not None and max_time_ns is not None:  # the tighter target
            max_time_ns = min(max_time_ns, plans.max_iteration_time_ns)
    return plans, max_time_ns, budget_usd, run_tokens


def _with_total_budget(plans, total_budget: str | None, space: Path):
    """``plans`` (a co-design space) with ``--total-budget`` as its ``max_total_capex_usd`` (None:
    the space's own), checked before the search: the cluster's capex known at every size, and
    some size whose cluster without its network costs less than the total.

    Raises:
        InputError: a bad amount, or a space whose cluster gives no capex (named after its file).
        NoSolutionError: ``infeasible``, every size's cluster costs the whole budget or more."""
    from pydantic import ValidationError

    from ..errors import InputError, NoSolutionError
    from ..io.common import validation_error
    from ..studies.codesign.solve import cluster_capex_usd
    from ..workloads.llm.space import CodesignSpace
    from .numbers import parse_amount
    from .usage import attribute_to_file

    total = parse_amount(total_budget, "--total-budget")
    _check_budget(total_budget, total, "--total-budget")
    if total is not None and plans.cluster is None:
        raise InputError(
            "--total-budget", None,
            f"{space} has no [cluster]: a cap on the whole cluster's capex needs its "
            "accelerators', servers' and facility's $",
            "add [cluster] with accelerator_usd and amortisation_years to the space, or give a "
            "network budget (--budget)")
    if total is not None:
        try:
            plans = CodesignSpace(**{**dict(plans), "max_total_capex_usd": total})
        except ValidationError as e:
            raise validation_error(e, plans.name) from None
    if plans.max_total_capex_usd is None:
        return plans
    try:
        capex = {n: cluster_capex_usd(plans, n) for n in plans.sizes}
    except InputError as e:  # (a cluster without capex: named after the space's file)
        raise attribute_to_file(e, space, plans.name) from None
    least = min(capex, key=capex.get)
    if capex[least] >= plans.max_total_capex_usd:
        raise NoSolutionError(
            "infeasible",
            f"the total budget ${plans.max_total_capex_usd:,.0f} does not cover the smallest "
            f"cluster searched without its network: {least:,} NPUs cost ${capex[least]:,.0f} "
            "(accelerators, servers, racks and facility); raise it, or search smaller sizes "
            "(--sizes)")
    return plans


def _total_budget_notes(plans, budget_usd: float | None = None) -> list[str]:
    """One note per cluster size on what a total budget leaves its network (none without one),
    and where ``budget_usd`` (``--budget``, $) is the tighter cap, that it is."""
    total = plans.max_total_capex_usd
    if total is None:
        return []
    from ..report.run import fmt_money
    from ..studies.codesign.solve import cluster_capex_usd

    out = []
    for n in plans.sizes:
        capex = cluster_capex_usd(plans, n)
        left = total - capex
        out.append(
            f"total budget {fmt_money(total)}: {n:,} NPUs cost {fmt_money(capex)} without their "
            + (f"network, which gets {fmt_money(left)}" if left > 0 else
               "network, all of it or more: that size is infeasible")
            + (f" (--budget caps it at {fmt_money(budget_usd)}, the tighter)"
               if left > 0 and budget_usd is not None and budget_usd < left else "")
        )
    return out


LEAST_NETWORK_USD = 1000.0
"""A ``--budget`` below this ($) is refused before the search: no cluster's network (switches,
links and NICs for the NPUs of a space) costs less than a thousand dollars, so it is a budget typed
without its suffix (``--budget 30`` for 30M), as ``--max-time 7`` is a time without its unit."""


def _check_budget(text: str | None, budget_usd: float | None, flag: str = "--budget") -> None:
    """Refuse a ``--budget`` or ``--total-budget`` (``flag``; ``text``, ``budget_usd`` $) below
    :data:`LEAST_NETWORK_USD` with a "did you mean 30M?" hint, before the search (it would solve
    every candidate, then find none within it).

    Raises:
        InputError: the flag, the value and the suffixed amount it likely meant.
    """
    if text is None or budget_usd is None or budget_usd >= LEAST_NETWORK_USD:
        return
    from ..errors import InputError

    t = text.strip().lstrip("$").strip()
    raise InputError(
        flag, None,
        f"${budget_usd:,.2f} is below ${LEAST_NETWORK_USD:,.0f}, less than any cluster's network "
        "costs: a plain number is $",
        f"did you mean {t}M? write {flag} {t}M (suffixes k, M, B = 1e9)")


def _check_deadline(plans, text: str, deadline_ns: float) -> None:
    """Refuse a ``--deadline`` whose iteration-time target for the space's token budget is a day
    or more (:func:`hieropt.cli.numbers.check_deadline_target`).

    Raises:
        InputError: ``--deadline``, its days per iteration and the fix.
    """
    from ..studies.sizing import deadline_target_ns
    from .numbers import check_deadline_target

    check_deadline_target(text, deadline_ns, deadline_target_ns(plans, deadline_ns))


def _exports(result, catalog: Path | None, provision_top: int, write_instances: Path | None,
             top: int):
    """``(shortlist, written)``: the best ``provision_top`` candidates of ``result`` provisioned
    from ``catalog`` and the best ``top`` written as instance files into ``write_instances`` (each
    None when its option is not given or no candidate has an answer).

    Raises:
        HieroptError: a bad catalog or an unwritable directory.
    """
    shortlist = written = None
    if catalog is not None and result.best is not None:
        from ..studies.codesign.export import provision_codesign

        shortlist = provision_codesign(result, catalog, provision_top)
    if write_instances is not None and result.best is not None:
        from ..studies.codesign.export import write_instances as write_files

        written = write_files(result, write_instances, top)
    return shortlist, written


def _write_summary(json_out: Path, result, top: int, shortlist, written,
                   deadline: bool, notes: list[str], reach=None,
                   deadline_ns: float | None = None) -> None:
    """Write the ``--json`` summary of ``result`` to ``json_out`` ('-': stdout): its ``top``
    ranking and its ``run`` (:meth:`~hieropt.studies.codesign.search.Codesign.to_dict`, the one
    computation of both), the provisioned ``shortlist``, the ``written`` instance files, the
    ``notes`` on the run, with several sizes or a ``deadline`` each size's outcome, and without
    an answer ``no_answer`` (the line the command prints) and ``reach`` (what the space reaches
    without its time target: ``bound_ns``, ``bound_of``, ``fastest`` its fastest row, or
    null)."""
    from ..report.codesign import codesign_dict
    from .common import write_json

    data = codesign_dict(result, top)
    if shortlist is not None:
        from ..studies.explore.provision import all_failed

        data["provisioned"] = shortlist
        if (problem := all_failed(shortlist)) is not None:  # (exit 3: the file says so)
            data["provision_error"] = problem
            data["search_status"], data["status"] = data.get("status"), "infeasible"
    if written is not None:
        data["instances"] = [str(p) for p in written]
    if result.best is None:
        from ..report.codesign import no_answer

        data["no_answer"] = no_answer(result, reach, deadline_ns)
        data["reach"] = None if reach is None else {
            "bound_ns": reach.bound_ns, "bound_of": reach.bound_of, "fastest": reach.row}
    data["notes"] = list(data.get("notes", [])) + notes
    if len(result.space.sizes) > 1 or deadline:  # each size, the chosen
        from ..report.sizing import sizing_dict
        from ..studies.sizing import size_outcomes

        data.update(sizing_dict(size_outcomes(result, deadline)))
    write_json(json_out, data)


def _print_tables(console, err, result, top: int, shortlist, written, write_instances: Path | None,
                  deadline_ns: float | None, reach=None) -> None:
    """Print to ``console`` the ranking of ``result`` (``top`` rows), the best per dimension
    count, with several sizes the sizes table, the provisioned ``shortlist`` and the ``written``
    instance files (``deadline_ns``: the run's deadline, ns, or None; ``reach``: what the space
    reaches without its time target when no candidate meets it,
    :func:`hieropt.studies.codesign.reach.fastest_reachable`).

    Raises:
        typer.Exit: code 3 (after a line on ``err``) when no candidate has a certified answer
            (with a time target: what the space reaches,
            :func:`~hieropt.studies.codesign.reach.fastest_reachable`), no shortlisted candidate
            could be provisioned, or the best is a LIMIT (not proven within the gap target over
            the search: :attr:`Codesign.status`).
    """
    from ..report.codesign import dims_table, no_answer, ranking_table

    deadline = deadline_ns is not None
    if result.best is None:
        error_line(err, no_answer(result, reach, deadline_ns))
        raise typer.Exit(3)
    console.print(ranking_table(result, top))
    console.print(dims_table(result))
    if len(result.space.sizes) > 1:
        from ..report.codesign import sizes_table

        console.print(sizes_table(result, deadline))
    if shortlist is not None:
        from ..report.codesign import provision_table
        from ..studies.explore.provision import all_failed

        console.print(provision_table(shortlist))
        for note in dict.fromkeys(r["note"] for r in shortlist if r.get("note")):
            console.print(f"note: {note}", highlight=False, soft_wrap=True)
        for r in shortlist:
            if r.get("total_budget"):
                console.print(f"note: bom rank {r['bom_rank']}: {r['total_budget']}",
                              highlight=False, soft_wrap=True)
            for line in r.get("nic_bounds") or ():
                console.print(f"note: bom rank {r['bom_rank']}: {line}", highlight=False,
                              soft_wrap=True)
        if (problem := all_failed(shortlist)) is not None:
            error_line(err, problem)
            raise typer.Exit(3)
    if written is not None:
        console.print(f"instance files: {len(written)} in {write_instances} "
                      f"(hieropt solve {written[0]})", highlight=False, soft_wrap=True)
    if result.status == "limit":  # (the best found, its honest gap: exit 3, as solve's limit)
        error_line(err, f"limit: the best found is not proven optimal: its gap over the search "
                   f"is {result.gap:.2g}, above the gap target {result.gap_target:g} (candidates "
                   "stopped at a solver limit)")
        raise typer.Exit(3)

def parse_deadline(text: str | None) -> float | None:
    """``--deadline`` as ns (None: not given; checked before the search)."""
    from .numbers import parse_deadline_ns

    return parse_deadline_ns(text)


def _sizes(sizes: str | None) -> list[int] | None:
    """The NPU counts of ``--sizes`` (None: not given).

    Raises:
        InputError: a word that is not a whole number.
    """
    if sizes is None:
        return None
    from ..errors import InputError

    words = [w.strip() for w in sizes.split(",")]
    if not all(w.isdigit() for w in words):
        raise InputError("--sizes", None, f"{sizes!r} is not a comma-separated list of NPU counts",
                         "write e.g. --sizes 2048,4096,8192")
    return [int(w) for w in words]
