#!/usr/bin/env python3
"""hieropt vs ASTRA-sim 2.0 (analytical, congestion-unaware): the agreement table of
docs/explanation/astra-sim.md.

Usage::

    python scripts/validate_astrasim.py [--astra-sim BIN] [--data ../shared/data] [--quick]

BIN defaults to $ASTRA_SIM, else ../shared/tools/astra-sim/AstraSim_Analytical_Congestion_Unaware.
Prints, per case family, the number of cases and the largest |simulated - predicted| / predicted,
then the whole-workload table (every training loop x three allocations) with hieropt's prediction in
the simulator's matching mode (one collective in flight, sequential dimensions) and hieropt's
default model (collectives overlap and share links). Finally the time to write the
instances/gpt3-4d.toml bundle, its file count and bytes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import hieropt  # noqa: E402
from hieropt.io.astrasim_bundle import write_bundle  # noqa: E402
from hieropt.model.timing import evaluate  # noqa: E402
from hieropt.spec import (  # noqa: E402
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Layer,
    Mapping,
    Network,
    Phase,
    Workload,
)
from hieropt.studies.heuristics import equal_split, traffic_proportional  # noqa: E402
from hieropt.studies.simulate import matching_instance, simulate  # noqa: E402

MIB, GIB = 2**20, 2**30
BLOCKS = ("Ring", "FullyConnected", "Switch")
KINDS = ("ALLREDUCE", "REDUCESCATTER", "ALLGATHER", "ALLTOALL")
BW = (40.0, 25.0, 10.0)


def _ph(c=0.0, k="NONE", s=0.0):
    return Phase(compute_ns=c, collective=k, size_bytes=s)


def _instance(dims, layers, fwd, ig, wg, loop="no_overlap", mode="sequential", **extra):
    dd = tuple(
        Dimension(
            block=t[0],
            npus=t[1],
            cost_class="C",
            **({"algorithm": t[2]} if t[2] else {}),
            latency_ns=t[3],
        )
        for t in dims
    )
    return Instance(
        name="v",
        network=Network(dims=dd),
        workload=Workload(name="w", layers=tuple(layers)),
        mapping=Mapping(forward=fwd, input_grad=ig, weight_grad=wg),
        cost=CostModel(
            classes={"C": CostClass(link_usd_per_gbps=1, switch_usd_per_gbps=1, nic_usd_per_gbps=1)}
        ),
        objective="performance",
        training_loop=loop,
        dimension_mode=mode,
        **extra,
    )


def _dims(block, n, algorithm=None, latency=0.0):
    sizes = (4, 8) if n == 2 else (4, 2, 4)
    i = BLOCKS.index(block)
    return [
        (BLOCKS[(i + d) % 3], p, algorithm if d == 0 else None, latency)
        for d, p in enumerate(sizes)
    ]


def _one(kind, size, dims, mode="sequential"):
    layer = Layer(name="c", forward=_ph(0, kind, size), input_grad=_ph(), weight_grad=_ph())
    D = len(dims)
    return _instance(dims, [layer], tuple(d[1] for d in dims), (1,) * D, (1,) * D, mode=mode)


def _err(inst, binary, chunks=1):
    bw = BW[: inst.network.n_dims]
    r = simulate(inst, bw, binary, chunks=chunks)
    pred = evaluate(inst, list(bw)).iteration_time_ns
    return abs(r.simulated_iteration_time_ns - pred) / pred


def families(binary, quick):
    sizes = [MIB, GIB] if not quick else [GIB]
    fam = {
        "one chunk vs sequential, 1 MiB-1 GiB": [
            _one(k, s, _dims(b, n)) for b in BLOCKS for k in KINDS for n in (2, 3) for s in sizes
        ],
        "other algorithms (ring on FC/Switch, direct on Ring, halving-doubling), 64 MiB": [
            _one(k, 64 * MIB, _dims(b, 3, a))
            for b, a in [
                ("Ring", "direct"),
                ("FullyConnected", "ring"),
                ("Switch", "ring"),
                ("Switch", "halving_doubling"),
                ("FullyConnected", "halving_doubling"),
            ]
            for k in KINDS
        ],
        "latency 2 us/step, 64 KiB (step counts)": [
            _one(k, 64 * 1024, [(b, 4, a, 2000.0), (b, 8, a, 2000.0)])
            for b, a in [
                ("Ring", None),
                ("FullyConnected", None),
                ("Switch", None),
                ("Ring", "direct"),
                ("Switch", "ring"),
                ("Switch", "halving_doubling"),
                ("FullyConnected", "ring"),
            ]
            for k in KINDS
            if not (k == "ALLTOALL" and (a == "halving_doubling" or (b == "Ring" and a is None)))
        ],
    }
    rows = []
    for name, cases in fam.items():
        rows.append((name, len(cases), max(_err(c, binary) for c in cases)))
    conc = [
        _one(k, GIB, _dims(b, n), mode="concurrent") for b in BLOCKS for k in KINDS for n in (2, 3)
    ]
    rows.append(
        ("256 chunks vs concurrent, 1 GiB", len(conc), max(_err(c, binary, 256) for c in conc))
    )
    return rows


INSTANCE = """name = "v-{name}"
objective = "performance"
training_loop = "{loop}"
dimension_mode = "sequential"
workload = "{workload}"
constraints = ["bw[0] + 2 * bw[1] + 4 * bw[2] == {budget}"]
{mapping}
[network]
dims = [{{ block = "Ring", npus = 4, cost_class = "A" }},
        {{ block = "FullyConnected", npus = 2, cost_class = "A" }},
        {{ block = "Switch", npus = 4, cost_class = "B" }}]
[cost.A]
link_usd_per_gbps = 1.0
[cost.B]
link_usd_per_gbps = 1.0
switch_usd_per_gbps = 1.0
nic_usd_per_gbps = 1.0
"""
GENERATED = """generator = "transformer"
[params]
name = "small-transformer"
layers = 6
hidden_size = 2048
sequence_length = 1024
ffn_multiplier = 4
micro_batch = 1
bytes_per_element = 2
tp = 4
dp = 8
npu_peak_tflops = 100.0
efficiency = 0.5
"""


def workloads(binary, data: Path, tmp: Path):
    out = []
    for which in ("astrasim1", "generated"):
        for loop in ("no_overlap", "tp_dp_overlap", "tp_dp_overlap_cross", "recompute", "pipeline"):
            d = tmp / f"{which}-{loop}"
            d.mkdir()
            if which == "astrasim1":
                wl, mapping, budget = data / "astrasim1" / "Transformer_HybridParallel.txt", "", 7
            else:
                wl = d / "small.toml"
                wl.write_text(GENERATED)
                mapping = (
                    "[mapping]\nforward = [4, 1, 1]\ninput_grad = [4, 1, 1]\nweight_grad = [1, "
                    "2, 4]\n"
                )
                budget = 70
            text = INSTANCE.format(
                name=which, loop=loop, workload=wl, budget=budget, mapping=mapping
            )
            if loop == "pipeline":
                text += (
                    "\n[pipeline]\nstages = 4\nmicrobatches = 4\np2p_bytes = 8388608\np2p_dim = 2\n"
                )
            (d / "i.toml").write_text(text)
            inst = hieropt.load_instance(d / "i.toml")
            allocs = {"equal": equal_split(inst).bw, "traffic": traffic_proportional(inst).bw,
                      "optimum": hieropt.solve(matching_instance(inst)).raise_for_status().bw_gbps}
            res = {}
            for name, bw in allocs.items():
                r = simulate(inst, bw, binary)
                res[name] = (
                    r.predicted_iteration_time_ns,
                    r.simulated_iteration_time_ns,
                    r.predicted_own_ns,
                )
            out.append((which, loop, res))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = os.environ.get("ASTRA_SIM") or str(REPO.parent / "shared" / "tools" / "astra-sim" /
                                                 "AstraSim_Analytical_Congestion_Unaware")
    ap.add_argument("--astra-sim", default=default)
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--quick", action="store_true", help="1 GiB sizes only")
    a = ap.parse_args()
    t0 = time.time()
    print("| case family | cases | max error |\n|---|---:|---:|")
    for name, n, e in families(a.astra_sim, a.quick):
        print(f"| {name} | {n} | {100 * e:.3f} % |")
    with tempfile.TemporaryDirectory() as tmp:
        rows = workloads(a.astra_sim, Path(a.data), Path(tmp))
    print("\n| workload | loop | allocation | predicted ms (1 in flight) | simulated ms | error | "
          "shared-links model ms |")
    print("|---|---|---|---:|---:|---:|---:|")
    for which, loop, res in rows:
        ps = sorted(res, key=lambda n: res[n][0])
        ss = sorted(res, key=lambda n: res[n][1])
        for name, (p, s, c) in res.items():
            print(
                f"| {which} | {loop} | {name} | {p / 1e6:,.4f} | {s / 1e6:,.4f} | "
                f"{100 * abs(s - p) / s:.4f} % | "
                f"{c / 1e6:,.4f} |"
            )
        same = all(
            not (res[a][0] < res[b][0] * (1 - 1e-6)) or res[a][1] < res[b][1]
            for a in res
            for b in res
        )
        print(f"| {which} | {loop} | ranking | {' < '.join(ps)} | {' < '.join(ss)} | "
              f"{'same' if same else 'DIFFERENT'} | |")
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.time()
        b = write_bundle(inst, [225.0, 138.0, 103.5, 33.5], Path(tmp) / "gpt3")
        dt = time.time() - t
    print(
        f"\ngpt3-4d bundle: {dt:.2f} s, {b.files} files ({b.npus} trace names hard-linked "
        "to one file), "
        f"{b.bytes_on_disk:,} bytes, {b.workloads[0].nodes} trace nodes"
    )
    print(f"total {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
