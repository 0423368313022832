"""One simulator run of hieropt's ASTRA-sim bundle: the binary checked (:func:`check_binary`), each
workload simulated in a subprocess with a timeout, its output read as bytes and decoded tolerantly,
``sys[i] finished, C cycles`` read (1 cycle = 1 ns) and the slowest NPU taken as the iteration time
(:func:`run_bundle`); with ``progress``, a line on stderr as each run starts and ends
(:func:`run_text`, :class:`hieropt.progress.ActivityLine`). The comparison with hieropt's
prediction is :mod:`hieropt.studies.simulate`'s."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from ..errors import InputError, SolverError
from ..io.astrasim_bundle import Bundle
from ..progress import ActivityLine
from ..units import plural

RESULT = re.compile(r"sys\[(\d+)\] finished, (\d+) cycles")
"""The simulator's line of one NPU's end: its index and its cycles (ns)."""
DEFAULT_TIMEOUT_S = 600.0
"""Time allowed per simulator run by default, s."""


def check_binary(binary: str | Path | None) -> Path:
    """The simulator binary as an absolute path (a relative one is taken from the current folder:
    the simulator runs in the bundle's folder); InputError (exit 2, naming ``binary``: the command
    line names its ``--astra-sim``) when missing, not a file, not a program (no ELF binary, no
    script), or not executable."""
    if binary is None or str(binary) == "":
        raise InputError("binary", None, "no simulator binary given", "pass the path of "
                         "AstraSim_Analytical_Congestion_Unaware (binary=PATH, --astra-sim PATH; "
                         "or set ASTRA_SIM)")
    p = Path(binary)
    problem = ("no such file" if not p.exists() else "is not a file" if not p.is_file() else
               None if os.access(p, os.X_OK) else "is not executable")
    if problem == "is not executable":
        with p.open("rb") as f:  # (a program: an ELF binary or a script; else another file)
            head = f.read(4)
        if head == b"\x7fELF" or head.startswith(b"#!"):
            raise InputError("binary", str(p), problem, f"chmod +x {p}")
        problem = "is not a program (neither an executable binary nor a script)"
    if problem is not None:
        raise InputError("binary", str(p), problem, "give the path of the ASTRA-sim binary"
                         + (" (AstraSim_Analytical_Congestion_Unaware)" if "program" in problem
                            else ""))
    return p.absolute()


def _last_message(out: str, err: str) -> str:
    """The simulator's last message: the last line on stderr, else on stdout (at most 300
    characters)."""
    for text in (err, out):
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if lines:
            return lines[-1][:300]
    return "(no output)"


def _text(raw: bytes) -> str:
    """The simulator's output as text: UTF-8 where it is, any other byte replaced (U+FFFD), so a
    message in another encoding or binary noise is still reported, not a UnicodeDecodeError."""
    return raw.decode("utf-8", errors="replace")


def _size_text(n_bytes: int) -> str:
    """Bytes as text: ``12,345 bytes`` below 1 MB, ``1.2 MB`` below 1 GB, else ``2.3 GB`` (1 MB =
    1e6 bytes, 1 GB = 1e9 bytes)."""
    if n_bytes < 1e6:
        return f"{n_bytes:,} bytes"
    return f"{n_bytes / 1e6:,.1f} MB" if n_bytes < 1e9 else f"{n_bytes / 1e9:,.1f} GB"


SIGKILL = 9
"""The signal the kernel's out-of-memory killer sends (a run killed by it prints nothing about it:
its last line is whatever it logged before)."""


def run_text(bundle: Bundle, k: int, label: str = "") -> tuple[str, str]:
    """The progress lines of the simulator's run of workload ``k`` of ``bundle`` (``label``: what
    the bundle is, e.g. ``allocation optimum (1 of 3)``; '' none): the start line, saying what
    runs, on how many NPUs, the size of its trace and that a large instance may take minutes; and
    the head of the end line (:class:`hieropt.progress.ActivityLine` adds the elapsed time)."""
    w, n = bundle.workloads[k], len(bundle.workloads)
    what = (f"{label}, " if label else "") + f"workload {w.name!r}" + (
        f" ({k + 1} of {n})" if n > 1 else "")
    start = (
        f"ASTRA-sim: simulating {what}: {plural(bundle.npus, 'NPU')}, "
        f"{plural(bundle.chunks, 'chunk')} per collective, trace {_size_text(w.trace_bytes)} in "
        f"{plural(w.trace_files, 'file')} ({plural(w.nodes, 'node')}); may take minutes and "
        "gigabytes of memory on thousands of NPUs (4,096 at one chunk: about 17 CPU minutes and 7 "
        "GB per run; the memory grows with the trace)"
    )
    return start, f"ASTRA-sim: {what} simulated"


def run_bundle(
    bundle: Bundle, binary: str | Path, timeout_s: float = DEFAULT_TIMEOUT_S,
    progress: bool = False, label: str = "",
) -> tuple[float, ...]:
    """Simulate every workload of ``bundle``; returns each one's iteration time (slowest NPU, ns).
    ``progress``: a line on stderr as each run starts (:func:`run_text`: what runs, its NPUs and
    trace size), the elapsed time while it runs (on a terminal) and a line with the elapsed time
    when it ends with a result (a failed run gets none: its error follows)
    (:class:`hieropt.progress.ActivityLine`); ``label`` says what the bundle is.

    Raises:
        InputError: the binary is missing or not executable (exit 2).
        SolverError: the run failed, timed out or printed no result (exit 3), with the simulator's
            last message; killed by SIGKILL (the out-of-memory killer's signal), with the trace's
            size and what to shrink instead.
    """
    binary = check_binary(binary)
    out = []
    for k in range(len(bundle.workloads)):
        line = ActivityLine(progress)
        start, end = run_text(bundle, k, label)
        line.start(start, "ASTRA-sim running")
        done = False
        try:
            out.append(_run_one(bundle, binary, k, timeout_s))
            done = True
        finally:
            line.stop(end if done else None)
    return tuple(out)


def _run_one(bundle: Bundle, binary: Path, k: int, timeout_s: float) -> float:
    """The simulator's time of workload ``k`` of ``bundle`` (slowest NPU, ns); the SolverError of
    :func:`run_bundle` when it fails."""
    w = bundle.workloads[k]
    args = bundle.simulator_args(binary, k)
    try:
        r = subprocess.run(args, capture_output=True, timeout=timeout_s, cwd=bundle.folder)
    except subprocess.TimeoutExpired as e:
        raise SolverError(
            f"ASTRA-sim did not finish workload {w.name!r} within {timeout_s:g} s"
        ) from e
    except OSError as e:
        raise SolverError(f"ASTRA-sim could not be started: {e}") from e
    stdout, stderr = _text(r.stdout), _text(r.stderr)
    if r.returncode == -SIGKILL:  # (its last line is a log line, not the cause)
        raise SolverError(
            f"ASTRA-sim was killed by signal {SIGKILL} on workload {w.name!r} (likely out of "
            f"memory: the trace is {_size_text(w.trace_bytes)} in "
            f"{plural(w.trace_files, 'file')} for {plural(bundle.npus, 'NPU')}); fix: simulate "
            "fewer chunks per collective (chunks, --chunks) or a smaller instance, or run on a "
            "machine with more memory (the kernel log, dmesg, names an out-of-memory kill)"
        )
    if r.returncode != 0:
        how = f"signal {-r.returncode}" if r.returncode < 0 else f"exit {r.returncode}"
        raise SolverError(
            f"ASTRA-sim failed on workload {w.name!r} ({how}): {_last_message(stdout, stderr)}"
        )
    cycles = [int(m.group(2)) for m in RESULT.finditer(stdout)]
    if not cycles:
        raise SolverError(
            f"ASTRA-sim printed no result for workload {w.name!r}: "
            f"{_last_message(stdout, stderr)}"
        )
    if len(cycles) != bundle.npus:
        raise SolverError(
            f"ASTRA-sim reported {len(cycles)} of {bundle.npus} NPUs for workload {w.name!r}: "
            f"{_last_message(stdout, stderr)}"
        )
    if max(cycles) <= 0:
        raise SolverError(
            f"ASTRA-sim reported 0 cycles on every NPU for workload {w.name!r} (it simulated "
            f"nothing; a trace it could not read?): {_last_message(stdout, stderr)}"
        )
    return float(max(cycles))


__all__ = ["RESULT", "DEFAULT_TIMEOUT_S", "check_binary", "run_bundle", "run_text"]
