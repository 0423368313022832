"""Fuzz: mutated input files through the command line (tests/fuzz/mutate.py makes the mutants).

Every mutant runs ``hieropt ...`` through the console-script entry point in the fuzz worker (a hang
is killed after the worker's timeout) and must end with (the long setting adds model files,
catalogs, ``simulate`` and ``--dask`` inputs, tests/fuzz/surfaces.py):

- exit code 0, 2 or 3 — never 1 (a bug), never a traceback in the output, never a hang;
- on exit 2, exactly one line on stderr, ``error: ...``, naming the file (or the command-line flag)
  and, for a mutated key, the field;
- no Python warning printed, and no ``nan`` / ``inf`` figure printed as a result on exit 0.

A few mutants also run as a real ``hieropt`` subprocess (the installed console script) to check the
in-process runner against the real thing. ``--fuzz long`` runs 3,000 mutants; counts print at the
end of the session (``surface ...``: mutants of the long setting's surfaces;
``HIEROPT_FUZZ_SURFACES=only`` tries those alone).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cases import shared_data_dir
from tests.fuzz.mutate import LONG_TARGETS, TARGETS, Mutant, make_mutant, make_sandbox
from tests.fuzz.run import call
from tests.fuzz.tally import BUDGET, MODE, TALLY, TIMEOUT_S

SUITE = "mutants"
HIEROPT = Path(sys.executable).with_name("hieropt")


def _repro(m: Mutant, seed: int) -> str:
    return f"seed {seed}: {m.target.path}: {m.description}; hieropt {' '.join(m.argv)}"


def judge(m: Mutant, r: dict, seed: int) -> None:
    """Record every problem of one run (see the module docstring)."""
    repro = _repro(m, seed)
    code, out, err = r["code"], r["stdout"], r["stderr"]
    TALLY.count(f"exit {code}")
    if (
        r.get("traceback")
        or "Traceback (most recent call last)" in out + err
        or code not in (0, 2, 3)
    ):
        tb = r.get("traceback") or err
        TALLY.problem(
            "traceback",
            SUITE,
            f"exit {code}: {tb.strip().splitlines()[-1] if tb.strip() else '?'}\n{tb[-2500:]}",
            repro,
        )
        return
    if re.search(r"\w+Warning:", err + out):
        warn = re.search(r".*\w+Warning:.*", err + out).group()
        TALLY.problem("warning printed", SUITE, warn.strip()[:300], repro)
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        name = Path(m.file).name
        named = re.match(r"error: (--[\w-]+)", lines[0]) if lines else None
        flagged = (any(a.startswith("--") for a in m.argv) and m.kind == "argv") or bool(
            # (a long-setting command may carry a bad --dask / --astra-sim)
            named and named.group(1) in m.argv)
        if len(lines) != 1:
            TALLY.problem(
                "bad error message", SUITE, f"{len(lines)} lines on stderr: {err[:600]!r}", repro
            )
        elif not lines[0].startswith("error:"):
            TALLY.problem(
                "bad error message", SUITE, f"not an 'error:' line: {lines[0][:300]!r}", repro
            )
        elif not (
            name in lines[0]
            or Path(m.file).stem in lines[0]
            or (flagged and "--" in lines[0])
            or _names_other_file(lines[0])
        ):
            TALLY.problem(
                "bad error message",
                SUITE,
                f"does not name the file {name!r}: {lines[0][:300]!r}",
                repro,
            )
        elif (
            m.key is not None
            and m.key.lower() not in lines[0].lower()
            and not re.search(r"line \d+", lines[0])
        ):
            TALLY.count("exit 2 without the mutated key's name")
    # (the header line "instance NAME: ..." echoes the instance's name, which a mutant may set to
    # 'nan'; a mutant that wrote the text 'nan' or 'inf' as a name, e.g. of a level, sees it echoed
    # in the tables' shape ids too)
    figures = "\n".join(ln for ln in out.splitlines() if not ln.startswith("instance "))
    named = re.search(r"-> '(nan|inf)'", m.description, re.IGNORECASE)
    if code == 0 and not named and re.search(r"(?<![\w.])(nan|inf)(?:%| ns| GB| \$|\b)", figures):
        TALLY.problem("warning printed", SUITE, "nan/inf printed as a result: "
                      + re.search(r".*(?<![\w.])(nan|inf)\b.*", figures).group()[:200], repro)


def surface(m: Mutant) -> str:
    """Which surface of the long setting a mutant tries: a model file, a catalog, simulate or
    --dask."""
    if "--dask" in m.argv:
        return "--dask"
    if m.argv[0] in ("simulate", "export"):
        return m.argv[0]
    return "catalog" if m.target.path.startswith("catalogs/") else "model file"


def _names_other_file(line: str) -> bool:
    """The message names some file of the sandbox (a mutation can make an instance point at another
    file)."""
    return bool(re.search(r"[\w\]\[/.-]+\.(toml|yml|yaml|txt)\b|/dev/null|out\b|missing", line))


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Path:
    return make_sandbox(tmp_path_factory.mktemp("sandbox"), shared_data_dir())


def _targets() -> tuple:
    """The targets of this setting: the long and medium settings add :data:`LONG_TARGETS` (model
    files, catalogs, simulate, --dask); the default stays as fast as before."""
    every = TARGETS + (LONG_TARGETS if MODE != "short" else ())
    # (the long setting's surfaces alone, for their counts)
    if os.environ.get("HIEROPT_FUZZ_SURFACES") == "only":
        every = LONG_TARGETS
    return tuple(t for t in every if not t.shared or shared_data_dir() is not None)


def test_mutated_inputs(sandbox: Path):
    """BUDGET['mutants'] mutants, seeds 0, 1, 2, ... (deterministic)."""
    rng0 = random.Random(int(os.environ.get("HIEROPT_FUZZ_SEED", "0")))
    targets = _targets()
    originals = {t.path: (sandbox / t.path).read_bytes() for t in targets}
    for _ in range(BUDGET["mutants"]):
        seed = rng0.randrange(2**32)
        m = make_mutant(random.Random(seed), sandbox, targets)
        TALLY.count("mutants")
        TALLY.count(f"mutants {m.kind}")
        if m.target in LONG_TARGETS:
            TALLY.count(f"surface {surface(m)}")
        try:
            r = call(
                "tests.fuzz.tasks:cli",
                list(m.argv),
                str(sandbox),
                suite=SUITE,
                reproducer=_repro(m, seed),
            )
            if r is not None:
                judge(m, r, seed)
        finally:
            for path, data in originals.items():
                (sandbox / path).write_bytes(data)
            if m.file != m.target.path and "[/b]" not in m.file:
                (sandbox / m.file).unlink(missing_ok=True)
            for p in (sandbox / "out").iterdir():
                shutil.rmtree(p) if p.is_dir() else p.unlink()


@pytest.mark.skipif(
    not HIEROPT.exists(), reason="the hieropt console script is not installed next to Python"
)
def test_mutants_as_real_subprocesses(sandbox: Path):
    """A few mutants through the real console script, with a timeout: the same judgement as
    in-process."""
    targets = tuple(t for t in _targets() if t.path.startswith("instances/"))
    originals = {t.path: (sandbox / t.path).read_bytes() for t in targets}
    for seed in range(3 if MODE == "short" else 30):
        m = make_mutant(random.Random(10_000 + seed), sandbox, targets)
        try:
            p = subprocess.run([str(HIEROPT), *m.argv], cwd=sandbox, capture_output=True, text=True,
                               timeout=TIMEOUT_S, env={**os.environ, "COLUMNS": "100"})
        except subprocess.TimeoutExpired:
            TALLY.problem(
                "hang", SUITE, f"subprocess did not finish within {TIMEOUT_S:g} s", _repro(m, seed)
            )
            continue
        finally:
            for path, data in originals.items():
                (sandbox / path).write_bytes(data)
            if m.file != m.target.path and "[/b]" not in m.file:
                (sandbox / m.file).unlink(missing_ok=True)
        judge(
            m,
            {"code": p.returncode, "stdout": p.stdout, "stderr": p.stderr, "traceback": None},
            10_000 + seed,
        )
