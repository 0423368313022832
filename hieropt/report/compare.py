"""Presentation of a :class:`hieropt.studies.compare.Comparison`: the formatted tables (shared by
the command line, the JSON
and the HTML page, so their numbers are the same strings), JSON-ready dicts, matplotlib figures and
one self-contained HTML page. Returns values or writes the files it is given; never prints."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from ..studies.compare import Comparison, Row, dimension_name
from ..units import fmt_relative, objective_unit
from .common import (
    floats,
    fmt_bw,
    fmt_gap,
    fmt_money,
    fmt_ms,
    fmt_product,
    fmt_ratio,
    fmt_time,
    fmt_usd,
    fmt_util,
)
from .dicts import breakdown_dict, instance_dict, solution_dict

OBJECTIVE_WORDS = {"performance": "iteration time", "performance_per_cost": "time x cost",
                   "min_cost": "network cost"}


# ------------------------------------------------------------------------------------------- tables
def _dim_headers(comp: Comparison) -> list[str]:
    return [f"{dimension_name(comp.instance, d)}" for d in range(comp.instance.network.n_dims)]


def summary_table(comp: Comparison) -> dict[str, list]:
    """Columns and rows (strings) of the main table: time, cost, time x cost, gap, speed-up,
    bottleneck."""
    # (the objective's time is then the weighted sum of the workloads')
    several = len(comp.instance.jobs) > 1
    rel = comp.instance.relative_time  # (shares of hours: the hour-weighted ratio, not ms)
    cols = [
        "design",
        "hour-weighted ratio" if rel else "weighted iteration ms" if several else "iteration ms",
        "network cost $",
        "time x cost (ratio x $)" if rel else "time x cost (ns x $)",
        f"gap ({OBJECTIVE_WORDS[comp.objective]})",
        "optimum's speed-up",
        "bottleneck",
    ]
    rows = []
    for r in comp.rows:
        if not r.feasible:
            rows.append([r.label, "cannot be made feasible", "-", "-", "-", "-", "-"])
            continue
        gap = "optimum" if r.kind == "optimum" else fmt_gap(r.gap_pct)
        bott = (
            dimension_name(comp.instance, r.bottleneck_dim) if r.bottleneck_dim is not None else "-"
        )
        others = [str(d) for d in r.bottleneck_tied if d != r.bottleneck_dim]
        if others:
            bott += f", tied with dim {', '.join(others)}"
        rows.append(
            [
                r.label,
                fmt_time(r.iteration_time_ns, rel),
                fmt_usd(r.network_cost_usd),
                fmt_product(r.time_x_cost),
                gap,
                fmt_ratio(r.speedup),
                bott,
            ]
        )
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


def _optimum_time(comp: Comparison) -> str:
    """The optimum's (weighted) iteration time in its unit: ms, or the hour-weighted ratio of
    workloads weighted by shares of hours (:data:`hieropt.units.RELATIVE_UNIT`, never ms)."""
    inst, t = comp.instance, comp.optimum.iteration_time_ns
    n = len(inst.jobs)
    if inst.relative_time:
        return (f"{fmt_relative(t)} (sum over {n} workloads of hours share x iteration time / "
                "own optimum)")
    return f"{fmt_ms(t)} ms" + (
        f" (weighted sum over {n} workloads of weight x iteration time)" if n > 1 else "")


COST_TOLERANCE = 0.01
"""Relative difference in network cost beyond which a heuristic's performance headline states its
cost beside the optimum's: the rules are compared at the cost their ratios reach, which is the
optimum's where a ray along them can spend the whole allowance, and less where the ray is projected
onto the bounds (the square-root rule held at a dimension's floor)."""


def _other_cost(r: Row, opt: Any) -> str:
    """``", at $C of network, P% below (above) the optimum's $C*"`` when heuristic row ``r``'s
    network cost differs from the optimum ``opt``'s by more than :data:`COST_TOLERANCE`, else
    "" (the two are compared at about equal cost)."""
    dc = r.network_cost_usd - opt.network_cost_usd
    if opt.network_cost_usd <= 0 or abs(dc) <= COST_TOLERANCE * opt.network_cost_usd:
        return ""
    return (f", at {fmt_money(r.network_cost_usd)} of network, "
            f"{abs(dc) / opt.network_cost_usd:.1%} {'below' if dc < 0 else 'above'} the "
            f"optimum's {fmt_money(opt.network_cost_usd)}")


def _performance_line(r: Row, opt: Any) -> str:
    """The headline of heuristic row ``r`` against the performance optimum ``opt`` (a Solution:
    its proven relative gap and network cost): "the optimum is 1.0185x faster (+1.847% iteration
    time)"; a heuristic whose time lies within the optimum's proven gap of it (either side: the
    optimum is proven only to that gap) ties it, and the line says so with what it costs beside the
    optimum, never that the optimum is "1.0000x faster" than a design it does not beat."""
    rel = r.gap_pct / 100
    if abs(rel) > max(opt.gap, 0.0):
        if rel > 0:
            return (f"{r.label}: the optimum is {fmt_ratio(r.speedup)} faster "
                    f"({fmt_gap(r.gap_pct)} iteration time){_other_cost(r, opt)}")
        return (f"{r.label}: {fmt_gap(r.gap_pct)} iteration time against the optimum, beyond its "
                f"proven relative gap {opt.gap:.1e}{_other_cost(r, opt)}")
    dc = r.network_cost_usd - opt.network_cost_usd
    cost = ("at the same network cost" if abs(dc) < 0.005 else
            f"{fmt_money(abs(dc))} {'cheaper' if dc < 0 else 'dearer'} "
            f"({fmt_money(r.network_cost_usd)} against {fmt_money(opt.network_cost_usd)})")
    return (f"{r.label}: ties the optimum within its proven relative gap {opt.gap:.1e} "
            f"({fmt_gap(r.gap_pct)} iteration time), {cost}")


def headline_lines(comp: Comparison) -> list[str]:
    """The optimum, then the gain over each heuristic in one sentence each."""
    opt = comp.optimum
    inst = comp.instance
    lines = [
        f"instance {inst.name}: {inst.network.npus_total:,} NPUs, {inst.network.n_dims} "
        "dimensions, objective "
        f"{comp.objective}; constraints: {', '.join(c.text for c in inst.constraints) or 'none'}",
        f"exact optimum: {_optimum_time(comp)}, ${fmt_usd(opt.network_cost_usd)}, time x cost "
        f"{fmt_product(opt.iteration_time_ns * opt.network_cost_usd)} "
        f"{'ratio' if inst.relative_time else 'ns'} x $; proven relative gap "
        f"{opt.gap:.1e}; solved in {opt.solve_seconds * 1e3:,.1f} ms",
    ]
    for r in comp.heuristics:
        if not r.feasible:
            lines.append(f"{r.label}: {r.message}")
        elif comp.objective == "performance":
            lines.append(_performance_line(r, opt))
        elif comp.objective == "performance_per_cost":
            lines.append(
                f"{r.label}: the optimum gives {fmt_ratio(1 + r.gap_pct / 100)} the "
                "performance per "
                f"dollar ({fmt_gap(r.gap_pct)} time x cost)"
            )
        else:
            lines.append(
                f"{r.label}: costs {fmt_gap(r.gap_pct)} more than the optimum for the same "
                "time target"
            )
    return lines


def comparison_rich_table(comp: Comparison) -> Table:
    """The summary table for the terminal."""
    data = summary_table(comp)
    t = Table(title=f"Exact optimum versus heuristics ({comp.objective})", title_justify="left")
    for c in data["columns"]:
        t.add_column(
            c, justify="left" if c in ("design", "bottleneck") else "right", no_wrap=c == "design"
        )
    for row in data["rows"]:
        t.add_row(*(Text(v) for v in row))
    t.caption = (
        "gap: (heuristic - optimum) / optimum for the objective; speed-up: heuristic's "
        "iteration time / "
        "optimum's; bottleneck: the dimension that is the slowest for the most collective "
        "time (ties within "
        "1e-6 counted for each)"
    )
    return t


def rich_table(data: dict[str, list], title: str) -> Table:
    """Any of the string tables above as a rich table."""
    t = Table(title=title, title_justify="left")
    for i, c in enumerate(data["columns"]):
        t.add_column(c, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for row in data["rows"]:
        t.add_row(*(Text(v) for v in row))
    return t


# --------------------------------------------------------------------------------------------- JSON

def row_dict(r: Row) -> dict[str, Any]:
    """JSON-ready row (units in the keys)."""
    h = r.heuristic
    return {
        "name": r.name,
        "label": r.label,
        "kind": r.kind,
        "feasible": r.feasible,
        "message": r.message,
        "bw_gbps_per_dim": floats(r.bw),
        "iteration_time_ns": r.iteration_time_ns,
        "network_cost_usd": r.network_cost_usd,
        "time_x_cost_ns_usd": r.time_x_cost,
        "objective_value": r.objective_value,
        "gap_pct": r.gap_pct,
        "speedup": r.speedup,
        "bottleneck_dim": r.bottleneck_dim,
        "bottleneck_tied_dims": list(r.bottleneck_tied),
        "explanation": r.explanation,
        "iterations": r.iterations,
        "seconds": r.seconds,
        "utilisation_per_dim": floats(r.breakdown.utilisation_per_dim)
        if r.breakdown is not None
        else None,
        "bottleneck_ns_per_dim": floats(r.breakdown.bottleneck_ns_per_dim)
        if r.breakdown is not None
        else None,
        "breakdown": breakdown_dict(r.breakdown) if r.breakdown is not None else None,
        "heuristic": None
        if h is None
        else {
            "ratios": floats(h.ratios),
            "placement": h.placement,
            "projection_gbps": h.projection_gbps,
            "reported_gap": h.gap,
            "extra": {k: v for k, v in h.extra.items() if isinstance(v, int | float | str)},
        },
    }


def display_dict(comp: Comparison) -> dict[str, Any]:
    """Every formatted table and line, exactly as the command line and the HTML page show them."""
    return {
        "headline": headline_lines(comp),
        "summary": summary_table(comp),
        "bandwidth": bandwidth_table(comp),
        "utilisation": utilisation_table(comp),
        "explanations": explanation_table(comp),
    }


def comparison_dict(comp: Comparison) -> dict[str, Any]:
    """JSON-ready comparison: raw numbers per design, the optimum's full solution, and the display
    strings."""
    opt = solution_dict(comp.instance, comp.optimum)
    opt.pop("instance", None)
    inst = instance_dict(comp.instance)
    inst["heuristic_ratios"] = {
        k: list(v) for k, v in (comp.instance.heuristic_ratios or {}).items()
    }
    return {
        "units": {
            "bw": "GB/s per NPU per dimension (1 GB = 1e9 bytes)",
            "time": objective_unit("performance", comp.instance.relative_time),
            "cost": "USD",
            "time_x_cost": objective_unit("performance_per_cost", comp.instance.relative_time),
            "gap_pct": "% of the optimum's objective value",
        },
        "objective": comp.objective,
        "objective_unit": comp.objective_unit,
        "rows": [row_dict(r) for r in comp.rows],
        "optimum": opt,
        "display": display_dict(comp),
        "seconds": comp.seconds,
        "instance": inst,
    }


# ------------------------------------------------------------------------------------------ figures
def figure_data(comp: Comparison, front: Any | None) -> dict[str, Any]:
    """The numbers every figure plots (written to report.json, so the PNGs are checkable against
    it)."""
    feas = [r for r in comp.rows if r.feasible]
    dims = _dim_headers(comp)
    out: dict[str, Any] = {
        "bandwidth.png": {
            "title": "Bandwidth per dimension (GB/s per NPU)",
            "dims": dims,
            "series": [{"label": r.label, "values": floats(r.bw)} for r in feas],
        },
        "utilisation.png": {
            "title": "Utilisation per dimension (busy time / iteration time, %)",
            "dims": dims,
            "series": [
                {
                    "label": r.label,
                    "values": [100 * float(u) for u in r.breakdown.utilisation_per_dim],
                }
                for r in feas
            ],
        },
        "gap.png": {
            "title": f"Gap to the exact optimum ({OBJECTIVE_WORDS[comp.objective]}, %)",
            "labels": [r.label for r in feas if r.kind == "heuristic"],
            "gap_pct": [float(r.gap_pct) for r in feas if r.kind == "heuristic"],
        },
    }
    if front is not None:
        out["front.png"] = {
            "title": "Time-cost Pareto front (exact) and the heuristics",
            "time_unit": objective_unit("performance", comp.instance.relative_time),
            "front_cost_usd": [float(p.network_cost_usd) for p in front.points],
            "front_time_ns": [float(p.iteration_time_ns) for p in front.points],
            "points": [
                {
                    "label": r.label,
                    "cost_usd": float(r.network_cost_usd),
                    "time_ns": float(r.iteration_time_ns),
                }
                for r in feas
            ],
            "iso_time_x_cost": (
                float(comp.rows[0].time_x_cost)
                if comp.objective == "performance_per_cost"
                else None
            ),
        }
    return out


