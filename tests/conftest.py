"""Shared fixtures, the test suites' markers and the summary of what was skipped.

Markers (registered in pyproject.toml) are applied by folder, so a test file needs none of its own:

| marker | tests | what they need |
|---|---|---|
| ``oracle`` | ``tests/oracle`` | SCIP (pyscipopt) as an independent global solver; minutes |
| ``fidelity`` | ``tests/fidelity``, ``tests/cli/test_astrasim_cli.py`` | the ASTRA-sim binary |
| ``fuzz`` | ``tests/fuzz``, ``tests/solve/test_procurement_fuzz.py`` | random inputs; minutes |
| ``shared_data`` | every test using the ``shared_data`` fixture | the reference data folder |
| ``docs`` | ``tests/docs`` | runs the tutorial's commands |
| ``browser`` | ``tests/report/test_browser.py`` | headless Chromium (skipped without it) |
| ``heavy`` | marked in the test file (several seconds each) | left out of ``--quick`` only |
| ``slow`` | marked in the test file (larger samples) | run by ``--slow`` or ``-m slow`` |

Select with ``-m``, e.g. ``-m "not oracle and not fuzz"``; ``scripts/test --quick`` runs the
unit, solve, CLI, workload and tutorial tests without the oracle, fuzz, fidelity, heavy and slow
ones.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from tests.cases import REPO, shared_data_dir

__all__ = ["REPO", "shared_data_dir"]

FOLDER_MARKERS = {"oracle": "oracle", "fidelity": "fidelity", "fuzz": "fuzz", "docs": "docs"}
"""Folder of tests/ -> the marker every test in it gets."""

FILE_MARKERS = {"test_astrasim_cli.py": "fidelity", "test_procurement_fuzz.py": "fuzz"}
"""Test file name (outside those folders) -> its marker."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="also run the tests marked slow (larger random samples)",
    )
    parser.addoption(
        "--fuzz",
        choices=("short", "medium", "long"),
        default=None,
        help="size of the fuzz suites: short (default), medium (1,000 instances), long (10,000)",
    )
    parser.addoption(
        "--fuzz-seed", type=int, default=None, help="fix the fuzz suites' random draws"
    )


def pytest_configure(config: pytest.Config) -> None:
    """Hand ``--fuzz`` and ``--fuzz-seed`` to the fuzz suites (and their worker processes), which
    read them when their modules are collected."""
    if config.getoption("--fuzz"):
        os.environ["HIEROPT_FUZZ"] = config.getoption("--fuzz")
    if config.getoption("--fuzz-seed") is not None:
        os.environ["HIEROPT_FUZZ_SEED"] = str(config.getoption("--fuzz-seed"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    run_slow = config.getoption("--slow") or "slow" in (config.getoption("-m") or "")
    skip_slow = pytest.mark.skip(reason="slow: run with --slow or -m slow")
    for item in items:
        path = Path(str(item.fspath))
        parts = (
            path.relative_to(REPO / "tests").parts if path.is_relative_to(REPO / "tests") else ()
        )
        if parts and parts[0] in FOLDER_MARKERS:
            item.add_marker(FOLDER_MARKERS[parts[0]])
        if path.name in FILE_MARKERS:
            item.add_marker(FILE_MARKERS[path.name])
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker("shared_data")
        if "slow" in item.keywords and not run_slow:
            item.add_marker(skip_slow)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of the shared data folder; skips the test when it is not present."""
    d = shared_data_dir()
    if d is None:
        pytest.skip("shared data folder not found (set HIEROPT_SHARED_DATA)")
    return d


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """One line per reason a test was skipped or deselected, with its count."""
    reasons: Counter[str] = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    deselected = len(terminalreporter.stats.get("deselected", []))
    if not reasons and not deselected:
        return
    terminalreporter.section("what did not run, and why")
    if deselected:
        how = " ".join(
            f"{opt} {config.getoption(opt)!r}" for opt in ("-m", "-k") if config.getoption(opt)
        )
        terminalreporter.write_line(f"{deselected:6d} deselected by {how}")
    for reason, n in reasons.most_common():
        terminalreporter.write_line(f"{n:6d} skipped: {reason}")
