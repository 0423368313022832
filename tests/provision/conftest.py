"""Fixtures of the provisioning tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.provision.fabric_power import fabric_power_problem


@pytest.fixture
def problem(tmp_path: Path):
    """The fat-tree fabric-power problem (tests/provision/fabric_power.py): (instance, catalog
    path)."""
    return fabric_power_problem(tmp_path)
