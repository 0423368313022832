"""An output option given an empty path (``--json ""``, which the command line would turn into the
current folder) or, for an option that writes a file, a folder, is refused with exit 2 and one line
naming the option and the fix, before any work (a missing instance is not even looked at); no error
document is written anywhere, and nothing is written into the current folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from .util import error_line, run

REPO = Path(__file__).resolve().parents[2]
GPT3 = REPO / "instances" / "gpt3-4d.toml"

JSON_FIX = "give a file path, or - for stdout"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", GPT3, "--json", ""], f"--json '': is an empty path; fix: {JSON_FIX}"),
        (["solve", GPT3, "--json="], f"--json '': is an empty path; fix: {JSON_FIX}"),
        (["evaluate", GPT3, "--bw", "250,125,75,50", "--json", ""],
         f"--json '': is an empty path; fix: {JSON_FIX}"),
        (["compare", GPT3, "--json", ""], f"--json '': is an empty path; fix: {JSON_FIX}"),
        (["pareto", GPT3, "--json", ""], f"--json '': is an empty path; fix: {JSON_FIX}"),
        (["pareto", GPT3, "--csv", ""], f"--csv '': is an empty path; fix: {JSON_FIX}"),
        (["pareto", GPT3, "--plot", ""], "--plot '': is an empty path; fix: give a file path"),
        (["provision", GPT3, "--catalog", REPO / "catalogs" / "example-4d.toml", "--json", ""],
         f"--json '': is an empty path; fix: {JSON_FIX}"),
        (["validate", REPO / "validation" / "llama3-2024.csv", "--json", ""],
         f"--json '': is an empty path; fix: {JSON_FIX}"),
        (["workload", "plan", REPO / "models" / "gpt3-175b-llm.toml", "--json", ""],
         f"--json '': is an empty path; fix: {JSON_FIX}"),
        (["explore", REPO / "spaces" / "gpt3-4096.toml", "--json", ""],
         f"--json '': is an empty path; fix: {JSON_FIX}"),
        (["codesign", REPO / "spaces" / "codesign-gpt3-calculon-a100.toml", "--json", ""],
         f"--json '': is an empty path; fix: {JSON_FIX}"),
        (["workload", "transformer", "--model", REPO / "models" / "gpt3-175b.toml", "-o", ""],
         f"--output '': is an empty path; fix: {JSON_FIX}"),
        (["report", GPT3, "-o", ""], "--out '': is an empty path; fix: give a folder path"),
        (["export", GPT3, "--astra-sim", ""],
         "--astra-sim '': is an empty path; fix: give a path, or - for stdout"),
        (["codesign", REPO / "spaces" / "codesign-gpt3-calculon-a100.toml",
          "--write-instances", ""],
         "--write-instances '': is an empty path; fix: give a folder path"),
        (["simulate", GPT3, "--keep", ""], "--keep '': is an empty path; fix: give a folder path"),
    ],
)
def test_an_empty_output_path_is_refused_before_any_work(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert error_line(r) == f"error: {message}"
    assert list(tmp_path.iterdir()) == []


def test_an_empty_output_path_is_named_before_a_missing_instance(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run("solve", tmp_path / "missing.toml", "--json", "")
    assert r.exit_code == 2
    assert error_line(r) == f"error: --json '': is an empty path; fix: {JSON_FIX}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", GPT3, "--json", "."],
         "--json .: is a folder, not a file; fix: give a file path"),
        (["explore", REPO / "spaces" / "gpt3-4096.toml", "--out", "."],
         "--out .: is a folder, not a file; fix: give a file path"),
        (["workload", "transformer", "--model", REPO / "models" / "gpt3-175b.toml", "-o", "."],
         "--output .: is a folder, not a file; fix: give a file path"),
    ],
)
def test_a_file_option_given_a_folder_is_refused_and_nothing_written(
    tmp_path, monkeypatch, args, message
):
    monkeypatch.chdir(tmp_path)
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert error_line(r) == f"error: {message}"
    assert list(tmp_path.iterdir()) == []


def test_a_command_line_that_does_not_parse_writes_no_error_document_to_a_folder(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    r = run("solve", GPT3, "--json", ".", "--nope")
    assert r.exit_code == 2, r.output
    assert error_line(r) == (
        "error: --nope: no such option; fix: see 'hieropt solve --help'"
    )
    assert list(tmp_path.iterdir()) == []
