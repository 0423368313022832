"""The buyer's figures of one answer: tokens/s, MFU, days, MWh and $ of a training run, and the
cluster's capex, cost per hour and power. One pure function of the instance, the iteration time and
the network's capex (:func:`run_figures`); every command and the library use it.

- tokens/s = tokens per iteration / T (T the iteration time, s);
- MFU = model FLOPs per iteration / (NPUs x peak FLOP/s x T) (Megatron's model FLOPs utilisation, no
  recompute: Narayanan et al. 2021, arXiv 2104.04473; Korthikanti et al. 2022, arXiv 2205.05198 §6);
  HFU the same with the recompute's FLOPs, given when recompute adds FLOPs;
- with a token budget D (tokens): iterations = D / tokens per iteration, time to train = iterations
  x T (days of 86,400 s), energy = facility power x time (MWh), $ per run = cost rate x time;
- power, capex and the cost rate from the ``[cluster]`` section (formulas in
  :mod:`hieropt.spec.cluster`).

A figure whose inputs are unknown is None, and ``unknown`` says why (a workload without an LLM
model, e.g. an ASTRA-sim text file or LIBRA's, has no tokens or FLOPs; an instance without
``[cluster]`` has no power or $).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from ..names import with_flag
from ..spec import Instance
from ..spec.cluster import Cluster
from ..spec.training import Training
from ..units import cluster_size_note
from ..workloads.llm.links import bandwidth_caveats, training_figure_source

NETWORK_POWER_LEFT_OUT = "network power (no network_w_per_npu): not in the MW, MWh, facility or $"
"""The ``left_out`` line of a cluster with ``accelerator_w`` but no ``network_w_per_npu``: its
power, energy, facility capex and cost rate count no network power."""
PUE_LEFT_OUT = ("PUE (no pue): the MW, MWh and electricity $ are IT power only, as with pue = 1; "
                "set [cluster] pue (facility power / IT power, e.g. 1.25)")
"""The ``left_out`` line of a cluster with ``accelerator_w`` but no ``pue``: its power, energy and
electricity count the IT power alone (no cooling or power delivery), not a guessed PUE."""
HOURS_PER_YEAR = 8760.0
"""Hours in one (non-leap) year: amortisation years -> hours."""
SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class CostRate:
    """The cluster's cost while it trains, affine in the network's capex C ($): rate = fixed + C x
    per_network_usd.

    Attributes:
        fixed_usd_per_h: accelerators, servers, racks and facility amortised, electricity (or the
            all-in NPU-hour rate), $ / h.
        per_network_usd: $ / h per $ of network capex (1 / amortisation hours; 0 when not
            amortised).
        capex_fixed_usd: accelerators, servers, racks and facility, $ (None with an NPU-hour rate).
        it_power_w, facility_power_w: IT power and IT x PUE, W (None when the accelerator power is
            unknown).
        left_out: what the rate does not count, for the reader.
    """

    fixed_usd_per_h: float
    per_network_usd: float
    capex_fixed_usd: float | None
    it_power_w: float | None
    facility_power_w: float | None
    left_out: tuple[str, ...]

    def usd_per_h(self, network_usd: float) -> float:
        """The rate with a network of ``network_usd`` $, $ / h."""
        return self.fixed_usd_per_h + network_usd * self.per_network_usd

    @property
    def fixed_usd(self) -> float:
        """The fixed term as network-capex dollars: fixed / per_network (inf when the network is not
        amortised). Run cost = T x per_network x (fixed_usd + C): the objective ``min_run_cost``
        minimises T (fixed_usd + C)."""
        return self.fixed_usd_per_h / self.per_network_usd if self.per_network_usd > 0 else math.inf


def it_power_w(cluster: Cluster, npus: int) -> float | None:
    """IT power of ``npus`` accelerators with their servers, racks and network, W (None without
    ``accelerator_w``)."""
    if cluster.accelerator_w is None:
        return None
    w = npus * (cluster.accelerator_w + (cluster.network_w_per_npu or 0.0))
    if cluster.server_w is not None:
        w += math.ceil(npus / cluster.npus_per_server) * cluster.server_w
    if cluster.rack_w is not None:
        w += math.ceil(npus / cluster.npus_per_rack) * cluster.rack_w
    return w


def cost_rate(cluster: Cluster, npus: int) -> CostRate | None:
    """The cost rate of ``npus`` accelerators under ``cluster`` (:mod:`hieropt.spec.cluster`), or
    None when neither ``usd_per_npu_hour`` nor ``accelerator_usd`` with ``amortisation_years`` is
    given."""
    c = cluster
    it = it_power_w(c, npus)
    facility = None if it is None else it * (c.pue or 1.0)
    hours = None if c.amortisation_years is None else c.amortisation_years * HOURS_PER_YEAR
    per_network = 0.0 if hours is None else 1.0 / hours
    left = [] if hours is not None else ["the network's capex (no amortisation_years)"]
    if c.usd_per_npu_hour is not None:
        return CostRate(npus * c.usd_per_npu_hour, per_network, None, it, facility, tuple(left))
    if c.accelerator_usd is None or hours is None:
        return None
    capex, facility_usd = _capex_parts(c, npus, it)
    rate = capex / hours
    if facility_usd:
        rate += facility_usd / (
            (c.facility_amortisation_years or c.amortisation_years) * HOURS_PER_YEAR
        )
    elif c.facility_usd_per_mw is None:
        left.append("the facility (no facility_usd_per_mw)")
    if c.electricity_usd_per_kwh is not None and facility is not None:
        rate += facility / 1e3 * c.electricity_usd_per_kwh
    elif c.electricity_usd_per_kwh is None:
        left.append("electricity (no electricity_usd_per_kwh)")
    if it is None:
        left.append("power (no accelerator_w)")
    return CostRate(rate, per_network, capex + facility_usd, it, facility, tuple(left))


def _capex_parts(c: Cluster, npus: int, it: float | None) -> tuple[float, float]:
    """($ of the accelerators, servers and racks, $ of the facility) of ``npus`` NPUs under ``c``
    (which gives ``accelerator_usd``), at IT power ``it`` (W; None: no facility $)."""
    capex = npus * c.accelerator_usd
    if c.server_usd is not None:
        capex += math.ceil(npus / c.npus_per_server) * c.server_usd
    if c.rack_usd is not None:
        capex += math.ceil(npus / c.npus_per_rack) * c.rack_usd
    facility = 0.0
    if c.facility_usd_per_mw is not None and it is not None:
        facility = c.facility_usd_per_mw * it / 1e6
    return capex, facility


def capex_fixed_usd(cluster: Cluster, npus: int) -> float | None:
    """The capex of ``npus`` NPUs under ``cluster`` without the network: accelerators, servers,
    racks and facility, $ (the :class:`CostRate`'s ``capex_fixed_usd``); it needs
    ``accelerator_usd`` and not ``amortisation_years``, the years it is paid over. None without
    ``accelerator_usd``, or with ``usd_per_npu_hour`` (rented: no capex)."""
    if cluster.accelerator_usd is None or cluster.usd_per_npu_hour is not None:
        return None
    return sum(_capex_parts(cluster, npus, it_power_w(cluster, npus)))


def facility_years_note(cluster: Cluster | None, npus: int) -> str | None:
    """The note saying which years the facility's capex is amortised over when the ``[cluster]``
    leaves ``facility_amortisation_years`` out and its default, ``amortisation_years`` (the
    accelerators' and servers' years, and its source), prices the facility in the cost rate and $
    per run (:func:`cost_rate`), with how to set it; None when the facility is not in the rate
    (no ``facility_usd_per_mw`` or accelerator power, an NPU-hour rate, no capex) or its years are
    given."""
    c = cluster
    if (c is None or c.facility_amortisation_years is not None or c.facility_usd_per_mw is None
            or c.usd_per_npu_hour is not None or c.accelerator_usd is None
            or c.amortisation_years is None or it_power_w(c, npus) is None):
        return None
    source = c.sources.get("amortisation_years")
    where = f"source: {source}" if source is not None else "no source given"
    return (
        f"the facility (${c.facility_usd_per_mw / 1e6:,.4g}M per MW of IT power) is amortised over "
        f"{c.amortisation_years:g} years, the default: [cluster] amortisation_years ({where}), the "
        "accelerators' and servers' years, as facility_amortisation_years is not given: set "
        "[cluster] facility_amortisation_years to the facility's own years (more years, fewer $ "
        "per hour and per run; instances/llama3-405b-16k-cluster.toml assumes 15)"
    )


@dataclass(frozen=True)
class RunFigures:
    """The buyer's figures of one design (None: unknown, see ``unknown``).

    Attributes:
        iteration_time_ns: T, ns.
        tokens_per_iteration, tokens_per_s: tokens.
        model_flops_per_iteration, hardware_flops_per_iteration: FLOP (hardware: with recompute).
        mfu, hfu: model and hardware FLOPs utilisation (fractions; hfu only when recompute adds
            FLOPs).
        tokens: the run's token budget; iterations_per_run: tokens / tokens per iteration.
        time_to_train_days: iterations x T, days.
        power_mw: facility power (IT x PUE), MW; energy_mwh: power x time to train, MWh.
        network_capex_usd, capex_usd: the network's, and the whole cluster's (with the network), $.
        cost_per_hour_usd: the cost rate with this network, $ / h; run_cost_usd: rate x time to
            train, $.
        unknown: why figures are None, one line each.
        left_out: what the cost rate, the power and the energy do not count (e.g.
            :data:`NETWORK_POWER_LEFT_OUT`).
        caveats: what the validation says of the plan's features it does not cover or predicts
            worst (:attr:`hieropt.spec.Training.caveats`), then the design's bandwidths its NPU
            cannot have (:func:`hieropt.workloads.llm.links.bandwidth_caveats`), then a cluster
            of more NPUs than any built (:func:`hieropt.units.cluster_size_note`), then the default
            the cost rate took for the facility's years (:func:`facility_years_note`), one
            sentence each.
    """

    iteration_time_ns: float
    tokens_per_iteration: float | None = None
    tokens_per_s: float | None = None
    model_flops_per_iteration: float | None = None
    hardware_flops_per_iteration: float | None = None
    mfu: float | None = None
    hfu: float | None = None
    tokens: float | None = None
    iterations_per_run: float | None = None
    time_to_train_days: float | None = None
    power_mw: float | None = None
    energy_mwh: float | None = None
    network_capex_usd: float | None = None
    capex_usd: float | None = None
    cost_per_hour_usd: float | None = None
    run_cost_usd: float | None = None
    unknown: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every field (None where unknown), ``unknown``, ``left_out`` and
        ``caveats`` as lists."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["unknown"], out["left_out"] = list(self.unknown), list(self.left_out)
        out["caveats"] = list(self.caveats)
        return out


def run_figures(instance: Instance, iteration_time_ns: float, network_cost_usd: float | None = None,
                tokens: float | None = None,
                bw_gbps: Sequence[float] | None = None) -> RunFigures:
    """The buyer's figures (module docstring) of ``instance`` at iteration time
    ``iteration_time_ns`` (ns) with a network of ``network_cost_usd`` $ (None: unknown) and a run of
    ``tokens`` tokens (None, the default: the instance's ``tokens``; an instance without one has
    no run figures), the design's
    bandwidths ``bw_gbps`` (GB/s per NPU, one per dimension; None: not checked) for the caveats on
    what its NPU cannot have. Several workloads on one fabric: their weighted time is no one run's,
    so the tokens, FLOPs and the run's days and $ are unknown (the power and the cost rate are
    not), and each workload's NPU is checked.

    Raises:
        nothing for a validated instance and numbers (unknown figures are None, with why in
        ``unknown``); the library's ``hieropt.run_figures`` refuses bad arguments first (an
        InputError naming them: a time in s, a token budget below one iteration, ...).
    """
    several = len(instance.jobs) > 1
    dims = [d.npus for d in instance.network.dims]
    fig = figures(
        None if several else instance.workload.training,
        instance.network.npus_total,
        iteration_time_ns,
        network_cost_usd,
        tokens if tokens is not None else instance.tokens,
        instance.cluster,
        "" if several else instance.workload.name,
        bw_gbps,
        dims_npus=dims,
    )
    if not several or bw_gbps is None:
        return fig
    more = [c for job in instance.jobs
            for c in design_caveats(job.workload.training, bw_gbps, dims_npus=dims)]
    return replace(fig, caveats=tuple(dict.fromkeys((*fig.caveats, *more))))


def design_caveats(training: Training | None, bw_gbps: Sequence[float] | None,
                   scaleout_gbps: float | None = None, space: bool = False,
                   dims_npus: Sequence[int] | None = None) -> tuple[str, ...]:
    """The caveats on the bandwidths ``bw_gbps`` (GB/s per NPU, one per dimension; None: none) of a
    design for the workload of ``training`` (None: no LLM model, none): the bandwidths its NPU
    cannot have (:func:`hieropt.workloads.llm.links.bandwidth_caveats`, when the NPU's scale-up
    bandwidth is known; ``scaleout_gbps``: the scale-out per NPU, default the outermost
    dimension's; ``space``: the fix in a co-design space's syntax; ``dims_npus``: the NPUs of
    each dimension, for the dimensions reaching beyond the NPU's scale-up domain faster than its
    NIC, when its catalog entry or the model file gives both, each named with its source:
    :func:`hieropt.workloads.llm.links.training_figure_source`; None: not checked)."""
    if training is None or bw_gbps is None:
        return ()
    tr = training
    domain = None
    if dims_npus is not None and tr.scaleup_npus is not None and tr.nic_gbps is not None:
        domain = (tuple(dims_npus), tr.scaleup_npus, tr.nic_gbps)
    sources = (training_figure_source(tr, "scaleup_npus"), training_figure_source(tr, "nic_gbps"))
    return bandwidth_caveats(bw_gbps, tr.scaleup_gbps, tr.npu, tr.scaleup_source, scaleout_gbps,
                             space, domain, sources, training_figure_source(tr, "scaleup_gbps"))


def figures(
    training: Training | None,
    npus: int,
    iteration_time_ns: float,
    network_cost_usd: float | None = None,
    tokens: float | None = None,
    cluster: Cluster | None = None,
    workload: str = "",
    bw_gbps: Sequence[float] | None = None,
    scaleout_gbps: float | None = None,
    space: bool = False,
    dims_npus: Sequence[int] | None = None,
) -> RunFigures:
    """:func:`run_figures` from its parts: the workload's ``training`` facts (None: no LLM model),
    the cluster's ``npus``, T (ns), the network's capex ($), the token budget, the ``[cluster]``
    figures (for a co-design candidate, whose instance is built per solve) and the design's
    bandwidths (GB/s per NPU; None: not checked, :func:`design_caveats`; ``scaleout_gbps``: a
    co-design candidate's scale-out per NPU, else the outermost dimension's; ``space``: a co-design
    candidate's, whose caveats give their fix in the space's syntax; ``dims_npus``: the design's
    NPUs per dimension, innermost first, for the scale-up domain's caveat; None: not checked)."""
    T = float(iteration_time_ns)
    seconds = T * 1e-9
    tr = training
    out: dict[str, Any] = {
        "iteration_time_ns": T,
        "tokens": tokens,
        "network_capex_usd": network_cost_usd,
    }
    unknown = []
    if tr is None and not workload:
        unknown.append(
            "tokens, FLOPs and the run: several workloads share the fabric and the time is "
            "their weighted "
            "sum, no one run's (hieropt solve's portfolio table gives each workload's time)"
        )
    elif tr is None:
        unknown.append(
            f"tokens and FLOPs: the workload {workload} has no LLM model (an ASTRA-sim or "
            "LIBRA workload "
            'file, or another generator); use an LLM model file (generator = "llm")'
        )
    elif seconds > 0:
        peak = tr.npus * tr.peak_flops_per_npu * seconds
        out.update(
            tokens_per_iteration=tr.tokens_per_iteration,
            tokens_per_s=tr.tokens_per_iteration / seconds,
            model_flops_per_iteration=tr.model_flops_per_iteration,
            hardware_flops_per_iteration=tr.hardware_flops_per_iteration,
            mfu=tr.model_flops_per_iteration / peak,
            hfu=tr.hardware_flops_per_iteration / peak if tr.recomputes else None,
        )
        if tokens is not None:
            out["iterations_per_run"] = tokens / tr.tokens_per_iteration
            out["time_to_train_days"] = out["iterations_per_run"] * seconds / SECONDS_PER_DAY
    if tokens is None:
        unknown.append("time, energy and $ of a run: no token budget (give "
                       f"{with_flag('tokens')}, or tokens in the file)")
    rate = None if cluster is None else cost_rate(cluster, npus)
    if cluster is None:
        unknown.append("power, capex and $: no [cluster] section")
    elif rate is None and cluster.accelerator_usd is not None:  # (capex needs no years)
        unknown.append("$ per hour and per run: [cluster] gives neither amortisation_years (the "
                       "years its capex is paid over) nor usd_per_npu_hour")
    elif rate is None:
        unknown.append(
            "capex and $: [cluster] gives neither usd_per_npu_hour nor accelerator_usd with "
            "amortisation_years"
        )
    elif network_cost_usd is None:
        unknown.append("capex and $: no network cost (give the network's cost in $, "
                       "network_cost_usd)")
    out.update(_cost_figures(cluster, npus, rate, network_cost_usd, out.get("time_to_train_days")))
    left = rate.left_out if rate is not None else ()
    c = cluster
    if c is not None and c.accelerator_w is not None and c.network_w_per_npu is None:
        left += (NETWORK_POWER_LEFT_OUT,)  # (the power is known without the network's)
    if c is not None and c.accelerator_w is not None and c.pue is None:
        left += (PUE_LEFT_OUT,)  # (the power is known without the facility's overhead)
    caveats = (tr.caveats if tr is not None else ()) + design_caveats(tr, bw_gbps, scaleout_gbps,
                                                                      space, dims_npus)
    if (size := cluster_size_note(npus)) is not None and size not in caveats:
        caveats += (size,)  # (a network of millions of NPUs, with or without an LLM plan)
    if rate is not None and (years := facility_years_note(cluster, npus)) is not None:
        caveats += (years,)
    return RunFigures(**out, unknown=tuple(unknown), left_out=left, caveats=caveats)


def _cost_figures(
    cluster: Cluster | None,
    npus: int,
    rate: CostRate | None,
    network_usd: float | None,
    days: float | None,
) -> dict[str, Any]:
    """Power, energy, capex, cost per hour and $ per run (left out where their inputs are
    unknown)."""
    out: dict[str, Any] = {}
    if cluster is None:
        return out
    it = it_power_w(cluster, npus)
    power_w = None if it is None else it * (cluster.pue or 1.0)
    if power_w is not None:
        out["power_mw"] = power_w / 1e6
        if days is not None:
            out["energy_mwh"] = power_w / 1e6 * days * 24.0
    if rate is None and network_usd is not None:  # (capex without the years it is paid over)
        fixed = capex_fixed_usd(cluster, npus)
        if fixed is not None:
            out["capex_usd"] = fixed + network_usd
    if rate is None or network_usd is None:
        return out
    if rate.capex_fixed_usd is not None:
        out["capex_usd"] = rate.capex_fixed_usd + network_usd
    out["cost_per_hour_usd"] = rate.usd_per_h(network_usd)
    if days is not None:
        out["run_cost_usd"] = out["cost_per_hour_usd"] * days * 24.0
    return out





def provisioned_run(instance: Instance, iteration_time_ns: float, network_cost_usd: float,
                    bom_power_w: float | None,
                    bw_gbps: Sequence[float] | None = None) -> tuple[RunFigures, str | None]:
    """The buyer's figures of a design provisioned from a catalog (:func:`run_figures` with the
    bill of materials' cost as the network's capex, and the caveats on its bandwidths ``bw_gbps``,
    GB/s per NPU) and the line saying which network power they count (None when nothing is to
    say).

    The bill of materials' power ``bom_power_w`` (W, the whole network; None when a part has no
    ``watts``) is the network's power in the IT power, MW, MWh and $ per run when the
    ``[cluster]`` section gives no ``network_w_per_npu`` (as ``bom_power_w`` / N W per NPU); when
    it gives one, that figure is used and the line says so. With neither, the network's power is
    in ``left_out``."""
    cluster, n = instance.cluster, instance.network.npus_total
    if cluster is None or cluster.accelerator_w is None:
        return run_figures(instance, iteration_time_ns, network_cost_usd, bw_gbps=bw_gbps), None
    given = cluster.network_w_per_npu
    if given is None and bom_power_w is not None:
        per = bom_power_w / n
        inst = instance.model_copy(
            update={"cluster": cluster.model_copy(update={"network_w_per_npu": per})})
        return run_figures(inst, iteration_time_ns, network_cost_usd, bw_gbps=bw_gbps), (
            f"network power: the bill of materials' {bom_power_w:,.0f} W ({per:,.5g} W per NPU) "
            "is counted in the cluster's MW, MWh and $")
    run = run_figures(instance, iteration_time_ns, network_cost_usd, bw_gbps=bw_gbps)
    if given is not None:
        bom = ("" if bom_power_w is None else
               f"; the bill of materials says {bom_power_w:,.0f} W ({bom_power_w / n:,.5g} W per "
               "NPU)")
        return run, (f"network power: [cluster] network_w_per_npu = {given:,.5g} W per NPU is "
                     f"counted in the cluster's MW, MWh and $" + bom)
    left = "the network's power (a part of the bill of materials has no watts)"
    kept = tuple(x for x in run.left_out if x != NETWORK_POWER_LEFT_OUT)  # (said more precisely)
    return replace(run, left_out=kept + (left,)), None


def iteration_target_ns(instance: Instance, deadline_ns: float) -> float:
    """The iteration-time target (ns) that trains the instance's token budget within ``deadline_ns``
    (ns of wall time): deadline / (tokens / tokens per iteration). "15T tokens within 90 days" is
    then a time target.

    Raises:
        InputError: no token budget, or a workload without an LLM model (tokens per iteration
            unknown).
    """
    from ..errors import InputError

    tr = instance.workload.training
    if instance.tokens is None or tr is None:
        raise InputError(
            with_flag("deadline_ns"),
            None,
            "a deadline needs the run's token budget and the tokens per iteration "
            + ("(no token budget)" if instance.tokens is None else "(no LLM model)"),
            f"give {with_flag('tokens')} (or tokens in the file) and an LLM model file",
        )
    return deadline_ns / (instance.tokens / tr.tokens_per_iteration)


def network_budget_usd(instance: Instance, total_usd: float) -> float:
    """The network budget ($) left by a budget ``total_usd`` for the whole cluster's capex: total -
    accelerators, servers, racks and facility (:func:`cost_rate`).

    Raises:
        InputError: no ``[cluster]`` capex (accelerator_usd and amortisation_years) (exit 2).
        NoSolutionError: ``infeasible``, a total at or below that capex: no network fits in it, as
            a network budget below the cheapest network (exit 3, docs/reference/exit-codes.md).
    """
    from ..errors import InputError, NoSolutionError
    from ..units import usd_cents

    rate = (
        None
        if instance.cluster is None
        else cost_rate(instance.cluster, instance.network.npus_total)
    )
    if rate is None or rate.capex_fixed_usd is None:
        raise InputError(
            with_flag("total_usd"),
            None,
            "needs the cluster's capex: [cluster] with accelerator_usd and amortisation_years",
            f"add them to [cluster], or give a network budget, {with_flag('budget_usd')}",
        )
    left = total_usd - rate.capex_fixed_usd
    if left <= 0:
        raise NoSolutionError(
            "infeasible",
            f"the total budget ${usd_cents(total_usd, up=False)} does not cover the cluster "
            f"without its network, ${usd_cents(rate.capex_fixed_usd, up=True)} (accelerators, "
            "servers, racks and facility): raise the total budget above it",
        )
    return left


def power_cap_problem(instance: Instance) -> str | None:
    """Why the cluster exceeds its site's power cap (``[cluster] max_power_mw``), or None (no cap,
    the power unknown, or within the cap). The power does not depend on the network's bandwidth
    (network power is a figure per NPU), so the cap is a check of the cluster, not a row of the
    LP."""
    c = instance.cluster
    if c is None or c.max_power_mw is None:
        return None
    it = it_power_w(c, instance.network.npus_total)
    if it is None:
        return (
            "the site's power cap max_power_mw needs accelerator_w (the cluster's power is unknown)"
        )
    mw = it * (c.pue or 1.0) / 1e6
    if mw > c.max_power_mw:
        return (
            f"the cluster draws {mw:,.2f} MW (with PUE), above the site's power cap of "
            f"{c.max_power_mw:,.2f} MW; "
            "fewer NPUs or a higher cap"
        )
    return None


@dataclass(frozen=True)
class SitePower:
    """The site's power cap (``[cluster] max_power_mw``) as a limit on the network's own power, for
    a cluster whose network power comes from its parts (no ``network_w_per_npu``): facility power
    = (fixed IT power + network power) x PUE <= cap (:func:`it_power_w`, :func:`power_cap_problem`).

    Attributes:
        cap_mw: the site's power cap, MW of facility power.
        fixed_it_w: IT power of the accelerators, servers and racks without the network, W.
        pue: the facility's PUE (1 when not given).
    """

    cap_mw: float
    fixed_it_w: float
    pue: float

    @property
    def network_cap_w(self) -> float:
        """The most the network's parts may draw under the cap, W: cap / PUE - fixed IT power."""
        return self.cap_mw * 1e6 / self.pue - self.fixed_it_w

    def cluster_mw(self, network_w: float) -> float:
        """Facility power of the cluster with a network drawing ``network_w`` W, MW."""
        return (self.fixed_it_w + network_w) * self.pue / 1e6


def site_power(instance: Instance) -> SitePower | None:
    """The site's power cap of ``instance`` as a limit on its network's power (:class:`SitePower`),
    or None when the cluster's power does not depend on the network's parts: no cap, no
    ``accelerator_w`` (power unknown) or a ``network_w_per_npu`` figure (then
    :func:`power_cap_problem` alone decides)."""
    c = instance.cluster
    if c is None or c.max_power_mw is None or c.network_w_per_npu is not None:
        return None
    fixed = it_power_w(c, instance.network.npus_total)
    if fixed is None:
        return None
    return SitePower(c.max_power_mw, fixed, c.pue or 1.0)


__all__ = [
    "CostRate",
    "SitePower",
    "site_power",
    "RunFigures",
    "cost_rate",
    "design_caveats",
    "facility_years_note",
    "figures",
    "it_power_w",
    "iteration_target_ns",
    "network_budget_usd",
    "power_cap_problem",
    "provisioned_run",
    "run_figures",
    "HOURS_PER_YEAR",
    "NETWORK_POWER_LEFT_OUT",
    "PUE_LEFT_OUT",
    "SECONDS_PER_DAY",
]
