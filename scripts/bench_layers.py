#!/usr/bin/env python3
"""Benchmark large workloads of DISTINCT layers: 200,000 layers with random compute times and
collective sizes (so exact aggregation cannot merge them) under every training loop, with and
without latency on the dimensions; each case solved (``hieropt.solve``, performance: build + solve +
verify) in a subprocess of its own, which reports its wall time, and whose peak RSS the parent reads
from the child's resource usage (``os.wait4``, the per-child form of
``resource.getrusage(RUSAGE_CHILDREN)``).

Usage::

    python scripts/bench_layers.py [--layers 200000] [--time-limit 120]
                                   [--loops no_overlap,tp_dp_overlap,...]
                                   [--seed 0] [--no-latency-only | --latency-only]

The workloads are built in memory: GPT-3 175B's layer lines (``instances/gpt3-4d.toml``: 4-D
network, TP 16 x DP 256, ``sum(bw) == 500``) cycled to the layer count, every compute time and size
multiplied by an independent factor in [0.5, 1.5). Loop ``pipeline`` uses 8 stages, 32 micro-batches
and 50 MB of activations on dimension 2; loop ``step`` the same workload as one stage (p = 8, m =
32) with ``overlap_dp``. Latency: 700 ns per step on every dimension (algorithm per building block).
Targets: certified (status optimal, gap <= 1e-8, verified) in <= 30 s and <= 2 GB peak RSS per case
("solve s": ``hieropt.solve`` from the built instance, i.e. build + solve
+ verify; "wall s": the whole child process, Python start-up and building the workload in memory
  included).
Exit status 1 when a case misses a target.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S, TARGET_MB, INF = 30.0, 2048, float("inf")
LOOPS = ("no_overlap", "recompute", "pipeline", "step", "tp_dp_overlap", "tp_dp_overlap_cross")


def build(layers: int, loop: str, latency: bool, seed: int):
    """The instance of one case (see the module docstring)."""
    import numpy as np

    import hieropt
    from hieropt.spec import LayerTable, Pipeline, StepSchedule, Workload

    base = hieropt.load_instance(ROOT / "instances" / "gpt3-4d.toml")
    layers0 = base.workload.layers
    table = layers0 if isinstance(layers0, LayerTable) else LayerTable.from_layers(layers0)
    rng = np.random.default_rng(seed)
    idx = np.arange(layers) % table.compute_ns.shape[0]
    new = LayerTable(
        [f"layer{i}" for i in range(layers)],
        table.compute_ns[idx] * rng.uniform(0.5, 1.5, (layers, 3)),
        table.size_bytes[idx] * rng.uniform(0.5, 1.5, (layers, 3)),
        table.kinds[idx],
        table.scopes[idx],
        table.update_ns[idx],
        table.policies[idx],
    )
    net = base.network
    if latency:
        net = net.model_copy(
            update={"dims": tuple(d.model_copy(update={"latency_ns": 700.0}) for d in net.dims)}
        )
    update = {
        "workload": Workload(name=f"random{layers}", layers=new),
        "training_loop": loop,
        "network": net,
    }
    if loop == "pipeline":
        update["pipeline"] = Pipeline(stages=8, microbatches=32, p2p_bytes=5e7, p2p_dim=2)
    if loop == "step":
        update["step"] = StepSchedule(microbatches=32, stages=8, overlap_dp=True)
    return base.model_copy(update=update)


def child(args: argparse.Namespace) -> int:
    """One case in this process: print a JSON line with the result."""
    import resource

    import hieropt

    inst = build(args.layers, args.loop, args.latency, args.seed)
    start = time.perf_counter()
    sol = hieropt.solve(inst, options=hieropt.SolveOptions(time_limit_s=args.time_limit))
    took = time.perf_counter() - start
    print(
        json.dumps(
            {
                "status": str(sol.status.value if hasattr(sol.status, "value") else sol.status),
                "gap": sol.gap,
                "seconds": took,
                "lps": sol.iterations,
                "terms": sol.extra.get("terms"),
                "time_ns": sol.iteration_time_ns,
                "self_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )
    return 0


def run_case(cmd: list[str], env: dict, limit_s: float) -> tuple[str, str, float, float]:
    """Run ``cmd``; (stdout, stderr, wall s, peak RSS MB of that child from ``os.wait4``'s resource
    usage), the child killed after ``limit_s``."""
    import tempfile

    with tempfile.TemporaryFile("w+") as fo, tempfile.TemporaryFile("w+") as fe:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, text=True, env=env)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > limit_s:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                fo.seek(0, 2)
                fo.write(json.dumps({"status": "timeout"}) + "\n")
                break
            time.sleep(0.05)
        proc.returncode = status
        wall = time.perf_counter() - start
        fo.seek(0)
        fe.seek(0)
        return fo.read(), fe.read(), wall, usage.ru_maxrss / 1024  # Linux: KB


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layers", type=int, default=200_000)
    p.add_argument("--time-limit", type=float, default=120.0, help="wall-clock limit per case, s")
    p.add_argument("--loops", default=",".join(LOOPS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--latency-only", action="store_true")
    p.add_argument("--no-latency-only", action="store_true")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--loop", help=argparse.SUPPRESS)
    p.add_argument("--latency", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return child(args)
    lat = [False, True]
    if args.latency_only:
        lat = [True]
    if args.no_latency_only:
        lat = [False]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    print(
        f"{args.layers:,} distinct layers; load average {os.getloadavg()[0]:.2f} on "
        f"{os.cpu_count()} CPUs"
    )
    print(
        f"{'loop':<22}{'latency':>8}{'status':>10}{'gap':>10}{'solve s':>9}{'wall s':>8}"
        f"{'peak MB':>9}{'LPs':>6}{'':>6}"
    )
    failures = 0
    for loop in args.loops.split(","):
        for latency in lat:
            cmd = [
                sys.executable,
                __file__,
                "--child",
                "--loop",
                loop,
                "--layers",
                str(args.layers),
                "--seed",
                str(args.seed),
                "--time-limit",
                str(args.time_limit),
            ] + (["--latency"] if latency else [])
            out, err, wall, peak = run_case(cmd, env, args.time_limit)
            lines = [ln for ln in out.splitlines() if ln.startswith("{")]
            r = (
                json.loads(lines[-1])
                if lines
                else {"status": "error", "why": (err.strip().splitlines() or [""])[-1]}
            )
            ok = (
                r["status"] == "optimal"
                and r.get("gap", 1.0) <= 1e-8
                and r.get("seconds", INF) <= TARGET_S
                and peak <= TARGET_MB
            )
            print(
                f"{loop:<22}{'yes' if latency else 'no':>8}{r['status']:>10}"
                f"{r.get('gap', float('nan')):>10.1e}{r.get('seconds', float('nan')):>9.2f}"
                f"{wall:>8.2f}{peak:>9.0f}{r.get('lps', 0):>6}"
                f"{'ok' if ok else 'MISS':>6} {r.get('why', '')[:80]}",
                flush=True,
            )
            failures += not ok
    print(
        f"targets: certified (optimal, gap <= 1e-8, verified), solve <= {TARGET_S:g} s, "
        f"peak RSS <= {TARGET_MB:,} MB;"
        f" {failures} case(s) missed"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
