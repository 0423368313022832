"""The committee sections of the ``hieropt report`` page, as HTML: the recommendation first, the
alternatives side by side, the trade-off plot (an inline SVG) and what is unknown. Every headline
figure is written with its unit and carries its raw value for machines: ``data-key`` (a key of
:data:`hieropt.report.committee.HEADLINE`) and ``data-value`` (the JSON value: ``repr`` of a float,
the text of a string, ``null`` when unknown), inside an element with ``data-alt`` (the alternative's
key; ``data-recommended`` on the recommendation's block). Returns strings."""

from __future__ import annotations

import html
import io
import json
from typing import Any

from .committee import (
    HEADLINE,
    LABELS,
    RATIO_LABEL,
    Committee,
    ParetoData,
    fmt_change,
    fmt_figure,
    workload_rows,
)
from .common import status_words
from .run import band_of, fmt_days, fmt_money, no_band_reason

COLORS = {
    "min_run_cost": "#1b7837",
    "min_cost": "#c51b7d",
    "knee": "#2166ac",
    "fastest": "#b2182b",
    "best": "#762a83",
    "performance_per_cost": "#e08214",
    "cheapest": "#8c510a",
    "fixed_plan": "#4d4d4d",
    "catalog_knee": "#35978f",
    "catalog": "#01665e",
}
"""The colour of each alternative's point on the plot."""

CSS = """
.rec { border: 2px solid #1b7837; border-radius: 6px; padding: 8px 16px; background: #f4faf4;
       margin: 10px 0; }
.rec h2 { border: none; margin-top: 0.4em; } .rec .why { color: #333; margin: 4px 0 10px; }
dl.figs { display: grid; grid-template-columns: max-content auto; gap: 4px 18px; margin: 0; }
dl.figs dt { color: #555; }
dl.figs dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
.unknown { color: #a33; font-weight: 400; }
table.alts th.recommended, table.alts td.recommended { background: #eef6ee; }
table.alts td.text { min-width: 150px; font-size: 0.92em; } svg { max-width: 100%; height: auto; }
"""
"""The committee sections' styles (added to the page's own)."""


def data_value(value: Any) -> str:
    """A figure's ``data-value``: the JSON text of a number (so ``float(attr)`` is the JSON's
    value), the text of a string, ``null`` for None."""
    if value is None:
        return "null"
    return value if isinstance(value, str) else json.dumps(value)


def figure_cell(tag: str, key: str, value: Any, extra: str = "", time_unit: str = "ns") -> str:
    """One figure as ``<tag data-key=... data-value=...>`` with its text and unit (``time_unit``:
    of the iteration time, :func:`hieropt.report.committee.fmt_figure`)."""
    text = fmt_figure(key, value, time_unit)
    cls = " class='unknown'" if value is None else ""
    return (
        f"<{tag}{cls}{extra} data-key='{key}' "
        f"data-value='{html.escape(data_value(value), quote=True)}'>"
        f"{html.escape(text)}</{tag}>"
    )


def recommendation_html(c: Committee) -> str:
    """The recommendation block: what is recommended, why, the price basis of each column when
    they differ (:func:`basis_html`), what the validation says of its plan
    (:attr:`hieropt.model.run.RunFigures.caveats`: ZeRO-3, experts), its status and proven gap in
    ``solve``'s words (:func:`hieropt.report.common.status_words`) and its headline figures."""
    a = c.recommendation
    figs = a.figures()
    items = "".join(f"<dt>{LABELS[k]}</dt>{figure_cell('dd', k, figs[k], '', a.time_unit)}"
                    for k in HEADLINE)
    caveats = "".join(f"<p class='caveat'>Caveat: {html.escape(x)}</p>" for x in a.run.caveats)
    band = band_of(a.run, a.calibration)
    none = no_band_reason(a.run, a.calibration)
    within = (f"<p class='band'>Error band: {html.escape(band.text())}</p>" if band is not None
              else "" if none is None else
              f"<p class='band'>{html.escape(none[0].upper() + none[1:])}</p>")
    return (
        f"<section class='rec' data-alt='{a.key}' data-recommended='true'>"
        f"<h2>Recommendation: {html.escape(a.label)}</h2><p class='why'>{html.escape(c.why)}</p>"
        f"<p class='status'>{html.escape(status_words(a.status, a.gap))}</p>"
        f"{basis_html(c)}{caveats}<dl class='figs'>{items}</dl>{within}</section>"
    )


def basis_html(c: Committee) -> str:
    """The price basis of each column (:attr:`Committee.price_basis`), one item per basis, next
    to the recommendation; empty on a page of one basis."""
    if not c.price_basis:
        return ""
    items = "".join(f"<li>{html.escape(x)}</li>" for x in c.price_basis)
    return (f"<div class='basis'><p>The columns are priced on two bases, whose $ are not "
            f"comparable:</p><ul>{items}</ul></div>")


def alternatives_html(c: Committee) -> str:
    """The alternatives side by side: one column per alternative, one row per headline figure, the
    network power of catalog designs, the price basis of each (``data-basis``) when they differ,
    and the proven gap of each (``data-gap``: its value, ``null``
    where unknown) when any has them, then how each was obtained; the missing alternatives listed
    with why."""
    alts = c.alternatives
    cls = ["recommended" if a.key == c.recommended else "" for a in alts]
    head = "".join(
        f"<th class='{k}' data-alt='{a.key}'>{html.escape(a.label)}</th>"
        for a, k in zip(alts, cls, strict=True)
    )
    rows = []
    for key in HEADLINE:
        kind = "text" if key in ("plan", "fabric") else "num"
        cells = "".join(
            f"<td class='{kind} {k}' data-alt='{a.key}'>"
            + figure_cell("span", key, a.figures()[key], "", a.time_unit)
            + "</td>"
            for a, k in zip(alts, cls, strict=True)
        )
        rows.append(f"<tr><th>{LABELS[key]}</th>{cells}</tr>")
    power = [a.power_w for a in alts]
    if any(p is not None for p in power):
        rows.append(
            "<tr><th>network power (catalog)</th>"
            + "".join(
                f"<td class='num'>{'-' if p is None else f'{p / 1e3:,.1f} kW'}</td>" for p in power
            )
            + "</tr>"
        )
    if c.price_basis:
        rows.append("<tr><th>price basis</th>" + "".join(
            f"<td class='text' data-alt='{a.key}' data-basis='{a.price_basis}'>"
            + ("catalog's whole parts (can be bought)" if a.price_basis == "catalog"
               else "$ per GB/s (a bound)") + "</td>" for a in alts) + "</tr>")
    if any(a.gap is not None for a in alts):
        rows.append("<tr><th>proven gap</th>" + "".join(
            f"<td class='num' data-alt='{a.key}' data-gap='{data_value(a.gap)}'>"
            + ("-" if a.gap is None else html.escape(f"{a.gap:.1e} ({a.gap_word})")) + "</td>"
            for a in alts) + "</tr>")
    rows.append(
        "<tr><th>how</th>" + "".join(f"<td>{html.escape(a.how)}</td>" for a in alts) + "</tr>"
    )
    out = [
        f"<table class='alts'><thead><tr><th></th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    ]
    if c.missing:
        out.append(
            "<p>Not shown:</p><ul>"
            + "".join(
                f"<li data-missing='{m.key}'>{html.escape(m.label)}: {html.escape(m.why)}</li>"
                for m in c.missing
            )
            + "</ul>"
        )
    return "".join(out)


def workloads_html(c: Committee) -> str:
    """The portfolio table of a multi-workload page: one row per workload, its weight and own
    optimum, then one column per alternative with the workload's iteration time there, its change
    against its own optimum and against the fastest design (:func:`workload_rows`, the figures of
    ``hieropt solve``'s portfolio table); each cell carries ``data-alt``, ``data-workload``,
    ``data-time-ns``, ``data-ratio`` (to the own optimum) and ``data-vs-fastest`` (``null``
    without a fastest design). Empty for one workload."""
    alts = [a for a in c.alternatives if a.portfolio is not None]
    if not alts:
        return ""
    fastest = c.fastest
    cols = [workload_rows(a, fastest) for a in alts]
    cls = ["recommended" if a.key == c.recommended else "" for a in alts]
    head = "".join(f"<th class='{k}' data-alt='{a.key}'>{html.escape(a.label)}</th>"
                   for a, k in zip(alts, cls, strict=True))
    rows = []
    for i, first in enumerate(cols[0]):
        cells = []
        for a, k, col in zip(alts, cls, cols, strict=True):
            r = col[i]
            vs = "" if r.vs_fastest is None or a.key == "fastest" else (
                f"<br>{fmt_change(r.vs_fastest)} vs fastest")
            cells.append(
                f"<td class='num {k}' data-alt='{a.key}' data-workload='{html.escape(r.name)}' "
                f"data-time-ns='{data_value(r.time_ns)}' data-ratio='{data_value(r.ratio)}' "
                f"data-vs-fastest='{data_value(r.vs_fastest)}'>{_ms(r.time_ns)}"
                f"<br>{fmt_change(r.ratio)} vs own optimum{vs}</td>")
        rows.append(f"<tr><th>{html.escape(first.name)}</th><td class='num'>{first.weight:.6g}"
                    f"</td><td class='num'>{_ms(first.own_optimum_ns)}</td>{''.join(cells)}</tr>")
    caption = (
        "Each workload's iteration time at each design (the independent evaluator), against its "
        "own optimum (its fastest network under the same constraints and budget; for shares of "
        "hours whatever the budget) and against its "
        "time at the fastest design; hieropt solve prints the same figures for one design. The "
        "alternatives' iteration time above is the workloads' weighted objective (sum of weight x "
        "time).")
    return (
        "<table class='alts workloads'><thead><tr><th>workload</th><th>weight</th>"
        f"<th>own optimum</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f"<p class='small'>{html.escape(caption)}</p>"
    )


def _ms(time_ns: float) -> str:
    """An iteration time in ms from 1 ms up, else in µs (a DLRM iteration: 63.1 µs)."""
    return f"{time_ns / 1e6:,.1f} ms" if time_ns >= 1e6 else f"{time_ns / 1e3:,.1f} µs"


def pareto_svg(p: ParetoData, recommended: str, labels: dict[str, str]) -> str:
    """The trade-off plot as an inline SVG (matplotlib): every design of its source as a light
    point, the non-dominated ones joined by a line, every alternative as a labelled point, the
    recommendation ringed. Axes: days and $ per run, or ms and the network's $."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "hieropt", "font.size": 9}):
        fig, ax = plt.subplots(figsize=(7.5, 4.2))
        if p.curve:
            xs, ys = zip(*p.curve, strict=True)
            ax.plot(
                xs,
                [y / 1e6 for y in ys],
                "o",
                color="#c8c8c8",
                ms=3,
                label="designs (the plot's source)",
            )
        if p.front:
            xs, ys = zip(*p.front, strict=True)
            ax.plot(
                xs,
                [y / 1e6 for y in ys],
                "-o",
                color="#555555",
                ms=3,
                lw=1.2,
                label="non-dominated",
            )
        for key, x, y in p.points:
            ax.plot(
                [x],
                [y / 1e6],
                "o",
                color=COLORS.get(key, "#000000"),
                ms=8 if key == recommended else 6,
                mec="black" if key == recommended else "none",
                label=labels[key].replace("$", r"\$"),
            )
        ax.set_xlabel(p.x_label)
        y = p.y_label.replace("($)", "(M$)") if "($)" in p.y_label else f"{p.y_label} (M$)"
        ax.set_ylabel(y.replace("$", r"\$"))  # (a bare $ starts mathtext)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="best")
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def pareto_html(c: Committee) -> str:
    """The plot's section: its title with units, the SVG, and where the points come from."""
    p = c.pareto
    if p is None:
        return "<p>No trade-off plot: fewer than two designs are known.</p>"
    title = ("$ per run against days to train" if p.axes == "run" else
             f"network capex ($) against {p.x_label}: no $ per run known")
    labels = {a.key: a.label for a in c.alternatives}
    pts = "; ".join(f"{labels[k]} ({_xy(p, x, y)})" for k, x, y in p.points)
    return (
        f"<h3>{html.escape(title)}</h3><figure "
        f"data-axes='{p.axes}'>{pareto_svg(p, c.recommended, labels)}"
        f"<figcaption class='small'>{html.escape(p.source)}. Points: "
        f"{html.escape(pts)}.</figcaption></figure>"
    )


def _xy(p: ParetoData, x: float, y: float) -> str:
    if p.axes == "run":
        return f"{fmt_days(x)}, {fmt_money(y)} per run"
    if p.x_label == RATIO_LABEL:  # (shares of hours: the hour-weighted ratio, not ms)
        return f"{x:,.5g} × the own optima, {fmt_money(y)}"
    return f"{x:,.1f} ms, {fmt_money(y)}"


def committee_sections(c: Committee) -> list[str]:
    """The committee's HTML sections, in the page's order: head, recommendation, alternatives, the
    portfolio table (several workloads), plot, unknowns."""
    parts = [
        "<ul class='head'>" + "".join(f"<li>{html.escape(s)}</li>" for s in c.subject) + "</ul>",
        recommendation_html(c),
        "<h2>Alternatives side by side</h2>",
        alternatives_html(c),
    ]
    table = workloads_html(c)
    if table:
        parts += ["<h2>Each workload at each design (the portfolio table)</h2>", table]
    parts += [
        "<h2>The trade-off</h2>",
        pareto_html(c),
    ]
    if c.unknown:
        parts.append(
            "<h2>What is unknown</h2><ul>"
            + "".join(f"<li>{html.escape(u)}</li>" for u in c.unknown)
            + "</ul>"
        )
    parts.append(
        "<h2>Method</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in c.notes) + "</ul>"
    )
    return parts


__all__ = [
    "CSS",
    "COLORS",
    "committee_sections",
    "recommendation_html",
    "basis_html",
    "alternatives_html",
    "workloads_html",
    "pareto_svg",
    "pareto_html",
    "figure_cell",
    "data_value",
]
