"""MkDocs hook: the reference of every module of the package, from its docstrings.

A page under ``reference/modules/`` holds a marker ``<!-- module-reference: STAGE -->``; at build
time it is replaced by one mkdocstrings block per module of ``hieropt/STAGE/`` (``hieropt`` itself:
the top-level modules), in path order, so a new module appears without editing the page. The
facade modules shown on the API page are left out here, so every object has one home.
"""

from __future__ import annotations

import re
from pathlib import Path

MARKER = re.compile(r"<!-- module-reference: (\w+) -->")
ON_API_PAGE = {"hieropt.api", "hieropt.result", "hieropt.errors", "hieropt.units"}
ROOT = Path(__file__).resolve().parents[2]


def modules(stage: str) -> list[str]:
    """Dotted names of a stage's modules, in path order, without ``__main__`` and the API page's.

    Args:
        stage: a sub-package of ``hieropt`` (e.g. ``solvers``), or ``hieropt`` for the top-level
            modules.
    """
    folder = ROOT / "hieropt" if stage == "hieropt" else ROOT / "hieropt" / stage
    paths = sorted(folder.glob("*.py")) if stage == "hieropt" else sorted(folder.rglob("*.py"))
    names = []
    for path in paths:
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name not in ON_API_PAGE:
            names.append(name)
    return names


def reference(stage: str) -> str:
    """One ``:::`` block per module of ``stage``, each with its own heading."""
    blocks = []
    for name in modules(stage):
        blocks += [
            f"::: {name}",
            "    options:",
            "      heading_level: 2",
            "      show_submodules: false",
            "",
        ]
    return "\n".join(blocks)


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Replace a module-reference marker with the generated blocks of its stage."""
    return MARKER.sub(lambda m: reference(m.group(1)), markdown)
