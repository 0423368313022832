"""A cap on the whole cluster's capex in provisioning, by hand: the network's parts and the facility
their power needs share what the cluster leaves.

The problem and catalog of test_fabric_power: 16 NPUs on one Switch dimension, the 1:1 fabric (50
GB/s, $7,920, 524 W, T = 301,000,000 ns) or the 2:1 one (25 GB/s, $6,840, 458 W, T = 601,000,000
ns). The cluster: 16 accelerators at $1,000 and 1,000 W, the facility at $10M per MW of IT power
($10 per W). Without its network the cluster costs 16 x 1,000 + 16,000 W x $10 = $176,000; with a
network the facility grows by $10 per W of its parts:

- 1:1: $176,000 + 7,920 + 524 x 10 = $189,160;
- 2:1: $176,000 + 6,840 + 458 x 10 = $187,420.
"""

from __future__ import annotations

import pytest

import hieropt
from hieropt.errors import InputError, NoSolutionError
from hieropt.model.capex import total_capex
from hieropt.model.run import provisioned_run
from hieropt.spec.cluster import Cluster
from tests.provision.fabric_power import T25, T50, summary

FIXED = 16 * 1000 + 16_000 * 10.0


def _priced(inst, **more):
    """The instance with the cluster of the module docstring."""
    cluster = Cluster(accelerator_usd=1000, amortisation_years=5, accelerator_w=1000,
                      facility_usd_per_mw=10e6, **more)
    return inst.model_copy(update={"cluster": cluster})


def test_the_cap_counts_the_facility_of_the_parts_power(problem):
    inst, cat = problem
    inst = _priced(inst)
    t = total_capex(inst, 188_000)
    assert (t.fixed_usd, t.usd_per_w, t.network_left_usd) == (FIXED, 10.0, 12_000.0)
    # $190,000 leaves $14,000: the 1:1 fabric's $7,920 + $5,240 fits
    p = hieropt.provision(inst, cat, max_total_capex_usd=190_000, compare=False)
    assert summary(p)[1:] == (6, 50.0, 7920.0, 524.0)
    # $188,000 leaves $12,000: its parts alone ($7,920) would fit, with their facility ($13,160)
    # not; the 2:1 fabric's $6,840 + $4,580 = $11,420 does
    p = hieropt.provision(inst, cat, max_total_capex_usd=188_000, compare=False)
    assert summary(p)[1:] == (5, 25.0, 6840.0, 458.0)
    assert p.iteration_time_ns == pytest.approx(T25, rel=1e-12)
    assert ("total budget $188,000: the cluster costs $187,420 with this network ($176,000 "
            "without it + its parts' $6,840 + $4,580 of facility for their 458 W)") in p.notes
    # the run's capex (provision's figures) is the same sum, within the cap
    run, _ = provisioned_run(inst, p.iteration_time_ns, p.network_cost_usd, p.power_w)
    assert run.capex_usd == pytest.approx(187_420, rel=1e-12)
    # the same cap on the parts' $ alone (a network budget of $12,000) buys the 1:1 fabric
    q = hieropt.provision(inst, cat, max_cost_usd=12_000, compare=False)
    assert q.iteration_time_ns == pytest.approx(T50, rel=1e-12)


def test_no_design_under_the_cap_says_the_total_that_buys_one(problem):
    inst, cat = problem
    with pytest.raises(NoSolutionError) as e:
        hieropt.provision(_priced(inst), cat, max_total_capex_usd=187_000, compare=False)
    assert str(e.value) == (
        "infeasible: total budget $187,000.00: the cluster without its network costs "
        "$176,000.00 (accelerators, servers, racks and facility), which leaves $11,000.00 for "
        "the network; the cheapest design from the catalog that meets the other limits costs "
        "$6,840.00 in parts and draws 458 W, whose facility costs $4,580.00: a total budget of "
        "at least $187,420.00 buys it")
    # a cap at or below the cluster alone, and a cluster without capex: as --total-budget
    with pytest.raises(NoSolutionError, match="does not cover the cluster without its network"):
        hieropt.provision(_priced(inst), cat, max_total_capex_usd=FIXED, compare=False)
    with pytest.raises(InputError, match="needs the cluster's capex"):
        hieropt.provision(inst, cat, max_total_capex_usd=190_000, compare=False)


def test_a_network_power_per_npu_is_in_the_fixed_part(problem):
    # network_w_per_npu = 30 W: the facility is built for (16,000 + 480) W, $180,800 with the
    # accelerators, whatever the parts draw; the parts pay their $ alone
    inst, cat = problem
    inst = _priced(inst, network_w_per_npu=30.0)
    t = total_capex(inst, 188_800)
    assert (t.fixed_usd, t.usd_per_w) == (16_000 + 16_480 * 10.0, 0.0)
    p = hieropt.provision(inst, cat, max_total_capex_usd=188_800, compare=False)  # $8,000 left
    assert summary(p)[1:] == (6, 50.0, 7920.0, 524.0)
    p = hieropt.provision(inst, cat, max_total_capex_usd=188_000, compare=False)  # $7,200
    assert summary(p)[1:] == (5, 25.0, 6840.0, 458.0)


def test_a_shortlist_keeps_the_total_cap(problem):
    # the step codesign --catalog --total-budget takes: each row's design under the cap, its run's
    # capex (MW and $ with the parts' power) within it, and the line saying so
    from hieropt.studies.explore.provision import provision_ranked

    inst, cat = problem
    entry = {"id": "a", "continuous_rank": 1, "continuous_objective": 1.0, "bom_rank": None}
    (row,) = provision_ranked([(entry, _priced(inst))], cat, "performance", None, "id", 188_000)
    assert (row["bom_rank"], row["network_cost_usd"], row["power_w"]) == (1, 6840.0, 458.0)
    assert row["run"]["capex_usd"] == pytest.approx(187_420, rel=1e-12)
    assert row["total_budget"] == ("total budget $188,000: the cluster costs $187,420 with this "
                                   "network ($176,000 without it + its parts' $6,840 + $4,580 of "
                                   "facility for their 458 W)")
    (free,) = provision_ranked([(entry, _priced(inst))], cat, "performance", None, "id")
    assert free["network_cost_usd"] == 7920.0 and "total_budget" not in free


def test_the_total_cap_is_a_row_of_every_tradeoff_point(problem):
    # $188,000 leaves $12,000: only the 2:1 fabric ($6,840 + $4,580 = $11,420) is on the front
    from hieropt.solvers.provision_milp import provision_tradeoff

    inst, cat = problem
    tr = provision_tradeoff(_priced(inst), cat, levels=3, max_total_capex_usd=188_000)
    assert [(q.network_cost_usd, q.power_w) for q in tr.points] == [(6840.0, 458.0)]
    assert tr.points[0].iteration_time_ns == pytest.approx(T25, rel=1e-12)
    assert "total budget $188,000 on the cluster's capex" in tr.notes[0]


def test_both_budgets_too_low_each_named(problem):
    # $6,000 of parts is below the cheapest design's $6,840; $180,000 in all leaves $4,000 for the
    # network, below its $6,840 + $4,580 of facility: each alone leaves no design, so without one
    # the other still does; the error names both, each with the design that meets it alone
    inst, cat = problem
    with pytest.raises(NoSolutionError) as e:
        hieropt.provision(_priced(inst), cat, max_cost_usd=6000, max_total_capex_usd=180_000,
                          compare=False)
    assert str(e.value) == (
        "infeasible: budget $6,000.00: the cheapest design from the catalog that meets the "
        "constraints costs $6,840.00; raise the budget or add cheaper parts; also total budget "
        "$180,000.00: the cluster without its network costs $176,000.00 (accelerators, servers, "
        "racks and facility), which leaves $4,000.00 for the network; the cheapest design from "
        "the catalog that meets the other limits costs $6,840.00 in parts and draws 458 W, whose "
        "facility costs $4,580.00: a total budget of at least $187,420.00 buys it")
