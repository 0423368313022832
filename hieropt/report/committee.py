"""The committee page's content: the recommendation, the alternatives side by side and the Pareto
points, in the buyer's figures (:class:`hieropt.model.run.RunFigures`: days to train, $ per run, MW,
MFU), as values.

One :class:`Committee` holds what the page (:mod:`hieropt.report.committee_page`) shows and what
``hieropt report --json`` writes, so the two carry the same numbers. Built from a procurement answer
(:mod:`.committee_answers`) or a co-design result (:mod:`.committee_codesign`). Which design is
recommended, and on which price basis each column is priced (a catalog's whole parts, or the cost
model's $ per GB/s): :mod:`.committee_basis`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model.run import RunFigures
from ..result import Portfolio, slowdown_ratio
from ..units import RELATIVE_UNIT, fmt_relative
from ..verify import FEAS_TOL
from .committee_asked import Asked, time_words
from .run import fmt_days, fmt_money, fmt_tokens, run_dict

HEADLINE = (
    "plan",
    "fabric",
    "npus",
    "time_to_train_days",
    "run_cost_usd",
    "power_mw",
    "mfu",
    "iteration_time_ns",
    "network_cost_usd",
    "tokens_per_s",
)
"""The headline figures, in the page's order: the plan, the fabric (bandwidth per dimension), the
cluster size (NPUs), days to train the token budget, $ per run, facility MW, MFU (fraction),
iteration time (ns), the network's capex ($), tokens/s. None where the input lacks them (shown as
"unknown")."""

LABELS = {
    "plan": "plan",
    "fabric": "fabric (GB/s per NPU per dimension)",
    "npus": "cluster size",
    "time_to_train_days": "days to train",
    "run_cost_usd": "$ per run",
    "power_mw": "facility power",
    "mfu": "MFU",
    "iteration_time_ns": "iteration time",
    "network_cost_usd": "network capex",
    "tokens_per_s": "throughput",
}
"""The row label of each headline figure."""

ORDER = (
    "min_run_cost",
    "min_cost",
    "knee",
    "fastest",
    "best",
    "performance_per_cost",
    "cheapest",
    "fixed_plan",
    "catalog_knee",
    "catalog",
)
"""The alternatives' order on the page (those present)."""

WHOLE_PARTS = ("catalog_knee", "catalog")
"""The alternatives in a parts catalog's whole parts, priced by their bill of materials: designs
that can be bought. The others price bandwidth by the cost model's $ per GB/s per NPU."""

def fmt_figure(key: str, value: Any, time_unit: str = "ns") -> str:
    """A headline figure as the page shows it, with its unit; ``unknown`` for None. ``time_unit``:
    the unit of ``iteration_time_ns`` (:attr:`Alternative.time_unit`): ns shown as ms, or the
    hour-weighted ratio of workloads weighted by shares of hours, never ms."""
    if value is None:
        return "unknown"
    if key in ("plan", "fabric"):
        return str(value)
    if key == "iteration_time_ns" and time_unit == RELATIVE_UNIT:
        return fmt_relative(value, 5)
    formats = {
        "npus": lambda v: f"{v:,} NPUs",
        "time_to_train_days": fmt_days,
        "run_cost_usd": lambda v: f"{fmt_money(v)} per run",
        "power_mw": lambda v: f"{v:,.2f} MW",
        "mfu": lambda v: f"{v:.1%}",
        "iteration_time_ns": lambda v: f"{v / 1e6:,.1f} ms",
        "network_cost_usd": fmt_money,
        "tokens_per_s": lambda v: f"{v:,.0f} tokens/s",
    }
    return formats[key](value)


@dataclass(frozen=True)
class Alternative:
    """One design the committee can buy.

    Attributes:
        key: its role, one of :data:`ORDER` (``best``: the co-design search's optimum for its own
            objective).
        label: the column heading; how: how it was obtained (objective, exactness), one line.
        plan: the training plan; fabric: the bandwidth per dimension with its blocks (GB/s per NPU).
        npus: the cluster size; bw_gbps: GB/s per NPU per dimension.
        iteration_time_ns: ns; network_cost_usd: the network's capex, $ (a catalog's bill of
            materials for ``catalog``).
        run: its buyer's figures; power_w: the network's power from a catalog, W (None otherwise).
        time_unit: the unit of ``iteration_time_ns``: ns, or :data:`hieropt.units.RELATIVE_UNIT`
            for workloads weighted by shares of hours (the hour-weighted ratio to their own
            optima, the objective every command reports).
        portfolio: with several workloads, each workload's iteration time at this design against
            its own optimum (:func:`hieropt.solvers.portfolio.portfolio_of`, the table ``hieropt
            solve`` prints); None for one workload.
        objective: the objective it is the certified optimum of (``performance``, ``min_cost``,
            ...; named in its label, :func:`~hieropt.report.committee_asked.titled`), None when it
            is not one (a ranked co-design candidate).
        max_time_ns, budget_usd: the targets it was solved under (an iteration-time cap in
            ``time_unit``, a network budget in $), None where there was none.
        calibration: the accelerator whose shipped default calibration timed it (its run's
            error band: :func:`hieropt.report.run.band_of`), None for none or unknown.
        gap: the proven relative gap (value - bound) / value of the solve that gave it, for
            ``gap_of`` (the objective of that solve: its own, or a co-design candidate's search
            objective); None when unknown.
        status: the status of that solve (:class:`hieropt.result.Status` value: ``optimal``,
            ``limit``; a point of the Pareto front: its own solve's); None when unknown (e.g. a
            co-design row without one).
    """

    key: str
    label: str
    how: str
    plan: str
    fabric: str
    npus: int
    bw_gbps: tuple[float, ...]
    iteration_time_ns: float
    network_cost_usd: float
    run: RunFigures
    power_w: float | None = None
    time_unit: str = "ns"
    portfolio: Portfolio | None = None
    objective: str | None = None
    max_time_ns: float | None = None
    budget_usd: float | None = None
    calibration: str | None = None
    gap: float | None = None
    gap_of: str | None = None
    status: str | None = None

    def figures(self) -> dict[str, Any]:
        """The headline figures (:data:`HEADLINE`), None where unknown."""
        r = self.run
        return {"plan": self.plan, "fabric": self.fabric, "npus": self.npus,
                "time_to_train_days": r.time_to_train_days, "run_cost_usd": r.run_cost_usd,
                "power_mw": r.power_mw, "mfu": r.mfu, "iteration_time_ns": self.iteration_time_ns,
                "network_cost_usd": self.network_cost_usd, "tokens_per_s": r.tokens_per_s}

    @property
    def gap_word(self) -> str | None:
        """The objective its ``gap`` is of: ``gap_of``, else its own ``objective`` (None without
        a gap)."""
        return None if self.gap is None else self.gap_of or self.objective

    @property
    def price_basis(self) -> str:
        """``catalog`` (whole parts, its bill of materials' $: :data:`WHOLE_PARTS`) or
        ``cost_model`` (the cost model's $ per GB/s per NPU: a continuous design, a bound)."""
        return "catalog" if self.key in WHOLE_PARTS else "cost_model"

    def to_dict(self, fastest: Alternative | None = None) -> dict[str, Any]:
        """JSON-ready: key, label, how, ``price_basis``, the objective it is the optimum of and
        the targets it was solved under (``max_iteration_time_ns``, ``max_network_cost_usd``;
        null where none), the proven ``gap`` and the objective it is of (``gap_of``; null where
        unknown) and the ``status`` of its solve (as ``solve --json``'s: ``optimal``, ``limit``;
        null where unknown), the headline figures, bandwidths, the network's power, every run
        figure (``run``) and ``portfolio`` (:func:`workload_rows` against ``fastest``; null for
        one workload)."""
        return {"key": self.key, "label": self.label, "how": self.how,
                "price_basis": self.price_basis, "objective": self.objective,
                "targets": {"max_iteration_time_ns": self.max_time_ns,
                            "max_network_cost_usd": self.budget_usd},
                "gap": self.gap, "gap_of": self.gap_word, "status": self.status,
                **self.figures(),
                "time_unit": self.time_unit, "bw_gbps": list(self.bw_gbps),
                "power_w": self.power_w, "run": run_dict(self.run, self.calibration),
                "portfolio": portfolio_json(self, fastest)}


@dataclass(frozen=True)
class WorkloadRow:
    """One workload at one design (:attr:`Alternative.portfolio`).

    Attributes:
        name: the workload; weight: its weight in the weighted objective (for shares of hours:
            share / own optimum, 1/ns).
        time_ns: its iteration time at the design, ns (the independent evaluator).
        own_optimum_ns: its own optimum under the same rows, bounds and budget, ns.
        ratio: time / own optimum (1 = as fast as on its own best network).
        vs_fastest: time / its time at the fastest design (None without a fastest design).
    """

    name: str
    weight: float
    time_ns: float
    own_optimum_ns: float
    ratio: float
    vs_fastest: float | None


def workload_rows(a: Alternative, fastest: Alternative | None = None) -> tuple[WorkloadRow, ...]:
    """Each workload of ``a``'s portfolio (empty for one workload), its ratio to its own optimum
    and to its time at the ``fastest`` design (both ratios by
    :func:`hieropt.result.slowdown_ratio`, as ``hieropt solve``'s portfolio table)."""
    p = a.portfolio
    if p is None:
        return ()
    ref = None if fastest is None else fastest.portfolio
    ref_times = (None,) * len(p.names) if ref is None else ref.times_ns
    return tuple(
        WorkloadRow(n, w, t, u, slowdown_ratio(t, u), None if f is None else slowdown_ratio(t, f))
        for n, w, t, u, f in zip(p.names, p.weights, p.times_ns, p.own_optima_ns, ref_times,
                                 strict=True))


def portfolio_json(a: Alternative, fastest: Alternative | None = None) -> dict[str, Any] | None:
    """``a``'s portfolio as JSON (:meth:`hieropt.result.Portfolio.to_dict`, times ns), each
    workload also with ``ratio_to_own_optimum`` and ``ratio_to_fastest`` (:func:`workload_rows`;
    null without a fastest design); None for one workload."""
    if a.portfolio is None:
        return None
    out = a.portfolio.to_dict()
    for d, r in zip(out["workloads"], workload_rows(a, fastest), strict=True):
        d.update(ratio_to_own_optimum=r.ratio, ratio_to_fastest=r.vs_fastest)
    return out


def fmt_change(ratio: float) -> str:
    """A ratio of two times as a signed change in %: 1.1399 -> ``+14.0 %``."""
    return f"{(ratio - 1) * 100:+.1f} %"


def slowdown_words(a: Alternative, fastest: Alternative | None) -> str | None:
    """One sentence on how the design ``a`` treats each workload (None for one workload): its
    largest slowdown against the ``fastest`` design (time / time there, per workload), and its
    largest against each workload's own best network (time / own optimum) beside the fastest
    design's; only the latter when ``a`` is the fastest or there is none."""
    rows = workload_rows(a, fastest)
    if not rows:
        return None
    own = max(rows, key=lambda r: r.ratio)
    own_words = (f"against each workload's own optimum its largest slowdown is {own.name} "
                 f"{fmt_change(own.ratio)}")
    if fastest is None or a.key == fastest.key or fastest.portfolio is None:
        return f"per workload, {own_words}"
    worst = max(rows, key=lambda r: r.vs_fastest or 0.0)
    best = max(workload_rows(fastest), key=lambda r: r.ratio)
    vs = (f"its largest slowdown against the fastest design is {worst.name} "
          f"{fmt_change(worst.vs_fastest or 1.0)}" if (worst.vs_fastest or 0.0) > 1.0
          else "no workload is slower than at the fastest design")
    return (f"per workload, {vs}; {own_words} (the fastest design's: {best.name} "
            f"{fmt_change(best.ratio)})")


@dataclass(frozen=True)
class Missing:
    """An alternative the input cannot give: its ``key``, ``label`` and ``why`` (one line)."""

    key: str
    label: str
    why: str


@dataclass(frozen=True)
class ParetoData:
    """The points of the page's trade-off plot.

    Attributes:
        axes: ``run`` ($ per run vs days to train: the cluster's cost and a token budget are known)
            or ``network`` (the network's capex vs the iteration time).
        x_label, y_label: the axes' titles with units; x: days or ms; y: $.
        front: (x, y) of the non-dominated designs, x ascending.
        points: (alternative key, x, y) of every alternative.
        source: where the front comes from, one line.
        curve: (x, y) of every design the front was taken from, in their order (e.g. the time-cost
            front's budgets: on $ per run vs days some are dominated).
    """

    axes: str
    x_label: str
    y_label: str
    front: tuple[tuple[float, float], ...]
    points: tuple[tuple[str, float, float], ...]
    source: str
    curve: tuple[tuple[float, float], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "axes": self.axes,
            "x_label": self.x_label,
            "y_label": self.y_label,
            "source": self.source,
            "front": [list(p) for p in self.front],
            "points": [list(p) for p in self.points],
            "curve": [list(p) for p in self.curve],
        }


@dataclass(frozen=True)
class Committee:
    """What the committee page shows.

    Attributes:
        kind: ``procurement`` (an instance solved) or ``codesign`` (a co-design result).
        name: the instance's or space's name; subject: lines saying what was asked (model, NPUs,
            tokens, objective).
        recommended: the key of the recommended alternative; why: one line saying why it is
            recommended.
        alternatives: the designs, in :data:`ORDER`; missing: the alternatives the input cannot
            give, and why.
        within: the knee's slack (0.01 = 1 %; 0: the knee turned off, no knee column).
        pareto: the trade-off plot's points (None when fewer than two designs are known).
        unknown: why headline figures are unknown, one line each; notes: method notes.
        asked: the question the page answers (an objective under targets, and the column that is
            its optimum); None for a co-design result.
        price_basis: on a page with columns of both price bases, which columns are priced by
            a catalog's whole parts and which by the cost model's $ per GB/s, one line each
            (:func:`hieropt.report.committee_basis.basis_lines`); empty on a page of one basis.
    """

    kind: str
    name: str
    subject: tuple[str, ...]
    recommended: str
    why: str
    alternatives: tuple[Alternative, ...]
    missing: tuple[Missing, ...]
    within: float
    pareto: ParetoData | None = None
    unknown: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    asked: Asked | None = None
    price_basis: tuple[str, ...] = ()

    @property
    def recommendation(self) -> Alternative:
        """The recommended alternative."""
        return next(a for a in self.alternatives if a.key == self.recommended)

    @property
    def fastest(self) -> Alternative | None:
        """The ``fastest`` alternative, None when the page has none."""
        return next((a for a in self.alternatives if a.key == "fastest"), None)

    def headline(self) -> dict[str, Any]:
        """The recommendation's headline figures (:data:`HEADLINE`), None where unknown."""
        return self.recommendation.figures()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: kind, name, the subject lines, the question asked (``asked``:
        :meth:`Asked.to_dict`, null for a co-design result), the recommendation (key, why,
        ``headline``), the price basis of the columns (``price_basis``: one line per basis, empty
        on a page of one basis), every alternative, the missing ones, the knee's slack, the plot's
        points, what is unknown and the notes."""
        return {
            "kind": self.kind,
            "name": self.name,
            "subject": list(self.subject),
            "asked": None if self.asked is None else self.asked.to_dict(),
            "recommended": self.recommended,
            "why": self.why,
            "headline": self.headline(),
            "price_basis": list(self.price_basis),
            "alternatives": [a.to_dict(self.fastest) for a in self.alternatives],
            "missing": [{"key": m.key, "label": m.label, "why": m.why} for m in self.missing],
            "within": self.within,
            "pareto": None if self.pareto is None else self.pareto.to_dict(),
            "unknown": list(self.unknown),
            "notes": list(self.notes),
        }


PRACTICAL_SLOWDOWN = 10.0
"""The page's rule for a practical option: an alternative whose iteration time exceeds this multiple
of the fastest design's on the page (e.g. the cheapest network of a fabric whose bandwidth may go
to ~0 on a dimension, thousands of years to train), or exceeds the input's iteration-time cap when
it has one, is not offered to the committee: it is listed under the table as not a practical
option, with its time, and the plot leaves out the designs beyond that limit. The recommendation
and the optimum of the objective asked (:attr:`Asked.answer`) are never dropped."""


def practical_limit(alternatives: list[Alternative] | tuple[Alternative, ...],
                    cap_ns: float | None = None) -> float | None:
    """The longest iteration time of a practical option (:data:`PRACTICAL_SLOWDOWN`), in the
    alternatives' time unit (ns, or the hour-weighted ratio): that multiple of the least iteration
    time among ``alternatives``, or the input's iteration-time cap ``cap_ns`` when smaller (met
    to the verifier's :data:`hieropt.verify.FEAS_TOL`: a design solved at the cap lands on it);
    None without alternatives."""
    times = [a.iteration_time_ns for a in alternatives]
    if not times:
        return None
    limit = PRACTICAL_SLOWDOWN * min(times)
    return limit if cap_ns is None else min(limit, cap_ns * (1 + FEAS_TOL))


def practical(alternatives: tuple[Alternative, ...], recommended: str,
              cap_ns: float | None = None, answer: str | None = None
              ) -> tuple[tuple[Alternative, ...], tuple[Missing, ...]]:
    """(the practical alternatives, the others as :class:`Missing` saying why): an alternative
    other than the ``recommended`` one and the ``answer`` to the objective asked
    (:attr:`Asked.answer`) whose iteration time exceeds :func:`practical_limit` is not a
    practical option (its why gives its time against the fastest, or against the cap ``cap_ns``,
    in the alternatives' time unit)."""
    limit = practical_limit(alternatives, cap_ns)
    if limit is None:
        return alternatives, ()
    fastest = min(a.iteration_time_ns for a in alternatives)
    kept: list[Alternative] = []
    dropped: list[Missing] = []
    for a in alternatives:
        if a.key in (recommended, answer) or a.iteration_time_ns <= limit:
            kept.append(a)
            continue
        t = time_words(a.iteration_time_ns, a.time_unit)
        days = a.run.time_to_train_days
        took = t if days is None else f"{t}, {fmt_figure('time_to_train_days', days)} to train"
        if cap_ns is not None and limit < PRACTICAL_SLOWDOWN * fastest:
            cap = time_words(cap_ns, a.time_unit)
            why = f"its iteration time ({took}) exceeds the iteration-time cap of {cap}"
        else:
            r = a.iteration_time_ns / fastest
            times = f"{r:,.0f}" if r >= 100 else f"{r:.3g}"
            why = (f"its iteration time is {times} x the fastest "
                   f"design's ({took}), beyond the page's limit of {PRACTICAL_SLOWDOWN:g} x")
        dropped.append(Missing(a.key, a.label, f"not a practical option: {why}"))
    return tuple(kept), tuple(dropped)


def practical_note(cap_ns: float | None = None) -> str:
    """The page's rule (:data:`PRACTICAL_SLOWDOWN`) as one note."""
    cap = "" if cap_ns is None else ", or the iteration-time cap given,"
    return (
        f"an alternative whose iteration time exceeds {PRACTICAL_SLOWDOWN:g} x the fastest "
        f"design's on this page{cap} is not a practical option: it is listed as not shown, with "
        "its time, and the plot leaves out the designs beyond that limit (the recommendation and "
        "the optimum of the objective asked are always shown)"
    )


def ordered(alternatives: list[Alternative]) -> tuple[Alternative, ...]:
    """The alternatives in :data:`ORDER`."""
    return tuple(sorted(alternatives, key=lambda a: ORDER.index(a.key)))


def non_dominated(points: list[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    """The points no other point beats on both coordinates (both minimised), x ascending."""
    out: list[tuple[float, float]] = []
    for x, y in sorted(set(points)):
        if not out or y < out[-1][1]:
            out.append((x, y))
    return tuple(out)


RATIO_LABEL = "hour-weighted ratio to the own optima"
"""The x axis of the committee's plot for workloads weighted by shares of hours."""


def pareto_data(
    designs: list[tuple[float, float, RunFigures]],
    alternatives: tuple[Alternative, ...],
    source: str,
) -> ParetoData | None:
    """The plot's points from ``designs`` (iteration time ns, network $, their figures) and the
    alternatives: $ per run vs days when every one of them has both, else the network's $ vs the
    iteration time (ms). A $ per run grows with the time and the network's cost, so the run front is
    the image of the time-cost front, filtered."""
    figs = [f for _, _, f in designs] + [a.run for a in alternatives]
    if len(designs) + len(alternatives) < 2:
        return None
    if all(f.run_cost_usd is not None and f.time_to_train_days is not None for f in figs):
        curve = [(f.time_to_train_days, f.run_cost_usd) for _, _, f in designs]
        pts = tuple((a.key, a.run.time_to_train_days, a.run.run_cost_usd) for a in alternatives)
        return ParetoData(
            "run", "days to train", "$ per run", non_dominated(curve), pts, source, tuple(curve)
        )
    # (workloads weighted by shares of hours: the hour-weighted ratio, not ms)
    rel = bool(alternatives) and alternatives[0].time_unit == RELATIVE_UNIT
    scale = 1.0 if rel else 1e6
    curve = [(t / scale, c) for t, c, _ in designs]
    pts = tuple((a.key, a.iteration_time_ns / scale, a.network_cost_usd) for a in alternatives)
    return ParetoData(
        "network",
        RATIO_LABEL if rel else "iteration time (ms)",
        "network capex ($)",
        non_dominated(curve),
        pts,
        source + "; the $ per run is unknown, so the network's capex against the iteration time",
        tuple(curve),
    )


def subject_lines(
    model: str | None, npus: int, tokens: float | None, objective: str,
    asked: tuple[str, ...] | None = None,
) -> tuple[str, ...]:
    """What was asked, for the page's head: the model, the cluster size, the token budget, then
    the ``asked`` lines (:func:`~hieropt.report.committee_asked.asked_lines`) or, without them, the
    input's ``objective``."""
    what = f"{model} on {npus:,} NPUs" if model else f"{npus:,} NPUs"
    run = f"a run of {fmt_tokens(tokens)} tokens" if tokens is not None else "no token budget given"
    return (what, run, *(asked or (f"objective of the input: {objective}",)))


def unknown_lines(alternatives: tuple[Alternative, ...]) -> tuple[str, ...]:
    """Why figures are unknown, and what they leave out (``left out: ...``, e.g. the network's
    power), each reason once; one that only some columns have says which, naming the fewer: the
    columns it concerns ("(columns: fastest; knee)"), or those it does not ("(every column but:
    fastest in whole parts)", e.g. the network's power, which a design in a catalog's whole parts
    counts)."""
    seen: dict[str, list[str]] = {}
    for a in alternatives:
        for u in [*a.run.unknown, *(f"left out: {x}" for x in a.run.left_out)]:
            seen.setdefault(u, []).append(a.label)
    out = []
    for u, labels in seen.items():
        others = [a.label for a in alternatives if a.label not in labels]
        if not others:
            out.append(u)
        elif len(labels) <= len(others):
            out.append(f"{u} (column{'s' if len(labels) > 1 else ''}: {'; '.join(labels)})")
        else:
            out.append(f"{u} (every column but: {'; '.join(others)})")
    return tuple(out)



def caveat_notes(alts: tuple[Alternative, ...] | list[Alternative]) -> list[str]:
    """What the validation says of the plans of ``alts`` (:attr:`hieropt.model.run.RunFigures.
    caveats`: ZeRO-3, experts), once per caveat with the alternatives it concerns by plan:
    "knee, fastest (tp8 cp1 pp1 dp2048 ...): ZeRO stage 3 ..."."""
    by: dict[str, dict[str, list[str]]] = {}
    for a in alts:
        for c in a.run.caveats:
            by.setdefault(c, {}).setdefault(a.plan, []).append(a.key)
    return ["; ".join(f"{', '.join(keys)} ({plan})" for plan, keys in plans.items()) + f": {c}"
            for c, plans in by.items()]

__all__ = [
    "caveat_notes",
    "HEADLINE",
    "LABELS",
    "ORDER",
    "WHOLE_PARTS",
    "RATIO_LABEL",
    "Alternative",
    "WorkloadRow",
    "workload_rows",
    "portfolio_json",
    "slowdown_words",
    "fmt_change",
    "Missing",
    "ParetoData",
    "Committee",
    "fmt_figure",
    "ordered",
    "PRACTICAL_SLOWDOWN",
    "practical",
    "practical_limit",
    "practical_note",
    "non_dominated",
    "pareto_data",
    "subject_lines",
    "unknown_lines",
]
