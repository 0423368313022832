#!/usr/bin/env python3
"""Benchmark the joint plan-and-network search (``hieropt.codesign``): candidates enumerated, pruned by the proven
bound, solved, and candidates certified per second per core, serially and with a process pool.

Usage::

    python scripts/bench_codesign.py [--space spaces/codesign-1t-4096.toml] [--workers 1 2] [--no-prune-too]

For each worker count it runs the whole search once (enumeration included, no results file) and prints: the plans
(combinations, fitting), shapes and candidates; how many were pruned and solved; the wall time of the enumeration
and of the search; candidates settled (solved or pruned with a proof) and solved per second per core (throughput /
workers); and the best answer, which must be the same for every worker count. ``--no-prune-too`` also runs the
search without pruning (every candidate solved), the brute force the pruned search must agree with.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hieropt.api import codesign, load_codesign  # noqa: E402
from hieropt.studies.codesign.candidates import enumerate_candidates  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--space", default=str(ROOT / "spaces" / "codesign-1t-4096.toml"))
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--no-prune-too", action="store_true", help="also solve every candidate (brute force)")
    args = ap.parse_args()
    space = load_codesign(args.space)
    t = time.perf_counter()
    enum = enumerate_candidates(space)
    t_enum = time.perf_counter() - t
    print(f"space {space.name}: {enum.plans.combinations:,} plan combinations, {len(enum.plans.fitting):,} fit in "
          f"memory; {len(enum.shapes):,} shapes; {len(enum.candidates):,} candidates; enumeration {t_enum:.2f} s")
    runs = [(w, True) for w in args.workers] + ([(max(args.workers), False)] if args.no_prune_too else [])
    best = {}
    print(f"{'workers':>7} {'prune':>5} {'solved':>8} {'pruned':>8} {'seconds':>9} {'settled/s/core':>15} "
          f"{'solved/s/core':>14}  best")
    for w, prune in runs:
        t = time.perf_counter()
        r = codesign(space, workers=w, prune=prune)
        s = time.perf_counter() - t
        settled = r.solved + r.pruned
        b = r.best
        best[(w, prune)] = b["objective_value"] if b else None
        print(f"{w:>7} {str(prune):>5} {r.solved:>8,} {r.pruned:>8,} {s:>9.1f} {settled / s / w:>15.1f} "
              f"{r.solved / s / w:>14.2f}  {b['objective_value'] / 1e6:,.4f} ms {b['id']}" if b else "  none")
    values = {v for v in best.values() if v is not None}
    same = max(values) <= min(values) * (1 + 1e-8) if values else True
    print(f"same optimum in every run: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
