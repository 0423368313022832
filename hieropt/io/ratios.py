"""The ``[heuristic_ratios]`` table of an instance file: named vendor-style bandwidth ratios, one
per dimension, for ``hieropt compare`` and ``hieropt report`` (:mod:`hieropt.studies.heuristics`),
checked when the file is read so that every command refuses a bad entry alike."""

from __future__ import annotations

import math
from typing import Any

from ..errors import InputError
from .common import short_repr


def ratios_entry(value: Any, src: str, n_dims: int) -> dict[str, tuple[float, ...]]:
    """The ``[heuristic_ratios]`` table of instance file ``src`` (name -> bandwidth ratios, one per
    dimension of a network of ``n_dims`` dimensions), checked when the file is read, so that every
    command refuses it alike (:func:`hieropt.spec.instance.ratios_problem`).

    Raises:
        InputError: not a table, or an entry that is not a list of numbers or is not a valid ratio
            vector, naming ``src`` and the field ``heuristic_ratios.NAME``.
    """
    from ..spec.instance import ratios_fix, ratios_problem

    example = ", ".join(str(2 ** (n_dims - 1 - d)) for d in range(n_dims))
    if not isinstance(value, dict):
        raise InputError(src, "heuristic_ratios", "expected a table of named ratio lists",
                         f'write [heuristic_ratios] "halving per level" = [{example}]')
    out = {}
    for name, ratios in value.items():
        field = f"heuristic_ratios.{name}"
        numbers = isinstance(ratios, list) and all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in ratios)
        if not numbers:
            raise InputError(src, field,
                             f"expected a list of {n_dims} numbers, got {short_repr(ratios)}",
                             f'write "{name}" = [{example}]')
        values = [_finite(x) for x in ratios]
        if None in values:  # (an integer of hundreds of digits: no float)
            raise InputError(src, field, f"{short_repr(ratios)} holds a number too large to be a "
                             "ratio (not a finite number)", ratios_fix(n_dims))
        problem = ratios_problem(values, n_dims)
        if problem is not None:
            raise InputError(src, field, problem, ratios_fix(n_dims))
        out[name] = tuple(values)
    return out


def _finite(x: int | float) -> float | None:
    """``x`` as a finite float, None when it is none (an overflowing integer, inf or nan)."""
    try:
        out = float(x)
    except OverflowError:
        return None
    return out if math.isfinite(out) else None


def ratios_entries(data: dict[str, Any], src: str, n_dims: int) -> dict[str, Any]:
    """``{"heuristic_ratios": ...}`` of an instance file's table ``data`` (:func:`ratios_entry`),
    or ``{}`` when the file gives none.

    Raises:
        InputError: a bad table or entry, naming ``src`` and the field.
    """
    if "heuristic_ratios" not in data:
        return {}
    return {"heuristic_ratios": ratios_entry(data["heuristic_ratios"], src, n_dims)}


__all__ = ["ratios_entry", "ratios_entries"]
