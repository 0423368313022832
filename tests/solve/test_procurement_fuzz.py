"""Random procurement instances: every performance-per-cost, min-cost and Pareto call ends
with a certificate or an honest LIMIT, and no certificate is beaten by a budget sweep.

Instances: 1-3 dimensions of every building block, 1-3 layers of random collectives (1e3 .. 1e11
bytes), prices from $0.0005 to $20,000 per GB/s, bandwidth limits from 0.01 to 1e5 GB/s (a total
fixed, a floor with a cap, a floor with per-dimension caps, or a floor alone), time targets 1.01 ..
1e4 x the fastest. Checks:

- every call ends (the loops are bounded by an LP count and a time limit: no timing here) with
  status OPTIMAL and a gap within its target, or LIMIT with a finite, honest gap, or a clean
  NoSolutionError;
- performance per cost: the fastest design within each of 9 budgets around the optimum's cost has
  time x cost no lower than the claimed bound;
- min cost: the fastest design within 1 - 1e-7 of the claimed bound misses the target;
- the front: budgets ascend, times never rise, every point meets its budget.

``--fuzz long`` (or ``HIEROPT_FUZZ=long``) raises the example count from 12 to 400.
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import hieropt
from hieropt import SolveOptions
from hieropt.model.traffic import phase_traffic
from hieropt.spec import PHASES, Instance
from tests.cases import kept

LONG = os.environ.get("HIEROPT_FUZZ") == "long"
KINDS = ["ALLREDUCE", "REDUCESCATTER", "ALLGATHER", "ALLTOALL"]


def _round(x: float) -> float:
    return float(f"{x:.4g}")


@st.composite
def procurement_instances(draw) -> Instance:
    D = draw(st.integers(1, 3))
    dims = [
        (draw(st.sampled_from(["Ring", "FullyConnected", "Switch"])), draw(st.integers(2, 8)))
        for _ in range(D)
    ]
    pscale = 10.0 ** draw(st.integers(-3, 3))
    prices = []
    for block, _ in dims:
        pr = (_round(draw(st.integers(1, 200)) / 10 * pscale),)
        if block == "Switch":
            pr += (
                _round(draw(st.integers(1, 100)) / 10 * pscale),
                _round(draw(st.integers(1, 100)) / 10 * pscale),
            )
        prices.append(pr)
    groups = []
    for _ in PHASES:
        g = [draw(st.integers(1, p)) for _, p in dims]
        if max(g) == 1:
            i = draw(st.integers(0, D - 1))
            g[i] = dims[i][1]
        groups.append(tuple(g))
    sscale = 10.0 ** draw(st.integers(3, 10))
    layers = []
    for _ in range(draw(st.integers(1, 3))):
        layer = []
        for _ in PHASES:
            compute = float(draw(st.sampled_from([0, 1e3, 1e6, 5e6])))
            if draw(st.integers(0, 3)) == 0:
                layer.append((compute, "NONE", 0.0))
            else:
                layer.append(
                    (
                        compute,
                        draw(st.sampled_from(KINDS)),
                        _round(sscale * 10 ** draw(st.floats(-1, 1))),
                    )
                )
        layers.append(tuple(layer))
    S = _round(10.0 ** draw(st.floats(-2, 5)))
    ones = (1.0,) * D
    kind = draw(st.sampled_from(["eq", "ge_cap", "ge_bounds", "ge_only"]))
    rows, bounds = [(ones, "==" if kind == "eq" else ">=", S)], None
    if kind == "ge_cap":
        rows.append((ones, "<=", _round(S * (1 + 3 * draw(st.floats(0, 1))))))
    elif kind == "ge_bounds":
        bounds = [(0.0, _round(S / D * (1 + 2 * draw(st.floats(0, 1))))) for _ in range(D)]
    inst = kept(dims, prices, layers, tuple(groups), rows, bounds)
    assume(phase_traffic(inst).any())
    return inst


def _ok(sol: hieropt.Solution, target_gap: float) -> None:
    """OPTIMAL within its target gap, or LIMIT with an honest finite gap (the bound never above the
    value)."""
    assert sol.objective_bound <= sol.objective_value
    if sol.status == "optimal":
        assert 0 < sol.gap <= target_gap, sol.message
    else:
        assert sol.status == "limit" and np.isfinite(sol.gap), sol.message


def _fastest_within(inst: Instance, budget: float) -> hieropt.Solution | None:
    try:
        sol = hieropt.solve(inst, objective="performance", options=SolveOptions(budget_usd=budget))
        return sol.raise_for_status()
    except hieropt.NoSolutionError:
        return None


def _check_product(inst: Instance) -> None:
    try:
        sol = hieropt.solve(inst, objective="performance_per_cost").raise_for_status()
    except hieropt.NoSolutionError as e:
        note(f"ppc: {e}")
        return
    note(f"ppc {sol.status} {sol.objective_value!r} bound {sol.objective_bound!r} {sol.message}")
    _ok(sol, 1e-7)
    for kappa in np.geomspace(sol.network_cost_usd / 3, sol.network_cost_usd * 3, 9):
        fast = _fastest_within(inst, float(kappa))
        if fast is not None:
            product = fast.iteration_time_ns * fast.network_cost_usd
            assert product >= sol.objective_bound * (1 - 1e-8), (
                f"budget ${kappa!r} beats the bound: {product!r}"
            )


def _check_min_cost(inst: Instance, factor: float) -> None:
    try:
        fastest = hieropt.solve(inst, objective="performance").raise_for_status()
    except hieropt.NoSolutionError as e:
        note(f"fastest: {e}")
        return
    target = fastest.iteration_time_ns * factor
    try:
        sol = hieropt.solve(
            inst, objective="min_cost", options=SolveOptions(max_iteration_time_ns=target)
        )
        sol.raise_for_status()
    except hieropt.NoSolutionError as e:  # only "within the gap of the fastest" at factor ~1
        assert "optimality gap" in str(e), str(e)
        return
    note(
        f"min_cost x{factor:g} {sol.status} ${sol.objective_value!r} bound "
        f"{sol.objective_bound!r} {sol.message}"
    )
    _ok(sol, 1e-8)
    assert sol.iteration_time_ns <= target * (1 + 1e-9)
    if sol.objective_bound > 0:
        fast = _fastest_within(inst, sol.objective_bound * (1 - 1e-7))
        assert fast is None or fast.iteration_time_ns > target, (
            f"${fast.network_cost_usd!r} meets the target"
        )


def _check_front(inst: Instance) -> None:
    try:
        front = hieropt.pareto(inst, points=5)
    except hieropt.NoSolutionError as e:
        note(f"pareto: {e}")
        return
    budgets = [p.budget_usd for p in front.points]
    times = [p.iteration_time_ns for p in front.points]
    assert budgets == sorted(budgets)
    assert all(b <= a * (1 + 1e-8) for a, b in zip(times, times[1:], strict=False))
    for p in front.points:
        assert p.network_cost_usd <= p.budget_usd * (1 + 1e-9)
        assert p.lower_bound_ns <= p.iteration_time_ns


@settings(
    max_examples=400 if LONG else 12,
    deadline=None,
    derandomize=not LONG,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)
@given(procurement_instances(), st.sampled_from([1.01, 1.5, 3.0, 100.0, 1e4]))
def test_procurement_calls_end_certified(inst: Instance, factor: float):
    note(
        f"dims={[(d.block, d.npus) for d in inst.network.dims]} "
        f"rows={[(c.sense, c.rhs) for c in inst.constraints]}"
        f" bounds={inst.bounds} layers={inst.workload.layers}"
    )
    _check_product(inst)
    _check_min_cost(inst, factor)
    _check_front(inst)
