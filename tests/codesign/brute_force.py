"""The co-design search run serially with every row it gives, and the check that the pruned search
equals solving every candidate (brute force)."""

from __future__ import annotations

import pytest

from hieropt.studies.codesign.search import codesign
from hieropt.workloads.llm.space import CodesignSpace


def search_with_rows(sp: CodesignSpace, **kw) -> tuple:
    """(the search's result, every row it gave to ``on_row``)."""
    rows: list[dict] = []
    return codesign(sp, on_row=rows.append, **{"workers": 1, **kw}), rows


def check_pruned_equals_brute_force(sp: CodesignSpace) -> tuple:
    """The pruned search of ``sp`` gives the brute force's optimum, its ranking of the candidates
    it solved, every cluster size's and dimension count's best, and bounds below every pruned
    candidate's optimum; returns (pruned result, brute-force result)."""
    (pruned, pruned_rows) = search_with_rows(sp)
    (brute, brute_rows) = search_with_rows(sp, prune=False)
    assert brute.settled == 0 and brute.solved == brute.enumeration.count == len(brute_rows)
    assert pruned.solved + pruned.settled == pruned.enumeration.count == len(pruned_rows)
    # (serial: in order)
    assert [c.id for c in brute.enumeration.candidates()] == [r["id"] for r in brute_rows]
    value = {r["id"]: r["objective_value"] for r in brute_rows}
    best = brute.best.objective_value
    for r in brute_rows:  # the bound is a lower bound of every candidate's proven optimum
        assert r["lower_bound"] <= r["objective_value"] * (1 + 1e-9), r["id"]
    assert pruned.best.objective_value == pytest.approx(best, rel=1e-12)
    for r in pruned_rows:
        if r["status"] == "pruned":  # its optimum is >= its bound >= the incumbent >= the best
            assert r["lower_bound"] <= value[r["id"]] * (1 + 1e-9)
            assert value[r["id"]] >= best * (1 - 1e-9)
        else:
            assert r["objective_value"] == pytest.approx(value[r["id"]], rel=1e-12)
    # the ranking of what the pruned search solved is the brute-force ranking of the same
    # candidates, and it starts with every candidate that ties the optimum in the brute force
    solved = {r["id"] for r in pruned_rows if r["status"] != "pruned"}
    assert [r["id"] for r in pruned.ranking] == [
        r["id"] for r in brute.ranking if r["id"] in solved
    ]
    assert {r["id"] for r in brute.ranking if r["rank"] == 1} <= solved | {
        r["id"]
        for r in pruned_rows
        if r["status"] == "pruned" and value[r["id"]] <= best * (1 + 1e-8)
    }
    # each cluster size's row is its own optimum; each dimension count's is when marked proven,
    # else the count's optimum lies between its proven bound and the best shown
    own = {e["npus"]: e["best"]["objective_value"] for e in brute.by_npus()}
    got = {e["npus"]: e["best"]["objective_value"] for e in pruned.by_npus()}
    assert got.keys() == own.keys()
    assert all(got[k] == pytest.approx(own[k], rel=1e-12) for k in own)
    own = {e["n_dims"]: e["best"]["objective_value"] for e in brute.by_dims()}
    assert all(e["proven"] for e in brute.by_dims())
    for e in pruned.by_dims():
        v, d = e["best"]["objective_value"], e["n_dims"]
        if e["proven"]:
            assert e["proven_bound"] == v and v == pytest.approx(own[d], rel=1e-12)
        else:
            assert e["proven_bound"] <= own[d] * (1 + 1e-9) and own[d] <= v * (1 + 1e-12)
    return pruned, brute
