"""Provision the shortlisted shapes of an exploration from a parts catalog and rank them by the bill
of materials.

The continuous ranking of :func:`hieropt.studies.explore.explore` prices bandwidth linearly ($ per
GB/s); what is bought is whole parts. For each of the best ``top`` shapes,
:func:`provision_shortlist` builds the shape's instance
(:func:`hieropt.studies.explore.enumerate.build_instance`), keeps the catalog's classes that shape
uses, and runs the exact integer provisioning (:func:`hieropt.solvers.provision.provision`, the
space's objective; its time target when min_cost), then ranks the shapes by the integer design's
proven objective (the catalog cost, not the linear cost model). A shape the catalog cannot serve (a
class without parts, no design meeting the constraints) is listed with its reason and not ranked.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...errors import HieroptError, InputError
from ...io.catalog import read_catalog
from ...model.catalog import Catalog
from ...model.run import provisioned_run
from ...names import PROVISION_OBJECTIVES, with_flag
from ...solvers.provision import provision
from ...solvers.provision_milp import total_note
from ...spec import Instance
from .enumerate import build_instance
from .run import Exploration, rank_rows

__all__ = ["provision_shortlist", "provision_ranked", "provisioned_objective", "all_failed",
           "check_catalog_classes"]


def provisioned_objective(objective: str) -> tuple[str, str | None]:
    """The provisioning objective for a study's ``objective`` and the line saying so when they
    differ: integer provisioning (:data:`hieropt.names.PROVISION_OBJECTIVES`) has no
    ``min_run_cost`` (nor any other study objective): such a shortlist is provisioned for
    ``performance`` (the fastest whole-part design, the cheapest of that time) and ranked by the $
    per run of that design when every provisioned row has one."""
    if objective in PROVISION_OBJECTIVES:
        return objective, None
    return "performance", (
        f"provisioned for performance: integer provisioning has no {objective} objective; each "
        "row is the fastest whole-part design (the cheapest of that time)"
        + (", ranked by its $ per run" if objective == "min_run_cost" else ""))


def all_failed(rows: list[dict[str, Any]]) -> str | None:
    """The error line when no row of a provisioned shortlist has a design (naming the first
    row's reason), else None."""
    if not rows or any(r["bom_rank"] is not None for r in rows):
        return None
    return f"no shortlisted design could be provisioned from the catalog: {rows[0]['message']}"


def provision_shortlist(
    result: Exploration, catalog: Catalog | str | Path, top: int = 5
) -> list[dict[str, Any]]:
    """Integer designs of the ``top`` best shapes of ``result``, ranked by the provisioned
    objective.

    Returns:
        One dict per shape, ranked ones first (``bom_rank`` 1, 2, ...; None when not provisioned):
            ``shape_id``,
        ``continuous_rank``, ``continuous_objective``, ``status``, ``message``, ``objective_value``
        (the integer design's, in ``objective_unit``), ``gap``, ``iteration_time_ns``,
        ``network_cost_usd`` (catalog), ``power_w``, ``bw_gbps`` and ``parts`` (one label per
        dimension).

    Raises:
        InputError: a bad catalog file or ``top`` < 1.
    """
    if top < 1:
        raise InputError(with_flag("top", "--provision-top"), None, f"{top} shapes",
                         "give at least 1")
    cands = {c.id: c for c in result.enumeration.candidates}
    space = result.space
    target = space.max_iteration_time_ns if space.objective == "min_cost" else None
    items = (({"shape_id": row["shape_id"], "continuous_rank": row["rank"],
               "continuous_objective": row["objective_value"], "bom_rank": None},
              build_instance(space, cands[row["shape_id"]])) for row in result.ranking[:top])
    return provision_ranked(items, catalog, space.objective, target, "shape_id")


def check_catalog_classes(space: Any, catalog: str | Path) -> None:
    """Refuse, before a search, a parts catalog (a file) that has no parts for a cost class every
    network of ``space`` (a co-design space or a shape space) uses: its fixed network's classes,
    or those of its levels with ``min_dims`` >= 1 (a class only some shapes use is left to each
    candidate's provisioning), as ``codesign --catalog`` and ``explore --catalog`` check it.

    Raises:
        InputError: a bad catalog file, or naming the first class missing, the others missing, the
            catalog's classes and the fix.
    """
    given = read_catalog(catalog).classes
    if getattr(space, "network", None) is not None:
        used = [d.cost_class for d in space.network.dims]
    else:
        used = [lv.cost_class for lv in space.levels if lv.min_dims >= 1]
    missing = [c for c in dict.fromkeys(used) if c not in given]
    if not missing:
        return
    more = f" (and {', '.join(missing[1:])})" if missing[1:] else ""
    raise InputError(
        str(catalog),
        f"classes.{missing[0]}",
        f"missing: the space's every network uses cost class '{missing[0]}'{more} but the "
        f"catalog has parts for {', '.join(sorted(given))} only",
        f"add {' and '.join(f'[classes.{c}]' for c in missing)} with their parts, or give the "
        "catalog of this space's cost classes",
    )


def provision_ranked(items: Iterable[tuple[dict[str, Any], Instance]],
                     catalog: Catalog | str | Path, objective: str,
                     max_iteration_time_ns: float | None, id_key: str,
                     max_total_capex_usd: float | None = None) -> list[dict[str, Any]]:
    """Integer designs (whole parts of ``catalog``) of the given instances, ranked by the
    provisioned objective: the shared step of :func:`provision_shortlist` and
    :func:`hieropt.studies.codesign.export.provision_codesign`.

    Each instance is provisioned with the catalog's classes it uses
    (:func:`hieropt.solvers.provision.provision`).

    Args:
        items: (entry, instance) pairs, best continuous rank first; an entry is a dict holding
            ``id_key`` (the instance's name in the study) and the fields the result carries on,
            with ``bom_rank`` None.
        catalog: a :class:`~hieropt.model.catalog.Catalog`, or the path of a catalog file (read
            once, before the first instance is drawn; its errors then name the file).
        objective: the study's objective; provisioned for it, or for ``performance`` when
            provisioning has no such objective (:func:`provisioned_objective`).
        max_iteration_time_ns: the time target in ns when ``objective`` is ``min_cost``, else None.
        id_key: the entry field that orders equal objectives of equal cost (or time).
        max_total_capex_usd: a cap on the whole cluster's capex, $ (a co-design space's
            ``max_total_capex_usd``), or None: each design's parts and the facility their power
            needs within what the cap leaves the network
            (:class:`hieropt.model.capex.TotalCapex`), so its run's capex is within the cap.

    Returns:
        One dict per item: the entry plus ``status``, ``message`` and, when provisioned,
        ``objective_value`` (in ``objective_unit``), ``gap``, ``iteration_time_ns``,
        ``network_cost_usd`` (catalog $), ``power_w`` (W), ``bw_gbps`` (GB/s per NPU per
        dimension), ``parts`` (one label per dimension), ``run`` (the buyer's figures of the
        integer design, :meth:`~hieropt.model.run.RunFigures.to_dict`: days, MW, MWh, $ per run
        with the catalog's cost and the bill of materials' power, as ``hieropt provision`` gives
        them, :func:`hieropt.model.run.provisioned_run`), ``provisioned_for`` (the provisioning
        objective), ``note`` (only when that is not ``objective``) and ``network_power`` (the
        line saying which network power they count, or None), with a total cap ``total_budget``
        (the line saying the cluster's capex with the design, against the cap), and where a
        dimension was bounded at the accelerator's NIC limit ``nic_bounds`` (one line each,
        :func:`hieropt.io.nic_bound.nic_bounded`). Provisioned ones
        come first, by
        objective value (within the gap target equal, then cheapest first with the performance
        objective, else fastest first: :func:`~hieropt.studies.explore.run.rank_rows`; for
        ``min_run_cost``: by $ per run when every one has it), with ``bom_rank`` 1, 2, ...; those
        not provisioned keep ``bom_rank`` None and carry the reason in ``message``.

    Raises:
        InputError: a bad catalog file.
    """
    asked, (objective, note) = objective, provisioned_objective(objective)
    src = None
    if not isinstance(catalog, Catalog):
        src = str(catalog)
        catalog = read_catalog(catalog)
    out = []
    for entry, inst in items:
        used = {d.cost_class for d in inst.network.dims}
        sub = catalog.model_copy(
            update={"classes": {k: v for k, v in catalog.classes.items() if k in used}}
        )
        try:
            p = provision(inst, sub, objective=objective,
                          max_iteration_time_ns=max_iteration_time_ns,
                          max_total_capex_usd=max_total_capex_usd, compare=False)
        except HieroptError as e:
            if src is not None and isinstance(e, InputError) and e.source == "catalog":
                # (checked per shape on the catalog read once: its file is the source)
                e = e.with_source(src)
            out.append({**entry, "status": "not provisioned", "message": str(e)})
            continue
        run, power_line = provisioned_run(inst, p.iteration_time_ns, p.network_cost_usd,
                                          p.power_w, p.bw_gbps)
        out.append(
            {
                **entry,
                "status": p.status.value,
                "message": p.message,
                "objective_value": p.objective_value,
                "objective_unit": p.objective_unit,
                "gap": p.gap,
                "iteration_time_ns": p.iteration_time_ns,
                "network_cost_usd": p.network_cost_usd,
                "power_w": p.power_w,
                "bw_gbps": [float(x) for x in p.bw_gbps],
                "parts": [o.label() for o in p.design],
                "run": run.to_dict(),
                "network_power": power_line,
                "provisioned_for": objective,
                **({"note": note} if note else {}),
                **({"total_budget": total_note(p.total, p.design)[0]} if p.total else {}),
                **({"nic_bounds": list(p.nic_bounds)} if p.nic_bounds else {}),
            }
        )
    done = [e for e in out if "objective_value" in e]
    by_usd = asked == "min_run_cost" and all(e["run"]["run_cost_usd"] is not None for e in done)
    if by_usd:
        ranked = sorted(done, key=lambda e: (e["run"]["run_cost_usd"], e[id_key]))
    else:  # (the continuous ranking's rule: equal objectives within the gap target cheapest first)
        ranked = [{k: v for k, v in e.items() if k != "rank"}
                  for e in rank_rows(done, objective, id_key)]
    for i, e in enumerate(ranked, 1):
        e["bom_rank"] = i
    return ranked + [e for e in out if "objective_value" not in e]
