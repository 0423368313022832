"""Concurrency: independent solves at once in one process (threads) and in several (spawn and fork),
and signals to a parallel sweep.

The library promises independent calls in one process: 8 threads each solving its own instance must
give the same answers as solving them one after the other, and so must 4 processes started with
spawn or fork (fork after the parent already used HiGHS, and a provision() in a forked child after
one in the parent). Each scenario runs in the fuzz worker process with a timeout, so a deadlock is
reported as a failure instead of stalling the test run. SIGTERM or SIGINT to ``hieropt explore
--workers 2`` must leave no process behind.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hieropt.spec import LinearConstraint
from tests.fuzz.worker import Hang, Raised, worker

REPO = Path(__file__).resolve().parents[2]
HIEROPT = Path(sys.executable).with_name("hieropt")
psutil = pytest.importorskip("psutil")


def _instances(n: int) -> list:
    """``n`` different instances: the default instance at totals of 400, 450, ... GB/s per NPU,
    alternating loops."""
    import hieropt

    base = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    loops = ("no_overlap", "tp_dp_overlap", "recompute", "tp_dp_overlap_cross")
    return [base.model_copy(update={
        "constraints": (LinearConstraint(coefficients=(1.0,) * 4, sense="==", rhs=400.0 + 50 * i,
                                         text=f"sum(bw) == {400 + 50 * i}"),),
        "training_loop": loops[i % len(loops)]}) for i in range(n)]


def _same(a: list[dict], b: list[dict]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x["status"] == y["status"] == "optimal"
        assert math.isclose(x["time_ns"], y["time_ns"], rel_tol=1e-12)
        assert all(
            math.isclose(p, q, rel_tol=1e-9, abs_tol=1e-12)
            for p, q in zip(x["bw"], y["bw"], strict=True)
        )


def _run(target: str, *args, timeout: float = 240.0, **kwargs):
    try:
        r = worker().call(target, *args, timeout=timeout, **kwargs)
    except Hang as e:
        pytest.fail(f"deadlock or hang: {e}")
    if isinstance(r, Raised):
        pytest.fail(f"{r.type}: {r.message}\n{r.traceback[-3000:]}")
    return r


def test_eight_threads_same_answers_as_serial():
    r = _run("tests.fuzz.tasks:threads_vs_serial", _instances(8), threads=8, timeout=90.0)
    _same(r["serial"], r["parallel"])


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_four_processes_same_answers_as_serial(method: str):
    r = _run("tests.fuzz.tasks:pool_vs_serial", _instances(4), method, processes=4)
    _same(r["serial"], r["parallel"])


def test_provision_in_forked_child_after_parent():
    import hieropt

    inst = hieropt.load_instance(REPO / "instances" / "gpt3-4d.toml")
    r = _run(
        "tests.fuzz.tasks:provision_after_fork",
        inst,
        str(REPO / "catalogs" / "example-4d.toml"),
        timeout_s=20.0,
        timeout=120.0,
    )
    kind, child = r["child"]
    assert kind == "ok", f"forked child: {kind} {child}"
    assert child["status"] == r["parent"]["status"] == "optimal"
    assert math.isclose(child["value"], r["parent"]["value"], rel_tol=1e-12)


# ------------------------------------------------------------------------------------------ signals
def _explore(tmp_path: Path) -> subprocess.Popen:
    # outputs to files, not pipes: a left-over child would hold a pipe open and hide the parent's
    # exit
    with open(tmp_path / "out.txt", "w") as out, open(tmp_path / "err.txt", "w") as err:
        return subprocess.Popen(
            [
                str(HIEROPT),
                "explore",
                str(REPO / "spaces" / "gpt3-4096.toml"),
                "--workers",
                "2",
                "--out",
                str(tmp_path / "r.csv"),
            ],
            cwd=tmp_path,
            stdout=out,
            stderr=err,
            start_new_session=True,
            preexec_fn=_default_signals,
        )


def _default_signals() -> None:
    """In the sweep's process before it starts: SIGINT and SIGTERM as a terminal gives them. A test
    session run in the background (``nohup``, ``cmd &`` in a script) ignores SIGINT, an ignored
    signal stays ignored across exec, and Python then installs no KeyboardInterrupt handler: the
    sweep would rightly run on and the test fail."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _children_when_busy(proc: subprocess.Popen, want: int = 2, timeout: float = 60.0) -> list:
    """The sweep's descendant processes once ``want`` of them run (the pool's workers), or fail."""
    parent = psutil.Process(proc.pid)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        kids = [k for k in parent.children(recursive=True) if k.is_running()]
        if len(kids) >= want:
            # let the pool take its first tasks (the whole sweep can take < 1 s on an idle machine)
            time.sleep(0.1)
            return parent.children(recursive=True)
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    pytest.fail(
        "explore --workers 2 started "
        f"{len(parent.children(recursive=True)) if proc.poll() is None else 0} "
        "worker processes"
    )


def _alive(procs: list) -> list:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


@pytest.mark.skipif(
    not HIEROPT.exists(), reason="the hieropt console script is not installed next to Python"
)
@pytest.mark.parametrize("sig, to_group", [
    (signal.SIGTERM, False),
    (signal.SIGINT, False),
    (signal.SIGINT, True),
], ids=["SIGTERM", "SIGINT", "SIGINT-to-group"])
def test_signal_to_parallel_sweep_leaves_no_process(tmp_path: Path, sig: int, to_group: bool):
    proc = _explore(tmp_path)
    try:
        kids = _children_when_busy(proc)
        (os.killpg if to_group else os.kill)(proc.pid, sig)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("explore did not end within 60 s of the signal")
        err = (tmp_path / "err.txt").read_text()
        end = time.monotonic() + 15
        while _alive(kids) and time.monotonic() < end:
            time.sleep(0.2)
        left = _alive(kids)
        assert not left, (
            f"processes left behind after {signal.Signals(sig).name}: {[p.pid for p in left]}"
        )
        if sig == signal.SIGINT:
            assert proc.returncode == 130, err[-2000:]
            assert "Traceback" not in err, err[-3000:]
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
