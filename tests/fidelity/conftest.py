"""Fidelity tests against the prebuilt ASTRA-sim 2.0 analytical binary (../shared/tools/astra-sim,
or $ASTRA_SIM).

They skip when the binary is absent or cannot start (it needs libprotobuf.so.32: ``apt-get install
-y libprotobuf32`` on Debian 12; ``.ci/run`` installs it when it can).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli.util import BINARY


@pytest.fixture(scope="session")
def astra_sim() -> Path:
    """The simulator binary; skips the test when it is absent or its shared libraries are
    missing."""
    if not BINARY.is_file():
        pytest.skip("ASTRA-sim binary not found (set ASTRA_SIM)")
    r = subprocess.run([str(BINARY)], capture_output=True, text=True, timeout=60)
    if "error while loading shared libraries" in r.stderr:
        pytest.skip(
            f"ASTRA-sim cannot start: {r.stderr.strip()} (apt-get install -y libprotobuf32)"
        )
    return BINARY
