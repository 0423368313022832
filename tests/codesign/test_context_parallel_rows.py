"""A co-design space whose model file's plan has context parallelism (``set = ["cp=2"]``): every
plan id names cp (``tp2 cp2 pp1 dp2 ...``), the rows carry a ``cp`` column after ``tp`` and tp x
cp x pp x dp is the cluster's 8 NPUs; a results file written before the column existed (no
``cp``, plan ids without it) is resumed, its rows read back with cp = npus / (tp pp dp).

The tiny space of tests/codesign/spaces.py (8 NPUs, tp 1 or 2, pp 1 or 2, recompute none or full)
with cp 2: dp = 8 / (tp x 2 x pp) is 4, 2, 2 or 1, 8 plans."""

from __future__ import annotations

import csv
import json

import pytest

from hieropt.studies.codesign.rows import NAMES
from tests.codesign.spaces import SPACE, codesign

CP_SPACE = SPACE.replace("npus = 8\n", 'npus = 8\nset = ["cp=2"]\n').replace(
    "tp = [1, 2, 4]", "tp = [1, 2]")


def test_plan_ids_rows_and_console_name_cp(tmp_path):
    r = codesign(tmp_path, CP_SPACE, "--json", str(tmp_path / "r.json"),
                 "--out", str(tmp_path / "r.csv"))
    assert r.exit_code == 0, r.output
    d = json.loads((tmp_path / "r.json").read_text())
    assert d["plans"] == {"combinations": 8, "invalid": {}, "too_big": 0, "fitting": 8,
                          "too_big_plans": []}
    best = d["best"]
    assert best["plan"] == "tp2 cp2 pp1 dp2 ep1 z0 nore nosp v1 mb2"
    assert (best["tp"], best["cp"], best["pp"], best["dp"], best["npus"]) == (2, 2, 1, 2, 8)
    assert "best: tp2 cp2 pp1 dp2 ep1 z0 nore nosp v1 mb2 | " in r.output
    assert {(x["cp"], x["tp"] * x["cp"] * x["pp"] * x["dp"]) for x in d["ranking"]} == {(2, 8)}
    with (tmp_path / "r.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert NAMES[NAMES.index("tp") + 1] == "cp" and list(rows[0]) == list(NAMES)
    assert {x["cp"] for x in rows} == {"2"}
    assert {x["plan"].split()[1] for x in rows} == {"cp2"}


@pytest.mark.heavy
def test_a_results_file_without_cp_is_resumed(tmp_path):
    """The file of a search cut short by an older hieropt (no ``cp`` column, plan ids and row ids
    without ``cp2``, placements without cp, its last rows dropped): the resumed search knows its 5
    rows as solved, rewrites them as a search writes them now (cp 2, the ids, plans and placements
    of the fresh file) and appends the rest; it ends with the best of a fresh search."""
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    r = codesign(fresh, CP_SPACE, "--json", str(fresh / "r.json"), "--out",
                 str(fresh / "r.csv"), "--no-prune")
    assert r.exit_code == 0, r.output
    with (fresh / "r.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    old = [n for n in NAMES if n != "cp"]
    with (tmp_path / "r.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, old, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows({**x, "id": x["id"].replace(" cp2 ", " ", 1),
                     "plan": x["plan"].replace(" cp2 ", " ", 1),
                     "placement": json.dumps({k: v for k, v in json.loads(x["placement"]).items()
                                              if k != "cp"}, separators=(",", ":"))}
                    for x in rows[:5])
    r = codesign(tmp_path, CP_SPACE, "--json", str(tmp_path / "r.json"), "--out",
                 str(tmp_path / "r.csv"), "--no-prune")
    assert r.exit_code == 0, r.output
    d, want = (json.loads((p / "r.json").read_text()) for p in (tmp_path, fresh))
    assert (d["resumed"], d["solved"]) == (5, len(rows) - 5)
    assert d["best"]["id"] == want["best"]["id"] and d["best"]["cp"] == 2
    assert d["best"]["objective_value"] == pytest.approx(want["best"]["objective_value"],
                                                         rel=1e-12)
    with (tmp_path / "r.csv").open(newline="") as f:
        back = list(csv.DictReader(f))
    assert list(back[0]) == list(NAMES) and len(back) == len(rows)
    assert [x["cp"] for x in back] == ["2"] * len(rows)
    assert [x["plan"].split()[1] for x in back] == ["cp2"] * len(rows)
    cols = ("id", "plan", "cp", "placement")
    assert [[x[c] for c in cols] for x in back[:5]] == [[x[c] for c in cols] for x in rows[:5]]
    assert all('"cp":[' in x["placement"] for x in back)


def test_a_degree_product_with_cp_that_does_not_divide_the_npus_is_named(tmp_path):
    """tp 4 x cp 2 x pp 2 = 16 does not divide 8 NPUs (tp 4 x pp 2 = 8 does): the reason names cp,
    for recompute none and full (2 combinations); tp 4 x cp 2 x pp 1 = 8 fits (dp 1)."""
    r = codesign(tmp_path, SPACE.replace("npus = 8\n", 'npus = 8\nset = ["cp=2"]\n'), "--json",
                 str(tmp_path / "r.json"))
    assert r.exit_code == 0, r.output
    plans = json.loads((tmp_path / "r.json").read_text())["plans"]
    assert plans["invalid"] == {"plan.npus: tp 4 x cp 2 x pp 2 = 16 does not divide the 8 NPUs": 2}
    assert (plans["combinations"], plans["fitting"]) == (12, 10)
