"""``hieropt simulate`` says on stderr what the simulator runs (allocation, workload, NPUs, chunks,
the trace's size) and that it may take minutes, as each run starts, and the elapsed time as it ends:
a 4,096-NPU run takes about 17 CPU minutes, which printed nothing before its table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hieropt.progress import ActivityLine, elapsed_text
from hieropt.spec import Layer
from hieropt.studies.simulate import run_text, simulate
from tests.cli.util import astrasim_instance_file, run
from tests.fidelity.instances import make_instance, ph

TAIL = ("may take minutes and gigabytes of memory on thousands of NPUs (4,096 at one chunk: about "
        "17 CPU minutes and 7 GB per run; the memory grows with the trace)")


def _lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip()]


def test_simulate_prints_what_runs_and_its_elapsed_time(tmp_path: Path, astra_sim: Path) -> None:
    inst = astrasim_instance_file(tmp_path)  # 4 x 4 x 8 = 128 NPUs, one workload of 8 trace nodes
    r = run("simulate", inst, "--astra-sim", astra_sim, "--bw", "50,30,20", "--chunks", "4")
    assert r.exit_code == 0, r.output
    lines = _lines(r.stderr)
    assert len(lines) == 2, r.stderr
    # the bundle's one trace file holds 687 bytes (the bundle's own count, hard links once)
    assert lines[0] == (
        "ASTRA-sim: simulating the bw_gbps (--bw) allocation, workload 'wl': 128 NPUs, 4 chunks "
        f"per collective, trace 687 bytes in 1 file (8 nodes); {TAIL}"
    )
    m = re.fullmatch(r"ASTRA-sim: the bw_gbps \(--bw\) allocation, workload 'wl' simulated in "
                     r"(\d+\.\d) s",
                     lines[1])
    assert m is not None, lines[1]
    assert 0.0 < float(m.group(1)) < 60.0
    # the table is on stdout, not mixed with the lines
    assert "ASTRA-sim:" not in r.stdout and "simulated ms" in r.stdout


def test_each_allocation_is_numbered(tmp_path: Path, astra_sim: Path) -> None:
    inst = astrasim_instance_file(tmp_path)
    # (4 chunks: the simulator misses the concurrent time by 31.7 %, exit 3 with its one error
    # line after the runs' lines)
    r = run("simulate", inst, "--astra-sim", astra_sim, "--chunks", "4")
    assert r.exit_code == 3, r.output
    *lines, error = _lines(r.stderr)
    assert error.startswith("error: the simulator does not confirm the answer: ")
    assert len(lines) == 6, r.stderr
    starts = [ln.split(":")[1].strip() for ln in lines[0::2]]
    assert starts == ["simulating allocation optimum (1 of 3), workload 'wl'",
                      "simulating allocation equal split (2 of 3), workload 'wl'",
                      "simulating allocation traffic-proportional (3 of 3), workload 'wl'"]
    assert all(ln.endswith(TAIL) for ln in lines[0::2])
    assert all(re.fullmatch(r"ASTRA-sim: allocation .* simulated in \d+\.\d s", ln)
               for ln in lines[1::2]), lines


def test_the_library_prints_nothing_unless_asked(tmp_path: Path, astra_sim: Path,
                                                 capfd: pytest.CaptureFixture[str]) -> None:
    layer = Layer(name="l", forward=ph(5, "ALLREDUCE", 1e6), input_grad=ph(), weight_grad=ph())
    inst = make_instance([("Ring", 2)], [layer], [2], [1], [1])
    quiet = simulate(inst, [10], astra_sim)
    assert capfd.readouterr().err == ""
    loud = simulate(inst, [10], astra_sim, progress=True, label="allocation x")
    err = _lines(capfd.readouterr().err)
    assert err[0].startswith("ASTRA-sim: simulating allocation x, workload ") and len(err) == 2
    assert quiet.simulated_iteration_time_ns == loud.simulated_iteration_time_ns
    # the start line names the bundle's own figures
    start, end = run_text(loud.bundle, 0, "allocation x")
    w = loud.bundle.workloads[0]
    assert start == (f"ASTRA-sim: simulating allocation x, workload {w.name!r}: 2 NPUs, 1 chunk "
                     f"per collective, trace {w.trace_bytes:,} bytes in 1 file ({w.nodes} nodes); "
                     + TAIL)
    assert end == f"ASTRA-sim: allocation x, workload {w.name!r} simulated"


@pytest.mark.parametrize(("seconds", "text"), [
    (2.44, "2.4 s"), (59.94, "59.9 s"), (60.0, "1 min 00 s"), (17 * 60 + 3.7, "17 min 03 s"),
    (3600 + 2 * 60 + 59, "1 h 02 min"),
])
def test_elapsed_time_text(seconds: float, text: str) -> None:
    assert elapsed_text(seconds) == text


def test_a_disabled_line_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    line = ActivityLine(False)
    line.start("x")
    assert line.stop("y") is None and capfd.readouterr().err == ""
