"""Notes of ``hieropt validate`` on what a row resolves to: a plan whose NPU count comes from the
model file (:func:`plan_notes`), a measured plan the memory model does not fit
(:func:`memory_notes`), a one-dimension network grown to hold a run (:func:`network_notes`), one
plan measured several times (:func:`repeated_plan_notes`: the same rule
as ``calibrate``'s warning) and an interleaved pipeline whose layout the standard flags cannot
state (:func:`layout_notes`). Each note is one line starting ``note:``; none changes a figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...units import plural
from .checks import REPEAT_SPREAD, measured_apart, plan_key

ValidationRow = Any
"""A :class:`hieropt.studies.validate.run.ValidationRow` (not imported: ``run`` imports this
module)."""

PLAN_CELLS = ("dp", "plan.dp", "npus", "plan.npus")
"""The cells that set a run's data-parallel degree or NPU count (a row without one takes the model
file's ``dp``)."""


DEGREE_CELLS = ("tp", "plan.tp", "pp", "plan.pp", "cp", "plan.cp")
"""The cells of the other parallel degrees: a row giving one of them states its plan."""


def plan_notes(rows: Sequence[ValidationRow]) -> tuple[str, ...]:
    """One note per row that gives another parallel degree (:data:`DEGREE_CELLS`) but no ``dp``
    or ``npus`` cell, under a model file whose ``dp`` is not 1: the run's NPU count, tp x cp x pp
    x dp, takes that ``dp`` (a row of tp 8 x pp 2 under a model file of dp 8 is 128 NPUs, not
    64), so the note states the plan the row resolves to. A row giving no degree takes the model
    file's whole plan, and gets none."""
    out = []
    for x in rows:
        r = x.run
        given = {o.partition("=")[0].strip() for o in r.overrides}
        p = r.params.plan
        if given & set(PLAN_CELLS) or not given & set(DEGREE_CELLS) or p.dp == 1:
            continue
        cp = f" x cp {p.cp}" if p.cp > 1 else ""
        out.append(
            f"note: {r.where}: no dp cell: dp {p.dp} is the model file's ({r.model_path.name}), "
            f"so the run is tp {p.tp}{cp} x pp {p.pp} x dp {p.dp} = "
            f"{plural(p.total_npus, 'NPU')}; give a dp cell if the run had another"
        )
    return tuple(out)


def network_notes(rows: Sequence[ValidationRow]) -> tuple[str, ...]:
    """One note per network file of one dimension grown to hold a run (allowed only where the
    accelerator's scale-up domain is unknown or holds the run:
    :func:`~hieropt.io.run_network.sized_network`), naming the first such row and how many: the
    run is timed on one dimension of its NPUs at the row's bandwidth, as if all of them shared
    the file's one switch."""
    found: dict[str, list[ValidationRow]] = {}
    for x in rows:
        file, sized = x.run.net.network, x.run.network
        if file.n_dims == 1 and sized.dims[0].npus > file.dims[0].npus:
            found.setdefault(str(x.run.net.path), []).append(x)
    out = []
    for net, xs in found.items():
        more = f" (and {len(xs) - 1} more)" if len(xs) > 1 else ""
        d = xs[0].run.net.network.dims[0]
        out.append(
            f"note: {xs[0].run.where}{more}: the one-dimension network {net} ({d.npus} NPUs) is "
            f"grown to the run's {xs[0].run.network.dims[0].npus:,}: all its NPUs on one "
            f"{d.block} at the row's bandwidth; if the run spans nodes, give their network as a "
            "second dimension"
        )
    return tuple(out)


def memory_notes(rows: Sequence[ValidationRow]) -> tuple[str, ...]:
    """One note per row whose measured plan the memory model does not fit (the table's ``*``): by
    how much, in GB (1e9 bytes) per NPU, needed against available
    (:meth:`hieropt.model.memory.MemoryReport.message`). A run that ran points at the memory
    model (or at a plan that is not the run's)."""
    return tuple(
        f"note: {x.run.where}: *: the memory model finds the measured plan {x.memory}; the run "
        "ran, so the memory model (or the row's plan) is off there"
        for x in rows
        if not x.fits_memory and x.memory
    )


def repeated_plan_notes(rows: Sequence[ValidationRow]) -> tuple[str, ...]:
    """One note per plan (:func:`~hieropt.studies.validate.checks.plan_key`) measured at two or
    more times among the out-of-sample rows (a repeat of an earlier row's run left out): each
    measurement counts as a run in the summary and in its group, all with one prediction, where
    ``calibrate`` counts the plan once; with the times more than
    :data:`~hieropt.studies.validate.checks.REPEAT_SPREAD` apart (the fastest against the
    slowest, :func:`~hieropt.studies.validate.checks.measured_apart`), the note says they disagree,
    as ``calibrate`` warns."""
    plans: dict[str, list[ValidationRow]] = {}
    for x in rows:
        if x.counted:
            plans.setdefault(plan_key(x.run), []).append(x)
    out = []
    for xs in plans.values():
        if len(xs) < 2:
            continue
        times = ", ".join(f"{x.run.measured_ms:,.10g}" for x in xs)
        lines = ", ".join(str(x.run.line) for x in xs[1:])
        head = (
            f"note: {xs[0].run.where} (and line{'s' * (len(xs) > 2)} {lines}): one plan "
            f"measured "
            f"{len(xs)} times ({times} ms), predicted once ({xs[0].predicted_ms:,.1f} ms): each "
            "measurement counts as a run here (calibrate counts the plan once)"
        )
        slow = max(xs, key=lambda x: x.run.measured_ms)
        fast = min(xs, key=lambda x: x.run.measured_ms)
        w = measured_apart(
            slow.run, fast.run, "no prediction can match both; check the rows (a plan that is "
            "not the run's), or keep the measurement you trust")
        out.append(head + (f"; {w}" if w else f"; they agree within {REPEAT_SPREAD:.0%}"))
    return tuple(out)


def layout_notes(rows: Sequence[ValidationRow]) -> tuple[str, ...]:
    """One note per row whose interleaved pipeline splits its layers into pp x v chunks of unequal
    layer counts (48 layers at pp 4 x v 5) without ``stage_layers``: Megatron-LM's standard flags
    (``--num-layers-per-virtual-pipeline-stage``, NeMo's ``virtual_pipeline_model_parallel_size``)
    need the layers to divide into the chunks, and refuse such a plan; hieropt times its own
    balanced layout (:mod:`hieropt.workloads.llm.layout`), which the measured run had only with a
    layout written per chunk (``--pipeline-model-parallel-layout``). ``codesign`` counts such plans
    invalid unless ``custom_layouts = true``
    (:func:`hieropt.studies.codesign.plans.custom_layout_reason`); the other commands note them
    (:func:`hieropt.workloads.llm.layout.unequal_chunks_note`)."""
    from ...workloads.llm.layout import unequal_chunks

    out = []
    for x in rows:
        p = x.run.params
        pl, layers = p.plan, p.model.layers
        if (chunks := unequal_chunks(p)) is None:
            continue
        out.append(
            f"note: {x.run.where}: pp {pl.pp} x virtual_stages {pl.virtual_stages} = {chunks} "
            f"chunks do not divide the {layers} layers: Megatron-LM's standard flags refuse this "
            "plan, and hieropt times its own balanced layout (chunks of unequal layer counts); "
            "unless the run stated a custom layout (--pipeline-model-parallel-layout; give it as "
            "a stage_layers cell), check virtual_stages (codesign counts such plans invalid "
            "unless custom_layouts = true)"
        )
    return tuple(out)


__all__ = ["PLAN_CELLS", "DEGREE_CELLS", "plan_notes", "network_notes", "memory_notes",
           "repeated_plan_notes", "layout_notes"]
