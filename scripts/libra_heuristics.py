#!/usr/bin/env python3
"""What the exact optimum buys over the rules of thumb on every LIBRA pairing.

Usage::

    python scripts/libra_heuristics.py --data ../shared/data/libra [--json FILE]

For the 3D and 4D networks x 5 workloads x the constraint sets ``total_bw_500gbps`` and
``multiple_constraints`` (written for 4 dimensions: not applicable on the 3D network), it prints

- the **speed-up** of the performance optimum over equal split and over traffic-proportional
  bandwidth: T(heuristic) / T(optimum), the heuristics placed for the performance objective;
- the **perf-per-cost gain** of the performance-per-cost optimum over the same two heuristics:
  (T x cost)(heuristic) / (T x cost)(optimum), the heuristics placed for that objective
  (hieropt.studies.heuristics; under
  these equality budgets they are the same vectors).

DLRM ships without a communicator; one whose three groups span every dimension fully is written to a
temporary directory (as scripts/reproduce_libra.py does). A case whose exact solve fails is reported
with the error.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from hieropt import api
from hieropt.errors import HieroptError
from hieropt.studies.heuristics import equal_split, traffic_proportional

CONSTRAINT_SETS: dict[str, list[str]] = {
    "total_bw_500gbps": ["sum(bw) == 500"],
    "multiple_constraints": ["sum(bw) == 1000", "bw[0] == 500", "bw[0] >= bw[1]", "bw[1] >= bw[2]",
                             "bw[2] + bw[3] == 200"],
}
NETWORKS = {
    "3d": ("3d_network.yml", "3d_cost_model.yml"),
    "4d": ("4d_network.yml", "4d_cost_model.yml"),
}
WORKLOADS = ("GPT_3", "MSFT_1T", "Turing_NLG", "ResNet_50", "DLRM")


def communicator_path(data: Path, tmp: Path, workload: str, dims: str) -> Path:
    """LIBRA's communicator for the pairing; for DLRM an all-dimension one written to ``tmp``."""
    if workload != "DLRM":
        name = (
            f"{workload}_{dims.upper()}.yml"
            if workload == "Turing_NLG"
            else f"{workload}_{dims}.yml"
        )
        return data / "communicator" / name
    npus = yaml.safe_load((data / "network" / NETWORKS[dims][0]).read_text())["NpusCount"]
    group = "[ " + ", ".join(str(int(n)) for n in npus) + " ]"
    out = tmp / f"DLRM_{dims}.yml"
    out.write_text("# every phase spans all dimensions fully\n"
                   f"Forward: {group}\nInputGrad: {group}\nWeightGrad: {group}\n")
    return out


def gains(
    paths: tuple[Path, Path, Path, Path], constraints: list[str], objective: str
) -> dict[str, Any]:
    """The optimum for ``objective`` and its gain over equal split and traffic-proportional (value
    ratios)."""
    inst = api.load_libra(*paths, constraints=constraints, objective=objective)
    sol = api.solve(inst).raise_for_status()
    out: dict[str, Any] = {
        "optimum_value": sol.objective_value,
        "optimum_bw_gbps": [float(b) for b in sol.bw_gbps],
        "optimum_gap": sol.gap,
    }
    for key, fn in (("equal", equal_split), ("traffic", traffic_proportional)):
        h = fn(inst)
        if not h.feasible:
            out[key] = {"message": h.message}
            continue
        bd = api.evaluate(inst, h.bw)
        value = (
            bd.iteration_time_ns
            if objective == "performance"
            else bd.iteration_time_ns * bd.network_cost_usd
        )
        out[key] = {
            "bw_gbps": [float(b) for b in h.bw],
            "value": value,
            "gain": value / sol.objective_value,
        }
    return out


def _cell(res: dict[str, Any] | None, key: str) -> str:
    if res is None:
        return "-"
    if "error" in res:
        return "[red]error[/red]"
    h = res[key]
    return f"{h['gain']:.4f}x" if "gain" in h else "[yellow]infeasible[/yellow]"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--data", type=Path, default=Path("../shared/data/libra"), help="LIBRA data folder"
    )
    p.add_argument(
        "--json", type=Path, default=None, help="write every case as a JSON list to FILE"
    )
    args = p.parse_args(argv)
    console = Console(width=200)
    if not (args.data / "network").is_dir():
        console.print(
            f"[red]no LIBRA data folder at {args.data}[/red] (expected network/, workload/, ...)"
        )
        return 2
    table = Table(
        title="What the exact optimum buys over equal split and traffic-proportional bandwidth "
        "(LIBRA "
        "pairings, no_overlap loop)",
        title_justify="left",
    )
    for col in ("network", "workload", "constraints", "speed-up vs equal", "speed-up vs traffic",
                "perf/$ gain vs equal", "perf/$ gain vs traffic", "note"):
        table.add_column(
            col,
            justify="left" if col in ("network", "workload", "constraints", "note") else "right",
        )
    records: list[dict[str, Any]] = []
    n_err = 0
    with tempfile.TemporaryDirectory(prefix="hieropt-libra-") as tmp:
        for dims, (net, cost) in NETWORKS.items():
            for wl in WORKLOADS:
                paths = (
                    args.data / "network" / net,
                    args.data / "workload" / f"{wl}.txt",
                    communicator_path(args.data, Path(tmp), wl, dims),
                    args.data / "cost_model" / cost,
                )
                for cset, texts in CONSTRAINT_SETS.items():
                    rec: dict[str, Any] = {
                        "network": net,
                        "workload": f"{wl}.txt",
                        "constraints": cset,
                    }
                    if dims == "3d" and cset == "multiple_constraints":
                        rec["status"] = "not applicable (the set names bw[3])"
                        table.add_row(
                            net,
                            wl,
                            cset,
                            "-",
                            "-",
                            "-",
                            "-",
                            "[yellow]not applicable: names bw[3][/]",
                        )
                        records.append(rec)
                        continue
                    notes = []
                    for obj in ("performance", "performance_per_cost"):
                        try:
                            rec[obj] = gains(paths, texts, obj)
                        except HieroptError as e:
                            rec[obj] = {"error": f"{type(e).__name__}: {e}"}
                            notes.append(f"{obj}: {e}")
                            n_err += 1
                    rec["status"] = "ok" if not notes else "error"
                    records.append(rec)
                    perf, ppc = rec["performance"], rec["performance_per_cost"]
                    table.add_row(
                        net,
                        wl,
                        cset,
                        _cell(perf, "equal"),
                        _cell(perf, "traffic"),
                        _cell(ppc, "equal"),
                        _cell(ppc, "traffic"),
                        "; ".join(notes)[:90],
                    )
    table.caption = (
        "speed-up: T(heuristic) / T(performance optimum); perf/$ gain: (T x cost)(heuristic) / "
        "(T x cost)(performance-per-cost optimum); heuristics made feasible as in "
        "hieropt.studies.heuristics"
    )
    console.print(table)
    ok = sum(r.get("status") == "ok" for r in records)
    console.print(
        f"{ok} cases compared, {sum(r['status'].startswith('not') for r in records)} not "
        "applicable, "
        f"{n_err} exact solves failed"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(records, indent=2) + "\n")
        console.print(f"wrote {len(records)} records to {args.json}")
    return 1 if n_err else 0


if __name__ == "__main__":
    sys.exit(main())
