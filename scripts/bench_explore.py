"""Time a shape-space sweep three ways: serial (one process), the local process pool, and a Dask LocalCluster.

Usage: python scripts/bench_explore.py [SPACE.toml] [--workers N] [--objective OBJ]

Prints the wall time of each sweep (enumeration included), the serial/pool ratio, and checks that the three rankings
are identical (same ids, same proven optima to 1e-12). Needs dask[distributed] for the third sweep (pip install
'hieropt[explore]').
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import hieropt

REPO = Path(__file__).resolve().parents[1]


def _table(result) -> list[tuple[str, int, float]]:
    return [(r["shape_id"], r["rank"], r["objective_value"]) for r in result.ranking]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("space", nargs="?", default=str(REPO / "spaces" / "gpt3-4096.toml"))
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--objective", default=None)
    args = ap.parse_args()
    space = hieropt.load_space(args.space)
    print(f"{args.space}: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    t = time.perf_counter()
    serial = hieropt.studies.explore(space, args.objective, workers=1)
    t_serial = time.perf_counter() - t
    print(f"serial: {t_serial:.2f} s ({len(serial.solved_ids)} solves)")
    t = time.perf_counter()
    pool = hieropt.studies.explore(space, args.objective, workers=args.workers)
    t_pool = time.perf_counter() - t
    print(f"{pool.backend}: {t_pool:.2f} s; serial / pool = {t_serial / t_pool:.2f}")
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("dask: not installed (pip install 'hieropt[explore]')")
        return
    t = time.perf_counter()
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            Client(cl) as client:
        t_up = time.perf_counter() - t
        t = time.perf_counter()
        dask = hieropt.studies.explore(space, args.objective, dask=client)
        t_dask = time.perf_counter() - t
    print(f"dask LocalCluster ({args.workers} workers): {t_dask:.2f} s (+ {t_up:.2f} s to start the cluster); "
          f"serial / dask = {t_serial / t_dask:.2f}")
    same = _table(serial) == _table(pool) == _table(dask)
    print(f"identical rankings (serial, pool, dask): {same}")


if __name__ == "__main__":
    main()
