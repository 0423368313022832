"""``hieropt explore``: enumerate topology shapes, solve each distinct problem once, rank and keep the results."""

from .run import (
    COLUMNS,
    Candidate,
    DimChoice,
    Enumeration,
    Exploration,
    build_instance,
    candidates,
    enumerate_shapes,
    explore,
    load_space,
    problem_key,
    read_results,
    shape_id,
    solve_candidate,
)

__all__ = ["explore", "Exploration", "Candidate", "DimChoice", "Enumeration", "enumerate_shapes", "candidates",
           "build_instance", "problem_key", "solve_candidate", "COLUMNS", "read_results", "load_space", "shape_id"]
