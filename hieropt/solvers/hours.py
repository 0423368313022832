"""Workload weights given as shares of the cluster's hours (``[[workloads]] hours_share``,
:attr:`hieropt.spec.Instance.weights` = ``"hours"``), turned into the weights of the time objective.

A job with the share h_w of the hours H runs h_w H / T_w* iterations at its own optimum T_w*
(:func:`hieropt.solvers.portfolio.own_optima`); on a fabric B that work takes H sum_w h_w T_w(B) /
T_w* hours: the weights are w_w = h_w / T_w* (1/ns), and the weighted time is the hour-weighted
relative iteration time (1 when every job runs at its own optimum).
"""

from __future__ import annotations

from ..spec import Instance
from .cutting import REL_GAP

__all__ = ["hours_weighted"]


def hours_weighted(instance: Instance,
                   time_limit_s: float = 60.0) -> tuple[Instance, tuple[str, ...]]:
    """``instance`` with its shares of hours turned into weights h_w / T_w* (module docstring) and
    ``weights`` = ``"plain"``, and a note saying so; ``instance`` itself and no note when its
    weights are plain.

    Raises:
        NoSolutionError, SolverError: a workload has no certified own optimum.
    """
    if instance.weights != "hours":
        return instance, ()
    from .portfolio import own_optima  # (loaded only for shares of hours, as for a portfolio)

    optima = [r.upper for r in own_optima(instance, REL_GAP, time_limit_s)]
    shares = [j.weight for j in instance.jobs]
    w = [h / t for h, t in zip(shares, optima, strict=True)]
    more = tuple(j.model_copy(update={"weight": wj})
                 for j, wj in zip(instance.more_workloads, w[1:], strict=True))
    out = instance.model_copy(update={"workload_weight": w[0], "more_workloads": more,
                                      "weights": "plain"})
    each = ", ".join(f"{j.workload.name} {h:.4g} / {t:,.1f} ns = {wj:.6g}"
                     for j, h, t, wj in zip(instance.jobs, shares, optima, w, strict=True))
    note = (f"weights from shares of hours: {each} (share / own optimum: the weighted time is the "
            "hour-weighted relative iteration time)")
    return out, (note,)

