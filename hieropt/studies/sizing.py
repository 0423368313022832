"""How many accelerators to buy: the cluster size as a decision of the co-design search, with a
deadline ("15T tokens within 90 days") as its time target.

**One search.** ``--sizes`` (``sizes``) sets the space's ``npus`` list: the size is a dimension of
one co-design search (:func:`hieropt.studies.codesign.codesign`), whose candidates of every size
are ordered by their proven lower bound and pruned against the best found on their own size, so
each size's best is that size's optimum (what buying that many NPUs gives), not only the overall
one. A size's smallest bound
(:meth:`~hieropt.studies.codesign.candidates.CodesignEnumeration.size_bounds`) says how far it is
from the best. Several sizes need a shape space (``[[levels]]``): a fixed network holds one NPU
count (``sizes`` of that count alone are taken). A size no shape of the space holds is skipped with
a note (:attr:`~hieropt.studies.codesign.candidates.CodesignEnumeration.no_shape`).

**Deadline.** A run of D tokens at B s tokens per iteration takes D / (B s) iterations whatever
the size, so a deadline W is the same iteration-time target W B s / D (ns) for every size and plan
of the space (the global batch is the model file's): the space's ``max_iteration_time_ns`` (the
smaller, if it has one). The cheapest run (or least cost) that meets it is the answer.

What this module adds to the search is the deadline's target and a per-size account of its
outcome (:class:`Sizing`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..cache import scoped
from ..errors import InputError
from ..io.common import validation_error
from ..workloads.llm.space import CodesignSpace
from .codesign import Codesign, codesign


@dataclass(frozen=True)
class SizeOutcome:
    """One cluster size: ``npus``, its smallest candidate bound (inf: no candidate), its best
    solved row (a row dictionary, None when it has none) and why it has no answer (None when it has
    one)."""

    npus: int
    bound: float
    best: dict[str, Any] | None
    note: str | None


@dataclass(frozen=True)
class Sizing:
    """The outcome of :func:`size_cluster`: every size's outcome (ascending), the chosen size
    (None: no size has an answer), the objective, the deadline's iteration-time target (ns, or
    None) and the search (``result``)."""

    sizes: tuple[SizeOutcome, ...]
    chosen: SizeOutcome | None
    objective: str
    target_ns: float | None
    result: Codesign


def deadline_target_ns(space: CodesignSpace, deadline_ns: float) -> float:
    """The iteration-time target (ns) of a deadline of ``deadline_ns`` ns for the space's token
    budget (module docstring).

    Raises:
        InputError: the space has no ``tokens``.
    """
    if space.tokens is None:
        raise InputError(space.name, "tokens", "a deadline needs the run's token budget",
                         "give tokens = 15e12 in the space (or --tokens)")
    b = space.base
    return deadline_ns / (space.tokens / (b.plan.global_batch_size * b.model.sequence_length))


def sized_space(space: CodesignSpace, sizes: list[int] | None = None,
                deadline_ns: float | None = None) -> CodesignSpace:
    """``space`` with ``npus`` = ``sizes`` (NPU counts; None: the space's) and the deadline's
    iteration-time target (``deadline_ns``, ns of wall time for the space's token budget) as its
    time target (module docstring).

    Raises:
        InputError: sizes with a fixed network other than its own NPU count (several sizes need
            ``[[levels]]``), an empty list or a size below 2, a deadline without tokens.
    """
    fields: dict[str, Any] = dict(space)
    if sizes is not None:
        if not sizes or min(sizes) < 2:
            raise InputError("sizes", None, f"{sizes!r} is not a list of NPU counts >= 2",
                             "give e.g. 2048,4096,8192")
        unique = sorted(set(sizes))
        held = space.network.npus_total if space.network is not None else None
        if held is not None and unique != [held]:
            other = ", ".join(f"{n:,}" for n in unique if n != held)
            raise InputError(space.name, "network", f"the fixed network holds {held:,} NPUs, not "
                             f"{other}: one fixed network has one cluster size",
                             "describe the network family with [[levels]] to search several "
                             f"sizes, or give only {held} (the network's)")
        fields["npus"] = unique[0] if len(unique) == 1 else tuple(unique)
    if deadline_ns is not None:
        target = deadline_target_ns(space, deadline_ns)
        fields["max_iteration_time_ns"] = min(target, space.max_iteration_time_ns or target)
    try:
        return CodesignSpace(**fields)
    except ValidationError as e:
        raise validation_error(e, space.name) from e


def _note(space: CodesignSpace, bound: float, deadline: bool, no_shape: str | None = None) -> str:
    """Why a size without a solved candidate has no answer (``no_shape``: why no shape of the
    space holds it, :attr:`~hieropt.studies.codesign.candidates.CodesignEnumeration.no_shape`)."""
    if no_shape is not None and no_shape.startswith("the space's nic_npus"):
        return f"skipped: {no_shape}"
    if no_shape is not None:
        return f"skipped: no network shape holds it ({no_shape})"
    if bound == float("inf"):
        return "no plan fits and places on a shape of this size"
    within = (" within the deadline" if deadline else " within the time target"
              if space.max_iteration_time_ns is not None else "")
    return "no candidate has an answer" + within


def size_outcomes(result: Codesign, deadline: bool = False) -> Sizing:
    """Per size of ``result``'s space (a finished co-design search) its bound, best row and note,
    and the chosen size; ``deadline``: the time target is a deadline's (named in the notes)."""
    space = result.space
    bounds = result.enumeration.size_bounds()
    best = {e["npus"]: e["best"] for e in result.by_npus()}
    outcomes = []
    for n in space.sizes:
        bound = bounds.get(n, float("inf"))
        note = None if n in best else _note(space, bound, deadline,
                                            result.enumeration.no_shape.get(n))
        outcomes.append(SizeOutcome(n, bound, best.get(n), note))
    answered = [o for o in outcomes if o.best is not None]
    chosen = min(answered, key=lambda o: (o.best["objective_value"], o.npus), default=None)
    return Sizing(tuple(outcomes), chosen, space.objective,
                  space.max_iteration_time_ns if deadline else None, result)


@scoped
def size_cluster(space: CodesignSpace | str | Path, sizes: list[int] | None = None, *,
                 deadline_ns: float | None = None, objective: str | None = None,
                 workers: int | None = 1, prune: bool = True,
                 on_row: Callable[[dict[str, Any]], None] | None = None) -> Sizing:
    """The cheapest cluster size of ``sizes`` (NPU counts; None: the space's ``npus`` list) for
    the space's objective (or ``objective``), with an optional deadline (ns of wall time for the
    space's token budget): one co-design search over the sizes (module docstring).
    ``prune=False`` solves every candidate of every size (the brute force). ``on_row`` receives
    every row as :func:`~hieropt.studies.codesign.codesign` settles it.

    Raises:
        InputError: as :func:`sized_space` and :func:`~hieropt.studies.codesign.codesign`.
        NoSolutionError: no plan fits in memory on any size.
    """
    if not isinstance(space, CodesignSpace):
        from ..io.codesign import load_codesign

        space = load_codesign(space)
    space = sized_space(space, sizes, deadline_ns)
    result = codesign(space, objective, workers=workers, prune=prune, on_row=on_row)
    return size_outcomes(result, deadline_ns is not None)


__all__ = ["Sizing", "SizeOutcome", "size_cluster", "size_outcomes", "sized_space",
           "deadline_target_ns"]
