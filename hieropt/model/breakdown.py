"""The :class:`Breakdown` of the iteration time at one bandwidth vector: where the time goes
(compute, pipeline bubble and exposed communication, which add up to the iteration time; the
collective time each phase issues; each dimension's bytes, busy time and bottleneck time) and the
cost, as :func:`hieropt.model.timing.evaluate` finds it layer by layer.

The split of the iteration time T(B) (one decomposition, used by ``solve``, ``evaluate`` and
``codesign`` alike): with T_0 the iteration time with every collective taking no time (the same
schedule at infinite bandwidth),

- ``compute_ns``: the compute of the stage with the most compute per micro-batch over the
  iteration, m x (its forward and backward, recompute included) plus the optimizer step that ends
  the iteration (the first stage's under a composed pipeline; with stages not composed, each stage
  timed as if the pipeline were made of it, the stage with the largest T_0 and its own step);
  without a pipeline, T_0;
- ``bubble_ns``: T_0 - compute, the pipeline's fill and drain with free communication (a property
  of the plan, independent of the bandwidths; 0 without a pipeline; with equal stages Narayanan et
  al.'s (p - 1)/v micro-batch slots, arXiv 2104.04473, §2.2);
- ``communication_ns``: T - T_0, the exposed communication: what the network adds to the
  iteration, the collectives and pipeline sends on the critical path, those of the fill and drain
  included (so under a pipeline it can exceed what one stage issues).

``communication_by_phase_ns`` is the collective time the (slowest) stage issues per iteration, by
phase: under overlap loops part of it is hidden, under a pipeline the critical path also passes
other stages' collectives in the fill and drain; it is not a part of the sum."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..spec import PHASES, Instance
from .loops import loop_time

TIE_REL = 1e-6
"""Dimensions within this relative time of a collective's slowest dimension tie as its slowest
(:func:`tied_slowest`; ``hieropt compare`` names a design's bottleneck and its ties by the same
rule)."""


def _figure(name: str, doc: str) -> property:
    """A :class:`Breakdown` figure computed on first access (:meth:`Breakdown._details`)."""
    return property(lambda self: self._details()[name], doc=doc)


@dataclass(frozen=True, eq=False)
class Breakdown:
    """Where the iteration time goes at one bandwidth vector (all times ns, bytes per NPU, cost $).
    With several workloads, every figure is the weighted sum over them.

    The iteration time, the cost and the per-workload and per-stage times are computed when the
    breakdown is made (the independent check of every answer reads only those); the other figures
    (``compute_ns`` ... ``bottleneck_ns_per_dim``) on first access, from the same layer-by-layer
    evaluation (kept until then: a solve whose caller never reads them does not pay for them). Two
    breakdowns are equal when every figure is.

    Attributes:
        bw_gbps: (D,) the evaluated per-NPU bandwidths.
        iteration_time_ns: T(B).
        compute_ns: the compute on the critical path without the pipeline bubble (module
            docstring); ``compute_ns + bubble_ns`` is T with every collective taking no time.
        bubble_ns: the pipeline's fill and drain with free communication (0 without a pipeline).
        communication_ns: exposed communication, T - compute_ns - bubble_ns (the time the network
            adds; under a pipeline it includes the fill and drain's collectives).
        communication_by_phase_ns: collective time the slowest stage issues in the forward /
            input_grad / weight_grad phases (and ``p2p`` for the pipeline loop) per iteration; not
            parts of ``communication_ns`` (overlap loops hide part of it, a pipeline's fill and
            drain add other stages').
        bytes_per_dim: (D,) bytes each NPU sends on each dimension in one iteration.
        busy_ns_per_dim: (D,) time dimension d transmits (bytes/B plus latency) per iteration.
        utilisation_per_dim: (D,) busy time / iteration time.
        bottleneck_ns_per_dim: (D,) issued collective time during which d is the slowest
            dimension, per iteration: a collective whose dimensions work concurrently counts its
            time (its slowest dimension's) for that dimension, and for every dimension tied with
            it (within :data:`TIE_REL`, :func:`tied_slowest`); one whose dimensions work one after
            another (``sequential``) counts each dimension's own part for it. So every entry is at
            most ``busy_ns_per_dim``; without ties they add up to the issued collective time
            (``sum(communication_by_phase_ns.values())``), a tied collective counting once per
            tied dimension.
        cost_per_dim_usd: (D,) network cost of each dimension; ``network_cost_usd`` their sum.
        iteration_time_by_workload_ns: T of each workload (unweighted), by workload name, in the
            instance's order (a name that repeats gets `` (workload k)``, k its 0-based position).
        stage_times_ns: T of every pipeline stage of a workload of several
            (:attr:`~hieropt.spec.Workload.more_stages`), by stage name (``name#k`` for a name met
            before), empty otherwise: each the iteration time if every stage were that one. A
            workload's T is the slowest stage's, or, where the schedule composes its stages (the
            1F1B and interleaved pipelines), that composition, which charges fill and drain at
            each stage's own pace and can be below the largest of these. The split (compute,
            bubble, exposed communication) is of the workload's T; the issued and per-dimension
            figures (``communication_by_phase_ns`` ... ``bottleneck_ns_per_dim``) are the slowest
            stage's.
        violations: one text per design constraint or bound of the instance that ``bw_gbps``
            violates, then per limit its time and cost break (the time target
            ``max_iteration_time_ns``, the network budget ``max_network_cost_usd``, with the
            figures: :func:`hieropt.model.violations.design_notes`), empty when it meets them
            all: an allocation given to ``hieropt.evaluate`` is evaluated as given, and this says
            which of the instance's limits it breaks (what ``evaluate`` warns of).
    """

    bw_gbps: np.ndarray
    iteration_time_ns: float
    cost_per_dim_usd: np.ndarray
    network_cost_usd: float
    iteration_time_by_workload_ns: dict[str, float]
    stage_times_ns: dict[str, float] = field(default_factory=dict)
    violations: tuple[str, ...] = ()
    source: Any = field(default=None, repr=False)
    """What the other figures are computed from, until they are (then None): (T in ns, instance, a
    copy of bw, [(weight, slowest stage's run) per workload], executions per phase, point-to-point
    sends per iteration, the send's row), as :func:`hieropt.model.timing.evaluate` makes it (its own
    copies: a caller that changes its bandwidth array, or a ``dataclasses.replace`` of the
    breakdown, does not change them)."""
    computed: dict[str, Any] | None = field(default=None, repr=False)
    """The other figures, when given up front."""

    compute_ns = _figure(
        "compute_ns", "Compute on the critical path, the pipeline bubble excluded (ns)."
    )
    bubble_ns = _figure(
        "bubble_ns", "The pipeline's fill and drain with free communication (ns; 0 without one)."
    )
    communication_ns = _figure(
        "communication_ns", "Exposed communication, T - compute_ns - bubble_ns (ns)."
    )
    communication_by_phase_ns = _figure(
        "communication_by_phase_ns",
        "Collective time the slowest stage issues per phase (ns per iteration; not parts of T).",
    )
    bytes_per_dim = _figure(
        "bytes_per_dim", "(D,) bytes each NPU sends on each dimension in one iteration."
    )
    busy_ns_per_dim = _figure("busy_ns_per_dim", "(D,) time dimension d transmits (ns).")
    utilisation_per_dim = _figure("utilisation_per_dim", "(D,) busy time / iteration time.")
    bottleneck_ns_per_dim = _figure(
        "bottleneck_ns_per_dim",
        "(D,) issued collective time during which d is the slowest dimension, or tied as the "
        "slowest (ns per iteration; at most busy_ns_per_dim).",
    )

    def _details(self) -> dict[str, Any]:
        out = self.computed
        if out is None:
            src = self.source
            # (another thread computed them meanwhile, or the breakdown was built without either)
            if src is None:
                out = self.computed
                if out is None:
                    raise ValueError(
                        "a Breakdown needs its figures (computed=) or what they are computed from "
                        "(source=, as hieropt.model.timing.evaluate makes it)"
                    )
                return out
            out = detail_figures(*src)
            object.__setattr__(self, "computed", out)
            # (the layer-by-layer arrays are not needed past here)
            object.__setattr__(self, "source", None)
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Breakdown):
            return NotImplemented
        return all(_equal(getattr(self, k), getattr(other, k)) for k in _FIGURES)

    # (mutable arrays: unhashable, as the dataclass it was)
    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> dict[str, Any]:
        self._details()  # (a pickled breakdown carries its figures, not the evaluation's arrays)
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    @property
    def slowest_stage(self) -> str | None:
        """The name of the slowest pipeline stage (the first of equals; None with one stage per
        workload)."""
        if not self.stage_times_ns:
            return None
        return max(self.stage_times_ns.items(), key=lambda kv: kv[1])[0]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready breakdown (plain floats and lists; units in the keys): the ``breakdown`` of
        ``--json``."""
        return {
            "bw_gbps_per_dim": [float(x) for x in self.bw_gbps],
            "iteration_time_ns": self.iteration_time_ns,
            "compute_ns": self.compute_ns,
            "bubble_ns": self.bubble_ns,
            "communication_ns": self.communication_ns,
            "communication_by_phase_ns": self.communication_by_phase_ns,
            "bytes_per_dim": [float(x) for x in self.bytes_per_dim],
            "busy_ns_per_dim": [float(x) for x in self.busy_ns_per_dim],
            "utilisation_per_dim": [float(x) for x in self.utilisation_per_dim],
            "bottleneck_ns_per_dim": [float(x) for x in self.bottleneck_ns_per_dim],
            "cost_usd_per_dim": [float(x) for x in self.cost_per_dim_usd],
            "network_cost_usd": self.network_cost_usd,
            # (unweighted, in order)
            "iteration_time_by_workload_ns": dict(self.iteration_time_by_workload_ns),
            **({"stage_times_ns": dict(self.stage_times_ns), "slowest_stage": self.slowest_stage}
               if self.stage_times_ns else {}),
        }


_FIGURES = (
    "bw_gbps",
    "iteration_time_ns",
    "compute_ns",
    "bubble_ns",
    "communication_ns",
    "communication_by_phase_ns",
    "bytes_per_dim",
    "busy_ns_per_dim",
    "utilisation_per_dim",
    "bottleneck_ns_per_dim",
    "cost_per_dim_usd",
    "network_cost_usd",
    "iteration_time_by_workload_ns",
    "stage_times_ns",
)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(a == b)


@np.errstate(divide="ignore", over="ignore", invalid="ignore")
def detail_figures(
    total: float,
    instance: Instance,
    bw: np.ndarray,
    slowest: list,
    execs: np.ndarray,
    p2p_count: float,
    p2p: tuple[np.ndarray, np.ndarray] | None,
) -> dict[str, Any]:
    """The figures of a :class:`Breakdown` beyond T (``total``, ns) and the cost, from each
    workload's slowest stage's run (:func:`hieropt.model.timing.evaluate`; its ``T``, ``C``, ``U``,
    ``coll`` (L, 3), ``per_dim`` and ``traffic`` (L, 3, D), ``p2p_ns``, ``sums`` (L, 3) or None,
    and for a composed pipeline ``ideal_ns`` and ``compute_ns``): a dict of ``compute_ns`` ...
    ``bottleneck_ns_per_dim`` (the split of the module docstring; the formulas of
    :mod:`hieropt.model.timing`, T with free communication by the same loop formula)."""
    D = bw.size
    compute_total = ideal_total = 0.0
    by_phase = dict.fromkeys(PHASES, 0.0)
    bytes_per_dim, busy, bottleneck = np.zeros(D), np.zeros(D), np.zeros(D)
    for w, r in slowest:
        ideal, compute = free_times(instance, r)
        ideal_total += w * ideal
        compute_total += w * compute
        for p, v in zip(PHASES, (r.coll.sum(axis=0) * execs).tolist(), strict=True):
            by_phase[p] += w * v
        bytes_per_dim += w * stage_bytes(r.traffic, execs, p2p_count, p2p)
        if p2p is not None:
            p2p_dim_ns = np.where(p2p[0] > 0, p2p[0] / bw, 0.0) + p2p[1]
            busy += w * (np.einsum("ljd,j->d", r.per_dim, execs) + p2p_count * p2p_dim_ns)
        else:
            busy += w * np.einsum("ljd,j->d", r.per_dim, execs)
        bottleneck += w * bottleneck_times(r.coll, r.per_dim, getattr(r, "sums", None), execs)
        if p2p_count:
            by_phase["p2p"] = by_phase.get("p2p", 0.0) + w * p2p_count * r.p2p_ns
            bottleneck += tied_slowest(p2p_dim_ns) * (w * p2p_count * r.p2p_ns)
    return {
        "compute_ns": compute_total,
        "bubble_ns": ideal_total - compute_total,
        "communication_ns": total - ideal_total,
        "communication_by_phase_ns": by_phase,
        "bytes_per_dim": bytes_per_dim,
        "busy_ns_per_dim": busy,
        "utilisation_per_dim": busy / total if total > 0 else np.zeros(D),
        "bottleneck_ns_per_dim": bottleneck,
    }


def free_times(instance: Instance, r: Any) -> tuple[float, float]:
    """(T_0, compute) of one workload's run (ns; module docstring): T_0 the iteration time with
    every collective taking no time (a composed pipeline's ``r.ideal_ns``, else the loop formula
    of :func:`hieropt.model.loops.loop_time` on the run's compute ``r.C`` (L, 3) and optimizer step
    ``r.U``), compute the critical stage's compute without the bubble (a composed pipeline's
    ``r.compute_ns``; loop ``step``: m x the stage's compute + U; loop ``pipeline``: m x the
    stage's compute; other loops: T_0)."""
    ideal = getattr(r, "ideal_ns", None)
    if ideal is None:
        ideal = loop_time(instance.training_loop, r.C, np.zeros_like(r.coll), 0.0, instance,
                          np.zeros_like(r.per_dim), r.U)
    compute = getattr(r, "compute_ns", None)
    if compute is None:
        loop = instance.training_loop
        if loop == "step":
            compute = instance.step.microbatches * float(r.C.sum()) + r.U
        elif loop == "pipeline":
            compute = instance.pipeline.microbatches * float(r.C.sum())
        else:
            compute = ideal
    return float(ideal), float(compute)


def tied_slowest(times: np.ndarray) -> np.ndarray:
    """(..., D) bool: the dimensions within :data:`TIE_REL` of the slowest of ``times`` (..., D),
    ns, along the last axis: all of them are the slowest (at an optimum dimensions tie by design,
    and floating-point noise must not pick one); where every time is 0, the first dimension (the
    one ``argmax`` names)."""
    top = times.max(axis=-1, keepdims=True)
    tied = (times > 0) & (times >= top * (1 - TIE_REL))
    first = np.zeros_like(tied)
    if times.shape[-1]:
        np.put_along_axis(first, times.argmax(axis=-1)[..., None], True, axis=-1)
    return np.where(top > 0, tied, first)


def bottleneck_times(coll: np.ndarray, per_dim: np.ndarray, sums: np.ndarray | None,
                     execs: np.ndarray) -> np.ndarray:
    """(D,) ns per iteration during which each dimension is the slowest of the stage's collectives
    (``coll`` (L, 3) their times, ``per_dim`` (L, 3, D) each dimension's busy time, ``sums`` (L, 3)
    the collectives whose dimensions work one after another, or None; ``execs`` (3,) runs per
    iteration of each phase): a concurrent collective's time goes to its slowest dimension, and to
    each of the dimensions tied as its slowest (:func:`tied_slowest`, the rule ``hieropt compare``
    names a design's bottleneck by), a sequential one's to each dimension by its own part. Each
    entry is at most that dimension's busy time; without ties the entries add up to
    ``sum(coll x execs)``."""
    D = per_dim.shape[2]
    weights = coll * execs[None, :]
    if sums is not None and sums.any():
        weights = np.where(sums, 0.0, weights)
        own = np.einsum("ljd,lj,j->d", per_dim, sums.astype(float), execs)
    else:
        own = np.zeros(D)
    if not D:
        return own
    return own + np.einsum("ljd,lj->d", tied_slowest(per_dim).astype(float), weights)


def stage_bytes(traffic: np.ndarray, execs: np.ndarray, p2p_count: float,
           p2p: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """Bytes per dimension per iteration of a stage's collectives (and the pipeline loop's sends),
    (D,)."""
    out = np.einsum("ljd,j->d", traffic, execs)
    return out + p2p_count * p2p[0] if p2p is not None else out


__all__ = ["Breakdown", "TIE_REL", "bottleneck_times", "detail_figures", "free_times",
           "stage_bytes", "tied_slowest"]
