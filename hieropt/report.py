"""Presentation: rich tables and JSON-ready dicts of solutions and breakdowns. Returns values; never prints."""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.table import Table
from rich.text import Text

from .result import Solution
from .spec import Instance
from .timing import Breakdown
from .verify import constraint_violations


def _ms(ns: float) -> str:
    return f"{ns / 1e6:,.4f}"


def dimension_table(instance: Instance, bd: Breakdown, title: str) -> Table:
    """Per-dimension table: building block, NPUs, bandwidth, traffic, busy time, utilisation, cost."""
    t = Table(title=title, title_justify="left")
    for col in ("dim", "block", "NPUs", "class", "GB/s/NPU", "GB sent", "busy ms", "util", "slowest ms", "cost $"):
        t.add_column(col, justify="left" if col in ("block", "class") else "right")
    t.caption = ("GB/s/NPU: per-NPU bandwidth; GB sent: bytes each NPU sends on the dimension per iteration; busy: "
                 "time the dimension transmits; util: busy / iteration time; slowest: collective time during which "
                 "it is the slowest dimension")
    for d, dim in enumerate(instance.network.dims):
        t.add_row(str(d), dim.block, str(dim.npus), dim.cost_class, f"{bd.bw_gbps[d]:,.3f}",
                  f"{bd.bytes_per_dim[d] / 1e9:,.4f}", _ms(bd.busy_ns_per_dim[d]), f"{bd.utilisation_per_dim[d]:.1%}",
                  _ms(bd.bottleneck_ns_per_dim[d]), f"{bd.cost_per_dim_usd[d]:,.0f}")
    return t


def time_table(bd: Breakdown) -> Table:
    """Iteration time split into compute and per-phase communication (ms)."""
    t = Table(title="Iteration time (no_overlap)", title_justify="left")
    t.add_column("part")
    t.add_column("time (ms)", justify="right")
    t.add_column("share", justify="right")
    T = bd.iteration_time_ns
    rows = [("compute", bd.compute_ns)] + [(f"communication: {p}", v) for p, v in bd.communication_by_phase_ns.items()]
    for name, v in rows:
        t.add_row(name, _ms(v), f"{v / T:.1%}" if T > 0 else "-")
    t.add_row(Text("iteration", style="bold"), Text(_ms(T), style="bold"), "100.0%")
    return t


def summary_lines(instance: Instance, sol: Solution) -> list[str]:
    """Headline lines: status, time with proven bound and gap, cost, solve statistics, notes."""
    lines = [
        f"instance {instance.name}: {instance.network.npus_total:,} NPUs, {instance.network.n_dims} dimensions, "
        f"objective {sol.objective}, loop {instance.training_loop}",
        f"status: {sol.status.value} ({sol.message})",
        f"iteration time: {sol.iteration_time_ns:,.1f} ns ({sol.iteration_time_ns / 1e6:,.6f} ms)"
        + (f"; proven lower bound {sol.lower_bound_ns:,.1f} ns" if sol.lower_bound_ns is not None else ""),
        f"network cost: ${sol.network_cost_usd:,.0f}",
    ]
    mp = instance.mapping
    lines.insert(1, f"mapping (group size per dimension): forward {list(mp.forward)}, input_grad "
                 f"{list(mp.input_grad)}, weight_grad {list(mp.weight_grad)}"
                 + (f" — {instance.mapping_note}" if instance.mapping_note else ""))
    if sol.objective != "performance":
        unit = {"USD": "$", "ns*USD": "ns x $"}[sol.objective_unit]
        lines.append(f"objective {sol.objective}: {sol.objective_value:.10g} {unit}; proven lower bound "
                     f"{sol.objective_bound:.10g} {unit}")
    lines.append(f"relative gap {sol.gap:.2e} (proven)")
    if "kappa_evaluations" in sol.extra:
        lines.append(f"global search: {sol.extra['kappa_nodes']} branch-and-bound nodes, "
                     f"{sol.extra['kappa_evaluations']} convex sub-solves over costs "
                     f"${sol.extra['kappa_range_usd'][0]:,.0f} .. ${sol.extra['kappa_range_usd'][1]:,.0f}")
    lines.append(f"solved in {sol.solve_seconds * 1e3:.1f} ms: {sol.iterations} LPs, {sol.extra.get('cuts', 0)} cuts, "
                 f"{sol.extra.get('collectives', 0)} collectives aggregated into {sol.extra.get('terms', 0)} terms; "
                 "verified by the independent evaluator")
    lines += [f"note: {n}" for n in sol.notes]
    return lines


def evaluation_lines(instance: Instance, bd: Breakdown) -> list[str]:
    """Headline lines of an evaluation, including any violated design constraint."""
    lines = [f"iteration time: {bd.iteration_time_ns:,.1f} ns ({bd.iteration_time_ns / 1e6:,.6f} ms)",
             f"network cost: ${bd.network_cost_usd:,.0f}"]
    for text, v in constraint_violations(instance, bd.bw_gbps):
        lines.append(f"warning: violates design constraint {text} (relative violation {v:.3g})")
    return lines


def _arr(a: np.ndarray) -> list[float]:
    return [float(x) for x in a]


def breakdown_dict(bd: Breakdown) -> dict[str, Any]:
    """JSON-ready breakdown (units in the keys)."""
    return {
        "bw_gbps_per_dim": _arr(bd.bw_gbps),
        "iteration_time_ns": bd.iteration_time_ns,
        "compute_ns": bd.compute_ns,
        "communication_ns": bd.communication_ns,
        "communication_by_phase_ns": bd.communication_by_phase_ns,
        "bytes_per_dim": _arr(bd.bytes_per_dim),
        "busy_ns_per_dim": _arr(bd.busy_ns_per_dim),
        "utilisation_per_dim": _arr(bd.utilisation_per_dim),
        "bottleneck_ns_per_dim": _arr(bd.bottleneck_ns_per_dim),
        "cost_usd_per_dim": _arr(bd.cost_per_dim_usd),
        "network_cost_usd": bd.network_cost_usd,
    }


def instance_dict(instance: Instance) -> dict[str, Any]:
    """The instance echoed into JSON output (workload summarised by name and layer count)."""
    return {
        "name": instance.name,
        "objective": instance.objective,
        "training_loop": instance.training_loop,
        "network": [d.model_dump() for d in instance.network.dims],
        "npus": instance.network.npus_total,
        "workload": {"name": instance.workload.name, "layers": len(instance.workload.layers),
                     "policy": instance.workload.policy},
        "mapping": instance.mapping.model_dump(),
        "cost": {k: v.model_dump() for k, v in instance.cost.classes.items()},
        "mapping_note": instance.mapping_note,
        "more_workloads": [{"name": j.workload.name, "layers": len(j.workload.layers), "weight": j.weight,
                            "mapping": j.mapping.model_dump()} for j in instance.more_workloads],
        "workload_weight": instance.workload_weight,
        "dimension_mode": instance.dimension_mode,
        "pipeline": instance.pipeline.model_dump() if instance.pipeline else None,
        "constraints": [c.text for c in instance.constraints],
        "max_iteration_time_ns": instance.max_iteration_time_ns,
        "max_network_cost_usd": instance.max_network_cost_usd,
        "bounds": [b.model_dump() for b in instance.bounds_or_default],
    }


def solution_dict(instance: Instance, sol: Solution) -> dict[str, Any]:
    """JSON-ready solution: status, bandwidths, times, bound, gap, cost, statistics, breakdown, instance echo."""
    return {
        "units": {"bw": "GB/s per NPU per dimension (1 GB = 1e9 bytes)", "time": "ns", "cost": "USD",
                  "bytes": "bytes per NPU"},
        "status": sol.status.value,
        "message": sol.message,
        "objective": sol.objective,
        "bw_gbps_per_dim": _arr(sol.bw_gbps),
        "iteration_time_ns": sol.iteration_time_ns,
        "lower_bound_ns": sol.lower_bound_ns,
        "objective_value": sol.objective_value,
        "objective_bound": sol.objective_bound,
        "objective_unit": sol.objective_unit,
        "gap": sol.gap,
        "network_cost_usd": sol.network_cost_usd,
        "iterations": sol.iterations,
        "solve_seconds": sol.solve_seconds,
        "method": sol.method,
        "notes": list(sol.notes),
        "extra": sol.extra,
        "breakdown": breakdown_dict(sol.breakdown),
        "instance": instance_dict(instance),
    }


def front_table(instance: Instance, front: Any) -> Table:
    """Table of the Pareto front: budget, cost, iteration time, gap and bandwidth per dimension."""
    t = Table(title=f"Time-cost Pareto front ({len(front.points)} budgets, each point proven optimal)",
              title_justify="left")
    for col in ("#", "budget $", "cost $", "iteration ms", "gap"):
        t.add_column(col, justify="right")
    for d in range(instance.network.n_dims):
        t.add_column(f"bw[{d}] GB/s", justify="right")
    for i, p in enumerate(front.points):
        t.add_row(str(i + 1), f"{p.budget_usd:,.0f}", f"{p.network_cost_usd:,.0f}", _ms(p.iteration_time_ns),
                  f"{p.gap:.1e}", *(f"{b:,.3f}" for b in p.bw))
    return t


def front_lines(front: Any) -> list[str]:
    """The marked optima, notes and timing of a front."""
    f = front.fastest
    lines = [] if f is None else [
        f"fastest (performance optimum): {_ms(f.iteration_time_ns)} ms at ${f.network_cost_usd:,.0f}"]
    b = front.best_per_cost
    if b is not None:
        lines.append(f"best performance per cost: {_ms(b.iteration_time_ns)} ms at ${b.network_cost_usd:,.0f} "
                     f"(time x cost {b.objective_value:.6g} ns x $, gap {b.gap:.1e})")
    lines += [f"note: {n}" for n in front.notes]
    lines.append(f"front solved in {front.solve_seconds * 1e3:.0f} ms ({front.lps} LPs on one persistent LP)")
    return lines


def _point_dict(p: Any) -> dict[str, Any]:
    return {"budget_usd": p.budget_usd, "network_cost_usd": p.network_cost_usd,
            "iteration_time_ns": p.iteration_time_ns, "lower_bound_ns": p.lower_bound_ns, "gap": p.gap,
            "bw_gbps_per_dim": _arr(p.bw)}


def front_dict(instance: Instance, front: Any) -> dict[str, Any]:
    """JSON-ready front: points, the two marked optima, notes, timing, instance echo."""
    return {
        "units": {"bw": "GB/s per NPU per dimension (1 GB = 1e9 bytes)", "time": "ns", "cost": "USD"},
        "points": [_point_dict(p) for p in front.points],
        "fastest": solution_dict(instance, front.fastest) if front.fastest else None,
        "best_per_cost": solution_dict(instance, front.best_per_cost) if front.best_per_cost else None,
        "notes": list(front.notes),
        "solve_seconds": front.solve_seconds,
        "lps": front.lps,
        "instance": instance_dict(instance),
    }


def front_csv(instance: Instance, front: Any) -> str:
    """The front as CSV text (one row per budget; units in the header)."""
    head = ["budget_usd", "network_cost_usd", "iteration_time_ns", "lower_bound_ns", "gap"]
    head += [f"bw{d}_gbps" for d in range(instance.network.n_dims)]
    rows = [",".join(head)]
    for p in front.points:
        vals = [p.budget_usd, p.network_cost_usd, p.iteration_time_ns, p.lower_bound_ns, p.gap, *p.bw]
        rows.append(",".join(repr(float(v)) for v in vals))
    return "\n".join(rows) + "\n"


def plot_front(instance: Instance, front: Any, path: Any) -> None:
    """Draw the front (cost $M vs iteration time ms) with the two optima marked, to a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    cost = [p.network_cost_usd / 1e6 for p in front.points]
    time_ms = [p.iteration_time_ns / 1e6 for p in front.points]
    ax.plot(cost, time_ms, "o-", ms=3, lw=1.2, label="Pareto front (fastest network per budget)")
    f = front.fastest
    if f is not None:
        ax.plot(f.network_cost_usd / 1e6, f.iteration_time_ns / 1e6, "s", ms=9, color="tab:red",
                label="performance optimum")
    b = front.best_per_cost
    if b is not None:
        ax.plot(b.network_cost_usd / 1e6, b.iteration_time_ns / 1e6, "*", ms=13, color="tab:green",
                label="performance-per-cost optimum")
    ax.set_xlabel("network cost (M$)")
    ax.set_ylabel("iteration time (ms)")
    ax.set_title(f"{instance.name}: {instance.network.npus_total:,} NPUs, {instance.network.n_dims} dimensions")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
