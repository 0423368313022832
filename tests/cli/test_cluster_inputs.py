"""``--dask`` addresses are checked before any work (one line naming ``--dask``, never a traceback
from inside ``distributed``), and errors a co-design search raises about its space name the space
file, not its ``name``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hieropt.errors import InputError
from hieropt.io.dask_address import check_dask_address

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
SPACE = REPO / "spaces" / "gpt3-4096.toml"
CODESIGN = REPO / "spaces" / "codesign-gpt3-4096.toml"

BAD = [
    ("", "the scheduler address is empty"),
    ("bogus", "'bogus': not a scheduler address (want HOST:PORT)"),
    ("tcp://", "'tcp://': no HOST:PORT after the scheme"),
    (
        "inproc://x",
        "'inproc://x': an in-process address names a scheduler inside this same process",
    ),
    ("tls://127.0.0.1:1", "'tls://127.0.0.1:1': a tls:// address needs the client's certificates"),
    ("ucx://x", "'ucx://x': the scheme ucx:// is not supported"),
    ("tcp://127.0.0.1:0", "'tcp://127.0.0.1:0': port 0 is not in 1-65535"),
    ("127.0.0.1:8786 x", "'127.0.0.1:8786 x': not a scheduler address"),
]


@pytest.mark.parametrize("command, space", [("explore", SPACE), ("codesign", CODESIGN)])
@pytest.mark.parametrize("address, problem", BAD)
def test_a_bad_dask_address_is_one_line(command, space, address, problem):
    r = run(command, space, "--dask", address)
    assert r.exit_code == 2
    line = error_line(r)
    assert line.startswith(f"error: --dask: {problem}"), line
    assert "fix: give the scheduler's address as tcp://HOST:PORT" in line or "fix: set them" in line


@pytest.mark.parametrize("given, checked", [
    ("127.0.0.1:8786", "tcp://127.0.0.1:8786"), ("TCP://sched.example:1", "tcp://sched.example:1"),
    ("tcp://[::1]:8786", "tcp://[::1]:8786"), (" tcp://10.0.0.5:8786 ", "tcp://10.0.0.5:8786"),
])
def test_good_addresses_are_written_out(given, checked):
    assert check_dask_address(given) == checked


def test_tls_with_certificates_configured_passes(monkeypatch):
    import dask.config

    with dask.config.set(
        {"distributed.comm.tls.ca-file": "ca.pem", "distributed.comm.tls.client.cert": "c.pem"}
    ):
        assert check_dask_address("tls://127.0.0.1:8786") == "tls://127.0.0.1:8786"
    with pytest.raises(InputError):
        check_dask_address("tls://127.0.0.1:8786")


def test_the_library_checks_the_address_too():
    from hieropt.io.space import load_space
    from hieropt.studies.explore import explore

    with pytest.raises(InputError, match=r"^dask: 'inproc://x': an in-process address"):
        explore(load_space(SPACE), "performance", dask="inproc://x")


def test_a_codesign_search_error_names_the_space_file(tmp_path):
    text = CODESIGN.read_text(encoding="utf-8").replace('"../models/', f'"{REPO / "models"}/')
    space = tmp_path / "s.toml"
    space.write_text(text.replace("tp = [1, 2, 4, 8, 16]", "tp = [1024]"), encoding="utf-8")
    line = error_line(run("codesign", space, "--workers", "1"))
    assert line.startswith(f"error: {space}: plans: none of the 240 plan combinations is valid"), (
        line
    )
    assert "codesign-gpt3-4096:" not in line
