"""Portfolios of workloads: own optima, min-max regret and its time-target form, against an
independent dense search.

On 2 dimensions with bw[0] + bw[1] == c, every design is B = (b, c - b) and each T_w(b) is convex in
b (1/B is convex, maxima and non-negative sums keep it so), hence so is max_w T_w / T_w*: a ternary
search on b (300 steps, interval 1e-40 of c) finds every own optimum and the min-max regret to
round-off, and a dense grid of 4,001 points confirms that no design is better. The searches evaluate
each workload's time model (``job_time_models``, no solver); the optima found are re-evaluated with
the independent evaluator (hieropt.api.evaluate).
"""

from __future__ import annotations

import numpy as np
import pytest

from hieropt import SolveOptions, api
from hieropt.errors import NoSolutionError
from hieropt.formulation.portfolio import compile_regret_lp, ratio_models, stack_time_models
from hieropt.formulation.scale import choose_scale
from hieropt.model.cost import unit_cost_usd_per_gbps
from hieropt.model.timing import job_time_models
from hieropt.solvers.portfolio import single_job
from hieropt.spec import (
    Collective,
    Dimension,
    Instance,
    Job,
    Layer,
    LinearConstraint,
    Mapping,
    Network,
    Phase,
    Workload,
)
from tests.fuzz.found import STARVED_REGRET
from tests.solve.portfolios import COST, random_portfolio, ternary


def evaluator_time(inst: Instance, w: int, bw) -> float:
    return api.evaluate(single_job(inst, w), bw).iteration_time_ns


@pytest.mark.parametrize("seed", range(4))
def test_min_max_regret_matches_dense_search_on_two_dimensions(seed):
    rng = np.random.default_rng(seed)
    W = 2 + seed % 2
    inst = random_portfolio(rng, W)
    c = inst.constraints[0].rhs
    eps = 1e-6 * c
    tms = job_time_models(inst)

    def time_of(w: int, b: float) -> float:
        return tms[w].time_ns(np.array([b, c - b]))

    own = []
    for w in range(W):
        b = ternary(lambda x, w=w: time_of(w, x), eps, c - eps)
        own.append(time_of(w, b))
        assert evaluator_time(inst, w, [b, c - b]) == pytest.approx(own[w], rel=1e-12)

    def ratio(b: float) -> float:
        return max(time_of(w, b) / own[w] for w in range(W))

    best_b = ternary(ratio, eps, c - eps)
    z_dense = ratio(best_b)
    grid = np.linspace(eps, c - eps, 4001)
    # the ternary search found the minimum
    assert min(ratio(b) for b in grid) >= z_dense * (1 - 1e-12)

    sol = api.solve(inst, objective="min_max_regret")
    assert sol.success and sol.objective_unit == "ratio"
    assert sol.objective_value == pytest.approx(z_dense, rel=1e-8)
    assert sol.objective_bound <= z_dense * (1 + 1e-12)
    p = sol.portfolio
    assert p.own_optima_ns == pytest.approx(own, rel=1e-8)
    # every workload's regret reported
    assert max(p.slowdowns) == pytest.approx(z_dense - 1, rel=1e-6, abs=1e-9)
    assert len(p.slowdowns) == W and min(p.slowdowns) >= -1e-9

    # the weighted optimum lets at least one workload suffer as much or more
    weighted = api.solve(inst, options=SolveOptions(portfolio=True))
    assert weighted.portfolio.worst_ratio >= z_dense * (1 - 1e-8)

    # the time-target form: the cheapest fabric within z* - 1 + 1 % of every optimum exists, within
    # z* - 1 - 1 % not
    x = z_dense - 1 + 0.01
    cheap = api.solve(inst, objective="min_cost", options=SolveOptions(max_regret=x))
    assert cheap.success and max(cheap.portfolio.slowdowns) <= x * (1 + 1e-9) + 1e-12
    with pytest.raises(NoSolutionError, match="no fabric keeps every workload within"):
        regret = max(z_dense - 1 - 0.01, 0.0) if z_dense > 1.011 else 0.0
        api.solve(
            inst, objective="min_cost", options=SolveOptions(max_regret=regret)
        ).raise_for_status()


def disjoint_portfolio(compute_ns: float = 0.0) -> Instance:
    """Two workloads on two Ring dimensions of 2 NPUs, ``sum(bw) == 100``: A all-reduces 1e9 bytes
    on dimension 0 only, B on dimension 1 only. A ring all-reduce of S bytes on 2 NPUs sends
    2 (n - 1) / n S = S per NPU: T_A = c + 1e9 / B_0, T_B = c + 1e9 / B_1 (ns at GB/s), c the
    compute of the forward and input-gradient phases."""
    network = Network(dims=(Dimension(block="Ring", npus=2, cost_class="C"),) * 2)
    none = Phase(compute_ns=compute_ns, collective=Collective("NONE"), size_bytes=0.0)
    grad = Phase(compute_ns=0.0, collective=Collective("ALLREDUCE"), size_bytes=1e9)

    def job(d: int) -> tuple[Workload, Mapping]:
        layer = Layer(name=f"l{d}", forward=none, input_grad=none, weight_grad=grad)
        group = (2, 1) if d == 0 else (1, 2)
        return (Workload(name=f"w{d}", layers=(layer,)),
                Mapping(forward=(1, 1), input_grad=(1, 1), weight_grad=group))

    (wa, ma), (wb, mb) = job(0), job(1)
    return Instance(
        name="disjoint", network=network, workload=wa, mapping=ma,
        more_workloads=(Job(workload=wb, mapping=mb, weight=1.0),), cost=COST,
        constraints=(LinearConstraint(coefficients=(1.0, 1.0), sense="==", rhs=100.0,
                                      text="sum(bw) == 100"),),
        objective="performance", training_loop="no_overlap",
    )


@pytest.mark.parametrize(("compute_ns", "ratio"), [(0.0, 2.0), (1e7, 4 / 3)])
def test_min_max_regret_when_each_own_optimum_starves_the_other(compute_ns, ratio):
    """Each workload's own optimum gives the other's dimension no bandwidth (an infinite time), so
    no own optimum is a finite start. By hand: c = 2 x compute_ns (forward and input gradient), T_w*
    = c + 1e7 ns (all 100 GB/s on its dimension); by symmetry the min-max regret is at B = (50, 50):
    (c + 2e7) / (c + 1e7) = 2 for c = 0, 4 / 3 for c = 2e7 ns."""
    sol = api.solve(disjoint_portfolio(compute_ns), objective="min_max_regret")
    assert sol.success and sol.objective_value == pytest.approx(ratio, rel=1e-8)
    assert sol.objective_bound <= ratio * (1 + 1e-12)
    assert sol.bw_gbps == pytest.approx([50.0, 50.0], rel=1e-6)


def test_time_target_form_matches_dense_search_on_cost():
    # with a cost row that differs per dimension, the cheapest fabric within x of every optimum is a
    # 1-D problem too
    rng = np.random.default_rng(7)
    inst = random_portfolio(rng, 2)
    inst = inst.model_copy(
        update={
            "constraints": (
                LinearConstraint(
                    coefficients=(1.0, 1.0), sense="<=", rhs=400.0, text="sum(bw) <= 400"
                ),
            )
        }
    )
    sol = api.solve(inst, objective="min_max_regret")
    x = sol.objective_value - 1 + 0.05
    cheap = api.solve(inst, objective="min_cost", options=SolveOptions(max_regret=x))
    # dense check: no design on a 201 x 201 grid of (b0, b1) with every slowdown <= x is cheaper
    own = cheap.portfolio.own_optima_ns
    tms = job_time_models(inst)
    price = inst.network.npus_total * unit_cost_usd_per_gbps(inst)
    g = np.linspace(1.0, 400.0, 401)
    best = np.inf
    for b0 in g:
        for b1 in g[g <= 400.0 - b0 + 1e-9]:
            if all(tms[w].time_ns(np.array([b0, b1])) <= (1 + x) * own[w] for w in range(2)):
                best = min(best, float(price @ [b0, b1]))
                break  # cost grows with b1: the first feasible b1 is the cheapest for this b0
    assert cheap.network_cost_usd <= best * (1 + 1e-9)
    # the grid's resolution: within 1 % of the exact optimum
    assert cheap.network_cost_usd >= best * (1 - 0.01)
    for w in range(2):
        assert evaluator_time(inst, w, cheap.bw_gbps) <= (1 + x) * own[w] * (1 + 1e-9)


@pytest.mark.parametrize("loop", ["no_overlap", "tp_dp_overlap"])
def test_regret_rows_hold_each_workloads_ratio_exactly(loop):
    """At any design, with t = 1/B and every epigraph column at its exact value (each workload's in
    units of U_w), the compiled portfolio LP's rows hold, and regret row w's slack is
    z - T_w(B) / U_w (T_w by the evaluator)."""
    inst = random_portfolio(np.random.default_rng(7), 3).model_copy(update={"training_loop": loop})
    tms = job_time_models(inst)
    own = [1.3e6, 2.1e6, 0.7e6]
    scale = choose_scale(inst, stack_time_models(tms))
    lp = compile_regret_lp(inst, tms, own, scale)
    stacked = stack_time_models(ratio_models(tms, own, scale.time_ns))
    arr = lp.arr
    bw = np.array([150.0, 250.0])
    x = np.zeros(arr.n_cols)
    x[arr.b_col] = bw / scale.bw_gbps
    x[arr.t_col[list(arr.loaded)]] = scale.bw_gbps[list(arr.loaded)] / bw[list(arr.loaded)]
    tau = stacked.term_times_ns(bw)
    x[arr.z0:arr.z0 + arr.n_terms] = tau / scale.time_ns
    x[arr.z0 + arr.n_terms:] = stacked.node_values_ns(tau) / scale.time_ns
    ratios = [evaluator_time(inst, w, bw) / own[w] for w in range(3)]
    z = 1.01 * max(ratios)
    x[lp.z_col] = z
    activity = np.array([arr.row(i)[1] @ x[arr.row(i)[0]] for i in range(arr.n_rows)])
    slack = 1e-12 * (1 + np.abs(activity))
    assert (activity >= arr.row_lower - slack).all() and (activity <= arr.row_upper + slack).all()
    for w, ratio in enumerate(ratios):
        row = lp.regret_rows[w]
        assert arr.row_upper[row] - activity[row] == pytest.approx(z - ratio, rel=1e-12)


def test_min_max_regret_from_starts_that_all_starve_a_dimension():
    """Three workloads on 3 dimensions, sum(bw) == 3.15951: every own optimum leaves a dimension
    another workload loads without bandwidth (infinite ratio), and the loop once stopped at such a
    start as "optimal" with value inf (then the evaluator refused the design). Now OPTIMAL with a
    finite ratio, every dimension a workload loads given bandwidth, and no design of a grid over
    the rows beats the proven bound."""
    inst = STARVED_REGRET.instance(bw_scale=1.0, price_scale=1.0)
    sol = api.solve(inst, objective="min_max_regret")
    assert sol.success and 1.0 < sol.objective_value < 1.1
    assert sol.objective_bound <= sol.objective_value
    tms = job_time_models(inst)
    optima = np.array(sol.portfolio.own_optima_ns)
    total = inst.constraints[0].rhs
    best = min(
        max(tm.time_ns(np.array([a, b, total - a - b])) / u
            for tm, u in zip(tms, optima, strict=True))
        for a in np.linspace(0.9 * total, total, 60)
        for b in np.linspace(0.0, 1e-4 * total, 30)
        if a + b < total
    )
    assert best >= sol.objective_bound * (1 - 1e-9)


