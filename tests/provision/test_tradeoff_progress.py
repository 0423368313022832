"""``provision --tradeoff N`` solves N x N + 3 MILPs: an N above 50 is refused with that number
(N = 200, 40,003 solves, ran for minutes without a word), and the grid's progress is reported after
each cost level (the command line's bar on stderr, ``progress=`` in the library)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.util import error_line, run

REPO = Path(__file__).resolve().parents[2]


def test_a_grid_too_fine_is_refused_with_its_solves():
    r = run("provision", REPO / "instances" / "gpt3-nvl72-2304.toml", "--catalog",
            REPO / "catalogs" / "nvl72-infiniband.toml", "--tradeoff", "51")
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --tradeoff: 51 levels per axis take 2,604 MILP solves (a 51 x 51 grid and the 3 "
        "ends, each up to 60 s), above the 2,503 of 50; fix: give at most 50 levels; the front "
        "has one point per distinct design, which a coarser grid usually finds")


def test_the_grid_reports_each_cost_level(problem):
    """3 levels: 3 grid points settled after each of the 3 cost levels, 9 in all (the front as
    test_fabric_power's: the 1:1 and the 2:1 fabric)."""
    from hieropt.solvers.provision_milp import provision_tradeoff

    inst, cat = problem
    calls = []
    tr = provision_tradeoff(inst, cat, levels=3, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(3, 9), (6, 9), (9, 9)]
    assert [q.network_cost_usd for q in tr.points] == [7920.0, 6840.0]


def test_fewer_than_2_levels_are_refused_in_words():
    r = run("provision", REPO / "instances" / "gpt3-nvl72-2304.toml", "--catalog",
            REPO / "catalogs" / "nvl72-infiniband.toml", "--tradeoff", "1")
    assert r.exit_code == 2
    assert error_line(r) == "error: --tradeoff: 1 level; fix: ask for at least 2 levels per axis"


def test_the_tables_title_counts_its_designs_in_words(problem):
    """The 2 designs of the 3 x 3 grid (test_the_grid_reports_each_cost_level), and the first
    alone: "1 non-dominated design"."""
    import dataclasses

    from hieropt.report.provision import tradeoff_table
    from hieropt.solvers.provision_milp import provision_tradeoff

    inst, cat = problem
    tr = provision_tradeoff(inst, cat, levels=3)
    head = "Time-cost-power trade-off (epsilon-constraint, 3 x 3 cost x power levels; "
    assert tradeoff_table(tr).title == head + "2 non-dominated designs)"
    one = dataclasses.replace(tr, points=tr.points[:1])
    assert tradeoff_table(one).title == head + "1 non-dominated design)"
