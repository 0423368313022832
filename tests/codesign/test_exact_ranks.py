"""The ranks a co-design search shows are the space's: with ``top`` k the first k plans of the
ranking are those of solving every candidate, and every row says whether its rank is exact
(``rank_exact``: its value at most the least bound of a candidate not solved) or among the solved
candidates only (the table's ">=r", an instance file's ``solved-rank``); the command's counts are
one tally (solves by their status, candidates settled without a solve: infeasible by their bound or
pruned), the library's, the JSON's and the console's; a knee that saves nothing is not
recommended over the fastest, as ``hieropt solve``'s knee line says.

The tiny space (:func:`tests.codesign.spaces.space`) on 8 NPUs has 360 candidates of 24 plans;
solving them all, its best is ``tp2 cp1 pp1 dp4 ... z0 nore`` at 1,354,696 ns, rank 2 two rows of
``tp1 cp1 pp1 dp8 ... z0 nore`` at 1,355,049.33 ns."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from hieropt.model.run import RunFigures
from hieropt.report.codesign import ranking_table
from hieropt.report.committee import Alternative
from hieropt.report.committee_basis import no_knee, recommend
from hieropt.studies.codesign.export import instance_files, write_instances
from hieropt.studies.codesign.rows import fold_ties
from hieropt.studies.codesign.search import codesign
from tests.codesign.spaces import SPACE, space
from tests.codesign.spaces import codesign as run_command


@pytest.fixture(scope="module")
def brute():
    return codesign(space(), workers=1, prune=False)


def _key(rows):
    return [(r["rank"], r["id"], r["objective_value"]) for r in rows]


@pytest.mark.heavy
@pytest.mark.parametrize("top, solved, exact", [(1, 15, 1), (3, 30, 12), (8, 37, 13),
                                                (10, 60, 30)])
def test_the_exact_ranks_are_those_of_solving_everything(brute, top, solved, exact):
    """top 1 solves 15 candidates and only its best has an exact rank (its second row, solved
    among 15, is not the space's second); top 3 solves 30 and 12 rows are exact, top 8 37 and 13,
    top 10 60 and 30 (every row it ranks); the exact rows are the brute force's first rows, and the
    first ``top`` rows of the table (one per plan and rank: ranks 1, 2, 4, 6, 8, 9, 11, 13, 15,
    16) are exact."""
    r = codesign(space(), workers=1, top=top)
    assert (r.solved, brute.solved) == (solved, 360)
    flags = [x["rank_exact"] for x in r.ranking]
    assert sum(flags) == exact and flags == [True] * exact + [False] * (len(flags) - exact)
    assert _key(r.ranking[:exact]) == _key(brute.ranking[:exact])
    heads = fold_ties(r.ranking)[:top]
    assert all(h["rank_exact"] for h, _ in heads)
    assert [h["rank"] for h, _ in heads] == [1, 2, 4, 6, 8, 9, 11, 13, 15, 16][:top]
    if top < 10:  # (the row after the exact ones: ranked among the solved only, and wrongly)
        assert _key(r.ranking)[exact] != _key(brute.ranking)[exact]
    # every candidate not solved has a bound at least the exact rows' values
    assert r.unsolved_bound >= r.ranking[exact - 1]["objective_value"]
    if exact < len(r.ranking):
        assert r.unsolved_bound < r.ranking[exact]["objective_value"]
    else:  # (top 10: its 30 ranked rows are all exact)
        assert len(r.ranking) == 30


def test_rows_past_the_exact_ones_are_labelled(tmp_path):
    """top 1: the table prints rank 1, then ">=2" (rank 2 among the 15 solved), its caption the
    least bound of a candidate not solved (1.3550 ms); the JSON's rows say ``rank_exact`` and its
    ``unsolved_bound``; instance files of rows past the exact one are named ``solved-rank``."""
    r = codesign(space(), workers=1, top=1)
    assert r.unsolved_bound == pytest.approx(1355049.3333333333, rel=1e-9)
    console = Console(width=400, record=True)
    console.print(ranking_table(r, top=3))
    text = console.export_text()
    cells = [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│")]
    assert cells == ["1", ">=2", ">=4"]
    assert "(a candidate not solved, its proven bound 1.3550 or more, may rank ahead" in text
    d = json.loads(json.dumps(r.to_dict(top=3)))
    assert [x["rank_exact"] for x in d["ranking"]][:2] == [True, False]
    assert d["unsolved_bound"] == pytest.approx(1355049.3333333333, rel=1e-9)
    from hieropt.report.html import codesign_detail

    page = "".join(codesign_detail(d))
    assert "&gt;=2" in page and "rank r among the solved candidates only" in page
    names = [p.name for p in write_instances(r, tmp_path, 3)]
    assert names == ["tiny-rank1-1.toml", "tiny-solved-rank2-2.toml", "tiny-solved-rank4-3.toml"]
    assert [p.name for p in instance_files(tmp_path, "tiny")] == sorted(names)
    assert "rank 2 among the solved candidates only" in (tmp_path / names[1]).read_text()


def test_a_top_that_is_not_a_whole_number_is_refused():
    from hieropt.errors import InputError

    for bad in (0, 2.5, True):
        with pytest.raises(InputError, match="top"):
            codesign(space(), workers=1, top=bad)


def test_one_tally_of_solves_and_settled_candidates(tmp_path):
    """--max-time 1.36ms --top 1: 15 solves, 1 optimal and 14 proven infeasible, 165 candidates
    settled without a solve: 150 infeasible by their time bound and 15 pruned; the console, the
    JSON and the statuses (164 infeasible = 14 + 150) agree."""
    out = tmp_path / "r.json"
    r = run_command(tmp_path, SPACE, "--max-time", "1.36ms", "--top", "1", "--json", str(out))
    assert r.exit_code == 0, r.output
    assert ("solved 15 (1 optimal, 14 infeasible), settled without a solve 165 (150 infeasible "
            "by their time bound or their rows: above the target, no bandwidth, or rows that "
            "cannot all hold; 15 pruned: proven bound >= incumbent), resumed 0;") in r.stdout
    d = json.loads(out.read_text())
    assert (d["solved"], d["solved_statuses"], d["settled_without_solve"],
            d["infeasible_by_bound"], d["pruned"], d["resumed"]) == (
        15, {"optimal": 1, "infeasible": 14}, 165, 150, 15, 0)
    assert d["statuses"] == {"optimal": 1, "infeasible": 164, "pruned": 15}


def _alt(key: str, usd: float) -> Alternative:
    fig = RunFigures(iteration_time_ns=5.4887e9)
    return Alternative(key, key, "how", "tp8 cp1 pp16 dp32", "300, 25 GB/s", 4096, (300.0, 25.0),
                       5.4887e9, usd, fig)


def test_a_knee_that_saves_nothing_is_not_recommended():
    """The knee at the fastest's $3,993,600.00 (to the cent): solve prints "knee: none ... buy
    the fastest", so the page recommends the fastest; a knee a dollar cheaper is recommended."""
    same = [_alt("fastest", 3993600.0), _alt("knee", 3993599.999)]
    assert no_knee(same[1], same[0])
    key, why = recommend(same, 0.01)
    assert key == "fastest" and "no design within 1 % of the fastest time costs a cent" in why
    cheaper = [_alt("fastest", 3993600.0), _alt("knee", 3993599.0)]
    assert not no_knee(cheaper[1], cheaper[0]) and recommend(cheaper, 0.01)[0] == "knee"


def test_the_shown_rows_value_counts_a_plans_runs_of_ties_once():
    """top 2, tol 1e-8: plan a's 100 and 100.0000001 ns are one rank (one table row), so kth stays
    unknown; a's 101 ns is a second row (kth 101); plan b's 100.5 ns makes the second row 100.5."""
    from hieropt.studies.codesign.shown import ShownRows

    s = ShownRows(2, 1e-8)
    s.add("a", 100.0)
    s.add("a", 100.0000001)
    assert s.kth == float("inf")
    s.add("a", 101.0)
    assert s.kth == 101.0
    s.add("b", 100.5)
    s.add("c", 200.0)  # (above kth: cannot move it)
    assert s.kth == 100.5
