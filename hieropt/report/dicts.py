"""JSON-ready dicts (and the CSV of a front) of instances, solutions, breakdowns and fronts. Returns values; never
writes."""

from __future__ import annotations

from typing import Any

from ..model.timing import Breakdown
from ..result import Solution
from ..spec import Instance
from .common import floats
from .portfolio import portfolio_dict
from .sensitivity import sensitivity_dict


def breakdown_dict(bd: Breakdown) -> dict[str, Any]:
    """JSON-ready breakdown (units in the keys)."""
    return {
        "bw_gbps_per_dim": floats(bd.bw_gbps),
        "iteration_time_ns": bd.iteration_time_ns,
        "compute_ns": bd.compute_ns,
        "communication_ns": bd.communication_ns,
        "communication_by_phase_ns": bd.communication_by_phase_ns,
        "bytes_per_dim": floats(bd.bytes_per_dim),
        "busy_ns_per_dim": floats(bd.busy_ns_per_dim),
        "utilisation_per_dim": floats(bd.utilisation_per_dim),
        "bottleneck_ns_per_dim": floats(bd.bottleneck_ns_per_dim),
        "cost_usd_per_dim": floats(bd.cost_per_dim_usd),
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
        "collectives_in_flight": instance.collectives_in_flight,
        "chunks": instance.chunks,
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
        "bw_gbps_per_dim": floats(sol.bw_gbps),
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
        "sensitivity": sensitivity_dict(sol.sensitivity),
        "portfolio": portfolio_dict(sol.portfolio),
        "instance": instance_dict(instance),
    }


def _point_dict(p: Any) -> dict[str, Any]:
    return {"budget_usd": p.budget_usd, "network_cost_usd": p.network_cost_usd,
            "iteration_time_ns": p.iteration_time_ns, "lower_bound_ns": p.lower_bound_ns, "gap": p.gap,
            "bw_gbps_per_dim": floats(p.bw)}


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
