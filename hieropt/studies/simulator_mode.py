"""How the simulator runs a collective, read from an instance: the dimension mode its groups were
solved in (:func:`collective_mode`, :func:`solved_mode`), the groups the simulator cannot run as
hieropt priced them (:func:`unsimulated_group`: a non-hierarchical algorithm over several
dimensions; :func:`shared_group`: several simulator dimensions cut from one hieropt dimension,
which the simulator overlaps with several chunks per collective) and the instance recast in the
simulator's hierarchical mode (:func:`in_mode`). :mod:`hieropt.studies.simulate` picks the chunks
and names the mismatch from them."""

from __future__ import annotations

from ..errors import InputError
from ..io.astrasim_network import (
    SharedDimension,
    collective_groups,
    shared_dimension,
    sim_network,
)
from ..spec import Instance, Workload

HIERARCHICAL = ("sequential", "concurrent")
"""Group algorithms running a collective's dimensions in turn or overlapped (as the simulator)."""


def in_mode(instance: Instance, mode: str) -> Instance:
    """``instance`` with its collectives over several dimensions run hierarchically in ``mode``
    (``sequential`` or ``concurrent``), as the simulator runs every collective: each workload's
    (and pipeline stage's) ``group_algorithms`` entry that is hierarchical, or that is another
    algorithm on a group spanning several dimensions, becomes ``mode``; the instance's own
    ``dimension_mode`` is left to the caller."""

    def spans(job_groups: dict, name: str) -> bool:
        return sum(p > 1 for p in job_groups.get(name, ())) > 1

    def recast(w: Workload, groups: dict) -> Workload:
        algs = tuple(
            (n, mode if a in HIERARCHICAL or spans(groups, n) else a)
            for n, a in w.group_algorithms
        )
        more = tuple(recast(x, groups) for x in w.more_stages)
        if algs == w.group_algorithms and more == w.more_stages:
            return w
        return w.model_copy(update={"group_algorithms": algs, "more_stages": more})

    first = recast(instance.workload, instance.mapping.groups)
    more = tuple(
        j.model_copy(update={"workload": recast(j.workload, j.mapping.groups)})
        for j in instance.more_workloads
    )
    return instance.model_copy(update={"workload": first, "more_workloads": more})


def solved_mode(instance: Instance) -> str:
    """How ``instance``'s collectives over several dimensions run in its own model (what ``solve``
    optimised), in words: ``"concurrent dimensions"`` when every such group runs one hierarchical
    mode (or, none stating one, the instance's ``dimension_mode``), else each group with its
    algorithm (``"tp nccl_ring"``, ``"tp concurrent, dp sequential"``)."""
    groups: dict[str, str] = {}
    for job in instance.jobs:
        for stage in job.workload.stages:
            used = stage.named_groups
            for name, algorithm in stage.group_algorithms:
                if name in used and sum(p > 1 for p in job.mapping.groups.get(name, ())) > 1:
                    groups.setdefault(name, algorithm)
    algorithms = set(groups.values())
    if not algorithms:
        return f"{instance.dimension_mode} dimensions"
    if len(algorithms) == 1 and algorithms <= set(HIERARCHICAL):
        return f"{algorithms.pop()} dimensions"
    return ", ".join(f"{n} {a}" for n, a in groups.items())


def unsimulated_group(instance: Instance) -> str | None:
    """The first group of ``instance``'s workloads (every job and pipeline stage) whose collectives
    run an algorithm other than the hierarchical ``sequential`` / ``concurrent`` over more than one
    dimension, as ``"name (algorithm)"``, or None: ASTRA-sim runs every collective hierarchically,
    so it cannot reproduce such a group (an LLM plan's ``tp`` runs ``nccl_ring`` by default)."""
    for job in instance.jobs:
        for stage in job.workload.stages:
            for name, algorithm in stage.group_algorithms:
                group = job.mapping.groups.get(name, ())
                if algorithm not in HIERARCHICAL and sum(
                    p > 1 for p in group
                ) > 1:
                    return f"{name} ({algorithm})"
    return None


def collective_mode(instance: Instance) -> str | None:
    """The dimension mode ``instance``'s collectives run in: the hierarchical algorithm of every
    group with collectives over several dimensions when they all run one (``sequential`` or
    ``concurrent``; an LLM plan's groups run ``sequential`` unless its ``collective_algorithms``
    says otherwise), the instance's ``dimension_mode`` when no group states one, or None when the
    groups mix the two (no simulator run reproduces both)."""
    modes = set()
    for job in instance.jobs:
        for stage in job.workload.stages:
            used = stage.named_groups  # (a plan states every group's algorithm, used or not)
            for name, algorithm in stage.group_algorithms:
                if name in used and algorithm in HIERARCHICAL and sum(
                    p > 1 for p in job.mapping.groups.get(name, ())
                ) > 1:
                    modes.add(algorithm)
    if not modes:
        return instance.dimension_mode
    return modes.pop() if len(modes) == 1 else None


def shared_group(instance: Instance) -> SharedDimension | None:
    """The first group of ``instance`` whose collectives span several simulator dimensions cut
    from one hieropt dimension, together with more per-NPU bandwidth than it has
    (:func:`hieropt.io.astrasim_network.shared_dimension`: a DP x CP or an EP x expert-DP group on
    one dimension), or None (also when the groups cannot be simulator dimensions: the export says
    why). The simulator gives them the dimension's bandwidth only with 1 chunk per collective."""
    return structure(instance)[0]


def structure(instance: Instance) -> tuple[SharedDimension | None, bool]:
    """(:func:`shared_group`, whether any collective's group spans several hieropt dimensions)."""
    try:
        simnet = sim_network(instance, [1.0] * instance.network.n_dims)
    except InputError:
        return None, True
    groups = collective_groups(instance, simnet)
    spans = any(sum(p > 1 for p in sizes) > 1 for _, sizes, _ in groups)
    return shared_dimension(instance, simnet), spans


__all__ = [
    "HIERARCHICAL",
    "collective_mode",
    "in_mode",
    "shared_group",
    "solved_mode",
    "structure",
    "unsimulated_group",
]
