"""The tiny LLM (tests/workloads/tiny.py) interleaved on 4 pipeline stages of 3, 2, 2 and 1 blocks
in 2 chunks each (the interleaved-graph tests)."""

from __future__ import annotations

from hieropt.model.groups import instance_for
from hieropt.spec import CostClass, CostModel, Dimension, Instance, Network
from hieropt.spec.space import constraint_for
from tests.workloads.tiny import params

COST = CostModel(classes={"C": CostClass(link_usd_per_gbps=1.0, switch_usd_per_gbps=1.0,
                                         nic_usd_per_gbps=1.0)})
"""One cost class C at $1 per GB/s of link, switch and NIC."""


NET = Network(dims=(Dimension(block="Ring", npus=2, cost_class="C"),
                    Dimension(block="FullyConnected", npus=2, cost_class="C"),
                    Dimension(block="Switch", npus=2, cost_class="C")))
"""Ring 2 x FullyConnected 2 x Switch 2 (8 NPUs)."""


def interleaved_instance(m: int, layers=(3, 2, 2, 1)) -> Instance:
    """The tiny LLM with ``layers`` blocks per stage on 4 stages of 2 chunks each (TP 2 x PP 4 on
    :data:`NET`, interleaved, m = ``m`` micro-batches of a global batch of 2 m), sum(bw) == 30."""
    p = params(arch={"layers": sum(layers)}, pp=4, dp=1, schedule="interleaved",
               virtual_stages=2, stage_layers=layers, global_batch_size=2 * m)
    return instance_for(p, NET, COST, constraints=(constraint_for("sum(bw) == 30", 3),))
