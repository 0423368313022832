"""The JSON of ``hieropt validate`` and ``hieropt calibrate`` (:meth:`Validation.to_dict`,
:meth:`Calibration.to_dict`): every run's predicted and measured iteration time and error, the
summary (MAPE and worst error as fractions; null when undefined), per file and per group, and the
calibrations applied. Returns dicts; never writes. (Typed ``Any``: the result modules import this
one, lazily.)"""

from __future__ import annotations

import math
from typing import Any


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def calibration_dict(c: Any) -> dict[str, Any]:
    """A calibration as JSON: accelerator, fitted values, bounds, quality, runs, files, loss."""
    return {
        "npu": c.npu,
        "values": dict(c.values),
        "fields": [{"name": f.name, "lower": f.lower, "upper": f.upper} for f in c.fields],
        "mape": _finite(c.mape),
        "worst": _finite(c.worst),
        "runs": c.runs,
        "measurements": c.measurements or c.runs,
        "files": list(c.files),
        "loss": c.loss,
        "evaluations": c.evaluations,
        "at_bound": list(c.at_bound),
        "contradictions": list(c.contradictions),
    }


def plan_dict(plan: Any) -> dict[str, int]:
    """The plan a row resolves to (:class:`hieropt.workloads.llm.params.Plan`), as JSON: ``npus``
    (tp x cp x pp x dp), ``tp``, ``cp``, ``pp``, ``dp``, ``ep`` (1: not used)."""
    return {"npus": plan.total_npus, "tp": plan.tp, "cp": plan.cp, "pp": plan.pp, "dp": plan.dp,
            "ep": plan.ep}


def validation_dict(v: Any) -> dict[str, Any]:
    """The result as JSON: ``rows`` in the files' order (``predicted_ms``, ``measured_ms``,
    ``error``, ...), ``summary`` (MAPE and worst as fractions; null when undefined), ``files``,
    ``groups``, ``calibrations``, ``notes``."""
    rows = [
        {
            "file": str(x.run.path),
            "line": x.run.line,
            "run": x.run.label,
            **plan_dict(x.run.params.plan),
            "group": x.run.group,
            "source": x.run.source,
            "measured_ms": x.run.measured_ms,
            "predicted_ms": x.predicted_ms,
            "error": x.error,
            "calibrated": x.calibrated or None,
            "in_sample": x.in_sample,
            "repeat_measurement": x.repeat_measurement,
            "repeats": x.repeats or None,
            "fits_memory": x.fits_memory,
        }
        for x in v.rows
    ]
    return {
        "rows": rows,
        "summary": {
            "runs": sum(x.counted for x in v.rows),
            "mape": _finite(v.mape),
            "worst": _finite(v.worst),
        },
        "files": [
            {"file": f, "runs": n, "mape": _finite(m), "worst": _finite(w)}
            for f, (n, m, w) in v.by_file.items()
        ],
        "groups": [
            {
                "file": g.file,
                "group": g.group,
                "runs": g.runs,
                "spearman": _finite(g.spearman),
                "predicted_fastest_measured_rank": g.fastest_rank if g.fastest_tied < 2
                else None,
                "predicted_fastest_tied": g.fastest_tied,
                "worst_ratio_error": _finite(g.ratio_error),
            }
            for g in v.groups
        ],
        "calibrations": [calibration_dict(c) for c in v.calibrations],
        "notes": list(v.notes),
    }
