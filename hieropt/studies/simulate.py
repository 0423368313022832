"""Run ASTRA-sim 2.0 on hieropt's bundle and check the answer ``solve`` gave against it.

``simulate(instance, bw, binary)`` writes the bundle (:mod:`hieropt.io.astrasim_bundle`), runs the
binary once per workload (:mod:`hieropt.studies.simulator_run`: subprocess with a timeout; its
output read as bytes and decoded tolerantly), reads ``sys[i] finished, C cycles`` (1 cycle = 1 ns)
and takes the slowest NPU as the iteration time; several workloads combine with the instance's
weights, as hieropt's objective does.

The question asked is whether the answer ``solve`` optimised holds: so the simulator runs in the
instance's own dimension mode (:func:`simulator_chunks`: one chunk per collective for
``sequential``, where ASTRA-sim runs a collective's dimensions one after another; for ``concurrent``
enough chunks that the simulator, which approaches the concurrent time from above by about
(sequential - concurrent) / chunks, lands within the tolerance; one chunk where a group spans
simulator dimensions cut from one hieropt dimension, which several chunks would overlap, each at
that dimension's bandwidth: :func:`shared_group`), and the simulated time is compared
with the prediction of the instance's own model (``predicted_own_ns``, what ``solve`` optimised).
hieropt's evaluator in the simulator's exact mode (:func:`matching_instance`: one collective in
flight, latency paid per chunk) is reported beside it (``predicted_iteration_time_ns``); where the
simulator cannot run in the instance's mode (:func:`mode_mismatch`), the study says so and why.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cache import scoped
from ..errors import InputError, SolverError
from ..io.astrasim_bundle import Bundle, write_bundle
from ..io.astrasim_network import sim_network
from ..io.astrasim_trace import check_traceable
from ..model.timing import evaluate
from ..names import with_flag
from ..solvers.portfolio import hours_weighted
from ..spec import Instance
from .simulator_mode import (
    HIERARCHICAL,
    collective_mode,
    in_mode,
    shared_group,
    solved_mode,
    structure,
    unsimulated_group,
)
from .simulator_run import DEFAULT_TIMEOUT_S, check_binary, run_bundle, run_text

TOLERANCE = 0.03
"""Relative agreement the CLI's exit code asks for (the whole-workload acceptance bound)."""
TIE = 1e-6
"""Predicted times closer than this (relative) are ties when rankings are compared."""
MAX_CHUNKS = 256
"""The most chunks per collective :func:`simulator_chunks` asks of the simulator (its run time grows
with them)."""
CHUNK_MARGIN = 2.0
"""Safety factor on the chunk count of :func:`simulator_chunks`: the simulator's excess over the
concurrent time is about (sequential - concurrent) / chunks (measured, see docs/simulate.md); twice
the chunks that estimate needs."""


@dataclass(frozen=True)
class Simulated:
    """Predicted vs simulated iteration time at one allocation (ns).

    Attributes:
        bw_gbps: the allocation, GB/s per NPU per dimension.
        predicted_iteration_time_ns: hieropt's evaluator in the simulator's matching mode.
        predicted_own_ns: hieropt's evaluator with the instance's own modes (what ``solve``
            optimises).
        simulated_iteration_time_ns: ASTRA-sim's slowest NPU (weighted over workloads).
        per_workload_ns: simulated time of each workload (unweighted).
        bundle: the bundle that was run. Without a ``folder`` given to :func:`simulate` (or
            ``simulate_allocations``) it was written to a temporary folder, removed once the run
            ended: ``bundle.folder`` then names a folder that no longer exists (its files' names
            and sizes stay; give ``folder`` to keep the files).
    """

    bw_gbps: tuple[float, ...]
    predicted_iteration_time_ns: float
    predicted_own_ns: float
    simulated_iteration_time_ns: float
    per_workload_ns: tuple[float, ...]
    bundle: Bundle

    @property
    def ratio(self) -> float:
        """simulated / predicted (inf for a prediction of 0 ns)."""
        p = self.predicted_iteration_time_ns
        return self.simulated_iteration_time_ns / p if p > 0 else math.inf

    @property
    def relative_error(self) -> float:
        """|simulated - predicted| / simulated (the simulator's exact mode)."""
        return _relative(self.simulated_iteration_time_ns, self.predicted_iteration_time_ns)

    @property
    def own_ratio(self) -> float:
        """simulated / the instance's own prediction (what ``solve`` optimised; inf for a prediction
        of 0 ns)."""
        p = self.predicted_own_ns
        return self.simulated_iteration_time_ns / p if p > 0 else math.inf

    @property
    def own_error(self) -> float:
        """|simulated - own prediction| / simulated: the error of the answer ``solve`` gave."""
        return _relative(self.simulated_iteration_time_ns, self.predicted_own_ns)


def _relative(simulated: float, predicted: float) -> float:
    """|simulated - predicted| / simulated (both > 0: a run of 0 cycles is refused by
    :func:`run_bundle`)."""
    return abs(simulated - predicted) / simulated


def matching_instance(instance: Instance, chunks: int = 1) -> Instance:
    """The instance in the time-model mode a simulator run with ``chunks`` chunks per collective
    reproduces: one collective in flight (ASTRA-sim's single collective slot per NPU), latency paid
    per chunk, and the dimensions of a collective sequential with one chunk (exact) or concurrent
    with several (the simulator approaches it from above, by about (sequential - concurrent) /
    chunks), the instance's ``dimension_mode`` and every group's algorithm alike
    (:func:`in_mode`: a plan's ``collective_algorithms`` does not change how the simulator runs
    a collective)."""
    mode = "sequential" if chunks == 1 else "concurrent"
    return _one_in_flight(instance, mode, chunks)


def simulator_chunks(
    instance: Instance, bw_gbps: Sequence[float], tolerance: float = TOLERANCE
) -> int:
    """Chunks per collective for the simulator to run ``instance`` at ``bw_gbps`` (GB/s per NPU) in
    its own dimension mode: the instance's ``chunks`` for ``sequential`` (1 reproduces it exactly);
    for ``concurrent`` the smallest power of two c whose expected difference
    :func:`chunk_difference` is within ``tolerance``, else the one that minimises it; at least 2 and
    the instance's ``chunks``, at most :data:`MAX_CHUNKS`. Without latency this is the smallest c >=
    :data:`CHUNK_MARGIN` x (T_seq / T_conc - 1) / ``tolerance``; a latency paid per chunk stops the
    count where more chunks cost more latency than they save overlap. One chunk where a group's
    collectives span simulator dimensions cut from one hieropt dimension (:func:`shared_group`:
    more would overlap them, each at the dimension's bandwidth); the instance's ``chunks`` where no
    collective spans several hieropt dimensions (concurrent is then sequential)."""
    if collective_mode(instance) == "sequential":
        return instance.chunks
    shared, spans = structure(instance)
    if shared is not None or not spans:
        return 1 if shared is not None else instance.chunks
    bw = list(bw_gbps)
    first = max(2, 2 ** math.ceil(math.log2(max(instance.chunks, 1))))
    candidates = [c for c in (2**k for k in range(1, 9)) if first <= c <= MAX_CHUNKS] or [first]
    differences = {c: chunk_difference(instance, bw, c) for c in candidates}
    within = [c for c in candidates if differences[c] <= tolerance]
    best = within[0] if within else min(candidates, key=lambda c: (differences[c], c))
    return int(min(MAX_CHUNKS, max(best, instance.chunks)))


def chunk_difference(instance: Instance, bw_gbps: Sequence[float], chunks: int) -> float:
    """The expected relative difference between the simulator at ``chunks`` chunks per collective
    and the concurrent prediction at ``bw_gbps`` (GB/s per NPU), the sum of its two measured terms
    (docs/simulate.md): the overlap the chunks leave, :data:`CHUNK_MARGIN` x (T_seq / T_conc - 1) /
    c, falling with c, and the latency paid per chunk, T_conc(c) / T_conc(1) - 1, rising with c
    (T of hieropt's evaluator with one collective in flight; T_conc(c) pays each step's latency c
    times, as the simulator does)."""
    bw = list(bw_gbps)
    seq = float(evaluate(matching_instance(instance, 1), bw).iteration_time_ns)
    conc = float(evaluate(_one_in_flight(instance, "concurrent", 1), bw).iteration_time_ns)
    if not conc > 0:
        return 0.0
    chunked = float(evaluate(_one_in_flight(instance, "concurrent", chunks), bw).iteration_time_ns)
    return CHUNK_MARGIN * (seq / conc - 1) / chunks + (chunked / conc - 1)


def _one_in_flight(instance: Instance, mode: str, chunks: int) -> Instance:
    return in_mode(instance, mode).model_copy(
        update={"dimension_mode": mode, "collectives_in_flight": 1, "chunks": chunks}
    )


def mode_mismatch(
    instance: Instance, chunks: int, bw_gbps: Sequence[float] | None = None
) -> str | None:
    """Why a simulator run with ``chunks`` chunks per collective cannot reproduce the mode
    ``instance`` was optimised in, or None when it can: sequential dimensions need 1 chunk (several
    approach concurrent), concurrent dimensions several (1 runs them one after another), and at
    ``bw_gbps`` the instance's own model must not gain from several collectives in flight (ASTRA-sim
    runs one at a time) or from paying latency once per collective (ASTRA-sim pays it per chunk);
    no group may run a non-hierarchical algorithm over several dimensions
    (:func:`unsimulated_group`); and a group over simulator dimensions cut from one hieropt
    dimension (:func:`shared_group`) needs 1 chunk. Concurrent dimensions with 1 chunk are no
    mismatch when no collective spans several hieropt dimensions."""
    group = unsimulated_group(instance)
    if group is not None:
        return (
            f"group {group} spans several dimensions, and the simulator runs its collectives "
            "hierarchically (name it 'sequential' in the plan's collective_algorithms to compare)"
        )
    mode = collective_mode(instance)
    if mode is None:
        return ("the plan's groups run some collectives sequential and others concurrent over "
                "the dimensions, and the simulator runs every collective in one mode (name one "
                "mode for every group in the plan's collective_algorithms to compare)")
    shared, spans = structure(instance)
    if shared is not None and chunks > 1:
        return (
            f"group {shared}, and with {chunks} chunks per collective the simulator overlaps "
            "them, more bandwidth than the dimension has (run it with --chunks 1: one after "
            "another, each at its share, as hieropt prices the group on its one dimension)"
        )
    if mode == "sequential" and chunks > 1:
        return (
            f"the instance's dimensions are sequential, and with {chunks} chunks per "
            "collective the simulator "
            "overlaps them (run it with --chunks 1)"
        )
    if mode == "concurrent" and chunks == 1 and spans and shared is not None:
        return (
            "the instance's dimensions are concurrent, and with 1 chunk per collective the "
            f"simulator runs them one after another; but group {shared}, and only 1 chunk keeps "
            "them within the bandwidth the dimension has (more chunks overlap them)"
        )
    if mode == "concurrent" and chunks == 1 and spans:
        return (
            "the instance's dimensions are concurrent, and with 1 chunk per collective the "
            "simulator runs them one "
            "after another (run it with more chunks; the default picks enough)"
        )
    if bw_gbps is None:
        return None
    bw = list(bw_gbps)
    own = float(evaluate(instance, bw).iteration_time_ns)
    exact = float(evaluate(matching_instance(instance, chunks), bw).iteration_time_ns)
    if abs(exact - own) > TIE * own:
        return (
            "at this allocation hieropt's model in the simulator's mode (one collective in "
            "flight, latency paid "
            f"per chunk, {chunks} chunk{'s' if chunks != 1 else ''}) gives {exact / own:.6g} x "
            "the instance's own "
            "prediction: the simulator "
            "cannot run collectives concurrently or pay latency once per collective"
        )
    return None


def simulate(instance: Instance, bw_gbps: Sequence[float], binary: str | Path, chunks: int = 1,
             folder: str | Path | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
             source: str = "ASTRA-sim export", progress: bool = False,
             label: str = "") -> Simulated:
    """Export ``instance`` at ``bw_gbps`` (GB/s per NPU) with ``chunks`` chunks per collective, run
    ASTRA-sim, and give its time beside hieropt's predictions (the simulator's exact mode and the
    instance's own).

    Args:
        folder: where the bundle goes (default: a temporary folder, removed afterwards).
        source: what errors about the instance name (its file, e.g. ``"x.toml: ASTRA-sim export"``).
        progress, label: lines on stderr as the simulator runs, ``label`` saying what the
            allocation is (:func:`run_bundle`).

    Raises:
        InputError (exit 2) / SolverError (exit 3): see :func:`run_bundle` and
        :func:`hieropt.io.astrasim_bundle.write_bundle`.
    """
    binary = check_binary(binary)
    bw = tuple(float(b) for b in bw_gbps)
    instance, _ = hours_weighted(instance)  # (as solve: shares of hours -> weights)
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="hieropt-astrasim-") as tmp:
            return simulate(instance, bw, binary, chunks, tmp, timeout_s, source, progress,
                            label)
    predicted = float(evaluate(matching_instance(instance, chunks), list(bw)).iteration_time_ns)
    own = float(evaluate(instance, list(bw)).iteration_time_ns)
    bundle = write_bundle(instance, bw, folder, chunks, sim_network(instance, bw, source))
    per = run_bundle(bundle, binary, timeout_s, progress, label)
    total = float(sum(w.weight * t for w, t in zip(bundle.workloads, per, strict=True)))
    return Simulated(bw, predicted, own, total, per, bundle)


@dataclass(frozen=True)
class SimulationStudy:
    """The simulator against the answer ``solve`` optimised, at several allocations
    (:func:`simulate_allocations`).

    Attributes:
        instance: the instance name.
        chunks: chunks per collective of the simulator runs.
        tolerance: the agreement asked for between the simulator and the instance's own prediction
            (relative).
        rows: (name, label, :class:`Simulated`) per allocation, in the order run (``optimum`` first
            when run).
        notes: allocations that could not be made (e.g. an infeasible heuristic), one line each.
        mode: the instance's dimension mode (what ``solve`` optimised).
        mismatch: why the simulator cannot run in that mode (:func:`mode_mismatch`), or None.
        status, gap: the status (:class:`hieropt.result.Status` value) and proven relative gap of
            the solve that gave the optimum; None when no optimum was solved (a given allocation).
        solved: how the instance's collectives over several dimensions run in its own model, in
            words (:func:`solved_mode`: ``"concurrent dimensions"``, ``"tp nccl_ring"``); ''
            for ``mode`` + ``" dimensions"``.
    """

    instance: str
    chunks: int
    tolerance: float
    rows: tuple[tuple[str, str, Simulated], ...]
    notes: tuple[str, ...] = ()
    mode: str = "sequential"
    mismatch: str | None = None
    solved: str = ""
    status: str | None = None
    gap: float | None = None

    @property
    def solved_text(self) -> str:
        """:attr:`solved`, or ``mode`` + ``" dimensions"`` when not given."""
        return self.solved or f"{self.mode} dimensions"

    def to_dict(self) -> dict[str, Any]:
        """The study as JSON-ready data, the document ``hieropt simulate --json`` writes (times ns,
        bandwidths GB/s per NPU per dimension, errors relative); ``status`` and ``gap`` are the
        optimum's solve's, as ``solve --json`` writes them (null for a given allocation, and the
        gap null where it is not a finite number)."""
        gap = None if self.gap is None or not math.isfinite(self.gap) else float(self.gap)
        return {
            "instance": self.instance, "status": self.status, "gap": gap,
            "dimension_mode": self.mode, "chunks": self.chunks,
            "tolerance": self.tolerance, "agree": bool(self.agree), "verdict": self.verdict(),
            "optimum_fastest": self.optimum_fastest, "mode_mismatch": self.mismatch,
            "largest_relative_error": self.worst_error,
            "ranking_predicted": list(self.ranking_predicted),
            "ranking_simulated": list(self.ranking_simulated),
            "same_ranking": self.same_ranking, "notes": list(self.notes),
            "allocations": [{
                "name": name, "label": label, "bw_gbps": list(r.bw_gbps),
                "predicted_own_model_ns": r.predicted_own_ns,
                "simulated_iteration_time_ns": r.simulated_iteration_time_ns,
                "simulated_per_workload_ns": list(r.per_workload_ns),
                "ratio": r.own_ratio, "relative_error": r.own_error,
                "within_tolerance": bool(r.own_error <= self.tolerance),
                "predicted_iteration_time_ns": r.predicted_iteration_time_ns,
                "simulator_mode_relative_error": r.relative_error,
            } for name, label, r in self.rows],
        }

    def _predicted_key(self, row) -> tuple[float, bool]:
        """Sort key of ``row`` by its own prediction, a time within :data:`TIE` of the optimum's
        taken as the optimum's and the optimum first among those (the optimum is proven only to
        its gap: one that ties it is not faster)."""
        t = row[2].predicted_own_ns
        opt = next((r.predicted_own_ns for n, _, r in self.rows if n == "optimum"), None)
        if opt is not None and abs(t - opt) <= TIE * opt:
            t = opt
        return t, row[0] != "optimum"

    @property
    def ranking_predicted(self) -> tuple[str, ...]:
        """Allocation names, fastest first, by the instance's own prediction (what ``solve``
        optimised); an allocation within :data:`TIE` of the optimum comes after it."""
        return tuple(n for n, *_ in sorted(self.rows, key=self._predicted_key))

    def _predicted_text(self) -> str:
        """:attr:`ranking_predicted` as text, ``=`` between neighbours within :data:`TIE` of each
        other (``optimum = traffic < equal``), ``<`` elsewhere."""
        rows = sorted(self.rows, key=self._predicted_key)
        out = rows[0][0]
        for (_, _, a), (n, _, b) in zip(rows, rows[1:], strict=False):
            tie = b.predicted_own_ns - a.predicted_own_ns <= TIE * abs(a.predicted_own_ns)
            out += f" {'=' if tie else '<'} {n}"
        return out

    @property
    def ranking_simulated(self) -> tuple[str, ...]:
        """Allocation names, fastest first, by the simulator."""
        return tuple(
            n for n, _, r in sorted(self.rows, key=lambda row: row[2].simulated_iteration_time_ns)
        )

    @property
    def same_ranking(self) -> bool:
        """No two allocations ranked the other way round by the simulator than by the instance's own
        prediction; allocations predicted within :data:`TIE` of each other are ties and may come in
        either order."""
        rows = [r for *_, r in self.rows]
        return not any(a.predicted_own_ns < b.predicted_own_ns * (1 - TIE)
                       and not a.simulated_iteration_time_ns < b.simulated_iteration_time_ns
                       for a in rows for b in rows)

    @property
    def optimum_fastest(self) -> bool:
        """The optimum (when it was run) is the simulator's fastest allocation: no other allocation
        that the instance's own model predicts slower (beyond :data:`TIE`) simulates faster than
        it."""
        opt = next((r for n, _, r in self.rows if n == "optimum"), None)
        if opt is None:
            return True
        return not any(r.simulated_iteration_time_ns < opt.simulated_iteration_time_ns
                       and r.predicted_own_ns > opt.predicted_own_ns * (1 + TIE)
                       for n, _, r in self.rows if n != "optimum")

    @property
    def worst_error(self) -> float:
        """The largest |simulated - own prediction| / simulated over the allocations."""
        return max(r.own_error for *_, r in self.rows)

    @property
    def agree(self) -> bool:
        """The simulator confirms the answer: every allocation within the tolerance of the
        instance's own prediction and the optimum the simulator's fastest."""
        return self.worst_error <= self.tolerance and self.optimum_fastest

    def verdict(self) -> str:
        """Why the simulator does not confirm the answer, in one line ('' when it does)."""
        why = []
        if not self.optimum_fastest:
            why.append(
                f"the optimum is not the simulator's fastest allocation (simulated: "
                f"{' < '.join(self.ranking_simulated)}; predicted: "
                f"{self._predicted_text()})"
            )
        if self.worst_error > self.tolerance:
            why.append(
                f"simulated and predicted ({self.solved_text}, what solve optimised) "
                "differ by up to "
                f"{100 * self.worst_error:.3g} % of the simulated time (tolerance "
                f"{100 * self.tolerance:g} %)"
            )
        if why and self.mismatch:
            why.append(f"the simulator cannot run in the mode solved: {self.mismatch}")
        return "; ".join(why)


@scoped
def simulate_allocations(
    instance: Instance,
    binary: str | Path,
    bw_gbps: Sequence[float] | None = None,
    chunks: int | None = None,
    folder: str | Path | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    tolerance: float = TOLERANCE,
    source: str = "ASTRA-sim export",
    progress: bool = False,
) -> SimulationStudy:
    """Simulate ``bw_gbps`` (GB/s per NPU), or without it the instance's optimum (the solve of its
    own model), the equal split and the traffic-proportional split, each in its own bundle
    (``folder/<name>`` when given), in the instance's own dimension mode (``chunks`` default:
    :func:`simulator_chunks` at the first allocation). ``source``: what errors about the instance
    name (its file). ``progress``: a line on stderr as each simulator run starts (what runs, its
    NPUs, its trace's size) and one with its elapsed time when it ends, the elapsed time shown
    while it runs on a terminal (:func:`run_bundle`; the command line's ``simulate`` shows them).

    Raises:
        InputError (exit 2): bad binary, bandwidths or tolerance; SolverError (exit 3): no certified
            optimum, or a failed run.
    """
    from ..solvers.objectives import recommended_options, solve
    from .heuristics import equal_split, traffic_proportional

    instance, _ = hours_weighted(instance)  # (as solve: shares of hours -> weights)

    if not (math.isfinite(tolerance) and 0 < tolerance < 1):
        raise InputError(
            "tolerance", None, f"{tolerance:g} is not in (0, 1)", "give e.g. 0.03 for 3 %"
        )
    binary = check_binary(binary)
    check_traceable(instance, source)
    if bw_gbps is not None:
        allocations = [("given", with_flag("bw_gbps"), list(bw_gbps))]
        notes: list[str] = []
        status = gap = None
    else:
        # (the design hieropt solve recommends: its options)
        sol = solve(instance, options=recommended_options()).raise_for_status()
        if not sol.success:
            raise SolverError(
                f"no certified optimum to simulate ({sol.status.value}: {sol.message})"
            )
        allocations = [("optimum", "optimum", list(sol.bw_gbps))]
        notes = []
        status, gap = sol.status.value, sol.gap
        for h in (equal_split(instance), traffic_proportional(instance)):
            if h.feasible:
                allocations.append((h.name, h.label, list(h.bw)))
            else:
                notes.append(f"{h.label}: {h.message}")
    if chunks is None:
        chunks = simulator_chunks(instance, allocations[0][2], tolerance)
    mismatch = next(
        (m for m in (mode_mismatch(instance, chunks, bw) for *_, bw in allocations) if m), None
    )
    rows = []
    for i, (name, label, bw) in enumerate(allocations):
        sub = None if folder is None else Path(folder) / name
        what = (f"the {with_flag('bw_gbps')} allocation" if name == "given"
                else f"allocation {label}")
        if len(allocations) > 1:
            what += f" ({i + 1} of {len(allocations)})"
        rows.append((name, label, simulate(instance, bw, binary, chunks, sub, timeout_s, source,
                                           progress, what)))
    return SimulationStudy(
        instance.name,
        chunks,
        tolerance,
        tuple(rows),
        tuple(notes),
        collective_mode(instance) or "mixed",
        mismatch,
        solved_mode(instance),
        status,
        gap,
    )


__all__ = [
    "collective_mode",
    "Simulated",
    "SimulationStudy",
    "simulate",
    "simulate_allocations",
    "run_bundle",
    "run_text",
    "check_binary",
    "matching_instance",
    "in_mode",
    "solved_mode",
    "HIERARCHICAL",
    "mode_mismatch",
    "unsimulated_group",
    "shared_group",
    "simulator_chunks",
    "chunk_difference",
    "TOLERANCE",
    "MAX_CHUNKS",
]
