"""The scale-out an accelerator can feed, as a bound on what is bought for it: when a network is
provisioned with whole parts from a catalog (:func:`hieropt.solvers.provision.provision`,
:func:`hieropt.solvers.provision_milp.provision_tradeoff`, and through them ``codesign --catalog``,
``explore --catalog`` and the committee page's whole-parts columns), every dimension reaching
beyond the accelerator's scale-up domain (``scaleup_npus`` of its catalog entry or of the model
file's ``[params.npu]``: the NPUs of the dimensions up to and with it, multiplied innermost first)
gets at most the accelerator's ``nic_gbps`` per NPU
(GB/s per direction: the most one NPU sends through its NIC, its PCIe x16 host link), the tighter of
it and the instance's own upper bound, with a note naming the dimension, the bound, its source (the
catalog entry's, with the catalog file's path when the model file names its own, ``npu_catalog``;
or the model file's ``[params.npu]``, given in place of the catalog's) and how to lift it.

This is the rule :func:`hieropt.io.run_units.check_nic_bandwidth` applies to a measured run and
:func:`hieropt.workloads.llm.links.domain_caveats` states as a caveat on a continuous design: a
bill of materials is something to buy, so it holds no NIC the accelerator cannot feed (two
400 Gb/s NICs per H100 give it 100 GB/s of scale-out it can send only 50 of). ``solve`` and
``evaluate`` keep the caveat and their answer: their design is a hypothetical network. Workloads
that do not state the accelerator's domain and NIC limit (LIBRA's, an NPU given inline without
them) are not bounded.

Units: GB/s per NPU per direction (1 GB = 1e9 bytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import HieroptError, InputError, NoSolutionError
from ..model.catalog import Catalog
from ..spec import Bound, Instance
from ..spec.training import Training
from ..workloads.llm.links import training_figure_source

__all__ = ["NicBound", "nic_bounded", "nic_bounds", "nic_checked_catalog", "nic_error"]

REL = 1e-9
"""Relative tolerance of "the instance's bound is already at or below the NIC limit"."""


@dataclass(frozen=True)
class NicBound:
    """The NIC limit on one dimension: ``dim`` (index, innermost 0), the NPUs it reaches
    (``reach``), the limit ``gbps`` (GB/s per NPU per direction), the accelerator ``npu``, its
    scale-up domain ``domain`` (NPUs), where the two figures come from (``nic_source``,
    ``domain_source``) and the instance's own upper bound (GB/s; None: none)."""

    dim: int
    reach: int
    gbps: float
    npu: str
    domain: int
    nic_source: str
    domain_source: str
    upper_gbps: float | None

    @property
    def tightens(self) -> bool:
        """Whether the limit is below the instance's own upper bound (or there is none)."""
        return self.upper_gbps is None or self.upper_gbps > self.gbps * (1 + REL)

    def note(self, instance: Instance) -> str:
        """The line saying the dimension was bounded at the limit, why, and how to lift it."""
        dim = instance.network.dims[self.dim]
        given = ("no upper_gbps in the instance's bounds" if self.upper_gbps is None else
                 f"below the instance's upper_gbps = {self.upper_gbps:g}")
        return (
            f"dimension {self.dim} ({dim.block} {dim.npus}, {dim.cost_class}) bought at most "
            f"{self.gbps:g} GB/s per NPU ({given}): it reaches {self.reach:,} NPUs, beyond the "
            f"{self.npu}'s scale-up domain of {self.domain} ({self.domain_source}), and past it "
            f"one {self.npu} sends at most {self.gbps:g} GB/s through its NIC "
            f"({self.nic_source}); for more, name another accelerator ([params.npu] "
            "accelerator), or give the model file's [params.npu] nic_gbps (a faster host link) "
            "or scaleup_npus (a larger scale-up domain)"
        )


def nic_bounds(instance: Instance) -> tuple[NicBound, ...]:
    """The NIC limit of every dimension of ``instance`` that reaches beyond its accelerator's
    scale-up domain (:class:`NicBound`, innermost first): of each workload whose training facts
    give both ``scaleup_npus`` and ``nic_gbps`` (:class:`hieropt.spec.Training`), the tightest.
    Empty when no workload gives them (LIBRA's workloads, an NPU without them)."""
    found: dict[int, NicBound] = {}
    bounds = instance.bounds_or_default
    for tr in _trainings(instance):
        reach = 1
        for d, dim in enumerate(instance.network.dims):
            reach *= dim.npus
            if reach <= tr.scaleup_npus:
                continue
            old = found.get(d)
            if old is not None and old.gbps <= tr.nic_gbps:
                continue
            found[d] = NicBound(d, reach, float(tr.nic_gbps), tr.npu, int(tr.scaleup_npus),
                                _source(tr, "nic_gbps"), _source(tr, "scaleup_npus"),
                                bounds[d].upper_gbps)
    return tuple(found[d] for d in sorted(found))


def nic_bounded(instance: Instance) -> tuple[Instance, tuple[str, ...]]:
    """``instance`` with each dimension's upper bound the tighter of its own and its NIC limit
    (:func:`nic_bounds`), and one note per dimension the limit tightens. ``instance`` itself when
    no limit tightens a bound (an instance bounded at or below it is unchanged).

    Raises:
        InputError: a dimension's ``lower_gbps`` above its NIC limit (no design can have it),
            naming the dimension, the limit and the fix.
    """
    limits = [b for b in nic_bounds(instance) if b.tightens]
    if not limits:
        return instance, ()
    bounds = list(instance.bounds_or_default)
    for b in limits:
        old = bounds[b.dim]
        if old.lower_gbps > b.gbps * (1 + REL):
            raise InputError(
                f"{instance.name}: bounds", None,
                f"dimension {b.dim}: lower_gbps = {old.lower_gbps:g} is above the {b.gbps:g} GB/s "
                f"per NPU one {b.npu} sends through its NIC ({b.nic_source}) on a dimension "
                f"reaching {b.reach:,} NPUs, beyond its scale-up domain of {b.domain} "
                f"({b.domain_source}): no part bought for it can be fed",
                f"lower lower_gbps to at most {b.gbps:g}, or name another accelerator (or give "
                "the model file's [params.npu] nic_gbps or scaleup_npus)")
        bounds[b.dim] = Bound(lower_gbps=old.lower_gbps, upper_gbps=b.gbps)
    bounded = instance.model_copy(update={"bounds": tuple(bounds)})
    return bounded, tuple(b.note(instance) for b in limits)


def nic_checked_catalog(catalog: Catalog, instance: Instance,
                        source: str | Path = "catalog") -> tuple[Catalog, tuple[str, ...]]:
    """``catalog`` checked against ``instance`` as bounded at its NIC limits (:func:`nic_bounded`,
    the bounds whole parts are bought within): without the parts no such design can use, and the
    notes of :func:`hieropt.io.catalog.checked_catalog`, a part left out for a dimension's NIC
    limit naming that cap (``the H100-SXM's NIC cap bw[1] <= 50 (catalog nic_gbps of the
    H100-SXM)``), not the instance's bound.

    Raises:
        InputError: as :func:`hieropt.io.catalog.checked_catalog` (and :func:`nic_bounded`), with
            the NIC limits that tightened a bound named (:func:`nic_error`).
    """
    from .catalog import checked_catalog

    limits = [b for b in nic_bounds(instance) if b.tightens]
    caps = {b.dim: f"the {b.npu}'s NIC cap bw[{b.dim}] <= {b.gbps:g} ({b.nic_source})"
            for b in limits}
    bounded, _ = nic_bounded(instance)
    try:
        return checked_catalog(catalog, bounded, source, caps)
    except InputError as e:
        raise nic_error(e, instance) from e


def nic_error(error: HieroptError, instance: Instance) -> HieroptError:
    """``error`` (an InputError or NoSolutionError: no catalog part or design fits) with the NIC
    limits that tightened ``instance``'s bounds named (:func:`nic_bounded`; ``instance`` before
    them), so a buyer sees why a part the catalog has was not bought; ``error`` itself when none
    tightened one, or of another kind."""
    limits = [b for b in nic_bounds(instance) if b.tightens]
    if not limits or not isinstance(error, InputError | NoSolutionError):
        return error
    dims = ", ".join(str(b.dim) for b in limits)
    first = limits[0]
    words = (f"with {'dimension' if len(limits) == 1 else 'dimensions'} {dims} bought at most "
             f"{first.gbps:g} GB/s per NPU: beyond the {first.npu}'s scale-up domain of "
             f"{first.domain} ({first.domain_source}) one {first.npu} sends at most "
             f"{first.gbps:g} GB/s through its NIC ({first.nic_source})")
    if isinstance(error, InputError):
        return InputError(error.source, error.field, f"{error.problem} ({words})", error.fix)
    return NoSolutionError(error.kind, f"{str(error).removeprefix(error.kind + ': ')} ({words})")


def _trainings(instance: Instance) -> list[Training]:
    """The training facts of the instance's workloads that give a scale-up domain and NIC limit."""
    out = []
    for job in instance.jobs:
        tr = job.workload.training
        if tr is not None and tr.scaleup_npus is not None and tr.nic_gbps is not None:
            out.append(tr)
    return out


def _source(tr: Training, field: str) -> str:
    """Where the figure ``field`` (``nic_gbps``, ``scaleup_npus``) of ``tr``'s NPU comes from, in
    the words of the design caveat too (:func:`hieropt.workloads.llm.links.training_figure_source`):
    the catalog entry's (the catalog file's path when the model file names its own,
    ``npu_catalog``), the model file's ``[params.npu]`` (given in place of the catalog's), or the
    calibrated file's."""
    return training_figure_source(tr, field)
