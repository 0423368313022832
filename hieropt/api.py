"""The library facade: load, solve, evaluate, verify, pareto, provision, ASTRA-sim export and simulation. Each
call runs the one-way flow read -> validate -> traffic/time model -> formulate -> solve -> verify, with no state kept
between calls. The implementations live in their stage packages; this module only names them (see
docs/architecture.md)."""

from __future__ import annotations

from functools import wraps
from typing import Any

from .errors import InputError, NoSolutionError, SolverError
from .io.astrasim_bundle import write_bundle as export_astrasim
from .io.catalog import read_catalog as load_catalog
from .io.codesign import load_codesign
from .io.instance import as_instance, load_instance, load_libra
from .io.llm import load_llm
from .model import timing
from .model.catalog import Catalog
from .model.memory import memory
from .model.plan import plan_figures
from .model.timing import Breakdown, TimeModel, build_time_model
from .result import Marginal, Portfolio, Sensitivity, Solution, Status
from .solvers import front, objectives, tradeoff
from .solvers import provision as provisioning
from .solvers.front import Front
from .solvers.objectives import MIN_REL_GAP
from .solvers.procurement import FrontPoint
from .solvers.provision import Provisioning
from .solvers.tradeoff import Tradeoff
from .spec import Instance
from .studies.codesign import Codesign, codesign
from .studies.simulate import SimulationStudy
from .studies.simulate import simulate_allocations as simulate
from .verify import Certificate
from .verify import verify as _verify


def _takes_a_path(fn: Any) -> Any:
    """``fn`` whose first argument may also be the path of an instance file (str or Path); any other type is an
    InputError naming the argument ``instance``. The docstring is ``fn``'s."""

    @wraps(fn)
    def call(instance: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(as_instance(instance), *args, **kwargs)

    return call


solve = _takes_a_path(objectives.solve)
evaluate = _takes_a_path(timing.evaluate)
verify = _takes_a_path(_verify)
pareto = _takes_a_path(front.pareto)
provision = _takes_a_path(provisioning.provision)
provision_tradeoff = _takes_a_path(tradeoff.provision_tradeoff)

__all__ = ["load_instance", "load_libra", "solve", "evaluate", "verify", "pareto", "Solution", "Breakdown",
           "Certificate", "Front"]
__all__ += ["provision", "load_catalog", "Catalog", "Provisioning", "provision_tradeoff", "Tradeoff", "Sensitivity",
            "Marginal", "Portfolio"]
__all__ += ["codesign", "Codesign", "load_codesign", "load_llm", "plan_figures", "memory"]
__all__ += ["Instance", "Status", "FrontPoint", "TimeModel", "build_time_model", "MIN_REL_GAP", "InputError",
            "NoSolutionError", "SolverError"]
__all__ += ["export_astrasim", "simulate", "SimulationStudy"]
