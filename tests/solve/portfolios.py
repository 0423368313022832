"""Random portfolios of workloads on a few dimensions, and a ternary search for the convex times
along a one-parameter design (the portfolio tests' independent dense search)."""

from __future__ import annotations

import numpy as np

from hieropt.spec import (
    PHASES,
    Collective,
    CostClass,
    CostModel,
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
from tests.fuzz.strategies import divisors

COST = CostModel(
    classes={"C": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0, nic_usd_per_gbps=1.0)}
)
"""One cost class C at $1 per GB/s of link, switch and NIC."""


def random_portfolio(
    rng: np.random.Generator, W: int, D: int = 2, total: float = 400.0
) -> Instance:
    """A random portfolio of ``W`` weighted workloads (1-3 layers of random collectives of 1e6 to
    1e9 bytes each) on ``D`` random dimensions of 2-8 NPUs, loop no_overlap, ``sum(bw) == total``
    GB/s; every workload's weight gradient spans every dimension."""
    dims = [
        (str(rng.choice(["Ring", "FullyConnected", "Switch"])), int(rng.integers(2, 9)))
        for _ in range(D)
    ]
    network = Network(dims=tuple(Dimension(block=b, npus=p, cost_class="C") for b, p in dims))

    def workload(w: int) -> tuple[Workload, Mapping]:
        def phase() -> Phase:
            kind = Collective(
                str(rng.choice(["ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL"]))
            )
            return Phase(compute_ns=float(rng.choice([1e3, 1e5, 1e6])), collective=kind,
                         size_bytes=float(10 ** rng.uniform(6, 9)))

        layers = tuple(
            Layer(name=f"w{w}l{i}", forward=phase(), input_grad=phase(), weight_grad=phase())
            for i in range(int(rng.integers(1, 4)))
        )
        groups = {ph: tuple(int(rng.choice(divisors(p))) for _, p in dims) for ph in PHASES}
        groups["weight_grad"] = tuple(p for _, p in dims)  # every workload loads every dimension
        return Workload(name=f"w{w}", layers=layers), Mapping(**groups)

    jobs = [workload(w) for w in range(W)]
    return Instance(
        name="portfolio",
        network=network,
        workload=jobs[0][0],
        mapping=jobs[0][1],
        more_workloads=tuple(
            Job(workload=wl, mapping=mp, weight=float(rng.uniform(0.5, 2))) for wl, mp in jobs[1:]
        ),
        cost=COST,
        constraints=(
            LinearConstraint(coefficients=(1.0,) * D, sense="==", rhs=total, text="sum(bw) == c"),
        ),
        objective="performance",
        training_loop="no_overlap",
    )


def ternary(f, lo: float, hi: float, steps: int = 300) -> float:
    """The minimiser of the convex ``f`` on [``lo``, ``hi``] by ternary search (``steps`` steps,
    the interval shrinks by 2/3 each)."""
    for _ in range(steps):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if f(a) <= f(b):
            hi = b
        else:
            lo = a
    return 0.5 * (lo + hi)
