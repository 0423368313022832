"""Which network to build: enumerate every shape of a :class:`~hieropt.spec.space.ShapeSpace` and
solve each exactly.

Flow: :func:`enumerate_shapes` lists every valid shape (ordered factorisations of N into
``min_dims`` .. ``max_dims`` factors, each a dimension at some level with a building block the level
allows, levels never decreasing, sizes within the levels' ranges and limits); :func:`candidates`
attaches the parallel mapping (one candidate per shape under ``tp_lowest`` and ``header``, one per
placement under ``all_placements``) and removes exact duplicates (below); :func:`explore` solves
every remaining candidate with :func:`hieropt.solvers.objectives.solve` (the space's objective,
proven gap), in a process pool or on a Dask cluster, streams one row per candidate to a CSV /
Parquet file as results arrive, resumes from that file, and ranks the candidates by their proven
optimum.

**Duplicates pruned (exact).** Two candidates are duplicates when their optimisation problems are
the same after
(a) *merging* runs of adjacent dimensions the model cannot tell apart and (b) *relabelling*
    dimensions:

- A run of adjacent dimensions i..j merges into one when, in concurrent-dimension mode, all of them
  have the same unit price ($/GB/s per NPU), the same coefficient in every design constraint, no
  latency, and every collective's traffic restricted to the run is proportional to one common vector
  v (e.g. every collective spans all of them or none, as with identical adjacent levels fully inside
  the TP group or fully inside the DP group). Then for a fixed total beta = B_i + ... + B_j the
  split B ∝ v minimises every collective's time max_d(m_d / B_d) at once, giving (sum_d m_d) / beta,
  while cost and constraints see beta only; so the problem equals the one with a single dimension of
  traffic sum_d m_d. E.g. Ring 4 x Ring 2 and Ring 2 x Ring 4 (or FullyConnected 8) at one level,
  both all-reduced by DP, have the same optimum.
- Relabelling: permuting dimensions together with all their data (price, constraint coefficients,
  traffic and latency of every collective) does not change the problem; the canonical form sorts the
  (merged) dimensions.

The key of a candidate is its dimension count and its canonical form (numbers rounded to 10
significant digits, below the solver's 1e-8 gap). Candidates with the same key have the same optimal
objective value (all three objectives: time, cost and their product are unchanged); the first in
enumeration order is solved and the others are listed as its ``equivalent_ids``. The test suite
solves every pruned candidate and checks this.

**Scale-out figures** per candidate: the dimensions at the space's scale-out level (default: the top
level) carry the NIC traffic; ``scaleout_gbps_per_npu`` is their bandwidth per NPU, ``scaleout_usd``
their cost, ``nic_usd`` the NIC part of it (cost class NIC price x N x bandwidth), and ``nics`` =
whole NICs per NPU (or per node of ``nic_npus``) on every scale-out dimension
(:func:`hieropt.spec.space.nic_count`) when the space gives ``nic_gbps``: a derived figure from the
continuous optimum, not an integer provisioning (:func:`hieropt.provision` needs a parts catalog per
cost class; run it on the shapes you shortlist).
"""

from __future__ import annotations

import bisect
import itertools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...cache import Cache, scoped
from ...errors import InputError
from ...progress import ProgressBar
from ...solvers.cutting import REL_GAP
from ...solvers.procurement import PPC_GAP
from ...spec.overrides import with_targets
from ...spec.space import ShapeSpace
from .enumerate import Enumeration
from .executors import client_address, paused_gc, run_dask, run_pool, run_serial
from .keys import candidates
from .results import ResultSink, fingerprint, typed_row

__all__ = ["explore", "Exploration", "load_space", "space_fingerprint", "rank_rows", "SOLVED",
           "ROUND_OFF", "COMBINED"]

SOLVED = ("optimal", "limit")
"""Row statuses that carry an objective value (``limit``: the gap target was not reached)."""


def load_space(path: str | Path) -> ShapeSpace:
    """Read a shape-space TOML file (see :mod:`hieropt.io.space`; bandwidths GB/s per NPU, prices
    $ per GB/s per NPU, sizes in NPUs).

    Raises:
        InputError: a missing file or a bad key or value, naming the file, the field and the fix.
    """
    from ...io.space import load_space as _load

    return _load(path)


# ---------------------------------------------------------------------------------------- the sweep
@dataclass(frozen=True)
class Exploration:
    """The outcome of :func:`explore`.

    Attributes:
        space: the space as solved (objective overrides applied).
        space_hash: fingerprint of ``space`` written into every row (a resume checks it).
        enumeration: the candidates, their duplicates and the skipped shapes.
        rows: one row per candidate (see :data:`COLUMNS`), in enumeration order, this run's and
            resumed ones.
        solved_ids: candidates solved by this call, in completion order.
        resumed_ids: candidates read back from ``out`` and not solved again.
        backend: ``"serial"``, ``"pool(n)"`` or ``"dask(address)"``.
        seconds: wall time of the sweep (enumeration included).
        out: the results file, or None.
        cores: processes that solved (1 serial, n for a pool of n, the distinct Dask workers that
            returned rows).
    """

    space: ShapeSpace
    space_hash: str
    enumeration: Enumeration
    rows: tuple[dict[str, Any], ...]
    solved_ids: tuple[str, ...]
    resumed_ids: tuple[str, ...]
    backend: str
    seconds: float
    out: Path | None = None
    cores: int = 1
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self, top: int = 20) -> dict[str, Any]:
        """The sweep as JSON-ready data, the document ``hieropt explore --json`` writes (``top``:
        its ``--top``): space, counts, ``throughput``, the best ``top`` ranked rows, the
        per-dimension-count summary and the Pareto set (rows as in the results file, but
        ``bw_gbps`` a list of GB/s per NPU per dimension, not the file's ``;``-joined text). The
        command adds ``status``, ``message`` and ``exit_code`` when no shape has an answer."""
        from ..codesign.figures import row_bw

        def listed(row: dict[str, Any]) -> dict[str, Any]:
            return {**row, "bw_gbps": row_bw(row)} if "bw_gbps" in row else row

        en = self.enumeration
        return {
            "space": self.space.name, "space_hash": self.space_hash,
            "objective": self.space.objective, "shapes": en.shapes,
            "candidates": en.placements, "pruned": en.pruned, "solved": len(en.candidates),
            "failed": len(self.failed), "throughput": self.throughput,
            "ranking": [listed(r) for r in self.ranking[:top]],
            "by_dims": [dict(e) for e in self.by_dims()],
            "pareto": [listed(r) for r in self.pareto],
        }

    @property
    def ranking(self) -> list[dict[str, Any]]:
        """Rows with an objective value, best first, each with its ``rank``.

        Optima within the solver's gap target of each other (1e-8 relative; 1e-7 for
        performance_per_cost) are not told apart: they share a rank and are ordered as
        :func:`rank_rows` says (the lower performance_per_cost value, the other figure: network
        cost for performance, iteration time otherwise; then fewer dimensions and NICs, then id).
        """
        if "ranking" not in self._cache:
            self._cache["ranking"] = rank_rows(
                [r for r in self.rows if r["status"] in SOLVED], self.space.objective
            )
        return self._cache["ranking"]

    @property
    def throughput(self) -> dict[str, Any]:
        """How fast this call certified: ``certified`` (candidates solved now with status optimal,
        each re-checked by the independent evaluator), ``covered`` (those plus their pruned
        duplicates, whose optimum is the same), ``seconds`` (wall time of the sweep, enumeration
        included), ``cores`` and ``certified_per_s_per_core`` = certified / (seconds x cores)."""
        now = set(self.solved_ids)
        ok = [r for r in self.rows if r["shape_id"] in now and r["status"] == "optimal"]
        covered = sum(1 + (r["equivalents"] or 0) for r in ok)
        per = len(ok) / (self.seconds * self.cores) if self.seconds > 0 else None
        return {
            "certified": len(ok),
            "covered": covered,
            "seconds": self.seconds,
            "cores": self.cores,
            "backend": self.backend,
            "certified_per_s_per_core": per,
        }

    @property
    def failed(self) -> list[dict[str, Any]]:
        """Rows without a certified answer (infeasible, unbounded, error)."""
        return [r for r in self.rows if r["status"] not in SOLVED]

    @property
    def pareto(self) -> list[dict[str, Any]]:
        """Candidates on the (iteration time, network cost) Pareto front of their optima, fastest
        first.

        A candidate is dominated when another is cheaper and not slower; times within the gap target
        (1e-8) of each other count as equal (the optima are proven to that gap only), and so do
        costs: of equally fast candidates only the cheapest is on the front, and of ties in both the
        first in (time, cost, id) order.
        """
        ok = sorted((r for r in self.rows if r["status"] in SOLVED),
                    key=lambda r: (r["iteration_time_ns"], r["network_cost_usd"], r["shape_id"]))
        times = [r["iteration_time_ns"] for r in ok]
        prefix_min = list(itertools.accumulate((r["network_cost_usd"] for r in ok), min))
        front = []
        for i, r in enumerate(ok):
            j = bisect.bisect_right(times, r["iteration_time_ns"] * (1 + REL_GAP)) - 1
            cost = r["network_cost_usd"]
            cheaper = prefix_min[j] < cost * (1 - REL_GAP)  # a cheaper one, at most as slow
            # an earlier one as fast and as cheap
            tied = i > 0 and prefix_min[i - 1] <= cost * (1 + REL_GAP)
            if not (cheaper or tied):
                front.append(r)
        return front

    def by_dims(self) -> list[dict[str, Any]]:
        """Per dimension count: candidates (with duplicates), solved, the best one and its scale-out
        figures, and the least scale-out spend and NIC count among that count's solved
        candidates."""
        out = []
        ranking = self.ranking
        for D in range(self.space.min_dims, self.space.max_dims + 1):
            rows = [r for r in self.rows if r["n_dims"] == D]
            solved = [r for r in ranking if r["n_dims"] == D]
            entry: dict[str, Any] = {
                "n_dims": D,
                "candidates": sum(1 + (r["equivalents"] or 0) for r in rows),
                "solved": len(solved),
                "best": solved[0] if solved else None,
            }
            entry["min_scaleout_usd"] = min((r["scaleout_usd"] for r in solved), default=None)
            nics = [r["nics"] for r in solved if r["nics"] is not None]
            entry["min_nics"] = min(nics, default=None)
            out.append(entry)
        return out


ROUND_OFF = 1e-10
"""Relative difference below which two objective values count as equal when :func:`rank_rows`
orders the rows of one rank by their value: above the round-off of the evaluator's arithmetic
(about 1e-15: the same design summed in another order), below the gap targets (1e-8, 1e-7)."""

COMBINED = ("performance_per_cost", "min_run_cost")
"""Objectives whose value already weighs the iteration time against the cost (time x network $,
$ per run): within a rank the lower value is the better design by the buyer's own measure."""


def rank_rows(
    rows: list[dict[str, Any]], objective: str, key: str = "shape_id"
) -> list[dict[str, Any]]:
    """Rows with an objective value, best first, each with its ``rank``: optima within the solver's
    gap target of each other (1e-8; 1e-7 for performance_per_cost) share a rank. (Those optima are
    certified to the gap target only, so the rank does not tell them apart; the order within a rank
    is the design a buyer prefers, and the first of a plan's rows of one rank is the one a
    co-design table shows.) Within a rank, deterministically:

    1. with an objective that weighs time against cost (:data:`COMBINED`), the lower objective
       value first, even within the gap target (each value is its own design's, evaluated exactly;
       values within :data:`ROUND_OFF` count as equal);
    2. the other figure: the network cost with ``performance``, else the iteration time, values
       within the gap target (1e-8) counting as equal (equally fast designs cheapest first, as
       :data:`hieropt.solvers.procurement.FASTEST_SLACK`);
    3. the simpler network: fewer dimensions (``n_dims``), then fewer NICs (``nics``; a row
       without them after those with);
    4. ``key``.

    E.g. on ``codesign-llama3-405b`` at 8,192 NPUs with performance_per_cost, ``nvl:SW16
    spine:SW512`` (8,192 NICs, 1.666133858e18) comes before a 4-level network of 9,216 NICs
    (1.666133907e18, 1 ms faster, $13k dearer), both of rank 1."""
    tol = PPC_GAP if objective == "performance_per_cost" else REL_GAP
    second = "network_cost_usd" if objective == "performance" else "iteration_time_ns"
    out: list[dict[str, Any]] = []
    for i, tied in _tie_groups(
        sorted(rows, key=lambda r: (r["objective_value"], r[key])), "objective_value", tol
    ):
        firsts = (_tie_groups(tied, "objective_value", ROUND_OFF) if objective in COMBINED
                  else [(0, tied)])
        for _, same in firsts:
            for _, group in _tie_groups(
                sorted(same, key=lambda r: (r[second], r[key])), second, REL_GAP
            ):
                out += [{**r, "rank": i + 1} for r in sorted(group, key=lambda r: _simpler(r, key))]
    return out


def _simpler(row: dict[str, Any], key: str) -> tuple:
    """The order of :func:`rank_rows`'s step 3 and 4: fewer dimensions, fewer NICs, then ``key``
    (a row without ``n_dims`` or ``nics`` after those with)."""
    dims, nics = row.get("n_dims"), row.get("nics")
    return (dims is None, dims or 0, nics is None, nics or 0, row[key])


def _tie_groups(rows: list[dict[str, Any]], field: str, tol: float):
    """(start index, rows) of consecutive runs of ``rows`` (sorted by ``field``) within ``tol``
    (relative) of the run's first value."""
    i = 0
    while i < len(rows):
        lead = rows[i][field]
        j = i
        while j < len(rows) and rows[j][field] <= lead + tol * abs(lead):
            j += 1
        yield i, rows[i:j]
        i = j


def space_fingerprint(space: ShapeSpace) -> str:
    """Short sha256 of the space (objective and targets included) and the rows' meaning
    (:func:`~hieropt.studies.explore.results.fingerprint`): a results file belongs to one."""
    return fingerprint(space.model_dump(mode="json"))



@scoped
def explore(
    space: ShapeSpace | str | Path,
    objective: str | None = None,
    *,
    max_iteration_time_ns: float | None = None,
    max_network_cost_usd: float | None = None,
    out: str | Path | None = None,
    workers: int | None = None,
    dask: Any = None,
    prune: bool | None = None,
    progress: bool = False,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    cache: Cache | None = None,
) -> Exploration:
    """Enumerate every shape of ``space``, solve each candidate exactly and rank them by their
    proven optimum.

    Args:
        space: a :class:`~hieropt.spec.space.ShapeSpace` or the path of a space TOML file.
        objective, max_iteration_time_ns, max_network_cost_usd: override the space's (as
            :func:`hieropt.solve`).
        out: results file, ``.csv`` (or ``.parquet``, needs pyarrow): one row per candidate, written
            as results arrive; when it exists, its rows are kept and their candidates not solved
            again (resume).
        workers: processes of the local pool (default: CPU count); 1 solves in this process.
        dask: a Dask scheduler address (``"tcp://host:8786"``) or a ``distributed.Client``: the same
            tasks run on that cluster (``workers`` is then ignored); hieropt must be importable on
            its workers.
        prune: remove exact duplicates (default: the space's ``prune_symmetric``).
        progress: show a progress bar on stderr (rich).
        on_row: called in this process with every new row once it is written.
        cache: the memo tables this sweep shares between its solves (:class:`hieropt.cache.Cache`;
            default: a new one for this call, dropped after it); pool workers keep their own.

    Returns:
        An :class:`Exploration` (rows, ranking, Pareto set of (time, cost), per-dimension-count
        summary).

    Raises:
        InputError: bad space, overrides, results file (another space or version), Parquet without
            pyarrow, Dask not installed or not reachable.
    """
    start = time.perf_counter()
    if not isinstance(space, ShapeSpace):
        space = load_space(space)
    space = with_targets(space, objective, max_iteration_time_ns, max_network_cost_usd)
    if space.objective == "min_max_regret":
        raise InputError(
            "objective",
            None,
            "explore does not rank shapes by min_max_regret",
            "use performance, performance_per_cost or min_cost; solve a shortlisted shape's "
            "instance "
            "with the min_max_regret objective",
        )
    if space.objective == "min_run_cost":
        raise InputError(
            "objective",
            None,
            "explore does not rank shapes by min_run_cost (a shape space has no [cluster])",
            "use hieropt codesign with [cluster] and tokens in the space, or solve a "
            "shortlisted shape's instance with a [cluster] section",
        )
    if prune is not None and prune != space.prune_symmetric:
        space = space.model_copy(update={"prune_symmetric": prune})
    if workers is not None and workers < 1:
        raise InputError("workers", None, f"{workers} workers", "give at least 1")
    digest = space_fingerprint(space)
    with paused_gc():
        enum = candidates(space)
    sink = ResultSink(Path(out), digest) if out is not None else None
    done = {r["shape_id"]: r for r in (sink.previous if sink else [])}
    todo = [c for c in enum.candidates if c.id not in done]
    resumed = tuple(c.id for c in enum.candidates if c.id in done)
    n = workers or os.cpu_count() or 1
    if dask is not None:
        backend = f"dask({dask if isinstance(dask, str) else client_address(dask)})"
    else:
        backend = "serial" if n == 1 or len(todo) <= 1 else f"pool({min(n, len(todo))})"
    bar = ProgressBar(progress, f"explore {space.name} [{backend}]", len(todo))
    if dask is not None:
        results = run_dask(space, todo, dask, bar.start)
    elif backend == "serial":
        bar.start()
        results = run_serial(space, todo)
    else:
        results = run_pool(space, todo, min(n, len(todo)), bar.start)
    solved: list[str] = []
    complete = False
    # (not with worker processes: they would inherit the pause)
    with paused_gc(backend == "serial"):
        try:
            for row in results:
                row["space_hash"] = digest
                eq = enum.equivalents.get(row["shape_id"], ())
                row["equivalents"], row["equivalent_ids"] = len(eq), ";".join(eq)
                row = typed_row(row)
                done[row["shape_id"]] = row
                solved.append(row["shape_id"])
                if sink is not None:
                    sink.write(row)
                bar.advance()
                if on_row is not None:
                    on_row(row)
            complete = True
        finally:
            bar.stop()
            if sink is not None:
                sink.close(complete)
    rows = tuple(done[c.id] for c in enum.candidates if c.id in done)
    if dask is not None:
        cores = max(1, len({done[i]["worker"] for i in solved}))
    else:
        cores = 1 if backend == "serial" else min(n, len(todo))
    return Exploration(
        space,
        digest,
        enum,
        rows,
        tuple(solved),
        resumed,
        backend,
        time.perf_counter() - start,
        Path(out) if out is not None else None,
        cores,
    )
