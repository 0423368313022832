"""Helpers shared by test modules: the repository's root and the reference data folder.

Test modules import these from here, not from ``conftest.py`` or from other test modules.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
"""The repository's root folder."""


def shared_data_dir() -> Path | None:
    """The reference data folder (LIBRA files, ASTRA-sim workloads, reference optima), or None when absent.

    ``$HIEROPT_SHARED_DATA`` when set, else ``shared/data`` beside the repository; it counts only when it holds a
    ``libra`` folder.
    """
    env = os.environ.get("HIEROPT_SHARED_DATA")
    cand = Path(env) if env else REPO.parent / "shared" / "data"
    return cand if (cand / "libra").is_dir() else None


def seeds(quick: int, slow: int) -> list:
    """Seeds ``0 .. slow - 1`` for ``pytest.mark.parametrize``; those from ``quick`` on are marked ``slow`` (they run
    with ``--slow`` or ``-m slow``)."""
    import pytest

    return [pytest.param(s, marks=pytest.mark.slow) if s >= quick else s for s in range(slow)]
