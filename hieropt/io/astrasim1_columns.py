"""ASTRA-sim 1.0 layer lines read a column at a time, and the collective names (one home for both
readers).

:class:`TokenLines` splits the whole text once and counts each line's tokens on its bytes with
numpy; :func:`layer_table` turns well-formed layer lines into a :class:`hieropt.spec.LayerTable`
(10^5 lines in ~0.3 s, no Python object per layer). Anything malformed makes it return None, and
:mod:`hieropt.io.astrasim1` reads the file line by line instead, to name the line, the field and the
fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

from ..spec import COLLECTIVE_SCOPES, Collective, LayerTable
from ..spec.network import TEXT_COLLECTIVES

__all__ = ["TokenLines", "layer_table", "parse_collective"]

_FIELDS = 12
_NUMERIC = [2, 4, 5, 7, 8, 10, 11]
"""Fields of a layer line read as numbers: compute and size of each phase (interleaved), then the
update time."""
_COLLECTIVES = [3, 6, 9]
_NAMES = {c.value: c for c in TEXT_COLLECTIVES}
_SCOPED_BASES = sorted(
    (c.value for c in TEXT_COLLECTIVES if c is not Collective.NONE), key=len, reverse=True
)
_UNMODELLED = {
    "ALLREDUCEALLTOALL": "ASTRA-sim's ALLREDUCEALLTOALL (an all-reduce then an all-to-all in one "
    "phase) is not modelled by hieropt"
}


def parse_collective(token: str) -> tuple[Collective, str | None]:
    """A collective name (case-insensitive) as (collective, scope): ``"alltoall_ep"`` ->
    (ALL_TO_ALL, ``"EP"``).

    Raises:
        ValueError: an unknown name or scope, or ``ALLREDUCEALLTOALL`` (not modelled); the message
            ends with the fix.
    """
    name = token.upper()
    kind = _NAMES.get(name)
    if kind is not None:
        return kind, None
    for base in _UNMODELLED:
        if name == base or name.startswith(base + "_"):
            raise ValueError(
                f"{_UNMODELLED[base]}; fix: split it into two layers, one ALLREDUCE and one "
                "ALLTOALL"
            )
    for base in _SCOPED_BASES:
        if name.startswith(base + "_"):
            scope = name[len(base) + 1:]
            if scope in COLLECTIVE_SCOPES:
                return _NAMES[base], scope
            raise ValueError(
                f"unknown collective scope '_{token[len(base) + 1 :]}' in '{token}'; fix: use "
                f"{base} or {' or '.join(f'{base}_{s}' for s in COLLECTIVE_SCOPES)}"
            )
    raise ValueError(
        f"unknown collective '{token}'; fix: use one of {', '.join(_NAMES)} (case-insensitive), "
        f"optionally scoped with {' or '.join('_' + s for s in COLLECTIVE_SCOPES)}"
    )


class TokenLines(Sequence):
    """(line number, tokens) of every non-blank line, from one ``str.split`` of the whole text and
    per-line token counts computed on its bytes with numpy: no Python object per line until a line
    is asked for."""

    _SPACE = np.zeros(256, dtype=bool)
    _SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True  # what str.split() splits ASCII text on

    def __init__(self, flat: list[str], numbers: np.ndarray, counts: np.ndarray, offset: int = 0):
        self.flat, self.numbers, self.counts, self.offset = flat, numbers, counts, offset
        self.starts = np.concatenate([[0], np.cumsum(counts)])

    @classmethod
    def of(cls, text: str) -> TokenLines | None:
        """The lines of ``text``, or None when it is not ASCII with plain \\n (or \\r\\n) line
        ends."""
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        if not text.isascii() or any(c in text for c in "\r\x0b\x0c\x1c\x1d\x1e"):
            return None
        data = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        space = cls._SPACE[data]
        begins = ~space
        begins[1:] &= space[:-1]
        # the line of each token: newlines before its first byte
        newlines = np.flatnonzero(data == 10)
        line = np.searchsorted(newlines, np.flatnonzero(begins))
        counts = np.bincount(line, minlength=newlines.size + 1)
        flat = text.split()
        if counts.sum() != len(flat):
            return None
        keep = np.flatnonzero(counts)
        return cls(flat, keep + 1, counts[keep])

    def __len__(self) -> int:
        return self.counts.size - self.offset

    def __getitem__(self, i):
        if isinstance(i, slice):
            if i.step is None and (i.start or 0) >= 0 and i.stop is None:
                return TokenLines(
                    self.flat, self.numbers, self.counts, self.offset + (i.start or 0)
                )
            return [self[j] for j in range(len(self))[i]]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        j = self.offset + i % n
        return int(self.numbers[j]), self.flat[self.starts[j]:self.starts[j + 1]]

    def rows(self, width: int) -> list[str] | None:
        """Every line's tokens in one flat list when every line has ``width`` of them, else None."""
        if not (self.counts[self.offset:] == width).all():
            return None
        return self.flat[self.starts[self.offset]:]


def layer_table(lines, customized: bool) -> LayerTable | None:
    """The layer lines as a :class:`LayerTable`, parsed a column at a time (10^5 lines in ~0.2 s),
    or None when any line is malformed (a wrong field count, a number that is not finite and >= 0,
    an unknown collective or policy)."""
    width = _FIELDS + 1 if customized else _FIELDS
    if isinstance(lines, TokenLines):
        flat = lines.rows(width)
        if flat is None:
            return None
    else:
        if any(len(toks) != width for _, toks in lines):
            return None
        flat = list(chain.from_iterable(toks for _, toks in lines))
    try:
        numbers = np.array([np.array(flat[k::width], dtype=float) for k in _NUMERIC]).T
    except ValueError:
        return None
    if not np.isfinite(numbers).all() or (numbers < 0).any():
        return None
    tokens = {t: None for j in _COLLECTIVES for t in set(flat[j::width])}
    code = {}
    for token in tokens:
        try:
            kind, scope = parse_collective(token)
        except ValueError:
            return None
        code[token] = (LayerTable.KINDS.index(kind), LayerTable.SCOPES.index(scope))
    both = {t: 8 * k + sc for t, (k, sc) in code.items()}  # kind and scope in one small integer
    n = len(flat) // width
    pairs = np.array([np.fromiter(map(both.__getitem__, flat[j::width]), dtype=np.int8, count=n)
                      for j in _COLLECTIVES]).T  # (n, 3)
    policies = None
    if customized:
        codes = {p: i for i, p in enumerate(LayerTable.LAYER_POLICY_CODES) if p is not None}
        try:
            policies = np.array([codes[p.upper()] for p in flat[12::width]], dtype=np.int8)
        except KeyError:
            return None
    try:
        return LayerTable(
            flat[0::width],
            numbers[:, [0, 2, 4]],
            numbers[:, [1, 3, 5]],
            pairs // 8,
            pairs % 8,
            numbers[:, 6],
            policies,
        )
    except ValueError:
        return None
