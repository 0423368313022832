"""The buyer's figures of one design as text lines (:class:`hieropt.model.run.RunFigures`): tokens/s, MFU, days,
MW, MWh and $ per run, one unit per quantity. Returns values; never prints."""

from __future__ import annotations

from typing import Any

from ..model.run import RunFigures, figures
from ..workloads.llm.flops import training_of


def fmt_money(usd: float | None) -> str:
    """$ with a suffix: ``$1.23B``, ``$45.6M``, ``$789k``, ``$12``."""
    if usd is None:
        return "-"
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(usd) >= size:
            return f"${usd / size:,.3g}{suffix}" if abs(usd) < 1000 * size else f"${usd / size:,.0f}{suffix}"
    return f"${usd:,.0f}"


def fmt_tokens(n: float) -> str:
    """A token count with a suffix: ``15T``, ``300B``, ``3.1M``."""
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:,.4g}{suffix}"
    return f"{n:,.0f}"


def run_lines(fig: RunFigures | None) -> list[str]:
    """Lines of the buyer's figures: throughput and MFU, the run (days, MW, MWh, $), the cluster's cost, and what
    is unknown. Empty for None."""
    if fig is None:
        return []
    lines = []
    if fig.mfu is not None:
        hfu = f"; HFU {fig.hfu:.1%} with recompute" if fig.hfu is not None else ""
        lines.append(f"training: {fig.tokens_per_iteration:,.0f} tokens per iteration, {fig.tokens_per_s:,.0f} "
                     f"tokens/s; MFU {fig.mfu:.1%} ({fig.model_flops_per_iteration:.4g} model FLOPs per "
                     f"iteration){hfu}")
    run = []
    if fig.time_to_train_days is not None:
        run.append(f"{fig.time_to_train_days:,.1f} days")
    if fig.energy_mwh is not None:
        run.append(f"{fig.energy_mwh:,.0f} MWh")
    if fig.run_cost_usd is not None:
        run.append(f"{fmt_money(fig.run_cost_usd)} per run")
    if run:
        lines.append(f"run of {fmt_tokens(fig.tokens)} tokens: " + ", ".join(run))
    cluster = []
    if fig.power_mw is not None:
        cluster.append(f"{fig.power_mw:,.2f} MW (with PUE)")
    if fig.capex_usd is not None:
        cluster.append(f"capex {fmt_money(fig.capex_usd)} (network {fmt_money(fig.network_capex_usd)})")
    if fig.cost_per_hour_usd is not None:
        cluster.append(f"{fmt_money(fig.cost_per_hour_usd)} per hour")
    if cluster:
        lines.append("cluster: " + ", ".join(cluster))
    if fig.left_out:
        lines.append("cost rate leaves out: " + "; ".join(fig.left_out))
    lines += [f"unknown {u}" for u in fig.unknown]
    return lines


def codesign_run(result: Any, tokens: float | None = None) -> RunFigures | None:
    """The buyer's figures of a co-design search's best candidate (:class:`hieropt.studies.codesign.search.
    Codesign`): its plan's tokens and FLOPs, its iteration time and network cost, ``tokens`` (the run's token
    budget), the space's ``cluster`` if it has one. None without a best candidate."""
    best = result.best
    if best is None:
        return None
    from ..studies.codesign.export import row_params

    params = row_params(result.space, best.to_dict())
    return figures(training_of(params), best.npus or result.space.npus, best.iteration_time_ns,
                   best.network_cost_usd, tokens, getattr(result.space, "cluster", None),
                   params.workload_name)


__all__ = ["run_lines", "fmt_money", "fmt_tokens", "codesign_run"]
