"""The tokenizer and recursive-descent parser behind
:func:`hieropt.spec.constraint_text.parse_constraint`: linear expressions over ``bw[i]``,
``sum(bw)`` and ``sum(bw[a:b])``, never evaluated; every mistake is a one-line InputError with the
column."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..errors import InputError

_MAX_DEPTH = 64  # nesting of parentheses / unary signs; keeps the recursion far from Python's limit


EXAMPLE = "e.g. 'sum(bw) <= 500' or '2*bw[0] - bw[1] >= 0'"


_OPERAND = "a number, bw[i], sum(bw), sum(bw[a:b]) or '('"


_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<sense><=|>=|==)
  | (?P<badsense>=<|=>|!=|<>|<|>|=)
  | (?P<op>\*\*|[-+*/()\[\]:])
    """,
    re.VERBOSE | re.ASCII,
)


_NUMBER_TAIL_RE = re.compile(r"[\w.]*", re.ASCII)


_UNIT_RE = re.compile(r"\s*(?P<unit>(?P<prefix>[kKMGT]?i?)(?P<b>[Bb])(?P<word>ytes?|its?)?"
                      r"(?:/s|ps)?)(?![\w/])", re.ASCII)
"""A unit written after a number (``500 GB/s``, ``4000Gb/s``, ``25Gbps``, ``80 GiB``)."""


_UNIT_PREFIX_GB = {"": 1e-9, "k": 1e-6, "K": 1e-6, "M": 1e-3, "G": 1.0, "T": 1e3,
                   "Ki": 2.0**10 / 1e9, "Mi": 2.0**20 / 1e9, "Gi": 2.0**30 / 1e9,
                   "Ti": 2.0**40 / 1e9}
"""GB (1e9 bytes) in one byte of each prefix of :data:`_UNIT_RE`."""


def _in_gbps(number: str, m: re.Match) -> float:
    """``number`` in the unit matched by ``m`` as GB/s (1 GB = 1e9 bytes): bits divided by 8."""
    word = m["word"] or ""
    bits = word.startswith("it") or (m["b"] == "b" and not word.startswith("yte"))
    return float(number) * _UNIT_PREFIX_GB[m["prefix"]] / (8.0 if bits else 1.0)


UNIT_RULE = "in GB/s per NPU (1 GB = 1e9 bytes; Gb/s / 8 = GB/s)"
"""What a bandwidth given as a plain number is in: the words of every error about a number written
with a unit (a constraint's, ``--bw``'s)."""


def number_with_unit(word: str) -> tuple[str, str, float] | None:
    """``word`` (``2000Gb/s``, ``500 GB/s``, ``25Gbps``) as (its number, its unit, the value in
    GB/s: bits divided by 8) when it is a number followed by a bandwidth or size unit, else
    None."""
    m = _TOKEN_RE.match(word)
    if m is None or m.lastgroup != "num":
        return None
    unit = _UNIT_RE.match(word, m.end())
    if unit is None or word[unit.end():].strip():
        return None
    return m.group(), unit["unit"], _in_gbps(m.group(), unit)


def unit_problem(number: str, unit: str, what: str) -> str:
    """The problem of ``number`` written with ``unit`` where ``what`` (e.g. "constraints") takes
    plain numbers in GB/s per NPU (:data:`UNIT_RULE`)."""
    return f"'{number}' has the unit '{unit}': {what} take plain numbers, {UNIT_RULE}"


def in_gbps_words(number: str, unit: str, gbps: float) -> str:
    """``number`` ``unit`` as GB/s per NPU in words: ``2000 Gb/s = 250 GB/s per NPU`` (``500 GB/s
    per NPU`` when the unit is GB/s)."""
    how = "" if gbps == float(number) else f"{number} {unit} = "
    return f"{how}{gbps:.10g} GB/s per NPU"


_BAD_SENSE_FIX = {
    "=": "use == for equality",
    "=<": "use <=",
    "=>": "use >=",
    "<": "use <= (strict inequalities are not supported)",
    ">": "use >= (strict inequalities are not supported)",
    "!=": "'not equal' is not a linear constraint; use <=, >= or ==",
    "<>": "'not equal' is not a linear constraint; use <=, >= or ==",
}


_SENSE_RUN_RE = re.compile(r"[<>=!]+")
"""The comparison characters written together at a position (``>==``: one operator typed)."""


def _sense_fix(run: str) -> str:
    """The fix of ``run``, comparison characters written together that are not an operator: the
    operator nearest to it (``>==``: >=, ``===``: ==, ``=<``: <=)."""
    if run in _BAD_SENSE_FIX:
        return _BAD_SENSE_FIX[run]
    if "!" in run:
        return _BAD_SENSE_FIX["!="]
    if "<" in run and ">" in run:
        return "use one of <=, >=, =="
    if "<" in run or ">" in run:
        return f"use {'<' if '<' in run else '>'}="
    return "use == for equality"


_UNICODE_SENSE_FIX = {
    "≤": "use <=",
    "≥": "use >=",
    "≠": "'not equal' is not a linear constraint; use <=, >= or ==",
}


@dataclass(frozen=True)
class Token:
    """One token: its kind, its text and its 0-based offset in the constraint text."""

    kind: str  # "num", "name", "sense", "op" or "end"
    text: str
    pos: int  # 0-based offset into the original text


@dataclass(frozen=True)
class Lin:
    """A linear expression ``coeffs . bw + const`` with the span of text it came from.

    ``has_bw`` is structural (the text names a bandwidth), so ``(bw[0] - bw[0]) * bw[1]`` is still
    rejected as non-linear even though the first factor's coefficients are all zero.
    """

    coeffs: tuple[float, ...]
    const: float
    has_bw: bool
    start: int
    end: int


def _dims_phrase(n: int) -> str:
    return f"the network has {n} dimension{'s' if n != 1 else ''}"


def _valid_refs(n: int) -> str:
    return "bw[0]" if n == 1 else f"bw[0]..bw[{n - 1}]"


class ConstraintParser:
    """Grammar (``bw`` indices are non-negative integer literals; with ``top``, a space's texts,
    also the word ``top``: the last dimension)::

        constraint := expr SENSE expr END          SENSE := '<=' | '>=' | '=='
        expr       := term (('+' | '-') term)*
        term       := unary (('*' | '/') unary)*
        unary      := ('+' | '-') unary | primary
        primary    := NUMBER | '(' expr ')' | 'bw' '[' INT ']'
                    | 'sum' '(' 'bw' ['[' [INT] ':' [INT] ']'] ')'
    """

    def __init__(self, text: str, n_dims: int, source: str, top: bool = False):
        self.text = text
        self.n = n_dims
        self.source = source
        self.top = top  # a space's text: an index or slice bound 'top' is the last dimension
        # shown in messages: line breaks and tabs as single spaces, so the message stays one line
        # and columns match
        self.shown = "".join(" " if c.isspace() else c for c in text)
        self.depth = 0
        self.tokens = self._tokenize()
        self.i = 0

    # -------------------------------------------------------------------------------------- helpers
    def error(self, problem: str, fix: str) -> InputError:
        """The one-line InputError of this constraint for ``problem`` and ``fix``."""
        return InputError(self.source, f"constraint '{self.shown}'", problem, fix)

    def _syntax(self, pos: int, problem: str, fix: str) -> InputError:
        return self.error(f"syntax error at column {pos + 1}: {problem}", fix)

    def _unit(self, pos: int, number: str, unit: re.Match) -> InputError:
        """The error of ``number`` written with the unit ``unit`` (:data:`_UNIT_RE`): constraints
        take plain numbers in GB/s per NPU; the fix gives the number to write."""
        gbps = _in_gbps(number, unit)
        return self._syntax(
            pos, unit_problem(number, unit["unit"], "constraints"),
            f"write the number alone: {gbps:.10g} ({in_gbps_words(number, unit['unit'], gbps)})")

    def _snip(self, e: Lin) -> str:
        return self.shown[e.start : e.end]

    @staticmethod
    def _describe(tok: Token) -> str:
        return "the end of the text" if tok.kind == "end" else f"'{tok.text}'"

    def _peek(self) -> Token:
        return self.tokens[self.i]

    def _next(self) -> Token:
        tok = self.tokens[self.i]
        if tok.kind != "end":
            self.i += 1
        return tok

    def _is(self, tok: Token, op: str) -> bool:
        return tok.kind == "op" and tok.text == op

    def _expect(self, op: str, what: str, fix: str) -> Token:
        tok = self._peek()
        if not self._is(tok, op):
            raise self._syntax(tok.pos, f"expected '{op}' {what}, found {self._describe(tok)}", fix)
        return self._next()

    def _const(self, value: float, start: int, end: int) -> Lin:
        return Lin((0.0,) * self.n, value, False, start, end)

    def _enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self._syntax(
                pos, f"nested more than {_MAX_DEPTH} levels deep", "simplify the expression"
            )

    # ------------------------------------------------------------------------------------ tokenizer
    def _tokenize(self) -> list[Token]:
        text, pos, tokens = self.text, 0, []
        while pos < len(text):
            m = _TOKEN_RE.match(text, pos)
            if m is None:
                ch = text[pos]
                fix = _UNICODE_SENSE_FIX.get(
                    ch,
                    f"write the constraint with numbers, bw[i], sum(...), + - * / ( ) "
                    f"and one of <=, >=, ==; {EXAMPLE}",
                )
                raise self._syntax(pos, f"unexpected character {ch!r}", fix)
            kind, tok = m.lastgroup, m.group()
            if kind == "num" and (unit := _UNIT_RE.match(text, m.end())) is not None:
                raise self._unit(pos, tok, unit)
            if kind == "num":
                tail = _NUMBER_TAIL_RE.match(text, m.end()).group()
                if tail:
                    raise self._syntax(
                        pos, f"malformed number '{tok + tail}'",
                        "separate a factor with *, e.g. 2*bw[0]; write exponents as 1e3 or 2.5e-4",
                    )
            elif kind in ("sense", "badsense"):
                run = _SENSE_RUN_RE.match(text, pos).group()
                if kind == "badsense" or run != tok:  # ('>==': one operator, not '>=' and '=')
                    raise self._syntax(
                        pos, f"'{run}' is not a comparison operator", _sense_fix(run)
                    )
            if kind != "ws":
                tokens.append(Token(kind, tok, pos))
            pos = m.end()
        tokens.append(Token("end", "", len(text)))
        return tokens

    # --------------------------------------------------------------------------------------- parser
    def parse(self) -> tuple[Lin, str, Lin]:
        """The constraint as (left side, comparison operator ``<=`` / ``>=`` / ``==``, right
        side), each side a linear expression in the bandwidths.

        Raises:
            InputError: no comparison operator, more than one, or a syntax error (naming the
                column and the fix).
        """
        lhs = self._expr()
        tok = self._peek()
        if tok.kind != "sense":
            if tok.kind == "end":
                raise self.error(
                    "missing comparison operator: expected one of <=, >=, ==",
                    f"compare two sides, {EXAMPLE}",
                )
            raise self._syntax(tok.pos, f"unexpected {self._describe(tok)}",
                               f"check the operators and parentheses; {EXAMPLE}")
        sense = self._next().text
        rhs = self._expr()
        tok = self._peek()
        if tok.kind == "sense":
            raise self.error(
                f"more than one comparison operator ('{sense}' and '{tok.text}' at column "
                f"{tok.pos + 1})",
                "write one comparison per constraint; split 'a <= b <= c' into 'a <= b' and "
                "'b <= c'",
            )
        if tok.kind != "end":
            raise self._syntax(tok.pos, f"unexpected {self._describe(tok)}",
                               f"check the operators and parentheses; {EXAMPLE}")
        return lhs, sense, rhs

    def _expr(self) -> Lin:
        left = self._term()
        while (tok := self._peek()).kind == "op" and tok.text in "+-":
            self._next()
            right = self._term()
            sign = 1.0 if tok.text == "+" else -1.0
            left = Lin(
                tuple(a + sign * b for a, b in zip(left.coeffs, right.coeffs, strict=True)),
                left.const + sign * right.const,
                left.has_bw or right.has_bw,
                left.start,
                right.end,
            )
        return left

    def _term(self) -> Lin:
        left = self._unary()
        while True:
            tok = self._peek()
            if self._is(tok, "*"):
                self._next()
                left = self._mul(left, self._unary())
            elif self._is(tok, "/"):
                self._next()
                left = self._div(left, self._unary())
            elif self._is(tok, "**"):
                raise self.error(
                    f"not linear: powers ('**' at column {tok.pos + 1}) are not supported",
                    "a linear constraint multiplies bandwidth only by constants, e.g. 2*bw[0]",
                )
            elif tok.kind in ("num", "name") or self._is(tok, "("):
                raise self._syntax(
                    tok.pos, f"missing operator between '{self._snip(left)}' and '{tok.text}'",
                    "write products with *, e.g. 2*bw[0], and join terms with + or -",
                )
            else:
                return left

    def _mul(self, a: Lin, b: Lin) -> Lin:
        if a.has_bw and b.has_bw:
            raise self.error(
                f"not linear: '{self._snip(a)}' * '{self._snip(b)}' multiplies two "
                "bandwidth expressions",
                "multiply bandwidth only by constants, e.g. 2*bw[0]",
            )
        lin, k = (a, b.const) if a.has_bw else (b, a.const)
        return Lin(tuple(c * k for c in lin.coeffs), lin.const * k, lin.has_bw, a.start, b.end)

    def _div(self, a: Lin, b: Lin) -> Lin:
        if b.has_bw:
            raise self.error(
                f"not linear: '{self._snip(a)}' / '{self._snip(b)}' divides by a bandwidth "
                "expression",
                "divide only by non-zero constants, e.g. (bw[0] + bw[1]) / 2",
            )
        if b.const == 0:
            raise self.error(
                f"division by zero: '{self._snip(b)}' at column {b.start + 1} is 0",
                "divide by a non-zero constant",
            )
        k = b.const
        return Lin(tuple(c / k for c in a.coeffs), a.const / k, a.has_bw, a.start, b.end)

    def _unary(self) -> Lin:
        tok = self._peek()
        if tok.kind == "op" and tok.text in "+-":
            self._enter(tok.pos)
            self._next()
            inner = self._unary()
            self.depth -= 1
            k = -1.0 if tok.text == "-" else 1.0
            return Lin(
                tuple(k * c for c in inner.coeffs),
                k * inner.const,
                inner.has_bw,
                tok.pos,
                inner.end,
            )
        return self._primary()

    def _primary(self) -> Lin:
        tok = self._peek()
        if tok.kind == "num":
            self._next()
            value = float(tok.text)
            if not math.isfinite(value):
                raise self._syntax(
                    tok.pos, f"number '{tok.text}' is too large", "use a finite number below 1e308"
                )
            return self._const(value, tok.pos, tok.pos + len(tok.text))
        if self._is(tok, "("):
            self._enter(tok.pos)
            self._next()
            inner = self._expr()
            close = self._expect(
                ")", f"to close '(' at column {tok.pos + 1}", "balance the parentheses"
            )
            self.depth -= 1
            return Lin(inner.coeffs, inner.const, inner.has_bw, tok.pos, close.pos + 1)
        if tok.kind == "name":
            if tok.text == "bw":
                return self._bw()
            if tok.text == "sum":
                return self._sum()
            raise self.error(
                f"unknown name '{tok.text}' at column {tok.pos + 1}",
                f"write a bandwidth as bw[i] ({_valid_refs(self.n)}), or sum(bw) / "
                "sum(bw[a:b]) for sums",
            )
        raise self._syntax(
            tok.pos,
            f"expected {_OPERAND}, found {self._describe(tok)}",
            f"complete the expression; {EXAMPLE}",
        )

    def _index(self, what: str) -> int:
        """A non-negative integer literal (the current token), or ``top`` (the last dimension,
        ``n - 1``) in a space's text."""
        tok = self._peek()
        if self.top and tok.kind == "name" and tok.text == "top":
            self._next()
            return self.n - 1
        if self._is(tok, "-") and self.tokens[self.i + 1].kind == "num":
            value = self.tokens[self.i + 1].text
            raise self._syntax(
                tok.pos, f"negative {what} -{value}",
                f"count dimensions from 0: {_valid_refs(self.n)} ({_dims_phrase(self.n)})",
            )
        if tok.kind != "num" or not tok.text.isdigit():
            raise self._syntax(
                tok.pos, f"{what} must be a non-negative integer, found {self._describe(tok)}",
                f"use an integer literal, {_valid_refs(self.n)} ({_dims_phrase(self.n)})",
            )
        self._next()
        return int(tok.text)

    def _bw(self) -> Lin:
        name = self._next()
        if not self._is(self._peek(), "["):
            raise self._syntax(
                name.pos,
                "bare 'bw' without an index",
                f"use bw[i] for one dimension ({_valid_refs(self.n)}) or sum(bw) for the "
                "sum over all dimensions",
            )
        self._next()
        i = self._index("index")
        if self._is(self._peek(), ":"):
            raise self._syntax(self._peek().pos, "a slice of bw is only allowed inside sum(...)",
                               "write sum(bw[a:b])")
        close = self._expect("]", "after the index", f"write bw[i] with i in 0..{self.n - 1}")
        if i >= self.n:
            raise self.error(
                f"bw[{i}] at column {name.pos + 1} is out of range: {_dims_phrase(self.n)}",
                f"use {_valid_refs(self.n)}",
            )
        coeffs = tuple(1.0 if d == i else 0.0 for d in range(self.n))
        return Lin(coeffs, 0.0, True, name.pos, close.pos + 1)

    def _sum(self) -> Lin:
        name = self._next()
        sum_fix = "write sum(bw) or sum(bw[a:b]); write other sums out with +"
        self._expect("(", "after 'sum'", sum_fix)
        arg = self._peek()
        if not (arg.kind == "name" and arg.text == "bw"):
            raise self._syntax(
                arg.pos,
                f"sum(...) takes bw or a slice bw[a:b], found {self._describe(arg)}",
                sum_fix,
            )
        self._next()
        lo, hi = 0, self.n
        if self._is(self._peek(), "["):
            self._next()
            if not self._is(self._peek(), ":"):
                lo = self._index("slice start")
            if self._is(self._peek(), "]"):
                raise self._syntax(self._peek().pos, f"sum(bw[{lo}]) sums a single dimension",
                                   f"write bw[{lo}], or a slice such as sum(bw[{lo}:])")
            self._expect(":", "in the slice bw[a:b]", sum_fix)
            if not self._is(self._peek(), "]"):
                if self._is(self._peek(), ":"):
                    raise self._syntax(
                        self._peek().pos, "slice steps are not supported", "use sum(bw[a:b])"
                    )
                hi = self._index("slice end")
            if self._is(self._peek(), ":"):
                raise self._syntax(
                    self._peek().pos, "slice steps are not supported", "use sum(bw[a:b])"
                )
            self._expect("]", "to close the slice", sum_fix)
        close = self._expect(")", f"to close 'sum(' at column {name.pos + 1}", sum_fix)
        # not clamped like a Python slice: a bound past the last dimension is a mistake
        if hi > self.n:
            raise self.error(
                f"'{self.shown[name.pos : close.pos + 1]}' at column {name.pos + 1} reaches "
                "past the last dimension "
                f"({_dims_phrase(self.n)})",
                f"end the slice at {self.n} at most, e.g. "
                f"sum(bw[{min(lo, self.n - 1)}:{self.n}]) or "
                f"sum(bw[{min(lo, self.n - 1)}:])",
            )
        dims = range(self.n)[lo:hi]
        if not dims:
            raise self.error(
                f"'{self.shown[name.pos : close.pos + 1]}' at column {name.pos + 1} selects "
                "no dimension "
                f"({_dims_phrase(self.n)})",
                f"use a slice bw[a:b] with a < b and a < {self.n}",
            )
        coeffs = tuple(1.0 if d in dims else 0.0 for d in range(self.n))
        return Lin(coeffs, 0.0, True, name.pos, close.pos + 1)
