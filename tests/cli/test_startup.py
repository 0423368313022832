"""The lazy start-up of the command line changes what is loaded when, never what is printed.

- The lazy app (:mod:`hieropt.cli.commands`: a command's module is imported and its command built
  when it runs) prints the same help, for the app and for every command, as an app with every
  command registered eagerly; its command summaries are the first paragraphs of the commands'
  docstrings.
- typer's value coercion built only for given values (:class:`hieropt.cli.common.MissingValueFirst`)
  gives every command the same parameter values as typer's own parameters.
- In a fresh interpreter, ``hieropt --help`` and ``hieropt solve --help`` load neither pydantic nor
  numpy, and the early bad inputs of an instance file (an unknown key, a missing file, a bad network
  field) are reported without numpy, with exactly the message the same reader gives once everything
  is loaded.

Speed itself is measured by scripts/bench_startup.py, not here.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.core import TyperCommand
from typer.testing import CliRunner

from hieropt.cli import app
from hieropt.cli.commands import COMMANDS, HELP, SETTINGS, build, root, target
from hieropt.cli.common import Command, Group

REPO = Path(__file__).resolve().parents[2]
DEFAULT_INSTANCE = REPO / "instances" / "gpt3-4d.toml"
HIEROPT = Path(sys.executable).with_name("hieropt")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
runner = CliRunner(
    env={"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1", "COLUMNS": "200"}
)


def eager_app() -> typer.Typer:
    """The app as it was before the lazy loading: every command registered on one typer app."""
    eager = typer.Typer(cls=Group, no_args_is_help=True, help=HELP, **SETTINGS)
    eager.callback()(root)  # (the app's own --version)
    for name in COMMANDS:
        value = target(name)
        if isinstance(value, typer.Typer):
            eager.add_typer(value, name=name)
        else:
            eager.command(name, cls=Command)(value)
    return eager


def help_pages() -> list[list[str]]:
    """Every help page: the app's, each command's and each ``workload`` subcommand's."""
    pages = [["--help"]] + [[name, "--help"] for name in COMMANDS]
    workload = target("workload")
    pages += [["workload", info.name, "--help"] for info in workload.registered_commands]
    return pages


@pytest.mark.parametrize("argv", help_pages(), ids=" ".join)
def test_lazy_app_prints_the_eager_help(argv: list[str]):
    lazy, eager = runner.invoke(app, argv), runner.invoke(eager_app(), argv)
    assert lazy.exit_code == eager.exit_code == 0, lazy.output
    assert lazy.stdout == eager.stdout
    assert "Usage: " in lazy.stdout


def test_app_help_lists_every_command_with_its_summary():
    text = " ".join(runner.invoke(app, ["--help"]).stdout.replace("│", " ").split())
    for name, (_, _, summary) in COMMANDS.items():
        assert f"{name} {' '.join(summary.split()[:6])}" in text, name


@pytest.mark.parametrize("name", list(COMMANDS))
def test_summary_is_the_first_paragraph_of_the_help(name: str):
    value = target(name)
    text = (
        inspect.cleandoc(value.info.help)
        if isinstance(value, typer.Typer)
        else inspect.getdoc(value)
    )
    first = text.split("\n\n")[0].replace("\n", " ")
    assert COMMANDS[name][2] == first, (
        f"update the summary of {name!r} in hieropt/cli/commands.py COMMANDS"
    )


def test_unknown_command_still_suggests():
    result = runner.invoke(app, ["slove"])
    assert result.exit_code == 2
    assert "Did you mean 'solve'?" in result.output


def plain(name: str) -> TyperCommand:
    """Command ``name`` built with typer's own command class and parameters (typer's coercion
    throughout)."""
    one = typer.Typer(**SETTINGS)
    one.command(name, cls=TyperCommand)(target(name))
    return typer.main.get_command(one)


@pytest.mark.parametrize(
    "name, args",
    [
        ("solve", ["x.toml"]),
        (
            "solve",
            [
                "x.toml",
                "--constraint",
                "sum(bw) == 5",
                "--constraint",
                "bw[0] >= 1",
                "--gap",
                "1e-7",
                "--objective",
                "min_cost",
                "--max-time-ns",
                "3",
                "--no-sensitivity",
                "--ranges",
                "--json",
                "-",
            ],
        ),
        ("solve", ["--network", "n.yml", "--workload", "w.txt", "--cost", "c.yml"]),
        ("evaluate", ["x.toml", "--bw", "1,2"]),
        ("pareto", ["x.toml", "--points", "7", "--csv", "f.csv"]),
        ("compare", ["x.toml", "--budget-usd", "1e7"]),
        ("explore", ["s.toml", "--workers", "2", "--top", "3"]),
        ("export", ["x.toml", "--astra-sim", "out", "--chunks", "4"]),
        ("codesign", ["s.toml"]),
    ],
)
def test_values_are_coerced_as_typer_does(name: str, args: list[str]):
    lazy = build(name).make_context(name, list(args))
    own = plain(name).make_context(name, list(args))
    assert lazy.params == own.params
    assert {type(v) for v in lazy.params.values()} == {type(v) for v in own.params.values()}


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "x.toml", "--gap", "tight"],
        ["pareto", "x.toml", "--points", "7.5"],
        ["solve", "--bogus"],
        ["export", "x.toml"],
    ],
    ids=" ".join,
)
def test_a_bad_value_is_the_same_usage_error(argv: list[str]):
    lazy, eager = runner.invoke(app, argv), runner.invoke(eager_app(), argv)
    assert lazy.exit_code == eager.exit_code == 2
    assert lazy.output == eager.output
    assert lazy.output.startswith("error: ") and len(lazy.output.splitlines()) == 1


FRESH = """
import contextlib, io, json, sys
sys.argv = ["hieropt"] + json.loads(sys.argv[1])
from hieropt.cli import main
out, err, code = io.StringIO(), io.StringIO(), 0
try:
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main()
except SystemExit as e:
    code = e.code
names = ("numpy", "pyomo", "highspy", "pydantic", "yaml", "matplotlib")
heavy = [m for m in names if m in sys.modules]
print(json.dumps({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(),
                  "loaded": heavy}))
"""


def fresh_cli(argv: list[str], cwd: Path) -> dict:
    """``hieropt ARGV`` in a fresh interpreter: exit code, outputs and which heavy packages it
    loaded."""
    p = subprocess.run(
        [sys.executable, "-c", FRESH, json.dumps(argv)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=ENV,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize(
    "argv", [["--help"], ["solve", "--help"], ["workload", "show", "--help"]], ids=" ".join
)
def test_help_loads_neither_pydantic_nor_numpy(tmp_path: Path, argv: list[str]):
    r = fresh_cli(argv, tmp_path)
    assert r["code"] == 0 and "Usage: " in r["stdout"]
    assert r["loaded"] == []


def instance_text(**changes: str) -> str:
    """The default instance, its workload path absolute (valid anywhere), with text replaced (old ->
    new)."""
    text = DEFAULT_INSTANCE.read_text(encoding="utf-8")
    text = text.replace('workload = "../models/', f'workload = "{(REPO / "models").as_posix()}/')
    for old, new in changes.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


# bad inputs found before the workload is read (no numpy needed): file name -> its text (None:
# missing)
EARLY = {
    "unknown-key.toml": "x = 1\n" + instance_text(),
    "missing.toml": None,
    "npus-text.toml": instance_text(**{"npus = 32,": 'npus = "32",'}),
    "npus-one.toml": instance_text(**{"npus = 32,": "npus = 1,"}),
    "block.toml": instance_text(**{'block = "Switch"': 'block = "Torus"'}),
    "dims-key.toml": instance_text(
        **{'cost_class = "InterPod" }': 'cost_class = "InterPod", speed = 3 }'}
    ),
    "objective.toml": instance_text(**{'objective = "performance"': 'objective = "fastest"'}),
    "no-loop.toml": instance_text(**{'training_loop = "no_overlap"\n': ""}),
    "toml-syntax.toml": instance_text(**{"[mapping]": "[mapping"}),
    "folder.toml": "",
}


def write_case(folder: Path, name: str) -> Path:
    path = folder / name
    if name == "folder.toml":
        path.mkdir()
    elif EARLY[name] is not None:
        path.write_text(EARLY[name], encoding="utf-8")
    return path


@pytest.mark.parametrize("name", list(EARLY))
def test_early_bad_input_is_reported_without_numpy_and_as_the_full_reader_does(
    tmp_path: Path, name: str
):
    # everything loaded: the solvers, the spec models, the readers, numpy
    import hieropt.api  # noqa: F401
    from hieropt.errors import InputError
    from hieropt.io.instance import load_instance

    path = write_case(tmp_path, name)
    with pytest.raises(InputError) as full:
        load_instance(path)
    r = fresh_cli(["solve", str(path)], tmp_path)
    assert r["code"] == 2, r
    assert r["stderr"] == f"error: {full.value}\n"
    assert str(path) in r["stderr"]
    assert not {"numpy", "pyomo", "highspy"} & set(r["loaded"]), r["loaded"]


def test_late_bad_input_is_still_reported(tmp_path: Path):
    """A bad field after the workload (which needs numpy) keeps its message: the constraint text."""
    from hieropt.errors import InputError
    from hieropt.io.instance import load_instance

    path = tmp_path / "constraint.toml"
    path.write_text(instance_text(**{'"sum(bw) == 500"': '"sum(bw) = 500"'}), encoding="utf-8")
    with pytest.raises(InputError) as full:
        load_instance(path)
    r = fresh_cli(["solve", str(path)], tmp_path)
    assert r["code"] == 2 and r["stderr"] == f"error: {full.value}\n"
    assert "constraint 'sum(bw) = 500'" in r["stderr"] and "use ==" in r["stderr"]


@pytest.mark.skipif(
    not HIEROPT.exists(), reason="the hieropt console script is not installed next to Python"
)
@pytest.mark.parametrize(
    "argv", [["solve", "missing.toml"], ["solve", "--help"], ["--help"]], ids=" ".join
)
def test_python_m_hieropt_behaves_as_the_console_script(tmp_path: Path, argv: list[str]):
    env = {**ENV, "NO_COLOR": "1", "COLUMNS": "120"}
    script = subprocess.run(
        [str(HIEROPT), *argv], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )
    module = subprocess.run(
        [sys.executable, "-m", "hieropt", *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert script.returncode == module.returncode
    assert script.stderr == module.stderr
    # the usage line names the program as it was called ('hieropt' or 'python -m hieropt', which
    # pads that line differently); the rest is the same
    assert script.stdout.split() == module.stdout.replace("python -m hieropt", "hieropt").split()


def test_generator_names_are_the_generators():
    from hieropt.io.instance import GENERATORS
    from hieropt.io.workload_file import GENERATOR_NAMES, generators

    assert tuple(generators()) == GENERATOR_NAMES == tuple(GENERATORS)


SWEEP_READERS = {
    "explore": ("hieropt.io.space", "load_space"),
    "codesign": ("hieropt.io.codesign", "load_codesign"),
}


@pytest.mark.parametrize(
    "text", [None, "x = [\n", "x = 1\n"], ids=["missing", "toml-syntax", "unknown-key"]
)
@pytest.mark.parametrize("command", list(SWEEP_READERS))
def test_sweep_bad_input_is_reported_before_the_solvers_load(
    tmp_path: Path, command: str, text: str | None
):
    """``explore`` and ``codesign`` read their space before the study and solver modules load: the
    reader's own message, exit 2, no HiGHS or Pyomo (and, for an unreadable file, no numpy)."""
    import importlib

    from hieropt.errors import InputError

    path = tmp_path / "space.toml"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    module, name = SWEEP_READERS[command]
    with pytest.raises(InputError) as full:
        getattr(importlib.import_module(module), name)(path)
    r = fresh_cli([command, str(path)], tmp_path)
    assert r["code"] == 2, r
    assert r["stderr"] == f"error: {full.value}\n"
    assert not {"pyomo", "highspy"} & set(r["loaded"]), r["loaded"]
    if text != "x = 1\n":
        assert "numpy" not in r["loaded"], r["loaded"]


LIBRA_FILES = ("network", "workload", "communicator", "cost")


@pytest.mark.parametrize("bad", LIBRA_FILES)
def test_libra_flags_report_a_missing_file_before_numpy(tmp_path: Path, bad: str, shared_data):
    """``solve --network ... --cost ...``: a missing LIBRA file (or a folder given for it) is
    reported as the full reader reports it, before numpy loads."""
    from hieropt.errors import InputError
    from hieropt.io.libra_instance import load_libra

    d = shared_data / "libra"
    files = {
        "network": d / "network" / "4d_network.yml",
        "workload": d / "workload" / "GPT_3.txt",
        "communicator": d / "communicator" / "GPT_3_4d.yml",
        "cost": d / "cost_model" / "4d_cost_model.yml",
    }
    files[bad] = tmp_path if bad == "workload" else tmp_path / "missing.yml"
    with pytest.raises(InputError) as full:
        load_libra(*(files[k] for k in LIBRA_FILES))
    r = fresh_cli(["solve", *(a for k in LIBRA_FILES for a in (f"--{k}", str(files[k])))], tmp_path)
    assert r["code"] == 2, r
    assert r["stderr"] == f"error: {full.value}\n"
    assert "numpy" not in r["loaded"], r["loaded"]


@pytest.mark.parametrize("name", ["missing.txt", "missing.toml", "folder"])
def test_workload_show_reports_a_missing_file_before_numpy(tmp_path: Path, name: str):
    """``workload show``: a missing workload (text or model) or a folder is reported as the reader
    reports it, before numpy loads."""
    from hieropt.cli.workload import load_workload
    from hieropt.errors import InputError

    path = tmp_path / name
    if name == "folder":
        path.mkdir()
    with pytest.raises(InputError) as full:
        load_workload(path)
    r = fresh_cli(["workload", "show", str(path)], tmp_path)
    assert r["code"] == 2, r
    assert r["stderr"] == f"error: {full.value}\n"
    assert "numpy" not in r["loaded"], r["loaded"]


def test_version_names_the_solver_stack():
    """``hieropt --version``: hieropt's version and the installed HiGHS, Pyomo and numpy, one per
    line, exit 0."""
    from importlib import metadata

    from hieropt.version import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"hieropt {__version__}"
    assert f"HiGHS (highspy) {metadata.version('highspy')}" in lines
    assert f"Pyomo {metadata.version('pyomo')}" in lines
