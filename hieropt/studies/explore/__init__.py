"""``hieropt explore``: enumerate topology shapes (:mod:`.enumerate`), prune exact duplicates by
problem key (:mod:`.keys`), solve each distinct problem once (:mod:`.executors`: serial, process
pool, Dask), stream and resume the results file (:mod:`.results`), rank (:mod:`.run`), provision the
shortlist from a catalog (:mod:`.provision`). Every public name is re-exported here."""

from .enumerate import Candidate, DimChoice, Enumeration, build_instance, enumerate_shapes, shape_id
from .executors import solve_candidate
from .keys import candidates, problem_key
from .results import COLUMNS, read_results
from .run import Exploration, explore, load_space, space_fingerprint

__all__ = [
    "explore",
    "Exploration",
    "Candidate",
    "DimChoice",
    "Enumeration",
    "enumerate_shapes",
    "candidates",
    "build_instance",
    "problem_key",
    "solve_candidate",
    "COLUMNS",
    "read_results",
    "load_space",
    "shape_id",
    "space_fingerprint",
    "provision_shortlist",
]


def __getattr__(name: str):
    """``provision_shortlist`` on first use: it needs the provisioning MILP (Pyomo), which a sweep
    does not."""
    if name == "provision_shortlist":
        from .provision import provision_shortlist

        return provision_shortlist
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
