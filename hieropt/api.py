"""The library facade: load, solve, evaluate, verify, pareto, provision, ASTRA-sim export and
simulation. Each call runs the one-way flow read -> validate -> traffic/time model -> formulate ->
solve -> verify, with no state kept between calls. The implementations live in their stage packages;
this module only names them (see docs/architecture.md)."""

from __future__ import annotations

import importlib
import math
from functools import wraps
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import InputError, NoSolutionError, SolverError, number_problem
from .io.catalog import read_catalog as load_catalog
from .io.instance import as_instance, load_instance, load_libra
from .io.llm import load_llm
from .model import timing
from .model.catalog import Catalog
from .model.memory import memory
from .model.plan import plan_figures
from .model.run import RunFigures, iteration_target_ns, network_budget_usd
from .model.run import run_figures as _model_run_figures
from .model.timing import Breakdown, TimeModel, build_time_model
from .result import Marginal, Portfolio, Sensitivity, Solution, Status
from .solvers import objectives
from .solvers.front import FrontPoint
from .solvers.objectives import MIN_REL_GAP, SolveOptions
from .solvers.portfolio import hours_weighted
from .spec import Instance
from .spec.overrides import is_real
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
    from .studies.knee import knee
    from .studies.simulate import SimulationStudy
    from .studies.simulate import simulate_allocations as simulate
    from .studies.sizing import size_cluster
    from .studies.validate import Calibration, Validation, calibrate, validate


def _takes_a_path(fn: Any) -> Any:
    """``fn`` whose first argument may also be the path of an instance file (str or Path); any other
    type is an InputError naming the argument ``instance``. The docstring is ``fn``'s."""

    @wraps(fn)
    def call(instance: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(as_instance(instance), *args, **kwargs)

    return call


def _budget_named(fn: Any, old: str) -> Any:
    """``fn`` that also takes the budget as ``budget_usd`` ($, the one name of the network budget
    across the library and the command line's ``--budget``); ``old`` (``max_network_cost_usd``,
    ``max_cost_usd``) stays an alias. Giving both is an InputError."""

    @wraps(fn)
    def call(*args: Any, budget_usd: float | None = None, **kwargs: Any) -> Any:
        if budget_usd is not None:
            if kwargs.get(old) is not None:
                raise InputError(
                    "budget_usd",
                    None,
                    f"given together with {old} (its old name)",
                    "give one of them",
                )
            kwargs[old] = budget_usd
        return fn(*args, **kwargs)

    call.__doc__ = (fn.__doc__ or "") + (
        f"\n\n    ``budget_usd``: the network budget ($), the one name of the "
        f"budget (``{old}`` is its old name).\n"
    )
    return call


def _checked_options(options: Any) -> SolveOptions:
    """``options`` when it is a :class:`SolveOptions` whose switches are booleans and whose budget
    is a finite number > 0 or None (the other fields are checked by the solve, naming them).

    Raises:
        InputError: another type (e.g. a dict), a switch that is not True or False (``"no"`` is
            no boolean), or a budget that is not a finite number > 0, naming the field.
    """
    if not isinstance(options, SolveOptions):
        raise InputError(
            "options",
            None,
            f"expected a hieropt.SolveOptions, got a {type(options).__name__}",
            "pass options=hieropt.SolveOptions(rel_gap=1e-3, ...)",
        )
    for name in ("sensitivity", "sensitivity_ranges", "portfolio"):
        value = getattr(options, name)
        if not isinstance(value, bool | np.bool_):
            raise InputError(
                name, None, f"{value!r} is not a boolean", f"give {name}=True or {name}=False"
            )
    _check_number("budget_usd", options.budget_usd, "a number > 0",
                  "give the network budget in $, e.g. budget_usd=12e6 (None: the instance's)",
                  allow_none=True)
    return options


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


_DEFAULT_OPTIONS = SolveOptions()


@wraps(objectives.solve)
def _solve(instance: Any, objective: str | None = None, *,
           options: SolveOptions = _DEFAULT_OPTIONS, **old_keywords: Any) -> Solution:
    return objectives.solve(instance, objective, options=_checked_options(options),
                            **old_keywords)


@wraps(_model_run_figures)
def _run_figures(instance: Any, iteration_time_ns: Any, network_cost_usd: Any = None,
                 tokens: Any = None) -> RunFigures:
    _check_number("iteration_time_ns", iteration_time_ns, "a number > 0",
                  "give the iteration time in ns, e.g. 1.2e9 (the solution's iteration_time_ns)")
    _check_number("network_cost_usd", network_cost_usd, "a number >= 0",
                  "give the network's cost in $ (None: unknown)", allow_none=True, positive=False)
    _check_number("tokens", tokens, "a number > 0",
                  "give the run's token budget as a number, e.g. 15e12 for 15T (None: the "
                  "instance's)", allow_none=True)
    return _model_run_figures(instance, iteration_time_ns, network_cost_usd, tokens)


@wraps(timing.evaluate)
def _evaluate(instance: Instance, bw_gbps: Any) -> Breakdown:
    # (shares of hours -> weights, as solve: the one objective of every command)
    return timing.evaluate(hours_weighted(instance)[0], bw_gbps)


@wraps(_verify)
def _verify_weighted(instance: Instance, bw_gbps: Any, *args: Any, **kwargs: Any) -> Certificate:
    return _verify(hours_weighted(instance)[0], bw_gbps, *args, **kwargs)


solve = _takes_a_path(_solve)
run_figures = _takes_a_path(_run_figures)
evaluate = _takes_a_path(_evaluate)
verify = _takes_a_path(_verify_weighted)

_LAZY: dict[str, tuple[str, str, bool]] = {
    "pareto": ("solvers.front", "pareto", True),
    "Front": ("solvers.front", "Front", False),
    "provision": ("solvers.provision", "provision", True),
    "Provisioning": ("solvers.provision", "Provisioning", False),
    "provision_tradeoff": ("solvers.provision_milp", "provision_tradeoff", True),
    "Tradeoff": ("solvers.provision_milp", "Tradeoff", False),
    "codesign": ("studies.codesign", "codesign", False),
    "Codesign": ("studies.codesign", "Codesign", False),
    "load_codesign": ("io.codesign", "load_codesign", False),
    "validate": ("studies.validate", "validate", False),
    "Validation": ("studies.validate", "Validation", False),
    "calibrate": ("studies.validate", "calibrate", False),
    "Calibration": ("studies.validate", "Calibration", False),
    "load_runs": ("io.runs", "read_runs", False),
    "export_astrasim": ("io.astrasim_bundle", "write_bundle", False),
    "simulate": ("studies.simulate", "simulate_allocations", False),
    "SimulationStudy": ("studies.simulate", "SimulationStudy", False),
    "knee": ("studies.knee", "knee", True),
    "size_cluster": ("studies.sizing", "size_cluster", False),
}
"""Names whose modules load on first use (module, attribute, takes a path): the MILP, fabric,
co-design and simulator stages import Pyomo or protobuf, which the performance path and a bad-input
error never need."""
_BUDGET_NAMES = {"provision": "max_cost_usd", "codesign": "max_network_cost_usd"}
"""Lazy names that take ``budget_usd`` besides their old budget argument (:func:`_budget_named`)."""


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr, path = _LAZY[name]
    value = getattr(importlib.import_module(f".{module}", __package__), attr)
    value = _takes_a_path(value) if path else value
    value = _budget_named(value, _BUDGET_NAMES[name]) if name in _BUDGET_NAMES else value
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
__all__ += [
    "Instance",
    "Status",
    "FrontPoint",
    "TimeModel",
    "build_time_model",
    "MIN_REL_GAP",
    "InputError",
    "NoSolutionError",
    "SolverError",
]
__all__ += ["export_astrasim", "simulate", "SimulationStudy"]
__all__ += ["validate", "Validation", "calibrate", "Calibration", "load_runs"]
__all__ += ["RunFigures", "run_figures", "iteration_target_ns", "network_budget_usd"]
__all__ += ["knee", "size_cluster"]
__all__ += ["hours_weighted"]
