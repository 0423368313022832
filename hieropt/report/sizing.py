"""JSON of a cluster-size search (:class:`hieropt.studies.sizing.Sizing`): each size's proven
bound, best plan and network, its run figures ($ per run, days, MFU) and why it has no answer;
the chosen size. Returns values; never prints (the console shows the sizes as
:func:`hieropt.report.codesign.sizes_table`)."""

from __future__ import annotations

from typing import Any

from ..model.run import RunFigures
from ..studies.codesign.rows import json_flags
from ..studies.sizing import SizeOutcome, Sizing
from .committee_codesign import row_figures
from .run import row_calibration, run_dict


def size_figures(s: Sizing, o: SizeOutcome) -> RunFigures | None:
    """The run figures of size ``o``'s best row (the space's token budget and cluster), None
    without one."""
    space = s.result.space
    return None if o.best is None else row_figures(o.best, space, space.tokens)


def sizing_dict(s: Sizing) -> dict[str, Any]:
    """JSON-ready: the objective, the deadline's iteration-time target (ns or None), per size
    (ascending) its bound (None: no candidate), best row, run figures and note; the chosen size
    (None: no size has an answer)."""
    def one(o: SizeOutcome) -> dict[str, Any]:
        fig = size_figures(s, o)
        return {"npus": o.npus, "bound": o.bound if o.bound != float("inf") else None,
                "best": None if o.best is None else json_flags(o.best), "note": o.note,
                "run": None if fig is None else run_dict(fig, row_calibration(s.result.space,
                                                                              o.best))}

    return {"objective": s.objective, "target_ns": s.target_ns,
            "sizes": [one(o) for o in s.sizes],
            "chosen_npus": None if s.chosen is None else s.chosen.npus}


__all__ = ["sizing_dict", "size_figures"]
