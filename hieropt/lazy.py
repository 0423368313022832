"""Lazy re-exports for package ``__init__`` modules (PEP 562 module ``__getattr__``): a public name
is imported from the submodule that defines it on first use, so importing a package stays cheap
(``hieropt --help`` and bad-input errors load no numpy, Pyomo or HiGHS). Imports nothing of
hieropt."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["lazy_attribute"]


def lazy_attribute(package: str, homes: dict[str, str], name: str) -> Any:
    """The attribute ``name`` of the package ``package`` (dotted module name): ``homes[name]``'s
    attribute of that name when ``name`` is a re-export (``homes``: public name -> defining
    submodule, relative to ``package``), else the submodule ``package.name``. The caller stores the
    value in its globals so that this runs once per name.

    Raises:
        AttributeError: ``name`` is neither a re-export nor a submodule of ``package`` (a failing
            import inside an existing submodule is raised as it is).
    """
    if name in homes:
        return getattr(importlib.import_module(f".{homes[name]}", package), name)
    try:
        return importlib.import_module(f".{name}", package)
    except ModuleNotFoundError as e:
        if e.name != f"{package}.{name}":
            raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
