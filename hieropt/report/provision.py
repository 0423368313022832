"""Presentation of integer provisioning results: rich tables and JSON-ready dicts. Returns values;
never prints."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from ..model.options import Option
from ..solvers.provision import Provisioning
from ..solvers.provision_dicts import against_the_rounding, provision_dict, rounding_label
from ..spec import Instance
from ..units import RELATIVE_UNIT, fmt_relative, plural
from .common import fmt_time


def _units_per_npu(o: Option) -> str:
    if o.part.share == 1:
        return f"{o.units}"
    return f"{o.units_per_npu:g} ({o.units}/node)"


def _count(o: Option) -> str:
    if o.part.share == 1:
        return f"{o.units} x {o.part.name} per NPU"
    return (
        f"{o.units} x {o.part.name} per node of {o.part.share} NPUs ({o.units_per_npu:g} per NPU)"
    )


def _obj(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == RELATIVE_UNIT:
        return fmt_relative(value)
    if unit == "ns":
        return f"{value / 1e6:,.4f} ms"
    if unit == "USD":
        return f"${value:,.0f}"
    if unit == "W":
        return f"{value:,.0f} W"
    return f"{value:.6g} ns*$"


def _fabric(o: Option) -> str:
    """How a Switch dimension's fabric is built, e.g. '72 switch groups of 128 ports, 2 tiers
    each'."""
    f = o.fabric
    if f is None:
        return (
            f"{o.groups:,} switch groups of {o.ports_per_group:,} ports, {o.tiers} "
            f"tier{'s' * (o.tiers > 1)} each"
        )
    (tree, copies), = f.trees
    what = {
        "per_group": f"{copies:,} switch groups of {tree.endpoints:,} ports",
        "multi_plane": f"{copies:,} planes of {tree.endpoints:,} ports "
        f"({copies // o.groups} per group)",
        "rail_optimized": f"one rail-optimized fabric of {tree.endpoints:,} ports "
        f"in {tree.rails:,} rails",
    }[f.placement]
    tiers = " + ".join(f"{t.switches:,}" for t in tree.tiers)
    ratio = (
        ""
        if f.bandwidth_factor == 1
        else f"; oversubscribed: each NPU keeps {f.bandwidth_factor:.3g} of its NICs"
    )
    count = f"{tiers} switch{'es' * (tree.switches > 1)}{' each' * (copies > 1)}"
    return f"{what}, {tree.n_tiers} tier{'s' * (tree.n_tiers > 1)} ({count}){ratio}"


def summary_lines(instance: Instance, p: Provisioning) -> list[str]:
    """Headline lines: objective and status, time, cost, proven bound and gap, continuous bound,
    NICs, timing."""
    lines = [
        f"instance {instance.name}: {instance.network.npus_total:,} NPUs, "
        f"{instance.network.n_dims} dimensions; "
        f"catalog {p.catalog}; objective {p.objective}"
        + (
            f"; time target {p.max_iteration_time_ns:,.1f} ns"
            if p.max_iteration_time_ns is not None
            else ""
        )
        + (f"; budget ${p.max_cost_usd:,.0f}" if p.max_cost_usd is not None else "")
        + (f"; power budget {p.max_power_w:,.0f} W" if p.max_power_w is not None else ""),
        f"status: {p.status.value} ({p.message})",
        (f"hour-weighted relative iteration time: {fmt_relative(p.iteration_time_ns)}; "
         if instance.relative_time else
         f"iteration time: {p.iteration_time_ns:,.1f} ns ({p.iteration_time_ns / 1e6:,.6f} ms); ")
        +
        f"network cost (catalog): ${p.network_cost_usd:,.0f}; power: "
        + (f"{p.power_w:,.0f} W" if p.power_w is not None else "not known (a part has no watts)"),
        f"objective {_obj(p.objective_value, p.objective_unit)}; proven lower bound "
        f"{_obj(p.objective_bound, p.objective_unit)}; relative gap {p.gap:.2e}",
    ]
    if p.continuous is not None:
        lines.append(
            "continuous optimum (fractional units, same bandwidth ranges): "
            + (fmt_relative(p.continuous.iteration_time_ns) if instance.relative_time
               else f"{p.continuous.iteration_time_ns:,.1f} ns")
            + ", a lower bound on every integer "
            "design's time; "
            f"the integer design is {p.continuous_gap:.2%} slower"
        )
    else:
        lines.append(f"continuous optimum: {p.continuous_note}")
    for o, dim in zip(p.design, instance.network.dims, strict=True):
        if o.kind == "nic":
            lines.append(
                f"dimension {o.dim} ({dim.block} {dim.npus}, {dim.cost_class}) NICs: {_count(o)}, "
                f"{o.units_total:,} in the cluster; switches: {o.switches:,} x {o.switch.name} "
                f"({_fabric(o)})"
            )
    lines.append(
        f"solved in {p.solve_seconds * 1e3:.1f} ms ({p.milp_solves} MILP solves, "
        f"{p.milp_seconds * 1e3:.1f} "
        f"ms; {p.extra.get('binaries', 0)} binaries); verified by the independent evaluator"
    )
    lines += [f"note: {n}" for n in p.notes]
    return lines


def design_table(instance: Instance, p: Provisioning) -> Table:
    """Per dimension: the part, units per NPU, units and switches in the cluster, bandwidth,
    cost."""
    t = Table(title="Integer design", title_justify="left")
    for col in ("dim", "block", "part", "per NPU", "in cluster", "switches", "GB/s/NPU", "cost $"):
        t.add_column(col, justify="left" if col in ("block", "part", "switches") else "right",
                     no_wrap=col in ("block", "part"))
    t.caption = (
        "part: link port (Ring, FullyConnected) or NIC (Switch); per NPU: parts on each NPU "
        "(shared by a "
        "node: the fraction, and parts per node); in cluster: parts in the whole cluster; "
        "switches: in the "
        "cluster, with the fabric tiers of each switch group (models in the bill of materials)"
    )
    for o, dim in zip(p.design, instance.network.dims, strict=True):
        sw = "-" if o.switch is None else f"{o.switches:,}, {o.tiers} tier{'s' * (o.tiers > 1)}"
        t.add_row(
            str(o.dim),
            f"{dim.block} {dim.npus}",
            o.part.name,
            _units_per_npu(o),
            f"{o.units_total:,}",
            sw,
            f"{o.bw_gbps:,.3f}",
            f"{o.cost_usd:,.0f}",
        )
    return t


def bom_table(p: Provisioning) -> Table:
    """Bill of materials: one line per part, switch and optic, with quantity, unit price, cost and
    power, and the totals."""
    t = Table(title="Bill of materials (catalog prices and power)", title_justify="left")
    for col in ("dim", "kind", "item", "quantity", "unit $", "cost $", "unit W", "power W"):
        t.add_column(col, justify="left" if col in ("kind", "item") else "right")

    def w(x: float | None, fmt: str) -> str:
        return "-" if x is None else format(x, fmt)

    for line in p.bom:
        t.add_row(
            str(line.dim),
            line.kind,
            line.item,
            f"{line.quantity:,}",
            f"{line.unit_usd:,.2f}",
            f"{line.cost_usd:,.0f}",
            w(line.unit_watts, ",.1f"),
            w(line.watts, ",.0f"),
        )
    t.add_row(
        "",
        Text("total", style="bold"),
        "",
        "",
        "",
        Text(f"{p.network_cost_usd:,.0f}", style="bold"),
        "",
        Text(w(p.power_w, ",.0f"), style="bold"),
    )
    return t


def comparison_table(p: Provisioning, relative: bool = False) -> Table:
    """The exact design against the continuous optimum and its roundings to whole units;
    ``relative``: workloads weighted by shares of hours, the times are the hour-weighted ratio."""
    t = Table(
        title="Exact integer design vs the continuous optimum and its roundings",
        title_justify="left",
    )
    time_col = "hour-weighted ratio" if relative else "time ms"
    for col in ("design", "GB/s per NPU", time_col, "cost $", "objective", "exact saves"):
        t.add_column(col, justify="left" if col in ("design", "GB/s per NPU") else "right")
    t.caption = (
        "continuous: fractional units (time is a lower bound; its cost is not a catalog "
        "cost); roundings: "
        "the continuous bandwidths rounded to whole units, best part per dimension; exact saves: "
        "(rounding - exact) / rounding on the objective"
    )

    def bw(values) -> str:
        return ", ".join(f"{x:,.4g}" for x in values)

    t.add_row(
        "exact (this design)",
        bw(p.bw_gbps),
        fmt_time(p.iteration_time_ns, relative),
        f"{p.network_cost_usd:,.0f}",
        _obj(p.objective_value, p.objective_unit),
        "-",
    )
    if p.continuous is not None:
        t.add_row(
            "continuous optimum",
            bw(p.continuous.bw_gbps),
            fmt_time(p.continuous.iteration_time_ns, relative),
            "-",
            "-",
            "-",
        )
    for r in p.roundings:
        if not r.feasible:
            t.add_row(f"round {r.name}", "none feasible", "-", "-", "-", "-")
            continue
        t.add_row(
            rounding_label(p, r),
            bw(r.bw_gbps),
            fmt_time(r.iteration_time_ns, relative),
            f"{r.network_cost_usd:,.0f}",
            _obj(r.objective_value, p.objective_unit),
            f"{r.saving:.2%}",
        )
    return t


def tradeoff_table(tr: Any) -> Table:
    """The non-dominated time-cost-power designs of
    :func:`hieropt.solvers.provision_milp.provision_tradeoff`."""
    t = Table(
        title=f"Time-cost-power trade-off (epsilon-constraint, {tr.grid[0]} x {tr.grid[1]} cost x "
        "power levels; "
        f"{plural(len(tr.points), 'non-dominated design')})",
        title_justify="left",
    )
    for col in ("time ms", "cost $", "power W", "GB/s per NPU", "design"):
        t.add_column(col, justify="left" if col in ("GB/s per NPU", "design") else "right")
    t.caption = (
        "each design is the fastest whole-part design within its cost and power level (an exact "
        "MILP)"
    )
    for q in tr.points:
        t.add_row(
            f"{q.iteration_time_ns / 1e6:,.4f}",
            f"{q.network_cost_usd:,.0f}",
            f"{q.power_w:,.0f}",
            ", ".join(f"{o.bw_gbps:,.4g}" for o in q.design),
            "; ".join(o.label() for o in q.design),
        )
    return t


def tradeoff_dict(tr: Any) -> dict[str, Any]:
    """JSON-ready trade-off: :meth:`hieropt.solvers.provision_milp.Tradeoff.to_dict`."""
    return tr.to_dict()


def _moved_why(r: Any, d: int) -> str:
    """Why rounding ``r`` moved dimension ``d`` against its name: held at the unit limit (up), or
    raised to one unit, or to the fewest link ports, one to each peer (down)."""
    if r.name == "up":
        return "above the part's unit limit: held at the limit"
    o = r.design[d]
    if o.kind == "nic":  # (NICs: any count; some NIC part's one unit is above the bandwidth)
        bought = ("" if o.units == 1 and o.part.per == "NPU" else
                  f" (bought as {o.units} x {o.part.name} per {o.part.per}"
                  + (f" of {o.part.share}" if o.part.per == "node" else "")
                  + ", the design's parts at that bandwidth)")
        return ("below one unit of a NIC part (rounding down keeps at least one unit of each "
                f"part): raised to it{bought}")
    n = o.units
    return ("below one unit of the part: raised to one unit" if n == 1 else
            f"below the part's fewest units, {n} (one link port to each peer): raised to them")


def rounding_lines(p: Provisioning) -> list[str]:
    """One line per rounding: how it was made, which dimensions went the other way and why
    (:func:`against_the_rounding`, with the continuous and the rounded GB/s per NPU), and whether
    it is feasible."""
    out = []
    for r in p.roundings:
        state = (
            "feasible"
            if r.feasible
            else "no feasible rounding (constraints, time target or budget violated)"
        )
        dims = against_the_rounding(p, r)
        moved = "".join(
            f"; dimension {d}: {p.continuous.bw_gbps[d]:,.4g} GB/s per NPU is {_moved_why(r, d)}, "
            f"{r.bw_gbps[d]:,.4g} GB/s"
            for d in dims
        )
        out.append(f"round {r.name}: {r.description}{moved}: {state}")
    return out


__all__ = ["against_the_rounding", "provision_dict", "rounding_label"]
