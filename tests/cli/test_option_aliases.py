"""An option given under two of its names is refused, naming both with their values: ``solve
--budget 1e7 --budget-usd 2e7`` once solved with $20M (the last), where the library refuses
``budget_usd`` with ``max_network_cost_usd``. One check for every command's every option with
several names; so are one option given twice with two values and a flag with its negation."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
import typer.main

from hieropt.cli.commands import app
from tests.cli.util import error_line, run

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"


def _aliased() -> list[tuple[str, tuple[str, ...]]]:
    """(command path, names) of every option with several names, over every command."""
    root = typer.main.get_command(app)
    ctx = click.Context(root)
    out = []

    def walk(cmd, path):
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), [*path, name])
            return
        out.extend((" ".join(path), tuple(p.opts)) for p in cmd.params
                   if p.param_type_name == "option" and len(p.opts) > 1)

    walk(root, [])
    return out


def test_the_budgets_two_names_are_refused_with_both_values():
    r = run("solve", GPT3, "--budget", "1e7", "--budget-usd", "2e7")
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --budget: given together with --budget-usd, another name of the same option "
        "(--budget 1e7 and --budget-usd 2e7: one value would be dropped); fix: give one of "
        "--budget and --budget-usd"
    )


def test_every_aliased_option_of_every_command_is_checked():
    """The names as ``--name=value`` and a short name with its value attached count too; the
    check runs before any input is read (the instance need not exist)."""
    found = _aliased()
    # budget (6 commands), max-time (6), report's -o/--out, workload generators' -o/--output
    assert {names for _, names in found} == {
        ("--budget", "--budget-usd", "--max-cost-usd"), ("--max-time", "--max-time-ns"),
        ("-o", "--out"), ("-o", "--output")}
    for command, names in found:
        a, b = names[0], names[-1]
        first = f"{a}x.out" if len(a) == 2 else f"{a}=1"
        r = run(*command.split(), "missing.toml", first, f"{b}=2")
        va = "x.out" if len(a) == 2 else "1"
        assert r.exit_code == 2, (command, r.output)
        assert error_line(r) == (
            f"error: {a}: given together with {b}, another name of the same option ({a} {va} and "
            f"{b} 2: one value would be dropped); fix: give one of {a} and {b}"), command


@pytest.mark.parametrize("args", [
    ("--budget", "2e7", "--budget", "2e7"),  # (the same value twice: nothing dropped)
    ("--constraint", "bw[0] >= 1", "--constraint", "bw[1] >= 1"),  # (a multi-value option)
    ("--constraint", "--budget", "--budget-usd", "2e7"),  # ("--budget": --constraint's value)
])
def test_no_aliases_no_refusal(args):
    r = run("solve", GPT3, *args, "--json", "-")
    assert "given together" not in r.output and "given twice" not in r.output


def test_an_option_given_twice_with_two_values_is_refused():
    """``--budget 1e7 --budget 9e6`` once solved with $9M (the last) silently; ``--budget=`` counts
    as the same name; the check runs before the instance is read."""
    r = run("solve", "missing.toml", "--budget", "1e7", "--budget=9e6")
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --budget: given twice (--budget 1e7 and --budget 9e6: one value would be "
        "dropped); fix: give --budget once")


def test_a_flag_with_its_negation_is_refused():
    r = run("solve", "missing.toml", "--sensitivity", "--no-sensitivity")
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --sensitivity: given together with --no-sensitivity, its negation (one would be "
        "dropped); fix: give one of --sensitivity and --no-sensitivity")
