"""Shared pieces of the spec models (one home): the frozen, strict base model and the constrained
types."""

from __future__ import annotations

import math
import operator
import re
import types
from functools import cached_property
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..cache import current
from ..names import BLOCKS

Block = Literal[BLOCKS]
"""A building block: one of :data:`hieropt.names.BLOCKS` (the literal is built from that tuple)."""

NonNegFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""A finite float >= 0."""

MAX_EXACT_INT = 2**53
"""The largest integer a float holds exactly: counts beyond it (NPUs, widths, items) are refused,
since every byte and FLOP figure derived from them is a float."""

MAX_NPUS = 10**9
"""Most NPUs along one dimension (any real system has far fewer; the bound keeps counts exact in
floating point)."""


def _numeric(annotation: Any) -> bool:
    """Whether a field holds numbers: int or float, optional, or a tuple of them."""
    if annotation in (int, float):
        return True
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _numeric(args[0])
    if origin in (Union, types.UnionType):
        return any(_numeric(a) for a in args if a is not type(None))
    if origin in (tuple, list):
        return bool(args) and _numeric(args[0])
    return False


def _whole(annotation: Any) -> bool:
    """Whether a field holds whole numbers only: int (not also float), optional, or a tuple of
    them."""
    if annotation is int:
        return True
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _whole(args[0])
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        return bool(rest) and all(_whole(a) for a in rest)
    if origin in (tuple, list):
        return bool(args) and all(_whole(a) for a in args if a is not Ellipsis)
    return False


def class_fact(cls: type, name: str, build: Any) -> Any:
    """``build()``, a fact of the class ``cls`` itself (derived from its fields), computed once and
    kept on the class as the attribute ``__hieropt_<name>__`` (the class's own: a subclass computes
    its own)."""
    attr = f"__hieropt_{name}__"
    fact = cls.__dict__.get(attr)
    if fact is None:
        fact = build()
        setattr(cls, attr, fact)
    return fact


def _whole_fields(cls: type) -> frozenset[str]:
    return class_fact(cls, "whole", lambda: frozenset(
        name for name, f in cls.model_fields.items() if _whole(f.annotation)))


_NUMBER_WITH_UNIT = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\d\s].*)")
"""A number followed by a unit or other text (``80GB``, ``500 GB/s``): the number, the rest."""

MULTIPLIERS = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "B": 1e9, "T": 1e12}
"""A suffix that multiplies (``10M`` $, ``15T`` tokens; ``B`` for billion)."""
TIME_UNITS_NS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "min": 6e10, "h": 3.6e12}
"""Time units in ns, for a time given with its unit to a field named ``..._ns`` / ``_ms`` /
``_s``."""
FIELD_UNITS = {"gbps": ("gb/s", "gbps"), "gb": ("gb",), "gib": ("gib",), "w": ("w",),
               "mw": ("mw",), "usd": ("$", "usd"), "tflops": ("tflop/s", "tflops")}
"""A field's unit (the last part of its name) and the ways a user writes that unit."""


def _fix_for(name: str, number: str, unit: str) -> str | None:
    """The plain number that ``number`` followed by ``unit`` is in the unit of field ``name``, or
    None when it cannot be told."""
    suffix = name.rsplit("_", 1)[-1].lower()
    if unit in ("k", "K") and float(number) * 1024 == int(float(number) * 1024):
        x = float(number)
        return f"{x * 1e3:.6g}, or {x * 1024:.6g} if {number}Ki (x 1,024) is meant"
    if unit in MULTIPLIERS:
        return f"{float(number) * MULTIPLIERS[unit]:.6g}"
    if suffix in ("ns", "ms", "s") and unit in TIME_UNITS_NS:
        return f"{float(number) * TIME_UNITS_NS[unit] / TIME_UNITS_NS[suffix]:.6g}"
    if unit.lower() in FIELD_UNITS.get(suffix, ()):
        return number
    gib = 2.0**30 / 1e9  # (GB in a GiB)
    if (name.rsplit(".", 1)[-1], unit.lower()) == ("hbm_gib", "gb"):  # (vendors quote binary
        # HBM capacities in GB)
        return (f"{number} if {number}{unit} is a vendor's memory capacity (binary: an 80 GB H100 "
                f"holds 80 GiB), or {float(number) / gib:.6g} for {number}e9 bytes")
    if (suffix, unit.lower()) in (("gib", "gb"), ("gb", "gib")):
        return f"{float(number) / gib if suffix == 'gib' else float(number) * gib:.6g}"
    return None


_LEADING_ZEROS = re.compile(r"[-+]?0\d+")
"""A whole number written with leading zeros (``08``), which TOML does not read as a number."""


def text_for_number(name: str, text: str) -> str:
    """The problem and fix (``"<field>: <problem>; fix: <fix>"``) of ``text`` given to the numeric
    field ``name``: a whole number with leading zeros (``08``) is told to write it without them, a
    quoted number (``"1e7"``) to drop the quotes, a percentage (``50%``) to write the fraction
    (``0.5``); a number with a multiplier (``10M``: 1e+07), with a time unit the field's differs
    from (``1.3s`` to a field in ns: 1.3e+09), with GB for GiB or back (``80GB`` to ``hbm_gib``:
    80 if it is a vendor's capacity, which is binary, or 74.5058 for 80e9 bytes; ``4GB`` to
    ``hbm_reserve_gib``: 3.72529) or with the field's own unit (``80GB`` to ``hbm_gb``) gets the
    plain number in the field's unit; any other text is told to write the number in the field's
    unit."""
    if _LEADING_ZEROS.fullmatch(text):  # (TOML refuses 08: read as a word)
        return (f"{name}: {text!r} is text, not a number: a number has no leading zeros; fix: "
                f"write {int(text)}")
    try:
        float(text)
    except ValueError:
        pass
    else:
        from ..units import number_text_fix, plain_number

        if plain_number(text) is None and (hint := number_text_fix(text)):
            return f"{name}: {text!r} is text, not a plain decimal number; fix: {hint}"
        return f"{name}: {text!r} is text, not a number; fix: write {text.strip()} without quotes"
    m = _NUMBER_WITH_UNIT.fullmatch(text)
    if m is None:
        digits = re.findall(r"\d+(?:\.\d+)?", text)
        if len(digits) == 1:  # (a word around one number: zero1, stage-2)
            return (f"{name}: {text!r} is text, not a number; fix: write the number alone, "
                    f"{digits[0]} (no words, no quotes)")
        return f"{name}: {text!r} is text, not a number; fix: write the number without quotes"
    if m[2].strip() == "%":
        return (f"{name}: {text!r} is text, not a number: a percentage is a fraction; fix: write "
                f"{float(m[1]) / 100:g} for {m[1]} %")
    plain = _fix_for(name, m[1], m[2].strip())
    head = (f"{name}: {text!r} is text, not a number: a number takes no unit, the unit is implied "
            f"by the field's name; fix: ")
    if plain is None:
        return head + f"write the number in the unit of '{name}', without quotes"
    return head + f"write {plain} (in the unit of '{name}')"


def check_number_fields(cls: type[BaseModel], data: Any) -> Any:
    """``data`` (the raw input of model ``cls``) unchanged, after checking its numeric fields: a
    number given as text (``npus = "32"``) or as true / false is an error, never converted; a field
    of whole numbers (a count or a parallel degree: ``int``, optional, or a tuple of them) given a
    float, even an integral one (``tp = [8.0]``), is an error, never truncated or rounded.

    Raises:
        ValueError: ``"<field>: <problem>; fix: <fix>"`` (pydantic reports it with the model's
            location).
    """
    if not isinstance(data, dict):
        return data
    whole = _whole_fields(cls)
    for name in _numeric_fields(cls):
        v = data.get(name)
        items = v if isinstance(v, list | tuple) else (v,)
        bad = next((x for x in items if _not_a_number(x)), None)
        if bad is not None:
            if isinstance(bad, bool):
                raise ValueError(f"{name}: {str(bad).lower()} is a boolean, not a number; "
                                 "fix: write a number")
            raise ValueError(text_for_number(name, bad))
        if name in whole:
            bad = next((x for x in items if isinstance(x, float)), None)
            if bad is not None:
                if bad.is_integer() and abs(bad) < MAX_EXACT_INT:
                    raise ValueError(
                        f"{name}: {bad!r} is not a whole number (it counts NPUs, degrees or "
                        "items); "
                        f"fix: write {int(bad)} (no decimal point)"
                    )
                # (1e20: integral, but as a float beyond MAX_EXACT_INT it is not exact)
                if bad.is_integer():
                    raise ValueError(
                        f"{name}: {bad!r} is written as a decimal number, and this field "
                        "counts NPUs, "
                        "degrees or items; fix: give a whole number of a real model's size, "
                        "in digits"
                    )
                raise ValueError(
                    f"{name}: {bad!r} is not a whole number (it counts NPUs, degrees or items); "
                    "fix: give a whole number"
                )
    return data


def _cached_names(cls: type) -> tuple[str, ...]:
    return class_fact(cls, "cached", lambda: tuple(
        name for klass in cls.__mro__ for name, v in vars(klass).items()
        if isinstance(v, cached_property)))


def _numeric_fields(cls: type) -> tuple[str, ...]:
    return class_fact(cls, "numeric", lambda: tuple(
        name for name, f in cls.model_fields.items() if _numeric(f.annotation)))


def _not_a_number(v: Any) -> bool:
    return isinstance(v, str | bytes | bool)


RECENT = 4
"""Values :meth:`Frozen.memo` keeps per name beyond the model itself: in the memo a model shares
with its copies (``model_copy(update=...)`` with another objective or budget: each solve with an
override makes one), and in the active cache (:mod:`hieropt.cache`), for models of a sweep that
share fields."""
MEMO_NAMES = 4096
"""Names whose last :data:`RECENT` entries the active cache keeps for :meth:`Frozen.memo` (one
list per name, most recent first, updated in place)."""
FAMILY = "__hieropt_family__"
"""Key, in a model's ``__dict__``, of the memo it shares with its copies
(:meth:`Frozen.model_copy`)."""


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))


class Frozen(BaseModel):
    """Base of every input model: immutable (hashable) and strict (an unknown key is an error, never
    ignored; a number given as text, ``npus = "32"``, or as true / false is an error, never
    converted; a float for a whole number, ``tp = [8.0]``, is an error:
    :func:`check_number_fields`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _numbers_are_numbers(cls, data: Any) -> Any:
        return check_number_fields(cls, data)

    def memo(self, name: str, key: tuple, build: Any) -> Any:
        """``build()``, computed once per model and ``key`` (a tuple of the fields it derives from,
        compared by identity, so a copy with other fields computes its own) and kept on the model
        (the entry holds the key's objects, so their identities stay theirs); the last
        :data:`RECENT` keys per name also in the memo the model shares with its copies and in the
        active cache, where other models with those fields find it: arrays derived from a frozen
        model (prices, constraint matrices) that a solve reads many times. The value must not be
        modified."""
        cached = self.__dict__.get(name)
        if (
            cached is not None
            and len(cached[0]) == len(key)
            and all(map(operator.is_, cached[0], key))
        ):
            return cached[1]  # (the common case)
        family = self.__dict__.get(FAMILY)
        kin = family.setdefault(name, []) if family is not None else None
        # (made by a copy or the original)
        entry = next((e for e in kin if _same(e[0], key)), None) if kin else None
        if entry is None:
            # (made for a sweep's model with these fields: the active cache's last few of this name)
            recent = current().memo("model memo", name, list, MEMO_NAMES)
            for i, entry in enumerate(recent):
                if _same(entry[0], key):
                    if i:
                        recent.insert(0, recent.pop(i))
                    break
            else:
                entry = (key, build())
                recent.insert(0, entry)
                del recent[RECENT:]
            if family is not None:
                kin[:] = [entry, *kin[:RECENT - 1]]
        self.__dict__[name] = entry
        return entry[1]

    def memo_by_value(self, name: str, key: tuple, values: Any, build: Any, size: int = 16) -> Any:
        """:meth:`memo` for a value that also depends on plain values (floats, tuples, bytes;
        compared by equality, not identity): ``build()`` once per model, ``key`` (by identity) and
        ``values`` (hashable), the last ``size`` ``values`` kept per ``key``. The value must not be
        modified."""
        kept = self.memo(name, key, dict)
        if values in kept:
            return kept[values]
        value = kept[values] = build()
        while len(kept) > size:
            del kept[next(iter(kept))]
        return value

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any:
        """pydantic's ``model_copy``; with ``update``, values cached from the old fields
        (``cached_property``, e.g. :attr:`hieropt.spec.Workload.table`) are dropped from the copy
        instead of describing the old fields. The copy shares the model's memo (:meth:`memo`; its
        entries are keyed by the fields they derive from, so a copy with other fields finds none of
        the old ones)."""
        self.__dict__.setdefault(FAMILY, {})
        out = super().model_copy(update=update, deep=deep)
        if update:
            for name in _cached_names(type(self)):
                out.__dict__.pop(name, None)
        return out


MAX_REGRET = 1.0
"""Upper limit (exclusive) of ``max_regret``, the allowed slowdown of every workload against its own
optimum as a fraction (0.08 = 8 %): a value of 1 or more (a 100 % slowdown or worse) is almost
always a percentage written for a fraction (``8`` for 8 %), which would ask for 800 %."""


def check_max_regret(value: float) -> str | None:
    """Why ``value`` is no valid ``max_regret`` (a fraction in [0, :data:`MAX_REGRET`)), as
    ``"<problem>; fix: <fix>"``; None when it is valid."""
    if not (math.isfinite(value) and 0 <= value < MAX_REGRET):
        return (
            f"{value:g} is outside [0, {MAX_REGRET:g}): it is a fraction of each workload's "
            "own optimum; fix: "
            f"give the allowed slowdown as a fraction, e.g. 0.08 for 8 % (not 8)"
        )
    return None
