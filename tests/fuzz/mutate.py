"""Mutated input files for the command-line fuzz suite (tests/fuzz/test_mutants.py).

A **sandbox** is a temporary copy of the shipped inputs (``instances/``, ``models/``, ``catalogs/``,
``spaces/``) and, when present, of the shared LIBRA / ASTRA-sim data (``../shared/data``; copied at
test time, never committed). A **target** names one of those files, how to read it (TOML, YAML or
text) and the command that reads it. A mutant changes the target file once:

- structured (TOML / YAML parsed, changed, written back): delete a key, change a value's type, a
  number to 0, -1, huge, tiny, nan, inf, an integer with thousands of digits, a string to rich
  markup (``[/b]``), unicode, empty or very long, a path to a missing file or a folder, a list
  emptied, shortened or extended; and a few values known to break readers (radix 2 or 3, max_per_npu
  = 1e6, efficiency = 1e-310, npus = "32");
- text: truncation, a line deleted, duplicated or garbled, a number token replaced, non-UTF-8 bytes,
  a BOM;
- the file renamed to a name with rich markup or unicode in it;
- the command line itself: a mutated ``--constraint`` or ``--bw``.

The long setting adds the targets of tests/fuzz/surfaces.py: LLM model files, the NVL72 catalogs,
``simulate`` with fake simulators and its options, and ``--dask`` addresses.
"""

from __future__ import annotations

import copy
import json
import math
import random
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.fuzz import surfaces

REPO = Path(__file__).resolve().parents[2]
LIBRA_SET = [
    "--network",
    "libra/network/4d_network.yml",
    "--workload",
    "libra/workload/GPT_3.txt",
    "--communicator",
    "libra/communicator/GPT_3_4d.yml",
    "--cost",
    "libra/cost_model/4d_cost_model.yml",
    "--constraint",
    "sum(bw) == 500",
]


@dataclass(frozen=True)
class Target:
    """A file of the sandbox, its format and the commands that read it (``{f}`` is the file's
    path)."""

    path: str
    fmt: str  # "toml", "yaml" or "text"
    commands: tuple[tuple[str, ...], ...]
    shared: bool = False  # part of ../shared/data


def _libra(flag: str) -> tuple[str, ...]:
    argv = list(LIBRA_SET)
    argv[argv.index(flag) + 1] = "{f}"
    return ("solve", *argv)


TARGETS: tuple[Target, ...] = (
    Target(
        "instances/gpt3-4d.toml",
        "toml",
        (
            ("solve", "{f}"),
            ("evaluate", "{f}", "--bw", "250,125,75,50"),
            ("pareto", "{f}", "--points", "3"),
            ("export", "{f}", "--astra-sim", "out/net.yml"),
            ("provision", "{f}", "--catalog", "catalogs/example-4d.toml", "--no-compare"),
            ("solve", "{f}", "--objective", "performance_per_cost"),
            ("solve", "{f}", "--objective", "min_cost", "--max-time-ns", "1.3e9"),
        ),
    ),
    Target("instances/mix-gpt3-dlrm-4d.toml", "toml", (("solve", "{f}"),)),
    Target("instances/gpt3-4d-compare.toml", "toml", (("solve", "{f}"),)),
    Target(
        "models/gpt3-175b.toml",
        "toml",
        (("solve", "instances/gpt3-4d.toml"), ("workload", "show", "{f}", "--summary")),
    ),
    Target(
        "models/dlrm.toml",
        "toml",
        (("solve", "instances/mix-gpt3-dlrm-4d.toml"), ("workload", "show", "{f}", "--summary")),
    ),
    Target(
        "models/resnet50.toml",
        "toml",
        (
            ("workload", "show", "{f}", "--summary"),
            ("workload", "cnn", "--model", "{f}", "-o", "out/w.txt"),
        ),
    ),
    Target(
        "catalogs/example-4d.toml",
        "toml",
        (("provision", "instances/gpt3-4d.toml", "--catalog", "{f}", "--no-compare"),),
    ),
    Target("spaces/gpt3-4096.toml", "toml", (("explore", "{f}", "--workers", "1"),)),
    Target("libra/network/4d_network.yml", "yaml", (_libra("--network"),), shared=True),
    Target("libra/communicator/GPT_3_4d.yml", "yaml", (_libra("--communicator"),), shared=True),
    Target("libra/cost_model/4d_cost_model.yml", "yaml", (_libra("--cost"),), shared=True),
    Target("libra/workload/GPT_3.txt", "text", (_libra("--workload"),), shared=True),
    Target(
        "astrasim1/Transformer_HybridParallel.txt",
        "text",
        (
            ("workload", "show", "{f}", "--summary"),
            (
                "solve",
                "--network",
                "libra/network/4d_network.yml",
                "--workload",
                "{f}",
                "--cost",
                "libra/cost_model/4d_cost_model.yml",
                "--constraint",
                "sum(bw) == 500",
            ),
        ),
        shared=True,
    ),
    Target(
        "astrasim1/DLRM_HybridParallel.txt",
        "text",
        (("workload", "show", "{f}", "--summary"),),
        shared=True,
    ),
    Target(
        "simai/workload_analytical.txt",
        "text",
        (("workload", "show", "{f}", "--summary"),),
        shared=True,
    ),
)
LONG_TARGETS: tuple[Target, ...] = tuple(Target(*t) for t in surfaces.LONG_TARGETS)
"""The long (and medium) setting's extra targets (tests/fuzz/surfaces.py)."""


def make_sandbox(root: Path, shared_data: Path | None) -> Path:
    """Copy the shipped inputs (and the shared data, if given) into ``root``; returns ``root``."""
    for d in ("instances", "models", "catalogs", "spaces"):
        shutil.copytree(REPO / d, root / d)
    if shared_data is not None:
        for d in ("libra", "astrasim1", "simai"):
            if (shared_data / d).is_dir():
                shutil.copytree(shared_data / d, root / d)
                for p in (root / d).rglob("*"):
                    p.chmod(0o755 if p.is_dir() else 0o644)
    (root / "out").mkdir(exist_ok=True)
    surfaces.write_simulators(root)
    return root


# ------------------------------------------------------------------------------------- writing back
def _toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return (
            "{" + ", ".join(f"{_toml_key(str(k))} = {_toml_value(x)}" for k, x in v.items()) + "}"
        )
    if v is None:
        return '""'
    raise TypeError(type(v))


def dump_toml(data: dict[str, Any]) -> str:
    """TOML text for ``data`` (every top-level key one line; tables inline)."""
    return "".join(f"{_toml_key(str(k))} = {_toml_value(v)}\n" for k, v in data.items())


def dump(fmt: str, data: Any) -> str:
    """Serialise parsed data back to ``fmt``."""
    if fmt == "toml":
        return dump_toml(data)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def load(fmt: str, text: str) -> Any:
    """Parse ``text`` in ``fmt``."""
    return tomllib.loads(text) if fmt == "toml" else yaml.safe_load(text)


# ---------------------------------------------------------------------------------------- mutations
MARKUP = ("[/b]", "[bold]x[/bold]", "[red", "x[/]", "[link=file:///etc]y[/link]", "[/b][b]")
STRANGE_STRINGS = MARKUP + (
    "",
    " ",
    "Ringé",
    "Ring\u200b",
    "💥",
    "a" * 5000,
    "line\nbreak",
    "tab\there",
    "null\x00",
    "../../../../etc/passwd",
    "32",
    "-1",
    "nan",
    "inf",
    "1e400",
    "None",
    "true",
)


def _leaves(data: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    out = [(path, data)] if path else []
    if isinstance(data, dict):
        for k, v in data.items():
            out += _leaves(v, path + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _leaves(v, path + (i,))
    return out


def _set(data: Any, path: tuple, value: Any) -> None:
    for p in path[:-1]:
        data = data[p]
    data[path[-1]] = value


def _delete(data: Any, path: tuple) -> None:
    for p in path[:-1]:
        data = data[p]
    del data[path[-1]]


def _number(rng: random.Random, v: float | int) -> Any:
    choices = [
        0,
        -1,
        -abs(v) if v else -7,
        1,
        2,
        3,
        10**6,
        1e6,
        v * 1e6,
        v * 1e-6,
        1e308,
        1e-310,
        5e-324,
        float("nan"),
        float("inf"),
        float("-inf"),
        10 ** rng.choice([20, 400, 4000]) - 1,
        2**63,
        2**64 + 1,
        0.5,
        1.5,
        -0.0,
        str(v),
        [v],
        {"value": v},
        True,
        None,
    ]
    return rng.choice(choices)


def _string(rng: random.Random, v: str, sandbox: Path) -> Any:
    choices = list(STRANGE_STRINGS) + [
        v + rng.choice(MARKUP),
        rng.choice(MARKUP) + v,
        v.upper(),
        v.lower(),
        v[: len(v) // 2],
        1,
        2.5,
        [v],
        {"x": v},
        True,
    ]
    if "/" in v or v.endswith((".toml", ".yml", ".yaml", ".txt")):
        choices += [
            "missing/file.toml",
            "/nonexistent/x.yml",
            ".",
            "..",
            "/dev/null",
            str(sandbox / "out"),
            "../instances/gpt3-4d.toml",
            "../catalogs/example-4d.toml",
            v.replace(".", "[/b]."),
            v + ".missing",
        ]
    return rng.choice(choices)


SPECIFIC = (
    # (key name, value): values known to break readers, applied where the key exists
    ("radix", 2),
    ("radix", 3),
    ("max_per_npu", 1_000_000),
    ("max_per_node", 1_000_000),
    ("efficiency", 1e-310),
    ("weight", float("inf")),
    ("npus", "32"),
    ("layers", int("9" * 4000)),
    ("tp", int("9" * 4000)),
    ("latency_ns", float("inf")),
    ("usd", float("nan")),
    ("gbps", 1e-300),
    ("link_usd_per_gbps", 1e-320),
    ("NpusCount", [4, 8, 4, int("9" * 4000)]),
    ("points", 10**9),
)


def mutate_structured(rng: random.Random, data: Any, sandbox: Path) -> tuple[Any, str, str | None]:
    """One structured mutation: (new data, description, the key name it touched or None)."""
    data = copy.deepcopy(data)
    leaves = _leaves(data)
    if not leaves:
        return data, "unchanged (no leaves)", None
    if rng.random() < 0.15:
        for key, value in rng.sample(SPECIFIC, len(SPECIFIC)):
            hits = [p for p, _ in leaves if p and p[-1] == key]
            if hits:
                p = rng.choice(hits)
                _set(data, p, copy.deepcopy(value))
                return data, f"{_path_text(p)} = {_short(value)}", str(key)
    path, value = rng.choice(leaves)
    key = next((str(p) for p in reversed(path) if isinstance(p, str)), None)
    op = rng.random()
    if op < 0.12:
        _delete(data, path)
        return data, f"deleted {_path_text(path)}", key
    if op < 0.18 and isinstance(value, list):
        new = (
            rng.choice([[], value[:-1], value + value[-1:], list(reversed(value))])
            if value
            else [1]
        )
        _set(data, path, new)
        return data, f"{_path_text(path)}: list of {len(value)} -> {len(new)} entries", key
    if op < 0.22 and isinstance(value, dict):
        new = rng.choice([{}, "x", 1, [value]])
        _set(data, path, new)
        return data, f"{_path_text(path)}: table -> {_short(new)}", key
    if op < 0.25 and isinstance(value, dict):
        value["unknown_key[/b]"] = 1
        return data, f"{_path_text(path)}: added an unknown key", "unknown_key[/b]"
    if isinstance(value, bool):
        new = rng.choice([not value, "yes", 1, 0, None])
    elif isinstance(value, int | float):
        new = _number(rng, value)
    elif isinstance(value, str):
        new = _string(rng, value, sandbox)
    else:
        new = rng.choice([None, 0, "x", [], {}])
    _set(data, path, new)
    return data, f"{_path_text(path)}: {_short(value)} -> {_short(new)}", key


def mutate_text(rng: random.Random, text: str) -> tuple[str | bytes, str]:
    """One text-level mutation: (new text or bytes, description)."""
    lines = text.splitlines(keepends=True)
    op = rng.randrange(9)
    if op == 0 or not lines:
        cut = rng.randrange(0, max(1, len(text)))
        return text[:cut], f"truncated at character {cut}"
    i = rng.randrange(len(lines))
    if op == 1:
        return "".join(lines[:i] + lines[i + 1:]), f"deleted line {i + 1}"
    if op == 2:
        return "".join(lines[: i + 1] + lines[i:]), f"duplicated line {i + 1}"
    if op == 3:
        junk = rng.choice(
            ["garbage ### [/b]", "= = =", "\t\t", "ALLREDUCE", "1 2 3", "[[[", "key = ", "💥"]
        )
        return "".join(
            lines[:i] + [junk + "\n"] + lines[i:]
        ), f"inserted {junk!r} before line {i + 1}"
    if op == 4:
        nums = list(re.finditer(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])", text))
        if nums:
            m = rng.choice(nums)
            new = rng.choice(
                [
                    "0",
                    "-1",
                    "-5",
                    "1e308",
                    "1e-310",
                    "nan",
                    "inf",
                    "9" * 5000,
                    "3.5",
                    "x",
                    "[/b]",
                    "2",
                    "3",
                    "1000000",
                    "0x10",
                ]
            )
            return text[: m.start()] + new + text[
                m.end() :
            ], f"number {m.group()!r} at {m.start()} -> {_short(new)}"
    if op == 5:
        words = list(re.finditer(r"[A-Za-z_][A-Za-z_0-9]*", text))
        if words:
            m = rng.choice(words)
            new = rng.choice(
                MARKUP + ("", "X", m.group() + "[/b]", m.group().lower(), "ALLREDUCEALLTOALL")
            )
            return text[: m.start()] + new + text[m.end():], f"word {m.group()!r} -> {new!r}"
    if op == 6:
        b = bytearray(text.encode())
        pos = rng.randrange(len(b) + 1)
        b[pos:pos] = b"\xff\xfe\x80"
        return bytes(b), f"non-UTF-8 bytes at byte {pos}"
    if op == 7:
        return "\ufeff" + text.replace("\n", "\r\n"), "BOM and CRLF"
    parts = lines[i].split()
    if parts:
        j = rng.randrange(len(parts))
        parts.insert(j, rng.choice(["1", "NONE", "-1", "[/b]"]))
        lines[i] = " ".join(parts) + "\n"
        return "".join(lines), f"inserted a token in line {i + 1}"
    return text + "\n", "added a blank line"


CONSTRAINTS = (
    "sum(bw[1:5]) <= 300",
    "bw[99] >= 1",
    "bw[0] * bw[1] <= 3",
    "[/b]",
    "bw[top] <= 20",
    "sum(bw) == 1e400",
    "sum(bw) <= -1",
    "bw[0] >= 1e-310",
    "sum(bw) == nan",
    "bw[-1] <= 5",
    "sum(bw) == " + "9" * 5000,
    "bw[0] >= 0",
    "",
    "sum(bw) >= 600",
    "bw[0] == bw[0]",
    "1 <= 2",
    "bw[0] <= 10 <= 20",
    "sum(bw) == 500 # comment",
    "bw[0]] <= 3",
    "bw[1.5] <= 3",
)
BWS = (
    "1e-300,1e-300,1e-300,1e-300",
    "0,0,0,0",
    "-1,1,1,1",
    "nan,1,1,1",
    "inf,1,1,1",
    "1,2,3",
    "1,2,3,4,5",
    "250;125;75;50",
    "",
    "1e308,1e308,1e308,1e308",
    "250,125,75,50,",
    "[/b],1,1,1",
    "5e-324,1,1,1",
)


def _short(v: Any, n: int = 60) -> str:
    s = repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def _path_text(path: tuple) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


@dataclass(frozen=True)
class Mutant:
    """A mutated file (already written into the sandbox) and the command to run on it."""

    target: Target
    # the mutated file's path relative to the sandbox (renamed when the mutation renames it)
    file: str
    argv: tuple[str, ...]
    description: str
    key: str | None  # the key the mutation touched (structured mutations)
    kind: str  # "structured", "text", "rename" or "argv"


def make_mutant(rng: random.Random, sandbox: Path, targets: tuple[Target, ...]) -> Mutant:
    """Write one mutant into ``sandbox`` (which must be a fresh copy) and return how to run it."""
    target = rng.choice(targets)
    src = sandbox / target.path
    text = src.read_text(encoding="utf-8")
    command = surfaces.fill(rng, list(rng.choice(target.commands)))
    roll = rng.random()
    key = None
    if roll < 0.55 and target.fmt in ("toml", "yaml"):
        data = load(target.fmt, text)
        new, desc, key = mutate_structured(rng, data, sandbox)
        src.write_text(dump(target.fmt, new), encoding="utf-8")
        kind = "structured"
    elif roll < 0.85:
        new, desc = mutate_text(rng, text)
        if isinstance(new, bytes):
            src.write_bytes(new)
        else:
            src.write_text(new, encoding="utf-8")
        kind = "text"
    elif roll < 0.93:
        # the path text contains '[/b]': folders '[' and 'b]' and back up with '..'
        if rng.random() < 0.5:
            (src.parent / "[" / "b]").mkdir(parents=True, exist_ok=True)
            rel = str(Path(target.path).parent / "[" / "b]" / ".." / ".." / src.name)
            command = [a.replace("{f}", rel) for a in command]
            return Mutant(target, rel, tuple(command), f"given as {rel!r}", None, "rename")
        name = rng.choice(["[b]", "[bold]", "x[red]", "💥", "é ", "[link=x]", "[b]x[b]"])
        dst = src.with_name(src.stem + name + src.suffix)
        shutil.copy(src, dst)
        command = [a.replace("{f}", str(dst.relative_to(sandbox))) for a in command]
        return Mutant(
            target,
            str(dst.relative_to(sandbox)),
            tuple(command),
            f"renamed to {dst.name!r}",
            None,
            "rename",
        )
    else:
        more = surfaces.mutate_argv(rng, command)
        if more is not None:
            command = more
        elif "--bw" in command:
            command[command.index("--bw") + 1] = rng.choice(BWS)
        elif command[0] in ("solve", "evaluate", "pareto", "compare"):
            command += ["--constraint", rng.choice(CONSTRAINTS)]
        else:
            command += (
                ["--json", rng.choice(["-", "out", "/nonexistent/dir/x.json", "out/[/b].json"])]
                if command[0] == "provision"
                else []
            )
        argv = tuple(a.replace("{f}", target.path) for a in command)
        return Mutant(target, target.path, argv, f"command line {argv[-2:]}", None, "argv")
    argv = tuple(a.replace("{f}", target.path) for a in command)
    return Mutant(target, target.path, argv, desc, key, kind)
