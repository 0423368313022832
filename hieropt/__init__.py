"""hieropt: exact per-dimension bandwidth optimization of multi-dimensional hierarchical training networks.

Library API (units: GB/s per NPU per dimension, ns, bytes, $)::

    import hieropt
    inst = hieropt.load_instance("instances/gpt3-4d.toml")    # or hieropt.load_libra(network=..., ...)
    sol = hieropt.solve(inst)                                  # -> Solution (status, bw_gbps, gap, ...)
    bd = hieropt.evaluate(inst, [250, 125, 75, 50])            # -> Breakdown
    sol = hieropt.solve(inst, objective="performance_per_cost")  # also "min_cost" with max_iteration_time_ns=...
    front = hieropt.pareto(inst, points=50)                    # -> Front (exact time-cost Pareto front)
"""

from .api import Breakdown, Certificate, Front, Solution, evaluate, load_instance, load_libra, pareto, solve, verify
from .errors import HieroptError, InputError, NoSolutionError, SolverError
from .io.catalog import read_catalog as load_catalog
from .model.catalog import Catalog
from .result import Status
from .solvers.provision import Provisioning, provision
from .studies.explore import Exploration, explore, load_space

__all__ = ["load_instance", "load_libra", "solve", "evaluate", "verify", "pareto", "Solution", "Breakdown",
           "Certificate", "Front", "Status", "HieroptError", "InputError", "NoSolutionError", "SolverError"]
__all__ += ["provision", "load_catalog", "Catalog", "Provisioning"]
__all__ += ["explore", "load_space", "Exploration"]
__version__ = "0.1.0"
