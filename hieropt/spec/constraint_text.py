"""Safe parser of linear design constraints on per-dimension bandwidth, e.g. ``sum(bw[1:]) <= 3 *
bw[0]``.

The text is never evaluated: a small tokenizer and a recursive-descent parser turn it into a
:class:`hieropt.spec.LinearConstraint` (``sum_d coefficients[d] * bw[d]  sense  rhs``). Every
mistake raises a one-line :class:`hieropt.errors.InputError` naming the constraint, the problem
(with the column where it applies) and the fix.
"""

from __future__ import annotations

import math

from .constraint_parser import EXAMPLE, ConstraintParser
from .instance import LinearConstraint
from .ranges import bytes_per_second_row, row_range_problem

__all__ = ["parse_constraint"]


def parse_constraint(text: str, n_dims: int, source: str = "--constraint",
                     top: bool = False) -> LinearConstraint:
    """Parse a linear design constraint on per-dimension bandwidth (GB/s per NPU) without evaluating
    any code.

    Grammar::

        constraint := expr SENSE expr                SENSE := '<=' | '>=' | '=='
        expr       := term (('+' | '-') term)*
        term       := unary (('*' | '/') unary)*
        unary      := ('+' | '-') unary | primary
        primary    := NUMBER | '(' expr ')' | bw[i] | sum(bw) | sum(bw[a:b])

    ``NUMBER`` is an int, decimal or scientific literal (``500``, ``0.5``, ``.5``, ``1e3``,
    ``2.5E-4``); ``i`` is a non-negative integer literal below ``n_dims``; ``sum(bw[a:b])`` sums
    ``bw[a] + ... + bw[b-1]`` with Python slice semantics (``a``, ``b`` optional, non-negative;
    bounds past the end are clamped, but the slice must select at least one dimension). Products
    need an explicit ``*`` and at least one constant factor; divisors must be non-zero constants.
    Everything is moved to the left: ``lhs - rhs  SENSE  0`` becomes ``coefficients . bw  SENSE
    rhs`` with ``rhs = -(constant part)``.

    Examples: ``sum(bw) == 500``, ``bw[0] >= bw[1]``, ``2*bw[0] - 0.5*bw[1] <= 1e3``,
    ``sum(bw[1:]) <= 3 * bw[0]``, ``(bw[0] + bw[1]) / 2 >= 10``.

    Args:
        text: the constraint as the user wrote it.
        n_dims: number of network dimensions (length of ``coefficients``), at least 1.
        source: where the text came from, used as the error's source (default ``"--constraint"``).
        top: also take ``top`` as an index or slice bound, standing for ``n_dims - 1`` (a space's
            texts, written once for every dimension count: ``bw[top] <= 100``, ``sum(bw[:top])``);
            the text is parsed as written, so a message's columns are the text's.

    Returns:
        ``LinearConstraint(coefficients, sense, rhs, text=text.strip())`` with ``len(coefficients)
        == n_dims``.

    Raises:
        InputError: ``InputError(source, f"constraint '{text}'", problem, fix)`` (whitespace such as
            line breaks shown as spaces, so the message is one line and columns still match) for:
            empty text; a syntax error (unexpected character or token, malformed number, missing
            operator as in ``2 bw[0]``, unbalanced parentheses; the problem gives the column); an
            unknown name (e.g. ``bandwidth[0]``); a negative, non-integer or out-of-range index, or
            an empty slice; a missing or extra comparison operator, or ``=``, ``<``, ``>``, ``!=``
            instead of ``<=``, ``>=``, ``==``; a non-linear term (problem starts with ``"not linear:
            "``: bandwidth times bandwidth, division by a bandwidth expression, ``**``); division by
            zero; no bandwidth term (only constants, or all coefficients cancel); a number that
            overflows; a coefficient or a level |rhs| / max|a| (GB/s) the LP cannot represent
            (:func:`hieropt.spec.ranges.row_range_problem`: the accepted ranges are named); a
            bandwidth per NPU above 1e6 GB/s stated on a dimension, a limit in bytes/s
            (:func:`hieropt.spec.ranges.bytes_per_second_row`: the fix rewrites it in GB/s).
        ValueError: ``n_dims`` is not a positive integer (a programming error, not bad input).
    """
    if not isinstance(n_dims, int) or isinstance(n_dims, bool) or n_dims < 1:
        raise ValueError(f"n_dims must be a positive integer, got {n_dims!r}")
    parser = ConstraintParser(text, n_dims, source, top)
    if not text.strip():
        raise parser.error("empty constraint", f"write a comparison, {EXAMPLE}")
    lhs, sense, rhs = parser.parse()
    # + 0.0 turns -0.0 into 0.0
    coeffs = tuple(a - b + 0.0 for a, b in zip(lhs.coeffs, rhs.coeffs, strict=True))
    rhs_value = rhs.const - lhs.const + 0.0
    if not all(math.isfinite(c) for c in (*coeffs, rhs_value)):
        raise parser.error(
            "number too large: a coefficient or the constant overflows a 64-bit float",
            "use smaller numbers (e.g. change units)",
        )
    if not any(coeffs):
        why = (
            "the bandwidth terms cancel out"
            if lhs.has_bw or rhs.has_bw
            else "it compares constants only"
        )
        raise parser.error(f"no bandwidth term: {why}",
                            "name at least one bw[i] or sum(bw) with a non-zero coefficient")
    problem = row_range_problem(coeffs, rhs_value, sense)
    if problem is not None:
        raise parser.error(*problem.split("; fix: ", 1))
    slip = bytes_per_second_row(coeffs, rhs_value, sense, text)
    if slip is not None:
        raise parser.error(*slip)
    return LinearConstraint(coefficients=coeffs, sense=sense, rhs=rhs_value, text=text.strip())
