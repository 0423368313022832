"""Counting and reporting for the fuzz suites.

Each check reports what it saw to the session's :data:`TALLY`: plain counts (``examples``,
``certified``, ``limit``, ...) and **problems** (a certificate beaten, a SolverError on valid input,
a false "infeasible", a LIMIT whose gap is not honest, a traceback, a hang, ...), each with a
reproducer.

- Default (short) and ``--fuzz medium``/``long`` (``HIEROPT_FUZZ``) differ in example counts
  (:data:`BUDGET`); numeric overrides: ``HIEROPT_FUZZ_INSTANCES``, ``HIEROPT_FUZZ_PROCUREMENT``,
  ``HIEROPT_FUZZ_MUTANTS``, ``HIEROPT_FUZZ_PORTFOLIOS``.
  ``--fuzz-seed N`` (``HIEROPT_FUZZ_SEED``) fixes the random draws of a medium or long run
  (hypothesis's seed and the mutants' first seed), so a long run can be split into chunks with
  different seeds and each chunk re-run exactly; the short run is always derandomized.
- In the short run a problem fails the test at once (hypothesis prints the example). In the medium
  and long runs problems are recorded and the run goes on; the terminal summary prints every count,
  the problems are written as JSON lines to ``HIEROPT_FUZZ_OUT`` (default
  ``out/fuzz-findings.jsonl``), and the session fails when any problem was recorded.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

MODE = os.environ.get("HIEROPT_FUZZ", "short").strip().lower() or "short"
if MODE not in ("short", "medium", "long"):
    raise RuntimeError(f"HIEROPT_FUZZ={MODE!r}: use short, medium or long")

BUDGET = {
    # random performance instances, random procurement instances, mutated input files
    "short": {"instances": 12, "procurement": 4, "mutants": 40, "portfolios": 3},
    "medium": {"instances": 1000, "procurement": 200, "mutants": 500, "portfolios": 100},
    "long": {"instances": 10_000, "procurement": 1000, "mutants": 3000, "portfolios": 1000},
}[MODE]
for _key in BUDGET:
    if os.environ.get(f"HIEROPT_FUZZ_{_key.upper()}"):
        BUDGET[_key] = int(os.environ[f"HIEROPT_FUZZ_{_key.upper()}"])

SEED: int | None = (
    int(os.environ["HIEROPT_FUZZ_SEED"]) if os.environ.get("HIEROPT_FUZZ_SEED") else None
)
"""The seed of a medium or long run (None: hypothesis draws one and prints it on a failure)."""


def seeded(test):
    """Apply :data:`SEED` to a hypothesis test (no-op in the short run, which is derandomized, or
    without a seed)."""
    if MODE == "short" or SEED is None:
        return test
    from hypothesis import seed

    return seed(SEED)(test)


TIMEOUT_S = float(os.environ.get("HIEROPT_FUZZ_TIMEOUT", "60"))
"""Wall-clock limit of one solve / one command in the worker before it counts as a hang (a healthy
call on these small instances takes well under a second; the margin is for a busy machine)."""

PROBLEMS = (
    "certificate beaten",
    "rescaled answer differs",
    "returned point invalid",
    "SolverError on valid input",
    "false infeasible",
    "false unbounded",
    "InputError on valid input",
    "LIMIT with a dishonest gap",
    "optimal above the gap target",
    "traceback",
    "hang",
    "crash",
    "bad error message",
    "warning printed",
)
"""Problem kinds, in the order the summary prints them."""


class Problem(AssertionError):
    """A problem found by a check (raised in the short run, recorded in the medium and long
    runs)."""


OUT = Path(
    os.environ.get(
        "HIEROPT_FUZZ_OUT", Path(__file__).resolve().parents[2] / "out" / "fuzz-findings.jsonl"
    )
)
"""Where a medium or long run writes its problems (JSON lines); the counts go next to it
(``.counts.json``), rewritten as the run goes, so a chunk that is stopped early still reports what
it saw."""


class Tally:
    """Counts and problems of one test session."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.problems: list[dict[str, Any]] = []
        self._calls = 0

    def count(self, key: str, n: int = 1) -> None:
        """Add ``n`` to count ``key`` (in a medium or long run, the counts file is rewritten every
        20 calls)."""
        self.counts[key] += n
        self._calls += 1
        if MODE != "short" and self._calls % 20 == 0:
            self.write_counts()

    def write_counts(self, path: Path | None = None) -> None:
        """Write the counts so far as JSON next to the findings file
        (``<findings>.counts.json``)."""
        path = path or OUT.with_suffix(".counts.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(
                {"mode": MODE, "seed": SEED, "budget": BUDGET, **dict(sorted(self.counts.items()))},
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )

    def problem(self, kind: str, suite: str, detail: str, reproducer: str) -> None:
        """Record a problem; in the short run raise :class:`Problem` at once."""
        assert kind in PROBLEMS, kind
        self.counts[f"problem: {kind}"] += 1
        self.problems.append(
            {"kind": kind, "suite": suite, "detail": detail, "reproducer": reproducer}
        )
        if MODE != "short":  # live, so that a stopped run keeps its findings
            OUT.parent.mkdir(parents=True, exist_ok=True)
            with OUT.open("a", encoding="utf-8") as f:
                f.write(json.dumps(self.problems[-1]) + "\n")
        if MODE == "short":
            raise Problem(f"{kind}: {detail}\nreproducer: {reproducer}")

    def note(self, kind: str, suite: str, detail: str, reproducer: str) -> None:
        """Keep the reproducer of something that is not a problem but worth a look (e.g. a LIMIT
        with a large honest gap): appended to ``<findings>.notes.jsonl`` in a medium or long run,
        ignored in the short run."""
        if MODE == "short":
            return
        path = OUT.with_suffix(".notes.jsonl")
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as f:
            f.write(
                json.dumps(
                    {"kind": kind, "suite": suite, "detail": detail, "reproducer": reproducer}
                )
                + "\n"
            )

    def lines(self) -> list[str]:
        """The summary printed at the end of the session."""
        out = [
            f"hieropt fuzz ({MODE} run): "
            + ", ".join(
                f"{k} {v:,}"
                for k, v in sorted(self.counts.items())
                if not k.startswith("problem: ")
            )
        ]
        for kind in PROBLEMS:
            n = self.counts.get(f"problem: {kind}", 0)
            out.append(f"  {kind}: {n}")
        return out

    def write(self, path: Path) -> None:
        """Write the problems as JSON lines."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as f:
            for p in self.problems:
                f.write(json.dumps(p) + "\n")


TALLY = Tally()
