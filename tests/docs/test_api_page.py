"""docs/reference/api.md documents every public name of :mod:`hieropt.api` (``::: hieropt.api``,
read by mkdocstrings without importing the package): each function as a function with its
signature and docstring, each class as a class, never a bare assignment left out of the page (a
checked function bound as ``solve = check(impl)`` is invisible to static analysis)."""

from __future__ import annotations

import inspect

import pytest

import hieropt.api
from tests.cases import REPO

griffe = pytest.importorskip("griffe")


def test_every_public_name_is_documented_as_what_it_is():
    module = griffe.load("hieropt.api", search_paths=[str(REPO)], resolve_aliases=True,
                         resolve_external=False)
    missing = []
    for name in hieropt.api.__all__:
        runtime = getattr(hieropt.api, name)
        member = module.members.get(name)
        target = getattr(member, "final_target", member)
        want = ("class" if inspect.isclass(runtime) else
                "function" if callable(runtime) else "attribute")
        kind = getattr(getattr(target, "kind", None), "value", None)
        if kind != want or not getattr(target, "docstring", None):
            missing.append(f"{name}: {kind or 'absent'}, want a documented {want}")
    assert not missing, missing
    solve = module.members["solve"].final_target
    runtime = inspect.signature(hieropt.api.solve).parameters
    assert [p.name for p in solve.parameters] == list(runtime)
