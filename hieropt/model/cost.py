"""Network cost, LIBRA's linear counting (design.md §2.4).

Every building block of dimension d, counted over the whole cluster, provides per-NPU bandwidth B_d to each of the
N NPUs (Ring: 2p links of B/2 per ring; FullyConnected: p(p-1) links of B/(p-1); Switch: one link of B per NPU),
so cost = N * sum_d u_d * B_d with u_d = link $/GB/s, plus switch and NIC $/GB/s on Switch dimensions.
Source: LIBRA ``src/cost_model/cost_model.py`` (checked numerically on 4x8x4x32 in research/peers.md).
"""

from __future__ import annotations

import numpy as np

from ..spec import Instance


def unit_cost_usd_per_gbps(instance: Instance) -> np.ndarray:
    """u_d, $ per GB/s of per-NPU bandwidth for one NPU, shape (D,)."""
    u = []
    for dim in instance.network.dims:
        cc = instance.cost.classes[dim.cost_class]
        price = cc.link_usd_per_gbps
        if dim.block == "Switch":
            price += (cc.switch_usd_per_gbps or 0.0) + (cc.nic_usd_per_gbps or 0.0)
        u.append(price)
    return np.array(u)


def cost_per_dim_usd(instance: Instance, bw_gbps: np.ndarray) -> np.ndarray:
    """Cluster-wide cost of each dimension, N * u_d * B_d ($), shape (D,)."""
    return instance.network.npus_total * unit_cost_usd_per_gbps(instance) * np.asarray(bw_gbps, dtype=float)


def network_cost_usd(instance: Instance, bw_gbps: np.ndarray) -> float:
    """Total network cost ($) of per-NPU bandwidths ``bw_gbps`` (shape (D,), GB/s)."""
    return float(cost_per_dim_usd(instance, bw_gbps).sum())
