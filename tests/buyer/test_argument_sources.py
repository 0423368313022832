"""A library input's error names the argument and the flag that sets it on the command line,
``arg (--flag)`` (:func:`hieropt.names.with_flag`): the total budget, the deadline and the
co-design exports' counts and folder."""

from __future__ import annotations

from pathlib import Path

import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.model.run import iteration_target_ns, network_budget_usd
from hieropt.studies.codesign.export import provision_codesign, write_instances
from hieropt.studies.codesign.search import codesign
from tests.cases import REPO
from tests.codesign.spaces import space

GPT3 = REPO / "instances" / "gpt3-4d.toml"
"""GPT-3 on a 4-D network of LIBRA's layers: no [cluster], no token budget, no LLM model."""


def test_the_total_budget_names_its_argument():
    with pytest.raises(InputError) as e:
        network_budget_usd(hieropt.load_instance(GPT3), 700e6)
    assert e.value.source == "total_usd (--total-budget)"
    assert str(e.value).startswith("total_usd (--total-budget): needs the cluster's capex")


def test_provision_names_its_total_capex_argument():
    inst = hieropt.load_instance(REPO / "instances" / "gpt3-plan-4d.toml")
    with pytest.raises(InputError) as e:
        hieropt.provision(inst, REPO / "catalogs" / "example-4d.toml", max_total_capex_usd=700e6,
                          compare=False)
    assert e.value.source == "max_total_capex_usd (--total-budget)"


def test_the_deadline_names_its_argument():
    """90 days = 7.776e15 ns, without a token budget: refused, naming ``deadline_ns``."""
    with pytest.raises(InputError) as e:
        iteration_target_ns(hieropt.load_instance(GPT3), 90 * 86400e9)
    assert e.value.source == "deadline_ns (--deadline)"
    assert "(no token budget)" in e.value.problem


@pytest.fixture(scope="module")
def result():
    """The tiny co-design space solved (tests/codesign/spaces.py)."""
    return codesign(space(), workers=1)


def test_the_exports_name_their_arguments(result, tmp_path: Path):
    with pytest.raises(InputError) as e:
        write_instances(result, tmp_path, top=0)
    assert str(e.value) == "top (--top): 0 candidates; fix: give at least 1"
    with pytest.raises(InputError) as e:
        provision_codesign(result, REPO / "catalogs" / "example-4d.toml", top=0)
    assert str(e.value) == "top (--provision-top): 0 candidates; fix: give at least 1"
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(InputError) as e:
        write_instances(result, blocker / "inst")
    assert e.value.source == "folder (--write-instances)"
    assert e.value.field == str(blocker / "inst")
