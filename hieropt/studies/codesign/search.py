"""The joint search over training plans and networks: every candidate (plan, shape, placement) of a
:class:`~hieropt.workloads.llm.space.CodesignSpace` solved exactly for its bandwidths, or pruned by
a proven bound.

Flow: :func:`~hieropt.studies.codesign.candidates.enumerate_candidates` classifies the plans
(invalid, too big for the HBM, fitting) and orders the (plan, shape) pairs by their lower bound; the
candidates are made in that order as the search reaches them, and a candidate is **pruned** when its
bound is at least the best objective value found so far on its cluster size (the incumbent of its
size; a space has one size unless ``npus`` lists several) and, with ``top`` k > 1, at least the k-th
least of the best values of the plans solved (so the first k plans of the ranking are the space's:
``--top 15`` on ``codesign-gpt3-calculon-a100`` solves 89 of its 271 candidates, 5.1 s, instead of
31, 2.1 s, and its ranks 10 - 15 are those of solving all 271, 14.6 s; a row past them says whether
its rank is exact, :attr:`Codesign.ranking`), which only falls: once the bound
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
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...cache import Cache, scoped
from ...errors import InputError
from ...io.common import validation_error
from ...names import CODESIGN_OBJECTIVES
from ...spec.overrides import with_targets
from ...workloads.llm.space import CodesignSpace
from ..explore.executors import client_address, paused_gc, run_admitted
from ..explore.results import ResultSink, fingerprint, typed_row
from ..explore.run import SOLVED
from .budget import over_budget, refuse_below_every_shape
from .candidates import CodesignCandidate, CodesignEnumeration, enumerate_candidates
from .result import Codesign
from .rows import (
    ADDED_COLUMNS,
    COLUMNS,
    KEEP_ROWS,
    OWN_COLUMNS,
    CodesignRow,
    Tally,
    UnsolvedRows,
    with_added_columns,
)
from .seen import Seen as _Seen
from .seen import no_plan as _no_plan
from .shown import ShownRows
from .solve import issued_by_group_ns, rows_reason, solve_codesign_candidate

INFEASIBLE_BY_BOUND = "its time bound exceeds the time target"
"""The message of a candidate settled infeasible without a solve (time bound above the target)."""
NO_BANDWIDTH = (
    "infeasible: its time bound is infinite: the constraints {} leave no bandwidth for its "
    "communication"
)
"""The message of a candidate settled infeasible by an infinite time bound when ``solve``'s reason
(:func:`~hieropt.studies.codesign.solve.rows_reason`) does not apply; ``{}``: the space's
constraints."""


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
    top: int = 1,
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
        top: the ranking's first ``top`` plans are exact: a candidate is pruned only when its
            bound is also at least the ``top``-th least of the plans' best values found (1: the
            best only, the fewest solves; the command's ``--top``). Every row of the ranking says
            whether its rank is exact (``rank_exact``, :attr:`Codesign.ranking`).
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
    if isinstance(top, bool) or not hasattr(top, "__index__") or top < 1:
        raise InputError("top", None, f"{top!r} plans", "give a whole number >= 1")
    top = int(top)
    with paused_gc():
        enum = enumerate_candidates(space)
    _no_plan(space, enum)
    refuse_below_every_shape(space, enum, over := over_budget(space, enum))
    search = _Search(space, codesign_fingerprint(space), enum, keep, on_row, progress, over,
                     top)
    sink = (
        ResultSink(Path(out), search.digest, COLUMNS, keep_previous=False, added=ADDED_COLUMNS,
                   upgrade=with_added_columns)
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
        dict(search.solved_statuses),
    )


class _Search:
    """One search's state: the incumbent, the tally, the rows' destinations."""

    def __init__(
        self, space: CodesignSpace, digest: str, enum: CodesignEnumeration, keep: int, on_row,
        progress: Callable[[int, int], None] | None = None, over: dict[str, str] | None = None,
        top: int = 1,
    ):
        self.space, self.digest, self.enum, self.on_row = space, digest, enum, on_row
        # shape id -> why its cheapest network is over the budget (settled infeasible)
        self.over = over or {}
        self.progress = progress
        self.tally = Tally(space.objective, keep)
        self.best = float("inf")
        # cluster size -> its incumbent; size -> the position of its last pair
        self.best_of: dict[int, float] = {}
        # a value the top-th row of the ranked table reaches at most (inf: not yet)
        self.top, self.shown = top, ShownRows(top, self.tally.tol)
        # dimension count -> the least bound of its candidates settled as pruned
        self.floor: dict[int, float] = {}
        # the least bound of the rows stopped at a solver limit (Codesign.gap)
        self.open_floor = float("inf")
        self.ends = enum.size_ends()
        self.seen = _Seen(array("Q"))
        self.solved = self.pruned = self.resumed = self.by_bound = 0
        self.solved_statuses: Counter[str] = Counter()
        self.sink: ResultSink | None = None
        self.unsolved = UnsolvedRows(space, digest)
        # where the settled tail starts
        self.tail: tuple[int, list[CodesignCandidate]] | None = None
        self._no_bandwidth = NO_BANDWIDTH.format(", ".join(f"'{t}'" for t in space.constraints))
        # dimension count -> why its candidates settled by an infinite time bound have no design
        self._why_endless: dict[int, str] = {}
        self._bound_text: dict[float, str] = {}

    def resume(self, sink: ResultSink | None) -> None:
        """Read back the rows of an earlier run (counted, the best kept, their ids hashed)."""
        self.sink = sink
        if sink is None:
            return
        keys = array("Q")  # (8 bytes per row read back)
        for row in sink.read_previous():
            keys.append(_Seen.key(row["id"]))
            self._take(row, write=False)
        self.resumed = len(keys)
        self.seen = _Seen(keys)

    def _take(self, row: dict[str, Any], write: bool = True) -> None:
        if row["status"] in SOLVED:
            value, n = row["objective_value"], row["npus"]
            self.best = min(self.best, value)
            self.best_of[n] = min(self.best_of.get(n, float("inf")), value)
            self.shown.add(row["plan"], value)
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

    @property
    def kth(self) -> float:
        """A value the ``top``-th row of the ranked table reaches at most (:class:`ShownRows`;
        inf: not yet known)."""
        return self.shown.kth

    def infeasible(self, cand: CodesignCandidate) -> bool:
        """Its time bound is above the time target or infinite, or its shape's cheapest network
        above the budget (settled infeasible without a solve)."""
        target = self.space.max_iteration_time_ns
        return (cand.compute_ns == float("inf") or cand.lower_bound == float("inf")
                or (target is not None and cand.compute_ns > target)
                or cand.shape_id in self.over)

    def incumbent(self, cand: CodesignCandidate) -> float:
        """The value a candidate's bound must reach to be pruned: the best objective value found
        on its cluster size (inf: none yet), or :attr:`kth` when larger (so that the first ``top``
        rows of the ranked table are exact)."""
        return self.threshold(cand.network.npus_total)

    def threshold(self, npus: int) -> float:
        """:meth:`incumbent` of a candidate on ``npus`` NPUs."""
        return max(self.best_of.get(npus, float("inf")), self.kth)

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
        return all(self.threshold(n) <= bound for n, end in self.ends.items() if end >= pos)

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

    def no_bandwidth(self, n_dims: int | None = None) -> str:
        """Why a candidate on ``n_dims`` dimensions (None: on any count of the space, when they
        all agree) settled by an infinite time bound has no design: as ``solve`` says it of its
        instance (:func:`rows_reason`: rows that cannot all hold, or no bandwidth where its traffic
        goes), else :data:`NO_BANDWIDTH`."""
        if n_dims is None:
            s = self.space
            counts = ((s.network.n_dims,) if s.network is not None
                      else range(s.min_dims, s.max_dims + 1))
            whys = {self.no_bandwidth(n) for n in counts}
            return whys.pop() if len(whys) == 1 else self._no_bandwidth
        why = self._why_endless.get(n_dims)
        if why is None:
            why = self._why_endless[n_dims] = (rows_reason(self.space, n_dims)
                                               or self._no_bandwidth)
        return why

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
                   or self.no_bandwidth(cand.network.n_dims))
            return self.unsolved.row(cand, "infeasible", why)
        n = cand.network.npus_total
        of = f" of {n} NPUs" if len(self.space.sizes) > 1 else ""
        t = self.incumbent(cand)
        what = (f"incumbent{of}" if t == self.best_of.get(n) else
                f"the {_nth(self.top)} shown row's value")
        return self.unsolved.row(
            cand, "pruned", f"lower bound {self._text(cand.lower_bound)} >= {what} {self._text(t)}")

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
                self.solved_statuses[row["status"]] += 1
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
        if endless:
            self.tally.count("infeasible", endless, self.no_bandwidth())
        why = (f"lower bound >= incumbent {self.best:.10g}" if len(self.space.sizes) == 1
               and self.kth <= self.best else
               f"lower bound >= the {_nth(self.top)} shown row's value {self.kth:.10g}"
               if len(self.space.sizes) == 1 else
               "lower bound >= the incumbent of its cluster size (or the "
               f"{_nth(self.top)} row's value)")
        self.tally.count("pruned", n - late - endless, why)
        self.pruned += n
        self.by_bound += late + endless


def _nth(k: int) -> str:
    """``k`` as an ordinal: 1st, 2nd, 3rd, 4th, 11th, 21st."""
    end = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{end}"


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
