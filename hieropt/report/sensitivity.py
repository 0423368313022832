"""Presentation of the sensitivity of an optimum (:class:`hieropt.result.Sensitivity`): lines and a
JSON dict.

Lines read "1 GB/s more per NPU on dim 3 saves 8.341 ms per iteration (4,096 GB/s = 32.77 Tb/s
across the cluster; saves 0.0827 days per run; saves $12.3k per run)" (performance; days and $ with
a token budget and a [cluster]), "... saves $227,537" (min_cost); a
constraint "+1 on the right-hand side of 'sum(bw) == 500' saves 0.5727 ms"; the budget "$1 more
saves 35.58 ns per iteration; the budget row is worth $28,102 per ms"; at kinks both one-sided
values. Returns values; never prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..result import Marginal, Sensitivity
from ..units import RELATIVE_UNIT
from .common import fmt_usd_per_ms
from .run import fmt_money


@dataclass(frozen=True)
class BuyerScale:
    """What turns a marginal time per GB/s per NPU into the buyer's units
    (:func:`bandwidth_effect`).

    Attributes:
        npus: N (1 GB/s per NPU is N GB/s of the cluster's capacity).
        iterations: iterations per run (None: no token budget).
        iteration_ns: T at the optimum, ns.
        usd_per_h: the cost rate at the optimum, $ / h (None: no [cluster] cost rate).
        per_network_usd: $ / h per $ of network capex.
        price_usd_per_gbps: (D,) N u_d, the network's $ per GB/s per NPU of each dimension.
    """

    npus: int
    iterations: float | None
    iteration_ns: float
    usd_per_h: float | None
    per_network_usd: float
    price_usd_per_gbps: tuple[float, ...]


def buyer_scale(instance: Any, sol: Any) -> BuyerScale:
    """The :class:`BuyerScale` of a solved instance (its run figures and cost rate at ``sol``)."""
    from ..model.cost import cluster_cost_usd_per_gbps
    from ..model.run import cost_rate

    fig = sol.run
    rate = (
        None
        if instance.cluster is None
        else cost_rate(instance.cluster, instance.network.npus_total)
    )
    return BuyerScale(
        instance.network.npus_total,
        fig.iterations_per_run if fig is not None else None,
        sol.iteration_time_ns,
        None if rate is None else rate.usd_per_h(sol.network_cost_usd),
        0.0 if rate is None else rate.per_network_usd,
        tuple(float(x) for x in cluster_cost_usd_per_gbps(instance)),
    )


def bandwidth_effect(scale: BuyerScale | None, d: int, ns_per_gbps: float) -> str:
    """The effect of 1 GB/s more per NPU on dimension ``d`` whose marginal time is ``ns_per_gbps``
    (ns per iteration per GB/s, < 0 saves), in the buyer's units: the cluster's capacity it adds,
    days per run and $ per run (d(run $)/dB_d = I / 3.6e12 x (dT/dB_d x rate + T x N u_d / H)); ""
    without a scale."""
    if scale is None:
        return ""
    cap = scale.npus
    parts = [f"{cap:,} GB/s = {cap * 8 / 1e3:,.4g} Tb/s across the cluster"]
    if scale.iterations is not None:
        days = ns_per_gbps * scale.iterations / 86400e9
        parts.append(f"{'saves' if days < 0 else 'costs'} {abs(days):,.4g} days per run")
        if scale.usd_per_h is not None:
            usd = (
                scale.iterations
                / 3.6e12
                * (
                    ns_per_gbps * scale.usd_per_h
                    + scale.iteration_ns * scale.price_usd_per_gbps[d] * scale.per_network_usd
                )
            )
            parts.append(f"{'saves' if usd < 0 else 'costs'} {fmt_money(abs(usd))} per run")
    return " (" + "; ".join(parts) + ")"


__all__ = ["sensitivity_lines", "sensitivity_dict", "BuyerScale", "buyer_scale",
           "bandwidth_effect"]


def _amount(v: float, unit: str) -> str:
    """A change of the objective, always positive: '8.341 ms', '35.58 ns', '$227,537', '1.2e+15
    ns*$'."""
    a = abs(v)
    if unit == RELATIVE_UNIT:
        return f"{a:,.4g} of the hour-weighted ratio to the own optima"
    if unit == f"{RELATIVE_UNIT}*USD":
        return f"{a:.4g} ratio*$"
    if unit == "ns":
        return f"{a / 1e6:,.4g} ms" if a >= 1e5 else f"{a:,.4g} ns"
    if unit == "USD":
        return f"${a:,.0f}" if a >= 100 else f"${a:,.4g}"
    return f"{a:.4g} ns*$"


def _effect(v: float | None, unit: str, per_iteration: bool) -> str:
    if v is None:
        return "is infeasible"
    if v == 0:
        return "changes nothing"
    tail = " per iteration" if per_iteration and unit == "ns" else ""
    return f"{'saves' if v < 0 else 'costs'} {_amount(v, unit)}{tail}"


def _range(m: Marginal, what: str, unit: str) -> str:
    if m.range is None:
        return ""
    lo, hi = m.range
    fmt = (lambda x: f"${x:,.0f}") if m.kind == "budget" else (
        (lambda x: f"{x / 1e6:,.4f} ms") if m.kind == "time_target" else (lambda x: f"{x:,.4g}"))
    lo_s = "-inf" if lo == float("-inf") else fmt(lo)
    hi_s = "inf" if hi == float("inf") else fmt(hi)
    if not m.binding:
        return f" (stays not binding for {what} in [{lo_s}, {hi_s}])"
    if lo == hi:  # not even the smallest step (1 % of the parameter) kept it within 10 %
        return (
            f" (only at {what} = {lo_s}{unit}: it changes by more than 10 % within 1 % of its "
            "scale)"
        )
    return f" (within 10 % for {what} in [{lo_s}, {hi_s}]{unit})"


def _line(m: Marginal, value_unit: str, scale: BuyerScale | None = None) -> str:
    per_it = True
    if m.kind == "bandwidth":
        d = m.name.rsplit(" ", 1)[-1]
        head, up, down, what, unit = (f"1 GB/s more per NPU on dim {d}", "1 GB/s more per NPU",
                                      "1 GB/s less per NPU", f"bw[{d}]", " GB/s")
    elif m.kind == "constraint":
        head = f"+1 on the right-hand side of {m.name.removeprefix('constraint ')}"
        up, down, what, unit = "+1", "-1", "its right-hand side", ""
    elif m.kind == "bound":
        head, up, down, what, unit = (
            f"+1 GB/s on the {m.name}",
            "+1 GB/s",
            "-1 GB/s",
            "the bound",
            " GB/s",
        )
    elif m.kind == "budget":
        head, up, down, what, unit = "budget: $1 more", "$1 more", "$1 less", "budgets", ""
    else:
        head, up, down, what, unit = (
            "time target: 1 ns more",
            "1 ns more",
            "1 ns less",
            "targets",
            "",
        )
        per_it = False
    if not m.binding:
        return f"{m.name}: not binding (marginal value 0){_range(m, what, unit)}"
    if m.value is None and m.increase is None and m.decrease is None:
        return (
            f"{m.name}: pins the optimum (any change of {what}, either way, is infeasible: "
            "other rows fix it too)"
        )
    if m.value is not None:
        text = f"{head} {_effect(m.value, value_unit, per_it)}"
        if m.kind == "bandwidth" and value_unit == "ns" and m.value != 0:
            text += bandwidth_effect(scale, int(d), m.value)
    else:
        text = (
            f"{m.name}: {up} {_effect(m.increase, value_unit, per_it)}; {down} "
            f"{_effect(None if m.decrease is None else -m.decrease, value_unit, per_it)} (a "
            "kink: the two sides "
            "differ)"
        )
    if m.kind == "time_target" and m.value is not None:
        text = f"time target: 1 ms more {_effect(m.value * 1e6, value_unit, False)}"
    return text + _range(m, what, unit)


def sensitivity_lines(sens: Sensitivity | None, scale: BuyerScale | None = None,
                      bw_gbps: Any = None) -> list[str]:
    """One line per parameter, then the $ per ms of the time-cost front; [] without a sensitivity.
    ``scale``: the buyer's units of each dimension's bandwidth
    (:func:`buyer_scale`: the cluster's capacity, days and $ per run).
    ``bw_gbps``: the design printed; when the marginals are of another design (the fastest found,
    before the tie-break to the cheapest equally fast one: :meth:`Sensitivity.elsewhere`), the
    heading names it (``at the fastest design found, 224.98, 138.05, ... GB/s per NPU, not the
    cheapest equally fast one printed``)."""
    if sens is None:
        return []
    what = {"ns": "time", RELATIVE_UNIT: "hour-weighted ratio"}.get(sens.value_unit, "value")
    held = (", the weights h_w / T_w* held: a change of a row also moves the own optima T_w*, "
            "which these do not count; re-solve to see it" if sens.value_unit == RELATIVE_UNIT
            else "")
    other = None if bw_gbps is None else sens.elsewhere(bw_gbps)
    at = "" if other is None else (
        "; at the fastest design found, " + ", ".join(f"{x:,.2f}" for x in other)
        + " GB/s per NPU, not the cheapest equally fast one printed (the same time)")
    out = [f"sensitivity of the optimal {what} "
           f"({sens.method}; {sens.seconds * 1e3:.0f} ms{held}{at}):"]
    out += ["  " + _line(m, sens.value_unit, scale) for m in sens.marginals]
    budget = next((m for m in sens.marginals if m.kind == "budget" and m.binding), None)
    if sens.usd_per_ms is not None:
        row = "the budget row is worth" if budget is not None else "time-cost front:"
        usd = sens.usd_per_ms
        money = fmt_usd_per_ms(usd)  # (a budget a hair above the cheapest: $1e-5 per ms)
        out.append(f"  {row} ${money} per ms ({sens.usd_per_ms_note})")
    else:
        out.append(f"  time-cost front: {sens.usd_per_ms_note}")
    return out


def sensitivity_dict(sens: Sensitivity | None) -> dict[str, Any] | None:
    """JSON-ready sensitivity, or None: :meth:`hieropt.result.Sensitivity.to_dict`."""
    return None if sens is None else sens.to_dict()
