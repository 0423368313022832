"""The JSON of ``hieropt provision`` (:meth:`hieropt.solvers.provision.Provisioning.to_dict`) and
the names of its roundings (typed ``Any``: the result module imports this one lazily)."""

from __future__ import annotations

import math
from typing import Any


def _gap(gap: float | None) -> float | None:
    """A relative gap for JSON: None when not a finite number."""
    return None if gap is None or not math.isfinite(gap) else float(gap)


ROUNDING_REL = 1e-4
"""How far (relative) a rounding's bandwidth may lie past the continuous optimum's and still count
as rounded its way (the rounding's own slack)."""


def against_the_rounding(p: Any, r: Any) -> list[int]:
    """The dimensions rounding ``r`` of ``p`` moved against its name (``down``: raised to one unit;
    ``up``: held at the unit limit); [] for ``best``, an infeasible rounding or no continuous
    optimum."""
    if r.bw_gbps is None or p.continuous is None or r.name not in ("down", "up"):
        return []
    sign = 1.0 if r.name == "down" else -1.0
    return [d for d, (b, c) in enumerate(zip(r.bw_gbps, p.continuous.bw_gbps, strict=True))
            if sign * (b - c) > ROUNDING_REL * max(abs(c), 1e-12)]


def rounding_label(p: Any, r: Any) -> str:
    """The table's name of rounding ``r``: ``round down``, ``round up``, ``round best``, with the
    dimensions that went the other way (``round down, dim 3 up to 1 unit``; ``up to 7 units``: the
    fewest link ports of a FullyConnected 8, one per peer; a Switch dimension below one unit of
    a NIC part reads ``up to 1 unit``, whatever parts buy that bandwidth)."""
    dims = against_the_rounding(p, r)
    if not dims:
        return f"round {r.name}"
    which = f"dim{'s' if len(dims) > 1 else ''} {', '.join(map(str, dims))}"
    # (link ports: one per peer at the fewest; a Switch dimension: one unit of some NIC part)
    fewest = {1 if r.design[d].kind == "nic" else r.design[d].units for d in dims}
    units = (f"{min(fewest)} unit{'s' if min(fewest) > 1 else ''}" if len(fewest) == 1
             else "the fewest units")
    how = f"up to {units}" if r.name == "down" else "down to the unit limit"
    return f"round {r.name}, {which} {how}"


BOM_KEYS = ("dim", "kind", "item", "quantity", "unit_usd", "cost_usd", "unit_watts", "watts")
"""The keys of a bill-of-materials line in the JSON (:class:`hieropt.model.options.BomLine`'s
fields)."""


def _floats(bw: Any) -> list[float] | None:
    """Bandwidths (GB/s) as a JSON list, or None."""
    return None if bw is None else [float(x) for x in bw]


def provision_dict(instance: Any, p: Any) -> dict[str, Any]:
    """JSON-ready provisioning result (units in the keys)."""
    c = p.continuous
    return {
        "units": {"bw": "GB/s per NPU per dimension, per direction (1 GB = 1e9 bytes)",
                  "time": "ns", "cost": "USD", "power": "W", "objective": p.objective_unit},
        "instance": instance.name, "catalog": p.catalog, "status": p.status.value,
        "message": p.message, "objective": p.objective,
        "max_iteration_time_ns": p.max_iteration_time_ns, "max_cost_usd": p.max_cost_usd,
        "max_power_w": p.max_power_w, "objective_value": p.objective_value,
        "objective_bound": p.objective_bound, "gap": _gap(p.gap),
        "iteration_time_ns": p.iteration_time_ns, "network_cost_usd": p.network_cost_usd,
        "power_w": p.power_w, "bw_gbps_per_dim": _floats(p.bw_gbps),
        "design": [o.to_dict() for o in p.design],
        "bom": [{k: getattr(b, k) for k in BOM_KEYS} for b in p.bom],
        "continuous": None if c is None else {
            "bw_gbps_per_dim": _floats(c.bw_gbps), "iteration_time_ns": c.iteration_time_ns,
            "gap": _gap(c.gap), "integer_premium": p.continuous_gap},
        "continuous_note": p.continuous_note,
        "roundings": [{
            "name": r.name, "label": rounding_label(p, r), "description": r.description,
            "feasible": r.feasible, "bw_gbps_per_dim": _floats(r.bw_gbps),
            "iteration_time_ns": r.iteration_time_ns, "network_cost_usd": r.network_cost_usd,
            "objective_value": r.objective_value, "saving": r.saving} for r in p.roundings],
        "options_per_dim": list(p.options), "milp_solves": p.milp_solves,
        "milp_seconds": p.milp_seconds, "solve_seconds": p.solve_seconds, "method": p.method,
        "notes": list(p.notes), "extra": p.extra,
    }
