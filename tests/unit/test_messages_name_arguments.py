"""A message that names an input in its text names the library's argument with the command line's
flag (``max_iteration_time_ns (--max-time)``: :func:`hieropt.names.with_flag`), so that it is true
whether the library or the command line raised it; an error's source is the argument, which the
command line swaps for its flag (:data:`hieropt.names.FLAGS`)."""

from __future__ import annotations

import pytest

import hieropt
from hieropt.errors import InputError
from hieropt.names import FLAGS, with_flag
from tests.cases import REPO

GPT3 = REPO / "instances" / "gpt3-4d.toml"
FASTEST = "fastest possible is 1,166,511,725.3 ns"
"""gpt3-4d.toml's fastest iteration time (the performance optimum)."""


@pytest.fixture(scope="module")
def gpt3():
    return hieropt.load_instance(GPT3)


def test_with_flag_names_the_argument_and_its_flag():
    assert with_flag("max_iteration_time_ns") == "max_iteration_time_ns (--max-time)"
    assert with_flag("budget_usd") == "budget_usd (--budget)"
    assert with_flag("time_limit_s") == "time_limit_s"  # (no flag sets it)
    assert FLAGS["fields"] == "--fit" and FLAGS["tokens"] == "--tokens"


@pytest.mark.parametrize("target, tail", [
    # 1.17e15 x below: no unit makes it feasible
    (1e-6, "time target 1e-06 ns: " + FASTEST + " — the target is 1.17e+15x below the fastest: "
           "times are ns (the target, max_iteration_time_ns (--max-time))"),
    # 0.5 ms, above the 0.1 ms of a plain number typed without its unit: 2,333 x below
    (5e5, "time target 500,000.0 ns: " + FASTEST + " — the target is 2.33e+03x below the "
          "fastest (0.5 ms against 1,166.51 ms): check the unit of the target, "
          "max_iteration_time_ns (--max-time)"),
])
def test_the_unit_hint_of_a_library_time_target_names_the_argument(gpt3, target, tail):
    options = hieropt.SolveOptions(max_iteration_time_ns=target)
    sol = hieropt.solve(gpt3, "min_cost", options=options)
    assert sol.status is hieropt.Status.INFEASIBLE
    assert sol.message == tail


def test_the_run_figures_name_the_token_budget_argument(gpt3):
    fig = hieropt.run_figures(gpt3, 1.2e9)
    assert fig.unknown[0] == ("time, energy and $ of a run: no token budget (give tokens "
                              "(--tokens), or tokens in the file)")
    with pytest.raises(InputError) as e:
        hieropt.iteration_target_ns(gpt3, 90 * 86400e9)
    assert e.value.fix == "give tokens (--tokens) (or tokens in the file) and an LLM model file"
    with pytest.raises(InputError) as e:
        hieropt.network_budget_usd(gpt3, 1e9)
    assert e.value.fix == ("add them to [cluster], or give a network budget, budget_usd "
                           "(--budget)")
