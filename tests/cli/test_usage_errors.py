"""Every usage error of the command line (a value of the wrong type or out of range, an unknown
option or command, a missing value) is one ``error:`` line naming the option, the problem and the
fix, as every other input error; click's (typer's) boxed error panels are never shown."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
import typer

from hieropt.cli import app

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
INSTANCE = REPO / "instances" / "gpt3-4d.toml"
SPACE = REPO / "spaces" / "gpt3-4096.toml"


def _commands() -> list[tuple[list[str], typing.Any]]:
    """Every command of the app with its path (``["workload", "plan"]``), built as ``hieropt``
    builds them."""
    root = typer.main.get_command(app)
    out = []

    def walk(group: typing.Any, path: list[str]) -> None:
        ctx = type(group).context_class(group)
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            if hasattr(cmd, "list_commands"):
                walk(cmd, [*path, name])
            else:
                out.append(([*path, name], cmd))

    walk(root, [])
    return out


def _numeric_options() -> list[tuple[list[str], str]]:
    """(command path, option) for every option of the app that takes a number."""
    cases = []
    for path, cmd in _commands():
        for p in cmd.params:
            kind = p.type_descriptor.annotation
            kinds = set(typing.get_args(kind)) | {kind}
            if p.param_type_name == "option" and not p.is_flag and kinds & {int, float}:
                cases.append((path, max(p.opts, key=len)))
    return cases


NUMERIC = _numeric_options()


def test_the_app_has_many_numeric_options():
    # (the enumeration itself works: every command's number options are tried below)
    assert len(NUMERIC) >= 15


@pytest.mark.parametrize(
    ("path", "option"), NUMERIC, ids=lambda v: " ".join(v) if isinstance(v, list) else v
)
def test_a_value_that_is_not_a_number_is_one_line(path, option):
    r = run(*path, option, "x")
    assert r.exit_code == 2, r.output
    line = error_line(r)
    assert line.startswith(f"error: {option}: input should be a valid "), line
    assert line.endswith(f"(given 'x'); fix: see 'hieropt {' '.join(path)} --help'"), line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("explore", SPACE, "--top", "0"),
            "--top: input should be greater than or equal to 1 (given '0'); fix: see "
            "'hieropt explore --help'",
        ),
        (
            ("codesign", SPACE, "--top", "0"),
            "--top: input should be greater than or equal to 1 (given '0'); fix: see "
            "'hieropt codesign --help'",
        ),
        (
            ("export", INSTANCE, "--astra-sim", "b", "--chunks", "0"),
            "--chunks: input should be greater than or equal to 1 (given '0'); fix: see "
            "'hieropt export --help'",
        ),
        (
            ("solve", INSTANCE, "--max-time-ns", "x"),
            "--max-time: 'x' is not a number with an optional unit; fix: write e.g. "
            "--max-time 1.3s (units: ns, us, µs, "
            "ms, s, min, h, d; a plain number is ns)",
        ),
        (
            ("solve", INSTANCE, "--bogus"),
            "--bogus: no such option (did you mean --budget-usd or --cost?); fix: see "
            "'hieropt solve --help'",
        ),
        (
            ("evaluate", INSTANCE, "--bw"),
            "--bw: requires an argument; fix: see 'hieropt evaluate --help'",
        ),
        (("simulate",), "INSTANCE: missing argument; fix: see 'hieropt simulate --help'"),
        (
            ("solv",),
            "command line: No such command 'solv'. Did you mean 'solve'?; fix: see 'hieropt "
            "--help'",
        ),
        (
            ("workload", "plann"),
            "command line: No such command 'plann'. Did you mean 'plan'?; fix: see 'hieropt "
            "workload --help'",
        ),
    ],
)
def test_usage_errors_are_one_line(args, message):
    r = run(*args)
    assert r.exit_code == 2
    assert error_line(r) == f"error: {message}"


def test_no_help_shows_a_bool_metavar():
    for path, _ in _commands():
        r = run(*path, "--help")
        assert r.exit_code == 0
        assert "<bool>" not in r.output and "BOOLEAN" not in r.output, path


@pytest.mark.parametrize("args", [(), ("workload",)])
def test_no_arguments_shows_the_help_alone(args):
    r = run(*args)
    assert "Usage:" in r.output and "error:" not in r.output
