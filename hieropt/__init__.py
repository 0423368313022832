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

_NAMES = {
    "load_instance": "api",
    "load_libra": "api",
    "solve": "api",
    "evaluate": "api",
    "verify": "api",
    "pareto": "api",
    "Solution": "api",
    "Breakdown": "api",
    "Certificate": "api",
    "Front": "api",
    "provision": "api",
    "load_catalog": "api",
    "Catalog": "api",
    "Provisioning": "api",
    "export_astrasim": "api",
    "simulate": "api",
    "SimulationStudy": "api",
    "provision_tradeoff": "api",
    "Tradeoff": "api",
    "Sensitivity": "api",
    "Marginal": "api",
    "Portfolio": "api",
    "Status": "result",
    "SolveOptions": "api",
    "HieroptError": "errors",
    "InputError": "errors",
    "NoSolutionError": "errors",
    "SolverError": "errors",
    "explore": "studies.explore",
    "load_space": "studies.explore",
    "Exploration": "studies.explore",
    "codesign": "api",
    "Codesign": "api",
    "load_codesign": "api",
    "load_llm": "api",
    "plan_figures": "api",
    "memory": "api",
    "validate": "api",
    "Validation": "api",
    "calibrate": "api",
    "Calibration": "api",
    "load_runs": "api",
    "run_figures": "api",
    "RunFigures": "api",
    "iteration_target_ns": "api",
    "network_budget_usd": "api",
    "knee": "api",
    "size_cluster": "api",
    "hours_weighted": "api",
}
"""Public name -> the module (relative to this package) that defines or re-exports it."""

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


def __getattr__(name: str) -> Any:
    """Import a public name (or a subpackage such as ``hieropt.model``) on first use."""
    value = globals()[name] = lazy_attribute(__name__, _NAMES, name)
    return value


class _Package(types.ModuleType):
    """The package module. The submodule :mod:`hieropt.verify` shares its name with the public
    function :func:`hieropt.verify`; Python binds a submodule on its package once it is imported,
    which would hide the function (an eager ``__init__`` re-bound it afterwards). Binding the
    function instead keeps ``hieropt.verify(...)`` working; ``from hieropt.verify import ...`` is
    unaffected (it reads ``sys.modules``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "verify" and isinstance(value, types.ModuleType):
            value = value.verify
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # static checkers and IDEs see the eager imports
    from .api import (
        Breakdown,
        Catalog,
        Certificate,
        Front,
        Provisioning,
        Solution,
        SolveOptions,
        evaluate,
        hours_weighted,
        load_catalog,
        load_instance,
        load_libra,
        pareto,
        provision,
        solve,
        verify,
    )
    from .errors import HieroptError, InputError, NoSolutionError, SolverError
    from .io.codesign import load_codesign
    from .io.llm import load_llm
    from .io.runs import read_runs as load_runs
    from .model.memory import memory
    from .model.plan import plan_figures
    from .result import Status
    from .studies.codesign import Codesign, codesign
    from .studies.explore import Exploration, explore, load_space
    from .studies.validate import Calibration, Validation, calibrate, validate
