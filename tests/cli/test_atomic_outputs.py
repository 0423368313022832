"""Output files are replaced atomically: a run that fails while writing (a full disk) leaves the
complete file of an earlier run in place, and says so in one line naming the file.

The full-disk tests mount a 64 KiB tmpfs (root only; skipped otherwise), write a complete result
there, fill the file system and run the same command again.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hieropt.io.files import OutputError, json_text, replacing, write_atomic

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"
NVL72 = REPO / "instances" / "gpt3-nvl72-2304.toml"
MIX = REPO / "instances" / "mix-gpt3-dlrm-moe-4d.toml"


def hieropt(*args: str | Path) -> subprocess.CompletedProcess:
    """``python -m hieropt ARGS`` as a process (the console entry point, whose ``main`` reports file
    errors)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "hieropt", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )


# --------------------------------------------------------------------------------------- the helper

def test_a_failed_write_leaves_the_earlier_file_and_no_temporary(tmp_path):
    out = tmp_path / "r.json"
    out.write_text('{"complete": true}\n')
    with pytest.raises(OutputError) as e, replacing(out, f"--json {out}") as tmp:
        tmp.write_text('{"comp')
        raise OSError(errno.ENOSPC, "No space left on device")
    assert out.read_text() == '{"complete": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    assert e.value.errno == errno.ENOSPC and e.value.filename == f"--json {out}"
    assert e.value.strerror == "No space left on device (the earlier r.json is intact)"


def test_write_atomic_replaces_the_whole_file(tmp_path):
    out = tmp_path / "f.csv"
    out.write_text("old,longer,than,the,new\n" * 10)
    write_atomic(out, "a,b\n")
    assert out.read_text() == "a,b\n"
    write_atomic(out, b"\x00\x01")
    assert out.read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.csv"]


def test_permissions_and_links_are_kept(tmp_path):
    out = tmp_path / "r.json"
    out.write_text("{}")
    out.chmod(0o600)
    link = tmp_path / "link.json"
    link.symlink_to(out)
    write_atomic(link, "[1]")
    assert link.is_symlink() and out.read_text() == "[1]" and out.stat().st_mode & 0o777 == 0o600


def test_a_device_is_written_in_place():
    write_atomic("/dev/null", "x")  # (not replaced by a regular file)
    assert Path("/dev/null").is_char_device()


def test_json_text_refuses_non_finite_numbers_naming_the_field():
    assert json.loads(json_text({"a": [1.0, 2]}, "--json r.json")) == {"a": [1.0, 2]}
    from hieropt.errors import InputError

    with pytest.raises(InputError) as e:
        json_text({"points": [{"t": 1.0}, {"t": float("inf")}]}, "--json r.json")
    assert str(e.value).startswith("--json r.json: points[1].t: the result is not a finite number")


# -------------------------------------------------------------------------------------- a full disk

@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs at ``tmp_path/disk`` and a function that fills it (root only; skipped
    otherwise)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {r.stderr.decode().strip()}")

    def fill() -> None:
        with open(disk / "filler", "wb", buffering=0) as f:
            for block in (4096, 1):
                try:
                    while True:
                        f.write(b"\0" * block)
                except OSError as e:
                    assert e.errno == errno.ENOSPC

    try:
        yield disk, fill
    finally:
        subprocess.run(["umount", str(disk)], check=True)


@pytest.mark.heavy
def test_full_disk_keeps_the_earlier_solve_json(full_disk):
    """The second answer is larger than the first and than the free space: written in place it was
    cut after the first answer's pages (invalid JSON)."""
    disk, fill = full_disk
    out = disk / "r.json"
    assert hieropt("solve", NVL72, "--no-sensitivity", "--json", out).returncode == 0
    earlier = out.read_text()
    assert json.loads(earlier)["status"] == "optimal"
    fill()
    r = hieropt("solve", MIX, "--json", out)
    assert r.returncode == 2
    line = r.stderr.strip()
    assert line == (
        f"error: --json {out}: cannot write or read: No space left on device (the earlier "
        "r.json is "
        "intact); fix: free space on that file system, or give a path on another one"
    ), r.stderr
    assert out.read_text() == earlier
    assert sorted(p.name for p in disk.iterdir()) == ["filler", "r.json"]


@pytest.mark.heavy
def test_full_disk_keeps_the_earlier_pareto_csv(full_disk):
    disk, fill = full_disk
    out = disk / "f.csv"
    assert hieropt("pareto", GPT3, "--points", "5", "--csv", out).returncode == 0
    earlier = out.read_text()
    assert len(earlier.splitlines()) == 6 and earlier.endswith("\n")
    fill()
    # (17 kB: cut mid-line when written in place)
    r = hieropt("pareto", GPT3, "--points", "100", "--csv", out)
    assert r.returncode == 2
    assert r.stderr.strip().startswith(
        f"error: --csv {out}: cannot write or read: No space left on device (the "
        "earlier f.csv is intact)"
    ), r.stderr
    assert out.read_text() == earlier


def test_full_disk_on_a_streamed_out_names_the_file(full_disk):
    disk, fill = full_disk
    fill()
    out = disk / "rows.csv"
    r = hieropt("explore", REPO / "spaces" / "gpt3-4096.toml", "--workers", "1", "--out", out)
    assert r.returncode == 2
    assert r.stderr.strip() == (
        f"error: --out {out}: cannot write or read: No space left on device (the rows "
        "written before are kept; a "
        "rerun resumes); fix: free space on that file system, or give a path on another one"
    ), r.stderr


@pytest.mark.heavy
def test_full_disk_keeps_the_earlier_bundle_whole(full_disk, tmp_path):
    """Every file of a bundle is written beside its place first and renamed only when all are
    written: a full disk leaves the earlier bundle as it was (its manifest, network and traces of
    the same allocation)."""
    from tests.cli.util import INSTANCE_TOML, WORKLOAD_TXT

    disk, fill = full_disk
    (tmp_path / "wl.txt").write_text(WORKLOAD_TXT)
    inst = tmp_path / "inst.toml"
    inst.write_text(INSTANCE_TOML)
    bundle = disk / "b"
    assert hieropt("export", inst, "--astra-sim", bundle, "--bw", "50,30,20").returncode == 0
    before = {
        p.relative_to(bundle): p.read_bytes() for p in sorted(bundle.rglob("*")) if p.is_file()
    }
    assert json.loads(before[Path("bundle.json")])["bw_gbps"] == [50, 30, 20]
    fill()
    r = hieropt("export", inst, "--astra-sim", bundle, "--bw", "40,40,20")
    assert r.returncode == 2
    assert r.stderr.strip() == (
        f"error: {bundle}: cannot write or read: No space left on device (the earlier "
        "bundle there is intact); fix: free space on that file system, or give a path on "
        "another one"
    ), r.stderr
    after = {
        p.relative_to(bundle): p.read_bytes() for p in sorted(bundle.rglob("*")) if p.is_file()
    }
    assert after == before


@pytest.mark.heavy
def test_full_disk_keeps_the_earlier_network_file(full_disk, tmp_path):
    """export of the network file alone: a full disk leaves the earlier file, and says so (it was
    removed)."""
    disk, fill = full_disk
    out = disk / "net.yml"
    assert hieropt("export", GPT3, "--astra-sim", out, "--bw", "250,125,75,50").returncode == 0
    earlier = out.read_text()
    fill()
    r = hieropt("export", GPT3, "--astra-sim", out, "--bw", "200,150,100,50")
    assert r.returncode == 2
    assert (
        r.stderr.strip()
        .splitlines()[-1]
        .startswith(
            f"error: --astra-sim {out}: cannot write or read: No space left on device (the "
            "earlier net.yml is intact)"
        )
    )
    assert out.read_text() == earlier
