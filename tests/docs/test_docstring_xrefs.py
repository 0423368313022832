"""Every ``:func:``/``:class:``/``:mod:``/... target in hieropt's docstrings and docs pages names an
object (tests/docs/xrefs.py): mkdocstrings renders the roles as text, so nothing else catches a
stale one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.xrefs import resolves, unresolved

ROOT = Path(__file__).resolve().parents[2]

ELSEWHERE: set[str] = set()
"""Known broken targets, each a "path: role" key that must still be broken (none now): an entry goes
once its target is fixed."""


@pytest.mark.heavy
def test_every_role_target_resolves():
    bad = unresolved(ROOT)
    keyed = {b.split(":")[0] + ": " + b.split(": ", 1)[1] for b in bad}
    assert keyed - ELSEWHERE == set(), "\n".join(bad)
    assert ELSEWHERE - keyed == set(), "fixed: drop from ELSEWHERE"


@pytest.mark.parametrize("target, ok", [
    ("hieropt.solvers.routes.ROUTES", True),
    ("~hieropt.solvers.routes.Case.objective", True),
    ("hieropt.model.run.CostRate.fixed_usd", True),
    ("hieropt.solvers.provision. provision", False),  # (a target broken by a line wrap)
    ("hieropt.solvers.routes.NO_SUCH", False),
    ("first_route", True),
    (".routing.first_route", True),
    ("titled", False),
    ("time.perf_counter", True),
])
def test_the_resolver_tells_a_broken_target(target, ok):
    src = (ROOT / "hieropt/solvers/routing.py").read_text()
    assert resolves(target, "hieropt.solvers.routes", False, src) is ok
