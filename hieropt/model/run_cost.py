"""The $ of a training run as an objective: min T(B) x (A + cost(B)) x I / (3.6e12 H), the run
cost that ``min_run_cost`` minimises (:class:`RunCostTerms`), from the cluster's cost rate
(:func:`hieropt.model.run.cost_rate`) and the run's iterations; the solvers and a co-design space's
candidates share it."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..spec import Instance
from ..spec.cluster import Cluster
from .run import cost_rate

__all__ = ["RunCostTerms", "run_cost_terms", "terms_of", "NS_PER_HOUR"]

NS_PER_HOUR = 3.6e12


@dataclass(frozen=True)
class RunCostTerms:
    """The objective's parts: ``fixed_usd`` A ($), ``usd_per_ns_usd`` the factor I / (3.6e12 H) that
    turns T x (A + C) (ns x $) into $ of a run, and ``per`` (``"run"`` or ``"iteration"``).

    A cluster priced by ``usd_per_npu_hour`` alone (no ``amortisation_years``: rented, the network
    has no capex of its own to pay off) has ``usd_per_ns_usd`` 0 and A infinite: its run costs
    ``usd_per_ns`` = I x N x rate / 3.6e12 $ per ns of T, whatever the network costs
    (:attr:`rented`)."""

    fixed_usd: float
    usd_per_ns_usd: float
    per: str
    usd_per_ns: float = 0.0

    @property
    def rented(self) -> bool:
        """Whether the run's cost is T x ``usd_per_ns`` alone (the network's price does not enter
        it)."""
        return self.usd_per_ns_usd == 0

    def value(self, iteration_time_ns: float, network_cost_usd: float) -> float:
        """$ per run (or per iteration) of a design of time ``iteration_time_ns`` (ns) and network
        cost ``network_cost_usd`` ($)."""
        if self.rented:
            return self.usd_per_ns * iteration_time_ns
        return self.usd_per_ns_usd * iteration_time_ns * (self.fixed_usd + network_cost_usd)


def run_cost_terms(instance: Instance) -> RunCostTerms:
    """The :class:`RunCostTerms` of ``instance`` (its ``[cluster]`` section and token budget; see
    :func:`terms_of`).

    Raises:
        InputError: no ``[cluster]``, or one without a cost rate: neither ``usd_per_npu_hour`` nor
            ``accelerator_usd`` with ``amortisation_years`` (capex needs the years it is paid
            over), or a rate of $0 per hour; named ``cluster.<field>`` without a source (the CLI
            names the instance file: :func:`hieropt.cli.common.fail`), the fix naming the field
            missing from the ``[cluster]`` given.
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
    if cluster is None:
        raise InputError(None, "cluster", "objective min_run_cost needs the cluster's cost: no "
                         "[cluster] section",
                         "add [cluster] with usd_per_npu_hour (a rented cluster), or "
                         "accelerator_usd with amortisation_years, and the other figures you "
                         "have (see docs/buyer.md)")
    rate = cost_rate(cluster, npus)
    if rate is None:
        has_capex = cluster.accelerator_usd is not None
        field = "amortisation_years" if has_capex else "accelerator_usd"
        raise InputError(None, f"cluster.{field}", "objective min_run_cost needs a cost rate: "
                         "usd_per_npu_hour, or accelerator_usd with amortisation_years (the years "
                         "its capex is paid over)",
                         "give [cluster] amortisation_years, the years the accelerators', "
                         "servers' and network's capex is paid over (e.g. 5), or usd_per_npu_hour "
                         "for a rented cluster" if has_capex else
                         "give [cluster] accelerator_usd with amortisation_years (the years its "
                         "capex is paid over), or usd_per_npu_hour for a rented cluster (see "
                         "docs/buyer.md)")
    if rate.usd_per_h(0.0) <= 0 and rate.per_network_usd <= 0:
        raise InputError(None, "cluster.usd_per_npu_hour", "$0 per NPU-hour and no "
                         "amortisation_years: every design's run would cost $0",
                         "give the cluster's $ per NPU-hour, or amortisation_years to pay off the "
                         "network's capex")
    if tokens is not None and tokens_per_iteration is not None:
        iterations, per = tokens / tokens_per_iteration, "run"
    else:
        iterations, per = 1.0, "iteration"
    return RunCostTerms(rate.fixed_usd, iterations * rate.per_network_usd / NS_PER_HOUR, per,
                        iterations * rate.fixed_usd_per_h / NS_PER_HOUR)
