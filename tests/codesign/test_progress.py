"""The search reports its progress while it runs: ``hieropt.codesign(..., progress=f)`` calls
``f(settled, total)`` after each candidate solved or settled by its bound and once at the end with
every candidate settled (the command line draws it as a bar on a terminal: the shipped GPT-3 space
searches for minutes before its summary prints)."""

from __future__ import annotations

import pytest

import hieropt
from tests.cases import REPO

SPACE = REPO / "spaces" / "codesign-gpt3-nvl72-2304.toml"


def test_progress_counts_every_candidate_up_to_the_spaces_total():
    calls: list[tuple[int, int]] = []
    r = hieropt.codesign(SPACE, workers=1, progress=lambda done, total: calls.append((done, total)))
    total = r.to_dict()["candidates"]
    assert total == 360  # plan x placement candidates on the fixed NVL72 network
    assert calls and all(t == total for _, t in calls)
    done = [d for d, _ in calls]
    # one call per candidate solved (or pruned) in the search's loop, each one more settled; then
    # the end, the rest settled at once by their bounds
    assert done[:-1] == list(range(1, len(calls)))
    assert len(calls) - 1 >= r.solved == 22
    assert calls[-1] == (total, total)


def test_progress_must_be_a_function():
    with pytest.raises(hieropt.InputError) as e:
        hieropt.codesign(SPACE, workers=1, progress=3)
    assert str(e.value).startswith(
        "progress: expected a function of two arguments (settled, total), got a int; fix: pass "
        "e.g. progress=lambda settled, total: print(settled, total)"
    )
