"""The library facade: load, solve, evaluate, verify, pareto, provision, ASTRA-sim export and simulation. Each
call runs the one-way flow read -> validate -> traffic/time model -> formulate -> solve -> verify, with no state kept
between calls. The implementations live in their stage packages; this module only names them (see
docs/architecture.md)."""

from __future__ import annotations

from .errors import InputError, NoSolutionError, SolverError
from .io.astrasim_bundle import write_bundle as export_astrasim
from .io.catalog import read_catalog as load_catalog
from .io.instance import load_instance, load_libra
from .model.catalog import Catalog
from .model.timing import Breakdown, TimeModel, build_time_model, evaluate
from .result import Marginal, Portfolio, Sensitivity, Solution, Status
from .solvers.front import Front, pareto
from .solvers.objectives import MIN_REL_GAP, solve
from .solvers.procurement import FrontPoint
from .solvers.provision import Provisioning, provision
from .solvers.tradeoff import Tradeoff, provision_tradeoff
from .spec import Instance
from .studies.simulate import SimulationStudy
from .studies.simulate import simulate_allocations as simulate
from .verify import Certificate, verify

__all__ = ["load_instance", "load_libra", "solve", "evaluate", "verify", "pareto", "Solution", "Breakdown",
           "Certificate", "Front"]
__all__ += ["provision", "load_catalog", "Catalog", "Provisioning", "provision_tradeoff", "Tradeoff", "Sensitivity",
            "Marginal", "Portfolio"]
__all__ += ["Instance", "Status", "FrontPoint", "TimeModel", "build_time_model", "MIN_REL_GAP", "InputError",
            "NoSolutionError", "SolverError"]
__all__ += ["export_astrasim", "simulate", "SimulationStudy"]
