"""The Chakra traces of loop ``step`` (the composed LLM training step,
:class:`hieropt.spec.StepSchedule`): one trace per pipeline stage, in the order the stage runs its
micro-batches, with sends and receives between stages.

What a stage runs (the workload is one stage for one micro-batch,
:mod:`hieropt.workloads.llm.lower`):

- **Stage of each NPU.** Stage r's workload is the one named ``<model>-stage<r>`` among the
  workload's distinct stages (:attr:`hieropt.spec.Workload.stages`); a stage not among them runs the
  one of its role (first, middle, last) it equals — the generator lists the first of equal stages
  only. An NPU's stage comes from its coordinates along the ``pp`` group
  (:mod:`hieropt.io.astrasim_groups`).
- **Chunks.** With v virtual stages the stage holds v model chunks (chunk j of stage r is model
  chunk j p + r); a chunk ends at a layer with a forward point-to-point send and starts at one with
  an input-gradient send.
- **Order** (Narayanan et al. 2021 §2.2; Megatron-LM's schedules): 1F1B — min(p - r - 1, m) warm-up
  forwards, then one forward and one backward alternately, then the cool-down backwards; interleaved
  — 2 (p - r - 1) + (v - 1) N warm-up chunk forwards (at most m v), chunks in groups of N
  micro-batches (the last group the remainder; N = p unless ``microbatch_group`` says), forwards
  through chunks 0 .. v - 1 and backwards through v - 1 .. 0.
- **A forward** of model chunk c: receive its input from the stage of chunk c - 1 (none for c = 0),
  then per layer C_f and the forward collective on its group's simulator dimensions; the chunk's
  activation send (``P2P``) goes to the stage of chunk c + 1. **A backward**: receive the output
  gradient from the stage of chunk c + 1 (none for the last chunk), then per layer in reverse C_ig,
  the input-gradient collective (the gradient send to chunk c - 1's stage), C_wg.
- **The per-iteration tail**: the tied-embedding exchange's send (the first and the last stage send
  each other their embedding gradient), the weight-gradient collectives in backward layer order
  (gradient all-reduce or reduce-scatter), the exchange's receive, the optimizer step (``update_ns``
  of the stage's layers) as compute, then ZeRO's all-gathers of the updated parameters (the
  weight-gradient all-gathers, :mod:`hieropt.model.gathers`) in backward layer order. With
  ``overlap_gather`` (v = 1) these run instead at the trace's start on a stream of their own, in
  forward layer order, and the first micro-batch's forward of each layer waits for its own (the
  previous iteration's gathers, hidden behind this one's first forward). The send goes first and the
  receive last so that neither end waits for the other's tail (the last stage finishes its backward
  passes first), as hieropt counts one send per end. With ``overlap_dp`` each weight-gradient
  collective but the all-gathers starts after its layer's last C_wg, on a stream of its own in
  backward order (loop ``tp_dp_overlap_cross``), and the step after both streams; the stream starts
  after the stage's last input-gradient send, which the simulator would otherwise queue behind the
  collectives the last backward pass issued (whatever their dimension), holding the previous stage,
  which waits for it, by the stage's whole gradient reduction.

Every node of a stage waits for the one before it in that order (one stream): a receive blocks the
stage until its bytes arrive, a send blocks it for the transfer (ASTRA-sim's sends, measured: hops x
latency + bytes / link), as hieropt's slot time counts each stage's own sends. Sends and receives
name the peer's *stage* in the trace written here; :func:`hieropt.io.chakra.instantiate` turns it
into each NPU's absolute peer."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..model.gathers import gathered
from ..model.schedule_dag import stage_tasks
from ..spec import PHASES, Collective, Instance, Job, Workload
from .astrasim_groups import PIPELINE
from .astrasim_network import SimNetwork
from .astrasim_stages import chunks, send_bytes
from .astrasim_trace import COMM_NAME
from .chakra import EtNode

Deps = list[int]


def order(p: int, m: int, v: int, r: int, n: int | None = None) -> list[tuple[str, int, int]]:
    """Stage r's tasks ("F" / "B", micro-batch, chunk j) in the order it runs them (module
    docstring; :func:`hieropt.model.schedule_dag.stage_tasks`, the order the time model's graph
    runs); ``n``: the interleaved schedule's micro-batch group (default p)."""
    return [("B" if bwd else "F", i, j) for bwd, i, j in stage_tasks(p, m, v, r, n)]


class StageTrace:
    """The nodes of one stage's trace (module docstring); build with :func:`stage_trace`."""

    def __init__(
        self, instance: Instance, job: Job, simnet: SimNetwork, works: list[Workload], r: int
    ):
        self.inst, self.simnet, self.r = instance, simnet, r
        st = instance.step
        self.p, self.m, self.v = st.stages, st.microbatches, st.virtual_stages
        self.w = works[r]
        self.t = self.w.table
        self.names = (
            self.w.layers.names
            if hasattr(self.w.layers, "names")
            else [x.name for x in self.w.layers]
        )
        self.chunks = chunks(self.w, self.v)
        self.nodes: list[EtNode] = []
        self.sends = [
            send_bytes(w, self.v) for w in works
        ]  # (forward, backward) bytes per stage and chunk
        self.last_wg: dict[int, Deps] = {}
        self.last_send: Deps = []  # (the stage's last input-gradient send)
        self.tie: tuple[int, int] | None = None
        self.open: int | None = None  # the compute node further compute on the stream joins
        self.specs: dict[tuple[int, int], tuple | None] = {}
        self.C = self.t.compute_ns.tolist()
        # the all-gathers after the optimizer step (hieropt.model.gathers), and with
        # overlap_gather the gather each layer's first forward waits for
        self.gathers = {int(i) for i in np.flatnonzero(self.t.collective[:, 2] ==
                                                        Collective.ALL_GATHER)}
        self.hide = gathered(instance)
        self.ready: dict[tuple[int, int], Deps] = {}

    def add(self, node: EtNode, deps: Deps) -> Deps:
        """Append ``node`` waiting for the nodes ``deps`` (its id is its position); returns
        ``[its id]``, what the next node waits for. Compute after it starts a new node."""
        node.id, node.deps = len(self.nodes), list(deps)
        self.nodes.append(node)
        self.open = None
        return [node.id]

    def comp(self, ns: float, deps: Deps) -> Deps:
        """A compute node of ``ns`` (unnamed: a stage's trace is written once per NPU); compute
        right after compute on the stream is added to that node (one node, the same time)."""
        t = round(ns)
        if t <= 0:
            return deps
        if self.open is not None and deps == [self.open]:
            self.nodes[self.open].compute_ns += t
            return deps
        out = self.add(EtNode(0, "", "comp", compute_ns=t), deps)
        self.open = out[0]
        return out

    def spec(self, row: int, j: int) -> tuple | None:
        """(collective, bytes, group, involved_dim) of the collective of (row, phase j), None
        without one; kept per (row, phase): every micro-batch runs the same."""
        key = (row, j)
        if key not in self.specs:
            kind = Collective(self.t.collective[row, j])
            size = int(round(float(self.t.size_bytes[row, j])))
            group = self.t.group[row, j] or PHASES[j]
            out = None
            if kind is Collective.P2P and size > 0:
                out = (kind, size, group, ())
            elif kind is not Collective.NONE and size > 0:
                involved = self.simnet.involved_group(group)
                out = (kind, size, group, involved) if any(involved) else None
            self.specs[key] = out
        return self.specs[key]

    def coll(self, row: int, j: int, deps: Deps, tag: str) -> Deps:
        """The collective of layer row ``row``, phase ``j`` (0 forward, 1 input gradient, 2 weight
        gradient) after ``deps``: a collective node on its group's simulator dimensions, a
        point-to-point send by :meth:`p2p_row`, or nothing (``deps`` returned) without one.
        ``tag`` is the micro-batch's name suffix (``"@3"``; empty in the per-iteration tail).

        Raises:
            InputError: a send on a group other than ``pp`` (:meth:`p2p_row`).
        """
        spec = self.spec(row, j)
        if spec is None:
            return deps
        kind, size, group, involved = spec
        if kind is Collective.P2P:
            return self.p2p_row(row, j, size, group, deps, tag)
        return self.add(
            EtNode(
                0, "", "coll", comm_type=COMM_NAME[kind], comm_bytes=size, involved_dim=involved
            ),
            deps,
        )

    def p2p_row(self, row: int, j: int, size: int, group: str, deps: Deps, tag: str) -> Deps:
        """A point-to-point send of ``size`` bytes in layer row ``row``, phase ``j``: in the
        weight-gradient phase the tied-embedding exchange's send to the other end stage (recorded
        in ``tie`` for its receive); a chunk's activation or gradient send is written by
        :meth:`forward` / :meth:`backward`, which know the micro-batch, so ``deps`` is returned.

        Raises:
            InputError: ``group`` is not the pipeline group ``pp``.
        """
        if group != PIPELINE:
            raise InputError(
                "ASTRA-sim export",
                f"workload {self.w.name}",
                f"a point-to-point send on group "
                f"{group!r}: sends are written between pipeline stages only (group {PIPELINE!r})",
                f"put the workload's sends on group {PIPELINE!r}",
            )
        if (
            j == 2
        ):  # the tied-embedding exchange: its send here, its receive before the optimizer step
            other = self.p - 1 - self.r if self.r in (0, self.p - 1) else None
            if other is None or other == self.r:
                return deps
            self.tie = (other, size)
            return self.add(
                EtNode(0, "tie.send", "send", comm_bytes=size, peer=other, tag=self.tie_tag), deps
            )
        return deps  # (the chunk sends: written by the task, which knows the micro-batch)

    @property
    def tie_tag(self) -> int:
        """The message tag of the tied-embedding exchange: 2 m p v, above every chunk send's
        :meth:`tag`."""
        return 2 * self.m * self.p * self.v

    def model_chunk(self, j: int) -> int:
        """The model chunk j p + r of this stage's chunk ``j`` (module docstring, "Chunks")."""
        return j * self.p + self.r

    def stage_of_chunk(self, c: int) -> int:
        """The stage that holds model chunk ``c``: c mod p."""
        return c % self.p

    def tag(self, mb: int, c_to: int, backward: bool) -> int:
        """The message tag of micro-batch ``mb``'s send to model chunk ``c_to``, forward or
        ``backward``: 2 (mb p v + c_to) + backward, one tag per message, matched by send and
        receive."""
        return 2 * (mb * self.p * self.v + c_to) + int(backward)

    def forward(self, mb: int, j: int, deps: Deps) -> Deps:
        """Micro-batch ``mb``'s forward of this stage's chunk ``j`` after ``deps``: the receive of
        its input (not for model chunk 0), each layer's C_f and forward collective, the send of
        its activations (not for the last chunk); returns what the next task waits for."""
        c, last = self.model_chunk(j), self.p * self.v - 1
        tag = f"@{mb}"
        src = self.stage_of_chunk(c - 1)
        size = self.sends[src][0][(c - 1) // self.p] if c > 0 else 0
        if size > 0:
            deps = self.add(
                EtNode(
                    0,
                    f"recv.f{c}{tag}",
                    "recv",
                    comm_bytes=size,
                    peer=src,
                    tag=self.tag(mb, c, False),
                ),
                deps,
            )
        for k, op in enumerate(self.chunks[j]):
            if mb == 0 and (k, j) in self.ready:  # (its gather, with overlap_gather)
                deps = sorted(set(deps) | set(self.ready[(k, j)]))
            for row in op:
                deps = self.coll(row, 0, self.comp(self.C[row][0], deps), tag)
        size = self.sends[self.r][0][j]
        if c < last and size > 0:
            deps = self.add(
                EtNode(
                    0,
                    f"send.f{c + 1}{tag}",
                    "send",
                    comm_bytes=size,
                    peer=self.stage_of_chunk(c + 1),
                    tag=self.tag(mb, c + 1, False),
                ),
                deps,
            )
        return deps

    def backward(self, mb: int, j: int, deps: Deps) -> Deps:
        """Micro-batch ``mb``'s backward of this stage's chunk ``j`` after ``deps``: the receive of
        its output gradient (not for the last chunk), each layer in reverse C_ig, its
        input-gradient collective and C_wg (each layer's last C_wg kept for ``overlap_dp``), the
        send of its input gradient (not for model chunk 0); returns what the next task waits
        for."""
        c, last = self.model_chunk(j), self.p * self.v - 1
        tag = f"@{mb}"
        src = self.stage_of_chunk(c + 1)
        size = self.sends[src][1][(c + 1) // self.p] if c < last else 0
        if size > 0:
            deps = self.add(
                EtNode(
                    0,
                    f"recv.b{c}{tag}",
                    "recv",
                    comm_bytes=size,
                    peer=src,
                    tag=self.tag(mb, c, True),
                ),
                deps,
            )
        for op in reversed(self.chunks[j]):
            for row in reversed(op):
                deps = self.comp(self.C[row][1], deps)
                deps = self.coll(row, 1, deps, tag)
                deps = self.comp(self.C[row][2], deps)
                self.last_wg[row] = deps
                if self.inst.step.overlap_dp:
                    self.open = None  # (the gradient stream starts after this C_wg)
        size = self.sends[self.r][1][j]
        if c > 0 and size > 0:
            deps = self.add(
                EtNode(
                    0,
                    f"send.b{c - 1}{tag}",
                    "send",
                    comm_bytes=size,
                    peer=self.stage_of_chunk(c - 1),
                    tag=self.tag(mb, c - 1, True),
                ),
                deps,
            )
            self.last_send = deps
        return deps

    def build(self) -> list[EtNode]:
        """Every node of the stage's trace: its tasks in :func:`order`, then the per-iteration
        tail (module docstring): sends first, the weight-gradient collectives (on their own
        stream with ``overlap_dp``), the tied-embedding receive, the optimizer step, the all-gathers
        of the updated parameters (with ``overlap_gather``: first, on their own stream).

        Raises:
            InputError: a send on a group other than ``pp``.
        """
        deps: Deps = []
        if self.hide:  # (the gathers first, on their own stream, in forward order)
            stream: Deps = []
            for j, chunk in enumerate(self.chunks):
                for k, op in enumerate(chunk):
                    for row in (x for x in op if x in self.gathers):
                        stream = self.ready[(k, j)] = self.coll(row, 2, stream, "")
        for kind, mb, j in order(self.p, self.m, self.v, self.r, self.inst.step.group):
            deps = self.forward(mb, j, deps) if kind == "F" else self.backward(mb, j, deps)
        rows = [
            row for chunk in reversed(self.chunks) for op in reversed(chunk) for row in reversed(op)
        ]
        sends = self.t.collective[:, 2] == Collective.P2P
        after = [row for row in rows if row in self.gathers]
        rows = [row for row in rows if sends[row]] + [
            row for row in rows if not sends[row] and row not in self.gathers]
        if self.inst.step.overlap_dp:
            # (after the stage's last backward send: the simulator queues a send behind the
            # collectives issued before it, and the previous stage waits for that send)
            stream: Deps = list(self.last_send)
            for row in rows:
                stream = self.coll(row, 2, sorted(set(self.last_wg.get(row, [])) | set(stream)), "")
            deps = sorted(set(deps) | set(stream))
        else:
            for row in rows:
                deps = self.coll(row, 2, deps, "")
        if self.tie is not None:
            other, size = self.tie
            deps = self.add(
                EtNode(0, "tie.recv", "recv", comm_bytes=size, peer=other, tag=self.tie_tag), deps
            )
        deps = self.comp(float(self.t.update_ns.sum()), deps)
        if not self.hide:  # (the updated parameters' all-gathers: after the optimizer step)
            for row in after:
                deps = self.coll(row, 2, deps, "")
        return self.nodes


def stage_trace(
    instance: Instance, job: Job, simnet: SimNetwork, works: list[Workload], r: int
) -> list[EtNode]:
    """The trace of pipeline stage ``r`` of ``job`` (module docstring); sends and receives carry the
    peer's stage as ``peer``.

    Raises:
        InputError: see :func:`chunks`, or a point-to-point send on a group other than ``pp``.
    """
    return StageTrace(instance, job, simnet, works, r).build()


__all__ = ["order", "stage_trace", "StageTrace"]
