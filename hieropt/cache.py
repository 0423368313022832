"""The one cache of hieropt: a :class:`Cache` holds named memo tables, each bounded (least recently
used entries dropped first), keyed by values. One cache lives for one top-level call: :func:`use`
makes it the active cache of a block (a sweep passes its own down to every solve it runs, so the
solves share their repeated work, a time model or a phase table's traffic), and :func:`current`
returns the active cache, or outside any block a new empty one that nobody keeps. Nothing is kept
between unrelated calls, so no result computed for one problem is found by another.

Keys are values: numbers, strings, tuples, frozen models. An object that is not hashable, or whose
hash would cost more than the work it saves (a workload's phase table, a frozen model holding large
tuples), enters a key as :class:`Same`: compared by identity while the table holds it. That is safe
because the entry keeps the object alive: no other object can take its place (and its identity)
while the entry exists, and the objects keyed so are immutable (frozen models, read-only arrays), so
a hit always describes the object asked about.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any, TypeVar

from .threads import one_blas_thread

T = TypeVar("T")

COUNT = 64
"""Entries a table keeps unless its first user asks for another bound."""

_MISSING = object()


class Same:
    """A key part standing for one object by identity (see the module docstring): equal to another
    :class:`Same` of the very same object only. Holds the object, so the identity cannot be reused
    while a key holds it."""

    __slots__ = ("obj", "_hash")

    def __init__(self, obj: Any):
        self.obj = obj
        self._hash = object.__hash__(obj)  # identity hash, valid while self.obj is held (above)

    def __eq__(self, other: object) -> bool:
        return type(other) is Same and other.obj is self.obj

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Same({type(self.obj).__name__})"


def size_of(value: Any) -> int:
    """What a value weighs against a table's ``elements`` bound: the element count of a numpy array
    (``.size``), the sum over a tuple's items, 1 for anything else."""
    if isinstance(value, tuple):
        return sum(size_of(v) for v in value)
    n = getattr(value, "size", None)
    return n if isinstance(n, int) else 1


class Table:
    """One named memo table: at most ``count`` entries and, when ``elements`` is given, at most that
    many array elements in all (:func:`size_of`; a large workload's arrays take megabytes); the
    least recently used entry goes first (the last entry always stays)."""

    def __init__(self, count: int = COUNT, elements: int | None = None):
        self.count, self.elements, self.size = count, elements, 0
        self.items: OrderedDict[Hashable, Any] = OrderedDict()

    def __len__(self) -> int:
        return len(self.items)

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The value kept for ``key`` (made the most recent), or ``default``."""
        items = self.items
        hit = items.get(key, _MISSING)
        if hit is _MISSING:
            return default
        if len(items) > 1:  # (the order matters only among several entries)
            items.move_to_end(key)
        return hit

    def put(self, key: Hashable, value: T) -> T:
        """Keep ``value`` for ``key`` (replacing any, made the most recent); returns ``value``."""
        items = self.items
        n = len(items)
        old = items.setdefault(key, value)  # (one lookup when the key is new, the common case)
        if len(items) == n:  # (it was there)
            items[key] = value
            items.move_to_end(key)
        else:
            old = _MISSING
        if self.elements is None:
            while len(items) > max(self.count, 1):
                items.popitem(last=False)
            return value
        self.size += size_of(value) - (size_of(old) if old is not _MISSING else 0)
        while len(items) > 1 and (len(items) > self.count or self.size > self.elements):
            _, gone = items.popitem(last=False)
            self.size -= size_of(gone)
        return value


class Cache:
    """The memo tables of one top-level call or sweep, by name (module docstring). Create one and
    pass it to a sweep (``explore(..., cache=c)``) or activate it with :func:`use` to share work
    between calls; by default each call makes its own."""

    def __init__(self) -> None:
        self.tables: dict[str, Table] = {}

    def table(self, name: str, count: int = COUNT, elements: int | None = None) -> Table:
        """The table ``name``, made with the bounds ``count`` and ``elements`` (:class:`Table`) on
        first use."""
        t = self.tables.get(name)
        if t is None:
            t = self.tables[name] = Table(count, elements)
        return t

    def memo(self, name: str, key: Hashable, build: Callable[[], T], count: int = COUNT,
             elements: int | None = None) -> T:
        """``build()`` once per ``key`` in table ``name`` (made with ``count`` and ``elements`` on
        first use). The value is shared by every later caller: it must not be modified (arrays: made
        read-only by the caller)."""
        t = self.tables.get(name)
        if t is None:
            t = self.tables[name] = Table(count, elements)
        items = t.items  # (Table.get and Table.put inlined for the common cases: a hot path)
        hit = items.get(key, _MISSING)
        if hit is not _MISSING:
            if len(items) > 1:
                items.move_to_end(key)
            return hit
        value = build()
        if t.elements is None and len(items) < t.count and key not in items:
            items[key] = value  # (a new key in a table with room: nothing to drop)
            return value
        return t.put(key, value)

    def __len__(self) -> int:
        """Entries in all tables."""
        return sum(len(t) for t in self.tables.values())


_ACTIVE: ContextVar[Cache | None] = ContextVar("hieropt_cache", default=None)
"""The cache of the running top-level call (None outside any); the variable holds no entries itself.
"""


def current() -> Cache:
    """The active cache (:func:`use`), or outside any call a new empty one that nobody keeps
    (nothing is shared)."""
    c = _ACTIVE.get()
    return c if c is not None else Cache()


@contextmanager
def use(cache: Cache | None = None) -> Iterator[Cache]:
    """Make ``cache`` the active cache while the block runs (then the one before it again). Without
    ``cache``: the active one if a caller opened one (a sweep's solves share the sweep's), else a
    new one for this block. The block runs with one BLAS thread
    (:func:`hieropt.threads.one_blas_thread`), as a :func:`scoped` call does."""
    if cache is None:
        active = _ACTIVE.get()
        cache = active if active is not None else Cache()
    token = _ACTIVE.set(cache)
    try:
        with one_blas_thread():
            yield cache
    finally:
        _ACTIVE.reset(token)


def scoped(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` run inside :func:`use`: with the cache its caller passes as the keyword ``cache`` (a
    sweep's own argument, which ``fn`` declares and documents), else its callers' active cache, else
    a new one per call. A top-level call's repeated work is shared within the call and with nothing
    else; it runs with one BLAS thread (:func:`hieropt.threads.one_blas_thread`)."""

    @wraps(fn)
    def call(*args: Any, **kwargs: Any) -> T:
        cache, active = kwargs.get("cache"), _ACTIVE.get()
        if active is not None and (cache is None or cache is active):
            return fn(*args, **kwargs)  # (a call inside a call: its cache is active already)
        token = _ACTIVE.set(cache if cache is not None else Cache())
        try:
            with one_blas_thread():
                return fn(*args, **kwargs)
        finally:
            _ACTIVE.reset(token)

    return call


__all__ = ["Cache", "Same", "Table", "COUNT", "current", "use", "scoped", "size_of"]
