"""The per-dimension-count table writes its solved counts with thousands separators, as every other
count on the console (6,216 solves, not 6216): the tiny co-design space (tests/codesign/spaces.py)
searched, its 2-dimension row given the 6,216 solves of ``codesign-gpt3-4096``'s."""

from __future__ import annotations

from types import SimpleNamespace

from rich.console import Console

from hieropt.report.codesign import dims_table
from hieropt.studies.codesign.search import codesign
from tests.codesign.spaces import space


def test_solved_has_thousands_separators():
    result = codesign(space(), workers=1)
    rows = result.by_dims()
    assert [r["n_dims"] for r in rows] == [1, 2]
    rows = [{**r, "solved": s} for r, s in zip(rows, (3_276, 6_216), strict=True)]
    fake = SimpleNamespace(space=result.space, by_dims=lambda: rows)
    con = Console(width=300, record=True)
    con.print(dims_table(fake))
    lines = [ln for ln in con.export_text().splitlines() if ln.startswith("│")]
    assert [ln.split("│")[2].strip() for ln in lines] == ["3,276", "6,216"]
