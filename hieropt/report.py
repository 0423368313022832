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
        f"iteration time: {sol.iteration_time_ns:,.1f} ns ({sol.iteration_time_ns / 1e6:,.6f} ms); proven lower bound "
        f"{sol.lower_bound_ns:,.1f} ns; relative gap {sol.gap:.2e}",
        f"network cost: ${sol.network_cost_usd:,.0f}",
        f"solved in {sol.solve_seconds * 1e3:.1f} ms: {sol.iterations} LPs, {sol.extra.get('cuts', 0)} cuts, "
        f"{sol.extra.get('collectives', 0)} collectives aggregated into {sol.extra.get('terms', 0)} terms; "
        "verified by the independent evaluator",
    ]
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
        "constraints": [c.text for c in instance.constraints],
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
