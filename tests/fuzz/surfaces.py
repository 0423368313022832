"""The long fuzz setting's extra surfaces (tests/fuzz/mutate.py): LLM model files (``workload
plan``), the NVL72 catalogs (``provision``), ``simulate`` (fake simulators: a good one, one
reporting 0 cycles, one writing bytes that are not UTF-8, one that crashes, one silent, one not
executable) and ``--dask`` addresses on ``explore``.

A command's ``{sim}`` and ``{dask}`` are filled in by :func:`fill` (the random stream of the other
targets is not touched, so a seed of the short run makes the same mutant as before)."""

from __future__ import annotations

import random
from pathlib import Path

SIMULATORS = {
    "sim-ok": 'n=$(ls "$(dirname "$p")" | wc -l); i=0; while [ $i -lt $n ]; do echo "sys[$i] '
    "finished, 1000000 "
    'cycles."; i=$((i+1)); done',
    "sim-zero": 'n=$(ls "$(dirname "$p")" | wc -l); i=0; while [ $i -lt $n ]; do echo "sys[$i] '
    'finished, 0 cycles.";'
    " i=$((i+1)); done",
    "sim-noisy": r"printf 'caf\351 \377\376\n'; printf '\200 erreur [/b]\n' >&2; exit 1",
    "sim-crash": "echo 'Assertion `delay > 0` failed.' >&2; kill -SEGV $$",
    "sim-silent": "true",
}
"""Fake simulators (shell bodies; ``$p`` is the ``--workload-configuration`` prefix), written into
``bin/``."""

SIM_PATHS = (
    *(f"bin/{n}" for n in SIMULATORS),
    "bin/sim-plain",
    "bin",
    "bin/missing",
    "",
    "[/b]",
    "💥/sim",
)
"""What ``--astra-sim`` is given: relative paths (the simulator runs in the bundle folder), a file
that is not executable, a folder, a missing file, an empty path, markup and unicode."""

DASKS = (
    "",
    " ",
    "bogus",
    "tcp://",
    "tcp://:8786",
    "inproc://x",
    "tls://127.0.0.1:1",
    "ucx://x",
    "ws://x:1",
    "tcp://127.0.0.1:0",
    "tcp://127.0.0.1:99999",
    "127.0.0.1:-1",
    "[::1]",
    "tcp://[::1",
    "tcp://a b:1",
    "💥://x:1",
    "[/b]:1",
    "tcp://127.0.0.1:8786/path",
    "tcp://127.0.0.1:1e3",
    "x" * 5000,
)
"""``--dask`` values refused before any connection (none of them names a reachable scheduler)."""

TOLERANCES = ("0", "-0.1", "1", "1.5", "nan", "inf", "x", "1e-300", "0.03", "[/b]")
CHUNKS = ("0", "-1", "1", "2", "x", "1.5", "1e9", "99999999999999999999")

LONG_TARGETS = (
    (
        "models/gpt3-175b-llm.toml",
        "toml",
        (("workload", "plan", "{f}"), ("workload", "plan", "{f}", "--json", "out/p.json")),
    ),
    ("models/llama3-70b.toml", "toml", (("workload", "plan", "{f}"),)),
    ("models/mixtral-8x7b.toml", "toml", (("workload", "plan", "{f}"),)),
    ("models/megatron-1t.toml", "toml", (("workload", "plan", "{f}"),)),
    (
        "catalogs/nvl72-infiniband.toml",
        "toml",
        (("provision", "instances/gpt3-nvl72-2304.toml", "--catalog", "{f}", "--no-compare"),),
    ),
    (
        "catalogs/nvl72-ethernet.toml",
        "toml",
        (("provision", "instances/gpt3-nvl72-2304.toml", "--catalog", "{f}", "--no-compare"),),
    ),
    (
        "instances/gpt3-nvl72-2304.toml",
        "toml",
        (
            ("simulate", "{f}", "--astra-sim", "{sim}", "--bw", "900,50", "--json", "out/s.json"),
            ("export", "{f}", "--astra-sim", "out/bundle", "--bw", "900,50"),
        ),
    ),
    ("spaces/gpt3-4096.toml", "toml", (("explore", "{f}", "--workers", "1", "--dask", "{dask}"),)),
)
"""(path, format, commands) of the long setting's extra targets."""


def write_simulators(sandbox: Path) -> None:
    """The fake simulators of :data:`SIMULATORS` in ``sandbox/bin`` (and ``bin/sim-plain``, not
    executable)."""
    (sandbox / "bin").mkdir(exist_ok=True)
    for name, body in SIMULATORS.items():
        path = sandbox / "bin" / name
        path.write_text(
            '#!/bin/sh\nfor a in "$@"; do case "$a" in --workload-configuration=*) '
            'p="${a#*=}";; esac; '
            f"done\n{body}\n"
        )
        path.chmod(0o755)
    (sandbox / "bin" / "sim-plain").write_text("#!/bin/sh\n")


def fill(rng: random.Random, command: list[str]) -> list[str]:
    """``command`` with ``{sim}`` and ``{dask}`` replaced by a random simulator path and ``--dask``
    value (``rng`` is used only when one of them is there)."""
    out = []
    for a in command:
        if a == "{sim}":
            a = rng.choice(SIM_PATHS)
        elif a == "{dask}":
            a = rng.choice(DASKS)
        out.append(a)
    return out


def mutate_argv(rng: random.Random, command: list[str]) -> list[str] | None:
    """A command-line mutation of a ``simulate`` command (its ``--tolerance``, ``--chunks`` or
    ``--timeout``), or None for any other command (the caller's own mutations apply)."""
    if command[0] != "simulate":
        return None
    flag, values = rng.choice(
        (("--tolerance", TOLERANCES), ("--chunks", CHUNKS), ("--timeout", ("0", "x", "-1")))
    )
    return [*command, flag, rng.choice(values)]
