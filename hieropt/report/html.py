"""The self-contained HTML page of ``hieropt report`` (tables as in ``hieropt compare``, figures
inlined) and the writer of the whole report folder."""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from ..io.files import json_text, write_atomic
from ..model.cost import unit_cost_usd_per_gbps
from ..studies.compare import Comparison
from ..units import RELATIVE_UNIT
from .committee import Committee
from .committee_page import CSS, committee_sections
from .common import floats, fmt_bw, fmt_ms, fmt_usd, gap_or_none
from .compare import comparison_dict, figure_data
from .plots import write_figures
from .run import instance_calibration, run_lines, run_notes

# --------------------------------------------------------------------------------------------- HTML
_CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 24px auto;
       max-width: 1300px; color: #222; padding: 0 16px; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 0.88em; }
th, td { border: 1px solid #ddd; padding: 4px 8px; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.optimum td { background: #eef6ee; font-weight: 600; }
tr.infeasible td { color: #a33; }
ul.head li { margin: 2px 0; } img { max-width: 100%; border: 1px solid #eee; margin: 6px 0; }
.small { color: #666; font-size: 0.85em; }
"""


def _table_html(
    data: dict[str, list], numeric_from: int = 1, classes: list[str] | None = None
) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in data["columns"])
    body = []
    for i, row in enumerate(data["rows"]):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        cells = "".join(f'<td class="num">{html.escape(str(v))}</td>' if j >= numeric_from else
                        f"<td>{html.escape(str(v))}</td>" for j, v in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def page(title: str, heading: str, sections: list[str]) -> str:
    """One self-contained HTML page (styles inline, nothing fetched): ``title``, an ``<h1>`` and the
    sections."""
    from ..version import __version__

    return "\n".join(
        [
            "<!DOCTYPE html>",
            "<html lang='en'><head><meta charset='utf-8'>",
            f"<title>{html.escape(title)}</title>",
            f"<style>{_CSS}{CSS}</style></head><body>",
            f"<h1>{html.escape(heading)}</h1>",
            *[s for s in sections if s],
            f"<p class='small'>hieropt {__version__}; units: bandwidth GB/s per NPU per "
            "dimension (1 GB = 1e9 bytes), "
            "time ns (shown in ms), cost $ (M$ = 1e6 $), power MW (IT power x PUE; the IT "
            "power alone without a pue, as the page's unknowns say), days of 86,400 s.</p>",
            "</body></html>",
        ]
    )


def comparison_sections(comp: Comparison, display: dict[str, Any], images: dict[str, bytes],
                        notes: list[str]) -> list[str]:
    """The sections of the exact optimum versus the rules of thumb: the display tables of
    :func:`~hieropt.report.compare.display_dict` and the PNGs as data URIs."""
    inst = comp.instance
    classes = [
        "optimum" if r.kind == "optimum" else ("" if r.feasible else "infeasible")
        for r in comp.rows
    ]
    u = unit_cost_usd_per_gbps(inst)
    dims = "".join(
        f"<tr><td>{d}</td><td>{html.escape(dim.block)}</td><td class='num'>{dim.npus}</td>"
        f"<td>{html.escape(dim.cost_class)}</td><td class='num'>{u[d]:,.2f}</td></tr>"
        for d, dim in enumerate(inst.network.dims))
    parts = [
        "<ul class='head'>"
        + "".join(f"<li>{html.escape(line)}</li>" for line in display["headline"])
        + "</ul>",
        "<h2>Summary</h2>",
        _table_html(display["summary"], classes=classes),
        "<p class='small'>gap: (heuristic - optimum) / optimum for the objective; optimum's "
        "speed-up: heuristic's "
        "iteration time / the optimum's; bottleneck: the dimension that is the slowest for "
        "the most collective "
        "time (dimensions within 1e-6 of a collective's slowest count as tied). All times "
        "per training "
        "iteration; cost = N x sum of $/GB/s x GB/s per NPU.</p>",
        "<h2>Where each heuristic loses</h2>",
        _table_html(display["explanations"], numeric_from=99),
    ]
    sections = (
        ("bandwidth.png", "Bandwidth per dimension: optimum versus heuristics", None),
        ("front.png", "The exact time-cost Pareto front, with every design as a point", None),
        ("gap.png", "Gap to the optimum", None),
        (
            "utilisation.png",
            "Utilisation per dimension (busy time / iteration time)",
            "utilisation",
        ),
        ("", "Bandwidth per dimension (GB/s per NPU)", "bandwidth"),
    )
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
        "<table><thead><tr><th>dim</th><th>block</th><th>NPUs</th><th>cost class</th><th>$ "
        "per GB/s</th></tr>"
        f"</thead><tbody>{dims}</tbody></table>",
        "<h2>Notes</h2>",
        "<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>",
    ]
    return parts


def html_page(comp: Comparison, display: dict[str, Any], images: dict[str, bytes], notes: list[str],
              committee: Committee | None = None) -> str:
    """One self-contained HTML page: with ``committee``, its sections first (the recommendation, the
    alternatives, the trade-off) and the comparison with the rules of thumb as the detail; else the
    comparison alone."""
    name = comp.instance.name
    if committee is None:
        return page(
            f"hieropt: exact versus heuristics - {name}",
            f"Exact optimum versus rules of thumb: {name}",
            comparison_sections(comp, display, images, notes),
        )
    return page(
        f"hieropt: committee page - {name}",
        f"Which cluster to buy: {name}",
        [
            *committee_sections(committee),
            f"<h2>Detail: the exact optimum for {comp.objective} versus rules of thumb</h2>",
            *comparison_sections(comp, display, images, notes),
        ],
    )


def report_notes(comp: Comparison, front: Any | None, front_error: str | None) -> list[str]:
    """Method notes for the page and the JSON."""
    notes = [
        f"exact optimum: {comp.optimum.method}; re-checked by the independent evaluator",
        "heuristics are placed on their ratios when the constraints allow it, otherwise "
        "projected onto the "
        "constraints (Euclidean projection, a convex QP solved by HiGHS); see "
        "hieropt.studies.heuristics",
        f"comparison computed in {comp.seconds:,.2f} s",
    ]
    if front is not None:
        notes += list(front.notes)
    if front_error:
        notes.append(f"no Pareto front figure: {front_error}")
    return notes


def write_report(
    comp: Comparison,
    front: Any | None,
    out_dir: str | Path,
    front_error: str | None = None,
    committee: Committee | None = None,
    compared_note: str | None = None,
) -> dict[str, Any]:
    """Write the PNG figures, ``report.html`` and ``report.json`` into ``out_dir`` (created if
    missing); returns the report dict written to ``report.json`` (with ``committee``: its
    :meth:`~hieropt.report.committee.Committee.to_dict` under ``committee``, and its sections first
    on the page). ``compared_note``: why the comparison's objective is not the instance's
    (:func:`hieropt.studies.compare.comparison_objective`), first among the notes and in the
    comparison's heading."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figs = figure_data(comp, front)
    paths = write_figures(figs, out)
    images = {p.name: p.read_bytes() for p in paths}
    data = comparison_dict(comp)
    calibration = instance_calibration(comp.instance)
    # the buyer's figures of the optimum
    data["display"]["headline"] += run_lines(comp.optimum.run, calibration)
    notes = ([compared_note] if compared_note else []) + report_notes(comp, front, front_error)
    notes += run_notes(comp.optimum.run, calibration)
    if comp.instance.relative_time:  # (the page's footer says ns: not for these times)
        notes.append(f"the workloads are weighted by shares of hours: every iteration time on "
                     f"this page is the hour-weighted ratio ({RELATIVE_UNIT}), the sum over "
                     "the workloads of hours share x iteration time / own optimum, not ns or ms")
    data["figures"] = figs
    data["notes"] = notes
    if front is not None:
        data["front"] = [{"budget_usd": p.budget_usd, "network_cost_usd": p.network_cost_usd,
                          "iteration_time_ns": p.iteration_time_ns, "gap": gap_or_none(p.gap),
                          "status": p.status.value, "bw_gbps_per_dim": floats(p.bw)}
                         for p in front.points]
    if committee is not None:
        data["committee"] = committee.to_dict()
    data["files"] = [p.name for p in paths] + ["report.html", "report.json"]
    text = report_json(out, data)
    write_atomic(out / "report.html", html_page(comp, data["display"], images, notes, committee))
    write_atomic(out / "report.json", text)
    return data


def report_json(out: Path, data: dict[str, Any]) -> str:
    """The text of ``out``/report.json for ``data``, made before the page is written.

    Raises:
        InputError: a NaN or infinity in ``data`` (:func:`hieropt.io.files.json_text`); nothing is
            written (``hieropt report`` then removes an earlier run's report from ``out``:
            :func:`hieropt.cli.outputs.answer_outputs`).
    """
    return json_text(data, str(out / "report.json"))


def codesign_detail(data: dict[str, Any]) -> list[str]:
    """The detail sections of a co-design result (``codesign --json``): the search's counts, the
    ranked candidates and the catalog shortlist, as tables with units."""
    counts = {
        "candidates": data.get("candidates"),
        "solved": data.get("solved"),
        "pruned": data.get("pruned"),
        "infeasible by time bound": data.get("infeasible_by_bound"),
        "resumed": data.get("resumed"),
        "seconds": round(float(data.get("seconds") or 0.0), 2),
    }
    parts = [
        "<h2>Detail: the co-design search</h2>",
        _table_html({"columns": list(counts), "rows": [list(counts.values())]}, numeric_from=0),
    ]
    cols = [
        "rank",
        "plan",
        "network",
        "iteration ms",
        "compute ms",
        "bubble ms",
        "exposed communication ms",
        "memory GB per NPU",
        "network $",
        "GB/s per NPU",
    ]
    rows = [
        [
            r.get("rank") if r.get("rank_exact", True) else f">={r.get('rank')}",
            r["plan"],
            r["shape"],
            fmt_ms(r["iteration_time_ns"]),
            fmt_ms(r.get("compute_ns")),
            fmt_ms(r.get("bubble_ns")),
            fmt_ms(r.get("communication_ns")),
            f"{(r.get('memory_bytes') or 0) / 1e9:,.1f}",
            fmt_usd(r["network_cost_usd"]),
            ", ".join(fmt_bw(b) for b in r.get("bw_gbps") or ()),
        ]
        for r in data.get("ranking") or []
        if r.get("iteration_time_ns") is not None
    ]
    parts += [
        "<h3>Ranked candidates</h3>" + (
            "<p>&gt;=r: rank r among the solved candidates only (a candidate not solved may "
            "rank ahead; the space's rank is at least r).</p>"
            if any(r.get("rank_exact") is False for r in data.get("ranking") or []) else ""),
        _table_html({"columns": cols, "rows": rows}, numeric_from=3),
    ]
    prov = data.get("provisioned") or []
    if prov:
        pcols = ["bom rank", "candidate", "iteration ms", "catalog $", "power kW", "parts"]
        prows = [
            [
                p.get("bom_rank") or "-",
                p["id"],
                fmt_ms(p.get("iteration_time_ns")),
                fmt_usd(p.get("network_cost_usd")),
                "-" if p.get("power_w") is None else f"{p['power_w'] / 1e3:,.1f}",
                "; ".join(p.get("parts") or [p.get("message", "")]),
            ]
            for p in prov
        ]
        parts += ["<h3>Provisioned from the catalog (whole parts)</h3>",
                  _table_html({"columns": pcols, "rows": prows}, numeric_from=2)]
    return parts


def write_codesign_report(
    committee: Committee, data: dict[str, Any], out_dir: str | Path
) -> dict[str, Any]:
    """Write ``report.html`` and ``report.json`` of a co-design result into ``out_dir`` (created if
    missing): the committee's sections, then :func:`codesign_detail`. Returns the dict written to
    ``report.json``: the committee's under ``committee``, the result under ``codesign``, the
    files."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = committee.name
    report = {
        "committee": committee.to_dict(),
        "codesign": data,
        "files": ["report.html", "report.json"],
    }
    text = report_json(out, report)
    write_atomic(
        out / "report.html",
        page(
            f"hieropt: committee page - {name}",
            f"Which cluster to buy: {name}",
            [*committee_sections(committee), *codesign_detail(data)],
        ),
    )
    write_atomic(out / "report.json", text)
    return report
