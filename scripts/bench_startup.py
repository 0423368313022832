#!/usr/bin/env python3
"""Benchmark the start-up of the ``hieropt`` command line: the median wall time of ``hieropt
--help``, ``hieropt solve --help`` and three bad inputs, each run as a subprocess of the installed
console script, next to the targets (help <= 0.3 s, a bad-input error <= 0.5 s).

Usage::

    python scripts/bench_startup.py [--repeats 9] [--hieropt PATH] [--module] [--bytecode-cache DIR]

The bad inputs are copies of ``instances/gpt3-4d.toml`` in a temporary folder (its workload path
made absolute, so each file is valid but for the one fault): an unknown top-level key (``x = 1``), a
missing instance file, and a number written as text (``npus = "32"`` on dimension 3). Each must end
with exit 2 and a one-line ``error:`` message (printed once); a help page must end with exit 0.

The console script is ``hieropt`` next to this Python (``--hieropt PATH`` names another); the
subprocesses inherit the environment, so ``PYTHONPATH=/path/to/worktree python
scripts/bench_startup.py`` times that worktree's code. ``--module`` runs ``python -m hieropt``
instead of the console script. The cases are run round robin (each repeat runs every case once), so
a change of the shared machine's load hits all of them alike. Python compiles a module whose cached
bytecode is missing on every run when ``PYTHONDONTWRITEBYTECODE`` is set (as in some sandboxes; the
line above the table says which); ``--bytecode-cache DIR`` lets it cache them in ``DIR``, as an
installed hieropt does. Two more rows time the framework alone (no hieropt code): the imports of
typer and its rich help, and typer with rich and one pydantic value coercion (what every command
that is given a value pays); they show how much of a case is the floor and how much the machine's
load adds. Exit status 1 when a median misses its target or a case does not behave as described.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELP_TARGET_S, ERROR_TARGET_S = 0.3, 0.5
FLOORS = [("floor: typer + its rich help (imports)", "import typer, typer.rich_utils"),
          ("floor: typer + rich + one pydantic value", "import typer, rich.console\n"
           "from pydantic import TypeAdapter\nTypeAdapter(int)")]
"""What every help page and every error costs before hieropt's own code (Python, typer, rich; typer
coerces a given value with pydantic): printed below the cases, without a target, to show the share
of the machine's load."""


def cases(folder: Path) -> list[tuple[str, list[str], float, int]]:
    """(label, arguments, target s, expected exit code) of every case; the bad files are written to
    ``folder``."""
    text = (ROOT / "instances" / "gpt3-4d.toml").read_text(encoding="utf-8")
    text = text.replace('workload = "../models/', f'workload = "{(ROOT / "models").as_posix()}/')
    unknown, wrong = folder / "unknown-key.toml", folder / "wrong-type.toml"
    unknown.write_text("x = 1\n" + text, encoding="utf-8")
    typed = text.replace('npus = 32,', 'npus = "32",')
    assert typed != text, "instances/gpt3-4d.toml changed: no 'npus = 32,' to quote"
    wrong.write_text(typed, encoding="utf-8")
    return [("hieropt --help", ["--help"], HELP_TARGET_S, 0),
            ("hieropt solve --help", ["solve", "--help"], HELP_TARGET_S, 0),
            ("solve: unknown key (x = 1)", ["solve", str(unknown)], ERROR_TARGET_S, 2),
            ("solve: missing file", ["solve", str(folder / "missing.toml")], ERROR_TARGET_S, 2),
            ('solve: wrong type (npus = "32")', ["solve", str(wrong)], ERROR_TARGET_S, 2)]


def run(command: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    """Wall time (s) of one run of ``command`` and its result."""
    t0 = time.perf_counter()
    p = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0, p


def check(p: subprocess.CompletedProcess, code: int) -> str | None:
    """What is wrong with a run that should end with exit ``code`` (None: nothing)."""
    if p.returncode != code:
        return f"exit {p.returncode}, expected {code}: {(p.stderr or p.stdout).strip()[-300:]}"
    if code == 0:
        return None if "Usage:" in p.stdout else "no usage line on stdout"
    lines = p.stderr.strip().splitlines()
    if len(lines) != 1 or not lines[0].startswith("error: "):
        return (
            f"expected one 'error:' line on stderr, got {len(lines)} line(s): "
            f"{p.stderr.strip()[:300]}"
        )
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--repeats", type=int, default=9, help="runs per case (the median is reported; default 9)"
    )
    ap.add_argument(
        "--hieropt",
        type=Path,
        default=None,
        help="the console script (default: next to this Python)",
    )
    ap.add_argument(
        "--module",
        action="store_true",
        help="run 'python -m hieropt' instead of the console script",
    )
    ap.add_argument(
        "--bytecode-cache",
        type=Path,
        default=None,
        metavar="DIR",
        help="let Python cache compiled modules in DIR (PYTHONPYCACHEPREFIX), as an installed "
        "hieropt "
        "does, even when PYTHONDONTWRITEBYTECODE is set",
    )
    args = ap.parse_args()
    if args.module:
        prefix = [sys.executable, "-m", "hieropt"]
    else:
        script = args.hieropt or Path(sys.executable).with_name("hieropt")
        if not script.exists():
            script = Path(shutil.which("hieropt") or script)
        prefix = [str(script)]
    env = dict(os.environ)
    if args.bytecode_cache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(args.bytecode_cache.resolve())
    cache = (
        "compiled modules cached in " + env["PYTHONPYCACHEPREFIX"]
        if args.bytecode_cache is not None
        else "PYTHONDONTWRITEBYTECODE is set: modules without a cached .pyc are compiled on "
        "every run"
        if env.get("PYTHONDONTWRITEBYTECODE")
        else "Python's own bytecode cache"
    )
    print(
        f"command: {' '.join(prefix)}; median of {args.repeats} runs per case (cases "
        "interleaved), wall clock; "
        f"{cache}"
    )
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        all_cases = cases(Path(tmp))
        commands = [prefix + argv for _, argv, _, _ in all_cases]
        commands += [[sys.executable, "-c", code] for _, code in FLOORS]
        for command in commands:  # warm the file cache (and the bytecode cache, when it is written)
            run(command, env)
        times: list[list[float]] = [[] for _ in commands]
        last: list[subprocess.CompletedProcess] = []
        # round robin: a change of the machine's load hits every case alike
        for _ in range(args.repeats):
            last = []
            for i, command in enumerate(commands):
                seconds, p = run(command, env)
                times[i].append(seconds)
                last.append(p)
        width = max(len(label) for label, *_ in all_cases + FLOORS)
        print(
            f"{'case':<{width}}  {'median s':>8}  {'min s':>6}  {'target s':>8}  {'ratio':>5}  ok"
        )
        for (label, _, target, code), ts, p in zip(all_cases, times, last, strict=False):
            median = statistics.median(ts)
            problem = check(p, code)
            ok = median <= target and problem is None
            failed += not ok
            print(
                f"{label:<{width}}  {median:8.3f}  {min(ts):6.3f}  {target:8.1f}  "
                f"{median / target:5.2f}  "
                f"{'yes' if ok else 'NO'}"
            )
            if problem:
                print(f"  problem: {problem}")
            elif code:
                print(f"  {p.stderr.strip()[:160]}")
        for (label, _), ts in zip(FLOORS, times[len(all_cases):], strict=True):
            print(f"{label:<{width}}  {statistics.median(ts):8.3f}  {min(ts):6.3f}")
    print("all within target" if not failed else f"{failed} case(s) missed the target")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
