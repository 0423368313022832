"""JSON-ready dicts (and the CSV of a front) of instances, solutions, breakdowns and fronts. Returns
values; never writes."""

from __future__ import annotations

import math
from typing import Any

from ..model.run import run_figures
from ..model.timing import Breakdown
from ..result import Solution
from ..spec import Instance
from ..units import RELATIVE_UNIT, objective_unit
from .run import front_notes, instance_calibration, run_dict, run_notes


def breakdown_dict(bd: Breakdown) -> dict[str, Any]:
    """JSON-ready breakdown (units in the keys): :meth:`hieropt.model.timing.Breakdown.to_dict`."""
    return bd.to_dict()


def evaluation_dict(instance: Instance, bd: Breakdown, run: Any, notes: Any) -> dict[str, Any]:
    """What ``hieropt evaluate --json`` writes: the iteration time (ns, as ``solve --json`` has it
    at the top), the network cost ($), the breakdown, the buyer's figures ``run`` (a
    :class:`hieropt.model.run.RunFigures`), their ``notes`` and the instance echo;
    ``objective_unit`` the unit of ``iteration_time_ns``: ns, or the hour-weighted ratio of
    workloads weighted by shares of hours (:data:`hieropt.units.RELATIVE_UNIT`)."""
    return {
        "iteration_time_ns": bd.iteration_time_ns,
        "objective_unit": objective_unit("performance", instance.relative_time),
        "network_cost_usd": bd.network_cost_usd,
        "breakdown": breakdown_dict(bd),
        "run": run_dict(run, instance_calibration(instance)),
        "notes": list(notes),
        "instance": instance_dict(instance),
    }


def instance_dict(instance: Instance) -> dict[str, Any]:
    """The instance echoed into JSON output: :meth:`hieropt.spec.Instance.summary_dict`."""
    return instance.summary_dict()


def solution_dict(instance: Instance, sol: Solution) -> dict[str, Any]:
    """JSON-ready solution (the ``--json`` output): :meth:`hieropt.Solution.to_dict` with
    ``instance`` echoed, and the caveat on its run figures of a default calibration
    (:func:`hieropt.report.run.run_notes`) added to ``notes``."""
    out = sol.to_dict(instance)
    if "notes" in out:
        fig = run_figures(instance, sol.iteration_time_ns, sol.network_cost_usd,
                          bw_gbps=sol.bw_gbps)
        calibration = instance_calibration(instance)
        out["notes"] = out["notes"] + run_notes(fig, calibration)
        if out.get("run") is not None:  # (the same figures, with their band)
            out["run"] = run_dict(fig, calibration)
    return out


def front_dict(instance: Instance, front: Any) -> dict[str, Any]:
    """JSON-ready front (what ``hieropt pareto --json`` writes):
    :meth:`hieropt.solvers.front.Front.to_dict` with each point's run figures given their error
    band (:func:`hieropt.studies.run_band.run_dict`), the two marked optima as
    :func:`solution_dict`, and the plan's caveats and the calibration note added to the notes
    (:func:`hieropt.report.run.front_notes`). The points' times are in ``units.time`` =
    ``objective_unit``: ns, or the hour-weighted ratio of workloads weighted by shares of hours
    (:data:`hieropt.units.RELATIVE_UNIT`)."""
    out = front.to_dict(instance)
    calibration = instance_calibration(instance)
    for d, p in zip(out["points"], front.points, strict=True):
        d["run"] = run_dict(run_figures(instance, p.iteration_time_ns, p.network_cost_usd,
                                        bw_gbps=p.bw), calibration)
    for key in ("fastest", "best_per_cost"):
        sol = getattr(front, key)
        out[key] = solution_dict(instance, sol) if sol else None
    out["notes"] = out["notes"] + front_notes(instance, front)
    return out


def front_csv(instance: Instance, front: Any) -> str:
    """The front as CSV text (one row per budget; units in the header: the time columns are
    ``hours_weighted_ratio`` and ``lower_bound_hours_weighted_ratio`` for workloads weighted by
    shares of hours; ``gap`` and ``status`` as each point's in the JSON: the proven relative gap,
    empty when it is not finite, and ``optimal`` or ``limit``), ending with the buyer's columns
    of ``pareto``'s table and JSON, named and in the units of the JSON: ``usd_per_ms`` (the
    budget row's dual, $ per ms of iteration time; the point's ``usd_per_ms``),
    ``time_to_train_days`` (days of the token budget) and ``run_cost_usd`` ($ of the run; both
    the point's ``run`` figures, :func:`hieropt.model.run.run_figures`). A figure the point does
    not have (the budget does not bind; no token budget, no ``[cluster]``; shares of hours: no $
    per ms) is an empty cell, as the JSON's null.

    Raises:
        InputError: a NaN or infinity in a row (not a number a reader takes back), naming the row
            and column.
    """
    from ..errors import InputError
    from ..io.files import nonfinite_field

    # (shares of hours: the time columns hold the hour-weighted ratio, not ns)
    time = ([RELATIVE_UNIT, f"lower_bound_{RELATIVE_UNIT}"] if instance.relative_time
            else ["iteration_time_ns", "lower_bound_ns"])
    first = ["budget_usd", "network_cost_usd", *time, "gap"]  # (then the text column "status")
    head = [*first, *(f"bw{d}_gbps" for d in range(instance.network.n_dims))]
    head += ["usd_per_ms", "time_to_train_days", "run_cost_usd"]
    at = len(first)
    rows = [",".join([*head[:at], "status", *head[at:]])]
    for i, p in enumerate(front.points, start=1):
        run = run_figures(instance, p.iteration_time_ns, p.network_cost_usd, bw_gbps=p.bw)
        vals = [
            None if v is None else float(v)
            for v in (
                p.budget_usd,
                p.network_cost_usd,
                p.iteration_time_ns,
                p.lower_bound_ns,
                p.gap if p.gap is not None and math.isfinite(p.gap) else None,  # (as the JSON's)
                *p.bw,
                None if instance.relative_time else p.usd_per_ms,  # (as the JSON's)
                run.time_to_train_days,
                run.run_cost_usd,
            )
        ]
        bad = nonfinite_field({k: v for k, v in zip(head, vals, strict=True) if v is not None})
        if bad is not None:
            raise InputError("--csv", f"row {i}, column {bad}", "the result is not a finite number",
                             "bring the inputs that produce it into range; nothing was written")
        cells = ["" if v is None else repr(v) for v in vals]
        rows.append(",".join([*cells[:at], p.status.value, *cells[at:]]))
    return "\n".join(rows) + "\n"
