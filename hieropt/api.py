"""The library facade: load, solve, evaluate, verify, pareto, provision, ASTRA-sim export and
simulation. Each call runs the one-way flow read -> validate -> traffic/time model -> formulate ->
solve -> verify, with no state kept between calls. The implementations live in their stage packages;
this module names them and checks their arguments first, in one table (``_ARGUMENTS``: an instance
may be given as its file's path, runs as runs files' paths, an LLM model as its file's path; a
value of another type is an InputError naming the argument), so an error names the function's
argument, never a command-line option (see docs/architecture.md)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import HieroptError, InputError, NoSolutionError, SolverError, number_problem
from .io import arguments
from .io.catalog import read_catalog as _read_catalog
from .io.instance import as_instance, load_instance
from .io.libra_instance import load_libra as _load_libra
from .io.llm import read_llm
from .model import timing
from .model.catalog import Catalog
from .model.memory import memory as _memory
from .model.plan import plan_figures as _plan_figures
from .model.run import RunFigures
from .model.run import iteration_target_ns as _iteration_target_ns
from .model.run import network_budget_usd as _network_budget_usd
from .model.run import run_figures as _model_run_figures
from .model.timing import Breakdown, TimeModel
from .model.timing import build_time_model as _build_time_model
from .result import Marginal, Portfolio, Sensitivity, Solution, Status
from .solvers import objectives
from .solvers.front import FrontPoint
from .solvers.objectives import MIN_REL_GAP, SolveOptions
from .solvers.portfolio import hours_weighted as _hours_weighted
from .spec import Instance
from .spec.overrides import is_real, plain_number
from .verify import Certificate
from .verify import verify as _verify

if TYPE_CHECKING:  # loaded on first use (_LAZY); named here for type checkers and linters
    from .io.astrasim_bundle import write_bundle as export_astrasim
    from .io.codesign import load_codesign
    from .io.runs import read_runs as load_runs
    from .solvers.front import Front, pareto
    from .solvers.provision import Provisioning, provision
    from .solvers.provision_milp import Tradeoff, provision_tradeoff
    from .studies.codesign import Codesign, codesign
    from .studies.explore import Exploration, explore, load_space
    from .studies.knee import knee
    from .studies.simulate import SimulationStudy
    from .studies.simulate import simulate_allocations as simulate
    from .studies.sizing import size_cluster
    from .studies.validate import Calibration, Validation, validate
    from .studies.validate.calibrate import calibrate


_Kind = Callable[[Any, str], Any]
"""An argument's check: ``(value, argument name) -> the value the implementation takes`` (e.g. the
path of an instance file -> the :class:`Instance` read from it). It raises an :class:`InputError`
naming the argument, and saying what to pass, for a value of a type or size it cannot take."""
_Rule = Callable[[dict[str, Any]], None]
"""A check between arguments, given the arguments the caller gave (by name, each after its
:data:`_Kind`); raises an :class:`InputError` naming the argument at fault."""


def _checked(fn: Any, kinds: Mapping[str, _Kind], rules: Sequence[_Rule] = ()) -> Any:
    """``fn`` that first passes each argument named in ``kinds`` through its :data:`_Kind` (the
    arguments given by name or by position, and those left at their default), then applies
    ``rules``: the facade's one place for the types and sizes of its arguments (numpy scalars
    made Python numbers first: :func:`~hieropt.spec.overrides.plain_number`). The docstring and
    the signature are ``fn``'s (:func:`functools.wraps`)."""
    signature = inspect.signature(fn)
    unknown = sorted(set(kinds) - set(signature.parameters))
    if unknown:  # (a table below naming an argument the function does not have)
        raise TypeError(f"{fn.__name__} has no argument {', '.join(unknown)}")

    @wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        bound = arguments.bind_arguments(signature, fn.__name__, args, kwargs)
        given = dict(bound.arguments)
        bound.apply_defaults()
        for name, value in bound.arguments.items():
            value = plain_number(value)
            bound.arguments[name] = kinds[name](value, name) if name in kinds else value
            if name in given:
                given[name] = bound.arguments[name]
        for rule in rules:
            rule(given)
        return fn(*bound.args, **bound.kwargs)

    return call


def _instance(value: Any, name: str) -> Instance:
    """An :class:`Instance`, or the path (str or Path) of an instance file, read."""
    return as_instance(value, name)


def _runs_files(value: Any, name: str) -> tuple[str | Path, ...]:
    """The path (str or Path) of a runs file, or a list of them (none: an empty tuple)."""
    fix = f'pass a runs file\'s path or a list of them, e.g. {name}=["validation/runs.csv"]'
    want = "the path (str or Path) of a runs file or a list of them"
    return arguments.items_argument(value, name, want, fix)


def _some_runs_files(value: Any, name: str) -> tuple[str | Path, ...]:
    """:func:`_runs_files`, at least one."""
    files = _runs_files(value, name)
    if not files:
        raise InputError(name, None, "no runs files",
                         f'pass a runs file\'s path or a list of them, e.g. {name}=["runs.csv"]')
    return files


def _runs(value: Any, name: str) -> tuple[Any, ...]:
    """Measured runs: :func:`load_runs`'s, or the path of a runs file, or a list of paths or runs
    (each path read), at least one."""
    from .io.runs import Run, read_runs

    fix = f'pass a runs file\'s path, a list of them, or hieropt.load_runs(path), e.g. {name}=' \
        '"validation/calibration/a100-one-node.csv"'
    want = "runs: hieropt.load_runs(path), a runs file's path, or a list of them"
    runs: list[Any] = []
    for item in arguments.items_argument(value, name, want, fix, Run | str | Path):
        runs.extend([item] if isinstance(item, Run) else read_runs(item))
    if not runs:
        raise InputError(name, None, "no runs", fix)
    return tuple(runs)


def _names(value: Any, name: str) -> tuple[Any, ...] | None:
    """Calibration fields or their names: one name (str), a list of names or
    :class:`~hieropt.studies.validate.CalibrationField` s, or None (the compute model's
    default)."""
    if value is None:
        return None
    from .studies.validate import CalibrationField

    want = "a calibration field's name or a list of them"
    fix = f'pass e.g. {name}=["matrix_efficiency", "hbm_efficiency"] (None: the default)'
    if isinstance(value, Path):
        raise InputError(name, None, f"expected {want}, got a {type(value).__name__}", fix)
    return arguments.items_argument(value, name, want, fix, str | CalibrationField)


def _loss(value: Any, name: str) -> Any:
    """The name of a fit's loss (a str; which names the fit knows, the fit checks)."""
    if not isinstance(value, str):
        raise InputError(name, None, f"expected the loss's name, got a {type(value).__name__}",
                         f'pass {name}="mape" or {name}="log"')
    return value


def _overrides(value: Any, name: str) -> tuple[str, ...]:
    """``KEY=VALUE`` overrides: one str is one override, or a list of them."""
    fix = f'pass e.g. {name}=["tp=8", "pp=4"] (one "KEY=VALUE" per key)'
    if isinstance(value, Path):
        raise InputError(name, None, f"expected KEY=VALUE texts, got a {type(value).__name__}",
                         fix)
    return arguments.items_argument(value, name, "KEY=VALUE texts", fix, str)


def _overrides_named(value: Any, name: str) -> Any:
    """Where ``load_llm``'s overrides come from, as its errors name them: the argument
    ``overrides`` (for the command line's default, ``--set``)."""
    return "overrides" if value == "--set" else value


def _llm(value: Any, name: str) -> Any:
    """An LLM model (:func:`load_llm`'s :class:`~hieropt.workloads.llm.LLMParams`), or the path
    of an LLM model file, read."""
    from .workloads.llm import LLMParams

    if isinstance(value, LLMParams):
        return value
    if isinstance(value, str | Path):
        return read_llm(value, (), "overrides")
    raise InputError(
        name,
        None,
        f"expected hieropt.load_llm(path) or the path of an LLM model file, got a "
        f"{type(value).__name__}",
        'pass hieropt.load_llm("models/x.toml") or the path itself',
    )


def _calibrations(value: Any, name: str) -> tuple[Any, ...]:
    """Calibrations (:func:`calibrate`'s): one, or a list of them (empty: none)."""
    from .studies.validate.calibrate import Calibration

    return arguments.calibrations_argument(value, name, Calibration)


_TIME_TARGET = (
    "a number > 0",
    "give the iteration-time target in ns, e.g. 1.3e9 for 1.3 s (None: the input's)",
)
"""``want`` and ``fix`` of a time-target argument (``max_iteration_time_ns``), in ns."""
_BUDGET_FIX = "give the network budget in $, e.g. 12e6 (None: the input's)"
"""The fix of a network-budget argument (``budget_usd`` and its old names), in $."""


def _fit_needs_its_runs(given: dict[str, Any]) -> None:
    """``validate``: ``fields`` and ``loss`` are the fit's on ``calibrate_on`` (the command line's
    ``--fit`` and ``--loss`` need ``--calibrate-on``); without it they would be ignored."""
    if given.get("calibrate_on"):
        return
    for name in ("fields", "loss"):
        if given.get(name) is not None:
            raise InputError(
                name,
                None,
                "given without calibrate_on (it is the fit's, and no fit is made)",
                'give the runs to fit on, e.g. calibrate_on=["validation/calibration/'
                'a100-one-node.csv"], or leave it out',
            )


def _time_in_ns(given: dict[str, Any]) -> None:
    """``run_figures``: an iteration time in ns of at least 1 us
    (:func:`hieropt.io.arguments.iteration_time_argument`), unless the instance weighs its
    workloads by shares of hours: its time is then their hour-weighted ratio (1.05), no ns."""
    inst = given.get("instance")
    if inst is not None and not inst.relative_time:
        arguments.iteration_time_argument(given["iteration_time_ns"], "iteration_time_ns")


def _tokens_for_an_iteration(given: dict[str, Any]) -> None:
    """``run_figures``: a token budget of at least one iteration's tokens, as the command line's
    ``--tokens`` and an instance file's ``tokens`` (:func:`hieropt.spec.training.tokens_problem`;
    several workloads on one fabric: not checked, their run is no one workload's)."""
    from .spec.training import tokens_problem

    inst, tokens = given.get("instance"), given.get("tokens")
    if inst is None or tokens is None or inst.more_workloads:
        return
    if (problem := tokens_problem(float(tokens), inst.workload.training)) is not None:
        raise InputError("tokens", None, problem, "give the run's token budget, at least one "
                         "iteration's, e.g. tokens=15e12")


def _bw_in_gbps(given: dict[str, Any]) -> None:
    """``bw_gbps`` of ``evaluate``, ``verify``, ``export_astrasim``, ``simulate``, ``run_figures``
    (None: not checked): ``--bw``'s checks (:mod:`hieropt.model.bandwidths`): one finite number >= 0
    per dimension in GB/s per NPU; bytes/s (above 1e6), Gb/s or bidirectional figures refused
    unless they meet the instance's design rows and bounds."""
    from .model.bandwidths import check_bw, check_bw_for_npus, check_bw_in_gbps

    inst, bw = given.get("instance"), given.get("bw_gbps")
    if inst is None or bw is None:
        return
    values = check_bw(inst.network.n_dims, bw)
    check_bw_in_gbps(inst, values, "bw_gbps",
                     lambda v: f"bw_gbps=[{', '.join(f'{x:g}' for x in v)}]")
    check_bw_for_npus(inst, values, "bw_gbps", ", ")


def _budget_named(fn: Any, old: str) -> Any:
    """``fn`` that also takes the budget as ``budget_usd`` ($, the one name of the network budget
    across the library and the command line's ``--budget``); ``old`` (``max_network_cost_usd``,
    ``max_cost_usd``) stays an alias; both in the signature and the docstring. Giving both is an
    InputError."""

    @wraps(fn)
    def call(*args: Any, budget_usd: float | None = None, **kwargs: Any) -> Any:
        budget_usd = plain_number(budget_usd)
        _check_number("budget_usd", budget_usd, "a number > 0", _BUDGET_FIX, allow_none=True)
        if budget_usd is not None:
            if kwargs.get(old) is not None:
                raise InputError("budget_usd", None, f"given together with {old} (its old name)",
                                 "give one of them")
            kwargs[old] = budget_usd
        return fn(*args, **kwargs)

    call.__doc__ = (fn.__doc__ or "") + (f"\n\n    ``budget_usd``: the network budget ($), the "
                                         f"one name of the budget (``{old}`` is its old name).\n")
    sig = inspect.signature(fn)  # (with budget_usd, by name only, as help() shows it)
    call.__signature__ = sig.replace(parameters=[*sig.parameters.values(), inspect.Parameter(
        "budget_usd", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="float | None")])
    return call


def _checked_options(options: Any) -> SolveOptions:
    """``options`` when it is a :class:`SolveOptions` whose switches are booleans, whose gap and
    regret are numbers or None and whose budget is a finite number > 0 or None (the other fields
    and the numbers' ranges are checked by the solve, naming them), numpy scalars made numbers.

    Raises:
        InputError: another type (e.g. a dict), a switch that is not True or False (``"no"`` is
            no boolean), a gap or regret that is no number (``"1e-3"``, True), or a budget that is
            not a finite number > 0, naming the field.
    """
    if not isinstance(options, SolveOptions):
        raise InputError(
            "options",
            None,
            f"expected a hieropt.SolveOptions, got a {type(options).__name__}",
            "pass options=hieropt.SolveOptions(rel_gap=1e-3, ...)",
        )
    for name in ("sensitivity", "sensitivity_ranges", "portfolio", "cheapest_design"):
        value = getattr(options, name)
        if not isinstance(value, bool | np.bool_):
            raise InputError(
                name, None, f"{value!r} is not a boolean", f"give {name}=True or {name}=False"
            )
    for name, fix in (
        ("rel_gap", f"give the relative gap as a fraction, e.g. rel_gap=1e-3 for 0.1 % "
                    f"(at least {MIN_REL_GAP:g}; None: the objective's default)"),
        ("max_regret", "give the regret as a fraction, e.g. max_regret=0.05 for 5 % (None: "
                       "none)"),
    ):
        value = getattr(options, name)
        if value is not None and not is_real(value):
            raise InputError(name, None, f"{value!r} is not a number", fix)
    _check_number("budget_usd", options.budget_usd, "a number > 0",
                  "give the network budget in $, e.g. budget_usd=12e6 (None: the instance's)",
                  allow_none=True)
    fields = {f.name: plain_number(getattr(options, f.name)) for f in dataclasses.fields(options)}
    return dataclasses.replace(options, **fields)


def _check_number(name: str, value: Any, want: str, fix: str, *, allow_none: bool = False,
                  positive: bool = True) -> None:
    """Raise an :class:`InputError` naming the argument ``name`` (problem: not ``want``; ``fix``)
    unless ``value`` is a real number (not a bool, not text), finite and > 0 (``positive``) or >= 0;
    None passes when ``allow_none``."""
    if value is None and allow_none:
        return
    if not is_real(value):
        raise InputError(name, None, f"{value!r} is not a number", fix)
    v = float(value)
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        raise InputError(name, None, number_problem(v, want), fix)


def _number(want: str, fix: str, *, allow_none: bool = False, positive: bool = True) -> _Kind:
    """The :data:`_Kind` of a number argument (:func:`_check_number`: a real number, finite and > 0
    (``positive``) or >= 0, None when ``allow_none``; else ``want`` and ``fix``)."""

    def check(value: Any, name: str) -> Any:
        _check_number(name, value, want, fix, allow_none=allow_none, positive=positive)
        return value

    return check


def _options(value: Any, name: str) -> SolveOptions:
    """:class:`SolveOptions` (:func:`_checked_options`)."""
    return _checked_options(value)


def _weighted_instance(value: Any, name: str) -> Instance:
    """:func:`_instance` with its jobs' shares of hours as weights (:func:`hours_weighted`), as
    ``solve`` times them: the one objective of every command."""
    return _hours_weighted(_instance(value, name))[0]


_INSTANCE: dict[str, _Kind] = {"instance": _instance}
_ARGUMENTS: dict[str, dict[str, _Kind]] = {
    "solve": {"instance": _instance, "options": _options},
    "evaluate": {"instance": _weighted_instance},
    "verify": {
        "instance": _weighted_instance,
        "iteration_time_ns": _number(
            "a number > 0", "give the claimed iteration time in ns, e.g. 1.2e9 (None: not checked)",
            allow_none=True,
        ),
        "budget_usd": _number(
            "a number > 0", "give the network budget in $, e.g. 12e6 (None: not checked)",
            allow_none=True,
        ),
        "target_ns": _number(
            "a number > 0", "give the time target in ns, e.g. 1.3e9 (None: not checked)",
            allow_none=True,
        ),
    },
    "run_figures": {
        "instance": _instance,
        "iteration_time_ns": _number("a number > 0", arguments.ITERATION_TIME_FIX),
        "network_cost_usd": _number(
            "a number >= 0", "give the network's cost in $ (None: unknown)", allow_none=True,
            positive=False,
        ),
        "tokens": arguments.tokens_argument,
    },
    "iteration_target_ns": {"instance": _instance, "deadline_ns": arguments.deadline_argument},
    "size_cluster": {"space": arguments.space_argument, "sizes": arguments.sizes_argument,
                     "deadline_ns": arguments.deadline_argument,
                     "workers": arguments.workers_argument, "on_row": arguments.callback_argument},
    "load_llm": {"overrides": _overrides, "override_source": _overrides_named},
    "load_libra": {**{name: arguments.libra_file_argument for name in arguments.LIBRA_EXAMPLES},
                   "constraints": arguments.constraints_argument,
                   "objective": arguments.objective_argument},
    "plan_figures": {"params": _llm},
    "memory": {"p": _llm},
    "pareto": {"instance": _instance, "progress": arguments.front_progress_argument,
               "cache": arguments.cache_argument},
    "provision": {
        "instance": _instance,
        "catalog": arguments.catalog_argument,
        "max_iteration_time_ns": _number(*_TIME_TARGET, allow_none=True),
        "max_cost_usd": _number("a number > 0", _BUDGET_FIX, allow_none=True),
        "max_power_w": _number(
            "a number > 0", "give the power budget in W, e.g. 5e5 for 500 kW (None: none)",
            allow_none=True,
        ),
        "time_limit_s": arguments.time_limit_argument,
        "compare": arguments.switch_argument,
        "max_total_capex_usd": _number(
            "a number > 0", "give the whole cluster's capex cap in $, e.g. 700e6 (None: none)",
            allow_none=True),
    },
    "network_budget_usd": {"instance": _instance, "total_usd": _number(
        "a number > 0", "give the whole cluster's capex cap in $, e.g. 700e6")},
    "build_time_model": _INSTANCE,
    "hours_weighted": {"instance": _instance, "time_limit_s": arguments.time_limit_argument},
    "load_catalog": {"instance": arguments.optional_instance_argument},
    "codesign": {
        "space": arguments.space_argument,
        "max_iteration_time_ns": arguments.iteration_target_argument,
        "max_network_cost_usd": _number("a number > 0", _BUDGET_FIX, allow_none=True),
        "workers": arguments.workers_argument,
        "on_row": arguments.callback_argument,
        "progress": arguments.progress_argument,
        "out": arguments.results_file_argument,
        "keep": arguments.keep_argument,
        "cache": arguments.cache_argument,
    },
    "explore": {"out": arguments.results_file_argument, "on_row": arguments.callback_argument,
                "cache": arguments.cache_argument, "progress": arguments.switch_argument},
    "knee": {
        "instance": _instance,
        "within": _number("a fraction > 0",
                          "give the slack as a fraction, e.g. within=0.01 for 1 % (not '1%')"),
        "time_limit_s": arguments.time_limit_argument,
        "design_usd": _number("a number >= 0", "give the cost in $ (None: the solve's)",
                              allow_none=True, positive=False),
    },
    "provision_tradeoff": {"instance": _instance, "catalog": arguments.catalog_argument,
                           "time_limit_s": arguments.time_limit_argument},
    "export_astrasim": {"instance": _instance, "folder": arguments.folder_argument,
                        "chunks": arguments.chunks_argument},
    "simulate": {
        "instance": _instance,
        "binary": arguments.binary_argument,
        "timeout_s": _number("a number of seconds > 0",
                             "give the time allowed per simulator run in s, e.g. 7200 for 2 h"),
        "tolerance": arguments.fraction_argument,
    },
    "validate": {"files": _some_runs_files, "calibrate_on": _runs_files, "fields": _names,
                 "loss": _loss, "cache": arguments.cache_argument, "calibrations": _calibrations},
    "calibrate": {"runs": _runs, "fields": _names, "loss": _loss},
}
"""Each public function's checked arguments (name -> :data:`_Kind`), applied by :func:`_checked`:
the facade's one table of argument checks. A function named ``instance`` also takes the path of an
instance file; ``validate``'s and ``calibrate``'s runs may be one path or a list. A time in ns
given by the user that looks like another unit is refused (``run_figures``'s ``iteration_time_ns``
below 1 us, a ``deadline_ns`` below one hour: :mod:`hieropt.io.arguments`)."""
_ARGUMENTS["provision_tradeoff"].update({k: _ARGUMENTS["provision"][k] for k in (  # (its limits)
    "max_iteration_time_ns", "max_cost_usd", "max_power_w", "max_total_capex_usd")})
_RULES: dict[str, tuple[_Rule, ...]] = {
    "run_figures": (_time_in_ns, _tokens_for_an_iteration, _bw_in_gbps),
    "validate": (_fit_needs_its_runs,),
    "evaluate": (_bw_in_gbps,),
    "verify": (_bw_in_gbps,),
    "export_astrasim": (_bw_in_gbps,),
    "simulate": (_bw_in_gbps,),
}
"""Checks between a function's arguments (:data:`_Rule`), after its :data:`_ARGUMENTS`."""


def _facade(name: str, fn: Any) -> Any:
    """``fn`` as the public ``name``: its arguments checked (:data:`_ARGUMENTS`, :data:`_RULES`)
    and, for ``provision`` and ``codesign``, its budget also named ``budget_usd``."""
    if name in _ARGUMENTS:
        fn = _checked(fn, _ARGUMENTS[name], _RULES.get(name, ()))
    return _budget_named(fn, _BUDGET_NAMES[name]) if name in _BUDGET_NAMES else fn


_BUDGET_NAMES = {"provision": "max_cost_usd", "codesign": "max_network_cost_usd"}
"""Names that take ``budget_usd`` besides their old budget argument (:func:`_budget_named`)."""

if TYPE_CHECKING:  # the docs (mkdocstrings) and type checkers see the implementations
    from .io.catalog import read_catalog as load_catalog
    from .io.libra_instance import load_libra
    from .io.llm import read_llm as load_llm
    from .model.memory import memory
    from .model.plan import plan_figures
    from .model.run import iteration_target_ns, network_budget_usd, run_figures
    from .model.timing import build_time_model, evaluate
    from .solvers.objectives import solve
    from .solvers.portfolio import hours_weighted
    from .verify import verify
else:  # (a name imported inside `if TYPE_CHECKING` is documented as what it names)
    solve = _facade("solve", objectives.solve)
    evaluate = _facade("evaluate", timing.evaluate)
    verify = _facade("verify", _verify)
    run_figures = _facade("run_figures", _model_run_figures)
    iteration_target_ns = _facade("iteration_target_ns", _iteration_target_ns)
    load_llm = _facade("load_llm", read_llm)
    load_libra = _facade("load_libra", _load_libra)
    plan_figures = _facade("plan_figures", _plan_figures)
    memory = _facade("memory", _memory)
    load_catalog = _facade("load_catalog", _read_catalog)
    network_budget_usd = _facade("network_budget_usd", _network_budget_usd)
    build_time_model = _facade("build_time_model", _build_time_model)
    hours_weighted = _facade("hours_weighted", _hours_weighted)

_LAZY: dict[str, tuple[str, str]] = {
    "pareto": ("solvers.front", "pareto"),
    "Front": ("solvers.front", "Front"),
    "provision": ("solvers.provision", "provision"),
    "Provisioning": ("solvers.provision", "Provisioning"),
    "provision_tradeoff": ("solvers.provision_milp", "provision_tradeoff"),
    "Tradeoff": ("solvers.provision_milp", "Tradeoff"),
    "codesign": ("studies.codesign", "codesign"),
    "Codesign": ("studies.codesign", "Codesign"),
    "load_codesign": ("io.codesign", "load_codesign"),
    "validate": ("studies.validate", "validate"),
    "Validation": ("studies.validate", "Validation"),
    "calibrate": ("studies.validate.calibrate", "calibrate"),
    "Calibration": ("studies.validate", "Calibration"),
    "load_runs": ("io.runs", "read_runs"),
    "export_astrasim": ("io.astrasim_bundle", "write_bundle"),
    "simulate": ("studies.simulate", "simulate_allocations"),
    "SimulationStudy": ("studies.simulate", "SimulationStudy"),
    "knee": ("studies.knee", "knee"),
    "size_cluster": ("studies.sizing", "size_cluster"),
    "explore": ("studies.explore", "explore"),
    "load_space": ("studies.explore", "load_space"),
    "Exploration": ("studies.explore", "Exploration"),
}
"""Names whose modules load on first use (module, attribute), then pass :func:`_facade`: the MILP,
fabric, co-design and simulator stages import Pyomo or protobuf, which the performance path and a
bad-input error never need."""


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = _facade(name, getattr(importlib.import_module(f".{module}", __package__), attr))
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "load_instance",
    "load_libra",
    "solve",
    "evaluate",
    "verify",
    "pareto",
    "Solution",
    "Breakdown",
    "Certificate",
    "Front",
]
__all__ += [
    "provision",
    "load_catalog",
    "Catalog",
    "Provisioning",
    "provision_tradeoff",
    "Tradeoff",
    "Sensitivity",
    "Marginal",
    "Portfolio",
]
__all__ += ["codesign", "Codesign", "load_codesign", "load_llm", "plan_figures", "memory"]
__all__ += ["SolveOptions"]
__all__ += ["explore", "load_space", "Exploration"]
__all__ += [
    "Instance",
    "Status",
    "FrontPoint",
    "TimeModel",
    "build_time_model",
    "MIN_REL_GAP",
    "HieroptError",
    "InputError",
    "NoSolutionError",
    "SolverError",
]
__all__ += ["export_astrasim", "simulate", "SimulationStudy"]
__all__ += ["validate", "Validation", "calibrate", "Calibration", "load_runs"]
__all__ += ["RunFigures", "run_figures", "iteration_target_ns", "network_budget_usd"]
__all__ += ["knee", "size_cluster"]
__all__ += ["hours_weighted"]
