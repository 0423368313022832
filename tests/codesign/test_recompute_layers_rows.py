"""A co-design space whose base plan recomputes the first N blocks of each stage (``recompute =
"full"``, ``recompute_layers = N``): its rows carry N (after ``recompute``), the instance written
for the best row recomputes N blocks and re-solves to the same time, and a results file written
before the column was added is resumed (a CSV gets the column; the rows read back take N from the
plan id ``fullN``).

Hand-computed figures (tests/workloads/tiny.py on the slow NPU of test_codesign_search.py, 1e-4
TFLOP/s = 0.1 FLOP/ns): TP 2, PP 2 (2 blocks per stage), DP 2, micro-batch 1 of 4 tokens, so 16 /
(2 x 1) = 8 micro-batches; a block's forward per micro-batch is 2,560 FLOP (half the 5,120 of 8
tokens) = 25,600 ns. Recomputing the first block of each stage adds its forward to each backward:
8 x 25,600 = 204,800 ns of compute over no recompute, and recomputing both blocks adds as much
again."""

from __future__ import annotations

import csv
import tomllib

import pytest

from hieropt.io.instance import load_instance
from hieropt.solvers.objectives import solve
from hieropt.studies.codesign.export import write_instances
from hieropt.studies.codesign.rows import NAMES
from hieropt.studies.codesign.search import codesign
from hieropt.workloads.llm import LLMParams
from hieropt.workloads.llm.space import PlanChoices
from tests.codesign.spaces import SLOW, space

BLOCK_FWD_NS = 25_600.0
MICROBATCHES = 8


def _space(recompute: str = "full", layers: int | None = 1):
    plan = {**SLOW.plan.model_dump(), "recompute": recompute, "recompute_layers": layers}
    base = LLMParams(**{**dict(SLOW), "plan": plan})
    return space(base=base, plans=PlanChoices(tp=(2,), pp=(2,), zero_stage=(0,),
                                              recompute=(recompute,)))


def test_rows_carry_recompute_layers_and_the_instance_resolves_to_the_same_time(tmp_path):
    out = tmp_path / "rows.csv"
    r = codesign(_space(), workers=1, out=out)
    best = r.best
    assert (best.recompute, best.recompute_layers) == ("full", 1) and " full1 " in best.plan
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and {x["recompute_layers"] for x in rows} == {"1"}
    assert NAMES[NAMES.index("recompute") + 1] == "recompute_layers"
    # one block of each stage recomputed: one block's forward per micro-batch over none, and
    # the second block as much again
    none = codesign(_space("none", None), workers=1).best
    every = codesign(_space("full", None), workers=1).best
    assert none.recompute_layers is None and every.recompute_layers is None
    assert best.compute_ns - none.compute_ns == pytest.approx(MICROBATCHES * BLOCK_FWD_NS,
                                                              rel=1e-12)
    assert every.compute_ns - best.compute_ns == pytest.approx(MICROBATCHES * BLOCK_FWD_NS,
                                                               rel=1e-12)
    path = write_instances(r, tmp_path / "inst", top=1)[0]
    plan = tomllib.loads(path.read_text())["workload"]["params"]["plan"]
    assert (plan["recompute"], plan["recompute_layers"]) == ("full", 1)
    sol = solve(load_instance(path))
    assert sol.iteration_time_ns == pytest.approx(best.iteration_time_ns, rel=1e-8)
    assert sol.iteration_time_ns < every.iteration_time_ns * (1 - 1e-3)


def test_a_results_file_without_the_column_is_resumed(tmp_path):
    """The file of a search cut short by an older hieropt (no ``recompute_layers`` column, its
    last rows dropped): the resumed search reads its rows back, with N from their plan ids, writes
    the column with N into the file's old rows and appends the rest; it ends with the rows of a
    fresh search."""
    out = tmp_path / "rows.csv"
    fresh = codesign(_space(), workers=1, out=tmp_path / "fresh.csv", prune=False)
    with (tmp_path / "fresh.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    old = [n for n in NAMES if n != "recompute_layers"]
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, old, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows[:5])
    seen: list[dict] = []
    r = codesign(_space(), workers=1, out=out, prune=False, on_row=seen.append)
    assert r.resumed == 5 and r.solved == len(rows) - 5
    assert [x["recompute_layers"] for x in seen] == [1] * len(rows)
    with out.open(newline="") as f:
        back = list(csv.DictReader(f))
    assert list(back[0]) == list(NAMES) and len(back) == len(rows)
    assert [x["recompute_layers"] for x in back] == ["1"] * len(rows)
    assert r.best.id == fresh.best.id and r.best.recompute_layers == 1
    assert r.best.objective_value == pytest.approx(fresh.best.objective_value, rel=1e-12)
