"""Budgets a hair above the cheapest network, with exact answers: two Ring dimensions where the
slack all goes to the starved one (:func:`two_dims`, tests/solve/test_near_cheapest.py), three where
two tie in price (:func:`tied`, :func:`exact_optimum`: the closed form of
tests/solve/test_near_cheapest_ties.py's docstring in 40-digit decimals), and instances that gave
status LIMIT (:data:`REPRODUCERS`)."""

from __future__ import annotations

from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np

import hieropt
from hieropt.model.cost import cluster_cost_usd_per_gbps
from tests.cases import kept

LAYERS = [((0.0, "NONE", 0.0), (0.0, "NONE", 0.0), (1e3, "ALLREDUCE", 1e6))]
"""One layer: a 1e6-byte weight-gradient all-reduce after 1,000 ns of compute."""


def two_dims(prices: tuple[float, float], S: float = 100.0):
    """2 Ring-2 dimensions, one all-reduce over both, sum(bw) == S; dimension 0 the cheaper."""
    return kept(
        [("Ring", 2), ("Ring", 2)],
        [(prices[0],), (prices[1],)],
        LAYERS,
        ((1, 1), (1, 1), (2, 2)),
        [((1.0, 1.0), "==", S)],
    )


MA, MB, MC = 1e6, 3e6, 2e6
"""All-reduce sizes (bytes) of the forward, input-gradient and weight-gradient phase: each spans one
Ring-2 dimension, so each is that dimension's traffic (2 c (p - 1) / p = c)."""
COMPUTE_NS = 1e3
"""The weight-gradient phase's compute, ns."""


def tied(prices: tuple[float, float], S: float, sense: str = "==") -> hieropt.Instance:
    """Dimensions 0 and 1 at ``prices[0]`` $ per GB/s, dimension 2 at ``prices[1]``, sum(bw)
    ``sense`` S."""
    a, b = prices
    return kept([("Ring", 2)] * 3, [(a,), (a,), (b,)],
                [((0.0, "ALLREDUCE", MA), (0.0, "ALLREDUCE", MB), (COMPUTE_NS, "ALLREDUCE", MC))],
                ((2, 1, 1), (1, 2, 1), (1, 1, 2)), [((1.0, 1.0, 1.0), sense, S)])


def exact_optimum(inst: hieropt.Instance, S: float, budget: float) -> tuple[Decimal, np.ndarray]:
    """T* (ns, 40 digits) and the optimal design (GB/s, rounded to floats) of :func:`tied` (the
    closed form of tests/solve/test_near_cheapest_ties.py's docstring)."""
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


REPRODUCERS = {
    # (the workload inline): loop, dims, groups, prices, rows, budget
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
"""Instances with a tie in price whose budget a hair above the cheapest network gave status
LIMIT at gaps 3.4e-6 ... 3.5e-4 (the gap in the key): loop, dimensions, groups, prices, rows,
budget; :func:`reproducer` writes one."""


WORKLOAD = """DATA
3
l0 -1 1000 ALLREDUCE 1000000 1000 ALLGATHER 500000 2000 ALLREDUCE 2000000 0
l1 -1 2000 NONE 0 1000 REDUCESCATTER 800000 1000 ALLREDUCE 3000000 0
l2 -1 500 ALLTOALL 400000 500 NONE 0 800 ALLREDUCE 1000000 0
"""
"""The reproducers' ASTRA-sim 1.0 workload: three layers of every collective."""


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


TWO_DIMS_TOML = """objective = "performance"
training_loop = "no_overlap"
workload = "wl.txt"
constraints = ["sum(bw) == 100"]
[network]
dims = [{ block = "Ring", npus = 2, cost_class = "c0" },
        { block = "Ring", npus = 2, cost_class = "c1" }]
[mapping]
forward = [1, 1]
input_grad = [1, 1]
weight_grad = [2, 2]
[cost.c0]
link_usd_per_gbps = 1.0
[cost.c1]
link_usd_per_gbps = 3.0
"""
"""The instance of :func:`two_dims` with prices (1, 3) as a file (the workload: wl.txt)."""
