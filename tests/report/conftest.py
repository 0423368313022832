"""Fixtures of the committee-page tests: an instance with a sourced [cluster] and a token budget,
the same instance without them, a co-design result, and their reports (each written once per
session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.util import run
from tests.report.nvl72 import NVL, SPACE, TOKENS, report, with_cluster


@pytest.fixture(scope="session")
def priced(tmp_path_factory) -> tuple[Path, dict]:
    """(folder, committee JSON) of the report on the NVL72 instance with a [cluster] and a token
    budget."""
    tmp = tmp_path_factory.mktemp("priced")
    out = tmp / "out"
    return out, report([with_cluster(tmp / "inst.toml")], out)


@pytest.fixture(scope="session")
def unpriced(tmp_path_factory) -> tuple[Path, dict]:
    """(folder, committee JSON) of the report on the NVL72 instance as shipped (no [cluster], no
    tokens)."""
    out = tmp_path_factory.mktemp("unpriced") / "out"
    return out, report([NVL], out)


@pytest.fixture(scope="session")
def codesign_json(tmp_path_factory) -> Path:
    """The JSON of ``hieropt codesign`` on the NVL72 space with the token budget (36 candidates
    solved)."""
    path = tmp_path_factory.mktemp("codesign") / "codesign.json"
    r = run("codesign", SPACE, "--tokens", f"{TOKENS:g}", "--workers", "1", "--json", path)
    assert r.exit_code == 0, r.output
    return path


@pytest.fixture(scope="session")
def codesigned(tmp_path_factory, codesign_json) -> tuple[Path, dict]:
    """(folder, committee JSON) of the report on the co-design result, with its space and token
    budget."""
    out = tmp_path_factory.mktemp("codesigned") / "out"
    return out, report([codesign_json, "--space", SPACE, "--tokens", f"{TOKENS:g}"], out)
