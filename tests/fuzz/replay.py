"""Replay the problems of a fuzz run.

``python -m tests.fuzz.replay out/fuzz-findings.jsonl [--kind KIND] [--timeout S]``:

Each distinct reproducer of the findings file runs once more in a worker process with a timeout, and
its outcome is printed (status and gap, or the exception, or "hang"). Random-instance reproducers
are Python statements (``spec = Spec(...); inst = spec.instance(...); hieropt.solve(...)``); mutant
reproducers (``seed N: ...``) are rebuilt from their seed in a fresh sandbox and run through the
command line.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
from pathlib import Path
from typing import Any


def run_statements(code: str) -> Any:
    """Execute a random-instance reproducer (in the worker) and return a short outcome."""
    import numpy as np  # noqa: F401 - available to the statements

    import hieropt
    from tests.fuzz.strategies import Row, Spec, WorkloadSpec

    env: dict[str, Any] = {
        "hieropt": hieropt,
        "Spec": Spec,
        "Row": Row,
        "WorkloadSpec": WorkloadSpec,
    }
    parts = [p.strip() for p in code.split("; ") if p.strip()]
    if not parts[-1].startswith("hieropt."):
        parts.append("hieropt.solve(inst)")
    exec("\n".join(parts[:-1]), env)  # noqa: S102 - replaying our own reproducers
    result = eval(parts[-1], env)  # noqa: S307
    if hasattr(result, "status"):
        return (
            f"{result.status.value}, gap {result.gap:.3g}, value {result.objective_value!r}, bound "
            f"{result.objective_bound!r}"
        )
    if hasattr(result, "points"):
        return f"front of {len(result.points)} points"
    return repr(result)[:300]


def run_mutant(seed: int) -> dict[str, Any]:
    """Rebuild mutant ``seed`` in a fresh sandbox and run it (in the worker)."""
    from tests.cases import shared_data_dir
    from tests.fuzz.mutate import TARGETS, make_mutant, make_sandbox
    from tests.fuzz.tasks import cli

    with tempfile.TemporaryDirectory() as tmp:
        box = make_sandbox(Path(tmp), shared_data_dir())
        targets = tuple(t for t in TARGETS if not t.shared or shared_data_dir() is not None)
        m = make_mutant(random.Random(seed), box, targets)
        r = cli(list(m.argv), str(box))
        return {"mutant": m.description, "argv": m.argv, "code": r["code"],
                "stderr": r["stderr"][-500:], "traceback": (r["traceback"] or "")[-800:]}


def main() -> None:
    from tests.fuzz.worker import Hang, Raised, Worker

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("findings", type=Path)
    ap.add_argument("--kind", default=None, help="only problems of this kind (e.g. 'hang')")
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()
    seen: set[str] = set()
    w = Worker()
    try:
        for line in args.findings.read_text().splitlines():
            p = json.loads(line)
            if args.kind and p["kind"] != args.kind or p["reproducer"] in seen:
                continue
            seen.add(p["reproducer"])
            print(f"== {p['kind']}: {p['detail'][:160]}")
            print(f"   {p['reproducer'][:400]}")
            m = re.match(r"seed (\d+):", p["reproducer"])
            try:
                if m:
                    out = w.call("tests.fuzz.replay:run_mutant", int(m[1]), timeout=args.timeout)
                else:
                    out = w.call(
                        "tests.fuzz.replay:run_statements", p["reproducer"], timeout=args.timeout
                    )
            except Hang:
                out = f"hang (> {args.timeout:g} s)"
            if isinstance(out, Raised):
                out = f"{out.type}: {out.message[:300]}"
            print(f"   -> {out}")
    finally:
        w.close()


if __name__ == "__main__":
    main()
