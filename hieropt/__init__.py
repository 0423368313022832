"""hieropt: exact per-dimension bandwidth optimization of multi-dimensional hierarchical training networks.

Library API (units: GB/s per NPU per dimension, ns, bytes, $)::

    import hieropt
    inst = hieropt.load_instance("instances/gpt3-4d.toml")    # or hieropt.load_libra(network=..., ...)
    sol = hieropt.solve(inst)                                  # -> Solution (status, bw_gbps, gap, ...)
    bd = hieropt.evaluate(inst, [250, 125, 75, 50])            # -> Breakdown
"""

from .api import Breakdown, Certificate, Solution, evaluate, load_instance, load_libra, solve, verify
from .errors import HieroptError, InputError, NoSolutionError, SolverError
from .result import Status

__all__ = ["load_instance", "load_libra", "solve", "evaluate", "verify", "Solution", "Breakdown", "Certificate",
           "Status", "HieroptError", "InputError", "NoSolutionError", "SolverError"]
__version__ = "0.1.0"
