"""Studies built on the model and the solvers: comparisons, heuristics, exploration, simulator validation."""
