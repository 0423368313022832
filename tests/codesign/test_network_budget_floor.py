"""A co-design network budget against each shape's cheapest network. On Llama 3 405B's space
(spaces/codesign-llama3-405b.toml: bw[0] >= 50 GB/s on NVLink at 4 + 13 + 0.01 = $17.01 per GB/s
per NPU, sum(bw[1:]) >= 50 on scale-out at 50 + 93.75 + 120 = $263.75) the cheapest network of
8,192 NPUs costs 8,192 x (50 x 17.01 + 50 x 263.75) = $114,999,296, of 16,384 twice that: a budget
below the first is refused before the search, one between the two settles every 16,384-NPU
candidate infeasible without a solve and leaves the 8,192-NPU answer as the search without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cases import REPO

FLOOR_8192 = 8192 * (50 * 17.01 + 50 * 263.75)
PLANS = """[plans]
tp = [8]
pp = [1, 8]
zero_stage = [1]
recompute = ["full"]
sequence_parallel = [true]
micro_batch_size = [1]
virtual_stages = [1]
"""


def _space(tmp_path: Path) -> Path:
    """The shipped space on 8,192 and 16,384 NPUs with two plans."""
    text = (REPO / "spaces" / "codesign-llama3-405b.toml").read_text(encoding="utf-8")
    text = text.replace('"../models/', f'"{REPO}/models/')
    text = text.replace("npus = [8192, 16384, 32768]", "npus = [8192, 16384]")
    head, rest = text.split("[plans]", 1)
    text = head + PLANS + rest[rest.index("[[levels]]"):]
    p = tmp_path / "space.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_the_cheapest_network_of_each_shape(tmp_path):
    from hieropt.io.codesign import load_codesign
    from hieropt.studies.codesign.candidates import enumerate_candidates

    assert FLOOR_8192 == pytest.approx(114_999_296)
    floors = enumerate_candidates(load_codesign(_space(tmp_path))).cost_floors()
    least = {n: min(f for m, f in floors.values() if m == n) for n in (8192, 16384)}
    assert least[8192] == pytest.approx(FLOOR_8192, rel=1e-9)
    assert least[16384] == pytest.approx(2 * FLOOR_8192, rel=1e-9)


def test_a_budget_below_every_shape_is_refused_before_the_search(tmp_path):
    import hieropt
    from hieropt.errors import NoSolutionError

    rows: list[dict] = []
    with pytest.raises(NoSolutionError, match=r"\$114,999,295 is below the cheapest network of "
                       r"every shape .* costs \$114,999,296"):
        hieropt.codesign(_space(tmp_path), max_network_cost_usd=114_999_295, workers=1,
                         on_row=rows.append)
    assert rows == []  # (nothing solved)


@pytest.mark.heavy
def test_shapes_over_the_budget_are_settled_without_a_solve(tmp_path):
    import hieropt

    space = _space(tmp_path)
    rows: list[dict] = []
    capped = hieropt.codesign(space, max_network_cost_usd=130e6, workers=1, prune=False,
                              on_row=rows.append)
    big = [r for r in rows if r["npus"] == 16384]
    assert big and all(r["status"] == "infeasible" for r in big)
    assert all("below this shape's cheapest network $" in r["message"] for r in big)
    assert capped.solved == sum(r["npus"] == 8192 for r in rows)
    alone = [r for r in rows if r["npus"] == 8192 and r["status"] == "optimal"]
    assert capped.best.iteration_time_ns == min(r["iteration_time_ns"] for r in alone)
