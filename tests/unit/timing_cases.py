"""Instance A of the no-overlap timing tests (Ring 4 x Switch 8, two layers, every collective type),
worked out by hand below, and a builder of small timing instances.

Names: AR, RS, AG, A2A and NONE are the collectives all-reduce, reduce-scatter, all-gather,
all-to-all and none.
"""

from __future__ import annotations

from hieropt.spec import (
    Collective,
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

AR = Collective.ALL_REDUCE
RS = Collective.REDUCE_SCATTER
AG = Collective.ALL_GATHER
A2A = Collective.ALL_TO_ALL
NONE = Collective.NONE


def ph(compute_ns: float, collective: Collective = NONE, size_bytes: float = 0.0) -> Phase:
    """A phase of ``compute_ns`` ns of compute and a ``collective`` of ``size_bytes`` bytes."""
    return Phase(compute_ns=compute_ns, collective=collective, size_bytes=size_bytes)


def timing_instance(dims, layers, forward, input_grad, weight_grad, classes,
                    constraints=()) -> Instance:
    """A performance instance (loop no_overlap) on ``dims`` with ``layers``, the groups of the
    three phases, the cost ``classes`` and the design rows ``constraints``."""
    return Instance(
        name="t",
        network=Network(dims=tuple(dims)),
        workload=Workload(name="w", layers=tuple(layers)),
        mapping=Mapping(forward=forward, input_grad=input_grad, weight_grad=weight_grad),
        cost=CostModel(classes=classes),
        constraints=tuple(constraints),
        objective="performance",
        training_loop="no_overlap",
    )


# --------------------------------------------------------------------------------------------------
# Instance A: Ring 4 x Switch 8 (N = 32), two layers, every collective type.
#   class "A" (Ring): link $2/GB/s; it also lists switch and NIC prices, which a Ring dimension must
# NOT pay.
#   class "B" (Switch): link 1 + switch 3 + NIC 5 -> u_1 = $9/GB/s.
#   mapping: forward (4, 1), input_grad (1, 8), weight_grad (4, 8).
#
#   phase      compute  collective  S    group   traffic [dim0, dim1]
#   l0 fwd     100      AR          64   (4,1)   [2*64*3/4 = 96, 0]
#   l0 ig       50      NONE       999   (1,8)   [0, 0]
#   l0 wg       30      AR          64   (4,8)   [96, 2*16*7/8 = 28]
#   l1 fwd      10      AG           8   (4,1)   [8*3 = 24, 0]
#   l1 ig       20      RS          32   (1,8)   [0, 32*7/8 = 28]
#   l1 wg       40      A2A         16   (4,8)   [16*3/4 = 12, 16*7/8 = 14]
#   update_ns 1000 and 500: not part of the no_overlap loop.
#
# At bw = [4, 2] GB/s (bytes/ns), per-dimension ns and collective time (max):
#   l0 fwd [24, 0] -> 24 (dim0);  l0 ig [0, 0] -> 0;  l0 wg [24, 14] -> 24 (dim0)
#   l1 fwd [ 6, 0] ->  6 (dim0);  l1 ig [0, 14] -> 14 (dim1);  l1 wg [3, 7] -> 7 (dim1)
#   compute = 100 + 50 + 30 + 10 + 20 + 40 = 250;  communication = 24 + 0 + 24 + 6 + 14 + 7 = 75;  T
# = 325
#   by phase: forward 24 + 6 = 30, input_grad 0 + 14 = 14, weight_grad 24 + 7 = 31
#   bytes: dim0 = 96 + 96 + 24 + 12 = 228; dim1 = 28 + 28 + 14 = 70
#   busy:  dim0 = 24 + 24 + 6 + 3 = 57 (= 228/4); dim1 = 14 + 14 + 7 = 35 (= 70/2)
#   utilisation: 57/325, 35/325
#   bottleneck: dim0 = 24 + 24 + 6 = 54; dim1 = 14 + 7 = 21  (sum 75 = communication)
#   cost: dim0 = 32 * 2 * 4 = 256; dim1 = 32 * 9 * 2 = 576; total 832
# --------------------------------------------------------------------------------------------------
CLASSES_A = {
    "A": CostClass(link_usd_per_gbps=2.0, switch_usd_per_gbps=100.0, nic_usd_per_gbps=100.0),
    "B": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=3.0, nic_usd_per_gbps=5.0),
}


DIMS_A = [
    Dimension(block="Ring", npus=4, cost_class="A"),
    Dimension(block="Switch", npus=8, cost_class="B"),
]


def layers_a(update0: float = 1000.0, update1: float = 500.0) -> list[Layer]:
    """Instance A's two layers (the table above), with optimizer steps ``update0`` and ``update1``
    ns."""
    return [
        Layer(
            name="l0",
            forward=ph(100, AR, 64),
            input_grad=ph(50, NONE, 999),
            weight_grad=ph(30, AR, 64),
            update_ns=update0,
        ),
        Layer(
            name="l1",
            forward=ph(10, AG, 8),
            input_grad=ph(20, RS, 32),
            weight_grad=ph(40, A2A, 16),
            update_ns=update1,
        ),
    ]


def instance_a(update0: float = 1000.0, update1: float = 500.0) -> Instance:
    """Instance A (the table above)."""
    return timing_instance(DIMS_A, layers_a(update0, update1), (4, 1), (1, 8), (4, 8), CLASSES_A)
