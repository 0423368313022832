"""Per-dimension traffic and latency of every phase's collective on a multi-dimensional hierarchical
network (docs/explanation/model.md): each collective's bytes and steps per dimension by the
algorithm that runs its group (:mod:`hieropt.model.algorithms`: LIBRA's hierarchical decomposition,
concurrent or sequential over the dimensions, or a flat ring, tree or direct algorithm over the
whole group), and whether its dimensions' times add up (:func:`phase_sums`). Every rule is linear in
the size S, so a collective's traffic is ``S * unit_traffic(kind, group, algorithm)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cache import Same, current
from ..spec import PHASES, Collective, Instance, Job, Mapping, Network
from ..spec.tiling import group_strides
from .algorithms import (
    collective_steps,
    group_links,
    p2p_links,
    sums_dims,
    unit_table,
    unit_traffic,
)
from .rows import distinct_rows
from .sends import placed_job
from .stages import stage_rows


def collective_traffic(collective: Collective, size_bytes: float, group: tuple[int, ...],
                       algorithm: str = "concurrent") -> np.ndarray:
    """Per-dimension bytes (shape (D,)) of one collective of ``size_bytes`` over ``group``; see
    :func:`hieropt.model.algorithms.unit_traffic`."""
    return size_bytes * unit_traffic(collective, group, algorithm)


KINDS: tuple[Collective, ...] = tuple(Collective)
"""Collective kinds in code order (:func:`collective_codes`)."""


TABLES_KEPT = 12
"""Tables whose codes, phase classes and class groups are kept (the last used): a co-design
candidate's plan has up to three distinct pipeline stages, and the search alternates between
plans."""


def collective_codes(table) -> np.ndarray:
    """The collective of every layer and phase of a :class:`~hieropt.spec.PhaseTable` as an index
    into :data:`KINDS`, shape (n_layers, 3), int8 (the last few tables' codes are kept in the active
    cache)."""
    if getattr(table, "kinds", None) is not None:
        return table.kinds

    def build() -> np.ndarray:
        codes = np.zeros(table.collective.shape, dtype=np.int8)
        for i, kind in enumerate(KINDS[1:], 1):
            codes[table.collective == kind] = i
        codes.flags.writeable = False
        return codes

    return current().memo("collective_codes", Same(table), build, TABLES_KEPT)


CLASS_ROWS = 4096
"""Up to this many phases (L x 3), :func:`phase_classes` partitions them (above, the time model
compares the rows themselves, as it does without the partition)."""


def phase_classes(table) -> tuple[np.ndarray, np.ndarray] | None:
    """The phases of a :class:`~hieropt.spec.PhaseTable` whose traffic and latency rows are equal on
    every network and mapping: the same phase column, collective, bytes and named group
    (:func:`phase_traffic` and :func:`phase_latency` depend on nothing else). Returns (index of each
    class's first phase, the class of every phase), phases numbered ``3 * layer + j``, classes in
    order of first appearance, or None for a table of more than :data:`CLASS_ROWS` phases. The last
    few tables' partitions are kept in the active cache: every candidate of a sweep over shapes or
    placements of one workload asks for the same (:func:`hieropt.model.terms.phase_refs` then
    compares a dozen rows instead of every phase's)."""
    return current().memo("phase_classes", Same(table), lambda: _classes(table), TABLES_KEPT)


def _classes(table) -> tuple[np.ndarray, np.ndarray] | None:
    L = table.size_bytes.shape[0]
    out = None
    if 3 * L <= CLASS_ROWS:
        keys = np.empty((L, 3, 4))
        keys[:, :, 0] = np.arange(3)
        keys[:, :, 1] = collective_codes(table)
        keys[:, :, 2] = table.size_bytes
        if (table.group != None).any():  # noqa: E711 (element-wise)
            ids: dict[object, int] = {}
            group = [ids.setdefault(g, len(ids)) for g in table.group.ravel().tolist()]
            keys[:, :, 3] = np.reshape(group, (L, 3))
        else:  # (no named group: every phase's group is None, numbered 0)
            keys[:, :, 3] = 0.0
        first, inverse, _ = distinct_rows(keys.reshape(3 * L, 4) + 0.0)
        out = (first, inverse)
        for a in out:
            a.flags.writeable = False
    return out


def read_only(out: np.ndarray) -> np.ndarray:
    """``out``, made read-only (a value kept in a cache is shared by every later caller)."""
    out.flags.writeable = False
    return out


ROWS_KEPT = 4096
"""(group, algorithm) pairs whose rows :func:`unit_rows` and :func:`step_rows` keep."""


def unit_rows(group: tuple[int, ...], algorithm: str = "concurrent",
              links: tuple[float, ...] | None = None,
              factors: tuple[float, ...] | None = None) -> np.ndarray:
    """:func:`unit_traffic` of every kind in :data:`KINDS` over ``group`` by ``algorithm``
    (point-to-point sends with ``links``, collectives times ``factors``), shape (len(KINDS), D),
    read-only (kept in the active cache)."""
    return current().memo("unit_rows", (group, algorithm, links, factors), lambda: read_only(
        unit_table(KINDS, group, algorithm, links, factors)), ROWS_KEPT)


def bandwidth_rule(instance: Instance, job: Job) -> str:
    """How a group that spans part of a dimension is priced for ``job``: the instance's
    ``group_bandwidth``, else ``links`` for an LLM plan (a workload stating its groups' algorithms)
    and ``whole`` for the rest (LIBRA's and ASTRA-sim's inputs, LIBRA's convention)."""
    if instance.group_bandwidth is not None:
        return instance.group_bandwidth
    return "links" if job.workload.group_algorithms else "whole"


def mapping_links(network: Network, mapping: Mapping, rule: str) -> dict[str, tuple[float, ...]]:
    """Every group's :func:`~hieropt.model.algorithms.group_links` (named groups by name, the
    phases' groups by phase), with its strides (:func:`hieropt.spec.tiling.group_strides`); empty
    under the rule ``whole`` (every group the NPU's whole bandwidth) or when every factor is 1. Kept
    in the active cache per mapping, network and rule."""
    def build() -> dict[str, tuple[float, ...]]:
        if rule == "whole":
            return {}
        phases = {p: tuple(mapping.group(p)) for p in PHASES}
        sizes = tuple(d.npus for d in network.dims)
        strides = group_strides(mapping.groups, phases, sizes)
        out = {k: group_links(network, tuple(g), strides[k])
               for k, g in list(mapping.groups.items()) + list(phases.items())}
        return {k: f for k, f in out.items() if any(x != 1.0 for x in f)}

    return current().memo("mapping_links", (Same(mapping), network, rule), build, ROWS_KEPT)


def job_links(instance: Instance, job: Job) -> dict[str, tuple[float, ...]]:
    """:func:`mapping_links` of ``job`` on the instance's network by :func:`bandwidth_rule`."""
    return mapping_links(instance.network, job.mapping, bandwidth_rule(instance, job))


def links_key(instance: Instance, job: Job) -> tuple:
    """:func:`job_links` as a sorted tuple (a cache key's part)."""
    return tuple(sorted(job_links(instance, job).items()))


def step_rows(
    group: tuple[int, ...], algorithms: tuple[str, ...], algorithm: str = "concurrent"
) -> np.ndarray:
    """:func:`collective_steps` of every kind in :data:`KINDS`, shape (len(KINDS), D), read-only
    (kept in the active cache)."""
    return current().memo("step_rows", (group, algorithms, algorithm), lambda: read_only(
        np.array([collective_steps(k, group, algorithms, algorithm) for k in KINDS])), ROWS_KEPT)


def group_algorithm(instance: Instance, job: Job, name: str | None) -> str:
    """The algorithm running the collectives of named group ``name`` (None: a phase's group) of
    ``job``: the workload's :attr:`~hieropt.spec.Workload.group_algorithms` entry, else the
    instance's ``dimension_mode``."""
    return job.workload.algorithm(name) or instance.dimension_mode


def _placement_key(instance: Instance, job: Job) -> tuple:
    """What :func:`phase_traffic` depends on besides the table: the groups, their algorithms, the
    send links, the groups' link factors (:func:`job_links`; kept on the instance: a solve asks for
    it at every phase_* call)."""
    def build() -> tuple:
        names = tuple(sorted(job.workload.named_groups))
        return (
            tuple(job.mapping.group(p) for p in PHASES)
            + tuple(job.mapping.group(PHASES[0], n) for n in names)
            + (instance.dimension_mode, job.workload.group_algorithms, p2p_links(instance.network),
               links_key(instance, job))
        )

    return instance.memo("_placement_key", (job, instance.network, instance.dimension_mode,
                                            instance.group_bandwidth), build)


def phase_traffic(instance: Instance, job: Job | None = None) -> np.ndarray:
    """Bytes per NPU on each dimension for every phase of every layer of ``job`` (default: the
    primary workload); a collective of a named group (:attr:`hieropt.spec.Phase.group`) uses that
    group's sizes, the others the phase's group of the mapping.

    Returns:
        array of shape (n_layers, 3, D), phases in :data:`hieropt.spec.PHASES` order.
    """
    job = job or instance.jobs[0]
    table = job.workload.table
    key = _placement_key(instance, job)
    # (kept, read-only: the time model, the evaluator, a sweep's equal placements ask for the same)
    return current().memo("phase_traffic", (Same(table), key), lambda: read_only(
        _traffic(instance, job, table, key[-2], dict(key[-1]))), KEPT, KEPT_ELEMENTS)


KEPT, KEPT_ELEMENTS = 64, 1 << 22
"""Results of :func:`phase_traffic`, :func:`phase_latency` and :func:`phase_sums` the active cache
keeps: at most this many of each and this many array elements in all (a large workload's arrays take
megabytes; a sweep's candidates repeat a few placements)."""


def _traffic(instance: Instance, job: Job, table, links, factors: dict) -> np.ndarray:
    """:func:`phase_traffic` (sends by ``links``, each group's collectives times its
    ``factors``)."""
    L, D = table.size_bytes.shape[0], instance.network.n_dims
    classes = phase_classes(table)
    # one row per class of equal phases, then every phase's copy of its class's row
    if classes is not None and not any(
        g is not None for g in table.group[classes[0] // 3, classes[0] % 3].tolist()
    ):  # (no named group: each phase column's group, one unit row per class)
        layer, col = np.divmod(classes[0], 3)
        algorithm = group_algorithm(instance, job, None)
        unit = np.stack([unit_rows(job.mapping.group(p), algorithm, links, factors.get(p))
                         for p in PHASES])
        rep = table.size_bytes[layer, col][:, None] * unit[col, collective_codes(table)[layer, col]]
        return rep[classes[1]].reshape(L, 3, D)
    if classes is not None:
        rep = np.empty((classes[0].size, D))
        for j, name, idx, size, kinds in _class_groups(table, classes):
            unit = unit_rows(
                job.mapping.group(PHASES[j], name), group_algorithm(instance, job, name), links,
                factors.get(name or PHASES[j]),
            )
            rep[idx] = size[:, None] * unit[kinds]
        return rep[classes[1]].reshape(L, 3, D)
    codes = collective_codes(table)
    out = np.zeros((L, 3, D))
    for j, phase in enumerate(PHASES):
        for name, rows in _group_rows(table, j):
            unit = unit_rows(
                job.mapping.group(phase, name), group_algorithm(instance, job, name), links,
                factors.get(name or phase),
            )
            if rows is None:
                np.multiply(table.size_bytes[:, j, None], unit[codes[:, j]], out=out[:, j, :])
            else:
                out[rows, j, :] = table.size_bytes[rows, j, None] * unit[codes[rows, j]]
    return out


def phase_sums(instance: Instance, job: Job | None = None) -> np.ndarray:
    """Whether each phase's collective takes the sum of its dimensions' times (its group's algorithm
    is ``sequential``, :func:`hieropt.model.algorithms.sums_dims`) rather than the largest, shape
    (n_layers, 3) bool; point-to-point sends never sum (a send crosses one dimension). Read-only;
    kept per table and key."""
    job = job or instance.jobs[0]
    table = job.workload.table
    key = (instance.dimension_mode, job.workload.group_algorithms)

    def build() -> np.ndarray:
        out = np.zeros((table.size_bytes.shape[0], 3), dtype=bool)
        if not may_sum(instance, job):
            return read_only(out)  # (the common case)
        p2p = collective_codes(table) == KINDS.index(Collective.P2P)
        for j in range(3):
            for name, rows in _group_rows(table, j):
                if sums_dims(group_algorithm(instance, job, name)):
                    out[:, j] |= True if rows is None else rows
        return read_only(out & ~p2p)

    return current().memo("phase_sums", (Same(table), key), build, KEPT, KEPT_ELEMENTS)


def may_sum(instance: Instance, job: Job) -> bool:
    """Whether any collective of ``job`` may take the sum of its dimensions' times: the instance's
    ``dimension_mode`` or one of the workload's :attr:`~hieropt.spec.Workload.group_algorithms`
    sums (:func:`hieropt.model.algorithms.sums_dims`). False: :func:`phase_sums` is all False."""
    return sums_dims(instance.dimension_mode) or any(
        sums_dims(a) for _, a in job.workload.group_algorithms
    )


def model_mode(instance: Instance) -> str:
    """The ``dimension_mode`` of the instance's :class:`~hieropt.model.terms.TimeModel`:
    ``sequential`` when every collective that spans several dimensions sums their times
    (:func:`phase_sums`), ``concurrent`` when another takes their largest (the summing ones are then
    composite terms, :meth:`hieropt.model.terms.TermBuilder.term_sum`); the instance's
    ``dimension_mode`` when no collective spans several dimensions."""
    if instance.dimension_mode == "concurrent" and not any(
        may_sum(instance, job) for job in instance.jobs
    ):  # (no collective sums its dimensions, a stage's neither: concurrent either way)
        return "concurrent"

    def build() -> str:
        summing = other = False
        for job in instance.jobs:
            job = placed_job(instance, job)
            job = stage_rows(job)[0] if job.workload.more_stages else job
            sums = phase_sums(instance, job)
            multi = (
                np.count_nonzero(
                    (phase_traffic(instance, job) > 0) | (phase_latency(instance, job) > 0), axis=2
                )
                > 1
            )
            summing |= bool((multi & sums).any())
            other |= bool((multi & ~sums).any())
        if summing == other:
            return instance.dimension_mode if not summing else "concurrent"
        return "sequential" if summing else "concurrent"

    return instance.memo("_model_mode", (instance.network, instance.workload, instance.mapping,
                                         instance.more_workloads, instance.dimension_mode,
                                         instance.training_loop, instance.step), build)


def model_fields(instance: Instance) -> tuple:
    """The fields of ``instance`` its time model and the evaluator's bandwidth-free arrays derive
    from (the key of their memo on the instance, :meth:`hieropt.spec.base.Frozen.memo`)."""
    return (instance.network, instance.workload, instance.mapping, instance.workload_weight,
            instance.more_workloads, instance.training_loop, instance.dimension_mode,
            instance.pipeline, instance.step, instance.collectives_in_flight, instance.chunks,
            instance.group_bandwidth)


def job_arrays(instance: Instance, i: int) -> tuple:
    """What the evaluator reads of job ``i`` of ``instance`` at every bandwidth: (the job, or the
    job of its stages' rows, :func:`hieropt.model.stages.stage_rows`; the rows of each stage;
    traffic (L, 3, D) bytes; latency (L, 3, D) ns; the summing collectives (L, 3)), each pipeline
    send on the dimensions it crosses (:func:`hieropt.model.sends.placed_job`), kept on the
    instance (a repeated solve evaluates it again)."""
    def build() -> tuple:
        job, rows = placed_job(instance, instance.jobs[i]), None
        if job.workload.more_stages:
            job, rows = stage_rows(job)
        traffic, latency = phase_traffic(instance, job), phase_latency(instance, job)  # (L, 3, D)
        rows = rows or (slice(0, traffic.shape[0]),)
        return job, rows, traffic, latency, phase_sums(instance, job)

    return instance.memo_by_value("_job_arrays", model_fields(instance), i, build)


def phase_times(instance: Instance, job: Job, bw: np.ndarray) -> np.ndarray:
    """Every phase's collective time at per-NPU bandwidths ``bw`` (D,) GB/s, ns, shape (n_layers,
    3): the largest or, for the collectives of :func:`phase_sums`, the sum over the dimensions of
    bytes / B + latency."""
    traffic, latency = phase_traffic(instance, job), phase_latency(instance, job)
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.where(traffic > 0, traffic / bw, 0.0) + latency
    sums = phase_sums(instance, job)
    return np.where(sums, per.sum(axis=-1), per.max(axis=-1, initial=0.0))


def _class_groups(table, classes: tuple[np.ndarray, np.ndarray]) -> list[
        tuple[int, str | None, np.ndarray, np.ndarray, np.ndarray]]:
    """The classes of :func:`phase_classes` by the group their collective runs on: (phase column j,
    named group or None for the phase's group, the classes' indices, their bytes, their collective
    codes), kept per table."""
    return current().memo("class_groups", Same(table), lambda: _groups_of(table, classes),
                          TABLES_KEPT)


def _groups_of(table, classes: tuple[np.ndarray, np.ndarray]) -> list[
        tuple[int, str | None, np.ndarray, np.ndarray, np.ndarray]]:
    first = classes[0]
    layer, col = first // 3, first % 3
    size, kinds, names = (
        table.size_bytes[layer, col],
        collective_codes(table)[layer, col],
        table.group[layer, col],
    )
    members: dict[tuple[int, str | None], list[int]] = {}
    for c, key in enumerate(zip(col.tolist(), names.tolist(), strict=True)):
        members.setdefault(key, []).append(c)
    out = []
    for (j, name), idx in members.items():
        ix = np.array(idx, dtype=np.int64)
        out.append((j, name, ix, size[ix], kinds[ix]))
    return out


def _group_rows(table, j: int) -> list[tuple[str | None, np.ndarray | None]]:
    """(named group, row mask) of phase column j: the rows whose collective runs on that group
    (None: the phase's group of the mapping); the mask is None when every row uses the phase's
    group."""
    grp = table.group[:, j]
    named = grp != None  # noqa: E711 (element-wise)
    if not named.any():
        return [(None, None)]
    names = set(grp[named].tolist())
    out = [(name, grp == name) for name in names]
    if not named.all():
        out.append((None, ~named))
    return out


def phase_latency(instance: Instance, job: Job | None = None) -> np.ndarray:
    """Latency (ns) of every phase's collective on each dimension, shape (n_layers, 3, D): steps x
    per-step latency x ``instance.chunks`` (every chunk of a collective pays the steps' latency, as
    in ASTRA-sim); 0 for NONE and for zero-byte collectives (no collective is issued). Read-only;
    the last few results are kept (the time model and the evaluator of one solve ask for the
    same)."""
    job = job or instance.jobs[0]
    table = job.workload.table
    dims = instance.network.dims
    lat = tuple(d.latency_ns * instance.chunks for d in dims)
    # no dimension has latency (the common case): one shared array of zeros per shape
    if not any(lat):
        return _zeros(table.size_bytes.shape[0], len(dims))
    algos = tuple(d.collective_algorithm for d in dims)
    key = (lat, algos) + _placement_key(instance, job)
    # (kept, as phase_traffic's)
    return current().memo("phase_latency", (Same(table), key), lambda: read_only(
        _latency(instance, job, table, lat, algos)), KEPT, KEPT_ELEMENTS)


def _latency(instance: Instance, job: Job, table, lat: tuple[float, ...],
             algos: tuple[str, ...]) -> np.ndarray:
    dims = instance.network.dims
    alpha = np.array(lat)
    L = table.size_bytes.shape[0]
    classes = phase_classes(table)
    if not alpha.any():
        out = np.zeros((L, 3, len(dims)))
    elif classes is not None:  # per class of equal phases, as phase_traffic
        rep = np.empty((classes[0].size, len(dims)))
        for j, name, idx, size, kinds in _class_groups(table, classes):
            steps = step_rows(
                job.mapping.group(PHASES[j], name), algos, group_algorithm(instance, job, name)
            )
            rep[idx] = (steps * alpha)[kinds] * (size > 0)[:, None]
        out = rep[classes[1]].reshape(L, 3, len(dims))
    else:
        codes = collective_codes(table)
        out = np.empty((L, 3, len(dims)))
        for j, phase in enumerate(PHASES):
            for name, rows in _group_rows(table, j):
                steps = (
                    step_rows(
                        job.mapping.group(phase, name), algos, group_algorithm(instance, job, name)
                    )
                    * alpha
                )
                if rows is None:
                    np.multiply(
                        steps[codes[:, j]], (table.size_bytes[:, j] > 0)[:, None], out=out[:, j, :]
                    )
                else:
                    out[rows, j, :] = (
                        steps[codes[rows, j]] * (table.size_bytes[rows, j] > 0)[:, None]
                    )
    return out


def _zeros(L: int, D: int) -> np.ndarray:
    return current().memo("zeros", (L, D), lambda: read_only(np.zeros((L, 3, D))))


@dataclass(frozen=True)
class AggregatedTerms:
    """Distinct collective terms after exact aggregation (docs/explanation/solving.md).

    ``bytes[k, d]`` is the summed per-dimension traffic of all collectives whose traffic vectors are
    proportional to term k's; since ``max_d(a m_d t_d) = a max_d(m_d t_d)`` for a >= 0, ``sum_k
    max_d bytes[k, d] / bw[d]`` equals the sum over the original collectives exactly. ``count[k]``
    is how many collectives merged into term k.
    """

    bytes: np.ndarray  # (K, D)
    count: np.ndarray  # (K,)


def aggregate(traffic: np.ndarray) -> AggregatedTerms:
    """Merge collectives with proportional traffic vectors into one term each.

    Args:
        traffic: shape (n, D), bytes per collective and dimension; all-zero rows are dropped.

    Returns:
        :class:`AggregatedTerms` with K <= n distinct directions. Two rows merge when their
        max-normalised forms agree entry by entry to 12 significant digits (exactly proportional
        vectors differ only by floating-point rounding); the merged term keeps the first member's
        own direction.
    """
    traffic = np.asarray(traffic, dtype=float)
    D = traffic.shape[1] if traffic.ndim == 2 else 0
    keys: dict[tuple[str, ...], int] = {}
    directions: list[np.ndarray] = []
    weight: list[float] = []
    count: list[int] = []
    for row in traffic:
        peak = float(row.max()) if row.size else 0.0
        if peak <= 0:
            continue
        direction = row / peak
        key = tuple(f"{x:.12g}" for x in direction)
        k = keys.setdefault(key, len(directions))
        if k == len(directions):
            directions.append(direction)
            weight.append(0.0)
            count.append(0)
        weight[k] += peak
        count[k] += 1
    if not directions:
        return AggregatedTerms(bytes=np.zeros((0, D)), count=np.zeros(0, dtype=int))
    return AggregatedTerms(
        bytes=np.array(directions) * np.array(weight)[:, None], count=np.array(count)
    )
