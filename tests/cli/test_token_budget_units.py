"""A run's token budget below 1,000,000 (``hieropt.io.cluster.MIN_RUN_TOKENS``) is a unit slip
(``--tokens 15`` meant 15T, a run of "0.0 days"): refused with a hint naming the suffixes, on the
command line and in an instance file; 1,000,000 and 15T pass."""

from __future__ import annotations

import pytest

from hieropt.io.cluster import MAX_RUN_TOKENS, MIN_RUN_TOKENS
from tests.cases import REPO
from tests.cli.util import error_line, run

INST = REPO / "instances" / "llama3-405b-16k-cluster.toml"


def test_the_limit():
    assert MIN_RUN_TOKENS == 1e6


@pytest.mark.parametrize("cmd", ["solve", "compare", "report"])
def test_tokens_without_a_suffix(cmd, tmp_path):
    extra = ["-o", tmp_path / "r"] if cmd == "report" else []
    r = run(cmd, INST, "--tokens", "15", *extra)
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --tokens: 15 tokens is below 1,000,000, fewer than one iteration of an LLM "
        "training: the budget is a plain token count; fix: did you mean 15B or 15T? write e.g. "
        "--tokens 15T (suffixes k, M, B = 1e9, T = 1e12)"
    )


def test_a_suffixed_budget_below_the_limit_gets_no_guess():
    line = error_line(run("solve", INST, "--tokens", "999k"))
    assert "999,000 tokens is below 1,000,000" in line and "did you mean" not in line


def test_one_iteration_and_with_the_suffix_it_runs():
    r = run("solve", INST, "--tokens", "16777216")  # one iteration of the plan
    assert r.exit_code == 0, r.output
    # (one iteration: 6.424 s, in seconds rather than "0.0 days")
    assert "run of 16.78M tokens: 6.42 seconds, 0 MWh, $39 per run" in r.stdout
    r = run("solve", INST, "--tokens", "15T")
    assert r.exit_code == 0, r.output
    # 15e12 / 16,777,216 tokens per iteration x 6.4242 s = 66.5 days
    assert "run of 15T tokens: 66.5 days" in r.stdout


def test_tokens_in_an_instance_file(tmp_path):
    text = INST.read_text().replace("tokens = 15.6e12", "tokens = 15.6", 1)
    text = text.replace('"../models/', f'"{REPO}/models/')
    path = tmp_path / "inst.toml"
    path.write_text(text)
    assert error_line(run("solve", path)) == (
        f"error: {path}: tokens: 15.6 tokens is below 1,000,000, fewer than one iteration of an "
        "LLM training: the budget is a plain token count; fix: did you mean 15.6B or 15.6T? "
        "write tokens = 15.6e9 or 15.6e12"
    )


def test_an_absurd_budget_is_refused():
    assert MAX_RUN_TOKENS == 1e15  # about 28 x Qwen3's 36T tokens, the largest published run
    problem = ("tokens is above 1,000T (1e15), the limit (about 28 x the largest published "
               "pre-training run, 36T tokens, Qwen3 Technical Report, arXiv:2505.09388)")
    assert error_line(run("solve", INST, "--tokens", "1e30")) == (
        f"error: --tokens: 1e+30 {problem}; fix: give the run's token budget, at most 1000T, "
        "e.g. --tokens 15T"
    )
    assert error_line(run("solve", INST, "--tokens", "1001T")).startswith(
        "error: --tokens: 1.001e+15 tokens is above 1,000T")


def test_the_largest_budget_runs():
    r = run("solve", INST, "--tokens", "1000T", "--no-sensitivity")
    assert r.exit_code == 0, r.output
    # 1e15 / 16,777,216 tokens per iteration x 6.42423 s = 4,431.9 days
    assert "run of 1,000T tokens: 4,431.9 days" in r.stdout


def test_an_absurd_budget_in_an_instance_file(tmp_path):
    text = INST.read_text().replace("tokens = 15.6e12", "tokens = 1e30", 1)
    text = text.replace('"../models/', f'"{REPO}/models/')
    path = tmp_path / "inst.toml"
    path.write_text(text)
    assert error_line(run("solve", path)) == (
        f"error: {path}: tokens: 1e+30 tokens is above 1,000T (1e15), the limit (about 28 x the "
        "largest published pre-training run, 36T tokens, Qwen3 Technical Report, "
        "arXiv:2505.09388); fix: "
        "give the run's token budget, at most 1e15, e.g. tokens = 15e12"
    )


@pytest.mark.parametrize("cmd", ["solve", "evaluate", "compare", "report"])
def test_a_budget_below_one_iteration_is_refused(cmd, tmp_path):
    """1M tokens passes the unit check but is not one iteration of the 405B plan (16,777,216
    tokens): its run would be "0.0 days"."""
    extra = {"report": ["-o", tmp_path / "r"], "evaluate": ["--bw", "400,50"]}.get(cmd, [])
    r = run(cmd, INST, "--tokens", "1M", *extra)
    assert r.exit_code == 2
    assert error_line(r) == (
        "error: --tokens: 1,000,000 tokens is fewer than one iteration of llama3-405b "
        "(16,777,216 tokens per iteration); fix: give the run's token budget, at least one "
        "iteration's, e.g. --tokens 15T"
    )


def test_a_file_budget_below_one_iteration_is_refused(tmp_path):
    text = INST.read_text().replace("tokens = 15.6e12", "tokens = 16e6", 1)
    text = text.replace('"../models/', f'"{REPO}/models/')
    path = tmp_path / "inst.toml"
    path.write_text(text)
    r = run("solve", path)
    assert r.exit_code == 2
    assert error_line(r) == (
        f"error: {path}: tokens: 16,000,000 tokens is fewer than one iteration of llama3-405b "
        "(16,777,216 tokens per iteration); fix: give the run's token budget, at least one "
        "iteration's"
    )


def test_a_codesign_budget_below_one_iteration_is_refused():
    # Llama 3 405B's space: global batch 2,048 sequences of 8,192 tokens per iteration
    from pydantic import ValidationError

    from hieropt.io.codesign import load_codesign

    path = REPO / "spaces" / "codesign-llama3-405b.toml"
    assert error_line(run("codesign", path, "--tokens", "1M")) == (
        "error: --tokens: 1,000,000 tokens is fewer than one iteration of llama3-405b "
        "(16,777,216 tokens per iteration); fix: give the run's token budget, at least one "
        "iteration's, e.g. --tokens 15T"
    )
    space = load_codesign(path)
    assert space.tokens_per_iteration == 2048 * 8192
    with pytest.raises(ValidationError, match=r"tokens: 16,777,215 tokens is fewer than one"):
        type(space).model_validate({**space.model_dump(), "tokens": 16_777_215})
    assert type(space).model_validate({**space.model_dump(), "tokens": 16_777_216}).tokens
