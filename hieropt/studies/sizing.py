"""How many accelerators to buy: a co-design search (:func:`hieropt.studies.codesign.codesign`) on each cluster
size of a list, the cheapest answer over the sizes (by the space's objective, ``min_run_cost`` for $ per run), and a
deadline ("15T tokens within 90 days") as the iteration-time target of every size.

**Deadline.** A run of D tokens at B s tokens per iteration takes D / (B s) iterations whatever the size, so a
deadline W is the same iteration-time target W B s / D (ns) for every size and plan of the space (the global batch
is the model file's).

**Exact skipping of sizes.** Each size's candidates carry a proven lower bound on the objective
(:mod:`hieropt.studies.codesign.candidates`); the sizes are searched in the order of their smallest bound, and a size
whose smallest bound is at least the best value found is skipped: none of its candidates can be better. The sizes
need a shape space (``[[levels]]``): a fixed network holds one NPU count.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..workloads.llm.space import CodesignSpace
from .codesign import codesign
from .codesign.candidates import enumerate_candidates

SOLVED = ("optimal", "limit")


@dataclass(frozen=True)
class SizeOutcome:
    """One cluster size: ``npus``, its smallest candidate bound (inf: no candidate), the search's result (None when
    skipped) and why it was skipped or has no answer (None otherwise)."""

    npus: int
    bound: float
    result: Any
    note: str | None

    @property
    def best(self) -> dict[str, Any] | None:
        """The size's best row (None: skipped or no certified answer)."""
        return None if self.result is None else self.result.best


@dataclass(frozen=True)
class Sizing:
    """The outcome of :func:`size_cluster`: every size's outcome in the order given, the chosen size (None: no size
    has an answer), the objective and the deadline's iteration-time target (ns, or None)."""

    sizes: tuple[SizeOutcome, ...]
    chosen: SizeOutcome | None
    objective: str
    target_ns: float | None


def deadline_target_ns(space: CodesignSpace, deadline_ns: float) -> float:
    """The iteration-time target (ns) of a deadline of ``deadline_ns`` ns for the space's token budget (module
    docstring).

    Raises:
        InputError: the space has no ``tokens``.
    """
    if space.tokens is None:
        raise InputError(space.name, "tokens", "a deadline needs the run's token budget",
                         "give tokens = 15e12 in the space (or --tokens)")
    b = space.base
    return deadline_ns / (space.tokens / (b.plan.global_batch_size * b.model.sequence_length))


def _sized(space: CodesignSpace, npus: int, target_ns: float | None) -> CodesignSpace:
    fields = {**dict(space), "npus": npus}
    if target_ns is not None:
        fields["max_iteration_time_ns"] = min(target_ns, space.max_iteration_time_ns or target_ns)
    return CodesignSpace(**fields)


def size_cluster(space: CodesignSpace | str | Path, sizes: list[int], *, deadline_ns: float | None = None,
                 objective: str | None = None, workers: int | None = 1, prune: bool = True) -> Sizing:
    """The cheapest cluster size of ``sizes`` (NPU counts) for the space's objective (or ``objective``), each size
    searched by :func:`hieropt.studies.codesign.codesign`, with an optional deadline (ns of wall time for the space's
    token budget); sizes that cannot beat the best found are skipped by their proven bound (module docstring).
    ``prune=False`` searches every size and every candidate (the brute force).

    Raises:
        InputError: a fixed network (sizes need ``[[levels]]``), no sizes, a size below 2, a deadline without
            tokens, or a bad space.
    """
    if not isinstance(space, CodesignSpace):
        from ..io.codesign import load_codesign

        space = load_codesign(space)
    if objective is not None:
        space = CodesignSpace(**{**dict(space), "objective": objective})
    if space.network is not None:
        raise InputError(space.name, "network", "cluster sizes need a shape space: a fixed network holds one NPU "
                         "count", "describe the network family with [[levels]]")
    if not sizes or min(sizes) < 2:
        raise InputError("sizes", None, f"{sizes!r} is not a list of NPU counts >= 2", "give e.g. 2048,4096,8192")
    target = None if deadline_ns is None else deadline_target_ns(space, deadline_ns)
    spaces = {n: _sized(space, n, target) for n in dict.fromkeys(sizes)}
    bounds = {}
    for n, s in spaces.items():
        try:
            cands = enumerate_candidates(s).candidates
        except InputError:  # (no shape of the levels holds n NPUs: this size has no candidate)
            cands = ()
        bounds[n] = cands[0].lower_bound if cands else float("inf")
    best, outcomes = float("inf"), {}
    for n in sorted(spaces, key=lambda n: (bounds[n], n)):
        if bounds[n] == float("inf"):
            outcomes[n] = SizeOutcome(n, bounds[n], None, "no plan fits and places on a shape of this size")
        elif prune and bounds[n] >= best:
            outcomes[n] = SizeOutcome(n, bounds[n], None, f"skipped: its proven bound {bounds[n]:.6g} is not below "
                                      f"the best found, {best:.6g}")
        else:
            res = codesign(spaces[n], workers=workers, prune=prune)
            row = res.best
            if row is not None and row["status"] in SOLVED:
                best = min(best, row["objective_value"])
            outcomes[n] = SizeOutcome(n, bounds[n], res, None if row is not None else "no candidate has an answer"
                                      + (" within the deadline" if target is not None else ""))
    answered = [o for o in outcomes.values() if o.best is not None and o.best["status"] in SOLVED]
    chosen = min(answered, key=lambda o: (o.best["objective_value"], o.npus), default=None)
    return Sizing(tuple(outcomes[n] for n in spaces), chosen, space.objective, target)


__all__ = ["Sizing", "SizeOutcome", "size_cluster", "deadline_target_ns"]
