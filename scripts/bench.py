#!/usr/bin/env python3
"""Benchmark ``hieropt.api.solve`` on the 24 LIBRA cases against LIBRA's own Gurobi model and direct
SCIP models (performance, performance per cost), its layer scaling, and the 50-point Pareto front
against 50 independent solves.

Usage::

    python scripts/bench.py [--data ../shared/data/libra] [--repeats 50] [--gurobi-repeats 10]
                            [--scip-repeats 3] [--ppc-repeats 25] [--rounds 5]
                            [--scip-ppc-repeats 1] [--scip-time-limit 60] [--no-scip]
                            [--front-points 50] [--front-repeats 3] [--only a,b,c,d,e]

The cases: GPT_3, MSFT_1T, Turing_NLG and ResNet_50 with LIBRA's ``total_bw_500gbps`` constraints on
the 3D and 4D networks and its ``multiple_constraints`` on the 4D network (written for it): 12
instances x 2 objectives.

(a) Performance: the median wall time of ``api.solve`` (build + solve + verify; the instance is
    loaded once, outside
the timing, and solved repeatedly: the time model, the compiled LP and its seeded cut LP are built
on the first solve and kept; column "cold" times the first solve of a freshly loaded instance
instead, its load untimed), of LIBRA's Gurobi model at LIBRA's settings
(scripts/bench_gurobi.py: ``bw * bw_inv == 1``, ``NonConvex = 2``, build + solve; skipped with a
note when gurobipy is absent) and of an independent SCIP oracle written with pyscipopt (model build
+ solve), the ratios, and the optima. hieropt's and Gurobi's calls run in alternating blocks
  (``--rounds`` rounds;
in each, every solver makes its share of its repeats back to back, after one untimed call), so that
every median sees the same state of the shared machine and each solver runs warm, as in a sweep
(:func:`timed_side_by_side`); the cold solves run in a pass of their own after that (their untimed
fresh loads would evict both solvers' caches between the blocks). Gurobi's and SCIP's optima are
re-evaluated at their bandwidths with ``api.evaluate``, because a slack ``B*t == 1`` can report a
value below the true optimum.

(b) GPT_3 on the 4D network with its layers replicated x1, x100, x10,000 (built in memory, outside
    the timing): the
collectives, aggregated LP terms, LP rows, the first solve (which includes building the workload's
numpy table) and the median of the following solves.

(c) Performance per cost (min iteration time x network cost) on the same 12 instances:
    ``api.solve(objective=
"performance_per_cost")`` against Gurobi on LIBRA's PerfPerCostOpt model and an independent SCIP
model of the bilinear product (``z >= T * C``, spatial branch and bound, 60 s time limit), with the
agreement of the products.

(d) The exact time-cost Pareto front of ``instances/gpt3-4d.toml`` with 50 points (``api.pareto``,
    one persistent LP)
against 50 independent ``api.solve(options=SolveOptions(budget_usd=X))`` calls at the same budgets.
Target: front <= 1 s.

(e) A 100,000-layer ASTRA-sim 1.0 file: load + first solve, wall clock (target <= 1 s).

The summary prints, per objective, the geometric mean of Gurobi's time over hieropt's (speed-up; the
target is >= 10) and the slowest case's ratio (the target is >= 1: no case slower than Gurobi), all
from this one run.

The other benchmarks have scripts of their own: scripts/bench_layers.py (200,000 distinct layers
under every training loop), scripts/bench_explore.py (the shape sweep) and scripts/bench_startup.py
(``hieropt --help`` <= 0.3 s and a bad-input error <= 0.5 s, run as subprocesses of the console
script).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from pyscipopt import Model, quicksum
from rich.console import Console
from rich.table import Table

from hieropt import api
from hieropt.model.traffic import aggregate, phase_traffic
from hieropt.spec import Instance, Workload

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gurobi import available as gurobi_available  # noqa: E402
from bench_gurobi import environment as gurobi_environment  # noqa: E402
from bench_gurobi import solve_libra as gurobi_libra  # noqa: E402

NETWORKS = {
    "3d": ("3d_network.yml", "3d_cost_model.yml"),
    "4d": ("4d_network.yml", "4d_cost_model.yml"),
}
CONSTRAINTS = {
    "total_bw_500gbps": ["sum(bw) == 500"],
    "multiple_constraints": [
        "sum(bw) == 1000",
        "bw[0] == 500",
        "bw[0] >= bw[1]",
        "bw[1] >= bw[2]",
        "bw[2] + bw[3] == 200",
    ],
}
CASES = [
    (wl, dims, cons)
    for cons in CONSTRAINTS
    for dims in ("3d", "4d")
    for wl in ("GPT_3", "MSFT_1T", "Turing_NLG", "ResNet_50")
    if cons == "total_bw_500gbps" or dims == "4d"
]
"""LIBRA's pairings (constraints.md): multiple_constraints is written for the 4-dimensional
network."""
SCALES = (1, 100, 10_000)
MB, MS_NS = 1e6, 1e6
FRONT_INSTANCE = Path(__file__).resolve().parents[1] / "instances" / "gpt3-4d.toml"


def load(data: Path, workload: str, dims: str, constraints: str = "total_bw_500gbps") -> Instance:
    net, cost = NETWORKS[dims]
    comm = (
        f"{workload}_{dims.upper()}.yml" if workload == "Turing_NLG" else f"{workload}_{dims}.yml"
    )
    return api.load_libra(
        data / "network" / net,
        data / "workload" / f"{workload}.txt",
        data / "communicator" / comm,
        data / "cost_model" / cost,
        constraints=CONSTRAINTS[constraints],
        name=f"{workload}-{dims}-{constraints}",
    )


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    """Median and minimum wall time (s) of ``repeats`` calls of ``fn``, and the last call's
    result."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), out


def scip_oracle(instance: Instance, time_limit_s: float = 60.0) -> dict[str, Any]:
    """Minimum iteration time by SCIP (spatial branch-and-bound) on the unaggregated model.

    Units MB, GB/s, ms. Variables B_d (GB/s), t_d = 1/B_d (``B_d * t_d == 1``) for every dimension
    with traffic, tau_k >= m_kd * t_d for every collective k (from
    :func:`hieropt.model.traffic.phase_traffic`, one per layer and phase);
    objective sum_k tau_k; the instance's linear design constraints and bounds on B.
    """
    D = instance.network.n_dims
    traffic = phase_traffic(instance).reshape(-1, D) / MB
    traffic = traffic[traffic.max(axis=1) > 0]
    loaded = [d for d in range(D) if traffic[:, d].max(initial=0.0) > 0]
    m = Model("scip-oracle")
    m.hideOutput()
    m.setParam("display/verblevel", 0)
    m.setParam("numerics/feastol", 1e-9)
    m.setParam("limits/gap", 1e-8)
    m.setParam("limits/time", time_limit_s)
    bounds = instance.bounds_or_default
    B = [m.addVar(f"B{d}", lb=bounds[d].lower_gbps, ub=bounds[d].upper_gbps) for d in range(D)]
    t = {d: m.addVar(f"t{d}", lb=0.0, ub=None) for d in loaded}
    for d in loaded:
        m.addCons(B[d] * t[d] == 1)
    tau = [m.addVar(f"tau{k}", lb=0.0, ub=None) for k in range(traffic.shape[0])]
    for k in range(traffic.shape[0]):
        for d in loaded:
            if traffic[k, d] > 0:
                m.addCons(tau[k] >= float(traffic[k, d]) * t[d])
    for c in instance.constraints:
        lhs = quicksum(float(a) * B[d] for d, a in enumerate(c.coefficients) if a != 0)
        m.addCons(
            lhs <= c.rhs if c.sense == "<=" else lhs >= c.rhs if c.sense == ">=" else lhs == c.rhs
        )
    m.setObjective(quicksum(tau), "minimize")
    m.optimize()
    status = m.getStatus()
    if m.getNSols() == 0:
        return {"status": status, "objective_ns": float("nan"), "bw": None}
    compute_ns = float(instance.workload.table.compute_ns.sum())
    return {"status": status, "objective_ns": compute_ns + m.getObjVal() * MS_NS,
            "bw": np.array([m.getVal(b) for b in B]), "nodes": m.getNNodes()}


def _unit_cost_usd(instance: Instance) -> np.ndarray:
    """N * u_d, $ per GB/s of per-NPU bandwidth for the whole cluster, straight from the cost
    classes."""
    out = []
    for dim in instance.network.dims:
        cc = instance.cost.classes[dim.cost_class]
        price = cc.link_usd_per_gbps
        if dim.block == "Switch":
            price += (cc.switch_usd_per_gbps or 0.0) + (cc.nic_usd_per_gbps or 0.0)
        out.append(price * instance.network.npus_total)
    return np.array(out)


def _design(m: Model, instance: Instance) -> list:
    bounds = instance.bounds_or_default
    B = [
        m.addVar(f"B{d}", lb=bounds[d].lower_gbps, ub=bounds[d].upper_gbps)
        for d in range(instance.network.n_dims)
    ]
    for c in instance.constraints:
        lhs = quicksum(float(a) * B[d] for d, a in enumerate(c.coefficients) if a != 0)
        m.addCons(
            lhs <= c.rhs if c.sense == "<=" else lhs >= c.rhs if c.sense == ">=" else lhs == c.rhs
        )
    return B


def _lp(
    instance: Instance, objective: Callable[[list], Any], sense: str
) -> tuple[float, np.ndarray]:
    m = Model("lp")
    m.hideOutput()
    m.setParam("numerics/feastol", 1e-9)
    B = _design(m, instance)
    m.setObjective(objective(B), sense)
    m.optimize()
    if m.getStatus() != "optimal":
        raise RuntimeError(f"SCIP LP stopped with status {m.getStatus()!r}")
    return m.getObjVal(), np.array([m.getVal(b) for b in B])


def scip_ppc_oracle(instance: Instance, time_limit_s: float = 60.0) -> dict[str, Any]:
    """Minimum iteration time x network cost by SCIP (spatial branch and bound on the bilinear
    product).

    ``min z`` s.t. ``z >= T * C``, ``T = compute + sum_k tau_k``, ``C = sum_d c_d B_d``, ``tau_k >=
    m_kd t_d`` for every collective k (unaggregated, from
    :func:`hieropt.model.traffic.phase_traffic`), ``B_d t_d >= 1`` (convex; the same optimum as ``==
    1``, with which SCIP 10 failed with LP errors on small cases, see
    tests/oracle/test_scip_product.py) and the design rows. Time and cost are in units of T(B0) and
    C(B0) at a feasible point B0 (max-min loaded bandwidth, one LP), so T, C and z are ~1; valid
    bounds from P0 = T(B0) C(B0): C in [C_min, min(C_max, P0 / compute)], T <= P0 / C_min. Gap
    target 1e-7, ``numerics/feastol`` 1e-9.
    """
    D = instance.network.n_dims
    traffic = phase_traffic(instance).reshape(-1, D)
    traffic = traffic[traffic.max(axis=1) > 0]
    loaded = [d for d in range(D) if traffic[:, d].max(initial=0.0) > 0]
    compute_ns = float(instance.workload.table.compute_ns.sum())
    c_usd = _unit_cost_usd(instance)
    start = time.perf_counter()
    m0 = Model("b0")
    m0.hideOutput()
    m0.setParam("numerics/feastol", 1e-9)
    B0 = _design(m0, instance)
    s = m0.addVar("s", lb=None)
    for d in loaded:
        m0.addCons(s <= B0[d])
    m0.setObjective(s, "maximize")
    m0.optimize()
    b0 = np.array([m0.getVal(b) for b in B0])
    t0 = compute_ns + float(
        sum(max(row[d] / b0[d] for d in np.flatnonzero(row > 0)) for row in traffic)
    )
    c0 = float(c_usd @ b0)
    mt, compute, c = traffic / t0, compute_ns / t0, c_usd / c0
    c_min, _ = _lp(instance, lambda B: quicksum(float(c[d]) * B[d] for d in range(D)), "minimize")
    c_max, _ = _lp(instance, lambda B: quicksum(float(c[d]) * B[d] for d in range(D)), "maximize")
    p0 = 1.0 + 1e-4  # T(B0) C(B0) in these units, with a margin
    t_max = p0 / c_min
    if compute > 0:
        c_max = min(c_max, p0 / compute)
    m = Model("scip-ppc-oracle")
    m.hideOutput()
    m.setParam("display/verblevel", 0)
    m.setParam("numerics/feastol", 1e-9)
    m.setParam("limits/gap", 1e-7)
    m.setParam("limits/time", time_limit_s)
    B = _design(m, instance)
    t = {d: m.addVar(f"t{d}", lb=0.0, ub=(t_max - compute) / mt[:, d].max()) for d in loaded}
    for d in loaded:
        m.addCons(B[d] * t[d] >= 1)
    tau = [m.addVar(f"tau{k}", lb=0.0, ub=t_max - compute) for k in range(mt.shape[0])]
    for k in range(mt.shape[0]):
        for d in loaded:
            if mt[k, d] > 0:
                m.addCons(tau[k] >= float(mt[k, d]) * t[d])
    T = m.addVar("T", lb=compute, ub=t_max)
    C = m.addVar("C", lb=c_min, ub=c_max)
    z = m.addVar("z", lb=0.0)
    m.addCons(T == compute + quicksum(tau))
    m.addCons(C == quicksum(float(c[d]) * B[d] for d in range(D)))
    m.addCons(z >= T * C)
    m.setObjective(z, "minimize")
    try:
        m.optimize()
    except Exception as e:  # pyscipopt raises a bare Exception for SCIP error codes
        return {"status": f"error: {e}", "bw": None, "seconds": time.perf_counter() - start}
    status = m.getStatus()
    out = {
        "status": status,
        "gap": m.getGap(),
        "nodes": m.getNNodes(),
        "seconds": time.perf_counter() - start,
        "bw": None,
    }
    if m.getNSols() > 0:
        out.update(
            bw=np.array([max(0.0, m.getVal(b)) for b in B]),
            objective=m.getObjVal() * t0 * c0,
            dual_bound=m.getDualbound() * t0 * c0,
        )
    return out


def lp_rows(instance: Instance, cuts: int) -> int:
    """Rows of the final performance LP: epigraph rows (nonzeros of the aggregated terms) + design
    rows + cuts."""
    terms = aggregate(phase_traffic(instance).reshape(-1, instance.network.n_dims)).bytes
    return int((terms > 0).sum()) + len(instance.constraints) + cuts


def timed_side_by_side(fns: list[Callable[..., Any]], repeats: list[int],
                       prepare: list[Callable[[], Any] | None] | None = None,
                       rounds: int = 5, warmup: int = 1) -> list[tuple[float, float, Any]]:
    """:func:`timed` for several solvers in alternating blocks: ``rounds`` rounds, and in each round
    every solver makes ``warmup`` untimed calls and then its share of its ``repeats`` timed calls
    back to back (w a a a, w b b, w a a a, w b b, ...). On a shared machine whose speed drifts,
    every solver's median sees the same moments (each round is a few milliseconds); within a block a
    solver runs with its own code and data in the CPU caches, as it does in a sweep of candidates,
    instead of after every call of the other solver (which evicts them: a 0.4 ms solve then takes
    about 0.6 ms, and Gurobi's too gains from its own repeats). The untimed call opening each block
    (the same for every solver) takes the switch between the solvers: measured here, the first calls
    after another solver's block, or after a 5 ms sleep, run 2-4x slower while the virtual CPU's
    clock and caches come back. With ``prepare[j]``, each call of ``fns[j]`` gets its untimed result
    as argument (e.g. a freshly loaded instance)."""
    times: list[list[float]] = [[] for _ in fns]
    outs: list[Any] = [None] * len(fns)
    prepare = prepare or [None] * len(fns)
    for r in range(rounds):
        for j, fn in enumerate(fns):
            # (the repeats spread over the rounds)
            share = repeats[j] * (r + 1) // rounds - repeats[j] * r // rounds
            for k in range(warmup + share):
                args = () if prepare[j] is None else (prepare[j](),)
                start = time.perf_counter()
                outs[j] = fn(*args)
                if k >= warmup:
                    times[j].append(time.perf_counter() - start)
    return [(statistics.median(t), min(t), o) for t, o in zip(times, outs, strict=True)]


def lp_seconds(fn: Callable[[], Any], repeats: int = 5) -> float:
    """Median seconds spent inside the LP solvers' own runs during a call of ``fn``, over
    ``repeats`` untimed calls: DAQP's (:meth:`hieropt.solvers.dense_lp.DenseLP._dense_solve`, the
    call and its argument arrays) and HiGHS's (:meth:`hieropt.solvers.highs.HighsLP._run`: the
    option call and ``highspy.Highs.run``); the part of a solve that no Python-side work around the
    LPs can remove."""
    from hieropt.solvers import dense_lp, highs
    patched = [(highs.HighsLP, "_run"), (dense_lp.DenseLP, "_dense_solve")]
    originals = [getattr(cls, name) for cls, name in patched]
    spent = [0.0]

    def timing(original):
        def run(self):
            start = time.perf_counter()
            try:
                return original(self)
            finally:
                spent[0] += time.perf_counter() - start
        return run

    out = []
    for (cls, name), original in zip(patched, originals, strict=True):
        setattr(cls, name, timing(original))
    try:
        for _ in range(repeats):
            spent[0] = 0.0
            fn()
            out.append(spent[0])
    finally:
        for (cls, name), original in zip(patched, originals, strict=True):
            setattr(cls, name, original)
    return statistics.median(out)


def _cell_ms(t: float) -> str:
    return f"{t * 1e3:,.2f}" if np.isfinite(t) else "-"


def objective_cases(console: Console, data: Path, objective: str, repeats: int, gurobi_repeats: int,
                    scip_repeats: int, scip_time_limit_s: float, env, use_scip: bool,
                    rounds: int = 5) -> dict[str, list[float]]:
    """One table per objective over :data:`CASES`: hieropt, Gurobi (LIBRA's model) and SCIP, with
    the agreement of their optima (Gurobi's and SCIP's re-evaluated by hieropt's evaluator). Returns
    the per-case median times (s)."""
    ppc = objective == "performance_per_cost"
    label = "(c) performance per cost" if ppc else "(a) performance"
    table = Table(
        title=f"{label}, 12 LIBRA instances: hieropt (median of {repeats}), Gurobi at LIBRA's "
        "settings "
        f"(median of {gurobi_repeats}), SCIP (median of {scip_repeats})",
        title_justify="left",
    )
    for col in (
        "case",
        "hieropt ms",
        "(min)",
        "cold ms",
        "LP ms",
        "Gurobi ms",
        "Gurobi/hieropt",
        "Gurobi/cold",
        "SCIP ms",
        "SCIP/hieropt",
        "hieropt value",
        "Gurobi rel diff",
        "SCIP rel diff",
        "hieropt gap",
        "Gurobi gap",
        "SCIP status",
    ):
        table.add_column(col, justify="left" if col in ("case", "SCIP status") else "right")
    times: dict[str, list[float]] = {
        "hieropt": [],
        "cold": [],
        "highs": [],
        "gurobi": [],
        "scip": [],
    }
    for wl, dims, cons in CASES:
        inst = load(data, wl, dims, cons)

        def value(bw: np.ndarray | None, inst=inst) -> float:
            if bw is None:
                return float("nan")
            bd = api.evaluate(inst, bw)
            return bd.iteration_time_ns * (bd.network_cost_usd if ppc else 1.0)

        api.solve(inst, objective=objective)  # untimed warm-up
        t_gur, gur = float("nan"), {"bw": None, "gap": float("nan")}
        ours_fn = lambda inst=inst: api.solve(inst, objective=objective)  # noqa: E731
        fns, reps = [ours_fn], [repeats]
        # in alternating blocks, so that every median sees the same state of the shared machine
        if env is not None:
            gurobi_libra(inst, objective, env)  # untimed warm-up
            fns, reps = (
                [*fns, lambda inst=inst: gurobi_libra(inst, objective, env)],
                [*reps, gurobi_repeats],
            )
        (t_ours, min_ours, sol), *rest = timed_side_by_side(fns, reps, None, rounds)
        if rest:
            t_gur, _, gur = rest[0]
        # the cold solves in a pass of their own: their untimed fresh loads (YAML, validation) would
        # otherwise sit between the side-by-side blocks and evict both solvers' code and data from
        # the CPU caches
        ((t_cold, _, _),) = timed_side_by_side(
            [ours_fn], [repeats], [lambda c=(wl, dims, cons): load(data, *c)], rounds
        )
        t_highs = lp_seconds(
            lambda c=(wl, dims, cons): api.solve(load(data, *c), objective=objective)
        )
        t_scip, sc = float("nan"), {"bw": None, "status": "skipped"}
        if use_scip:
            oracle = scip_ppc_oracle if ppc else scip_oracle
            t_scip, _, sc = timed(
                lambda inst=inst, oracle=oracle: oracle(inst, scip_time_limit_s), scip_repeats
            )
        ours = sol.objective_value
        times["hieropt"].append(t_ours)
        times["cold"].append(t_cold)
        times["highs"].append(t_highs)
        times["gurobi"].append(t_gur)
        times["scip"].append(t_scip)
        rel = [(value(r["bw"]) - ours) / ours for r in (gur, sc)]
        table.add_row(
            f"{wl} {dims} {cons.split('_')[0]}",
            _cell_ms(t_ours),
            _cell_ms(min_ours),
            _cell_ms(t_cold),
            _cell_ms(t_highs),
            _cell_ms(t_gur),
            f"{t_gur / t_ours:,.1f}x" if np.isfinite(t_gur) else "-",
            f"{t_gur / t_cold:,.1f}x" if np.isfinite(t_gur) else "-",
            _cell_ms(t_scip),
            f"{t_scip / t_ours:,.1f}x" if np.isfinite(t_scip) else "-",
            f"{ours:.10g}",
            *(f"{r:+.1e}" if np.isfinite(r) else "-" for r in rel),
            f"{sol.gap:.1e}",
            f"{gur['gap']:.1e}",
            str(sc["status"]),
        )
    table.caption = (
        "(min): fastest hieropt repeat (the machine is shared, medians are noisy). cold: "
        "the first solve "
        "of a freshly loaded instance (the load untimed), so nothing derived from it (time model, "
        "prices, constraint matrix) is cached yet; LP ms: the time inside the LP solvers' own runs "
        "(DAQP's and HiGHS's) during a cold solve (median of 5, untimed pass); "
        "hieropt ms: a repeated solve of one loaded instance, "
        "which builds the time model once. rel diff = (value at "
        "the solver's point - hieropt's) / hieropt's, every value by hieropt's independent "
        "evaluator; "
        "negative: that point is better (within hieropt's gap). Gurobi gap: its own MIP gap "
        "at LIBRA's "
        "default tolerances (1e-4); hieropt's target is 1e-8 (1e-7 perf per cost)"
    )
    console.print(table)
    return times


def scaling(console: Console, data: Path, repeats: int) -> None:
    base = load(data, "GPT_3", "4d")
    table = Table(
        title=f"(b) scaling: GPT_3 4d, layers replicated (median of {repeats} solves after the "
        "first)",
        title_justify="left",
    )
    for col in (
        "copies",
        "layers",
        "collectives",
        "LP terms",
        "LP rows",
        "first solve ms",
        "median solve ms",
        "min solve ms",
        "ratio to x1",
        "iteration ms / copies",
    ):
        table.add_column(col, justify="right")
    reference = None
    for k in SCALES:
        inst = base.model_copy(
            update={"workload": Workload(name=f"GPT_3x{k}", layers=base.workload.layers * k)}
        )
        start = time.perf_counter()
        # first solve builds the workload's numpy table (cached on the Workload)
        sol = api.solve(inst)
        first = time.perf_counter() - start
        median, fastest, sol = timed(lambda inst=inst: api.solve(inst), repeats)
        reference = reference or median
        table.add_row(
            f"x{k:,}",
            f"{len(inst.workload.layers):,}",
            f"{sol.extra['collectives']:,}",
            f"{sol.extra['terms']:,}",
            f"{lp_rows(inst, sol.extra['cuts']):,}",
            f"{first * 1e3:.1f}",
            f"{median * 1e3:.1f}",
            f"{fastest * 1e3:.1f}",
            f"{median / reference:.2f}",
            f"{sol.iteration_time_ns / 1e6 / k:,.6f}",
        )
    table.caption = (
        "LP rows = epigraph rows + design rows + tangent cuts of the final LP; the LP does "
        "not grow with "
        "the layer count, the time that does is the traffic model and the layer-by-layer "
        "verification"
    )
    console.print(table)


def large_workload(console: Console, data: Path, layers: int) -> None:
    """(e) An ASTRA-sim 1.0 file of ``layers`` layers (GPT_3's lines repeated under distinct names,
    written to a temporary folder): the time to read it and the first solve (table, traffic, LP,
    verification), wall clock."""
    import tempfile

    lines = [
        ln.split()
        for ln in (data / "workload" / "GPT_3.txt").read_text().splitlines()
        if ln.strip()
    ]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"gpt3_{layers}.txt"
        path.write_text(
            "".join(
                "\t".join([f"layer{i}", *lines[i % len(lines)][1:]]) + "\n" for i in range(layers)
            )
        )
        start = time.perf_counter()
        inst = api.load_libra(
            data / "network" / "4d_network.yml",
            path,
            data / "communicator" / "GPT_3_4d.yml",
            data / "cost_model" / "4d_cost_model.yml",
            constraints=CONSTRAINTS["total_bw_500gbps"],
        )
        loaded = time.perf_counter() - start
        sol = api.solve(inst)
        solved = time.perf_counter() - start - loaded
    console.print(
        f"(e) {layers:,}-layer ASTRA-sim file: load {loaded:.3f} s + solve {solved:.3f} s = "
        f"{loaded + solved:.3f} s (target <= 1 s); {sol.extra['terms']} LP terms, gap {sol.gap:.1e}"
    )


def front_vs_solves(
    console: Console, instance_path: Path, points: int, repeats: int
) -> tuple[float, float]:
    inst = api.load_instance(instance_path)
    api.pareto(inst, points=points)  # untimed warm-up
    t_front, min_front, front = timed(lambda: api.pareto(inst, points=points), repeats)
    budgets = [p.budget_usd for p in front.points]

    def independent() -> list:
        return [api.solve(inst, options=api.SolveOptions(budget_usd=b)) for b in budgets]

    t_solo, min_solo, sols = timed(independent, repeats)
    worst = max(abs(s.iteration_time_ns - p.iteration_time_ns) / p.iteration_time_ns
                for s, p in zip(sols, front.points, strict=True))
    table = Table(
        title=f"(d) Pareto front of {instance_path.name}, {points} points: api.pareto (one "
        "persistent LP) "
        f"vs {points} independent api.solve(budget_usd=X) (median of {repeats})",
        title_justify="left",
    )
    for col in ("method", "wall s", "(min)", "LPs", "per point ms", "ratio"):
        table.add_column(col, justify="left" if col == "method" else "right")
    table.add_row(
        "api.pareto (front + fastest + perf-per-cost optimum)",
        f"{t_front:.3f}",
        f"{min_front:.3f}",
        f"{front.lps:,}",
        f"{t_front / points * 1e3:.1f}",
        "1.0x",
    )
    table.add_row(
        "  of which the front points (Front.solve_seconds)",
        f"{front.solve_seconds:.3f}",
        "-",
        "-",
        f"{front.solve_seconds / points * 1e3:.1f}",
        "-",
    )
    table.add_row(
        f"{points} independent solves",
        f"{t_solo:.3f}",
        f"{min_solo:.3f}",
        f"{sum(s.iterations for s in sols):,}",
        f"{t_solo / points * 1e3:.1f}",
        f"{t_solo / t_front:.1f}x",
    )
    table.caption = (
        f"same budgets; largest relative time difference between the two: {worst:.1e}. "
        "Target: front <= 1 s"
    )
    console.print(table)
    return t_front, t_solo


def _geomean(xs: list[float]) -> float:
    xs = [x for x in xs if np.isfinite(x) and x > 0]
    return float(np.exp(np.mean(np.log(xs)))) if xs else float("nan")


def summary(console: Console, objective: str, times: dict[str, list[float]]) -> None:
    """Geometric-mean speed-ups over Gurobi and SCIP, and the slowest case against Gurobi."""
    for label, ours in (("repeated", times["hieropt"]), ("cold", times["cold"])):
        line = f"{objective} ({label}): hieropt geometric mean {_geomean(ours) * 1e3:.3f} ms"
        for other in ("gurobi", "scip"):
            ratios = [o / t for o, t in zip(times[other], ours, strict=True)]
            if any(np.isfinite(r) for r in ratios):
                line += (f"; {other} / hieropt: geometric mean {_geomean(ratios):.1f}x, worst case "
                         f"{np.nanmin(ratios):.1f}x")
        console.print(line)
    budget = [g / 10 for g in times["gurobi"]]
    if any(np.isfinite(b) for b in budget):
        shares = [h / b for h, b in zip(times["highs"], budget, strict=True)]
        console.print(
            f"{objective}: the LP solvers' own runs alone take a geometric mean of "
            f"{_geomean(shares):.0%} "
            f"of a tenth of Gurobi's time (the 10x budget), {np.nanmax(shares):.0%} on the "
            "worst case"
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--data", type=Path, default=Path("../shared/data/libra"), help="LIBRA data folder"
    )
    p.add_argument("--repeats", type=int, default=50, help="timed repeats of each hieropt solve")
    p.add_argument(
        "--gurobi-repeats", type=int, default=10, help="timed repeats of each Gurobi solve"
    )
    p.add_argument("--scip-repeats", type=int, default=3, help="timed repeats of each SCIP solve")
    p.add_argument(
        "--ppc-repeats", type=int, default=25, help="timed repeats of each perf-per-cost solve"
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="rounds of the side-by-side timing: in each, every solver "
        "makes its share of its repeats back to back",
    )
    p.add_argument(
        "--scip-ppc-repeats",
        type=int,
        default=1,
        help="timed repeats of each SCIP perf-per-cost solve",
    )
    p.add_argument(
        "--scip-time-limit",
        type=float,
        default=60.0,
        help="SCIP time limit per perf-per-cost solve, s",
    )
    p.add_argument(
        "--no-scip", action="store_true", help="leave SCIP out (it takes minutes on perf per cost)"
    )
    p.add_argument("--front-points", type=int, default=50, help="points of the Pareto front in (d)")
    p.add_argument(
        "--front-repeats", type=int, default=3, help="timed repeats of the front and of the solves"
    )
    p.add_argument(
        "--only",
        default="a,b,c,d,e",
        help="comma-separated sections to run, e.g. 'a,c' (default all)",
    )
    args = p.parse_args(argv)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    if not only or not only <= set("abcde"):
        p.error("--only takes a comma-separated subset of a,b,c,d,e")
    if (
        min(
            args.repeats,
            args.gurobi_repeats,
            args.scip_repeats,
            args.ppc_repeats,
            args.scip_ppc_repeats,
            args.front_repeats,
            args.rounds,
        )
        < 1
    ):
        p.error("repeats must be >= 1")
    console = Console(width=250)
    if not (args.data / "network").is_dir():
        console.print(f"[red]no LIBRA data folder at {args.data}[/red]")
        return 2
    start = time.perf_counter()
    why = gurobi_available()
    env = None if why else gurobi_environment()
    if why:
        console.print(f"[yellow]Gurobi column skipped: {why}[/yellow]")
    perf = ppc = None
    if "a" in only:
        perf = objective_cases(console, args.data, "performance", args.repeats, args.gurobi_repeats,
                               args.scip_repeats, 60.0, env, not args.no_scip, args.rounds)
    if "b" in only:
        scaling(console, args.data, args.repeats)
    if "c" in only:
        ppc = objective_cases(
            console,
            args.data,
            "performance_per_cost",
            args.ppc_repeats,
            args.gurobi_repeats,
            args.scip_ppc_repeats,
            args.scip_time_limit,
            env,
            not args.no_scip,
            args.rounds,
        )
    if "d" in only:
        t_front, t_solo = front_vs_solves(
            console, FRONT_INSTANCE, args.front_points, args.front_repeats
        )
    if "e" in only:
        large_workload(console, args.data, 100_000)
    if perf is not None:
        summary(console, "performance", perf)
    if ppc is not None:
        summary(console, "performance_per_cost", ppc)
    if "d" in only:
        console.print(f"Pareto front, {args.front_points} points: {t_front:.3f} s (target <= 1 s), "
                      f"{t_solo / t_front:.1f}x faster than independent solves")
    console.print(
        f"benchmark took {time.perf_counter() - start:.1f} s; load average "
        f"{os.getloadavg()[0]:.2f} on "
        f"{os.cpu_count()} CPUs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
