"""A co-design row's plan and buyer's figures (:func:`row_run`: tokens/s, MFU, days, $ and the
caveats on its bandwidths), from the row and its space alone: the one computation behind a search's
best (:meth:`hieropt.studies.codesign.search.Codesign.run`), the command's run line and JSON, and
every column of the committee page."""

from __future__ import annotations

from typing import Any

from ...model.run import RunFigures, figures
from ...workloads.llm.flops import training_of
from ...workloads.llm.params import LLMParams
from ...workloads.llm.space import CodesignSpace, PlanChoices
from ..explore.enumerate import shape_npus
from .plans import plan_params


def row_params(space: CodesignSpace, row: dict[str, Any]) -> LLMParams:
    """The plan of a row (:data:`~hieropt.studies.codesign.rows.COLUMNS`): the space's model with
    the row's plan fields, built as the search built it
    (:func:`~hieropt.studies.codesign.plans.plan_params`), its ``recompute_layers`` the row's when
    it gives one (a row of an older results file or JSON has none: the space's), and its ``cp``
    the row's when it gives one (an older result's space holds no ``cp``: its rows' is npus / (tp
    pp dp), :func:`~hieropt.studies.codesign.rows.with_added_columns`)."""
    choice = {k: row[k] for k in PlanChoices.model_fields if k in row and row[k] is not None}
    if row.get("cp"):
        choice["cp"] = row["cp"]
    if row.get("recompute_layers") is not None and row.get("recompute") == "full":
        choice["recompute_layers"] = row["recompute_layers"]
    for k in ("sequence_parallel", "overlap_grad_reduce"):
        if k in choice:
            choice[k] = bool(choice[k])
    return plan_params(space.base, row["npus"] or space.npus, choice)


def row_bw(row: dict[str, Any]) -> list[float] | None:
    """A co-design row's ``bw_gbps`` (GB/s per NPU per dimension, innermost first) as floats: a
    list, or the ``;``-separated text of a results file; None when the row has none (not
    solved)."""
    v = row.get("bw_gbps")
    if v is None or v == "":
        return None
    if isinstance(v, str):
        return [float(x) for x in v.split(";") if x.strip()]
    return [float(x) for x in v]


def row_run(space: CodesignSpace, row: dict[str, Any], tokens: float | None) -> RunFigures:
    """The buyer's figures of a solved ``row`` of ``space`` (:func:`hieropt.model.run.figures`):
    its plan's tokens and FLOPs, its iteration time (ns) and network cost ($), a run of ``tokens``
    tokens (None: no run, so no days or $ per run), the space's ``cluster`` if it has one, and the
    caveats on the bandwidths its NPU cannot have (GB/s per NPU, the row's ``bw_gbps``)."""
    params = row_params(space, row)
    return figures(training_of(params), row["npus"] or space.npus,
                   float(row["iteration_time_ns"]), float(row["network_cost_usd"]),
                   tokens,
                   getattr(space, "cluster", None), params.workload_name, row_bw(row),
                   row.get("scaleout_gbps_per_npu"), space=True,
                   dims_npus=shape_npus(row["shape"]))


def row_calibration(space: Any, row: dict[str, Any]) -> str | None:
    """The accelerator whose shipped default calibration timed a co-design ``row`` of ``space``
    (a :class:`hieropt.workloads.llm.space.CodesignSpace`), or its calibrated accelerator file
    (:func:`hieropt.io.npus.calibration_of` of its plan's NPU), else None."""
    from ...io.npus import calibration_of

    return calibration_of(row_params(space, row).npu)


__all__ = ["row_params", "row_bw", "row_run", "row_calibration"]
