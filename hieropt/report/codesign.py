"""Tables and lines of ``hieropt codesign``: what was enumerated, pruned and solved, the best plan-and-network with
its time split, and the ranking. Returns values; never prints."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.table import Table

from ..studies.codesign.search import Codesign

_UNIT = {"performance": "time ms", "min_cost": "cost $", "performance_per_cost": "time x cost (ms x M$)",
         "min_run_cost": "$ per run"}


def _value(row: dict[str, Any], objective: str) -> str:
    v = row["objective_value"]
    return f"{v / 1e6:,.4f}" if objective == "performance" else f"{v:,.0f}" if objective in (
        "min_cost", "min_run_cost") else \
        f"{v / 1e12:,.3f}"


def _bw(row: dict[str, Any]) -> str:
    return ", ".join(f"{float(b):.4g}" for b in (row["bw_gbps"] or "").split(";") if b)


def _groups(row: dict[str, Any]) -> str:
    parts = [kv.split("=") for kv in (row["communication_by_group_ns"] or "").split(";") if kv]
    return ", ".join(f"{g} {float(t) / 1e6:,.2f}" for g, t in parts)


def summary_lines(result: Codesign) -> list[str]:
    """Plans (valid, too big, fitting), shapes, candidates, pruned and solved, the best answer and its split."""
    sp, en = result.space, result.enumeration
    pl = en.plans
    invalid = sum(pl.invalid.values())
    lines = [f"co-design {sp.name}: {sp.base.model.name} on {sp.npus:,} NPUs, objective {sp.objective}, mapping rule "
             f"{sp.mapping_rule}",
             f"plans: {pl.combinations:,} combinations, {invalid:,} invalid for the model, {len(pl.too_big):,} too big "
             f"for {sp.base.npu.hbm_gib:g} GiB HBM less {sp.base.npu.hbm_reserve_gib:g} GiB, {len(pl.fitting):,} fit",
             f"networks: {len(en.shapes):,} shape(s); candidates (plan x shape x placement): {len(en.candidates):,}"
             + (f", {len(en.skipped):,} plan-shape pairs the rule cannot place" if en.skipped else ""),
             f"solved {result.solved:,}, pruned {result.pruned:,} (proven bound >= incumbent"
             + (", or time bound above the target" if sp.objective == "min_cost" else "") + "), resumed "
             f"{result.resumed:,}; {result.seconds:,.1f} s on {result.backend}"]
    best = result.best
    if best is not None:
        lines += [f"best: {best['id']}",
                  f"  {_UNIT[sp.objective]} {_value(best, sp.objective)} (gap {best['gap']:.1e}); iteration "
                  f"{best['iteration_time_ns'] / 1e6:,.4f} ms = compute {best['compute_ns'] / 1e6:,.4f} + bubble "
                  f"{best['bubble_ns'] / 1e6:,.4f} + communication {best['communication_ns'] / 1e6:,.4f} "
                  f"({_groups(best)}); network ${best['network_cost_usd']:,.0f}; memory "
                  f"{best['memory_bytes'] / 1e9:,.2f} GB per NPU",
                  f"  bandwidth GB/s per NPU: {_bw(best)}"
                  + (f"; scale-out {best['scaleout_gbps_per_npu']:,.2f} GB/s per NPU"
                     + (f" = {best['nics']:,} NICs" if best["nics"] is not None else "") if
                     best["scaleout_gbps_per_npu"] is not None else "")]
    return lines


def no_answer(result: Codesign) -> str:
    """Why no candidate has a certified answer: the count of each status and the first message of the commonest
    one, e.g. ``no candidate has a certified answer: 3 infeasible (e.g. 'infeasible: ...')``."""
    counts = Counter(r["status"] for r in result.rows)
    parts = ", ".join(f"{n:,} {status}" for status, n in counts.most_common())
    first = next((r["message"] for r in result.rows if r["status"] == counts.most_common(1)[0][0] and r["message"]),
                 None) if counts else None
    return "no candidate has a certified answer" + (f": {parts}" if parts else "") + (
        f" (e.g. {first})" if first else "")


def ranking_table(result: Codesign, top: int = 20) -> Table:
    """The best ``top`` candidates."""
    sp = result.space
    t = Table(title=f"Best {min(top, len(result.ranking))} of {len(result.ranking):,} solved candidates "
              f"(time ms; memory GB per NPU)", title_justify="left")
    for col in ("rank", "plan", "network", _UNIT[sp.objective], "compute", "bubble", "comm", "memory", "cost $",
                "GB/s per NPU"):
        t.add_column(col, justify="left" if col in ("plan", "network", "GB/s per NPU") else "right",
                     overflow="fold")
    for r in result.ranking[:top]:
        t.add_row(str(r["rank"]), r["plan"], f"{r['shape']} | {r['placement']}", _value(r, sp.objective),
                  f"{r['compute_ns'] / 1e6:,.1f}", f"{r['bubble_ns'] / 1e6:,.1f}",
                  f"{r['communication_ns'] / 1e6:,.1f}", f"{r['memory_bytes'] / 1e9:,.1f}",
                  f"{r['network_cost_usd']:,.0f}", _bw(r))
    return t


def by_dims(result: Codesign) -> list[dict[str, Any]]:
    """Per dimension count: the best candidate and the least scale-out bandwidth (NICs) among the solved ones."""
    out = []
    ranking = result.ranking
    for D in sorted({r["n_dims"] for r in ranking}):
        rows = [r for r in ranking if r["n_dims"] == D]
        nics = [r["nics"] for r in rows if r["nics"] is not None]
        out.append({"n_dims": D, "solved": len(rows), "best": rows[0],
                    "min_scaleout_gbps_per_npu": min(r["scaleout_gbps_per_npu"] for r in rows),
                    "min_nics": min(nics, default=None)})
    return out


def dims_table(result: Codesign) -> Table:
    """Best per dimension count, with its scale-out bandwidth and NICs."""
    sp = result.space
    t = Table(title="Per dimension count: the best plan-and-network and its scale-out", title_justify="left")
    for col in ("dims", "solved", _UNIT[sp.objective], "best plan", "best network", "scale-out GB/s/NPU", "NICs"):
        t.add_column(col, justify="left" if col.startswith("best") else "right", overflow="fold")
    for e in by_dims(result):
        b = e["best"]
        t.add_row(str(e["n_dims"]), str(e["solved"]), _value(b, sp.objective), b["plan"], b["shape"],
                  f"{b['scaleout_gbps_per_npu']:,.2f}", "-" if b["nics"] is None else f"{b['nics']:,}")
    return t


def codesign_dict(result: Codesign, top: int = 20) -> dict[str, Any]:
    """JSON-ready: counts, the best row, the top rows, per-dimension summary."""
    en = result.enumeration
    return {"space": result.space.name, "space_hash": result.space_hash, "objective": result.space.objective,
            "plans": {"combinations": en.plans.combinations, "invalid": en.plans.invalid,
                      "too_big": len(en.plans.too_big), "fitting": len(en.plans.fitting)},
            "shapes": len(en.shapes), "candidates": len(en.candidates), "solved": result.solved,
            "pruned": result.pruned, "resumed": result.resumed, "seconds": result.seconds,
            "backend": result.backend, "best": result.best, "ranking": result.ranking[:top],
            "by_dims": [{**e, "best": e["best"]["id"]} for e in by_dims(result)]}


__all__ = ["no_answer", "summary_lines", "ranking_table", "dims_table", "by_dims", "codesign_dict"]
