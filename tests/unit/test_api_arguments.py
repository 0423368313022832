"""The library's arguments of the wrong type or value: an InputError naming the argument (never
bare TypeErrors, a time limit of 0 read as HiGHS's failure, NaN taken as no limit, text and booleans
converted to bandwidths)."""

from __future__ import annotations

import numpy as np
import pytest

import hieropt
from hieropt import SolveOptions
from tests.cases import REPO

INSTANCE = REPO / "instances" / "gpt3-4d.toml"


@pytest.fixture(scope="module")
def inst():
    return hieropt.load_instance(INSTANCE)


@pytest.mark.parametrize("limit", [0, -1, float("nan"), "10", True])
def test_time_limit_must_be_a_positive_number(inst, limit):
    for call in (
        lambda: hieropt.solve(inst, options=SolveOptions(time_limit_s=limit)),
        lambda: hieropt.pareto(inst, 3, time_limit_s=limit),
    ):
        with pytest.raises(hieropt.InputError, match="time_limit_s") as e:
            call()
        assert "positive number of seconds" in str(e.value)


def test_time_limit_inf_and_numpy_scalars_are_accepted(inst):
    a = hieropt.solve(inst, options=SolveOptions(time_limit_s=float("inf")))
    b = hieropt.solve(inst, options=SolveOptions(time_limit_s=np.float64(30)))
    assert a.iteration_time_ns == b.iteration_time_ns and a.status.value == "optimal"


@pytest.mark.parametrize("target", ["1e9", [1e9], True])
def test_time_target_must_be_a_number(inst, target):
    with pytest.raises(hieropt.InputError, match="max_iteration_time_ns: .* is not a number"):
        hieropt.solve(
            inst, objective="min_cost", options=SolveOptions(max_iteration_time_ns=target)
        )


@pytest.mark.parametrize("points", [3.5, "4", True])
def test_pareto_points_must_be_whole(inst, points):
    with pytest.raises(hieropt.InputError, match="points: .* is not a whole number"):
        hieropt.pareto(inst, points=points)


@pytest.mark.parametrize(
    "bw, kind",
    [
        (np.array(["250", "125", "75", "50"]), "str"),
        ([True, 125, 75, 50], "bool"),
        ([250, "125", 75, 50], "str"),
        (np.array([1, 0, 1, 1], dtype=bool), "bool"),
    ],
)
def test_bandwidths_must_be_numbers(inst, bw, kind):
    for call in (hieropt.evaluate, hieropt.verify):
        with pytest.raises(
            hieropt.InputError, match=f"bw_gbps: bandwidths must be numbers, got {kind}"
        ):
            call(inst, bw)


def test_integer_and_numpy_bandwidths_evaluate_alike(inst):
    ref = hieropt.evaluate(inst, [250.0, 125.0, 75.0, 50.0]).iteration_time_ns
    for bw in ([250, 125, 75, 50], (250, 125, 75, 50), np.array([250, 125, 75, 50], dtype=np.int32),
               [np.float32(250), np.int64(125), 75, 50]):
        assert hieropt.evaluate(inst, bw).iteration_time_ns == ref


def test_options_must_be_solve_options(inst):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.solve(inst, options={"rel_gap": 1e-3})
    assert str(e.value) == (
        "options: expected a hieropt.SolveOptions, got a dict; fix: pass "
        "options=hieropt.SolveOptions(rel_gap=1e-3, ...)"
    )


@pytest.mark.parametrize("field", ["sensitivity", "sensitivity_ranges", "portfolio"])
def test_switches_must_be_booleans(inst, field):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.solve(inst, options=SolveOptions(**{field: "no"}))
    assert str(e.value) == (
        f"{field}: 'no' is not a boolean; fix: give {field}=True or {field}=False"
    )


@pytest.mark.parametrize(
    "budget, problem",
    [(-5, "-5 is not a number > 0"), (0, "0 is not a number > 0"),
     ("10M", "'10M' is not a number"), (float("nan"), "nan is not a number (want a number > 0)")],
)
def test_budget_errors_name_budget_usd(inst, budget, problem):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.solve(inst, options=SolveOptions(budget_usd=budget))
    assert str(e.value) == (
        f"budget_usd: {problem}; fix: give the network budget in $, e.g. budget_usd=12e6 (None: "
        "the instance's)"
    )


def test_load_instance_wants_a_path():
    with pytest.raises(hieropt.InputError) as e:
        hieropt.load_instance(None)
    assert str(e.value) == (
        "path: expected the path (str or Path) of an instance file, got a NoneType; fix: pass "
        "the file's path, e.g. hieropt.load_instance(\"instances/x.toml\")"
    )


_TIME_FIX = "give the iteration time in ns, e.g. 1.2e9 (the solution's iteration_time_ns)"
_TOKENS_FIX = "give the run's token budget as a number, e.g. 15e12 for 15T (None: the instance's)"


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((-1.0, 1e6), {}, f"iteration_time_ns: -1 is not a number > 0; fix: {_TIME_FIX}"),
        ((0.0, 1e6), {}, f"iteration_time_ns: 0 is not a number > 0; fix: {_TIME_FIX}"),
        (("1e9",), {}, f"iteration_time_ns: '1e9' is not a number; fix: {_TIME_FIX}"),
        ((1e9, -1.0), {}, "network_cost_usd: -1 is not a number >= 0; fix: give the network's "
         "cost in $ (None: unknown)"),
        ((1e9, 1e6), {"tokens": "15T"}, f"tokens: '15T' is not a number; fix: {_TOKENS_FIX}"),
        ((1e9, 1e6), {"tokens": -5}, f"tokens: -5 is not a number > 0; fix: {_TOKENS_FIX}"),
    ],
)
def test_run_figures_arguments(inst, args, kwargs, message):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.run_figures(inst, *args, **kwargs)
    assert str(e.value) == message


def test_run_figures_of_a_free_network_and_a_token_budget(inst):
    """A network of $0 is a known cost; 15e12 tokens of 524,288 per 1 s iteration take
    15e12 / 524288 s = 331.13 days."""
    f = hieropt.run_figures(inst, 1e9, 0.0, tokens=15e12)
    assert f.network_capex_usd == 0.0
    assert f.time_to_train_days == pytest.approx(15e12 / 524288 / 86400, rel=1e-12)


def test_an_iteration_time_in_seconds_is_refused_with_its_value_in_ns(inst):
    # 12.5 meant 12.5 s was read as 12.5 ns: 15e12 / 524,288 tokens x 12.5 ns = 0.36 s of
    # training instead of 4,139 days, and an MFU 1e9 times too high
    with pytest.raises(hieropt.InputError) as e:
        hieropt.run_figures(inst, 12.5, 0.0, tokens=15e12)
    assert str(e.value) == (
        "iteration_time_ns: 12.5 ns is below 1,000 ns (1 µs), shorter than any training "
        "iteration: looks like seconds or milliseconds; fix: give the time in ns (1 s = 1e9 ns, "
        "1 ms = 1e6 ns): 12.5 s = 1.25e+10 ns: write iteration_time_ns=1.25e+10 (for 12.5 ms, "
        "iteration_time_ns=1.25e+07)"
    )
    # the value the fix writes gives the run of 12.5 s iterations: 28,610,229 iterations
    f = hieropt.run_figures(inst, 1.25e10, 0.0, tokens=15e12)
    assert f.time_to_train_days == pytest.approx(15e12 / 524288 * 12.5 / 86400, rel=1e-12)
    assert f.time_to_train_days == pytest.approx(4139.21, abs=0.005)
    # 1 us itself is taken (the threshold), 0.999 us is not
    assert hieropt.run_figures(inst, 1e3, 0.0, tokens=15e12).iteration_time_ns == 1e3
    with pytest.raises(hieropt.InputError, match="^iteration_time_ns: 999 ns is below 1,000 ns"):
        hieropt.run_figures(inst, 999.0)


@pytest.mark.parametrize(("value", "problem"), [
    (float("nan"), "nan is not a number (want a number > 0)"),
    (float("inf"), "inf is not finite"),
    (-12.5, "-12.5 is not a number > 0"),
])
def test_an_iteration_time_not_finite_or_negative_is_refused(inst, value, problem):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.run_figures(inst, value)
    assert str(e.value).startswith(f"iteration_time_ns: {problem}")
    assert str(e.value).endswith(f"; fix: {_TIME_FIX}")


LLAMA = REPO / "instances" / "llama3-405b-16k-cluster.toml"


@pytest.mark.parametrize(("tokens", "message"), [
    # 15 meant 15T: a run of 15 / 524,288 iterations, 3e-11 days, was printed
    (15, "tokens: 15 tokens is below 1,000,000, fewer than one iteration of an LLM training: the "
         "budget is a plain token count; fix: give the run's token budget in tokens, e.g. "
         "tokens=15e12 for 15T (15 would be 15 tokens)"),
    (1e30, "tokens: 1e+30 tokens is above 1,000T (1e15), the limit (about 28 x the largest "
           "published pre-training run, 36T tokens, Qwen3 Technical Report, arXiv:2505.09388); "
           "fix: give the "
           "run's token budget, at most 1000T, e.g. tokens=15e12"),
])
def test_a_token_budget_in_another_unit_is_refused_as_the_command_line_does(inst, tokens,
                                                                              message):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.run_figures(inst, 1e9, 0.0, tokens=tokens)
    assert str(e.value) == message
    # 1M tokens is taken (the threshold), as --tokens 1M is
    f = hieropt.run_figures(inst, 1e9, 0.0, tokens=1e6)
    assert f.iterations_per_run == pytest.approx(1e6 / 524288, rel=1e-12)


def test_a_token_budget_below_one_iteration_is_refused():
    # Llama 3 405B trains 2,048 x 8,192 = 16,777,216 tokens per iteration: 5M is no run
    with pytest.raises(hieropt.InputError) as e:
        hieropt.run_figures(LLAMA, 6.3e9, tokens=5e6)
    assert str(e.value) == (
        "tokens: 5,000,000 tokens is fewer than one iteration of llama3-405b (16,777,216 tokens "
        "per iteration); fix: give the run's token budget, at least one iteration's, e.g. "
        "tokens=15e12")


def test_a_deadline_in_seconds_is_refused_with_its_seconds_reading_first():
    # 90 days written in seconds (7,776,000) read as ns: as days it would be 21,290 years and as
    # hours 887 years, beyond any training run; the fix offers the seconds, 90 days
    with pytest.raises(hieropt.InputError) as e:
        hieropt.iteration_target_ns(LLAMA, 90 * 86400)
    assert str(e.value) == (
        "deadline_ns: 7.776e+06 ns is below one hour (3.6e+12 ns), shorter than any training run: "
        "looks like days, hours or seconds; fix: give the run's wall time in ns (1 s = 1e9 ns): "
        "7.776e+06 s = 7.776e+15 ns: write deadline_ns=7.776e+15"
    )


def test_a_deadline_in_days_is_refused_with_its_value_in_ns():
    # 90 meant 90 days was read as 90 ns: a target of 90 / 929,856 iterations = 1e-4 ns
    with pytest.raises(hieropt.InputError) as e:
        hieropt.iteration_target_ns(LLAMA, 90)
    assert str(e.value) == (
        "deadline_ns: 90 ns is below one hour (3.6e+12 ns), shorter than any training run: looks "
        "like days, hours or seconds; fix: give the run's wall time in ns (1 day = 86400e9 ns): "
        "90 days = 7.776e+15 ns: write deadline_ns=7.776e+15 (for 90 h, deadline_ns=3.24e+14)"
    )
    # the value the fix writes: 15.6e12 tokens / (2,048 x 8,192) = 929,856.9 iterations in 90 days
    target = hieropt.iteration_target_ns(LLAMA, 7.776e15)
    assert target == pytest.approx(7.776e15 / (15.6e12 / (2048 * 8192)), rel=1e-15)
    assert target == pytest.approx(8.3626e9, rel=1e-4)  # 8.36 s per iteration
    with pytest.raises(hieropt.InputError, match=r"^deadline_ns: nan is not a number"):
        hieropt.iteration_target_ns(LLAMA, float("nan"))
    with pytest.raises(hieropt.InputError, match=r"^deadline_ns: -1 is not a number > 0"):
        hieropt.size_cluster(REPO / "spaces" / "codesign-gpt3-4096.toml", [4096],
                             deadline_ns=-1)
    with pytest.raises(hieropt.InputError, match=r"^deadline_ns: 150 ns is below one hour"):
        hieropt.size_cluster(REPO / "spaces" / "codesign-gpt3-4096.toml", [4096],
                             deadline_ns=150)


BYTES_PER_S = [250e9, 125e9, 75e9, 50e9]
"""GPT-3's 250, 125, 75, 50 GB/s written in bytes/s: refused by ``--bw``, and was evaluated by the
library (880 ms: the compute alone, communication all but free)."""


@pytest.mark.parametrize("call", [
    lambda i, bw: hieropt.evaluate(i, bw),
    lambda i, bw: hieropt.verify(i, bw, 1.2e9),
    lambda i, bw: hieropt.export_astrasim(i, bw, "/nonexistent/never-written"),
    lambda i, bw: hieropt.run_figures(i, 1.2e9, bw_gbps=bw),
])
def test_bandwidths_in_bytes_per_second_are_refused_as_by_the_command_line(inst, call):
    with pytest.raises(hieropt.InputError) as e:
        call(inst, BYTES_PER_S)
    assert str(e.value) == (
        "bw_gbps: dimension 0: 2.5e+11 GB/s per NPU is above 1e+06 GB/s per NPU (a thousand times "
        "the fastest scale-up link): looks like bytes/s; fix: give GB/s per NPU (1 GB = 1e9 "
        "bytes): 2.5e+11 bytes/s = 250 GB/s: write bw_gbps=[250, 125, 75, 50] (1e6 is the most "
        "bw_gbps takes: a dimension with no limit)"
    )
    # one dimension in bytes/s: the others kept as given
    with pytest.raises(hieropt.InputError, match=r"write bw_gbps=\[250, 125, 75, 50\]"):
        call(inst, [250, 125, 75e9, 50])


@pytest.mark.parametrize("bw, message", [
    (["a", "b", "c", "d"], "bw_gbps: bandwidths must be numbers, got str; fix: give 4 numbers "
     "(GB/s), not text or booleans"),
    (7, "bw_gbps: expected one bandwidth (GB/s) per dimension as a list or array, got a int; fix: "
     "give a sequence of 4 numbers, dimension 0 first"),
    ([250, 125], "bw_gbps: 2 bandwidths given for 4 dimensions; fix: give 4 values (GB/s), one "
     "per dimension"),
    ([float("nan"), 125, float("inf"), -5], "bw_gbps: dimension 0: nan GB/s per NPU is not a "
     "number; dimension 2: inf GB/s per NPU is not finite; dimension 3: -5 GB/s per NPU is "
     "negative; fix: give each of the 4 dimensions a finite bandwidth >= 0 in GB/s per NPU, "
     "dimension 0 first (1e6 for a dimension with no limit)"),
])
def test_run_figures_checks_its_bandwidths_as_evaluate_does(inst, bw, message):
    for call in (lambda: hieropt.run_figures(inst, 1.2e9, bw_gbps=bw),
                 lambda: hieropt.evaluate(inst, bw)):
        with pytest.raises(hieropt.InputError) as e:
            call()
        assert str(e.value) == message


def test_run_figures_takes_no_bandwidths_or_a_design_s(inst):
    sol = hieropt.solve(inst)
    with_bw = hieropt.run_figures(inst, sol.iteration_time_ns, bw_gbps=sol.bw_gbps)
    without = hieropt.run_figures(inst, sol.iteration_time_ns)
    assert with_bw == without and with_bw.mfu == pytest.approx(0.3773, abs=1e-4)


def test_bandwidths_up_to_a_million_gbps_are_evaluated(inst):
    # 1e6 on every dimension: communication all but free, the compute alone (880.14 ms, the
    # README's compute row); the same as the library took before
    bd = hieropt.evaluate(inst, [1e6] * 4)
    assert bd.compute_ns == pytest.approx(880.1379e6, rel=1e-6)
    # 29 GB sent per NPU on dimension 0 (the README's table) take 0.029 ms at 1e6 GB/s
    assert 0 < bd.iteration_time_ns - bd.compute_ns < 0.1e6


@pytest.mark.parametrize(("field", "value"), [
    ("rel_gap", "1e-3"), ("rel_gap", True), ("max_regret", "x"),
])
def test_gap_and_regret_must_be_numbers(inst, field, value):
    # ("1e-3" and "x" were TypeErrors; True was read as a gap of 1)
    with pytest.raises(hieropt.InputError, match=f"^{field}: {value!r} is not a number; fix: "):
        hieropt.solve(inst, options=SolveOptions(**{field: value}))


def test_cheapest_design_must_be_a_boolean(inst):
    # ("no" is text, and true: it chose the cheapest design, the opposite of what was written)
    with pytest.raises(hieropt.InputError, match="^cheapest_design: 'no' is not a boolean"):
        hieropt.solve(inst, options=SolveOptions(cheapest_design="no"))


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"iteration_time_ns": "1.2s"}, "iteration_time_ns"),
    ({"iteration_time_ns": -1.0}, "iteration_time_ns"),
    ({"budget_usd": "10M"}, "budget_usd"),
    ({"target_ns": float("nan")}, "target_ns"),
])
def test_verify_numbers_name_their_argument(inst, kwargs, field):
    # ("1.2s" was a TypeError from inside the check)
    with pytest.raises(hieropt.InputError, match=f"^{field}: "):
        hieropt.verify(inst, [250, 125, 75, 50], **kwargs)


SPACE = REPO / "spaces" / "codesign-gpt3-4096-libra-plan.toml"
CATALOG = REPO / "catalogs" / "example-4d.toml"


@pytest.mark.parametrize(("kwargs", "message"), [
    # (each was a TypeError or an AttributeError from inside the search)
    ({"space": {"model": "x"}}, "space: expected hieropt.load_codesign(path) or the path of a "
     "co-design space file, got a dict"),
    ({"space": None}, "space: expected hieropt.load_codesign(path)"),
    ({"workers": "2"}, "workers: '2' is not a whole number >= 1"),
    # (named the command line's --workers)
    ({"workers": 0}, "workers: 0 is not a whole number >= 1"),
    ({"on_row": 5}, "on_row: expected a function of one row, got a int"),
    ({"max_iteration_time_ns": "7s"}, "max_iteration_time_ns: '7s' is not a number; fix: give "
     "the iteration-time target in ns, e.g. 1.3e9 for 1.3 s"),
    # (named its old name, max_network_cost_usd, and no unit)
    ({"budget_usd": "10M"}, "budget_usd: '10M' is not a number; fix: give the network budget in "
     "$, e.g. 12e6"),
    ({"budget_usd": -1.0}, "budget_usd: -1 is not a number > 0"),
])
def test_codesign_arguments_name_themselves(kwargs, message):
    kwargs = {"space": SPACE, **kwargs}
    with pytest.raises(hieropt.InputError) as e:
        hieropt.codesign(kwargs.pop("space"), **kwargs)
    assert str(e.value).startswith(message), str(e.value)


@pytest.mark.parametrize(("kwargs", "message"), [
    # (an AttributeError and TypeErrors from inside the provisioning)
    ({"catalog": {"classes": {}}}, "catalog: expected hieropt.load_catalog(path) or the path of "
     "a catalog file, got a dict"),
    ({"budget_usd": "10M"}, "budget_usd: '10M' is not a number"),
    ({"max_cost_usd": "10M"}, "max_cost_usd: '10M' is not a number"),
    ({"max_iteration_time_ns": "1.3s"}, "max_iteration_time_ns: '1.3s' is not a number"),
    ({"max_power_w": "1MW"}, "max_power_w: '1MW' is not a number; fix: give the power budget in "
     "W, e.g. 5e5 for 500 kW"),
])
def test_provision_arguments_name_themselves(inst, kwargs, message):
    kwargs = {"catalog": CATALOG, **kwargs}
    with pytest.raises(hieropt.InputError) as e:
        hieropt.provision(inst, kwargs.pop("catalog"), **kwargs)
    assert str(e.value).startswith(message), str(e.value)


@pytest.mark.parametrize(("call", "message"), [
    # (each was a TypeError, a ValueError or an AttributeError from inside the call, or named a
    # command-line flag: --astra-sim, --tolerance)
    (lambda i: hieropt.knee(i, "1%"), "within: '1%' is not a number; fix: give the slack as a "
     "fraction, e.g. within=0.01 for 1 %"),
    (lambda i: hieropt.knee(i, 0.01, time_limit_s="x"), "time_limit_s: 'x' is not a positive "
     "number of seconds"),
    (lambda i: hieropt.provision(i, CATALOG, time_limit_s=0), "time_limit_s: 0 is not a positive "
     "number of seconds"),
    (lambda i: hieropt.provision_tradeoff(i, {"classes": {}}), "catalog: expected "
     "hieropt.load_catalog(path) or the path of a catalog file, got a dict"),
    (lambda i: hieropt.export_astrasim(i, [250, 125, 75, 50], 5), "folder: expected a folder's "
     "path (str or Path), got a int"),
    # (as evaluate and verify: not a TypeError from inside the export)
    (lambda i: hieropt.export_astrasim(i, None, "/nonexistent/never-written"), "bw_gbps: expected "
     "one bandwidth (GB/s) per dimension as a list or array, got a NoneType; fix: give a sequence "
     "of 4 numbers, dimension 0 first"),
    (lambda i: hieropt.simulate(i, None, [250, 125, 75, 50]), "binary: expected the path of the "
     "ASTRA-sim binary, got no binary"),
    (lambda i: hieropt.simulate(i, "/bin/true", [250, 125, 75, 50], timeout_s="1h"),
     "timeout_s: '1h' is not a number; fix: give the time allowed per simulator run in s, e.g. "
     "7200 for 2 h"),
    (lambda i: hieropt.simulate(i, "/bin/true", [250, 125, 75, 50], tolerance=3),
     "tolerance: 3 is not in (0, 1); fix: give a fraction, e.g. tolerance=0.03 for 3 %"),
    (lambda i: hieropt.load_codesign(5), "path: expected the path (str or Path) of a co-design "
     "space file, got a int"),
    (lambda i: hieropt.load_catalog(5), "path: expected the path (str or Path) of a parts "
     "catalog file, got a int"),
])
def test_study_arguments_name_themselves(inst, call, message):
    with pytest.raises(hieropt.InputError) as e:
        call(inst)
    assert str(e.value).startswith(message), str(e.value)


@pytest.mark.parametrize(("kwargs", "message"), [
    # (a TypeError from inside the search, after the first candidate was solved)
    ({"progress": lambda row: None}, "progress: expected a function of two arguments (settled, "
     "total), got one that takes 1; fix: pass e.g. progress=lambda settled, total: "
     "print(settled, total) (None: none)"),
    ({"progress": "yes"}, "progress: expected a function of two arguments (settled, total), got "
     "a str; fix: pass e.g. progress=lambda settled, total: print(settled, total) (None: none)"),
    ({"on_row": lambda a, b: None}, "on_row: expected a function of one row, got one that takes "
     "2; fix: pass e.g. on_row=print (None: none)"),
])
def test_codesign_callbacks_are_checked_for_their_arguments(kwargs, message):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.codesign(SPACE, **kwargs)
    assert str(e.value) == message


def test_pareto_progress_is_checked_for_its_arguments(inst):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.pareto(inst, points=3, progress=lambda done: None)
    assert str(e.value) == (
        "progress: expected a function of two arguments (done, points), got one that takes 1; "
        "fix: pass e.g. progress=lambda done, points: print(done, points) (None: none)"
    )


def test_callbacks_of_any_arity_that_fits_are_taken(inst):
    """A builtin, a function with defaults or *args, a bound method: each is called as the search
    and the front call it."""
    done: list = []
    front = hieropt.pareto(inst, points=3, progress=lambda *a: done.append(a))
    assert len(front.points) == 3 and done[-1] == (3, 3)


@pytest.mark.parametrize(("kwargs", "message"), [
    # (each was a TypeError or an AttributeError from inside the search)
    ({"out": 123}, "out: expected the path (str or Path) of a results file, got a int; fix: pass "
     'e.g. out="rows.csv" (None: no file)'),
    ({"out": {"path": "rows.csv"}}, "out: expected the path (str or Path) of a results file, got "
     'a dict; fix: pass e.g. out="rows.csv" (None: no file)'),
    ({"keep": "5"}, "keep: '5' is not a whole number >= 1; fix: give the number of solved rows to "
     "keep for the ranking, e.g. keep=50"),
    ({"cache": "x"}, "cache: expected a hieropt.cache.Cache, got a str; fix: pass "
     "cache=Cache() (from hieropt.cache import Cache), or None for one of the call's own"),
])
def test_codesign_out_keep_and_cache_name_themselves(kwargs, message):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.codesign(SPACE, workers=1, **kwargs)
    assert str(e.value) == message


def test_explore_out_and_cache_name_themselves():
    space = REPO / "spaces" / "gpt3-4096.toml"
    with pytest.raises(hieropt.InputError, match="^out: expected the path"):
        hieropt.explore(space, out=5, workers=1)
    with pytest.raises(hieropt.InputError, match="^cache: expected a hieropt.cache.Cache"):
        hieropt.explore(space, cache={}, workers=1)


@pytest.mark.parametrize("call", [
    # (each was an AttributeError: 'str' object has no attribute 'memo')
    lambda: hieropt.pareto(INSTANCE, points=3, cache="x"),
    lambda: hieropt.validate(REPO / "validation" / "calibration" / "a100-one-node.csv", cache=5),
])
def test_a_cache_of_another_type_names_cache(call):
    with pytest.raises(hieropt.InputError, match=r"^cache: expected a hieropt.cache.Cache, got a"):
        call()


@pytest.mark.parametrize(("kwargs", "message"), [
    # (a TypeError from inside the sizing)
    ({"sizes": "4096"}, "sizes: expected NPU counts (whole numbers >= 1), got a str; fix: pass "
     "e.g. sizes=[2048, 4096] (None: the space's npus)"),
    ({"sizes": [4096, 0]}, "sizes: 0 is not a whole number >= 1; fix: pass e.g. sizes=[2048, "
     "4096] (None: the space's npus)"),
    ({"on_row": 5}, "on_row: expected a function of one row, got a int"),
    ({"workers": 0}, "workers: 0 is not a whole number >= 1"),
])
def test_size_cluster_arguments_name_themselves(kwargs, message):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.size_cluster(SPACE, deadline_ns=1e16, **kwargs)
    assert str(e.value).startswith(message), str(e.value)


@pytest.mark.parametrize(("call", "message"), [
    # (each was taken as true: a text is truthy)
    (lambda: hieropt.explore(REPO / "spaces" / "gpt3-4096.toml", progress="no", workers=1),
     "progress: 'no' is not a boolean; fix: give progress=True or progress=False"),
    (lambda: hieropt.provision(INSTANCE, CATALOG, compare="no"),
     "compare: 'no' is not a boolean; fix: give compare=True or compare=False"),
    # (a TypeError: 'int' object is not iterable)
    (lambda: hieropt.validate(REPO / "validation" / "calibration" / "a100-one-node.csv",
                              calibrations=5),
     "calibrations: expected calibrations (hieropt.calibrate(...)), got a int; fix: pass e.g. "
     "calibrations=[hieropt.calibrate(runs)] (empty: the model files' own)"),
])
def test_switches_and_calibrations_of_another_type_name_themselves(call, message):
    with pytest.raises(hieropt.InputError) as e:
        call()
    assert str(e.value) == message


def test_a_codesign_time_target_in_seconds_is_refused_with_its_ns():
    """``codesign(..., max_iteration_time_ns=5.0)``: 5 s written as ns made every candidate
    infeasible by its bound (``best`` None), with no word of the unit; it is refused with the
    value in ns, as ``run_figures`` refuses an iteration time; a target <= 0 names the target's
    own fix."""
    space = REPO / "spaces" / "codesign-gpt3-calculon-a100.toml"
    with pytest.raises(hieropt.InputError,
                       match=r"max_iteration_time_ns: 5 ns is below 1,000 ns .*write "
                       r"max_iteration_time_ns=5e\+09"):
        hieropt.codesign(space, max_iteration_time_ns=5.0)
    with pytest.raises(hieropt.InputError,
                       match=r"max_iteration_time_ns: -1 is not a number > 0; fix: give the "
                       r"iteration-time target in ns, e.g. 1.3e9 for 1.3 s"):
        hieropt.codesign(space, max_iteration_time_ns=-1)


CLUSTER = REPO / "instances" / "llama3-405b-16k-cluster.toml"


@pytest.mark.parametrize(("call", "message"), [
    (lambda: hieropt.network_budget_usd(CLUSTER, "x"),
     "total_usd: 'x' is not a number; fix: give the whole cluster's capex cap in $, e.g. 700e6"),
    (lambda: hieropt.network_budget_usd(CLUSTER, float("nan")), "total_usd: nan is not a number"),
    (lambda: hieropt.network_budget_usd(CLUSTER, -5), "total_usd: -5 is not a number > 0"),
    (lambda: hieropt.provision(CLUSTER, REPO / "catalogs" / "nvl72-ethernet.toml",
                               objective="performance", max_total_capex_usd=float("nan")),
     "max_total_capex_usd: nan is not a number"),
    (lambda: hieropt.build_time_model({}), "instance: expected an Instance or the path"),
    (lambda: hieropt.hours_weighted({}), "instance: expected an Instance or the path"),
    (lambda: hieropt.load_catalog(REPO / "catalogs" / "example-4d.toml", {}),
     "instance: expected an Instance or the path"),
    (lambda: hieropt.export_astrasim(INSTANCE, [250, 125, 75, 50], "unused", chunks="4"),
     "chunks: '4' is not a whole number >= 1"),
])
def test_every_public_function_checks_its_arguments(call, message):
    """No raw TypeError, AttributeError or Pyomo error: an InputError naming the argument."""
    with pytest.raises(hieropt.InputError) as e:
        call()
    assert str(e.value).startswith(message)


def test_a_path_stands_for_an_instance_in_the_model_functions():
    """16,384 H100s at Meta's figures cost $797,368,320 without their network: $2B leaves
    $1,202,631,680; the time model of a path is the instance's."""
    assert hieropt.network_budget_usd(CLUSTER, 2e9) == pytest.approx(2e9 - 797_368_320)
    by_path = hieropt.build_time_model(INSTANCE)
    loaded = hieropt.build_time_model(hieropt.load_instance(INSTANCE))
    assert by_path.compute_ns == loaded.compute_ns


def test_run_figures_take_an_hour_weighted_ratio_as_it_is(tmp_path):
    """Workloads weighted by shares of hours: their time is the hour-weighted ratio (1.22 at the
    optimum of :data:`tests.cases.HOURS_PAIR_TOML`), no ns, so no 'looks like seconds' refusal;
    a single workload's 1.22 ns still is refused."""
    from tests.cases import hours_pair

    pair = hieropt.load_instance(hours_pair(tmp_path))
    s = hieropt.solve(pair)
    assert s.iteration_time_ns == pytest.approx(1.22, rel=1e-6)
    fig = hieropt.run_figures(pair, s.iteration_time_ns, s.network_cost_usd)
    assert fig.iteration_time_ns == s.iteration_time_ns and fig.time_to_train_days is None
    with pytest.raises(hieropt.InputError, match="looks like seconds"):
        hieropt.run_figures(INSTANCE, 1.22)


def test_an_unknown_keyword_names_the_function_and_the_valid_names(inst):
    """A keyword the facade's function does not take: an InputError naming the function, the
    argument, the closest valid name and all of them (no bare TypeError from binding)."""
    with pytest.raises(hieropt.InputError) as e:
        hieropt.provision_tradeoff(inst, REPO / "catalogs" / "example-4d.toml", levls=3)
    assert str(e.value) == (
        "hieropt.provision_tradeoff: levls: provision_tradeoff() has no argument 'levls'; fix: "
        "did you mean 'levels'? valid arguments: instance, catalog, levels, time_limit_s, "
        "max_iteration_time_ns, max_cost_usd, max_power_w, max_total_capex_usd, progress")
    with pytest.raises(hieropt.InputError) as e:
        hieropt.provision_tradeoff(inst, REPO / "catalogs" / "example-4d.toml", points=3)
    assert str(e.value) == (
        "hieropt.provision_tradeoff: points: provision_tradeoff() has no argument 'points'; fix: "
        "valid arguments: instance, catalog, levels, time_limit_s, max_iteration_time_ns, "
        "max_cost_usd, max_power_w, max_total_capex_usd, progress")
