"""Lines and JSON of a cluster-size search (:class:`hieropt.studies.sizing.Sizing`): each size's best plan and
network, its $ per run (or the space's objective), days and MFU, the chosen size. Returns values; never prints."""

from __future__ import annotations

from typing import Any

from ..model.run import RunFigures
from ..studies.sizing import SizeOutcome, Sizing
from .run import codesign_run, fmt_money


def _figures(o: SizeOutcome) -> RunFigures | None:
    return None if o.result is None else codesign_run(o.result)


def _line(o: SizeOutcome, objective: str) -> str:
    b = o.best
    if b is None:
        return f"{o.npus:,} NPUs: {o.note}"
    fig = _figures(o)
    value = fmt_money(b["objective_value"]) if objective in ("min_run_cost", "min_cost") else \
        f"{b['objective_value']:.6g} {b['objective_unit']}"
    days = f", {fig.time_to_train_days:,.1f} days" if fig is not None and fig.time_to_train_days else ""
    mfu = f", MFU {fig.mfu:.1%}" if fig is not None and fig.mfu is not None else ""
    return f"{o.npus:,} NPUs: {objective} {value}{days}{mfu}; {b['id']}"


def sizing_lines(s: Sizing) -> list[str]:
    """One line per size (in the order given), then the chosen size."""
    head = f"cluster sizes ({s.objective}" + (f"; deadline: iterations within {s.target_ns / 1e6:,.1f} ms"
                                              if s.target_ns is not None else "") + "):"
    out = [head] + ["  " + _line(o, s.objective) for o in s.sizes]
    out.append(f"chosen: {s.chosen.npus:,} NPUs" if s.chosen is not None else "chosen: none (no size has an answer)")
    return out


def sizing_dict(s: Sizing) -> dict[str, Any]:
    """JSON-ready: per size its bound, best row, run figures and note; the chosen size."""
    def one(o: SizeOutcome) -> dict[str, Any]:
        fig = _figures(o)
        return {"npus": o.npus, "bound": o.bound if o.bound != float("inf") else None, "best": o.best,
                "run": None if fig is None else fig.to_dict(), "note": o.note}

    return {"objective": s.objective, "target_ns": s.target_ns, "sizes": [one(o) for o in s.sizes],
            "chosen_npus": None if s.chosen is None else s.chosen.npus}


__all__ = ["sizing_lines", "sizing_dict"]
