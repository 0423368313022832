"""A ``[cluster]`` with ``facility_usd_per_mw`` but no ``facility_amortisation_years`` has its
facility paid off over ``amortisation_years`` (the accelerators' 5 years, where the shipped Llama
instance assumes 15 for the facility): the cost per hour and the $ per run took that default
without a word. Now every output with a cost rate says which years were assumed, their source and
how to set them, in a ``note:`` and the JSON's ``notes``."""

from __future__ import annotations

import json

import pytest

from hieropt.model.run import facility_years_note
from hieropt.spec.cluster import Cluster
from tests.cases import REPO
from tests.cli.util import run

LLAMA = REPO / "instances" / "llama3-405b-16k-cluster.toml"
NOTE = (
    "the facility ($11.7M per MW of IT power) is amortised over 5 years, the default: [cluster] "
    "amortisation_years (source: epoch-cost-model), the accelerators' and servers' years, as "
    "facility_amortisation_years is not given: set [cluster] facility_amortisation_years to the "
    "facility's own years (more years, fewer $ per hour and per run; "
    "instances/llama3-405b-16k-cluster.toml assumes 15)"
)


def _without_years(tmp_path):
    text = LLAMA.read_text().replace('"../models/', f'"{REPO}/models/')
    line = 'facility_amortisation_years = { value = 15, source = "facility-life" }\n'
    assert line in text
    p = tmp_path / "no-years.toml"
    p.write_text(text.replace(line, ""))
    return p


def test_the_default_facility_years_are_said_with_their_source(tmp_path):
    r = run("evaluate", _without_years(tmp_path), "--bw", "450,50", "--json", tmp_path / "d.json")
    assert r.exit_code == 0, r.output
    assert f"note: {NOTE}" in r.stdout.splitlines()
    default = json.loads((tmp_path / "d.json").read_text())
    assert NOTE in default["notes"] and NOTE in default["run"]["caveats"]
    r = run("evaluate", LLAMA, "--bw", "450,50", "--json", tmp_path / "s.json")
    assert r.exit_code == 0 and "amortised over" not in r.stdout
    given = json.loads((tmp_path / "s.json").read_text())
    # IT power 16,384 x 700 W + 2,048 servers x 4,600 W = 20.8896 MW: a facility of $244,408,320,
    # paid off over 5 years instead of 15: 244,408,320 x (1/5 - 1/15) / 8,760 h more per hour
    more = 244_408_320 * (1 / 5 - 1 / 15) / 8760
    assert more == pytest.approx(3720.0657, abs=1e-3)
    assert default["run"]["cost_per_hour_usd"] - given["run"]["cost_per_hour_usd"] == (
        pytest.approx(more, rel=1e-9))


def test_the_note_only_when_the_default_prices_the_facility():
    base = dict(accelerator_usd=30000, accelerator_w=700, amortisation_years=4,
                facility_usd_per_mw=10e6)
    note = facility_years_note(Cluster(**base), 8)
    assert note is not None and note.startswith(
        "the facility ($10M per MW of IT power) is amortised over 4 years, the default: [cluster] "
        "amortisation_years (no source given),")
    for other in ({"facility_amortisation_years": 15}, {"facility_usd_per_mw": None},
                  {"accelerator_w": None}):
        assert facility_years_note(Cluster(**{**base, **other}), 8) is None, other
    assert facility_years_note(None, 8) is None
