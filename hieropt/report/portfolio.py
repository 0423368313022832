"""Presentation of a portfolio (:class:`hieropt.result.Portfolio`): each workload's time on the
chosen network and its slowdown against its own optimum, as a rich table and a JSON dict. Returns
values; never prints."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ..result import Portfolio

__all__ = ["portfolio_table", "portfolio_dict"]


def portfolio_table(p: Portfolio | None, objective: str) -> Table | None:
    """Per workload: weight, time on this network, its share of the weighted objective (weight x
    time / sum of weight x time), its own optimum, slowdown; None without a portfolio."""
    if p is None:
        return None
    title = {
        "min_max_regret": "Workloads (min-max regret: the largest slowdown is minimised)",
        "min_cost": f"Workloads (cheapest network with every slowdown <= {p.max_regret:.2%})"
        if p.max_regret is not None
        else "Workloads",
    }.get(objective, "Workloads (weighted objective)")
    t = Table(title=title, title_justify="left")
    for col in ("workload", "weight", "time ms", "share", "own optimum ms", "slowdown"):
        t.add_column(col, justify="left" if col == "workload" else "right")
    under = ("the same constraints and budget" if p.optima_within_budget else
             "the same constraints, whatever the budget")
    t.caption = (
        "time: this workload's iteration time on this network; share: weight x time / the "
        f"weighted sum; own optimum: its fastest network under {under}; slowdown: time / own "
        "optimum - 1"
    )
    total = sum(w * tn for w, tn in zip(p.weights, p.times_ns, strict=True))
    for name, w, tn, u, sd in zip(
        p.names, p.weights, p.times_ns, p.own_optima_ns, p.slowdowns, strict=True
    ):
        t.add_row(
            name,
            f"{w:.6g}",
            f"{tn / 1e6:,.4f}",
            f"{w * tn / total:.1%}" if total > 0 else "-",
            f"{u / 1e6:,.4f}",
            f"{sd:+.3%}",
        )
    return t


def portfolio_dict(p: Portfolio | None) -> dict[str, Any] | None:
    """JSON-ready portfolio (times ns), or None: :meth:`hieropt.result.Portfolio.to_dict`."""
    return None if p is None else p.to_dict()
