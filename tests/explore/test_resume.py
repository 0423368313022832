"""Results stream to the --out file as they arrive; an interrupted sweep resumes without solving a
shape twice and ends with the same table as an uninterrupted one (CSV, and Parquet through its CSV
journal)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from hieropt.errors import InputError
from hieropt.studies.explore import candidates, explore, load_space, read_results

from .util import write_space

SWEEP = """
import sys, time
from hieropt.studies.explore import explore
space, out, log = sys.argv[1:4]
def slow(row):  # a slow sweep, so that the test can kill it part-way
    with open(log, "a") as f:
        f.write(row["shape_id"] + "\\n")
    time.sleep(0.4)
explore(space, out=out, workers=1, on_row=slow)
"""


def _table(result) -> list[tuple]:
    return [
        (r["shape_id"], r["rank"], r["objective_value"], r["network_cost_usd"])
        for r in result.ranking
    ]


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _stable(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in ("worker", "solve_seconds")}


@pytest.fixture
def space_path(tmp_path: Path) -> Path:
    return write_space(tmp_path, tp=4, rule="all_placements")  # 58 candidates, 14 after pruning


def _count(space_path: Path) -> int:
    return len(candidates(load_space(space_path)).candidates)


@pytest.mark.heavy
def test_kill_mid_sweep_and_resume(tmp_path, space_path):
    out, log, script = tmp_path / "results.csv", tmp_path / "solved.log", tmp_path / "sweep.py"
    script.write_text(SWEEP, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(script), str(space_path), str(out), str(log)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while _lines(out) < 1 + 3 and time.monotonic() < deadline:  # header + 3 rows
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    n = _count(space_path)
    before = {r["shape_id"] for r in read_results(out)}
    assert 3 <= len(before) < n  # killed part-way
    resumed = explore(space_path, out=out, workers=2,
                      on_row=lambda row: log.open("a").write(row["shape_id"] + "\n"))
    assert set(resumed.resumed_ids) == before
    assert resumed.backend == "pool(2)" and resumed.cores == 2
    # throughput counts only this call's certified candidates, per core of the pool
    tp = resumed.throughput
    assert tp["certified"] == sum(
        r["status"] == "optimal" for r in resumed.rows if r["shape_id"] not in before
    )
    assert tp["certified_per_s_per_core"] == pytest.approx(
        tp["certified"] / (2 * resumed.seconds), rel=1e-12
    )
    assert not set(resumed.solved_ids) & before  # nothing in the file is solved again
    assert len(resumed.solved_ids) == len(set(resumed.solved_ids)) == n - len(before)
    solved_log = log.read_text().split("\n")[:-1]
    # no shape solved (and written) twice over both runs
    assert len(solved_log) == len(set(solved_log))
    final = read_results(out)
    assert len(final) == len({r["shape_id"] for r in final}) == n
    fresh = explore(space_path, workers=1)
    assert _table(resumed) == _table(fresh)
    assert [_stable(r) for r in resumed.rows] == [_stable(r) for r in fresh.rows]
    again = explore(space_path, out=out, workers=2)  # a third run has nothing left to do
    assert again.solved_ids == () and _table(again) == _table(fresh)


def test_line_cut_off_mid_write_is_solved_again(tmp_path, space_path):
    out = tmp_path / "results.csv"
    full = explore(space_path, out=out, workers=1)
    raw = out.read_bytes()
    last_start = raw.rstrip(b"\n").rfind(b"\n") + 1
    out.write_bytes(raw[:last_start + 25])  # the last row cut after 25 bytes, no newline
    kept = {r["shape_id"] for r in read_results(out)}
    assert len(kept) == len(full.rows) - 1
    cut_id = next(r["shape_id"] for r in full.rows if r["shape_id"] not in kept)
    again = explore(space_path, out=out, workers=1)
    assert again.solved_ids == (cut_id,)
    assert out.read_bytes().endswith(b"\n") and len(read_results(out)) == len(full.rows)
    assert _table(again) == _table(full)


def test_results_of_another_space_or_objective_are_refused(tmp_path, space_path):
    out = tmp_path / "results.csv"
    explore(space_path, out=out, workers=1)
    with pytest.raises(InputError, match="written for another space or objective"):
        explore(space_path, "performance_per_cost", out=out, workers=1)
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="not a results file"):
        explore(space_path, out=other, workers=1)


def test_parquet_interrupted_and_resumed(tmp_path, space_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "results.parquet"
    journal = tmp_path / "results.parquet.partial.csv"
    count = []

    def stop_after_five(row):
        count.append(row["shape_id"])
        if len(count) == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        explore(space_path, out=out, workers=1, on_row=stop_after_five)
    assert not out.exists() and len(read_results(journal)) == 5
    resumed = explore(space_path, out=out, workers=1)
    assert set(resumed.resumed_ids) == set(count) and not set(resumed.solved_ids) & set(count)
    assert out.exists() and not journal.exists()
    # the Parquet file holds every row, typed
    by_id = {r["shape_id"]: _stable(r) for r in read_results(out)}
    assert by_id == {r["shape_id"]: _stable(r) for r in resumed.rows}
    assert _table(resumed) == _table(explore(space_path, workers=1))


def test_parquet_without_pyarrow_is_a_clear_error(tmp_path, space_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(InputError, match="needs pyarrow"):
        explore(load_space(space_path), out=tmp_path / "r.parquet", workers=1)
