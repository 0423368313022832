"""hieropt: exact per-dimension bandwidth optimization of multi-dimensional hierarchical training
networks.

Library API (units: GB/s per NPU per dimension, ns, bytes, $)::

    import hieropt
    inst = hieropt.load_instance("instances/gpt3-4d.toml")    # or hieropt.load_libra(network=...,
                                                              # ...)
    sol = hieropt.solve(inst)                                  # -> Solution (status, bw_gbps, gap,
                                                               # ...)
    bd = hieropt.evaluate(inst, [250, 125, 75, 50])            # -> Breakdown
    sol = hieropt.solve(inst, objective="performance_per_cost")  # also "min_cost" with
                                                                 # max_iteration_time_ns=...
    front = hieropt.pareto(inst, points=50)                    # -> Front (exact time-cost Pareto
                                                               # front)

Names are imported on first use (module ``__getattr__``), so ``import hieropt`` and ``hieropt
--help`` do not load Pyomo, numpy or pydantic until a name is needed. See docs/architecture.md for
the package layout.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from .lazy import lazy_attribute
from .version import __version__ as __version__

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
    "Status",
    "HieroptError",
    "InputError",
    "NoSolutionError",
    "SolverError",
]
__all__ += ["SolveOptions"]
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
__all__ += ["explore", "load_space", "Exploration"]
__all__ += ["export_astrasim", "simulate", "SimulationStudy"]
__all__ += ["codesign", "Codesign", "load_codesign", "load_llm", "plan_figures", "memory"]
__all__ += ["validate", "Validation", "calibrate", "Calibration", "load_runs"]
__all__ += ["run_figures", "RunFigures", "iteration_target_ns", "network_budget_usd"]
__all__ += ["knee", "size_cluster"]
__all__ += ["hours_weighted"]
__all__ += ["Instance", "FrontPoint", "TimeModel", "build_time_model", "MIN_REL_GAP"]

_NAMES = dict.fromkeys(__all__, "api")
"""Public name -> the module (relative to this package) that re-exports it: every public name is
:mod:`hieropt.api`'s (whose ``__all__`` holds the same names), so ``hieropt.X`` is
``hieropt.api.X``."""


def __getattr__(name: str) -> Any:
    """Import a public name (or a subpackage such as ``hieropt.model``) on first use."""
    value = globals()[name] = lazy_attribute(__name__, _NAMES, name)
    return value


class _Package(types.ModuleType):
    """The package module. The submodule :mod:`hieropt.verify` shares its name with the public
    function :func:`hieropt.verify`; Python binds a submodule on its package once it is imported,
    which would hide the function (an eager ``__init__`` re-bound it afterwards). Not binding it
    keeps ``hieropt.verify`` the facade's :func:`hieropt.api.verify` (which takes a path and weighs
    the jobs by their shares of hours), read on first use like every public name, whichever of the
    two is imported first; ``from hieropt.verify import ...`` is unaffected (it reads
    ``sys.modules``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "verify" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # static checkers and IDEs see the eager imports
    from .api import (
        MIN_REL_GAP,
        Breakdown,
        Calibration,
        Catalog,
        Certificate,
        Codesign,
        Exploration,
        Front,
        FrontPoint,
        HieroptError,
        InputError,
        Instance,
        Marginal,
        NoSolutionError,
        Portfolio,
        Provisioning,
        RunFigures,
        Sensitivity,
        SimulationStudy,
        Solution,
        SolveOptions,
        SolverError,
        Status,
        TimeModel,
        Tradeoff,
        Validation,
        build_time_model,
        calibrate,
        codesign,
        evaluate,
        explore,
        export_astrasim,
        hours_weighted,
        iteration_target_ns,
        knee,
        load_catalog,
        load_codesign,
        load_instance,
        load_libra,
        load_llm,
        load_runs,
        load_space,
        memory,
        network_budget_usd,
        pareto,
        plan_figures,
        provision,
        provision_tradeoff,
        run_figures,
        simulate,
        size_cluster,
        solve,
        validate,
        verify,
    )
