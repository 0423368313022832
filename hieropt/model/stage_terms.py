"""The terms of one pipelined workload's stages for the composition and the schedule graph of loop
``step`` (:mod:`hieropt.model.pipeline`): each stage entry's micro-batch slot, per-iteration tail,
overlapped last pass and, with ``overlap_gather``, gathered first forward
(:mod:`hieropt.model.gathers`), added to a :class:`~hieropt.model.terms.TermBuilder` in the form of
the :mod:`hieropt.model.timing` docstring."""

from __future__ import annotations

import numpy as np

from ..spec import Instance
from .gathers import gather_rows, gathered, only, without
from .loops import DimRefs, cross_backward, gather_forward
from .overlap import add_slot
from .terms import PhaseRefs, TermBuilder


class StageTerms:
    """The stage entries of one workload (rows ``rows[s]`` of its stacked phase table ``table``,
    collective references ``refs``, (L, 3, D) ``traffic`` bytes and ``latency`` ns, own-stream
    phases ``own`` or None, all-gathers after the optimizer step ``gathers`` (L,) or None), each
    method adding ``w`` x one part of stage entry ``s`` to the builder ``b``."""

    def __init__(self, b: TermBuilder, instance: Instance, table, refs: PhaseRefs,
                 traffic: np.ndarray, latency: np.ndarray, rows: list, own: np.ndarray | None,
                 gathers: np.ndarray | None):
        self.b, self.instance, self.table, self.refs = b, instance, table, refs
        self.traffic, self.latency, self.rows, self.own = traffic, latency, rows, own
        self.gathers = gathers
        self.hide = gathers is not None and gathered(instance)
        """Whether the all-gathers after the step hide behind the first forward."""

    def mask(self, s: int) -> np.ndarray | None:
        """Entry ``s``'s all-gathers after the optimizer step (bool per row), None for none."""
        return gather_rows(self.gathers, self.rows[s]).get("gathers")

    def sub(self, s: int) -> PhaseRefs:
        """Entry ``s``'s collective references."""
        r = self.rows[s]
        return PhaseRefs(k=self.refs.k[r], a=self.refs.a[r])

    def dims(self, s: int) -> DimRefs:
        """Entry ``s``'s per-dimension busy terms."""
        r = self.rows[s]
        return DimRefs(self.b, self.traffic[r], self.latency[r])

    def part(self, s: int, w: float, phases: tuple[float, float, float],
             compute: float) -> PhaseRefs:
        """Add w x (``compute`` ns + the phases' collectives weighted by ``phases``)."""
        sub = self.sub(s)
        self.b.constant += w * compute
        self.b.add_all(sub, w * np.array(phases))
        return sub

    def slot(self, s: int, w: float) -> None:
        """w x t_s, the micro-batch slot (with own-stream collectives: :mod:`.overlap`)."""
        r = self.rows[s]
        if self.own is not None and self.own[r].any():
            add_slot(self.b, self.table.compute_ns[r], self.sub(s), self.dims(s), self.own[r], w,
                     self.instance.collectives_in_flight == 1)
            return
        self.part(s, w, (1.0, 1.0, 0.0), float(self.table.compute_ns[r].sum()))

    def tail(self, s: int, w: float) -> None:
        """w x W_s: the optimizer step and the weight-gradient collectives (the all-gathers left
        out when they hide behind the first forward)."""
        self.b.constant += w * float(self.table.update_ns[self.rows[s]].sum())
        self.b.add_all(without(self.sub(s), self.mask(s) if self.hide else None),
                       np.array([0.0, 0.0, w]))

    def gathered_forward(self, s: int, w: float) -> int | None:
        """w x G_s, the first forward with the all-gathers on their own stream; its end node."""
        return gather_forward(self.b, self.table.compute_ns[self.rows[s]], self.sub(s), w,
                              self.instance, self.dims(s), self.mask(s))

    def first_forward(self, s: int) -> int | None:
        """G_s as a node of the schedule graph (weight 0)."""
        return self.gathered_forward(s, 0.0)

    def _exposed_gathers(self, s: int, sub: PhaseRefs, w: float) -> None:
        if self.mask(s) is not None and not self.hide:  # (after the optimizer step)
            self.b.add_all(only(sub, self.mask(s)), np.array([0.0, 0.0, w]))

    def last(self, s: int, w: float) -> None:
        """w x (f_s + X_s + U_s) (G_s for f_s when the gathers hide), the all-gathers after U."""
        r = self.rows[s]
        C = self.table.compute_ns[r]
        fwd = 0.0 if self.hide and self.mask(s) is not None else 1.0
        sub = self.part(s, w, (fwd, 0.0, 0.0),
                        float(fwd * C[:, 0].sum() + self.table.update_ns[r].sum()))
        if not fwd:
            self.gathered_forward(s, w)
        self._exposed_gathers(s, sub, w)
        cross_backward(self.b, C, without(sub, self.mask(s)), w, self.instance, self.dims(s))

    def first_slot(self, s: int, w: float) -> None:
        """w x (G_s + b_s): the slot whose forward is the gathered first forward."""
        if self.mask(s) is None:
            self.slot(s, w)
            return
        self.part(s, w, (0.0, 1.0, 0.0), float(self.table.compute_ns[self.rows[s]][:, 1:].sum()))
        self.gathered_forward(s, w)

    def last_pass(self, s: int, w: float) -> None:
        """w x (X_s + U_s), the overlapped backward and the optimizer step without the forward (the
        schedule graph's last operation), the all-gathers after U."""
        sub = self.sub(s)
        self.b.constant += w * float(self.table.update_ns[self.rows[s]].sum())
        self._exposed_gathers(s, sub, w)
        cross_backward(self.b, self.table.compute_ns[self.rows[s]], without(sub, self.mask(s)),
                       w, self.instance, self.dims(s))

    def durations(self, chunks: tuple) -> list:
        """Per entry, per model chunk ((const, terms) of its forward, of its backward): the graph's
        operations; ``chunks[s]``: entry s's chunks as rows of its own table
        (:func:`hieropt.model.pipeline.graph_chunks`)."""
        out = []
        for s in range(len(self.rows)):
            start, parts = self.rows[s].start, []
            for q in chunks[s]:
                r = slice(start + q.start, start + q.stop)
                sub, C = PhaseRefs(k=self.refs.k[r], a=self.refs.a[r]), self.table.compute_ns[r]
                parts.append(((float(C[:, 0].sum()), phase_terms(sub, 0)),
                              (float(C[:, 1:].sum()), phase_terms(sub, 1))))
            out.append(parts)
        return out


def phase_terms(refs: PhaseRefs, j: int) -> list[tuple[int, float]]:
    """The collective terms of phase column ``j`` summed over the layers: (term, coefficient)
    pairs."""
    sel = refs.k[:, j] >= 0
    if not sel.any():
        return []
    total = np.bincount(refs.k[sel, j], weights=refs.a[sel, j])
    return [(int(k), float(total[k])) for k in np.flatnonzero(total)]


__all__ = ["StageTerms", "phase_terms"]
