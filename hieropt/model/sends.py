"""The dimensions each pipeline send crosses, from where the pipeline's stages sit on the network.

A pipelined workload's point-to-point sends (``P2P`` phases of a named group, e.g. an LLM plan's
``pp``) go from a stage to its neighbour. The group of p stages is placed over the dimensions it
spans lowest-first in mixed radix (as :func:`hieropt.model.groups.place_lowest` fills dimensions):
with its sizes (p_0, p_1, ...) per dimension, stage r sits at coordinate

    c_d(r) = floor(r / prod_(e < d) p_e) mod p_d

on dimension d. The boundary between stages r and s crosses every dimension whose coordinate
changes, c_d(r) != c_d(s), and a send across it is priced as a send over those dimensions
(:func:`hieropt.model.algorithms.unit_traffic`: S f_d / B_d + alpha_d on each, f_d one link of a
FullyConnected dimension; the largest, or the sum, by the model's rules). Stage r's forward sends
go to stage (r + 1) mod p and its input-gradient sends to stage (r - 1) mod p (with v > 1 model
chunks the last stage's forward sends wrap to stage 0, and stage 0's backward ones to the last: that
boundary changes every spanned coordinate). E.g. pp = (2, 2) (stages 0-1 on node 0, 2-3 on node 1):
0 -> 1 and 2 -> 3 cross dimension 0 only, 1 -> 2 both dimensions. The weight-gradient sends (an LLM
plan's tied-embedding exchange between the first and the last stage) cross every spanned dimension,
as the whole group's.

:func:`placed_job` states this on the workload itself: under loop ``step`` with the workload's
pipeline positions known (:func:`hieropt.model.pipeline.composition`) and a send group spanning
several dimensions, every entry of :attr:`hieropt.spec.Workload.stages` is split by the boundaries
its pipeline stages' sends cross, and each split entry's forward and input-gradient sends run on a
named group of the crossed dimensions only (:func:`boundary_group`). The time model, the evaluator
and the cutting-plane model all read the placed job, so each stage's slot holds its own sends and
the pipeline composition takes the per-stage times. A group spanning one dimension (every boundary
crosses it) or a workload without sends is returned as it is.
"""

from __future__ import annotations

import math

import numpy as np

from ..cache import Same, current
from ..names import SEND_GROUP_SEPARATOR
from ..spec import Collective, Instance, Job, LayerTable, Mapping, Workload
from .pipeline import composition

__all__ = [
    "SEPARATOR",
    "base_group",
    "boundary_dims",
    "boundary_group",
    "placed_job",
    "stage_coordinates",
]

SEPARATOR = SEND_GROUP_SEPARATOR
"""Between a send group's name and the dimensions a boundary group crosses (``pp@0+1``)."""


def stage_coordinates(sizes: tuple[int, ...], r: int) -> tuple[int, ...]:
    """Stage ``r``'s coordinate on every dimension of a send group of ``sizes`` (D,) NPUs per
    dimension, mixed radix lowest dimension first (module docstring)."""
    out, below = [], 1
    for p in sizes:
        out.append((r // below) % p)
        below *= p
    return tuple(out)


def boundary_dims(sizes: tuple[int, ...], r: int, s: int) -> tuple[int, ...]:
    """The dimensions a send between stages ``r`` and ``s`` of a group of ``sizes`` crosses: those
    whose coordinate differs (:func:`stage_coordinates`), ascending."""
    a, b = stage_coordinates(sizes, r), stage_coordinates(sizes, s)
    return tuple(d for d in range(len(sizes)) if a[d] != b[d])


def boundary_group(name: str, sizes: tuple[int, ...], dims: tuple[int, ...]) -> tuple[str, tuple]:
    """(name, sizes) of the named group a send of group ``name`` (``sizes``) across ``dims`` runs
    on: the group's size on the crossed dimensions, 1 elsewhere; ``name`` itself when ``dims`` are
    every dimension it spans."""
    if set(dims) == {d for d, p in enumerate(sizes) if p > 1}:
        return name, sizes
    return (f"{name}{SEPARATOR}{'+'.join(map(str, dims))}",
            tuple(p if d in dims else 1 for d, p in enumerate(sizes)))


def base_group(name: str | None) -> str | None:
    """The send group a boundary group (:func:`boundary_group`) belongs to; any other name as it
    is."""
    return name.split(SEPARATOR, 1)[0] if name is not None else None


def placed_job(instance: Instance, job: Job) -> Job:
    """``job`` with its pipeline sends on the dimensions each crosses (module docstring): a
    :class:`~hieropt.spec.Job` whose workload's stages are split by the boundaries their sends
    cross (:attr:`~hieropt.spec.Workload.pipeline_stages` split alike) and whose mapping holds the
    boundary groups; ``job`` itself when nothing changes. Kept in the active cache by the identity
    of the workload and the mapping, the weight and the schedule."""
    w = job.workload
    if instance.training_loop != "step" or not w.more_stages or w.pipeline_stages == ():
        return job
    key = (Same(w), Same(job.mapping), job.weight, instance.step)
    return current().memo("placed_job", key, lambda: _placed(instance, job), 4096)


def _send_groups(job: Job, p: int) -> dict[str, tuple[int, ...]]:
    """The named groups of ``job``'s forward and input-gradient sends that span several dimensions
    and hold the pipeline's ``p`` stages."""
    names: set[str] = set()
    for s in job.workload.stages:
        t = s.table
        sends = t.collective[:, :2] == Collective.P2P
        names |= {g for g in t.group[:, :2][sends].tolist() if g is not None}
    out = {}
    for g in sorted(names):
        sizes = job.mapping.groups.get(g)
        if sizes is not None and math.prod(sizes) == p and sum(x > 1 for x in sizes) > 1:
            out[g] = tuple(sizes)
    return out


def _placed(instance: Instance, job: Job) -> Job:
    comp = composition(instance, job)
    p = instance.step.stages
    groups = _send_groups(job, p) if comp is not None else {}
    if not groups:
        return job
    w = job.workload
    extra: dict[str, tuple[int, ...]] = {}
    entries: list[tuple[Workload, tuple[int, ...]]] = []
    for s, members in zip(w.stages, w.pipeline_stages, strict=True):
        t = s.table
        used = [(j, g) for j in (0, 1) for g in groups
                if ((t.collective[:, j] == Collective.P2P) & (t.group[:, j] == g)).any()]
        parts: dict[tuple, list[int]] = {}
        for r in members:
            names = []
            for j, g in used:
                sizes = groups[g]
                peer = (r + 1) % p if j == 0 else (r - 1) % p
                name, gs = boundary_group(g, sizes, boundary_dims(sizes, r, peer))
                names.append((j, g, name))
                if name != g:
                    extra[name] = gs
            parts.setdefault(tuple(names), []).append(r)
        for k, (names, rs) in enumerate(parts.items()):
            groups_col = t.group.copy()
            for j, g, name in names:
                sel = (t.collective[:, j] == Collective.P2P) & (t.group[:, j] == g)
                groups_col[sel, j] = name
            if k == 0 and (groups_col == t.group).all():
                stage = s
            else:
                stage = _with_groups(s, groups_col,
                                     s.name if k == 0 else f"{s.name} (stage {rs[0]})")
            entries.append((stage, tuple(rs)))
    if not extra:
        return job
    first, *more = [e for e, _ in entries]
    whole = Workload.model_construct(
        **{**{f: getattr(w, f) for f in type(w).model_fields}, "name": first.name,
           "layers": first.layers, "more_stages": tuple(more),
           "pipeline_stages": tuple(rs for _, rs in entries)})
    m = job.mapping
    mapping = Mapping.model_construct(forward=m.forward, input_grad=m.input_grad,
                                      weight_grad=m.weight_grad, groups={**m.groups, **extra})
    return Job.model_construct(workload=whole, mapping=mapping, weight=job.weight)


def _with_groups(s: Workload, groups: np.ndarray, name: str) -> Workload:
    """Stage workload ``s`` with the named groups ``groups`` (L, 3) and ``name``."""
    t = s.layers if isinstance(s.layers, LayerTable) else LayerTable.from_layers(s.layers)
    layers = LayerTable(t.names, t.compute_ns, t.size_bytes, t.kinds, t.scopes, t.update_ns,
                        t.policies, t.groups)
    # (set after the checks: a boundary group's name holds the separator, which no group named in
    # an input may, so it never meets one)
    layers.groups = groups
    return Workload.model_construct(
        **{**{f: getattr(s, f) for f in type(s).model_fields}, "name": name, "layers": layers,
           "more_stages": (), "pipeline_stages": ()})
