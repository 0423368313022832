"""The buyer's options, one name per quantity across commands: ``--tokens``, ``--max-time`` (with
units; old name ``--max-time-ns``), ``--budget`` (money with suffixes; old names ``--budget-usd``,
``--max-cost-usd``), read by :mod:`hieropt.cli.numbers`. Imports typer and the standard library
only."""

from __future__ import annotations

from typing import Annotated

import typer

TokensOpt = Annotated[
    str | None,
    typer.Option(
        "--tokens",
        help="Token budget of one training run, e.g. 15e12 or 15T: adds the time to train "
        "(days), the "
        "energy (MWh) and the $ per run to the answer (overrides the file's tokens); at least "
        "1M (a plain 15 is 15 tokens) and one iteration's tokens, at most 1000T.",
        show_default=False,
    ),
]
MaxTimeOpt = Annotated[
    str | None,
    typer.Option(
        "--max-time",
        "--max-time-ns",
        help="Iteration-time target with a unit: 1.3s, 1300ms, 2h; a plain number is "
        "ns (--max-time-ns: the old name; both together are refused). Required by min_cost; a "
        "cap otherwise.",
        show_default=False,
    ),
]
BudgetOpt = Annotated[
    str | None,
    typer.Option(
        "--budget",
        "--budget-usd",
        "--max-cost-usd",
        help="Network-cost cap in $, with suffixes: 10M, 2.5B, 750k "
        "(--budget-usd, --max-cost-usd: old names; two names together are refused).",
        show_default=False,
    ),
]


DeadlineOpt = Annotated[
    str | None,
    typer.Option(
        "--deadline",
        help="Train the token budget (--tokens or the file's tokens) within this wall time, e.g. "
        "90d, "
        "2160h: the iteration-time target deadline / iterations per run (with min_run_cost: "
        "the cheapest run meeting "
        "the deadline). The unit is required (a plain 150 is refused: did you mean 150d?); "
        "a deadline of a day or more per iteration is refused as a unit slip.",
        show_default=False,
    ),
]
TotalBudgetOpt = Annotated[
    str | None,
    typer.Option(
        "--total-budget",
        help="Cap on the whole cluster's capex in $ (10M, 2.5B): accelerators, servers, racks and "
        "facility from [cluster], the rest is a network budget, as --budget, on the objective "
        "solved (performance: the fastest design within it; min_run_cost: the cheapest run "
        "within it). A note says whether it binds.",
        show_default=False,
    ),
]
WITHIN_HELP = (
    "With the performance objective: also the knee, the cheapest design within this slack of the "
    "fastest time in percent (1% or 1; 0.5% for half a percent: a plain 0.5 is refused as a "
    "likely fraction), and what the last slack of speed costs; 0 turns it off."
)
"""The help of ``--within`` (``solve`` and ``provision``)."""
WithinOpt = Annotated[str, typer.Option("--within", help=WITHIN_HELP)]
GivenWithinOpt = Annotated[
    str | None,
    typer.Option("--within", help=WITHIN_HELP + " Default 1%.", show_default=False),
]
"""``--within`` with no value when not given (None), for a command that says when it was given
for an objective without a knee; None means the default 1 %."""

__all__ = ["WithinOpt", "GivenWithinOpt", "WITHIN_HELP", "TokensOpt", "MaxTimeOpt", "BudgetOpt",
           "DeadlineOpt", "TotalBudgetOpt"]
