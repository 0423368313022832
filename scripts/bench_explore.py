"""Time a shape-space sweep: serial (one process), the local process pool and a Dask LocalCluster,
with the throughput in candidates certified per second per core; or, with ``--baseline DIR``, this
tree against another checkout of hieropt (e.g. a git worktree of an older commit) side by side.

Usage:
    python scripts/bench_explore.py [SPACE.toml] [--workers N] [--objective OBJ]
    python scripts/bench_explore.py [SPACE.toml] --baseline DIR [--repeat R] [--objective OBJ]

Without ``--baseline``: prints the wall time of each sweep (enumeration included), candidates
certified per second per core, the serial/pool ratio, and checks that the three rankings are
identical (same ids, same proven optima to 1e-12). Needs dask[distributed] for the third sweep (pip
install 'hieropt[explore]').

With ``--baseline DIR``: runs the sweep ``R`` times (default 3) with one worker in a fresh process
per run for each tree, alternating (``PYTHONPATH`` set to the tree; the shared machine's load hits
both alike), and prints the median sweep time (what ``explore`` reports), the median end-to-end time
of the process (imports, space file and sweep: what ``hieropt explore`` costs less its table
printing), the median wall time of ``hieropt explore SPACE --workers 1`` itself, CPU seconds of the
process, candidates certified per second per core, milliseconds per solve and the rest of the sweep
(enumeration, duplicate keys, rows), the ratios, and the ranking check: same candidates, the same
rank for each, the same optimum to the printed precision (ms to 4 decimals, $ to the dollar, time x
cost to 2 decimals) and the same order once ties are ordered by this tree's rule (a shared rank's
order by the other figure, equal within the gap target, then by id).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this tree's hieropt, whatever the installed one

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
from hieropt.studies.explore import explore
r = explore(sys.argv[1], sys.argv[2] or None, workers=1)
keys = ("shape_id", "rank", "objective_value", "network_cost_usd", "iteration_time_ns", "status")
rows = [{k: x[k] for k in keys} for x in r.ranking]
ok = sum(1 for x in r.rows if x["status"] == "optimal")
solve_s = sum(x["solve_seconds"] or 0.0 for x in r.rows if x["shape_id"] in set(r.solved_ids))
print(json.dumps({"sweep_s": r.seconds, "total_s": time.perf_counter() - t0,
                  "cpu_s": time.process_time() - c0, "certified": ok,
                  "candidates": r.enumeration.placements, "ranking": rows, "solve_s": solve_s,
                  "solved": len(r.solved_ids)}))
"""


def _table(result) -> list[tuple[str, int, float]]:
    return [(r["shape_id"], r["rank"], r["objective_value"]) for r in result.ranking]


def _rate(result) -> str:
    tp = result.throughput
    return f"{tp['certified_per_s_per_core']:,.1f} candidates certified / s / core"


def _local(args) -> None:
    import hieropt

    space = hieropt.load_space(args.space)
    print(f"{args.space}: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    t = time.perf_counter()
    serial = hieropt.studies.explore(space, args.objective, workers=1)
    t_serial = time.perf_counter() - t
    print(f"serial: {t_serial:.2f} s ({len(serial.solved_ids)} solves); {_rate(serial)}")
    t = time.perf_counter()
    pool = hieropt.studies.explore(space, args.objective, workers=args.workers)
    t_pool = time.perf_counter() - t
    print(f"{pool.backend}: {t_pool:.2f} s; serial / pool = {t_serial / t_pool:.2f}; {_rate(pool)}")
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("dask: not installed (pip install 'hieropt[explore]')")
        return
    t = time.perf_counter()
    with (
        LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cl,
        Client(cl) as client,
    ):
        t_up = time.perf_counter() - t
        t = time.perf_counter()
        dask = hieropt.studies.explore(space, args.objective, dask=client)
        t_dask = time.perf_counter() - t
    print(
        f"dask LocalCluster ({args.workers} workers): {t_dask:.2f} s (+ {t_up:.2f} s to "
        "start the cluster); "
        f"serial / dask = {t_serial / t_dask:.2f}; {_rate(dask)}"
    )
    same = _table(serial) == _table(pool) == _table(dask)
    print(f"identical rankings (serial, pool, dask): {same}")


def _cli(tree: Path, space: str, objective: str | None) -> float:
    """Wall seconds of ``hieropt explore SPACE --workers 1`` run from ``tree`` (tables
    discarded)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [
        sys.executable,
        "-c",
        "from hieropt.cli import main; main()",
        "explore",
        space,
        "--workers",
        "1",
    ]
    t = time.perf_counter()
    out = subprocess.run(cmd + (["--objective", objective] if objective else []), env=env, cwd=tree,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{tree}: hieropt explore failed: {out.stderr.strip().splitlines()[-1:]}")
    return time.perf_counter() - t


def _run(tree: Path, space: str, objective: str | None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", _CHILD, space, objective or ""], env=env, cwd=tree,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{tree}: the sweep failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _printed(value: float, objective: str) -> str:
    if objective == "performance":
        return f"{value / 1e6:,.4f}"
    if objective == "min_cost":
        return f"{value:,.0f}"
    return f"{value / 1e12:,.2f}"


def _compare(base: list[dict], now: list[dict], objective: str) -> list[str]:
    from hieropt.studies.explore.run import rank_rows

    b = {r["shape_id"]: r for r in base}
    n = {r["shape_id"]: r for r in now}
    lines = [f"same candidates ranked: {set(b) == set(n)} ({len(b)} vs {len(n)})"]
    common = set(b) & set(n)
    lines.append(f"same rank for each: {all(b[k]['rank'] == n[k]['rank'] for k in common)}")
    groups: list[dict[int, set[str]]] = [{}, {}]
    for g, rows in zip(groups, (base, now), strict=True):
        for r in rows:
            g.setdefault(r["rank"], set()).add(r["shape_id"])
    lines.append(
        f"same candidates sharing each rank: {groups[0] == groups[1]} ({len(groups[1])} ranks)"
    )
    same = all(
        _printed(b[k]["objective_value"], objective) == _printed(n[k]["objective_value"], objective)
        for k in common
    )
    lines.append(f"same optimum to the printed precision: {same}")
    worst = max(
        (
            abs(b[k]["objective_value"] - n[k]["objective_value"]) / abs(n[k]["objective_value"])
            for k in common
        ),
        default=0.0,
    )
    lines.append(f"largest relative difference of an optimum: {worst:.2g}")
    order = [r["shape_id"] for r in rank_rows(base, objective)] == [
        r["shape_id"] for r in rank_rows(now, objective)
    ]
    lines.append(
        f"same order (ties ordered by this tree's rule): {order}; "
        "same order as each tree printed it: "
        f"{[r['shape_id'] for r in base] == [r['shape_id'] for r in now]}"
    )
    return lines


def _side_by_side(args) -> None:
    import hieropt

    base_tree = Path(args.baseline).resolve()
    space = str(Path(args.space).resolve())
    objective = args.objective or hieropt.load_space(space).objective
    print(
        f"{args.space}: objective {objective}; {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f}; "
        f"{args.repeat} runs per tree, one worker, alternating"
    )
    runs: dict[str, list[dict]] = {"baseline": [], "now": []}
    for _ in range(args.repeat):
        for name, tree in (("baseline", base_tree), ("now", REPO)):
            run = _run(tree, space, args.objective)
            run["cli_s"] = _cli(tree, space, args.objective)
            runs[name].append(run)
    fields = ("sweep_s", "total_s", "cli_s", "cpu_s", "solve_s")
    med = {k: {f: statistics.median(r[f] for r in v) for f in fields} for k, v in runs.items()}
    certified = {k: v[0]["certified"] for k, v in runs.items()}
    print(f"{'':28s} {'baseline':>12s} {'now':>12s} {'baseline/now':>13s}")
    for f, label in (("sweep_s", "sweep s (median)"), ("total_s", "process s (median)"),
                     ("cli_s", "hieropt explore s (median)"), ("cpu_s", "process CPU s (median)")):
        b, n = med["baseline"][f], med["now"][f]
        print(f"{label:28s} {b:12.2f} {n:12.2f} {b / n:12.2f}x")
    rate = {k: certified[k] / med[k]["sweep_s"] for k in runs}
    print(f"{'certified / s / core':28s} {rate['baseline']:12.1f} {rate['now']:12.1f} "
          f"{rate['now'] / rate['baseline']:12.2f}x")
    per = {k: 1e3 * med[k]["solve_s"] / max(runs[k][0]["solved"], 1) for k in runs}
    print(f"{'ms per solve (median)':28s} {per['baseline']:12.2f} {per['now']:12.2f} "
          f"{per['baseline'] / per['now']:12.2f}x")
    other = {k: med[k]["sweep_s"] - med[k]["solve_s"] for k in runs}
    print(f"{'other sweep s (median)':28s} {other['baseline']:12.2f} {other['now']:12.2f} "
          f"{other['baseline'] / other['now']:12.2f}x   (enumeration, duplicate keys, rows)")
    print(f"certified candidates: baseline {certified['baseline']}, now {certified['now']} "
          f"(of {runs['now'][0]['candidates']} candidates with duplicates)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    for line in _compare(runs["baseline"][0]["ranking"], runs["now"][0]["ranking"], objective):
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("space", nargs="?", default=str(REPO / "spaces" / "gpt3-4096.toml"))
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--objective", default=None)
    ap.add_argument(
        "--baseline", default=None, help="another hieropt checkout to compare with (side by side)"
    )
    ap.add_argument(
        "--repeat", type=int, default=3, help="with --baseline: runs per tree (medians)"
    )
    args = ap.parse_args()
    if args.baseline:
        _side_by_side(args)
    else:
        _local(args)


if __name__ == "__main__":
    main()
