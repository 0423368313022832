"""numpy integer and float amounts given to the library: read as the Python numbers they hold (one
conversion in the facade), so a budget message formats them as any other ($ to the cent)."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt.units import usd_cents
from tests.cases import REPO

INSTANCE = REPO / "instances" / "gpt3-4d.toml"
CATALOG = REPO / "catalogs" / "example-4d.toml"
CLUSTER = REPO / "instances" / "llama3-405b-16k-cluster.toml"


def test_usd_cents_reads_a_numpy_integer():
    assert usd_cents(np.int64(20_000_000), up=False) == "20,000,000.00"
    assert usd_cents(np.float32(0.5), up=True) == "0.50"


def test_solve_takes_a_numpy_integer_budget():
    inst = hieropt.load_instance(INSTANCE)
    a = hieropt.solve(inst, options=hieropt.SolveOptions(budget_usd=np.int64(12_000_000)))
    b = hieropt.solve(inst, options=hieropt.SolveOptions(budget_usd=12_000_000))
    assert a.iteration_time_ns == b.iteration_time_ns
    assert a.network_cost_usd == pytest.approx(12e6, rel=1e-9)  # (the budget binds)


def test_network_budget_of_a_numpy_total_is_refused_in_dollars():
    with pytest.raises(hieropt.NoSolutionError) as e:
        hieropt.network_budget_usd(hieropt.load_instance(CLUSTER), np.int64(2_000_000))
    assert "the total budget $2,000,000.00 does not cover the cluster without its network, " \
        "$797,368,320.00" in str(e.value)


def test_provision_with_a_numpy_budget_below_the_cheapest():
    inst = hieropt.load_instance(INSTANCE)
    for kwargs in ({"max_cost_usd": np.int64(10_000_000)}, {"budget_usd": np.float64(1e7)}):
        with pytest.raises(hieropt.NoSolutionError) as e:
            hieropt.provision(inst, CATALOG, **kwargs)
        assert str(e.value) == (
            "infeasible: budget $10,000,000.00: the cheapest design from the catalog that meets "
            # (link ports one per peer: tests/provision/test_cli.py derives it)
            "the constraints costs $18,334,720.00; raise the budget or add cheaper parts")


def test_the_budget_alias_is_in_the_signatures():
    import inspect

    for fn, old in ((hieropt.provision, "max_cost_usd"), (hieropt.codesign,
                                                          "max_network_cost_usd")):
        p = inspect.signature(fn).parameters
        assert p["budget_usd"].kind is inspect.Parameter.KEYWORD_ONLY and old in p
        assert p["budget_usd"].default is None
        assert f"(``{old}`` is its old name)" in fn.__doc__
    with pytest.raises(hieropt.InputError) as e:
        hieropt.provision(INSTANCE, CATALOG, max_cost_usd=1e7, budget_usd=1e7)
    assert str(e.value) == (
        "budget_usd: given together with max_cost_usd (its old name); fix: give one of them")
