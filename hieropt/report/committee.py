"""The committee page (``hieropt report --committee``): the recommendation first (cluster size, fabric, days, $ per
run, MW, MFU), the alternatives side by side (fastest, knee, performance per network cost, min $ per run), the
time-cost front in $ per run against days, and the detail; one self-contained HTML file and its JSON. Returns
values or writes the paths it is given."""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

from ..studies.committee import Answer, Committee
from .run import fmt_money, fmt_tokens

_CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 24px auto; max-width: 1200px;
       color: #222; padding: 0 16px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.5em; border-bottom: 1px solid #ddd; }
.rec { display: grid; grid-template-columns: repeat(4, 1fr); gap: 10px; }
.rec div { border: 1px solid #cde; background: #f3f8fd; padding: 8px 10px; border-radius: 4px; }
.rec .k { color: #567; font-size: 0.8em; } .rec .v { font-size: 1.3em; font-weight: 600; }
table { border-collapse: collapse; font-size: 0.88em; } th, td { border: 1px solid #ddd; padding: 4px 8px; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.chosen td { background: #eef6ee; font-weight: 600; } img { max-width: 100%; }
.small { color: #666; font-size: 0.85em; }
"""


def _days(x: float | None) -> str:
    return "-" if x is None else f"{x:,.1f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _mw(x: float | None) -> str:
    return "-" if x is None else f"{x:,.2f}"


def answer_dict(a: Answer) -> dict[str, Any]:
    """One answer: raw numbers (ns, $, GB/s per NPU) and the display strings of the page."""
    s, r = a.solution, a.run
    return {"label": a.label, "why": a.why, "bw_gbps_per_dim": [float(b) for b in s.bw_gbps],
            "iteration_time_ns": s.iteration_time_ns, "network_cost_usd": s.network_cost_usd, "run": r.to_dict(),
            "display": {"npus": f"{s.instance.network.npus_total:,}",
                        "fabric": ", ".join(f"{b:,.1f}" for b in s.bw_gbps) + " GB/s per NPU",
                        "iteration_ms": f"{s.iteration_time_ns / 1e6:,.1f}", "network": fmt_money(s.network_cost_usd),
                        "days": _days(r.time_to_train_days), "run_cost": fmt_money(r.run_cost_usd),
                        "power_mw": _mw(r.power_mw), "mfu": _pct(r.mfu)}}


def committee_dict(c: Committee) -> dict[str, Any]:
    """JSON-ready: the recommendation, the alternatives, the front's points with their run figures, notes."""
    inst = c.instance
    return {"instance": inst.name, "npus": inst.network.npus_total, "tokens": inst.tokens,
            "workload": inst.workload.training.model if inst.workload.training else inst.workload.name,
            "recommendation": answer_dict(c.recommendation),
            "alternatives": [answer_dict(a) for a in c.alternatives],
            "front": [{"network_cost_usd": p.network_cost_usd, "iteration_time_ns": p.iteration_time_ns,
                       "run": r.to_dict()} for p, r in c.front],
            "notes": list(c.notes)}


def _plot_png(c: Committee) -> bytes | None:
    """$ per run (or network $) against days (or iteration time) of the front, with the answers marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = c.front and c.front[0][1].run_cost_usd is not None and c.front[0][1].time_to_train_days is not None

    def xy(time_ns: float, net: float, r) -> tuple[float, float]:
        return (r.time_to_train_days, r.run_cost_usd / 1e6) if runs else (time_ns / 1e6, net / 1e6)

    if not c.front:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    pts = [xy(p.iteration_time_ns, p.network_cost_usd, r) for p, r in c.front]
    ax.plot([x for x, _ in pts], [y for _, y in pts], "o-", ms=3, lw=1.1, label="exact time-cost front")
    for a, style in zip((c.recommendation, *c.alternatives), ("*", "s", "^", "D", "v"), strict=False):
        x, y = xy(a.solution.iteration_time_ns, a.solution.network_cost_usd, a.run)
        ax.plot(x, y, style, ms=11 if style == "*" else 8, label=a.label)
    ax.set_xlabel("days to train" if runs else "iteration time (ms)")
    ax.set_ylabel("cost of a run (M USD)" if runs else "network cost (M USD)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def _row(a: dict[str, Any], rec: bool) -> str:
    d = a["display"]
    cells = [html.escape(a["label"])] + [f"<span class='num'>{html.escape(d[k])}</span>" for k in
                                         ("fabric", "iteration_ms", "network", "days", "run_cost", "power_mw", "mfu")]
    cells.append(html.escape(a["why"]))
    return (f"<tr{' class=chosen' if rec else ''}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")


def committee_html(data: dict[str, Any], png: bytes | None) -> str:
    """The page (module docstring) from :func:`committee_dict` and the plot's PNG."""
    rec = data["recommendation"]
    d = rec["display"]
    boxes = [("recommendation", rec["label"], "label"), ("NPUs", d["npus"], "npus"), ("fabric", d["fabric"], "fabric"),
             ("days to train", d["days"], "days"), ("$ per run", d["run_cost"], "run_cost"),
             ("power (MW)", d["power_mw"], "power_mw"), ("MFU", d["mfu"], "mfu"), ("network", d["network"], "network")]
    head = "".join(f"<div><span class='k'>{html.escape(k)}</span><br><span class='v' data-key='{key}'>"
                   f"{html.escape(v)}</span></div>" for k, v, key in boxes)
    cols = ("design", "GB/s per NPU", "iteration ms", "network", "days", "$ per run", "MW", "MFU", "why")
    table = ("<table id='alternatives'><thead><tr>" + "".join(f"<th>{c}</th>" for c in cols) + "</tr></thead><tbody>"
             + _row(rec, True) + "".join(_row(a, False) for a in data["alternatives"]) + "</tbody></table>")
    img = "" if png is None else (f"<img alt='time-cost front' src='data:image/png;base64,"
                                  f"{base64.b64encode(png).decode('ascii')}'>")
    tokens = f"{fmt_tokens(data['tokens'])} tokens" if data["tokens"] else "no token budget"
    return "\n".join([
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>hieropt: {html.escape(data['instance'])} for the committee</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(data['instance'])}: {html.escape(data['workload'])}, {data['npus']:,} NPUs, "
        f"{html.escape(tokens)}</h1>",
        f"<h2>Recommendation</h2><div class='rec' id='headline'>{head}</div>",
        f"<p class='small'>{html.escape(rec['why'])}</p>",
        "<h2>Alternatives side by side</h2>", table,
        "<h2>$ per run against days to train</h2>", img,
        "<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in data["notes"]) + "</ul>",
        "<p class='small'>Every design is certified by hieropt's solvers and re-checked by its independent "
        "evaluator; days, MW and $ per run from the instance's [cluster] section and token budget.</p>",
        "</body></html>"])


def write_committee(c: Committee, out_dir: str | Path) -> dict[str, Any]:
    """Write ``committee.html`` and ``committee.json`` into ``out_dir`` (created if missing); returns the dict."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = committee_dict(c)
    (out / "committee.html").write_text(committee_html(data, _plot_png(c)), encoding="utf-8")
    data["files"] = ["committee.html", "committee.json"]
    (out / "committee.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return data


__all__ = ["committee_dict", "committee_html", "write_committee", "answer_dict"]
