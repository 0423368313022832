"""Provision the shortlisted shapes of an exploration from a parts catalog and rank them by the bill of materials.

The continuous ranking of :func:`hieropt.studies.explore.explore` prices bandwidth linearly ($ per GB/s); what is
bought is whole parts. For each of the best ``top`` shapes, :func:`provision_shortlist` builds the shape's instance
(:func:`hieropt.studies.explore.enumerate.build_instance`), keeps the catalog's classes that shape uses, and runs the
exact integer provisioning (:func:`hieropt.solvers.provision.provision`, the space's objective; its time target
when min_cost), then ranks the shapes by the integer design's proven objective (the catalog cost, not the linear
cost model). A shape the catalog cannot serve (a class without parts, no design meeting the constraints) is
listed with its reason and not ranked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import HieroptError
from ...io.catalog import read_catalog
from ...model.catalog import Catalog
from ...solvers.provision import provision
from .enumerate import build_instance
from .run import Exploration

__all__ = ["provision_shortlist"]


def provision_shortlist(result: Exploration, catalog: Catalog | str | Path, top: int = 5) -> list[dict[str, Any]]:
    """Integer designs of the ``top`` best shapes of ``result``, ranked by the provisioned objective.

    Returns:
        One dict per shape, ranked ones first (``bom_rank`` 1, 2, ...; None when not provisioned): ``shape_id``,
        ``continuous_rank``, ``continuous_objective``, ``status``, ``message``, ``objective_value`` (the integer
        design's, in ``objective_unit``), ``gap``, ``iteration_time_ns``, ``network_cost_usd`` (catalog),
        ``power_w``, ``bw_gbps`` and ``parts`` (one label per dimension).

    Raises:
        InputError: a bad catalog file or ``top`` < 1.
    """
    from ...errors import InputError

    if top < 1:
        raise InputError("--provision-top", None, f"{top} shapes", "give at least 1")
    src = None
    if not isinstance(catalog, Catalog):
        src = str(catalog)
        catalog = read_catalog(catalog)
    cands = {c.id: c for c in result.enumeration.candidates}
    space = result.space
    target = space.max_iteration_time_ns if space.objective == "min_cost" else None
    out = []
    for row in result.ranking[:top]:
        inst = build_instance(space, cands[row["shape_id"]])
        used = {d.cost_class for d in inst.network.dims}
        sub = catalog.model_copy(update={"classes": {k: v for k, v in catalog.classes.items() if k in used}})
        entry = {"shape_id": row["shape_id"], "continuous_rank": row["rank"],
                 "continuous_objective": row["objective_value"], "bom_rank": None}
        try:
            p = provision(inst, sub, objective=space.objective, max_iteration_time_ns=target, compare=False)
        except HieroptError as e:
            if src is not None and isinstance(e, InputError) and e.source == "catalog":
                e = e.with_source(src)  # (checked per shape on the catalog read once: its file is the source)
            out.append({**entry, "status": "not provisioned", "message": str(e)})
            continue
        out.append({**entry, "status": p.status.value, "message": p.message, "objective_value": p.objective_value,
                    "objective_unit": p.objective_unit, "gap": p.gap, "iteration_time_ns": p.iteration_time_ns,
                    "network_cost_usd": p.network_cost_usd, "power_w": p.power_w,
                    "bw_gbps": [float(x) for x in p.bw_gbps], "parts": [o.label() for o in p.design]})
    ranked = sorted((e for e in out if "objective_value" in e), key=lambda e: (e["objective_value"], e["shape_id"]))
    for i, e in enumerate(ranked, 1):
        e["bom_rank"] = i
    return ranked + [e for e in out if "objective_value" not in e]
