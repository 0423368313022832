"""Shared fixtures: where the reference data lives (../shared/data beside the repository, or $HIEROPT_SHARED_DATA)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path | None:
    """The shared data folder (LIBRA files, ASTRA-sim workloads, reference optima), or None when absent."""
    env = os.environ.get("HIEROPT_SHARED_DATA")
    cand = Path(env) if env else REPO.parent / "shared" / "data"
    return cand if (cand / "libra").is_dir() else None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of the shared data folder; skips the test when it is not present (e.g. outside the project's CI)."""
    d = shared_data_dir()
    if d is None:
        pytest.skip("shared data folder not found (set HIEROPT_SHARED_DATA)")
    return d
