"""Instances the fidelity tests build in code: a phase, and an instance from its dimensions,
layers and mapping (one cost class)."""

from __future__ import annotations

from hieropt.spec import (
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


def ph(compute_ns: float = 0.0, collective: str = "NONE", size_bytes: float = 0.0) -> Phase:
    """A phase (compute ns, collective name, bytes)."""
    return Phase(compute_ns=compute_ns, collective=collective, size_bytes=size_bytes)


def make_instance(
    dims: list[tuple],
    layers: list[Layer],
    forward,
    input_grad,
    weight_grad,
    training_loop: str = "no_overlap",
    dimension_mode: str = "sequential",
    **extra,
) -> Instance:
    """An instance from (block, npus[, algorithm[, latency_ns]]) tuples, layers and a mapping; one
    cost class."""
    dd = []
    for t in dims:
        block, npus = t[0], t[1]
        kw = {}
        if len(t) > 2 and t[2]:
            kw["algorithm"] = t[2]
        if len(t) > 3:
            kw["latency_ns"] = t[3]
        dd.append(Dimension(block=block, npus=npus, cost_class="C", **kw))
    return Instance(
        name="fidelity",
        network=Network(dims=tuple(dd)),
        workload=Workload(name="w", layers=tuple(layers)),
        mapping=Mapping(
            forward=tuple(forward), input_grad=tuple(input_grad), weight_grad=tuple(weight_grad)
        ),
        cost=CostModel(
            classes={
                "C": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0, nic_usd_per_gbps=1.0)
            }
        ),
        objective="performance",
        training_loop=training_loop,
        dimension_mode=dimension_mode,
        **extra,
    )
