"""The import rule of docs/architecture.md, checked over the source (ast, no import): every module
has a stage rank and imports only modules of its own or an earlier stage; no import circle (lazy
imports inside functions count too); no private name (``_x``) imported from another module; no
module over :data:`MAX_LINES` lines.

The checker is a plain function of a source tree, so the last tests feed it small synthetic packages
and show that it fails on an upward import, a circle, a private import and an over-long module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "hieropt"
MAX_LINES = 600
"""A module longer than this (at 100 columns) holds more than one concept: split it by concept."""

STAGES: tuple[tuple[str, ...], ...] = (
    ("errors", "units", "names", "version", "lazy", "progress", "threads", "cache"),  # 0
    ("spec",),  # 1: the problem statement (pydantic)
    ("workloads",),  # 2: workload generators -> spec.Workload
    ("model",),  # 3: physics: traffic, timing, cost, mapping, catalog (numpy, no Pyomo)
    ("io",),  # 4: readers and writers (may use model helpers such as the mapping derivation)
    ("result",),  # 5: Solution, Status
    ("verify",),  # 6: independent certificate (never formulation or solvers)
    ("formulation",),  # 7: Pyomo models
    ("solvers",),  # 8: HiGHS loops, objective dispatch, provisioning
    ("studies",),  # 9: compare, heuristics, explore (use solvers, never api)
    ("report",),  # 10: presentation (strings, tables, dicts, figures, HTML)
    ("api",),  # 11: the library facade
    ("cli",),  # 12: the command line
    ("__init__", "__main__"),  # 13: the package root (lazy re-exports) and ``python -m hieropt``
)


def stage_of(module: str, root: str, stages=STAGES) -> int:
    """Stage rank of ``module`` (dotted, starting with ``root``); KeyError for a module no stage
    names."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for rank, names in enumerate(stages):
        if top in names:
            return rank
    raise KeyError(
        f"{module}: no stage in STAGES names '{top}'; add it to docs/architecture.md and STAGES"
    )


def module_name(path: Path, pkg_dir: Path) -> str:
    rel = path.relative_to(pkg_dir.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST, module: str, is_pkg: bool, known: set[str]):
    """Yield (lineno, imported module, [imported names]) for every hieropt import, resolving
    relative ones."""
    package = module if is_pkg else module.rsplit(".", 1)[0]
    root = module.split(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == root:
                    yield node.lineno, a.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != root:
                continue
            names = [a.name for a in node.names]
            sub = [n for n in names if f"{target}.{n}" in known]  # `from pkg import submodule`
            for n in sub:
                yield node.lineno, f"{target}.{n}", []
            rest = [n for n in names if n not in sub]
            if rest or not sub:
                yield node.lineno, target, rest


def check(
    pkg_dir: Path,
    stages=STAGES,
    max_lines: int = MAX_LINES,
    allow_long: frozenset[str] = frozenset(),
):
    """All rule violations in the package at ``pkg_dir``, as sorted one-line strings (empty: the
    layout is clean)."""
    files = {module_name(p, pkg_dir): p for p in sorted(pkg_dir.rglob("*.py"))}
    root = pkg_dir.name
    problems: list[str] = []
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        text = path.read_text(encoding="utf-8")
        n_lines = text.count("\n")
        if n_lines > max_lines and mod not in allow_long:
            problems.append(f"{mod}: {n_lines} lines (> {max_lines}); split it by concept")
        rank = stage_of(mod, root, stages)
        tree = ast.parse(text, filename=str(path))
        for lineno, target, names in _imports(tree, mod, path.name == "__init__.py", set(files)):
            if target not in files:
                problems.append(
                    f"{mod}:{lineno}: imports {target}, which is not a module of {root}"
                )
                continue
            if target != mod:
                graph[mod].add(target)
            if stage_of(target, root, stages) > rank:
                problems.append(f"{mod}:{lineno}: imports {target} of a later stage "
                                f"({stage_of(target, root, stages)} > {rank})")
            for n in names:
                if n.startswith("_") and not (n.startswith("__") and n.endswith("__")):
                    problems.append(f"{mod}:{lineno}: imports the private name {n} from {target}")
    problems += [f"import circle: {' -> '.join(c)}" for c in _circles(graph)]
    return sorted(problems)


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One representative cycle per strongly connected component of more than one module
    (Tarjan)."""
    edges = graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(_cycle_through(min(comp), set(comp), edges))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def _cycle_through(start: str, comp: set[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest import path start -> ... -> start inside one strongly connected component (breadth
    first)."""
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges[v] & comp):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [start] + path[::-1][1:] + [start] if v != start else [start, start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError("not a cycle")


def test_package_follows_the_import_rule():
    assert check(PACKAGE) == []


def test_every_module_has_a_stage():
    for path in PACKAGE.rglob("*.py"):
        stage_of(module_name(path, PACKAGE), PACKAGE.name)


def unnamed_modules(pkg_dir: Path, table: str) -> list[str]:
    """Modules under ``pkg_dir`` that the stage table ``table`` (docs/architecture.md's markdown)
    does not name: a package's module (``model/sends.py``) is named by its stem in backticks
    (`` `sends` ``) in its top-level package's row (`` `model/` ``); a top-level module by its
    file name (`` `units.py` ``) in the package cell of a row. ``__init__`` modules of subpackages
    are named by their folder."""
    rows = [line.split("|")[1:-1] for line in table.splitlines() if line.startswith("| ")]
    named: dict[str, set[str]] = {}
    for cells in rows:
        if len(cells) < 3 or not cells[0].strip().isdigit():
            continue
        owns = set(re.findall(r"`([^`]+)`", cells[2]))
        for pkg in re.findall(r"`([^`]+)`", cells[1]):
            named.setdefault(pkg, set()).update(owns)
    missing = []
    for path in sorted(pkg_dir.rglob("*.py")):
        parts = path.relative_to(pkg_dir).parts
        if len(parts) == 1:
            ok = parts[0] in named
        else:
            owns = named.get(parts[0] + "/", set())
            stem = parts[-2] if path.stem == "__init__" else path.stem
            ok = path.stem == "__init__" and len(parts) == 2 or {stem, f"{stem}/"} & owns != set()
        if not ok:
            missing.append("/".join(parts))
    return missing


def test_the_table_names_every_module():
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert unnamed_modules(PACKAGE, text) == []


def test_a_module_the_table_does_not_name_is_reported(tmp_path):
    pkg = _tree(tmp_path, {"units.py": "", "extra.py": "", "model/__init__.py": "",
                           "model/cost.py": "", "model/sends.py": "", "model/sub/__init__.py": "",
                           "model/sub/deep.py": ""})
    table = ("| rank | package | owns | imports |\n|---|---|---|---|\n"
             "| 0 | `units.py` | units | nothing |\n"
             "| 3 | `model/` | `cost` (prices), `sub/` (`deep`) | spec |\n")
    assert unnamed_modules(pkg, table) == ["extra.py", "model/sends.py"]


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "pkg"
    for rel, text in files.items():
        p = pkg / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return pkg


TOY = (("errors",), ("spec",), ("model",), ("solvers",), ("api",), ("__init__",))
CLEAN = {
    "__init__.py": "from . import api\n",
    "errors.py": "X = 1\n",
    "spec.py": "from .errors import X\n",
    "model/__init__.py": "",
    "model/timing.py": "from ..spec import X\nfrom . import cost\n",
    "model/cost.py": "from ..errors import X\n",
    "solvers/__init__.py": "",
    "solvers/run.py": "from ..model.timing import X\n",
    "api.py": "from .solvers.run import X\n",
}


def test_checker_accepts_a_clean_toy_package(tmp_path):
    assert check(_tree(tmp_path, CLEAN), TOY) == []


@pytest.mark.parametrize(
    "where, source, expected",
    [
        (
            "model/cost.py",
            "from ..solvers.run import X\n",
            "pkg.model.cost:1: imports pkg.solvers.run of a later stage",
        ),
        (
            "spec.py",
            "def f():\n    from .api import X\n",
            "pkg.spec:2: imports pkg.api of a later stage",
        ),
        ("model/cost.py", "import pkg.api\n", "pkg.model.cost:1: imports pkg.api of a later stage"),
    ],
)
def test_checker_fails_on_an_upward_import(tmp_path, where, source, expected):
    problems = check(_tree(tmp_path, {**CLEAN, where: source}), TOY)
    assert any(p.startswith(expected) for p in problems), problems


def test_checker_fails_on_a_circle_a_private_import_and_a_long_module(tmp_path):
    files = {
        **CLEAN,
        "model/cost.py": "from .timing import _helper\n",
        "model/timing.py": "from . import cost\n",
        "errors.py": "x = 1\n" * 601,
    }
    problems = check(_tree(tmp_path, files), TOY)
    assert "import circle: pkg.model.cost -> pkg.model.timing -> pkg.model.cost" in problems
    assert "pkg.model.cost:1: imports the private name _helper from pkg.model.timing" in problems
    assert "pkg.errors: 601 lines (> 600); split it by concept" in problems


def test_every_module_imports():
    """Every module loads (a moved name left behind in an import fails here, not in a rarely run
    command)."""
    import importlib

    for path in sorted(PACKAGE.rglob("*.py")):
        importlib.import_module(module_name(path, PACKAGE))


def test_cli_help_loads_no_heavy_module():
    """``hieropt --help`` imports the command line only: no Pyomo, numpy or pydantic (a fresh
    interpreter)."""
    import subprocess
    import sys

    code = (
        "import sys, hieropt.cli; heavy = [m for m in ('pyomo', 'numpy', 'pydantic', 'matplotlib') "
        "if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == ""


def test_registries_agree_with_the_vocabulary():
    """Each registry has one home and the vocabulary of :mod:`hieropt.names` lists exactly its keys,
    so adding a training loop or an objective in its file without naming it (or the reverse) fails
    here."""
    from hieropt import names
    from hieropt.model.loops import LOOPS
    from hieropt.solvers.objectives import METHODS

    assert tuple(LOOPS) == names.TRAINING_LOOPS
    assert set(METHODS) == set(names.OBJECTIVES)
