"""Presentation of a :class:`hieropt.studies.compare.Comparison`: the formatted tables (shared by the command line, the
JSON
and the HTML page, so their numbers are the same strings), JSON-ready dicts, matplotlib figures and one
self-contained HTML page. Returns values or writes the files it is given; never prints."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

import numpy as np
from rich.table import Table
from rich.text import Text

from ..model.cost import unit_cost_usd_per_gbps
from ..studies.compare import Comparison, Row, dimension_name
from .text import breakdown_dict, instance_dict, solution_dict

OBJECTIVE_WORDS = {"performance": "iteration time", "performance_per_cost": "time x cost",
                   "min_cost": "network cost"}
FIGURES = ("bandwidth.png", "utilisation.png", "front.png", "gap.png")
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
            "#17becf")


# ------------------------------------------------------------------------------------------------------ formatting
def fmt_ms(ns: float | None) -> str:
    """ns as ms with 4 decimals and thousands separators."""
    return "-" if ns is None else f"{ns / 1e6:,.4f}"


def fmt_usd(usd: float | None) -> str:
    """$ rounded to the dollar."""
    return "-" if usd is None else f"{usd:,.0f}"


def fmt_product(x: float | None) -> str:
    """time x cost, ns x $, 7 significant digits."""
    return "-" if x is None else f"{x:.6e}"


def fmt_gap(pct: float | None) -> str:
    """A gap in % with its sign (scientific below 0.001 %)."""
    if pct is None:
        return "-"
    return f"{pct:+.1e}%" if abs(pct) < 1e-3 else f"{pct:+,.3f}%"


def fmt_ratio(x: float | None) -> str:
    """A ratio such as a speed-up, e.g. ``1.0729x``."""
    return "-" if x is None else f"{x:,.4f}x"


def fmt_bw(x: float) -> str:
    """GB/s with 3 decimals."""
    return f"{x:,.3f}"


def fmt_util(u: float) -> str:
    """A utilisation as a percentage with 1 decimal."""
    return f"{u:.1%}"


# ---------------------------------------------------------------------------------------------------------- tables
def _dim_headers(comp: Comparison) -> list[str]:
    return [f"{dimension_name(comp.instance, d)}" for d in range(comp.instance.network.n_dims)]


def summary_table(comp: Comparison) -> dict[str, list]:
    """Columns and rows (strings) of the main table: time, cost, time x cost, gap, speed-up, bottleneck."""
    cols = ["design", "iteration ms", "network cost $", "time x cost (ns x $)",
            f"gap ({OBJECTIVE_WORDS[comp.objective]})", "optimum's speed-up", "bottleneck"]
    rows = []
    for r in comp.rows:
        if not r.feasible:
            rows.append([r.label, "cannot be made feasible", "-", "-", "-", "-", "-"])
            continue
        gap = "optimum" if r.kind == "optimum" else fmt_gap(r.gap_pct)
        bott = dimension_name(comp.instance, r.bottleneck_dim) if r.bottleneck_dim is not None else "-"
        others = [str(d) for d in r.bottleneck_tied if d != r.bottleneck_dim]
        if others:
            bott += f", tied with dim {', '.join(others)}"
        rows.append([r.label, fmt_ms(r.iteration_time_ns), fmt_usd(r.network_cost_usd), fmt_product(r.time_x_cost),
                     gap, fmt_ratio(r.speedup), bott])
    return {"columns": cols, "rows": rows}


def _per_dim_table(comp: Comparison, values: Any, fmt: Any) -> dict[str, list]:
    rows = []
    for r in comp.rows:
        if r.feasible:
            rows.append([r.label, *(fmt(float(v)) for v in values(r))])
        else:
            rows.append([r.label, *("-" for _ in range(comp.instance.network.n_dims))])
    return {"columns": ["design", *_dim_headers(comp)], "rows": rows}


def bandwidth_table(comp: Comparison) -> dict[str, list]:
    """Bandwidth per dimension (GB/s per NPU) of every design, as strings."""
    return _per_dim_table(comp, lambda r: r.bw, fmt_bw)


def utilisation_table(comp: Comparison) -> dict[str, list]:
    """Utilisation per dimension (busy time / iteration time) of every design, as strings."""
    return _per_dim_table(comp, lambda r: r.breakdown.utilisation_per_dim, fmt_util)


def explanation_table(comp: Comparison) -> dict[str, list]:
    """Where each heuristic loses, and how its vector was obtained."""
    rows = [[r.label, r.explanation if r.feasible else "-", r.message] for r in comp.heuristics]
    return {"columns": ["heuristic", "where it loses", "how the vector was obtained"], "rows": rows}


def headline_lines(comp: Comparison) -> list[str]:
    """The optimum, then the gain over each heuristic in one sentence each."""
    opt = comp.optimum
    inst = comp.instance
    lines = [f"instance {inst.name}: {inst.network.npus_total:,} NPUs, {inst.network.n_dims} dimensions, objective "
             f"{comp.objective}; constraints: {', '.join(c.text for c in inst.constraints) or 'none'}",
             f"exact optimum: {fmt_ms(opt.iteration_time_ns)} ms, ${fmt_usd(opt.network_cost_usd)}, time x cost "
             f"{fmt_product(opt.iteration_time_ns * opt.network_cost_usd)} ns x $; proven relative gap "
             f"{opt.gap:.1e}; solved in {opt.solve_seconds * 1e3:,.1f} ms"]
    for r in comp.heuristics:
        if not r.feasible:
            lines.append(f"{r.label}: {r.message}")
        elif comp.objective == "performance":
            lines.append(f"{r.label}: the optimum is {fmt_ratio(r.speedup)} faster ({fmt_gap(r.gap_pct)} "
                         "iteration time)")
        elif comp.objective == "performance_per_cost":
            lines.append(f"{r.label}: the optimum gives {fmt_ratio(1 + r.gap_pct / 100)} the performance per "
                         f"dollar ({fmt_gap(r.gap_pct)} time x cost)")
        else:
            lines.append(f"{r.label}: costs {fmt_gap(r.gap_pct)} more than the optimum for the same time target")
    return lines


def comparison_rich_table(comp: Comparison) -> Table:
    """The summary table for the terminal."""
    data = summary_table(comp)
    t = Table(title=f"Exact optimum versus heuristics ({comp.objective})", title_justify="left")
    for c in data["columns"]:
        t.add_column(c, justify="left" if c in ("design", "bottleneck") else "right", no_wrap=c == "design")
    for row in data["rows"]:
        t.add_row(*(Text(v) for v in row))
    t.caption = ("gap: (heuristic - optimum) / optimum for the objective; speed-up: heuristic's iteration time / "
                 "optimum's; bottleneck: the dimension that is the slowest for the most collective time (ties within "
                 "1e-6 counted for each)")
    return t


def rich_table(data: dict[str, list], title: str) -> Table:
    """Any of the string tables above as a rich table."""
    t = Table(title=title, title_justify="left")
    for i, c in enumerate(data["columns"]):
        t.add_column(c, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for row in data["rows"]:
        t.add_row(*(Text(v) for v in row))
    return t


# ------------------------------------------------------------------------------------------------------------ JSON
def _arr(a: Any) -> list[float] | None:
    return None if a is None else [float(x) for x in a]


def row_dict(r: Row) -> dict[str, Any]:
    """JSON-ready row (units in the keys)."""
    h = r.heuristic
    return {
        "name": r.name, "label": r.label, "kind": r.kind, "feasible": r.feasible, "message": r.message,
        "bw_gbps_per_dim": _arr(r.bw), "iteration_time_ns": r.iteration_time_ns,
        "network_cost_usd": r.network_cost_usd, "time_x_cost_ns_usd": r.time_x_cost,
        "objective_value": r.objective_value, "gap_pct": r.gap_pct, "speedup": r.speedup,
        "bottleneck_dim": r.bottleneck_dim, "bottleneck_tied_dims": list(r.bottleneck_tied),
        "explanation": r.explanation, "iterations": r.iterations,
        "seconds": r.seconds,
        "utilisation_per_dim": _arr(r.breakdown.utilisation_per_dim) if r.breakdown is not None else None,
        "bottleneck_ns_per_dim": _arr(r.breakdown.bottleneck_ns_per_dim) if r.breakdown is not None else None,
        "breakdown": breakdown_dict(r.breakdown) if r.breakdown is not None else None,
        "heuristic": None if h is None else {
            "ratios": _arr(h.ratios), "placement": h.placement, "projection_gbps": h.projection_gbps,
            "reported_gap": h.gap, "extra": {k: v for k, v in h.extra.items() if isinstance(v, int | float | str)}},
    }


def display_dict(comp: Comparison) -> dict[str, Any]:
    """Every formatted table and line, exactly as the command line and the HTML page show them."""
    return {"headline": headline_lines(comp), "summary": summary_table(comp), "bandwidth": bandwidth_table(comp),
            "utilisation": utilisation_table(comp), "explanations": explanation_table(comp)}


def comparison_dict(comp: Comparison) -> dict[str, Any]:
    """JSON-ready comparison: raw numbers per design, the optimum's full solution, and the display strings."""
    opt = solution_dict(comp.instance, comp.optimum)
    opt.pop("instance", None)
    inst = instance_dict(comp.instance)
    inst["heuristic_ratios"] = {k: list(v) for k, v in (comp.instance.heuristic_ratios or {}).items()}
    return {
        "units": {"bw": "GB/s per NPU per dimension (1 GB = 1e9 bytes)", "time": "ns", "cost": "USD",
                  "time_x_cost": "ns*USD", "gap_pct": "% of the optimum's objective value"},
        "objective": comp.objective,
        "objective_unit": comp.objective_unit,
        "rows": [row_dict(r) for r in comp.rows],
        "optimum": opt,
        "display": display_dict(comp),
        "seconds": comp.seconds,
        "instance": inst,
    }


# --------------------------------------------------------------------------------------------------------- figures
def figure_data(comp: Comparison, front: Any | None) -> dict[str, Any]:
    """The numbers every figure plots (written to report.json, so the PNGs are checkable against it)."""
    feas = [r for r in comp.rows if r.feasible]
    dims = _dim_headers(comp)
    out: dict[str, Any] = {
        "bandwidth.png": {"title": "Bandwidth per dimension (GB/s per NPU)", "dims": dims,
                          "series": [{"label": r.label, "values": _arr(r.bw)} for r in feas]},
        "utilisation.png": {"title": "Utilisation per dimension (busy time / iteration time, %)", "dims": dims,
                            "series": [{"label": r.label,
                                        "values": [100 * float(u) for u in r.breakdown.utilisation_per_dim]}
                                       for r in feas]},
        "gap.png": {"title": f"Gap to the exact optimum ({OBJECTIVE_WORDS[comp.objective]}, %)",
                    "labels": [r.label for r in feas if r.kind == "heuristic"],
                    "gap_pct": [float(r.gap_pct) for r in feas if r.kind == "heuristic"]},
    }
    if front is not None:
        out["front.png"] = {
            "title": "Time-cost Pareto front (exact) and the heuristics",
            "front_cost_usd": [float(p.network_cost_usd) for p in front.points],
            "front_time_ns": [float(p.iteration_time_ns) for p in front.points],
            "points": [{"label": r.label, "cost_usd": float(r.network_cost_usd),
                        "time_ns": float(r.iteration_time_ns)} for r in feas],
            "iso_time_x_cost": (float(comp.rows[0].time_x_cost) if comp.objective == "performance_per_cost"
                                else None),
        }
    return out


def _colors(labels: list[str]) -> list[str]:
    return ["#222222" if lab == "exact optimum" else _PALETTE[i % len(_PALETTE)] for i, lab in enumerate(labels)]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_grouped(data: dict[str, Any], path: Any, ylabel: str) -> None:
    """Grouped bars: one group per dimension, one bar per design."""
    plt = _plt()
    series = data["series"]
    n, D = len(series), len(data["dims"])
    fig, ax = plt.subplots(figsize=(10, 4.6), dpi=110)
    width = 0.8 / max(n, 1)
    x = np.arange(D)
    for i, (s, c) in enumerate(zip(series, _colors([s["label"] for s in series]), strict=True)):
        ax.bar(x - 0.4 + width * (i + 0.5), s["values"], width, label=s["label"], color=c,
               edgecolor="black" if s["label"] == "exact optimum" else "none", linewidth=0.6)
    ax.set_xticks(x, data["dims"])
    top = max((max(s["values"]) for s in series if s["values"]), default=1.0)
    ax.set_ylim(0, top * (1.12 + 0.07 * ((n + 3) // 4)))  # headroom for the legend
    ax.set_ylabel(ylabel)
    ax.set_title(data["title"])
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=min(n, 4))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_front_points(data: dict[str, Any], path: Any) -> None:
    """The exact Pareto front (cost M$ vs iteration time ms) with every design as a point."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 5), dpi=110)
    ax.plot(np.array(data["front_cost_usd"]) / 1e6, np.array(data["front_time_ns"]) / 1e6, "-", color="#999999",
            lw=1.5, label="exact Pareto front (fastest network per budget)")
    pts = data["points"]
    for p, c in zip(pts, _colors([p["label"] for p in pts]), strict=True):
        opt = p["label"] == "exact optimum"
        ax.plot(p["cost_usd"] / 1e6, p["time_ns"] / 1e6, "*" if opt else "o", ms=14 if opt else 8, color=c,
                markeredgecolor="black", label=p["label"], zorder=3)
    iso = data.get("iso_time_x_cost")
    if iso:  # the designs as good as the optimum per dollar lie on time = iso / cost
        c = np.linspace(min(p["cost_usd"] for p in pts) * 0.5, max(p["cost_usd"] for p in pts) * 1.05, 200)
        ax.plot(c / 1e6, iso / c / 1e6, "--", color="#222222", lw=0.8, alpha=0.6,
                label="same time x cost as the optimum")
    # zoom on the designs: the front's cheapest end can be orders of magnitude slower
    times = [p["time_ns"] / 1e6 for p in pts] + [t / 1e6 for t in data["front_time_ns"]]
    top = max(p["time_ns"] for p in pts) / 1e6
    ax.set_ylim(min(times) - 0.05 * (top - min(times)) - 1e-9, top + 0.6 * (top - min(times)) + 1e-9)
    ax.set_xlabel("network cost (M$)")
    ax.set_ylabel("iteration time (ms)")
    ax.set_title(data["title"] + " (zoomed on the designs)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_gap(data: dict[str, Any], path: Any) -> None:
    """Horizontal bars of each heuristic's gap to the optimum (%), labelled with the table's strings."""
    plt = _plt()
    labels, gaps = data["labels"], data["gap_pct"]
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(labels) + 1.4), dpi=110)
    y = np.arange(len(labels))
    colors = [_PALETTE[(i + 1) % len(_PALETTE)] for i in range(len(labels))]
    ax.barh(y, gaps, color=colors)
    for yi, g in zip(y, gaps, strict=True):
        ax.text(g, yi, " " + fmt_gap(g), va="center", fontsize=8)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel("gap to the exact optimum (%)")
    ax.set_title(data["title"])
    ax.grid(axis="x", alpha=0.3)
    ax.margins(x=0.18)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_figures(figs: dict[str, Any], out_dir: Path) -> list[Path]:
    """Draw every figure of :func:`figure_data` into ``out_dir``; returns the written paths."""
    out = []
    for name, data in figs.items():
        path = out_dir / name
        if name == "bandwidth.png":
            plot_grouped(data, path, "GB/s per NPU")
        elif name == "utilisation.png":
            plot_grouped(data, path, "utilisation (%)")
        elif name == "front.png":
            plot_front_points(data, path)
        elif name == "gap.png":
            plot_gap(data, path)
        out.append(path)
    return out


# ------------------------------------------------------------------------------------------------------------ HTML
_CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 24px auto; max-width: 1300px;
       color: #222; padding: 0 16px; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid
#ddd; padding-bottom: 4px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 0.88em; }
th, td { border: 1px solid #ddd; padding: 4px 8px; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.optimum td { background: #eef6ee; font-weight: 600; }
tr.infeasible td { color: #a33; }
ul.head li { margin: 2px 0; } img { max-width: 100%; border: 1px solid #eee; margin: 6px 0; }
.small { color: #666; font-size: 0.85em; }
"""


def _table_html(data: dict[str, list], numeric_from: int = 1, classes: list[str] | None = None) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in data["columns"])
    body = []
    for i, row in enumerate(data["rows"]):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        cells = "".join(f'<td class="num">{html.escape(str(v))}</td>' if j >= numeric_from else
                        f"<td>{html.escape(str(v))}</td>" for j, v in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def html_page(comp: Comparison, display: dict[str, Any], images: dict[str, bytes], notes: list[str]) -> str:
    """One self-contained HTML page: the display tables of :func:`display_dict` and the PNGs as data URIs."""
    from ..version import __version__

    inst = comp.instance
    classes = ["optimum" if r.kind == "optimum" else ("" if r.feasible else "infeasible") for r in comp.rows]
    u = unit_cost_usd_per_gbps(inst)
    dims = "".join(
        f"<tr><td>{d}</td><td>{html.escape(dim.block)}</td><td class='num'>{dim.npus}</td>"
        f"<td>{html.escape(dim.cost_class)}</td><td class='num'>{u[d]:,.2f}</td></tr>"
        for d, dim in enumerate(inst.network.dims))
    parts = [
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>hieropt: exact versus heuristics - {html.escape(inst.name)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Exact optimum versus rules of thumb: {html.escape(inst.name)}</h1>",
        "<ul class='head'>" + "".join(f"<li>{html.escape(line)}</li>" for line in display["headline"]) + "</ul>",
        "<h2>Summary</h2>",
        _table_html(display["summary"], classes=classes),
        "<p class='small'>gap: (heuristic - optimum) / optimum for the objective; optimum's speed-up: heuristic's "
        "iteration time / the optimum's; bottleneck: the dimension that is the slowest for the most collective "
        "time (dimensions within 1e-6 of a collective's slowest count as tied). All times per training "
        "iteration; cost = N x sum of $/GB/s x GB/s per NPU.</p>",
        "<h2>Where each heuristic loses</h2>",
        _table_html(display["explanations"], numeric_from=99),
    ]
    sections = (("bandwidth.png", "Bandwidth per dimension: optimum versus heuristics", None),
                ("front.png", "The exact time-cost Pareto front, with every design as a point", None),
                ("gap.png", "Gap to the optimum", None),
                ("utilisation.png", "Utilisation per dimension (busy time / iteration time)", "utilisation"),
                ("", "Bandwidth per dimension (GB/s per NPU)", "bandwidth"))
    for name, title, table in sections:
        if name not in images and table is None:
            continue
        parts.append(f"<h2>{title}</h2>")
        if table is not None:
            parts.append(_table_html(display[table], classes=classes))
        if name in images:
            b64 = base64.b64encode(images[name]).decode("ascii")
            parts.append(f"<img alt='{html.escape(title)}' src='data:image/png;base64,{b64}'>")
    parts += [
        "<h2>Network</h2>",
        "<table><thead><tr><th>dim</th><th>block</th><th>NPUs</th><th>cost class</th><th>$ per GB/s</th></tr>"
        f"</thead><tbody>{dims}</tbody></table>",
        "<h2>Notes</h2>", "<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>",
        f"<p class='small'>hieropt {__version__}; units: bandwidth GB/s per NPU per dimension (1 GB = 1e9 bytes), "
        "time ns (shown in ms), cost $.</p>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p)


def report_notes(comp: Comparison, front: Any | None, front_error: str | None) -> list[str]:
    """Method notes for the page and the JSON."""
    notes = [f"exact optimum: {comp.optimum.method}; re-checked by the independent evaluator",
             "heuristics are placed on their ratios when the constraints allow it, otherwise projected onto the "
             "constraints (Euclidean projection, a convex QP solved by HiGHS); see hieropt.studies.heuristics",
             f"comparison computed in {comp.seconds:,.2f} s"]
    if front is not None:
        notes += list(front.notes)
    if front_error:
        notes.append(f"no Pareto front figure: {front_error}")
    return notes


def write_report(comp: Comparison, front: Any | None, out_dir: str | Path, front_error: str | None = None
                 ) -> dict[str, Any]:
    """Write the PNG figures, ``report.html`` and ``report.json`` into ``out_dir`` (created if missing); returns
    the report dict written to ``report.json``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figs = figure_data(comp, front)
    paths = write_figures(figs, out)
    images = {p.name: p.read_bytes() for p in paths}
    data = comparison_dict(comp)
    notes = report_notes(comp, front, front_error)
    data["figures"] = figs
    data["notes"] = notes
    if front is not None:
        data["front"] = [{"budget_usd": p.budget_usd, "network_cost_usd": p.network_cost_usd,
                          "iteration_time_ns": p.iteration_time_ns, "gap": p.gap, "bw_gbps_per_dim": _arr(p.bw)}
                         for p in front.points]
    (out / "report.html").write_text(html_page(comp, data["display"], images, notes), encoding="utf-8")
    data["files"] = [p.name for p in paths] + ["report.html", "report.json"]
    (out / "report.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return data
