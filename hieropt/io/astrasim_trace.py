"""The Chakra execution trace of one workload under hieropt's training loop (one graph, the same for
every NPU).

The dependencies implement the schedules of :mod:`hieropt.model.timing` (its module docstring has
the formulas); C are compute nodes, T collectives, f / ig / wg a layer's forward, input-gradient and
weight-gradient phases:

- forward (every loop): C_f(0) -> T_f(0) -> C_f(1) -> ... one chain.
- ``no_overlap``: then, layers in reverse, C_ig -> T_ig -> C_wg -> T_wg, one chain.
- ``recompute``: as ``no_overlap``, each layer's backward starting with its forward again (C_f ->
  T_f).
- ``tp_dp_overlap``: per layer in reverse, C_ig -> T_ig and C_ig -> C_wg -> T_wg; the next layer
  starts when both T_ig and T_wg are done.
- ``tp_dp_overlap_cross``: compute stream C_ig -> T_ig -> C_wg -> next layer's C_ig; T_wg(l) after
  C_wg(l) and after T_wg(l+1) (the gradient stream, in backward order).
- ``pipeline``: (m + p - 1) times [forward chain, p2p, backward chain C_ig -> T_ig -> C_wg, p2p],
  then every T_wg in one chain. The p2p transfer of ``p2p_bytes`` over dimension ``p2p_dim`` is
  written as a reduce-scatter of ``p2p_bytes * q / (q - 1)`` bytes on the (largest) simulator
  dimension of ``p2p_dim`` (q NPUs), which moves the same bytes per NPU at the same bandwidth
  (latency: one step with ``direct``, q - 1 with ``ring``), so that one trace serves every NPU.

Loop ``step`` (the composed LLM training step) has traces of its own, one per pipeline stage
(:mod:`hieropt.io.astrasim_step`). Collectives on named groups (``mapping.groups``) run on the
simulator dimensions of their group (:mod:`hieropt.io.astrasim_groups`). Under the other loops a
workload of several pipeline stages (``more_stages``) and point-to-point (``P2P``) collectives have
no trace: :func:`check_traceable` refuses them with one line.

Node ids follow the order above; among ready nodes the simulator issues the lowest id first, which
makes the order of collectives on its single collective slot (at most one collective in flight per
NPU) the backward order ig(l), wg(l), ig(l-1), ... . Compute is written as integer ns (rounded to
the nearest ns per node); zero-time compute, NONE and zero-byte collectives, and collectives whose
group spans no dimension are left out.
"""

from __future__ import annotations

import math

from ..errors import InputError
from ..spec import PHASES, Collective, Instance, Job
from .astrasim_network import SimNetwork
from .chakra import EtNode
from .instance import own_stream_flags

COMM_NAME = {Collective.ALL_REDUCE: "ALL_REDUCE", Collective.REDUCE_SCATTER: "REDUCE_SCATTER",
             Collective.ALL_GATHER: "ALL_GATHER", Collective.ALL_TO_ALL: "ALL_TO_ALL"}
"""hieropt collective -> Chakra ``CollectiveCommType`` name."""

Deps = list[int]


class _Graph:
    def __init__(self, simnet: SimNetwork):
        self.simnet = simnet
        self.nodes: list[EtNode] = []

    def comp(self, name: str, ns: float, deps: Deps) -> Deps:
        t = int(round(float(ns)))
        if t <= 0:
            return deps
        self.nodes.append(EtNode(len(self.nodes), name, "comp", deps=list(deps), compute_ns=t))
        return [len(self.nodes) - 1]

    def coll(
        self, name: str, kind: str, size: float, involved: tuple[bool, ...], deps: Deps
    ) -> Deps:
        n = int(round(float(size)))
        if n <= 0 or not any(involved):
            return deps
        self.nodes.append(
            EtNode(
                len(self.nodes),
                name,
                "coll",
                deps=list(deps),
                comm_type=kind,
                comm_bytes=n,
                involved_dim=involved,
            )
        )
        return [len(self.nodes) - 1]


class _Layers:
    """Per-layer compute and collective of each phase, in simulator terms."""

    def __init__(self, g: _Graph, job: Job):
        table = job.workload.table
        self.g = g
        self.C = table.compute_ns
        self.L = self.C.shape[0]
        self.names = [layer.name for layer in job.workload.layers]
        self.colls = []
        for lay in range(self.L):
            row = []
            for j, phase in enumerate(PHASES):
                kind = Collective(table.collective[lay, j])
                if kind is Collective.NONE:
                    row.append(None)
                    continue
                named = g.simnet.groups
                involved = g.simnet.involved_group(table.group[lay, j] or phase) if named else \
                    g.simnet.involved(job.mapping.group(phase, table.group[lay, j]), phase)
                row.append((COMM_NAME[kind], float(table.size_bytes[lay, j]), involved))
            self.colls.append(row)

    def c(self, lay: int, j: int, deps: Deps, tag: str = "") -> Deps:
        return self.g.comp(f"{self.names[lay]}.{PHASES[j]}{tag}.compute", self.C[lay, j], deps)

    def t(self, lay: int, j: int, deps: Deps, tag: str = "") -> Deps:
        c = self.colls[lay][j]
        if c is None:
            return deps
        return self.g.coll(
            f"{self.names[lay]}.{PHASES[j]}{tag}.{c[0].lower()}", c[0], c[1], c[2], deps
        )

    def forward(self, deps: Deps, tag: str = "") -> Deps:
        for lay in range(self.L):
            deps = self.t(lay, 0, self.c(lay, 0, deps, tag), tag)
        return deps


def _p2p(g: _Graph, instance: Instance, deps: Deps, name: str) -> Deps:
    pp = instance.pipeline
    s = g.simnet.p2p_dim(pp.p2p_dim)
    q = g.simnet.dims[s].npus
    involved = tuple(i == s for i in range(len(g.simnet.dims)))
    return g.coll(name, "REDUCE_SCATTER", pp.p2p_bytes * q / (q - 1), involved, deps)


def check_traceable(instance: Instance, source: str = "ASTRA-sim export") -> None:
    """Refuse what the trace writers cannot state: loop ``step`` with pipeline stages but no ``pp``
    group of that many NPUs, or with per-micro-batch collectives on their own stream
    (``step.overlap_groups``: the traces run every collective of a pass in its layer's place);
    under the other loops, a workload of several pipeline stages or with ``P2P`` collectives.

    Raises:
        InputError: naming the field and the fix (export the network file alone, or use loop
            ``step``).
    """
    if instance.training_loop == "step":
        if instance.step.overlap_groups:
            raise InputError(source, "step.overlap_groups",
                             "per-micro-batch collectives on their own stream are not written to "
                             "the traces (each runs in its layer's place)",
                             "export the plan with "
                             f"{own_stream_flags(instance.step.overlap_groups)} = false")
        p = instance.step.stages
        for job in instance.jobs:
            pp = job.mapping.groups.get("pp")
            if p > 1 and (pp is None or math.prod(pp) != p):
                raise InputError(source, "mapping.groups", f"{p} pipeline stages without a 'pp' "
                                 f"group of {p} NPUs: the NPUs of each stage are not known",
                                 f"name the pipeline group in mapping.groups.pp ({p} NPUs)")
        return
    alone = "export the network file alone (--astra-sim FILE.yml)"
    for job in instance.jobs:
        table = job.workload.table
        if job.workload.more_stages:
            raise InputError(source, f"workload {job.workload.name}",
                             f"{len(job.workload.stages)} distinct pipeline stages under loop "
                             f"'{instance.training_loop}' (its trace states one workload for every "
                             "NPU)",
                             f"{alone}, or use training_loop 'step' with [step] stages")
        if (table.collective == Collective.P2P).any():
            loop = instance.training_loop
            raise InputError(source, f"workload {job.workload.name}", "point-to-point (P2P) sends "
                             f"under loop '{loop}' (sends are written between the stages of loop "
                             "'step')", f"{alone}, or use training_loop 'step', or loop 'pipeline' "
                             "with [pipeline] p2p_bytes")


def job_trace(instance: Instance, job: Job, simnet: SimNetwork) -> list[EtNode]:
    """The nodes of ``job``'s iteration under ``instance.training_loop`` on ``simnet`` (see the
    module docstring).

    Returns:
        nodes with ids 0..n-1 in issue-priority order; the same list serves every NPU.

    Raises:
        InputError: what :func:`check_traceable` refuses.
    """
    check_traceable(instance, instance.name)
    if instance.training_loop == "step":
        raise ValueError("loop 'step' is traced per pipeline stage (astrasim_step.stage_trace)")
    g = _Graph(simnet)
    w = _Layers(g, job)
    loop = instance.training_loop
    back = range(w.L - 1, -1, -1)
    if loop == "pipeline":
        pp = instance.pipeline
        deps: Deps = []
        for slot in range(pp.microbatches + pp.stages - 1):
            tag = f"@{slot}"
            deps = _p2p(g, instance, w.forward(deps, tag), f"p2p.forward{tag}")
            for lay in back:
                deps = w.c(lay, 2, w.t(lay, 1, w.c(lay, 1, deps, tag), tag), tag)
            deps = _p2p(g, instance, deps, f"p2p.backward{tag}")
        for lay in back:
            deps = w.t(lay, 2, deps)
        return g.nodes
    deps = w.forward([])
    if loop in ("no_overlap", "recompute"):
        for lay in back:
            if loop == "recompute":
                deps = w.t(lay, 0, w.c(lay, 0, deps, "@re"), "@re")
            deps = w.t(lay, 2, w.c(lay, 2, w.t(lay, 1, w.c(lay, 1, deps))))
    elif loop == "tp_dp_overlap":
        for lay in back:
            start = w.c(lay, 1, deps)
            ig = w.t(lay, 1, start)
            wg = w.t(lay, 2, w.c(lay, 2, start))
            deps = sorted(set(ig) | set(wg))
    elif loop == "tp_dp_overlap_cross":
        stream: Deps = []
        for lay in back:
            deps = w.c(lay, 2, w.t(lay, 1, w.c(lay, 1, deps)))
            before = len(g.nodes)
            wg = w.t(lay, 2, sorted(set(deps) | set(stream)))
            if len(g.nodes) > before:
                stream = wg
    else:
        raise ValueError(f"unknown training loop {loop!r}")
    return g.nodes


__all__ = ["job_trace", "check_traceable", "COMM_NAME"]
