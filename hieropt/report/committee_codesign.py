"""The committee page of a co-design result: the JSON ``hieropt codesign --json`` writes (or
:meth:`hieropt.studies.codesign.search.Codesign.to_dict`), with its space when known.

The alternatives are read off the result's ranked rows (the best candidates it kept, each a
certified optimum of its own plan and network): ``best`` (the search's optimum for the space's
objective, over every candidate), among the ranked rows ``fastest`` and ``knee`` (the cheapest
network within ``within`` of the fastest ranked time: with the space each ranked candidate that
reaches it is solved for its least cost, a design cheaper than its row; without it the cheapest
ranked row within it), and among the designs the page considers (the ranked rows and the knee's
design) ``cheapest`` (the least network capex) and ``min_run_cost`` (the least $ per run, when the
space gives the cluster's cost and a token budget); ``catalog`` the first of the shortlist
provisioned with whole parts (``codesign --catalog``); ``fixed_plan`` the best of a second result
searched with one fixed plan (LIBRA-style: only the network chosen).

Days, MFU and $ need the plan's tokens and FLOPs: from the space, the one the result holds
(``space_definition``, :func:`hieropt.io.codesign.result_space`) or ``--space``; a result written
without it and read without ``--space`` knows only its best row's figures (the JSON's ``run``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..model.run import RunFigures
from ..solvers.procurement import FASTEST_SLACK
from .committee import (
    Alternative,
    Committee,
    Missing,
    caveat_notes,
    ordered,
    pareto_data,
    practical,
    practical_limit,
    practical_note,
    subject_lines,
    unknown_lines,
)
from .committee_basis import (
    PAGE_CHEAPEST,
    PAGE_RUN_COST,
    basis_lines,
    priced_labels,
    recommend,
)
from .run import calibration_note, fmt_tokens

NO_SPACE = (
    "tokens, FLOPs and $ of this candidate: the co-design result alone does not hold its "
    "plan's model; "
    "give the space (--space SPACE.toml)"
)


def page_run_cost_why(why: str, objective: Any) -> str:
    """The recommendation's ``why`` (:func:`hieropt.report.committee_basis.recommend`) of the
    least $ per run on a co-design page whose search minimised ``objective`` (not
    ``min_run_cost``): scoped to the designs on the page, naming the search that finds the least
    over every candidate."""
    return why.replace(
        "the least $ per training run (run time x the whole cluster's cost rate)",
        "the least $ per training run (run time x the whole cluster's cost rate) among the "
        f"designs on this page, not over every candidate (the search ranked them by {objective}; "
        "codesign --objective min_run_cost finds the least $ per run)", 1)


def row_figures(row: dict[str, Any], space: Any | None, tokens: float | None) -> RunFigures:
    """The buyer's figures of a ranked row (:data:`~hieropt.studies.codesign.rows.COLUMNS`): from
    its plan in ``space`` (a :class:`~hieropt.workloads.llm.space.CodesignSpace`) with ``tokens``
    and the space's cluster, as :func:`hieropt.report.run.codesign_run` computes the best's; without
    a space only time and network cost."""
    T, C = float(row["iteration_time_ns"]), float(row["network_cost_usd"])
    if space is None:
        return RunFigures(
            iteration_time_ns=T, network_capex_usd=C, tokens=tokens, unknown=(NO_SPACE,)
        )
    from ..studies.codesign.figures import row_run

    return row_run(space, row, tokens)


def result_npus(data: dict[str, Any]) -> int:
    """The cluster size of a co-design JSON: its best row's (a space with several sizes: the
    size to buy), else the result's one size (``npus``, a list of the sizes searched); 0 when
    unknown."""
    n = (data.get("best") or {}).get("npus") or data.get("npus") or 0
    if isinstance(n, list):
        n = n[0] if len(n) == 1 else 0
    return int(n)


def result_tokens(data: dict[str, Any], space: Any | None, tokens: float | None) -> float | None:
    """The token budget of a co-design report: ``tokens`` (``--tokens``) when given, else the
    space's ``tokens`` (a :class:`~hieropt.workloads.llm.space.CodesignSpace`: ``--space``, or
    the space the result holds, with the search's ``--tokens`` applied), else the budget the
    result's best was figured for (its JSON ``run.tokens``: a search run with ``--tokens`` on a
    space file without ``tokens``); None when none of them gives one."""
    if tokens is not None:
        return tokens
    if space is not None and getattr(space, "tokens", None) is not None:
        return space.tokens
    return (data.get("run") or {}).get("tokens")


def result_run(data: dict[str, Any], tokens: float | None = None) -> RunFigures | None:
    """The buyer's figures of a co-design result's best row as the JSON holds them (its ``run``),
    for a run of ``tokens`` tokens (None: the run's own budget): the iterations, days, MWh and $
    per run scale with the budget (iterations = tokens / tokens per iteration; days = iterations x
    T; MWh = MW x hours; $ = $ per hour x hours). None when the JSON has no ``run``."""
    run = data.get("run")
    if not run:
        return None
    fig = RunFigures(
        **{
            **{k: v for k, v in run.items() if k not in ("band", "no_band")},  # (the report's)
            "unknown": tuple(run.get("unknown", ())),
            "left_out": tuple(run.get("left_out", ())),
            "caveats": tuple(run.get("caveats", ())),
        }
    )
    per = fig.tokens_per_iteration
    if tokens is None or tokens == fig.tokens or per is None:
        return fig
    from ..model.run import SECONDS_PER_DAY

    iterations = tokens / per
    days = iterations * fig.iteration_time_ns * 1e-9 / SECONDS_PER_DAY
    hours = days * 24.0
    return dataclasses.replace(
        fig,
        tokens=tokens,
        iterations_per_run=iterations,
        time_to_train_days=days,
        energy_mwh=None if fig.power_mw is None else fig.power_mw * hours,
        run_cost_usd=None if fig.cost_per_hour_usd is None else fig.cost_per_hour_usd * hours,
        unknown=tuple(u for u in fig.unknown if not u.startswith("time, energy and $ of a run")),
    )


def _row_alt(
    key: str, label: str, how: str, row: dict[str, Any], fig: RunFigures, npus: int,
    gap: tuple[float | None, str | None] | None = None,
    status: str | None = None,
) -> Alternative:
    """The :class:`Alternative` of a co-design row (or a design on its candidate); its proven gap
    ``gap`` (value, the objective it is of), by default the row's own ``gap`` and ``gap_of`` (a
    ranked row: its candidate's solve of the search's objective, named by
    :func:`codesign_alternatives`)."""
    bw = tuple(float(b) for b in row["bw_gbps"] or ())
    fabric = f"{row['shape']}: {', '.join(f'{b:,.4g}' for b in bw)} GB/s"
    value, of = gap if gap is not None else (row.get("gap"), row.get("gap_of"))
    return Alternative(key, label, how, row["plan"], fabric, int(row["npus"] or npus), bw,
                       float(row["iteration_time_ns"]), float(row["network_cost_usd"]), fig,
                       gap=value, gap_of=of, status=status or row.get("status"))


def least_of(rows: list[dict[str, Any]], field: str, then: Any) -> dict[str, Any]:
    """The row of ``rows`` least in ``field`` with ties broken by ``then`` (a key of a row): the
    rows within the gap target (relative :data:`~hieropt.solvers.procurement.FASTEST_SLACK`,
    1e-8) of the least ``field`` are equally good, as the search ranks equal objectives
    (:func:`hieropt.studies.explore.run.rank_rows`), and the least by ``then`` of them is chosen
    (e.g. the fastest of the equally cheap networks, not the first in float order)."""
    least = min(r[field] for r in rows)
    return min((r for r in rows if r[field] <= least + FASTEST_SLACK * abs(least)), key=then)


def _run_usd(fig: RunFigures) -> float:
    """A design's $ per run for ordering (inf when unknown)."""
    return float("inf") if fig.run_cost_usd is None else fig.run_cost_usd


def _search_gap(data: dict[str, Any]) -> tuple[float | None, str | None]:
    """The search's proven gap over every candidate (the JSON's ``gap``) and its objective."""
    gap = data.get("gap")
    return (float(gap) if isinstance(gap, int | float) else None), data.get("objective")


def codesign_alternatives(
    data: dict[str, Any],
    space: Any | None,
    tokens: float | None,
    within: float,
    fixed: dict[str, Any] | None = None,
    fixed_space: Any | None = None,
) -> tuple[list[Alternative], list[Missing], list[tuple[float, float, RunFigures]]]:
    """The alternatives of the module docstring from ``data`` (a co-design JSON) and ``fixed`` (the
    JSON of the fixed-plan search, or None), those missing with why, and every ranked row as (time
    ns, network $, figures)."""
    rows = [r for r in data.get("ranking") or [] if r.get("iteration_time_ns") is not None]
    best = data.get("best")
    if best is None or not rows:
        from ..errors import InputError

        raise InputError(
            str(data.get("space", "co-design result")),
            "best",
            "no solved candidate in the result",
            "give the JSON of a co-design search that found an answer",
        )
    npus = result_npus(data)
    # (without the space, the figures the JSON holds: the best's run and each size's best's)
    runs = {} if space is not None else {
        **{s["best"]["id"]: result_run(s, tokens) for s in _size_bests(data) if s.get("run")},
        best["id"]: result_run(data, tokens)}

    def fig(row: dict[str, Any]) -> RunFigures:
        return runs.get(row["id"]) or row_figures(row, space, tokens)

    pool = f"the {len(rows)} ranked candidates of the result"
    # (a search over cluster sizes: each size's best is a candidate too, which the ranking of
    # the best few over every size may leave out, e.g. the largest size's faster best)
    ids = {r["id"] for r in rows}
    extra = [s["best"] for s in _size_bests(data) if s["best"]["id"] not in ids]
    if extra:
        pool += (f" and the best of each of the {len(data['sizes'])} cluster sizes searched "
                 f"({len(extra)} not ranked)")
        rows = [*rows, *extra]
    n, among = len(rows), f"among {pool}"
    objective = data.get("objective")
    alts = [
        _row_alt(
            "best",
            f"search's best ({objective})",
            f"the exact optimum of the space's "
            f"objective {objective} over every candidate",
            best,
            fig(best),
            npus,
            _search_gap(data),
            # (the search's: a file whose provisioning failed says infeasible in status)
            data.get("search_status", data.get("status")),
        )
    ]
    # (rows within the gap target of the least time are equally fast: the cheapest of them, as
    # the search ranks them)
    fastest = least_of(rows, "iteration_time_ns",
                       lambda r: (r["network_cost_usd"], r["iteration_time_ns"]))
    # (the fastest over every candidate only when the search minimised the time: its best)
    label = ("fastest" if objective == "performance"
             else f"fastest of the {n} candidates on this page")
    how = f"the least iteration time {among}" + ("" if objective == "performance" else (
        f"; the search ranked them by {objective}: a candidate it did not rank can be faster "
        "(codesign --objective performance finds the fastest over every candidate)"))
    alts.append(_row_alt("fastest", label, how, fastest, fig(fastest), npus))
    # the designs the page considers: the ranked rows (each at its own optimum) and, with the
    # space, the knee's network solved for its least cost at the knee's time (cheaper than its row)
    considered, knee = list(rows), None
    if within > 0:  # (0: the knee turned off)
        knee, how_knee = _knee(rows, fastest, space, within, among)
        if not any(knee is r for r in rows):
            considered.append(knee)
    among_all = among if len(considered) == n else (
        f"among the designs on this page: {pool} and the knee's network solved for its least "
        "cost")
    # (networks within the gap target of the least capex are equally cheap: the fastest of them,
    # then the least $ per run)
    cheapest = least_of(considered, "network_cost_usd", lambda r: (
        r["iteration_time_ns"], _run_usd(fig(r)), r["network_cost_usd"]))
    alts.append(
        _row_alt(
            "cheapest",
            "cheapest network" if objective == "min_cost" else PAGE_CHEAPEST,
            f"the least network capex {among_all}"
            + (" (the knee's design)" if cheapest is knee and knee is not None
               and len(considered) > n else ""),
            cheapest,
            fig(cheapest),
            npus,
        )
    )
    if knee is not None:
        alts.append(_row_alt("knee", f"knee (cheapest within {within * 100:g} %)", how_knee, knee,
                             fig(knee), npus))
    missing = []
    figs = [(r, fig(r)) for r in rows]
    priced = [(r, f) for r, f in figs if f.run_cost_usd is not None]
    if knee is not None and len(considered) > n and fig(knee).run_cost_usd is not None:
        priced.append((knee, fig(knee)))
    if priced:
        r, f = min(priced, key=lambda rf: rf[1].run_cost_usd)
        # (the least over every candidate only when the search minimised $ per run: its best)
        label = "least $ per run" if data.get("objective") == "min_run_cost" else PAGE_RUN_COST
        alts.append(
            _row_alt("min_run_cost", label, f"the least $ per run {among_all}", r, f, npus)
        )
    else:
        missing.append(Missing("min_run_cost", "least $ per run", _no_run_cost(space, tokens)))
    alts += _provisioned(data, rows, fig, npus, missing, tokens)
    if fixed is not None and fixed.get("best") is not None:
        fb = fixed["best"]
        fr = result_run(fixed, tokens) if fixed_space is None else None
        alts.append(
            _row_alt(
                "fixed_plan",
                "fixed plan (LIBRA-style)",
                f"the best network for the one plan of {fixed.get('space')}",
                fb,
                fr or row_figures(fb, fixed_space, tokens),
                npus,
                (fb.get("gap"), fixed.get("objective")),
            )
        )
    else:
        missing.append(
            Missing(
                "fixed_plan",
                "fixed plan (LIBRA-style)",
                "no fixed-plan result given (--fixed-plan RESULT.json of a space with one plan)",
            )
        )
    # (a ranked row's gap is its candidate's solve of the search's objective)
    alts = [a if a.gap is None or a.gap_of else dataclasses.replace(a, gap_of=objective)
            for a in alts]
    return alts, missing, [(r["iteration_time_ns"], r["network_cost_usd"], f) for r, f in figs]


def _size_bests(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The entries of a co-design JSON's ``sizes`` (a search over cluster sizes) whose best row
    has a time: each with ``best`` (the size's best row) and ``run`` (its figures); empty for a
    search of one size."""
    sizes = data.get("sizes") or []
    if len(sizes) < 2:
        return []
    return [s for s in sizes if (s.get("best") or {}).get("iteration_time_ns") is not None]


def _no_run_cost(space: Any | None, tokens: float | None) -> str:
    """Why no candidate of a co-design page has a $ per run: no space (:data:`NO_SPACE`), no token
    budget, no ``[cluster]`` section, or one without a cost rate."""
    if space is None:
        return NO_SPACE
    if tokens is None:
        return "unknown $ per run: no token budget (give --tokens, or tokens in the space)"
    if space.cluster is None:
        return ("unknown $ per run: the space has no [cluster] section (the accelerators' cost "
                "while they train)")
    return ("unknown $ per run: the space's [cluster] gives neither usd_per_npu_hour nor "
            "accelerator_usd with amortisation_years")


def _knee(rows: list[dict[str, Any]], fastest: dict[str, Any], space: Any | None, within: float,
          among: str) -> tuple[dict[str, Any], str]:
    """The knee's row (with its design) and how it was found: with the space, each ranked candidate
    that reaches the time solved for its cheapest network within ``within`` of the fastest
    (:func:`hieropt.studies.codesign.export.codesign_knee`, the knee ``hieropt solve`` prints for
    the fastest candidate's instance; its ``gap`` that min_cost solve's, ``gap_of`` min_cost);
    without it, the cheapest of the ranked rows' designs."""
    pct = f"{within * 100:g} %"
    if space is not None:
        from ..studies.codesign.export import codesign_knee

        found = codesign_knee(space, rows, within)
        if found is not None:
            row, k = found
            sol = k.knee
            design = {**row, "iteration_time_ns": sol.iteration_time_ns,
                      "network_cost_usd": sol.network_cost_usd,
                      "bw_gbps": [float(b) for b in sol.bw_gbps], "gap": sol.gap,
                      "gap_of": "min_cost"}
            return design, (f"the cheapest network within {pct} of the fastest time: each ranked "
                            "candidate that reaches it solved for its cheapest network (min_cost "
                            "at that time, as hieropt solve's knee)")
    limit = fastest["iteration_time_ns"] * (1 + within)
    knee = min(
        (r for r in rows if r["iteration_time_ns"] <= limit), key=lambda r: r["network_cost_usd"]
    )
    return knee, (f"the cheapest network within {pct} of the fastest time {among}, each at its "
                  "own optimum (give the space, --space, to solve each for its cheapest network "
                  "within the slack)")


def _provisioned(data: dict[str, Any], rows: list[dict[str, Any]], fig: Any, npus: int,
                 missing: list[Missing], tokens: float | None = None) -> list[Alternative]:
    """The ``catalog`` alternative: the first of the result's shortlist provisioned with whole
    parts, with the buyer's figures the search figured for it (its ``run``: the catalog's cost and
    the bill of materials' power in the MW, MWh and $, as ``hieropt provision`` gives them), for a
    run of ``tokens`` (:func:`result_run`); a result written without them gets the row's figures
    at the integer design's time and cost (network power not counted)."""
    label = "best in whole parts"
    ranked = [p for p in data.get("provisioned") or [] if p.get("bom_rank") == 1]
    if not ranked:
        missing.append(
            Missing("catalog", label, "no catalog shortlist in the result (codesign --catalog)")
        )
        return []
    p = ranked[0]
    row = next((r for r in rows if r["id"] == p["id"]), None) or data["best"]
    prov = {
        **row,
        "iteration_time_ns": p["iteration_time_ns"],
        "network_cost_usd": p["network_cost_usd"],
        "bw_gbps": p["bw_gbps"],
        "gap": p.get("gap"),
        "gap_of": p.get("provisioned_for"),
        "status": p.get("status"),
    }
    run = result_run({"run": p["run"]}, tokens) if p.get("run") else None
    alt = _row_alt(
        "catalog",
        label,
        "the shortlist provisioned from the catalog, first by its bill of materials "
        "(" + "; ".join(p.get("parts") or ()) + ")"
        + "".join(f"; {line}" for line in p.get("nic_bounds") or ())
        + (f"; {p['network_power']}" if run is not None and p.get("network_power") else ""),
        prov,
        run or fig(prov),
        npus,
    )
    return [dataclasses.replace(alt, power_w=p.get("power_w"))]


def sizing_lines(data: dict[str, Any], tokens: float | None) -> tuple[str, ...]:
    """The page head's lines of a search with a deadline or over cluster sizes (``codesign
    --deadline``, ``--sizes``; the result's ``target_ns``, ``sizes`` and ``chosen_npus``): the
    deadline as the iteration-time target every design meets (with ``tokens``, the run's days),
    and each size searched with its outcome (``chosen``, or why it has no answer); empty for a
    search of one size without a deadline."""
    out = []
    target = data.get("target_ns")
    per_iteration = (data.get("run") or {}).get("tokens_per_iteration")
    if target is not None:
        if tokens and per_iteration:
            days = target * tokens / per_iteration / 86400e9
            head = (f"a deadline of {days:,.4g} day{'' if f'{days:.4g}' == '1' else 's'} for "
                    f"{fmt_tokens(tokens)} tokens")
        else:
            head = "a deadline"
        out.append(f"{head}: every design takes at most {target / 1e6:,.1f} ms per iteration")
    sizes = data.get("sizes") or []
    if len(sizes) > 1 or (sizes and target is not None):
        chosen = data.get("chosen_npus")
        parts = [f"{s['npus']:,} NPUs ("
                 + ("chosen" if s["npus"] == chosen else s.get("note") or "a dearer best")
                 + ")" for s in sizes]
        out.append("cluster sizes searched: " + ", ".join(parts))
    return tuple(out)


def codesign_committee(data: dict[str, Any], space: Any | None = None, tokens: float | None = None,
                       within: float = 0.01, fixed: dict[str, Any] | None = None,
                       fixed_space: Any | None = None) -> Committee:
    """The :class:`~hieropt.report.committee.Committee` of a co-design result (module docstring);
    its plot from the ranked rows. ``tokens`` (the run's token budget) defaults to the space's
    (:func:`result_tokens`). Raises InputError when the result has no solved candidate."""
    tokens = result_tokens(data, space, tokens)
    alts, missing, designs = codesign_alternatives(data, space, tokens, within, fixed, fixed_space)
    alts_t = ordered(priced_labels(alts))
    key, why = recommend(list(alts_t), within)
    if key == "min_run_cost" and data.get("objective") != "min_run_cost":
        why = page_run_cost_why(why, data.get("objective"))
    alts_t, dropped = practical(alts_t, key)
    missing = [*missing, *dropped]
    limit = practical_limit(alts_t)
    sized = bool(_size_bests(data))
    source = f"the {len(designs)} ranked candidates of the co-design result" + (
        " (with each cluster size's best)" if sized else "")
    kept = [d for d in designs if limit is None or d[0] <= limit]
    if len(kept) < len(designs):
        source += f"; {len(designs) - len(kept)} of them, beyond the practical limit, left out"
    pareto = pareto_data(kept, alts_t, source)
    model = space.base.model.name if space is not None else None
    notes = [
        f"co-design {data.get('space')}: {data.get('candidates', 0):,} candidates, "
        f"{data.get('solved', 0):,} solved, {_settled_words(data)}; each ranked candidate is a "
        "certified optimum of its plan and network" + _limit_words(data),
        "fastest, cheapest, knee and least $ per run are chosen among the ranked candidates "
        "the result kept (codesign --top sets how many)"
        + (" and the best of each cluster size searched" if sized else ""),
        practical_note(),
    ]
    notes += caveat_notes(alts_t)
    if space is not None:
        from ..io.npus import calibration_of

        calibration = calibration_of(space.base.npu)
        alts_t = tuple(dataclasses.replace(a, calibration=calibration) for a in alts_t)
        note = calibration_note(calibration)
        notes += [note] if note is not None else []
    return Committee(
        "codesign",
        str(data.get("space")),
        (*subject_lines(
            model, npus=result_npus(data), tokens=tokens, objective=str(data.get("objective"))
        ), *sizing_lines(data, tokens)),
        key,
        why,
        alts_t,
        tuple(missing),
        within,
        pareto,
        unknown_lines(alts_t),
        tuple(notes),
        price_basis=basis_lines(alts_t),
    )



def _settled_words(data: dict[str, Any]) -> str:
    """The candidates settled without a solve, in words: ``"26 pruned by a proven bound, 286
    infeasible by their bounds"`` (the JSON's ``pruned`` and ``infeasible_by_bound``: a time
    bound above the target, no bandwidth, or a shape's cheapest network over the budget)."""
    words = f"{data.get('pruned', 0):,} pruned by a proven bound"
    infeasible = data.get("infeasible_by_bound") or 0
    return words + (f", {infeasible:,} infeasible by their bounds" if infeasible else "")


def _limit_words(data: dict[str, Any]) -> str:
    """``""`` for a search whose best is proven (JSON ``status`` optimal or absent), else that it
    is not: LIMIT, with the search's honest gap and least lower bound (``codesign`` exits 3)."""
    if data.get("search_status", data.get("status")) != "limit":
        return ""
    gap, bound = data.get("gap"), data.get("lower_bound")
    gap_words = f" {gap:.2e}" if isinstance(gap, int | float) else ""
    bound_words = f", least lower bound {bound:,.6g}" if isinstance(bound, int | float) else ""
    return (
        f"; LIMIT: the search's best is not proven (gap{gap_words}{bound_words}: some candidates "
        "stopped at a solver limit)"
    )

__all__ = ["codesign_committee", "codesign_alternatives", "sizing_lines", "row_figures", "least_of",
           "result_npus", "result_tokens", "result_run", "NO_SPACE", "PAGE_RUN_COST",
           "page_run_cost_why"]
