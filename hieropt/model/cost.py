"""Network cost, LIBRA's linear counting (docs/explanation/model.md).

Every building block of dimension d, counted over the whole cluster, provides per-NPU bandwidth B_d
to each of the N NPUs (Ring: 2p links of B/2 per ring; FullyConnected: p(p-1) links of B/(p-1);
Switch: one link of B per NPU), so cost = N * sum_d u_d * B_d with u_d = link $/GB/s, plus switch
and NIC $/GB/s on Switch dimensions. Source: LIBRA ``src/cost_model/cost_model.py`` (checked
numerically on the 4x8x4x32 network).
"""

from __future__ import annotations

import numpy as np

from ..spec import CostModel, Instance, Network


def unit_cost_usd_per_gbps(instance: Instance) -> np.ndarray:
    """u_d, $ per GB/s of per-NPU bandwidth for one NPU, shape (D,) (read-only; computed once per
    instance)."""
    return instance.memo("_unit_cost", (instance.network, instance.cost), lambda: _frozen(
        unit_costs(instance.network, instance.cost)))


def cluster_cost_usd_per_gbps(instance: Instance) -> np.ndarray:
    """N u_d, $ per GB/s of per-NPU bandwidth for the whole cluster, shape (D,) (read-only; once per
    instance)."""
    return instance.memo("_cluster_cost", (instance.network, instance.cost), lambda: _frozen(
        instance.network.npus_total * unit_costs(instance.network, instance.cost)))


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def unit_costs(network: Network, cost: CostModel) -> np.ndarray:
    """u_d of ``network`` under ``cost`` ($ per GB/s of per-NPU bandwidth for one NPU, shape (D,)):
    the link price, plus the switch and NIC prices on Switch dimensions. Raises KeyError for a cost
    class ``cost`` lacks."""
    u = []
    for dim in network.dims:
        cc = cost.classes[dim.cost_class]
        price = cc.link_usd_per_gbps
        if dim.block == "Switch":
            price += (cc.switch_usd_per_gbps or 0.0) + (cc.nic_usd_per_gbps or 0.0)
        u.append(price)
    return np.array(u)


def cost_per_dim_usd(instance: Instance, bw_gbps: np.ndarray) -> np.ndarray:
    """Cluster-wide cost of each dimension, N * u_d * B_d ($), shape (D,)."""
    return cluster_cost_usd_per_gbps(instance) * np.asarray(bw_gbps, dtype=float)


def network_cost_usd(instance: Instance, bw_gbps: np.ndarray) -> float:
    """Total network cost ($) of per-NPU bandwidths ``bw_gbps`` (shape (D,), GB/s)."""
    return float(cost_per_dim_usd(instance, bw_gbps).sum())


def ignored_price_notes(instance: Instance) -> tuple[str, ...]:
    """One note per cost class whose switch or NIC price no dimension pays: LIBRA's counting charges
    them only on Switch dimensions, so on a class used only by Ring / FullyConnected dimensions they
    are not part of the cost (LIBRA's own 4-D cost model gives InterPackage and InterNode a Switch
    price). Computed once per instance."""
    return instance.memo(
        "_ignored_price_notes", (instance.network, instance.cost), lambda: _price_notes(instance)
    )


def _price_notes(instance: Instance) -> tuple[str, ...]:
    out = []
    for name, cc in instance.cost.classes.items():
        blocks = {dim.block for dim in instance.network.dims if dim.cost_class == name}
        if not blocks or "Switch" in blocks:
            continue
        parts = [
            p
            for p, v in (("switch", cc.switch_usd_per_gbps), ("NIC", cc.nic_usd_per_gbps))
            if v is not None
        ]
        if parts:
            out.append(
                f"cost class '{name}' gives a {' and a '.join(parts)} price, which is not "
                "charged: only "
                f"Switch dimensions pay for switches and NICs, and '{name}' is used by "
                f"{' / '.join(sorted(blocks))} dimensions only (cost = N x link price x "
                "bandwidth there)"
            )
    return tuple(out)
