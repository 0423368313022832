"""Tables and lines of ``hieropt codesign``: what was enumerated, pruned and solved, the best
plan-and-network with its time split, and the ranking. Returns values; never prints."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.table import Table

from ..studies.codesign.reach import Reach
from ..studies.codesign.rows import fold_ties, tied_counts
from ..studies.codesign.search import Codesign
from ..studies.sizing import size_outcomes
from ..units import PLAIN_SLIP_NS, fmt_num, time_unit_hint
from .common import ms_text, status_words

_UNIT = {
    "performance": "time ms",
    "min_cost": "cost $",
    "performance_per_cost": "time x cost (ms x M$)",
    "min_run_cost": "$ per run",
}


def _unit(space: Any) -> str:
    """The objective's column label: min_run_cost is $ per run with the space's token budget, $
    per iteration without one (as ``hieropt solve`` says it)."""
    if space.objective == "min_run_cost" and space.tokens is None:
        return "$ per iteration"
    return _UNIT[space.objective]


def _timed(space: Any) -> list[str]:
    """The time columns a table adds beside an objective other than performance (whose value is
    the time): the iteration time (ms) and, with the space's token budget, the run's days."""
    if space.objective == "performance":
        return []
    return ["iteration ms", *(["days"] if space.tokens is not None else [])]


def _time_cells(space: Any, row: dict[str, Any]) -> list[str]:
    """The cells of :func:`_timed` for ``row``: iteration ms, and days = iteration time x the
    run's iterations (tokens / tokens per iteration) / 86,400 s."""
    if space.objective == "performance":
        return []
    t = row["iteration_time_ns"]
    cells = [f"{t / 1e6:,.1f}"]
    if space.tokens is not None:
        cells.append(f"{t * space.tokens / space.tokens_per_iteration / 86400e9:,.2f}")
    return cells


def _value(row: dict[str, Any], objective: str) -> str:
    v = row["objective_value"]
    if str(row.get("objective_unit")).endswith("per iteration"):  # (a few $: cents and below)
        return f"{v:,.2f}" if v >= 1 else f"{v:.3g}"
    return f"{v / 1e6:,.4f}" if objective == "performance" else f"{v:,.0f}" if objective in (
        "min_cost", "min_run_cost") else \
        f"{v / 1e12:,.3f}"


def _bw(row: dict[str, Any]) -> str:
    return ", ".join(f"{float(b):.4g}" for b in row["bw_gbps"] or ())


def _groups(row: dict[str, Any]) -> str:
    return ", ".join(
        f"{g} {float(t) / 1e6:,.2f}" for g, t in (row["communication_by_group_ns"] or {}).items()
    )


def _placement(row: dict[str, Any]) -> str:
    return " ".join(f"{g} {'x'.join(map(str, v))}" for g, v in (row["placement"] or {}).items())


def summary_lines(result: Codesign) -> list[str]:
    """Plans (valid, too big, fitting), shapes, candidates, pruned and solved, the best answer and
    its split."""
    sp, en = result.space, result.enumeration
    pl = en.plans
    invalid = sum(pl.invalid.values())
    npus = " / ".join(f"{n:,}" for n in sp.sizes)
    lines = [
        f"co-design {sp.name}: {sp.base.model.name} on {npus} NPUs, objective "
        f"{sp.objective}, mapping rule "
        f"{sp.mapping_rule}",
        f"plans: {pl.combinations:,} combinations, {invalid:,} invalid for the model, "
        f"{len(pl.too_big):,} too big "
        f"for {sp.base.npu.hbm_gib:g} GiB HBM less {sp.base.npu.hbm_reserve_gib:g} GiB, "
        f"{len(pl.fitting):,} fit",
        *invalid_lines(pl.invalid),
        *too_big_lines(pl.too_big_plans()),
        f"networks: {len(en.shapes):,} shape(s); candidates (plan x shape x placement): "
        f"{en.count:,}"
        + (
            f", {sum(en.skipped.values()):,} plan-shape pairs the rule cannot place"
            if en.skipped
            else ""
        ),
        *invalid_lines(en.skipped, what="pairs", field="skipped"),
        *(f"  note: {n:,} NPUs skipped: {why}" for n, why in en.no_shape.items()),
        counts_line(result) + f"; {result.seconds:,.1f} s on {result.backend}",
    ]
    best = result.best.to_dict() if result.best is not None else None
    if best is not None:
        lines += [
            f"best: {best['id']}" + (f" (buy {best['npus']:,} NPUs)" if len(sp.sizes) > 1 else "")
            + f"; {status_words(result.status, result.gap)}",
            *limit_lines(result),
            f"  {_unit(sp)} {_value(best, sp.objective)} (gap {best['gap']:.1e}); "
            "iteration "
            f"{best['iteration_time_ns'] / 1e6:,.4f} ms = compute "
            f"{fmt_num(best['compute_ns'] / 1e6, ',.4f')} + bubble "
            f"{fmt_num(best['bubble_ns'] / 1e6, ',.4f')} + exposed communication "
            f"{fmt_num(best['communication_ns'] / 1e6, ',.4f')}; issued per iteration by the "
            f"slowest stage (not parts of the sum): {_groups(best)}; network "
            f"${best['network_cost_usd']:,.0f}; "
            "memory "
            f"{best['memory_bytes'] / 1e9:,.2f} GB per NPU",
            f"  bandwidth GB/s per NPU: {_bw(best)}"
            + (
                f"; scale-out {best['scaleout_gbps_per_npu']:,.2f} GB/s per NPU"
                + (f" = {best['nics']:,} NICs" if best["nics"] is not None else "")
                if best["scaleout_gbps_per_npu"] is not None
                else ""
            ),
        ]
        lines += [f"  note: {n}" for n in best["notes"] or ()]
        if best["equivalents"]:
            lines.append(f"  the same answer on {best['equivalents']} equivalent shape(s): "
                         + ", ".join(best["equivalent_shapes"]))
        head, folded = fold_ties(result.ranking)[0]
        if same := tied_counts(head, folded)[0]:
            lines.append(f"  as fast and as dear on {same} other network(s) of this plan (other "
                         "shapes or placements; every row in --out)")
    return lines


STATUS_ORDER = ("optimal", "limit", "infeasible", "unbounded", "error")
"""The order in which :func:`counts_line` lists the statuses of the solved candidates."""


def counts_line(result: Codesign) -> str:
    """How the search settled the candidates, from :meth:`Codesign.counts` (the JSON's counts):
    e.g. "solved 31 (6 optimal, 25 infeasible), settled without a solve 329 (329 infeasible by
    their time bound or their rows: above the target, no bandwidth, or rows that cannot all hold;
    0 pruned: proven bound >= incumbent), resumed 0"."""
    c = result.counts()
    by = c["solved_statuses"]
    order = [k for k in STATUS_ORDER if by.get(k)] + sorted(set(by) - set(STATUS_ORDER))
    statuses = ", ".join(f"{by[k]:,} {k}" for k in order if by[k])
    parts = [] if not c["infeasible_by_bound"] else [_infeasible_words(result)]
    parts.append(f"{c['pruned']:,} pruned: proven bound >= "
                 + ("the incumbent of its cluster size" if len(result.space.sizes) > 1
                    else "incumbent"))
    return (f"solved {c['solved']:,}" + (f" ({statuses})" if statuses else "")
            + f", settled without a solve {c['settled_without_solve']:,} ({'; '.join(parts)})"
            + f", resumed {c['resumed']:,}")


def _infeasible_words(result: Codesign) -> str:
    """The count of candidates settled infeasible by their bounds, with the causes it may have,
    none claimed for all (each row's message names its own): a time bound above the target, or
    infinite (the rows allow no bandwidth where traffic goes, or cannot all hold), and with a
    network budget a shape whose cheapest network is over it
    (:mod:`hieropt.studies.codesign.budget`)."""
    sp, n = result.space, result.infeasible_by_bound
    if sp.max_network_cost_usd is None and sp.max_total_capex_usd is None:
        return (f"{n:,} infeasible by their time bound or their rows: above the target, no "
                "bandwidth, or rows that cannot all hold")
    return (f"{n:,} infeasible by their bounds or their rows: time above the target, no "
            "bandwidth, rows that cannot all hold, or the shape's cheapest network over the "
            "budget")


def limit_lines(result: Codesign) -> list[str]:
    """The LIMIT line of a search whose best is not proven within the gap target over the whole
    search (:attr:`~hieropt.studies.codesign.search.Codesign.status` ``limit``): the honest gap
    and the least bound behind it; [] for a certified optimum."""
    if result.status != "limit":
        return []
    sp, best = result.space, result.best
    floor = min(result.open_floor, best.objective_value)
    n = result.statuses.get("limit", 0)
    bound = ("no proven bound" if floor == float("-inf") else
             "a proven bound of " + _value({"objective_value": floor}, sp.objective))
    return [f"  LIMIT: the best found, not proven optimal: gap {result.gap:.2g} over the search "
            f"(gap target {result.gap_target:g}): {n:,} candidate(s) stopped at a solver limit, "
            f"the least with {bound} ({_unit(sp)}); every row's status and gap are in --out"]


REASONS_SHOWN = 8
"""Invalid-plan reasons printed (the commonest; all of them are in the JSON)."""


def invalid_lines(invalid: dict[str, int], shown: int = REASONS_SHOWN, what: str = "plans",
                  field: str = "plans.invalid") -> list[str]:
    """The reasons plans are invalid (or plan-shape pairs cannot be placed), commonest first, each
    with its count (``  96 x plan.npus: tp 16 x pp 16 = 256 does not divide the 4,000 NPUs``), and
    how many more reasons and ``what`` there are (all in the JSON's ``field``)."""
    ranked = sorted(invalid.items(), key=lambda kv: (-kv[1], kv[0]))
    lines = [f"  {n:,} x {reason}" for reason, n in ranked[:shown]]
    rest = ranked[shown:]
    if rest:
        lines.append(
            f"  ... {len(rest):,} more reasons ({sum(n for _, n in rest):,} {what}; all in --json "
            f"{field})"
        )
    return lines


def too_big_lines(plans: list[dict[str, Any]], shown: int = REASONS_SHOWN) -> list[str]:
    """The ``shown`` plans that miss the memory by the least (``plans``:
    :meth:`~hieropt.studies.codesign.plans.PlanEnumeration.too_big_plans`), each with its fullest
    stage's need, the GB available and by how much it is over (GB = 1e9 bytes), e.g. ``too big: tp4
    cp1 pp4 dp64 ... sel sp v1 mb1: stage 0 needs 87.41 GB per NPU, 81.60 GB available (5.80 GB
    over)``, and how many more there are (all in the JSON's ``plans.too_big_plans``)."""
    lines = [f"  too big: {p['plan']}: stage {p['stage']} needs {p['memory_gb']:,.2f} GB per NPU, "
             f"{p['available_gb']:,.2f} GB available ({p['over_gb']:,.2f} GB over)"
             for p in plans[:shown]]
    if len(plans) > shown:
        lines.append(f"  ... {len(plans) - shown:,} more plans too big (all in --json "
                     "plans.too_big_plans)")
    return lines


def no_answer(result: Codesign, reach: Reach | None = None,
              deadline_ns: float | None = None) -> str:
    """Why no candidate has a certified answer: the count of each status and the first message of
    the commonest one, e.g. ``no candidate has a certified answer: 3 infeasible (e.g. 'infeasible:
    ...')``; with a time target no candidate meets, what the space reaches (``reach``,
    :func:`hieropt.studies.codesign.reach.fastest_reachable`): the target, the least proven time
    bound over the candidates and the fastest design solved without the target, and with a
    ``deadline_ns`` (ns of wall time) the days each of them takes for the space's token budget."""
    counts = Counter(result.statuses)
    parts = ", ".join(f"{n:,} {status}" for status, n in counts.most_common())
    first = result.tally.examples.get(counts.most_common(1)[0][0]) or None if counts else None
    text = "no candidate has a certified answer" + (f": {parts}" if parts else "") + (
        f" (e.g. {first})" if first else "")
    target = result.space.max_iteration_time_ns
    if reach is None or target is None:
        return text
    return text + "; " + reach_words(result.space, reach, target, deadline_ns)


def reach_words(space: Any, reach: Reach, target_ns: float, deadline_ns: float | None) -> str:
    """What a space reaches against a time target it cannot meet (:func:`no_answer`'s tail): the
    target (with a deadline: the deadline's, its iterations), the least proven time bound (no
    design is faster) and the fastest possible design (the space searched without the target),
    each with its days to train when the space has a token budget, and the target that it meets
    (rounded up, so that the target given is met), with :func:`hieropt.units.time_unit_hint` for a
    target typed without its unit (``--max-time 7`` is 7 ns: "did you mean 7s?")."""
    from .run import fmt_tokens

    tokens = space.tokens
    iterations = None if tokens is None else tokens / space.tokens_per_iteration

    def days(ns: float) -> float:
        return ns * iterations / 86400e9

    def run_days(ns: float) -> str:
        return "" if iterations is None else (
            f" = {days_text(days(ns))} for {fmt_tokens(tokens)} tokens")

    # (--max-time tighter than the deadline's target: the target is --max-time's)
    allows = None if deadline_ns is None or iterations is None else deadline_ns / iterations
    by_deadline = allows is not None and target_ns >= allows * (1 - 1e-9)
    deadline = ("" if allows is None else f"the deadline of {days_text(deadline_ns / 86400e9)} "
                f"for {fmt_tokens(tokens)} tokens")
    if by_deadline:
        head = (f"{deadline} ({iterations:,.0f} iterations of {space.tokens_per_iteration:,} "
                f"tokens) is an iteration-time target of {ms_text(target_ns, 1)} ms")
    else:  # (a target under 0.1 ms in ns: '7 ns', not '0.0 ms', and the unit hint below)
        shown = (f"{ms_text(target_ns, 1)} ms" if target_ns >= PLAIN_SLIP_NS
                 else f"{target_ns:,.6g} ns")
        head = f"the iteration-time target is {shown}"
        if allows is not None:
            head += (f" (--max-time: {deadline}, {iterations:,.0f} iterations of "
                     f"{space.tokens_per_iteration:,} tokens, allows {ms_text(allows, 1)} ms)")
    words = f"{head}; no candidate is faster than {ms_text(reach.bound_ns, 1)} ms" + (
        f"{run_days(reach.bound_ns)} (the least proven bound over the candidates, "
        f"{reach.bound_of})")
    if reach.row is None:
        return words + "; without the target no candidate has a certified answer either"
    t = reach.row["iteration_time_ns"]
    words += (f"; the fastest possible is {ms_text(t, 4)} ms{run_days(t)} ({reach.row['id']}, "
              "the space searched without the target)")
    if by_deadline:
        return words + f": give a deadline of at least {_up(days(t)):,.5g} days"
    return (words + f": give a time target of at least {_up(t / 1e6):,.5g} ms"
            + time_unit_hint(target_ns, t))


def days_text(days: float) -> str:
    """Days with 4 significant digits: ``1 day``, ``5.926 days``."""
    return f"{days:,.4g} day" + ("" if f"{days:.4g}" == "1" else "s")


def _up(x: float) -> float:
    """``x`` > 0 rounded up to 5 significant digits (a target that the value meets)."""
    import math

    step = 10.0 ** (math.floor(math.log10(x)) - 4)
    return math.ceil(x / step) * step


def ranking_table(result: Codesign, top: int = 20) -> Table:
    """The best ``top`` rows of the ranking, one per plan and rank: the plan's other rows of that
    rank folded into the first (:func:`~hieropt.studies.codesign.rows.fold_ties`; "+k as fast and
    as dear", "+k of the same rank")."""
    sp = result.space
    solved = sum(n for status, n in result.statuses.items() if status in ("optimal", "limit"))
    shown = fold_ties(result.ranking)[:top]
    days = "; days of the run" if _timed(sp)[1:] else ""
    t = Table(title=f"Best {len(shown)} of {solved:,} solved candidates with an answer "
              f"(time ms{days}; memory GB per NPU)", title_justify="left")
    for col in (
        "rank",
        "plan",
        "network",
        _unit(sp),
        *_timed(sp),
        "compute",
        "bubble",
        "exposed comm",
        "memory",
        "cost $",
        "GB/s per NPU",
    ):
        t.add_column(col, justify="left" if col in ("plan", "network", "GB/s per NPU") else "right",
                     overflow="fold")
    for r, folded in shown:
        more = f" (+{r['equivalents']} equivalent)" if r.get("equivalents") else ""
        if folded:
            same, other = tied_counts(r, folded, shapes=False)
            more += " (" + "; ".join(
                w for w in (f"+{same} as fast and as dear" if same else "",
                            f"+{other} of the same rank" if other else "") if w) + ")"
        t.add_row(
            str(r["rank"]) if r.get("rank_exact", True) else f">={r['rank']}",
            r["plan"],
            f"{r['shape']}{more} | {_placement(r)}",
            _value(r, sp.objective),
            *_time_cells(sp, r),
            fmt_num(r["compute_ns"] / 1e6, ",.1f"),
            fmt_num(r["bubble_ns"] / 1e6, ",.1f"),
            fmt_num(r["communication_ns"] / 1e6, ",.1f"),
            f"{r['memory_bytes'] / 1e9:,.1f}",
            f"{r['network_cost_usd']:,.0f}",
            _bw(r),
        )
    t.caption = ("compute + bubble (the pipeline's fill and drain with free communication) + "
                 "exposed comm (what the network adds) = the iteration time, as hieropt solve "
                 "splits it")
    if not all(r.get("rank_exact", True) for r, _ in shown):
        floor = _value({"objective_value": result.unsolved_bound}, sp.objective)
        t.caption += ("; >=r: rank r among the solved candidates only, the space's rank at least "
                      f"r (a candidate not solved, its proven bound {floor} or more, may rank "
                      "ahead; a larger --top solves enough to rank more rows exactly)")
    if any(folded for _, folded in shown):
        t.caption += ("; +k: the row's plan on k other ranked rows (shapes or placements) of "
                      "its rank, as fast and as dear, or ranked after it by the tie-break ("
                      + ("dearer" if sp.objective == "performance" else "slower")
                      + "): every row in --out, those in --json's ranking with tie_of naming "
                      "the row shown. Ranks count ranked rows, each with its equivalent shapes "
                      "folded into it: the rows of rank r fill ranks r, r + 1, ..., so the next "
                      "rank is r plus the rows of rank r shown with their +k")
    return t


def dims_table(result: Codesign) -> Table:
    """Best per dimension count, with its scale-out bandwidth and NICs, and whether it is proven
    the count's optimum (``optimal``) or only the best found, the optimum at least the proven
    bound shown (``>= x``; :meth:`~hieropt.studies.codesign.search.Codesign.by_dims`)."""
    sp = result.space
    t = Table(
        title="Per dimension count: the best plan-and-network and its scale-out",
        title_justify="left",
    )
    for col in (
        "dims",
        "solved",
        _unit(sp),
        *_timed(sp),
        "proven",
        "best plan",
        "best network",
        "scale-out GB/s/NPU",
        "NICs",
    ):
        t.add_column(col, justify="left" if col.startswith("best") else "right", overflow="fold")
    for e in result.by_dims():
        b = e["best"]
        t.add_row(
            str(e["n_dims"]),
            f"{e['solved']:,}",
            _value(b, sp.objective),
            *_time_cells(sp, b),
            "optimal" if e["proven"] else
            ">= " + _value({"objective_value": e["proven_bound"]}, sp.objective),
            b["plan"],
            b["shape"],
            f"{b['scaleout_gbps_per_npu']:,.2f}",
            "-" if b["nics"] is None else f"{b['nics']:,}",
        )
    t.caption = ("proven: optimal = the count's own optimum; >= x = the best found, the count's "
                 "optimum proven at least x (candidates are pruned against the best found on "
                 "their cluster size, not on their dimension count)")
    return t


def sizes_table(result: Codesign, deadline: bool = False) -> Table:
    """Best per cluster size (a space with several): how many NPUs to buy and what each size
    gives; a size without a solved candidate says why (no plan fits,
    or no candidate has an answer, within the deadline when ``deadline``:
    :func:`hieropt.studies.sizing.size_outcomes`)."""
    sp = result.space
    t = Table(title="Per cluster size: the best plan-and-network", title_justify="left")
    for col in (
        "NPUs",
        "plans fit",
        "solved",
        _unit(sp),
        "iteration ms",
        "network $",
        "best plan",
        "best network",
    ):
        t.add_column(col, justify="left" if col.startswith("best") else "right", overflow="fold")
    best = {e["npus"]: e for e in result.by_npus()}
    notes = {o.npus: o.note for o in size_outcomes(result, deadline).sizes}
    fit = Counter(pc.params.plan.npus for pc in result.enumeration.plans.fitting)
    for n in sp.sizes:
        e = best.get(n)
        if e is None:
            why = ("no valid plan fits (reasons above)"
                   if not fit[n] and n not in result.enumeration.no_shape else notes[n])
            t.add_row(f"{n:,}", f"{fit[n]:,}", "0", "-", "-", "-", why, "")
            continue
        b = e["best"]
        t.add_row(
            f"{n:,}",
            f"{fit[n]:,}",
            f"{e['solved']:,}",
            _value(b, sp.objective),
            f"{b['iteration_time_ns'] / 1e6:,.4f}",
            f"{b['network_cost_usd']:,.0f}",
            b["plan"],
            b["shape"],
        )
    return t


def _run_cells(r: dict[str, Any]) -> list[str]:
    """A provisioned row's run figures: facility MW, MWh and $ per run ("-" where unknown)."""
    run = r.get("run") or {}
    return ["-" if run.get(k) is None else fmt.format(run[k]) for k, fmt in (
        ("power_mw", "{:,.3f}"), ("energy_mwh", "{:,.0f}"), ("run_cost_usd", "{:,.0f}"))]


def provision_table(rows: list[dict[str, Any]]) -> Table:
    """The best candidates provisioned from a catalog, ranked by the integer design (catalog
    prices); with a ``[cluster]`` section, each design's facility MW, MWh and $ per run with the
    catalog's cost and the bill of materials' power, as ``hieropt provision`` gives them
    (:func:`hieropt.model.run.provisioned_run`)."""
    t = Table(
        title="Best candidates provisioned from the catalog (integer designs, catalog prices; "
        "ranked by the "
        "integer objective)",
        title_justify="left",
    )
    runs = any(x != "-" for r in rows if r["bom_rank"] is not None for x in _run_cells(r))
    cols = ["bom rank", "continuous rank", "candidate", "time ms", "catalog cost $", "power W",
            *(["MW", "MWh", "$ per run"] if runs else []), "gap", "parts"]
    for col in cols:
        t.add_column(
            col, justify="left" if col in ("candidate", "parts") else "right", overflow="fold"
        )
    for r in rows:
        if r["bom_rank"] is None:
            t.add_row("-", str(r["continuous_rank"]), r["id"], "-", "-", "-",
                      *(["-"] * 3 if runs else []), "-", r["message"])
            continue
        t.add_row(
            str(r["bom_rank"]),
            str(r["continuous_rank"]),
            r["id"],
            f"{r['iteration_time_ns'] / 1e6:,.4f}",
            f"{r['network_cost_usd']:,.0f}",
            "-" if r["power_w"] is None else f"{r['power_w']:,.0f}",
            *(_run_cells(r) if runs else []),
            f"{r['gap']:.1e}",
            "; ".join(r["parts"]),
        )
    if runs:
        t.caption = _power_caption(rows)
    return t


def _power_caption(rows: list[dict[str, Any]]) -> str:
    """Which network power the MW, MWh and $ per run count: each design's bill of materials
    (``power W``), the ``[cluster]``'s network_w_per_npu, or none (a part without watts)."""
    lines = [r["network_power"] for r in rows if r.get("network_power")]
    if any(x.startswith("network power: the bill of materials'") for x in lines):
        return "MW, MWh and $ per run count each design's bill of materials' power (power W)"
    if lines:
        return lines[0].split(";")[0]
    return "MW, MWh and $ per run leave out the network's power (a part has no watts)"


def codesign_dict(result: Codesign, top: int = 20) -> dict[str, Any]:
    """JSON-ready: counts, the best row, the top rows, per-dimension summary
    (:meth:`Codesign.to_dict`)."""
    return result.to_dict(top)


__all__ = [
    "no_answer",
    "reach_words",
    "invalid_lines",
    "summary_lines",
    "counts_line",
    "ranking_table",
    "dims_table",
    "codesign_dict",
    "provision_table",
    "sizes_table",
]
