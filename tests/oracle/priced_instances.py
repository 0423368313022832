"""Random priced instances for the SCIP oracle of performance per cost (2-3 dimensions, 1-10
collectives, per-dimension prices, a bandwidth floor and extra rows that hold at the equal split),
and the cluster's price per GB/s of each dimension straight from the cost classes. Importing it
skips the importing test module without pyscipopt (its design rows come from tests/oracle/scip.py).
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from hieropt.model.traffic import phase_traffic
from hieropt.spec import (
    PHASES,
    Bound,
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
from tests.fuzz.strategies import divisors as _divisors
from tests.oracle.scip import extra_rows, unit


def unit_costs_usd_per_gbps(instance: Instance) -> np.ndarray:
    """N * u_d ($ per GB/s of per-NPU bandwidth, whole cluster), straight from the cost classes
    (LIBRA's counting: link price on every dimension, plus switch and NIC prices on Switch
    dimensions)."""
    out = []
    for dim in instance.network.dims:
        cc = instance.cost.classes[dim.cost_class]
        price = cc.link_usd_per_gbps
        if dim.block == "Switch":
            price += (cc.switch_usd_per_gbps or 0.0) + (cc.nic_usd_per_gbps or 0.0)
        out.append(price * instance.network.npus_total)
    return np.array(out)


KINDS = [k for k in Collective if k is not Collective.NONE]


NONE_PHASE = Phase(compute_ns=0.0, collective=Collective.NONE, size_bytes=0.0)


@st.composite
def instances(draw) -> Instance:
    """Random 2-3 dimension instances with 1-10 collectives and per-dimension prices. A bandwidth
    floor keeps the product's minimiser at positive bandwidth (``sum(bw) == S``, or ``sum(bw) >= S``
    with an upper limit); every extra row holds at the equal split bw[d] = S/D (feasible)."""
    D = draw(st.integers(2, 3))
    dims = [
        (draw(st.sampled_from(["Ring", "FullyConnected", "Switch"])), draw(st.integers(2, 8)))
        for _ in range(D)
    ]
    groups = {}
    # every phase's group spans at least one dimension (else its collective carries no traffic)
    for ph in PHASES:
        g = [draw(st.sampled_from(_divisors(p))) for _, p in dims]
        if max(g) == 1:
            i = draw(st.integers(0, D - 1))
            g[i] = dims[i][1]
        groups[ph] = tuple(g)
    prices = [draw(st.integers(1, 40)) / 2 for _ in range(D)]
    switch = [
        (draw(st.integers(1, 20)) / 2, draw(st.integers(1, 20)) / 2)
        if b == "Switch"
        else (None, None)
        for b, _ in dims
    ]
    classes = {f"c{d}": CostClass(link_usd_per_gbps=prices[d], switch_usd_per_gbps=switch[d][0],
                                  nic_usd_per_gbps=switch[d][1]) for d in range(D)}

    n_coll = draw(st.integers(1, 10))
    phases = [
        Phase(
            compute_ns=draw(st.sampled_from([0.0, 1e4, 1e6]) | st.integers(0, 10**7).map(float)),
            collective=draw(st.sampled_from(KINDS)),
            size_bytes=10.0 ** draw(st.floats(5.0, 9.0)),
        )
        for _ in range(n_coll)
    ]
    phases += [NONE_PHASE] * (-n_coll % 3)
    layers = [
        Layer(
            name=f"l{i}",
            forward=phases[3 * i],
            input_grad=phases[3 * i + 1],
            weight_grad=phases[3 * i + 2],
        )
        for i in range(len(phases) // 3)
    ]

    S = float(draw(st.integers(100, 1000)))
    e = S / D  # the equal split, where every row below holds
    ones = (1.0,) * D
    floor = draw(st.sampled_from(["==", ">="]))
    rows = [LinearConstraint(coefficients=ones, sense=floor, rhs=S, text=f"sum(bw) {floor} S")]
    bounds = None
    if floor == ">=":  # an upper limit: a total cap, or upper bounds on every dimension
        if draw(st.booleans()):
            rows.append(
                LinearConstraint(
                    coefficients=ones,
                    sense="<=",
                    rhs=S * (1 + 3 * draw(unit())),
                    text="sum(bw) <= U",
                )
            )
        else:
            bounds = tuple(Bound(upper_gbps=e * (1 + 2 * draw(unit()))) for _ in range(D))
    rows += extra_rows(draw, D, e, 2)
    inst = Instance(
        name="random-ppc",
        network=Network(
            dims=tuple(
                Dimension(block=b, npus=p, cost_class=f"c{d}") for d, (b, p) in enumerate(dims)
            )
        ),
        workload=Workload(name="random-ppc", layers=tuple(layers)),
        mapping=Mapping(**groups),
        cost=CostModel(classes=classes),
        constraints=tuple(rows),
        bounds=bounds,
        objective="performance_per_cost",
        training_loop="no_overlap",
    )
    assume(phase_traffic(inst).any())
    return inst
