"""The resolver of the cross-reference roles in hieropt's docstrings and docs pages
(``:func:``, ``:class:``, ``:mod:``, ``:data:``, ``:attr:``, ``:meth:``, ``:exc:``, ``:obj:``):
which targets name no object. mkdocstrings renders these roles as text, so a wrong target (a
renamed function, a module path broken by a line wrap) would never show; this finds it by import.

A target resolves when, after a leading ``~`` and a trailing ``()`` are dropped: it is absolute
(``hieropt.x.y``) and importing its longest module prefix and walking its attributes finds it; it is
relative (``.x``) to the module's package and so found; or it is a bare or dotted name found, in
order, in the module (a ``def``/``class`` or top-level assignment of its own for a bare name), in
each enclosing package, under ``hieropt``, or as a standard-library or third-party path. An
attribute counts when it is a dataclass or pydantic field or a class annotation.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

ROLE = re.compile(r":(func|class|mod|data|attr|meth|exc|obj):`([^`]+)`")
"""A role and its target in a line."""


def _has(obj: Any, name: str) -> bool:
    if not name.isidentifier():  # (not a name: e.g. the text between two roles' backticks)
        return False
    if hasattr(obj, name):
        return True
    fields = getattr(obj, "model_fields", None) or getattr(obj, "__dataclass_fields__", None)
    return bool(fields and name in fields) or name in getattr(obj, "__annotations__", {})


def resolves_absolute(target: str) -> bool:
    """Whether the dotted ``target`` is an importable module or an attribute path below one."""
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:  # noqa: BLE001 (any failure means: not this prefix)
            continue
        for p in parts[i:]:
            if not _has(obj, p):
                return False
            obj = getattr(obj, p, object())
        return True
    return False


def resolves(target: str, module: str | None, is_pkg: bool = False, source: str = "") -> bool:
    """Whether ``target`` (a role's text) names an object, seen from ``module`` (dotted, None for
    a docs page; ``is_pkg`` for a package's ``__init__``) whose text is ``source``."""
    t = re.sub(r"\(\)$", "", target.lstrip("~").strip())
    if t.startswith("hieropt"):
        return resolves_absolute(t)
    if t.startswith(".") and module:
        pkg = module if is_pkg else module.rsplit(".", 1)[0]
        rest = t.lstrip(".")
        for _ in range(len(t) - len(rest) - 1):
            pkg = pkg.rsplit(".", 1)[0]
        return resolves_absolute(f"{pkg}.{rest}")
    first = re.escape(t.split(".")[0])
    own = rf"(def|class)\s+{first}\b|^\s*{first}\s*[:=]"
    if "." not in t and source and re.search(own, source, re.M):
        return True
    cands = []
    if module:
        parts = module.split(".")
        cands += [".".join(parts[:i]) + "." + t for i in range(len(parts), 0, -1)]
    cands += ["hieropt." + t, t]
    return any(resolves_absolute(c) for c in cands)


def unresolved(root: Path) -> list[str]:
    """``path:line: :role:`target``` for every role under ``root``'s hieropt/ and docs/ that does
    not resolve (``root`` must be first on ``sys.path`` for its modules to be the ones imported)."""
    files = sorted((root / "hieropt").rglob("*.py")) + sorted((root / "docs").rglob("*.md"))
    bad = []
    for f in files:
        rel = f.relative_to(root)
        text = f.read_text()
        module, is_pkg = None, f.name == "__init__.py"
        if f.suffix == ".py":
            module = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        for n, line in enumerate(text.splitlines(), 1):
            for role, target in ROLE.findall(line):
                if not resolves(target, module, is_pkg, text if module else ""):
                    bad.append(f"{rel}:{n}: :{role}:`{target}`")
    return bad
