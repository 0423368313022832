#!/usr/bin/env python3
"""Benchmark the joint plan-and-network search (``hieropt.codesign``): candidates enumerated, pruned
by the proven bound, solved, and candidates settled per second per core, serially and with a process
pool; or, with ``--baseline DIR``, this tree against another checkout of hieropt side by side.

Usage::

    python scripts/bench_codesign.py [--space spaces/codesign-1t-4096.toml] [--workers 1 2]
                                     [--no-prune-too]
    python scripts/bench_codesign.py --baseline DIR [--space ...] [--repeat R] [--without-tie-break]

For each worker count it runs the whole search once (enumeration included, no results file) and
prints: the plans (combinations, fitting), shapes and candidates; how many were pruned and solved;
the wall time of the enumeration and of the search; candidates settled (solved or pruned with a
proof) and solved per second per core (throughput / workers); where the serial search's time goes
(enumeration, the solves, the rows of the candidates not solved); and the best answer, which must be
the same for every worker count; and the peak resident memory of the process. ``--no-prune-too``
also runs the search without pruning (every candidate solved), the brute force the pruned search
must agree with.

With ``--baseline DIR`` (e.g. a ``git worktree`` or ``git archive`` of an older commit): runs the
serial search ``R`` times (default 5) for each tree, alternating, each run in a fresh process
(``PYTHONPATH`` set to the tree, nothing cached from an earlier run; the shared machine's load hits
both alike), and prints the median and the fastest wall time and the median CPU time of the search,
settled and solved candidates per second per core (from the median wall time), per-solve
milliseconds, the ratios now / baseline, and the checks: the same best candidate, its value within
1e-8 (the gap target: the row's design is the cheapest of the designs within 1e-8 of the fastest),
and the same set of solved and of pruned candidates. ``--without-tie-break`` adds this tree with
each row at the performance optimum's own design, without the search for the cheapest of the equally
fast designs: what that search costs, beside what the rest of the search gained or lost.
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

ROOT = Path(__file__).resolve().parents[1]
NO_TIE = "now, no tie-break"
sys.path.insert(0, str(ROOT))

_CHILD = r"""
import hashlib, json, os, sys, time
from hieropt.api import codesign, load_codesign
if os.environ.get("BENCH_NO_TIE_BREAK"):  # each row the performance optimum's own design
    import hieropt.solvers.objectives as objectives
    def plain(instance, time_limit_s=60.0):
        sol = objectives.solve(instance).raise_for_status()
        return sol, sol
    objectives.solve_fastest_cheapest = plain
space = load_codesign(sys.argv[1])
t = time.perf_counter(); c = time.process_time()
rows = []
r = codesign(space, workers=1,
             on_row=lambda x: rows.append((x["id"], x["status"], x["solve_seconds"])))
wall, cpu = time.perf_counter() - t, time.process_time() - c
solved = sorted(i for i, s, _ in rows if s != "pruned")
pruned = sorted(i for i, s, _ in rows if s == "pruned")
digest = lambda ids: hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]
# (settled without a solve; a tree whose Codesign has no `settled` counted them in `pruned`)
print(json.dumps({"wall": wall, "cpu": cpu, "solved": r.solved,
                  "pruned": getattr(r, "settled", r.pruned),
                  "best": r.best.id, "value": r.best.objective_value,
                  "solved_ids": digest(solved), "pruned_ids": digest(pruned),
                  "solve_s": sum(x or 0.0 for _, s, x in rows if s != "pruned")}))
"""


def _child(tree: Path, space: str, tie_break: bool = True) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    if not tie_break:
        env["BENCH_NO_TIE_BREAK"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, space],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"{tree}: the search failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _side_by_side(args) -> int:
    base_tree, space = Path(args.baseline).resolve(), str(Path(args.space).resolve())
    print(
        f"{args.space}: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
        f"{args.repeat} runs per tree, "
        "one worker, alternating, a fresh process per run"
    )
    trees = [("baseline", base_tree, True), ("now", ROOT, True)]
    if args.without_tie_break:
        trees.append((NO_TIE, ROOT, False))
    runs: dict[str, list[dict]] = {name: [] for name, _, _ in trees}
    for _ in range(args.repeat):
        for name, tree, tie_break in trees:
            runs[name].append(_child(tree, space, tie_break))
    med = {
        k: {f: statistics.median(r[f] for r in v) for f in ("wall", "cpu", "solve_s")}
        for k, v in runs.items()
    }
    fastest = {k: min(r["wall"] for r in v) for k, v in runs.items()}
    first = {k: v[0] for k, v in runs.items()}
    settled = {k: first[k]["solved"] + first[k]["pruned"] for k in runs}
    rows = [
        ("search s (median)", lambda k: med[k]["wall"], ".3f", True),
        ("search s (fastest)", lambda k: fastest[k], ".3f", True),
        ("search CPU s (median)", lambda k: med[k]["cpu"], ".3f", True),
        ("settled / s / core", lambda k: settled[k] / med[k]["wall"], ",.0f", False),
        ("solved / s / core", lambda k: first[k]["solved"] / med[k]["wall"], ",.1f", False),
        (
            "ms per solve (median)",
            lambda k: 1e3 * med[k]["solve_s"] / max(first[k]["solved"], 1),
            ".2f",
            True,
        ),
        ("other s (median)", lambda k: med[k]["wall"] - med[k]["solve_s"], ".3f", True),
    ]
    others = [k for k in runs if k != "baseline"]
    print(f"{'':26s} {'baseline':>12s}" + "".join(f" {k:>18s} {'vs baseline':>12s}"
                                                 for k in others))
    for label, f, fmt, lower_is_better in rows:
        b = f("baseline")
        line = f"{label:26s} {b:12{fmt}}"
        for k in others:
            n = f(k)
            ratio = b / n if lower_is_better else n / b
            line += f" {n:18{fmt}} {ratio:11.2f}x"
        print(line)
    print(
        "(other: enumeration of plans, shapes and candidates with their bounds, and the "
        "rows of those not solved)"
    )
    b, n = first["baseline"], first["now"]
    print(
        f"solved {n['solved']:,} (baseline {b['solved']:,}), pruned {n['pruned']:,} "
        f"(baseline {b['pruned']:,})"
    )
    checks = {
        "same best candidate, value within 1e-8": all(
            r["best"] == b["best"] and abs(r["value"] - b["value"]) <= 1e-8 * b["value"]
            for v in runs.values() for r in v
        ),
        "same solved candidates": all(
            r["solved_ids"] == b["solved_ids"] for v in runs.values() for r in v
        ),
        "same pruned candidates": all(
            r["pruned_ids"] == b["pruned_ids"] for v in runs.values() for r in v
        ),
    }
    for label, ok in checks.items():
        print(f"{label}: {ok}")
    print(
        f"best: {n['value'] / 1e6:,.4f} ms {n['best']}; load average after: "
        f"{os.getloadavg()[0]:.2f}"
    )
    return 0 if all(checks.values()) else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--space", default=str(ROOT / "spaces" / "codesign-1t-4096.toml"))
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument(
        "--no-prune-too", action="store_true", help="also solve every candidate (brute force)"
    )
    ap.add_argument(
        "--baseline", default=None, help="another hieropt checkout to compare with (side by side)"
    )
    ap.add_argument(
        "--repeat", type=int, default=5, help="with --baseline: runs per tree (medians)"
    )
    ap.add_argument(
        "--without-tie-break", action="store_true",
        help="with --baseline: also this tree with each row at the performance optimum's own "
        "design (no search for the cheapest of the equally fast designs): the tie-break's cost",
    )
    args = ap.parse_args()
    if args.baseline:
        return _side_by_side(args)
    from hieropt.api import codesign, load_codesign
    from hieropt.studies.codesign.candidates import enumerate_candidates

    space = load_codesign(args.space)
    t = time.perf_counter()
    enum = enumerate_candidates(space)
    t_enum = time.perf_counter() - t
    print(
        f"space {space.name}: {enum.plans.combinations:,} plan combinations, "
        f"{len(enum.plans.fitting):,} fit in "
        f"memory; {len(enum.shapes):,} shapes; {enum.count:,} candidates ({enum.pairs:,} "
        "plan-shape pairs, "
        f"{enum.frontier_bytes / 1e6:,.1f} MB of pair order); enumeration {t_enum:.2f} s"
    )
    runs = [(w, True) for w in args.workers] + (
        [(max(args.workers), False)] if args.no_prune_too else []
    )
    best = {}
    print(
        f"{'workers':>7} {'prune':>5} {'solved':>8} {'no solve':>8} {'seconds':>9} "
        f"{'settled/s/core':>15} "
        f"{'solved/s/core':>14}  best"
    )
    for w, prune in runs:
        t = time.perf_counter()
        solve_s = [0.0]

        def count(row, solve_s=solve_s):
            solve_s[0] += row["solve_seconds"] or 0.0

        r = codesign(space, workers=w, prune=prune, on_row=count)
        s = time.perf_counter() - t
        settled = r.solved + r.settled
        b = r.best
        best[(w, prune)] = b.objective_value if b else None
        print(
            f"{w:>7} {str(prune):>5} {r.solved:>8,} {r.settled:>8,} {s:>9.2f} "
            f"{settled / s / w:>15.1f} "
            f"{r.solved / s / w:>14.2f}  {b.objective_value / 1e6:,.4f} ms {b.id}"
            if b
            else "  none"
        )
        if w == 1:
            solves = solve_s[0]
            print(
                f"{'':>7} serial: {solves:.2f} s in {r.solved:,} solves "
                f"({1e3 * solves / max(r.solved, 1):.2f} ms "
                f"each), {s - solves:.2f} s enumerating the candidates and settling those "
                "not solved"
            )
    values = {v for v in best.values() if v is not None}
    same = max(values) <= min(values) * (1 + 1e-8) if values else True
    print(f"same optimum in every run: {same}")
    import resource

    print(
        "peak memory of this process: "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB "
        "(resident set; worker processes not included)"
    )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
