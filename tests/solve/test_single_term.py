"""The single-term performance LP (hieropt/solvers/single_term.py): T = c + w max_d m_d / B_d is
linear in the term's rate, so the fastest network is one exact LP. Checked against a hand
calculation, against the general cutting-plane loop on random instances, and for its refusals (the
general loop then answers)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hieropt
from hieropt import SolveOptions
from hieropt.errors import NoSolutionError
from hieropt.formulation.rate import single_term
from hieropt.model.timing import build_time_model
from hieropt.solvers.cutting import TimeLP
from hieropt.solvers.single_term import METHOD, fastest_single_term
from hieropt.spec import (
    Collective,
    CostClass,
    CostModel,
    Dimension,
    Instance,
    Layer,
    LinearConstraint,
    Mapping,
    Network,
    Phase,
    Workload,
)

AR = Collective.ALL_REDUCE
COST = CostModel(classes={"a": CostClass(link_usd_per_gbps=2.0), "b": CostClass(
    link_usd_per_gbps=8.0, switch_usd_per_gbps=18.0, nic_usd_per_gbps=30.0)})


def _row(coef, sense, rhs) -> LinearConstraint:
    return LinearConstraint(coefficients=tuple(float(c) for c in coef), sense=sense, rhs=float(rhs),
                            text=f"{list(coef)} {sense} {rhs}")


def _instance(sizes=(1.0, 0.5), constraints=None, **extra) -> Instance:
    """Ring 4 x Switch 8, every phase an all-reduce over all 32 NPUs: one collective term."""
    def layer(i: int, s: float) -> Layer:
        return Layer(
            name=f"l{i}",
            forward=Phase(compute_ns=100.0, collective=AR, size_bytes=4e8 * s),
            input_grad=Phase(compute_ns=200.0, collective=AR, size_bytes=6e8 * s),
            weight_grad=Phase(compute_ns=300.0, collective=AR, size_bytes=8e8 * s),
        )
    if constraints is None:
        constraints = (_row((1, 1), "==", 100.0),)
    return Instance(
        name="one-term",
        objective="performance",
        training_loop="no_overlap",
        network=Network(
            dims=(
                Dimension(block="Ring", npus=4, cost_class="a"),
                Dimension(block="Switch", npus=8, cost_class="b"),
            )
        ),
        workload=Workload(name="w", layers=tuple(layer(i, s) for i, s in enumerate(sizes))),
        mapping=Mapping(forward=(4, 8), input_grad=(4, 8), weight_grad=(4, 8)),
        cost=COST,
        constraints=constraints,
        **extra,
    )


def test_hand_computed_optimum():
    # S = (4 + 6 + 8) 1e8 x (1 + 0.5) = 2.7e9 bytes all-reduced over 4 x 8. Hierarchical all-reduce:
    # dimension 0 (ring of 4) carries 2 (3/4) S = 4.05e9 bytes, dimension 1 (switch of 8) 2 (7/8) S
    # / 4 = 1.18125e9 bytes. Under sum(bw) == 100 the fastest network balances them: B_d = 100 m_d /
    # (m_0
    # + m_1), T = C + (m_0 + m_1) / 100 with the compute C = (100 + 200 + 300) ns x 2 layers = 1200
    #   ns.
    inst = _instance()
    m = np.array([4.05e9, 1.18125e9])
    sol = hieropt.solve(inst)
    assert sol.method == METHOD and sol.iterations == 1
    assert sol.status == "optimal" and 0 < sol.gap <= 1e-11
    np.testing.assert_allclose(sol.bw_gbps, 100 * m / m.sum(), rtol=1e-9)
    assert sol.objective_value == pytest.approx(1200.0 + m.sum() / 100, rel=1e-12)
    assert sol.objective_bound <= sol.objective_value


def test_budget_and_a_pinned_dimension():
    # bw[0] <= 50 pins dimension 0 (it would take 77.4 of 100): T = C + 4.05e9 / 50 ns; dimension 1
    # is then not the slowest at any B_1 >= 1.18125e9 / (4.05e9 / 50) = 14.58 GB/s, and every such
    # B_1 is as fast.
    inst = _instance(constraints=(_row((1, 1), "<=", 100.0), _row((1, 0), "<=", 50.0)))
    sol = hieropt.solve(inst)
    assert sol.method == METHOD
    assert sol.objective_value == pytest.approx(1200.0 + 4.05e9 / 50, rel=1e-12)
    assert sol.bw_gbps[0] == pytest.approx(50.0, rel=1e-9) and sol.bw_gbps[
        1
    ] >= 1.18125e9 / 4.05e9 * 50 * (1 - 1e-9)


def test_not_single_term_goes_to_the_general_loop():
    inst = hieropt.load_instance(
        __import__("tests.cases").cases.REPO / "instances" / "gpt3-4d.toml"
    )
    tm = build_time_model(inst)
    assert single_term(tm) is None
    assert fastest_single_term(inst, tm, 1e-8) is None
    assert hieropt.solve(inst).method != METHOD


def test_time_target_checked():
    inst = _instance()
    best = hieropt.solve(inst).objective_value
    assert hieropt.solve(
        inst, options=SolveOptions(max_iteration_time_ns=best * 1.01)
    ).objective_value == pytest.approx(best, rel=1e-12)
    with pytest.raises(NoSolutionError, match="fastest possible"):
        hieropt.solve(
            inst, options=SolveOptions(max_iteration_time_ns=best * 0.99)
        ).raise_for_status()


def test_infeasible_rows_explained_by_the_general_loop():
    inst = _instance(constraints=(_row((1, 1), "==", 100.0), _row((1, 0), ">=", 120.0)))
    with pytest.raises(NoSolutionError, match="infeasible|cannot all hold"):
        hieropt.solve(inst).raise_for_status()


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.floats(0.01, 100.0), min_size=1, max_size=4),
       total=st.floats(1.0, 1e4), share=st.floats(0.05, 0.95), ratio=st.floats(0.1, 10.0),
       kind=st.sampled_from(["sum", "cap", "ratio", "budget", "floor"]))
def test_agrees_with_the_cutting_plane_loop(sizes, total, share, ratio, kind):
    rows = {"sum": (_row((1, 1), "==", total),),
            "cap": (_row((1, 1), "<=", total), _row((1, 0), "<=", share * total)),
            "ratio": (_row((1, 1), "==", total), _row((1, -ratio), ">=", 0.0)),
            "budget": (_row((1, 0), "<=", total), _row((0, 1), "<=", total * ratio)),
            "floor": (_row((1, 1), "<=", total), _row((0, 1), ">=", share * total))}[kind]
    extra = (
        {"max_network_cost_usd": 32 * (2 * total * share + 56 * total * (1 - share))}
        if kind == "budget"
        else {}
    )
    inst = _instance(tuple(sizes), rows, **extra)
    tm = build_time_model(inst)
    fast = fastest_single_term(inst, tm, 1e-8, inst.max_network_cost_usd)
    assert fast is not None
    if inst.max_network_cost_usd is None:
        ref = minimize_time(inst, tm)
    else:
        from hieropt.solvers.cutting import TimeLP

        core = TimeLP(inst, tm)
        try:
            ref = core.min_time(1e-8, budget_usd=inst.max_network_cost_usd)
        finally:
            core.close()
    # each certificate holds against the other's feasible point, and the values agree within the
    # gaps
    assert fast.lower <= ref.upper and ref.lower <= fast.upper
    assert fast.upper == pytest.approx(ref.upper, rel=2e-8)
    assert hieropt.verify(inst, fast.bw).ok


def minimize_time(instance, tm):
    """The cutting-plane loop's performance optimum (the reference the single-term LP is held
    against)."""
    core = TimeLP(instance, tm)
    try:
        return core.min_time()
    finally:
        core.close()


def _rate_bound_numpy(arr, duals, cap) -> float:
    """The safe bound of the module docstring in numpy (the form it had before it moved to Python
    floats)."""
    lo, hi = arr.row_lower, arr.row_upper
    y = duals[:arr.n_rows]
    up = y > 0
    y = np.where(np.where(up, np.isfinite(lo), np.isfinite(hi)) & np.isfinite(y), y, 0.0)
    row_terms = y * np.where(
        up, np.where(np.isfinite(lo), lo, 0.0), np.where(np.isfinite(hi), hi, 0.0)
    )
    A = arr.dense
    r = arr.time_costs - y @ A
    D = arr.u_col
    top = np.minimum(arr.col_upper[:D], cap)
    loaded = np.array(arr.loaded, dtype=np.intp)
    box_hi = np.append(top, (top[loaded] / A[arr.rate, arr.u_col]).min())
    neg = r < 0
    if not np.isfinite(box_hi[neg]).all():
        return np.inf
    at = np.where(neg, box_hi, np.where(r > 0, arr.col_lower, 0.0))
    value = float(row_terms.sum() + (r * at).sum())
    magnitude = float(
        np.abs(row_terms).sum()
        + ((np.abs(arr.time_costs) + np.abs(y) @ np.abs(A)) * np.abs(at)).sum()
    )
    return -value + (arr.n_rows + arr.n_cols + 2) * np.finfo(float).eps * magnitude


def test_rate_bound_matches_its_numpy_form():
    """The bound (the Lagrangian bound of dual_bound.py on the rate LP) equals the numpy statement
    of the formula to round-off, for any multipliers (random signs, zeros, inf and NaN among them),
    with and without a budget and a finite box."""
    import math
    import random

    from hieropt.formulation.arrays import read_only
    from hieropt.formulation.rate import compile_rate_lp
    from hieropt.formulation.scale import choose_scale, upper_limits_gbps
    from hieropt.model.cost import cluster_cost_usd_per_gbps
    from hieropt.solvers.single_term import _rate_bound

    rng = random.Random(3)
    compared = infinite = 0
    for _ in range(80):
        rows = [
            _row(
                (rng.uniform(0.1, 3), rng.uniform(0.1, 3)),
                rng.choice(["<=", "==", ">="]),
                rng.uniform(50, 500),
            )
        ]
        if rng.random() < 0.5:
            rows.append(_row((1, 1), "<=", 1000.0))
        inst = _instance(constraints=tuple(rows))
        tm = build_time_model(inst)
        m, _ = single_term(tm)
        budget = None if rng.random() < 0.5 else rng.uniform(1e3, 1e6)
        unit_cost, limits = cluster_cost_usd_per_gbps(inst), upper_limits_gbps(inst)
        scale = choose_scale(inst, tm, budget, None, limits)
        arr = read_only(compile_rate_lp(inst, m, scale, budget))
        cap = upper_limits_gbps(inst, budget, unit_cost) / scale.bw_gbps
        for _ in range(10):
            duals = np.array(
                [
                    rng.choice(
                        [
                            0.0,
                            rng.gauss(0, 10),
                            -abs(rng.gauss(0, 1)),
                            abs(rng.gauss(0, 1)),
                            math.inf,
                            math.nan,
                        ]
                    )
                    for _ in range(arr.n_rows)
                ]
            )
            ref, got = _rate_bound_numpy(arr, duals, cap), _rate_bound(arr, duals, cap)
            compared += 1
            if math.isinf(ref):
                infinite += 1
                assert got == ref
            else:
                assert got == pytest.approx(ref, rel=1e-13, abs=1e-300)
    assert compared == 800 and 0 < infinite < compared  # (both branches seen)
