"""Run ASTRA-sim 2.0 on hieropt's bundle and compare its iteration time with hieropt's prediction.

``simulate(instance, bw, binary)`` writes the bundle (:mod:`hieropt.io.astrasim_bundle`), runs the binary once per
workload (subprocess with a timeout), reads ``sys[i] finished, C cycles`` (1 cycle = 1 ns) and takes the slowest
NPU as the iteration time; several workloads combine with the instance's weights, as hieropt's objective does.
The prediction is hieropt's evaluator (:func:`hieropt.model.timing.evaluate`) on the instance in the mode that
matches the simulator run (:func:`matching_instance`): one collective in flight, and with one chunk per collective
sequential dimensions (ASTRA-sim then runs a collective's dimensions one after another). The instance's own model
(``predicted_own_ns``) is reported beside it: where the two differ is where the models differ by design.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, SolverError
from ..io.astrasim_bundle import Bundle, write_bundle
from ..model.timing import evaluate
from ..spec import Instance

RESULT = re.compile(r"sys\[(\d+)\] finished, (\d+) cycles")
DEFAULT_TIMEOUT_S = 600.0
TOLERANCE = 0.03
"""Relative agreement the CLI's exit code asks for (the whole-workload acceptance bound)."""
TIE = 1e-6
"""Predicted times closer than this (relative) are ties when rankings are compared."""


@dataclass(frozen=True)
class Simulated:
    """Predicted vs simulated iteration time at one allocation (ns).

    Attributes:
        bw_gbps: the allocation, GB/s per NPU per dimension.
        predicted_iteration_time_ns: hieropt's evaluator in the simulator's matching mode.
        predicted_own_ns: hieropt's evaluator with the instance's own modes (what ``solve`` optimises).
        simulated_iteration_time_ns: ASTRA-sim's slowest NPU (weighted over workloads).
        per_workload_ns: simulated time of each workload (unweighted).
        bundle: the bundle that was run.
    """

    bw_gbps: tuple[float, ...]
    predicted_iteration_time_ns: float
    predicted_own_ns: float
    simulated_iteration_time_ns: float
    per_workload_ns: tuple[float, ...]
    bundle: Bundle

    @property
    def ratio(self) -> float:
        """simulated / predicted."""
        return self.simulated_iteration_time_ns / self.predicted_iteration_time_ns

    @property
    def relative_error(self) -> float:
        """|simulated - predicted| / simulated."""
        return abs(self.simulated_iteration_time_ns - self.predicted_iteration_time_ns) / \
            self.simulated_iteration_time_ns


def check_binary(binary: str | Path | None) -> Path:
    """The simulator binary as a path; InputError (exit 2) when missing, not a file, or not executable."""
    if binary is None or str(binary) == "":
        raise InputError("--astra-sim", None, "no simulator binary given",
                         "pass --astra-sim PATH to AstraSim_Analytical_Congestion_Unaware (or set ASTRA_SIM)")
    p = Path(binary)
    if not p.exists():
        raise InputError("--astra-sim", str(p), "no such file", "give the path of the ASTRA-sim binary")
    if not p.is_file():
        raise InputError("--astra-sim", str(p), "is not a file", "give the path of the ASTRA-sim binary")
    if not os.access(p, os.X_OK):
        raise InputError("--astra-sim", str(p), "is not executable", f"chmod +x {p}")
    return p


def _last_message(out: str, err: str) -> str:
    """The simulator's last message: the last line on stderr, else on stdout (at most 300 characters)."""
    for text in (err, out):
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if lines:
            return lines[-1][:300]
    return "(no output)"


def run_bundle(bundle: Bundle, binary: str | Path, timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[float, ...]:
    """Simulate every workload of ``bundle``; returns each one's iteration time (slowest NPU, ns).

    Raises:
        InputError: the binary is missing or not executable (exit 2).
        SolverError: the run failed, timed out or printed no result (exit 3), with the simulator's last message.
    """
    binary = check_binary(binary)
    out = []
    for k, w in enumerate(bundle.workloads):
        args = bundle.simulator_args(binary, k)
        try:
            r = subprocess.run(args, capture_output=True, text=True, timeout=timeout_s, cwd=bundle.folder)
        except subprocess.TimeoutExpired as e:
            raise SolverError(f"ASTRA-sim did not finish workload {w.name!r} within {timeout_s:g} s") from e
        except OSError as e:
            raise SolverError(f"ASTRA-sim could not be started: {e}") from e
        if r.returncode != 0:
            how = f"signal {-r.returncode}" if r.returncode < 0 else f"exit {r.returncode}"
            raise SolverError(f"ASTRA-sim failed on workload {w.name!r} ({how}): "
                              f"{_last_message(r.stdout, r.stderr)}")
        cycles = [int(m.group(2)) for m in RESULT.finditer(r.stdout)]
        if not cycles:
            raise SolverError(f"ASTRA-sim printed no result for workload {w.name!r}: "
                              f"{_last_message(r.stdout, r.stderr)}")
        if len(cycles) != bundle.npus:
            raise SolverError(f"ASTRA-sim reported {len(cycles)} of {bundle.npus} NPUs for workload {w.name!r}: "
                              f"{_last_message(r.stdout, r.stderr)}")
        out.append(float(max(cycles)))
    return tuple(out)


def matching_instance(instance: Instance, chunks: int = 1) -> Instance:
    """The instance in the time-model mode a simulator run with ``chunks`` chunks per collective reproduces: one
    collective in flight (ASTRA-sim's single collective slot per NPU), latency paid per chunk, and the dimensions of
    a collective sequential with one chunk (exact) or concurrent with several (the simulator approaches it from
    above, by about (sequential - concurrent) / chunks)."""
    mode = "sequential" if chunks == 1 else "concurrent"
    return instance.model_copy(update={"dimension_mode": mode, "collectives_in_flight": 1, "chunks": chunks})


def simulate(instance: Instance, bw_gbps: Sequence[float], binary: str | Path, chunks: int = 1,
             folder: str | Path | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> Simulated:
    """Export ``instance`` at ``bw_gbps`` (GB/s per NPU), run ASTRA-sim, and compare with hieropt's prediction.

    Args:
        folder: where the bundle goes (default: a temporary folder, removed afterwards).

    Raises:
        InputError (exit 2) / SolverError (exit 3): see :func:`run_bundle` and
        :func:`hieropt.io.astrasim_bundle.write_bundle`.
    """
    check_binary(binary)
    bw = tuple(float(b) for b in bw_gbps)
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="hieropt-astrasim-") as tmp:
            return simulate(instance, bw, binary, chunks, tmp, timeout_s)
    predicted = float(evaluate(matching_instance(instance, chunks), list(bw)).iteration_time_ns)
    own = float(evaluate(instance, list(bw)).iteration_time_ns)
    bundle = write_bundle(instance, bw, folder, chunks)
    per = run_bundle(bundle, binary, timeout_s)
    total = float(sum(w.weight * t for w, t in zip(bundle.workloads, per, strict=True)))
    return Simulated(bw, predicted, own, total, per, bundle)


@dataclass(frozen=True)
class SimulationStudy:
    """Predicted vs simulated at several allocations (:func:`simulate_allocations`).

    Attributes:
        instance: the instance name.
        chunks: chunks per collective of the simulator runs.
        tolerance: the agreement asked for (relative, :data:`TOLERANCE`).
        rows: (name, label, :class:`Simulated`) per allocation, in the order run.
        notes: allocations that could not be made (e.g. an infeasible heuristic), one line each.
    """

    instance: str
    chunks: int
    tolerance: float
    rows: tuple[tuple[str, str, Simulated], ...]
    notes: tuple[str, ...] = ()

    @property
    def ranking_predicted(self) -> tuple[str, ...]:
        """Allocation names, fastest first, by hieropt's prediction (matching mode)."""
        return tuple(n for n, _, r in sorted(self.rows, key=lambda row: row[2].predicted_iteration_time_ns))

    @property
    def ranking_simulated(self) -> tuple[str, ...]:
        """Allocation names, fastest first, by the simulator."""
        return tuple(n for n, _, r in sorted(self.rows, key=lambda row: row[2].simulated_iteration_time_ns))

    @property
    def same_ranking(self) -> bool:
        """No two allocations ranked the other way round by the simulator; allocations whose predicted times are
        within :data:`TIE` of each other are ties (e.g. the same allocation twice) and may come in either order."""
        rows = [r for *_, r in self.rows]
        for a in rows:
            for b in rows:
                pa, pb = a.predicted_iteration_time_ns, b.predicted_iteration_time_ns
                if pa < pb * (1 - TIE) and not a.simulated_iteration_time_ns < b.simulated_iteration_time_ns:
                    return False
        return True

    @property
    def agree(self) -> bool:
        """Every allocation within the tolerance and the same ranking by both."""
        return all(r.relative_error <= self.tolerance for *_, r in self.rows) and self.same_ranking


def simulate_allocations(instance: Instance, binary: str | Path, bw_gbps: Sequence[float] | None = None,
                         chunks: int = 1, folder: str | Path | None = None,
                         timeout_s: float = DEFAULT_TIMEOUT_S) -> SimulationStudy:
    """Simulate ``bw_gbps`` (GB/s per NPU), or without it the instance's optimum (the solve of its own model), the
    equal split and the traffic-proportional split, each in its own bundle (``folder/<name>`` when given).

    Raises:
        InputError (exit 2): bad binary or bandwidths; SolverError (exit 3): no certified optimum, or a failed run.
    """
    from ..solvers.objectives import solve
    from .heuristics import equal_split, traffic_proportional

    check_binary(binary)
    if bw_gbps is not None:
        allocations = [("given", "--bw", list(bw_gbps))]
        notes: list[str] = []
    else:
        sol = solve(instance)
        if not sol.success:
            raise SolverError(f"no certified optimum to simulate ({sol.status.value}: {sol.message})")
        allocations = [("optimum", "optimum", list(sol.bw_gbps))]
        notes = []
        for h in (equal_split(instance), traffic_proportional(instance)):
            if h.feasible:
                allocations.append((h.name, h.label, list(h.bw)))
            else:
                notes.append(f"{h.label}: {h.message}")
    rows = []
    for name, label, bw in allocations:
        sub = None if folder is None else Path(folder) / name
        rows.append((name, label, simulate(instance, bw, binary, chunks, sub, timeout_s)))
    return SimulationStudy(instance.name, chunks, TOLERANCE, tuple(rows), tuple(notes))


__all__ = ["Simulated", "SimulationStudy", "simulate", "simulate_allocations", "run_bundle", "check_binary",
           "matching_instance", "TOLERANCE"]
