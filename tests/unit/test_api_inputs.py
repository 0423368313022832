"""What the library's functions take besides their own types, and what they refuse: a path where an
instance, runs or an LLM model is wanted, one item where a list is, and an InputError naming the
function's argument (never a command-line option, never an AttributeError or a silently ignored
argument) for the rest. ``hieropt`` and ``hieropt.api`` give the same public names."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import hieropt
import hieropt.api
from hieropt.solvers import objectives
from tests.cases import REPO

CAL = REPO / "validation" / "calibration" / "a100-one-node.csv"
KORTHIKANTI = REPO / "validation" / "korthikanti2022.csv"
GPT3 = REPO / "models" / "gpt3-175b-llm.toml"
A100_MATRIX_EFFICIENCY = 0.7706
"""The catalog's A100 ``matrix_efficiency`` (catalogs/npus.toml), fitted on CAL's two runs."""
RUNS_FIX = (
    "pass a runs file's path, a list of them, or hieropt.load_runs(path), e.g. runs="
    '"validation/calibration/a100-one-node.csv"'
)


@pytest.fixture(scope="module")
def fitted():
    return hieropt.calibrate(hieropt.load_runs(CAL))


@pytest.mark.heavy
def test_calibrate_takes_a_runs_file_or_a_list_of_them(fitted):
    (fit,) = fitted
    assert fit.npu == "A100-SXM-80GB" and fit.runs == 2
    assert fit.values["matrix_efficiency"] == pytest.approx(A100_MATRIX_EFFICIENCY, abs=5e-5)
    assert hieropt.calibrate(str(CAL))[0].values == fit.values
    assert hieropt.calibrate([CAL])[0].values == fit.values


@pytest.mark.parametrize("runs", [[], ()])
def test_calibrate_without_runs_is_refused(runs):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.calibrate(runs)
    assert str(e.value) == f"runs: no runs; fix: {RUNS_FIX}"


@pytest.mark.parametrize("runs, kind", [(5, "got a int"), ([CAL, 5], "got a list holding a int"),
                                        ({"a": CAL}, "got a dict")])
def test_calibrate_of_another_type_names_runs(runs, kind):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.calibrate(runs)
    assert str(e.value) == (
        "runs: expected runs: hieropt.load_runs(path), a runs file's path, or a list of them, "
        f"{kind}; fix: {RUNS_FIX}"
    )


def test_validate_takes_one_runs_file_as_a_list_of_one():
    """Korthikanti et al.'s nine runs, not one 'file' per character of the path."""
    one, listed = hieropt.validate(str(KORTHIKANTI)), hieropt.validate([KORTHIKANTI])
    assert len(one.rows) == len(listed.rows) == 9
    assert [r.predicted_ms for r in one.rows] == [r.predicted_ms for r in listed.rows]
    assert one.mape == listed.mape


@pytest.mark.parametrize("files", [[], ()])
def test_validate_without_runs_files_is_refused(files):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.validate(files)
    assert str(e.value) == (
        "files: no runs files; fix: pass a runs file's path or a list of them, e.g. "
        'files=["runs.csv"]'
    )


@pytest.mark.parametrize("given", [{"fields": ["hbm_efficiency"]}, {"loss": "log"},
                                   {"fields": "matrix_efficiency", "calibrate_on": []}])
def test_validate_refuses_a_fit_argument_without_runs_to_fit_on(given):
    name = "fields" if "fields" in given else "loss"
    with pytest.raises(hieropt.InputError) as e:
        hieropt.validate(KORTHIKANTI, **given)
    assert str(e.value) == (
        f"{name}: given without calibrate_on (it is the fit's, and no fit is made); fix: give the "
        'runs to fit on, e.g. calibrate_on=["validation/calibration/a100-one-node.csv"], or leave '
        "it out"
    )


@pytest.mark.heavy
def test_bad_fields_and_loss_name_the_arguments(fitted):
    runs = hieropt.load_runs(CAL)
    with pytest.raises(hieropt.InputError) as e:
        hieropt.calibrate(runs, fields=["nope"])
    assert str(e.value) == (
        "fields: unknown calibration field nope for A100-SXM-80GB's roofline compute model; fix: "
        "name one or more of matrix_efficiency, gemm_half_gflop, hbm_efficiency, "
        "kernel_overhead_us, attention_efficiency"
    )
    with pytest.raises(hieropt.InputError) as e:
        hieropt.validate(KORTHIKANTI, calibrate_on=CAL, loss="l2")
    assert str(e.value) == "loss: unknown loss 'l2'; fix: use one of mape, log"
    with pytest.raises(hieropt.InputError, match=r"^loss: expected the loss's name, got a int"):
        hieropt.calibrate(runs, loss=2)
    # one name is one field (not one per character)
    assert hieropt.calibrate(runs, fields="matrix_efficiency")[0].values == fitted[0].values


def test_the_command_line_names_its_options():
    from tests.cli.util import error_line, run

    r = run("calibrate", CAL, "--out", "x.toml", "--loss", "l2")
    assert r.exit_code == 2
    assert error_line(r) == "error: --loss: unknown loss 'l2'; fix: use one of mape, log"


def test_load_llm_takes_one_override_as_a_list_of_one():
    assert hieropt.load_llm(GPT3).plan.zero_stage == 1
    assert hieropt.load_llm(GPT3, "zero_stage=0").plan.zero_stage == 0
    plan = hieropt.load_llm(GPT3, ["tp=4", "dp=128"]).plan
    assert (plan.tp, plan.pp, plan.dp) == (4, 8, 128)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (8, 'overrides: expected KEY=VALUE texts, got a int; fix: pass e.g. overrides=["tp=8", '
            '"pp=4"] (one "KEY=VALUE" per key)'),
        ("tp", 'overrides: tp: expected KEY=VALUE; fix: write e.g. overrides=["tp=8"]'),
        ("tp=8,pp=8", 'overrides: tp=8,pp=8: 2 KEY=VALUE pairs in one entry; fix: give one entry '
                      'per key: overrides=["tp=8", "pp=8"]'),
    ],
)
def test_bad_overrides_name_the_argument(overrides, message):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.load_llm(GPT3, overrides)
    assert str(e.value) == message


def test_plan_figures_and_memory_take_a_model_file():
    model = hieropt.load_llm(GPT3)
    figures = hieropt.plan_figures(GPT3)
    assert figures.params == model
    assert figures.memory == hieropt.plan_figures(model).memory == hieropt.memory(str(GPT3))
    with pytest.raises(hieropt.InputError) as e:
        hieropt.plan_figures({"tp": 8})
    assert str(e.value) == (
        "params: expected hieropt.load_llm(path) or the path of an LLM model file, got a dict; "
        'fix: pass hieropt.load_llm("models/x.toml") or the path itself'
    )


def test_the_two_namespaces_give_the_same_names():
    assert set(hieropt.__all__) == set(hieropt.api.__all__)
    for name in ("explore", "load_space", "Exploration", "HieroptError", "Instance", "verify"):
        assert name in hieropt.api.__all__, name
    for name in hieropt.__all__:
        assert getattr(hieropt, name) is getattr(hieropt.api, name), name


def test_verify_is_the_facades_whichever_module_loads_first():
    """``hieropt.verify`` is also a submodule: loading it (as ``hieropt.api`` does) must not put
    the unweighted function that takes no path in the facade's place."""
    code = (
        "import hieropt.api, hieropt; "
        "assert hieropt.verify is hieropt.api.verify; "
        f"print(hieropt.verify({str(REPO / 'instances' / 'gpt3-4d.toml')!r}, "
        "[250, 125, 75, 50]).ok)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_checked_functions_keep_their_signature_and_docstring():
    assert inspect.signature(hieropt.solve) == inspect.signature(objectives.solve)
    assert hieropt.solve.__doc__ == objectives.solve.__doc__
    assert hieropt.calibrate.__name__ == "calibrate"


@pytest.mark.parametrize(
    "call, what, example",
    [
        (lambda: hieropt.load_llm({"tp": 8}), "an LLM model file",
         'hieropt.load_llm("models/llama3-70b.toml")'),
        (lambda: hieropt.load_runs({"tp": 8}), "a runs file",
         'hieropt.load_runs("validation/calibration/a100-one-node.csv")'),
        (lambda: hieropt.load_space({"tp": 8}), "a shape-space file",
         'hieropt.load_space("spaces/gpt3-4096.toml")'),
    ],
)
def test_readers_given_a_dict_name_the_path_argument(call, what, example):
    with pytest.raises(hieropt.InputError) as e:
        call()
    assert str(e.value) == (
        f"path: expected the path (str or Path) of {what}, got a dict; "
        f"fix: pass the file's path, e.g. {example}"
    )


def libra_files(shared_data):
    """LIBRA's GPT-3 file set on the 4-D network (paths)."""
    libra = shared_data / "libra"
    return {"network": libra / "network" / "4d_network.yml",
            "workload": libra / "workload" / "GPT_3.txt",
            "communicator": libra / "communicator" / "GPT_3_4d.yml",
            "cost": libra / "cost_model" / "4d_cost_model.yml"}


def test_load_libra_derives_the_communicator_when_left_out(shared_data):
    files = libra_files(shared_data)
    del files["communicator"]
    files["workload"] = shared_data / "astrasim1" / "Transformer_HybridParallel_Fwd_In_Bckwd.txt"
    by_name = hieropt.load_libra(**files, constraints="sum(bw) == 500")
    by_position = hieropt.load_libra(files["network"], files["workload"], None, files["cost"],
                                     "sum(bw) == 500")
    assert by_name.training_loop == by_position.training_loop == "recompute"
    assert by_name.mapping_note == by_position.mapping_note
    assert "HYBRID_TRANSFORMER_FWD_IN_BCKWD" in by_name.mapping_note


def test_load_libra_takes_one_constraint_as_a_list_of_one(shared_data):
    one = hieropt.load_libra(**libra_files(shared_data), constraints="sum(bw) == 500")
    assert [c.text for c in one.constraints] == ["sum(bw) == 500"]
    assert one.constraints[0].rhs == 500.0


@pytest.mark.parametrize(
    "change, message",
    [
        ({"network": {"dims": 4}}, "network: expected the path (str or Path) of LIBRA's network "
         'file, got a dict; fix: pass the file\'s path, e.g. network="4d_network.yml"'),
        ({"cost": None}, "cost: no cost model file given (it is required); fix: pass LIBRA's cost "
         'model file\'s path, e.g. cost="4d_cost_model.yml"'),
        ({"constraints": 500}, "constraints: expected constraint texts, got a int; fix: pass e.g. "
         'constraints=["sum(bw) == 500"]'),
        ({"objective": "fastest"}, "objective: unknown objective 'fastest'; fix: use one of "
         "performance, performance_per_cost, min_cost, min_max_regret, min_run_cost"),
    ],
)
def test_load_libra_arguments_name_themselves(shared_data, change, message):
    with pytest.raises(hieropt.InputError) as e:
        hieropt.load_libra(**{**libra_files(shared_data), **change})
    assert str(e.value) == message
