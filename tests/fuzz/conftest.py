"""Fuzz-suite plumbing: the shared worker process and the end-of-session summary (see
tests/fuzz/tally.py)."""

from __future__ import annotations

import pytest

from tests.fuzz.worker import close_worker

# tests/fuzz/tally.py reads the run's size when it is first imported: here only inside the hooks,
# after the root conftest has turned ``--fuzz`` and ``--fuzz-seed`` into its environment variables.


def pytest_sessionstart(session):
    from tests.fuzz.tally import MODE, OUT

    # problems are appended as they are found: start from an empty findings file
    if MODE != "short":
        OUT.unlink(missing_ok=True)
        OUT.with_suffix(".notes.jsonl").unlink(missing_ok=True)


def pytest_sessionfinish(session, exitstatus):
    from tests.fuzz.tally import MODE, TALLY

    close_worker()
    if MODE != "short" and TALLY.problems:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    from tests.fuzz.tally import MODE, OUT, TALLY

    if not TALLY.counts:
        return
    for line in TALLY.lines():
        terminalreporter.write_line(line)
    if MODE != "short":
        TALLY.write_counts()
        terminalreporter.write_line(f"  counts written to {OUT.with_suffix('.counts.json')}")
    if TALLY.problems:
        TALLY.write(OUT)
        terminalreporter.write_line(f"  {len(TALLY.problems)} problems written to {OUT}")
