"""Objective ``min_run_cost``: the $ of one training run, run time x the cluster's cost rate,
minimised over the network exactly.

The cost rate is affine in the network's capex C(B) (:func:`hieropt.model.run.cost_rate`): rate = F
+ C(B) / H ($ / h; F the accelerators, servers, racks, facility and electricity, or an all-in
NPU-hour rate; H the amortisation hours). A run of I iterations of T(B) ns costs I T(B) / 3.6e12 x
(F + C(B) / H) = [I / (3.6e12 H)] x T(B) (A + C(B)) with A = F H: the performance-per-cost program
with a fixed term A, one convex program in cost-share variables
(:func:`hieropt.formulation.ratio_arrays.compile_ratio_lp`'s ``fixed_usd``), certified as
performance per cost is. A = 0 is performance per cost; a larger A buys more network. The value is
$ per run with a token budget (I = tokens / tokens per iteration), else $ per iteration (I = 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..model.run import cost_rate
from ..spec import Instance
from ..spec.cluster import Cluster

__all__ = ["RunCostTerms", "run_cost_terms", "terms_of", "NS_PER_HOUR"]

NS_PER_HOUR = 3.6e12


@dataclass(frozen=True)
class RunCostTerms:
    """The objective's parts: ``fixed_usd`` A ($), ``usd_per_ns_usd`` the factor I / (3.6e12 H) that
    turns T x (A + C) (ns x $) into $ of a run, and ``per`` (``"run"`` or ``"iteration"``)."""

    fixed_usd: float
    usd_per_ns_usd: float
    per: str

    def value(self, iteration_time_ns: float, network_cost_usd: float) -> float:
        """$ per run (or per iteration) of a design of time ``iteration_time_ns`` (ns) and network
        cost ``network_cost_usd`` ($)."""
        return self.usd_per_ns_usd * iteration_time_ns * (self.fixed_usd + network_cost_usd)


def run_cost_terms(instance: Instance) -> RunCostTerms:
    """The :class:`RunCostTerms` of ``instance`` (its ``[cluster]`` section and token budget; see
    :func:`terms_of`).

    Raises:
        InputError: no ``[cluster]``, or one without a cost rate or without ``amortisation_years``
            (the network's capex then has no rate, and the optimum would be the fastest network at
            any price).
    """
    if len(instance.jobs) > 1:
        raise InputError("objective", None, "min_run_cost prices one training run, and several "
                         "workloads share this fabric (their time is a weighted sum)",
                         "solve each workload's instance, or use performance, "
                         "performance_per_cost or min_cost for the portfolio")
    tr = instance.workload.training
    return terms_of(instance.cluster, instance.network.npus_total, instance.tokens,
                    None if tr is None else tr.tokens_per_iteration)


def terms_of(cluster: Cluster | None, npus: int, tokens: float | None,
             tokens_per_iteration: float | None) -> RunCostTerms:
    """The :class:`RunCostTerms` of ``npus`` NPUs under ``cluster``, for a run of ``tokens`` tokens
    at ``tokens_per_iteration`` (either None: $ per iteration); a co-design space's candidates share
    them.

    Raises:
        InputError: as :func:`run_cost_terms`.
    """
    fix = ("add [cluster] with accelerator_usd (or usd_per_npu_hour), amortisation_years and the "
           "other figures you have (see docs/buyer.md)")
    if cluster is None:
        raise InputError("cluster", None, "objective min_run_cost needs the cluster's cost: no "
                         "[cluster] section", fix)
    rate = cost_rate(cluster, npus)
    if rate is None or rate.per_network_usd <= 0:
        raise InputError("cluster", "amortisation_years" if rate is not None else "accelerator_usd",
                         "objective min_run_cost needs a cost rate: accelerator_usd (or "
                         "usd_per_npu_hour) and amortisation_years (the network's capex per hour)",
                         fix)
    if tokens is not None and tokens_per_iteration is not None:
        iterations, per = tokens / tokens_per_iteration, "run"
    else:
        iterations, per = 1.0, "iteration"
    return RunCostTerms(rate.fixed_usd, iterations * rate.per_network_usd / NS_PER_HOUR, per)

