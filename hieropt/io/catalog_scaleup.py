"""Whether a parts catalog's parts match the instance's accelerator: a class whose parts give an
NPU more bandwidth than the accelerator's scale-up (``scaleup_gbps`` of its ``catalogs/npus.toml``
entry or model file: the fastest port the accelerator has, e.g. the H100's NVLink 4 at 450 GB/s per
direction) are another accelerator's parts (NVLink 5 parts, 18 links of 50 GB/s = 900 GB/s, under
an H100): the bill of materials would count parts the accelerator cannot attach to. The check
compares bandwidths only, the one figure both the catalog and the accelerator state; a catalog
names no generation. It is a note, not a refusal: the design's bandwidth stays within the
instance's bounds, and a what-if of faster parts is a question a user may mean.

Units: GB/s per NPU per direction (1 GB = 1e9 bytes).
"""

from __future__ import annotations

from ..model.catalog import Catalog
from ..spec import Instance
from ..workloads.llm.links import training_figure_source

__all__ = ["scaleup_notes"]

REL = 1e-6
"""Relative tolerance of the comparison (a catalog's 18 x 25 GB/s meets 450 GB/s exactly)."""


def scaleup_notes(catalog: Catalog, instance: Instance, source: str) -> tuple[str, ...]:
    """One note per cost class of ``catalog`` used by ``instance``'s network whose fastest part
    (link port or NIC, at its most units) gives an NPU more than the accelerator's scale-up
    bandwidth (:attr:`hieropt.spec.Training.scaleup_gbps`; GB/s per direction), naming the part,
    its figure, the accelerator's and ``source`` (the catalog file). None when no workload states
    its accelerator's scale-up (a workload without an LLM model) or every part is within it."""
    tr = next((j.workload.training for j in instance.jobs
               if j.workload.training is not None and j.workload.training.scaleup_gbps), None)
    if tr is None:
        return ()
    used = {dim.cost_class for dim in instance.network.dims}
    notes = []
    for cname, pc in catalog.classes.items():
        if cname not in used:
            continue
        parts = [(kind, i, p) for kind in ("links", "nics")
                 for i, p in enumerate(getattr(pc, kind))]
        if not parts:
            continue
        kind, i, top = max(parts, key=lambda x: x[2].bw_gbps(x[2].max_units))
        most = top.bw_gbps(top.max_units)
        if most <= tr.scaleup_gbps * (1 + REL):
            continue
        per = "per NPU" if top.max_per_npu is not None else f"per node of {top.node_npus} NPUs"
        notes.append(
            f"{source}: classes.{cname}.{kind}[{i}] ('{top.name}'): {top.max_units} units "
            f"{per} give {most:,.4g} GB/s per NPU, {most / tr.scaleup_gbps:.3g} x the "
            f"{tr.npu}'s scale-up of {tr.scaleup_gbps:,.4g} GB/s per direction (source: "
            f"{training_figure_source(tr, 'scaleup_gbps')}): parts of a faster scale-up than the "
            "accelerator has; the bill of materials counts this class's parts as the catalog "
            "gives them (use a catalog of "
            f"the {tr.npu}'s own scale-up parts, or read the bill as a what-if)")
    return tuple(notes)
