"""Budgets a hair above the cheapest network when two dimensions tie in price and the cheapest
network puts all the bandwidth on one of them (slack 3e-7 ... 1e-6 of the cost, where a solver
without the exact budget row gives status LIMIT at gaps 3.4e-6 ... 3.5e-4, with exactly feasible
designs up to 3.5e-4 faster than the one returned).

Root cause: the cost-share LP held the budget by its share row, a row of the cost's size whose
tolerance (1e-9 of the cost) is 3e-3 of a room of 3e-7 of it. With a tie the LP spent that tolerance
on the split between the two tied dimensions (a design row met 1e-10 above its right-hand side),
i.e. out of the room the starved dimension lives on, and its duals, 1e-13 accurate, bounded the time
only to 1e-13 x cost / room. Now the first pass holds the budget by the reduced budget row alone
(hieropt/solvers/near_cheapest.py).

The oracle is exact: one equality (or floor) row sum(bw) = S, dimensions 0 and 1 at the same price
and dimension 2 dearer, each dimension carrying its own all-reduce. The budget then gives dimension
2 exactly room / r2 (r2 its price less the tied one's, room the budget less the cheapest cost, both
exact rationals), and the rest of S splits between the tied dimensions in the ratio sqrt(mA) :
sqrt(mB), so T* = C + (sqrt(mA)
+ sqrt(mB))^2 / (S - B2) + mC / B2, evaluated here in 40-digit decimal arithmetic.
"""

from __future__ import annotations

from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

import hieropt
from hieropt.model.cost import cluster_cost_usd_per_gbps
from tests.cases import kept

MA, MB, MC = 1e6, 3e6, 2e6
"""All-reduce sizes (bytes) of the forward, input-gradient and weight-gradient phase: each spans one
Ring-2 dimension, so each is that dimension's traffic (2 c (p - 1) / p = c)."""
COMPUTE_NS = 1e3
EPS = float(np.finfo(float).eps)


def tied(prices: tuple[float, float], S: float, sense: str = "==") -> hieropt.Instance:
    """Dimensions 0 and 1 at ``prices[0]`` $ per GB/s, dimension 2 at ``prices[1]``, sum(bw)
    ``sense`` S."""
    a, b = prices
    return kept([("Ring", 2)] * 3, [(a,), (a,), (b,)],
                [((0.0, "ALLREDUCE", MA), (0.0, "ALLREDUCE", MB), (COMPUTE_NS, "ALLREDUCE", MC))],
                ((2, 1, 1), (1, 2, 1), (1, 1, 2)), [((1.0, 1.0, 1.0), sense, S)])


def exact_optimum(inst: hieropt.Instance, S: float, budget: float) -> tuple[Decimal, np.ndarray]:
    """T* (ns, 40 digits) and the optimal design (GB/s, rounded to floats) of :func:`tied` (module
    docstring)."""
    getcontext().prec = 40
    p = [Fraction(float(v)) for v in cluster_cost_usd_per_gbps(inst)]
    assert p[0] == p[1] < p[2]
    room = Fraction(budget) - p[0] * Fraction(S)
    b2 = room / (p[2] - p[0])
    rest = Fraction(S) - b2

    def dec(q: Fraction) -> Decimal:
        return Decimal(q.numerator) / Decimal(q.denominator)

    sa, sb = Decimal(MA).sqrt(), Decimal(MB).sqrt()
    T = Decimal(COMPUTE_NS) + (sa + sb) ** 2 / dec(rest) + Decimal(MC) / dec(b2)
    # (dimension 2 takes the whole room: its marginal time is far above the tied dimensions')
    assert Decimal(MC) / dec(b2) ** 2 > 1000 * (sa + sb) ** 2 / dec(rest) ** 2
    b0 = dec(rest) * sa / (sa + sb)
    return T, np.array([float(b0), float(dec(rest) - b0), float(b2)])


@pytest.mark.parametrize("sense", ["==", ">="])
@pytest.mark.parametrize(
    "prices", [(1.0, 7.0), (1e-5, 1e4), (2e3, 9e3), (1.0, 1e4), (3.0, 3e5), (0.0355, 5200.0)]
)
@pytest.mark.parametrize("eps", [3e-7, 1e-6, 1e-5, 1e-3, 1e-2])
def test_tie_in_price_is_certified(eps, prices, sense):
    """(Before: LIMIT at gaps 5e-6 ... 1e-4 for the price ratios 1e4 ... 1e5 at slacks 3e-7 and
    1e-6.)"""
    S = 100.0
    base = tied(prices, S, sense)
    c0 = float(cluster_cost_usd_per_gbps(base)[0]) * S
    budget = c0 * (1 + eps)
    inst = base.model_copy(update={"max_network_cost_usd": budget})
    T, design = exact_optimum(inst, S, budget)
    # the closed form is the evaluator's time at its design (an independent check of the oracle
    # itself)
    assert hieropt.evaluate(inst, design).iteration_time_ns == pytest.approx(float(T), rel=1e-12)
    sol = hieropt.solve(inst)
    assert sol.status == "optimal" and 0 < sol.gap <= 1e-8, sol.message
    assert sol.network_cost_usd <= budget
    # designs met to round-off may use EPS x cost more of the room: the bound may sit that share
    # above T*
    round_off = 4 * EPS * c0 / (budget - c0)
    assert sol.objective_bound <= float(T) * (1 + round_off)
    assert sol.objective_value <= float(T) * (1 + 1e-8)


REPRODUCERS = {
    # (/tmp/breakit5/bug_tie_limit_gap*.toml, the workload inline): loop, dims, groups, prices,
    # rows, budget
    "gap3.4e-6": (
        "no_overlap",
        [("Ring", 4, "C0"), ("Ring", 4, "C0"), ("Switch", 16, "C2")],
        ([4, 4, 1], [4, 2, 1], [4, 4, 16]),
        {
            "C0": (0.035494359630065114,),
            "C2": (0.013630127606601723, 5199.616586385619, 5.058607300239922),
        },
        ["sum(bw) == 1577.2261303197924", "sum(bw) <= 1577226.1303197925"],
        14331.557960267804,
    ),
    "gap3.5e-4": (
        "tp_dp_overlap",
        [("Ring", 4, "C0"), ("Ring", 4, "C0"), ("Ring", 4, "C2"), ("Switch", 16, "C3")],
        ([4, 4, 1, 1], [4, 2, 1, 1], [4, 4, 4, 16]),
        {
            "C0": (0.0076495933629077825,),
            "C2": (0.2152369627016231,),
            "C3": (0.216190658402244, 20.432988715123876, 0.5137909594477169),
        },
        ["sum(bw) == 5670.6038130304605", "sum(bw) <= 56706038130304.6"],
        44418.89413650572,
    ),
    "gap5e-5": (
        "tp_dp_overlap",
        [("Ring", 4, "C0"), ("Ring", 4, "C0"), ("Switch", 16, "C2")],
        ([4, 1, 1], [4, 1, 1], [4, 1, 16]),
        {
            "C0": (0.0003573982367482496,),
            "C2": (0.5146493464858752, 2.9301478678560366, 0.03371403772277725),
        },
        ["sum(bw) == 1.1758191582185282"],
        0.1075804452141586,
    ),
}
WORKLOAD = """DATA
3
l0 -1 1000 ALLREDUCE 1000000 1000 ALLGATHER 500000 2000 ALLREDUCE 2000000 0
l1 -1 2000 NONE 0 1000 REDUCESCATTER 800000 1000 ALLREDUCE 3000000 0
l2 -1 500 ALLTOALL 400000 500 NONE 0 800 ALLREDUCE 1000000 0
"""


def reproducer(tmp_path, key: str, spec: tuple | None = None) -> hieropt.Instance:
    """The reproducer ``key`` (or the same fields in ``spec``; a budget of None: none) as an
    instance, written to ``tmp_path`` with its workload. A ceiling ``sum(bw) <= X`` above 1e6 GB/s
    per NPU (redundant beside the floor: the LP's range of scales is what it reproduces) is added
    to the loaded instance as stated, since an instance file refuses it as bytes/s."""
    from hieropt.spec import LinearConstraint
    from hieropt.units import MAX_PLAUSIBLE_BW_GBPS

    loop, dims, groups, prices, rows, budget = REPRODUCERS[key] if spec is None else spec
    huge = [r for r in rows if r.startswith("sum(bw) <= ")
            and float(r.split("<=")[1]) > MAX_PLAUSIBLE_BW_GBPS]
    rows = [r for r in rows if r not in huge]
    (tmp_path / "wl.txt").write_text(WORKLOAD)
    lines = [
        'objective = "performance"',
        f'training_loop = "{loop}"',
        'workload = "wl.txt"',
        "constraints = [" + ", ".join(f'"{r}"' for r in rows) + "]",
        *([] if budget is None else [f"max_network_cost_usd = {budget!r}"]),
        "[network]",
        "dims = ["
        + ", ".join(f'{{ block = "{b}", npus = {n}, cost_class = "{c}" }}' for b, n, c in dims)
        + "]",
        "[mapping]",
        f"forward = {groups[0]}",
        f"input_grad = {groups[1]}",
        f"weight_grad = {groups[2]}",
    ]
    for name, pr in prices.items():
        lines.append(f"[cost.{name}]")
        for field, v in zip(
            ("link_usd_per_gbps", "switch_usd_per_gbps", "nic_usd_per_gbps"), pr, strict=False
        ):
            lines.append(f"{field} = {v!r}")
    path = tmp_path / f"{key}.toml"
    path.write_text("\n".join(lines) + "\n")
    inst = hieropt.load_instance(path)
    if not huge:
        return inst
    more = tuple(
        LinearConstraint(coefficients=(1.0,) * len(dims), sense="<=",
                         rhs=float(r.split("<=")[1]), text=r)
        for r in huge
    )
    return inst.model_copy(update={"constraints": inst.constraints + more})


@pytest.mark.parametrize("key", sorted(REPRODUCERS))
def test_break_it_reproducers_are_certified(tmp_path, key):
    """Each reproducer is a certified optimum now (before: LIMIT at its gap). Its bound is held
    against the independent SCIP oracle of tests/solve/test_near_cheapest_scip.py."""
    inst = reproducer(tmp_path, key)
    sol = hieropt.solve(inst)
    assert sol.status == "optimal" and 0 < sol.gap <= 1e-8, sol.message
    assert sol.network_cost_usd <= inst.max_network_cost_usd
