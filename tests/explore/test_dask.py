"""The same sweep on a Dask cluster (a LocalCluster started here, two worker processes) gives the
serial table."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hieropt.studies.explore import explore, load_space, read_results

from .util import write_space

REPO = Path(__file__).resolve().parents[2]
DASK = Path(sys.executable).parent / "dask"


def _table(result) -> list[tuple]:
    return [
        (r["shape_id"], r["rank"], r["objective_value"], r["network_cost_usd"])
        for r in result.ranking
    ]


@pytest.mark.heavy
def test_local_cluster_gives_the_serial_table(tmp_path):
    distributed = pytest.importorskip("distributed")
    space = load_space(write_space(tmp_path, tp=4, rule="all_placements"))
    serial = explore(space, workers=1)
    out = tmp_path / "dask.csv"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        result = explore(space, dask=cluster.scheduler_address, out=out)
        # a Client works too; a rerun resumes from the file
        with distributed.Client(cluster) as client:
            again = explore(space, dask=client, out=out)
    assert result.backend == f"dask({cluster.scheduler_address})"
    assert _table(result) == _table(serial)
    assert again.solved_ids == () and _table(again) == _table(serial)
    rows = read_results(out)
    assert len(rows) == len(serial.rows)
    # solved in the cluster's workers
    assert all(not r["worker"].endswith(f":{os.getpid()}") for r in rows)


# --------------------------------------------------------------------------------------------------
# A cluster as an operator runs one (docs/dask.md): a scheduler and two workers as separate
# processes, bound to 127.0.0.1; one worker is killed mid-sweep. Its tasks are run again on the
# other worker: no row lost, none twice.

def _start(args: list[str], log: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    return subprocess.Popen(
        [str(DASK), *args],
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        env=env,
        cwd=log.parent,
        start_new_session=True,
    )


def _wait_for(path: Path, procs: list[subprocess.Popen], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() or path.stat().st_size == 0:
        assert all(p.poll() is None for p in procs), "a Dask process ended while starting"
        assert time.monotonic() < deadline, f"{path} not written within {seconds:g} s"
        time.sleep(0.1)


@pytest.mark.slow
def test_a_worker_killed_mid_sweep_loses_no_row(tmp_path):
    distributed = pytest.importorskip("distributed")
    if not DASK.is_file():
        pytest.skip("the dask command is not installed")
    space = load_space(write_space(tmp_path, tp=4, rule="all_placements"))
    serial = explore(space, workers=1)
    info = tmp_path / "scheduler.json"
    procs = [
        _start(
            [
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--dashboard-address",
                "127.0.0.1:0",
                "--scheduler-file",
                str(info),
            ],
            tmp_path / "scheduler.log",
        )
    ]
    try:
        _wait_for(info, procs)
        for k in range(2):
            procs.append(
                _start(
                    [
                        "worker",
                        "--scheduler-file",
                        str(info),
                        "--host",
                        "127.0.0.1",
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--no-dashboard",
                        "--name",
                        f"w{k}",
                    ],
                    tmp_path / f"worker{k}.log",
                )
            )
        with distributed.Client(scheduler_file=str(info), timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
            address = client.scheduler.address
            assert address.startswith("tcp://127.0.0.1:")
            workers = client.scheduler_info()["workers"]
            assert all(w.startswith("tcp://127.0.0.1:") for w in workers)
            dashboard = client.dashboard_link
        assert "127.0.0.1" in dashboard
        victim = procs[1]
        killed = []

        def kill_one(row: dict) -> None:
            # after the first row: the sweep is under way, the other tasks still to come
            if not killed:
                os.killpg(victim.pid, signal.SIGKILL)
                victim.wait(timeout=30)
                killed.append(row["shape_id"])

        out = tmp_path / "rows.csv"
        result = explore(space, dask=address, out=out, on_row=kill_one)
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
    assert killed and victim.returncode == -signal.SIGKILL
    rows = read_results(out)
    ids = [r["shape_id"] for r in rows]
    assert len(ids) == len(set(ids)) == len(serial.rows)  # none twice
    assert set(ids) == {r["shape_id"] for r in serial.rows}  # none lost
    assert _table(result) == _table(serial)


def _scheduler(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    info = tmp_path / "scheduler.json"
    proc = _start(
        [
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
            "--scheduler-file",
            str(info),
        ],
        tmp_path / "scheduler.log",
    )
    _wait_for(info, [proc])
    return proc, info


def _stop(*procs: subprocess.Popen) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)


@pytest.mark.slow
def test_a_scheduler_without_workers_ends_the_sweep(tmp_path, monkeypatch):
    """No worker ever joins: the sweep ends after NO_WORKER_S (here 2 s) with one SolverError line,
    not a hang."""
    pytest.importorskip("distributed")
    import json

    from hieropt.errors import SolverError
    from hieropt.studies.explore import executors

    monkeypatch.setattr(executors, "NO_WORKER_S", 2.0)
    space = load_space(write_space(tmp_path, tp=4, rule="all_placements"))
    proc, info = _scheduler(tmp_path)
    try:
        address = json.loads(info.read_text())["address"]
        with pytest.raises(
            SolverError,
            match=r"^Dask: the scheduler at tcp://127\.0\.0\.1:\d+ has had no worker "
            r"for 2 s \(all died or none joined\)",
        ):
            explore(space, dask=address, out=tmp_path / "rows.csv")
    finally:
        _stop(proc)


@pytest.mark.slow
def test_a_scheduler_killed_mid_sweep_is_one_line(tmp_path):
    """The scheduler dies after the first row: one line (exit 3) saying the connection was lost, the
    rows so far kept in the file; a rerun on a new cluster resumes and completes the table."""
    distributed = pytest.importorskip("distributed")
    from hieropt.errors import SolverError

    space = load_space(write_space(tmp_path, tp=4, rule="all_placements"))
    serial = explore(space, workers=1)
    proc, info = _scheduler(tmp_path)
    worker = _start(
        [
            "worker",
            "--scheduler-file",
            str(info),
            "--host",
            "127.0.0.1",
            "--nthreads",
            "1",
            "--no-nanny",
            "--no-dashboard",
        ],
        tmp_path / "worker.log",
    )
    out = tmp_path / "rows.csv"
    try:
        with distributed.Client(scheduler_file=str(info), timeout="60s") as client:
            client.wait_for_workers(1, timeout=120)
            address = client.scheduler.address

        def kill_scheduler(row: dict) -> None:
            if proc.poll() is None:
                _stop(proc)

        with pytest.raises(
            SolverError, match=r"^Dask: lost the connection to the scheduler at tcp://127\.0\.0\.1"
        ):
            explore(space, dask=address, out=out, on_row=kill_scheduler)
    finally:
        _stop(proc, worker)
    kept = read_results(out)
    assert 1 <= len(kept) < len(serial.rows)
    again = explore(space, workers=1, out=out)  # resumes from the rows kept
    assert len(again.solved_ids) == len(serial.rows) - len(kept)
    assert _table(again) == _table(serial)
