"""Tables and lines of ``hieropt explore``: the ranking by proven optimum, the scale-out spend per
dimension count and the Pareto set of shapes. Returns values; never prints."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.table import Table

from ..studies.explore import Exploration

_UNIT_LABEL = {
    "performance": "time ms",
    "min_cost": "cost $",
    "performance_per_cost": "time x cost (ms x M$)",
}


def _ms(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:,.4f}"


def _usd(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def _objective_text(row: dict[str, Any], objective: str) -> str:
    v = row["objective_value"]
    if objective == "performance":
        return f"{v / 1e6:,.4f}"
    if objective == "min_cost":
        return f"{v:,.0f}"
    return f"{v / 1e12:,.2f}"


def _bw(row: dict[str, Any]) -> str:
    return ", ".join(f"{float(b):.4g}" for b in (row["bw_gbps"] or "").split(";") if b)


def explore_dict(result: Exploration, top: int) -> dict[str, Any]:
    """The sweep as JSON-ready data: :meth:`hieropt.studies.explore.Exploration.to_dict`."""
    return result.to_dict(top)


def summary_lines(result: Exploration) -> list[str]:
    """What was explored, how many shapes, duplicates, failures, and how long it took."""
    sp, en = result.space, result.enumeration
    tps = ", ".join(str(j.tp) for j in sp.jobs if j.tp is not None)
    lines = [
        f"space {sp.name}: {sp.npus:,} NPUs, {sp.min_dims}-{sp.max_dims} dimensions over levels "
        f"{', '.join(lv.name for lv in sp.levels)}; objective {sp.objective}; mapping "
        f"{sp.mapping_rule}"
        + (f" (TP {tps})" if tps else "")
        + (f"; constraints {', '.join(sp.constraints)}" if sp.constraints else "")
    ]
    per_d = Counter(len(c.dims) for c in en.candidates)
    counts = ", ".join(f"{d} dims: {per_d[d]}" for d in sorted(per_d))
    lines.append(
        f"shapes: {en.shapes:,} valid; {en.placements:,} candidates (shape x mapping)"
        + (
            f", {len(en.skipped):,} shapes skipped (the mapping rule cannot place a group)"
            if en.skipped
            else ""
        )
        + f"; {en.pruned:,} exact duplicates pruned; {len(en.candidates):,} solved ({counts})"
    )
    lines.append(
        f"sweep: {result.seconds:.1f} s on {result.backend}; {len(result.solved_ids):,} "
        "solved now, "
        f"{len(result.resumed_ids):,} read back" + (f" from {result.out}" if result.out else "")
    )
    tp = result.throughput
    if tp["certified"] and tp["certified_per_s_per_core"] is not None:
        lines.append(
            f"throughput: {tp['certified']:,} candidates certified in {tp['seconds']:.2f} s on "
            f"{tp['cores']} core{'s' if tp['cores'] > 1 else ''}: "
            f"{tp['certified_per_s_per_core']:,.1f} "
            f"certified per second per core ({tp['covered']:,} candidates with their duplicates)"
        )
    failed = result.failed
    if failed:
        kinds = Counter(r["status"] for r in failed)
        lines.append("no certified answer: " + ", ".join(f"{n} {k}" for k, n in kinds.items())
                     + f" (e.g. {failed[0]['shape_id']}: {failed[0]['message']})")
    return lines


def ranking_table(result: Exploration, top: int) -> Table:
    """The ``top`` best candidates: rank, shape, duplicates, objective, time, cost, gap, bandwidths,
    scale-out."""
    obj = result.space.objective
    t = Table(
        title=f"Top {min(top, len(result.ranking))} of {len(result.ranking)} shapes by proven "
        "optimum "
        f"({obj}; equal rank: optima within the gap target, cheaper or faster first)",
        title_justify="left",
    )
    cols = [
        "rank",
        "shape",
        "≡",
        "time ms",
        "cost $",
        "gap",
        "GB/s per NPU per dimension",
        "scale-out GB/s/NPU",
        "NICs",
        "scale-out $",
    ]
    # (min_cost's objective is the cost column itself)
    extra = obj not in ("performance", "min_cost")
    if extra:
        cols.insert(3, _UNIT_LABEL[obj])
    for col in cols:
        t.add_column(
            col, justify="left" if col in ("shape", "GB/s per NPU per dimension") else "right"
        )
    for r in result.ranking[:top]:
        cells = [
            str(r["rank"]),
            r["shape_id"],
            str(r["equivalents"] or 0),
            _ms(r["iteration_time_ns"]),
            _usd(r["network_cost_usd"]),
            f"{r['gap']:.1e}",
            _bw(r),
            f"{r['scaleout_gbps_per_npu']:.2f}",
            "-" if r["nics"] is None else f"{r['nics']:,}",
            _usd(r["scaleout_usd"]),
        ]
        if extra:
            cells.insert(3, _objective_text(r, obj))
        t.add_row(*cells)
    return t


def dims_table(result: Exploration) -> Table:
    """Scale-out (NIC) bandwidth, NIC count and spend of the best candidate of every dimension
    count."""
    t = Table(
        title="Scale-out (NIC) spend vs dimension count: the best shape of each count, and the "
        "least "
        "scale-out spend of any shape of that count",
        title_justify="left",
    )
    for col in (
        "dims",
        "shapes",
        "best shape",
        "time ms",
        "cost $",
        "scale-out GB/s/NPU",
        "NICs",
        "scale-out $",
        "share of cost",
        "least NICs",
        "least scale-out $",
    ):
        t.add_column(col, justify="left" if col == "best shape" else "right")
    for e in result.by_dims():
        b = e["best"]
        if b is None:
            t.add_row(str(e["n_dims"]), f"{e['candidates']:,}", "-", *["-"] * 8)
            continue
        share = b["scaleout_usd"] / b["network_cost_usd"] if b["network_cost_usd"] else 0.0
        t.add_row(
            str(e["n_dims"]),
            f"{e['candidates']:,}",
            b["shape_id"],
            _ms(b["iteration_time_ns"]),
            _usd(b["network_cost_usd"]),
            f"{b['scaleout_gbps_per_npu']:.2f}",
            "-" if b["nics"] is None else f"{b['nics']:,}",
            _usd(b["scaleout_usd"]),
            f"{share:.0%}",
            "-" if e["min_nics"] is None else f"{e['min_nics']:,}",
            _usd(e["min_scaleout_usd"]),
        )
    return t


def pareto_table(result: Exploration) -> Table:
    """The shapes on the (iteration time, network cost) Pareto front of their optima."""
    front = result.pareto
    t = Table(
        title=f"Pareto set of shapes over (iteration time, network cost): {len(front)} shapes",
        title_justify="left",
    )
    for col in ("shape", "time ms", "cost $", "GB/s per NPU per dimension", "NICs"):
        t.add_column(
            col, justify="left" if col in ("shape", "GB/s per NPU per dimension") else "right"
        )
    for r in front:
        t.add_row(r["shape_id"], _ms(r["iteration_time_ns"]), _usd(r["network_cost_usd"]), _bw(r),
                  "-" if r["nics"] is None else f"{r['nics']:,}")
    return t


def provision_table(rows: list[dict[str, Any]]) -> Table:
    """The shortlisted shapes provisioned from a catalog, ranked by the integer design (catalog
    prices)."""
    t = Table(
        title="Shortlist provisioned from the catalog (integer designs, catalog prices; ranked by "
        "the integer "
        "objective)",
        title_justify="left",
    )
    for col in (
        "bom rank",
        "continuous rank",
        "shape",
        "time ms",
        "catalog cost $",
        "power W",
        "gap",
        "parts",
    ):
        t.add_column(col, justify="left" if col in ("shape", "parts") else "right")
    for r in rows:
        if r["bom_rank"] is None:
            t.add_row(
                "-", str(r["continuous_rank"]), r["shape_id"], "-", "-", "-", "-", r["message"]
            )
            continue
        t.add_row(
            str(r["bom_rank"]),
            str(r["continuous_rank"]),
            r["shape_id"],
            _ms(r["iteration_time_ns"]),
            f"{r['network_cost_usd']:,.0f}",
            "-" if r["power_w"] is None else f"{r['power_w']:,.0f}",
            f"{r['gap']:.1e}",
            "; ".join(r["parts"]),
        )
    return t
