"""The MILP against brute force: on seeded random small instances (1-3 dimensions of every building
block, random collectives, mappings, link / NIC / per-node parts, switches of small radix so that
two-tier fabrics occur, random linear design constraints, and in some instances another training
loop, sequential dimensions or link latency), every integer design is enumerated — time by the
independent layer-by-layer evaluator, feasibility by the constraint check — and the MILP's optimum
must equal the best enumerated value for each objective.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

import hieropt
from hieropt.model.catalog import link_peers
from hieropt.model.options import dimension_options
from hieropt.verify import constraint_violations

from .util import load

COLLECTIVES = ("NONE", "ALLREDUCE", "REDUCESCATTER", "ALLGATHER", "ALLTOALL")
LOOPS = ("no_overlap", "tp_dp_overlap", "tp_dp_overlap_cross", "recompute")
UNITS = (5.0, 10.0, 12.5, 20.0, 25.0, 40.0, 50.0)
SEEDS = range(36)
MAX_DESIGNS = 4000


def _part(rng, name: str, n_npus: int, step: int = 1, link: bool = False) -> str:
    """A random part; its unit limit a multiple of ``step`` (a link port's peers, 1 for a NIC),
    times the node's NPUs for a link part fitted per node (one port per NPU to each peer)."""
    bw = float(rng.choice(UNITS))
    bw_key = f"gbps = {bw:g}" if rng.random() < 0.6 else f"gbit_per_s = {bw * 8:g}"
    usd = int(rng.integers(1, 30))
    divisors = [s for s in (2, 3, 4) if n_npus % s == 0]
    if divisors and rng.random() < 0.25:
        k = int(rng.integers(1, 5)) * step
        s = int(rng.choice(divisors))
        return (f'{{ name = "{name}", {bw_key}, usd = {usd}, '
                f"max_per_node = {k * s if link else k}, node_npus = {s} }}")
    most = int(rng.integers(1, 5)) * step
    return f'{{ name = "{name}", {bw_key}, usd = {usd}, max_per_npu = {most} }}'


def _switch(rng, name: str) -> str:
    price = (f"usd_per_switch = {int(rng.integers(10, 200))}" if rng.random() < 0.5
             else f"usd_per_port = {int(rng.integers(1, 20))}")
    port = f", port_gbps = {float(rng.choice(UNITS)):g}" if rng.random() < 0.3 else ""
    return f'{{ name = "{name}", radix = {int(rng.choice([4, 6, 8, 16]))}, {price}{port} }}'


def random_problem(seed: int):
    rng = np.random.default_rng(seed)
    D = int(rng.integers(1, 4))
    dims = [
        (str(rng.choice(["Ring", "FullyConnected", "Switch"])), int(rng.integers(2, 5)), f"C{d}")
        for d in range(D)
    ]
    options = {}
    if rng.random() < 0.4:
        options["training_loop"] = str(rng.choice(LOOPS))
    if rng.random() < 0.3:
        options["dimension_mode"] = "sequential"
    if rng.random() < 0.3:
        dims = [(*dim, float(rng.integers(0, 3)) * 1e4) for dim in dims]
    N = math.prod(dim[1] for dim in dims)
    mapping = {
        ph: [int(rng.choice([1, dim[1]])) for dim in dims]
        for ph in ("forward", "input_grad", "weight_grad")
    }
    layers = []
    for _ in range(int(rng.integers(1, 4))):
        layer = []
        for _ph in range(3):
            layer += [
                float(rng.integers(1, 100)) * 1e5,
                str(rng.choice(COLLECTIVES)),
                float(rng.integers(1, 20)) * 1e8,
            ]
        layers.append(tuple(layer))
    cat = []
    for d, (block, n, c, *_lat) in enumerate(dims):
        step = link_peers(block, n)  # (link ports in whole multiples of the peers)
        parts = ", ".join(_part(rng, f"p{d}{i}", N, step, block != "Switch")
                          for i in range(int(rng.integers(1, 3))))
        if block == "Switch":
            sws = ", ".join(_switch(rng, f"s{d}{i}") for i in range(int(rng.integers(1, 3))))
            cat.append(f"[classes.{c}]\nnics = [{parts}]\nswitches = [{sws}]\n")
        else:
            cat.append(f"[classes.{c}]\nlinks = [{parts}]\n")
    # (toy prices of $1-$30 a part, meant: no unit check)
    return dims, mapping, layers, "check_units = false\n" + "\n".join(cat), rng, options


def _constraints(rng, inst, catalog) -> list[str]:
    """Random linear constraints; an equality is set from a random design so that it can be met
    (written with all its digits: a rounded right-hand side is met only within tolerances)."""
    D = inst.network.n_dims
    opts = [dimension_options(catalog, inst.network, d) for d in range(D)]
    pick = np.array([float(rng.choice([o.bw_gbps for o in opts[d]])) for d in range(D)])
    lo = sum(min(o.bw_gbps for o in op) for op in opts)
    hi = sum(max(o.bw_gbps for o in op) for op in opts)
    kind = rng.integers(0, 4)
    if kind == 0:
        return []
    if kind == 1:
        return [f"sum(bw) <= {lo + (hi - lo) * rng.uniform(0.2, 0.8):.6g}"]
    if kind == 2:
        return [f"sum(bw) == {pick.sum():.17g}"]
    if D >= 2:
        return ["bw[0] >= bw[1]", f"bw[0] + 2*bw[{D - 1}] <= {pick[0] + 2 * pick[-1]:.17g}"]
    return [f"bw[0] >= {pick[0]:.17g}"]


def enumerate_designs(inst, catalog):
    """Every integer design: (bw, time by the evaluator, cost) for the feasible ones, from the full
    option lists."""
    opts = [dimension_options(catalog, inst.network, d) for d in range(inst.network.n_dims)]
    if math.prod(len(o) for o in opts) > MAX_DESIGNS:
        return None
    out = []
    for combo in itertools.product(*opts):
        bw = np.array([o.bw_gbps for o in combo])
        if constraint_violations(inst, bw):
            continue
        out.append(
            (bw, hieropt.evaluate(inst, bw).iteration_time_ns, sum(o.cost_usd for o in combo))
        )
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_milp_equals_brute_force(tmp_path: Path, seed: int):
    dims, mapping, layers, cat_text, rng, options = random_problem(seed)
    inst, cat_path = load(tmp_path, dims, mapping, layers, cat_text, **options)
    catalog = hieropt.load_catalog(cat_path, inst)
    # a random part that can never meet a random constraint is rejected up front: redraw
    for attempt in range(8):
        constraints = _constraints(rng, inst, catalog)
        inst_c, cat_path = load(
            tmp_path,
            dims,
            mapping,
            layers,
            cat_text,
            constraints=constraints,
            name=f"c{attempt}",
            **options,
        )
        try:
            catalog_c = hieropt.load_catalog(cat_path, inst_c)
        except hieropt.InputError as e:
            assert "fix:" in str(e) and "\n" not in str(e)
            continue
        inst, catalog = inst_c, catalog_c
        break
    else:
        pytest.skip("no random constraint accepted by the catalog check")
    designs = enumerate_designs(inst, catalog)
    if designs is None:
        pytest.skip("too many designs to enumerate")
    if not designs:
        with pytest.raises(hieropt.NoSolutionError):
            hieropt.provision(inst, catalog, objective="performance", compare=False)
        return
    T = np.array([t for _, t, _ in designs])
    C = np.array([c for _, _, c in designs])
    p = hieropt.provision(inst, catalog, objective="performance", compare=seed % 4 == 0)
    assert p.success and p.gap <= 1e-8
    assert p.objective_value == pytest.approx(T.min(), rel=1e-9)
    fastest = T <= T.min() * (1 + 1e-9)
    # tie-break: cheapest of the fastest
    assert p.network_cost_usd == pytest.approx(C[fastest].min(), rel=1e-9)
    if p.continuous is not None:
        assert p.continuous.iteration_time_ns <= p.iteration_time_ns * (1 + 1e-8)
        assert all(
            r.objective_value >= p.objective_value * (1 - 1e-9) for r in p.roundings if r.feasible
        )
    q = hieropt.provision(inst, catalog, objective="performance_per_cost", compare=False)
    assert q.success and q.gap <= 1e-8
    assert q.objective_value == pytest.approx((T * C).min(), rel=1e-9)
    target = float(rng.uniform(T.min(), T.max())) if T.max() > T.min() else float(T.min()) * 1.01
    r = hieropt.provision(
        inst, catalog, objective="min_cost", max_iteration_time_ns=target, compare=False
    )
    meets = T <= target * (1 + 1e-12)
    assert r.success and r.iteration_time_ns <= target * (1 + 1e-9)
    assert r.objective_value == pytest.approx(C[meets].min(), rel=1e-9)
    cheapest = meets & (C <= C[meets].min() * (1 + 1e-9))
    # tie-break: fastest of the cheapest
    assert r.iteration_time_ns == pytest.approx(T[cheapest].min(), rel=1e-9)
