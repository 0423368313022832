"""hieropt: exact per-dimension bandwidth optimization of multi-dimensional hierarchical training networks."""
