"""The outcome of a co-design search (:func:`~hieropt.studies.codesign.search.codesign`): the
counts, the kept rows and their ranking with whether each rank is the space's, the proven gap of the
best, the summaries per dimension count and cluster size, and the JSON the command writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...model.run import RunFigures
from ...workloads.llm.space import CodesignSpace
from .candidates import CodesignEnumeration
from .rows import CodesignRow, Tally, json_ranking, objective_unit


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
        solved, settled, resumed: candidates this call solved, settled without a solve (pruned
            by their bound, or infeasible by it; the JSON's ``settled_without_solve``), read back;
            :attr:`pruned` and :meth:`counts` split them.
        out: the results file, or None.
        infeasible_by_bound: of ``settled``, those settled infeasible (time bound above the
            target, or infinite; the shape's cheapest network over the budget).
        solved_statuses: status -> how many of the ``solved`` came out with it (``optimal``,
            ``limit``, ``infeasible``, ...).
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
    settled: int
    resumed: int
    out: Path | None = None
    infeasible_by_bound: int = 0
    dims_floor: dict[int, float] = field(default_factory=dict)
    open_floor: float = float("inf")
    solved_statuses: dict[str, int] = field(default_factory=dict)

    @property
    def pruned(self) -> int:
        """Candidates settled without a solve because their proven bound is at least their
        incumbent (:func:`codesign`'s ``top``): ``settled`` less ``infeasible_by_bound``."""
        return self.settled - self.infeasible_by_bound

    def counts(self) -> dict[str, Any]:
        """How this call settled the candidates, the one tally the command prints and the JSON
        writes: ``solved`` (solves run) with ``solved_statuses`` (status -> count: a solve can
        prove a candidate ``infeasible``), ``settled_without_solve`` = ``infeasible_by_bound``
        (time bound above the target or infinite, or the shape's cheapest network over the
        budget) + ``pruned`` (bound >= incumbent), and ``resumed`` (rows read back);
        ``solved + settled_without_solve + resumed`` is every candidate."""
        return {"solved": self.solved, "solved_statuses": dict(self.solved_statuses),
                "settled_without_solve": self.settled,
                "infeasible_by_bound": self.infeasible_by_bound, "pruned": self.pruned,
                "resumed": self.resumed}

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
    def unsolved_bound(self) -> float:
        """The least proven lower bound of a candidate settled as pruned (the objective's unit;
        inf: none pruned): no candidate that was not solved is better than it."""
        return min(self.dims_floor.values(), default=float("inf"))

    @property
    def ranking(self) -> list[dict[str, Any]]:
        """The best solved rows (up to the ``keep`` of :func:`codesign`) best first with their
        ``rank`` (ties within the gap target share a rank) and ``rank_exact``: True when the
        rank is the space's (the row's value is at most :attr:`unsolved_bound`, so every
        candidate that could rank ahead of it was solved), False when it is its rank among the
        solved candidates only (its rank in the space is at least that). The first ``top`` plans
        of :func:`codesign` are exact."""
        floor = self.unsolved_bound
        return [{**r, "rank_exact": r["objective_value"] <= floor} for r in self.tally.ranking()]

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
        --json`` writes them. ``unsolved_bound``: :attr:`unsolved_bound` (None: no candidate
        pruned); each ranking row's ``rank_exact`` (:attr:`ranking`)."""
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
                "too_big_plans": en.plans.too_big_plans(),
            },
            "shapes": len(en.shapes),
            "sizes_without_shape": [{"npus": n, "reason": why} for n, why in en.no_shape.items()],
            "candidates": en.count,
            "pairs": en.pairs,
            "skipped": en.skipped,
            **self.counts(),
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
            "unsolved_bound": None if self.unsolved_bound == float("inf") else
            self.unsolved_bound,
            "ranking": json_ranking(self.ranking, top),
            "by_dims": [{**e, "best": e["best"]["id"]} for e in self.by_dims()],
            "by_npus": [
                {**e, "best": e["best"]["id"], "best_value": e["best"]["objective_value"]}
                for e in self.by_npus()
            ],
        }


__all__ = ["Codesign"]
