"""Numbers typed on the command line: ``--bw`` lists and the positive limits (``--budget-usd``, ``--max-time-ns``),
each refused with a one-line InputError naming the flag. Imports only the standard library at load time."""

from __future__ import annotations

import math
import re

PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A plain ASCII decimal number (``100``, ``2.5``, ``.5``, ``1e3``): what ``--bw`` accepts. Python's ``float``
also reads ``1_00`` and other scripts' digits (``１00``, ``١٠٠``) as 100, which a typo or a pasted value should
not silently become."""

NON_FINITE = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan", "+nan", "-nan")
"""The words ``float`` reads as an infinity or a NaN: read, then refused as not finite (with that reason)."""


def parse_bw(text: str, n_dims: int) -> list[float]:
    """``--bw`` text (comma-separated GB/s per NPU, plain ASCII decimal numbers) as one float per dimension.

    Raises:
        InputError: (exit 2) when empty, a value that is not a plain decimal number, the wrong count, or a value
            that is negative, not a number or not finite (``1e400`` overflows).
    """
    from ..errors import InputError, number_problem

    if not text.strip():
        raise InputError("--bw", None, "no bandwidths given", f"give {n_dims} comma-separated GB/s values")
    words = [w.strip() for w in text.split(",")]
    for d, w in enumerate(words):
        if not PLAIN_NUMBER.fullmatch(w) and w.lower() not in NON_FINITE:
            where = f"bw[{d}]" if len(words) > 1 else None
            raise InputError("--bw", where, f"'{text}' is not a comma-separated list of numbers ({w!r} is not a "
                             "plain decimal number)", "write e.g. --bw 250,125,75,50 (plain ASCII digits, no '_' "
                             "separators)")
    values = [float(w) for w in words]
    if len(values) != n_dims:
        raise InputError("--bw", None, f"{len(values)} value{'s' if len(values) != 1 else ''} given but the network "
                         f"has {n_dims} dimensions", f"give {n_dims} comma-separated GB/s values, one per dimension")
    for d, v in enumerate(values):
        if not math.isfinite(v) or v < 0:
            raise InputError("--bw", f"bw[{d}]", number_problem(v, "a finite number >= 0"),
                             "give a bandwidth >= 0 GB/s (> 0 on a dimension that carries traffic)")
    return values


def check_positive(value: float | None, flag: str) -> None:
    """Refuse a limit ``value`` given to ``flag`` that is not a finite number > 0 (``None``: not given, passes).

    Raises:
        InputError: naming ``flag``, saying whether the value is negative or zero, not a number or not finite.
    """
    from ..errors import InputError, number_problem

    if value is not None and not (math.isfinite(value) and value > 0):
        raise InputError(flag, None, number_problem(value), "give a finite value > 0")
