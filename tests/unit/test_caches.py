"""One cache per call: the package memoises only through :mod:`hieropt.cache` (checked over the
source with ``ast``: no ``functools`` memo decorator, no ``id()`` key, no module-level container
that the module fills, no private numpy or Pyomo name), and what one call keeps is never found by
another, even when a new object takes the memory (and the ``id``) of a freed one."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from hieropt.cache import Cache, Same, Table, current, scoped, use
from hieropt.io.instance import load_instance
from hieropt.model.timing import build_time_model
from hieropt.model.traffic import phase_traffic
from hieropt.spec import LayerTable
from hieropt.spec.space import constraint_for

PACKAGE = Path(__file__).resolve().parents[2] / "hieropt"

PROCESS_STATE = {
    ("cli/__init__.py", "_INTERRUPTED"): "the signal handler's note: the command was interrupted",
    ("solvers/highs.py", "_THREADS"): "the HiGHS scheduler's thread count in this process",
    ("solvers/highs.py", "_BANNER_SHOWN"): "whether this process showed the HiGHS banner",
    ("threads.py", "_CONTROLLER"): "the process's handle on its BLAS libraries' thread counts",
}
"""Module-level containers that hold a process's state, not results (file, name) -> what they hold.
"""

MUTATORS = frozenset({"append", "insert", "extend", "setdefault", "update", "pop", "popitem",
                      "clear", "add", "remove", "discard", "move_to_end", "appendleft"})
CONTAINERS = frozenset({"dict", "list", "set", "OrderedDict", "defaultdict", "deque",
                        "WeakKeyDictionary", "WeakValueDictionary"})
DISPLAYS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)
MEMO_DECORATORS = frozenset({"cache", "lru_cache", "cached"})


def _containers(tree: ast.Module) -> set[str]:
    """Module-level names bound to a mutable container (a display or a container's constructor)."""
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            v = node.value
            made = isinstance(v, DISPLAYS) or (
                isinstance(v, ast.Call) and _name(v.func) in CONTAINERS)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {t.id for t in targets if made and isinstance(t, ast.Name)}
    return out


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def problems(source: str, module: str) -> list[str]:
    """Every way ``source`` (module ``module``, a path relative to the package) keeps results
    outside :mod:`hieropt.cache` or reaches into numpy's or Pyomo's private names, one line each
    (empty: clean)."""
    tree = ast.parse(source)
    filled = {n for n in _containers(tree) if (module, n) not in PROCESS_STATE}
    pyomo = any(isinstance(n, ast.Import | ast.ImportFrom) and "pyomo" in ast.unparse(n)
                for n in ast.walk(tree))
    out = []
    for n in ast.walk(tree):
        why = _memo(n, filled, module) or _private(n, pyomo)
        if why:
            out.append(f"{module}:{getattr(n, 'lineno', 0)}: {why}")
    return out


def _memo(n: ast.AST, filled: set[str], module: str) -> str | None:
    """Why node ``n`` keeps results outside :mod:`hieropt.cache`, or None."""
    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
        for d in n.decorator_list:
            if _name(d.func if isinstance(d, ast.Call) else d) in MEMO_DECORATORS:
                return f"memo decorator on {n.name}; use hieropt.cache"
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "id":
        return "id() (an identity key dies with its object); key by value or hieropt.cache.Same"
    if isinstance(n, ast.Attribute) and n.attr == "__hash__" and _name(n.value) == "object":
        if module != "cache.py":
            return "object.__hash__ (an identity key); use hieropt.cache.Same"
    call = isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATORS
    if call and isinstance(n.func.value, ast.Name) and n.func.value.id in filled:
        return f"module-level {n.func.value.id} filled by .{n.func.attr}(); use hieropt.cache"
    item = isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store | ast.Del)
    if item and isinstance(n.value, ast.Name) and n.value.id in filled:
        return f"module-level {n.value.id} filled by item assignment; use hieropt.cache"
    return None


def _private(n: ast.AST, pyomo: bool) -> str | None:
    """Why node ``n`` uses a private name of numpy or Pyomo (any private attribute in a module using
    Pyomo, except on ``self``, ``cls`` and ``os``), or None."""
    if isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] in ("numpy", "pyomo"):
        parts = (n.module or "").split(".") + [a.name for a in n.names]
        if any(p.startswith("_") for p in parts):
            return f"private name of {n.module}"
    private = isinstance(n, ast.Attribute) and n.attr[:1] == "_" and n.attr[:2] != "__"
    if pyomo and private:
        if _name(n.value) not in ("self", "cls", "os"):
            return f"private attribute {ast.unparse(n)} in a module using Pyomo"
    return None


def test_the_package_memoises_only_through_the_cache():
    found = [p for path in sorted(PACKAGE.rglob("*.py"))
             for p in problems(path.read_text(encoding="utf-8"),
                               path.relative_to(PACKAGE).as_posix())]
    assert found == []


@pytest.mark.parametrize("source, problem", [
    ("from functools import lru_cache\n@lru_cache(maxsize=8)\ndef f(x):\n    return x\n",
     "memo decorator on f"),
    ("import functools\n@functools.cache\ndef f(x):\n    return x\n", "memo decorator on f"),
    ("_SEEN = {}\ndef f(x):\n    _SEEN[x] = 1\n", "module-level _SEEN filled by item assignment"),
    ("_LAST: list = []\ndef f(x):\n    _LAST.insert(0, x)\n",
     "module-level _LAST filled by .insert()"),
    ("from collections import OrderedDict\n_M = OrderedDict()\ndef f(x):\n    _M.move_to_end(x)\n",
     "module-level _M filled by .move_to_end()"),
    ("def f(x, memo):\n    return memo.get(id(x))\n", "id()"),
    ("def f(x):\n    return object.__hash__(x)\n", "object.__hash__"),
    ("from numpy.linalg import _umath_linalg\n", "private name of numpy.linalg"),
    ("from numpy.linalg._umath_linalg import solve1\n",
     "private name of numpy.linalg._umath_linalg"),
    ("import pyomo.environ as pyo\ndef f(m):\n    return m.x._data\n",
     "private attribute m.x._data"),
])
def test_the_check_finds_each_kind_of_cache(source, problem):
    found = problems(source, "x.py")
    assert len(found) == 1 and problem in found[0], found


def test_the_check_passes_constants_and_the_cache():
    clean = ("RULES = {'a': 1}\nNAMES = ['a']\ndef f(x):\n    local = {}\n"
             "    local[x] = RULES.get(x)\n"
             "    return current().memo('f', (Same(x),), lambda: x)\n")
    assert problems(clean, "x.py") == []


def test_a_table_drops_the_least_recent_entries():
    t = Table(count=2)
    t.put("a", 1)
    t.put("b", 2)
    assert t.get("a") == 1  # (now the most recent)
    t.put("c", 3)
    assert t.get("b") is None and t.get("a") == 1 and t.get("c") == 3 and len(t) == 2


def test_same_compares_by_identity_and_holds_its_object():
    a, b = np.zeros(3), np.zeros(3)
    assert Same(a) == Same(a) and Same(a) != Same(b) and hash(Same(a)) == hash(Same(a))
    key = Same(np.ones(2))  # (its array is alive while the key is)
    assert key.obj.sum() == 2.0


def test_a_table_replaces_a_key_and_counts_its_elements_once():
    t = Table(count=3, elements=10)
    big = np.zeros(6)
    t.put("a", big)
    t.put("b", np.zeros(2))
    assert t.put("a", big) is big and t.size == 8  # (the same value again: counted once)
    t.put("c", np.zeros(1))
    assert list(t.items) == ["b", "a", "c"]  # (the replaced key is the most recent)
    t.put("d", np.zeros(5))  # (over 10 elements: the least recent go until it fits)
    assert list(t.items) == ["c", "d"] and t.size == 6


def test_models_with_the_same_fields_share_a_memo_within_a_cache():
    from hieropt.spec.base import RECENT
    from hieropt.spec.instance import Bound

    fields = [np.zeros(2) for _ in range(RECENT + 1)]
    built = []

    def value(i):
        return Bound.model_construct().memo("_v", (fields[i], "x"), lambda: built.append(i) or i)

    with use():
        assert value(0) == 0 and value(0) == 0 and built == [0]  # (another model, same fields)
        for i in range(1, RECENT + 1):
            assert value(i) == i
        assert value(RECENT) == RECENT and len(built) == RECENT + 1
        assert value(0) == 0 and built[-1] == 0  # (the oldest of RECENT + 1 was dropped)
    with use():
        assert value(1) == 1 and built[-1] == 1  # (nothing kept between calls)
    assert Bound.model_construct().memo("_v", (np.zeros(2), "x"), lambda: "own") == "own"


def test_memo_keeps_none_and_not_errors():
    c, calls = Cache(), []

    def build():
        calls.append(1)
        return None

    assert c.memo("t", 1, build) is None and c.memo("t", 1, build) is None and len(calls) == 1
    with pytest.raises(ValueError):
        c.memo("t", 2, lambda: int("x"))
    assert c.memo("t", 2, lambda: 5) == 5


def test_a_call_keeps_nothing_for_the_next():
    assert current() is not current()  # (outside any call: a new, empty cache each time)
    with use() as outer:
        assert current() is outer
        with use() as inner:
            assert inner is outer  # (a nested call shares its caller's)
        with use(Cache()) as other:
            assert other is not outer and current() is other
        assert current() is outer
    seen = []
    f = scoped(lambda: seen.append(current()))
    f()
    f()
    assert seen[0] is not seen[1]
    g = scoped(lambda cache=None: current())
    mine = Cache()
    assert g(cache=mine) is mine
    with use() as outer:
        assert g() is outer and g(cache=outer) is outer  # (a call inside a call: the caller's)
        assert g(cache=mine) is mine and current() is outer


def test_constraints_parsed_per_call():
    with use():
        a = constraint_for("sum(bw) <= 100", 2)
        assert constraint_for("sum(bw) <= 100", 2) is a
    assert constraint_for("sum(bw) <= 100", 2) is not a and constraint_for("sum(bw) <= 100", 2) == a


def _scaled(inst, k: float):
    """A copy of ``inst`` whose workload sends ``k`` times the bytes (a new table, the other columns
    shared)."""
    t = LayerTable.from_layers(inst.workload.layers)
    cols = {f: getattr(t, f)
            for f in ("compute_ns", "kinds", "scopes", "update_ns", "policies", "groups")}
    table = LayerTable(list(t.names), size_bytes=t.size_bytes * k, **cols)
    w = inst.workload.model_copy(update={"layers": table})
    return inst.model_copy(update={"workload": w})


def test_copies_with_other_bytes_never_see_each_others_traffic():
    """Each copy's table is freed before the next is made, so a new table may take a freed one's
    address (and ``id``): an identity key that did not hold its object would hand the next copy the
    last one's traffic."""
    a = load_instance("instances/gpt3-4d.toml")
    base = phase_traffic(a)
    with use() as cache:  # (one sweep's cache)
        for k in range(1, 25):
            assert np.array_equal(phase_traffic(_scaled(a, float(k))), k * base), k
        assert len(cache.table("phase_traffic")) <= 64
    for k in (3.0, 5.0):  # and in calls of their own
        assert np.array_equal(phase_traffic(_scaled(a, k)), k * base)


def test_two_solves_share_no_entry():
    """Two unrelated top-level calls: the second's cache holds none of the first's objects, and its
    time model of a copy with other bytes is its own."""
    a = load_instance("instances/gpt3-4d.toml")
    caches = []
    tm_a = scoped(lambda inst: (caches.append(current()), build_time_model(inst))[1])(a)
    b = _scaled(a, 2.0)
    tm_b = scoped(lambda inst: (caches.append(current()), build_time_model(inst))[1])(b)
    first, second = caches
    assert first is not second
    kept = [k.obj for t in second.tables.values() for key in t.items
            for k in (key if isinstance(key, tuple) else (key,)) if isinstance(k, Same)]
    assert kept and not any(o is a.workload.table or o is a.workload for o in kept)
    assert tm_b is not tm_a and np.allclose(tm_b.terms_bytes.sum(), 2 * tm_a.terms_bytes.sum())


def test_copies_share_what_their_fields_give():
    """A copy with another objective finds its original's time model (outside any call: the memo the
    two share), one with other bytes builds its own, and the original keeps its own."""
    a = load_instance("instances/gpt3-4d.toml")
    b = a.model_copy(update={"objective": "performance_per_cost"})
    tm = build_time_model(b)
    assert build_time_model(a) is tm
    c = _scaled(a, 2.0)
    assert build_time_model(c) is not tm
    assert np.allclose(build_time_model(c).terms_bytes.sum(), 2 * tm.terms_bytes.sum())
    assert build_time_model(a) is tm and build_time_model(b) is tm


def test_a_design_evaluated_twice_in_a_call_is_evaluated_once():
    """The evaluator keeps a breakdown per instance object and bandwidth values within a call: an
    equal array finds it, and its bandwidths are a read-only copy that the caller's later writes do
    not reach; another instance object, other values or another call evaluate afresh."""
    from hieropt.model.timing import evaluate

    a = load_instance("instances/gpt3-4d.toml")
    bw = np.array([200.0, 150.0, 100.0, 50.0])
    with use():
        first = evaluate(a, bw)
        assert evaluate(a, bw.copy()) is first
        assert first.bw_gbps is not bw and not first.bw_gbps.flags.writeable
        bw[0] = 250.0
        assert first.bw_gbps.tolist() == [200.0, 150.0, 100.0, 50.0]
        other = evaluate(a, bw)
        assert other is not first and other.iteration_time_ns < first.iteration_time_ns
        copy = a.model_copy(update={"objective": "min_cost"})
        again = evaluate(copy, np.array([200.0, 150.0, 100.0, 50.0]))
        assert again is not first and again.iteration_time_ns == first.iteration_time_ns
    fresh = evaluate(a, np.array([200.0, 150.0, 100.0, 50.0]))
    assert fresh is not first and fresh.iteration_time_ns == first.iteration_time_ns


def test_a_time_model_keeps_its_values_within_a_call():
    """T of a model with max nodes at equal bandwidths is computed once per call: T = 2 + y0,
    y0 = max(1 + tau0, 5), tau0 = 100 bytes / 10 GB/s = 10 ns: 13 ns; at 50 GB/s, tau0 = 2:
    y0 = 5, T = 7 ns."""
    from hieropt.model.terms import Piece, TimeModel

    tm = TimeModel(constant_ns=2.0, terms_bytes=np.array([[100.0, 0.0]]),
                   terms_latency_ns=np.zeros((1, 2)), term_weights=np.zeros(1),
                   nodes=((Piece(1.0, ((0, 1.0),)), Piece(5.0, ())),), node_weights=np.ones(1),
                   dimension_mode="concurrent", n_collectives=1)
    with use() as cache:
        assert tm.time_ns(np.array([10.0, 1.0])) == 13.0
        assert tm.time_ns([10.0, 1.0]) == 13.0
        assert tm.time_ns(np.array([50.0, 1.0])) == 7.0
        assert len(cache.table("model times")) == 2
    assert tm.time_ns(np.array([10.0, 1.0])) == 13.0
