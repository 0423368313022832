"""The joint search over training plans and networks: every candidate (plan, shape, placement) of a
:class:`~hieropt.workloads.llm.space.CodesignSpace` solved exactly for its bandwidths, or pruned by
a proven bound.

Flow: :func:`~hieropt.studies.codesign.candidates.enumerate_candidates` classifies the plans
(invalid, too big for the HBM, fitting) and orders the (plan, shape) pairs by their lower bound; the
candidates are made in that order as the search reaches them, and a candidate is **pruned** when its
bound is at least the best objective value found so far on its cluster size (the incumbent of its
size; a space has one size unless ``npus`` lists several), which only falls: once the bound
reached is at least the incumbent of every size that still has candidates, every later candidate
is pruned too (or infeasible by its time bound), and the search settles them at once. A pruned
candidate's optimum is >= its bound >= its size's incumbent, so it cannot beat its size's best:
the optimum, each size's best, and the ranking of every candidate better than the incumbents, are
those of solving everything (``prune=False``; the test suite checks this on small spaces). Keeping
one incumbent per size costs solves (on the shipped spaces of several sizes, 154 -> 286 for
``codesign-llama3-405b`` and 368 -> 653 for ``codesign-moe-1t``) and makes each size's row in the
per-size table that size's exact answer, not a candidate that merely lost to another size. The
per-dimension-count rows are not pruned per row (an incumbent per dimension count as well took
16,586 solves instead of 6,162 on ``codesign-gpt3-4096``): each says whether it is proven its
count's optimum, from the least bound of the count's pruned candidates
(:meth:`Codesign.by_dims`). The solves run
serially, in a process pool or on a Dask cluster (explore's executors, with at most 2 x workers
solves in flight so the incumbent prunes early), stream one row per candidate to a CSV / Parquet
file (explore's results sink, with the columns :data:`~hieropt.studies.codesign.rows.COLUMNS`) and
to the caller's ``on_row``, and resume from the file.

**Memory** does not grow with the number of candidates: rows are written and dropped (the result
keeps counts, the best rows and a summary per dimension count,
:class:`~hieropt.studies.codesign.rows.Tally`); what remains per candidate is the enumeration's 8
bytes per (plan, shape) pair (:mod:`.candidates`) and, when resuming, 8 bytes per row read back (a
64-bit hash of its id). The settled tail of a search without a results file or ``on_row`` is
counted, not made.
"""

from __future__ import annotations

import os
import time
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...cache import Cache, scoped
from ...errors import InputError
from ...io.common import validation_error
from ...model.run import RunFigures
from ...names import CODESIGN_OBJECTIVES
from ...spec.overrides import with_targets
from ...workloads.llm.space import CodesignSpace
from ..explore.executors import client_address, paused_gc, run_admitted
from ..explore.results import ResultSink, fingerprint, typed_row
from ..explore.run import SOLVED
from .budget import over_budget, refuse_below_every_shape
from .candidates import CodesignCandidate, CodesignEnumeration, enumerate_candidates
from .rows import (
    ADDED_COLUMNS,
    COLUMNS,
    KEEP_ROWS,
    OWN_COLUMNS,
    CodesignRow,
    Tally,
    UnsolvedRows,
    json_ranking,
    objective_unit,
    with_added_columns,
)
from .seen import Seen as _Seen
from .seen import no_plan as _no_plan
from .solve import issued_by_group_ns, solve_codesign_candidate

INFEASIBLE_BY_BOUND = "its time bound exceeds the time target"
"""The message of a candidate settled infeasible without a solve (time bound above the target)."""
NO_BANDWIDTH = (
    "infeasible: its time bound is infinite: the constraints {} leave no bandwidth for its "
    "communication"
)
"""The message of a candidate settled infeasible because the space's constraints (``{}``) allow no
bandwidth."""


@dataclass(frozen=True)
class Codesign:
    """The outcome of :func:`codesign`.

    Attributes:
        space: the space as searched; space_hash: its fingerprint (in every row).
        enumeration: plans (classified), shapes, and the candidates' order
            (:class:`CodesignEnumeration`).
        tally: what was kept of the rows (:class:`~hieropt.studies.codesign.rows.Tally`: status
            counts, the best solved rows, per dimension count); every row went to ``out`` and
            ``on_row``.
        backend: ``serial``, ``pool(n)`` or ``dask(address)``; seconds: wall time (enumeration
            included).
        solved, pruned, resumed: candidates this call solved, settled without a solve (pruned,
            or infeasible by the time bound; the JSON's ``settled_without_solve``), read back.
        out: the results file, or None.
        infeasible_by_bound: of ``pruned``, those settled infeasible (time bound above the target,
            or infinite; the shape's cheapest network over the budget).
        dims_floor: dimension count -> the least proven bound of its candidates settled as pruned
            (absent: none pruned); the count's row in :meth:`by_dims` is proven its optimum when
            this is at least the row's best.
        open_floor: the least proven lower bound (the objective's unit) of the candidates solved
            but not settled to the gap target (status ``limit``; inf: none), the best's among
            them; with the pruned candidates' bounds (each >= the best by construction) it bounds
            the search's optimum (:attr:`gap`).
    """

    space: CodesignSpace
    space_hash: str
    enumeration: CodesignEnumeration
    tally: Tally
    backend: str
    seconds: float
    solved: int
    pruned: int
    resumed: int
    out: Path | None = None
    infeasible_by_bound: int = 0
    dims_floor: dict[int, float] = field(default_factory=dict)
    open_floor: float = float("inf")

    @property
    def gap_target(self) -> float:
        """The relative gap each candidate is solved to (the objective's default,
        :func:`hieropt.solvers.objectives.solve`): 1e-7 for performance_per_cost and min_run_cost,
        else 1e-8."""
        from ...solvers.cutting import REL_GAP
        from ...solvers.procurement import PPC_GAP

        ratio = self.space.objective in ("performance_per_cost", "min_run_cost")
        return PPC_GAP if ratio else REL_GAP

    @property
    def gap(self) -> float | None:
        """The proven relative gap of the best over the whole search: (best value - the least
        lower bound of the best and of every candidate stopped at a solver limit) / best value,
        at least the best row's own gap (a pruned candidate's bound is >= its size's incumbent >=
        the best, so it never lowers the bound); None without a best. A gap above
        :attr:`gap_target` makes the answer a LIMIT (:attr:`status`), not a certified optimum."""
        b = self.best
        if b is None:
            return None
        v, own = b.objective_value, b.gap
        own = own if own == own else float("inf")  # (NaN: no proven gap)
        if (floor := min(self.open_floor, v)) == v:
            return own
        if not floor > float("-inf") or v <= 0:
            return float("inf")
        return max(own, (v - floor) / abs(v))

    @property
    def status(self) -> str | None:
        """``optimal`` (the best is proven within :attr:`gap_target` over the whole search),
        ``limit`` (a solver limit left a candidate whose bound is below the best by more: the
        best found, with its honest :attr:`gap`) or None (no candidate has an answer)."""
        g = self.gap
        if g is None:
            return None
        return "optimal" if g <= self.gap_target * (1 + 1e-9) else "limit"

    @property
    def statuses(self) -> dict[str, int]:
        """Status -> number of rows (this call's and the resumed ones)."""
        return dict(self.tally.statuses)

    @property
    def ranking(self) -> list[dict[str, Any]]:
        """The best solved rows (up to the ``keep`` of :func:`codesign`) best first with their
        ``rank`` (ties within the gap target share a rank)."""
        return self.tally.ranking()

    @property
    def best(self) -> CodesignRow | None:
        """The best candidate's row, typed (None when none was solved)."""
        r = self.ranking
        return CodesignRow.from_row(r[0]) if r else None

    def by_dims(self) -> list[dict[str, Any]]:
        """Per dimension count: the rows solved, the best (a row dictionary), the least scale-out
        GB/s per NPU and NICs among them, ``proven`` (True: the best is the count's optimum) and
        ``proven_bound`` (the count's optimum is at least this, in the objective's unit).

        Candidates are pruned against the best found overall (per cluster size), not per dimension
        count (that would take 2.7 x the solves on ``codesign-gpt3-4096``), so a count's best is
        only proven its optimum when none of its pruned candidates has a bound below it; else its
        optimum lies between its least pruned bound (``proven_bound``) and the best shown."""
        out = []
        for e in self.tally.by_dims():
            value = e["best"]["objective_value"]
            floor = self.dims_floor.get(e["n_dims"], float("inf"))
            out.append({**e, "proven": floor >= value, "proven_bound": min(floor, value)})
        return out

    def by_npus(self) -> list[dict[str, Any]]:
        """Per cluster size: the rows solved, the best (a row dictionary), the least scale-out GB/s
        per NPU and NICs: how many NPUs to buy, and what each size gives."""
        return self.tally.by_npus()

    def run(self, tokens: float | None = None) -> RunFigures | None:
        """The best candidate's buyer figures (:func:`~hieropt.studies.codesign.figures.row_run`:
        tokens/s, MFU, days and $ of a run of ``tokens`` tokens (None: the space's token budget),
        the caveats on the bandwidths its NPU cannot have); None without a best."""
        from .figures import row_run

        if self.best is None:
            return None
        return row_run(self.space, self.best.to_dict(),
                       tokens if tokens is not None else self.space.tokens)

    def to_dict(self, top: int = 20) -> dict[str, Any]:
        """JSON-ready: the counts (plans, shapes, candidates, statuses), the best row, the ``top``
        best rows and the ``top`` rows of the ranked table (``ranking``:
        :func:`~hieropt.studies.codesign.rows.json_ranking`), the per-dimension summary (lists
        and objects, never joined text), and the space searched (``space_definition``:
        :meth:`CodesignSpace.model_dump`, with the command's ``--tokens`` and sizes applied),
        from which ``hieropt report`` figures every row's tokens, FLOPs, MFU, days and $ without
        the space file. ``sizes_without_shape``: the cluster sizes skipped because no shape of
        the space holds them (``npus``, ``reason`` with its fix; empty when every size has
        one). ``status``, ``gap``, ``lower_bound``: the search's answer (:attr:`status`: optimal or
        limit, None without a best), its proven relative gap over the whole search (:attr:`gap`)
        and the least proven bound behind it (the objective's unit). ``run``: the best's buyer
        figures (:meth:`run`, the space's token budget) with their error band
        (:func:`hieropt.studies.run_band.run_dict`; None without a best), as ``hieropt codesign
        --json`` writes them."""
        from ..run_band import run_dict
        from .figures import row_calibration

        en = self.enumeration
        calibration = None if self.best is None else row_calibration(self.space,
                                                                      self.best.to_dict())
        run = run_dict(self.run(), calibration)
        return {
            "space": self.space.name,
            "space_hash": self.space_hash,
            "space_definition": self.space.model_dump(mode="json"),
            "objective": self.space.objective,
            "objective_unit": objective_unit(self.space),
            "npus": list(self.space.sizes),
            "plans": {
                "combinations": en.plans.combinations,
                "invalid": en.plans.invalid,
                "too_big": len(en.plans.too_big),
                "fitting": len(en.plans.fitting),
            },
            "shapes": len(en.shapes),
            "sizes_without_shape": [{"npus": n, "reason": why} for n, why in en.no_shape.items()],
            "candidates": en.count,
            "pairs": en.pairs,
            "skipped": en.skipped,
            "solved": self.solved,
            "pruned": self.pruned - self.infeasible_by_bound,
            "settled_without_solve": self.pruned,
            "resumed": self.resumed,
            "infeasible_by_bound": self.infeasible_by_bound,
            "statuses": self.statuses,
            "seconds": self.seconds,
            "backend": self.backend,
            "out": None if self.out is None else str(self.out),
            "status": self.status,
            "gap": self.gap,
            "lower_bound": None if self.best is None else min(
                self.open_floor, self.best.objective_bound or self.best.objective_value),
            "best": None if self.best is None else self.best.to_dict(),
            "run": run,
            "ranking": json_ranking(self.ranking, top),
            "by_dims": [{**e, "best": e["best"]["id"]} for e in self.by_dims()],
            "by_npus": [
                {**e, "best": e["best"]["id"], "best_value": e["best"]["objective_value"]}
                for e in self.by_npus()
            ],
        }


def codesign_fingerprint(space: CodesignSpace) -> str:
    """Short sha256 of the space and the rows' meaning
    (:func:`~hieropt.studies.explore.results.fingerprint`): a results file belongs to one."""
    return fingerprint(space.model_dump(mode="json"))


@scoped
def codesign(
    space: CodesignSpace | str | Path,
    objective: str | None = None,
    *,
    out: str | Path | None = None,
    workers: int | None = None,
    dask: Any = None,
    prune: bool | None = None,
    max_iteration_time_ns: float | None = None,
    max_network_cost_usd: float | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    keep: int = KEEP_ROWS,
    cache: Cache | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Codesign:
    """Search plans and networks jointly and rank the candidates by their proven optimum (module
    docstring).

    Args:
        space: a :class:`~hieropt.workloads.llm.space.CodesignSpace` or the path of a co-design
            space TOML file.
        objective: override the space's objective.
        out: results file (``.csv`` or ``.parquet``), streamed and resumed as in ``hieropt
            explore``.
        workers: local processes (default: CPU count; 1: this process).
        dask: a Dask scheduler address or client.
        prune: skip candidates whose bound cannot beat the incumbent of their cluster size
            (default: the space's ``prune``).
        max_iteration_time_ns, max_network_cost_usd: override the space's time target (ns) and
            budget ($).
        on_row: called in this process with every row (typed, :data:`COLUMNS`) as it is settled,
            resumed ones included; the search keeps none of them.
        keep: solved rows kept for the ranking (the best by objective value).
        cache: the memo tables this sweep shares between its solves (:class:`hieropt.cache.Cache`;
            default: a new one for this call, dropped after it); pool workers keep their own.
        progress: called in this process as ``progress(settled, total)`` after each candidate
            solved or settled by its bound (``total`` the space's candidates, read-back ones
            counted settled), and once with ``settled == total`` when the rest is settled by
            their bounds (the command line's progress bar).

    Returns:
        a :class:`Codesign`.

    Raises:
        InputError: bad space, overrides (an unknown objective, min_max_regret, min_cost without a
            time target, a target or budget that is not a finite number > 0) or results file.
            NoSolutionError (exit 3): no plan fits in memory ("no plan fits: the smallest needs X GB
            per NPU") or no plan is valid.
    """
    start = time.perf_counter()
    # (min_max_regret: refused by the space with why)
    if objective is not None and objective not in (*CODESIGN_OBJECTIVES, "min_max_regret"):
        raise InputError("objective", None, f"unknown objective {objective!r}",
                         f"use one of {', '.join(CODESIGN_OBJECTIVES)}")
    if not isinstance(space, CodesignSpace):
        from ...io.codesign import load_codesign

        space = load_codesign(space)
    space = with_targets(space, objective, max_iteration_time_ns, max_network_cost_usd)
    # validated again: the overrides' combination (e.g. min_max_regret) may not be a valid space
    try:
        space = CodesignSpace(**{**dict(space), **({} if prune is None else {"prune": prune})})
    except ValidationError as e:
        raise validation_error(e, space.name) from e
    if workers is not None and workers < 1:
        raise InputError("workers", None, f"{workers} workers", "give at least 1")
    if keep < 1:
        raise InputError("keep", None, f"{keep} rows", "keep at least 1")
    with paused_gc():
        enum = enumerate_candidates(space)
    _no_plan(space, enum)
    refuse_below_every_shape(space, enum, over := over_budget(space, enum))
    search = _Search(space, codesign_fingerprint(space), enum, keep, on_row, progress, over)
    sink = (
        ResultSink(Path(out), search.digest, COLUMNS, keep_previous=False, added=ADDED_COLUMNS)
        if out is not None
        else None
    )
    complete = False
    try:
        search.resume(sink)
        n = workers or os.cpu_count() or 1
        todo = enum.count - search.resumed
        backend = (
            f"dask({dask if isinstance(dask, str) else client_address(dask)})"
            if dask is not None
            else "serial"
            if n == 1 or todo <= 1
            else f"pool({min(n, todo)})"
        )
        # (not with worker processes: they would inherit the pause)
        with paused_gc(backend == "serial"):
            search.run(sink, 1 if backend == "serial" else min(n, todo), dask)
        complete = True
    finally:
        if sink is not None:
            sink.close(complete)
    return Codesign(
        space,
        search.digest,
        enum,
        search.tally,
        backend,
        time.perf_counter() - start,
        search.solved,
        search.pruned,
        search.resumed,
        Path(out) if out is not None else None,
        search.by_bound,
        search.floor,
        search.open_floor,
    )


class _Search:
    """One search's state: the incumbent, the tally, the rows' destinations."""

    def __init__(
        self, space: CodesignSpace, digest: str, enum: CodesignEnumeration, keep: int, on_row,
        progress: Callable[[int, int], None] | None = None, over: dict[str, str] | None = None,
    ):
        self.space, self.digest, self.enum, self.on_row = space, digest, enum, on_row
        # shape id -> why its cheapest network is over the budget (settled infeasible)
        self.over = over or {}
        self.progress = progress
        self.tally = Tally(space.objective, keep)
        self.best = float("inf")
        # cluster size -> its incumbent; size -> the position of its last pair
        self.best_of: dict[int, float] = {}
        # dimension count -> the least bound of its candidates settled as pruned
        self.floor: dict[int, float] = {}
        # the least bound of the rows stopped at a solver limit (Codesign.gap)
        self.open_floor = float("inf")
        self.ends = enum.size_ends()
        self.seen = _Seen(array("Q"))
        self.solved = self.pruned = self.resumed = self.by_bound = 0
        self.sink: ResultSink | None = None
        self.unsolved = UnsolvedRows(space, digest)
        # where the settled tail starts
        self.tail: tuple[int, list[CodesignCandidate]] | None = None
        self.no_bandwidth = NO_BANDWIDTH.format(", ".join(f"'{t}'" for t in space.constraints))
        self._bound_text: dict[float, str] = {}

    def resume(self, sink: ResultSink | None) -> None:
        """Read back the rows of an earlier run (counted, the best kept, their ids hashed)."""
        self.sink = sink
        if sink is None:
            return
        keys = array("Q")  # (8 bytes per row read back)
        for row in sink.read_previous():
            keys.append(_Seen.key(row["id"]))
            self._take(with_added_columns(row), write=False)
        self.resumed = len(keys)
        self.seen = _Seen(keys)

    def _take(self, row: dict[str, Any], write: bool = True) -> None:
        if row["status"] in SOLVED:
            value, n = row["objective_value"], row["npus"]
            self.best = min(self.best, value)
            self.best_of[n] = min(self.best_of.get(n, float("inf")), value)
            if row["status"] != "optimal":  # (a limit: its bound; none known: no bound at all)
                bound = row.get("objective_bound")
                bound = bound if bound is not None and bound == bound else float("-inf")
                self.open_floor = min(self.open_floor, bound)
        elif row["status"] == "pruned":
            d = row["n_dims"]
            self.floor[d] = min(self.floor.get(d, float("inf")), row["lower_bound"])
        self.tally.add(row)
        if write and self.sink is not None:
            self.sink.write(row)
        if self.on_row is not None:
            self.on_row(row)

    def infeasible(self, cand: CodesignCandidate) -> bool:
        """Its time bound is above the time target or infinite, or its shape's cheapest network
        above the budget (settled infeasible without a solve)."""
        target = self.space.max_iteration_time_ns
        return (cand.compute_ns == float("inf") or cand.lower_bound == float("inf")
                or (target is not None and cand.compute_ns > target)
                or cand.shape_id in self.over)

    def incumbent(self, cand: CodesignCandidate) -> float:
        """The best objective value found on the candidate's cluster size (inf: none yet)."""
        return self.best_of.get(cand.network.npus_total, float("inf"))

    def admit(self, cand: CodesignCandidate) -> bool:
        """Solve it: not infeasible by its bound, and (when pruning) its bound below its cluster
        size's incumbent."""
        return not self.infeasible(cand) and not (
            self.space.prune and cand.lower_bound >= self.incumbent(cand)
        )

    def settled_from(self, pos: int, bound: float) -> bool:
        """Whether every candidate from pair ``pos`` on is pruned (or infeasible by its bound):
        ``bound`` (the least bound from there on) is at least the incumbent of every cluster size
        that still has a candidate there."""
        return all(self.best_of.get(n, float("inf")) <= bound
                   for n, end in self.ends.items() if end >= pos)

    def candidates(self) -> Iterator[CodesignCandidate]:
        """The candidates not read back, best bound first, up to the first one from which every
        candidate is pruned by its size's incumbent or infeasible by its bound (``tail``)."""
        for pos in range(self.enum.pairs):
            cands = self.enum.pair_candidates(pos)
            for j, c in enumerate(cands):
                if (self.space.prune and not self.infeasible(c)
                        and self.settled_from(pos, c.lower_bound)):
                    self.tail = pos, cands[j:]
                    return
                if c.id not in self.seen:
                    yield c

    def _text(self, x: float) -> str:
        """``x`` as a row's message writes it (10 significant digits), kept per value."""
        t = self._bound_text.get(x)
        if t is None or not x:  # (0.0 and -0.0 are one key but two texts)
            t = self._bound_text[x] = f"{x:.10g}"
        return t

    def unsolved_row(self, cand: CodesignCandidate) -> dict[str, Any]:
        """The row of a candidate settled without a solve."""
        if self.infeasible(cand):
            target_ns = self.space.max_iteration_time_ns
            late = (
                target_ns is not None
                and cand.compute_ns > target_ns
                and cand.compute_ns < float("inf")
            )
            why = (INFEASIBLE_BY_BOUND if late else self.over.get(cand.shape_id)
                   or self.no_bandwidth)
            return self.unsolved.row(cand, "infeasible", why)
        of = f" of {cand.network.npus_total} NPUs" if len(self.space.sizes) > 1 else ""
        return self.unsolved.row(
            cand,
            "pruned",
            f"lower bound {self._text(cand.lower_bound)} >= incumbent"
            f"{of} {self._text(self.incumbent(cand))}",
        )

    def run(self, sink: ResultSink | None, workers: int, dask: Any) -> None:
        """Solve or settle every candidate not read back."""
        for cand, row in run_admitted(
            self.space, self.candidates(), workers, solve_codesign_candidate, self.admit, dask
        ):
            if row is None:
                row = self.unsolved_row(cand)
                self.pruned += 1
                self.by_bound += row["status"] == "infeasible"
            else:
                self.solved += 1
                row["space_hash"] = self.digest
                row = typed_row(row, COLUMNS)
            self._take(row)
            if self.progress is not None:
                self.progress(self.resumed + self.solved + self.pruned, self.enum.count)
        if self.tail is not None:
            self._settle_tail(*self.tail)
        if self.progress is not None:
            self.progress(self.enum.count, self.enum.count)

    def _settle_tail(self, pos: int, first: list[CodesignCandidate]) -> None:
        """Every candidate from ``first`` (the rest of pair ``pos``) on is pruned or infeasible by
        its bound: their rows are made when someone takes them (a results file, ``on_row``, rows
        read back), counted otherwise."""
        made = self.sink is not None or self.on_row is not None or self.resumed
        for cand in (
            first if not made else (c for cs in (first, self.enum.candidates(pos + 1)) for c in cs)
        ):
            if cand.id not in self.seen:
                row = self.unsolved_row(cand)
                self._take(row)
                self.pruned += 1
                self.by_bound += row["status"] == "infeasible"
        if made:
            return
        n, late, endless = self.enum.tail(pos + 1, self.space.max_iteration_time_ns)
        for d, b in self.enum.dims_floor(pos + 1, self.space.max_iteration_time_ns).items():
            self.floor[d] = min(self.floor.get(d, float("inf")), b)
        self.tally.count("infeasible", late, INFEASIBLE_BY_BOUND)
        self.tally.count("infeasible", endless, self.no_bandwidth)
        why = (f"lower bound >= incumbent {self.best:.10g}" if len(self.space.sizes) == 1
               else "lower bound >= the incumbent of its cluster size")
        self.tally.count("pruned", n - late - endless, why)
        self.pruned += n
        self.by_bound += late + endless


__all__ = [
    "codesign",
    "Codesign",
    "COLUMNS",
    "OWN_COLUMNS",
    "UnsolvedRows",
    "solve_codesign_candidate",
    "issued_by_group_ns",
    "codesign_fingerprint",
    "CodesignRow",
    "INFEASIBLE_BY_BOUND",
    "NO_BANDWIDTH",
]
