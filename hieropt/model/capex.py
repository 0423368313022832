"""A cap on the whole cluster's capex (``codesign --total-budget``, a space's
``max_total_capex_usd``) as a limit on a network bought in whole parts (:class:`TotalCapex`).

The cluster's capex is the fixed part (accelerators, servers, racks and the facility for their
power: :func:`hieropt.model.run.cost_rate`) plus the network's. A network from a parts catalog
draws its bill of materials' power, and when the ``[cluster]`` gives no ``network_w_per_npu`` that
power is IT power the facility is built for (``facility_usd_per_mw`` $ per MW of IT power), as
:func:`hieropt.model.run.provisioned_run` counts it in the capex. So under a total cap the network
costs its parts' $ plus ``facility_usd_per_mw`` / 1e6 $ per W of its parts:

    parts' $ + usd_per_w x parts' W <= cap - fixed capex

(the row of the provisioning MILP, :func:`hieropt.solvers.provision.provision`). With
``network_w_per_npu`` given, the network's power is already in the fixed part (``usd_per_w`` 0);
without ``facility_usd_per_mw`` or ``accelerator_w`` the facility is not priced (0 too).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..spec import Instance
from .run import cost_rate, network_budget_usd

__all__ = ["TotalCapex", "total_capex"]


@dataclass(frozen=True)
class TotalCapex:
    """A cap on the whole cluster's capex as a limit on its network (module docstring).

    Attributes:
        cap_usd: the cap on the whole cluster's capex, $.
        fixed_usd: the cluster's capex without its network, $ (accelerators, servers, racks and
            the facility for their power).
        usd_per_w: the facility's $ per W of the network's parts' power (``facility_usd_per_mw`` /
            1e6; 0 when that power is not the parts': ``network_w_per_npu`` given, or no facility
            price or accelerator power).
    """

    cap_usd: float
    fixed_usd: float
    usd_per_w: float

    @property
    def network_left_usd(self) -> float:
        """What the cap leaves the network (its parts and the facility for their power), $."""
        return self.cap_usd - self.fixed_usd

    def network_usd(self, cost_usd: float, power_w: float | None) -> float:
        """The network's share of the capex, $: its parts' ``cost_usd`` plus the facility for
        their ``power_w`` W (None, unknown: 0, as the run's figures leave it out)."""
        return cost_usd + self.usd_per_w * (power_w or 0.0)

    def total_usd(self, cost_usd: float, power_w: float | None) -> float:
        """The whole cluster's capex with a network of ``cost_usd`` $ drawing ``power_w`` W, $."""
        return self.fixed_usd + self.network_usd(cost_usd, power_w)


def total_capex(instance: Instance, cap_usd: float) -> TotalCapex:
    """The :class:`TotalCapex` of a cap of ``cap_usd`` $ on ``instance``'s whole cluster (its
    ``[cluster]`` section and NPUs).

    Raises:
        InputError: no ``[cluster]`` capex (accelerator_usd and amortisation_years) (exit 2).
        NoSolutionError: ``infeasible``, a cap at or below the cluster's capex without its network
            (exit 3), as :func:`hieropt.model.run.network_budget_usd`.
    """
    network_budget_usd(instance, cap_usd)  # (its errors: no capex, a cap below the cluster's)
    c = instance.cluster
    assert c is not None  # (network_budget_usd refuses a cluster without capex)
    rate = cost_rate(c, instance.network.npus_total)
    assert rate is not None and rate.capex_fixed_usd is not None
    per_w = 0.0
    if (c.network_w_per_npu is None and c.accelerator_w is not None
            and c.facility_usd_per_mw is not None):
        per_w = c.facility_usd_per_mw / 1e6
    return TotalCapex(float(cap_usd), rate.capex_fixed_usd, per_w)
